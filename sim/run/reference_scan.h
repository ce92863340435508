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

/* out[0], out[1], out[2] := plsc.sort_key_val(k, v, mask=m, descending):
 * the keys, the values and the output mask.  The lanes m selects (every
 * lane when m is NULL) come first, stably by key (int32 signed, uint32
 * unsigned, floats by value with NaN after every number; descending: the
 * reverse order, equal keys still in their order), then the others in
 * their order; the mask's first popcount(m) lanes are true. */
void ref_sort_key_val(const Value *k, const Value *v, const Value *m, bool descending, Value *out);

/* out[0], out[1] := plsc.scan_count(x, mask=m): lane i where m holds (m
 * NULL: every lane) counts the selected lanes j <= i whose 32-bit word
 * equals its own, and is a last occurrence when no selected lane after it
 * does; elsewhere the count is undefined and the flag false. */
void ref_scan_count(const Value *x, const Value *m, Value *out);

/* out[0..n) := lax.sort([x0, x1, ...]) of n 1-D operands: all of them in
 * the stable order of the keys x0 as lowered (no sign flip: integers as
 * unsigned 32-bit words, floats by value with NaN last). */
void ref_sort_operands(const Value *x, int n, Value *out);

/* out := plsc.pack(a, b, format): each element of the 1-D a and b as dtype
 * t, interleaved [a0, b0, a1, b1, ...] (2n,) or, compressed, the (n, 2)
 * array whose row i is [a_i, b_i]. */
void ref_pack(const Value *a, const Value *b, bool compressed, Dtype t, Value *out);
/* out[0], out[1] := plsc.unpack(ab): the first and the second element of
 * each pair (a 1-D ab's even and odd positions, a (n, 2) ab's columns), as t. */
void ref_unpack(const Value *ab, Dtype t, Value *out);

/* out := plsc.all_reduce_population_count (ffs false) or all_reduce_ffs of
 * the bool vector x: x.size // reduce lanes, each the whole reduction. */
void ref_all_reduce(const Value *x, bool ffs, int64_t reduce, Value *out);

#endif
