/* lowering/check.h -- the legality checker (SPEC §4, corrected by §8).
 *
 * The body is walked once per phase, T (trace), then L (lowering), in
 * program order; each walk evaluates every expression and view the same
 * way and reports only the rules of its own phase, so the first failing
 * rule of the earliest phase wins, as in upstream, where a kernel is
 * traced whole before any of it is lowered.  Phase V (the Mosaic
 * verifier) comes last: the body is lowered and its code verified by
 * mosaic_verify (mosaic.h), as upstream verifies the lowered kernel. */
#ifndef SC_CHECK_H
#define SC_CHECK_H

#include "program.h"

/* Returns true when the program is accepted; otherwise *d holds the first
 * diagnostic (a rule, exit 1, or an input error found while typing the
 * body, exit 2). */
bool check_program(Program *p, Diag *d);

#endif
