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
#include "../fuzz/sweep.h"
#include "../run/out.h"
#include "../run/pipeline.h"
#include "../../traces/json.h"
#include "../../traces/stats.h"
#include "outcome_json.h"

enum { EXIT_OK = 0, EXIT_REJECTED = 1, EXIT_INVALID = 2, EXIT_MISMATCH = 3, EXIT_FAULT = 4 };

typedef struct {
  const char *cmd; /* run, check, lower, diff */
  const char *path;
  bool json, no_verify, no_races, strict_races, profile;
  bool track_origins;
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
    {"--track-origins", OPT_FLAG, offsetof(Options, track_origins), "an uninit fault names the load its undefined value came from"},
    {"--mutate", OPT_TEXT, offsetof(Options, mutate), "NAME: run a deliberately wrong lowering (--list-mutants)"},
    {"--max-ops", OPT_COUNT, offsetof(Options, max_ops), "N: stop a run after N operations (fault limit)"},
    {"--max-cycles", OPT_COUNT, offsetof(Options, max_cycles), "N: stop a run after N simulated cycles (fault limit)"},
    {"--max-log-mb", OPT_COUNT, offsetof(Options, max_log_mb), "N: stop a run whose event log passes N MB (fault limit; default 512)"},
    {"--max-mismatches", OPT_COUNT, offsetof(Options, max_mismatches), "N: diff lists at most N mismatches"},
    {"--profile", OPT_FLAG, offsetof(Options, profile), "print the cycles, stalls and bytes of each program line, most cycles first"},
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
        "       sc-sim emit-pallas program.yaml [-o FILE]   the program as a Pallas kernel\n"
        "       sc-sim sweep program.yaml --set PARAM=V1,V2,... [--shard K/N] [--out FILE]   a design sweep (docs/cluster.md)\n"
        "       sc-sim merge [--out FILE] DIR...   combine the JSON lines of sweep or fuzz shards\n"
        "       sc-sim --list-chips | --list-ops | --list-instructions | --list-mutants | --version | --help\n"
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

/* The outcome's diagnostic on standard error; its exit status. */
static int report(const PipeOutcome *out) {
  print_diag(&out->diag);
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
  printf("\nparameters, each preset's value (override in the program: chip: {preset: NAME, PARAM: VALUE}):\n");
  printf("  %-28s", "parameter");
  for (int i = 0; i < chip_count(); i++) printf(" %13s", chip_at(i)->name);
  printf("  unit; source\n");
  for (int k = 0; k < CP_COUNT; k++) {
    printf("  %-28s", chip_param_name((ChipParamId)k));
    for (int i = 0; i < chip_count(); i++) {
      ChipParams cp = chip_at(i)->p;
      printf(" %13lld", (long long)*chip_param_ptr(&cp, (ChipParamId)k));
    }
    printf("  %s; %s\n", chip_param_unit((ChipParamId)k), chip_param_source((ChipParamId)k));
  }
}

/* The format's operations (lowering/program.h OPS): each key with its
 * required and optional fields. */
static void fields_text(unsigned mask, char *buf, size_t n) {
  static const char *names[] = {
#define X(e, k, kind) k,
      FIELDS(X)
#undef X
  };
  size_t k = 0;
  buf[0] = '\0';
  for (int f = 0; f < FLD_COUNT && k < n; f++)
    if (mask & (1u << f)) k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", names[f]);
  if (!k) snprintf(buf, n, "-");
}

static void list_ops(void) {
  static const struct {
    const char *key;
    unsigned required, optional;
  } ops[] = {
#define X(e, k, req, opt) {k, req, opt},
      OPS(X)
#undef X
  };
  printf("%-22s %-36s %s\n", "operation", "required fields", "optional fields");
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    char req[200], opt[200];
    fields_text(ops[i].required, req, sizeof req);
    fields_text(ops[i].optional, opt, sizeof opt);
    printf("%-22s %-36s %s\n", ops[i].key, req, opt);
  }
  printf("\nthe instructions they lower to: sc-sim --list-instructions\n");
}

