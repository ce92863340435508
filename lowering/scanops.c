/* lowering/scanops.c -- the cross-lane value functions' arguments. */
#include "scanops.h"

#include <string.h>

bool scanop_takes_kw(Builtin b, const char *kw) {
  if (b == BI_CUMSUM || b == BI_CUMMAX || b == BI_CUMMIN) return !strcmp(kw, "mask");
  if (b == BI_LAX_CUMSUM) return !strcmp(kw, "axis") || !strcmp(kw, "reverse");
  if (b == BI_AR_POPCOUNT || b == BI_AR_FFS) return !strcmp(kw, "reduce");
  if (b == BI_SCAN_COUNT) return !strcmp(kw, "mask");
  if (b == BI_PACK || b == BI_UNPACK) return !strcmp(kw, "format") || !strcmp(kw, "preferred_element_type");
  if (b == BI_SORT_KV) return !strcmp(kw, "mask") || !strcmp(kw, "descending");
  if (b == BI_SORT) return !strcmp(kw, "axis") || !strcmp(kw, "dimension") || !strcmp(kw, "descending") || !strcmp(kw, "num_keys");
  return false;
}

Expr *scanop_arg(const Expr *e, int pos, const char *kw) {
  int k = 0;
  for (int i = 0; i < e->nargs; i++) {
    if (e->kw && e->kw[i]) {
      if (kw && !strcmp(e->kw[i], kw)) return e->args[i];
      continue;
    }
    if (k++ == pos) return e->args[i];
  }
  return NULL;
}

bool scanop_is_scan(Builtin b) { return b == BI_CUMSUM || b == BI_CUMMAX || b == BI_CUMMIN || b == BI_LAX_CUMSUM; }

int scanop_kind(Builtin b) { return b == BI_CUMMAX ? 1 : b == BI_CUMMIN ? 2 : 0; }

int scanop_results(const Expr *e) {
  if (e->kind != EX_CALL) return 0;
  if (e->builtin == BI_SORT_KV) return scanop_arg(e, -1, "mask") ? 3 : 2;
  if (e->builtin == BI_SCAN_COUNT || e->builtin == BI_UNPACK) return 2;
  if (e->builtin == BI_SORT && e->nargs && e->args[0]->kind == EX_LIST) return e->args[0]->nargs;
  return 0;
}
