/* lowering/builtins.c -- the BUILTINS table, expanded. */
#include "builtins.h"

#include <stdio.h>
#include <string.h>

static const struct {
  const char *name, *alias;
  BuiltinKind kind;
  int lo, hi;
  const char *usage;
} info[BUILTIN_COUNT] = {
    [BI_NONE] = {"?", NULL, BK_VALUE, 0, 0, ""},
#define X(e, name, alias, kind, lo, hi, usage) [BI_##e] = {name, alias, kind, lo, hi, usage},
    BUILTINS(X)
#undef X
};

Builtin builtin_lookup(const char *name) {
  for (int b = 1; b < BUILTIN_COUNT; b++)
    if (!strcmp(info[b].name, name) || (info[b].alias && !strcmp(info[b].alias, name))) return (Builtin)b;
  return BI_NONE;
}

const char *builtin_name(Builtin b) { return info[b].name; }
BuiltinKind builtin_kind(Builtin b) { return info[b].kind; }
int builtin_min_args(Builtin b) { return info[b].lo; }
int builtin_max_args(Builtin b) { return info[b].hi; }
const char *builtin_usage(Builtin b) { return info[b].usage; }

int builtin_names(const char **out) {
  for (int b = 1; b < BUILTIN_COUNT; b++) out[b - 1] = info[b].name;
  return BUILTIN_COUNT - 1;
}

void builtin_list(BuiltinKind k, const char *sep, char *buf, size_t n) {
  size_t len = 0;
  if (n) buf[0] = '\0';
  for (int b = 1; b < BUILTIN_COUNT && len < n; b++)
    if (info[b].kind == k) len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? sep : "", info[b].name);
}
