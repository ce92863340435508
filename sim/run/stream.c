/* sim/run/stream.c -- streaming verification (sim/run/stream.h). */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

/* The first difference of one subcore and its listed rows, made at its
 * first difference. */
typedef struct {
  bool ok;
  Diag d;
  VerifyStats st;
} SubBad;

/* One queued event.  A value of up to 16 lanes and rank 1 or 0 (the vector
 * and the scalar: nearly every event) is held in the slot itself, a fixed
 * size copy with no pointer to follow; a larger one, or one of higher rank,
 * goes to big.  cap is the lanes the slot has held at most, what the memory
 * accounting counts (as for a Value's allocation). */
enum { INLINE_LANES = 16 };
typedef struct {
  int op;
  EventKind kind;
  Dtype dtype;
  int rank;
  bool is_big;
  int64_t n, cap;
  Cell v[INLINE_LANES];
  uint8_t def[INLINE_LANES];
  Value big;
} Slot;

typedef struct {
  Slot *q;            /* a ring of the events `side` is ahead by */
  int head, n, cap;
  int side;
  uint64_t count[2];  /* events each side produced */
  int extra_op;       /* the first event only one side has (-1: none yet) */
  SubBad *bad;
  uint64_t unused;    /* 64 bytes in all: a subcore's queue by a shift */
} SubQ;

struct Stream {
  const Program *p;
  int nsub, max_list;
  SubQ *sq;
  RunResult *run[2];
  bool closed[2];
  bool rare;            /* a side closed or an attached run faulted (RunResult.fault_note): one test per event */
  uint64_t matched, mismatched;
  void (*pump)(void *, int);
  void *ctx;
  bool pumping;
};

static bool faulted(const Stream *st, int side) { return st->run[side] && st->run[side]->faulted; }

/* What a queued event holds, as the Event of a log (which sizeof(Event)
 * and the lanes' bytes count, as they did when the queue held Events). */
static uint64_t slot_bytes(const Slot *e) { return sizeof(Event) + (uint64_t)e->cap * (sizeof(Cell) + 1); }

static Value slot_value(Slot *e) {
  if (e->is_big) return e->big;
  Value v = {.dtype = e->dtype, .rank = e->rank, .n = e->n, .v = e->v, .def = e->def, .cap = INLINE_LANES};
  v.shape[0] = e->n; /* rank 1 (a scalar's shape is not read) */
  return v;
}

Stream *stream_open(const Program *p, int nsub, int max_list) {
  Stream *st = calloc(1, sizeof *st);
  if (!st) abort();
  st->p = p, st->nsub = nsub, st->max_list = max_list;
  st->sq = calloc((size_t)(nsub ? nsub : 1), sizeof *st->sq);
  if (!st->sq) abort();
  for (int i = 0; i < nsub; i++) st->sq[i].extra_op = -1;
  return st;
}

void stream_free(Stream *st) {
  if (!st) return;
  for (int i = 0; i < st->nsub; i++) {
    SubQ *q = &st->sq[i];
    for (int k = 0; k < q->cap; k++) val_free(&q->q[k].big);
    free(q->q);
    if (q->bad) free(q->bad->st.list);
    free(q->bad);
  }
  free(st->sq);
  free(st);
}

/* What the queues hold is counted in the log bytes of the side that
 * queued it (its run's --max-log-mb). */
static void account(Stream *st, int side, int64_t bytes) {
  if (st->run[side]) st->run[side]->log_bytes += (uint64_t)bytes;
}

/* account for an event a sink queued or compared: its side is attached
 * (only stream_attach sets a sink). */
static inline __attribute__((always_inline)) void account_held(Stream *st, int side, uint64_t bytes) { st->run[side]->log_bytes += bytes; }

static inline __attribute__((always_inline)) void account_freed(Stream *st, int side, uint64_t bytes) { st->run[side]->log_bytes -= bytes; }

static SubBad *bad_of(Stream *st, SubQ *q) {
  if (!q->bad) {
    q->bad = calloc(1, sizeof *q->bad);
    if (!q->bad) abort();
    q->bad->ok = true;
    q->bad->st.max_list = st->max_list;
    if (st->max_list && !(q->bad->st.list = calloc((size_t)st->max_list, sizeof *q->bad->st.list))) abort();
  }
  return q->bad;
}

