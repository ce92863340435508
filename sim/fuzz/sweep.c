/* sim/fuzz/sweep.c -- sc-sim sweep: one program at every point of a
 * parameter grid (docs/cluster.md).
 *
 * Each point is the program's YAML document with its chip: and mesh:
 * mappings rewritten (libyaml's document API, then its emitter) and run
 * through pipeline_text like any other program; expect.cycles is dropped,
 * since a cycle budget holds at one design point only.  The statistics'
 * bound verdict (traces/stats.c stats_bound) names what limits each point. */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#include "../../lowering/names.h"
#include "../../memory/chips.h"
#include "../../traces/json.h"
#include "../../traces/stats.h"
#include "../run/pipeline.h"
#include "fuzz_priv.h"

enum { MAX_AXES = 8, MAX_VALUES = 256, MAX_POINTS = 100000 };

typedef enum { AX_PARAM, AX_PRESET, AX_CORES, AX_SUBCORES } AxisKind;

typedef struct {
  const char *name;
  AxisKind kind;
  ChipParamId id;
  int n;
  char *v[MAX_VALUES];
} Axis;

typedef struct {
  const char *path;
  Axis ax[MAX_AXES];
  int nax;
  bool verify;
  int shard_k, shard_n;
  const char *out;
} Sweep;

bool shard_arg(const char *cmd, const char *v, int *k, int *n) {
  char tail;
  if (sscanf(v, "%d/%d%c", k, n, &tail) == 2 && *n >= 1 && *k >= 0 && *k < *n && *n <= 1000000) return true;
  fprintf(stderr, "sc-sim %s: --shard takes K/N with 0 <= K < N (shard K of N, counted from 0), got '%s'\n", cmd, v);
  return false;
}

/* ---- --set PARAM=V1,V2,... --------------------------------------------- */
static const char *extra_keys[] = {"preset", "cores", "subcores"};

static bool axis_name(Axis *a, const char *name) {
  a->name = name;
  if (!strcmp(name, "preset") || !strcmp(name, "chip")) return a->kind = AX_PRESET, a->name = "preset", true;
  if (!strcmp(name, "cores") || !strcmp(name, "mesh.cores")) return a->kind = AX_CORES, a->name = "cores", true;
  if (!strcmp(name, "subcores") || !strcmp(name, "mesh.subcores")) return a->kind = AX_SUBCORES, a->name = "subcores", true;
  if (chip_param_lookup(name, &a->id)) return a->kind = AX_PARAM, true;
  const char *names[CP_COUNT + 3];
  int n = 0;
  for (int i = 0; i < CP_COUNT; i++) names[n++] = chip_param_name((ChipParamId)i);
  for (int i = 0; i < 3; i++) names[n++] = extra_keys[i];
  const char *near = names_nearest(name, names, n);
  if (near)
    fprintf(stderr, "sc-sim sweep: --set: unknown parameter '%s'; did you mean '%s'? (a chip parameter of sc-sim --list-chips, preset, cores or subcores)\n",
            name, near);
  else fprintf(stderr, "sc-sim sweep: --set: unknown parameter '%s' (a chip parameter of sc-sim --list-chips, preset, cores or subcores)\n", name);
  return false;
}

/* An integer value: digits, or a number such as 1.85e12 that is a whole one. */
static bool int_value(const Axis *a, char *v) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (*v && !*end && !errno && x >= 1 && x <= 9.2e18 && x == floor(x)) return true;
  fprintf(stderr, "sc-sim sweep: --set %s: '%s' is not a positive integer\n", a->name, v);
  return false;
}

