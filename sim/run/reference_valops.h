/* sim/run/reference_valops.h -- the reference interpreter's value
 * operations (lowering/check_valops.h), computed from their SPEC meaning on
 * evaluated operands, not from the lowering's instruction sequences. */
#ifndef SC_REFERENCE_VALOPS_H
#define SC_REFERENCE_VALOPS_H

#include "../../lowering/program.h"

/* How many operands of the call e the caller evaluates, and the k-th (a
 * jnp.concatenate's are its list's items; a reshape's shape and a
 * bitcast's dtype are not operands). */
int ref_valops_nargs(const Expr *e);
const Expr *ref_valops_arg(const Expr *e, int k);
/* The call's value from its evaluated operands a[0..n-1], into *out. */
void ref_valops(const Expr *e, const Value *a, int n, Value *out);

#endif
