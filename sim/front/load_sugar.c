/* sim/front/load_sugar.c -- chip-derived constants in a ref's shape. */
#include "load_sugar.h"

#include <string.h>

bool sugar_fold_dim(const Expr *e, const ChipParams *q, int64_t *out, const char **why) {
  int64_t a, b;
  switch (e->kind) {
  case EX_INT: *out = e->ival; return true;
  case EX_NAME:
    if (!strcmp(e->name, "num_cores")) return *out = q->num_cores, true;
    if (!strcmp(e->name, "num_subcores")) return *out = q->num_subcores, true;
    if (!strcmp(e->name, "num_lanes")) return *out = q->num_lanes, true;
    *why = "a shape dimension names only num_cores, num_subcores or num_lanes (the chip's)";
    return false;
  case EX_BINARY:
    if (!sugar_fold_dim(e->a, q, &a, why) || !sugar_fold_dim(e->b, q, &b, why)) return false;
    if (a < 0 || b < 0 || a > (1LL << 40) || b > (1LL << 40)) return *why = "a shape dimension out of range", false;
    if (e->op == OP_ADD) return *out = a + b, true;
    if (e->op == OP_SUB) return *out = a - b, true;
    if (e->op == OP_MUL) return *out = a * b, true;
    if (e->op == OP_FLOORDIV && b) return *out = a / b, true;
    *why = "a shape dimension combines constants with + - * // only";
    return false;
  case EX_FLOAT: case EX_BOOL: case EX_UNARY: case EX_CALL: case EX_SUBSCRIPT: case EX_AT: case EX_BITCAST:
  case EX_RESHAPE: case EX_LIST: case EX_SLICE: case EX_ELLIPSIS: case EX_NONE: break;
  }
  *why = "a shape dimension is an integer or a constant expression of num_cores, num_subcores, num_lanes";
  return false;
}
