/* lowering/diag.c -- the catalog's tables and the one formatter. */
#include "diag.h"

#include <stdio.h>
#include <string.h>

static const struct {
  const char *id;
  DiagClass cls;
  char phase;
  const char *type, *tmpl;
} catalog[D_COUNT] = {
#define X(e, id, cls, ph, ty, tmpl) [D_##e] = {id, cls, ph, ty, tmpl},
    DIAGS(X)
#undef X
};

unsigned diag_hits[D_COUNT];

const char *diag_id_name(DiagId id) { return catalog[id].id; }
DiagClass diag_class(DiagId id) { return catalog[id].cls; }
char diag_phase(DiagId id) { return catalog[id].phase; }
const char *diag_type(DiagId id) { return catalog[id].type; }
const char *diag_template(DiagId id) { return catalog[id].tmpl; }

/* Expands the template: each %s takes the next const char * argument.
 * Templates hold no other conversion, so no format string ever comes from
 * data. */
void diag_vset(Diag *d, DiagId id, Loc loc, va_list ap) {
  d->id = id;
  d->loc = loc;
  d->nnotes = 0;
  size_t n = 0, cap = sizeof d->message;
  for (const char *t = catalog[id].tmpl; *t && n + 1 < cap; t++) {
    if (t[0] == '%' && t[1] == 's') {
      const char *arg = va_arg(ap, const char *);
      if (!arg) arg = "";
      size_t len = strlen(arg);
      if (len > cap - 1 - n) len = cap - 1 - n;
      memcpy(d->message + n, arg, len);
      n += len;
      t++;
    } else {
      d->message[n++] = *t;
    }
  }
  d->message[n] = '\0';
  diag_hits[id]++;
}

void diag_set(Diag *d, DiagId id, Loc loc, ...) {
  va_list ap;
  va_start(ap, loc);
  diag_vset(d, id, loc, ap);
  va_end(ap);
}

void diag_note(Diag *d, const char *fmt, ...) {
  if (d->nnotes >= DIAG_MAX_NOTES) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->notes[d->nnotes++], sizeof d->notes[0], fmt, ap);
  va_end(ap);
}
