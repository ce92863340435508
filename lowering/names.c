/* lowering/names.c -- the NameIndex, and the nearest name for "did you mean". */
#include "names.h"

#include <stdint.h>
#include <strings.h>

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

/* ---- "did you mean" ------------------------------------------------ */
static int edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return 99;
  int row[65], pp[65], old[65];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j, pp[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    memcpy(old, row, sizeof row);
    int prev = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int cur = row[j];
      int sub = prev + (a[i - 1] != b[j - 1]);
      int m = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
      row[j] = m < sub ? m : sub;
      /* an adjacent transposition costs one edit (Damerau) */
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < row[j]) row[j] = pp[j - 2] + 1;
      prev = cur;
    }
    memcpy(pp, old, sizeof pp);
  }
  return row[lb];
}

const char *names_nearest(const char *word, const char *const *choices, int n) {
  const char *best = NULL;
  int bd = 99;
  for (int i = 0; i < n; i++) {
    int dd = edit_distance(word, choices[i]);
    if (dd < bd) {
      bd = dd;
      best = choices[i];
    }
  }
  const char *ci = NULL;
  for (int i = 0; i < n; i++) /* only the case differs: the closest spelling */
    if (!strcasecmp(word, choices[i]) && (!ci || edit_distance(word, choices[i]) < edit_distance(word, ci))) ci = choices[i];
  if (ci) return ci;
  size_t wl = strlen(word);
  for (int i = 0; i < n && wl >= 3; i++)
    if (!strncmp(word, choices[i], wl)) return choices[i]; /* a prefix of a valid word */
  int limit = ((int)strlen(word) + 1) / 3;
  return bd <= (limit > 3 ? 3 : limit) ? best : NULL;
}