/* The ISA (isa/isa.h ISA_OPS): mnemonic and semantics. */
static void list_instructions(void) {
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
  if (p->nkernels)
    printf("%s: chip %s, %d kernels, %d ref(s), %d operation(s)\n", p->name, p->chip->name, p->nkernels, p->nrefs, p->nops);
  else printf("%s: chip %s, %s kernel, mesh %lld core(s) x %lld subcore(s), %d ref(s), %d operation(s)\n", p->name,
         p->chip->name, p->kernel == KERNEL_VECTOR ? "vector_subcore" : "scalar_subcore", (long long)p->mesh_cores,
         (long long)p->mesh_subcores, p->nrefs, p->nops);
  for (int i = 0; i < p->nrefs; i++) {
    const Ref *r = p->refs[i];
    printf("  ref %-12s %-11s %-8s shape (", r->name, space_key(r->space), dtype_name(r->dtype));
    for (int k = 0; k < r->rank; k++) printf("%s%lld", k ? ", " : "", (long long)r->shape[k]);
    printf("%s) %lld bytes\n", r->rank == 1 ? "," : "", (long long)dtype_packed_bytes(r->dtype, r->nelems));
  }
  for (int k = 0; k < p->nkernels; k++) {
    const Program *K = &p->kernels[k];
    if (K->mpmd_vsubs) { /* docs/format.md "Kernels over several meshes" */
      printf("  kernel %d: %s%smpmd over a vector_subcore mesh %lld core(s) x %lld subcore(s) and a scalar_subcore mesh %lld core(s) "
             "(its subcore %lld on each core), %d scratch ref(s), %d operation(s)\n", k + 1, K->name != p->name ? K->name : "",
             K->name != p->name ? ", " : "", (long long)K->mesh_cores, (long long)K->mpmd_vsubs, (long long)K->mesh_cores,
             (long long)K->mpmd_vsubs, K->nrefs - K->nshared, K->nops);
      continue;
    }
    printf("  kernel %d: %s%s%s kernel, mesh %lld core(s) x %lld subcore(s), %d scratch ref(s), %d operation(s)\n", k + 1,
           K->name != p->name ? K->name : "", K->name != p->name ? ", " : "", K->kernel == KERNEL_VECTOR ? "vector_subcore" : "scalar_subcore",
           (long long)K->mesh_cores, (long long)K->mesh_subcores, K->nrefs - K->nshared, K->nops);
  }
}

/* sc-sim lower of a program of several kernels: each kernel's code after a comment naming it. */
static void print_kernels_code(PipeOutcome *out) {
  for (int k = 0; k < out->nkcode; k++) {
    printf("%s# kernel %d\n", k ? "\n" : "", k + 1);
    asm_print(&out->kcode[k], stdout);
  }
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
  po->limits.profile = o->profile;
  po->limits.track_origins = o->track_origins;
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
  if (out->expected_rejection)
    printf("%s: rejected as expected: %s: %s\n", p->name, diag_type(out->diag.id), out->diag.message);
  else if (!strcmp(o->cmd, "lower") && out->nkcode) print_kernels_code(out);
  else if (!strcmp(o->cmd, "lower")) asm_print(&out->code, stdout);
  else if (!out->ran || !strcmp(o->cmd, "diff")) return;
  else if (o->no_verify) { /* nothing was compared: say what ran instead */
    summary(p);
    printf("%s: ok: %llu operations on %d subcore(s) on the engine only (--no-verify: no reference run, nothing compared)\n",
           p->name, (unsigned long long)out->eng.ops, out->eng.nsub);
    stats_headline(stdout, p, &out->eng.stats);
  } else {
    summary(p);
    printf("%s: ok: %llu operations on %d subcore(s), %llu values verified against the reference\n", p->name,
           (unsigned long long)out->ref.ops, out->ref.nsub, (unsigned long long)out->verify.matched);
    stats_headline(stdout, p, &out->eng.stats);
    if (o->profile) stats_profile(stdout, p, &out->eng.stats);
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

/* pl.debug_print's lines, as the engine ran them, on standard output
 * (standard error under --json, whose standard output is the JSON). */
static void print_debug(const RunResult *r, FILE *f) {
  for (int i = 0; i < r->nprints; i++) fprintf(f, "%s\n", r->prints[i].text);
}

static int run_command(const Options *o) {
  PipeOptions po;
  static PipeOutcome out;
  pipe_options(o, &po);
  pipeline_file(o->path, &po, &out);
  if (out.ran) print_warnings(&out.eng);
  if (out.ran) print_debug(&out.eng, o->json ? stderr : stdout);
  if (out.ran && o->out) write_out(o, &out);
  int code = out.exit;
  if (o->json) outcome_json(stdout, o->cmd, &out);
  else if (out.verdict == PV_OK) print_ok(o, &out);
  else report(&out);
  if (out.ran && !strcmp(o->cmd, "diff") && !o->json) print_diff(&out.verify);
  pipeline_free(&out);
  return code;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "fuzz")) return fuzz_main(argc - 1, argv + 1);
  if (argc > 1 && !strcmp(argv[1], "emit-pallas")) return emit_main(argc - 1, argv + 1);
  if (argc > 1 && !strcmp(argv[1], "sweep")) return sweep_main(argc - 1, argv + 1);
  if (argc > 1 && !strcmp(argv[1], "merge")) return merge_main(argc - 1, argv + 1);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout), EXIT_OK;
    if (!strcmp(argv[i], "--version")) return puts("sc-sim " SC_SIM_VERSION), EXIT_OK;
    if (!strcmp(argv[i], "--list-chips")) return list_chips(), EXIT_OK;
    if (!strcmp(argv[i], "--list-ops")) return list_ops(), EXIT_OK;
    if (!strcmp(argv[i], "--list-instructions")) return list_instructions(), EXIT_OK;
    if (!strcmp(argv[i], "--list-mutants")) return list_mutants(), EXIT_OK;
  }
  Options o = {0};
  if (!parse_args(argc, argv, &o)) return EXIT_INVALID;
  return run_command(&o);
}
