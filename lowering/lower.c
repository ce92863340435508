/* lowering/lower.c -- the body to instructions; views to VDescs. */
#include "lower.h"

#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "hoist.h"
#include "lower_scanops.h"
#include "lower_valops.h"
#include "scanops.h"

typedef struct {
  const char *name;
  int reg;
} Name;

typedef struct {
  Code *c;
  const Program *p;
  Name *names;
  int nnames, capnames;
  const Op *op; /* the operation being lowered */
  NameIndex index; /* name -> its entry in names */
} L;

static int new_reg(L *l) { return l->c->nregs++; }

static Instr *emit(L *l, Opcode op) {
  Code *c = l->c;
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 256;
    c->code = realloc(c->code, sizeof *c->code * (size_t)c->cap);
    if (!c->code) abort();
  }
  Instr *in = &c->code[c->n++];
  memset(in, 0, sizeof *in);
  in->op = op;
  in->d = in->a = in->b = in->c = in->mask = -1;
  in->view = in->view2 = in->view3 = in->view4 = -1;
  in->op_id = l->op ? l->op->id : -1;
  in->loc = l->op ? l->op->loc : (Loc){l->p->file, 0, 0};
  return in;
}

static int name_reg(L *l, const char *name) {
  int k = names_get(&l->index, name);
  if (k >= 0) return l->names[k].reg;
  if (l->nnames == l->capnames) {
    l->capnames = l->capnames ? l->capnames * 2 : 32;
    l->names = realloc(l->names, sizeof *l->names * (size_t)l->capnames);
    if (!l->names) abort();
  }
  names_put(&l->index, name, l->nnames);
  l->names[l->nnames].name = name;
  return l->names[l->nnames++].reg = new_reg(l);
}

/* ---- expressions ------------------------------------------------------- */
static int lower_expr(L *l, const Expr *e);

static int lower_const(L *l, const Expr *e) {
  Instr *in = emit(l, I_CONST);
  in->d = new_reg(l);
  if (e->kind == EX_FLOAT) in->ty = DT_FLOAT64, in->fimm = e->fval;
  else in->ty = e->kind == EX_BOOL ? DT_BOOL : DT_INT64, in->imm = e->ival;
  return in->d;
}

/* A size or element index the checker proved static (it folded it). */
static int64_t static_int(const Expr *e) { return e->has_sval ? e->sval : e->ival; }

static int lower_iota(L *l, const Expr *e) {
  Instr *in = emit(l, I_IOTA);
  in->imm = static_int(e->args[0]);
  in->d = new_reg(l);
  return in->d;
}

static int lower_astype(L *l, const Expr *e) {
  int a = lower_expr(l, e->args[0]);
  Instr *in = emit(l, I_CAST);
  in->a = a;
  in->ty = e->ty;
  in->d = new_reg(l);
  return in->d;
}

static int lower_full(L *l, const Expr *e) {
  int a = lower_expr(l, e->args[1]);
  Instr *in = emit(l, I_BROADCAST);
  in->a = a;
  in->ty = e->ty;
  const Expr *sh = e->args[0];
  in->rank = sh->kind == EX_LIST ? sh->nargs : 1;
  for (int i = 0; i < in->rank; i++) in->shape[i] = static_int(sh->kind == EX_LIST ? sh->args[i] : sh);
  in->d = new_reg(l);
  return in->d;
}

static int lower_select(L *l, const Expr *e) {
  Instr *in;
  bool w = e->builtin == BI_WHERE;
  int m = w ? lower_expr(l, e->args[0]) : -1;
  int a = lower_expr(l, e->args[w]), b = lower_expr(l, e->args[w + 1]);
  in = emit(l, w ? I_SELECT : I_MINMAX);
  if (w) in->a = m, in->b = a, in->c = b;
  else in->a = a, in->b = b, in->imm = e->builtin == BI_MAX; /* max: 1 */
  in->ty = e->ty;
  in->uty = e->oty;
  in->d = new_reg(l);
  return in->d;
}

static Instr *hook_emit(void *l, Opcode op) { return emit(l, op); }
static int hook_reg(void *l) { return new_reg(l); }
static int hook_expr(void *l, const Expr *e) { return lower_expr(l, e); }
/* A scan as upstream lowers it (sc_primitives.py _masked_cumop_lowering_rule,
 * _cumsum_lowering_rule): no mask is an all-true i1 vector; int32 max/min
 * flip the sign bit around tpu.scan, whose comparisons are unsigned. */
