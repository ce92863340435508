/* sim/main.c -- the command line: the only place that prints diagnostics
 * and picks exit codes (PROGRAM_FORMAT.md, "Outcome and exit status"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lowering/check.h"
#include "chips.h"
#include "load.h"
#include "engine.h"
#include "fuzz.h"
#include "run.h"
#include "verify.h"

#define SC_SIM_VERSION "0.1.0"

enum { EXIT_OK = 0, EXIT_REJECTED = 1, EXIT_INVALID = 2, EXIT_MISMATCH = 3, EXIT_FAULT = 4 };

typedef struct {
  const char *cmd; /* run, check, lower, diff */
  const char *path;
  bool json;
  Mutant mutant;
  uint64_t max_ops;
} Options;

static void usage(FILE *f) {
  fputs("usage: sc-sim [run] program.yaml [--json] [--mutate NAME] [--max-ops N]\n"
        "       sc-sim check program.yaml [--json]   legality only (exit 0, 1 or 2)\n"
        "       sc-sim lower program.yaml            print the lowered instructions\n"
        "       sc-sim diff  program.yaml            reference against the lowering\n"
        "       sc-sim --list-chips | --list-ops | --list-mutants | --version | --help\n"
        "exit status: 0 ok, 1 rejected by a legality rule, 2 invalid program or\n"
        "invocation, 3 verification failed, 4 fault at run time\n",
        f);
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
    else if (ch == '\n') fputs("\\n", f);
    else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
    else fputc(ch, f);
  }
  fputc('"', f);
}

static int exit_for(const Diag *d) {
  switch (diag_class(d->id)) {
  case DC_RULE: return EXIT_REJECTED;
  case DC_INPUT: return EXIT_INVALID;
  case DC_FAULT: return EXIT_FAULT;
  case DC_VERIFY: return EXIT_MISMATCH;
  }
  return EXIT_INVALID;
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

static int report(const Options *o, const Diag *d) {
  int code = exit_for(d);
  static const char *status[] = {"ok", "rejected", "invalid", "mismatch", "fault"};
  if (o->json) json_diag(d, status[code], code);
  else print_diag(d);
  return code;
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

static bool parse_args(int argc, char **argv, Options *o) {
  o->cmd = "run";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--json")) o->json = true;
    else if (!strcmp(a, "--mutate") || !strcmp(a, "--max-ops")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "sc-sim: %s needs a value\n", a);
        return false;
      }
      const char *v = argv[++i];
      if (a[2] == 'm' && a[3] == 'u' && !mutant_lookup(v, &o->mutant)) {
        fprintf(stderr, "sc-sim: unknown mutant '%s' (sc-sim --list-mutants lists them)\n", v);
        return false;
      }
      if (a[3] == 'a') {
        char *end;
        o->max_ops = strtoull(v, &end, 10);
        if (*end || !o->max_ops) {
          fprintf(stderr, "sc-sim: --max-ops takes a positive integer, got '%s'\n", v);
          return false;
        }
      }
    } else if (!o->path && i == 1 &&
               (!strcmp(a, "run") || !strcmp(a, "check") || !strcmp(a, "lower") || !strcmp(a, "diff")))
      o->cmd = a;
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "sc-sim: unknown option '%s' (sc-sim --help lists them)\n", a);
      return false;
    } else if (!o->path) o->path = a;
    else {
      fprintf(stderr, "sc-sim: one program at a time: '%s' is extra\n", a);
      return false;
    }
  }
  if (!o->path) {
    usage(stderr);
    return false;
  }
  return true;
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

/* Both runs fault the same way: the program's fault.  One faults: the
 * lowering and the reference disagree. */
static int fault_outcome(const Options *o, RunResult *ref, RunResult *eng) {
  Diag d;
  if (ref->faulted && eng->faulted && ref->fault.kind == eng->fault.kind) {
    verify_fault_diag(eng, &d);
    return report(o, &d);
  }
  const RunResult *f = ref->faulted ? ref : eng;
  char msg[1000];
  snprintf(msg, sizeof msg, "the %s stopped with fault %s (%s) and the %s did not stop there", ref->faulted ? "reference" : "lowering",
           fault_name(f->fault.kind), f->fault.details, ref->faulted ? "lowering" : "reference");
  diag_set(&d, D_RUN_MISMATCH, f->fault.loc, msg);
  return report(o, &d);
}

