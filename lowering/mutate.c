/* lowering/mutate.c -- the mutants: deliberately wrong lowerings, each a
 * rewrite of correctly lowered code.
 *
 * mutant_apply copies the code instruction by instruction; a mutant's
 * rewrite (rw_NAME, one per row of MUTANTS, so a row without one does not
 * build) emits what replaces one instruction: the same, changed (a flag of
 * isa.h ISA_FLAGS, add cleared, another register), several, or none.  Views
 * are edited in place, each at most once.  Old jump targets then map to the
 * first instruction emitted for the instruction they named, so an inserted
 * instruction belongs to the one it precedes.  The engine and the text form
 * see ordinary instructions: `sc-sim lower --mutate NAME` prints the rewrite. */
#include "lower.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  Code *c;
  Instr *out;      /* the new code */
  int n, cap;
  int i;           /* the old instruction being rewritten */
  bool skip;       /* the rewrite consumed instruction i + 1 too */
  uint8_t *vmark;  /* per view: VM_* bits */
} Ed;

enum { VM_DONE = 1, VM_NOT_PLAIN = 2 }; /* edited already; some access of it is masked or adds */

typedef void Rewrite(Ed *e, const Instr *in);
#define X(e, n, w) static Rewrite rw_##e;
MUTANTS(X)
#undef X

static const struct {
  const char *name, *what;
  Rewrite *rw;
} mutants[MUT_COUNT] = {
    [MUT_NONE] = {"none", "the correct lowering", NULL},
#define X(e, n, w) [MUT_##e] = {n, w, rw_##e},
    MUTANTS(X)
#undef X
};

const char *mutant_name(Mutant m) { return mutants[m].name; }
const char *mutant_what(Mutant m) { return mutants[m].what; }
bool mutant_lookup(const char *name, Mutant *out) {
  for (int i = 0; i < MUT_COUNT; i++)
    if (!strcmp(mutants[i].name, name)) return *out = (Mutant)i, true;
  return false;
}

/* ---- editing ------------------------------------------------------------- */
static Instr *put(Ed *e, const Instr *in) {
  if (e->n == e->cap) {
    e->cap = e->cap ? e->cap * 2 : 256;
    e->out = realloc(e->out, sizeof *e->out * (size_t)e->cap);
    if (!e->out) abort();
  }
  e->out[e->n] = *in;
  return &e->out[e->n++];
}

/* A new instruction op with no operands, at the place of `like`. */
static Instr *put_new(Ed *e, const Instr *like, Opcode op) {
  Instr in;
  memset(&in, 0, sizeof in);
  in.op = op;
  in.d = in.a = in.b = in.c = in.mask = -1;
  in.view = in.view2 = in.view3 = in.view4 = -1;
  in.op_id = like->op_id;
  in.loc = like->loc;
  return put(e, &in);
}

static int new_reg(Ed *e) { return e->c->nregs++; }

static const VDesc *view_of(const Ed *e, int v) { return &e->c->views[v]; }

static Dtype view_dtype(const VDesc *v) { return v->nlev ? v->lev[v->nlev - 1].dtype : v->ref->dtype; }

/* Claims view v for an edit: false when it was edited already. */
static bool claim(Ed *e, int v) {
  if (v < 0 || (e->vmark[v] & VM_DONE)) return false;
  e->vmark[v] |= VM_DONE;
  return true;
}

/* d := a OP b in dtype t (operands converted to t). */
static void put_binary(Ed *e, const Instr *like, int d, int a, ExprOp op, int b, Dtype t) {
  Instr *in = put_new(e, like, I_BINARY);
  in->d = d, in->a = a, in->b = b, in->sub = op, in->ty = in->uty = t;
}

static bool is_store(Opcode op) { return op == I_STORE || op == I_VSTORE; }
static bool is_load(Opcode op) { return op == I_LOAD || op == I_VLOAD; }

/* ---- the rewrites, in MUTANTS order ---------------------------------------- */
/* The old-value load and the store of a swap (SPEC §6) change places. */
static void rw_SWAP_STORE_FIRST(Ed *e, const Instr *in) {
  const Instr *next = e->i + 1 < e->c->n ? in + 1 : NULL;
  if (is_load(in->op) && in->log == 'O' && next && is_store(next->op) && next->view == in->view) {
    put(e, next);
    e->skip = true;
  }
  put(e, in);
}

