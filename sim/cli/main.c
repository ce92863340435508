/* sim/main.c -- the command line: the only place that prints diagnostics
 * and picks exit codes (PROGRAM_FORMAT.md, "Outcome and exit status"). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lowering/asm.h"
#include "emit.h"
#include "../../memory/chips.h"
#include "../fuzz/fuzz.h"
#include "../run/out.h"
#include "../run/pipeline.h"
#include "../../traces/json.h"
#include "../../traces/stats.h"

#define SC_SIM_VERSION "0.1.0"

enum { EXIT_OK = 0, EXIT_REJECTED = 1, EXIT_INVALID = 2, EXIT_MISMATCH = 3, EXIT_FAULT = 4 };

typedef struct {
  const char *cmd; /* run, check, lower, diff */
  const char *path;
  bool json, no_verify, no_races, strict_races;
  Mutant mutant;
  uint64_t max_ops, max_cycles, max_log_mb, max_mismatches, trace_max_bytes;
  const char *stats, *trace, *trace_format, *trace_window, *trace_filter, *mutate;
  const char *out;
} Options;

typedef enum { OPT_FLAG, OPT_COUNT, OPT_TEXT } OptKind;

/* Every option once: its name, kind and where it lands. */
static const struct {
  const char *name;
  OptKind kind;
  size_t off;
  const char *help;
} options[] = {
    {"--json", OPT_FLAG, offsetof(Options, json), "the outcome as one JSON object on standard output"},
    {"--no-verify", OPT_FLAG, offsetof(Options, no_verify), "run the engine only: no reference run, no comparison (expectations still hold)"},
    {"--no-races", OPT_FLAG, offsetof(Options, no_races), "skip race detection"},
    {"--strict-races", OPT_FLAG, offsetof(Options, strict_races), "benign races (identical writes) are faults too"},
    {"--mutate", OPT_TEXT, offsetof(Options, mutate), "NAME: run a deliberately wrong lowering (--list-mutants)"},
    {"--max-ops", OPT_COUNT, offsetof(Options, max_ops), "N: stop a run after N operations (fault limit)"},
    {"--max-cycles", OPT_COUNT, offsetof(Options, max_cycles), "N: stop a run after N simulated cycles (fault limit)"},
    {"--max-log-mb", OPT_COUNT, offsetof(Options, max_log_mb), "N: stop a run whose event log passes N MB (fault limit; default 512)"},
    {"--max-mismatches", OPT_COUNT, offsetof(Options, max_mismatches), "N: diff lists at most N mismatches"},
    {"--stats", OPT_TEXT, offsetof(Options, stats), "FILE: write the statistics as JSON"},
    {"--trace", OPT_TEXT, offsetof(Options, trace), "FILE: write a trace (Perfetto / chrome://tracing)"},
    {"--trace-format", OPT_TEXT, offsetof(Options, trace_format), "json | csv"},
    {"--trace-window", OPT_TEXT, offsetof(Options, trace_window), "START:END cycles"},
    {"--trace-filter", OPT_TEXT, offsetof(Options, trace_filter), "core=C,subcore=S,space=X,ref=R,op=O"},
    {"--trace-max-bytes", OPT_COUNT, offsetof(Options, trace_max_bytes), "N: cut the trace at N bytes"},
    {"--out", OPT_TEXT, offsetof(Options, out), "DIR: write every hbm ref's final contents as DIR/NAME.npy"},
};
enum { NOPTIONS = sizeof options / sizeof options[0] };

static void usage(FILE *f) {
  fputs("usage: sc-sim [run] program.yaml [options]\n"
        "       sc-sim check program.yaml [--json]   legality only (exit 0, 1 or 2)\n"
        "       sc-sim lower program.yaml            print the lowered instructions\n"
        "       sc-sim diff  program.yaml            reference against the lowering\n"
        "       sc-sim fuzz  --seed S --count N [--out DIR]\n"
        "       sc-sim --list-chips | --list-ops | --list-mutants | --version | --help\n"
        "options:\n",
        f);
  for (int i = 0; i < NOPTIONS; i++) fprintf(f, "  %-18s %s\n", options[i].name, options[i].help);
  fputs("exit status: 0 ok, 1 rejected by a legality rule, 2 invalid program or\n"
        "invocation, 3 verification failed, 4 fault at run time\n",
        f);
}