/* 16 cells compared two words at a time (the compiler's vector type: SSE2
 * on x86-64), inline: no call in stream_event's common path. */
typedef uint64_t Words2 __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) Words2 diff2(const Cell *a, const Cell *b) {
  Words2 u, w;
  memcpy(&u, a, 16), memcpy(&w, b, 16);
  return u ^ w;
}

static inline __attribute__((always_inline)) bool same_cells16(const Cell *a, const Cell *b) { /* written out: the compiler does not unroll at -O2 */
  Words2 x = diff2(a, b) | diff2(a + 2, b + 2) | diff2(a + 4, b + 4) | diff2(a + 6, b + 6) | diff2(a + 8, b + 8) |
             diff2(a + 10, b + 10) | diff2(a + 12, b + 12) | diff2(a + 14, b + 14);
  return !(x[0] | x[1]);
}

/* Whether a slot's lanes and v's are bitwise the same, definedness too:
 * enough for verify_value_equal to hold (which then need not run).  The
 * vector of 16 lanes (its 16 flags as two words) and the scalar inline. */
static inline __attribute__((always_inline)) bool same_lanes(const Slot *o, const Value *v) {
  if (o->n == 16) { /* the flags as one vector too: no general registers held */
    Words2 d, e;
    memcpy(&d, o->def, 16), memcpy(&e, v->def, 16);
    Words2 x = d ^ e;
    return !(x[0] | x[1]) && same_cells16(o->v, v->v);
  }
  if (o->n == 1) return o->v[0].i == v->v[0].i && o->def[0] == v->def[0];
  return !memcmp(o->def, v->def, (size_t)o->n) && !memcmp(o->v, v->v, sizeof(Cell) * (size_t)o->n);
}

/* Whether the queued event o matches side's (op, k, v) bit for bit (the
 * common case, tested inline). */
static inline __attribute__((always_inline)) bool same_event(const Slot *o, int op, EventKind k, const Value *v) {
  return o->op == op && o->kind == k && !o->is_big && o->n == v->n && o->dtype == v->dtype && (o->n == 16 || o->n == 1) && same_lanes(o, v);
}

/* same_event of a scalar (one lane: the commonest event), tested first
 * with no more than it needs: when it holds, same_event does. */
static inline __attribute__((always_inline)) bool same_scalar(const Slot *o, int op, EventKind k, const Value *v) {
  return v->n == 1 && o->n == 1 && o->v[0].i == v->v[0].i && o->def[0] == v->def[0] && o->op == op && o->kind == k && o->dtype == v->dtype && !o->is_big;
}

/* Drops what a queue holds: the other side will never match it. */
static void drop_queue(Stream *st, SubQ *q) {
  if (q->n && q->extra_op < 0) q->extra_op = q->q[q->head].op;
  for (int k = 0; k < q->n; k++) account(st, q->side, -(int64_t)slot_bytes(&q->q[(q->head + k) & (q->cap - 1)]));
  q->head = q->n = 0;
}

/* The queue's first event (the other side's) leaves: it was compared. */
static inline __attribute__((always_inline)) void pop(Stream *st, SubQ *q, int side) {
  account_freed(st, !side, slot_bytes(&q->q[q->head]));
  q->head = (q->head + 1) & (q->cap - 1);
  q->n--;
}

/* The queued event against v when not bitwise the same: the full
 * comparison (and its report of a difference), then the pop. */
static __attribute__((noinline)) void match_slow(Stream *st, int sub, int op, EventKind k, const Value *v, int side) {
  SubQ *q = &st->sq[sub];
  Slot *o = &q->q[q->head];
  Value ov = slot_value(o);
  const Value *ref = side == STREAM_REF ? v : &ov, *eng = side == STREAM_REF ? &ov : v;
  if (o->op == op && o->kind == k && verify_value_equal(ref, eng)) {
    st->matched += (uint64_t)v->n;
  } else {
    Event mine = {.op = op, .kind = k, .val = *v}, theirs = {.op = o->op, .kind = o->kind, .val = ov}; /* read only: no copies */
    SubBad *b = bad_of(st, q);
    verify_event_pair(st->p, sub, side == STREAM_REF ? &mine : &theirs, side == STREAM_REF ? &theirs : &mine, &b->ok, &b->d, &b->st);
  }
  pop(st, q, side);
}

