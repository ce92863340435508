/* sim/engine.c -- the engine: lowered instructions on every subcore.
 *
 * Each subcore has a program counter and a register file of Values.  The
 * scheduler issues one instruction of each runnable subcore in turn, so the
 * subcores advance together; an instruction that cannot complete (a DMA
 * wait whose semaphore is short, a semaphore wait, a barrier) leaves its
 * subcore at the same pc to retry.  DMAs move their data when they are
 * enqueued and signal their semaphore then; a race-free program cannot tell
 * this from a copy that lands at its wait (SPEC §7.10).
 *
 * Memory operands are VDescs (lowering/lower.h).  An element is located by
 * a walk down the VDesc's levels with an explicit work list (a widening
 * bitcast splits one element into parts on several rows). */
#include "engine.h"


#include <math.h>
#include <time.h>

#include "../../memory/dma.h"
#include "../../memory/race.h"
#include "../../traces/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARTS 16

typedef enum { BLOCK_NONE, BLOCK_DMA, BLOCK_BARRIER, BLOCK_SEM } BlockKind;

typedef struct {
  int core, subcore, idx;
  int pc;
  bool done;
  Value *reg;
  uint8_t *written;
  uint64_t *ready;     /* per register: the cycle its value is available */
  int barrier_gen;
  bool at_barrier;
  uint64_t t;          /* the cycle its next instruction issues */
  uint64_t cost;       /* issue cycles of the instruction just executed */
  BlockKind blocked;
  uint64_t block_start;
  int sync_tag;        /* a sync_copy waiting for its transfer, or -1 */
  Value tmp;           /* scratch: results are built here, then swapped in */
} Sc;

/* What a DMA does when its last byte lands.  Records are recycled: a
 * record is freed when its wait retires it, so memory follows the DMAs in
 * flight, not the DMAs ever issued. */
typedef struct {
  int sub;             /* issuing subcore */
  Region *sem;         /* NULL for sync_copy */
  int64_t sem_off, bytes;
  bool live, done;
  int id;              /* issue order: the DMA's number in traces and diagnostics */
  int next;            /* the next DMA of its semaphore queue, or of the free list; -1 ends */
  int race;            /* its thread in the race detector */
  const char *src_space, *dst_space, *src_ref, *dst_ref;
  int line, col;
  uint64_t t0;
} DmaRec;

typedef struct {
  const Program *p;
  const Code *c;
  RunResult *r;
  Sc *sc;
  int nsub;
  uint64_t max_ops, max_cycles, max_log;
  uint8_t *op_start;  /* per instruction: 1 when it starts a program operation (--max-ops counts those) */
  DmaModel *dm;
  DmaRec *dmas;
  int ndmas, capdmas; /* records ever allocated (live or free) */
  int free_dma;       /* head of the free records, -1 when none */
  int issued;         /* DMAs issued so far: the next DMA's id */
  struct DmaQueue *dq; /* open-addressed by (semaphore, offset, issuer); key g == NULL: empty */
  int ndq, capdq;
  struct TraceSink *trace;
  RaceDetector *rd;
  struct {
    const Region *g;
    int64_t off;
    int slot;
    Loc signal;      /* the last semaphore_signal on it */
  } *semslots;       /* per semaphore: the race detector's object, the last signal */
  int nsemslots, capsemslots;
  uint32_t dma_read_tag, dma_write_tag; /* the DMA being enqueued */
  int dma_thread;    /* its race-detector thread */
  struct EV *cache;  /* per view: its resolution, when it has no register operands */
  uint8_t *cache_state; /* 0 unknown, 1 static, 2 dynamic, 3 cached */
  bool no_log, no_races, strict_races;
  bool woke;         /* a blocked subcore was released: rescan */
  uint8_t *warned;   /* per operation id: its duplicate-scatter warning was given */
  int nwarned;
  struct Hit *hits;  /* the scatter being run: element and lane of each write */
  int64_t caphits;
  int64_t *spans;    /* tracing: the (offset, bytes) pairs the access touched */
  int64_t nspans, capspans;
} Eng;

/* A view with its operands read: per level the evaluated starts/sizes and
 * the shape below (lvl[0] is the ref). */
typedef struct EV {
  const VDesc *vd;
  Region *reg;
  int rank[MAX_TRANSFORMS + 1];
  int64_t lvl[MAX_TRANSFORMS + 1][MAX_RANK];
  Dtype dt[MAX_TRANSFORMS + 1];
  int64_t start[MAX_TRANSFORMS][MAX_RANK];
  int64_t n;
  int top;
  char why[300];
  /* The fast path: when every level is an integer/slice indexer, a
   * same-width bitcast or a reshape of a dense view, and every level is in
   * bounds, element i sits at base + sum(idx_d * bstride_d) (bytes). */
  bool affine;
  int arank;
  int64_t base, adim[MAX_RANK], bstride[MAX_RANK];
} EV;

typedef struct {
  int64_t off;
  int n;
} Part;

/* The DMAs one subcore issued onto one semaphore element and has not yet
 * retired, in issue order.  One engine per subcore serves its transfers in
 * FIFO order, so the landed ones are a prefix of the queue: the copy a wait
 * retires (the oldest landed one) is the head, found without a scan. */
typedef struct DmaQueue {
  const Region *g;
  int64_t off;
  int sub;
  int head, tail;      /* record indices, -1 when empty */
  int last_id, last_line, last_col; /* the last DMA ever queued here */
} DmaQueue;

static bool efault(Eng *E, Sc *s, const Instr *in, FaultKind k, const char *msg) {
  run_fault(E->r, k, in->loc, s->core, s->subcore, in->op_id, "%s", msg);
  return false;
}

/* A lowering written by hand can pair operands of different lane counts;
 * the engine's loops trust them, so a mismatch stops the run as a
 * malformed lowering (exit 2), never a read past a register. */
static bool fits(Eng *E, Sc *s, const Instr *in, const char *what, int64_t have, const char *of, int64_t want) {
  if (have == want) return true;
  char msg[300];
  snprintf(msg, sizeof msg, "%s: the %s has %lld lanes, but %s has %lld %s", isa_mnemonic(in->op), what, (long long)have, of,
           (long long)want, strncmp(of, "the view", 8) ? "lanes" : "elements");
  return efault(E, s, in, FAULT_LOWERING, msg);
}

/* Operands that broadcast: n lanes or one. */
static bool fits1(Eng *E, Sc *s, const Instr *in, const char *what, int64_t have, const char *of, int64_t want) {
  return have == 1 || fits(E, s, in, what, have, of, want);
}

static Value *rd(Eng *E, Sc *s, const Instr *in, int r, bool *ok) {
  if (!s->written[r]) {
    *ok = efault(E, s, in, FAULT_UNINIT, "a name is read that was bound only on a branch that did not run");
    return NULL;
  }
  return &s->reg[r];
}

static int64_t scalar_of(const Value *v) { return dtype_is_float(v->dtype) ? (int64_t)v->v[0].f : v->v[0].i; }

static bool int_reg(Eng *E, Sc *s, const Instr *in, int r, int64_t *out) {
  bool ok = true;
  Value *v = rd(E, s, in, r, &ok);
  if (!ok || !fits(E, s, in, "scalar operand", v->n, "a scalar", 1)) return false;
  if (!v->def[0]) return efault(E, s, in, FAULT_UNINIT, "an index, bound or count is undefined");
  *out = scalar_of(v);
  return true;
}

static bool operand_value(Eng *E, Sc *s, const Instr *in, Operand o, int64_t *out) {
  int64_t r = 0;
  if (o.reg >= 0 && !int_reg(E, s, in, o.reg, &r)) return false;
  *out = o.imm + r;
  return true;
}

/* ---- views ---------------------------------------------------------------- */
/* One INDEX level of the affine form; false when it leaves the fast path. */
static bool affine_index(EV *ev, int k) {
  const Level *lv = &ev->vd->lev[k];
  if (lv->int_rank) return false;
  int64_t dim[MAX_RANK], st[MAX_RANK];
  int r = 0, si = 0;
  for (int d = 0; d < lv->n; d++) {
    int64_t start = ev->start[k][d];
    if (lv->ek[d] != IX_SLICE) {
      if (start < 0 || start >= ev->adim[d]) return false;
      ev->base += start * ev->bstride[d];
      continue;
    }
    int64_t size = ev->lvl[k + 1][si++];
    int64_t last; /* overflow-checked: a dynamic start may be near 2**63 */
    if (size > 0 && (start < 0 || __builtin_mul_overflow(size - 1, lv->stride[d], &last) ||
                     __builtin_add_overflow(start, last, &last) || last < 0 || last >= ev->adim[d]))
      return false;
    ev->base += start * ev->bstride[d];
    dim[r] = size;
    st[r++] = ev->bstride[d] * lv->stride[d];
  }
  ev->arank = r;
  memcpy(ev->adim, dim, sizeof dim);
  memcpy(ev->bstride, st, sizeof st);
  return true;
}

static bool affine_reshape(EV *ev, int k) {
  int64_t esize = dtype_size(ev->dt[k]), want = esize;
  for (int d = ev->arank - 1; d >= 0; d--) { /* dense row-major only */
    if (ev->adim[d] != 1 && ev->bstride[d] != want) return false;
    want *= ev->adim[d];
  }
  const Level *lv = &ev->vd->lev[k];
  ev->arank = lv->rank;
  int64_t b = esize;
  for (int d = lv->rank - 1; d >= 0; d--) {
    ev->adim[d] = lv->shape[d];
    ev->bstride[d] = b;
    b *= lv->shape[d];
  }
  return true;
}

static void ev_affine(EV *ev) {
  ev->affine = false;
  ev->base = 0;
  ev->arank = ev->rank[0];
  int64_t b = dtype_size(ev->dt[0]);
  for (int d = ev->arank - 1; d >= 0; d--) {
    ev->adim[d] = ev->lvl[0][d];
    ev->bstride[d] = b;
    b *= ev->lvl[0][d];
  }
  for (int k = 0; k < ev->vd->nlev; k++) {
    const Level *lv = &ev->vd->lev[k];
    bool ok = lv->kind == TR_INDEX     ? affine_index(ev, k)
              : lv->kind == TR_RESHAPE ? affine_reshape(ev, k)
                                       : dtype_size(ev->dt[k]) == dtype_size(lv->dtype);
    if (!ok) return;
  }
  ev->affine = true;
}

static bool ev_resolve_full(Eng *E, Sc *s, const Instr *in, int view, EV *ev) {
  const VDesc *vd = &E->c->views[view];
  ev->vd = vd;
  ev->why[0] = '\0';
  ev->rank[0] = vd->ref->rank;
  memcpy(ev->lvl[0], vd->ref->shape, sizeof ev->lvl[0]);
  ev->dt[0] = vd->ref->dtype;
  for (int k = 0; k < vd->nlev; k++) {
    const Level *lv = &vd->lev[k];
    ev->dt[k + 1] = lv->dtype;
    ev->rank[k + 1] = lv->rank;
    memcpy(ev->lvl[k + 1], lv->shape, sizeof ev->lvl[0]);
    if (lv->kind != TR_INDEX) continue;
    int r = 0;
    for (int d = 0; d < lv->n; d++) {
      if (!operand_value(E, s, in, lv->start[d], &ev->start[k][d])) return false;
      if (lv->ek[d] != IX_SLICE) continue;
      int64_t size;
      if (!operand_value(E, s, in, lv->size[d], &size)) return false;
      ev->lvl[k + 1][r++] = size;
    }
    if (!lv->int_rank) ev->rank[k + 1] = r;
  }
  ev->top = vd->nlev;
  ev->n = 1;
  for (int d = 0; d < ev->rank[ev->top]; d++) ev->n *= ev->lvl[ev->top][d];
  ev_affine(ev);
  return true;
}

static bool static_view(const VDesc *vd) {
  for (int k = 0; k < vd->nlev; k++)
    for (int d = 0; d < vd->lev[k].n; d++)
      if (vd->lev[k].start[d].reg >= 0 || vd->lev[k].size[d].reg >= 0) return false;
  return true;
}

/* Reads a view's operands.  A view without register operands resolves the
 * same way every time: it is resolved once and copied (only its instance
 * changes with the subcore). */
