/* traces/stats.c -- statistics JSON (strings and numbers through json.h,
 * the file through outfile.h). */
#include "stats.h"

#include <string.h>

#include "json.h"
#include "outfile.h"

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
    fprintf(f, "    {\"core\": %d, \"subcore\": %d, \"transfers\": %llu, \"bytes\": %llu, \"busy_cycles\": ", i / (int)p->mesh_subcores,
            i % (int)p->mesh_subcores, (unsigned long long)s->transfers, (unsigned long long)s->bytes);
    json_double(f, s->busy_cycles, 1);
    fprintf(f, ", \"queue_occupancy_avg\": ");
    json_double(f, s->occupancy_avg, 4);
    fprintf(f, ", \"queue_max\": %llu}%s\n", (unsigned long long)s->max_queue, i + 1 < r->nsub ? "," : "");
  }
  fprintf(f, "  ],\n");
}

/* "key": value with `decimals` digits, then `after`. */
static void field(FILE *f, const char *key, double v, int decimals, const char *after) {
  fprintf(f, "\"%s\": ", key);
  json_double(f, v, decimals);
  fputs(after, f);
}

static void write_all(FILE *f, const Program *p, const Stats *r) {
  double clock = p->params.clock_hz > 0 ? (double)p->params.clock_hz : 1e9;
  fprintf(f, "{\n  \"version\": " SC_JSON_VERSION ",\n  \"program\": ");
  json_str(f, p->name);
  fprintf(f, ",\n  \"chip\": ");
  json_str(f, p->chip->name);
  fprintf(f, ",\n  ");
  field(f, "clock_hz", clock, 0, ",\n");
  fprintf(f, "  \"cycles\": %llu,\n  ", (unsigned long long)r->cycles);
  field(f, "time_us", (double)r->cycles / clock * 1e6, 6, ",\n");
  write_subcores(f, p, r);
  write_spaces(f, r);
  write_dma(f, p, r);
  fprintf(f, "  \"bandwidth\": {\"dma_bytes\": %llu, ", (unsigned long long)r->dma_bytes);
  field(f, "bytes_per_second", stats_bandwidth(p, r), 1, ", \"formula\": \"dma_bytes / (cycles / clock_hz)\"},\n");
  uint64_t instr = 0;
  for (int i = 0; i < r->nsub; i++) instr += r->sub[i].instructions;
  double hs = r->host_seconds > 1e-9 ? r->host_seconds : 1e-9;
  fprintf(f, "  \"simulator\": {");
  field(f, "host_seconds", r->host_seconds, 6, ", ");
  fprintf(f, "\"instructions\": %llu, ", (unsigned long long)instr);
  field(f, "instructions_per_second", (double)instr / hs, 1, ", ");
  field(f, "dma_bytes_per_second", (double)r->dma_bytes / hs, 1, "}\n}\n");
}

bool stats_write(const char *path, const Program *p, const Stats *r, Diag *d) {
  int err = 0;
  OutFile *o = outfile_open(path, &err);
  if (o) write_all(outfile_stream(o), p, r);
  if (o && outfile_close(o, &err)) return true;
  char msg[600];
  snprintf(msg, sizeof msg, "cannot write the statistics file '%.400s': %s", path, strerror(err));
  diag_set(d, D_IN_FILE, (Loc){path, 0, 0}, msg);
  return false;
}