static int lower_xor_sign(L *l, int x, const Expr *e) {
  /* registers are kept by number: each emit may move the code array */
  Instr *k = emit(l, I_CONST);
  int kd = k->d = new_reg(l);
  k->ty = DT_INT64;
  k->imm = 0x80000000LL;
  Instr *bc = emit(l, I_BROADCAST);
  bc->a = kd;
  bc->ty = DT_INT32;
  bc->rank = 1;
  bc->shape[0] = e->sval;
  int bd = bc->d = new_reg(l);
  Instr *in = emit(l, I_BINARY);
  in->sub = OP_BXOR;
  in->a = x, in->b = bd;
  in->ty = in->uty = DT_INT32;
  in->d = new_reg(l);
  return in->d;
}

/* An all-true i1 vector of n lanes (tpu.scan and tpu.sort take a mask). */
static int lower_all_true(L *l, int64_t n) {
  Instr *k = emit(l, I_CONST);
  int kd = k->d = new_reg(l);
  k->ty = DT_BOOL;
  k->imm = 1;
  Instr *bc = emit(l, I_BROADCAST);
  bc->a = kd;
  bc->ty = DT_BOOL;
  bc->rank = 1;
  bc->shape[0] = n;
  bc->d = new_reg(l);
  return bc->d;
}

static int lower_scan(L *l, const Expr *e) {
  const Expr *me = scanop_arg(e, -1, "mask");
  int x = lower_expr(l, scanop_arg(e, 0, NULL)), m;
  m = me ? lower_expr(l, me) : lower_all_true(l, e->sval);
  int kind = scanop_kind(e->builtin);
  bool flip = e->ty == DT_INT32 && kind != 0;
  if (flip) x = lower_xor_sign(l, x, e);
  Instr *in = emit(l, I_SCAN);
  in->a = x;
  in->mask = m;
  in->imm = kind;
  in->ty = e->ty;
  in->d = new_reg(l);
  return flip ? lower_xor_sign(l, in->d, e) : in->d;
}

/* jnp.sort / lax.sort: tpu.sort of the keys under an all-true mask (upstream
 * passes the keys as their own values); descending=True sets tpu.sort's
 * descending flag where jnp.sort adds a lax.rev (the same lanes). */
static int lower_sort(L *l, const Expr *e) {
  int x = lower_expr(l, scanop_arg(e, 0, NULL));
  int m = lower_all_true(l, l->p->params.num_lanes);
  Instr *in = emit(l, I_SORT);
  in->a = x;
  in->mask = m;
  in->imm = e->sval;
  in->ty = e->ty;
  in->d = new_reg(l);
  return in->d;
}

/* The mask all-reduces: tpu.all_reduce {dim = 0, kind = sum / find_first_set}. */
static int lower_all_reduce(L *l, const Expr *e) {
  int x = lower_expr(l, scanop_arg(e, 0, NULL));
  Instr *in = emit(l, I_ALL_REDUCE);
  in->a = x;
  in->imm = e->builtin == BI_AR_FFS;
  in->rank = 1;
  in->shape[0] = e->sval;
  in->d = new_reg(l);
  return in->d;
}

/* A call the checker accepted: a value builtin (pl.ds and plsc.Indices
 * live in ref views, never here). */
static int lower_call(L *l, const Expr *e) {
  LowerHooks h = {l, hook_emit, hook_reg, hook_expr};
  switch (e->builtin) {
  case BI_IOTA: return lower_iota(l, e);
  case BI_ASTYPE: return lower_astype(l, e);
  case BI_FULL: return lower_full(l, e);
  case BI_WHERE: case BI_MIN: case BI_MAX: return lower_select(l, e);
  case BI_VSUM: case BI_VMAX: case BI_VMIN: case BI_VALL: case BI_VANY: case BI_EXP: case BI_ABS: case BI_SQRT: case BI_RSQRT:
  case BI_LOG: case BI_TANH: case BI_FLIP: case BI_TAKE: case BI_RESHAPE: case BI_BITCAST: case BI_CONCAT: case BI_SLICE:
    return lower_valops_call(&h, e);
  case BI_CUMSUM: case BI_CUMMAX: case BI_CUMMIN: case BI_LAX_CUMSUM: return lower_scan(l, e);
  case BI_SORT: return lower_sort(l, e);
  case BI_PACK: return lower_scanops_pack(&h, e);
  case BI_SORT_KV: case BI_SCAN_COUNT: case BI_UNPACK: break; /* a let of several names lowers it (lower_tuple_let) */
  case BI_AR_POPCOUNT: case BI_AR_FFS: return lower_all_reduce(l, e);
  case BI_DS: case BI_INDICES: case BI_SELECT_REF: case BI_AXIS_SIZE: case BI_NONE: break;
  }
  abort(); /* the checker rejects these */
}

