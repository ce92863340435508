/* sim/run/reference_expr.c -- compiled expressions of the reference
 * interpreter (see reference_expr.h).  The lane loops are those of the
 * tree walk in reference.c (ev_binary, ev_unary), over operands the
 * earlier steps hold. */
#include "reference_expr.h"
#include "reference_span.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef enum { SK_CONST, SK_NAME, SK_UNARY, SK_BINARY, SK_WALK } StepKind;

typedef struct {
  StepKind kind;
  const Expr *e;
  int a, b;          /* the operands' steps */
  int id;            /* SK_NAME: the name's id */
  bool i32;          /* SK_BINARY: int32 operands would take the int32 lane loop (int32_step) */
  bool pure;         /* no name beneath it: the same value every run (SK_CONST, or operators of pure steps) */
  bool kept;         /* pure, and val holds its value from a run that succeeded */
  int64_t ones;      /* val.def[0 .. ones) are known to be 1 (run_vec's; any other writer sets 0) */
  Value val;         /* the lanes this step owns */
  const Value *res;  /* this run's result: &val, or a binding (SK_NAME) */
} Step;

#define SCALAR_STEPS 32

/* A step of an all-scalar program: a name's binding read, or an int32
 * operator of registers (earlier steps) or literals folded in. */
typedef struct {
  bool name;
  int id;         /* name: its id */
  ExprOp op;
  int a, b;       /* operand registers, when not literals */
  bool ca, cb;    /* the operand is the literal ia / ib */
  int64_t ia, ib;
} ScalarStep;

/* A chain's operator step as ref_prog_chain runs it: the literal operand, and
 * the commonest operators' forms decided once. */
typedef enum { CH_ADD, CH_MUL, CH_MASK, CH_MOD, CH_LANE } ChainKind;
typedef struct {
  ChainKind kind;
  ExprOp op;       /* CH_LANE: scalar_lane's operator, */
  bool left;       /* with the literal as its left operand */
  int64_t lit;     /* the literal (CH_MASK: the divisor less one) */
} ChainStep;

struct RefProg {
  Step *st;
  int n, cap;
  bool scalar; /* every step an int32 scalar's (scalar_step): ref_prog_int can run it on integers */
  ScalarStep ss[SCALAR_STEPS]; /* scalar: the steps but the literals, in order */
  int nss;
  bool chain; /* scalar: ss[0] a name, each later step an operator of the one before and a literal */
  ChainStep cs[SCALAR_STEPS]; /* chain: ss[1 ..] as ref_prog_chain runs them */
  bool affine; /* chain, and of ref_prog_affine's form: */
  RefAffine aff;
  bool vec;   /* all_vec: run_vec may compute it */
  struct VecOp *vop; /* vec: its operators in order, */
  int nvop;
  Step **vname;      /* and its names */
  int nvname;
  bool vec_first; /* vec, and the last run that tried ref_prog_int in vain had run_vec's value: run_vec first */
};
typedef RefProg Prog;

/* An operator step of a vec program and where its operands' results are. */
typedef struct VecOp {
  Step *s;
  const Value *const *a, *const *b;
  ExprOp op; /* s->e's, at hand */
  Dtype ty;
  int64_t mask; /* >= 0: op is % by a literal power of two, mask + 1 (of scalars: the low bits, no division) */
} VecOp;

struct RefProgs {
  const Expr **key; /* open addressing on the node's address */
  Prog **prog;
  int n, cap;
  int (*name_id)(void *ctx, const char *name);
  void *ctx;
  const Expr *recent_key[16]; /* the table's answers of late, direct-mapped on the node's address */
  Prog *recent[16];
};

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) abort();
  return q;
}

/* ---- compiling ----------------------------------------------------------- */
static int add_step(Prog *p, StepKind k, const Expr *e) {
  if (p->n == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 8;
    p->st = xrealloc(p->st, sizeof *p->st * (size_t)p->cap);
  }
  Step *s = &p->st[p->n];
  memset(s, 0, sizeof *s);
  s->kind = k, s->e = e;
  return p->n++;
}

/* A literal as the walk makes it (ev: EX_INT, EX_FLOAT, EX_BOOL), or
 * iota of a literal length (ev_iota). */
static bool constant(const Expr *e, Value *v) {
  if (e->kind == EX_INT) return val_scalar(v, DT_INT64, (Cell){.i = e->ival}), true;
  if (e->kind == EX_FLOAT) return val_scalar(v, DT_FLOAT64, (Cell){.f = e->fval}), true;
  if (e->kind == EX_BOOL) return val_scalar(v, DT_BOOL, (Cell){.i = e->ival}), true;
  if (e->kind != EX_CALL || e->builtin != BI_IOTA || e->nargs < 1 || e->args[0]->kind != EX_INT) return false;
  int64_t n = e->args[0]->ival;
  val_shape(v, DT_INT32, 1, &n);
  for (int64_t i = 0; i < n; i++) v->v[i].i = i, v->def[i] = 1;
  return true;
}

/* A literal operand of a binary operator, converted once to the dtype the
 * operands promote to (what the lane loop would do to it every run). */
