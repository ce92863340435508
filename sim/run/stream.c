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

typedef struct {
  Event *q;           /* a ring of the events `side` is ahead by */
  int head, n, cap;
  int side;
  uint64_t count[2];  /* events each side produced */
  int extra_op;       /* the first event only one side has (-1: none yet) */
  SubBad *bad;
} SubQ;

struct Stream {
  const Program *p;
  int nsub, max_list;
  SubQ *sq;
  RunResult *run[2];
  const bool *fault[2]; /* run[side]->faulted, or a false of its own before attach */
  bool never;
  bool closed[2];
  uint64_t matched, mismatched;
  uint64_t held, peak;
  void (*pump)(void *, int);
  void *ctx;
  bool pumping;
};

static bool faulted(const Stream *st, int side) { return st->run[side] && st->run[side]->faulted; }
/* Whether either side faulted, or sits closed while side's event has no
 * match waiting: one test of the flags below in the common case. */
static bool unusual(const Stream *st, int side, bool waits) {
  return *st->fault[0] || *st->fault[1] || (st->closed[!side] && !waits);
}

static uint64_t event_bytes(const Value *v) { return sizeof(Event) + (uint64_t)v->cap * (sizeof(Cell) + 1); }

Stream *stream_open(const Program *p, int nsub, int max_list) {
  Stream *st = calloc(1, sizeof *st);
  if (!st) abort();
  st->p = p, st->nsub = nsub, st->max_list = max_list;
  st->fault[0] = st->fault[1] = &st->never;
  st->sq = calloc((size_t)(nsub ? nsub : 1), sizeof *st->sq);
  if (!st->sq) abort();
  for (int i = 0; i < nsub; i++) st->sq[i].extra_op = -1;
  return st;
}

void stream_free(Stream *st) {
  if (!st) return;
  for (int i = 0; i < st->nsub; i++) {
    SubQ *q = &st->sq[i];
    for (int k = 0; k < q->cap; k++) val_free(&q->q[k].val);
    free(q->q);
    if (q->bad) free(q->bad->st.list);
    free(q->bad);
  }
  free(st->sq);
  free(st);
}

static void account(Stream *st, int side, int64_t bytes) {
  st->held += (uint64_t)bytes;
  if (st->held > st->peak) st->peak = st->held;
  if (st->run[side]) st->run[side]->log_bytes += (uint64_t)bytes;
}

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

/* The queued event o against side's (op, k, v), v read in place: the
 * event it would make is built only for a difference. */
static void compare(Stream *st, int sub, int side, const Event *o, int op, EventKind k, const Value *v) {
  const Value *ref = side == STREAM_REF ? v : &o->val, *eng = side == STREAM_REF ? &o->val : v;
  if (o->op == op && o->kind == k && verify_value_equal(ref, eng)) {
    st->matched += (uint64_t)v->n;
    return;
  }
  Event mine = {.op = op, .kind = k, .val = *v}; /* v itself, read only: no copy */
  SubBad *b = bad_of(st, &st->sq[sub]);
  verify_event_pair(st->p, sub, side == STREAM_REF ? &mine : o, side == STREAM_REF ? o : &mine, &b->ok, &b->d, &b->st);
}

/* Drops what a queue holds: the other side will never match it. */
static void drop_queue(Stream *st, SubQ *q) {
  if (q->n && q->extra_op < 0) q->extra_op = q->q[q->head].op;
  for (int k = 0; k < q->n; k++) account(st, q->side, -(int64_t)event_bytes(&q->q[(q->head + k) & (q->cap - 1)].val));
  q->head = q->n = 0;
}

/* val_copy into lanes already allocated, without clearing the definedness
 * it overwrites. */
static void copy_value(Value *dst, const Value *src) {
  if (src->n > dst->cap) return val_copy(dst, src);
  dst->dtype = src->dtype, dst->rank = src->rank, dst->n = src->n;
  memcpy(dst->shape, src->shape, sizeof dst->shape); /* fixed size: moves, no call */
  if (src->n == 16) { /* the common vector, and below a scalar: fixed sizes again */
    memcpy(dst->v, src->v, 16 * sizeof *src->v);
    memcpy(dst->def, src->def, 16);
  } else if (src->n == 1) {
    dst->v[0] = src->v[0], dst->def[0] = src->def[0];
  } else {
    memcpy(dst->v, src->v, sizeof *src->v * (size_t)src->n);
    memcpy(dst->def, src->def, (size_t)src->n);
  }
}

static void push(Stream *st, SubQ *q, int side, int op, EventKind k, const Value *v) {
  if (q->n == q->cap) { /* grow the ring, keeping its order (its size a power of two: positions by a mask) */
    int cap = q->cap ? q->cap * 2 : 16;
    Event *e = calloc((size_t)cap, sizeof *e);
    if (!e) abort();
    for (int i = 0; i < q->cap; i++) e[i] = q->q[(q->head + i) & (q->cap - 1)];
    free(q->q);
    q->q = e, q->cap = cap, q->head = 0;
  }
  Event *e = &q->q[(q->head + q->n++) & (q->cap - 1)];
  q->side = side;
  e->op = op, e->kind = k;
  copy_value(&e->val, v);
  account(st, side, (int64_t)event_bytes(&e->val));
}

/* stream_event's cases but the common two (below). */
static __attribute__((noinline)) void stream_rare(Stream *st, SubQ *q, int op) {
  if (faulted(st, STREAM_REF) || faulted(st, STREAM_ENG)) { /* a fault is the verdict: the logs are not judged */
    if (q->n) drop_queue(st, q);
    return;
  }
  if (q->extra_op < 0) q->extra_op = op; /* the other side closed: nothing left to compare with */
}

static __attribute__((noinline)) void stream_pump(Stream *st, int sub) {
  st->pumping = true;
  st->pump(st->ctx, sub);
  st->pumping = false;
}

static void stream_event(void *ctx, int side, int sub, int op, EventKind k, const Value *v) {
  Stream *st = ctx;
  SubQ *q = &st->sq[sub];
  q->count[side]++;
  bool waits = q->n && q->side != side; /* the other side's matching event */
  if (unusual(st, side, waits)) return stream_rare(st, q, op);
  if (waits) { /* compare, drop */
    Event *o = &q->q[q->head];
    compare(st, sub, side, o, op, k, v);
    account(st, !side, -(int64_t)event_bytes(&o->val));
    q->head = (q->head + 1) & (q->cap - 1);
    q->n--;
    return;
  }
  push(st, q, side, op, k, v);
  if (side == STREAM_ENG && q->n >= STREAM_AHEAD && st->pump && !st->pumping) stream_pump(st, sub);
}

static void sink_ref(void *ctx, int sub, int op, EventKind k, const Value *v) { stream_event(ctx, STREAM_REF, sub, op, k, v); }
static void sink_eng(void *ctx, int sub, int op, EventKind k, const Value *v) { stream_event(ctx, STREAM_ENG, sub, op, k, v); }

void stream_attach(Stream *st, int side, RunResult *r) {
  st->run[side] = r;
  st->fault[side] = &r->faulted;
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

void stream_close(Stream *st, int side) {
  st->closed[side] = true;
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

uint64_t stream_held(const Stream *st) { return st->held; }
uint64_t stream_peak(const Stream *st) { return st->peak; }
