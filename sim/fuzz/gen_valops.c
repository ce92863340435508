/* sim/fuzz/gen_valops.c -- the generator's unit "valops": reductions,
 * math, flips, gathers from a vector, reshapes, bitcasts, slices and concatenation
 * of values (lowering/check_valops.h).
 *
 * The unit declares a random int32 vector ref (a), an int32 and a float32
 * output ref (o, f); each step loads a and stores one value operation of
 * it, which the oracle compares between the engine and the reference, and,
 * with expectations on, checks one operation of a vector the generator
 * knows (iota * m + c) against the value it computes itself.  Every index
 * a gather uses is in range, so the unit is fault-free. */
#include <stdio.h>
#include <string.h>

#include "fuzz_priv.h"

static void begin(G *g, Unit *u, int s) {
  g->r = rng_at(g->pl->seed, (uint64_t)g->pl->index, 100 + (uint64_t)g->u, 1 + (uint64_t)s);
  g->out = &u->step[s];
  g->nnames = 0;
}

/* One value operation of the loaded vector x (int32, L lanes) into o or f. */
static void random_op(G *g, const char *x, const char *o, const char *f) {
  int L = g->L, k = (int)rr(R(g), 0, 13);
  const char *dst = o;
  char v[400];
  static const char *const red[] = {"jnp.sum", "jnp.max", "jnp.min"};
  static const char *const logic[] = {"jnp.all", "jnp.any"};
  static const char *const cmp[] = {">", "<", "!=", ">="};
  switch (k) {
  case 0: snprintf(v, sizeof v, "full([%d], %s(%s))", L, red[rr(R(g), 0, 2)], x); break;
  case 1:
    snprintf(v, sizeof v, "full([%d], astype(%s(%s %s %lld), int32))", L, logic[rr(R(g), 0, 1)], x, cmp[rr(R(g), 0, 3)],
             (long long)rr(R(g), -1000, 1000));
    break;
  case 2: snprintf(v, sizeof v, "jnp.flip(%s)", x); break;
  case 3:
    snprintf(v, sizeof v, "jnp.take_along_axis(%s, (iota(%d) * %lld + %lld) %% %d - %d)", x, L, (long long)rr(R(g), 0, 7),
             (long long)rr(R(g), 0, L - 1), L, rp(R(g), 50) ? L : 0);
    break;
  case 4: snprintf(v, sizeof v, "jnp.take_along_axis(%s, %s %% %d)", x, x, L); break;
  case 5: snprintf(v, sizeof v, "jnp.reshape(jnp.reshape(%s, [2, %d]) + %lld, [%d])", x, L / 2, (long long)rr(R(g), -9, 9), L); break;
  case 6: snprintf(v, sizeof v, "plsc.bitcast(plsc.bitcast(%s, int16) + %lld, int32)", x, (long long)rr(R(g), -9, 9)); break;
  case 7: snprintf(v, sizeof v, "plsc.bitcast(astype(%s, float32) * 0.25, int32)", x); break;
  case 8: snprintf(v, sizeof v, "plsc.bitcast(plsc.bitcast(%s, uint8) + %lld, int32)", x, (long long)rr(R(g), 0, 255)); break;
  case 9: snprintf(v, sizeof v, "jnp.reshape(jnp.concatenate([%s, jnp.flip(%s)]), [2, %d])[%d]", x, x, L, (int)rr(R(g), 0, 1)); break;
  case 10: snprintf(v, sizeof v, "jnp.abs(%s)", x); break;
  case 12: {
    int c = (int)rr(R(g), 1, L - 1);
    snprintf(v, sizeof v, "jnp.concatenate([lax.slice_in_dim(%s, %d, %d), lax.slice_in_dim(%s, 0, %d)])", x, c, L, x, c);
    break;
  }
  case 11: dst = f, snprintf(v, sizeof v, "jnp.exp(astype(%s, float32) * 0.001)", x); break;
  default: dst = f, snprintf(v, sizeof v, "full([%d], %s(astype(%s, float32) * 0.5))", L, red[rr(R(g), 0, 2)], x); break;
  }
  bput(g->out, "- swap: {ref: \"%s[...]\", value: \"%s\"}\n", dst, v);
}

/* A reduction or a flip of iota * m + c, with the value the generator knows. */
static void known_op(G *g) {
  int L = g->L;
  int64_t m = rr(R(g), -5, 5), c = rr(R(g), -50, 50), sum = 0, mx = INT64_MIN, mn = INT64_MAX;
  for (int i = 0; i < L; i++) {
    int64_t e = m * i + c;
    sum += e, mx = e > mx ? e : mx, mn = e < mn ? e : mn;
  }
  char k[64];
  snprintf(k, sizeof k, "iota(%d) * %lld + %lld", L, (long long)m, (long long)c);
  int w = (int)rr(R(g), 0, 4);
  if (w == 0) bput(g->out, "- expect: {value: \"jnp.sum(%s)\", equals: %lld}\n", k, (long long)sum);
  else if (w == 1) bput(g->out, "- expect: {value: \"jnp.max(%s)\", equals: %lld}\n", k, (long long)mx);
  else if (w == 2) bput(g->out, "- expect: {value: \"jnp.min(%s)\", equals: %lld}\n", k, (long long)mn);
  else if (w == 3) bput(g->out, "- expect: {value: \"jnp.any(%s > %lld)\", equals: %s}\n", k, (long long)c, mx > c ? "true" : "false");
  else {
    bput(g->out, "- expect: {value: \"jnp.flip(%s)\", equals: [", k);
    for (int i = 0; i < L; i++) bput(g->out, "%s%lld", i ? ", " : "", (long long)(m * (L - 1 - i) + c));
    bput(g->out, "]}\n");
  }
}

void unit_valops(G *g, Unit *u) {
  char a[NAME_LEN], o[NAME_LEN], f[NAME_LEN];
  snprintf(a, NAME_LEN, "R%da", g->u);
  snprintf(o, NAME_LEN, "R%do", g->u);
  snprintf(f, NAME_LEN, "R%df", g->u);
  bput(g->refs, "  %s: {space: vmem, shape: [%d], dtype: int32, init: {random: %lld, low: -1000, high: 1000}}\n", a, g->L,
       (long long)rr(R(g), 1, 999));
  bput(g->refs, "  %s: {space: vmem, shape: [%d], dtype: int32, init: zeros}\n", o, g->L);
  bput(g->refs, "  %s: {space: vmem, shape: [%d], dtype: float32, init: zeros}\n", f, g->L);
  u->nsteps = (int)rr(R(g), 1, 4);
  for (int s = 0; s < u->nsteps; s++) {
    begin(g, u, s);
    char x[NAME_LEN];
    snprintf(x, NAME_LEN, "v%d_%d", g->u, g->nm++);
    bput(g->out, "- get: {ref: \"%s[...]\", out: %s}\n", a, x);
    random_op(g, x, o, f);
    if (has(g, F_EXPECT)) known_op(g);
  }
}
