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

/* plsc.sort_key_val's order, from the dtype's own values: int32 signed
 * (upstream's rule flips the sign bit so that tpu.sort's unsigned order
 * is this one), uint32 unsigned, floats with NaN after every number. */
static bool kv_before(Dtype t, Cell a, Cell b) {
  if (dtype_is_float(t)) return !isnan(a.f) && (isnan(b.f) || a.f < b.f);
  if (t == DT_UINT32) return (uint32_t)a.i < (uint32_t)b.i;
  return (int32_t)a.i < (int32_t)b.i;
}

/* Where lane i lands: a selected lane after the selected lanes with an
 * earlier key, and the equal ones to its left; an unselected lane after
 * every selected lane and the unselected ones to its left. */
static int64_t kv_rank(const Value *k, const Value *m, bool desc, int64_t i, int64_t selected) {
  bool on_i = m ? m->v[i].i != 0 : true;
  int64_t r = on_i ? 0 : selected;
  for (int64_t j = 0; j < k->n; j++) {
    bool on_j = m ? m->v[j].i != 0 : true;
    if (on_j != on_i) continue;
    Cell a = k->v[i], b = k->v[j];
    bool earlier = desc ? kv_before(k->dtype, a, b) : kv_before(k->dtype, b, a);
    bool equal = !kv_before(k->dtype, a, b) && !kv_before(k->dtype, b, a);
    if (j < i ? (!on_i || earlier || equal) : (on_i && earlier)) r++;
  }
  return r;
}

void ref_sort_key_val(const Value *k, const Value *v, const Value *m, bool descending, Value *out) {
  val_shape(&out[0], k->dtype, 1, &k->n);
  val_shape(&out[1], v->dtype, 1, &v->n);
  val_shape(&out[2], DT_BOOL, 1, &k->n);
  int64_t selected = 0;
  for (int64_t i = 0; i < k->n; i++) selected += m ? m->v[i].i != 0 : 1;
  /* an undefined mask lane, or key of a selected lane, could send any
 * lane anywhere; an unselected lane's key decides nothing */
  bool def = !m || val_all_defined(m);
  for (int64_t i = 0; i < k->n; i++) def = def && (k->def[i] || (m && m->v[i].i == 0));
  for (int64_t i = 0; i < k->n; i++) {
    int64_t at = kv_rank(k, m, descending, i, selected);
    out[0].v[at] = k->v[i], out[0].def[at] = def && k->def[i];
    out[1].v[at] = v->v[i], out[1].def[at] = def && v->def[i];
    out[2].v[i].i = i < selected, out[2].def[i] = def;
  }
}

/* Two lanes hold the same 32-bit word (a float by its bits: -0.0 is not
 * 0.0, a NaN equals a NaN of the same bits). */
static bool same_word(Dtype t, Cell a, Cell b) {
  if (!dtype_is_float(t)) return (uint32_t)a.i == (uint32_t)b.i;
  union { float f; uint32_t u; } x = {.f = (float)a.f}, y = {.f = (float)b.f};
  return x.u == y.u;
}

void ref_scan_count(const Value *x, const Value *m, Value *out) {
  val_shape(&out[0], DT_INT32, 1, &x->n);
  val_shape(&out[1], DT_BOOL, 1, &x->n);
  bool def = true;
  for (int64_t j = 0; j < x->n; j++) {
    bool on = m ? m->v[j].i != 0 : true;
    def = def && (!m || m->def[j]) && (!on || x->def[j]);
  }
  for (int64_t i = 0; i < x->n; i++) {
    bool on = m ? m->v[i].i != 0 : true;
    int64_t before = 0, after = 0;
    for (int64_t j = 0; on && j < x->n; j++)
      if ((m ? m->v[j].i != 0 : true) && same_word(x->dtype, x->v[j], x->v[i])) *(j <= i ? &before : &after) += 1;
    out[0].v[i].i = before, out[0].def[i] = def && on;
    out[1].v[i].i = on && after == 0, out[1].def[i] = def;
  }
}

void ref_sort_operands(const Value *x, int n, Value *out) {
  for (int k = 0; k < n; k++) val_shape(&out[k], x[k].dtype, 1, &x[0].n);
  bool def = val_all_defined(&x[0]);
  for (int64_t i = 0; i < x[0].n; i++) {
    int64_t rank = 0; /* the lanes before i in key order, and the equal ones left of it */
    for (int64_t j = 0; j < x[0].n; j++)
      if (key_before(x[0].dtype, x[0].v[j], x[0].v[i]) || (j < i && !key_before(x[0].dtype, x[0].v[i], x[0].v[j]))) rank++;
    for (int k = 0; k < n; k++) out[k].v[rank] = x[k].v[i], out[k].def[rank] = def && x[k].def[i];
  }
}

void ref_pack(const Value *a, const Value *b, bool compressed, Dtype t, Value *out) {
  int64_t shape[2] = {compressed ? a->n : 2 * a->n, 2};
  val_shape(out, t, compressed ? 2 : 1, shape);
  for (int64_t i = 0; i < a->n; i++)
    for (int j = 0; j < 2; j++) {
      const Value *src = j ? b : a;
      int64_t at = compressed ? i * shape[1] + j : 2 * i + j; /* row i, column j; or position 2i + j */
      out->v[at] = alu_convert(src->dtype, t, src->v[i]);
      out->def[at] = src->def[i];
    }
}

void ref_unpack(const Value *ab, Dtype t, Value *out) {
  int64_t n = ab->n / 2;
  for (int j = 0; j < 2; j++) {
    val_shape(&out[j], t, 1, &n);
    for (int64_t i = 0; i < n; i++) out[j].v[i] = alu_convert(ab->dtype, t, ab->v[i * 2 + j]), out[j].def[i] = ab->def[i * 2 + j];
  }
}

void ref_all_reduce(const Value *x, bool ffs, int64_t reduce, Value *out) {
  int64_t n = x->n / reduce, r = ffs ? x->n : 0;
  bool def = val_all_defined(x);
  for (int64_t i = x->n - 1; i >= 0; i--) /* from the top: the last true lane seen is the first */
    if (x->v[i].i != 0) r = ffs ? i : r + 1;
  val_shape(out, DT_INT32, 1, &n);
  for (int64_t i = 0; i < n; i++) out->v[i].i = r, out->def[i] = def;
}
