/* memory/dma.c -- the fluid model of memory/dma.h. */
#include "dma.h"

#include <math.h>
#include <stdlib.h>

typedef struct Xfer {
  struct Xfer *next;
  DmaReq r;
  double left;       /* bytes still to move */
  double start;      /* cycle the engine starts it (after setup) */
  double ready;      /* enqueue + setup: the earliest start */
} Xfer;

struct DmaModel {
  int engines, cores;
  double engine_bpc, hbm_bpc, shared_bpc;
  uint64_t setup;
  double now;
  Xfer **queue;      /* per engine, FIFO; the head may be active */
  Xfer **tail;       /* per engine, the last transfer queued (appends in O(1)) */
  int *qlen;         /* per engine, the transfers queued */
  int *busy;         /* the engines with a transfer queued, ascending (the */
  int nbusy;         /* loops touch those alone, in the order a scan gives) */
  DmaEngineStats *st;
  double *rate;      /* each busy engine's current rate (see rates) */
  int *shared;       /* scratch: active VMEM_SHARED transfers per core */
  int active;        /* transfers queued anywhere */
  Xfer *spare;       /* finished transfers, reused by the next submits (no allocation per DMA) */
  /* The rates depend only on which heads are active: they hold until a
   * transfer is submitted or lands, or the clock reaches `pending`, the
   * first setup still running to end (then another head starts moving). */
  bool rates_known;
  double pending;
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
  size_t ne = (size_t)(engines > 0 ? engines : 1);
  m->queue = calloc(ne, sizeof *m->queue);
  m->tail = calloc(ne, sizeof *m->tail);
  m->qlen = calloc(ne, sizeof *m->qlen);
  m->busy = calloc(ne, sizeof *m->busy);
  m->st = calloc(ne, sizeof *m->st);
  m->rate = calloc(ne, sizeof *m->rate);
  m->shared = calloc((size_t)(cores > 0 ? cores : 1), sizeof *m->shared);
  if (!m->queue || !m->tail || !m->qlen || !m->busy || !m->st || !m->rate || !m->shared) {
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
  free(m->tail);
  free(m->qlen);
  free(m->busy);
  free(m->st);
  free(m->rate);
  free(m->shared);
  free(m);
}

/* Engine e joins the busy list, which stays ascending. */
static void busy_add(DmaModel *m, int e) {
  int k = m->nbusy++;
  for (; k > 0 && m->busy[k - 1] > e; k--) m->busy[k] = m->busy[k - 1];
  m->busy[k] = e;
}

void dma_submit(DmaModel *m, const DmaReq *r) {
  Xfer *x = m->spare;
  if (x) m->spare = x->next;
  else if (!(x = malloc(sizeof *x))) abort();
  x->next = NULL;
  x->r = *r;
  x->left = r->bytes;
  x->start = x->ready = (double)(r->t + m->setup);
  m->next_known = m->rates_known = false;
  int e = r->engine;
  if (m->queue[e]) m->tail[e]->next = x;
  else {
    m->queue[e] = x;
    busy_add(m, e);
  }
  m->tail[e] = x;
  m->active++;
  DmaEngineStats *s = &m->st[e];
  s->transfers++;
  s->bytes += (uint64_t)r->bytes;
  uint64_t q = (uint64_t)++m->qlen[e];
  if (q > s->max_queue) s->max_queue = q;
}

/* A head's rate with hbm heads active on HBM and `shared` on its port. */
static double head_rate(const DmaModel *m, const Xfer *x, int hbm, int shared) {
  double r = m->engine_bpc;
  if (x->r.hbm && m->hbm_bpc / hbm < r) r = m->hbm_bpc / hbm;
  if (x->r.shared && m->shared_bpc / shared < r) r = m->shared_bpc / shared;
  return r;
}

/* The rates of a lone busy engine: its head alone on every port. */
static void rates_lone(DmaModel *m) {
  int e = m->busy[0];
  const Xfer *x = m->queue[e];
  bool wait = x->start > m->now;
  m->rate[e] = wait ? 0 : head_rate(m, x, 1, 1);
  m->pending = wait ? x->start : INFINITY;
}

/* The rate of each busy engine's head transfer at the current moment:
 * min(engine rate, its fair share of each shared port it uses); computed
 * again only once the set of active heads may have changed. */
static void rates(DmaModel *m) {
  if (m->rates_known && m->now < m->pending) return;
  m->rates_known = true;
  if (m->nbusy == 1) return rates_lone(m);
  int hbm = 0, *shared = m->shared;
  double pending = INFINITY;
  for (int k = 0; k < m->nbusy; k++) {
    const Xfer *x = m->queue[m->busy[k]];
    if (x->r.shared) shared[x->r.core] = 0;
  }
  for (int k = 0; k < m->nbusy; k++) {
    const Xfer *x = m->queue[m->busy[k]];
    if (x->start > m->now) {
      if (x->start < pending) pending = x->start;
      continue;
    }
    hbm += x->r.hbm;
    if (x->r.shared) shared[x->r.core]++;
  }
  for (int k = 0; k < m->nbusy; k++) {
    int e = m->busy[k];
    const Xfer *x = m->queue[e];
    m->rate[e] = x->start > m->now ? 0 : head_rate(m, x, hbm, x->r.shared ? shared[x->r.core] : 1);
  }
  m->pending = pending;
}

/* When busy engine e's head next changes: its setup ends, or it lands. */
static double head_change(const DmaModel *m, int e) {
  const Xfer *x = m->queue[e];
  return x->start > m->now ? x->start : m->rate[e] > 0 ? m->now + x->left / m->rate[e] : INFINITY;
}

/* The next moment something changes: a head finishes or a setup ends
 * (with the rates current). */
static double next_change(const DmaModel *m) {
  if (m->nbusy == 1) return head_change(m, m->busy[0]);
  double t = INFINITY;
  for (int k = 0; k < m->nbusy; k++) {
    double c = head_change(m, m->busy[k]);
    if (c < t) t = c;
  }
  return t;
}

/* ceil(t) as a cycle (no libm call on the scheduler's path); t is finite
 * and below 2^63, and a negative t (a change at cycle 0) is cycle 0. */
static uint64_t cycle_ceil(double t) {
  if (!(t > 0)) return 0;
  uint64_t c = (uint64_t)t;
  return (double)c < t ? c + 1 : c;
}

uint64_t dma_next_event(DmaModel *m) {
  if (!m->active) return DMA_NEVER;
  if (m->next_known) return m->next;
  rates(m);
  double t = next_change(m);
  const Xfer *x = m->nbusy == 1 ? m->queue[m->busy[0]] : NULL;
  if (x && x->r.quiet && x->start > m->now) /* what the step to its start would then find, at once */
    t = x->start + x->left / head_rate(m, x, 1, 1);
  m->next = isfinite(t) ? cycle_ceil(t - 1e-9) : DMA_NEVER;
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

/* Every head that has moved its last byte by now lands, in engine order;
 * engines left empty leave the busy list. */
static int land(DmaModel *m, int *tags, int done, int max) {
  int kept = 0;
  for (int k = 0; k < m->nbusy; k++) {
    int e = m->busy[k];
    Xfer *x = m->queue[e];
    if (x->start > m->now || x->left > 1e-6) {
      m->busy[kept++] = e;
      continue;
    }
    if (done < max) tags[done++] = x->r.tag;
    landed(&m->st[e], x, m->now, (double)m->setup);
    m->queue[e] = x->next;
    m->qlen[e]--;
    if (m->queue[e]) {
      if (m->queue[e]->start < m->now) m->queue[e]->start = m->now; /* FIFO: the next starts now */
      m->busy[kept++] = e;
    }
    x->next = m->spare;
    m->spare = x;
    m->active--;
    m->rates_known = false;
  }
  m->nbusy = kept;
  return done;
}

int dma_advance(DmaModel *m, uint64_t until, int *tags, int max) {
  int done = 0;
  m->next_known = false;
  while (m->now < (double)until) {
    rates(m);
    double c = next_change(m);
    if (!(c < (double)until)) c = (double)until;
    double dt = c - m->now;
    for (int k = 0; k < m->nbusy; k++) {
      int e = m->busy[k];
      if (m->rate[e] > 0) {
        m->queue[e]->left -= m->rate[e] * dt;
        m->st[e].busy_cycles += dt;
      }
    }
    m->now = c;
    done = land(m, tags, done, max);
  }
  return done;
}

int dma_outstanding(const DmaModel *m, int engine) { return m->qlen[engine]; }
const DmaEngineStats *dma_stats(const DmaModel *m, int engine) { return &m->st[engine]; }

double dma_inflight_shared(const DmaModel *m, int core) {
  double b = 0;
  for (int k = 0; k < m->nbusy; k++) {
    const Xfer *x = m->queue[m->busy[k]];
    if (x->start <= m->now && x->r.shared && x->r.core == core) b += x->left;
  }
  return b;
}

double dma_inflight_bytes(const DmaModel *m, int space) {
  double b = 0;
  for (int k = 0; k < m->nbusy; k++) {
    const Xfer *x = m->queue[m->busy[k]];
    if (x->start <= m->now && (space == 0 ? x->r.hbm : x->r.shared)) b += x->left;
  }
  return b;
}