/* Masked accesses pair lane p_k with element p_k: a select. */
static void rw_MASK_AS_SELECT(Ed *e, const Instr *in) {
  Instr *out = put(e, in);
  if ((in->op == I_VLOAD || in->op == I_VSTORE) && in->mask >= 0) out->flags |= IF_ELEM_P;
}

static void rw_ADD_OVERWRITES(Ed *e, const Instr *in) {
  Instr *out = put(e, in);
  if (is_store(in->op)) out->add = false;
}

/* The last index entry of a plain (unmasked, non-add) vector access's view
 * starts one later; a swap's load and store share the view. */
static void rw_OFF_BY_ONE_LANE(Ed *e, const Instr *in) {
  put(e, in);
  if (in->op != I_VLOAD && in->op != I_VSTORE) return;
  if ((e->vmark[in->view] & VM_NOT_PLAIN) || !view_of(e, in->view)->nlev) return;
  Level *lv = &e->c->views[in->view].lev[view_of(e, in->view)->nlev - 1];
  if (lv->kind == TR_INDEX && lv->n > 0 && claim(e, in->view)) lv->start[lv->n - 1].imm += 1;
}

/* A value stored into bfloat16 memory first goes through a truncating
 * arith.convert (the store's own conversion then has nothing to round). */
static void rw_BF16_TRUNCATE(Ed *e, const Instr *in) {
  bool st = is_store(in->op) || in->op == I_VSTORE_IDX;
  if (!st || view_dtype(view_of(e, in->view)) != DT_BFLOAT16) {
    put(e, in);
    return;
  }
  Instr *cv = put_new(e, in, I_CAST);
  cv->a = in->op == I_VSTORE_IDX ? in->b : in->a;
  cv->d = new_reg(e);
  cv->ty = DT_BFLOAT16;
  cv->flags = IF_TRUNCATE;
  int t = cv->d;
  Instr *out = put(e, in);
  *(in->op == I_VSTORE_IDX ? &out->b : &out->a) = t;
}

static void rw_SCATTER_FIRST_WINS(Ed *e, const Instr *in) {
  Instr *out = put(e, in);
  if (in->op == I_VSTORE_IDX && !in->add) out->flags |= IF_LOW_WINS;
}

static void rw_SCATTER_ADD_OVERWRITES(Ed *e, const Instr *in) {
  Instr *out = put(e, in);
  if (in->op == I_VSTORE_IDX) out->add = false;
}

/* store_compressed: element k takes lane k, not the k-th selected lane. */
static void rw_COMPRESS_NO_SKIP(Ed *e, const Instr *in) {
  Instr *out = put(e, in);
  if (in->op == I_VSTORE && in->mask >= 0) out->flags |= IF_LANE_K;
}

/* load_expanded: lane k takes element p_k (the selected elements packed). */
static void rw_EXPAND_NO_SKIP(Ed *e, const Instr *in) {
  Instr *out = put(e, in);
  if (in->op == I_VLOAD && in->mask >= 0) out->flags |= IF_LANE_K | IF_ELEM_P;
}

static void rw_SCALAR_STORE_DROPPED(Ed *e, const Instr *in) {
  if (in->op != I_STORE) put(e, in);
}

/* View v, of static shape, gets a level that leaves out the last index of
 * its last dimension (when that has at least two). */
static void drop_last(Ed *e, int v) {
  VDesc *vd = &e->c->views[v];
  int rank = vd->nlev ? vd->lev[vd->nlev - 1].rank : vd->ref->rank;
  const int64_t *shape = vd->nlev ? vd->lev[vd->nlev - 1].shape : vd->ref->shape;
  if (rank < 1 || vd->nlev >= MAX_TRANSFORMS || shape[rank - 1] < 2) return;
  for (int d = 0; d < rank; d++)
    if (shape[d] == DYN) return;
  if (!claim(e, v)) return;
  Level lv;
  memset(&lv, 0, sizeof lv);
  lv.kind = TR_INDEX;
  lv.dtype = view_dtype(vd);
  lv.rank = lv.n = rank;
  for (int d = 0; d < rank; d++) {
    lv.ek[d] = IX_SLICE;
    lv.start[d] = (Operand){0, -1};
    lv.shape[d] = shape[d] - (d == rank - 1);
    lv.size[d] = (Operand){lv.shape[d], -1};
    lv.stride[d] = 1;
  }
  vd->lev[vd->nlev++] = lv;
}