static void preconvert(Prog *p, int k, Dtype oty) {
  Value *v = &p->st[k].val;
  if (p->st[k].kind != SK_CONST || v->dtype == oty) return;
  for (int64_t i = 0; i < v->n; i++) v->v[i] = alu_convert(v->dtype, oty, v->v[i]);
  v->dtype = oty;
}

static bool int32_step(const Expr *e);

static int compile(RefProgs *t, Prog *p, const Expr *e) {
  Value c = {0};
  if (constant(e, &c)) {
    int k = add_step(p, SK_CONST, e);
    p->st[k].val = c;
    p->st[k].pure = true;
    return k;
  }
  if (e->kind == EX_NAME) {
    int k = add_step(p, SK_NAME, e);
    p->st[k].id = t->name_id(t->ctx, e->name);
    return k;
  }
  if (e->kind == EX_UNARY || e->kind == EX_BINARY) {
    int a = compile(t, p, e->a), b = e->kind == EX_BINARY ? compile(t, p, e->b) : -1;
    int k = add_step(p, e->kind == EX_UNARY ? SK_UNARY : SK_BINARY, e);
    p->st[k].a = a, p->st[k].b = b;
    p->st[k].pure = p->st[a].pure && (b < 0 || p->st[b].pure);
    p->st[k].i32 = e->kind == EX_BINARY && int32_step(e);
    if (e->kind == EX_BINARY) preconvert(p, a, e->oty), preconvert(p, b, e->oty);
    return k;
  }
  return add_step(p, SK_WALK, e);
}

/* Whether step k computes a defined int32 scalar from defined int32
 * scalars whenever its operands are ones: a literal of one int32 lane, a
 * name (checked when run), or an int32 binary operator. */
static bool scalar_step(const Prog *p, int k) {
  const Step *s = &p->st[k];
  switch (s->kind) {
  case SK_CONST: return s->val.n == 1 && s->val.rank == 0 && s->val.dtype == DT_INT32 && s->val.def[0];
  case SK_NAME: return true;
  case SK_BINARY: /* an operand run computed as bool would leave its int32 loop */
    return s->i32 && (p->st[s->a].kind != SK_BINARY || p->st[s->a].e->ty == DT_INT32) &&
           (p->st[s->b].kind != SK_BINARY || p->st[s->b].e->ty == DT_INT32);
  case SK_UNARY: case SK_WALK: break;
  }
  return false;
}

/* d - 1 when d is a positive power of two (x % d of an int32 is then
 * x & (d - 1): two's complement floors it), else -1. */
static int64_t pow2_less_one(int64_t d) { return d > 0 && !(d & (d - 1)) ? d - 1 : -1; }

/* t (an operator of the one before and a literal) as c: addition and
 * multiplication either way round; a positive divisor on the right, a
 * power of two as a mask (the floored remainder of an int32 is its low
 * bits in two's complement). */
static void chain_step(const ScalarStep *t, ChainStep *c) {
  int64_t lit = t->ca ? t->ia : t->ib;
  int32_t d = (int32_t)lit;
  *c = (ChainStep){CH_LANE, t->op, t->ca, lit};
  if (t->op == OP_ADD) c->kind = CH_ADD;
  else if (t->op == OP_MUL) c->kind = CH_MUL;
  else if (t->op == OP_MOD && !t->ca && d > 0) c->kind = pow2_less_one(d) < 0 ? CH_MOD : CH_MASK, c->lit = pow2_less_one(d) < 0 ? d : d - 1;
}

/* The chain's steps composed (ref_prog_affine's form): false at a step
 * other than an addition, a multiplication or one mask. */
static bool chain_affine(const ChainStep *c, int n, RefAffine *a) {
  uint32_t m = 1, k = 0; /* the steps since the mask (or the start): x * m + k */
  bool masked = false;
  for (int j = 0; j < n; j++) {
    if (c[j].kind == CH_ADD) k += (uint32_t)c[j].lit;
    else if (c[j].kind == CH_MUL) m *= (uint32_t)c[j].lit, k *= (uint32_t)c[j].lit;
    else if (c[j].kind == CH_MASK && !masked) masked = true, a->m1 = m, a->a1 = k, a->mask = c[j].lit, m = 1, k = 0;
    else return false;
  }
  if (!masked) a->m1 = m, a->a1 = k, a->mask = -1, m = 1, k = 0;
  a->m2 = m, a->a2 = k;
  a->mul = a->m1 != 1 || a->m2 != 1;
  return true;
}

/* Whether p is all scalar steps; if so, p->ss: the steps but the
 * literals, which their users take as operands, and whether it is a chain. */
