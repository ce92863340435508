/* isa/value.c -- values and lane arithmetic. */
#include "value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* EXPR_OPS, expanded */
static const struct {
  const char *text, *asm_text;
  int arity, prec;
} ops[EXPR_OP_COUNT] = {
    [OP_NONE] = {"?", "?", 0, -1},
#define X(e, text, asm, arity, prec) [OP_##e] = {text, asm, arity, prec},
    EXPR_OPS(X)
#undef X
};
const char *expr_op_text(ExprOp op) { return ops[op].text; }
const char *expr_op_asm(ExprOp op) { return ops[op].asm_text; }
int expr_op_arity(ExprOp op) { return ops[op].arity; }
int expr_op_prec(ExprOp op) { return ops[op].prec; }

bool expr_op_from_asm(const char *text, ExprOp *out) {
  for (int i = 1; i < EXPR_OP_COUNT; i++)
    if (!strcmp(ops[i].asm_text, text)) return *out = (ExprOp)i, true;
  return false;
}

void val_shape(Value *v, Dtype t, int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= shape[i];
  if (n > v->cap) {
    int64_t cap = n < 1 ? 1 : n; /* exact: a register holds one shape for its life */
    Cell *nv = realloc(v->v, sizeof(Cell) * (size_t)cap);
    uint8_t *nd = realloc(v->def, (size_t)cap);
    if (!nv || !nd) abort(); /* sizes are bounded by the loader's limits */
    v->v = nv;
    v->def = nd;
    v->cap = cap;
  }
  v->dtype = t;
  v->rank = rank;
  if (rank) memcpy(v->shape, shape, sizeof(int64_t) * (size_t)rank);
  v->n = n;
  if (n) memset(v->def, 0, (size_t)n);
}

void val_scalar(Value *v, Dtype t, Cell c) {
  val_shape(v, t, 0, NULL);
  v->v[0] = dtype_fit(t, c);
  v->def[0] = 1;
}

void val_copy(Value *dst, const Value *src) {
  if (dst == src) return;
  val_shape(dst, src->dtype, src->rank, src->shape);
  if (!src->n) return;
  memcpy(dst->v, src->v, sizeof(Cell) * (size_t)src->n);
  memcpy(dst->def, src->def, (size_t)src->n);
}

void val_free(Value *v) {
  free(v->v);
  free(v->def);
  memset(v, 0, sizeof *v);
}

bool val_all_defined(const Value *v) {
  for (int64_t i = 0; i < v->n; i++)
    if (!v->def[i]) return false;
  return true;
}

Cell alu_convert(Dtype from, Dtype to, Cell c) {
  if (from == to) return c;
  return dtype_convert(from, to, c);
}

Cell alu_convert_truncate(Dtype from, Dtype to, Cell c) {
  if (to != DT_BFLOAT16 || !dtype_is_float(from)) return alu_convert(from, to, c);
  float f = (float)c.f;
  uint32_t u;
  memcpy(&u, &f, 4);
  u &= 0xffff0000u;
  memcpy(&f, &u, 4);
  return (Cell){.f = f};
}

bool alu_truthy(Dtype t, Cell c) { return dtype_is_float(t) ? c.f != 0 : c.i != 0; }

bool alu_equal(Dtype t, Cell a, Cell b) {
  if (!dtype_is_float(t)) return a.i == b.i;
  if (isnan(a.f) && isnan(b.f)) return true;
  return a.f == b.f && signbit(a.f) == signbit(b.f);
}

static int bits_of(Dtype t) { return dtype_bits(t); }

static int64_t shift(ExprOp op, Dtype t, int64_t x, int64_t y) {
  int w = bits_of(t);
  if (op == OP_SHL) return y < 0 || y >= w ? 0 : (int64_t)((uint64_t)x << y);
  if (y < 0 || y >= w) return dtype_kind(t) == DK_UINT || x >= 0 ? 0 : -1;
  if (dtype_kind(t) == DK_UINT) return (int64_t)((uint64_t)x >> y);
  return x >> y;
}