static void print_loc(FILE *f, const Loc *l) {
  if (l->line > 0) fprintf(f, "%s:%d:%d: ", l->file, l->line, l->col);
  else fprintf(f, "%s: ", l->file ? l->file : "sc-sim");
}

static void print_diag(const Diag *d) {
  print_loc(stderr, &d->loc);
  const char *type = diag_type(d->id);
  if (diag_class(d->id) == DC_RULE) fprintf(stderr, "error: %s: %s\n", type, d->message);
  else fprintf(stderr, "error: %s\n", d->message);
  for (int i = 0; i < d->nnotes; i++) {
    print_loc(stderr, &d->loc);
    fprintf(stderr, "note: %s\n", d->notes[i]);
  }
}

static void json_diag(const Diag *d, const char *status, int code) {
  printf("{\"status\": \"%s\", \"exit\": %d, \"error\": {\"id\": ", status, code);
  json_str(stdout, diag_id_name(d->id));
  printf(", \"type\": ");
  json_str(stdout, diag_class(d->id) == DC_RULE ? diag_type(d->id) : "InputError");
  printf(", \"message\": ");
  json_str(stdout, d->message);
  printf(", \"file\": ");
  json_str(stdout, d->loc.file);
  printf(", \"line\": %d, \"column\": %d, \"notes\": [", d->loc.line, d->loc.col);
  for (int i = 0; i < d->nnotes; i++) {
    if (i) printf(", ");
    json_str(stdout, d->notes[i]);
  }
  printf("]}}\n");
}

/* The outcome's diagnostic, on standard error (or as JSON); its exit status. */
static int report(const Options *o, const PipeOutcome *out) {
  static const char *status[] = {"ok", "rejected", "invalid", "mismatch", "fault"};
  if (o->json) json_diag(&out->diag, status[out->exit], out->exit);
  else print_diag(&out->diag);
  return out->exit;
}

static void list_chips(void) {
  printf("%-8s %-12s %5s %8s %6s %12s %8s %10s\n", "preset", "device_kind", "cores", "subcores", "lanes", "vmem_bytes",
         "granule", "SparseCore");
  for (int i = 0; i < chip_count(); i++) {
    const Chip *c = chip_at(i);
    printf("%-8s %-12s %5lld %8lld %6lld %12lld %8lld %10s\n", c->name, c->device_kind, (long long)c->p.num_cores,
           (long long)c->p.num_subcores, (long long)c->p.num_lanes, (long long)c->p.vmem_capacity_bytes,
           (long long)c->p.dma_granule_size_bytes, c->has_sc ? "yes" : "no");
  }
  printf("\nparameters (override in the program: chip: {preset: NAME, PARAM: VALUE}):\n");
  for (int i = 0; i < CP_COUNT; i++)
    printf("  %-24s %-32s %s\n", chip_param_name((ChipParamId)i), chip_param_unit((ChipParamId)i),
           chip_param_source((ChipParamId)i));
}

static void list_ops(void) {
  for (int i = 0; i < I_COUNT; i++) printf("%-28s %s\n", isa_mnemonic((Opcode)i), isa_semantics((Opcode)i));
}

static void list_mutants(void) {
  for (int i = 1; i < MUT_COUNT; i++) printf("%-24s %s\n", mutant_name((Mutant)i), mutant_what((Mutant)i));
}

static bool set_option(Options *o, int k, const char *v) {
  void *slot = (char *)o + options[k].off;
  if (options[k].kind == OPT_TEXT) {
    *(const char **)slot = v;
    return true;
  }
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (*end || !*v || v[0] == '-' || errno || !n) {
    fprintf(stderr, "sc-sim: %s takes a positive integer, got '%s'\n", options[k].name, v);
    return false;
  }
  *(uint64_t *)slot = n;
  return true;
}

