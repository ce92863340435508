/* sim/fuzz/gen_scanops.c -- the generator's scans: plsc.cumsum, plsc.cummax,
 * plsc.cummin (with a generated mask or none) and jnp.cumsum / lax.cumsum
 * over one vector of the chip's lane count, of a dtype tpu.scan takes;
 * jnp.sort (ascending or descending) and the mask all-reduces. */
#include "fuzz_priv.h"

bool gen_scanops_val(G *g, Buf *o, const Ty *t, int depth, void (*sub)(G *, Buf *, const Ty *, int)) {
  bool lanes = !g->scalar && t->rank == 1 && t->sh[0] == g->L;
  if (!lanes || (t->d != DT_INT32 && t->d != DT_FLOAT32 && t->d != DT_UINT32) || depth < 1) return false;
  static const char *const fns[] = {"plsc.cumsum", "plsc.cummax", "plsc.cummin", "jnp.cumsum", "lax.cumsum"};
  int f = (int)rr(R(g), 0, 7);
  if (f == 5) { /* jnp.sort, ascending or descending */
    bput(o, "jnp.sort(");
    sub(g, o, t, depth - 1);
    bput(o, rp(R(g), 50) ? ", descending=True)" : ")");
    return true;
  }
  if (f >= 6 && t->d == DT_INT32) { /* an all-reduce of a generated mask */
    Ty m = *t;
    m.d = DT_BOOL;
    bput(o, "%s(", f == 6 ? "plsc.all_reduce_population_count" : "plsc.all_reduce_ffs");
    sub(g, o, &m, depth - 1);
    bput(o, ")");
    return true;
  }
  if (f >= 5) f = 0;
  bput(o, "%s(", fns[f]);
  sub(g, o, t, depth - 1);
  if (f == 4) { /* lax.cumsum takes no negative axis (CR1); the draw keeps the random stream */
    (void)rp(R(g), 50);
    bput(o, ", axis=0");
  }
  if (f < 3 && rp(R(g), 70)) {
    Ty m = *t;
    m.d = DT_BOOL;
    bput(o, ", mask=");
    sub(g, o, &m, depth - 1);
  }
  bput(o, ")");
  return true;
}

/* ---- unit sortkv: plsc.sort_key_val, plsc.scan_count, plsc.pack / unpack --
 * A random int32 key ref with few distinct values (equal keys test the
 * sort's stability and give scan_count duplicates) and a random int32
 * payload ref; each step sorts the keys as int32, uint32 or float32, with
 * or without a mask, ascending or descending, and stores the keys, the
 * values and the output mask (or sorts them with lax.sort and a second
 * value operand), or counts the keys' duplicates and stores
 * the counts and the last occurrences, or packs keys and payload and
 * unpacks them again; the oracle compares them between the engine and
 * the reference. */
static void sortkv_begin(G *g, Unit *u, int s) {
  g->r = rng_at(g->pl->seed, (uint64_t)g->pl->index, 100 + (uint64_t)g->u, 1 + (uint64_t)s);
  g->out = &u->step[s];
  g->nnames = 0;
}

static void sortkv_step(G *g, const char *a, const char *p, const char *const out[3]) {
  static const char *const as[] = {"%s", "astype(%s, uint32)", "astype(%s, float32) * 0.5"};
  int k = (int)rr(R(g), 0, 2), n = g->nm++;
  bool masked = rp(R(g), 60), desc = rp(R(g), 50);
  char keys[80], mask[80] = "";
  bput(g->out, "- get: {ref: \"%s[...]\", out: k%d_%d}\n- get: {ref: \"%s[...]\", out: p%d_%d}\n", a, g->u, n, p, g->u, n);
  char kn[NAME_LEN];
  snprintf(kn, sizeof kn, "k%d_%d", g->u, n);
  snprintf(keys, sizeof keys, as[k], kn);
  if (masked) snprintf(mask, sizeof mask, ", mask=p%d_%d %% %lld != 0", g->u, n, (long long)rr(R(g), 2, 4));
  bput(g->out, "- let: {name: \"sk%d_%d, sv%d_%d%s", g->u, n, g->u, n, masked ? "" : "\"");
  if (masked) bput(g->out, ", sm%d_%d\"", g->u, n);
  bput(g->out, ", value: \"plsc.sort_key_val(%s, p%d_%d%s%s)\"}\n", keys, g->u, n, mask, desc ? ", descending=True" : "");
  bput(g->out, "- swap: {ref: \"%s[...]\", value: \"astype(sk%d_%d, int32)\"}\n", out[0], g->u, n);
  bput(g->out, "- swap: {ref: \"%s[...]\", value: sv%d_%d}\n", out[1], g->u, n);
  if (masked) bput(g->out, "- swap: {ref: \"%s[...]\", value: \"astype(sm%d_%d, int32)\"}\n", out[2], g->u, n);
}

/* plsc.scan_count of the keys (int32, uint32 or float32), masked or not;
 * the counts of unselected lanes are undefined, so they are stored under
 * where(mask, counts, 0) half of the time and as they are otherwise. */