static AluStatus int_binary(ExprOp op, Dtype t, int64_t x, int64_t y, int64_t *r) {
  bool u = dtype_kind(t) == DK_UINT;
  switch (op) {
  case OP_ADD: *r = (int64_t)((uint64_t)x + (uint64_t)y); break;
  case OP_SUB: *r = (int64_t)((uint64_t)x - (uint64_t)y); break;
  case OP_MUL: *r = (int64_t)((uint64_t)x * (uint64_t)y); break;
  case OP_FLOORDIV:
  case OP_MOD:
    if (!y) return ALU_DIVZERO;
    if (u) {
      *r = op == OP_MOD ? (int64_t)((uint64_t)x % (uint64_t)y) : (int64_t)((uint64_t)x / (uint64_t)y);
    } else if (x == INT64_MIN && y == -1) {
      *r = op == OP_MOD ? 0 : x;
    } else {
      int64_t q = x / y, m = x % y;
      if (m && ((m < 0) != (y < 0))) q--, m += y;
      *r = op == OP_MOD ? m : q;
    }
    break;
  case OP_BAND: case OP_AND: *r = x & y; break;
  case OP_BOR: case OP_OR: *r = x | y; break;
  case OP_BXOR: *r = x ^ y; break;
  case OP_SHL: case OP_SHR: *r = shift(op, t, x, y); break;
  case OP_EQ: *r = x == y; break;
  case OP_NE: *r = x != y; break;
  case OP_LT: *r = u ? (uint64_t)x < (uint64_t)y : x < y; break;
  case OP_LE: *r = u ? (uint64_t)x <= (uint64_t)y : x <= y; break;
  case OP_GT: *r = u ? (uint64_t)x > (uint64_t)y : x > y; break;
  case OP_GE: *r = u ? (uint64_t)x >= (uint64_t)y : x >= y; break;
  case OP_DIV: case OP_NONE: case OP_NEG: case OP_POS: case OP_INVERT: case OP_NOT: *r = 0; break;
  }
  return ALU_OK;
}

static double float_binary(ExprOp op, double x, double y) {
  switch (op) {
  case OP_ADD: return x + y;
  case OP_SUB: return x - y;
  case OP_MUL: return x * y;
  case OP_DIV: return x / y;
  case OP_FLOORDIV: return floor(x / y);
  case OP_MOD: {
    if (y == 0) return NAN;
    double m = fmod(x, y);
    if (m != 0 && ((m < 0) != (y < 0))) m += y;
    return m;
  }
  case OP_EQ: return x == y;
  case OP_NE: return x != y;
  case OP_LT: return x < y;
  case OP_LE: return x <= y;
  case OP_GT: return x > y;
  case OP_GE: return x >= y;
  case OP_AND: return x != 0 && y != 0;
  case OP_OR: return x != 0 || y != 0;
  case OP_BAND: case OP_BOR: case OP_BXOR: case OP_SHL: case OP_SHR:
  case OP_NONE: case OP_NEG: case OP_POS: case OP_INVERT: case OP_NOT: break;
  }
  return 0;
}

static bool is_cmp(ExprOp op) { return (op >= OP_EQ && op <= OP_GE) || op == OP_AND || op == OP_OR; }

AluStatus alu_binary(ExprOp op, Dtype in, Dtype out, Cell a, Cell b, Cell *r) {
  if (dtype_is_float(in)) {
    double v = float_binary(op, a.f, b.f);
    if (is_cmp(op)) r->i = v != 0;
    else r->f = v;
    *r = dtype_fit(out, *r);
    return ALU_OK;
  }
  if (op == OP_DIV) { /* true division of integers gives float32 */
    double x = dtype_kind(in) == DK_UINT && dtype_size(in) == 8 ? (double)(uint64_t)a.i : (double)a.i;
    double y = dtype_kind(in) == DK_UINT && dtype_size(in) == 8 ? (double)(uint64_t)b.i : (double)b.i;
    if (y == 0) return ALU_DIVZERO;
    r->f = x / y;
    *r = dtype_fit(out, *r);
    return ALU_OK;
  }
  if ((op == OP_AND || op == OP_OR) && in != DT_BOOL) {
    a.i = a.i != 0;
    b.i = b.i != 0;
  }
  int64_t v = 0;
  AluStatus st = int_binary(op, in, a.i, b.i, &v);
  r->i = v;
  *r = dtype_fit(out, *r);
  return st;
}

Cell alu_unary(ExprOp op, Dtype t, Cell a) {
  Cell r = a;
  if (op == OP_NOT) {
    r.i = !alu_truthy(t, a);
    return r;
  }
  if (dtype_is_float(t)) {
    if (op == OP_NEG) r.f = -a.f;
    return dtype_fit(t, r);
  }
  if (op == OP_NEG) r.i = (int64_t)(0 - (uint64_t)a.i);
  else if (op == OP_INVERT) r.i = t == DT_BOOL ? !a.i : ~a.i;
  return dtype_fit(t, r);
}

Cell alu_minmax(Dtype t, Cell a, Cell b, bool max) {
  if (dtype_is_float(t)) {
    if (isnan(a.f)) return a;
    if (isnan(b.f)) return b;
    if (a.f == b.f) return (signbit(a.f) != 0) == !max ? a : b; /* -0.0 is the smaller zero */
    return (a.f < b.f) == !max ? a : b;
  }
  Cell lt;
  alu_binary(OP_LT, t, DT_BOOL, a, b, &lt);
  return (lt.i != 0) == !max ? a : b;
}