static int lower_list(L *l, const Expr *e) {
  int n = e->nargs;
  int *regs = malloc(sizeof *regs * (size_t)(n ? n : 1));
  if (!regs) abort();
  for (int i = 0; i < n; i++) regs[i] = lower_expr(l, e->args[i]);
  int base = l->c->nregs;
  for (int i = 0; i < n; i++) {
    Instr *mv = emit(l, I_MOV);
    mv->a = regs[i];
    mv->d = new_reg(l);
  }
  free(regs);
  Instr *in = emit(l, I_FROM_ELEMENTS);
  in->a = base;
  in->imm = n;
  in->ty = e->ty;
  in->d = new_reg(l);
  return in->d;
}

static int lower_expr(L *l, const Expr *e) {
  Instr *in;
  switch (e->kind) {
  case EX_INT:
  case EX_FLOAT:
  case EX_BOOL: return lower_const(l, e);
  case EX_NAME:
    if ((!strcmp(e->name, "core") || !strcmp(e->name, "subcore"))) {
      if (names_get(&l->index, e->name) < 0) {
        in = emit(l, I_COORD);
        in->imm = e->name[0] == 's';
        in->d = new_reg(l);
        return in->d;
      }
    }
    return name_reg(l, e->name);
  case EX_UNARY: {
    int a = lower_expr(l, e->a);
    in = emit(l, I_UNARY);
    in->a = a;
    in->sub = e->op;
    in->ty = e->ty;
    in->uty = e->a->ty;
    in->d = new_reg(l);
    return in->d;
  }
  case EX_BINARY: {
    int a = lower_expr(l, e->a), b = lower_expr(l, e->b);
    in = emit(l, I_BINARY);
    in->a = a;
    in->b = b;
    in->sub = e->op;
    in->ty = e->ty;
    in->uty = e->oty;
    in->d = new_reg(l);
    return in->d;
  }
  case EX_CALL: return lower_call(l, e);
  case EX_LIST: return lower_list(l, e);
  case EX_SUBSCRIPT: {
    int a = lower_expr(l, e->a);
    in = emit(l, I_EXTRACT);
    in->a = a;
    in->rank = e->nargs;
    for (int i = 0; i < e->nargs; i++) in->shape[i] = static_int(e->args[i]);
    in->d = new_reg(l);
    return in->d;
  }
  case EX_AT: case EX_BITCAST: case EX_RESHAPE: case EX_SLICE: case EX_ELLIPSIS: case EX_NONE: break;
  }
  return new_reg(l);
}

/* ---- views -------------------------------------------------------------- */
static Operand operand(L *l, int64_t imm, const Expr *dyn) {
  Operand o = {imm, -1};
  if (dyn) o.reg = lower_expr(l, dyn);
  return o;
}

static int lower_view(L *l, const View *v) {
  Code *c = l->c;
  VDesc vd;
  memset(&vd, 0, sizeof vd);
  vd.ref = v->ref;
  vd.src = v;
  vd.nlev = v->ntr;
  for (int k = 0; k < v->ntr; k++) {
    const Transform *t = v->tr[k];
    Level *lv = &vd.lev[k];
    lv->kind = t->kind;
    lv->dtype = t->dtype;
    lv->rank = t->rank;
    memcpy(lv->shape, t->shape, sizeof lv->shape);
    if (t->kind != TR_INDEX) continue;
    lv->n = t->idx->n;
    lv->int_rank = t->idx->int_rank;
    for (int d = 0; d < t->idx->n; d++) {
      const IxEntry *e = &t->idx->e[d];
      lv->ek[d] = e->kind;
      lv->start[d] = operand(l, e->start, e->kind == IX_SLICE || e->kind == IX_INT ? e->start_e : NULL);
      lv->size[d] = operand(l, e->size, e->kind == IX_SLICE ? e->size_e : NULL);
      lv->stride[d] = e->stride;
    }
  }
  if (c->nviews == c->capviews) {
    c->capviews = c->capviews ? c->capviews * 2 : 64;
    c->views = realloc(c->views, sizeof *c->views * (size_t)c->capviews);
    if (!c->views) abort();
  }
  c->views[c->nviews] = vd;
  return c->nviews++;
}

