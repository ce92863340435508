/* traces/stats.c -- statistics JSON. */
#include "stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

double stats_bandwidth(const Program *p, const Stats *r) {
  double clock = p->params.clock_hz > 0 ? (double)p->params.clock_hz : 1e9;
  return r->cycles ? (double)r->dma_bytes / ((double)r->cycles / clock) : 0;
}

void stats_headline(FILE *f, const Program *p, const Stats *r) {
  double clock = p->params.clock_hz > 0 ? (double)p->params.clock_hz : 1e9;
  fprintf(f, "%s: %llu cycles (%.3f us at %.3g GHz), %llu DMA bytes, %.3f GB/s achieved\n", p->name,
          (unsigned long long)r->cycles, (double)r->cycles / clock * 1e6, clock / 1e9, (unsigned long long)r->dma_bytes,
          stats_bandwidth(p, r) / 1e9);
}

static void write_subcores(FILE *f, const Program *p, const Stats *r) {
  fprintf(f, "  \"subcores\": [\n");
  for (int i = 0; i < r->nsub; i++) {
    const SubStats *s = &r->sub[i];
    fprintf(f, "    {\"core\": %d, \"subcore\": %d, \"instructions\": %llu, \"busy_cycles\": %llu, \"stall_dma_cycles\": %llu, "
               "\"stall_barrier_cycles\": %llu, \"stall_semaphore_cycles\": %llu, \"end_cycle\": %llu}%s\n",
            i / (int)p->mesh_subcores, i % (int)p->mesh_subcores, (unsigned long long)s->instructions, (unsigned long long)s->busy,
            (unsigned long long)s->stall_dma, (unsigned long long)s->stall_barrier, (unsigned long long)s->stall_sem,
            (unsigned long long)s->end, i + 1 < r->nsub ? "," : "");
  }
  fprintf(f, "  ],\n");
}

static void write_spaces(FILE *f, const Stats *r) {
  fprintf(f, "  \"memory_spaces\": {\n");
  for (int i = 0; i < SP_COUNT; i++) {
    const SpaceStats *s = &r->space[i];
    fprintf(f, "    \"%s\": {\"bytes_read\": %llu, \"bytes_written\": %llu, \"accesses\": %llu, \"bank_conflicts\": %llu}%s\n",
            space_key((Space)i), (unsigned long long)s->bytes_read, (unsigned long long)s->bytes_written,
            (unsigned long long)s->accesses, (unsigned long long)s->bank_conflicts, i + 1 < SP_COUNT ? "," : "");
  }
  fprintf(f, "  },\n");
}

static void write_dma(FILE *f, const Program *p, const Stats *r) {
  fprintf(f, "  \"dma_engines\": [\n");
  for (int i = 0; i < r->nsub; i++) {
    const DmaStats *s = &r->dma[i];
    fprintf(f, "    {\"core\": %d, \"subcore\": %d, \"transfers\": %llu, \"bytes\": %llu, \"busy_cycles\": %.1f, "
               "\"queue_occupancy_avg\": %.4f, \"queue_max\": %llu}%s\n",
            i / (int)p->mesh_subcores, i % (int)p->mesh_subcores, (unsigned long long)s->transfers, (unsigned long long)s->bytes,
            s->busy_cycles, s->occupancy_avg, (unsigned long long)s->max_queue, i + 1 < r->nsub ? "," : "");
  }
  fprintf(f, "  ],\n");
}

static void write_all(FILE *f, const Program *p, const Stats *r) {
  double clock = p->params.clock_hz > 0 ? (double)p->params.clock_hz : 1e9;
  fprintf(f, "{\n  \"program\": \"%s\",\n  \"chip\": \"%s\",\n  \"clock_hz\": %.0f,\n  \"cycles\": %llu,\n  \"time_us\": %.6f,\n", p->name,
          p->chip->name, clock, (unsigned long long)r->cycles, (double)r->cycles / clock * 1e6);
  write_subcores(f, p, r);
  write_spaces(f, r);
  write_dma(f, p, r);
  fprintf(f, "  \"bandwidth\": {\"dma_bytes\": %llu, \"bytes_per_second\": %.1f, \"formula\": \"dma_bytes / (cycles / clock_hz)\"},\n",
          (unsigned long long)r->dma_bytes, stats_bandwidth(p, r));
  uint64_t instr = 0;
  for (int i = 0; i < r->nsub; i++) instr += r->sub[i].instructions;
  double hs = r->host_seconds > 1e-9 ? r->host_seconds : 1e-9;
  fprintf(f, "  \"simulator\": {\"host_seconds\": %.6f, \"instructions\": %llu, \"instructions_per_second\": %.1f, "
             "\"dma_bytes_per_second\": %.1f}\n}\n",
          r->host_seconds, (unsigned long long)instr, (double)instr / hs, (double)r->dma_bytes / hs);
}

bool stats_write(const char *path, const Program *p, const Stats *r, Diag *d) {
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* a FIFO or device: in place, never replaced */
    FILE *f = fopen(path, "w");
    bool ok = f != NULL;
    if (f) write_all(f, p, r), ok = !ferror(f), ok &= fclose(f) == 0;
    if (!ok) {
      char msg[600];
      snprintf(msg, sizeof msg, "cannot write the statistics file '%.400s': %s", path, strerror(errno));
      diag_set(d, D_IN_FILE, (Loc){path, 0, 0}, msg);
    }
    return ok;
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    char msg[600];
    snprintf(msg, sizeof msg, "cannot write the statistics file '%.400s': %s", path, strerror(errno));
    if (fd >= 0) close(fd), unlink(tmp);
    diag_set(d, D_IN_FILE, (Loc){path, 0, 0}, msg);
    return false;
  }
  write_all(f, p, r);
  bool ok = !ferror(f);
  ok &= fclose(f) == 0;
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) {
    unlink(tmp);
    char msg[600];
    snprintf(msg, sizeof msg, "cannot write the statistics file '%.400s': %s", path, strerror(errno));
    diag_set(d, D_IN_FILE, (Loc){path, 0, 0}, msg);
  }
  return ok;
}
