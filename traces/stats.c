/* traces/stats.c -- statistics JSON (strings and numbers through json.h,
 * the file through outfile.h). */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "outfile.h"

double stats_bandwidth(const Program *p, const Stats *r) {
  double clock = p->params.clock_hz > 0 ? (double)p->params.clock_hz : 1e9;
  return r->cycles ? (double)r->dma_bytes / ((double)r->cycles / clock) : 0;
}

void stats_headline(FILE *f, const Program *p, const Stats *r) {
  double clock = p->params.clock_hz > 0 ? (double)p->params.clock_hz : 1e9;
  char why[200];
  double x;
  stats_bound(p, r, why, sizeof why, &x);
  fprintf(f, "%s: %llu cycles (%.3f us at %.3g GHz), %llu DMA bytes, %.3f GB/s achieved; %s\n", p->name,
          (unsigned long long)r->cycles, (double)r->cycles / clock * 1e6, clock / 1e9, (unsigned long long)r->dma_bytes,
          stats_bandwidth(p, r) / 1e9, why);
}

/* "key": value with `decimals` digits, then `after`. */
static void field(FILE *f, const char *key, double v, int decimals, const char *after) {
  fprintf(f, "\"%s\": ", key);
  json_double(f, v, decimals);
  fputs(after, f);
}

/* ---- achieved against peak, and what bounds the run ----------------------- */
typedef struct {
  const char *key;
  uint64_t bytes;
  double peak;   /* bytes per cycle */
} Port;

/* The ports the timing model limits (docs/timing.md): HBM (the chip's),
 * VMEM_SHARED (per SparseCore of the mesh), the DMA engines (per subcore). */
static int ports(const Program *p, const Stats *r, Port *out) {
  const ChipParams *q = &p->params;
  double clock = q->clock_hz > 0 ? (double)q->clock_hz : 1e9;
  out[0] = (Port){"hbm", r->space[SP_HBM].dma_bytes, (double)q->hbm_bytes_per_second / clock};
  out[1] = (Port){"vmem_shared", r->space[SP_VMEM_SHARED].dma_bytes, (double)q->vmem_shared_bytes_per_cycle * (double)p->mesh_cores};
  out[2] = (Port){"dma_engines", r->dma_bytes, (double)q->dma_bytes_per_cycle * r->nsub};
  return 3;
}

static double port_use(const Port *o, const Stats *r) {
  return r->cycles && o->peak > 0 ? (double)o->bytes / (double)r->cycles / o->peak : 0;
}

/* The DMA engine that moved data longest, and the subcore that ended last. */
static int busiest_engine(const Stats *r) {
  int b = 0;
  for (int i = 1; i < r->nsub; i++)
    if (r->dma[i].transfer_cycles > r->dma[b].transfer_cycles) b = i;
  return b;
}

static int last_subcore(const Stats *r) {
  int b = 0;
  for (int i = 1; i < r->nsub; i++)
    if (r->sub[i].end > r->sub[b].end) b = i;
  return b;
}

static double frac(double part, uint64_t whole) { return whole ? part / (double)whole : 0; }

/* A bandwidth at half its peak or more bounds the run; otherwise what the
 * subcore that ended last spent most of its cycles on does. */