static bool all_scalar(Prog *p) {
  if (p->n > SCALAR_STEPS) return false;
  for (int k = 0; k < p->n; k++)
    if (!scalar_step(p, k)) return false;
  int reg[SCALAR_STEPS]; /* step -> its register */
  for (int k = 0; k < p->n; k++) {
    const Step *s = &p->st[k];
    if (s->kind == SK_CONST) continue;
    ScalarStep *t = &p->ss[reg[k] = p->nss++];
    t->name = s->kind == SK_NAME, t->id = s->id, t->op = s->e->op;
    if (t->name) continue;
    const Step *a = &p->st[s->a], *b = &p->st[s->b];
    t->ca = a->kind == SK_CONST, t->cb = b->kind == SK_CONST;
    if (t->ca) t->ia = a->val.v[0].i;
    else t->a = reg[s->a];
    if (t->cb) t->ib = b->val.v[0].i;
    else t->b = reg[s->b];
  }
  p->chain = p->nss > 0 && p->ss[0].name;
  for (int k = 1; k < p->nss; k++)
    p->chain &= !p->ss[k].name && (p->ss[k].ca ? !p->ss[k].cb && p->ss[k].b == k - 1 : p->ss[k].cb && p->ss[k].a == k - 1);
  for (int k = 1; p->chain && k < p->nss; k++) chain_step(&p->ss[k], &p->cs[k - 1]);
  p->affine = p->chain && chain_affine(p->cs, p->nss - 1, &p->aff);
  if (p->affine) p->aff.id = p->ss[0].id;
  return p->nss > 0; /* a lone literal is not int32 (ev: int64) */
}

/* ---- running -------------------------------------------------------------- */
/* val_shape(out, t, like's shape), without clearing the definedness that
 * every lane loop below writes. */
static void shape_as(Value *out, Dtype t, const Value *like) {
  if (like->n > out->cap) return val_shape(out, t, like->rank, like->shape);
  out->dtype = t;
  out->rank = like->rank;
  memcpy(out->shape, like->shape, sizeof out->shape); /* whole: a few moves, not a call */
  out->n = like->n;
}

static void run_unary(Step *s, const Value *a) {
  const Expr *e = s->e;
  Value *out = &s->val;
  shape_as(out, e->ty, a);
  for (int64_t i = 0; i < a->n; i++) {
    out->def[i] = a->def[i];
    out->v[i] = alu_unary(e->op, e->ty, alu_convert(a->dtype, e->op == OP_NOT ? a->dtype : e->ty, a->v[i]));
    if (e->op == OP_NOT) out->v[i] = alu_unary(OP_NOT, a->dtype, a->v[i]);
  }
}

/* int32 operands and an int32 or bool result: the ALU's wrap and compare
 * without its conversions; false for an operator left to alu_binary. */
static bool int32_lane(ExprOp op, int64_t x, int64_t y, int64_t *r) {
  uint32_t u = (uint32_t)x, w = (uint32_t)y;
  switch (op) {
  case OP_ADD: *r = (int32_t)(u + w); return true;
  case OP_SUB: *r = (int32_t)(u - w); return true;
  case OP_MUL: *r = (int32_t)(u * w); return true;
  case OP_BAND: *r = (int32_t)(u & w); return true;
  case OP_BOR: *r = (int32_t)(u | w); return true;
  case OP_BXOR: *r = (int32_t)(u ^ w); return true;
  case OP_EQ: *r = x == y; return true;
  case OP_NE: *r = x != y; return true;
  case OP_LT: *r = x < y; return true;
  case OP_LE: *r = x <= y; return true;
  case OP_GT: *r = x > y; return true;
  case OP_GE: *r = x >= y; return true;
  case OP_FLOORDIV: case OP_MOD: { /* floor division, the remainder taking the divisor's sign; false on 0 */
    int64_t n = (int32_t)x, d = (int32_t)y; /* as they are when defined; an undefined lane's bits cannot trap */
    if (!d) return false;
    int64_t q = n / d, m = n % d; /* int32 operands: no int64 overflow */
    if (m && ((m < 0) != (d < 0))) q--, m += d;
    *r = (int32_t)(uint32_t)(op == OP_MOD ? m : q); /* -2**31 // -1 wraps, as dtype_fit does */
    return true;
  }
  case OP_OR: case OP_AND: case OP_SHL: case OP_SHR: case OP_DIV: /* alu_binary's */
  case OP_NEG: case OP_POS: case OP_INVERT: case OP_NOT: case OP_NONE: break;
  }
  return false;
}

static bool is_cmp(ExprOp op) { return op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE; }

/* Whether the int32 lane loop computes e, of int32 operands, exactly as
 * alu_binary would (fixed by e: decided once, when compiled). */
static bool int32_step(const Expr *e) {
  int64_t r;
  if (e->oty != DT_INT32 || !int32_lane(e->op, 0, 1, &r)) return false;
  return e->ty == (is_cmp(e->op) ? DT_BOOL : DT_INT32);
}

/* out's definedness: both operands' (a scalar's repeats). */
static void both_defined(Value *out, const Value *a, int64_t sa, const Value *b, int64_t sb) {
  uint8_t *d = out->def;
  const uint8_t *x = a->def, *y = b->def;
  int64_t n = out->n;
  if (sa && !sb) { /* a vector and a scalar: the vector's, or none */
    if (y[0]) memcpy(d, x, (size_t)n);
    else memset(d, 0, (size_t)n);
  } else if (!sa && sb) {
    if (x[0]) memcpy(d, y, (size_t)n);
    else memset(d, 0, (size_t)n);
  } else {
    for (int64_t i = 0; i < n; i++) d[i] = x[i * sa] & y[i * sb]; /* flags are 0 or 1 */
  }
}

