/* sim/names.c -- the NameIndex of program.h. */
#include "program.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s) { /* FNV-1a */
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

static int slot(const NameIndex *m, const char *name) {
  size_t mask = (size_t)m->cap - 1, i = (size_t)hash(name) & mask;
  while (m->key[i] && strcmp(m->key[i], name)) i = (i + 1) & mask;
  return (int)i;
}

int names_get(const NameIndex *m, const char *name) {
  if (!m->cap) return -1;
  int i = slot(m, name);
  return m->key[i] ? m->val[i] : -1;
}

static void *table(NameIndex *m, size_t bytes) {
  void *t = m->arena ? arena_alloc(m->arena, bytes) : calloc(1, bytes);
  if (!t) abort();
  return t;
}

static void grow(NameIndex *m) {
  NameIndex big = {NULL, NULL, 0, m->cap ? m->cap * 2 : 64, m->arena};
  big.key = table(&big, sizeof *big.key * (size_t)big.cap);
  big.val = table(&big, sizeof *big.val * (size_t)big.cap);
  for (int i = 0; i < m->cap; i++)
    if (m->key[i]) {
      int j = slot(&big, m->key[i]);
      big.key[j] = m->key[i], big.val[j] = m->val[i];
    }
  big.n = m->n;
  names_free(m);
  *m = big;
}

void names_put(NameIndex *m, const char *name, int val) {
  if (2 * (m->n + 1) > m->cap) grow(m);
  int i = slot(m, name);
  if (!m->key[i]) m->key[i] = name, m->n++;
  m->val[i] = val;
}

void names_free(NameIndex *m) {
  if (!m->arena) free(m->key), free(m->val);
  Arena *a = m->arena;
  memset(m, 0, sizeof *m);
  m->arena = a;
}