static bool set_arg(Sweep *s, char *arg) {
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg || !eq[1]) {
    fprintf(stderr, "sc-sim sweep: --set takes PARAM=V1,V2,..., got '%s'\n", arg);
    return false;
  }
  if (s->nax == MAX_AXES) return fprintf(stderr, "sc-sim sweep: at most %d --set options\n", MAX_AXES), false;
  *eq = '\0';
  Axis *a = &s->ax[s->nax];
  memset(a, 0, sizeof *a);
  if (!axis_name(a, arg)) return false;
  for (int i = 0; i < s->nax; i++)
    if (!strcmp(s->ax[i].name, a->name)) return fprintf(stderr, "sc-sim sweep: --set %s given twice\n", a->name), false;
  for (char *tok = strtok(eq + 1, ","); tok; tok = strtok(NULL, ",")) {
    if (a->n == MAX_VALUES) return fprintf(stderr, "sc-sim sweep: --set %s: at most %d values\n", a->name, MAX_VALUES), false;
    if (a->kind == AX_PRESET) {
      const Chip *c = chip_find(tok);
      if (!c || !c->has_sc) {
        fprintf(stderr, "sc-sim sweep: --set preset: '%s' is not a chip with SparseCores (sc-sim --list-chips lists them)\n", tok);
        return false;
      }
      a->v[a->n++] = (char *)c->name;
    } else {
      if (!int_value(a, tok)) return false;
      char buf[32];
      snprintf(buf, sizeof buf, "%lld", (long long)strtod(tok, NULL));
      a->v[a->n++] = strdup(buf);
    }
  }
  if (!a->n) return fprintf(stderr, "sc-sim sweep: --set %s has no values\n", a->name), false;
  s->nax++;
  return true;
}

/* ---- the program at one point ------------------------------------------- */
static yaml_node_pair_t *map_find(yaml_document_t *d, int map, const char *key) {
  yaml_node_t *m = yaml_document_get_node(d, map);
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(d, p->key);
    if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key)) return p;
  }
  return NULL;
}

static int scalar(yaml_document_t *d, const char *v) {
  return yaml_document_add_scalar(d, NULL, (yaml_char_t *)v, -1, YAML_PLAIN_SCALAR_STYLE);
}

static void map_set(yaml_document_t *d, int map, const char *key, int value) {
  yaml_node_pair_t *p = map_find(d, map, key);
  if (p) p->value = value;
  else yaml_document_append_mapping_pair(d, map, scalar(d, key), value);
}

/* The mapping under root[key], made one (a scalar s becomes {scalar_key: s}). */
static int sub_map(yaml_document_t *d, const char *key, const char *scalar_key, const char *dflt) {
  yaml_node_pair_t *p = map_find(d, 1, key);
  yaml_node_t *v = p ? yaml_document_get_node(d, p->value) : NULL;
  if (v && v->type == YAML_MAPPING_NODE) return p->value;
  char old[256];
  snprintf(old, sizeof old, "%s", v && v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : dflt ? dflt : "");
  int m = yaml_document_add_mapping(d, NULL, YAML_FLOW_MAPPING_STYLE);
  if (scalar_key) yaml_document_append_mapping_pair(d, m, scalar(d, scalar_key), scalar(d, old));
  map_set(d, 1, key, m);
  return m;
}

static int write_buf(void *ctx, unsigned char *s, size_t n) {
  bput((Buf *)ctx, "%.*s", (int)n, (const char *)s);
  return 1;
}

/* The program text at point `pick` (a value index per axis); false when the
 * text is not a YAML mapping (the caller reports the original's error). */
