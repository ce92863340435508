/* traces/stats.h -- the run's statistics as JSON (--stats FILE) and the
 * headline figures the CLI prints. */
#ifndef SC_STATS_H
#define SC_STATS_H

#include <stdio.h>

#include "../lowering/program.h"

/* The engine's statistics (docs/timing.md, "Statistics").  Every cycle of
 * a subcore is in exactly one category:
 *   busy + stall_load + stall_dma + stall_sem + stall_barrier + finished
 *   = the run's cycles. */
typedef struct {
  uint64_t busy;          /* cycles issuing instructions */
  uint64_t stall_load;    /* cycles waiting for a loaded value (load latency, bank conflicts) */
  uint64_t stall_dma, stall_barrier, stall_sem; /* cycles blocked on a DMA, a barrier, a semaphore */
  uint64_t finished;      /* cycles after its end (the run's cycles - end) */
  uint64_t instructions, end; /* end: its last cycle, or where it stood when the run stopped */
} SubStats;

typedef struct {
  uint64_t bytes_read, bytes_written, accesses, bank_conflicts;
  uint64_t dma_bytes;     /* granule-rounded bytes of the DMAs to or from it (once per DMA) */
} SpaceStats;

typedef struct {
  uint64_t transfers, bytes, max_queue;
  double busy_cycles, occupancy_avg;
  double setup_cycles, queue_cycles, transfer_cycles; /* memory/dma.h DmaEngineStats */
} DmaStats;

/* One program line of the profile (--profile, the "profile" section of
 * --stats): the instructions lowered from it, summed over subcores.  A stall
 * belongs to the instruction that waited (a DMA wait, a barrier, the use of
 * a loaded value), as perf annotate charges the instruction that stalls. */
typedef struct {
  int line;
  uint64_t instructions;  /* issued (a blocked instruction counts once, when it completes) */
  uint64_t issue;         /* cycles issuing */
  uint64_t stall_load, stall_dma, stall_sem, stall_barrier; /* cycles */
  uint64_t bytes;         /* loaded, stored, or moved by its DMAs (each DMA once) */
} ProfLine;

typedef struct {
  SubStats *sub;               /* per subcore */
  SpaceStats space[SP_COUNT];
  DmaStats *dma;               /* per DMA engine (one per subcore) */
  uint64_t dma_bytes;          /* granule-rounded bytes moved by DMAs */
  double host_seconds;
  uint64_t cycles;             /* the run's last cycle (as RunResult.cycles) */
  int nsub;                    /* subcores: the length of sub and dma */
  ProfLine *prof;              /* per program line, most cycles first; NULL unless profiled */
  int nprof;
} Stats;


/* Writes the statistics of an engine run to `path`, whole or not at all
 * (a temporary file renamed into place); false with *d set on I/O error. */
bool stats_write(const char *path, const Program *p, const Stats *s, Diag *d);
/* One line of headline figures: cycles, time, DMA bytes, bandwidth, and
 * what bounds the run (stats_bound). */
void stats_headline(FILE *f, const Program *p, const Stats *s);
/* Achieved DMA bandwidth in bytes per second: dma_bytes / (cycles / clock). */
double stats_bandwidth(const Program *p, const Stats *s);
/* What bounds the run, as one sentence in buf ("HBM-bound: 91 % of the
 * chip's HBM bandwidth"); returns its key ("hbm", "vmem_shared",
 * "dma_engine", "issue", "load_latency", "dma_latency", "semaphore",
 * "barrier", "idle") and sets *fraction to the figure the sentence gives. */
const char *stats_bound(const Program *p, const Stats *s, char *buf, size_t n, double *fraction);
/* The per-line profile as a text table, most cycles first, with each
 * line's source text (read from p->file when it can be). */
void stats_profile(FILE *f, const Program *p, const Stats *s);

#endif
