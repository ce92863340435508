/* sim/run/engine_priv.h -- the engine's state, shared by its files:
 *   engine.c       the scheduler, the instructions, DMAs, statistics
 *   engine_view.c  operands and views: registers read, a VDesc resolved
 *                  (affine fast path, explicit work list), elements located
 *   engine_race.c  the race detector's glue, and the run's end-of-run
 *                  warnings (benign races, undefined outputs)
 * Nothing outside sim/run/engine*.c includes it. */
#ifndef SC_ENGINE_PRIV_H
#define SC_ENGINE_PRIV_H

#include "engine.h"

#include "../../memory/dma.h"
#include "../../memory/race.h"
#include "../../traces/trace.h"

#include <string.h>

#define MAX_PARTS 16

/* Eng.op_start bits, per instruction. */
enum {
  OPF_START = 1,
  OPF_LOAD = 2, /* its result is ready after the latency, not its issue */
  OPF_WAKE = 4, /* a signal or barrier */
  OPF_REGS = 8, /* it reads and writes registers only: it opens no race-detector access (race_done has nothing to close) */
  OPF_LOGS = 16, /* it may log (Instr.log): the run's log bytes change only in such an instruction (the reference is pumped from the engine's events) */
  /* Set by engine_init once the run's checks are known, so that issue tests one byte: */
  OPF_RACE = 32,  /* the race detector is on and the instruction may open an access (race_done, race_over) */
  OPF_READY = 64, /* it has a result register ready at its end (not a load: ready after its latency) that some load also writes (engine_decode.c: only those are waited for) */
  OPF_SRCS = 128, /* its issue waits for some register (engine_decode.c's srcs: a load's result) */
};

typedef enum { BLOCK_NONE, BLOCK_DMA, BLOCK_BARRIER, BLOCK_SEM } BlockKind;

typedef struct {
  int core, subcore, idx;
  int pc;
  int end;             /* the pc past its code: Code.n, or Code.split for an mpmd kernel's vector subcores */
  bool done;
  Value *reg;
  uint8_t *written;
  uint64_t *ready;     /* per register: the cycle its value is available */
  Region **rg;         /* per ref: its instance for this subcore, found on first use (NULL: not yet) */
  int barrier_gen;
  bool at_barrier;
  uint64_t t;          /* the cycle its next instruction issues */
  uint64_t cost;       /* issue cycles of the instruction just executed */
  uint64_t busy, ninstr, stall_load; /* its SubStats busy, instructions and stall_load, counted here (no load of stats per instruction) and added at the end */
  BlockKind blocked;
  uint64_t block_start;
  int sync_tag;        /* a sync_copy waiting for its transfer, or -1 */
  /* The wait the instruction at pc is in, from its first block to its
   * completion: one trace slice however often it was woken and blocked again. */
  bool waiting;
  BlockKind wait_kind;
  uint64_t wait_start;
  Value tmp;           /* scratch: results are built here, then swapped in */
  Value tmp2;          /* scratch of engine.c: a masked load's elements, a store's logged contents */
  SubStats *stats;     /* its RunResult.stats.sub entry */
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
  const Instr *code;  /* c->code */
  RunResult *r;
  Sc *sc;
  int nsub;
  uint64_t max_ops, max_cycles, max_log;
  uint64_t cycle_cap;  /* max_cycles, or UINT64_MAX when there is none */
  uint8_t *op_start;  /* per instruction: OPF_START when it starts a program operation (--max-ops counts those), OPF_LOAD, OPF_WAKE */
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
  uint8_t *cache_state; /* 0 unknown, 1 static, 2 dynamic, 3 cached, 4 dynamic with its last resolution kept */
  uint8_t *rows_form; /* per view, for engine.c's indexed accesses: 0 not known yet, 1 its kept resolution (cache_state 3) has indexed_rows' form, 2 not */
  uint8_t *idx_form;  /* per instruction, for engine.c's idx16: 0 not known yet, 1 its form but for its registers' (idx16_form), 2 not */
  int *src_at, *srcs; /* engine_decode.c: instruction i waits for registers srcs[src_at[i] .. src_at[i + 1]) */
  int *vkey_at;       /* per view: where its register operands' last values start in vkey */
  int64_t *vkey;
  struct CView *cview; /* per view: its compiled form (engine_decode.c) */
  uint8_t dsize[DT_COUNT]; /* dtype_size, tabulated */
  int64_t group_bytes;     /* the bytes of one issue slot of a vector op (num_lanes 32-bit words) */
  int64_t banks, bank_bytes; /* VMEM's banks (1 .. 256) and bytes per bank as indexed accesses count them */
  int bank_shift;          /* log2 of bank_bytes when both are powers of two, else -1 */
  uint8_t *fast;      /* per instruction: its FastKind (engine_decode.c) */
  Sc **ring;         /* engine_sched.c: the runnable subcores sorted by (cycle, index), held by address (no index arithmetic per turn) */
  int nring, head;
  int ring_mask;      /* the ring's size (a power of two, at least nsub) less one */
  int *woken, nwoken; /* subcores released from a block, to join the ring */
  int64_t bank_hits[256]; /* an indexed access's lanes per VMEM bank (zero but for the banks in bank_used) */
  uint8_t bank_used[256];
  int nbank_used;
  bool no_log, no_races, strict_races, profile;
  bool watch;        /* E->prof or E->origin: issue's per-instruction bookkeeping beyond the statistics */
  uint8_t *warned;   /* per operation id: its duplicate-scatter warning was given */
  int nwarned;
  struct Hit *hits;  /* the scatter being run: element and lane of each write */
  int64_t caphits;
  ProfLine *prof;    /* per instruction, summed into Stats.prof at the end; NULL unless profiled */
  ProfLine *acct;    /* when watch: prof, or (origins only) a scratch array, so that issue counts without a test of which */
  int cur;           /* the instruction being executed (its index in the code) */
  uint32_t pretag;   /* the race access a declining specialised handler opened, for the general one (pretag_set) */
  bool pretag_set;
  int64_t *spans;    /* tracing: the (offset, bytes) pairs the access touched */
  int64_t nspans, capspans;
  bool track_origins;
  int *origin;       /* --track-origins: per (subcore, register) the instruction + 1 that left its undefined lanes; NULL when off */
  const char *sem_scope; /* "kernel" or "program": where semaphores are checked */
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
  int64_t dense;       /* eng_dense_block, worked out with the shape (-1: not known) */
} EV;

