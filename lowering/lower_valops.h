/* lowering/lower_valops.h -- the value operations (check_valops.h) as the
 * Mosaic ops upstream emits for them on SparseCore. */
#ifndef SC_LOWER_VALOPS_H
#define SC_LOWER_VALOPS_H

#include "lower.h"

/* The lowering's own primitives, handed in by lowering/lower.c. */
typedef struct {
  void *l;
  Instr *(*emit)(void *l, Opcode op); /* appends an instruction (registers -1) */
  int (*new_reg)(void *l);
  int (*expr)(void *l, const Expr *e); /* lowers a sub-expression: its register */
} LowerHooks;

/* Lowers the accepted call e; returns its result register. */
int lower_valops_call(const LowerHooks *h, const Expr *e);

#endif