static bool ev_resolve(Eng *E, Sc *s, const Instr *in, int view, int core, int subcore, EV *ev) {
  const VDesc *vd = &E->c->views[view];
  if (E->cache_state[view] == 0) E->cache_state[view] = static_view(vd) ? 1 : 2;
  if (E->cache_state[view] == 1) {
    if (!ev_resolve_full(E, s, in, view, &E->cache[view])) return false;
    E->cache_state[view] = 3;
  }
  if (E->cache_state[view] == 3) {
    const EV *c = &E->cache[view];
    ev->vd = vd;
    ev->top = c->top;
    ev->n = c->n;
    ev->affine = c->affine;
    if (c->affine) { /* the fast path needs only these */
      ev->arank = c->arank;
      ev->base = c->base;
      memcpy(ev->adim, c->adim, sizeof(int64_t) * (size_t)c->arank);
      memcpy(ev->bstride, c->bstride, sizeof(int64_t) * (size_t)c->arank);
      ev->dt[ev->top] = c->dt[c->top];
      ev->rank[ev->top] = c->rank[c->top];
      memcpy(ev->lvl[ev->top], c->lvl[c->top], sizeof ev->lvl[0]);
    } else {
      *ev = *c;
    }
  } else if (!ev_resolve_full(E, s, in, view, ev)) {
    return false;
  }
  ev->reg = mem_region(&E->r->mem, vd->ref->index, core, subcore);
  return true;
}

typedef struct {
  int level;
  int64_t idx[MAX_RANK];
  int lo, nb;
} Work;

/* Index `idx` at level k to the parent index at level k-1: INDEX levels add
 * starts and scale by strides; the position of a slice dim in the child is
 * after the integer block when the integers are adjacent (SPEC §3.1.7). */
static bool up_index(EV *ev, int k, const int64_t *idx, int64_t *parent) {
  const Level *lv = &ev->vd->lev[k - 1];
  int first = -1, last = -1, nint = 0;
  for (int d = 0; d < lv->n; d++)
    if (lv->ek[d] != IX_SLICE) nint++, last = d, first = first < 0 ? d : first;
  int lead = (nint && last - first + 1 == nint) ? first : 0;
  int child = 0;
  for (int d = 0; d < lv->n; d++) {
    if (lv->ek[d] == IX_SLICE) {
      int pos = child < lead ? child : child + lv->int_rank;
      int64_t off;
      if (__builtin_mul_overflow(idx[pos], lv->stride[d], &off) || __builtin_add_overflow(ev->start[k - 1][d], off, &parent[d]))
        parent[d] = ev->start[k - 1][d] < 0 ? INT64_MIN : INT64_MAX; /* far outside either way */
      child++;
    } else {
      parent[d] = ev->start[k - 1][d];
    }
    if (parent[d] < 0 || parent[d] >= ev->lvl[k - 1][d]) {
      snprintf(ev->why, sizeof ev->why, "index %lld is outside dimension %d of size %lld (%s '%s')", (long long)parent[d], d,
               (long long)ev->lvl[k - 1][d], space_key(ev->vd->ref->space), ev->vd->ref->name);
      return false;
    }
  }
  return true;
}

static void to_index(int64_t flat, int rank, const int64_t *shape, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    int64_t n = shape[d] > 0 ? shape[d] : 1;
    idx[d] = flat % n;
    flat /= n;
  }
}

static int64_t to_flat(int rank, const int64_t *shape, const int64_t *idx) {
  int64_t f = 0;
  for (int d = 0; d < rank; d++) f = f * shape[d] + idx[d];
  return f;
}

static bool ev_parts(EV *ev, int64_t elem, Part *parts, int *np) {
  if (ev->affine) {
    int64_t off = ev->base;
    for (int d = ev->arank - 1; d >= 0; d--) {
      int64_t n = ev->adim[d] > 0 ? ev->adim[d] : 1;
      off += (elem % n) * ev->bstride[d];
      elem /= n;
    }
    parts[0] = (Part){off, dtype_size(ev->dt[ev->top])};
    *np = 1;
    return true;
  }
  Work stack[MAX_PARTS];
  int sp = 0;
  *np = 0;
  stack[sp].level = ev->top;
  to_index(elem, ev->rank[ev->top], ev->lvl[ev->top], stack[sp].idx);
  stack[sp].lo = 0;
  stack[sp++].nb = dtype_size(ev->dt[ev->top]);
  while (sp) {
    Work w = stack[--sp];
    if (w.level == 0) {
      if (*np >= MAX_PARTS) return false;
      parts[(*np)++] = (Part){to_flat(ev->rank[0], ev->lvl[0], w.idx) * dtype_size(ev->dt[0]) + w.lo, w.nb};
      continue;
    }
    const Level *lv = &ev->vd->lev[w.level - 1];
    Work up = w;
    up.level--;
    if (lv->kind == TR_INDEX) {
      if (!up_index(ev, w.level, w.idx, up.idx)) return false;
    } else if (lv->kind == TR_RESHAPE) {
      to_index(to_flat(ev->rank[w.level], ev->lvl[w.level], w.idx), ev->rank[up.level], ev->lvl[up.level], up.idx);
    } else {
      int pb = dtype_size(ev->dt[up.level]), cb = dtype_size(ev->dt[w.level]), d2 = ev->rank[up.level] - 2;
      if (pb > cb) { /* narrowing */
        up.idx[d2] = w.idx[d2] / (pb / cb);
        up.lo = w.lo + (int)(w.idx[d2] % (pb / cb)) * cb;
      } else if (pb < cb) { /* widening: parts in reverse so the low part pops first */
        for (int k = cb / pb - 1; k >= 0; k--) {
          int a = w.lo > k * pb ? w.lo : k * pb, b = w.lo + w.nb < (k + 1) * pb ? w.lo + w.nb : (k + 1) * pb;
          if (a >= b || sp >= MAX_PARTS) continue;
          Work part = up;
          part.idx[d2] = w.idx[d2] * (cb / pb) + k;
          part.lo = a - k * pb;
          part.nb = b - a;
          stack[sp++] = part;
        }
        continue;
      }
    }
    if (sp >= MAX_PARTS) return false;
    stack[sp++] = up;
  }
  /* the pops visit parts high to low for widening; order them by the element's byte order */
  return true;
}

static Cell ev_read(EV *ev, const Part *pt, int np, uint8_t *def) {
  uint8_t b[16];
  int k = 0;
  *def = 1;
  for (int i = 0; i < np; i++)
    for (int j = 0; j < pt[i].n; j++) {
      b[k++] = ev->reg->bytes[pt[i].off + j];
      *def &= mem_defined(ev->reg, pt[i].off + j);
    }
  return dtype_load(ev->dt[ev->top], b);
}

static void ev_write(EV *ev, const Part *pt, int np, Cell c) {
  uint8_t b[16];
  for (int i = 0; i < np; i++) mem_set_defined(ev->reg, pt[i].off, pt[i].n, true);
  dtype_store(ev->dt[ev->top], c, b);
  int k = 0;
  for (int i = 0; i < np; i++)
    for (int j = 0; j < pt[i].n; j++) {
      ev->reg->bytes[pt[i].off + j] = b[k++];
    }
}

/* An element left undefined by a store of an undefined lane. */
static void ev_undef(EV *ev, const Part *pt, int np) {
  for (int i = 0; i < np; i++) mem_set_defined(ev->reg, pt[i].off, pt[i].n, false);
}

static bool ev_oob(Eng *E, Sc *s, const Instr *in, EV *ev) { return efault(E, s, in, FAULT_OOB, ev->why); }

/* ---- race detection (memory/race.h) ------------------------------------- */
static int64_t dense_block(const EV *ev);

static int64_t aff_off(const EV *ev, int64_t i);

/* A DMA side covering elements [e0, e0 + n) of ev (one indirect row). */
static uint32_t race_open_rows(Eng *E, Sc *s, const Instr *in, bool write, bool atomic, int dma, const EV *ev, int64_t e0, int64_t n) {
  if (!E->rd) return 0;
  RaceAccess a = {in->op_id, in->loc.line, in->loc.col, s->core, s->subcore, s->t, write, atomic, dma, 0, 0};
  int64_t es = dtype_size(ev->dt[ev->top]), blk = ev->affine ? dense_block(ev) : 0;
  if (ev->affine && n > 0 && blk > 0 && e0 % blk + n <= blk) {
    a.span_lo = aff_off(ev, e0);
    a.span_hi = a.span_lo + n * es;
  }
  return race_begin(E->rd, &a, s->idx);
}

/* ev: the view the access covers (its byte span when it is one run), or NULL. */
static uint32_t race_open(Eng *E, Sc *s, const Instr *in, bool write, bool atomic, int dma, const EV *ev) {
  if (!E->rd) return 0;
  RaceAccess a = {in->op_id, in->loc.line, in->loc.col, s->core, s->subcore, s->t, write, atomic, dma, 0, 0};
  if (ev && ev->affine && ev->n > 0 && dense_block(ev) >= ev->n) {
    a.span_lo = ev->base;
    a.span_hi = ev->base + ev->n * dtype_size(ev->dt[ev->top]);
  }
  return race_begin(E->rd, &a, s->idx);
}

static void describe(const RaceAccess *a, char *buf, size_t n) {
  if (a->dma >= 0)
    snprintf(buf, n, "the %s by the DMA that subcore %d.%d started at line %d (cycle %llu)", a->write ? "write" : "read", a->core,
             a->subcore, a->line, (unsigned long long)a->cycle);
  else
    snprintf(buf, n, "the %s by subcore %d.%d at line %d (cycle %llu)", a->write ? "write" : "read", a->core, a->subcore, a->line,
             (unsigned long long)a->cycle);
}

/* The race report's detail, the same for a fault and a benign race. */
static void race_text(Eng *E, const RaceReport *rep, char *buf, size_t n) {
  char a[200], b[200], name[160];
  describe(&rep->first, a, sizeof a);
  describe(&rep->second, b, sizeof b);
  const Ref *ref = program_ref(E->p, rep->region->name);
  run_instance_name(ref, rep->region, name, sizeof name);
  snprintf(buf, n, "%s of bytes [%lld, %lld) of %s '%s' races with %s: no wait, barrier or semaphore orders them", b,
           (long long)rep->lo, (long long)rep->hi, space_key(ref->space), name, a);
}

static bool race_fault(Eng *E, const RaceReport *rep) {
  char text[700];
  race_text(E, rep, text, sizeof text);
  run_fault(E->r, FAULT_RACE, (Loc){E->p->file, rep->second.line, rep->second.col}, rep->second.core, rep->second.subcore,
            rep->second.op, "%s", text);
  return false;
}

/* Benign races (SPEC §10.2) fault at once under --strict-races; otherwise
 * they become warnings when the run ends (race_benign_warn), so that a
 * write whose later bytes differ reports only its fault. */
static bool race_benign(Eng *E) {
  RaceReport rep;
  if (!E->strict_races) return true;
  if (race_benign_next(E->rd, &rep)) return race_fault(E, &rep);
  return true;
}

/* The flat index ranges of the undefined elements of g, as text. */
static int64_t undefined_ranges(const Ref *ref, const Region *g, char *buf, size_t n) {
  int sz = dtype_size(ref->dtype), shown = 0;
  int64_t count = 0;
  size_t len = 0;
  buf[0] = 0;
  for (int64_t e = 0; e < ref->nelems; e++) {
    if (mem_range_defined(g, e * sz, sz)) continue;
    int64_t lo = e;
    while (e + 1 < ref->nelems && !mem_range_defined(g, (e + 1) * sz, sz)) e++;
    count += e + 1 - lo;
    if (shown++ < 8 && len < n) len += (size_t)snprintf(buf + len, n - len, "%s[%lld, %lld)", shown > 1 ? ", " : "", (long long)lo, (long long)e + 1);
    else if (shown == 9 && len < n) len += (size_t)snprintf(buf + len, n - len, ", ...");
  }
  return count;
}

/* SPEC §10.1: a warning names each HBM ref (the kernel's inputs and
 * outputs) left holding undefined elements when the run ends. */
static void undefined_outputs(Eng *E) {
  for (int k = 0; k < E->p->nrefs; k++) {
    const Ref *ref = E->p->refs[k];
    if (ref->space != SP_HBM) continue;
    char ranges[400];
    int64_t count = undefined_ranges(ref, mem_region(&E->r->mem, k, 0, 0), ranges, sizeof ranges);
    if (!count) continue;
    RunWarning *w = run_warning(E->r, "undefined-output", ref->loc, -1, -1);
    if (w)
      snprintf(w->text, sizeof w->text, "hbm ref '%s' holds %lld undefined element(s) of %lld at the end of the run, at flat indices %s",
               ref->name, (long long)count, (long long)ref->nelems, ranges);
  }
}

static void race_benign_warn(Eng *E) {
  RaceReport rep;
  const Fault *f = &E->r->fault;
  while (race_benign_next(E->rd, &rep)) {
    if (E->r->faulted && f->kind == FAULT_RACE && f->op == rep.second.op && f->core == rep.second.core && f->subcore == rep.second.subcore)
      continue; /* the same access turned out to differ further on */
    RunWarning *w = run_warning(E->r, "benign-race", (Loc){E->p->file, rep.second.line, rep.second.col}, rep.second.core,
                                rep.second.subcore);
    if (!w) continue;
    char text[700];
    race_text(E, &rep, text, sizeof text);
    snprintf(w->text, sizeof w->text, "benign race: %s; both writes store the same bytes (SPEC §10.2)", text);
  }
}

