/* lowering/lower_scanops.h -- the cross-lane functions with several
 * results (check_scanops.h) as the Mosaic ops upstream emits for them. */
#ifndef SC_LOWER_SCANOPS_H
#define SC_LOWER_SCANOPS_H

#include "lower_valops.h"

/* Lowers the accepted tuple-valued call e; its result registers go to
 * regs (room for 3); returns how many. */
int lower_scanops_tuple(const LowerHooks *h, const Expr *e, int *regs);
/* Lowers the accepted plsc.pack call e; returns its result register. */
int lower_scanops_pack(const LowerHooks *h, const Expr *e);

#endif
