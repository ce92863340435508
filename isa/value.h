/* isa/value.h -- runtime values and the lane arithmetic both the engine and
 * the reference interpreter use (SPEC §9.3: integers wrap, // floors, %
 * takes the divisor's sign, / is true division, shifts past the width give
 * 0 (or -1 for >> of a negative signed value), floats round to the dtype).
 *
 * A Value is a dense row-major array of lanes with a per-lane defined flag
 * (SPEC §7.6); a scalar has rank 0 and one lane. */
#ifndef SC_VALUE_H
#define SC_VALUE_H

#include <stdbool.h>
#include <stdint.h>

#include "../memory/dtype.h"

#define MAX_RANK 8

/* The operators of value expressions (the ALU's sub-operations). */
typedef enum {
  OP_NONE,
  /* binary, lowest precedence first */
  OP_OR, OP_AND, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
  OP_BOR, OP_BXOR, OP_BAND, OP_SHL, OP_SHR, OP_ADD, OP_SUB,
  OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD,
  /* unary */
  OP_NEG, OP_POS, OP_INVERT, OP_NOT
} ExprOp;

typedef struct {
  Dtype dtype;
  int rank;
  int64_t shape[MAX_RANK];
  int64_t n;       /* lanes */
  Cell *v;
  uint8_t *def;    /* 1 where the lane is defined */
  int64_t cap;     /* lanes allocated */
} Value;

/* Shapes v (allocating as needed; lanes undefined). */
void val_shape(Value *v, Dtype t, int rank, const int64_t *shape);
void val_scalar(Value *v, Dtype t, Cell c);
void val_copy(Value *dst, const Value *src);
void val_free(Value *v);
bool val_all_defined(const Value *v);
/* Lane i of a value broadcast to n lanes (a scalar repeats). */
static inline int64_t val_lane(const Value *v, int64_t i) { return v->n == 1 ? 0 : i; }

typedef enum { ALU_OK, ALU_DIVZERO } AluStatus;
/* One lane of a binary op: operands already of dtype `in`; the result is of
 * dtype `out` (bool for comparisons, float32 for / of integers). */
AluStatus alu_binary(ExprOp op, Dtype in, Dtype out, Cell a, Cell b, Cell *r);
Cell alu_unary(ExprOp op, Dtype t, Cell a);
/* min / max as jnp.minimum / jnp.maximum: NaN propagates, and
 * min(0.0, -0.0) is -0.0, max(0.0, -0.0) is 0.0. */
Cell alu_minmax(Dtype t, Cell a, Cell b, bool max);
/* Converts a lane between dtypes as a weakly typed literal or astype does. */
Cell alu_convert(Dtype from, Dtype to, Cell c);
/* The same, except that a float narrowed to bfloat16 is truncated (rounded
 * toward zero: float32's low 16 bits dropped) instead of rounded to nearest
 * even: arith.convert with the truncate flag. */
Cell alu_convert_truncate(Dtype from, Dtype to, Cell c);
bool alu_truthy(Dtype t, Cell c);
bool alu_equal(Dtype t, Cell a, Cell b); /* bitwise-meaningful equality (nan == nan) */

#endif
