/* sim/front/select_ref.c -- pl.select_ref(idx, r0, r1, ...), the one
 * multi-ref transform of Pallas (pl.select_ref in the pinned JAX's
 * pallas/helpers.py), rewritten by the loader into operations the rest of
 * sc-sim already knows (sim/front/select_ref.h).
 *
 * Upstream accepts it only at the top level of a DMA's ref and lowers the
 * DMA once per option inside nested scf.if ops (_select_to_ifop in
 * mosaic/lowering.py): idx == 0 takes r0, else idx - 1 == 0 takes r1, ...,
 * and the last else takes the last ref whatever idx is.  The rewrite
 * builds the same tree of `when` operations, each branch a copy of the DMA
 * naming one option; the checker, the lowering, the engine and the
 * reference then see ordinary DMAs in ordinary branches. */
#include "select_ref.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  Program *p;
  Diag *d;
} Rw;

static bool is_select(const Expr *e) { return e && e->kind == EX_CALL && e->builtin == BI_SELECT_REF; }

/* A select anywhere inside e (not where a DMA's ref is). */
static const Expr *find_select(const Expr *e) {
  if (!e) return NULL;
  if (is_select(e)) return e;
  const Expr *x;
  if ((x = find_select(e->a)) || (x = find_select(e->b)) || (x = find_select(e->c))) return x;
  for (int i = 0; i < e->nargs; i++)
    if ((x = find_select(e->args[i]))) return x;
  return NULL;
}

static bool misplaced(Rw *w, const Expr *e) {
  diag_set(w->d, D_IN_EXPR, e->loc,
           "pl.select_ref is supported only as the whole src or dst of a DMA (async_copy, sync_copy, wait {src, dst, sem}), "
           "as upstream lowers it; wrap the other ref transforms inside it: pl.select_ref(i, a.at[0], b)");
  return false;
}

/* Whether op names a select where it may (its src or dst, one expression each). */
static FieldId select_field(const Op *op) {
  if (op->kind != OPK_ASYNC_COPY && op->kind != OPK_SYNC_COPY && op->kind != OPK_WAIT) return FLD_COUNT;
  if (op->nlist[FLD_SRC] < 0 && is_select(op->e[FLD_SRC])) return FLD_SRC;
  if (op->nlist[FLD_DST] < 0 && is_select(op->e[FLD_DST])) return FLD_DST;
  return FLD_COUNT;
}

static Expr *int_expr(Rw *w, int64_t v, Loc at) {
  Expr *e = arena_alloc(&w->p->arena, sizeof *e);
  e->kind = EX_INT, e->ival = v, e->loc = at;
  return e;
}

static Op *copy_op(Rw *w, const Op *op, FieldId f, Expr *ref) {
  Op *c = arena_alloc(&w->p->arena, sizeof *c);
  *c = *op;
  c->e[f] = ref;
  c->id = w->p->nops++;
  return c;
}

static Body one_op(Rw *w, Op *op) {
  Body b = {arena_alloc(&w->p->arena, sizeof(Op *)), 1};
  b.ops[0] = op;
  return b;
}

static bool rewrite_body(Rw *w, Body *b);

/* The `when` tree for option k onwards of select s in field f of op. */
static Op *choose(Rw *w, const Op *op, FieldId f, const Expr *s, int k) {
  int nopt = s->nargs - 1;
  Op *dma = copy_op(w, op, f, s->args[1 + k]);
  if (k == nopt - 1) return dma;
  Op *when = arena_alloc(&w->p->arena, sizeof *when);
  for (int i = 0; i < FLD_COUNT; i++) when->nlist[i] = -1;
  when->kind = OPK_WHEN;
  when->loc = op->loc;
  when->id = w->p->nops++;
  when->has = F(COND) | F(BODY) | F(ELSE);
  when->floc[FLD_COND] = when->floc[FLD_BODY] = when->floc[FLD_ELSE] = s->loc;
  Expr *cond = arena_alloc(&w->p->arena, sizeof *cond);
  cond->kind = EX_BINARY, cond->op = OP_EQ, cond->loc = s->loc, cond->text = s->text;
  cond->a = s->args[0];
  cond->b = int_expr(w, k, s->loc);
  when->e[FLD_COND] = cond;
  when->body = one_op(w, dma);
  when->els = one_op(w, choose(w, op, f, s, k + 1));
  return when;
}

static bool rewrite_op(Rw *w, Op **slot) {
  Op *op = *slot;
  if (!rewrite_body(w, &op->body) || !rewrite_body(w, &op->els)) return false;
  FieldId f = select_field(op);
  for (int i = 0; i < FLD_COUNT; i++) {
    if (i == (int)f) {
      const Expr *s = op->e[f];
      for (int a = 0; a < s->nargs; a++)
        if (find_select(s->args[a])) return misplaced(w, find_select(s->args[a]));
      for (int a = 0; a < s->nargs; a++)
        if (s->kw && s->kw[a]) {
          diag_set(w->d, D_IN_EXPR, s->kwloc ? s->kwloc[a] : s->loc, "pl.select_ref takes positional arguments only: (index, ref0, ref1, ...)");
          return false;
        }
      continue;
    }
    const Expr *x = find_select(op->e[i]);
    for (int k = 0; !x && k < op->nlist[i]; k++) x = find_select(op->list[i][k]);
    if (x) return misplaced(w, x);
  }
  if (f == FLD_COUNT) return true;
  const Expr *s = op->e[f];
  if (s->nargs < 3) {
    diag_set(w->d, D_SR1, s->loc);
    return false;
  }
  *slot = choose(w, op, f, s, 0);
  /* the other field may select too: each copy is rewritten in turn */
  return rewrite_op(w, slot);
}

static bool rewrite_body(Rw *w, Body *b) {
  for (int i = 0; i < b->n; i++)
    if (!rewrite_op(w, &b->ops[i])) return false;
  return true;
}

bool select_ref_rewrite(Program *p, Diag *d) {
  Rw w = {p, d};
  return rewrite_body(&w, &p->body);
}