static bool point_text(const Sweep *s, const char *text, size_t len, const int *pick, Buf *out) {
  yaml_parser_t yp;
  yaml_document_t d;
  yaml_parser_initialize(&yp);
  yaml_parser_set_input_string(&yp, (const unsigned char *)text, len);
  bool ok = yaml_parser_load(&yp, &d);
  yaml_parser_delete(&yp);
  if (!ok) return false;
  yaml_node_t *root = yaml_document_get_root_node(&d);
  if (!root || root->type != YAML_MAPPING_NODE) return yaml_document_delete(&d), false;
  for (int i = 0; i < s->nax; i++) {
    const Axis *a = &s->ax[i];
    const char *v = a->v[pick[i]];
    if (a->kind == AX_CORES || a->kind == AX_SUBCORES) {
      int m = sub_map(&d, "mesh", NULL, NULL);
      map_set(&d, m, a->kind == AX_CORES ? "cores" : "subcores", scalar(&d, v));
    } else {
      int m = sub_map(&d, "chip", "preset", "tpu7x");
      map_set(&d, m, a->kind == AX_PRESET ? "preset" : chip_param_name(a->id), scalar(&d, v));
    }
  }
  yaml_node_pair_t *ex = map_find(&d, 1, "expect");
  yaml_node_t *en = ex ? yaml_document_get_node(&d, ex->value) : NULL;
  if (en && en->type == YAML_MAPPING_NODE) { /* drop expect.cycles: a budget of one design point */
    yaml_node_pair_t *c = map_find(&d, ex->value, "cycles");
    if (c) {
      memmove(c, c + 1, (size_t)(en->data.mapping.pairs.top - c - 1) * sizeof *c);
      en->data.mapping.pairs.top--;
    }
  }
  yaml_emitter_t e;
  yaml_emitter_initialize(&e);
  yaml_emitter_set_output(&e, write_buf, out);
  yaml_emitter_set_unicode(&e, 1);
  yaml_emitter_set_width(&e, -1);
  ok = yaml_emitter_open(&e) && yaml_emitter_dump(&e, &d) && yaml_emitter_close(&e) && yaml_emitter_flush(&e);
  yaml_emitter_delete(&e);
  return ok;
}

/* ---- one JSON line per point ---------------------------------------------- */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void json_params(FILE *f, const Sweep *s, const int *pick) {
  fputs("\"params\": {", f);
  for (int i = 0; i < s->nax; i++) {
    fprintf(f, "%s", i ? ", " : "");
    json_str(f, s->ax[i].name);
    fputs(": ", f);
    if (s->ax[i].kind == AX_PRESET) json_str(f, s->ax[i].v[pick[i]]);
    else fputs(s->ax[i].v[pick[i]], f);
  }
  fputs("}", f);
}

static void point_line(FILE *f, const Sweep *s, int index, int total, const int *pick, const PipeOutcome *o, double host) {
  fprintf(f, "{\"kind\": \"sweep\", \"index\": %d, \"points\": %d, \"file\": ", index, total);
  json_str(f, s->path);
  fputs(", \"program\": ", f);
  json_str(f, o->loaded ? o->program.name : s->path);
  fputs(", ", f);
  json_params(f, s, pick);
  fprintf(f, ", \"verdict\": \"%s\", \"exit\": %d", pipe_verdict_name(o->verdict), o->exit);
  if (o->verdict != PV_OK) {
    fputs(", \"diag\": ", f);
    json_str(f, diag_type(o->diag.id));
  }
  if (o->verdict != PV_OK || o->expected_rejection) {
    fputs(", \"message\": ", f);
    json_str(f, o->diag.message);
  }
  if (o->ran) {
    const Program *p = &o->program;
    const Stats *st = &o->eng.stats;
    double clock = p->params.clock_hz > 0 ? (double)p->params.clock_hz : 1e9, sec = (double)st->cycles / clock;
    fprintf(f, ", \"cycles\": %llu, \"us\": ", (unsigned long long)st->cycles);
    json_double(f, sec * 1e6, 3);
    fprintf(f, ", \"clock_hz\": %lld, \"dma_bytes\": %llu, \"dma_gbps\": ", (long long)p->params.clock_hz, (unsigned long long)st->dma_bytes);
    json_double(f, stats_bandwidth(p, st) / 1e9, 3);
    fputs(", \"spaces\": {", f);
    for (int sp = 0; sp < SP_COUNT; sp++) {
      const SpaceStats *x = &st->space[sp];
      uint64_t b = x->bytes_read + x->bytes_written;
      fprintf(f, "%s\"%s\": {\"bytes\": %llu, \"dma_bytes\": %llu, \"gbps\": ", sp ? ", " : "", space_key((Space)sp), (unsigned long long)b,
              (unsigned long long)x->dma_bytes);
      json_double(f, sec > 0 ? (double)b / sec / 1e9 : 0, 3);
      fputs(", \"dma_gbps\": ", f);
      json_double(f, sec > 0 ? (double)x->dma_bytes / sec / 1e9 : 0, 3);
      fputs("}", f);
    }
    char why[200];
    double frac;
    const char *key = stats_bound(p, st, why, sizeof why, &frac);
    fprintf(f, "}, \"bound\": \"%s\", \"bound_fraction\": ", key);
    json_double(f, frac, 4);
    fputs(", \"bound_verdict\": ", f);
    json_str(f, why);
  }
  fputs(", \"host_seconds\": ", f);
  json_double(f, host, 4);
  fputs("}\n", f);
}