typedef struct {
  int64_t off;
  int n;
} Part;

/* A view of one integer/slice level straight on its ref, every size
 * static (the common `x[pl.ds(i * 16, 16)]`, `x.at[i]`), compiled once:
 * its affine form is base = sum(start_d * rstride_d) and a fixed shape, so
 * resolving it reads the start registers, checks each start against its
 * dimension and does one multiply-add per dimension. */
typedef struct CView {
  bool on;
  int nd;                   /* the level's entries (the ref's rank) */
  bool slice[MAX_RANK];
  Operand start[MAX_RANK];
  int64_t size[MAX_RANK], stride[MAX_RANK]; /* slices: the static size and step */
  int64_t dim[MAX_RANK], rstride[MAX_RANK]; /* the ref's dims and byte strides */
  EV shape;                 /* the affine fields that do not depend on the starts */
  /* The fast handlers' check: entry d stays inside the ref exactly when
   * 0 <= start <= maxstart[d] (quick is false when a slice of no elements
   * or a step below 1 makes that not so: those views take the full path). */
  bool quick;
  int64_t maxstart[MAX_RANK];
  bool dense;               /* the fast handlers' form: quick, and its elements (at least one) dense from the base */
  int ref;                  /* its ref's index */
  SpaceStats *space;        /* its ref's memory space's statistics (engine_decode.c: no chain of loads through the VDesc and the run) */
  uint8_t one;              /* CV_ONE: one entry, its start a register; CV_ONE_INT: one whose register only ever holds an int scalar (engine_decode.c) */
} CView;
enum { CV_ONE = 1, CV_ONE_INT = 2 };

static inline bool eng_cview_base(const Sc *s, const CView *cv, int64_t *base) {
  int64_t b = 0;
  if (!cv->quick) return false;
  for (int d = 0; d < cv->nd; d++) {
    int64_t start = cv->start[d].imm;
    int r = cv->start[d].reg;
    if (r >= 0) {
      const Value *w = &s->reg[r];
      if (!s->written[r] || w->n != 1 || !w->def[0] || (w->dtype != DT_INT32 && w->dtype != DT_INT64)) return false;
      if (__builtin_add_overflow(start, w->v[0].i, &start)) return false;
    }
    if ((uint64_t)start > (uint64_t)cv->maxstart[d]) return false; /* below 0 or past the last start that fits */
    b += start * cv->rstride[d];
  }
  *base = b;
  return true;
}

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

