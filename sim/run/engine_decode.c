/* sim/run/engine_decode.c -- what the engine works out once per program
 * rather than once per executed instruction:
 *   - per instruction, the registers its issue waits for (the source
 *     registers of its form, isa.h A B C M and the run N, and those of its
 *     views, that some load writes), deduplicated, so that the readiness
 *     check is one short loop, and none for most instructions; and whether
 *     it keeps its result's ready cycle (OPF_READY: only for a register
 *     some load writes too);
 *   - per view with register operands, where the operand values of its
 *     last resolution are kept (engine_view.c reuses that resolution while
 *     they are unchanged: a load and a store of the same view in a row);
 *   - per view of one integer/slice level with static sizes, its compiled
 *     affine form (CView, engine_priv.h);
 *   - per instruction, its specialised handler (FastKind, engine_priv.h),
 *     and per register whether it only ever holds an int scalar (an int32
 *     binary of two such registers is FK_BIN_S, a scf.yield of three
 *     FK_ENDFOR_S). */
#include "engine_priv.h"

#include <stdlib.h>
#include <string.h>

/* Bit i: the form of op reads operand "ABCMN"[i] (isa_operand, tabulated once). */
static unsigned operand_bits(Opcode op) {
  static uint8_t bits[I_COUNT];
  static bool made;
  if (!made) {
    for (int o = 0; o < I_COUNT; o++)
      for (int i = 0; i < 5; i++)
        if (isa_operand((Opcode)o, "ABCMN"[i])) bits[o] |= (uint8_t)(1u << i);
    made = true;
  }
  return bits[op];
}

typedef struct {
  int *v;
  int n, cap;
  const uint8_t *loaded; /* instruction sources: per register, whether some load writes it (see push_src) */
  int nregs;
} IntList;

static bool push(IntList *l, int x) {
  if (l->n == l->cap) {
    int c = l->cap ? 2 * l->cap : 64;
    int *q = realloc(l->v, sizeof *q * (size_t)c);
    if (!q) return false;
    l->v = q, l->cap = c;
  }
  l->v[l->n++] = x;
  return true;
}

/* Per register: some load (isa.h I_LOAD, I_VLOAD, I_VLOAD_IDX) writes it.
 * Only a load's result is ready after its instruction ends; every other
 * instruction sets its result ready at the cycle its subcore moves on to,
 * and a subcore's cycle never goes back, so a register no load writes is
 * always ready and the issue need not look at it. */
/* r joins the sources from `from` on unless it is there already (or is
 * always ready). */
static bool push_src(IntList *l, int from, int r) {
  if (r < 0 || (r < l->nregs && !l->loaded[r])) return true;
  for (int i = from; i < l->n; i++)
    if (l->v[i] == r) return true;
  return push(l, r);
}

static bool view_srcs(const VDesc *vd, IntList *l, int from) {
  bool ok = true;
  for (int k = 0; k < vd->nlev; k++)
    for (int d = 0; d < vd->lev[k].n; d++)
      ok = ok && push_src(l, from, vd->lev[k].start[d].reg) && push_src(l, from, vd->lev[k].size[d].reg);
  return ok;
}

static bool instr_srcs(const Eng *E, const Instr *in, IntList *l) {
  int from = l->n, regs[4] = {in->a, in->b, in->c, in->mask}, views[4] = {in->view, in->view2, in->view3, in->view4};
  unsigned form = operand_bits(in->op);
  bool ok = true;
  for (int i = 0; i < 4; i++)
    if (form >> i & 1) ok = ok && push_src(l, from, regs[i]);
  if (form >> 4 & 1)
    for (int64_t k = 0; k < in->imm; k++) ok = ok && push_src(l, from, in->a + (int)k);
  for (int v = 0; v < 4; v++)
    if (views[v] >= 0) ok = ok && view_srcs(&E->c->views[views[v]], l, from);
  return ok;
}

/* The number of register operands a view's resolution reads (its memo
 * key's length; engine_view.c's view_key reads them). */
static int view_nkeys(const VDesc *vd) {
  int n = 0;
  for (int k = 0; k < vd->nlev; k++) {
    const Level *lv = &vd->lev[k];
    for (int d = 0; lv->kind == TR_INDEX && d < lv->n; d++) n += (lv->start[d].reg >= 0) + (lv->ek[d] == IX_SLICE && lv->size[d].reg >= 0);
  }
  return n;
}

