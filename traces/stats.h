/* traces/stats.h -- the run's statistics as JSON (--stats FILE) and the
 * headline figures the CLI prints. */
#ifndef SC_STATS_H
#define SC_STATS_H

#include <stdio.h>

#include "../lowering/program.h"

/* The engine's statistics (issue: timing model). */
typedef struct {
  uint64_t busy, stall_dma, stall_barrier, stall_sem; /* cycles */
  uint64_t instructions, end;                          /* end: last cycle */
} SubStats;

typedef struct {
  uint64_t bytes_read, bytes_written, accesses, bank_conflicts;
} SpaceStats;

typedef struct {
  uint64_t transfers, bytes, max_queue;
  double busy_cycles, occupancy_avg;
} DmaStats;

typedef struct {
  SubStats *sub;               /* per subcore */
  SpaceStats space[SP_COUNT];
  DmaStats *dma;               /* per DMA engine (one per subcore) */
  uint64_t dma_bytes;          /* granule-rounded bytes moved by DMAs */
  double host_seconds;
  uint64_t cycles;             /* the run's last cycle (as RunResult.cycles) */
  int nsub;                    /* subcores: the length of sub and dma */
} Stats;


/* Writes the statistics of an engine run to `path`, whole or not at all
 * (a temporary file renamed into place); false with *d set on I/O error. */
bool stats_write(const char *path, const Program *p, const Stats *s, Diag *d);
/* One line of headline figures: cycles, time, DMA bytes, bandwidth. */
void stats_headline(FILE *f, const Program *p, const Stats *s);
/* Achieved DMA bandwidth in bytes per second: dma_bytes / (cycles / clock). */
double stats_bandwidth(const Program *p, const Stats *s);

#endif
