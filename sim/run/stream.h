/* sim/run/stream.h -- streaming verification: the engine's and the
 * reference's events compared as soon as both sides have produced them.
 *
 * The two runs execute side by side.  Each memory result (a loaded value,
 * the old value of a swap, the view after a store) goes to the subcore's
 * queue; when the other side has already queued the matching event the two
 * are compared (sim/run/verify.h) and both dropped, so a queue only ever
 * holds the events one side is ahead by.  The engine drives: when it is
 * STREAM_AHEAD events ahead on a subcore it calls the pump (the caller's:
 * run the reference until it catches up), and the reference yields a
 * subcore that is STREAM_AHEAD events ahead of the engine.  Memory is then
 * bounded by the queues, not by the run's length.  Per subcore the first
 * difference and the listed rows are kept apart and merged in subcore order
 * at the end, so the verdict reads as when the whole logs were compared
 * after both runs. */
#ifndef SC_STREAM_H
#define SC_STREAM_H

#include "verify.h"

#include <string.h>

enum { STREAM_REF = 0, STREAM_ENG = 1 };
/* Events one side may run ahead on a subcore before it waits for the other. */
#define STREAM_AHEAD 256

typedef struct Stream Stream;

/* One queued event.  A value of up to 16 lanes and rank 1 or 0 (the vector
 * and the scalar: nearly every event) is held in the slot itself, a fixed
 * size copy with no pointer to follow; a larger one, or one of higher rank,
 * goes to big.  key packs what the bitwise match compares besides the
 * lanes (STREAM_KEY), so that it is one comparison; its lanes are 0 for a
 * value in big.  cap is the lanes the slot has held at most, what the
 * memory accounting counts (as for a Value's allocation).  256 bytes: a
 * slot's place in the ring by a shift. */
#define STREAM_KEY(op, kind, dtype, lanes) \
  ((uint64_t)(uint32_t)(op) | (uint64_t)(uint8_t)(kind) << 32 | (uint64_t)(uint8_t)(dtype) << 40 | (uint64_t)(lanes) << 48)
typedef struct {
  uint64_t key;
  int64_t n, cap;
  uint64_t bytes;      /* what the accounting counts for it: sizeof(Event) and cap lanes with their flags */
  Cell v[16];          /* v and def at 16-byte offsets: no 16-byte load of them crosses a cache line */
  uint8_t def[16];
  int rank;
  bool is_big;
  Value *big;          /* allocated when first needed */
  uint8_t unused[64];
} StreamSlot;

/* A subcore's queue: a ring of the events `side` is ahead by, from head
 * to tail (counters that only grow: a pop or a push is one increment, and
 * a place in the ring is a counter masked).  64 bytes: a subcore's queue
 * by a shift. */
typedef struct {
  StreamSlot *q;
  unsigned head, tail;
  int cap;
  int side;
  int lim[2];          /* a push of side onto fewer than lim[side] events has room and needs no pump */
  uint64_t count[2];   /* events each side produced */
  uint64_t matched;    /* lanes matched by stream_log's fast path */
  int extra_op;        /* the first event only one side has (-1: none yet) */
} StreamQ;

/* max_list: the mismatch rows to keep (sc-sim diff), 0 for none. */
Stream *stream_open(const Program *p, int nsub, int max_list);
void stream_free(Stream *st);
/* Makes r's events (run_log) go to the stream as side's. */
void stream_attach(Stream *st, int side, RunResult *r);
/* The engine's catch-up call: run the reference until subcore sub's
 * queue holds no engine event, or until it cannot go on. */
void stream_set_pump(Stream *st, void (*pump)(void *ctx, int sub), void *ctx);
/* The events of side that sub's queue holds (those the other side has not produced yet). */
int stream_queued(const Stream *st, int side, int sub);
/* Whether side is STREAM_AHEAD events or more ahead on sub (it should wait). */
bool stream_ahead(const Stream *st, int side, int sub);
/* How much side's log bytes (RunResult.log_bytes) may grow before side
 * can be STREAM_AHEAD events ahead on sub, when it is not now: each event
 * it queues adds at least sizeof(Event), and matching the other side's
 * queued events adds none.  UINT64_MAX once the other side closed.  A
 * caller asks stream_ahead again only past it. */
uint64_t stream_slack(const Stream *st, int side, int sub);
/* No more events from side (its run ended or faulted). */
void stream_close(Stream *st, int side);
bool stream_closed(const Stream *st, int side);
/* The events q holds. */
static inline int stream_qn(const StreamQ *q) { return (int)(q->tail - q->head); }

/* The events stream_log's fast path does not take (out of line). */
void stream_log_slow(RunResult *r, int side, int sub, int op, EventKind k, const Value *v);

/* 16 bytes at a time in the compiler's vector type (SSE2 on x86-64),
 * written out: at -O2 a loop is not unrolled, and a memcpy of the 16
 * cells may become a `rep movs`, slow to start. */
