/* sim/run/engine_scan.c -- tpu.scan: the inclusive scans over a vector's
 * lanes (plsc.cumsum/cummax/cummin, jnp.cumsum), as the hardware op does
 * them: integer max/min compare the lanes as unsigned words (the lowering
 * flips int32's sign bit around it, as upstream's does). */
#include "engine_priv.h"

#include <math.h>
#include <string.h>

/* xlane_issue_cycles per num_lanes 32-bit words of v (at least 1 cycle). */
static uint64_t xlane_cost(const Eng *E, const Value *v) {
  int64_t words = (v->n * dtype_size(v->dtype) + 3) / 4, lanes = E->p->params.num_lanes > 0 ? E->p->params.num_lanes : 1;
  uint64_t c = (uint64_t)((words + lanes - 1) / lanes) * (uint64_t)E->p->params.xlane_issue_cycles;
  return c ? c : 1;
}

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
  s->cost = xlane_cost(E, t);
  eng_swap_in(s, in->d);
  return true;
}

/* tpu.sort's key order: integers as unsigned 32-bit words (the hardware's
 * predicates), floats by value with NaN after every number. */
static bool sort_less(Dtype t, Cell a, Cell b) {
  if (dtype_is_float(t)) return !isnan(a.f) && (isnan(b.f) || a.f < b.f);
  return (uint32_t)a.i < (uint32_t)b.i;
}

/* The sort's order of the lanes: those mask m selects, stably by key
 * (decreasing with desc), then the others in order; false when a key or
 * a mask lane is undefined (the order is then unknown). */
#define SORT_MAX_LANES 4096
static bool sort_order(const Value *a, const Value *m, bool desc, int64_t *perm, int64_t *selected) {
  int64_t n = 0;
  bool def = true;
  for (int pass = 0; pass < 2; pass++)
    for (int64_t i = 0; i < a->n; i++) {
      bool on = alu_truthy(m->dtype, m->v[i]);
      if (on != (pass == 0)) continue;
      if (pass == 0) def = def && a->def[i] && m->def[i];
      else def = def && m->def[i];
      int64_t j = n++;
      if (pass == 0)
        for (; j > 0 && (desc ? sort_less(a->dtype, a->v[perm[j - 1]], a->v[i]) : sort_less(a->dtype, a->v[i], a->v[perm[j - 1]])); j--)
          perm[j] = perm[j - 1];
      perm[j] = i;
      if (pass == 0) *selected = n;
    }
  return def;
}

/* tpu.sort: one of its results (imm >> 2: keys, the payload b, the output
 * mask) in the order sort_order gives; imm bit 1 reverses the result
 * (jnp.sort's descending).  The keys charge the cross-lane unit; the other
 * two results are the same hardware op's, one issue cycle each. */
bool eng_sort(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  int which = (int)(in->imm >> 2);
  Value *a = eng_rd(E, s, in, in->a, &ok);
  Value *m = ok ? eng_rd(E, s, in, in->mask, &ok) : NULL;
  Value *b = ok && in->b >= 0 ? eng_rd(E, s, in, in->b, &ok) : NULL;
  if (!ok) return false;
  if (a->rank != 1) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.sort: the keys must be a vector");
  if (a->n > SORT_MAX_LANES) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.sort: more than 4096 lanes");
  if (!eng_fits(E, s, in, "mask", m->n, "the keys", a->n) || (b && !eng_fits(E, s, in, "values", b->n, "the keys", a->n))) return false;
  if (which > 2 || (which == 1 && !b)) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.sort: imm >> 2 must be 0 (keys), 1 (values, with b) or 2 (mask)");
  int64_t perm[SORT_MAX_LANES], selected = 0;
  bool def = sort_order(a, m, in->imm & 2, perm, &selected);
  const Value *src = which == 1 ? b : a;
  Value *t = &s->tmp;
  val_shape(t, in->ty, a->rank, a->shape);
  for (int64_t i = 0; i < a->n; i++) {
    int64_t j = in->imm & 1 ? perm[a->n - 1 - i] : perm[i];
    if (which == 2) t->v[i].i = i < selected, t->def[i] = def;
    else t->v[i] = alu_convert(src->dtype, in->ty, src->v[j]), t->def[i] = def && src->def[j];
  }
  s->cost = which == 0 ? xlane_cost(E, t) : 1;
  eng_swap_in(s, in->d);
  return true;
}

/* The 32-bit word of a float32 lane (held as a double). */
static uint32_t float_word(double f) {
  float x = (float)f;
  uint32_t w;
  memcpy(&w, &x, sizeof w);
  return w;
}

/* tpu.scan_count: one pass over the lanes with a small table of the
 * selected words seen so far (counts, imm 0), or from the top for the
 * last occurrences (imm 1).  An undefined mask lane, or word of a selected
 * lane, leaves every lane undefined; an unselected lane's count is
 * undefined (upstream says nothing of it), its last flag false.  The
 * counts charge the cross-lane unit, the mask one issue cycle. */