static bool race_parts(Eng *E, uint32_t tag, const Region *g, const Part *pt, int np) {
  if (!tag) return true;
  RaceReport rep;
  for (int i = 0; i < np; i++)
    if (!race_bytes(E->rd, tag, g, pt[i].off, pt[i].n, &rep)) return race_fault(E, &rep);
  return race_benign(E);
}

static int sem_slot(Eng *E, const Region *g, int64_t off) {
  for (int i = 0; i < E->nsemslots; i++)
    if (E->semslots[i].g == g && E->semslots[i].off == off) return E->semslots[i].slot;
  if (E->nsemslots == E->capsemslots) {
    E->capsemslots = E->capsemslots ? E->capsemslots * 2 : 16;
    E->semslots = realloc(E->semslots, sizeof *E->semslots * (size_t)E->capsemslots);
    if (!E->semslots) abort();
  }
  E->semslots[E->nsemslots].g = g;
  E->semslots[E->nsemslots].off = off;
  E->semslots[E->nsemslots].signal = (Loc){NULL, 0, 0};
  return E->semslots[E->nsemslots++].slot = race_slot(E->rd);
}

/* tag 0: a read for verification's own bookkeeping, not an access. */
static int64_t dense_block(const EV *ev);

/* Whether all n elements of an affine view sit densely from its base. */
static bool dense_all(const EV *ev) { return ev->affine && dense_block(ev) >= ev->n; }

static bool load_all(Eng *E, Sc *s, const Instr *in, EV *ev, Value *out, uint32_t tag) {
  val_shape(out, ev->dt[ev->top], ev->rank[ev->top], ev->lvl[ev->top]);
  if (!tag && ev->n > 0 && dense_all(ev)) { /* the fast path */
    Dtype t = ev->dt[ev->top];
    int64_t es = dtype_size(t);
    const uint8_t *b = ev->reg->bytes + ev->base;
    dtype_load_n(t, b, ev->n, out->v);
    if (mem_range_defined(ev->reg, ev->base, ev->n * es)) memset(out->def, 1, (size_t)ev->n);
    else
      for (int64_t i = 0; i < ev->n; i++) out->def[i] = mem_range_defined(ev->reg, ev->base + i * es, es);
    return true;
  }
  Part pt[MAX_PARTS];
  int np;
  for (int64_t i = 0; i < ev->n; i++) {
    if (!ev_parts(ev, i, pt, &np)) return ev_oob(E, s, in, ev);
    if (tag && !race_parts(E, tag, ev->reg, pt, np)) return false;
    out->v[i] = ev_read(ev, pt, np, &out->def[i]);
  }
  return true;
}

/* ---- arithmetic --------------------------------------------------------- */
static void set_reg(Sc *s, int r) { s->written[r] = 1; }

/* The scratch value becomes register r (no copy, no allocation). */
static void swap_in(Sc *s, int r) {
  Value v = s->reg[r];
  s->reg[r] = s->tmp;
  s->tmp = v;
  set_reg(s, r);
}

/* ---- timing helpers (the costs are the chip table's, sim/chips.h) ---------- */
static const ChipParams *cp(const Eng *E) { return &E->p->params; }

/* Issue slots of an n-element vector op: one per num_lanes 32-bit words. */
static uint64_t groups(const Eng *E, int64_t n, Dtype t) {
  int64_t words = (n * dtype_size(t) + 3) / 4, lanes = cp(E)->num_lanes > 0 ? cp(E)->num_lanes : 1;
  return words <= lanes ? 1 : (uint64_t)((words + lanes - 1) / lanes);
}

static uint64_t value_cost(const Eng *E, const Value *v) {
  if (!v || v->rank == 0) return (uint64_t)cp(E)->scalar_issue_cycles;
  return groups(E, v->n, v->dtype) * (uint64_t)cp(E)->vector_issue_cycles;
}

static void count_access(Eng *E, Space sp, int64_t bytes, bool write) {
  SpaceStats *st = &E->r->stats.space[sp];
  st->accesses++;
  if (write) st->bytes_written += (uint64_t)bytes;
  else st->bytes_read += (uint64_t)bytes;
}

static void val_text(const Value *v, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  if (v->rank) len += (size_t)snprintf(buf, n, "[");
  for (int64_t i = 0; i < v->n && i < 8 && len < n; i++) {
    char c[48];
    if (v->def[i]) dtype_format(v->dtype, v->v[i], c, sizeof c);
    else snprintf(c, sizeof c, "?");
    len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", c);
  }
  if (v->rank && len < n) snprintf(buf + len, n - len, "%s]", v->n > 8 ? ", ..." : "");
}

/* ---- the bytes an access touched, for its trace event -------------------- */
static void span_add(Eng *E, const Part *pt, int np) {
  if (!E->spans || E->nspans + np > E->capspans) {
    int64_t c = E->capspans ? E->capspans * 2 : 64;
    while (c < E->nspans + np) c *= 2;
    int64_t *q = realloc(E->spans, sizeof *q * 2 * (size_t)c);
    if (!q) abort();
    E->spans = q, E->capspans = c;
  }
  for (int i = 0; i < np; i++) E->spans[2 * E->nspans] = pt[i].off, E->spans[2 * E->nspans++ + 1] = pt[i].n;
}

/* Starts the list of a gather or scatter (allocated, so that an access
 * with every lane masked off lists [] rather than null). */
static void spans_begin(Eng *E) {
  E->nspans = 0;
  if (E->trace) span_add(E, NULL, 0);
}

