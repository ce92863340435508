/* sim/run/reference_expr.h -- the reference interpreter's expressions
 * compiled once into flat step lists.
 *
 * An expression tree is flattened, operands first, into steps that each
 * own the Value they produce: literals and iota(N) are computed once at
 * compile time, a name reads its binding in place (through a name id the
 * interpreter gives it once), and unary and binary operators run lane by
 * lane into their own step's lanes, which are allocated on the first run
 * and reused after it (int32 arithmetic and comparisons without the
 * ALU's generic conversions).  Every other node is one step that hands the
 * subtree back to the interpreter's tree walk (ev in reference.c), so the
 * value, its definedness and every fault are those the walk gives: the
 * steps run in the walk's order and stop at the first failure.  An
 * expression of int32 scalars only (an index such as (i % 256) * 16) also
 * runs on plain integers, names read through their ids, the same int32
 * arithmetic lane for lane; whatever it does not cover (another type, an
 * undefined or non-scalar name, a division by zero) goes to the steps.
 * Likewise an expression of int32 operators over int32 literals and names
 * (iota(16) + i, base + i % 256) runs, when every lane it reads is
 * defined, as one loop per operator with no definedness to combine, over
 * lists of its names and operators made once.  An operator with no name
 * beneath it (iota(16) * 256) keeps its value from its first run. */
#ifndef SC_REFERENCE_EXPR_H
#define SC_REFERENCE_EXPR_H

#include "../../isa/value.h"
#include "../../lowering/program.h"

/* What the steps ask of the interpreter; ctx is its context of the run. */
typedef struct {
  /* the whole subtree e, evaluated by the tree walk into out */
  bool (*walk)(void *ctx, const Expr *e, Value *out);
  /* the binding of name e (id: its name id), or a value made in scratch;
   * NULL after a fault */
  const Value *(*name)(void *ctx, const Expr *e, int id, Value *scratch);
  /* records the division by zero of e and returns false */
  bool (*divzero)(void *ctx, const Expr *e);
  /* the binding of the name of id id, or NULL (no fault) */
  const Value *(*bound)(void *ctx, int id);
} RefExprHooks;

typedef struct RefProgs RefProgs;
typedef struct RefProg RefProg; /* one compiled expression */

/* The compiled forms of one run; name_id gives a name its id (the same
 * id for the same name). */
RefProgs *ref_progs_new(int (*name_id)(void *ctx, const char *name), void *ctx);
void ref_progs_free(RefProgs *t);
/* The value of e (compiled on its first use), owned by t and valid until
 * e is evaluated again or a binding it read changes; NULL after a fault. */
const Value *ref_progs_eval(RefProgs *t, const Expr *e, const RefExprHooks *h, void *ctx);
/* e's compiled form (compiled on its first use), owned by t: a caller may
 * keep it to skip the look-up, and run it with the two below. */
RefProg *ref_progs_get(RefProgs *t, const Expr *e);
/* ref_progs_eval of the expression p was compiled from. */
const Value *ref_prog_eval(RefProg *p, const RefExprHooks *h, void *ctx);
/* When v, the value ref_prog_eval(p) just gave, is p's own lanes (not a
 * binding's, nor a name-free value p keeps for every run): *dst takes
 * them whole, and p takes dst's old lanes for its next run; true.
 * Otherwise false, having done nothing (the caller copies v). */
bool ref_prog_take(RefProg *p, const Value *v, Value *dst);
/* When p is built of int32 scalars only (int32 literals, names bound to
 * defined int32 scalars, int32 arithmetic and comparisons) and no
 * division by zero occurs: *v := the value ref_prog_eval would give
 * (defined), computed on integers; true.  Otherwise false, having done
 * nothing the caller could see: the caller then uses ref_prog_eval. */
bool ref_prog_int(const RefProg *p, const RefExprHooks *h, void *ctx, int64_t *v);

/* When p is a chain of int32 scalars (a name, then operators each of the
 * one before and a literal: i % 256, (i % 256) * 16): the name's id, else
 * -1.  ref_prog_chain: ref_prog_int of such a p whose name is bound to b
 * (NULL when it is not), for a caller that finds the binding itself. */
int ref_prog_chain_id(const RefProg *p);
bool ref_prog_chain(const RefProg *p, const Value *b, int64_t *v);

/* A chain whose operators are additions and multiplications by literals
 * and at most one remainder by a power of two, as three branch-free
 * steps on the int32 x of its name: ((x * m1 + a1) & mask) * m2 + a2,
 * each product and sum wrapped to int32 (a chain's wrapped sums and
 * products compose as those of integers modulo 2^32; the remainder of an
 * int32 by a positive power of two is its low bits).  mask is -1 without
 * a remainder.  ref_prog_affine: p's form (true), or false when p is no
 * such chain. */
typedef struct {
  int id; /* the name's id */
  bool mul; /* m1 or m2 is not 1 */
  uint32_t m1, a1, m2, a2;
  int64_t mask;
} RefAffine;
bool ref_prog_affine(const RefProg *p, RefAffine *a);

/* ref_prog_chain of an affine chain a whose name is bound to b.  The
 * multiplications (none in the commonest chains) are skipped by a test,
 * which the branch predictor answers, rather than waited on. */
static inline bool ref_affine_run(const RefAffine *a, const Value *b, int64_t *v) {
  if (!b || b->n != 1) return false;
  int rank = b->rank;
  __asm__("" : "+r"(rank)); /* rank and dtype as two loads: one wide load of both waits for a writer's two stores (do_get's) to retire */
  if (rank != 0 || b->dtype != DT_INT32 || !b->def[0]) return false;
  uint32_t x = (uint32_t)b->v[0].i;
  if (!a->mul) return *v = (int32_t)((uint32_t)((int32_t)(x + a->a1) & a->mask) + a->a2), true;
  x = (uint32_t)((int32_t)(x * a->m1 + a->a1) & a->mask);
  *v = (int32_t)(x * a->m2 + a->a2);
  return true;
}

/* When p is a lone name: its id (ref_prog_eval then gives the name's
 * binding, when it has one), else -1. */
int ref_prog_name_id(const RefProg *p);

#endif
