/* tests/test_models.c -- CUnit tables for the memory layer's two models:
 * the DMA timing model (memory/dma.h) and the race detector
 * (memory/race.h).  Every expected number is worked out by hand, in the
 * row's comment, from the formulas those headers and docs/timing.md state:
 *
 *   DMA: a transfer enqueued at t starts at max(t + setup, the end of the
 *   previous transfer on its engine), then moves at
 *   min(engine rate, HBM rate / n_hbm, VMEM_SHARED rate / n_shared(core)),
 *   the n counting the transfers using that port at the moment (past their
 *   setup); rates change whenever a transfer starts or ends.  Completion is
 *   reported at the first whole cycle at or after the last byte.  An
 *   enqueue onto an engine with `depth` transfers outstanding waits until
 *   one completes (the engine's rule, sim/run/engine.c x_dma).
 *
 *   Races: two accesses to a common byte, at least one a write and not both
 *   atomic, race unless one happens before the other: program order on a
 *   subcore, a barrier, a semaphore signal and the wait that takes it, a
 *   DMA's start (its accesses follow what the issuer did before) and its
 *   wait (what the issuer does after follows the DMA's accesses). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "../memory/dma.h"
#include "../memory/race.h"

/* ---- DMA timing ------------------------------------------------------------- */
typedef struct {
  int engine, core;
  bool hbm, shared;
  double bytes;
  uint64_t t; /* enqueue cycle (later if the engine's queue is full then) */
} Xq;

typedef struct {
  const char *name;
  int engines, cores;
  double engine_bpc, hbm_bpc, shared_bpc; /* bytes per cycle */
  uint64_t setup;                         /* cycles */
  int depth;                              /* queue depth per engine; 0: unbounded */
  Xq q[4];
  int n;
  uint64_t end[4]; /* the cycle each transfer is reported complete */
} DmaRow;

/* Engine 64 B/cycle and setup 100 unless a row says otherwise; a 4096-byte
 * transfer alone then takes 4096 / 64 = 64 cycles after its setup. */