static int span_cmp(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Sorts the spans by offset and merges those that touch or overlap. */
static void spans_merge(Eng *E) {
  if (!E->nspans) return;
  qsort(E->spans, (size_t)E->nspans, 2 * sizeof *E->spans, span_cmp);
  int64_t k = 0, *sp = E->spans;
  for (int64_t i = 1; i < E->nspans; i++) {
    int64_t end = sp[2 * k] + sp[2 * k + 1], e2 = sp[2 * i] + sp[2 * i + 1];
    if (sp[2 * i] <= end) sp[2 * k + 1] = (e2 > end ? e2 : end) - sp[2 * k];
    else k++, sp[2 * k] = sp[2 * i], sp[2 * k + 1] = sp[2 * i + 1];
  }
  E->nspans = k + 1;
}

/* The spans of every element of a view (it resolved, so each element has
 * its parts). */
static void view_spans(Eng *E, EV *ev) {
  Part pt[MAX_PARTS];
  int np;
  E->nspans = 0;
  for (int64_t i = 0; i < ev->n; i++)
    if (ev_parts(ev, i, pt, &np)) span_add(E, pt, np);
  spans_merge(E);
}

/* indexed: a gather or scatter whose lanes' spans E->spans holds (listed
 * always); otherwise the view's, listed unless they are one dense run. */
static void trace_access(Eng *E, Sc *s, const Instr *in, EV *ev, const Value *old, const Value *nw, uint64_t cost, bool indexed,
                         int64_t lanes) {
  if (!E->trace) return;
  char o[400] = "", w[400] = "";
  if (old) val_text(old, o, sizeof o);
  if (nw) val_text(nw, w, sizeof w);
  TraceEvent te;
  memset(&te, 0, sizeof te);
  te.kind = TE_ACCESS;
  te.t0 = s->t;
  te.t1 = s->t + (cost ? cost : 1);
  te.core = s->core;
  te.subcore = s->subcore;
  te.dma = -1;
  te.op = isa_mnemonic(in->op);
  te.space = space_key(ev->vd->ref->space);
  te.ref = ev->vd->ref->name;
  te.bytes = lanes * dtype_size(ev->dt[ev->top]);
  if (indexed) spans_merge(E);
  else if (ev->n > 0 && dense_all(ev)) E->nspans = 0, te.offset = ev->base;
  else view_spans(E, ev);
  bool one_run = !indexed && E->nspans == 1 && E->spans[1] == te.bytes;
  if (E->nspans) te.offset = E->spans[0];
  if ((indexed || E->nspans) && !one_run) te.spans = E->spans, te.nspans = E->nspans;
  te.old_text = old ? o : NULL;
  te.new_text = nw ? w : NULL;
  te.line = in->loc.line;
  te.col = in->loc.col;
  trace_event(E->trace, &te);
}

/* Whether an arith.binary is int32 +, - or * on int32 (or weak int64
 * constant) operands: the low 32 bits of the 64-bit result are the answer. */
static bool int32_wrap(const Instr *in, const Value *a, const Value *b) {
  bool op = in->sub == OP_ADD || in->sub == OP_SUB || in->sub == OP_MUL;
  bool ints = (a->dtype == DT_INT32 || a->dtype == DT_INT64) && (b->dtype == DT_INT32 || b->dtype == DT_INT64);
  return op && ints && in->uty == DT_INT32 && in->ty == DT_INT32;
}

static bool x_binary(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *a = rd(E, s, in, in->a, &ok), *b = ok ? rd(E, s, in, in->b, &ok) : NULL;
  if (!ok) return false;
  const Value *big = a->n >= b->n ? a : b;
  if (!fits1(E, s, in, "operand a", a->n, "operand b", big->n) || !fits1(E, s, in, "operand b", b->n, "operand a", big->n))
    return false;
  Value *t = &s->tmp;
  val_shape(t, in->ty, big->rank, big->shape);
  if (int32_wrap(in, a, b)) { /* int32 +, -, *: the common case, without a per-lane dispatch */
    for (int64_t i = 0; i < t->n; i++) {
      int64_t ia = a->n == 1 ? 0 : i, ib = b->n == 1 ? 0 : i;
      uint64_t x = (uint64_t)a->v[ia].i, y = (uint64_t)b->v[ib].i;
      t->def[i] = a->def[ia] && b->def[ib];
      t->v[i].i = (int32_t)(uint32_t)(in->sub == OP_ADD ? x + y : in->sub == OP_SUB ? x - y : x * y);
    }
    swap_in(s, in->d);
    return true;
  }
  bool ca = a->dtype != in->uty, cb = b->dtype != in->uty;
  for (int64_t i = 0; i < t->n; i++) {
    int64_t ia = a->n == 1 ? 0 : i, ib = b->n == 1 ? 0 : i;
    t->def[i] = a->def[ia] && b->def[ib];
    if (!t->def[i]) continue;
    Cell x = ca ? alu_convert(a->dtype, in->uty, a->v[ia]) : a->v[ia], y = cb ? alu_convert(b->dtype, in->uty, b->v[ib]) : b->v[ib];
    if (alu_binary(in->sub, in->uty, in->ty, x, y, &t->v[i]) == ALU_DIVZERO) {
      return efault(E, s, in, FAULT_DIVZERO, "integer division by zero");
    }
  }
  swap_in(s, in->d);
  return true;
}

static bool x_unary(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *a = rd(E, s, in, in->a, &ok);
  if (!ok) return false;
  Value *t = &s->tmp;
  val_shape(t, in->ty, a->rank, a->shape);
  for (int64_t i = 0; i < a->n; i++) {
    t->def[i] = a->def[i];
    t->v[i] = in->sub == OP_NOT ? alu_unary(OP_NOT, a->dtype, a->v[i]) : alu_unary(in->sub, in->ty, alu_convert(a->dtype, in->ty, a->v[i]));
  }
  swap_in(s, in->d);
  return true;
}

static bool x_select(Eng *E, Sc *s, const Instr *in) {
  bool ok = true, w = in->op == I_SELECT;
  Value *m = w ? rd(E, s, in, in->a, &ok) : NULL;
  Value *a = ok ? rd(E, s, in, w ? in->b : in->a, &ok) : NULL;
  Value *b = ok ? rd(E, s, in, w ? in->c : in->b, &ok) : NULL;
  if (!ok) return false;
  const Value *big = a;
  if (b->n > big->n) big = b;
  if (m && m->n > big->n) big = m;
  if (!fits1(E, s, in, "first operand", a->n, "the result", big->n) || !fits1(E, s, in, "second operand", b->n, "the result", big->n) ||
      (m && !fits1(E, s, in, "condition", m->n, "the result", big->n)))
    return false;
  Value *t = &s->tmp;
  val_shape(t, in->ty, big->rank, big->shape);
  for (int64_t i = 0; i < t->n; i++) {
    int64_t ia = a->n == 1 ? 0 : i, ib = b->n == 1 ? 0 : i;
    Cell x = alu_convert(a->dtype, in->uty, a->v[ia]), y = alu_convert(b->dtype, in->uty, b->v[ib]);
    if (w) {
      int64_t im = m->n == 1 ? 0 : i;
      bool pick = alu_truthy(m->dtype, m->v[im]);
      t->v[i] = pick ? x : y;
      t->def[i] = m->def[im] && (pick ? a->def[ia] : b->def[ib]);
      continue;
    }
    t->v[i] = alu_minmax(in->uty, x, y, in->imm == 1);
    t->def[i] = a->def[ia] && b->def[ib];
  }
  swap_in(s, in->d);
  return true;
}

static bool x_misc_value(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *t = &s->tmp;
  if (in->op == I_CONST) {
    val_scalar(t, in->ty, in->ty == DT_FLOAT64 ? (Cell){.f = in->fimm} : (Cell){.i = in->imm});
  } else if (in->op == I_COORD) {
    val_scalar(t, DT_INT32, (Cell){.i = in->imm ? s->subcore : s->core});
  } else if (in->op == I_IOTA) {
    int64_t n = in->imm;
    val_shape(t, DT_INT32, 1, &n);
    for (int64_t i = 0; i < n; i++) t->v[i].i = i, t->def[i] = 1;
  } else if (in->op != I_FROM_ELEMENTS) {
    Value *a = rd(E, s, in, in->a, &ok);
    if (!ok) return false;
    if (in->op == I_MOV) {
      val_copy(t, a);
    } else if (in->op == I_CAST) {
      val_shape(t, in->ty, a->rank, a->shape);
      Cell (*conv)(Dtype, Dtype, Cell) = in->flags & IF_TRUNCATE ? alu_convert_truncate : alu_convert;
      for (int64_t i = 0; i < a->n; i++) t->v[i] = conv(a->dtype, in->ty, a->v[i]), t->def[i] = a->def[i];
    } else if (in->op == I_BROADCAST) {
      if (!fits(E, s, in, "operand", a->n, "a scalar", 1)) return false;
      val_shape(t, in->ty, in->rank, in->shape);
      for (int64_t i = 0; i < t->n; i++) t->v[i] = alu_convert(a->dtype, in->ty, a->v[0]), t->def[i] = a->def[0];
    } else {
      int64_t off = 0;
      if (in->rank > a->rank) return efault(E, s, in, FAULT_LOWERING, "vector.extract: more indices than the operand has dimensions");
      for (int k = 0; k < in->rank; k++) {
        if (in->shape[k] < -a->shape[k] || in->shape[k] >= a->shape[k])
          return efault(E, s, in, FAULT_LOWERING, "vector.extract: an index is outside the operand's shape");
        int64_t i = in->shape[k] < 0 ? in->shape[k] + a->shape[k] : in->shape[k];
        off = off * a->shape[k] + i;
      }
      int64_t inner = 1;
      for (int k = in->rank; k < a->rank; k++) inner *= a->shape[k];
      val_shape(t, a->dtype, a->rank - in->rank, a->shape + in->rank);
      memcpy(t->v, a->v + off * inner, sizeof(Cell) * (size_t)inner);
      memcpy(t->def, a->def + off * inner, (size_t)inner);
    }
  } else {
    for (int64_t k = 0; k < in->imm; k++) {
      Value *it = rd(E, s, in, in->a + (int)k, &ok);
      if (!ok) return false;
      if (k == 0 && it->rank >= MAX_RANK) return efault(E, s, in, FAULT_LOWERING, "vector.from_elements: the result would have more than 8 dimensions");
      if (k > 0 && !fits(E, s, in, "element", it->n, "the first element", t->n / in->imm)) return false;
      if (k == 0) {
        int64_t shape[MAX_RANK];
        shape[0] = in->imm;
        memcpy(shape + 1, it->shape, sizeof(int64_t) * (size_t)it->rank);
        val_shape(t, in->ty, it->rank + 1, shape);
      }
      for (int64_t i = 0; i < it->n; i++) t->v[k * it->n + i] = alu_convert(it->dtype, in->ty, it->v[i]), t->def[k * it->n + i] = it->def[i];
    }
  }
  swap_in(s, in->d);
  return true;
}

/* ---- memory instructions ------------------------------------------------- */
static void log_value(Eng *E, Sc *s, const Instr *in, char kind, const Value *v) {
  if (kind && !E->no_log) run_log(E->r, s->idx, in->op_id, (EventKind)kind, v);
}

static bool mask_of(Eng *E, Sc *s, const Instr *in, Value **m) {
  bool ok = true;
  *m = NULL;
  if (in->mask < 0) return true;
  *m = rd(E, s, in, in->mask, &ok);
  if (!ok) return false;
  for (int64_t i = 0; i < (*m)->n; i++)
    if (!(*m)->def[i]) return efault(E, s, in, FAULT_UNINIT, "a mask lane is undefined");
  return true;
}

/* Masked loads expand (SPEC §5.3): lane p_k of the result is element k. */
static bool x_load(Eng *E, Sc *s, const Instr *in) {
  EV ev;
  Value *m, mem = {0};
  if (!mask_of(E, s, in, &m) || !ev_resolve(E, s, in, in->view, s->core, s->subcore, &ev)) return false;
  if (m && !fits(E, s, in, "mask", m->n, "the view", ev.n)) return false;
  uint32_t tag = race_open(E, s, in, false, false, -1, &ev);
  Value *d = &s->reg[in->d];
  if (!m) { /* straight into the scratch value, then swapped in: no allocation */
    if (!load_all(E, s, in, &ev, &s->tmp, tag)) return false;
    swap_in(s, in->d);
  } else {
    if (!load_all(E, s, in, &ev, &mem, tag)) return val_free(&mem), false;
    Dtype t = in->op == I_VLOAD ? ev.vd->ref->dtype : mem.dtype;
    val_shape(d, t, mem.rank, mem.shape);
    for (int64_t i = 0, k = 0; i < m->n; i++) {
      if (!alu_truthy(m->dtype, m->v[i])) continue;
      int64_t src = in->flags & IF_ELEM_P ? i : k, dst = in->flags & IF_LANE_K ? k : i; /* isa.h ISA_FLAGS */
      d->v[dst] = mem.v[src];
      d->def[dst] = mem.def[src];
      k++;
    }
  }
  val_free(&mem);
  set_reg(s, in->d);
  log_value(E, s, in, in->log, d);
  bool scalar = in->op == I_LOAD;
  s->cost = scalar ? (uint64_t)cp(E)->scalar_issue_cycles : groups(E, ev.n, ev.dt[ev.top]) * (uint64_t)cp(E)->vector_issue_cycles;
  s->ready[in->d] = s->t + (uint64_t)(scalar ? cp(E)->smem_latency_cycles : cp(E)->vmem_latency_cycles);
  count_access(E, ev.vd->ref->space, ev.n * dtype_size(ev.dt[ev.top]), false);
  trace_access(E, s, in, &ev, in->log == 'O' ? d : NULL, in->log == 'O' ? NULL : d, s->cost, false, ev.n);
  return true;
}

/* Masked stores compress: element k takes lane p_k; add stores add. */
static bool x_store(Eng *E, Sc *s, const Instr *in) {
  EV ev;
  Value *m, *x;
  bool ok = true;
  x = rd(E, s, in, in->a, &ok);
  if (!ok || !mask_of(E, s, in, &m) || !ev_resolve(E, s, in, in->view, s->core, s->subcore, &ev)) return false;
  if ((m && !fits(E, s, in, "mask", m->n, "the view", ev.n)) || !fits1(E, s, in, "value", x->n, "the view", ev.n)) return false;
  Dtype t = ev.dt[ev.top];
  Part pt[MAX_PARTS];
  int np;
  uint32_t tag = race_open(E, s, in, true, false, -1, m ? NULL : &ev);
  if (!m && !tag && !in->add && dense_all(&ev) && val_all_defined(x)) { /* the fast path */
    int64_t es = dtype_size(t);
    uint8_t *b = ev.reg->bytes + ev.base;
    if (x->dtype == t && x->n == ev.n) dtype_store_n(t, x->v, ev.n, b); /* no conversion */
    else
      for (int64_t i = 0; i < ev.n; i++) dtype_store(t, alu_convert(x->dtype, t, x->v[x->n == 1 ? 0 : i]), b + i * es);
    mem_set_defined(ev.reg, ev.base, ev.n * es, true);
  } else
  for (int64_t i = 0, k = 0; i < (m ? m->n : ev.n); i++) {
    if (m && !alu_truthy(m->dtype, m->v[i])) continue;
    int64_t lane = m && (in->flags & IF_LANE_K) ? k : i; /* isa.h ISA_FLAGS */
    int64_t elem = m && !(in->flags & IF_ELEM_P) ? k : i;
    k++;
    int64_t xi = x->n == 1 ? 0 : lane;
    if (!ev_parts(&ev, elem, pt, &np)) return ev_oob(E, s, in, &ev);
    uint8_t cdef;
    Cell cur = ev_read(&ev, pt, np, &cdef);
    if (!x->def[xi] || (in->add && !cdef)) ev_undef(&ev, pt, np); /* SPEC §10.1: not a fault */
    else {
      Cell c = alu_convert(x->dtype, t, x->v[xi]);
      if (in->add) alu_binary(OP_ADD, t, t, cur, c, &c);
      ev_write(&ev, pt, np, c);
    }
    if (!race_parts(E, tag, ev.reg, pt, np)) return false; /* after the write: the detector compares the bytes */
  }
  Value after = {0};
  if ((in->log && !E->no_log) || E->trace) {
    if (!load_all(E, s, in, &ev, &after, 0)) return val_free(&after), false;
    log_value(E, s, in, in->log, &after);
  }
  s->cost = in->op == I_STORE ? (uint64_t)cp(E)->scalar_issue_cycles : groups(E, ev.n, t) * (uint64_t)cp(E)->vector_issue_cycles;
  count_access(E, ev.vd->ref->space, ev.n * dtype_size(t), true);
  trace_access(E, s, in, &ev, NULL, after.n ? &after : NULL, s->cost, false, ev.n);
  val_free(&after);
  return true;
}

/* ---- duplicate offsets of a non-add scatter (SPEC §7.7) ---------------- */
/* Legal (the highest lane or row wins) but rarely meant, so the first time
 * an operation does it the run carries a warning naming the duplicates. */
typedef struct Hit {
  int64_t at, lane;
} Hit;

static int hit_cmp(const void *a, const void *b) {
  const Hit *x = a, *y = b;
  return x->at != y->at ? (x->at < y->at ? -1 : 1) : (x->lane > y->lane) - (x->lane < y->lane);
}

/* The buffer of the writes to compare, or NULL when this operation has
 * nothing to report (an add form, or already warned). */
static Hit *dup_hits(Eng *E, const Instr *in, int64_t n) {
  if (in->add || in->op_id < 0 || in->op_id >= E->nwarned || E->warned[in->op_id]) return NULL;
  if (n > E->caphits) {
    Hit *h = realloc(E->hits, sizeof *h * (size_t)n);
    if (!h) return NULL;
    E->hits = h, E->caphits = n;
  }
  return E->hits;
}

static void dup_warn(Eng *E, Sc *s, const Instr *in, Hit *h, int64_t n, bool rows, const EV *ev) {
  if (n < 2) return;
  qsort(h, (size_t)n, sizeof *h, hit_cmp);
  int64_t dups = 0, first = -1;
  for (int64_t i = 1; i < n; i++)
    if (h[i].at == h[i - 1].at && (i < 2 || h[i - 1].at != h[i - 2].at)) dups++, first = first < 0 ? i - 1 : first;
  if (!dups) return;
  E->warned[in->op_id] = 1;
  RunWarning *w = run_warning(E->r, "duplicate-offsets", in->loc, s->core, s->subcore);
  if (!w) return;
  int64_t last = first;
  while (last + 1 < n && h[last + 1].at == h[first].at) last++;
  char where[200];
  if (rows) snprintf(where, sizeof where, "offset (%lld)", (long long)h[first].at);
  else { /* the indices, as the program gave them (into the view) */
    int rank = ev->rank[ev->top];
    int64_t at[MAX_RANK], f = h[first].at;
    for (int d = rank - 1; d >= 0; d--) at[d] = ev->lvl[ev->top][d] ? f % ev->lvl[ev->top][d] : 0, f = ev->lvl[ev->top][d] ? f / ev->lvl[ev->top][d] : 0;
    size_t len = (size_t)snprintf(where, sizeof where, "%s (", rank > 1 ? "indices" : "index");
    for (int d = 0; d < rank && len < sizeof where - 24; d++) len += (size_t)snprintf(where + len, sizeof where - len, "%s%lld", d ? ", " : "", (long long)at[d]);
    snprintf(where + len, sizeof where - len, ")");
  }
  char who[120];
  size_t len = 0;
  for (int64_t i = first; i <= last && len < sizeof who - 40; i++) /* the lanes in order; sorted, the last wins */
    len += (size_t)snprintf(who + len, sizeof who - len, "%s%lld", i == first ? "" : i == last ? " and " : ", ", (long long)h[i].lane);
  if (len >= sizeof who - 40) snprintf(who + len, sizeof who - len, " ... %lld", (long long)h[last].lane);
  snprintf(w->text, sizeof w->text, "%s %s of this scatter%s have the same %s into %s '%s'%s; the highest %s wins (SPEC §7.7)",
           rows ? "positions" : "lanes", who, rows ? "'s offsets" : "", where, space_key(ev->vd->ref->space), ev->vd->ref->name,
           dups > 1 ? ", and other targets repeat too" : "", rows ? "position" : "lane");
}

static bool x_indexed(Eng *E, Sc *s, const Instr *in) {
  EV ev;
  Value *m, *x = NULL;
  bool ok = true, gather = in->op == I_VLOAD_IDX;
  if (!gather) x = rd(E, s, in, in->b, &ok);
  if (!ok || !mask_of(E, s, in, &m) || !ev_resolve(E, s, in, in->view, s->core, s->subcore, &ev)) return false;
  Value *idx[MAX_RANK];
  if (in->imm != ev.rank[ev.top]) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s: %lld index registers for a view of rank %d", isa_mnemonic(in->op), (long long)in->imm, ev.rank[ev.top]);
    return efault(E, s, in, FAULT_LOWERING, msg);
  }
  for (int d = 0; d < in->imm; d++)
    if (!(idx[d] = rd(E, s, in, in->a + d, &ok)) || (d && !fits(E, s, in, "index", idx[d]->n, "the first index", idx[0]->n)))
      return false;
  int64_t n = in->imm ? idx[0]->n : 0;
  if ((m && !fits(E, s, in, "mask", m->n, "the indices", n)) || (x && !fits(E, s, in, "value", x->n, "the indices", n))) return false;
  Dtype t = ev.dt[ev.top];
  Value out = {0};
  if (gather) val_shape(&out, t, 1, &n);
  uint32_t tag = race_open(E, s, in, !gather, false, -1, NULL);
  int64_t hits[256] = {0}, maxhit = 0, banks = cp(E)->vmem_banks > 0 && cp(E)->vmem_banks <= 256 ? cp(E)->vmem_banks : 1;
  bool first_wins = in->flags & IF_LOW_WINS;
  Hit *hit = gather ? NULL : dup_hits(E, in, n);
  int64_t nhit = 0;
  spans_begin(E);
  for (int64_t j = 0; j < n; j++) {
    int64_t k = first_wins ? n - 1 - j : j;
    if (m && !alu_truthy(m->dtype, m->v[k])) continue;
    int64_t at[MAX_RANK];
    for (int d = 0; d < in->imm; d++) {
      if (!idx[d]->def[k]) return val_free(&out), efault(E, s, in, FAULT_UNINIT, "an index lane is undefined");
      at[d] = idx[d]->v[k].i;
      if (at[d] < 0 || at[d] >= ev.lvl[ev.top][d]) {
        char msg[300];
        snprintf(msg, sizeof msg, "%slane %lld indexes %lld in dimension %d of size %lld of %s '%s'",
                 gather ? "Trying to perform an indexed vector load from out of bounds address. " : "", (long long)k,
                 (long long)at[d], d, (long long)ev.lvl[ev.top][d], space_key(ev.vd->ref->space), ev.vd->ref->name);
        val_free(&out);
        return efault(E, s, in, FAULT_OOB, msg);
      }
    }
    Part pt[MAX_PARTS];
    int np;
    int64_t flat = to_flat(ev.rank[ev.top], ev.lvl[ev.top], at);
    if (hit) hit[nhit++] = (Hit){flat, k};
    if (!ev_parts(&ev, flat, pt, &np)) return val_free(&out), ev_oob(E, s, in, &ev);
    if (gather && !race_parts(E, tag, ev.reg, pt, np)) return val_free(&out), false;
    if (E->trace) span_add(E, pt, np);
    int64_t bank = (pt[0].off / (cp(E)->vmem_bank_bytes > 0 ? cp(E)->vmem_bank_bytes : 4)) % banks;
    if (++hits[bank] > maxhit) maxhit = hits[bank];
    uint8_t cdef;
    Cell cur = ev_read(&ev, pt, np, &cdef);
    if (gather) {
      out.v[k] = cur, out.def[k] = cdef;
      continue;
    }
    if (!x->def[k] || (in->add && !cdef)) ev_undef(&ev, pt, np); /* SPEC §10.1: not a fault */
    else {
      Cell c = alu_convert(x->dtype, t, x->v[k]);
      if (in->add) alu_binary(OP_ADD, t, t, cur, c, &c);
      ev_write(&ev, pt, np, c);
    }
    if (!race_parts(E, tag, ev.reg, pt, np)) return val_free(&out), false; /* after the write, as in x_store */
  }
  if (hit) dup_warn(E, s, in, hit, nhit, false, &ev);
  uint64_t conflicts = maxhit > 1 ? (uint64_t)(maxhit - 1) : 0;
  s->cost = groups(E, n, t) * (uint64_t)cp(E)->vector_issue_cycles + conflicts * (uint64_t)cp(E)->bank_conflict_cycles;
  E->r->stats.space[ev.vd->ref->space].bank_conflicts += conflicts;
  count_access(E, ev.vd->ref->space, n * dtype_size(t), !gather);
  if (gather) {
    val_copy(&s->reg[in->d], &out);
    set_reg(s, in->d);
    s->ready[in->d] = s->t + (uint64_t)cp(E)->vmem_latency_cycles + conflicts * (uint64_t)cp(E)->bank_conflict_cycles;
    log_value(E, s, in, in->log, &out);
  }
  trace_access(E, s, in, &ev, NULL, gather ? &out : NULL, s->cost, true, n);
  val_free(&out);
  return true;
}

