/* sim/run/reference_scan.h -- the reference interpreter's scans (SPEC §5.8):
 * plsc.cumsum/cummax/cummin with their mask, jnp.cumsum. */
#ifndef SC_REFERENCE_SCAN_H
#define SC_REFERENCE_SCAN_H

#include "../../isa/value.h"
#include "../../lowering/builtins.h"

/* out := the scan b of x (1-D) where m holds (m NULL: every lane), in dtype
 * ty.  A masked-out lane holds the running value; for max and min, x's own
 * lane until the first lane the mask selects. */
void ref_scan(Builtin b, const Value *x, const Value *m, Dtype ty, Value *out);

/* out := jnp.sort / lax.sort of the 1-D x (keys only), reversed when
 * descending (jnp.sort's lax.rev). */
void ref_sort(const Value *x, bool descending, Dtype ty, Value *out);

/* out := plsc.all_reduce_population_count (ffs false) or all_reduce_ffs of
 * the bool vector x: x.size // reduce lanes, each the whole reduction. */
void ref_all_reduce(const Value *x, bool ffs, int64_t reduce, Value *out);

#endif