/* Runs an accepted program: the engine and the reference, verification of
 * one against the other, then the program's expectations. */
static int run_program(Program *p, const Options *o) {
  RunResult ref, eng;
  RunLimits lim = {o->max_ops, NULL};
  Code code;
  Diag d;
  int code_ = EXIT_OK;
  lower_program(p, o->mutant, &code, &d);
  reference_run(p, &lim, &ref);
  engine_run(p, &code, &lim, &eng);
  VerifyStats st = {0, 0};
  if (ref.faulted || eng.faulted) code_ = fault_outcome(o, &ref, &eng);
  else if (!verify_runs(p, &ref, &eng, &d, &st)) code_ = report(o, &d);
  else if (!verify_expect_refs(p, &eng, &d)) code_ = report(o, &d);
  else if (!strcmp(o->cmd, "diff")) printf("diff: %llu matched, %llu mismatched\n", (unsigned long long)st.matched, 0ULL);
  else if (o->json) printf("{\"status\": \"ok\", \"exit\": 0}\n");
  else {
    summary(p);
    printf("%s: ok: %llu operations on %d subcore(s), %llu values verified against the reference\n", p->name,
           (unsigned long long)ref.ops, ref.nsub, (unsigned long long)st.matched);
  }
  if (code_ == EXIT_MISMATCH && !strcmp(o->cmd, "diff"))
    printf("diff: %llu matched, %llu mismatched\n", (unsigned long long)st.matched, (unsigned long long)st.mismatched);
  run_result_free(&ref);
  run_result_free(&eng);
  lower_free(&code);
  return code_;
}

/* An expect.error program passes when the rejection matches it. */
static int expected_error(const Program *p, const Diag *d, const Options *o) {
  bool type_ok = !p->expect_error_type || !strcmp(p->expect_error_type, diag_type(d->id));
  if (diag_class(d->id) == DC_RULE && type_ok && !strcmp(p->expect_error_message, d->message)) {
    if (!o->json) printf("%s: rejected as expected: %s: %s\n", p->name, diag_type(d->id), d->message);
    else printf("{\"status\": \"ok\", \"exit\": 0}\n");
    return EXIT_OK;
  }
  return report(o, d);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout), EXIT_OK;
    if (!strcmp(argv[i], "--version")) return puts("sc-sim " SC_SIM_VERSION), EXIT_OK;
    if (!strcmp(argv[i], "--list-chips")) return list_chips(), EXIT_OK;
    if (!strcmp(argv[i], "--list-ops")) return list_ops(), EXIT_OK;
    if (!strcmp(argv[i], "--list-mutants")) return list_mutants(), EXIT_OK;
  }
  if (argc > 1 && !strcmp(argv[1], "fuzz")) return fuzz_main(argc - 1, argv + 1);
  Options o = {0};
  if (!parse_args(argc, argv, &o)) return EXIT_INVALID;
  static Program p;
  static Diag d;
  int code;
  if (!load_program(o.path, &p, &d)) code = report(&o, &d);
  else if (!check_program(&p, &d)) code = p.expect_error ? expected_error(&p, &d, &o) : report(&o, &d);
  else if (p.expect_error) {
    Diag m;
    diag_set(&m, D_IN_VALUE, p.expect_loc, "");
    fprintf(stderr, "%s:%d:%d: error: expected a rejection (%s), but the program was accepted\n", p.file,
            p.expect_loc.line, p.expect_loc.col, p.expect_error_message);
    code = EXIT_MISMATCH;
  } else if (!strcmp(o.cmd, "lower")) {
    Code c;
    lower_program(&p, o.mutant, &c, &d);
    lower_print(&c, stdout);
    lower_free(&c);
    code = EXIT_OK;
  } else if (!strcmp(o.cmd, "check")) {
    if (o.json) printf("{\"status\": \"ok\", \"exit\": 0}\n");
    code = EXIT_OK;
  } else {
    code = run_program(&p, &o);
  }
  program_free(&p);
  return code;
}
