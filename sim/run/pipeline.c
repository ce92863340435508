/* sim/run/pipeline.c -- load, check, lower, run, verify: one driver for
 * every front (sim/run/pipeline.h). */
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "../../lowering/asm.h"
#include "../../lowering/mosaic.h"
#include "../../lowering/check.h"
#include "../../traces/stats.h"
#include "../front/load.h"
#include "engine.h"
#include "stream.h"

static const struct {
  const char *name;
  int exit;
} verdicts[] = {
#define X(e, n, x) {n, x},
    PIPE_VERDICTS(X)
#undef X
};

const char *pipe_verdict_name(PipeVerdict v) { return verdicts[v].name; }
int pipe_verdict_exit(PipeVerdict v) { return verdicts[v].exit; }

void pipe_options_init(PipeOptions *o) {
  memset(o, 0, sizeof *o);
  o->stop = PIPE_RUN;
  trace_options_init(&o->trace);
}

static void set_verdict(PipeOutcome *out, PipeVerdict v) {
  out->verdict = v;
  out->exit = pipe_verdict_exit(v);
}

/* The verdict a diagnostic gives: its class, and for a verification
 * difference whether it is a program's expectation. */
static PipeVerdict verdict_of(const Diag *d) {
  switch (diag_class(d->id)) {
  case DC_RULE: return PV_REJECTED;
  case DC_INPUT: return PV_INVALID;
  case DC_FAULT: return PV_FAULT;
  case DC_VERIFY: return d->id == D_RUN_EXPECT ? PV_EXPECT_FAILED : PV_MISMATCH;
  }
  return PV_INVALID;
}

/* Stops with out->diag as the verdict; false, so callers can return it. */
static bool fail(PipeOutcome *out) {
  set_verdict(out, verdict_of(&out->diag));
  return false;
}

/* ---- before a run: check and lower ------------------------------------------ */
/* sc-sim's lowering, or the user's text parsed and put through the Mosaic
 * verifier: either way out->code is freed by pipeline_free alone. */
static bool lower_one(const PipeOptions *o, const Program *p, Code *code, Diag *d) {
  if (p->lowered) return asm_parse(p, p->lowered, p->lowered_loc, code, d) && mosaic_verify(code, d);
  return lower_program(p, o->mutant, code, d);
}

static bool lower(const PipeOptions *o, PipeOutcome *out) {
  return out->lowered = lower_one(o, &out->program, &out->code, &out->diag);
}

/* The failed check as data. */
static void expect_failed(PipeOutcome *out, const char *check, const VerifyFirst *x, const char *got, const char *wanted) {
  out->expect_check = check;
  out->expect = x ? *x : (VerifyFirst){.core = -1, .subcore = -1};
  snprintf(out->expect_got, sizeof out->expect_got, "%s", got);
  snprintf(out->expect_wanted, sizeof out->expect_wanted, "%s", wanted);
}

/* expect: error: the first rejection must match it (type and message). */
static bool expected_error(PipeOutcome *out, bool accepted) {
  const Program *p = &out->program;
  Diag *d = &out->diag;
  char want[1100], got[1100];
  snprintf(want, sizeof want, "%s%s%s", p->expect_error_type ? p->expect_error_type : "", p->expect_error_type ? ": " : "",
           p->expect_error_message);
  snprintf(got, sizeof got, "%s: %s", diag_type(d->id), d->message);
  expect_failed(out, "error", NULL, accepted ? "" : got, want);
  if (accepted) {
    char msg[800];
    snprintf(msg, sizeof msg, "expected a rejection (%s), but the program was accepted", p->expect_error_message);
    diag_set(&out->diag, D_RUN_EXPECT, p->expect_loc, msg);
    return fail(out);
  }
  bool type_ok = !p->expect_error_type || !strcmp(p->expect_error_type, diag_type(d->id));
  if (diag_class(d->id) != DC_RULE || !type_ok || strcmp(p->expect_error_message, d->message)) {
    diag_note(d, "expect.error (line %d) wants %s", p->expect_loc.line, want);
    return fail(out);
  }
  out->expect_check = NULL;
  out->expected_rejection = true;
  set_verdict(out, PV_OK);
  return false;
}

/* Every check a run applies before it runs; true to go on. */
static bool before_run(const PipeOptions *o, PipeOutcome *out) {
  Program *p = &out->program;
  bool ok = check_program(p, &out->diag) && lower(o, out) && verify_expect_static(p, &out->diag);
  if (p->expect_error) return expected_error(out, ok);
  return ok || fail(out);
}

/* Whether the program's machine fits the caller's bounds. */
static bool within_bounds(const PipeOptions *o, const Program *p) {
  int64_t subs = p->mesh_cores * p->mesh_subcores;
  if (o->max_subcores && (p->mesh_cores > o->max_subcores || p->mesh_subcores > o->max_subcores || subs > o->max_subcores))
    return false;
  double bytes = 0;
  for (int i = 0; i < p->nrefs; i++) {
    const Ref *r = p->refs[i];
    double inst = r->space == SP_HBM ? 1 : r->space == SP_VMEM_SHARED ? (double)p->mesh_cores : (double)subs;
    bytes += inst * (double)r->nelems * (double)dtype_size(r->dtype);
  }
  return !o->max_bytes || bytes <= o->max_bytes;
}

