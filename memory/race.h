/* memory/race.h -- happens-before race detection (SPEC §7.10).
 *
 * Two accesses to overlapping bytes, at least one a write, race unless one
 * happens before the other through program order, a DMA's wait, a barrier,
 * or a semaphore signal and the wait that consumes it.  Each subcore keeps
 * a vector clock; each DMA is a thread of its own whose accesses are ordered
 * after its start (it copies the issuer's clock then) and before whatever
 * the issuer does after the wait that retires it (the issuer's clock at
 * that wait).  Shadow state per byte: the last write and the reads since,
 * kept as an antichain (a read ordered before a newer read is dropped), so
 * the detector is exact for any mesh, with no sampling.  Runs of bytes in
 * one state are checked and updated in one step (race.c).
 * A NULL detector (races not checked) accepts every call and does nothing.
 * Atomic read-modify-writes (fetch_and_add, add DMAs) do not race with
 * each other.
 * A write-write race in which the second write leaves every overlapping
 * byte as the first left it (both undefined counts as the same) is benign
 * (SPEC §10.2): race_bytes accepts it and queues one report per pair of
 * operations for race_benign_next.  So that the detector sees the bytes, a
 * write's bytes are given to race_pre before they are stored (it keeps
 * what they overwrite, when needed) and to race_bytes after. */
#ifndef SC_RACE_H
#define SC_RACE_H

#include <stdbool.h>
#include <stdint.h>

#include "memory.h"

typedef struct {
  int op;               /* program operation id */
  int line, col;
  int core, subcore;    /* the subcore (the issuer, for a DMA) */
  uint64_t cycle;
  bool write, atomic;
  int dma;              /* the DMA thread, or -1 for the subcore itself */
  int64_t span_lo, span_hi; /* the bytes the whole access covers, when contiguous (else lo == hi) */
} RaceAccess;

typedef struct {
  RaceAccess first, second;
  const Region *region;
  int64_t lo, hi;       /* byte range of the overlap */
} RaceReport;

typedef struct RaceDetector RaceDetector;

/* The detector's first member (race.c), public so that the tests made for
 * every instruction (race_done with nothing open, race_over, race_lone)
 * are inline rather than calls. */
typedef struct {
  int nsub;
  int live;  /* DMA threads started and not yet retired */
  int nopen; /* accesses of the instruction running (race_done closes them) */
  bool over; /* a page was refused: past the shadow's bound */
} RaceHot;
static inline const RaceHot *race_hot(const RaceDetector *r) { return (const RaceHot *)(const void *)r; }

/* max_shadow: the bound on the shadow's bytes (0: none); past it the
 * detector stops checking and race_over says so, for the caller to stop
 * the run with a limit fault. */
RaceDetector *race_new(int nsub, uint64_t max_shadow);
void race_free(RaceDetector *r);
/* Synchronisation. */
int race_dma_start(RaceDetector *r, int sub);          /* returns the DMA thread */
void race_dma_retire(RaceDetector *r, int dma, int sub);
void race_release(RaceDetector *r, int sub, int slot); /* semaphore / barrier object `slot` */
void race_acquire(RaceDetector *r, int sub, int slot);
int race_slot(RaceDetector *r);                         /* a new synchronisation object */
/* Barrier over subcores [first, first + n): everyone leaves with the join. */
void race_barrier_arrive(RaceDetector *r, int sub, int gen);
void race_barrier_leave(RaceDetector *r, int sub, int gen, int first, int n);
/* Opens one access (an instruction, or one side of a DMA) of subcore `sub`
 * (or of DMA thread a->dma); its bytes are then given with race_bytes,
 * which returns false with *rep filled when they race. */
uint32_t race_begin(RaceDetector *r, const RaceAccess *a, int sub);
/* Whether race_begin would take no record for a subcore's own access
 * (one subcore, none of its DMAs in flight), so that the caller need not
 * describe it. */
static inline bool race_lone(const RaceDetector *r) { return r && race_hot(r)->nsub == 1 && !race_hot(r)->live; }
/* Whether access tag is a solo DMA's (race.c): it races with nothing, so
 * race_span_clean would say yes without looking. */
bool race_solo(const RaceDetector *r, uint32_t tag);
bool race_bytes(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n, RaceReport *rep);
/* The fast paths' span: whether no byte of [off, off + n) conflicts with
 * access tag (nothing changes; on false the caller gives the bytes to
 * race_bytes in its own order, which reports as always); then records the
 * access over the span, for a write once its bytes are stored.  Between the
 * two, no other access may be recorded.  race_span does both (reads). */
/* Before a write's bytes are stored (the element walks; race_span_clean
 * for the fast paths): where they may race with the last write, the
 * shadow keeps the bytes that write left, which the region is about to
 * lose, for race_bytes to tell a benign race. */
void race_pre(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n);
bool race_span_clean(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n);
void race_span_record(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n);
bool race_span(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n);
/* The end of an instruction: the accesses it opened are closed, and their
 * records are reused once no shadow entry names them (so a run's records
 * are bounded by the bytes it touched, not by its length). */
void race_close(RaceDetector *r); /* race_done's work, when something is open */
static inline void race_done(RaceDetector *r) {
  if (r && race_hot(r)->nopen) race_close(r);
}
static inline bool race_over(const RaceDetector *r) { return r && race_hot(r)->over; }
uint64_t race_shadow_bytes(const RaceDetector *r);
/* Takes the oldest queued benign race; false when none is left. */
bool race_benign_next(RaceDetector *r, RaceReport *rep);

#endif
