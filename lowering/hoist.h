/* lowering/hoist.h -- what Mosaic's compiler does to the code of a loop
 * before it runs: copies in loop bodies folded into the instruction that
 * computes their value, and loop-invariant constants and iotas moved out
 * of loop bodies (scf.for; a while body is left as it is).
 *
 * Run on sc-sim's own lowering only (lower_program, before any mutant); a
 * user's `lowered:` text runs as written.  Both rewrites keep every value
 * every later instruction reads, so the run computes the same; the stream
 * is shorter, so its cycles drop (docs/timing.md, "The lowering's
 * clean-up"). */
#ifndef SC_HOIST_H
#define SC_HOIST_H

#include "lower.h"

/* Rewrites c in place.  named[r] (c->nregs entries) is true for the
 * registers that hold a program name (a let, an out, a loop variable or
 * carry): those may be read anywhere, so they are never hoisted, and a
 * copy out of one is kept.  Jump targets follow the instructions they
 * named; registers keep their numbers. */
void hoist_code(Code *c, const bool *named);

#endif