/* The specialised handler engine_decode.c picks for an instruction from
 * its static form (op, dtypes, mask, a compiled view).  engine.c runs it
 * first; it declines, having changed nothing, when a run-time condition of
 * its fast form fails (an operand's dtype or lanes, an undefined lane, a
 * start outside the ref, a span that may race, a trace on), and the
 * general handler then runs the instruction as always, faults included
 * (a race access the handler opened is handed over: Eng.pretag).  A
 * handler that runs sets s->cost itself (issue works a cost out only
 * after a general handler), and never blocks nor faults. */
typedef enum {
  FK_NONE,
  FK_BIN_I32,  /* arith.binary of int32 operands into int32 (or a comparison into bool) */
  FK_VLOAD,    /* an unmasked vector_load or memref.load of a compiled view */
  FK_VSTORE,   /* an unmasked, non-add vector_store or memref.store of a compiled view */
  FK_ENDFOR,   /* scf.yield */
  FK_VLOAD_M,  /* a masked vector_load of a compiled view */
  FK_VSTORE_M, /* a masked, non-add vector_store of a compiled view */
  FK_MOV,      /* sc.mov */
  FK_SLOAD,    /* FK_VLOAD of one int32 element at an aligned offset, tracing off */
  FK_SSTORE,   /* FK_VSTORE of one int32 element at an aligned offset, tracing off */
  FK_BIN_S,    /* FK_BIN_I32 of two registers that only ever hold int32/int64 scalars */
  FK_ENDFOR_S, /* FK_ENDFOR whose counter, bound and step registers only ever hold int32/int64 scalars */
  FK_ADD_S,    /* FK_BIN_S of + (the index arithmetic's common operators, each its own copy) */
  FK_MOD_S,    /* FK_BIN_S of % */
} FastKind;

/* ---- engine_decode.c ---- */
bool eng_decode(Eng *E);
void eng_decode_free(Eng *E);

/* ---- engine_sched.c ---- */
bool eng_ring_init(Eng *E);
void eng_ring_fill(Eng *E);
void eng_ring_free(Eng *E);
/* The scheduler calls these once per turn (with subcores in step, once per
 * instruction), so the common cases are inline. */
static inline bool eng_ring_before(const Sc *x, const Sc *y) { return x->t < y->t || (x->t == y->t && x->idx < y->idx); }
static inline Sc *eng_ring_at(const Eng *E, int k) { return E->ring[(E->head + k) & E->ring_mask]; }
/* The earliest runnable subcore (NULL when none) and, in *second, the
 * earliest cycle of the other runnable ones (UINT64_MAX when none). */
static inline Sc *eng_ring_top(const Eng *E, uint64_t *second) {
  *second = E->nring > 1 ? eng_ring_at(E, 1)->t : UINT64_MAX;
  return E->nring ? eng_ring_at(E, 0) : NULL;
}
void eng_ring_settle_all(Eng *E, bool ran);
/* After the head ran (ran: true) or a DMA event: the head leaves, and goes
 * back in at its new cycle unless it is done or blocked; the released join. */
static inline void eng_ring_settle(Eng *E, bool ran) { eng_ring_settle_all(E, ran); }
/* eng_ring_settle after the head s ran (ran: true), when s is known
 * runnable and nobody was released (its turn ended at the limit): s
 * belongs at the tail unless it is before the tail's subcore, so it moves
 * to the slot after the tail with one comparison. */
static inline void eng_ring_requeue(Eng *E, Sc *s) {
  int n = E->nring, h = E->head, m = E->ring_mask;
  if (n > 1) {
    const Sc *last = E->ring[(h + n - 1) & m];
    if (s->t > last->t || (s->t == last->t && s->idx > last->idx)) {
      E->ring[(h + n) & m] = s;
      E->head = (h + 1) & m;
      return;
    }
  }
  eng_ring_settle_all(E, true);
}
/* eng_ring_settle after the head s ran, inline for the common turn:
 * nobody released and s still runnable is eng_ring_requeue. */
static inline void eng_ring_ran(Eng *E, Sc *s) {
  if (!E->nwoken && !s->done && !s->blocked) eng_ring_requeue(E, s);
  else eng_ring_settle_all(E, true);
}

/* ---- engine_scan.c ---- */
bool eng_scan(Eng *E, Sc *s, const Instr *in);
bool eng_sort(Eng *E, Sc *s, const Instr *in);
bool eng_scan_count(Eng *E, Sc *s, const Instr *in);
bool eng_pack(Eng *E, Sc *s, const Instr *in);
bool eng_unpack(Eng *E, Sc *s, const Instr *in);
bool eng_all_reduce(Eng *E, Sc *s, const Instr *in);

