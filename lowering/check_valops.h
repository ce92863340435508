/* lowering/check_valops.h -- typing and upstream's rules for the value
 * operations of lowering/builtins.h's second group: reductions (jnp.sum,
 * jnp.max, jnp.min, jnp.all, jnp.any), elementwise math (jnp.exp, jnp.abs;
 * jnp.sqrt, lax.rsqrt, jnp.log, jnp.tanh have no SparseCore lowering),
 * jnp.flip, jnp.take_along_axis, jnp.reshape, plsc.bitcast and
 * jnp.concatenate.
 *
 * For the lowering and the reference it leaves on the call node: ty (the
 * result dtype), sval (the operand's length along dimension 0: the last
 * lane a reduction extracts, the length a flip reverses) and, for
 * plsc.bitcast, dtype (the target). */
#ifndef SC_CHECK_VALOPS_H
#define SC_CHECK_VALOPS_H

#include "index.h"

/* True when b is one of these builtins. */
bool valops_builtin(Builtin b);
/* v[idx] with idx an integer vector (a gather from a loaded vector, as
 * Pallas writes it): rewrites the subscript e into the call
 * jnp.take_along_axis(v, idx) and types it.  False, with *handled false
 * and nothing recorded, when idx is not such a vector. */
bool check_valops_subscript(IndexCtx *ix, const Program *p, Expr *e, AVal *out, bool *handled);
/* Types the call e (valops_builtin(e->builtin)) of program p into *out;
 * false when a rule fired or the input is wrong (recorded in ix->d). */
bool check_valops_call(IndexCtx *ix, const Program *p, Expr *e, AVal *out);

#endif
