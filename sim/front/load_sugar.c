/* sim/front/load_sugar.c -- chip-derived constants in a ref's shape. */
#include "load_sugar.h"

#include <stdio.h>
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

bool sugar_update(Arena *a, const Op *up, Expr *ref2, Op **get, Op **set, const char **why) {
  static const ExprOp ops[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_BAND, OP_BOR, OP_BXOR, OP_SHL, OP_SHR};
  const char *text = up->name[FLD_OP];
  ExprOp op = OP_NONE;
  Builtin call = BI_NONE;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(text, expr_op_text(ops[i]))) op = ops[i];
  if (!strcmp(text, "min")) call = BI_MIN;
  if (!strcmp(text, "max")) call = BI_MAX;
  if (op == OP_NONE && call == BI_NONE) return *why = "update: 'op' is one of + - * / // % & | ^ << >> min max", false;
  char name[32];
  snprintf(name, sizeof name, "_upd%d", up->id);
  Op *g = arena_alloc(a, sizeof *g), *s = arena_alloc(a, sizeof *s);
  *g = *up, *s = *up;
  g->kind = OPK_GET, s->kind = OPK_SET;
  g->has = F(REF) | F(OUT), s->has = F(REF) | F(VALUE);
  g->name[FLD_OUT] = arena_strdup(a, name);
  g->nloc[FLD_OUT] = up->loc;
  g->floc[FLD_OUT] = up->floc[FLD_OP];
  g->e[FLD_VALUE] = NULL;
  s->e[FLD_REF] = ref2;
  Expr *old = arena_alloc(a, sizeof *old), *v = arena_alloc(a, sizeof *v);
  old->kind = EX_NAME, old->loc = up->floc[FLD_OP], old->name = g->name[FLD_OUT];
  v->loc = up->e[FLD_VALUE]->loc;
  v->text = up->e[FLD_VALUE]->text;
  if (call != BI_NONE) {
    v->kind = EX_CALL, v->builtin = call, v->name = builtin_name(call), v->nargs = 2;
    v->args = arena_alloc(a, sizeof(Expr *) * 2);
    v->kw = arena_alloc(a, sizeof(const char *) * 2);
    v->kwloc = arena_alloc(a, sizeof(Loc) * 2);
    v->args[0] = old, v->args[1] = up->e[FLD_VALUE];
  } else {
    v->kind = EX_BINARY, v->op = op, v->a = old, v->b = up->e[FLD_VALUE];
  }
  s->e[FLD_VALUE] = v;
  *get = g, *set = s;
  return true;
}

static uint64_t sm64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool sugar_permutation(Arena *a, Ref *r, uint64_t seed, const char **why) {
  int64_t n = r->nelems;
  if (r->dtype == DT_BOOL) return *why = "a permutation init needs a numeric dtype, not bool", false;
  if (dtype_is_int(r->dtype) && n > 1) {
    Cell top = dtype_convert(DT_INT64, r->dtype, (Cell){.i = n - 1});
    if (dtype_convert(r->dtype, DT_INT64, top).i != n - 1) return *why = "a permutation init holds 0 .. nelems - 1, which this dtype cannot hold", false;
  }
  if (n > (1LL << 26)) return *why = "a permutation init is for refs of at most 2**26 elements", false;
  int64_t *perm = arena_alloc(a, sizeof *perm * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  for (int64_t i = n - 1; i >= 1; i--) {
    int64_t j = (int64_t)(sm64(seed + (uint64_t)i) % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  r->init = INIT_LIST;
  r->init_data = arena_alloc(a, sizeof(Cell) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) r->init_data[i] = dtype_convert(DT_INT64, r->dtype, (Cell){.i = perm[i]});
  return true;
}

static Expr *expr_copy(Arena *a, const Expr *e) {
  if (!e) return NULL;
  Expr *c = arena_alloc(a, sizeof *c);
  *c = *e;
  c->a = expr_copy(a, e->a), c->b = expr_copy(a, e->b), c->c = expr_copy(a, e->c);
  if (e->nargs && e->args) {
    c->args = arena_alloc(a, sizeof(Expr *) * (size_t)e->nargs);
    for (int i = 0; i < e->nargs; i++) c->args[i] = expr_copy(a, e->args[i]);
  }
  return c;
}

static void subst(Arena *a, Expr **slot, const char *const *params, Expr *const *args, int n) {
  Expr *e = *slot;
  if (!e) return;
  if (e->kind == EX_NAME)
    for (int k = 0; k < n; k++)
      if (!strcmp(e->name, params[k])) {
        *slot = expr_copy(a, args[k]);
        return;
      }
  subst(a, &e->a, params, args, n), subst(a, &e->b, params, args, n), subst(a, &e->c, params, args, n);
  for (int i = 0; i < e->nargs && e->args; i++) subst(a, &e->args[i], params, args, n);
}

void sugar_substitute(Arena *a, Body *b, const char *const *params, Expr *const *args, int n) {
  for (int i = 0; i < b->n; i++) {
    Op *op = b->ops[i];
    for (int f = 0; f < FLD_COUNT; f++) {
      subst(a, &op->e[f], params, args, n);
      for (int k = 0; k < op->nlist[f] && op->list[f]; k++) subst(a, &op->list[f][k], params, args, n);
    }
    sugar_substitute(a, &op->body, params, args, n);
    sugar_substitute(a, &op->els, params, args, n);
  }
}
