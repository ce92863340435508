/* lowering/scanops.h -- the cross-lane value functions (plsc.cumsum,
 * plsc.cummax, plsc.cummin, jnp.cumsum / lax.cumsum): which keyword
 * arguments each takes, and how a call's arguments are found, shared by the
 * checker, the lowering, the reference interpreter and the emitter.
 * The checker leaves a scan call's lane count in its Expr.sval (has_sval
 * stays false: it is no static integer) for the lowering's masks. */
#ifndef SC_SCANOPS_H
#define SC_SCANOPS_H

#include <stdbool.h>

#include "builtins.h"
#include "program.h"

/* Whether builtin b takes the keyword argument kw. */
bool scanop_takes_kw(Builtin b, const char *kw);
/* The argument at position pos, or the keyword argument kw (pos < 0: only
 * by keyword); NULL when the call has neither. */
Expr *scanop_arg(const Expr *e, int pos, const char *kw);
/* Whether b is one of the scans: plsc.cumsum/cummax/cummin, jnp.cumsum. */
bool scanop_is_scan(Builtin b);
/* The tpu.scan reduction kind of a scan builtin: 0 sum, 1 max, 2 min. */
int scanop_kind(Builtin b);

/* How many results the call e gives when it is one of the tuple-valued
 * functions (plsc.sort_key_val: keys, values and, with a mask, the output
 * mask; plsc.scan_count: the counts and the last-occurrence mask; plsc.unpack:
 * its two halves), bound by a let of as many names; 0 for any other expression. */
int scanop_results(const Expr *e);

#endif
