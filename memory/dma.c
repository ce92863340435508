/* memory/dma.c -- the fluid model of memory/dma.h. */
#include "dma.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Xfer {
  struct Xfer *next;
  DmaReq r;
  double left;       /* bytes still to move */
  double start;      /* cycle the engine starts it (after setup) */
  double ready;      /* enqueue + setup: the earliest start */
  bool active;
} Xfer;

struct DmaModel {
  int engines, cores;
  double engine_bpc, hbm_bpc, shared_bpc;
  uint64_t setup;
  double now;
  Xfer **queue;      /* per engine, FIFO; the head may be active */
  DmaEngineStats *st;
  double *rate;      /* scratch: each engine's current rate */
  int *shared;       /* scratch: active VMEM_SHARED transfers per core */
  int active;        /* transfers queued anywhere */
  Xfer *spare;       /* finished transfers, reused by the next submits (no allocation per DMA) */
  /* dma_next_event's answer, kept until a submit or an advance changes the
   * state it is a function of (the scheduler asks at every step). */
  bool next_known;
  uint64_t next;
};

DmaModel *dma_new(int engines, int cores, double engine_bpc, double hbm_bpc, double shared_bpc, uint64_t setup) {
  DmaModel *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->engines = engines;
  m->cores = cores;
  m->engine_bpc = engine_bpc > 0 ? engine_bpc : 1;
  m->hbm_bpc = hbm_bpc > 0 ? hbm_bpc : 1;
  m->shared_bpc = shared_bpc > 0 ? shared_bpc : 1;
  m->setup = setup;
  m->queue = calloc((size_t)engines, sizeof *m->queue);
  m->st = calloc((size_t)engines, sizeof *m->st);
  m->rate = calloc((size_t)engines, sizeof *m->rate);
  m->shared = calloc((size_t)(cores > 0 ? cores : 1), sizeof *m->shared);
  if (!m->queue || !m->st || !m->rate || !m->shared) {
    dma_free(m);
    return NULL;
  }
  return m;
}

static void free_list(Xfer *x) {
  for (Xfer *n; x; x = n) {
    n = x->next;
    free(x);
  }
}

void dma_free(DmaModel *m) {
  if (!m) return;
  for (int e = 0; e < m->engines && m->queue; e++) free_list(m->queue[e]);
  free_list(m->spare);
  free(m->queue);
  free(m->st);
  free(m->rate);
  free(m->shared);
  free(m);
}

static int queue_len(const DmaModel *m, int e) {
  int n = 0;
  for (const Xfer *x = m->queue[e]; x; x = x->next) n++;
  return n;
}

void dma_submit(DmaModel *m, const DmaReq *r) {
  Xfer *x = m->spare;
  if (x) m->spare = x->next;
  else if (!(x = malloc(sizeof *x))) abort();
  memset(x, 0, sizeof *x);
  x->r = *r;
  x->left = r->bytes;
  x->start = x->ready = (double)(r->t + m->setup);
  m->next_known = false;
  Xfer **tail = &m->queue[r->engine];
  while (*tail) tail = &(*tail)->next;
  *tail = x;
  m->active++;
  DmaEngineStats *s = &m->st[r->engine];
  s->transfers++;
  s->bytes += (uint64_t)r->bytes;
  uint64_t q = (uint64_t)queue_len(m, r->engine);
  if (q > s->max_queue) s->max_queue = q;
}

/* The rate of each engine's head transfer at the current moment. */
static void rates(const DmaModel *m, double *rate) {
  int hbm = 0, *shared = m->shared;
  memset(shared, 0, sizeof(int) * (size_t)(m->cores > 0 ? m->cores : 1));
  for (int e = 0; e < m->engines; e++) {
    const Xfer *x = m->queue[e];
    if (!x || x->start > m->now) continue;
    hbm += x->r.hbm;
    if (x->r.shared) shared[x->r.core]++;
  }
  for (int e = 0; e < m->engines; e++) {
    const Xfer *x = m->queue[e];
    rate[e] = 0;
    if (!x || x->start > m->now) continue;
    double r = m->engine_bpc;
    if (x->r.hbm && m->hbm_bpc / hbm < r) r = m->hbm_bpc / hbm;
    if (x->r.shared && m->shared_bpc / shared[x->r.core] < r) r = m->shared_bpc / shared[x->r.core];
    rate[e] = r;
  }
}

/* The next moment something changes: a head finishes or a setup ends. */
static double next_change(const DmaModel *m, const double *rate) {
  double t = INFINITY;
  for (int e = 0; e < m->engines; e++) {
    const Xfer *x = m->queue[e];
    if (!x) continue;
    if (x->start > m->now) t = fmin(t, x->start);
    else if (rate[e] > 0) t = fmin(t, m->now + x->left / rate[e]);
  }
  return t;
}

uint64_t dma_next_event(DmaModel *m) {
  if (!m->active) return DMA_NEVER;
  if (m->next_known) return m->next;
  rates(m, m->rate);
  double t = next_change(m, m->rate);
  m->next = isfinite(t) ? (uint64_t)ceil(t - 1e-9) : DMA_NEVER;
  m->next_known = true;
  return m->next;
}

/* A transfer's residency, counted from its own enqueue (an integral over
 * the model's steps would count it from the step before it was enqueued). */
static void landed(DmaEngineStats *s, const Xfer *x, double now, double setup) {
  s->setup_cycles += setup;
  s->queue_cycles += x->start - x->ready;
  s->transfer_cycles += now - x->start;
  s->occupancy_integral += now - (double)x->r.t;
}

int dma_advance(DmaModel *m, uint64_t until, int *tags, int max) {
  double *rate = m->rate;
  int done = 0;
  m->next_known = false;
  while (m->now < (double)until) {
    rates(m, rate);
    double c = fmin(next_change(m, rate), (double)until);
    double dt = c - m->now;
    for (int e = 0; e < m->engines; e++) {
      Xfer *x = m->queue[e];
      if (!x) continue;
      if (rate[e] > 0) {
        x->left -= rate[e] * dt;
        m->st[e].busy_cycles += dt;
      }
    }
    m->now = c;
    for (int e = 0; e < m->engines; e++) {
      Xfer *x = m->queue[e];
      if (!x || x->start > m->now || x->left > 1e-6) continue;
      if (done < max) tags[done++] = x->r.tag;
      landed(&m->st[e], x, m->now, (double)m->setup);
      m->queue[e] = x->next;
      if (m->queue[e] && m->queue[e]->start < m->now) m->queue[e]->start = m->now; /* FIFO: the next starts now */
      x->next = m->spare;
      m->spare = x;
      m->active--;
    }
    if (!isfinite(next_change(m, rate)) && c >= (double)until) break;
  }
  return done;
}

int dma_outstanding(const DmaModel *m, int engine) { return queue_len(m, engine); }
const DmaEngineStats *dma_stats(const DmaModel *m, int engine) { return &m->st[engine]; }

double dma_inflight_shared(const DmaModel *m, int core) {
  double b = 0;
  for (int e = 0; e < m->engines; e++) {
    const Xfer *x = m->queue[e];
    if (x && x->start <= m->now && x->r.shared && x->r.core == core) b += x->left;
  }
  return b;
}

double dma_inflight_bytes(const DmaModel *m, int space) {
  double b = 0;
  for (int e = 0; e < m->engines; e++) {
    const Xfer *x = m->queue[e];
    if (x && x->start <= m->now && (space == 0 ? x->r.hbm : x->r.shared)) b += x->left;
  }
  return b;
}