/* The row of the summary table (merge.c prints the same from the lines). */
void sweep_table_header(FILE *f, const char *const *names, int n);
void sweep_table_row(FILE *f, int index, const char *const *vals, int n, const char *verdict, const char *cycles, const char *us,
                     const char *bound);

void sweep_table_header(FILE *f, const char *const *names, int n) {
  fprintf(f, "%5s", "point");
  for (int i = 0; i < n; i++) fprintf(f, " %16s", names[i]);
  fprintf(f, " %-14s %12s %12s  %s\n", "verdict", "cycles", "us", "bound");
}

void sweep_table_row(FILE *f, int index, const char *const *vals, int n, const char *verdict, const char *cycles, const char *us,
                     const char *bound) {
  fprintf(f, "%5d", index);
  for (int i = 0; i < n; i++) fprintf(f, " %16s", vals[i]);
  fprintf(f, " %-14s %12s %12s  %s\n", verdict, cycles, us, bound);
}

typedef struct {
  char verdict[20], cycles[24], us[32], bound[220];
} Row;

static void row_of(Row *r, const PipeOutcome *o) {
  snprintf(r->verdict, sizeof r->verdict, "%s", pipe_verdict_name(o->verdict));
  snprintf(r->cycles, sizeof r->cycles, "-");
  snprintf(r->us, sizeof r->us, "-");
  snprintf(r->bound, sizeof r->bound, "%s", o->verdict == PV_OK ? "" : diag_type(o->diag.id));
  if (!o->ran) return;
  const Program *p = &o->program;
  double clock = p->params.clock_hz > 0 ? (double)p->params.clock_hz : 1e9, frac;
  snprintf(r->cycles, sizeof r->cycles, "%llu", (unsigned long long)o->eng.stats.cycles);
  snprintf(r->us, sizeof r->us, "%.3f", (double)o->eng.stats.cycles / clock * 1e6);
  char why[200];
  stats_bound(p, &o->eng.stats, why, sizeof why, &frac);
  snprintf(r->bound, sizeof r->bound, "%s", why);
}

/* ---- the command ---------------------------------------------------------------- */
static void sweep_usage(FILE *f) {
  fputs("usage: sc-sim sweep program.yaml --set PARAM=V1,V2,... [--set ...] [--verify] [--shard K/N] [--out FILE]\n"
        "  --set PARAM=V,...   a grid axis: a chip parameter (sc-sim --list-chips), preset (the chip), cores or subcores (the mesh)\n"
        "  --verify            also run the reference and race detection (default: --no-verify --no-races: timing only)\n"
        "  --shard K/N         run only the points i with i mod N = K (0 <= K < N); sc-sim merge combines the shards\n"
        "  --out FILE          the JSON lines go to FILE (default: standard output, the table to standard error)\n"
        "points are numbered in grid order, the last --set varying fastest\n",
        f);
}

static bool sweep_args(int argc, char **argv, Sweep *s) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--verify")) {
      s->verify = true;
      continue;
    }
    if (!strcmp(a, "--set") || !strcmp(a, "--shard") || !strcmp(a, "--out")) {
      if (i + 1 >= argc) return fprintf(stderr, "sc-sim sweep: %s needs a value\n", a), false;
      char *v = argv[++i];
      if (!strcmp(a, "--set") && !set_arg(s, v)) return false;
      if (!strcmp(a, "--shard") && !shard_arg("sweep", v, &s->shard_k, &s->shard_n)) return false;
      if (!strcmp(a, "--out")) s->out = v;
      continue;
    }
    if (a[0] == '-' && a[1]) return fprintf(stderr, "sc-sim sweep: unknown option '%s' (sc-sim sweep --help lists them)\n", a), false;
    if (s->path) return fprintf(stderr, "sc-sim sweep: one program at a time: '%s' is extra\n", a), false;
    s->path = a;
  }
  if (!s->path) return fprintf(stderr, "sc-sim sweep: no program given\n"), false;
  if (!s->nax) return fprintf(stderr, "sc-sim sweep: no --set PARAM=V1,V2,... given\n"), false;
  return true;
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  Buf b = {0};
  char chunk[65536];
  size_t n;
  bput(&b, "%s", "");
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) bput(&b, "%.*s", (int)n, chunk);
  fclose(f);
  *len = b.n;
  return b.s;
}