/* ---- DMAs and synchronisation ------------------------------------------- */
enum { X_FAULT = 0, X_OK = 1, X_BLOCKED = 2 };

static bool sem_addr(Eng *E, Sc *s, const Instr *in, int view, int core, int subcore, Region **g, int64_t *off) {
  EV ev;
  Part pt[MAX_PARTS];
  int np;
  if (!ev_resolve(E, s, in, view, core, subcore, &ev)) return false;
  if (!ev_parts(&ev, 0, pt, &np)) return ev_oob(E, s, in, &ev);
  *g = ev.reg;
  *off = pt[0].off;
  return true;
}

static int64_t sem_read(Region *g, int64_t off) { return dtype_load(DT_INT32, g->bytes + off).i; }
static void sem_write(Region *g, int64_t off, int64_t v) { dtype_store(DT_INT32, (Cell){.i = v}, g->bytes + off); }

/* The byte offset of element i of an affine view. */
static int64_t aff_off(const EV *ev, int64_t i) {
  int64_t off = ev->base;
  for (int d = ev->arank - 1; d >= 0; d--) {
    int64_t n = ev->adim[d] > 0 ? ev->adim[d] : 1;
    off += (i % n) * ev->bstride[d];
    i /= n;
  }
  return off;
}

/* How many trailing elements form a dense row-major block (a run of them
 * starting on a multiple of it sits at consecutive addresses). */
static int64_t dense_block(const EV *ev) {
  int64_t want = dtype_size(ev->dt[ev->top]), n = 1;
  for (int d = ev->arank - 1; d >= 0; d--) {
    if (ev->adim[d] != 1 && ev->bstride[d] != want) break;
    want *= ev->adim[d];
    n *= ev->adim[d];
  }
  return n;
}

/* A plain copy of n elements from src element se to dst element de by
 * memcpy when both sides are dense there; false when it does not apply. */
static bool fast_copy(Eng *E, const Instr *in, EV *src, int64_t se, EV *dst, int64_t de, int64_t n) {
  if (!src->affine || !dst->affine || in->add || E->rd || src->dt[src->top] != dst->dt[dst->top])
    return false;
  int64_t sb = dense_block(src), db = dense_block(dst);
  if (se % sb + n > sb || de % db + n > db) return false;
  int64_t es = dtype_size(src->dt[src->top]);
  mem_copy_bytes(dst->reg, aff_off(dst, de), src->reg, aff_off(src, se), n * es);
  return true;
}

/* Copies element se of src to element de of dst (adding when asked),
 * definedness included. */
static bool copy_elem(Eng *E, Sc *s, const Instr *in, EV *src, int64_t se, EV *dst, int64_t de) {
  Part sp[MAX_PARTS], dp[MAX_PARTS];
  int ns, nd;
  if (!ev_parts(src, se, sp, &ns)) return ev_oob(E, s, in, src);
  if (!ev_parts(dst, de, dp, &nd)) return ev_oob(E, s, in, dst);
  if (!race_parts(E, E->dma_read_tag, src->reg, sp, ns)) return false;
  uint8_t sdef, ddef;
  Cell c = ev_read(src, sp, ns, &sdef);
  if (in->add) {
    Cell cur = ev_read(dst, dp, nd, &ddef);
    Dtype t = dst->dt[dst->top];
    alu_binary(OP_ADD, t, t, cur, alu_convert(src->dt[src->top], t, c), &c);
    sdef = sdef && ddef;
  }
  if (sdef) {
    ev_write(dst, dp, nd, c);
  } else {
    for (int i = 0; i < nd; i++) mem_set_defined(dst->reg, dp[i].off, dp[i].n, false);
  }
  return race_parts(E, E->dma_write_tag, dst->reg, dp, nd); /* after the write, as in x_store */
}

static bool dma_offsets(Eng *E, Sc *s, const Instr *in, Value *o) {
  if (in->view4 >= 0) {
    EV ev;
    return ev_resolve(E, s, in, in->view4, s->core, s->subcore, &ev) && load_all(E, s, in, &ev, o, race_open(E, s, in, false, false, -1, &ev));
  }
  if (in->a < 0) /* checked here, not when parsing: the verifier's rules come first */
    return efault(E, s, in, FAULT_LOWERING, "tpu.enqueue_indirect_dma needs its offsets: a register (a=%3) or a view (offsets=v2)");
  bool ok = true;
  Value *v = rd(E, s, in, in->a, &ok);
  if (ok) val_copy(o, v);
  return ok;
}

/* Row r of the plain side pairs with row o[r] of the indexed side. */
static bool dma_indirect(Eng *E, Sc *s, const Instr *in, EV *src, EV *dst, int64_t *bytes, int64_t *rows_done, int64_t *row_bytes) {
  bool gather = in->imm;
  EV *ix = gather ? src : dst, *pl = gather ? dst : src;
  Value o = {0};
  int64_t ignored = 0;
  bool filter = in->c >= 0;
  if (!dma_offsets(E, s, in, &o) || (filter && !int_reg(E, s, in, in->c, &ignored))) return val_free(&o), false;
  int64_t rows = pl->rank[pl->top] ? pl->lvl[pl->top][0] : 1, z = ix->lvl[ix->top][0];
  int64_t row = rows ? pl->n / rows : 0;
  *bytes = pl->n * dtype_size(pl->dt[pl->top]);
  *row_bytes = row * dtype_size(pl->dt[pl->top]);
  *rows_done = 0;
  Hit *hit = gather ? NULL : dup_hits(E, in, rows < o.n ? rows : o.n);
  int64_t nhit = 0;
  for (int64_t r = 0; r < rows && r < o.n; r++) {
    if (!o.def[r]) return val_free(&o), efault(E, s, in, FAULT_UNINIT, "a DMA offset is undefined");
    int64_t at = o.v[r].i;
    if (filter && at == ignored) continue;
    if (at < 0 || at >= z) {
      char msg[200];
      snprintf(msg, sizeof msg, "DMA offset %lld (row %lld) is outside [0, %lld) of the indexed ref (%s '%s')", (long long)at, (long long)r,
               (long long)z, space_key(ix->vd->ref->space), ix->vd->ref->name);
      val_free(&o);
      return efault(E, s, in, FAULT_OOB, msg);
    }
    ++*rows_done;
    if (hit) hit[nhit++] = (Hit){at, r};
    if (E->rd) { /* each row of the indexed side is an access of its own, with its own span */
      if (gather) E->dma_read_tag = race_open_rows(E, s, in, false, false, E->dma_thread, src, at * row, row);
      else E->dma_write_tag = race_open_rows(E, s, in, true, in->add, E->dma_thread, dst, at * row, row);
    }
    if (gather ? fast_copy(E, in, src, at * row, dst, r * row, row) : fast_copy(E, in, src, r * row, dst, at * row, row)) continue;
    for (int64_t j = 0; j < row; j++) {
      bool ok = gather ? copy_elem(E, s, in, src, at * row + j, dst, r * row + j) : copy_elem(E, s, in, src, r * row + j, dst, at * row + j);
      if (!ok) return val_free(&o), false;
    }
  }
  if (hit) dup_warn(E, s, in, hit, nhit, true, ix);
  val_free(&o);
  return true;
}

