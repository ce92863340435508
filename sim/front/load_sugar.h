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

#endif
