/* sim/front/load_sugar.h -- chip-derived constants in a ref's shape. */
#ifndef SC_LOAD_SUGAR_H
#define SC_LOAD_SUGAR_H

#include "../../lowering/program.h"

/* Folds a shape dimension written as text ("num_lanes", "2 * num_lanes",
 * "num_subcores * 8"): integers, num_cores / num_subcores / num_lanes of
 * the chip q, + - * // and parentheses.  False with *why set otherwise. */
bool sugar_fold_dim(const Expr *e, const ChipParams *q, int64_t *out, const char **why);

#endif