/* ---- engine_view.c ---- */
bool eng_efault(Eng *E, Sc *s, const Instr *in, FaultKind k, const char *msg);
/* The register reads and lane-count checks every instruction makes are
 * inline; only their faults are calls. */
bool eng_fits_fault(Eng *E, Sc *s, const Instr *in, const char *what, int64_t have, const char *of, int64_t want);
static inline bool eng_fits(Eng *E, Sc *s, const Instr *in, const char *what, int64_t have, const char *of, int64_t want) {
  return have == want || eng_fits_fault(E, s, in, what, have, of, want);
}
/* Operands that broadcast: n lanes or one. */
static inline bool eng_fits1(Eng *E, Sc *s, const Instr *in, const char *what, int64_t have, const char *of, int64_t want) {
  return have == 1 || have == want || eng_fits_fault(E, s, in, what, have, of, want);
}
Value *eng_rd_unbound(Eng *E, Sc *s, const Instr *in, bool *ok);
static inline Value *eng_rd(Eng *E, Sc *s, const Instr *in, int r, bool *ok) {
  return s->written[r] ? &s->reg[r] : eng_rd_unbound(E, s, in, ok);
}
/* The scratch value s->tmp becomes register r (no copy, no allocation);
 * inline: every instruction with a vector result ends here. */
static inline void eng_swap_in(Sc *s, int r) {
  Value *d = &s->reg[r], *t = &s->tmp; /* the buffers trade places; the shape is the result's (every user of tmp shapes it first) */
  Cell *v = d->v;
  uint8_t *def = d->def;
  int64_t cap = d->cap;
  d->v = t->v, d->def = t->def, d->cap = t->cap;
  t->v = v, t->def = def, t->cap = cap;
  d->dtype = t->dtype, d->rank = t->rank, d->n = t->n;
  memcpy(d->shape, t->shape, sizeof d->shape); /* a fixed size: a few moves (a loop over the rank becomes a libc call) */
  s->written[r] = 1;
}
/* Defined flags (one byte a lane, 0 or 1) a word at a time: the lanes of
 * a vector are few, and a libc call per flag array costs more than they. */
#define ENG_DEFS_ONE 0x0101010101010101ull
static inline void eng_defs_set(uint8_t *d, int64_t n) {
  uint64_t w = ENG_DEFS_ONE;
  if (n == 1) { /* a scalar: the loop's tail would become a memset call */
    d[0] = 1;
    return;
  }
  if (n == 16) { /* 16 lanes: two words (the compiler makes the loop below a memset call) */
    memcpy(d, &w, 8);
    memcpy(d + 8, &w, 8);
    return;
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) memcpy(d + i, &w, 8);
  for (; i < n; i++) d[i] = 1;
}
static inline void eng_defs_copy(uint8_t *restrict d, const uint8_t *restrict src, int64_t n) {
  if (n == 16) { /* as eng_defs_set */
    uint64_t w[2];
    memcpy(w, src, 16);
    memcpy(d, w, 16);
    return;
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, src + i, 8);
    memcpy(d + i, &w, 8);
  }
  for (; i < n; i++) d[i] = src[i];
}
/* Whether every flag is 1. */
static inline bool eng_defs_all(const uint8_t *d, int64_t n) {
  if (n == 16) { /* as eng_defs_set: two words, one test */
    uint64_t w[2];
    memcpy(w, d, 16);
    return (w[0] == ENG_DEFS_ONE) & (w[1] == ENG_DEFS_ONE);
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, d + i, 8);
    if (w != ENG_DEFS_ONE) return false;
  }
  for (; i < n; i++)
    if (d[i] != 1) return false;
  return true;
}

/* val_shape for a result whose every lane the caller then writes (value
 * and defined flag): the flags are not cleared first. */