static void scan_count_step(G *g, const char *a, const char *p, const char *const out[3]) {
  static const char *const as[] = {"%s", "astype(%s, uint32)", "astype(%s, float32) * 0.5"};
  int k = (int)rr(R(g), 0, 2), n = g->nm++;
  bool masked = rp(R(g), 60), guard = rp(R(g), 50);
  char x[NAME_LEN], keys[80], mask[80] = "";
  bput(g->out, "- get: {ref: \"%s[...]\", out: k%d_%d}\n- get: {ref: \"%s[...]\", out: p%d_%d}\n", a, g->u, n, p, g->u, n);
  snprintf(x, sizeof x, "k%d_%d", g->u, n);
  snprintf(keys, sizeof keys, as[k], x);
  if (masked) snprintf(mask, sizeof mask, "p%d_%d %% %lld != 0", g->u, n, (long long)rr(R(g), 2, 4));
  bput(g->out, "- let: {name: \"sc%d_%d, sl%d_%d\", value: \"plsc.scan_count(%s%s%s)\"}\n", g->u, n, g->u, n, keys,
       masked ? ", mask=" : "", mask);
  if (masked && guard) bput(g->out, "- swap: {ref: \"%s[...]\", value: \"where(%s, sc%d_%d, 0)\"}\n", out[0], mask, g->u, n);
  else bput(g->out, "- swap: {ref: \"%s[...]\", value: sc%d_%d}\n", out[0], g->u, n);
  bput(g->out, "- swap: {ref: \"%s[...]\", value: \"astype(sl%d_%d, int32)\"}\n", out[2], g->u, n);
}

/* plsc.pack of the keys and the payload (int32, or as float32 scaled to
 * need rounding), in either format, then plsc.unpack of the result; both
 * halves are stored. */
static void pack_step(G *g, const char *a, const char *p, const char *const out[3]) {
  static const char *const fmt[] = {"plsc.PackFormat.INTERLEAVED", "plsc.PackFormat.COMPRESSED"};
  int n = g->nm++;
  const char *f = fmt[rr(R(g), 0, 1)];
  bool fl = rp(R(g), 50);
  bput(g->out, "- get: {ref: \"%s[...]\", out: k%d_%d}\n- get: {ref: \"%s[...]\", out: p%d_%d}\n", a, g->u, n, p, g->u, n);
  if (fl)
    bput(g->out, "- let: {name: pk%d_%d, value: \"plsc.pack(astype(k%d_%d, float32) * 0.37, astype(p%d_%d, float32) * 1.01, format=%s)\"}\n",
         g->u, n, g->u, n, g->u, n, f);
  else bput(g->out, "- let: {name: pk%d_%d, value: \"plsc.pack(k%d_%d, p%d_%d * 97, format=%s)\"}\n", g->u, n, g->u, n, g->u, n, f);
  bput(g->out, "- let: {name: \"ua%d_%d, ub%d_%d\", value: \"plsc.unpack(pk%d_%d, format=%s)\"}\n", g->u, n, g->u, n, g->u, n, f);
  for (int k = 0; k < 2; k++)
    bput(g->out, "- swap: {ref: \"%s[...]\", value: \"%s(u%c%d_%d%s)\"}\n", out[k], fl ? "plsc.bitcast" : "", k ? 'b' : 'a', g->u, n,
         fl ? ", int32" : "");
}

/* lax.sort of the keys (int32 or float32) with the payload and a second
 * value operand: one tpu.sort per value operand, keys as unsigned words. */
static void lax_sort_step(G *g, const char *a, const char *p, const char *const out[3]) {
  int n = g->nm++;
  bool fl = rp(R(g), 50);
  bput(g->out, "- get: {ref: \"%s[...]\", out: k%d_%d}\n- get: {ref: \"%s[...]\", out: p%d_%d}\n", a, g->u, n, p, g->u, n);
  bput(g->out, "- let: {name: \"lk%d_%d, lv%d_%d, lw%d_%d\", value: \"lax.sort([%sk%d_%d%s, p%d_%d, p%d_%d * 3], dimension=0)\"}\n", g->u, n,
       g->u, n, g->u, n, fl ? "astype(" : "", g->u, n, fl ? ", float32)" : "", g->u, n, g->u, n);
  bput(g->out, "- swap: {ref: \"%s[...]\", value: \"astype(lk%d_%d, int32)\"}\n", out[0], g->u, n);
  bput(g->out, "- swap: {ref: \"%s[...]\", value: lv%d_%d}\n", out[1], g->u, n);
  bput(g->out, "- swap: {ref: \"%s[...]\", value: lw%d_%d}\n", out[2], g->u, n);
}

void unit_sortkv(G *g, Unit *u) {
  char a[NAME_LEN], p[NAME_LEN], o[3][NAME_LEN];
  snprintf(a, NAME_LEN, "R%da", g->u);
  snprintf(p, NAME_LEN, "R%dp", g->u);
  bput(g->refs, "  %s: {space: vmem, shape: [%d], dtype: int32, init: {random: %lld, low: -4, high: 4}}\n", a, g->L,
       (long long)rr(R(g), 1, 999));
  bput(g->refs, "  %s: {space: vmem, shape: [%d], dtype: int32, init: {random: %lld, low: -1000, high: 1000}}\n", p, g->L,
       (long long)rr(R(g), 1, 999));
  const char *out[3];
  for (int i = 0; i < 3; i++) {
    snprintf(o[i], NAME_LEN, "R%do%d", g->u, i);
    bput(g->refs, "  %s: {space: vmem, shape: [%d], dtype: int32, init: zeros}\n", o[i], g->L);
    out[i] = o[i];
  }
  u->nsteps = (int)rr(R(g), 1, 3);
  for (int s = 0; s < u->nsteps; s++) {
    sortkv_begin(g, u, s);
    int k = (int)rr(R(g), 0, 9);
    if (k < 4) sortkv_step(g, a, p, out);
    else if (k == 4) lax_sort_step(g, a, p, out);
    else if (k < 8) scan_count_step(g, a, p, out);
    else pack_step(g, a, p, out);
  }
}