/* int32 + int32, wrapping; a scalar operand hoisted out of the loop. */
static void add_int32(Value *out, const Value *a, int64_t sa, const Value *b, int64_t sb) {
  Cell *o = out->v;
  const Cell *x = a->v, *y = b->v;
  int64_t n = out->n;
  if (sa && !sb) { /* four lanes a turn: the loop's own steps were most of a lane's cost */
    uint32_t w = (uint32_t)y[0].i;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      int32_t r0 = (int32_t)((uint32_t)x[i].i + w), r1 = (int32_t)((uint32_t)x[i + 1].i + w);
      int32_t r2 = (int32_t)((uint32_t)x[i + 2].i + w), r3 = (int32_t)((uint32_t)x[i + 3].i + w);
      o[i].i = r0, o[i + 1].i = r1, o[i + 2].i = r2, o[i + 3].i = r3;
    }
    for (; i < n; i++) o[i].i = (int32_t)((uint32_t)x[i].i + w);
  } else if (!sa && sb) {
    uint32_t u = (uint32_t)x[0].i;
    for (int64_t i = 0; i < n; i++) o[i].i = (int32_t)(u + (uint32_t)y[i].i);
  } else {
    for (int64_t i = 0; i < n; i++) o[i].i = (int32_t)((uint32_t)x[i * sa].i + (uint32_t)y[i * sb].i);
  }
}

static bool run_binary(Step *s, const Value *a, const Value *b, const RefExprHooks *h, void *ctx) {
  const Expr *e = s->e;
  Value *out = &s->val;
  const Value *big = a->n >= b->n ? a : b;
  shape_as(out, e->ty, big);
  bool i32 = s->i32 && a->dtype == DT_INT32 && b->dtype == DT_INT32;
  if (i32 && a->n == 1 && b->n == 1) { /* two scalars (an index, a bound): the lane loop's one lane */
    out->def[0] = a->def[0] & b->def[0];
    if (!int32_lane(e->op, a->v[0].i, b->v[0].i, &out->v[0].i) && out->def[0]) return h->divzero(ctx, e);
    return true;
  }
  int64_t sa = a->n != 1, sb = b->n != 1; /* a scalar repeats (val_lane) */
  both_defined(out, a, sa, b, sb);
  if (i32) {
    if (e->op == OP_ADD) /* the commonest, without the switch per lane */
      add_int32(out, a, sa, b, sb);
    else
      for (int64_t i = 0; i < out->n; i++)
        if (!int32_lane(e->op, a->v[i * sa].i, b->v[i * sb].i, &out->v[i].i) && out->def[i]) return h->divzero(ctx, e);
    return true;
  }
  for (int64_t i = 0; i < out->n; i++) {
    Cell x = alu_convert(a->dtype, e->oty, a->v[i * sa]), y = alu_convert(b->dtype, e->oty, b->v[i * sb]);
    if (out->def[i] && alu_binary(e->op, e->oty, e->ty, x, y, &out->v[i]) == ALU_DIVZERO) return h->divzero(ctx, e);
  }
  return true;
}

/* ---- int32 lanes, all defined ------------------------------------------- */
/* The lanes of a binary int32 operator whose operands are int32 values
 * with every lane defined, as run_binary's int32 loop computes them: one
 * loop per operator and broadcast (a scalar's lane hoisted), four lanes a
 * turn, and no definedness to combine. */
#define LANES(FN)                                                         \
  do {                                                                    \
    int64_t j = 0;                                                        \
    if (sa && sb) {                                                       \
      for (; j + 4 <= n; j += 4) {                                        \
        o[j].i = FN(x[j].i, y[j].i), o[j + 1].i = FN(x[j + 1].i, y[j + 1].i); \
        o[j + 2].i = FN(x[j + 2].i, y[j + 2].i), o[j + 3].i = FN(x[j + 3].i, y[j + 3].i); \
      }                                                                   \
      for (; j < n; j++) o[j].i = FN(x[j].i, y[j].i);                     \
    } else if (sa) {                                                      \
      int64_t c = y[0].i;                                                 \
      for (; j + 4 <= n; j += 4) {                                        \
        o[j].i = FN(x[j].i, c), o[j + 1].i = FN(x[j + 1].i, c);           \
        o[j + 2].i = FN(x[j + 2].i, c), o[j + 3].i = FN(x[j + 3].i, c);   \
      }                                                                   \
      for (; j < n; j++) o[j].i = FN(x[j].i, c);                          \
    } else {                                                              \
      int64_t c = x[0].i;                                                 \
      for (; j + 4 <= n; j += 4) {                                        \
        o[j].i = FN(c, y[j].i), o[j + 1].i = FN(c, y[j + 1].i);           \
        o[j + 2].i = FN(c, y[j + 2].i), o[j + 3].i = FN(c, y[j + 3].i);   \
      }                                                                   \
      for (; j < n; j++) o[j].i = FN(c, y[j].i);                          \
    }                                                                     \
  } while (0)

