/* sim/run/reference_scan.c -- the scans, from their definition: lane i of
 * the result folds lanes 0..i that the mask selects, in order, with + or
 * jnp.maximum / jnp.minimum on the dtype's own order (signed for int32). */
#include "reference_scan.h"

#include <math.h>
#include <stdbool.h>

void ref_scan(Builtin b, const Value *x, const Value *m, Dtype ty, Value *out) {
  val_shape(out, ty, x->rank, x->shape);
  bool sum = b == BI_CUMSUM || b == BI_LAX_CUMSUM, max = b == BI_CUMMAX;
  for (int64_t i = 0; i < x->n; i++) {
    Cell r = alu_convert(DT_INT64, ty, (Cell){.i = 0});
    bool any = false, def = true;
    for (int64_t j = 0; j <= i; j++) {
      bool mdef = m ? m->def[j] : true, on = m ? alu_truthy(m->dtype, m->v[j]) : true;
      def = def && mdef;
      if (!on) continue;
      Cell v = alu_convert(x->dtype, ty, x->v[j]);
      def = def && x->def[j];
      if (sum) alu_binary(OP_ADD, ty, ty, r, v, &r);
      else r = any ? alu_minmax(ty, r, v, max) : v;
      any = true;
    }
    if (!sum && !any) r = alu_convert(x->dtype, ty, x->v[i]), def = def && x->def[i];
    out->v[i] = r;
    out->def[i] = def;
  }
}

/* Key order of jnp.sort / lax.sort as lowered (tpu.sort, no sign flip):
 * integer keys as unsigned 32-bit words, floats by value, NaN last. */
static bool key_before(Dtype t, Cell a, Cell b) {
  if (dtype_is_float(t)) return !isnan(a.f) && (isnan(b.f) || a.f < b.f);
  return (uint32_t)a.i < (uint32_t)b.i;
}

void ref_sort(const Value *x, bool descending, Dtype ty, Value *out) {
  val_shape(out, ty, x->rank, x->shape);
  bool def = val_all_defined(x);
  /* a stable sort by rank: lane i goes after every lane that precedes it
   * in key order, and after the equal lanes left of it */
  for (int64_t i = 0; i < x->n; i++) {
    Cell a = alu_convert(x->dtype, ty, x->v[i]);
    int64_t rank = 0;
    for (int64_t j = 0; j < x->n; j++) {
      Cell b = alu_convert(x->dtype, ty, x->v[j]);
      if (key_before(ty, b, a) || (j < i && !key_before(ty, a, b))) rank++;
    }
    int64_t at = descending ? x->n - 1 - rank : rank;
    out->v[at] = a;
  }
  for (int64_t i = 0; i < x->n; i++) out->def[i] = def;
}

void ref_all_reduce(const Value *x, bool ffs, int64_t reduce, Value *out) {
  int64_t n = x->n / reduce, r = ffs ? x->n : 0;
  bool def = val_all_defined(x);
  for (int64_t i = x->n - 1; i >= 0; i--) /* from the top: the last true lane seen is the first */
    if (x->v[i].i != 0) r = ffs ? i : r + 1;
  val_shape(out, DT_INT32, 1, &n);
  for (int64_t i = 0; i < n; i++) out->v[i].i = r, out->def[i] = def;
}