static inline void eng_shape(Value *v, Dtype t, int rank, const int64_t *shape) {
  int64_t n = 1;
  if (rank == 1) n = shape[0]; /* the common vector, without the loop */
  else
    for (int i = 0; i < rank; i++) n *= shape[i];
  if (n > v->cap) {
    val_shape(v, t, rank, shape);
    return;
  }
  v->dtype = t;
  v->rank = rank;
  if (rank == 1) v->shape[0] = shape[0]; /* the common vector, without the loop's libc call */
  else
    for (int i = 0; i < rank; i++) v->shape[i] = shape[i];
  v->n = n;
}
/* val_scalar without its general shape handling. */
static inline void eng_scalar(Value *v, Dtype t, Cell c) {
  if (v->cap < 1) {
    val_scalar(v, t, c);
    return;
  }
  v->dtype = t;
  v->rank = 0;
  v->n = 1;
  v->v[0] = t == DT_INT64 ? c : dtype_fit(t, c); /* int64 fits as it is */
  v->def[0] = 1;
}
/* val_copy through eng_shape. */
static inline void eng_copy(Value *dst, const Value *src) {
  if (dst == src) return;
  eng_shape(dst, src->dtype, src->rank, src->shape);
  if (!src->n) return;
  memcpy(dst->v, src->v, sizeof(Cell) * (size_t)src->n);
  memcpy(dst->def, src->def, (size_t)src->n);
}
/* The value instructions of lowering/lower_valops.c (engine_valops.c). */
bool eng_x_valops(Eng *E, Sc *s, const Instr *in);
bool eng_int_reg_slow(Eng *E, Sc *s, const Instr *in, int r, int64_t *out);
/* A scalar integer operand (an index, bound or count). */
static inline bool eng_int_reg(Eng *E, Sc *s, const Instr *in, int r, int64_t *out) {
  const Value *w = &s->reg[r];
  if (s->written[r] && w->n == 1 && w->def[0] && (w->dtype == DT_INT32 || w->dtype == DT_INT64)) { /* the common case */
    *out = w->v[0].i;
    return true;
  }
  return eng_int_reg_slow(E, s, in, r, out);
}
bool eng_ev_resolve(Eng *E, Sc *s, const Instr *in, int view, int core, int subcore, EV *ev);
/* The byte offset of a compiled view's first element (cv->on) when every
 * start register holds a defined int32/int64 scalar and every start keeps
 * its entry inside the ref; false, changing nothing, otherwise (the full
 * resolution then reads the operands and names any fault). */
static inline bool eng_cview_base(const Sc *s, const struct CView *cv, int64_t *base);
int64_t eng_to_flat(int rank, const int64_t *shape, const int64_t *idx);
bool eng_ev_parts(EV *ev, int64_t elem, Part *parts, int *np);
Cell eng_ev_read(EV *ev, const Part *pt, int np, uint8_t *def);
void eng_ev_write(EV *ev, const Part *pt, int np, Cell c);
void eng_ev_undef(EV *ev, const Part *pt, int np);
bool eng_ev_oob(Eng *E, Sc *s, const Instr *in, EV *ev);
int64_t eng_aff_off(const EV *ev, int64_t i);
int64_t eng_dense_block(const EV *ev);

/* ---- engine_origin.c ---- */
bool eng_origin_init(Eng *E);
/* After in ran on s: the origin of the undefined lanes it left in in->d. */
void eng_origin_note(Eng *E, Sc *s, const Instr *in);
/* After an uninit fault of in on s about register value v (a pointer into
 * s->reg; anything else names no origin): Fault.origin and origin_what. */
void eng_origin_fault(Eng *E, const Sc *s, const Instr *in, const Value *v);

/* ---- engine_race.c ---- */
uint32_t eng_race_open_rows(Eng *E, Sc *s, const Instr *in, bool write, bool atomic, int dma, const EV *ev, int64_t e0, int64_t n);
uint32_t eng_race_open(Eng *E, Sc *s, const Instr *in, bool write, bool atomic, int dma, const EV *ev);
void eng_undefined_outputs(Eng *E);
void eng_race_benign_warn(Eng *E);
void eng_race_pre(Eng *E, uint32_t tag, const Region *g, const Part *pt, int np);
bool eng_race_parts(Eng *E, uint32_t tag, const Region *g, const Part *pt, int np);
bool eng_race_copy_clean(Eng *E, const Region *sg, int64_t soff, const Region *dg, int64_t doff, int64_t n);
void eng_race_copy_record(Eng *E, const Region *sg, int64_t soff, const Region *dg, int64_t doff, int64_t n);
/* An indexed access's lanes (x_indexed): one lane, or lanes close together as one span. */
bool eng_race_lane(Eng *E, uint32_t tag, const Region *g, int64_t off, int n);
bool eng_race_lanes_clean(Eng *E, uint32_t tag, const Region *g, int64_t lo, int64_t hi);
void eng_race_lanes_record(Eng *E, uint32_t tag, const Region *g, int64_t base, int64_t stride, const Cell *iv, int64_t n);
int eng_sem_slot(Eng *E, const Region *g, int64_t off);

#endif