static inline int64_t f_add(int64_t x, int64_t y) { return (int32_t)((uint32_t)x + (uint32_t)y); }
static inline int64_t f_sub(int64_t x, int64_t y) { return (int32_t)((uint32_t)x - (uint32_t)y); }
static inline int64_t f_mul(int64_t x, int64_t y) { return (int32_t)((uint32_t)x * (uint32_t)y); }
static inline int64_t f_and(int64_t x, int64_t y) { return (int32_t)((uint32_t)x & (uint32_t)y); }
static inline int64_t f_or(int64_t x, int64_t y) { return (int32_t)((uint32_t)x | (uint32_t)y); }
static inline int64_t f_xor(int64_t x, int64_t y) { return (int32_t)((uint32_t)x ^ (uint32_t)y); }
static inline int64_t f_eq(int64_t x, int64_t y) { return x == y; }
static inline int64_t f_ne(int64_t x, int64_t y) { return x != y; }
static inline int64_t f_lt(int64_t x, int64_t y) { return x < y; }
static inline int64_t f_le(int64_t x, int64_t y) { return x <= y; }
static inline int64_t f_gt(int64_t x, int64_t y) { return x > y; }
static inline int64_t f_ge(int64_t x, int64_t y) { return x >= y; }

/* The same lanes for a result of exactly 16 (a vector register's int32
 * lanes, the commonest shape), four lanes a SIMD operation: the operands'
 * low words combined in 32 bits, then sign-extended back into the Cells
 * (ref_low4, ref_wide4); the result's lanes are a step's own, never an
 * operand's.  sa, sb as LANES. */
#define LANES16_FN(NAME, OPER)                                                                   \
  static void NAME(Cell *restrict o, const Cell *x, const Cell *y, int64_t sa, int64_t sb) {     \
    if (sa && sb) {                                                                              \
      _Pragma("GCC unroll 4") for (int j = 0; j < 16; j += 4) ref_wide4(o + j, ref_low4(x + j) OPER ref_low4(y + j)); \
    } else if (sa) {                                                                             \
      RefU32x4 c = {0, 0, 0, 0};                                                                    \
      c += (uint32_t)y[0].i;                                                                      \
      _Pragma("GCC unroll 4") for (int j = 0; j < 16; j += 4) ref_wide4(o + j, ref_low4(x + j) OPER c);  \
    } else {                                                                                     \
      RefU32x4 c = {0, 0, 0, 0};                                                                    \
      c += (uint32_t)x[0].i;                                                                      \
      _Pragma("GCC unroll 4") for (int j = 0; j < 16; j += 4) ref_wide4(o + j, c OPER ref_low4(y + j));  \
    }                                                                                            \
  }
LANES16_FN(add16, +)
LANES16_FN(sub16, -)
LANES16_FN(mul16, *)
LANES16_FN(and16, &)
LANES16_FN(or16, |)
LANES16_FN(xor16, ^)
#undef LANES16_FN

/* The 16-lane loops of op; false for one without (comparisons, divisions). */
static inline bool lanes16(ExprOp op, Cell *o, const Cell *x, const Cell *y, int64_t sa, int64_t sb) {
  switch (op) {
  case OP_ADD: return add16(o, x, y, sa, sb), true;
  case OP_SUB: return sub16(o, x, y, sa, sb), true;
  case OP_MUL: return mul16(o, x, y, sa, sb), true;
  case OP_BAND: return and16(o, x, y, sa, sb), true;
  case OP_BOR: return or16(o, x, y, sa, sb), true;
  case OP_BXOR: return xor16(o, x, y, sa, sb), true;
  case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE: case OP_FLOORDIV: case OP_MOD:
  case OP_OR: case OP_AND: case OP_SHL: case OP_SHR: case OP_DIV:
  case OP_NEG: case OP_POS: case OP_INVERT: case OP_NOT: case OP_NONE: break;
  }
  return false;
}

/* int32_lane of two defined int32 scalars, the commonest operators first. */
static inline bool scalar_lane(ExprOp op, int64_t x, int64_t y, int64_t *r) {
  if (op == OP_ADD) return *r = (int32_t)((uint32_t)x + (uint32_t)y), true;
  if (op == OP_MUL) return *r = (int32_t)((uint32_t)x * (uint32_t)y), true;
  if (op == OP_MOD && (int32_t)y > 0) { /* an index's wrap: a positive divisor, the remainder in [0, y) */
    int32_t m = (int32_t)x % (int32_t)y; /* a 32-bit division: y > 0, no overflow */
    return *r = m < 0 ? m + (int32_t)y : m, true;
  }
  return int32_lane(op, x, y, r);
}

/* Whether every lane of v is defined. */
static bool all_defined(const Value *v) {
  if (v->n == 1) return v->def[0] != 0;
  return v->n == 16 ? ref_flags_all16(v->def) : ref_flags_all(v->def, v->n);
}

/* out's lanes (shaped as the larger operand) := a op b, both int32 with
 * every lane defined; false on a division by zero (run then faults). */