static int field_view(L *l, FieldId f) { return lower_view(l, (const View *)l->op->e[f]->view); }

static bool scalar_view(const View *v) { return v->rank == 0; }

/* ---- operations ---------------------------------------------------------- */
static void lower_body(L *l, const Body *b);

static Instr *mem_load(L *l, int view, bool scalar, int mask, char log) {
  Instr *in = emit(l, scalar ? I_LOAD : I_VLOAD);
  in->view = view;
  in->mask = mask;
  in->log = log;
  in->d = new_reg(l);
  return in;
}

static void mem_store(L *l, int view, bool scalar, int x, int mask, bool add) {
  Instr *in = emit(l, scalar ? I_STORE : I_VSTORE);
  in->view = view;
  in->a = x;
  in->mask = mask;
  in->add = add;
  in->log = 'N';
}

static void bind_out(L *l, const char *name, int reg) {
  if (!name) return;
  Instr *mv = emit(l, I_MOV);
  mv->a = reg;
  mv->d = name_reg(l, name);
}

/* let: {name: "k, v", value: plsc.sort_key_val(...)}: each name bound to
 * its result register (lowering/lower_scanops.c). */
static void lower_tuple_let(L *l, const Op *op) {
  LowerHooks h = {l, hook_emit, hook_reg, hook_expr};
  int regs[3];
  int n = lower_scanops_tuple(&h, op->e[FLD_VALUE], regs);
  for (int k = 0; k < n && k < op->ncarry; k++) bind_out(l, op->carry[k], regs[k]);
}

static void lower_get(L *l, const Op *op) {
  const View *v = op->e[FLD_REF]->view;
  int mask = op->kind == OPK_LOAD_EXPANDED ? lower_expr(l, op->e[FLD_MASK]) : -1;
  int view = field_view(l, FLD_REF);
  Instr *in = mem_load(l, view, scalar_view(v), mask, 'L');
  bind_out(l, op->name[FLD_OUT], in->d);
}

/* swap, set, addupdate and the compressed forms: load the old value, then
 * store (SPEC §6). */
static void lower_swap(L *l, const Op *op) {
  const View *v = op->e[FLD_REF]->view;
  bool masked = op->kind == OPK_STORE_COMPRESSED || op->kind == OPK_ADDUPDATE_COMPRESSED;
  bool add = op->kind == OPK_ADDUPDATE || op->kind == OPK_ADDUPDATE_COMPRESSED;
  int x = lower_expr(l, op->e[FLD_VALUE]);
  int mask = masked ? lower_expr(l, op->e[FLD_MASK]) : -1;
  int view = field_view(l, FLD_REF);
  bool scalar = scalar_view(v);
  Instr *old = mem_load(l, view, scalar, mask, 'O');
  int oldreg = old->d;
  mem_store(l, view, scalar, x, mask, add);
  if (op->kind == OPK_SWAP) bind_out(l, op->name[FLD_OUT], oldreg);
}

static void lower_gather_scatter(L *l, const Op *op) {
  bool gather = op->kind == OPK_LOAD_GATHER;
  int n = op->nlist[FLD_INDICES], idx[MAX_RANK];
  for (int i = 0; i < n; i++) idx[i] = lower_expr(l, op->list[FLD_INDICES][i]);
  int base = l->c->nregs;
  for (int i = 0; i < n; i++) {
    Instr *mv = emit(l, I_MOV);
    mv->a = idx[i];
    mv->d = new_reg(l);
  }
  int mask = (op->has & F(MASK)) ? lower_expr(l, op->e[FLD_MASK]) : -1;
  int x = gather ? -1 : lower_expr(l, op->e[FLD_VALUE]);
  int view = field_view(l, FLD_REF);
  Instr *in = emit(l, gather ? I_VLOAD_IDX : I_VSTORE_IDX);
  in->view = view;
  in->a = base;
  in->imm = n;
  in->mask = mask;
  in->b = x;
  in->add = op->kind == OPK_ADDUPDATE_SCATTER;
  if (gather) {
    in->d = new_reg(l);
    in->log = 'L';
    bind_out(l, op->name[FLD_OUT], in->d);
  }
}