static const DmaRow dma_rows[] = {
    /* start 0 + 100 = 100; 4096 / 64 = 64 cycles: 164 */
    {"one local transfer: setup, then bytes / engine rate", 1, 1, 64, 1000, 1000, 100, 0, {{0, 0, false, false, 4096, 0}}, 1, {164}},
    /* HBM share 1000 / 1 > 64: the engine rate holds: 164 */
    {"fast HBM: the engine rate caps", 1, 1, 64, 1000, 1000, 100, 0, {{0, 0, true, false, 4096, 0}}, 1, {164}},
    /* HBM 32 / 1 < 64: 4096 / 32 = 128 cycles: 100 + 128 = 228 */
    {"slow HBM: the HBM rate caps", 1, 1, 64, 32, 1000, 100, 0, {{0, 0, true, false, 4096, 0}}, 1, {228}},
    /* 100 / 64 = 1.5625 cycles: the last byte at 101.5625, reported at 102 */
    {"a fractional end rounds up", 1, 1, 64, 1000, 1000, 100, 0, {{0, 0, false, false, 100, 0}}, 1, {102}},
    /* setup 20: start 50 + 20 = 70; 4096 / 64 = 64: 134 */
    {"enqueue cycle and setup add", 1, 1, 64, 1000, 1000, 20, 0, {{0, 0, false, false, 4096, 50}}, 1, {134}},
    /* A: 100 + 64 = 164.  B: max(0 + 100, 164) = 164 (its setup overlapped A), + 64 = 228 */
    {"one engine is a FIFO: the second starts when the first ends", 1, 1, 64, 1000, 1000, 100, 0,
     {{0, 0, false, false, 4096, 0}, {0, 0, false, false, 4096, 0}}, 2, {164, 228}},
    /* A: 164.  B enqueued at 150: max(150 + 100, 164) = 250, + 64 = 314 */
    {"FIFO: a late enqueue waits for its own setup", 1, 1, 64, 1000, 1000, 100, 0,
     {{0, 0, false, false, 4096, 0}, {0, 0, false, false, 4096, 150}}, 2, {164, 314}},
    /* two engines, local: each 64 B/cycle in parallel: 164 and 164 */
    {"two engines without a shared port run in parallel", 2, 1, 64, 1000, 1000, 100, 0,
     {{0, 0, false, false, 4096, 0}, {1, 0, false, false, 4096, 0}}, 2, {164, 164}},
    /* both on HBM 64: each min(64, 64 / 2) = 32: 4096 / 32 = 128: 228 each */
    {"two engines share HBM bandwidth", 2, 1, 64, 64, 1000, 100, 0,
     {{0, 0, true, false, 4096, 0}, {1, 0, true, false, 4096, 0}}, 2, {228, 228}},
    /* from 100 both at 32: A (2048) ends after 64 cycles, at 164, B having
     * moved 2048; B's last 2048 at min(64, 64 / 1) = 64: 32 more: 196 */
    {"the HBM share grows when a sharer ends", 2, 1, 64, 64, 1000, 100, 0,
     {{0, 0, true, false, 2048, 0}, {1, 0, true, false, 4096, 0}}, 2, {164, 196}},
    /* HBM 32: A (HBM) 32 alone on the port: 128 cycles: 228; B local: 64: 164 */
    {"a local transfer takes no HBM share", 2, 1, 64, 32, 1000, 100, 0,
     {{0, 0, true, false, 4096, 0}, {1, 0, false, false, 4096, 0}}, 2, {228, 164}},
    /* A alone on HBM 64 from 100 to 200 (B in setup): 6400 of 8192 moved;
     * from 200 both at 32: A's last 1792 take 56: 256; B has moved 1792 by
     * then, its last 2304 alone at 64 take 36: 292 */
    {"a transfer in its setup takes no share", 2, 1, 64, 64, 1000, 100, 0,
     {{0, 0, true, false, 8192, 0}, {1, 0, true, false, 4096, 100}}, 2, {256, 292}},
    /* VMEM_SHARED 64 per SparseCore, both on core 0: 32 each: 228 */
    {"VMEM_SHARED is shared within a SparseCore", 2, 1, 64, 1000, 64, 100, 0,
     {{0, 0, false, true, 4096, 0}, {1, 0, false, true, 4096, 0}}, 2, {228, 228}},
    /* one on core 0, one on core 1: each port has one user: 64: 164 */
    {"each SparseCore has its own VMEM_SHARED port", 2, 2, 64, 1000, 64, 100, 0,
     {{0, 0, false, true, 4096, 0}, {1, 1, false, true, 4096, 0}}, 2, {164, 164}},
    /* HBM 48 for 2: 24 each; shared 32 for 2 on core 0: 16 each; the
     * smaller, 16, rules: 4096 / 16 = 256: 356 each */
    {"HBM and VMEM_SHARED: the tighter share rules", 2, 1, 64, 48, 32, 100, 0,
     {{0, 0, true, true, 4096, 0}, {1, 0, true, true, 4096, 0}}, 2, {356, 356}},
    /* 640 B = 10 cycles each.  A 110; B max(100, 110) + 10 = 120; C max(100, 120) + 10 = 130 */
    {"three queued on one engine, no depth limit", 1, 1, 64, 1000, 1000, 100, 0,
     {{0, 0, false, false, 640, 0}, {0, 0, false, false, 640, 0}, {0, 0, false, false, 640, 0}}, 3, {110, 120, 130}},
    /* depth 2: C waits until A completes at 110, enqueues then: start
     * max(110 + 100, B's end 120) = 210, + 10 = 220 */
    {"depth 2: the third enqueue waits for the first to complete", 1, 1, 64, 1000, 1000, 100, 2,
     {{0, 0, false, false, 640, 0}, {0, 0, false, false, 640, 0}, {0, 0, false, false, 640, 0}}, 3, {110, 120, 220}},
    /* depth 1: B waits for A (110): 210 + 10 = 220; C waits for B: 220 + 100 + 10 = 330 */
    {"depth 1: every enqueue waits for the previous transfer", 1, 1, 64, 1000, 1000, 100, 1,
     {{0, 0, false, false, 640, 0}, {0, 0, false, false, 640, 0}, {0, 0, false, false, 640, 0}}, 3, {110, 220, 330}},
    /* depth 1 on each of two engines: the engines' queues are separate: A and B 110 in parallel */
    {"the depth is per engine", 2, 1, 64, 1000, 1000, 100, 1,
     {{0, 0, false, false, 640, 0}, {1, 0, false, false, 640, 0}}, 2, {110, 110}},
};