static bool int32_lanes(ExprOp op, Value *out, const Value *a, const Value *b) {
  Cell *o = out->v;
  const Cell *x = a->v, *y = b->v;
  int64_t n = out->n, sa = a->n != 1, sb = b->n != 1;
  if (n == 1) return scalar_lane(op, x[0].i, y[0].i, &o[0].i); /* two scalars (an index): one lane */
  switch (op) {
  case OP_ADD: LANES(f_add); return true;
  case OP_SUB: LANES(f_sub); return true;
  case OP_MUL: LANES(f_mul); return true;
  case OP_BAND: LANES(f_and); return true;
  case OP_BOR: LANES(f_or); return true;
  case OP_BXOR: LANES(f_xor); return true;
  case OP_EQ: LANES(f_eq); return true;
  case OP_NE: LANES(f_ne); return true;
  case OP_LT: LANES(f_lt); return true;
  case OP_LE: LANES(f_le); return true;
  case OP_GT: LANES(f_gt); return true;
  case OP_GE: LANES(f_ge); return true;
  case OP_FLOORDIV: case OP_MOD: /* int32_lane lane by lane: it finds a zero divisor */
    for (int64_t i = 0; i < n; i++)
      if (!int32_lane(op, x[i * sa].i, y[i * sb].i, &o[i].i)) return false;
    return true;
  case OP_OR: case OP_AND: case OP_SHL: case OP_SHR: case OP_DIV: /* never int32_step's */
  case OP_NEG: case OP_POS: case OP_INVERT: case OP_NOT: case OP_NONE: break;
  }
  return false;
}
#undef LANES

/* run_vec's lanes of operator step s of any shape (kept apart: the loop
 * of the commonest shapes stays small); false on a division by zero. */
static __attribute__((noinline)) bool vec_lanes(Step *s, const Value *a, const Value *b, const Value *big) {
  Value *out = &s->val;
  if (big->n > out->cap) s->ones = 0; /* shape_as allocates anew */
  shape_as(out, s->e->ty, big);
  if (!int32_lanes(s->e->op, out, a, b)) return false;
  if (s->ones < out->n) ref_flags_set(out->def, out->n), s->ones = out->n;
  s->kept = s->pure;
  return true;
}

/* run of a vec program whose names are bound to int32 values with every
 * lane defined: the same lanes, every one defined.  NULL for anything
 * else (an unbound name or another dtype, an undefined lane, a division
 * by zero), having written only steps' own lanes, which run writes again. */
static const Value *run_vec(Prog *p, const RefExprHooks *h, void *ctx) {
  for (int k = 0; k < p->nvname; k++) { /* names first: reading them has no effect */
    Step *s = p->vname[k];
    const Value *b = h->bound(ctx, s->id);
    if (!b || b->dtype != DT_INT32 || !all_defined(b)) return NULL;
    s->res = b;
  }
  for (const VecOp *o = p->vop, *end = o + p->nvop; o < end; o++) {
    Step *s = o->s;
    if (s->kept) continue;
    const Value *a = *o->a, *b = *o->b, *big = a->n >= b->n ? a : b;
    Value *out = &s->val;
    if (big->rank == 0 && out->cap >= 1) { /* two scalars (an index's i % 256): one lane, no shape to copy */
      out->dtype = o->ty, out->rank = 0, out->n = 1;
      if (o->mask >= 0) out->v[0].i = (int32_t)a->v[0].i & o->mask; /* scalar_lane's floored remainder, in two's complement */
      else if (!scalar_lane(o->op, a->v[0].i, b->v[0].i, &out->v[0].i)) return NULL;
      out->def[0] = 1, s->ones = 1 > s->ones ? 1 : s->ones, s->kept = s->pure;
      continue;
    }
    if (big->n == 16 && big->rank == 1 && out->cap >= 16 && lanes16(o->op, out->v, a->v, b->v, a->n != 1, b->n != 1)) {
      out->dtype = o->ty, out->rank = 1, out->shape[0] = 16, out->n = 16; /* shape_as of a vector register */
      if (s->ones < 16) ref_flags_set(out->def, 16), s->ones = 16;
      s->kept = s->pure;
      continue;
    }
    if (!vec_lanes(s, a, b, big)) return NULL;
  }
  return &p->st[p->n - 1].val; /* the last step an operator's */
}

/* Whether step k gives int32 lanes from int32 lanes (run_vec): an int32
 * literal or iota, a name (checked when run), or an int32 binary operator
 * of such steps (an operator's result that feeds another being int32). */
static bool vec_step(const Prog *p, int k) {
  const Step *s = &p->st[k];
  switch (s->kind) {
  case SK_CONST: return s->val.dtype == DT_INT32 && !memchr(s->val.def, 0, (size_t)s->val.n);
  case SK_NAME: return true;
  case SK_BINARY:
    return s->i32 && (p->st[s->a].kind != SK_BINARY || p->st[s->a].e->ty == DT_INT32) &&
           (p->st[s->b].kind != SK_BINARY || p->st[s->b].e->ty == DT_INT32);
  case SK_UNARY: case SK_WALK: break;
  }
  return false;
}

/* VecOp.mask of operator step s: the divisor less one when s is % by an
 * int32 scalar literal that is a positive power of two, else -1. */
static int64_t pow2_mod(const Prog *p, const Step *s) {
  const Step *b = &p->st[s->b];
  if (s->e->op != OP_MOD || b->kind != SK_CONST || b->val.n != 1 || b->val.rank != 0 || b->val.dtype != DT_INT32) return -1;
  return pow2_less_one((int32_t)b->val.v[0].i);
}

/* Whether run_vec may compute p (all vec steps, the last an operator);
 * if so, its lists of operators and names (the steps no longer move). */
