/* sim/run/reference_span.h -- the reference interpreter's affine views: a
 * view whose every element is one whole element of its ref at
 * base + sum(idx[d] * stride[d]) bytes, with all of them in bounds.
 *
 * A chain of basic indexings (slices and integers, no index arrays) and
 * same-width bitcasts is affine.  ref_span_build decides it once per
 * resolution from the evaluated starts and shapes and checks the bounds of
 * the whole box at once (the first and last index of each dimension at
 * every level); the interpreter then reads and writes the view without
 * walking its levels per element.  Anything else (reshapes, widening or
 * narrowing bitcasts, an out-of-bounds or empty view) is left to the
 * element-by-element walk of sim/run/reference.c, which also words the
 * out-of-bounds message. */
#ifndef SC_REFERENCE_SPAN_H
#define SC_REFERENCE_SPAN_H

#include "../../lowering/index.h"
#include "../../memory/memory.h"

#include <string.h>

typedef struct {
  int rank;
  int64_t shape[MAX_RANK];
  int64_t stride[MAX_RANK]; /* bytes */
  int64_t base;             /* bytes: element 0's offset in the region */
  int64_t n;                /* elements */
  int esize;                /* bytes of an element */
  bool contiguous;          /* row-major and dense: element i at base + i * esize */
} RefSpan;

/* Element access at a byte offset (also for the walk's one-piece
 * elements): whether the n (<= 8) bytes at off are all defined, marking
 * them, and an element's value as dtype_load / dtype_store give it (an
 * int32 as a word). */
static inline bool ref_bytes_defined(const Region *g, int64_t off, int n) {
  unsigned m = ((1u << n) - 1u) << (off & 7);
  const uint8_t *p = g->defined + (off >> 3);
  unsigned have = m > 0xff ? (unsigned)p[0] | (unsigned)p[1] << 8 : p[0]; /* a second byte only when the range reaches it */
  return (have & m) == m;
}

static inline void ref_set_defined(Region *g, int64_t off, int n, bool def) {
  unsigned m = ((1u << n) - 1u) << (off & 7);
  uint8_t *p = g->defined + (off >> 3);
  if (def) {
    p[0] |= (uint8_t)m;
    if (m > 0xff) p[1] |= (uint8_t)(m >> 8);
  } else {
    p[0] &= (uint8_t)~m;
    if (m > 0xff) p[1] &= (uint8_t)~(m >> 8);
  }
}

static inline Cell ref_load(Dtype t, const uint8_t *b) {
  if (t == DT_INT32) {
    int32_t w;
    memcpy(&w, b, 4);
    return (Cell){.i = w};
  }
  return dtype_load(t, b);
}

static inline void ref_store(Dtype t, Cell c, uint8_t *b) {
  if (t == DT_INT32) {
    int32_t w = (int32_t)c.i; /* dtype_fit of an int32: the low word */
    memcpy(b, &w, 4);
  } else {
    dtype_store(t, c, b);
  }
}

/* Lanes' definedness flags (Value.def): whether none of the n at d is 0
 * (memchr(d, 0, n) == NULL), and memset(d, 1, n); a vector's few without
 * a call, eight bytes a move. */
static inline bool ref_flags_all(const uint8_t *d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, d + i, 8);
    if ((w - 0x0101010101010101u) & ~w & 0x8080808080808080u) return false; /* a zero byte */
  }
  for (; i < n; i++)
    if (!d[i]) return false;
  return true;
}

/* Four int32 lanes at a time (SIMD): a Cell holds an int32 lane as its
 * low word, sign-extended. */
typedef uint32_t RefU32x4 __attribute__((vector_size(16))); /* unsigned: arithmetic that wraps */
typedef int32_t RefI32x4 __attribute__((vector_size(16)));
_Static_assert(sizeof(Cell) == 8, "two Cells a 16-byte load");

