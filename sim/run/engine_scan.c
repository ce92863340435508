/* sim/run/engine_scan.c -- tpu.scan: the inclusive scans over a vector's
 * lanes (plsc.cumsum/cummax/cummin, jnp.cumsum), as the hardware op does
 * them: integer max/min compare the lanes as unsigned words (the lowering
 * flips int32's sign bit around it, as upstream's does). */
#include "engine_priv.h"

static Cell scan_combine(Dtype t, int kind, Cell acc, Cell x) {
  Cell r;
  if (kind == 0) {
    alu_binary(OP_ADD, t, t, acc, x, &r);
    return r;
  }
  if (dtype_is_float(t)) return alu_minmax(t, acc, x, kind == 1);
  uint32_t a = (uint32_t)acc.i, b = (uint32_t)x.i;
  bool take_x = kind == 1 ? b > a : b < a;
  return take_x ? x : acc;
}

bool eng_scan(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *a = eng_rd(E, s, in, in->a, &ok);
  Value *m = ok ? eng_rd(E, s, in, in->mask, &ok) : NULL;
  if (!ok) return false;
  if (a->rank != 1) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.scan: the operand must be a vector");
  if (!eng_fits(E, s, in, "mask", m->n, "the operand", a->n)) return false;
  if (in->imm < 0 || in->imm > 2) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.scan: imm must be 0 (sum), 1 (max) or 2 (min)");
  Value *t = &s->tmp;
  val_shape(t, in->ty, a->rank, a->shape);
  Cell acc = {0};
  bool seen = false, def = true;
  if (in->imm == 0) acc = alu_convert(DT_INT64, in->ty, (Cell){.i = 0});
  for (int64_t i = 0; i < a->n; i++) {
    Cell x = alu_convert(a->dtype, in->ty, a->v[i]);
    def = def && m->def[i];
    bool on = alu_truthy(m->dtype, m->v[i]);
    if (on) {
      def = def && a->def[i];
      acc = in->imm == 0 || seen ? scan_combine(in->ty, (int)in->imm, acc, x) : x;
      seen = true;
    }
    if (in->imm != 0 && !seen) t->v[i] = x, t->def[i] = def && a->def[i];
    else t->v[i] = acc, t->def[i] = def;
  }
  int64_t words = (t->n * dtype_size(t->dtype) + 3) / 4, lanes = E->p->params.num_lanes > 0 ? E->p->params.num_lanes : 1;
  s->cost = (uint64_t)((words + lanes - 1) / lanes) * (uint64_t)E->p->params.xlane_issue_cycles;
  if (!s->cost) s->cost = 1;
  Value v = s->reg[in->d]; /* the scratch value becomes the destination (as engine.c's swap_in) */
  s->reg[in->d] = s->tmp;
  s->tmp = v;
  s->written[in->d] = 1;
  return true;
}