const char *stats_bound(const Program *p, const Stats *r, char *buf, size_t n, double *fraction) {
  Port pt[3];
  ports(p, r, pt);
  int e = busiest_engine(r), l = last_subcore(r), ms = (int)p->mesh_subcores;
  double hbm = port_use(&pt[0], r), vs = port_use(&pt[1], r), eng = r->nsub ? frac(r->dma[e].transfer_cycles, r->cycles) : 0;
  *fraction = 0;
  if (!r->cycles || !r->nsub) return snprintf(buf, n, "idle: the run took no cycles"), "idle";
  if (hbm >= 0.5 && hbm >= vs && hbm >= eng)
    return *fraction = hbm, snprintf(buf, n, "HBM-bound: %.0f %% of the chip's HBM bandwidth", hbm * 100), "hbm";
  if (vs >= 0.5 && vs >= eng)
    return *fraction = vs, snprintf(buf, n, "VMEM_SHARED-bound: %.0f %% of the VMEM_SHARED bandwidth", vs * 100), "vmem_shared";
  if (eng >= 0.5)
    return *fraction = eng, snprintf(buf, n, "DMA-engine-bound: DMA engine %d.%d moves data %.0f %% of the run", e / ms, e % ms, eng * 100),
           "dma_engine";
  const SubStats *s = &r->sub[l];
  const struct { const char *key, *fmt; uint64_t v; } c[] = {
      {"issue", "issue-bound: subcore %d.%d issues instructions %.0f %% of the run", s->busy},
      {"load_latency", "load-latency-bound: subcore %d.%d waits for loaded values %.0f %% of the run", s->stall_load},
      {"dma_latency", "DMA-latency-bound: subcore %d.%d waits on DMAs %.0f %% of the run", s->stall_dma},
      {"semaphore", "semaphore-bound: subcore %d.%d waits on semaphores %.0f %% of the run", s->stall_sem},
      {"barrier", "barrier-bound: subcore %d.%d waits at barriers %.0f %% of the run", s->stall_barrier},
  };
  int k = 0;
  for (int i = 1; i < 5; i++)
    if (c[i].v > c[k].v) k = i;
  *fraction = frac((double)c[k].v, r->cycles);
  snprintf(buf, n, c[k].fmt, l / ms, l % ms, *fraction * 100);
  return c[k].key;
}

static void write_utilization(FILE *f, const Program *p, const Stats *r) {
  Port pt[3];
  int np = ports(p, r, pt);
  fprintf(f, "  \"utilization\": {\n");
  for (int i = 0; i < np; i++) {
    fprintf(f, "    \"%s\": {\"bytes\": %llu, ", pt[i].key, (unsigned long long)pt[i].bytes);
    field(f, "bytes_per_cycle", r->cycles ? (double)pt[i].bytes / (double)r->cycles : 0, 3, ", ");
    field(f, "peak_bytes_per_cycle", pt[i].peak, 3, ", ");
    field(f, "fraction", port_use(&pt[i], r), 4, "},\n");
  }
  int e = busiest_engine(r);
  fprintf(f, "    \"busiest_dma_engine\": {\"core\": %d, \"subcore\": %d, ", e / (int)p->mesh_subcores, e % (int)p->mesh_subcores);
  field(f, "transfer_fraction", r->nsub ? frac(r->dma[e].transfer_cycles, r->cycles) : 0, 4, "}\n  },\n");
  char why[200];
  double x;
  const char *key = stats_bound(p, r, why, sizeof why, &x);
  fprintf(f, "  \"bound\": {\"by\": \"%s\", ", key);
  field(f, "fraction", x, 4, ", \"verdict\": ");
  json_str(f, why);
  fprintf(f, "},\n");
}

/* ---- the per-line profile --------------------------------------------------- */
static const Op *op_at_line(const Body *b, int line) {
  for (int i = 0; i < b->n; i++) {
    const Op *o = b->ops[i], *in;
    if (o->loc.line == line) return o;
    if ((in = op_at_line(&o->body, line)) || (in = op_at_line(&o->els, line))) return in;
  }
  return NULL;
}

static uint64_t line_cycles(const ProfLine *l) { return l->issue + l->stall_load + l->stall_dma + l->stall_sem + l->stall_barrier; }

static void write_profile(FILE *f, const Program *p, const Stats *r) {
  fprintf(f, "  \"profile\": [");
  for (int i = 0; i < r->nprof; i++) {
    const ProfLine *l = &r->prof[i];
    const Op *o = op_at_line(&p->body, l->line);
    fprintf(f, "%s\n    {\"line\": %d, \"op\": ", i ? "," : "", l->line);
    if (o) json_str(f, op_key(o->kind));
    else fputs("null", f);
    fprintf(f, ", \"cycles\": %llu, \"instructions\": %llu, \"issue_cycles\": %llu, \"stall_load_cycles\": %llu, "
               "\"stall_dma_cycles\": %llu, \"stall_semaphore_cycles\": %llu, \"stall_barrier_cycles\": %llu, \"bytes\": %llu}",
            (unsigned long long)line_cycles(l), (unsigned long long)l->instructions, (unsigned long long)l->issue,
            (unsigned long long)l->stall_load, (unsigned long long)l->stall_dma, (unsigned long long)l->stall_sem,
            (unsigned long long)l->stall_barrier, (unsigned long long)l->bytes);
  }
  fprintf(f, "%s],\n", r->nprof ? "\n  " : "");
}

