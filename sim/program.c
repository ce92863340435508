/* sim/program.c -- the arena, and the tables the IR header declares. */
#include "program.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
  ArenaBlock *next;
  size_t cap, used;
  _Alignas(16) unsigned char data[];
};

void *arena_alloc(Arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  ArenaBlock *b = a->head;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > 65536 ? n : 65536;
    b = malloc(sizeof *b + cap);
    if (!b) {
      fputs("sc-sim: out of memory\n", stderr);
      abort();
    }
    b->cap = cap;
    b->used = 0;
    b->next = a->head;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += n;
  a->used += n;
  memset(p, 0, n);
  return p;
}

char *arena_strdup(Arena *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *d = arena_alloc(a, n);
  memcpy(d, s, n);
  return d;
}

void arena_free(Arena *a) {
  for (ArenaBlock *b = a->head, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  a->head = NULL;
  a->used = 0;
}

static const struct {
  const char *key, *repr, *str;
} spaces[SP_COUNT] = {
#define X(e, k, r, s) [SP_##e] = {k, r, s},
    SPACES(X)
#undef X
};
const char *space_key(Space s) { return spaces[s].key; }
const char *space_repr(Space s) { return spaces[s].repr; }
const char *space_str(Space s) { return spaces[s].str; }

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

void program_free(Program *p) { arena_free(&p->arena); }
