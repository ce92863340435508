/* sim/front/load_sugar.h -- chip-derived constants in a ref's shape. */
#ifndef SC_LOAD_SUGAR_H
#define SC_LOAD_SUGAR_H

#include "../../lowering/program.h"

/* Folds a shape dimension written as text ("num_lanes", "2 * num_lanes",
 * "num_subcores * 8"): integers, num_cores / num_subcores / num_lanes of
 * the chip q, + - * // and parentheses.  False with *why set otherwise. */
bool sugar_fold_dim(const Expr *e, const ChipParams *q, int64_t *out, const char **why);

/* `update: {ref: R, op: OP, value: V}` (R[...] OP= V) as the get and the
 * set upstream's jaxpr has: `get: {ref: R, out: _updN}` then `set: {ref:
 * R', value: "_updN OP (V)"}`, R' a second parse of R.  OP is one of
 * + - * / // % & | ^ << >> min max.  False with *why set for another OP. */
bool sugar_update(Arena *a, const Op *up, Expr *ref2, Op **get, Op **set, const char **why);

/* init: {permutation: SEED}: r's elements in row-major order are a
 * permutation of 0 .. nelems - 1, by Fisher-Yates with splitmix64 sm (the
 * generator of init: {random}): perm = [0, 1, ..., n - 1]; for i from n - 1
 * down to 1, j = sm(SEED + i) mod (i + 1), swap perm[i] and perm[j].  The
 * cells go to r->init_data (INIT_LIST).  False with *why set when the
 * dtype cannot hold n - 1 (or is bool). */
bool sugar_permutation(Arena *a, Ref *r, uint64_t seed, const char **why);

/* `call: {name: D, with: {P: EXPR, ...}}`: every name P (a parameter of
 * the define) in the expressions of body b, nested bodies included, is
 * replaced by its own copy of the argument's expression tree. */
void sugar_substitute(Arena *a, Body *b, const char *const *params, Expr *const *args, int n);

#endif