/* Submits a row's transfers in order, each when its cycle has come and its
 * engine has room, and records the cycle each completion is reported. */
static void dma_run(const DmaRow *row, bool quiet, uint64_t *end) {
  DmaModel *m = dma_new(row->engines, row->cores, row->engine_bpc, row->hbm_bpc, row->shared_bpc, row->setup);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  uint64_t now = 0;
  int next = 0, done = 0;
  for (int guard = 0; done < row->n && guard < 1000; guard++) {
    while (next < row->n && row->q[next].t <= now &&
           !(row->depth && dma_outstanding(m, row->q[next].engine) >= row->depth)) {
      const Xq *x = &row->q[next];
      DmaReq r = {x->engine, x->core, x->hbm, x->shared, x->bytes, now, next, quiet};
      dma_submit(m, &r);
      next++;
    }
    uint64_t t = dma_next_event(m);
    if (next < row->n && row->q[next].t > now && row->q[next].t < t) t = row->q[next].t;
    if (t == DMA_NEVER) break;
    int tags[4];
    int k = dma_advance(m, t, tags, 4);
    for (int i = 0; i < k; i++) end[tags[i]] = t, done++;
    now = t;
  }
  dma_free(m);
}

static void test_dma_table(void) {
  for (size_t i = 0; i < sizeof dma_rows / sizeof dma_rows[0]; i++) {
    const DmaRow *row = &dma_rows[i];
    for (int quiet = 0; quiet < 2; quiet++) { /* quiet transfers land at the same cycles */
      uint64_t end[4] = {0};
      dma_run(row, quiet, end);
      for (int k = 0; k < row->n; k++) {
        if (end[k] != row->end[k])
          fprintf(stderr, "\n  dma: %s%s: transfer %d ends at %llu, want %llu", row->name, quiet ? " (quiet)" : "", k,
                  (unsigned long long)end[k], (unsigned long long)row->end[k]);
        CU_ASSERT_EQUAL(end[k], row->end[k]);
      }
    }
  }
}

/* The statistics of the FIFO row "three queued": 3 transfers of 640 bytes;
 * busy 30 cycles (10 each, back to back from 100); the queue held 3 at
 * most; occupancy: 3 queued over [0, 110), 2 over [110, 120), 1 over
 * [120, 130): 330 + 20 + 10 = 360 transfer-cycles. */