/* An indirect copy: the indexed side is its offsets-free view; offsets come
 * from an index view (view4) or a value register (a, of shape rank/shape). */
/* A register's offsets' shape: an integer beside index arrays is broadcast
 * to their shape (SPEC §8.7), so x.at[1, v] has v's shape of offsets. */
static void offsets_shape(const DmaPlan *pl, const View *indexed, int *rank, int64_t *shape) {
  const IxEntry *e = pl->off;
  if (e->kind == IX_INT) {
    const NDIndexer *ix = indexed->tr[pl->off_tr]->idx;
    *rank = ix->int_rank;
    memcpy(shape, ix->int_shape, sizeof(int64_t) * MAX_RANK);
  } else {
    *rank = e->idx.rank ? e->idx.rank : 1;
    memcpy(shape, e->idx.shape, sizeof(int64_t) * MAX_RANK);
  }
}

static void dma_operands(L *l, Instr *in, const View *src, const View *dst, const DmaPlan *pl) {
  in->view = lower_view(l, pl->indirect && pl->gather ? pl->flat : src);
  in->view2 = lower_view(l, pl->indirect && !pl->gather ? pl->flat : dst);
  if (!pl->indirect) return;
  in->imm = pl->gather; /* 1: gather (offsets on the source) */
  if (pl->off->kind == IX_REF) {
    in->view4 = lower_view(l, pl->off->idx.view);
  } else { /* the verifier needs the register's shape (mosaic.h) */
    in->a = lower_expr(l, pl->off_e ? pl->off_e : pl->off->e);
    offsets_shape(pl, pl->gather ? src : dst, &in->rank, in->shape);
  }
  if (pl->off->filtered && pl->off->ignored_e) in->c = lower_expr(l, pl->off->ignored_e);
}

static void copy_dma_operands(Instr *in, const Instr *tmp) {
  in->view = tmp->view, in->view2 = tmp->view2, in->view4 = tmp->view4, in->a = tmp->a, in->c = tmp->c, in->imm = tmp->imm;
  in->rank = tmp->rank;
  memcpy(in->shape, tmp->shape, sizeof in->shape);
}

static void lower_async_copy(L *l, const Op *op) {
  const DmaPlan *pl = op->dma;
  bool add = (op->has & F(ADD)) && op->e[FLD_ADD]->kind == EX_BOOL && op->e[FLD_ADD]->ival;
  Instr tmp;
  memset(&tmp, 0, sizeof tmp);
  tmp.a = tmp.c = -1;
  tmp.view4 = -1;
  dma_operands(l, &tmp, op->e[FLD_SRC]->view, op->e[FLD_DST]->view, pl);
  int sem = lower_view(l, op->e[FLD_SEM]->view);
  Instr *in = emit(l, pl->indirect ? I_ENQUEUE_INDIRECT_DMA : I_ENQUEUE_DMA);
  copy_dma_operands(in, &tmp);
  in->view3 = sem;
  in->add = add;
  if (op->has & F(PRIORITY)) in->prio = static_int(op->e[FLD_PRIORITY]);
}

static void lower_wait(L *l, const Op *op) {
  const DmaPlan *pl = op->dma;
  Instr tmp;
  memset(&tmp, 0, sizeof tmp);
  tmp.a = tmp.c = -1;
  tmp.view4 = -1;
  dma_operands(l, &tmp, op->view[FLD_SRC], op->view[FLD_DST], pl);
  int sem = lower_view(l, op->view[FLD_SEM]);
  Instr *in = emit(l, pl->indirect ? I_WAIT_INDIRECT_DMA : I_WAIT_DMA);
  in->view = tmp.view, in->view2 = tmp.view2, in->imm = tmp.imm;
  in->view3 = sem;
}