typedef uint64_t StreamW2 __attribute__((vector_size(16)));
static inline __attribute__((always_inline)) StreamW2 stream_w2(const void *p) {
  StreamW2 w;
  memcpy(&w, p, 16);
  return w;
}
static inline __attribute__((always_inline)) StreamW2 stream_x2(const void *a, const void *b, int i) {
  return stream_w2((const char *)a + 16 * i) ^ stream_w2((const char *)b + 16 * i);
}
/* Whether 16 flags and 16 cells are bitwise the same. */
static inline __attribute__((always_inline)) bool stream_same16(const uint8_t *da, const uint8_t *db, const Cell *a, const Cell *b) {
  StreamW2 x = stream_x2(da, db, 0) | stream_x2(a, b, 0) | stream_x2(a, b, 1) | stream_x2(a, b, 2) | stream_x2(a, b, 3) |
               stream_x2(a, b, 4) | stream_x2(a, b, 5) | stream_x2(a, b, 6) | stream_x2(a, b, 7);
  return !(x[0] | x[1]);
}
static inline __attribute__((always_inline)) void stream_copy16(uint8_t *dd, const uint8_t *ds, Cell *d, const Cell *s) {
  StreamW2 f = stream_w2(ds), w0 = stream_w2(s), w1 = stream_w2(s + 2), w2 = stream_w2(s + 4), w3 = stream_w2(s + 6),
           w4 = stream_w2(s + 8), w5 = stream_w2(s + 10), w6 = stream_w2(s + 12), w7 = stream_w2(s + 14);
  memcpy(dd, &f, 16);
  memcpy(d, &w0, 16), memcpy(d + 2, &w1, 16), memcpy(d + 4, &w2, 16), memcpy(d + 6, &w3, 16);
  memcpy(d + 8, &w4, 16), memcpy(d + 10, &w5, 16), memcpy(d + 12, &w6, 16), memcpy(d + 14, &w7, 16);
}

/* One event of side (a constant where the caller knows it) from run r to
 * the stream r is attached to (r->stream_q), else to r's log.  Inline, the
 * common cases: the other side's queued event bitwise the same popped, a
 * scalar or a 16-lane vector pushed with room; anything else, and every
 * event once a side closed or a run faulted, out of line. */
static inline __attribute__((always_inline)) void stream_log(RunResult *r, int side, int sub, int op, EventKind k, const Value *v) {
  if (__builtin_expect(!r->stream_q, 0)) return r->sink ? r->sink(r->sink_ctx, sub, op, k, v) : run_log_append(r, sub, op, k, v);
  StreamQ *q = (StreamQ *)r->stream_q + sub;
  if (__builtin_expect(*r->fault_note, 0)) return stream_log_slow(r, side, sub, op, k, v);
  int64_t lanes = v->n;
  if (q->tail != q->head && q->side != side) { /* the other side's event: a bitwise match pops it */
    StreamSlot *o = &q->q[q->head & (unsigned)(q->cap - 1)];
    if (lanes == 1) {
      if (o->key != STREAM_KEY(op, k, v->dtype, 1) || o->v[0].i != v->v[0].i || o->def[0] != v->def[0]) return stream_log_slow(r, side, sub, op, k, v);
    } else if (lanes == 16) {
      if (o->key != STREAM_KEY(op, k, v->dtype, 16) || !stream_same16(o->def, v->def, o->v, v->v)) return stream_log_slow(r, side, sub, op, k, v);
    } else {
      return stream_log_slow(r, side, sub, op, k, v);
    }
    q->count[side]++;
    q->matched += (uint64_t)lanes;
    *r->stream_peer_bytes -= o->bytes;
    q->head++;
    return;
  }
  if (stream_qn(q) >= q->lim[side]) return stream_log_slow(r, side, sub, op, k, v);
  StreamSlot *e = &q->q[q->tail & (unsigned)(q->cap - 1)];
  if (lanes == 1 && v->rank == 0 && e->cap >= 1) {
    e->v[0] = v->v[0], e->def[0] = v->def[0];
  } else if (lanes == 16 && v->rank == 1 && e->cap >= 16) {
    stream_copy16(e->def, v->def, e->v, v->v);
  } else {
    return stream_log_slow(r, side, sub, op, k, v);
  }
  e->key = STREAM_KEY(op, k, v->dtype, lanes);
  e->n = lanes, e->rank = v->rank, e->is_big = false;
  q->side = side;
  q->tail++;
  q->count[side]++;
  r->log_bytes += e->bytes;
}

/* run_log of sim/run/run.h's runs: the side r was attached as. */
static inline __attribute__((always_inline)) void run_log(RunResult *r, int sub, int op, EventKind k, const Value *v) {
  stream_log(r, r->stream_side, sub, op, k, v);
}

/* Fetch-and-add number k in the engine's order (SPEC §9.10): 1 with *sub
 * set, 0 while the engine has not run it yet, -1 when it never will. */
int stream_atomic(const Stream *st, int k, int *sub);
/* After both sides closed: the verdict of the logs (false with *d set),
 * counted into *vs (its first difference and list), as verify_runs'. */
bool stream_verdict(Stream *st, Diag *d, VerifyStats *vs);

#endif