static bool check_options(Options *o) {
  if (o->mutate && !mutant_lookup(o->mutate, &o->mutant)) {
    fprintf(stderr, "sc-sim: unknown mutant '%s' (sc-sim --list-mutants lists them)\n", o->mutate);
    return false;
  }
  if (o->trace_format && strcmp(o->trace_format, "json") && strcmp(o->trace_format, "csv")) {
    fprintf(stderr, "sc-sim: --trace-format is json or csv, got '%s'\n", o->trace_format);
    return false;
  }
  unsigned long long a, b;
  char tail;
  if (o->trace_window && (sscanf(o->trace_window, "%llu:%llu%c", &a, &b, &tail) != 2 || a >= b)) {
    fprintf(stderr, "sc-sim: --trace-window takes START:END cycles with START < END, got '%s'\n", o->trace_window);
    return false;
  }
  return true;
}

static bool parse_args(int argc, char **argv, Options *o) {
  o->cmd = "run";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int k = -1;
    for (int j = 0; j < NOPTIONS; j++)
      if (!strcmp(a, options[j].name)) k = j;
    if (k >= 0 && options[k].kind == OPT_FLAG) {
      *(bool *)((char *)o + options[k].off) = true;
    } else if (k >= 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "sc-sim: %s needs a value\n", a);
        return false;
      }
      if (!set_option(o, k, argv[++i])) return false;
    } else if (!o->path && i == 1 && (!strcmp(a, "run") || !strcmp(a, "check") || !strcmp(a, "lower") || !strcmp(a, "diff"))) {
      o->cmd = a;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "sc-sim: unknown option '%s' (sc-sim --help lists them)\n", a);
      return false;
    } else if (!o->path) {
      o->path = a;
    } else {
      fprintf(stderr, "sc-sim: one program at a time: '%s' is extra\n", a);
      return false;
    }
  }
  if (!o->path) {
    usage(stderr);
    return false;
  }
  return check_options(o);
}

/* --trace-filter core=C,subcore=S,space=X,ref=R,op=O */
static bool trace_filter(const char *spec, TraceOptions *t) {
  static char buf[512];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (!eq) return false;
    *eq = '\0';
    const char *v = eq + 1;
    if (!strcmp(tok, "core")) t->filter_core = atoi(v);
    else if (!strcmp(tok, "subcore")) t->filter_subcore = atoi(v);
    else if (!strcmp(tok, "space")) t->filter_space = v;
    else if (!strcmp(tok, "ref")) t->filter_ref = v;
    else if (!strcmp(tok, "op")) t->filter_op = v;
    else return false;
  }
  return true;
}

/* The trace the pipeline opens: the user's choices; a bad filter is reported
 * where the trace would open. */
static void trace_choices(const Options *o, PipeOptions *po) {
  if (!o->trace) return;
  TraceOptions *t = &po->trace;
  po->trace_path = o->trace;
  t->format = o->trace_format && !strcmp(o->trace_format, "csv") ? TRACE_CSV : TRACE_CHROME_JSON;
  t->filter_core = t->filter_subcore = -1;
  unsigned long long a = 0, b = 0;
  if (o->trace_window) sscanf(o->trace_window, "%llu:%llu", &a, &b);
  t->window_start = a, t->window_end = b;
  if (o->trace_filter && !trace_filter(o->trace_filter, t)) po->trace_error = "--trace-filter takes core=C,subcore=S,space=X,ref=R,op=O";
  t->max_bytes = o->trace_max_bytes;
}

static void summary(const Program *p) {
  printf("%s: chip %s, %s kernel, mesh %lld core(s) x %lld subcore(s), %d ref(s), %d operation(s)\n", p->name,
         p->chip->name, p->kernel == KERNEL_VECTOR ? "vector_subcore" : "scalar_subcore", (long long)p->mesh_cores,
         (long long)p->mesh_subcores, p->nrefs, p->nops);
  for (int i = 0; i < p->nrefs; i++) {
    const Ref *r = p->refs[i];
    printf("  ref %-12s %-11s %-8s shape (", r->name, space_key(r->space), dtype_name(r->dtype));
    for (int k = 0; k < r->rank; k++) printf("%s%lld", k ? ", " : "", (long long)r->shape[k]);
    printf("%s) %lld bytes\n", r->rank == 1 ? "," : "", (long long)(r->nelems * dtype_size(r->dtype)));
  }
}