static void lower_sync_copy(L *l, const Op *op) {
  const DmaPlan *pl = op->dma;
  bool add = (op->has & F(ADD)) && op->e[FLD_ADD]->kind == EX_BOOL && op->e[FLD_ADD]->ival;
  int n = op->nlist[FLD_SRC] < 0 ? 1 : op->nlist[FLD_SRC];
  for (int i = 0; i < n; i++) {
    Instr tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.a = tmp.c = -1;
    tmp.view4 = -1;
    dma_operands(l, &tmp, op->views[FLD_SRC][i], op->views[FLD_DST][i], &pl[i]);
    Instr *in = emit(l, pl[i].indirect ? I_ENQUEUE_INDIRECT_DMA : I_ENQUEUE_DMA);
    copy_dma_operands(in, &tmp);
    in->view3 = -1; /* synchronous: complete before the next instruction */
    in->add = add;
  }
}

static int opt_expr(L *l, const Op *op, FieldId f) { return (op->has & (1u << f)) ? lower_expr(l, op->e[f]) : -1; }

static void lower_semaphore(L *l, const Op *op) {
  bool sig = op->kind == OPK_SEMAPHORE_SIGNAL;
  int a = opt_expr(l, op, sig ? FLD_INC : FLD_VALUE);
  int b = sig ? opt_expr(l, op, FLD_CORE) : -1, c = sig ? opt_expr(l, op, FLD_SUBCORE) : -1;
  int view = field_view(l, FLD_SEM);
  Instr *in = emit(l, sig ? I_SEM_SIGNAL : I_SEM_WAIT);
  in->view = view;
  in->a = a;
  in->b = b;
  in->c = c;
}

static void lower_fetch_and_add(L *l, const Op *op) {
  int a = lower_expr(l, op->e[FLD_VALUE]), b = lower_expr(l, op->e[FLD_SUBCORE]);
  int view = field_view(l, FLD_REF);
  Instr *in = emit(l, I_FETCH_AND_ADD);
  in->view = view;
  in->a = a;
  in->b = b;
  in->d = new_reg(l);
  in->log = 'O';
  bind_out(l, op->name[FLD_OUT], in->d);
}

/* Sets the carries from vals (their initial or next values): every value
 * is computed first, into registers of its own, and only then moved into
 * the carries' registers, so a next value that reads a carry reads the old
 * one.  A weakly typed initial value the checker promoted is converted. */
static void lower_carries(L *l, const Op *op, Expr **vals, bool init) {
  int *tmp = malloc(sizeof *tmp * (size_t)(op->ncarry + 1));
  if (!tmp) abort();
  for (int k = 0; k < op->ncarry; k++) {
    int r = lower_expr(l, vals[k]);
    Instr *in;
    if (init && vals[k]->ty != op->carry_ty[k]) {
      in = emit(l, I_CAST);
      in->ty = op->carry_ty[k];
    } else if (vals[k]->kind == EX_NAME) {
      in = emit(l, I_MOV); /* a name's own register: copy it before any carry moves */
    } else {
      tmp[k] = r;
      continue;
    }
    in->a = r;
    in->d = tmp[k] = new_reg(l);
  }
  for (int k = 0; k < op->ncarry; k++) {
    Instr *mv = emit(l, I_MOV);
    mv->a = tmp[k];
    mv->d = name_reg(l, op->carry[k]);
  }
  free(tmp);
}

/* while: carries := init; head: if not cond goto exit; body; carries :=
 * next; goto head; exit. */
static void lower_while(L *l, const Op *op) {
  lower_carries(l, op, op->list[FLD_CARRY], true);
  int head = l->c->n;
  int cond = lower_expr(l, op->e[FLD_COND]);
  int br = l->c->n;
  emit(l, I_BRANCH_IF_FALSE)->a = cond;
  lower_body(l, &op->body);
  l->op = op;
  lower_carries(l, op, op->list[FLD_NEXT], false);
  emit(l, I_JUMP)->target = head;
  l->c->code[br].target = l->c->n;
}

/* Whether some operation of b (nested bodies included) binds `name`. */
static bool body_binds(const Body *b, const char *name) {
  for (int i = 0; i < b->n; i++) {
    const Op *op = b->ops[i];
    for (int f = 0; f < FLD_COUNT; f++)
      if (field_kind((FieldId)f) == FK_NAME && op->name[f] && !strcmp(op->name[f], name)) return true;
    for (int k = 0; k < op->ncarry; k++)
      if (!strcmp(op->carry[k], name)) return true;
    if (body_binds(&op->body, name) || body_binds(&op->els, name)) return true;
  }
  return false;
}