/* Both views of a direct copy and of its wait shrink alike, so the bytes
 * the semaphore receives still match the bytes the wait expects. */
static void rw_DMA_DROP_LAST(Ed *e, const Instr *in) {
  put(e, in);
  if (in->op != I_ENQUEUE_DMA && in->op != I_WAIT_DMA) return;
  drop_last(e, in->view);
  drop_last(e, in->view2);
}

/* %d = tpu.iota  ->  %t = tpu.iota; %one = 1; %d = %t + %one. */
static void rw_IOTA_FROM_ONE(Ed *e, const Instr *in) {
  if (in->op != I_IOTA) {
    put(e, in);
    return;
  }
  int t = new_reg(e), one = new_reg(e);
  put(e, in)->d = t;
  Instr *c = put_new(e, in, I_CONST);
  c->d = one, c->imm = 1, c->ty = DT_INT32;
  put_binary(e, in, in->d, t, OP_ADD, one, DT_INT32);
}

/* A loop's bound becomes hi - step, for its scf.for and its scf.yield. */
static void rw_LOOP_SKIP_LAST(Ed *e, const Instr *in) {
  if (in->op != I_FOR) {
    put(e, in);
    return;
  }
  int hi = new_reg(e);
  put_binary(e, in, hi, in->b, OP_SUB, in->c, DT_INT64);
  put(e, in)->b = hi;
  Instr *end = &e->c->code[in->target - 1]; /* the loop's scf.yield (lower_loop), copied later */
  if (end->op == I_ENDFOR) end->b = hi;
}

/* A load reads unsigned 8/16-bit memory through a view bitcast to the
 * signed type of its width: the register holds the sign-extended value
 * (a swap's store shares the view and writes the same bits). */
static void rw_UNSIGNED_SIGN_EXTEND(Ed *e, const Instr *in) {
  put(e, in);
  if (!is_load(in->op) && in->op != I_VLOAD_IDX) return;
  VDesc *vd = &e->c->views[in->view];
  Dtype t = view_dtype(vd);
  if ((t != DT_UINT8 && t != DT_UINT16) || vd->nlev >= MAX_TRANSFORMS || !claim(e, in->view)) return;
  Level lv;
  memset(&lv, 0, sizeof lv);
  lv.kind = TR_BITCAST;
  lv.dtype = t == DT_UINT8 ? DT_INT8 : DT_INT16;
  lv.rank = vd->nlev ? vd->lev[vd->nlev - 1].rank : vd->ref->rank;
  memcpy(lv.shape, vd->nlev ? vd->lev[vd->nlev - 1].shape : vd->ref->shape, sizeof lv.shape);
  vd->lev[vd->nlev++] = lv;
}

/* ---- the pass ----------------------------------------------------------------- */
static void mark_views(Ed *e) {
  for (int i = 0; i < e->c->n; i++) {
    const Instr *in = &e->c->code[i];
    if (in->view >= 0 && (in->add || in->mask >= 0)) e->vmark[in->view] |= VM_NOT_PLAIN;
  }
}

void mutant_apply(Code *c, Mutant m) {
  c->mutant = m;
  if (m == MUT_NONE) return;
  Ed e = {c, NULL, 0, 0, 0, false, calloc((size_t)c->nviews + 1, 1)};
  int *at = malloc(sizeof *at * ((size_t)c->n + 1)); /* old index -> new index */
  if (!e.vmark || !at) abort();
  mark_views(&e);
  for (e.i = 0; e.i < c->n; e.i++) {
    at[e.i] = e.n;
    if (e.skip) { /* the second of a rewritten pair: a target of it means the pair */
      e.skip = false;
      at[e.i] = at[e.i - 1];
      continue;
    }
    mutants[m].rw(&e, &c->code[e.i]);
  }
  at[c->n] = e.n;
  for (int i = 0; i < e.n; i++)
    if (strchr(isa_form(e.out[i].op), 'J')) e.out[i].target = at[e.out[i].target];
  free(c->code);
  c->code = e.out, c->n = e.n, c->cap = e.cap;
  free(at);
  free(e.vmark);
}