/* The compiled form of a view, when it has one (CView.on). */
static void compile_view(const VDesc *vd, CView *cv) {
  const Level *lv = &vd->lev[0];
  cv->on = vd->nlev == 1 && lv->kind == TR_INDEX && !lv->int_rank && lv->n == vd->ref->rank;
  if (!cv->on) return;
  EV *ev = &cv->shape;
  cv->nd = lv->n;
  int64_t b = dtype_size(vd->ref->dtype);
  for (int d = lv->n - 1; d >= 0; d--) cv->dim[d] = vd->ref->shape[d], cv->rstride[d] = b, b *= vd->ref->shape[d];
  ev->vd = vd;
  ev->top = 1;
  ev->dt[1] = lv->dtype;
  memcpy(ev->lvl[1], lv->shape, sizeof ev->lvl[1]);
  int r = 0;
  for (int d = 0; d < lv->n; d++) {
    cv->slice[d] = lv->ek[d] == IX_SLICE;
    cv->start[d] = lv->start[d];
    if (!cv->slice[d]) continue;
    if (lv->size[d].reg >= 0) cv->on = false;
    cv->size[d] = lv->size[d].imm, cv->stride[d] = lv->stride[d];
    ev->lvl[1][r] = cv->size[d];
    ev->adim[r] = cv->size[d];
    ev->bstride[r++] = cv->rstride[d] * lv->stride[d];
  }
  ev->rank[1] = ev->arank = r;
  ev->n = 1;
  for (int d = 0; d < r; d++) ev->n *= ev->lvl[1][d];
  ev->affine = true;
  ev->dense = -1;
  ev->dense = eng_dense_block(ev);
  cv->quick = true;
  for (int d = 0; d < cv->nd; d++) { /* the last start whose entry fits, as engine_view.c's cview_fits decides */
    int64_t span = 0;
    if (cv->slice[d] && (cv->size[d] <= 0 || cv->stride[d] < 1 || __builtin_mul_overflow(cv->size[d] - 1, cv->stride[d], &span))) cv->quick = false;
    cv->maxstart[d] = cv->dim[d] - 1 - span;
    if (cv->maxstart[d] < 0) cv->quick = false; /* no start fits: the full path names the index */
  }
  cv->dense = cv->quick && ev->n > 0 && ev->dense >= ev->n;
  cv->ref = vd->ref->index;
  cv->one = cv->nd == 1 && cv->start[0].reg >= 0 ? CV_ONE : 0;
}

static bool is_cmp(ExprOp op) { return op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE; }

/* The static half of engine.c's int32_wrap and int32_other_fits: an int32
 * operator into int32, or an int32 comparison into bool. */
static bool bin_i32(const Instr *in) {
  ExprOp op = in->sub;
  bool wrap = op == OP_ADD || op == OP_SUB || op == OP_MUL;
  bool other = op == OP_FLOORDIV || op == OP_MOD || op == OP_BAND || op == OP_BOR || op == OP_BXOR || op == OP_AND || op == OP_OR;
  if (in->uty != DT_INT32) return false;
  return ((wrap || other || is_cmp(op)) && in->ty == DT_INT32) || (is_cmp(op) && in->ty == DT_BOOL);
}

/* A dense compiled view of one int32 element whose every possible base is
 * 4-byte aligned (each byte stride is), with tracing off (it wants the
 * general path): FK_SLOAD and FK_SSTORE need not test those at run time. */
static bool one_word(const Eng *E, const CView *cv) {
  bool aligned = true;
  for (int d = 0; d < cv->nd; d++) aligned = aligned && !(cv->rstride[d] & 3);
  return cv->dense && cv->shape.n == 1 && cv->shape.dt[1] == DT_INT32 && aligned && !E->trace;
}

static uint8_t fast_kind(const Eng *E, const Instr *in) {
  bool plain = in->mask < 0 && in->view >= 0 && E->cview[in->view].on;
  if (in->op == I_BINARY && bin_i32(in)) return FK_BIN_I32;
  if ((in->op == I_VLOAD || in->op == I_LOAD) && plain) return one_word(E, &E->cview[in->view]) ? FK_SLOAD : FK_VLOAD;
  if ((in->op == I_VSTORE || in->op == I_STORE) && plain && !in->add) return one_word(E, &E->cview[in->view]) ? FK_SSTORE : FK_VSTORE;
  if (in->op == I_ENDFOR) return FK_ENDFOR;
  if (in->op == I_MOV) return FK_MOV;
  bool masked = in->mask >= 0 && in->view >= 0 && E->cview[in->view].on;
  if (in->op == I_VLOAD && masked) return FK_VLOAD_M;
  if (in->op == I_VSTORE && masked && !in->add) return FK_VSTORE_M;
  return FK_NONE;
}

/* Whether instruction i, whenever it completes, leaves its result register
 * an int32/int64 scalar, given isc (per register: every writer does so). */
static bool writes_int_scalar(const Eng *E, int i, const uint8_t *isc) {
  const Instr *in = &E->c->code[i];
  Opcode op = in->op;
  bool src = in->a >= 0 && in->a < E->c->nregs && isc[in->a], src2 = src && in->b >= 0 && in->b < E->c->nregs && isc[in->b];
  if (op == I_CONST) return in->ty == DT_INT32 || in->ty == DT_INT64;  /* x_misc_value: eng_scalar */
  if (op == I_COORD || op == I_FOR || op == I_ENDFOR) return true;     /* an int32 coordinate, the int64 loop counter */
  if (op == I_MOV) return src;                                         /* a copy */
  if (op == I_BINARY) return E->fast[i] == FK_BIN_I32 && in->ty == DT_INT32 && src2; /* big's one lane, in ty */
  return (op == I_LOAD || op == I_VLOAD) && E->fast[i] == FK_SLOAD;   /* one int32 element, however loaded */
}