static bool all_vec(Prog *p) {
  if (p->st[p->n - 1].kind != SK_BINARY) return false;
  for (int k = 0; k < p->n; k++)
    if (!vec_step(p, k)) return false;
  p->vop = xrealloc(NULL, sizeof *p->vop * (size_t)p->n);
  p->vname = xrealloc(NULL, sizeof *p->vname * (size_t)p->n);
  for (int k = 0; k < p->n; k++) {
    Step *s = &p->st[k];
    s->res = &s->val; /* a literal's, for good */
    if (s->kind == SK_NAME) p->vname[p->nvname++] = s;
    if (s->kind == SK_BINARY) p->vop[p->nvop++] = (VecOp){s, &p->st[s->a].res, &p->st[s->b].res, s->e->op, s->e->ty, pow2_mod(p, s)};
  }
  return true;
}

static const Value *run(Prog *p, const RefExprHooks *h, void *ctx) {
  for (int k = 0; k < p->n; k++) {
    Step *s = &p->st[k];
    switch (s->kind) {
    case SK_CONST: s->res = &s->val; break;
    case SK_NAME:
      if (!(s->res = h->name(ctx, s->e, s->id, &s->val))) return NULL;
      break;
    case SK_UNARY:
      s->res = &s->val;
      if (s->kept) break; /* pure: its value of the last run */
      run_unary(s, p->st[s->a].res);
      s->ones = 0, s->kept = s->pure;
      break;
    case SK_BINARY:
      s->res = &s->val;
      if (s->kept) break;
      s->ones = 0;
      if (!run_binary(s, p->st[s->a].res, p->st[s->b].res, h, ctx)) return NULL;
      s->kept = s->pure;
      break;
    case SK_WALK:
      if (!h->walk(ctx, s->e, &s->val)) return NULL;
      s->res = &s->val;
      break;
    }
  }
  return p->st[p->n - 1].res;
}

/* ---- the table -------------------------------------------------------------- */
RefProgs *ref_progs_new(int (*name_id)(void *ctx, const char *name), void *ctx) {
  RefProgs *t = calloc(1, sizeof *t);
  if (!t) abort();
  t->name_id = name_id, t->ctx = ctx;
  return t;
}

static void prog_free(Prog *p) {
  for (int k = 0; k < p->n; k++) val_free(&p->st[k].val);
  free(p->vop);
  free(p->vname);
  free(p->st);
  free(p);
}

void ref_progs_free(RefProgs *t) {
  if (!t) return;
  for (int i = 0; i < t->cap; i++)
    if (t->key[i]) prog_free(t->prog[i]);
  free(t->key);
  free(t->prog);
  free(t);
}

static size_t slot_of(const RefProgs *t, const Expr *e) {
  uint64_t h = (uint64_t)(uintptr_t)e * 0x9e3779b97f4a7c15u;
  size_t i = (size_t)(h >> 32) & (size_t)(t->cap - 1);
  while (t->key[i] && t->key[i] != e) i = (i + 1) & (size_t)(t->cap - 1);
  return i;
}

static void grow(RefProgs *t) {
  RefProgs old = *t;
  t->cap = t->cap ? 2 * t->cap : 64;
  t->key = calloc((size_t)t->cap, sizeof *t->key);
  t->prog = calloc((size_t)t->cap, sizeof *t->prog);
  if (!t->key || !t->prog) abort();
  for (int i = 0; i < old.cap; i++)
    if (old.key[i]) {
      size_t j = slot_of(t, old.key[i]);
      t->key[j] = old.key[i], t->prog[j] = old.prog[i];
    }
  free(old.key);
  free(old.prog);
}

RefProg *ref_progs_get(RefProgs *t, const Expr *e) {
  unsigned r = (unsigned)((uintptr_t)e >> 4) & 15u;
  if (t->recent_key[r] == e) return t->recent[r];
  if (2 * (t->n + 1) > t->cap) grow(t);
  size_t i = slot_of(t, e);
  if (!t->key[i]) {
    Prog *p = calloc(1, sizeof *p);
    if (!p) abort();
    compile(t, p, e);
    p->scalar = all_scalar(p);
    p->vec = all_vec(p);
    t->key[i] = e, t->prog[i] = p, t->n++;
  }
  t->recent_key[r] = e, t->recent[r] = t->prog[i];
  return t->prog[i];
}

/* run, or for a program of int32 scalars that ref_prog_int computes, its
 * value as run_binary's two-scalar path leaves it in the last step. */

static const Value *eval(Prog *p, const RefExprHooks *h, void *ctx) {
  const Value *v = p->vec_first ? run_vec(p, h, ctx) : NULL; /* the same value as ref_prog_int's where both give one */
  if (v) return v; /* first: vec_first is only ever set for a vec program, whose last step is an operator */
  int64_t x;
  Step *last = &p->st[p->n - 1];
  Value *out = &last->val;
  if (last->kind == SK_NAME && p->n == 1) { /* a lone name is its binding */
    const Value *b = h->bound(ctx, last->id);
    return b ? b : run(p, h, ctx);
  }
  if (last->kind != SK_BINARY) return run(p, h, ctx);
  bool tried = p->scalar && out->cap >= 1;
  bool got = tried && (p->chain ? ref_prog_chain(p, h->bound(ctx, p->ss[0].id), &x) : ref_prog_int(p, h, ctx, &x)); /* a chain: ref_prog_int's own way, here */
  if (got) { /* a first run gives out its lane */
    out->dtype = last->e->ty, out->rank = 0, out->n = 1;
    out->v[0].i = x, out->def[0] = 1;
    p->vec_first = false;
    return out;
  }
  v = p->vec && !p->vec_first ? run_vec(p, h, ctx) : NULL; /* then run_binary's lanes without their definedness */
  if (v) return p->vec_first = tried, v;
  return run(p, h, ctx);
}