/* The lanes of v into slot e, but for the vector and the scalar (push
 * copies those): in the slot when they fit, else in big.  Out of line:
 * push's common path makes no call. */
static __attribute__((noinline)) void fill_other(Slot *e, const Value *v) {
  if (v->n <= INLINE_LANES && v->rank == 1) {
    e->is_big = false;
    memcpy(e->v, v->v, sizeof *v->v * (size_t)v->n);
    memcpy(e->def, v->def, (size_t)v->n);
  } else {
    e->is_big = true;
    val_copy(&e->big, v);
  }
}

static void grow(SubQ *q) { /* keeping the ring's order (its size a power of two: positions by a mask) */
  int cap = q->cap ? q->cap * 2 : 16;
  Slot *e = calloc((size_t)cap, sizeof *e);
  if (!e) abort();
  for (int i = 0; i < q->cap; i++) e[i] = q->q[(q->head + i) & (q->cap - 1)];
  free(q->q);
  q->q = e, q->cap = cap, q->head = 0;
}

static inline __attribute__((always_inline)) void push(Stream *st, SubQ *q, int side, int op, EventKind k, const Value *v) {
  Slot *e = &q->q[(q->head + q->n++) & (q->cap - 1)];
  q->side = side;
  e->op = op, e->kind = k;
  e->dtype = v->dtype, e->rank = v->rank, e->n = v->n;
  if (v->n > e->cap) e->cap = v->n;
  account_held(st, side, slot_bytes(e));
  if (v->n == 16 && v->rank == 1) { /* the vector and the scalar: fixed size copies */
    e->is_big = false;
    memcpy(e->v, v->v, 16 * sizeof *v->v);
    memcpy(e->def, v->def, 16);
  } else if (v->n == 1 && v->rank == 0) {
    e->is_big = false;
    e->v[0] = v->v[0], e->def[0] = v->def[0];
  } else {
    fill_other(e, v); /* last: a tail call */
  }
}

static void stream_pump(Stream *st, int sub) {
  st->pumping = true;
  st->pump(st->ctx, sub);
  st->pumping = false;
}

/* A push that grows the queue, or that puts the engine STREAM_AHEAD
 * events ahead (the reference is run to catch up). */
static __attribute__((noinline)) void push_slow(Stream *st, int sub, int op, EventKind k, const Value *v, int side) {
  SubQ *q = &st->sq[sub];
  if (q->n == q->cap) grow(q);
  push(st, q, side, op, k, v);
  if (side == STREAM_ENG && q->n >= STREAM_AHEAD && st->pump && !st->pumping) stream_pump(st, sub);
}

static void stream_usual(Stream *st, int sub, int op, EventKind k, const Value *v, int side);

/* The cases of a fault or a closed side: the event dropped, or only one
 * side has it; else it goes on as usual. */
static __attribute__((noinline)) void stream_rare(Stream *st, int sub, int op, EventKind k, const Value *v, int side) {
  SubQ *q = &st->sq[sub];
  if (faulted(st, STREAM_REF) || faulted(st, STREAM_ENG)) { /* a fault is the verdict: the logs are not judged */
    if (q->n) drop_queue(st, q);
    return;
  }
  if (!st->closed[!side] || (q->n && q->side != side)) return stream_usual(st, sub, op, k, v, side);
  if (q->extra_op < 0) q->extra_op = op; /* the other side closed: nothing left to compare with */
}

/* One event of side (a constant in each of the two sinks below, so that
 * each is a function of its own, with no test of the side).  The common
 * cases (a bitwise match popped, a push with room and no pump) run here
 * with no call; the others are tail calls, so that nothing here lives
 * across a call. */