static void json_cell(Dtype t, Cell c, bool def) {
  char b[64];
  if (!def) {
    printf("null");
    return;
  }
  dtype_format(t, c, b, sizeof b);
  if (dtype_is_float(t)) json_number_text(stdout, b); /* nan, inf: strings */
  else printf("%s", b);
}

/* Nested JSON lists of `shape` over lanes v/def starting at *i. */
static void json_array(Dtype t, const Cell *v, const uint8_t *def, int rank, const int64_t *shape, int64_t *i) {
  if (!rank) {
    json_cell(t, v[*i], def[*i]);
    ++*i;
    return;
  }
  printf("[");
  for (int64_t k = 0; k < shape[0]; k++) {
    if (k) printf(", ");
    json_array(t, v, def, rank - 1, shape + 1, i);
  }
  printf("]");
}

static void json_region(const Ref *ref, Region *g) {
  int sz = dtype_size(ref->dtype);
  Value v = {0};
  val_shape(&v, ref->dtype, ref->rank, ref->shape);
  for (int64_t e = 0; e < ref->nelems; e++) {
    v.v[e] = dtype_load(ref->dtype, g->bytes + e * sz);
    v.def[e] = 1;
    v.def[e] = mem_range_defined(g, e * sz, sz);
  }
  int64_t i = 0;
  json_array(ref->dtype, v.v, v.def, ref->rank, ref->shape, &i);
  val_free(&v);
}

/* "warnings": [{"kind", "file", "line", "column", "message"}, ...] */
static void json_warnings(const RunResult *r) {
  printf("\"warnings\": [");
  for (int i = 0; i < r->nwarnings; i++) {
    const RunWarning *w = &r->warnings[i];
    printf("%s{\"kind\": ", i ? ", " : "");
    json_str(stdout, w->kind);
    printf(", \"file\": ");
    json_str(stdout, w->loc.file);
    printf(", \"line\": %d, \"column\": %d, \"message\": ", w->loc.line, w->loc.col);
    json_str(stdout, w->text);
    printf("}");
  }
  printf("], ");
}

/* {"status": "ok", "exit": 0, "cycles": N, "warnings": [...], "refs": {...}, "values": {...}} */
static void json_run(const Program *p, RunResult *r) {
  printf("{\"status\": \"ok\", \"exit\": 0, \"cycles\": %llu, ", (unsigned long long)r->cycles);
  json_warnings(r);
  printf("\"refs\": {");
  bool first = true;
  for (int k = 0; k < p->nrefs; k++)
    for (int i = 0; i < mem_instance_count(&r->mem, k); i++) {
      Region *g = mem_instance(&r->mem, k, i);
      char name[200];
      run_instance_name(p->refs[k], g, name, sizeof name);
      printf("%s", first ? "" : ", ");
      first = false;
      json_str(stdout, name);
      printf(": ");
      json_region(p->refs[k], g);
    }
  printf("}, \"values\": {");
  for (int i = 0; i < r->nvalues; i++) {
    const NamedValue *nv = &r->values[i];
    char name[200];
    snprintf(name, sizeof name, "%s@%d.%d", nv->name, nv->core, nv->subcore);
    printf("%s", i ? ", " : "");
    json_str(stdout, name);
    printf(": ");
    int64_t j = 0;
    json_array(nv->val.dtype, nv->val.v, nv->val.def, nv->val.rank, nv->val.shape, &j);
  }
  printf("}}\n");
}

/* The run's warnings (SPEC §7.7), on standard error as diagnostics are;
 * they do not change the exit status. */
static void print_warnings(const RunResult *r) {
  for (int i = 0; i < r->nwarnings; i++) {
    const RunWarning *w = &r->warnings[i];
    fprintf(stderr, "%s:%d:%d: warning: %s\n", w->loc.file, w->loc.line, w->loc.col, w->text);
    if (w->core >= 0)
      fprintf(stderr, "%s:%d:%d: note: first on subcore %d.%d\n", w->loc.file, w->loc.line, w->loc.col, w->core, w->subcore);
  }
  if (r->more_warnings)
    fprintf(stderr, "sc-sim: warning: %llu more warnings (only the first %d are listed)\n",
            (unsigned long long)r->more_warnings, RUN_MAX_WARNINGS);
}

