/* lowering/program.c -- the tables the IR header declares. */
#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const struct {
  const char *key;
  unsigned req, opt;
} ops[OPK_COUNT] = {
#define X(e, k, r, o) [OPK_##e] = {k, r, o},
    OPS(X)
#undef X
};
const char *op_key(OpKind k) { return ops[k].key; }
unsigned op_required(OpKind k) { return ops[k].req; }
unsigned op_optional(OpKind k) { return ops[k].opt; }

static const struct {
  const char *key;
  FieldKind kind;
} fields[FLD_COUNT] = {
#define X(e, k, kind) [FLD_##e] = {k, kind},
    FIELDS(X)
#undef X
};
const char *field_key(FieldId f) { return fields[f].key; }
FieldKind field_kind(FieldId f) { return fields[f].kind; }

Ref *program_ref(const Program *p, const char *name) {
  int i = names_get(&p->ref_index, name);
  if (i >= 0) return p->refs[i];
  for (i = p->ref_index.n; i < p->nrefs; i++) /* refs added without the index */
    if (!strcmp(p->refs[i]->name, name)) return p->refs[i];
  return NULL;
}

void program_free(Program *p) {
  for (int i = 0; i < p->nkernels; i++) program_free(&p->kernels[i]);
  free(p->kernels);
  for (int i = 0; i < p->nmpmd; i++) program_free(&p->mpmd[i]);
  free(p->mpmd);
  arena_free(&p->arena);
}

bool op_parallel(const Op *op) {
  return op->kind == OPK_LOOP && (op->has & F(PARALLEL)) && op->e[FLD_PARALLEL] && op->e[FLD_PARALLEL]->kind == EX_BOOL &&
         op->e[FLD_PARALLEL]->ival;
}
