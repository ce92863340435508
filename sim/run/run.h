/* sim/run/run.h -- what one execution of a program produces, whoever ran it
 * (the engine or the reference interpreter): the final memory, a log of
 * every value a memory operation returned or left behind, per subcore, and
 * the fault that stopped the run, if any. */
#ifndef SC_RUN_H
#define SC_RUN_H

#include "../../isa/value.h"
#include "../../memory/memory.h"
#include "../../lowering/program.h"
#include "../../traces/stats.h"

/* X(ENUM, kind name printed after "fault: ") */
#define FAULT_KINDS(X) \
  X(OOB, "oob")        \
  X(RACE, "race")      \
  X(UNINIT, "uninit")  \
  X(DEADLOCK, "deadlock") \
  X(SEMAPHORE, "semaphore") \
  X(DIVZERO, "divzero") \
  X(LIMIT, "limit")    \
  X(EXPECT, "expect")  \
  X(LOWERING, "lowering") /* a user's lowering whose operands do not fit */ \
  X(CHECK, "check")    /* a pl.debug_check whose condition is False */

typedef enum {
  FAULT_NONE,
#define X(e, n) FAULT_##e,
  FAULT_KINDS(X)
#undef X
} FaultKind;
const char *fault_name(FaultKind k);

/* The element a fault or a failed check names, as an index in its value's
 * or ref's shape, with the values found and wanted as text ("undefined"
 * for an undefined one): data for --json, so that no one parses messages. */
typedef struct {
  bool set;
  int rank;
  int64_t index[MAX_RANK];
  char got[64], wanted[64];
} RunElement;

/* Sets e to flat element `flat` of `shape` (rank 0: a scalar), the values left as they are. */
void run_element(RunElement *e, int rank, const int64_t *shape, int64_t flat);
/* "lane 3" for rank 1 (and 0), "element [1, 1]" above: how messages name it. */
void run_element_text(const RunElement *e, char *buf, size_t n);

typedef struct {
  FaultKind kind;
  Loc loc;
  int core, subcore;
  int op;            /* the operation's id, -1 when none */
  char details[768];
  RunElement at;     /* the lane or element, when the fault names one */
  Loc origin;        /* --track-origins, an uninit fault: the load its undefined value came from (line 0: none) */
  char origin_what[160]; /* that load: "tpu.vector_load of vmem 'buf'" */
} Fault;

/* What an event records: a loaded value, the old value of a swap, or the
 * contents of the written view right after a store. */
typedef enum { EV_LOADED = 'L', EV_OLD = 'O', EV_NEW = 'N' } EventKind;

typedef struct {
  int op;          /* Op.id */
  EventKind kind;
  Value val;
} Event;

typedef struct {
  Event *ev;
  int n, cap;
} EventLog;

/* A warning of the run: duplicate offsets of a non-add scatter (SPEC §7.7,
 * the first time an operation does it), a benign race (§10.2, once per
 * pair of operations), an output ref left partly undefined (§10.1). */
typedef struct {
  const char *kind;  /* "duplicate-offsets", "benign-race", "undefined-output" */
  Loc loc;
  int core, subcore;
  char text[900];
} RunWarning;
#define RUN_MAX_WARNINGS 100

/* A line pl.debug_print wrote (sim/run/debug_print.c), in the order run. */
typedef struct {
  int core, subcore;
  char *text;
} RunPrint;

typedef struct {
  MemSystem mem;
  int nsub;          /* cores * subcores */
  EventLog *logs;    /* one per subcore, index core * subcores + subcore */
  bool faulted;
  Fault fault;
  uint64_t ops;      /* operations executed, all subcores */
  uint64_t log_bytes; /* held by the event logs, all subcores (about: with the allocator's share) */
  uint64_t cycles;   /* engine only: simulated cycles */
  Stats stats;       /* engine only */
  struct NamedValue *values; /* engine only: each name's last value per subcore */
  int nvalues;
  RunWarning *warnings; /* engine only */
  int nwarnings;
  uint64_t more_warnings; /* past RUN_MAX_WARNINGS */
  int *atomics;      /* engine only: the subcore of each fetch_and_add, in the order run */
  int natomics, capatomics;
  /* Where run_log sends events instead of logs (streaming verification,
   * sim/run/stream.h), when set. */
  void (*sink)(void *ctx, int sub, int op, EventKind k, const Value *v);
  void *sink_ctx;
  void *stream_q;    /* the stream's queues (StreamQ, one per subcore), when attached and open: run_log's fast path */
  int stream_side;   /* the side the run is attached as (STREAM_REF, STREAM_ENG) */
  uint64_t *stream_peer_bytes; /* the other side's log_bytes (what a matched event of the other side frees) */
  bool *fault_note;  /* set to true with faulted, when set (the stream's one flag of its rare cases) */
  RunPrint *prints;  /* debug_print's lines */
  int nprints, capprints;
} RunResult;

typedef struct NamedValue {
  const char *name;
  int core, subcore;
  Value val;
} NamedValue;