static int64_t granule_round(const Eng *E, int64_t bytes) {
  int64_t g = cp(E)->dma_granule_size_bytes;
  return g > 0 ? (bytes + g - 1) / g * g : bytes;
}

static int new_dma(Eng *E) {
  int i = E->free_dma;
  if (i >= 0) E->free_dma = E->dmas[i].next;
  else {
    if (E->ndmas == E->capdmas) {
      E->capdmas = E->capdmas ? E->capdmas * 2 : 64;
      E->dmas = realloc(E->dmas, sizeof *E->dmas * (size_t)E->capdmas);
      if (!E->dmas) abort();
    }
    i = E->ndmas++;
  }
  memset(&E->dmas[i], 0, sizeof *E->dmas);
  E->dmas[i].live = true;
  E->dmas[i].id = E->issued++;
  E->dmas[i].next = -1;
  return i;
}

/* A retired DMA's record goes back to the free list. */
static void free_dma(Eng *E, int i) {
  E->dmas[i].live = false;
  E->dmas[i].next = E->free_dma;
  E->free_dma = i;
}

static size_t dq_hash(const Region *g, int64_t off, int sub, int cap) {
  uint64_t h = (uint64_t)(uintptr_t)g * 0x9E3779B97F4A7C15ull ^ (uint64_t)off * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)sub;
  return (size_t)((h ^ h >> 29) & (uint64_t)(cap - 1));
}

/* The queue of (g, off, sub); NULL when absent and !make. */
static DmaQueue *dq_find(Eng *E, const Region *g, int64_t off, int sub, bool make);

static void dq_grow(Eng *E) {
  DmaQueue *old = E->dq;
  int oldcap = E->capdq;
  E->capdq = oldcap ? oldcap * 2 : 16;
  E->dq = calloc((size_t)E->capdq, sizeof *E->dq);
  if (!E->dq) abort();
  E->ndq = 0;
  for (int i = 0; i < oldcap; i++)
    if (old[i].g) *dq_find(E, old[i].g, old[i].off, old[i].sub, true) = old[i];
  free(old);
}

static DmaQueue *dq_find(Eng *E, const Region *g, int64_t off, int sub, bool make) {
  if (make && 2 * (E->ndq + 1) > E->capdq) dq_grow(E);
  if (!E->capdq) return NULL;
  for (size_t i = dq_hash(g, off, sub, E->capdq);; i = (i + 1) & (size_t)(E->capdq - 1)) {
    DmaQueue *q = &E->dq[i];
    if (q->g == g && q->off == off && q->sub == sub) return q;
    if (q->g) continue;
    if (!make) return NULL;
    E->ndq++;
    *q = (DmaQueue){g, off, sub, -1, -1, -1, 0, 0};
    return q;
  }
}

/* Appends DMA i to its semaphore's queue. */
static void dq_push(Eng *E, int i) {
  DmaRec *d = &E->dmas[i];
  DmaQueue *q = dq_find(E, d->sem, d->sem_off, d->sub, true);
  if (q->tail >= 0) E->dmas[q->tail].next = i;
  else q->head = i;
  q->tail = i;
  q->last_id = d->id, q->last_line = d->line, q->last_col = d->col;
}

/* at: the instruction's line for a wait (the DMA's own for its start and end). */
static void trace_dma(Eng *E, const DmaRec *d, TraceKind k, uint64_t t, const Loc *at) {
  if (!E->trace) return;
  TraceEvent te;
  memset(&te, 0, sizeof te);
  te.kind = k;
  te.t0 = te.t1 = t;
  te.core = E->sc[d->sub].core;
  te.subcore = E->sc[d->sub].subcore;
  te.dma = d->id;
  te.op = k == TE_DMA_WAIT ? "wait" : "dma";
  te.src_space = d->src_space, te.dst_space = d->dst_space, te.src_ref = d->src_ref, te.dst_ref = d->dst_ref;
  te.bytes = d->bytes;
  te.line = at ? at->line : d->line, te.col = at ? at->col : d->col;
  trace_event(E->trace, &te);
}

static void trace_counter(Eng *E, TraceKind k, int core, int sub, const char *name, int64_t v, uint64_t t) {
  if (!E->trace) return;
  TraceEvent te;
  memset(&te, 0, sizeof te);
  te.kind = k;
  te.t0 = te.t1 = t;
  te.core = core, te.subcore = sub, te.dma = -1;
  te.ref = name;
  te.space = name;
  te.value = v;
  trace_event(E->trace, &te);
}

/* Moves the data now (a race-free program cannot tell, SPEC §7.10) and
 * hands the transfer to the DMA model, which signals the semaphore when
 * the last byte lands.  A sync_copy then waits for that moment. */
static int x_dma(Eng *E, Sc *s, const Instr *in) {
  if (s->sync_tag >= 0) {
    DmaRec *d = &E->dmas[s->sync_tag];
    if (!d->done) return X_BLOCKED;
    race_dma_retire(E->rd, d->race, s->idx);
    trace_dma(E, d, TE_DMA_WAIT, s->t, &in->loc);
    free_dma(E, s->sync_tag);
    s->sync_tag = -1;
    return X_OK;
  }
  if (dma_outstanding(E->dm, s->idx) >= cp(E)->dma_queue_depth) return X_BLOCKED;
  EV src, dst;
  if (!ev_resolve(E, s, in, in->view, s->core, s->subcore, &src) || !ev_resolve(E, s, in, in->view2, s->core, s->subcore, &dst))
    return X_FAULT;
  int64_t bytes = dst.n * dtype_size(dst.dt[dst.top]), moved;
  int thr = race_dma_start(E->rd, s->idx);
  E->dma_thread = thr;
  bool ind = in->op == I_ENQUEUE_INDIRECT_DMA;
  E->dma_read_tag = race_open(E, s, in, false, false, thr, ind && in->imm ? NULL : &src);
  E->dma_write_tag = race_open(E, s, in, true, in->add, thr, ind && !in->imm ? NULL : &dst);
  if (in->op == I_ENQUEUE_INDIRECT_DMA) {
    int64_t rows, row_bytes;
    if (!dma_indirect(E, s, in, &src, &dst, &bytes, &rows, &row_bytes)) return X_FAULT;
    moved = rows * granule_round(E, row_bytes);
  } else {
    int64_t n = src.n;
    if (!(n > 0 && fast_copy(E, in, &src, 0, &dst, 0, n)))
      for (int64_t i = 0; i < n; i++) {
        int64_t run = src.affine && dst.affine ? dense_block(&src) : 1;
        if (run > 1 && i % run == 0 && i + run <= n && fast_copy(E, in, &src, i, &dst, i, run)) {
          i += run - 1;
          continue;
        }
        if (!copy_elem(E, s, in, &src, i, &dst, i)) return X_FAULT;
      }
    moved = granule_round(E, bytes);
  }
  int tag = new_dma(E);
  DmaRec *d = &E->dmas[tag];
  d->sub = s->idx;
  d->race = thr;
  d->bytes = bytes;
  d->src_space = space_key(src.vd->ref->space), d->dst_space = space_key(dst.vd->ref->space);
  d->src_ref = src.vd->ref->name, d->dst_ref = dst.vd->ref->name;
  d->line = in->loc.line, d->col = in->loc.col;
  d->t0 = s->t;
  if (in->view3 >= 0 && !sem_addr(E, s, in, in->view3, s->core, s->subcore, &d->sem, &d->sem_off)) return free_dma(E, tag), X_FAULT;
  if (d->sem) dq_push(E, tag);
  Space ss = src.vd->ref->space, ds = dst.vd->ref->space;
  DmaReq rq = {s->idx, s->core, ss == SP_HBM || ds == SP_HBM, ss == SP_VMEM_SHARED || ds == SP_VMEM_SHARED, (double)moved, s->t, tag};
  dma_submit(E->dm, &rq);
  E->r->stats.dma_bytes += (uint64_t)moved;
  count_access(E, ss, bytes, false);
  count_access(E, ds, bytes, true);
  trace_dma(E, d, TE_DMA_START, s->t, NULL);
  if (E->trace) {
    trace_counter(E, TE_INFLIGHT, -1, 0, "hbm", (int64_t)dma_inflight_bytes(E->dm, 0), s->t);
    trace_counter(E, TE_INFLIGHT, s->core, 0, "vmem_shared", (int64_t)dma_inflight_bytes(E->dm, 1), s->t);
  }
  if (in->view3 >= 0) return X_OK;
  s->sync_tag = tag;
  return X_BLOCKED;
}

/* A transfer's last byte landed at cycle t. */
static void dma_complete(Eng *E, int tag, uint64_t t) {
  DmaRec *d = &E->dmas[tag];
  d->done = true;
  trace_dma(E, d, TE_DMA_END, t, NULL);
  if (!d->sem) return;
  sem_write(d->sem, d->sem_off, sem_read(d->sem, d->sem_off) + d->bytes);
  trace_counter(E, TE_SEMAPHORE, E->sc[d->sub].core, E->sc[d->sub].subcore, d->sem->name, sem_read(d->sem, d->sem_off), t);
}

static int x_wait(Eng *E, Sc *s, const Instr *in) {
  EV src, dst;
  if (!ev_resolve(E, s, in, in->view, s->core, s->subcore, &src) || !ev_resolve(E, s, in, in->view2, s->core, s->subcore, &dst))
    return X_FAULT;
  EV *moved = in->op == I_WAIT_INDIRECT_DMA && in->imm ? &dst : in->op == I_WAIT_INDIRECT_DMA ? &src : &dst;
  int64_t need = moved->n * dtype_size(moved->dt[moved->top]);
  Region *g;
  int64_t off;
  if (!sem_addr(E, s, in, in->view3, s->core, s->subcore, &g, &off)) return X_FAULT;
  if (sem_read(g, off) < need) return X_BLOCKED;
  sem_write(g, off, sem_read(g, off) - need);
  trace_counter(E, TE_SEMAPHORE, s->core, s->subcore, g->name, sem_read(g, off), s->t);
  DmaQueue *q = dq_find(E, g, off, s->idx, false); /* the flow arrow ends at the wait that retires the oldest landed copy */
  if (!q || q->head < 0 || !E->dmas[q->head].done) return X_OK;
  int i = q->head;
  DmaRec *d = &E->dmas[i];
  q->head = d->next;
  if (q->head < 0) q->tail = -1;
  race_dma_retire(E->rd, d->race, s->idx);
  trace_dma(E, d, TE_DMA_WAIT, s->t, &in->loc);
  free_dma(E, i);
  return X_OK;
}

static int x_sem(Eng *E, Sc *s, const Instr *in) {
  int64_t amount = 1, core = s->core, sub = s->subcore;
  if (in->a >= 0 && !int_reg(E, s, in, in->a, &amount)) return X_FAULT;
  if (in->b >= 0 && !int_reg(E, s, in, in->b, &core)) return X_FAULT;
  if (in->c >= 0 && !int_reg(E, s, in, in->c, &sub)) return X_FAULT;
  if (core < 0 || core >= E->p->mesh_cores || sub < 0 || sub >= E->p->mesh_subcores)
    return efault(E, s, in, FAULT_OOB, "the signalled subcore is outside the mesh"), X_FAULT;
  Region *g;
  int64_t off;
  if (!sem_addr(E, s, in, in->view, (int)core, (int)sub, &g, &off)) return X_FAULT;
  if (in->op == I_SEM_SIGNAL) {
    if (!run_sem_signal_fits(E->r, E->c->views[in->view].ref, g, sem_read(g, off), amount, in->loc, s->core, s->subcore, in->op_id))
      return X_FAULT;
    sem_write(g, off, sem_read(g, off) + amount);
    race_release(E->rd, s->idx, sem_slot(E, g, off));
    for (int i = 0; i < E->nsemslots; i++)
      if (E->semslots[i].g == g && E->semslots[i].off == off) E->semslots[i].signal = in->loc;
    trace_counter(E, TE_SEMAPHORE, (int)core, (int)sub, g->name, sem_read(g, off), s->t);
    return X_OK;
  }
  if (sem_read(g, off) < amount) return X_BLOCKED;
  sem_write(g, off, sem_read(g, off) - amount);
  race_acquire(E->rd, s->idx, sem_slot(E, g, off));
  trace_counter(E, TE_SEMAPHORE, s->core, s->subcore, g->name, sem_read(g, off), s->t);
  return X_OK;
}

static int x_barrier(Eng *E, Sc *s) {
  if (!s->at_barrier) {
    s->at_barrier = true, s->barrier_gen++;
    race_barrier_arrive(E->rd, s->idx, s->barrier_gen);
  }
  int here = 0;
  for (int i = 0; i < E->nsub; i++) {
    Sc *o = &E->sc[i];
    if (o->core == s->core && o->barrier_gen >= s->barrier_gen) here++;
  }
  if (here < E->p->mesh_subcores) return X_BLOCKED;
  s->at_barrier = false;
  race_barrier_leave(E->rd, s->idx, s->barrier_gen, s->core * (int)E->p->mesh_subcores, (int)E->p->mesh_subcores);
  return X_OK;
}