const Value *ref_progs_eval(RefProgs *t, const Expr *e, const RefExprHooks *h, void *ctx) {
  return eval(ref_progs_get(t, e), h, ctx);
}

const Value *ref_prog_eval(RefProg *p, const RefExprHooks *h, void *ctx) { return eval(p, h, ctx); }

bool ref_prog_take(RefProg *p, const Value *v, Value *dst) {
  Step *last = &p->st[p->n - 1];
  if (v != &last->val || last->pure || dst == v) return false;
  Cell *v0 = dst->v; /* dst's old lanes, which last takes: every run shapes its lanes first */
  uint8_t *d0 = dst->def;
  int64_t c0 = dst->cap;
  ref_shape_copy(dst, &last->val); /* not *dst = last->val: its header was just written narrow */
  dst->v = last->val.v, dst->def = last->val.def, dst->cap = last->val.cap;
  last->val.v = v0, last->val.def = d0, last->val.cap = c0;
  last->ones = 0;
  return true;
}


/* A defined int32 scalar's value, or false. */
static bool int32_scalar(const Value *b, int64_t *x) {
  if (!b || b->n != 1 || b->rank != 0 || b->dtype != DT_INT32 || !b->def[0]) return false;
  return *x = b->v[0].i, true;
}

/* run_scalar of a chain (i % 256, (i % 256) * 16) whose name is bound to
 * b: one register. */
static bool chain_from(const ChainStep *c, const ChainStep *end, int64_t x, int64_t *out);

/* ref_prog_chain's loop from c with x so far; any operator of scalar_lane's (out
 * of line, with the stack its result needs, so that ref_prog_chain has none). */
static __attribute__((noinline)) bool chain_lane(const ChainStep *c, const ChainStep *end, int64_t x, int64_t *out) {
  int64_t r;
  if (!scalar_lane(c->op, c->left ? c->lit : x, c->left ? x : c->lit, &r)) return false; /* division by zero: run faults */
  return chain_from(c + 1, end, r, out);
}

/* scalar_lane's results, step by step; the commonest first, no table. */
static inline __attribute__((always_inline)) bool chain_from(const ChainStep *c, const ChainStep *end, int64_t x, int64_t *out) {
  for (; c < end; c++) {
    if (c->kind == CH_ADD) {
      x = (int32_t)((uint32_t)x + (uint32_t)c->lit);
    } else if (c->kind == CH_MASK) {
      x = (int32_t)x & c->lit;
    } else if (c->kind == CH_MUL) {
      x = (int32_t)((uint32_t)x * (uint32_t)c->lit);
    } else if (c->kind == CH_MOD) {
      int64_t m = (int64_t)(int32_t)x % c->lit;
      x = m < 0 ? m + c->lit : m;
    } else {
      return chain_lane(c, end, x, out);
    }
  }
  return *out = x, true;
}

bool ref_prog_chain(const Prog *p, const Value *b, int64_t *out) {
  if (p->affine) return ref_affine_run(&p->aff, b, out); /* no step to dispatch */
  int64_t x;
  if (!int32_scalar(b, &x)) return false;
  return chain_from(p->cs, p->cs + p->nss - 1, x, out);
}

bool ref_prog_affine(const RefProg *p, RefAffine *a) {
  if (!p->affine) return false;
  return *a = p->aff, true;
}

/* run's int32 lane loops on one lane of defined scalars, in registers:
 * the same int32_lane per binary step, without the Values. */
static bool run_scalar(const Prog *p, const RefExprHooks *h, void *ctx, int64_t *out) {
  int64_t r[SCALAR_STEPS];
  for (int k = 0; k < p->nss; k++) {
    const ScalarStep *s = &p->ss[k];
    if (s->name) {
      if (!int32_scalar(h->bound(ctx, s->id), &r[k])) return false;
    } else if (!scalar_lane(s->op, s->ca ? s->ia : r[s->a], s->cb ? s->ib : r[s->b], &r[k])) {
      return false; /* division by zero: run faults */
    }
  }
  *out = r[p->nss - 1];
  return true;
}

bool ref_prog_int(const RefProg *p, const RefExprHooks *h, void *ctx, int64_t *v) {
  if (!p->scalar) return false;
  return p->chain ? ref_prog_chain(p, h->bound(ctx, p->ss[0].id), v) : run_scalar(p, h, ctx, v);
}

int ref_prog_chain_id(const RefProg *p) { return p->scalar && p->chain ? p->ss[0].id : -1; }


int ref_prog_name_id(const RefProg *p) { return p->n == 1 && p->st[0].kind == SK_NAME ? p->st[0].id : -1; }
