/* sim/run/stream.c -- streaming verification (sim/run/stream.h). */
#include "stream.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The first difference of one subcore and its listed rows, made at its
 * first difference. */
struct StreamBad {
  bool ok;
  Diag d;
  VerifyStats st;
};

enum { INLINE_LANES = 16 };
typedef StreamSlot Slot;
typedef StreamQ SubQ;
typedef struct StreamBad SubBad;
_Static_assert(sizeof(Slot) == 256 && sizeof(SubQ) == 64 && offsetof(Slot, v) % 16 == 0 && offsetof(Slot, def) % 16 == 0, "a slot and a queue by a shift, the lanes 16-byte aligned");

static int slot_op(const Slot *e) { return (int)(uint32_t)e->key; }
static EventKind slot_kind(const Slot *e) { return (EventKind)(uint8_t)(e->key >> 32); }
static Dtype slot_dtype(const Slot *e) { return (Dtype)(uint8_t)(e->key >> 40); }

struct Stream {
  const Program *p;
  int nsub, max_list;
  SubQ *sq;
  SubBad **bad;         /* per subcore: its first difference, when it has one */
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

/* The slot of counter k (StreamQ.head, .tail). */
static Slot *at(const SubQ *q, unsigned k) { return &q->q[k & (unsigned)(q->cap - 1)]; }

static Value slot_value(Slot *e) {
  if (e->is_big) return *e->big;
  Value v = {.dtype = slot_dtype(e), .rank = e->rank, .n = e->n, .v = e->v, .def = e->def, .cap = INLINE_LANES};
  v.shape[0] = e->n; /* rank 1 (a scalar's shape is not read) */
  return v;
}

Stream *stream_open(const Program *p, int nsub, int max_list) {
  Stream *st = calloc(1, sizeof *st);
  if (!st) abort();
  st->p = p, st->nsub = nsub, st->max_list = max_list;
  st->sq = calloc((size_t)(nsub ? nsub : 1), sizeof *st->sq);
  st->bad = calloc((size_t)(nsub ? nsub : 1), sizeof *st->bad);
  if (!st->sq || !st->bad) abort();
  for (int i = 0; i < nsub; i++) st->sq[i].extra_op = -1;
  return st;
}

void stream_free(Stream *st) {
  if (!st) return;
  for (int i = 0; i < st->nsub; i++) {
    SubQ *q = &st->sq[i];
    for (int k = 0; k < q->cap; k++)
      if (q->q[k].big) val_free(q->q[k].big), free(q->q[k].big);
    free(q->q);
    if (st->bad[i]) free(st->bad[i]->st.list);
    free(st->bad[i]);
  }
  free(st->bad);
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
  SubBad **b = &st->bad[q - st->sq];
  if (!*b) {
    *b = calloc(1, sizeof **b);
    if (!*b) abort();
    (*b)->ok = true;
    (*b)->st.max_list = st->max_list;
    if (st->max_list && !((*b)->st.list = calloc((size_t)st->max_list, sizeof *(*b)->st.list))) abort();
  }
  return *b;
}

/* Drops what a queue holds: the other side will never match it. */
static void drop_queue(Stream *st, SubQ *q) {
  if (stream_qn(q) && q->extra_op < 0) q->extra_op = slot_op(at(q, q->head));
  for (unsigned k = q->head; k != q->tail; k++) account(st, q->side, -(int64_t)slot_bytes(at(q, k)));
  q->head = q->tail = 0;
}

/* The queue's first event (the other side's) leaves: it was compared. */
static inline __attribute__((always_inline)) void pop(Stream *st, SubQ *q, int side) {
  account_freed(st, !side, slot_bytes(at(q, q->head)));
  q->head++;
}

/* The queued event against v when not bitwise the same: the full
 * comparison (and its report of a difference), then the pop. */
static __attribute__((noinline)) void match_slow(Stream *st, int sub, int op, EventKind k, const Value *v, int side) {
  SubQ *q = &st->sq[sub];
  Slot *o = at(q, q->head);
  Value ov = slot_value(o);
  const Value *ref = side == STREAM_REF ? v : &ov, *eng = side == STREAM_REF ? &ov : v;
  if (slot_op(o) == op && slot_kind(o) == k && verify_value_equal(ref, eng)) {
    st->matched += (uint64_t)v->n;
  } else {
    Event mine = {.op = op, .kind = k, .val = *v}, theirs = {.op = slot_op(o), .kind = slot_kind(o), .val = ov}; /* read only: no copies */
    SubBad *b = bad_of(st, q);
    verify_event_pair(st->p, sub, side == STREAM_REF ? &mine : &theirs, side == STREAM_REF ? &theirs : &mine, &b->ok, &b->d, &b->st);
  }
  pop(st, q, side);
}

/* The lanes of v into slot e: in the slot when they fit, else in big. */
static void fill_other(Slot *e, const Value *v) {
  if (v->n <= INLINE_LANES && v->rank <= 1) { /* a scalar is of rank 0 */
    e->is_big = false;
    memcpy(e->v, v->v, sizeof *v->v * (size_t)v->n);
    memcpy(e->def, v->def, (size_t)v->n);
  } else {
    e->is_big = true;
    if (!e->big && !(e->big = calloc(1, sizeof *e->big))) abort();
    val_copy(e->big, v);
  }
}

/* The fast path's limits (StreamQ.lim): a push needs the ring's room, and
 * the engine's one that puts it STREAM_AHEAD ahead pumps. */
static void set_lim(SubQ *q) {
  q->lim[STREAM_REF] = q->cap;
  q->lim[STREAM_ENG] = q->cap < STREAM_AHEAD - 1 ? q->cap : STREAM_AHEAD - 1;
}

static void grow(SubQ *q) { /* keeping the ring's order (its size a power of two: positions by a mask) */
  int cap = q->cap ? q->cap * 2 : 16;
  Slot *e = calloc((size_t)cap, sizeof *e);
  if (!e) abort();
  for (int i = 0; i < q->cap; i++) e[i] = *at(q, q->head + (unsigned)i);
  free(q->q);
  q->tail = (unsigned)stream_qn(q), q->head = 0;
  q->q = e, q->cap = cap;
  set_lim(q);
}

static void push(Stream *st, SubQ *q, int side, int op, EventKind k, const Value *v) {
  Slot *e = at(q, q->tail++);
  q->side = side;
  e->rank = v->rank, e->n = v->n;
  if (v->n > e->cap) e->cap = v->n, e->bytes = slot_bytes(e);
  account_held(st, side, slot_bytes(e));
  fill_other(e, v);
  e->key = STREAM_KEY(op, k, v->dtype, e->is_big ? 0 : v->n);
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
  if (stream_qn(q) == q->cap) grow(q);
  push(st, q, side, op, k, v);
  if (side == STREAM_ENG && stream_qn(q) >= STREAM_AHEAD && st->pump && !st->pumping) stream_pump(st, sub);
}

static void stream_usual(Stream *st, int sub, int op, EventKind k, const Value *v, int side);

/* The cases of a fault or a closed side: the event dropped, or only one
 * side has it; else it goes on as usual. */
static __attribute__((noinline)) void stream_rare(Stream *st, int sub, int op, EventKind k, const Value *v, int side) {
  SubQ *q = &st->sq[sub];
  if (faulted(st, STREAM_REF) || faulted(st, STREAM_ENG)) { /* a fault is the verdict: the logs are not judged */
    if (stream_qn(q)) drop_queue(st, q);
    return;
  }
  if (!st->closed[!side] || (stream_qn(q) && q->side != side)) return stream_usual(st, sub, op, k, v, side);
  if (q->extra_op < 0) q->extra_op = op; /* the other side closed: nothing left to compare with */
}

/* Whether the queued event o and side's (op, k, v) are bitwise the same,
 * definedness too (a scalar or a 16-lane vector): enough for
 * verify_value_equal to hold, as stream_log's fast path takes it. */
static bool same_bits(const Slot *o, int op, EventKind k, const Value *v) {
  if (v->n != 1 && v->n != 16) return false;
  return o->key == STREAM_KEY(op, k, v->dtype, v->n) && !memcmp(o->def, v->def, (size_t)v->n) && !memcmp(o->v, v->v, sizeof(Cell) * (size_t)v->n);
}

/* One event past the count and the flags: compared with the other side's
 * queued one, else queued. */
static void stream_usual(Stream *st, int sub, int op, EventKind k, const Value *v, int side) {
  SubQ *q = &st->sq[sub];
  if (stream_qn(q) && q->side != side) {
    if (!same_bits(at(q, q->head), op, k, v)) return match_slow(st, sub, op, k, v, side);
    st->matched += (uint64_t)v->n;
    return pop(st, q, side);
  }
  if (stream_qn(q) == q->cap || (side == STREAM_ENG && stream_qn(q) + 1 >= STREAM_AHEAD)) return push_slow(st, sub, op, k, v, side);
  push(st, q, side, op, k, v);
}

/* One event of side that stream_log's fast path did not take. */
static void stream_event(Stream *st, int side, int sub, int op, EventKind k, const Value *v) {
  st->sq[sub].count[side]++;
  if (st->rare) return stream_rare(st, sub, op, k, v, side);
  stream_usual(st, sub, op, k, v, side);
}

void stream_log_slow(RunResult *r, int side, int sub, int op, EventKind k, const Value *v) { stream_event(r->sink_ctx, side, sub, op, k, v); }

/* The sinks (RunResult.sink) of a run whose stream_q is not set. */
static void sink_ref(void *ctx, int sub, int op, EventKind k, const Value *v) { stream_event(ctx, STREAM_REF, sub, op, k, v); }
static void sink_eng(void *ctx, int sub, int op, EventKind k, const Value *v) { stream_event(ctx, STREAM_ENG, sub, op, k, v); }

void stream_attach(Stream *st, int side, RunResult *r) {
  st->run[side] = r;
  r->fault_note = &st->rare;
  st->rare |= r->faulted;
  r->sink = side == STREAM_REF ? sink_ref : sink_eng;
  r->sink_ctx = st;
  r->stream_q = st->sq, r->stream_side = side;
  if (st->run[!side]) r->stream_peer_bytes = &st->run[!side]->log_bytes, st->run[!side]->stream_peer_bytes = &r->log_bytes;
}

void stream_set_pump(Stream *st, void (*pump)(void *, int), void *ctx) { st->pump = pump, st->ctx = ctx; }

int stream_queued(const Stream *st, int side, int sub) {
  const SubQ *q = &st->sq[sub];
  return q->side == side ? stream_qn(q) : 0;
}

bool stream_ahead(const Stream *st, int side, int sub) {
  const SubQ *q = &st->sq[sub];
  return !st->closed[!side] && stream_qn(q) >= STREAM_AHEAD && q->side == side;
}

uint64_t stream_slack(const Stream *st, int side, int sub) {
  const SubQ *q = &st->sq[sub];
  if (st->closed[!side]) return UINT64_MAX;
  int mine = q->side == side ? stream_qn(q) : 0;
  return mine < STREAM_AHEAD ? (uint64_t)(STREAM_AHEAD - mine) * sizeof(Event) : 0;
}

void stream_close(Stream *st, int side) {
  st->closed[side] = true;
  st->rare = true;
  if (st->run[side]) st->run[side]->fault_note = NULL, st->run[side]->stream_q = NULL; /* the run may outlive the stream */
  for (int i = 0; i < st->nsub; i++)
    if (stream_qn(&st->sq[i]) && st->sq[i].side != side) drop_queue(st, &st->sq[i]);
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
    vs->matched += q->matched;
    drop_queue(st, q);
    SubBad *b = st->bad[s];
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