static inline RefU32x4 ref_low4(const Cell *c) { /* the low words of c[0 .. 4) */
  RefU32x4 p, q;
  memcpy(&p, c, sizeof p), memcpy(&q, c + 2, sizeof q);
  return __builtin_shufflevector(p, q, 0, 2, 4, 6);
}

static inline void ref_wide4(Cell *c, RefU32x4 r) { /* c[0 .. 4) := r's lanes sign-extended */
  RefU32x4 sign = (RefU32x4)((RefI32x4)r >> 31);
  RefU32x4 p = __builtin_shufflevector(r, sign, 0, 4, 1, 5), q = __builtin_shufflevector(r, sign, 2, 6, 3, 7);
  memcpy(c, &p, sizeof p), memcpy(c + 2, &q, sizeof q);
}

/* ref_flags_all of a vector register's 16 flags: two words, one test for
 * a zero byte in either. */
static inline bool ref_flags_all16(const uint8_t *d) {
  uint64_t w0, w1;
  memcpy(&w0, d, 8), memcpy(&w1, d + 8, 8);
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  return !((((w0 - ones) & ~w0) | ((w1 - ones) & ~w1)) & highs);
}

static inline void ref_flags_set(uint8_t *d, int64_t n) {
  const uint64_t ones = 0x0101010101010101u;
  if (n == 1) return (void)(d[0] = 1); /* a scalar */
  if (n > 16 || n < 8) return (void)memset(d, 1, (size_t)n);
  memcpy(d, &ones, 8); /* 8 to 16 flags: two moves that may overlap */
  memcpy(d + n - 8, &ones, 8);
}

/* memset(d, 0, n), as ref_flags_set: a vector's flags without a call. */
static inline void ref_flags_clear(uint8_t *d, int64_t n) {
  const uint64_t zero = 0;
  if (n > 16 || n < 8) return (void)memset(d, 0, (size_t)n);
  memcpy(d, &zero, 8);
  memcpy(d + n - 8, &zero, 8);
}

/* A Value's header moved field by field, each load as wide as the store
 * that wrote it (a header just written by narrow stores and read by a
 * wider load waits for the stores to retire), and only its rank's extents:
 * a vector's one, not a copy of the whole array. */
static inline void ref_shape_copy(Value *d, const Value *v) {
  d->dtype = v->dtype, d->rank = v->rank, d->n = v->n;
  if (v->rank == 1) d->shape[0] = v->shape[0];
  else if (v->rank) memcpy(d->shape, v->shape, sizeof *d->shape * (size_t)v->rank);
}

/* Whether view v, resolved to the per-level starts, ranks, shapes and
 * dtypes given (level 0 the ref, level k after v->tr[k - 1]), is affine
 * and wholly in bounds; fills *sp when it is. */
bool ref_span_build(const View *v, const int64_t (*start)[MAX_RANK], const int *rank, const int64_t (*lvl)[MAX_RANK],
                    const Dtype *dt, RefSpan *sp);
/* The byte offset of element i (row-major over sp->shape). */
int64_t ref_span_offset(const RefSpan *sp, int64_t i);
/* out (shaped as the view, of dtype t) := the view's elements and their
 * definedness. */
void ref_span_read(const Region *g, Dtype t, const RefSpan *sp, Cell *v, uint8_t *def);
/* Element i := c (def) or undefined (!def: its bytes are left as they are). */
void ref_span_write(Region *g, Dtype t, const RefSpan *sp, int64_t i, Cell c, bool def);
/* Every element i := v[i] as ref_span_write (a dense int32 span at once). */
void ref_span_store(Region *g, Dtype t, const RefSpan *sp, const Cell *v, const uint8_t *def);
/* A DMA's landing (SPEC §7.10, §9.1): element i of ds := element i of ss
 * (+ its old value when add), of dtype t, in order; an element with an
 * undefined byte makes its destination undefined. */
void ref_span_copy(Region *dst, const RefSpan *ds, const Region *src, const RefSpan *ss, Dtype t, bool add);

#endif
