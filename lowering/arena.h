/* lowering/arena.h -- the arena every node of the IR lives in: blocks
 * handed out zeroed and freed all at once by arena_free. */
#ifndef SC_ARENA_H
#define SC_ARENA_H

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;
typedef struct {
  ArenaBlock *head;
  size_t used; /* bytes handed out, for the size limit */
} Arena;
void *arena_alloc(Arena *a, size_t n); /* zeroed; aborts only on OOM */
char *arena_strdup(Arena *a, const char *s);
void arena_free(Arena *a);

#endif