static int x_fetch_and_add(Eng *E, Sc *s, const Instr *in) {
  int64_t target;
  bool ok = true;
  if (!int_reg(E, s, in, in->b, &target)) return X_FAULT;
  if (target < 0 || target >= E->p->mesh_subcores)
    return efault(E, s, in, FAULT_OOB, "fetch_and_add targets a subcore outside the mesh"), X_FAULT;
  Value *x = rd(E, s, in, in->a, &ok);
  EV ev;
  if (!ok || !fits(E, s, in, "operand", x->n, "a scalar", 1) || !ev_resolve(E, s, in, in->view, s->core, (int)target, &ev)) return X_FAULT;
  Part pt[MAX_PARTS];
  int np;
  if (!ev_parts(&ev, 0, pt, &np)) return ev_oob(E, s, in, &ev), X_FAULT;
  uint32_t tag = race_open(E, s, in, true, true, -1, NULL);
  uint8_t def;
  Cell old = ev_read(&ev, pt, np, &def), c;
  if (def && x->def[0]) { /* an undefined operand leaves the sum undefined (SPEC §10.1) */
    alu_binary(OP_ADD, DT_INT32, DT_INT32, old, alu_convert(x->dtype, DT_INT32, x->v[0]), &c);
    ev_write(&ev, pt, np, c);
  } else {
    ev_undef(&ev, pt, np);
  }
  if (!race_parts(E, tag, ev.reg, pt, np)) return X_FAULT; /* after the write, as in x_store */
  RunResult *r = E->r; /* the order of atomics, for the reference to replay */
  if (r->natomics == r->capatomics) {
    r->capatomics = r->capatomics ? r->capatomics * 2 : 64;
    r->atomics = realloc(r->atomics, sizeof *r->atomics * (size_t)r->capatomics);
    if (!r->atomics) abort();
  }
  r->atomics[r->natomics++] = s->idx;
  val_scalar(&s->reg[in->d], DT_INT32, old);
  s->reg[in->d].def[0] = def;
  set_reg(s, in->d);
  log_value(E, s, in, in->log, &s->reg[in->d]);
  return X_OK;
}

/* ---- control and expectations --------------------------------------------- */
static bool loop_continues(int64_t i, int64_t hi, int64_t step) { return step > 0 ? i < hi : i > hi; }

static int x_control(Eng *E, Sc *s, const Instr *in) {
  int64_t a, hi, step;
  if (in->op == I_FOR) {
    if (!int_reg(E, s, in, in->a, &a) || !int_reg(E, s, in, in->b, &hi) || !int_reg(E, s, in, in->c, &step)) return X_FAULT;
    if (step == 0) return efault(E, s, in, FAULT_LIMIT, "loop step is zero"), X_FAULT;
    if (!loop_continues(a, hi, step)) return s->pc = in->target, X_BLOCKED + 1;
    val_scalar(&s->reg[in->d], DT_INT64, (Cell){.i = a}); /* full width: the counter must not wrap */
    set_reg(s, in->d);
    return X_OK;
  }
  if (in->op == I_ENDFOR) {
    if (!int_reg(E, s, in, in->d, &a) || !int_reg(E, s, in, in->b, &hi) || !int_reg(E, s, in, in->c, &step)) return X_FAULT;
    int64_t next;
    if (__builtin_add_overflow(a, step, &next) || !loop_continues(next, hi, step)) return X_OK;
    val_scalar(&s->reg[in->d], DT_INT64, (Cell){.i = next});
    return s->pc = in->target, X_BLOCKED + 1;
  }
  if (in->op == I_BRANCH_IF_FALSE) {
    bool ok = true;
    const Value *v = rd(E, s, in, in->a, &ok);
    if (ok && v->n == 1 && !v->def[0]) return efault(E, s, in, FAULT_UNINIT, "the condition (of a when or a while) is undefined"), X_FAULT;
    if (!ok || !int_reg(E, s, in, in->a, &a)) return X_FAULT;
    if (!a) return s->pc = in->target, X_BLOCKED + 1;
    return X_OK;
  }
  return s->pc = in->target, X_BLOCKED + 1; /* I_JUMP */
  return X_FAULT;
}

static int x_expect(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value got = {0}, *b = rd(E, s, in, in->b, &ok);
  if (!ok) return X_FAULT;
  if (in->op == I_EXPECT_VIEW) {
    EV ev;
    if (!ev_resolve(E, s, in, in->view, s->core, s->subcore, &ev) || !load_all(E, s, in, &ev, &got, race_open(E, s, in, false, false, -1, &ev)))
      return val_free(&got), X_FAULT;
  } else {
    Value *a = rd(E, s, in, in->a, &ok);
    if (!ok) return X_FAULT;
    val_copy(&got, a);
  }
  if (!fits1(E, s, in, "expected value", b->n, "the checked value", got.n)) return val_free(&got), X_FAULT;
  for (int64_t i = 0; i < got.n; i++) {
    int64_t ib = b->n == 1 ? 0 : i;
    char msg[200], g[64], w[64];
    if (!got.def[i] || !b->def[ib]) {
      snprintf(msg, sizeof msg, "expect checks lane %lld, which is undefined", (long long)i);
      val_free(&got);
      return efault(E, s, in, FAULT_UNINIT, msg), X_FAULT;
    }
    Cell want = alu_convert(b->dtype, got.dtype, b->v[ib]);
    if (alu_equal(got.dtype, got.v[i], want)) continue;
    dtype_format(got.dtype, got.v[i], g, sizeof g);
    dtype_format(got.dtype, want, w, sizeof w);
    snprintf(msg, sizeof msg, "lane %lld is %s, expected %s", (long long)i, g, w);
    val_free(&got);
    return efault(E, s, in, FAULT_EXPECT, msg), X_FAULT;
  }
  val_free(&got);
  return X_OK;
}

/* Executes s's instruction at pc: X_OK (advance), X_BLOCKED (retry later),
 * X_BLOCKED + 1 (pc already set by a jump), X_FAULT. */
static int execute(Eng *E, Sc *s, const Instr *in) {
  switch (in->op) {
  case I_CONST: case I_COORD: case I_IOTA: case I_CAST: case I_BROADCAST:
  case I_FROM_ELEMENTS: case I_EXTRACT: case I_MOV: return x_misc_value(E, s, in) ? X_OK : X_FAULT;
  case I_BINARY: return x_binary(E, s, in) ? X_OK : X_FAULT;
  case I_UNARY: return x_unary(E, s, in) ? X_OK : X_FAULT;
  case I_SELECT: case I_MINMAX: return x_select(E, s, in) ? X_OK : X_FAULT;
  case I_LOAD: case I_VLOAD: return x_load(E, s, in) ? X_OK : X_FAULT;
  case I_STORE: case I_VSTORE: return x_store(E, s, in) ? X_OK : X_FAULT;
  case I_VLOAD_IDX: case I_VSTORE_IDX: return x_indexed(E, s, in) ? X_OK : X_FAULT;
  case I_ENQUEUE_DMA: case I_ENQUEUE_INDIRECT_DMA: return x_dma(E, s, in);
  case I_WAIT_DMA: case I_WAIT_INDIRECT_DMA: return x_wait(E, s, in);
  case I_SEM_SIGNAL: case I_SEM_WAIT: return x_sem(E, s, in);
  case I_BARRIER: return x_barrier(E, s);
  case I_FETCH_AND_ADD: return x_fetch_and_add(E, s, in);
  case I_FOR: case I_ENDFOR: case I_BRANCH_IF_FALSE: case I_JUMP: return x_control(E, s, in);
  case I_EXPECT: case I_EXPECT_VIEW: return x_expect(E, s, in);
  case I_COUNT: break;
  }
  return X_FAULT;
}

/* ---- the scheduler --------------------------------------------------------- */
/* The cycle every source of `in` is available: the source registers of its
 * form (isa.h: A B C M, and the run N) and the registers of its views. */
static uint64_t operands_ready(const Eng *E, const Sc *s, const Instr *in) {
  uint64_t t = s->t;
  int regs[4] = {in->a, in->b, in->c, in->mask};
  for (int i = 0; i < 4; i++)
    if (regs[i] >= 0 && isa_operand(in->op, "ABCM"[i]) && s->ready[regs[i]] > t) t = s->ready[regs[i]];
  if (isa_operand(in->op, 'N'))
    for (int64_t k = 0; k < in->imm; k++)
      if (s->ready[in->a + k] > t) t = s->ready[in->a + k];
  int views[4] = {in->view, in->view2, in->view3, in->view4};
  for (int v = 0; v < 4; v++) {
    if (views[v] < 0) continue;
    const VDesc *vd = &E->c->views[views[v]];
    for (int k = 0; k < vd->nlev; k++)
      for (int d = 0; d < vd->lev[k].n; d++) {
        int r1 = vd->lev[k].start[d].reg, r2 = vd->lev[k].size[d].reg;
        if (r1 >= 0 && s->ready[r1] > t) t = s->ready[r1];
        if (r2 >= 0 && s->ready[r2] > t) t = s->ready[r2];
      }
  }
  return t;
}

static BlockKind block_kind(Opcode op) {
  return op == I_BARRIER ? BLOCK_BARRIER : op == I_SEM_WAIT ? BLOCK_SEM : BLOCK_DMA;
}

static bool any_unblocked(const Eng *E) { return E->woke; }

static void unblock_all(Eng *E, uint64_t t) {
  E->woke = true;
  for (int i = 0; i < E->nsub; i++) {
    Sc *s = &E->sc[i];
    if (!s->blocked) continue;
    if (s->t < t) s->t = t;
    uint64_t stall = s->t - s->block_start;
    SubStats *st = &E->r->stats.sub[i];
    if (s->blocked == BLOCK_BARRIER) st->stall_barrier += stall;
    else if (s->blocked == BLOCK_SEM) st->stall_sem += stall;
    else st->stall_dma += stall;
    if (E->trace && stall) {
      TraceEvent te;
      memset(&te, 0, sizeof te);
      te.kind = s->blocked == BLOCK_BARRIER ? TE_BARRIER : TE_STALL;
      te.t0 = s->block_start, te.t1 = s->t, te.core = s->core, te.subcore = s->subcore, te.dma = -1;
      te.op = s->blocked == BLOCK_BARRIER ? "barrier" : s->blocked == BLOCK_SEM ? "semaphore" : "dma";
      te.line = E->c->code[s->pc].loc.line, te.col = E->c->code[s->pc].loc.col; /* the instruction that waited */
      trace_event(E->trace, &te);
    }
    s->blocked = BLOCK_NONE;
  }
}

/* Lands every transfer finishing by cycle t. */
static void dma_events(Eng *E, uint64_t t) {
  int tags[64], n;
  bool any = false;
  do {
    n = dma_advance(E->dm, t, tags, 64);
    for (int i = 0; i < n; i++) dma_complete(E, tags[i], t);
    any |= n > 0;
  } while (n == 64);
  if (E->trace) {
    trace_counter(E, TE_INFLIGHT, -1, 0, "hbm", (int64_t)dma_inflight_bytes(E->dm, 0), t);
    trace_counter(E, TE_INFLIGHT, 0, 0, "vmem_shared", (int64_t)dma_inflight_bytes(E->dm, 1), t);
  }
  if (any) unblock_all(E, t);
}

/* The runnable subcore with the earliest cycle (the lowest index on a tie)
 * and, in *second, the earliest cycle of the other runnable ones
 * (UINT64_MAX when none): one scan finds both. */
static Sc *next_runnable(Eng *E, uint64_t *second) {
  Sc *best = NULL;
  *second = UINT64_MAX;
  for (int i = 0; i < E->nsub; i++) {
    Sc *s = &E->sc[i];
    if (s->done || s->blocked) continue;
    if (!best || s->t < best->t) {
      if (best) *second = best->t;
      best = s;
    } else if (s->t < *second) *second = s->t;
  }
  return best;
}

static void engine_deadlock(Eng *E) {
  char buf[700] = "";
  size_t len = 0;
  Sc *first = NULL;
  for (int i = 0; i < E->nsub && len < sizeof buf - 100; i++) {
    Sc *s = &E->sc[i];
    if (s->done) continue;
    const Instr *in = &E->c->code[s->pc];
    if (!first) first = s;
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%ssubcore %d.%d waits at line %d (%s)", len ? "; " : "", s->core,
                            s->subcore, in->loc.line, isa_mnemonic(in->op));
  }
  const Instr *in = &E->c->code[first->pc];
  run_fault(E->r, FAULT_DEADLOCK, in->loc, first->core, first->subcore, in->op_id, "no subcore can make progress: %s", buf);
}