struct TraceSink;
typedef struct {
  uint64_t max_ops;  /* per run; 0: the default */
  uint64_t max_cycles; /* engine only; 0: unbounded */
  struct TraceSink *trace; /* engine only: where events go, or NULL */
  bool no_log;       /* engine only: keep no event log (nothing verifies it) */
  bool no_races;     /* engine only: skip race detection */
  const int *atomics; /* reference only: replay fetch_and_adds in this order (SPEC §9.10) */
  int natomics;
  uint64_t max_log_bytes; /* per run; 0: the default */
  bool strict_races; /* engine only: benign races are faults too (SPEC §10.2) */
  bool profile;      /* engine only: account cycles per program line (Stats.prof) */
  bool track_origins; /* engine only: an uninit fault names the load its value came from (Fault.origin) */
  struct Stream *stream; /* streaming verification: the run's events go there (sim/run/stream.h) */
  /* A kernel of a program of several kernels (sim/run/run_kernels.c): */
  const MemSystem *carry; /* the memory the previous kernel left (NULL: the first kernel, or one kernel) */
  KernelKind carry_kind;  /* the previous kernel's kind: semaphores carry between kernels of one kind */
  int64_t carry_vsubs;    /* the previous kernel's Program.mpmd_vsubs: its subcore carry_vsubs was a scalar subcore */
  bool defer_sem_check;   /* not the last kernel: semaphores are checked at the end of the program */
  bool program_end;       /* the last kernel of several: a leak is "at the end of the program" */
  uint64_t t0;            /* engine only: the cycle the kernel starts at (the previous kernels' end) */
} RunLimits;

#define RUN_DEFAULT_MAX_OPS 50000000ULL
/* The event logs copy every loaded and stored value for verification, so
 * operations alone do not bound a run's memory (--max-log-mb). */
#define RUN_DEFAULT_MAX_LOG_MB 512ULL
#define RUN_LOG_LIMIT_MSG \
  "the run's event log passed %llu MB (--max-log-mb; it keeps every loaded and stored value to verify the run, and --no-verify keeps none)"
/* The race detector's shadow: up to 9 bytes per byte the run touched, bounded
 * so that a run touching more (a long walk over a large HBM ref) stops
 * with a limit fault instead of exhausting the host. */
#define RUN_MAX_SHADOW_MB 4096ULL
#define RUN_SHADOW_LIMIT_MSG \
  "the race detector's shadow passed %llu MB (it keeps up to 9 bytes for every byte the run touched; --no-races keeps none)"
/* The byte budget of a run's event logs from its limits. */
uint64_t run_max_log_bytes(const RunLimits *lim);

/* Builds the region specs of a program (one per ref). */
RegionSpec *run_region_specs(const Program *p);
bool run_mem_init(const Program *p, MemSystem *m);
/* Appends an event to sub's log (ctx the RunResult).  run_log
 * (sim/run/stream.h) sends an event here, or to the stream the run is
 * attached to. */
void run_log_append(void *ctx, int sub, int op, EventKind k, const Value *v);
void run_result_free(RunResult *r);
void run_fault(RunResult *r, FaultKind k, Loc at, int core, int subcore, int op, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* A new warning of kind `kind` at `at` (its text for the caller to fill),
 * or NULL past RUN_MAX_WARNINGS (then counted in more_warnings). */
RunWarning *run_warning(RunResult *r, const char *kind, Loc at, int core, int subcore);
/* Instance name as PROGRAM_FORMAT.md gives it: x, shared@0, buf@0.1. */
void run_instance_name(const Ref *ref, const Region *g, char *buf, size_t n);
/* Whether a semaphore_signal adding inc to count stays within int32 (a
 * semaphore is an int32 counter: past its range the signal faults
 * `semaphore` rather than wrap); false with the fault recorded. */
bool run_sem_signal_fits(RunResult *r, const Ref *ref, const Region *g, int64_t count, int64_t inc, Loc at, int core,
                         int subcore, int op);
/* The instance of a ref seen from a subcore. */
Region *run_region(RunResult *r, const Ref *ref, int core, int subcore);

/* A kernel's start in a program of several kernels: the hbm refs and the
 * semaphores the program declares (the kernel's first p->nshared refs)
 * take the contents `from` holds after the previous kernel, instance by
 * instance (when both kernels are of one kind: a scalar subcore's
 * semaphores are not a vector subcore's).  A semaphore instance left
 * nonzero that p's subcores do not hold can never be waited: r faults
 * `semaphore` and false is returned. */
bool run_carry(const Program *p, const MemSystem *from, const RunLimits *lim, RunResult *r);
/* "kernel" or "program": where a run checks its semaphores (SPEC §7.5). */
const char *run_sem_scope(const RunLimits *lim);

/* An mpmd kernel (Program.mpmd_vsubs, sim/run/run_mpmd.c) runs two meshes
 * on one combined mesh: subcore mpmd_vsubs of each core is its scalar
 * subcore, the others its vector subcores.  These give, for the subcore
 * `subcore` of a core, its mesh's subcores on that core (the first and how
 * many: what a barrier waits for) and the body it runs; for any other
 * kernel, the whole core and p->body. */
bool run_is_scalar_sub(const Program *p, int subcore);
int run_mesh_first(const Program *p, int subcore);
int run_mesh_count(const Program *p, int subcore);
const Body *run_body_of(const Program *p, int subcore);

/* The reference interpreter (sim/reference.c): SPEC §5 and §9 applied to
 * the body directly. */
bool reference_run(const Program *p, const RunLimits *lim, RunResult *out);
/* The same in steps, beside the engine (streaming verification, lim->stream
 * set): open, then pump (run until subcore sub's engine events are matched,
 * or nothing can go on before the engine does), then close (run to the
 * end, free; the result of reference_run). */
struct RefRun;
struct RefRun *reference_open(const Program *p, const RunLimits *lim, RunResult *out);
void reference_pump(struct RefRun *R, int sub);
bool reference_close(struct RefRun *R);

#endif
