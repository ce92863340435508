/* sim/run/engine_sched.c -- the runnable subcores (neither done nor
 * blocked) kept sorted by (cycle, index) in a ring: the earliest subcore,
 * the lowest index on a tie, is the head and the earliest cycle of the
 * others is the next one, so the scheduler finds both without a scan of
 * the mesh.  Only the head runs, so only its key changes while it is in
 * the ring; it then goes back in from the tail, where a subcore that just
 * ran almost always belongs (subcores in step: each ran the same
 * instruction), so a turn costs a comparison or two rather than a scan.
 * Subcores released from a block are queued by unblock_all (E->woken) and
 * join the same way after the head has settled. */
#include "engine_priv.h"

#include <stdlib.h>

static int slot(const Eng *E, int k) { return (E->head + k) & E->ring_mask; }
static Sc *at(const Eng *E, int k) { return eng_ring_at(E, k); }

/* Subcore sub joins the ring at its place, searched from the tail. */
static void insert(Eng *E, int sub) {
  Sc *s = &E->sc[sub];
  int k = E->nring++;
  while (k > 0 && eng_ring_before(s, at(E, k - 1))) {
    E->ring[slot(E, k)] = at(E, k - 1);
    k--;
  }
  E->ring[slot(E, k)] = s;
}

bool eng_ring_init(Eng *E) {
  int cap = 1;
  while (cap < E->nsub) cap *= 2; /* a power of two: positions by a mask */
  E->ring_mask = cap - 1;
  E->ring = malloc(sizeof *E->ring * (size_t)cap);
  E->woken = malloc(sizeof *E->woken * (size_t)(E->nsub ? E->nsub : 1));
  E->nring = E->head = E->nwoken = 0;
  return E->ring && E->woken;
}

/* The ring of the subcores as they stand when the schedule starts. */
void eng_ring_fill(Eng *E) {
  E->nring = E->head = E->nwoken = 0;
  for (int i = 0; i < E->nsub; i++)
    if (!E->sc[i].done && !E->sc[i].blocked) insert(E, i);
}

/* eng_ring_settle's general case (engine_priv.h). */
void eng_ring_settle_all(Eng *E, bool ran) {
  if (ran && E->nring) {
    int sub = at(E, 0)->idx;
    E->head = slot(E, 1), E->nring--;
    if (!E->sc[sub].done && !E->sc[sub].blocked) insert(E, sub);
  }
  for (int i = 0; i < E->nwoken; i++) insert(E, E->woken[i]);
  E->nwoken = 0;
}

void eng_ring_free(Eng *E) {
  free(E->ring);
  free(E->woken);
}
