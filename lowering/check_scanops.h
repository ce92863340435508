/* lowering/check_scanops.h -- typing and upstream's rules for the
 * cross-lane functions with several results (plsc.sort_key_val), which a
 * let of several names binds (let: {name: "k, v", value: ...}).
 *
 * For the lowering and the reference it leaves on the call node: ty (the
 * keys' dtype), sval (the lane count) and, on a descending= argument,
 * its literal's sval. */
#ifndef SC_CHECK_SCANOPS_H
#define SC_CHECK_SCANOPS_H

#include "index.h"

/* Types the tuple-valued call e of program p: its results into out[0..*n)
 * (out has room for 3).  False when a rule fired or e is no such call
 * (recorded in ix->d). */
bool check_scanops_tuple(IndexCtx *ix, const Program *p, Expr *e, AVal *out, int *n);
/* plsc.pack(a, b, format=..., preferred_element_type=...), one result:
 * typed into *out; it leaves sval = length << 1 | format (0 interleaved,
 * 1 compressed) and dtype = the packed dtype on e.  plsc.unpack, through
 * check_scanops_tuple, leaves the same with each half's length. */
bool check_scanops_pack(IndexCtx *ix, Expr *e, AVal *out);
/* A let of `want` names over `have` results: Python's ValueError when
 * they differ (an input error at `at`, recorded in ix->d). */
bool check_scanops_unpack(IndexCtx *ix, Loc at, int want, int have);

#endif