/* Per register: every instruction that writes it (only an instruction's d
 * is written) leaves an int32/int64 scalar, so FK_BIN_S need not test its
 * operands' dtype and lanes.  Grown pass by pass from nothing, each pass
 * sound given the last (a bounded number: stopping early only leaves some
 * registers unproved). */
static uint8_t *int_scalars(const Eng *E) {
  const Code *c = E->c;
  size_t nr = (size_t)(c->nregs > 0 ? c->nregs : 1);
  uint8_t *isc = calloc(nr, 1), *ok = malloc(nr);
  bool grew = isc && ok;
  for (int pass = 0; grew && pass < 64; pass++) {
    memset(ok, 1, nr);
    for (int i = 0; i < c->n; i++) {
      int d = c->code[i].d;
      if (d >= 0 && d < c->nregs && !writes_int_scalar(E, i, isc)) ok[d] = 0;
    }
    grew = false;
    for (int r = 0; r < c->nregs; r++) grew |= ok[r] && !isc[r], isc[r] |= ok[r];
  }
  free(ok);
  return isc;
}

static bool is_isc(const Code *c, const uint8_t *isc, int r) { return r >= 0 && r < c->nregs && isc[r]; }

bool eng_decode(Eng *E) {
  const Code *c = E->c;
  IntList l = {0};
  uint8_t *ld = calloc((size_t)(c->nregs > 0 ? c->nregs : 1), 1);
  for (int i = 0; ld && i < c->n; i++) {
    const Instr *in = &c->code[i];
    if ((in->op == I_LOAD || in->op == I_VLOAD || in->op == I_VLOAD_IDX) && in->d >= 0 && in->d < c->nregs) ld[in->d] = 1;
  }
  l.loaded = ld, l.nregs = c->nregs;
  E->src_at = malloc(sizeof *E->src_at * (size_t)(c->n + 1));
  bool ok = E->src_at != NULL && ld != NULL;
  for (int i = 0; ok && i < c->n; i++) {
    E->src_at[i] = l.n;
    ok = instr_srcs(E, &c->code[i], &l);
  }
  for (int i = 0; ok && i < c->n; i++) { /* a register no load writes is never waited for: its ready cycle need not be kept */
    const Instr *in = &c->code[i];
    if (in->d >= 0 && (in->d >= c->nregs || ld[in->d]) && !(E->op_start[i] & OPF_LOAD)) E->op_start[i] |= OPF_READY;
  }
  free(ld);
  if (ok) E->src_at[c->n] = l.n, E->srcs = l.v;
  else free(l.v);
  E->vkey_at = malloc(sizeof *E->vkey_at * (size_t)(c->nviews + 1));
  ok = ok && E->vkey_at;
  int nk = 0;
  for (int v = 0; ok && v < c->nviews; v++) E->vkey_at[v] = nk, nk += view_nkeys(&c->views[v]);
  if (ok) E->vkey_at[c->nviews] = nk;
  E->vkey = calloc((size_t)(nk ? nk : 1), sizeof *E->vkey);
  E->cview = calloc((size_t)(c->nviews ? c->nviews : 1), sizeof *E->cview);
  for (int v = 0; E->cview && v < c->nviews; v++) {
    compile_view(&c->views[v], &E->cview[v]);
    E->cview[v].space = &E->r->stats.space[c->views[v].ref->space];
  }
  E->fast = calloc((size_t)(c->n ? c->n : 1), 1);
  for (int i = 0; E->fast && E->cview && i < c->n; i++) E->fast[i] = fast_kind(E, &c->code[i]);
  uint8_t *isc = E->fast && E->cview ? int_scalars(E) : NULL;
  for (int i = 0; isc && i < c->n; i++) {
    const Instr *in = &c->code[i];
    if (E->fast[i] == FK_BIN_I32 && in->a >= 0 && in->a < c->nregs && in->b >= 0 && in->b < c->nregs && isc[in->a] && isc[in->b]) E->fast[i] = FK_BIN_S;
    if (E->fast[i] == FK_BIN_S && in->sub == OP_ADD) E->fast[i] = FK_ADD_S;
    if (E->fast[i] == FK_BIN_S && in->sub == OP_MOD) E->fast[i] = FK_MOD_S;
    if (E->fast[i] == FK_ENDFOR && is_isc(c, isc, in->d) && is_isc(c, isc, in->b) && is_isc(c, isc, in->c)) E->fast[i] = FK_ENDFOR_S;
  }
  for (int v = 0; isc && v < c->nviews; v++) {
    CView *cv = &E->cview[v];
    if (cv->one && cv->start[0].reg < c->nregs && isc[cv->start[0].reg]) cv->one = CV_ONE_INT;
  }
  free(isc);
  return ok && E->vkey && E->cview && E->fast;
}

void eng_decode_free(Eng *E) {
  free(E->src_at);
  free(E->srcs);
  free(E->vkey_at);
  free(E->vkey);
  free(E->cview);
  free(E->fast);
}