/* Where a semaphore left non-zero was fed: a DMA never waited, else the
 * last signal, else the ref. */
static Loc unconsumed(const Eng *E, const Region *g, int64_t off, Loc dflt) {
  const DmaRec *first = NULL; /* the earliest DMA on it still unretired (only those keep a record) */
  for (int i = 0; i < E->ndmas; i++) {
    const DmaRec *d = &E->dmas[i];
    if (d->live && d->sem == g && d->sem_off == off && (!first || d->id < first->id)) first = d;
  }
  if (first) return (Loc){E->p->file, first->line, first->col};
  for (int i = 0; i < E->nsemslots; i++)
    if (E->semslots[i].g == g && E->semslots[i].off == off && E->semslots[i].signal.line) return E->semslots[i].signal;
  const DmaQueue *last = NULL; /* a wait consumed less than the DMA signalled: the last DMA on it */
  for (int i = 0; i < E->capdq; i++) {
    const DmaQueue *q = &E->dq[i];
    if (q->g == g && q->off == off && (!last || q->last_id > last->last_id)) last = q;
  }
  return last ? (Loc){E->p->file, last->last_line, last->last_col} : dflt;
}

static void engine_semaphores(Eng *E) {
  for (int r = 0; r < E->p->nrefs && !E->r->faulted; r++) {
    const Ref *ref = E->p->refs[r];
    if (ref->space != SP_SEMAPHORE) continue;
    for (int i = 0; i < mem_instance_count(&E->r->mem, r); i++) {
      Region *g = mem_instance(&E->r->mem, r, i);
      for (int64_t k = 0; k < ref->nelems && !E->r->faulted; k++)
        if (sem_read(g, k * 4))
          run_fault(E->r, FAULT_SEMAPHORE, unconsumed(E, g, k * 4, ref->loc), g->core, g->subcore, -1,
                    "semaphore '%s@%d.%d' element %lld holds %lld at the end of the kernel (a DMA or signal was never waited)",
                    ref->name, g->core, g->subcore, (long long)k, (long long)sem_read(g, k * 4));
    }
  }
}

/* A run limit: where every subcore stands, so a hang can be located. */
static void limit_fault(Eng *E, Sc *s, const Instr *in, const char *what, uint64_t n) {
  char buf[700];
  size_t len = (size_t)snprintf(buf, sizeof buf, what, (unsigned long long)n);
  for (int i = 0; i < E->nsub && len < sizeof buf - 80; i++) {
    const Sc *o = &E->sc[i];
    const Instr *at = o->pc < E->c->n ? &E->c->code[o->pc] : NULL;
    if (at) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s subcore %d.%d at line %d", i ? ";" : ":", o->core, o->subcore, at->loc.line);
    else len += (size_t)snprintf(buf + len, sizeof buf - len, "%s subcore %d.%d done", i ? ";" : ":", o->core, o->subcore);
  }
  run_fault(E->r, FAULT_LIMIT, in->loc, s->core, s->subcore, in->op_id, "%s", buf);
}

static bool is_load(Opcode op) { return op == I_LOAD || op == I_VLOAD || op == I_VLOAD_IDX; }

/* Issues s's next instruction at its cycle; false when the run stops. */
static bool issue(Eng *E, Sc *s) {
  const Instr *in = &E->c->code[s->pc];
  s->t = operands_ready(E, s, in);
  s->cost = 0;
  int st = execute(E, s, in);
  if (st == X_FAULT) return false;
  if (st == X_BLOCKED) {
    s->blocked = block_kind(in->op);
    s->block_start = s->t;
    return true;
  }
  if (!s->cost) s->cost = in->d >= 0 && s->written[in->d] ? value_cost(E, &s->reg[in->d]) : (uint64_t)cp(E)->scalar_issue_cycles;
  if (in->d >= 0 && !is_load(in->op)) s->ready[in->d] = s->t + s->cost;
  s->t += s->cost;
  SubStats *ss = &E->r->stats.sub[s->idx];
  ss->busy += s->cost;
  ss->instructions++;
  if (st == X_OK) s->pc++;
  if (in->op == I_SEM_SIGNAL || in->op == I_BARRIER) unblock_all(E, s->t);
  if (E->op_start[in - E->c->code] && ++E->r->ops > E->max_ops)
    limit_fault(E, s, in, "the run executed more than %llu operations (--max-ops)", E->max_ops);
  if (E->max_cycles && s->t > E->max_cycles) limit_fault(E, s, in, "the run passed %llu cycles (--max-cycles)", E->max_cycles);
  if (E->r->log_bytes > E->max_log && !E->r->faulted) limit_fault(E, s, in, RUN_LOG_LIMIT_MSG, E->max_log >> 20);
  return !E->r->faulted;
}

/* Always advances the earliest thing: a subcore's next instruction or a DMA
 * landing; ties go to the DMA, then to the lowest subcore, so every run of
 * a program is identical. */
static void engine_schedule(Eng *E) {
  int n = E->c->n;
  for (;;) {
    uint64_t second;
    Sc *s = next_runnable(E, &second);
    uint64_t te = dma_next_event(E->dm);
    if (!s && te == DMA_NEVER) {
      for (int i = 0; i < E->nsub; i++)
        if (!E->sc[i].done) return engine_deadlock(E);
      return;
    }
    if (!s || te <= s->t) {
      dma_events(E, te);
      continue;
    }
    /* s may run on alone while it stays strictly earliest */
    uint64_t limit = te < second ? te : second;
    E->woke = false;
    do {
      if (s->pc >= n) {
        s->done = true;
        E->r->stats.sub[s->idx].end = s->t;
        break;
      }
      if (!issue(E, s)) return;
    } while (!s->blocked && s->t < limit && !s->done && !any_unblocked(E));
  }
}

/* --max-ops counts program operations, as the reference does: an operation
 * is counted when its first instruction in the code runs (a loop's back
 * edge and the rest of its instructions do not count again); an instruction
 * of no operation (a hand-written one without id=) counts as one.  A
 * while's back edge (a cf.br to an earlier instruction) counts too: each
 * iteration is an operation, so an endless while meets the limit. */
static uint8_t *op_starts(const Code *c) {
  int maxid = -1;
  for (int i = 0; i < c->n; i++) maxid = c->code[i].op_id > maxid ? c->code[i].op_id : maxid;
  uint8_t *start = calloc((size_t)(c->n ? c->n : 1), 1), *seen = calloc((size_t)maxid + 1, 1);
  if (!start || !seen) abort();
  for (int i = 0; i < c->n; i++) {
    int id = c->code[i].op_id;
    start[i] = id < 0 || !seen[id] || (c->code[i].op == I_JUMP && c->code[i].target <= i);
    if (id >= 0) seen[id] = 1;
  }
  free(seen);
  return start;
}

static bool engine_init(Eng *E, const Program *p, const Code *c) {
  RunResult *out = E->r;
  out->logs = calloc((size_t)E->nsub, sizeof *out->logs);
  out->stats.sub = calloc((size_t)E->nsub, sizeof *out->stats.sub);
  out->stats.dma = calloc((size_t)E->nsub, sizeof *out->stats.dma);
  E->sc = calloc((size_t)E->nsub, sizeof *E->sc);
  const ChipParams *q = &p->params;
  double clock = q->clock_hz > 0 ? (double)q->clock_hz : 1e9;
  E->dm = dma_new(E->nsub, (int)p->mesh_cores, (double)q->dma_bytes_per_cycle, (double)q->hbm_bytes_per_second / clock,
                  (double)q->vmem_shared_bytes_per_cycle, (uint64_t)q->dma_setup_cycles);
  E->rd = E->no_races ? NULL : race_new(E->nsub);
  E->cache = calloc((size_t)(c->nviews ? c->nviews : 1), sizeof *E->cache);
  E->cache_state = calloc((size_t)(c->nviews ? c->nviews : 1), 1);
  E->nwarned = p->nops; /* operation ids are 0 .. nops - 1 (a user's lowering may say otherwise: not warned) */
  E->warned = calloc((size_t)(E->nwarned ? E->nwarned : 1), 1);
  bool ok = out->logs && out->stats.sub && out->stats.dma && E->sc && E->dm && (E->rd || E->no_races) && E->cache && E->cache_state && E->warned &&
            run_mem_init(p, &out->mem);
  size_t nr = (size_t)(c->nregs ? c->nregs : 1);
  for (int i = 0; ok && i < E->nsub; i++) {
    Sc *s = &E->sc[i];
    s->idx = i;
    s->core = i / (int)p->mesh_subcores;
    s->subcore = i % (int)p->mesh_subcores;
    s->sync_tag = -1;
    s->reg = calloc(nr, sizeof(Value));
    s->written = calloc(nr, 1);
    s->ready = calloc(nr, sizeof(uint64_t));
    ok = s->reg && s->written && s->ready;
  }
  return ok;
}

static void engine_stats(Eng *E) {
  RunResult *out = E->r;
  for (int i = 0; i < E->nsub; i++) {
    const DmaEngineStats *d = dma_stats(E->dm, i);
    DmaStats *o = &out->stats.dma[i];
    o->transfers = d->transfers, o->bytes = d->bytes, o->max_queue = d->max_queue, o->busy_cycles = d->busy_cycles;
    if (out->stats.sub[i].end > out->cycles) out->cycles = out->stats.sub[i].end;
  }
  for (int i = 0; i < E->nsub; i++)
    out->stats.dma[i].occupancy_avg = out->cycles ? dma_stats(E->dm, i)->occupancy_integral / (double)out->cycles : 0;
  out->stats.cycles = out->cycles;
  out->stats.nsub = E->nsub;
}

/* Each named register's last value, for --json "values". */
static void keep_values(Eng *E) {
  if (!E->sc || !E->c->reg_name) return;
  int n = 0;
  for (int i = 0; i < E->nsub; i++)
    for (int r = 0; r < E->c->nregs; r++) n += E->c->reg_name[r] && E->sc[i].written && E->sc[i].written[r];
  E->r->values = calloc((size_t)(n ? n : 1), sizeof *E->r->values);
  if (!E->r->values) return;
  for (int i = 0; i < E->nsub; i++)
    for (int r = 0; r < E->c->nregs; r++) {
      if (!E->c->reg_name[r] || !E->sc[i].written || !E->sc[i].written[r]) continue;
      NamedValue *nv = &E->r->values[E->r->nvalues++];
      nv->name = E->c->reg_name[r];
      nv->core = E->sc[i].core;
      nv->subcore = E->sc[i].subcore;
      val_copy(&nv->val, &E->sc[i].reg[r]);
    }
}

bool engine_run(const Program *p, const Code *c, const RunLimits *lim, RunResult *out) {
  memset(out, 0, sizeof *out);
  clock_t host0 = clock();
  Eng E;
  memset(&E, 0, sizeof E);
  E.p = p, E.c = c, E.r = out;
  E.free_dma = -1;
  E.nsub = (int)(p->mesh_cores * p->mesh_subcores);
  E.max_ops = lim && lim->max_ops ? lim->max_ops : RUN_DEFAULT_MAX_OPS;
  E.op_start = op_starts(c);
  E.max_cycles = lim ? lim->max_cycles : 0;
  E.max_log = run_max_log_bytes(lim);
  E.trace = lim ? lim->trace : NULL;
  E.no_log = lim && lim->no_log;
  E.no_races = lim && lim->no_races;
  E.strict_races = lim && lim->strict_races;
  out->nsub = E.nsub;
  if (!engine_init(&E, p, c)) run_fault(out, FAULT_LIMIT, (Loc){p->file, 0, 0}, 0, 0, -1, "out of memory for the program's refs or registers");
  else {
    engine_schedule(&E);
    if (!out->faulted) engine_semaphores(&E);
    if (!out->faulted) undefined_outputs(&E);
    engine_stats(&E);
  }
  race_benign_warn(&E);
  keep_values(&E);
  for (int i = 0; i < E.nsub && E.sc; i++) {
    for (int r = 0; r < c->nregs && E.sc[i].reg; r++) val_free(&E.sc[i].reg[r]);
    free(E.sc[i].reg);
    free(E.sc[i].written);
    free(E.sc[i].ready);
    val_free(&E.sc[i].tmp);
  }
  free(E.sc);
  free(E.dmas);
  free(E.dq);
  free(E.semslots);
  free(E.cache);
  free(E.cache_state);
  free(E.warned);
  free(E.hits);
  free(E.spans);
  free(E.op_start);
  dma_free(E.dm);
  race_free(E.rd);
  out->stats.host_seconds = (double)(clock() - host0) / CLOCKS_PER_SEC;
  return !out->faulted;
}