static inline __attribute__((always_inline)) void stream_event(Stream *st, int side, int sub, int op, EventKind k, const Value *v, bool usual) {
  SubQ *q = &st->sq[sub];
  if (!usual) {
    q->count[side]++;
    if (__builtin_expect(st->rare, 0)) return stream_rare(st, sub, op, k, v, side);
  }
  if (q->n && q->side != side) { /* the other side's matching event: compare, drop */
    const Slot *o = &q->q[q->head];
    if (!same_scalar(o, op, k, v) && !same_event(o, op, k, v)) return match_slow(st, sub, op, k, v, side);
    st->matched += (uint64_t)v->n;
    pop(st, q, side);
    return;
  }
  if (q->n == q->cap || (side == STREAM_ENG && q->n + 1 >= STREAM_AHEAD)) return push_slow(st, sub, op, k, v, side);
  push(st, q, side, op, k, v);
}

/* stream_event past the count and the flags (for stream_rare). */
static void stream_usual(Stream *st, int sub, int op, EventKind k, const Value *v, int side) {
  if (side == STREAM_REF) stream_event(st, STREAM_REF, sub, op, k, v, true);
  else stream_event(st, STREAM_ENG, sub, op, k, v, true);
}

static void sink_ref(void *ctx, int sub, int op, EventKind k, const Value *v) { stream_event(ctx, STREAM_REF, sub, op, k, v, false); }
static void sink_eng(void *ctx, int sub, int op, EventKind k, const Value *v) { stream_event(ctx, STREAM_ENG, sub, op, k, v, false); }

void stream_attach(Stream *st, int side, RunResult *r) {
  st->run[side] = r;
  r->fault_note = &st->rare;
  st->rare |= r->faulted;
  r->sink = side == STREAM_REF ? sink_ref : sink_eng;
  r->sink_ctx = st;
}

void stream_set_pump(Stream *st, void (*pump)(void *, int), void *ctx) { st->pump = pump, st->ctx = ctx; }

int stream_queued(const Stream *st, int side, int sub) {
  const SubQ *q = &st->sq[sub];
  return q->side == side ? q->n : 0;
}

bool stream_ahead(const Stream *st, int side, int sub) {
  const SubQ *q = &st->sq[sub];
  return !st->closed[!side] && q->n >= STREAM_AHEAD && q->side == side;
}

uint64_t stream_slack(const Stream *st, int side, int sub) {
  const SubQ *q = &st->sq[sub];
  if (st->closed[!side]) return UINT64_MAX;
  int mine = q->side == side ? q->n : 0;
  return mine < STREAM_AHEAD ? (uint64_t)(STREAM_AHEAD - mine) * sizeof(Event) : 0;
}

void stream_close(Stream *st, int side) {
  st->closed[side] = true;
  st->rare = true;
  if (st->run[side]) st->run[side]->fault_note = NULL; /* the run may outlive the stream */
  for (int i = 0; i < st->nsub; i++)
    if (st->sq[i].n && st->sq[i].side != side) drop_queue(st, &st->sq[i]);
}

bool stream_closed(const Stream *st, int side) { return st->closed[side]; }

int stream_atomic(const Stream *st, int k, int *sub) {
  const RunResult *e = st->run[STREAM_ENG];
  if (e && k < e->natomics) return *sub = e->atomics[k], 1;
  return !e || st->closed[STREAM_ENG] || e->faulted ? -1 : 0;
}

bool stream_verdict(Stream *st, Diag *d, VerifyStats *vs) {
  bool ok = true;
  vs->matched += st->matched;
  for (int s = 0; s < st->nsub; s++) {
    SubQ *q = &st->sq[s];
    drop_queue(st, q);
    SubBad *b = q->bad;
    if (q->count[0] != q->count[1]) {
      b = bad_of(st, q);
      verify_event_counts(st->p, s, q->count[0], q->count[1], q->extra_op, &b->ok, &b->d, &b->st);
    }
    if (!b) continue;
    vs->matched += b->st.matched, vs->mismatched += b->st.mismatched;
    if (ok && !b->ok) *d = b->d, vs->first = b->st.first, ok = false;
    for (int k = 0; k < b->st.nlist && vs->list && vs->nlist < vs->max_list; k++) memcpy(vs->list[vs->nlist++], b->st.list[k], sizeof vs->list[0]);
  }
  return ok;
}
