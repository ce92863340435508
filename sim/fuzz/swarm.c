/* sim/fuzz/swarm.c -- sc-sim fuzz: the ground every stage stands on: text
 * buffers, the random streams, the chip presets and the open-bug names
 * (fuzz_priv.h).  It calls nothing of the other stages, so that they call
 * each other one way: driver -> shrink -> gen -> inject -> swarm. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_priv.h"

/* ---- text buffers ------------------------------------------------------ */
void breserve(Buf *b, size_t more) {
  if (b->n + more + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + more + 1) cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) abort();
  b->s = s;
  b->cap = cap;
}

void bput(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bput(Buf *b, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int need = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  breserve(b, need > 0 ? (size_t)need : 0);
  if (need > 0) vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
  b->n += need > 0 ? (size_t)need : 0;
  b->s[b->n] = '\0';
  va_end(ap);
}

void bfree(Buf *b) {
  free(b->s);
  memset(b, 0, sizeof *b);
}

const char *btext(const Buf *b) { return b->s ? b->s : ""; }

/* Appends src with every line indented by ind spaces. */
void bindent(Buf *b, const char *src, int ind) {
  while (*src) {
    const char *nl = strchr(src, '\n');
    size_t len = nl ? (size_t)(nl - src) : strlen(src);
    bput(b, "%*s%.*s\n", ind, "", (int)len, src);
    src += len + (nl ? 1 : 0);
  }
}

/* ---- the random streams (splitmix64) ---------------------------------- */
static uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static uint64_t rnext(Rng *r) {
  r->s += 0x9e3779b97f4a7c15ULL;
  return mix64(r->s);
}

/* A uniform integer in [lo, hi] (hi >= lo). */
int64_t rr(Rng *r, int64_t lo, int64_t hi) { return lo + (int64_t)(rnext(r) % (uint64_t)(hi - lo + 1)); }
bool rp(Rng *r, int pct) { return (int)(rnext(r) % 100) < pct; }

/* The stream of one program (unit = step = 0), of unit u (step 0) or of
 * step s of unit u: independent of every other draw. */
Rng rng_at(uint64_t seed, uint64_t prog, uint64_t unit, uint64_t step) {
  Rng r = {mix64(mix64(mix64(seed ^ 0x5eedf00dULL) + prog) + (unit << 20) + step)};
  return r;
}

/* ---- open bugs and chip presets ------------------------------------------ */
const char *const bug_names[] = {
#define X(e, n, w) n,
    KNOWN_BUGS(X)
#undef X
};

const FuzzChip chips[] = {
#define X(n, l, c, s) {n, l, c, s},
    FUZZ_CHIPS(X)
#undef X
};