bool eng_scan_count(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *a = eng_rd(E, s, in, in->a, &ok);
  Value *m = ok ? eng_rd(E, s, in, in->mask, &ok) : NULL;
  if (!ok) return false;
  if (a->rank != 1) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.scan_count: the operand must be a vector");
  if (a->n > SORT_MAX_LANES) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.scan_count: more than 4096 lanes");
  if (!eng_fits(E, s, in, "mask", m->n, "the operand", a->n)) return false;
  if (in->imm != 0 && in->imm != 1) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.scan_count: imm must be 0 (counts) or 1 (mask)");
  Value *t = &s->tmp;
  val_shape(t, in->ty, a->rank, a->shape);
  uint32_t seen[SORT_MAX_LANES];
  int64_t cnt[SORT_MAX_LANES], nseen = 0;
  bool def = true, last = in->imm == 1;
  for (int64_t i = 0; i < a->n; i++) def = def && m->def[i] && (a->def[i] || !alu_truthy(m->dtype, m->v[i]));
  for (int64_t k = 0; k < a->n; k++) {
    int64_t i = last ? a->n - 1 - k : k;
    bool on = alu_truthy(m->dtype, m->v[i]);
    t->v[i].i = 0, t->def[i] = def && (on || last);
    if (!on) continue;
    uint32_t w = dtype_is_float(a->dtype) ? float_word(a->v[i].f) : (uint32_t)a->v[i].i;
    int64_t j = 0;
    while (j < nseen && seen[j] != w) j++;
    if (j == nseen) seen[nseen] = w, cnt[nseen++] = 0;
    cnt[j]++;
    t->v[i].i = last ? cnt[j] == 1 : cnt[j];
  }
  s->cost = last ? 1 : xlane_cost(E, t);
  eng_swap_in(s, in->d);
  return true;
}

/* tpu.pack_subelements: a and b narrowed to T, pair by pair (the
 * compressed (n, 2) result has the same element order); the cost is the
 * ordinary vector instruction's (s->cost left 0). */
bool eng_pack(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *a = eng_rd(E, s, in, in->a, &ok);
  Value *b = ok ? eng_rd(E, s, in, in->b, &ok) : NULL;
  if (!ok) return false;
  if (a->rank != 1 || !eng_fits(E, s, in, "b", b->n, "a", a->n)) return a->rank == 1 ? false : eng_efault(E, s, in, FAULT_LOWERING, "tpu.pack_subelements: vector operands");
  Value *t = &s->tmp;
  val_shape(t, in->ty, in->rank, in->shape);
  if (t->n != 2 * a->n) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.pack_subelements: the result must hold both operands");
  for (int64_t i = 0; i < a->n; i++) {
    t->v[2 * i] = alu_convert(a->dtype, in->ty, a->v[i]), t->def[2 * i] = a->def[i];
    t->v[2 * i + 1] = alu_convert(b->dtype, in->ty, b->v[i]), t->def[2 * i + 1] = b->def[i];
  }
  eng_swap_in(s, in->d);
  return true;
}

/* tpu.unpack_subelements: every other element of a from imm & 1, widened. */
bool eng_unpack(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *a = eng_rd(E, s, in, in->a, &ok);
  if (!ok) return false;
  Value *t = &s->tmp;
  val_shape(t, in->ty, in->rank, in->shape);
  if (2 * t->n != a->n) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.unpack_subelements: the result must be half the operand");
  for (int64_t k = 0, j = in->imm & 1; k < t->n; k++, j += 2) t->v[k] = alu_convert(a->dtype, in->ty, a->v[j]), t->def[k] = a->def[j];
  eng_swap_in(s, in->d);
  return true;
}

/* tpu.all_reduce over a bool vector: a population count or the first set
 * lane, broadcast to the result shape. */
bool eng_all_reduce(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *a = eng_rd(E, s, in, in->a, &ok);
  if (!ok) return false;
  if (a->rank != 1 || in->rank != 1) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.all_reduce: a vector operand and result");
  int64_t count = 0, first = -1;
  bool def = true;
  for (int64_t i = 0; i < a->n; i++) {
    def = def && a->def[i];
    if (alu_truthy(a->dtype, a->v[i])) {
      count++;
      if (first < 0) first = i;
    }
  }
  if (first < 0) first = a->n;
  Value *t = &s->tmp;
  val_shape(t, DT_INT32, in->rank, in->shape);
  for (int64_t i = 0; i < t->n; i++) t->v[i].i = in->imm ? first : count, t->def[i] = def;
  s->cost = xlane_cost(E, a);
  eng_swap_in(s, in->d);
  return true;
}
