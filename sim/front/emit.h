/* sim/front/emit.h -- a loaded program written back as a Pallas kernel
 * (`sc-sim emit-pallas`): the kernel whose jaxpr means what the program
 * says, so that JAX's own lowering can judge it (issue 18) and the Python
 * front end can translate it back (the round trip). */
#ifndef SC_EMIT_H
#define SC_EMIT_H

#include "../../lowering/program.h"

/* The Python text of `p` as a Pallas module (malloc'd; the caller frees
 * it), or NULL with d set (D_IN_UNSUPPORTED-like input error naming the
 * construct Pallas cannot express: an initialised scratch ref, a user
 * lowering, chip overrides, ...).  With `legality`, for comparing verdicts
 * only (python -m sc_sim.jaxdiff --fuzz): the inits of refs, which no legality
 * rule reads, are dropped (scratch) or emitted as zeros (HBM). */
char *emit_pallas(const Program *p, bool legality, Diag *d);

#endif
