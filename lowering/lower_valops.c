/* lowering/lower_valops.c -- reductions, math, flip, gathers, reshapes,
 * bitcasts and concatenation of values, instruction for instruction as the
 * pinned jax lowers them for the SC vector subcore:
 *   jnp.sum/max/min   tpu.scan (sum, max, min), vector.extract of the last lane
 *   jnp.all/any       arith.select(x, 1.0, 0.0), tpu.scan (min / max),
 *                     vector.extract, arith.cmpf > 0.0 (lowering.py's proxy)
 *   jnp.exp, jnp.abs  math.exp, math.absf / math.absi
 *   jnp.flip          tpu.iota, n - 1 - iota, tpu.dynamic_gather
 *   take_along_axis   idx < 0 ? idx + n : idx (what jnp adds), tpu.dynamic_gather
 *   jnp.reshape       vector.shape_cast
 *   plsc.bitcast      tpu.bitcast
 *   jnp.concatenate   tpu.concatenate
 *   lax.slice_in_dim  vector.extract_strided_slice (rows imm .. imm + R[0])
 * tpu.scan is the one of lowering/lower.c's scans (an all-true mask; the
 * int32 sign flip around max / min, as upstream). */
#include "lower_valops.h"

#include <stdlib.h>

static Instr *put(const LowerHooks *h, Opcode op, Dtype ty) {
  Instr *in = h->emit(h->l, op);
  in->ty = ty;
  return in;
}

static int done(const LowerHooks *h, Instr *in) { return in->d = h->new_reg(h->l); }

static int iconst(const LowerHooks *h, int64_t v) {
  Instr *in = put(h, I_CONST, DT_INT64);
  in->imm = v;
  return done(h, in);
}

static int fconst(const LowerHooks *h, double v) {
  Instr *in = put(h, I_CONST, DT_FLOAT64);
  in->fimm = v;
  return done(h, in);
}

static int binary(const LowerHooks *h, ExprOp op, int a, int b, Dtype ty, Dtype uty) {
  Instr *in = put(h, I_BINARY, ty);
  in->sub = op, in->a = a, in->b = b, in->uty = uty;
  return done(h, in);
}

/* An all-true mask of n lanes (tpu.scan always takes one). */
static int all_true(const LowerHooks *h, int64_t n) {
  Instr *k = put(h, I_CONST, DT_BOOL);
  k->imm = 1;
  int c = done(h, k);
  Instr *bc = put(h, I_BROADCAST, DT_BOOL);
  bc->a = c, bc->rank = 1, bc->shape[0] = n;
  return done(h, bc);
}

/* x ^ 0x80000000 lane by lane: tpu.scan compares integers unsigned, so
 * upstream flips the sign bit around an int32 max / min scan. */
static int xor_sign(const LowerHooks *h, int x, int64_t n) {
  int k = iconst(h, 0x80000000LL);
  Instr *bc = put(h, I_BROADCAST, DT_INT32);
  bc->a = k, bc->rank = 1, bc->shape[0] = n;
  return binary(h, OP_BXOR, x, done(h, bc), DT_INT32, DT_INT32);
}

/* tpu.scan of kind k (0 sum, 1 max, 2 min) under an all-true mask, then
 * its last lane. */
static int scan_last(const LowerHooks *h, int a, int kind, Dtype ty, int64_t n) {
  bool flip = ty == DT_INT32 && kind != 0;
  if (flip) a = xor_sign(h, a, n);
  int m = all_true(h, n);
  Instr *in = put(h, I_SCAN, ty);
  in->a = a, in->mask = m, in->imm = kind;
  int s = done(h, in);
  if (flip) s = xor_sign(h, s, n);
  in = put(h, I_EXTRACT, ty);
  in->a = s, in->rank = 1, in->shape[0] = n - 1;
  return done(h, in);
}

static int reduction(const LowerHooks *h, const Expr *e) {
  int a = h->expr(h->l, e->args[0]);
  if (e->builtin == BI_VSUM || e->builtin == BI_VMAX || e->builtin == BI_VMIN)
    return scan_last(h, a, e->builtin == BI_VSUM ? 0 : e->builtin == BI_VMAX ? 1 : 2, e->ty, e->sval);
  int one = fconst(h, 1.0), zero = fconst(h, 0.0);
  Instr *in = put(h, I_SELECT, DT_FLOAT32);
  in->a = a, in->b = one, in->c = zero, in->uty = DT_FLOAT32;
  int f = done(h, in);
  int r = scan_last(h, f, e->builtin == BI_VANY ? 1 : 2, DT_FLOAT32, e->sval);
  return binary(h, OP_GT, r, fconst(h, 0.0), DT_BOOL, DT_FLOAT32);
}

