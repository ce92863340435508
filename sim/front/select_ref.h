/* sim/front/select_ref.h -- the loader's rewrite of pl.select_ref.
 *
 * A DMA whose src or dst is `pl.select_ref(idx, r0, r1, ...)` becomes the
 * tree of `when` operations upstream's lowering builds (one copy of the
 * DMA per option; idx == k takes rk, the last option takes what is left).
 * A select anywhere else is an input error; fewer than two refs is
 * upstream's ValueError.  False with *d set on a problem. */
#ifndef SC_SELECT_REF_H
#define SC_SELECT_REF_H

#include "../../lowering/program.h"

bool select_ref_rewrite(Program *p, Diag *d);

#endif