/* ---- the run and its verdict -------------------------------------------------- */
static bool fault_diag(PipeOutcome *out, const RunResult *r) {
  verify_fault_diag(r, &out->diag);
  out->fault = r->fault;
  VerifyFirst x = {.set = true, .core = r->fault.core, .subcore = r->fault.subcore, .at = r->fault.at};
  if (r->fault.kind == FAULT_EXPECT) expect_failed(out, "expect", &x, r->fault.at.got, r->fault.at.wanted);
  return fail(out);
}

/* Both runs fault the same way: the program's fault.  One faults: the
 * lowering and the reference disagree.  Races and cycle limits are the
 * engine's alone (it models concurrency and time); an operation limit
 * reads best in the reference's words. */
static void fault_outcome(const PipeOptions *o, PipeOutcome *out) {
  const RunResult *ref = &out->ref, *eng = &out->eng;
  if (eng->faulted && eng->fault.kind == FAULT_LOWERING) { /* a malformed lowering is bad input */
    diag_set(&out->diag, D_IN_EXPR, eng->fault.loc, eng->fault.details);
    fail(out);
  } else if (o->no_verify) {
    fault_diag(out, eng);
  } else if (ref->faulted && eng->faulted && ref->fault.kind == eng->fault.kind) {
    fault_diag(out, ref->fault.kind == FAULT_LIMIT ? ref : eng);
  } else if (eng->faulted && (eng->fault.kind == FAULT_RACE || eng->fault.kind == FAULT_LIMIT)) {
    fault_diag(out, eng);
  } else if (ref->faulted && ref->fault.kind == FAULT_LIMIT) {
    fault_diag(out, ref);
  } else {
    const RunResult *f = ref->faulted ? ref : eng;
    char msg[1000];
    snprintf(msg, sizeof msg, "the %s stopped with fault %s (%s) and the %s did not stop there",
             ref->faulted ? "reference" : "lowering", fault_name(f->fault.kind), f->fault.details,
             ref->faulted ? "lowering" : "reference");
    diag_set(&out->diag, D_RUN_MISMATCH, f->fault.loc, msg);
    VerifyFirst *x = &out->verify.first;
    *x = (VerifyFirst){.set = true, .core = f->fault.core, .subcore = f->fault.subcore};
    snprintf(x->what, sizeof x->what, "fault %s in the %s only", fault_name(f->fault.kind), ref->faulted ? "reference" : "lowering");
    fail(out);
  }
}

/* expect: cycles: {max: N} bounds the timing model's result. */
static bool cycles_ok(PipeOutcome *out) {
  const Program *p = &out->program;
  const RunResult *eng = &out->eng;
  Diag *d = &out->diag;
  if (!p->expect_cycles || eng->cycles <= (uint64_t)p->expect_cycles_max) return true;
  char msg[200], got[32], want[32];
  snprintf(got, sizeof got, "%llu", (unsigned long long)eng->cycles);
  snprintf(want, sizeof want, "%lld", (long long)p->expect_cycles_max);
  expect_failed(out, "cycles", NULL, got, want);
  snprintf(msg, sizeof msg, "the run took %llu cycles, more than expect.cycles.max = %lld", (unsigned long long)eng->cycles,
           (long long)p->expect_cycles_max);
  diag_set(d, D_RUN_EXPECT, p->expect_loc, msg);
  return false;
}

static bool refs_ok(PipeOutcome *out) {
  VerifyFirst x = {0};
  if (verify_expect_refs(&out->program, &out->eng, &out->diag, &x)) return true;
  if (x.set) expect_failed(out, "refs", &x, x.at.got, x.at.wanted);
  return false;
}

/* The logs of p's runs compared as the runs went (st), or now. */
static bool runs_agree(PipeOutcome *out, const Program *p, Stream *st) {
  if (!st) return verify_runs(p, &out->ref, &out->eng, &out->diag, &out->verify);
  return verify_memory(p, &out->ref, &out->eng, stream_verdict(st, &out->diag, &out->verify), &out->diag, &out->verify);
}

/* p: the program, or the kernel that ran (a program of several kernels),
 * whose runs are compared; the expectations are judged after the last. */
static void judge_runs(const PipeOptions *o, PipeOutcome *out, const Program *p, Stream *st, bool last) {
  if (out->ref.faulted || out->eng.faulted) fault_outcome(o, out);
  else if (!o->no_verify && !runs_agree(out, p, st)) fail(out);
  else if (!last) set_verdict(out, PV_OK);
  else if (!refs_ok(out) || !cycles_ok(out)) fail(out);
  else set_verdict(out, PV_OK);
  /* Without race detection a racy program's runs may differ: say so where
   * the user would otherwise look for a lowering bug. */
  if (out->verdict == PV_MISMATCH && o->limits.no_races)
    diag_note(&out->diag, "race detection is off (--no-races): the difference may come from a race between subcores or DMAs");
}

