/* lowering/expr.h -- expression trees (lowering/program.h) as text. */
#ifndef SC_EXPR_H
#define SC_EXPR_H

#include "program.h"

/* Records "unknown dtype 'x'; did you mean 'y'?" (IN_DTYPE). */
void dtype_unknown(Diag *d, Loc at, const char *name);
/* Position of byte `off` of a string that starts at `at`. */
Loc expr_loc_at(const char *text, Loc at, size_t off);
/* Writes the expression back as text (for notes and the ISA listing). */
void expr_print(const Expr *e, char *buf, size_t n);

#endif
