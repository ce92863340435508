/* sim/fuzz/shrink.c -- sc-sim fuzz: the shrinker (docs/fuzz.md).
 *
 * A failure is shrunk by turning the Knobs (drop units and steps, a smaller
 * mesh, simpler expressions) while its signature (verdict, outcome kind,
 * id) stays the same. */
#include <string.h>

#include "fuzz_priv.h"

static bool still_fails(Fuzz *f, const Plan *pl, const Knobs *cand, const Sig *want) {
  Outcome o;
  Meta m;
  if (f->attempts >= f->budget) return false;
  f->attempts++;
  Verdict v = try_program(f, pl, cand, MUT_NONE, &o, &m);
  Sig s = sig_of(v, &o);
  return sig_eq(&s, want);
}

/* Tries one change of the knobs; keeps it when the failure stays. */
static bool shrink_try(Fuzz *f, const Plan *pl, Knobs *k, const Knobs *cand, const Sig *want) {
  if (!memcmp(k, cand, sizeof *k) || !still_fails(f, pl, cand, want)) return false;
  *k = *cand;
  return true;
}

static bool shrink_drops(Fuzz *f, const Plan *pl, Knobs *k, const Sig *want) {
  Meta m;
  Buf t = {0};
  gen_program(pl, k, &t, &m);
  bfree(&t);
  bool any = false;
  for (int u = 0; u < m.nunits; u++) {
    Knobs c = *k;
    c.drop_unit |= 1u << u;
    any |= shrink_try(f, pl, k, &c, want);
  }
  for (int u = 0; u < m.nunits; u++)
    for (int s = 0; s < m.nsteps[u] && !(k->drop_unit >> u & 1); s++) {
      Knobs c = *k;
      c.drop_step[u] |= 1u << s;
      if ((c.drop_step[u] & ((1u << m.nsteps[u]) - 1)) == (1u << m.nsteps[u]) - 1) continue;
      any |= shrink_try(f, pl, k, &c, want);
    }
  return any;
}

static bool shrink_simplify(Fuzz *f, const Plan *pl, Knobs *k, const Sig *want) {
  bool any = false;
  Knobs c;
  int cores = k->max_cores ? k->max_cores : pl->cores, subs = k->max_subs ? k->max_subs : pl->subs;
  if (cores > 1) c = *k, c.max_cores = 1, any |= shrink_try(f, pl, k, &c, want);
  if (subs > 1) c = *k, c.max_subs = 1, any |= shrink_try(f, pl, k, &c, want);
  if (subs > 2) c = *k, c.max_subs = subs / 2, any |= shrink_try(f, pl, k, &c, want);
  c = *k, c.no_wrap = true, any |= shrink_try(f, pl, k, &c, want);
  c = *k, c.simple = true, any |= shrink_try(f, pl, k, &c, want);
  for (int l = k->level + 1; l <= 2; l++) c = *k, c.level = l, any |= shrink_try(f, pl, k, &c, want);
  c = *k, c.layout = true, any |= shrink_try(f, pl, k, &c, want);
  if (want->k != OC_EXPECT) c = *k, c.no_expect = true, any |= shrink_try(f, pl, k, &c, want);
  if (want->v == VD_UNEXPECTED) c = *k, c.no_inject = true, any |= shrink_try(f, pl, k, &c, want);
  return any;
}

/* Shrinks *k while the failure keeps its signature (C-Reduce's fixpoint:
 * passes until none makes progress, or the budget is spent). */
void shrink(Fuzz *f, const Plan *pl, Knobs *k, const Sig *want) {
  f->attempts = 0;
  f->budget = want->v == VD_HANG ? 6 : 400;
  bool progress = true;
  while (progress && f->attempts < f->budget) {
    progress = shrink_drops(f, pl, k, want);
    progress |= shrink_simplify(f, pl, k, want);
  }
}
