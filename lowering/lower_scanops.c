/* lowering/lower_scanops.c -- the cross-lane functions with several
 * results as the Mosaic ops upstream emits for them:
 *
 *   plsc.sort_key_val   (int32 keys: arith.xori with 0x80000000, as
 *                       upstream's rule: tpu.sort compares unsigned)
 *                       tpu.sort %keys, %values masked %mask {descending}
 *                       (an all-true mask when none is given), then the
 *                       keys flipped back
 *   plsc.pack           tpu.pack_subelements %a, %b [0, 1] #tpu.pack_format<...>
 *   plsc.unpack         tpu.unpack_subelements %ab, 0 and 1 (one per half)
 *   plsc.scan_count     %mask_out, %counts = tpu.scan_count mask(%m)
 *                       value(%x) (an all-true mask when none is given;
 *                       upstream's rule returns them counts first)
 *
 * sc-sim's tpu.sort instruction has one result, so the op's three results
 * (keys, values, output mask) are three instructions over the same
 * operands, picked by imm >> 2; the engine charges the sort once.  The
 * same holds for tpu.scan_count's two results (imm 0, 1). */
#include "lower_scanops.h"

#include "scanops.h"

static Instr *put(const LowerHooks *h, Opcode op, Dtype ty) {
  Instr *in = h->emit(h->l, op);
  in->ty = ty;
  return in;
}

static int done(const LowerHooks *h, Instr *in) { return in->d = h->new_reg(h->l); }

static int broadcast(const LowerHooks *h, int c, Dtype ty, int64_t n) {
  Instr *bc = put(h, I_BROADCAST, ty);
  bc->a = c, bc->rank = 1, bc->shape[0] = n;
  return done(h, bc);
}

static int all_true(const LowerHooks *h, int64_t n) {
  Instr *k = put(h, I_CONST, DT_BOOL);
  k->imm = 1;
  return broadcast(h, done(h, k), DT_BOOL, n);
}

static int xor_sign(const LowerHooks *h, int x, int64_t n) {
  Instr *k = put(h, I_CONST, DT_INT64);
  k->imm = 0x80000000LL;
  int bc = broadcast(h, done(h, k), DT_INT32, n);
  Instr *in = put(h, I_BINARY, DT_INT32);
  in->sub = OP_BXOR, in->a = x, in->b = bc, in->uty = DT_INT32;
  return done(h, in);
}

static int sort_result(const LowerHooks *h, int k, int v, int m, int64_t flags, int which, Dtype ty) {
  Instr *in = put(h, I_SORT, ty);
  in->a = k, in->b = v, in->mask = m;
  in->imm = flags | (int64_t)which << 2;
  return done(h, in);
}

static int sort_key_val(const LowerHooks *h, const Expr *e, int *regs) {
  const Expr *ve = scanop_arg(e, 1, NULL), *me = scanop_arg(e, -1, "mask"), *de = scanop_arg(e, -1, "descending");
  int k = h->expr(h->l, scanop_arg(e, 0, NULL)), v = h->expr(h->l, ve);
  int m = me ? h->expr(h->l, me) : -1;
  bool flip = e->ty == DT_INT32;
  int64_t flags = de && de->sval ? 2 : 0, n = e->sval;
  if (m < 0) m = all_true(h, n);
  if (flip) k = xor_sign(h, k, n);
  regs[0] = sort_result(h, k, v, m, flags, 0, e->ty);
  regs[1] = sort_result(h, k, v, m, flags, 1, ve->ty);
  if (me) regs[2] = sort_result(h, k, v, m, flags, 2, DT_BOOL);
  if (flip) regs[0] = xor_sign(h, regs[0], n);
  return me ? 3 : 2;
}

static int scan_count_result(const LowerHooks *h, int x, int m, int which, Dtype ty) {
  Instr *in = put(h, I_SCAN_COUNT, ty);
  in->a = x, in->mask = m, in->imm = which;
  return done(h, in);
}

static int scan_count(const LowerHooks *h, const Expr *e, int *regs) {
  const Expr *me = scanop_arg(e, -1, "mask");
  int x = h->expr(h->l, scanop_arg(e, 0, NULL));
  int m = me ? h->expr(h->l, me) : all_true(h, e->sval);
  regs[0] = scan_count_result(h, x, m, 0, DT_INT32);
  regs[1] = scan_count_result(h, x, m, 1, DT_BOOL);
  return 2;
}

int lower_scanops_pack(const LowerHooks *h, const Expr *e) {
  int a = h->expr(h->l, scanop_arg(e, 0, NULL)), b = h->expr(h->l, scanop_arg(e, 1, NULL));
  int64_t n = e->sval >> 1, fmt = e->sval & 1;
  Instr *in = put(h, I_PACK, e->dtype);
  in->a = a, in->b = b, in->imm = fmt;
  in->rank = fmt ? 2 : 1, in->shape[0] = fmt ? n : 2 * n, in->shape[1] = 2;
  return done(h, in);
}

static int unpack(const LowerHooks *h, const Expr *e, int *regs) {
  int x = h->expr(h->l, scanop_arg(e, 0, NULL));
  for (int k = 0; k < 2; k++) {
    Instr *in = put(h, I_UNPACK, e->dtype);
    in->a = x, in->imm = k | (e->sval & 1) << 1;
    in->rank = 1, in->shape[0] = e->sval >> 1;
    regs[k] = done(h, in);
  }
  return 2;
}

/* lax.sort([k, v1, v2]): as upstream, one tpu.sort of the keys per value
 * operand under an all-true mask, no sign flip; the keys come from the
 * first.  Each further sort charges the cross-lane unit again: its keys'
 * result is computed and dropped. */
static int sort_operands(const LowerHooks *h, const Expr *e, int *regs) {
  const Expr *le = e->args[0];
  int x[3];
  for (int i = 0; i < le->nargs; i++) x[i] = h->expr(h->l, le->args[i]);
  int m = all_true(h, e->sval);
  regs[0] = sort_result(h, x[0], x[1], m, 0, 0, e->ty);
  for (int i = 1; i < le->nargs; i++) {
    if (i > 1) (void)sort_result(h, x[0], x[i], m, 0, 0, e->ty);
    regs[i] = sort_result(h, x[0], x[i], m, 0, 1, le->args[i]->ty);
  }
  return le->nargs;
}

int lower_scanops_tuple(const LowerHooks *h, const Expr *e, int *regs) {
  if (e->builtin == BI_UNPACK) return unpack(h, e, regs);
  if (e->builtin == BI_SORT) return sort_operands(h, e, regs);
  return e->builtin == BI_SCAN_COUNT ? scan_count(h, e, regs) : sort_key_val(h, e, regs);
}