/* Line `line` of the program's file, trimmed, cut to `n` - 1 bytes ("" when unreadable). */
static void source_line(FILE *src, int line, char *buf, size_t n) {
  char *text = NULL;
  size_t cap = 0;
  buf[0] = '\0';
  if (!src || line <= 0) return;
  rewind(src);
  for (int k = 1; getline(&text, &cap, src) >= 0; k++) {
    if (k != line) continue;
    char *t = text + strspn(text, " \t");
    t[strcspn(t, "\r\n")] = '\0';
    snprintf(buf, n, "%s", t);
    if (strlen(t) >= n && n > 4) strcpy(buf + n - 4, "...");
    break;
  }
  free(text);
}

void stats_profile(FILE *f, const Program *p, const Stats *r) {
  uint64_t total = 0;
  for (int i = 0; i < r->nprof; i++) total += line_cycles(&r->prof[i]);
  fprintf(f, "profile: %llu subcore cycles (%d subcore(s) x %llu cycles, less %llu finished), by program line:\n",
          (unsigned long long)total, r->nsub, (unsigned long long)r->cycles, (unsigned long long)((uint64_t)r->nsub * r->cycles - total));
  fprintf(f, "%6s %9s %6s %7s %8s %8s %8s %8s %8s %9s  %s\n", "line", "cycles", "%", "instrs", "issue", "load", "dma", "sem",
          "barrier", "bytes", "source");
  FILE *src = p->file ? fopen(p->file, "r") : NULL;
  for (int i = 0; i < r->nprof; i++) {
    const ProfLine *l = &r->prof[i];
    char text[64];
    source_line(src, l->line, text, sizeof text);
    fprintf(f, "%6d %9llu %6.1f %7llu %8llu %8llu %8llu %8llu %8llu %9llu  %s\n", l->line, (unsigned long long)line_cycles(l),
            total ? 100.0 * (double)line_cycles(l) / (double)total : 0.0, (unsigned long long)l->instructions,
            (unsigned long long)l->issue, (unsigned long long)l->stall_load, (unsigned long long)l->stall_dma,
            (unsigned long long)l->stall_sem, (unsigned long long)l->stall_barrier, (unsigned long long)l->bytes, text);
  }
  if (src) fclose(src);
}

static void write_subcores(FILE *f, const Program *p, const Stats *r) {
  fprintf(f, "  \"subcores\": [\n");
  for (int i = 0; i < r->nsub; i++) {
    const SubStats *s = &r->sub[i];
    fprintf(f, "    {\"core\": %d, \"subcore\": %d, \"instructions\": %llu, \"busy_cycles\": %llu, \"stall_dma_cycles\": %llu, "
               "\"stall_barrier_cycles\": %llu, \"stall_semaphore_cycles\": %llu, \"end_cycle\": %llu, \"stall_load_cycles\": %llu, "
               "\"finished_cycles\": %llu}%s\n",
            i / (int)p->mesh_subcores, i % (int)p->mesh_subcores, (unsigned long long)s->instructions, (unsigned long long)s->busy,
            (unsigned long long)s->stall_dma, (unsigned long long)s->stall_barrier, (unsigned long long)s->stall_sem,
            (unsigned long long)s->end, (unsigned long long)s->stall_load, (unsigned long long)s->finished, i + 1 < r->nsub ? "," : "");
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
    fprintf(f, ", \"queue_max\": %llu, ", (unsigned long long)s->max_queue);
    field(f, "setup_cycles", s->setup_cycles, 1, ", ");
    field(f, "queue_cycles", s->queue_cycles, 1, ", ");
    field(f, "transfer_cycles", s->transfer_cycles, 1, i + 1 < r->nsub ? "},\n" : "}\n");
  }
  fprintf(f, "  ],\n");
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
  write_utilization(f, p, r);
  write_profile(f, p, r);
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
