/* sim/fuzz/oracle.c -- sc-sim fuzz: one program generated, run and judged
 * (docs/fuzz.md).
 *
 * Each program runs in a forked child with alarm(), so a crash or a hang
 * is an outcome like any other; the child runs the pipeline driver
 * (sim/run/pipeline.h) as `sc-sim run` does, and the verdict compares the
 * outcome with what the generator planned. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../run/pipeline.h"
#include "fuzz_priv.h"

/* ---- running one program ------------------------------------------------------ */
const char *const oc_names[] = {
#define X(e, n) n,
    OUTCOMES(X)
#undef X
};


static void oc_set(Outcome *o, OcKind k, const char *id, const char *msg, int line) {
  o->kind = k;
  snprintf(o->id, sizeof o->id, "%s", id);
  snprintf(o->msg, sizeof o->msg, "%s", msg);
  o->line = line;
}

/* The pipeline's verdict as the fuzzer names it: a fault by its kind
 * (with the fault's own words), anything else by its diagnostic. */
static void oc_pipe(Outcome *o, const PipeOutcome *po) {
  static const OcKind kinds[] = {[PV_OK] = OC_OK, [PV_REJECTED] = OC_REJECTED, [PV_INVALID] = OC_INVALID,
                                 [PV_MISMATCH] = OC_MISMATCH, [PV_EXPECT_FAILED] = OC_EXPECT, [PV_FAULT] = OC_FAULT};
  OcKind k = kinds[po->verdict];
  const Fault *f = &po->fault;
  if (k == OC_OK) oc_set(o, k, "ok", "", 0);
  else if (f->kind != FAULT_NONE) oc_set(o, k, k == OC_FAULT ? fault_name(f->kind) : diag_id_name(po->diag.id), f->details, f->loc.line);
  else oc_set(o, k, diag_id_name(po->diag.id), po->diag.message, po->diag.loc.line);
}

/* The whole pipeline in this process, as `sc-sim run` does it. */
static void evaluate(const char *text, size_t len, Mutant m, Outcome *o) {
  static PipeOutcome po;
  PipeOptions opt;
  pipe_options_init(&opt);
  opt.mutant = m;
  pipeline_text("fuzz.yaml", text, len, &opt, &po);
  oc_pipe(o, &po);
  pipeline_free(&po);
}

static size_t read_all(int fd, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  return got;
}

static void write_all(int fd, const void *buf, size_t n) {
  size_t put = 0;
  while (put < n) {
    ssize_t w = write(fd, (const char *)buf + put, n - put);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    put += (size_t)w;
  }
}

/* Runs the program in a forked child that alarm() stops after `limit`
 * seconds: a signal is a crash, the alarm a hang. */
static void run_isolated(const char *text, size_t len, Mutant m, int limit, Outcome *o) {
  int fds[2];
  memset(o, 0, sizeof *o);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = pipe(fds) ? -1 : fork();
  if (pid < 0) { /* no process to spare: run here, unprotected */
    evaluate(text, len, m, o);
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    alarm((unsigned)limit);
    evaluate(text, len, m, o);
    write_all(fds[1], o, sizeof *o);
    _exit(0);
  }
  close(fds[1]);
  size_t got = read_all(fds[0], o, sizeof *o);
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (got == sizeof *o && WIFEXITED(st) && WEXITSTATUS(st) == 0) return;
  char msg[128];
  if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
    snprintf(msg, sizeof msg, "no outcome after %d s", limit);
    oc_set(o, OC_HANG, "hang", msg, 0);
  } else if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    const char *id = sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "SIGABRT" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE" : "signal";
    snprintf(msg, sizeof msg, "killed by signal %d (%s)", sig, strsignal(sig));
    oc_set(o, OC_CRASH, id, msg, 0);
  } else {
    snprintf(msg, sizeof msg, "exited with status %d before reporting (a sanitizer?)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    oc_set(o, OC_CRASH, "exit", msg, 0);
  }
}

/* ---- verdicts ------------------------------------------------------------------- */
const VerdictInfo verdicts[] = {
#define X(e, t, f) {t, f},
    VERDICTS(X)
#undef X
};

/* A planned fault is met by a fault of that kind in both runs (the
 * pipeline's fault verdict); anything else that runs is a miss. */
static Verdict judge_fault(const Outcome *o, const char *want) {
  if (o->kind == OC_REJECTED || o->kind == OC_INVALID) return VD_UNEXPECTED;
  if (o->kind == OC_FAULT && !strcmp(want, o->id)) return VD_FAULTED;
  return o->kind == OC_FAULT ? VD_FAULT : o->kind == OC_OK ? VD_NOT_FAULTED : VD_MISMATCH;
}

/* A benign race (and an hbm ref left partly undefined) is a warning of a
 * run whose verdict is ok: clean, like any accepted program. */
static Verdict judge(const Outcome *o, const Meta *meta) {
  const char *want = meta->want;
  if (o->kind == OC_CRASH) return VD_CRASH;
  if (o->kind == OC_HANG) return VD_HANG;
  if (want && meta->want_fault) return judge_fault(o, want);
  if (o->kind == OC_REJECTED || o->kind == OC_INVALID) return want && !strcmp(want, o->id) ? VD_REJECTED : VD_UNEXPECTED;
  if (want) return VD_NOT_REJECTED;
  if (o->kind == OC_OK) return VD_ACCEPTED;
  return o->kind == OC_FAULT ? VD_FAULT : VD_MISMATCH;
}

Sig sig_of(Verdict v, const Outcome *o) {
  bool missed = v == VD_NOT_REJECTED || v == VD_NOT_FAULTED;
  Sig s = {v, missed ? OC_OK : o->kind, ""};
  snprintf(s.id, sizeof s.id, "%s", v == VD_MISMATCH || missed ? "" : o->id);
  return s;
}

bool sig_eq(const Sig *a, const Sig *b) { return a->v == b->v && a->k == b->k && !strcmp(a->id, b->id); }

/* ---- one program, generated and judged -------------------------------------- */
/* Generates and runs; returns the verdict. */
Verdict try_program(Fuzz *f, const Plan *pl, const Knobs *k, Mutant m, Outcome *o, Meta *meta) {
  Buf t = {0};
  gen_program(pl, k, &t, meta);
  run_isolated(t.s, t.n, m, f->limit, o);
  bfree(&t);
  return judge(o, meta);
}
