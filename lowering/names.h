/* lowering/names.h -- the name index of the IR, and "did you mean". */
#ifndef SC_NAMES_H
#define SC_NAMES_H

#include "arena.h"

/* An index from names to small integers (open addressing, sim/names.c).
 * Programs bind names (refs, lets, outs, loop variables) by the hundred
 * thousand; the loader, checker, lowering and reference look them up
 * through this index, in constant time instead of a scan of every earlier
 * binding.  Keys are not copied: they must outlive the index (they live in
 * the Program's arena). */
typedef struct {
  const char **key;
  int *val;
  int n, cap;   /* cap: 0 or a power of two, at least 2n */
  Arena *arena; /* where the tables live; NULL: malloc, freed by names_free */
} NameIndex;

/* The value bound to name, or -1. */
int names_get(const NameIndex *m, const char *name);
/* Binds name to val, replacing an earlier binding. */
void names_put(NameIndex *m, const char *name, int val);
void names_free(NameIndex *m);
/* The choice nearest to word by edit distance (for "did you mean"), or
 * NULL when none is close. */
const char *names_nearest(const char *word, const char *const *choices, int n);

#endif