static void print_diag_line(const Diag *d) {
  if (d->loc.line > 0) fprintf(stderr, "%s:%d:%d: ", d->loc.file, d->loc.line, d->loc.col);
  fprintf(stderr, "error: %s\n", d->message);
}

int sweep_main(int argc, char **argv) {
  static Sweep s;
  memset(&s, 0, sizeof s);
  s.shard_n = 1;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return sweep_usage(stdout), 0;
  if (!sweep_args(argc, argv, &s)) return 2;
  long long total = 1;
  for (int i = 0; i < s.nax; i++) total *= s.ax[i].n;
  if (total > MAX_POINTS) return fprintf(stderr, "sc-sim sweep: %lld points; at most %d\n", total, MAX_POINTS), 2;
  size_t len = 0;
  char *text = read_all(s.path, &len);
  if (!text) return fprintf(stderr, "sc-sim sweep: cannot read '%s': %s\n", s.path, strerror(errno)), 2;
  FILE *jf = stdout, *tf = stderr;
  if (s.out) {
    jf = fopen(s.out, "w");
    if (!jf) return free(text), fprintf(stderr, "sc-sim sweep: cannot write '%s': %s\n", s.out, strerror(errno)), 2;
    tf = stdout;
  }
  const char *names[MAX_AXES];
  for (int i = 0; i < s.nax; i++) names[i] = s.ax[i].name;
  int code = 0, nok = 0, first_exit = -1;
  for (int idx = 0; idx < total; idx++) {
    if (idx % s.shard_n != s.shard_k) continue;
    int pick[MAX_AXES];
    for (int i = s.nax - 1, r = idx; i >= 0; i--) pick[i] = r % s.ax[i].n, r /= s.ax[i].n;
    Buf pt = {0};
    static PipeOutcome out;
    PipeOptions po;
    pipe_options_init(&po);
    po.stop = PIPE_RUN;
    po.no_verify = !s.verify;
    po.limits.no_races = !s.verify;
    double t0 = now_s();
    if (!point_text(&s, text, len, pick, &pt)) { /* not a YAML mapping: the program's own error */
      bfree(&pt);
      po.stop = PIPE_CHECK;
      pipeline_file(s.path, &po, &out);
      print_diag_line(&out.diag);
      int x = out.exit ? out.exit : 2;
      pipeline_free(&out);
      code = x;
      break;
    }
    if (!nok && first_exit < 0) sweep_table_header(tf, names, s.nax); /* the first point */
    pipeline_text(s.path, pt.s, pt.n, &po, &out);
    bfree(&pt);
    point_line(jf, &s, idx, (int)total, pick, &out, now_s() - t0);
    fflush(jf);
    Row r;
    row_of(&r, &out);
    const char *vals[MAX_AXES];
    for (int i = 0; i < s.nax; i++) vals[i] = s.ax[i].v[pick[i]];
    sweep_table_row(tf, idx, vals, s.nax, r.verdict, r.cycles, r.us, r.bound);
    if (out.verdict == PV_OK) nok++;
    else if (first_exit < 0) first_exit = out.exit;
    if (out.exit >= 3 && out.exit > code) code = out.exit;
    pipeline_free(&out);
  }
  if (!code && !nok && first_exit > 0) code = first_exit; /* no point ran: the program's own verdict */
  if (s.out && fclose(jf)) code = 2, fprintf(stderr, "sc-sim sweep: cannot write '%s'\n", s.out);
  free(text);
  return code;
}
