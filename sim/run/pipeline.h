/* sim/run/pipeline.h -- the one driver of the pipeline.
 *
 *   load -> check -> lower (or parse and verify the user's `lowered:` text)
 *        -> run the engine and the reference -> verify -> expectations
 *
 * Every front (the CLI's run, check, lower and diff, sc-sim fuzz, the
 * libFuzzer harnesses) calls pipeline_file or pipeline_text, so one file
 * gets one verdict whoever asks: check and lower stop after lowering, having
 * applied every check that a run applies before it runs.  The outcome is
 * data: the verdict, the diagnostic behind it, the exit status, and what the
 * run produced (the lowered code, both runs, the verification counts) for
 * the caller's outputs.  Nothing here prints. */
#ifndef SC_PIPELINE_H
#define SC_PIPELINE_H

#include "../../lowering/lower.h"
#include "../../traces/trace.h"
#include "../front/load.h"
#include "run.h"
#include "verify.h"

/* X(ENUM, name, exit status) -- PROGRAM_FORMAT.md, "Outcome and exit status" */
#define PIPE_VERDICTS(X)          \
  X(OK, "ok", 0)                  \
  X(REJECTED, "rejected", 1)      \
  X(INVALID, "invalid", 2)        \
  X(MISMATCH, "mismatch", 3)      \
  X(EXPECT_FAILED, "expect-failed", 3) \
  X(FAULT, "fault", 4)

typedef enum {
#define X(e, n, x) PV_##e,
  PIPE_VERDICTS(X)
#undef X
} PipeVerdict;

const char *pipe_verdict_name(PipeVerdict v);
int pipe_verdict_exit(PipeVerdict v);

/* How far to go. */
typedef enum {
  PIPE_CHECK, /* load, check, lower: the verdict of everything before a run */
  PIPE_LOWER, /* the same, keeping the lowered code (out->code) */
  PIPE_RUN,   /* and run, verify, check the expectations */
  PIPE_DIFF   /* a run that lists the mismatches (out->verify.list) */
} PipeStop;

typedef struct {
  PipeStop stop;
  Mutant mutant;
  bool no_verify;        /* the engine only: no reference, no comparison */
  RunLimits limits;      /* max_ops, max_cycles, max_log_bytes, no_races; the rest is the pipeline's */
  int max_list;          /* PIPE_DIFF: mismatches to list (0: 10) */
  /* Programs past these are lowered but not run (0: no bound), as a
   * harness that must stay fast wants. */
  int64_t max_subcores;
  double max_bytes;      /* of all ref instances */
  const char *trace_path; /* NULL: no trace */
  TraceOptions trace;    /* the caller's choices; the program's fields are filled in here */
  const char *trace_error; /* a bad trace option: reported where the trace would open */
  const char *stats_path; /* NULL: no statistics file */
  const LoadFiles *files; /* pipeline_text: the .npy files init: {npy: PATH} reads, instead of the disk (NULL: the disk) */
} PipeOptions;

/* The defaults: a full run, no outputs. */
void pipe_options_init(PipeOptions *o);

typedef struct {
  PipeVerdict verdict;
  int exit;
  Diag diag;             /* why, unless ok; for an expected rejection, the rejection */
  bool expected_rejection; /* ok: the program's expect.error matched diag */
  Fault fault;           /* the run's fault behind a fault or expect-failed verdict (kind FAULT_NONE: none) */
  /* expect-failed, or a rejection other than the one expect.error names:
   * which check ("expect": an expect operation, "refs", "cycles", "error"),
   * the element it names (expect, refs) and what was found and wanted, as
   * text ("" for nothing: an accepted program's rejection). */
  const char *expect_check;
  VerifyFirst expect;    /* what, instance, subcore and element (expect, refs) */
  char expect_got[1100], expect_wanted[1100];
  bool loaded, lowered, ran;
  Program program;       /* valid when loaded */
  Code code;             /* valid when lowered */
  Code *kcode;           /* a program of several kernels: each kernel's code (code stays empty) */
  int nkcode;
  RunResult eng, ref;    /* valid when ran (ref zeroed under no_verify) */
  VerifyStats verify;
} PipeOutcome;

/* Runs `path` as far as o says; the caller frees *out with pipeline_free
 * whatever the verdict. */
void pipeline_file(const char *path, const PipeOptions *o, PipeOutcome *out);
/* The same from a buffer; `name` is used in locations. */
void pipeline_text(const char *name, const char *text, size_t len, const PipeOptions *o, PipeOutcome *out);
void pipeline_free(PipeOutcome *out);

#endif
