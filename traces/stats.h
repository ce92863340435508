/* traces/stats.h -- the run's statistics as JSON (--stats FILE) and the
 * headline figures the CLI prints. */
#ifndef SC_STATS_H
#define SC_STATS_H

#include <stdio.h>

#include "../sim/run.h"

/* Writes the statistics of an engine run to `path`, whole or not at all
 * (a temporary file renamed into place); false with *d set on I/O error. */
bool stats_write(const char *path, const Program *p, const RunResult *r, Diag *d);
/* One line of headline figures: cycles, time, DMA bytes, bandwidth. */
void stats_headline(FILE *f, const Program *p, const RunResult *r);
/* Achieved DMA bandwidth in bytes per second: dma_bytes / (cycles / clock). */
double stats_bandwidth(const Program *p, const RunResult *r);

#endif