/* A body that rebinds its loop variable gets a counter register of its own
 * (SPEC §10.3: the rebinding holds for the rest of the iteration, the next
 * one takes its value from the range); the variable is moved from it at the
 * top of each iteration.  Other loops count in the variable itself. */
static void lower_loop(L *l, const Op *op) {
  int lo = lower_expr(l, op->list[FLD_RANGE][0]), hi = lower_expr(l, op->list[FLD_RANGE][1]);
  int step;
  if (op->nlist[FLD_RANGE] == 3) step = lower_expr(l, op->list[FLD_RANGE][2]);
  else {
    Instr *one = emit(l, I_CONST);
    one->ty = DT_INT64;
    one->imm = 1;
    one->d = step = new_reg(l);
  }
  lower_carries(l, op, op->list[FLD_CARRY], true);
  int var = name_reg(l, op->name[FLD_VAR]);
  int ctr = body_binds(&op->body, op->name[FLD_VAR]) ? new_reg(l) : var;
  int head = l->c->n;
  Instr *f = emit(l, I_FOR);
  f->d = ctr, f->a = lo, f->b = hi, f->c = step;
  if (ctr != var) {
    Instr *mv = emit(l, I_MOV);
    mv->a = ctr;
    mv->d = var;
  }
  lower_body(l, &op->body);
  l->op = op;
  lower_carries(l, op, op->list[FLD_NEXT], false);
  Instr *e = emit(l, I_ENDFOR);
  e->d = ctr, e->b = hi, e->c = step, e->target = head + 1;
  l->c->code[head].target = l->c->n;
}

static void lower_when(L *l, const Op *op) {
  const Expr *c = op->e[FLD_COND];
  if (c->kind == EX_BOOL) return lower_body(l, c->ival ? &op->body : &op->els);
  int cond = lower_expr(l, c);
  int br = l->c->n;
  emit(l, I_BRANCH_IF_FALSE)->a = cond;
  lower_body(l, &op->body);
  int jmp = -1;
  if (op->els.n) {
    l->op = op;
    jmp = l->c->n;
    emit(l, I_JUMP);
  }
  l->c->code[br].target = l->c->n;
  lower_body(l, &op->els);
  if (jmp >= 0) l->c->code[jmp].target = l->c->n;
}

static void lower_expect(L *l, const Op *op) {
  int b = lower_expr(l, op->e[FLD_EQUALS]);
  if (op->has & F(REF)) {
    int view = field_view(l, FLD_REF);
    Instr *in = emit(l, I_EXPECT_VIEW);
    in->view = view;
    in->b = b;
    return;
  }
  int a = lower_expr(l, op->e[FLD_VALUE]);
  Instr *in = emit(l, I_EXPECT);
  in->a = a;
  in->b = b;
}

/* pl.debug_print: tpu.log with no input or one value (a weak literal takes
 * its dtype first: 1234552 prints as s32[1]), tpu.log_buffer of a ref. */
static void lower_debug_print(L *l, const Op *op) {
  const Expr *arg = op->nlist[FLD_ARGS] > 0 ? op->list[FLD_ARGS][0] : NULL;
  if (arg && arg->is_ref) {
    int v = lower_view(l, (const View *)arg->view); /* first: it may emit, moving the code array */
    Instr *in = emit(l, I_LOG_BUFFER);
    in->view = v;
    in->log = 'L';
    return;
  }
  int a = arg ? lower_expr(l, arg) : -1;
  if (arg && arg->weak) {
    Instr *cv = emit(l, I_CAST);
    cv->a = a;
    cv->ty = arg->ty;
    a = cv->d = new_reg(l);
  }
  Instr *in = emit(l, I_LOG);
  in->a = a;
  in->log = arg ? 'L' : 0;
}

static void lower_debug_check(L *l, const Op *op) {
  int a = lower_expr(l, op->e[FLD_COND]);
  emit(l, I_ASSERT)->a = a;
}