static void test_dma_stats(void) {
  DmaModel *m = dma_new(1, 1, 64, 1000, 1000, 100);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  for (int i = 0; i < 3; i++) dma_submit(m, &(DmaReq){0, 0, false, false, 640, 0, i, false});
  CU_ASSERT_EQUAL(dma_outstanding(m, 0), 3);
  int tags[4], n = 0;
  for (uint64_t t; (t = dma_next_event(m)) != DMA_NEVER;) n += dma_advance(m, t, tags, 4);
  const DmaEngineStats *s = dma_stats(m, 0);
  CU_ASSERT_EQUAL(n, 3);
  CU_ASSERT_EQUAL(dma_outstanding(m, 0), 0);
  CU_ASSERT_EQUAL(s->transfers, 3);
  CU_ASSERT_EQUAL(s->bytes, 1920);
  CU_ASSERT_EQUAL(s->max_queue, 3);
  CU_ASSERT_DOUBLE_EQUAL(s->busy_cycles, 30.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(s->occupancy_integral, 360.0, 1e-6);
  /* the same 360 split: setups 3 x 100; queued after their setups 0 + 10 +
   * 20 (B and C wait for A and B); moving 3 x 10 */
  CU_ASSERT_DOUBLE_EQUAL(s->setup_cycles, 300.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(s->queue_cycles, 30.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(s->transfer_cycles, 30.0, 1e-6);
  dma_free(m);
}

/* A transfer enqueued at 27 on an idle model (the engine does not advance
 * the model before an enqueue): 128 bytes land at 27 + 100 + 2 = 129, so
 * it was queued or active 102 cycles (tests/outputs/gather.yaml's DMA);
 * an integral over the model's steps counted 129, from cycle 0. */
static void test_dma_stats_late_enqueue(void) {
  DmaModel *m = dma_new(1, 1, 64, 1000, 1000, 100);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  dma_submit(m, &(DmaReq){0, 0, true, false, 128, 27, 0, false});
  int tags[1], n = 0;
  uint64_t t = 0;
  while (!n && (t = dma_next_event(m)) != DMA_NEVER) n = dma_advance(m, t, tags, 1); /* the setup's end at 127, then the landing */
  CU_ASSERT_EQUAL(t, 129);
  CU_ASSERT_EQUAL(n, 1);
  const DmaEngineStats *s = dma_stats(m, 0);
  CU_ASSERT_DOUBLE_EQUAL(s->occupancy_integral, 102.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(s->setup_cycles, 100.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(s->queue_cycles, 0.0, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(s->transfer_cycles, 2.0, 1e-6);
  dma_free(m);
}

/* A lone quiet transfer: dma_next_event answers its landing at once (no
 * event at the setup's end), and the landing leaves the very statistics
 * the two steps did (bit for bit: the same arithmetic). */
static void dma_lone(bool quiet, uint64_t *first, DmaEngineStats *st) {
  DmaModel *m = dma_new(1, 1, 64, 48, 1000, 100);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  dma_submit(m, &(DmaReq){0, 0, true, false, 200, 27, 0, quiet});
  *first = dma_next_event(m);
  int tags[1], n = 0;
  for (uint64_t t; !n && (t = dma_next_event(m)) != DMA_NEVER;) n = dma_advance(m, t, tags, 1);
  CU_ASSERT_EQUAL(n, 1);
  *st = *dma_stats(m, 0);
  dma_free(m);
}

static void test_dma_quiet(void) {
  uint64_t t0, t1;
  DmaEngineStats a, b;
  dma_lone(false, &t0, &a);
  dma_lone(true, &t1, &b);
  CU_ASSERT_EQUAL(t0, 127); /* the setup's end */
  CU_ASSERT_EQUAL(t1, 132); /* 127 + 200 / 48, rounded up */
  CU_ASSERT(memcmp(&a, &b, sizeof a) == 0);
}

/* ---- races ------------------------------------------------------------------- */
typedef enum {
  S_END,       /* the end of a row's steps */
  S_ACC,       /* subcore `sub` accesses bytes [off, off + n) of region `g` */
  S_DMA_START, /* subcore `sub` starts DMA number x (0, 1, ... in order) */
  S_DMA_ACC,   /* DMA x (issued by `sub`) accesses bytes */
  S_DMA_WAIT,  /* subcore `sub` waits for DMA x */
  S_SIGNAL,    /* subcore `sub` signals semaphore x */
  S_WAIT,      /* subcore `sub` takes semaphore x */
  S_ARRIVE,    /* subcore `sub` arrives at barrier generation x */
  S_LEAVE,     /* subcore `sub` leaves barrier generation x (all subcores of the row take part) */
} StepKind;

typedef struct {
  StepKind k;
  int sub, x;
  char rw; /* accesses: 'r' read, 'w' write, 'a' atomic read-modify-write, 's' a strided write (no span) */
  int g;   /* region 0 or 1 */
  int64_t off, n;
} Step;

typedef struct {
  const char *name;
  int nsub;
  Step s[10];
  int race_at;    /* the step whose bytes race, -1 for none */
  int first;      /* the earlier access it races with */
  int64_t lo, hi; /* the bytes of the overlap reported */
} RaceRow;

#define RD(sub, off, n) {S_ACC, sub, 0, 'r', 0, off, n}
#define WR(sub, off, n) {S_ACC, sub, 0, 'w', 0, off, n}
#define AT(sub, off, n) {S_ACC, sub, 0, 'a', 0, off, n}
#define WR_STRIDED(sub, off, n) {S_ACC, sub, 0, 's', 0, off, n}
#define WR_G(sub, g, off, n) {S_ACC, sub, 0, 'w', g, off, n}
#define DSTART(sub, x) {S_DMA_START, sub, x, 0, 0, 0, 0}
#define DRD(sub, x, off, n) {S_DMA_ACC, sub, x, 'r', 0, off, n}
#define DWR(sub, x, off, n) {S_DMA_ACC, sub, x, 'w', 0, off, n}
#define DWAIT(sub, x) {S_DMA_WAIT, sub, x, 0, 0, 0, 0}
#define SIG(sub, x) {S_SIGNAL, sub, x, 0, 0, 0, 0}
#define SWAIT(sub, x) {S_WAIT, sub, x, 0, 0, 0, 0}
#define ARR(sub, x) {S_ARRIVE, sub, x, 0, 0, 0, 0}
#define LEAVE(sub, x) {S_LEAVE, sub, x, 0, 0, 0, 0}
#define NONE -1, -1, 0, 0

/* Byte ranges are element ranges times the element size: int32 element e
 * is bytes [4e, 4e + 4), int16 [2e, 2e + 2), int8 [e, e + 1). */
static const RaceRow race_rows[] = {
    /* no order between subcores 0 and 1; both write bytes 0-3 */
    {"write-write on two subcores", 2, {WR(0, 0, 4), WR(1, 0, 4)}, 1, 0, 0, 4},
    /* a read and a write of the same int32, unordered */
    {"read-write on two subcores", 2, {RD(0, 0, 4), WR(1, 0, 4)}, 1, 0, 0, 4},
    {"write-read on two subcores", 2, {WR(0, 0, 4), RD(1, 0, 4)}, 1, 0, 0, 4},
    /* reads never conflict */
    {"read-read never races", 2, {RD(0, 0, 4), RD(1, 0, 4)}, NONE},
    /* one subcore: program order */
    {"program order on one subcore", 1, {WR(0, 0, 4), RD(0, 0, 4), WR(0, 0, 4)}, NONE},
    /* subcore 0's write is before its arrival; subcore 1's write after its
     * leave, which joins every arrival: ordered */
    {"a barrier orders a write before it and a write after it", 2,
     {WR(0, 0, 4), ARR(0, 0), ARR(1, 0), LEAVE(0, 0), LEAVE(1, 0), WR(1, 0, 4)}, NONE},
    /* both writes after the barrier: unordered with each other */
    {"two writes after one barrier race", 2, {ARR(0, 0), ARR(1, 0), LEAVE(0, 0), LEAVE(1, 0), WR(0, 0, 4), WR(1, 0, 4)}, 5, 4, 0, 4},
    /* the writer signals after writing; the other takes that signal first */
    {"semaphore signal then wait orders", 2, {WR(0, 0, 4), SIG(0, 0), SWAIT(1, 0), WR(1, 0, 4)}, NONE},
    /* the wait takes another semaphore: no order */
    {"a wait on another semaphore does not order", 2, {WR(0, 0, 4), SIG(0, 0), SWAIT(1, 1), WR(1, 0, 4)}, 3, 0, 0, 4},
    /* the write comes after the signal: the wait orders nothing after the signal */
    {"a write after the signal is not ordered", 2, {SIG(0, 0), WR(0, 0, 4), SWAIT(1, 0), WR(1, 0, 4)}, 3, 1, 0, 4},
    /* the issuer reads bytes its DMA writes before waiting for it */
    {"DMA write against the issuer's read before the wait", 1, {DSTART(0, 0), DWR(0, 0, 0, 8), RD(0, 0, 4)}, 2, 1, 0, 4},
    /* after the wait the DMA's writes are ordered before the issuer */
    {"DMA write, wait, then the issuer's read", 1, {DSTART(0, 0), DWR(0, 0, 0, 8), DWAIT(0, 0), RD(0, 0, 4)}, NONE},
    /* the DMA's start copies the issuer's clock: its earlier write is ordered before */
    {"the issuer's write before the start, then the DMA reads", 1, {WR(0, 0, 8), DSTART(0, 0), DRD(0, 0, 0, 8)}, NONE},
    /* the DMA reads its source; the issuer overwrites it before the wait */
    {"the issuer writes a DMA's source before the wait", 1, {DSTART(0, 0), DRD(0, 0, 0, 8), WR(0, 4, 4)}, 2, 1, 4, 8},
    /* DMA 0 retired before DMA 1 starts: 1 follows 0 */
    {"two DMAs on the same bytes, the first waited before the second", 1,
     {DSTART(0, 0), DWR(0, 0, 0, 8), DWAIT(0, 0), DSTART(0, 1), DWR(0, 1, 0, 8)}, NONE},
    /* both in flight: unordered */
    {"two DMAs on the same bytes in flight together", 1, {DSTART(0, 0), DWR(0, 0, 0, 8), DSTART(0, 1), DWR(0, 1, 0, 8)}, 3, 1, 0, 8},
    /* DMA of subcore 0, its wait, a signal; subcore 1 takes it, then reads */
    {"a DMA's writes reach another subcore through wait and signal", 2,
     {DSTART(0, 0), DWR(0, 0, 0, 8), DWAIT(0, 0), SIG(0, 0), SWAIT(1, 0), RD(1, 0, 8)}, NONE},
    /* without the signal, subcore 1's read is unordered with the DMA's write */
    {"a DMA's writes against another subcore without a signal", 2, {DSTART(0, 0), DWR(0, 0, 0, 8), DWAIT(0, 0), RD(1, 0, 8)}, 3, 1, 0, 8},
    /* int32 elements 0 and 1: bytes [0, 4) and [4, 8) */
    {"disjoint byte ranges", 2, {WR(0, 0, 4), WR(1, 8, 4)}, NONE},
    {"adjacent byte ranges", 2, {WR(0, 0, 4), WR(1, 4, 4)}, NONE},
    /* [0, 8) and [6, 10) share bytes 6 and 7 */
    {"partially overlapping ranges: the overlap is reported", 2, {WR(0, 0, 8), WR(1, 6, 4)}, 1, 0, 6, 8},
    /* no span for the second (a strided access): the report starts at the
     * first racing byte, 4, and widens while the bytes have the same last
     * writer (step 0, through byte 7): [4, 8) */
    {"a strided write's overlap is widened byte by byte", 2, {WR(0, 0, 8), WR_STRIDED(1, 4, 8)}, 1, 0, 4, 8},
    /* int8 elements 3 and 4: bytes 3 and 4, disjoint */
    {"adjacent int8 elements", 2, {WR(0, 3, 1), WR(1, 4, 1)}, NONE},
    /* int16 element 1 (bytes [2, 4)) against int8 element 3 (byte 3) */
    {"an int16 element against an int8 element inside it", 2, {WR(0, 2, 2), WR(1, 3, 1)}, 1, 0, 3, 4},
    /* int16 element 1 ([2, 4)) against int32 element 0 ([0, 4)) */
    {"an int16 element against the int32 around it", 2, {WR(0, 0, 4), RD(1, 2, 2)}, 1, 0, 2, 4},
    /* int16 elements 1 and 2: [2, 4) and [4, 6), adjacent */
    {"adjacent int16 elements", 2, {WR(0, 2, 2), WR(1, 4, 2)}, NONE},
    /* the same offsets in two instances (regions) are different bytes */
    {"the same offsets in two regions", 2, {WR_G(0, 0, 0, 4), WR_G(1, 1, 0, 4)}, NONE},
    /* fetch_and_add against fetch_and_add: atomic */
    {"atomic against atomic", 2, {AT(0, 0, 4), AT(1, 0, 4)}, NONE},
    /* an atomic against a plain write still races */
    {"atomic against a plain write", 2, {AT(0, 0, 4), WR(1, 0, 4)}, 1, 0, 0, 4},
    /* reads by 0 and 1; 2 writes after taking only 1's signal: 0's read is unordered */
    {"a write ordered after one of two reads", 3, {RD(0, 0, 4), RD(1, 0, 4), SIG(1, 0), SWAIT(2, 0), WR(2, 0, 4)}, 4, 0, 0, 4},
    /* the same with both reads signalled (two semaphores): ordered */
    {"a write ordered after both reads", 3,
     {RD(0, 0, 4), RD(1, 0, 4), SIG(0, 0), SIG(1, 1), SWAIT(2, 0), SWAIT(2, 1), WR(2, 0, 4)}, NONE},
};

/* The detector reads the bytes a write left (benign races, SPEC §10.2), so
 * the regions have storage, and each write step stores its own step number:
 * two writes of the table never store the same bytes. */
static uint8_t race_bytes0[1024], race_bytes1[1024], race_def0[128], race_def1[128];
static Region race_regions[2] = {{race_bytes0, race_def0, 1024, false, DT_INT8, "r0", -1, -1},
                                 {race_bytes1, race_def1, 1024, false, DT_INT8, "r1", -1, -1}};

/* What a write of `n` bytes at `off` of region g leaves: `v` or, when
 * v < 0, undefined bytes. */
static void race_store(int g, int64_t off, int64_t n, int v) {
  if (v >= 0) memset(race_regions[g].bytes + off, v, (size_t)n);
  mem_set_defined(&race_regions[g], off, n, v >= 0);
}

/* Runs a row's steps; returns the step whose bytes raced (-1 for none). */
static int race_run(const RaceRow *row, RaceReport *rep) {
  RaceDetector *r = race_new(row->nsub, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  int dma[4] = {-1, -1, -1, -1}, got = -1;
  race_slot(r), race_slot(r); /* semaphores 0 and 1 */
  for (int i = 0; i < 10 && row->s[i].k != S_END && got < 0; i++) {
    const Step *s = &row->s[i];
    switch (s->k) {
    case S_END: break;
    case S_ACC:
    case S_DMA_ACC: {
      int64_t hi = s->rw == 's' ? s->off : s->off + s->n; /* span_lo == span_hi: not contiguous */
      RaceAccess a = {i, 1, i + 1, 0, s->sub, 0, s->rw != 'r', s->rw == 'a', s->k == S_DMA_ACC ? dma[s->x] : -1, s->off, hi};
      uint32_t tag = race_begin(r, &a, s->sub);
      race_pre(r, tag, &race_regions[s->g], s->off, s->n); /* before the store, as the engine does */
      if (s->rw != 'r') race_store(s->g, s->off, s->n, i + 1);
      if (!race_bytes(r, tag, &race_regions[s->g], s->off, s->n, rep)) got = i;
      break;
    }
    case S_DMA_START: dma[s->x] = race_dma_start(r, s->sub); break;
    case S_DMA_WAIT: race_dma_retire(r, dma[s->x], s->sub); break;
    case S_SIGNAL: race_release(r, s->sub, s->x); break;
    case S_WAIT: race_acquire(r, s->sub, s->x); break;
    case S_ARRIVE: race_barrier_arrive(r, s->sub, s->x); break;
    case S_LEAVE: race_barrier_leave(r, s->sub, s->x, 0, row->nsub); break;
    }
  }
  race_free(r);
  return got;
}

static void test_race_table(void) {
  for (size_t i = 0; i < sizeof race_rows / sizeof race_rows[0]; i++) {
    const RaceRow *row = &race_rows[i];
    RaceReport rep;
    memset(&rep, 0, sizeof rep);
    int got = race_run(row, &rep);
    bool ok = got == row->race_at && (got < 0 || (rep.first.op == row->first && rep.lo == row->lo && rep.hi == row->hi));
    if (!ok)
      fprintf(stderr, "\n  race: %s: race at step %d (with step %d, bytes [%lld, %lld)), want %d (with %d, [%lld, %lld))", row->name,
              got, got < 0 ? -1 : rep.first.op, (long long)rep.lo, (long long)rep.hi, row->race_at, row->first, (long long)row->lo,
              (long long)row->hi);
    CU_ASSERT(ok);
  }
}

/* SPEC §10.2: two unordered writes leaving the same bytes (or both
 * undefined) are a benign race, reported once per pair of operations; a
 * write that differs is a race. */
static void test_race_benign(void) {
  static const struct {
    int v0, v1; /* the bytes the two writes leave, -1 undefined */
    bool benign;
  } rows[] = {{7, 7, true}, {-1, -1, true}, {7, 8, false}, {7, -1, false}, {-1, 7, false}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    RaceDetector *r = race_new(2, 0);
    RaceReport rep;
    RaceAccess a = {0, 1, 1, 0, 0, 0, true, false, -1, 0, 8}, b = {1, 2, 1, 0, 1, 0, true, false, -1, 0, 8};
    uint32_t ta = race_begin(r, &a, 0);
    race_pre(r, ta, &race_regions[0], 0, 8);
    race_store(0, 0, 8, rows[i].v0);
    CU_ASSERT(race_bytes(r, ta, &race_regions[0], 0, 8, &rep));
    uint32_t tb = race_begin(r, &b, 1);
    race_pre(r, tb, &race_regions[0], 0, 8); /* keeps the bytes a left, which the store overwrites */
    race_store(0, 0, 8, rows[i].v1);
    CU_ASSERT_EQUAL(race_bytes(r, tb, &race_regions[0], 0, 8, &rep), rows[i].benign);
    bool queued = race_benign_next(r, &rep);
    CU_ASSERT_EQUAL(queued, rows[i].benign);
    if (queued) CU_ASSERT(rep.first.op == 0 && rep.second.op == 1 && rep.lo == 0 && rep.hi == 8);
    CU_ASSERT(!race_benign_next(r, &rep)); /* once per pair, though 8 bytes raced */
    race_free(r);
  }
}

/* A page one write covers whole keeps one state and not its bytes; the
 * later writes that race with it still tell the same bytes (benign, over
 * the spans' overlap [4, 12)) from different ones (a race over [100, 104)),
 * and a write that splits a unit on a fresh page races with nothing. */
static void test_race_whole_page(void) {
  static uint8_t bytes[8192], def[1024];
  Region g = {bytes, def, sizeof bytes, false, DT_INT8, "w", -1, -1};
  RaceDetector *r = race_new(2, 0);
  RaceReport rep;
  RaceAccess a = {0, 1, 1, 0, 0, 0, true, false, -1, 0, 4096}, b = {1, 2, 1, 0, 1, 0, true, false, -1, 4, 12},
             c = {2, 3, 1, 0, 1, 0, true, false, -1, 100, 104}, d = {3, 4, 1, 0, 1, 0, true, false, -1, 4097, 4098};
  uint32_t ta = race_begin(r, &a, 0);
  CU_ASSERT(race_span_clean(r, ta, &g, 0, 4096));
  memset(bytes, 7, 4096), mem_set_defined(&g, 0, 4096, true);
  race_span_record(r, ta, &g, 0, 4096);
  race_done(r);
  uint32_t tb = race_begin(r, &b, 1);
  race_pre(r, tb, &g, 4, 8);
  memset(bytes + 4, 7, 8);
  CU_ASSERT(race_bytes(r, tb, &g, 4, 8, &rep));
  CU_ASSERT(race_benign_next(r, &rep) && rep.first.op == 0 && rep.second.op == 1 && rep.lo == 4 && rep.hi == 12);
  race_done(r);
  uint32_t tc = race_begin(r, &c, 1);
  race_pre(r, tc, &g, 100, 4);
  memset(bytes + 100, 9, 4);
  CU_ASSERT(!race_bytes(r, tc, &g, 100, 4, &rep));
  CU_ASSERT(rep.first.op == 0 && rep.second.op == 2 && rep.lo == 100 && rep.hi == 104);
  race_done(r);
  uint32_t td = race_begin(r, &d, 1);
  race_pre(r, td, &g, 4097, 1);
  bytes[4097] = 1, mem_set_defined(&g, 4097, 1, true);
  CU_ASSERT(race_bytes(r, td, &g, 4097, 1, &rep));
  CU_ASSERT(!race_benign_next(r, &rep));
  race_free(r);
}

/* A NULL detector (races not checked) accepts everything. */
static void test_race_null(void) {
  RaceReport rep;
  RaceAccess a = {0, 1, 1, 0, 0, 0, true, false, -1, 0, 4};
  CU_ASSERT_EQUAL(race_begin(NULL, &a, 0), 0u);
  CU_ASSERT(race_bytes(NULL, 0, &race_regions[0], 0, 4, &rep));
  CU_ASSERT_EQUAL(race_dma_start(NULL, 0), -1);
}

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_pSuite s = CU_add_suite("memory", NULL, NULL);
  CU_add_test(s, "DMA timing table", test_dma_table);
  CU_add_test(s, "DMA engine statistics", test_dma_stats);
  CU_add_test(s, "DMA engine statistics: occupancy from the enqueue", test_dma_stats_late_enqueue);
  CU_add_test(s, "DMA engine: a lone quiet transfer lands as the stepped one", test_dma_quiet);
  CU_add_test(s, "race detector table", test_race_table);
  CU_add_test(s, "race detector off", test_race_null);
  CU_add_test(s, "race detector: benign races", test_race_benign);
  CU_add_test(s, "race detector: a page written whole, then in part", test_race_whole_page);
  CU_basic_set_mode(CU_BRM_NORMAL);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures();
  CU_cleanup_registry();
  return failed ? 1 : 0;
}
