/* sim/verify.h -- engine against reference, and the program's expectations.
 *
 * The engine and the reference each produce a RunResult (sim/run.h).  For
 * every subcore, their logs must agree event by event: each loaded value,
 * each old value a swap or store returned, and the contents each store left
 * in its view, lane by lane (a lane the reference leaves undefined is not
 * compared).  At the end every instance of every ref must agree byte for
 * byte where the reference's bytes are defined.  The first difference is
 * reported with the operation, the subcore, the lane and both values. */
#ifndef SC_VERIFY_H
#define SC_VERIFY_H

#include "run.h"

/* Counts of compared elements, for sc-sim diff's verdict line. */
#define VERIFY_MAX_LIST 1000

/* The first difference, or the failed expect.refs check, as data (--json). */
typedef struct {
  bool set;
  char what[96];      /* "loaded value of 'load'", "final contents of 'x@0.1'", "expect.refs of 'x'" */
  char instance[160]; /* the ref instance (final contents, expect.refs), else "" */
  int core, subcore;  /* the subcore whose log differs; -1 for memory */
  RunElement at;      /* got: the lowering's (or the run's) value; wanted: the reference's (or expected) */
} VerifyFirst;

typedef struct {
  VerifyFirst first;
  uint64_t matched, mismatched;
  int max_list;              /* how many mismatches to keep (sc-sim diff) */
  int nlist;
  char (*list)[240];         /* "line L  op  subcore  lane/element  reference  lowering" rows */
} VerifyStats;

/* Compares the two runs; false with *d set (RUN_MISMATCH) at the first
 * difference.  When max_report > 0 keeps counting past the first. */
bool verify_runs(const Program *p, const RunResult *ref, const RunResult *eng, Diag *d, VerifyStats *st);
/* The comparison event by event, for a caller that holds the events (the
 * streaming verification of sim/run/stream.h): whether two events agree
 * (the same operation, kind, shape and lanes, definedness too); one pair of
 * subcore sub, x the reference's and y the lowering's, counted into st (and
 * the first difference into *d while *ok, which it clears); the end of a
 * subcore's events, na in the reference and nb in the lowering, extra_op the
 * operation of the first event only one side has. */
bool verify_event_equal(const Event *x, const Event *y);
/* The values part of verify_event_equal (lanes, definedness; x the reference's). */
bool verify_value_equal(const Value *x, const Value *y);
void verify_event_pair(const Program *p, int sub, const Event *x, const Event *y, bool *ok, Diag *d, VerifyStats *st);
void verify_event_counts(const Program *p, int sub, uint64_t na, uint64_t nb, int extra_op, bool *ok, Diag *d, VerifyStats *st);
/* The end of verify_runs for logs compared elsewhere (logs_ok their
 * verdict, *d set when false): the final memory. */
bool verify_memory(const Program *p, const RunResult *ref, const RunResult *eng, bool logs_ok, Diag *d, VerifyStats *st);
/* Checks expect.refs against a run's final memory (RUN_EXPECT on failure). */
bool verify_expect_refs(const Program *p, RunResult *r, Diag *d, VerifyFirst *x);
/* The checks of expect.refs that need no run (each entry a literal of the
 * ref's shape or one scalar, naming an instance of the mesh): a program that
 * fails them is invalid input, found by check and lower as by run. */
bool verify_expect_static(const Program *p, Diag *d);
/* Turns a run's fault into a diagnostic (RUN_FAULT, or RUN_EXPECT for a
 * failed in-body expect). */
void verify_fault_diag(const RunResult *r, Diag *d);

#endif