static void judge(const PipeOptions *o, PipeOutcome *out, Stream *st) { judge_runs(o, out, &out->program, st, true); }

static TraceSink *open_trace(const PipeOptions *o, const Program *p, Diag *d, bool *bad) {
  *bad = false;
  if (!o->trace_path) return NULL;
  if (o->trace_error) {
    diag_set(d, D_IN_VALUE, (Loc){"sc-sim", 0, 0}, o->trace_error);
    *bad = true;
    return NULL;
  }
  TraceOptions t = o->trace;
  t.clock_hz = p->params.clock_hz > 0 ? (double)p->params.clock_hz : 1e9;
  t.program_name = p->name;
  t.cores = (int)p->mesh_cores;
  t.subcores = (int)p->mesh_subcores;
  t.scalar_subcore = p->kernel == KERNEL_SCALAR;
  TraceSink *s = trace_open(o->trace_path, &t, d);
  *bad = !s;
  return s;
}

/* An output that fails turns an ok run into its diagnostic. */
static void output_done(PipeOutcome *out, bool ok, const Diag *d) {
  if (ok || out->verdict != PV_OK) return;
  out->diag = *d;
  fail(out);
}

/* The reference beside the engine, opened at the engine's first event (so
 * that the engine has its memory first, as when the runs took turns). */
typedef struct {
  const Program *p;
  const RunLimits *lim;
  RunResult *out;
  struct RefRun *run;
} Beside;

static void pump_reference(void *ctx, int sub) {
  Beside *b = ctx;
  if (!b->run) b->run = reference_open(b->p, b->lim, b->out);
  reference_pump(b->run, sub);
}

static void run(const PipeOptions *o, PipeOutcome *out) {
  const Program *p = &out->program;
  bool bad;
  TraceSink *trace = open_trace(o, p, &out->diag, &bad);
  if (bad) return (void)fail(out);
  RunLimits lim = o->limits;
  lim.trace = trace;
  lim.no_log = o->no_verify;
  lim.profile = lim.profile || o->stats_path; /* the stats file has a profile section */
  lim.atomics = NULL, lim.natomics = 0;
  if (o->stop == PIPE_DIFF) {
    int want = o->max_list > 0 ? o->max_list : 10;
    out->verify.max_list = want < VERIFY_MAX_LIST ? want : VERIFY_MAX_LIST;
    out->verify.list = calloc((size_t)out->verify.max_list, sizeof *out->verify.list);
    if (!out->verify.list) abort();
  }
  /* The reference runs beside the engine, which drives it: their events
   * are compared as they come (sim/run/stream.h), and it replays the
   * engine's atomics as the engine runs them (SPEC §9.10). */
  Stream *st = NULL;
  Beside ref = {p, &lim, &out->ref, NULL};
  if (!o->no_verify) {
    st = stream_open(p, (int)(p->mesh_cores * p->mesh_subcores), out->verify.max_list);
    lim.stream = st;
    stream_set_pump(st, pump_reference, &ref);
  }
  engine_run(p, &out->code, &lim, &out->eng);
  if (st) {
    stream_close(st, STREAM_ENG);
    if (!ref.run) ref.run = reference_open(p, &lim, &out->ref);
    reference_close(ref.run);
    stream_close(st, STREAM_REF);
  }
  out->ran = true;
  judge(o, out, st);
  stream_free(st);
  Diag d;
  if (trace) output_done(out, trace_close(trace, &d), &d);
  if (o->stats_path) output_done(out, stats_write(o->stats_path, p, &out->eng.stats, &d), &d);
}

#include "pipeline_kernels.inc"

static void drive(const PipeOptions *o, PipeOutcome *out) {
  if (out->program.nkernels) return drive_kernels(o, out);
  if (!before_run(o, out)) return;
  set_verdict(out, PV_OK);
  if (o->stop == PIPE_CHECK) lower_free(&out->code);
  if (o->stop >= PIPE_RUN && within_bounds(o, &out->program)) run(o, out);
}

void pipeline_file(const char *path, const PipeOptions *o, PipeOutcome *out) {
  memset(out, 0, sizeof *out);
  out->loaded = load_program(path, &out->program, &out->diag);
  if (!out->loaded) fail(out);
  else drive(o, out);
}

void pipeline_text(const char *name, const char *text, size_t len, const PipeOptions *o, PipeOutcome *out) {
  memset(out, 0, sizeof *out);
  out->loaded = o->files ? load_program_files(name, text, len, o->files, &out->program, &out->diag)
                         : load_program_text(name, text, len, &out->program, &out->diag);
  if (!out->loaded) fail(out);
  else drive(o, out);
}

void pipeline_free(PipeOutcome *out) {
  run_result_free(&out->ref);
  run_result_free(&out->eng);
  free(out->verify.list);
  lower_free(&out->code);
  for (int i = 0; i < out->nkcode; i++) lower_free(&out->kcode[i]);
  free(out->kcode);
  program_free(&out->program);
  memset(out, 0, sizeof *out);
}