static PipeStop stop_of(const char *cmd) {
  return !strcmp(cmd, "check") ? PIPE_CHECK : !strcmp(cmd, "lower") ? PIPE_LOWER : !strcmp(cmd, "diff") ? PIPE_DIFF : PIPE_RUN;
}

static void pipe_options(const Options *o, PipeOptions *po) {
  pipe_options_init(po);
  po->stop = stop_of(o->cmd);
  po->mutant = o->mutant;
  po->no_verify = o->no_verify;
  po->limits.max_ops = o->max_ops;
  po->limits.max_cycles = o->max_cycles;
  po->limits.no_races = o->no_races;
  po->limits.strict_races = o->strict_races;
  if (o->max_log_mb) po->limits.max_log_bytes = o->max_log_mb > UINT64_MAX >> 20 ? UINT64_MAX : o->max_log_mb << 20;
  po->max_list = o->max_mismatches > VERIFY_MAX_LIST ? VERIFY_MAX_LIST : (int)o->max_mismatches;
  po->stats_path = o->stats;
  trace_choices(o, po);
}

static void print_diff(const VerifyStats *st) {
  printf("diff: %llu matched, %llu mismatched\n", (unsigned long long)st->matched, (unsigned long long)st->mismatched);
  if (st->nlist) printf(" line  %-22s  sub  %-16s  %-14s  %-14s\n", "operation", "where", "reference", "lowering");
  for (int i = 0; i < st->nlist; i++) printf("%s\n", st->list[i]);
}

/* What a command prints when its program got through. */
static void print_ok(const Options *o, PipeOutcome *out) {
  const Program *p = &out->program;
  if (out->expected_rejection && !o->json)
    printf("%s: rejected as expected: %s: %s\n", p->name, diag_type(out->diag.id), out->diag.message);
  else if (out->expected_rejection || (!out->ran && o->json && strcmp(o->cmd, "lower"))) printf("{\"status\": \"ok\", \"exit\": 0}\n");
  else if (!strcmp(o->cmd, "lower")) asm_print(&out->code, stdout);
  else if (!out->ran || !strcmp(o->cmd, "diff")) return;
  else if (o->json) json_run(p, &out->eng);
  else {
    summary(p);
    printf("%s: ok: %llu operations on %d subcore(s), %llu values verified against the reference\n", p->name,
           (unsigned long long)out->ref.ops, out->ref.nsub, (unsigned long long)out->verify.matched);
    stats_headline(stdout, p, &out->eng.stats);
  }
}

/* --out DIR: the final HBM refs, of a faulted run too; a write failure is
 * the outcome only of a run that was otherwise ok. */
static void write_out(const Options *o, PipeOutcome *out) {
  Diag d;
  memset(&d, 0, sizeof d);
  if (run_write_npy_dir(&out->program, &out->eng, o->out, &d) || out->verdict != PV_OK) return;
  out->diag = d;
  out->verdict = PV_INVALID;
  out->exit = pipe_verdict_exit(PV_INVALID);
}

static int run_command(const Options *o) {
  PipeOptions po;
  static PipeOutcome out;
  pipe_options(o, &po);
  pipeline_file(o->path, &po, &out);
  if (out.ran) print_warnings(&out.eng);
  if (out.ran && o->out) write_out(o, &out);
  int code = out.verdict == PV_OK ? (print_ok(o, &out), EXIT_OK) : report(o, &out);
  if (out.ran && !strcmp(o->cmd, "diff")) print_diff(&out.verify);
  pipeline_free(&out);
  return code;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "fuzz")) return fuzz_main(argc - 1, argv + 1);
  if (argc > 1 && !strcmp(argv[1], "emit-pallas")) return emit_main(argc - 1, argv + 1);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout), EXIT_OK;
    if (!strcmp(argv[i], "--version")) return puts("sc-sim " SC_SIM_VERSION), EXIT_OK;
    if (!strcmp(argv[i], "--list-chips")) return list_chips(), EXIT_OK;
    if (!strcmp(argv[i], "--list-ops")) return list_ops(), EXIT_OK;
    if (!strcmp(argv[i], "--list-mutants")) return list_mutants(), EXIT_OK;
  }
  Options o = {0};
  if (!parse_args(argc, argv, &o)) return EXIT_INVALID;
  return run_command(&o);
}