static void lower_op(L *l, const Op *op) {
  l->op = op;
  switch (op->kind) {
  case OPK_GET:
  case OPK_LOAD_EXPANDED: lower_get(l, op); break;
  case OPK_SET:
  case OPK_SWAP:
  case OPK_ADDUPDATE:
  case OPK_STORE_COMPRESSED:
  case OPK_ADDUPDATE_COMPRESSED: lower_swap(l, op); break;
  case OPK_LOAD_GATHER:
  case OPK_STORE_SCATTER:
  case OPK_ADDUPDATE_SCATTER: lower_gather_scatter(l, op); break;
  case OPK_ASYNC_COPY: lower_async_copy(l, op); break;
  case OPK_WAIT: lower_wait(l, op); break;
  case OPK_SYNC_COPY: lower_sync_copy(l, op); break;
  case OPK_SEMAPHORE_SIGNAL:
  case OPK_SEMAPHORE_WAIT: lower_semaphore(l, op); break;
  case OPK_FETCH_AND_ADD: lower_fetch_and_add(l, op); break;
  case OPK_BARRIER: emit(l, I_BARRIER); break;
  case OPK_LET:
    if (op->ncarry) lower_tuple_let(l, op);
    else if (!op->e[FLD_VALUE]->is_ref) bind_out(l, op->name[FLD_NAME], lower_expr(l, op->e[FLD_VALUE]));
    break;
  case OPK_LOOP: lower_loop(l, op); break;
  case OPK_WHILE: lower_while(l, op); break;
  case OPK_WHEN: lower_when(l, op); break;
  case OPK_EXPECT: lower_expect(l, op); break;
  case OPK_DEBUG_PRINT: lower_debug_print(l, op); break;
  case OPK_DEBUG_CHECK: lower_debug_check(l, op); break;
  case OPK_UPDATE: case OPK_CALL: /* expanded by the loader (sim/front/load_sugar.c) */
  case OPK_UNIMPLEMENTED: /* rejected by the checker (U1) */
  case OPK_COUNT: break;
  }
}

static void lower_body(L *l, const Body *b) {
  for (int i = 0; i < b->n; i++) lower_op(l, b->ops[i]);
}

int64_t lower_max_regs(const Program *p) {
  int64_t nsub = p->mesh_cores * p->mesh_subcores;
  return LOWER_MAX_REG_SLOTS / (nsub > 0 ? nsub : 1);
}

/* Reports the first operation whose registers pass the bound: in practice
 * a long (or aliased, nested) list literal, one register per element. */
static bool regs_ok(const Code *c, Diag *d) {
  int64_t most = lower_max_regs(c->p);
  if (c->nregs <= most) return true;
  const Instr *in = c->code;
  while (in < c->code + c->n - 1 && in->d < most) in++;
  char msg[400];
  snprintf(msg, sizeof msg,
           "the lowered program needs %d registers on each of the mesh's %lld subcores, and sc-sim holds at most %lld "
           "registers in all (%lld per subcore here); this operation passes the bound: shorten its list literals or use "
           "a smaller mesh",
           c->nregs, (long long)(c->p->mesh_cores * c->p->mesh_subcores), LOWER_MAX_REG_SLOTS, (long long)most);
  diag_set(d, D_IN_LIMIT, c->n ? in->loc : (Loc){c->p->file, 1, 1}, msg);
  return false;
}

/* Folds copies and hoists invariant constants (lowering/hoist.h); the
 * registers that hold names stay where the program puts them. */
static void tidy(Code *c, const L *l) {
  bool *named = calloc((size_t)c->nregs + 1, 1);
  if (!named) abort();
  for (int i = 0; i < l->nnames; i++) named[l->names[i].reg] = true;
  hoist_code(c, named);
  free(named);
}

bool lower_program(const Program *p, Mutant mut, Code *out, Diag *d) {
  memset(out, 0, sizeof *out);
  out->p = p;
  L l = {out, p, NULL, 0, 0, NULL, {0}};
  lower_body(&l, &p->body);
  tidy(out, &l);
  mutant_apply(out, mut); /* before reg_name: a rewrite may add registers */
  out->reg_name = calloc((size_t)(out->nregs ? out->nregs : 1), sizeof *out->reg_name);
  if (!out->reg_name) abort();
  for (int i = 0; i < l.nnames; i++) out->reg_name[l.names[i].reg] = l.names[i].name;
  free(l.names);
  names_free(&l.index);
  return regs_ok(out, d);
}

void lower_free(Code *c) {
  free(c->code);
  free(c->views);
  free(c->reg_name);
  memset(c, 0, sizeof *c);
}