static int math(const LowerHooks *h, const Expr *e) {
  int a = h->expr(h->l, e->args[0]);
  if (e->builtin == BI_EXP && e->args[0]->ty != e->ty) {
    Instr *cv = put(h, I_CAST, e->ty);
    cv->a = a;
    a = done(h, cv);
  }
  Instr *in = put(h, e->builtin == BI_EXP ? I_EXP : dtype_is_float(e->ty) ? I_ABSF : I_ABSI, e->ty);
  in->a = a;
  return done(h, in);
}

static int gather(const LowerHooks *h, int x, int idx, Dtype ty) {
  Instr *in = put(h, I_DYN_GATHER, ty);
  in->a = x, in->b = idx;
  return done(h, in);
}

static int flip(const LowerHooks *h, const Expr *e) {
  int x = h->expr(h->l, e->args[0]);
  int top = iconst(h, e->sval - 1);
  Instr *io = put(h, I_IOTA, DT_INT32);
  io->imm = e->sval;
  int iota = done(h, io);
  return gather(h, x, binary(h, OP_SUB, top, iota, DT_INT32, DT_INT32), e->ty);
}

static int take(const LowerHooks *h, const Expr *e) {
  int x = h->expr(h->l, e->args[0]), idx = h->expr(h->l, e->args[1]);
  Dtype it = e->args[1]->ty;
  int neg = binary(h, OP_LT, idx, iconst(h, 0), DT_BOOL, it);
  int wrapped = binary(h, OP_ADD, idx, iconst(h, e->sval), it, it);
  Instr *in = put(h, I_SELECT, it);
  in->a = neg, in->b = wrapped, in->c = idx, in->uty = it;
  return gather(h, x, done(h, in), e->ty);
}

static int reshape(const LowerHooks *h, const Expr *e) {
  int a = h->expr(h->l, e->args[0]);
  const Expr *sh = e->args[1];
  Instr *in = put(h, I_SHAPE_CAST, e->ty);
  in->a = a;
  in->rank = sh->kind == EX_LIST ? sh->nargs : 1;
  for (int i = 0; i < in->rank; i++) in->shape[i] = (sh->kind == EX_LIST ? sh->args[i] : sh)->sval;
  return done(h, in);
}

static int bitcast(const LowerHooks *h, const Expr *e) {
  int a = h->expr(h->l, e->args[0]);
  Instr *in = put(h, I_BITCAST, e->ty);
  in->a = a;
  return done(h, in);
}

/* The items go to consecutive registers, as vector.from_elements' do. */
static int concat(const LowerHooks *h, const Expr *e) {
  const Expr *l = e->args[0];
  int *regs = malloc(sizeof *regs * (size_t)l->nargs);
  if (!regs) abort();
  for (int k = 0; k < l->nargs; k++) regs[k] = h->expr(h->l, l->args[k]);
  int base = -1;
  for (int k = 0; k < l->nargs; k++) {
    Instr *mv = h->emit(h->l, I_MOV);
    mv->a = regs[k];
    mv->d = h->new_reg(h->l);
    if (k == 0) base = mv->d;
  }
  free(regs);
  Instr *in = put(h, I_CONCAT, e->ty);
  in->a = base, in->imm = l->nargs;
  return done(h, in);
}

static int slice_in_dim(const LowerHooks *h, const Expr *e) {
  int a = h->expr(h->l, e->args[0]);
  Instr *in = put(h, I_SLICE, e->ty);
  in->a = a, in->imm = e->args[1]->sval;
  in->rank = 1, in->shape[0] = e->args[2]->sval - e->args[1]->sval;
  return done(h, in);
}

int lower_valops_call(const LowerHooks *h, const Expr *e) {
  switch (e->builtin) {
  case BI_VSUM: case BI_VMAX: case BI_VMIN: case BI_VALL: case BI_VANY: return reduction(h, e);
  case BI_EXP: case BI_ABS: return math(h, e);
  case BI_FLIP: return flip(h, e);
  case BI_TAKE: return take(h, e);
  case BI_RESHAPE: return reshape(h, e);
  case BI_BITCAST: return bitcast(h, e);
  case BI_CONCAT: return concat(h, e);
  case BI_SLICE: return slice_in_dim(h, e);
  case BI_SQRT: case BI_RSQRT: case BI_LOG: case BI_TANH: /* rejected by the checker (U1) */
  case BI_NONE: case BI_IOTA: case BI_FULL: case BI_WHERE: case BI_MIN: case BI_MAX: case BI_ASTYPE:
  case BI_DS: case BI_INDICES: case BI_SELECT_REF: case BI_AXIS_SIZE: case BI_CUMSUM: case BI_CUMMAX: case BI_CUMMIN:
  case BI_LAX_CUMSUM: case BI_SORT: case BI_SORT_KV: case BI_SCAN_COUNT: case BI_PACK: case BI_UNPACK: case BI_AR_POPCOUNT: case BI_AR_FFS: break;
  }
  abort();
}
