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

/* The operators of value expressions (the ALU's sub-operations), declared
 * once: X(ENUM, spelling, asm, arity, precedence).
 *   spelling    the Python token: what the expression parser matches and
 *               expression printing writes (keywords are matched as words);
 *   asm         the op="..." of the lowered text form (docs/isa.md); unique,
 *               so the unary minus and plus are "neg" and "pos" there;
 *   arity       1 (prefix) or 2 (infix, left-associative);
 *   precedence  Python's binding level, loosest first: 0 or, 1 and, 2 not,
 *               3 comparisons, 4 |, 5 ^, 6 &, 7 shifts, 8 + -, 9 * / // %,
 *               10 unary - + ~ (comparisons do not chain here).
 * The enum's order (binary, then unary) is the one the ALU's switches and
 * sc-sim's earlier releases used. */
#define EXPR_OPS(X)                          \
  X(OR, "or", "or", 2, 0)                    \
  X(AND, "and", "and", 2, 1)                 \
  X(EQ, "==", "==", 2, 3)                    \
  X(NE, "!=", "!=", 2, 3)                    \
  X(LT, "<", "<", 2, 3)                      \
  X(LE, "<=", "<=", 2, 3)                    \
  X(GT, ">", ">", 2, 3)                      \
  X(GE, ">=", ">=", 2, 3)                    \
  X(BOR, "|", "|", 2, 4)                     \
  X(BXOR, "^", "^", 2, 5)                    \
  X(BAND, "&", "&", 2, 6)                    \
  X(SHL, "<<", "<<", 2, 7)                   \
  X(SHR, ">>", ">>", 2, 7)                   \
  X(ADD, "+", "+", 2, 8)                     \
  X(SUB, "-", "-", 2, 8)                     \
  X(MUL, "*", "*", 2, 9)                     \
  X(DIV, "/", "/", 2, 9)                     \
  X(FLOORDIV, "//", "//", 2, 9)              \
  X(MOD, "%", "%", 2, 9)                     \
  X(NEG, "-", "neg", 1, 10)                  \
  X(POS, "+", "pos", 1, 10)                  \
  X(INVERT, "~", "~", 1, 10)                 \
  X(NOT, "not", "not", 1, 2)

typedef enum {
  OP_NONE,
#define X(e, text, asm, arity, prec) OP_##e,
  EXPR_OPS(X)
#undef X
} ExprOp;
/* OP_NONE and every operator; not an ExprOp, so switches need no case for it. */
#define X(e, text, asm, arity, prec) +1
enum { EXPR_OP_COUNT = 1 EXPR_OPS(X) };
#undef X
enum { EXPR_PREC_LEVELS = 11 }; /* precedence levels 0..10 above */

const char *expr_op_text(ExprOp op); /* "?" for OP_NONE */
const char *expr_op_asm(ExprOp op);
int expr_op_arity(ExprOp op);        /* 0 for OP_NONE */
int expr_op_prec(ExprOp op);         /* -1 for OP_NONE */
/* The operator whose asm text is `text`; false when none is. */
bool expr_op_from_asm(const char *text, ExprOp *out);

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
