/* memory/subbyte.c -- packed int4 / uint4 storage with per-element shadow. */
#include "subbyte.h"

#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  int bits;
  DtypeKind kind;
} info[SB_COUNT] = {
#define X(e, n, b, k) [SB_##e] = {n, b, k},
    SUBBYTE_DTYPES(X)
#undef X
};

const char *sb_name(SubDtype t) { return info[t].name; }
int sb_bits(SubDtype t) { return info[t].bits; }
DtypeKind sb_kind(SubDtype t) { return info[t].kind; }

bool sb_lookup(const char *name, SubDtype *out) {
  for (int t = 0; t < SB_COUNT; t++)
    if (strcmp(info[t].name, name) == 0) return *out = (SubDtype)t, true;
  return false;
}

/* The low `bits` bits of v, sign-extended for the signed kinds. */
static int64_t wrap_bits(SubDtype t, int64_t v) {
  int bits = info[t].bits;
  uint64_t mask = (UINT64_C(1) << bits) - 1, u = (uint64_t)v & mask;
  if (info[t].kind == DK_INT && (u >> (bits - 1)) & 1) return (int64_t)u - (INT64_C(1) << bits);
  return (int64_t)u;
}

Cell sb_fit(SubDtype t, Cell c) {
  c.i = wrap_bits(t, c.i);
  return c;
}

int64_t sb_nbytes(const SubBuf *b) { return (b->nelems * info[b->dtype].bits + 7) / 8; }

bool sb_alloc(SubBuf *b, SubDtype t, int64_t n) {
  b->dtype = t;
  b->nelems = n;
  int64_t nb = sb_nbytes(b);
  b->bytes = calloc(1, (size_t)(nb ? nb : 1));
  b->defined = calloc(1, (size_t)((n + 7) / 8 ? (n + 7) / 8 : 1));
  if (b->bytes && b->defined) return true;
  sb_free(b);
  return false;
}

void sb_free(SubBuf *b) {
  free(b->bytes);
  free(b->defined);
  b->bytes = b->defined = NULL;
}

/* Element i's bit offset inside its byte (0 or 4 for the 4-bit types). */
static int shift_of(const SubBuf *b, int64_t i) { return (int)(i * info[b->dtype].bits % 8); }

bool sb_defined(const SubBuf *b, int64_t i) { return (b->defined[i >> 3] >> (i & 7)) & 1; }

static void set_bit(uint8_t *map, int64_t i, bool v) {
  if (v) map[i >> 3] |= (uint8_t)(1u << (i & 7));
  else map[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

bool sb_range_defined(const SubBuf *b, int64_t i, int64_t n) {
  for (int64_t k = 0; k < n; k++)
    if (!sb_defined(b, i + k)) return false;
  return true;
}

void sb_set_defined(SubBuf *b, int64_t i, int64_t n, bool v) {
  for (int64_t k = 0; k < n; k++) set_bit(b->defined, i + k, v);
}

static unsigned raw_get(const SubBuf *b, int64_t i) {
  unsigned mask = (1u << info[b->dtype].bits) - 1;
  return (b->bytes[sb_byte_of(b, i)] >> shift_of(b, i)) & mask;
}

static void raw_put(SubBuf *b, int64_t i, unsigned bits) {
  unsigned mask = (1u << info[b->dtype].bits) - 1;
  int s = shift_of(b, i);
  uint8_t *p = &b->bytes[sb_byte_of(b, i)];
  *p = (uint8_t)((*p & ~(mask << s)) | ((bits & mask) << s));
}

void sb_store(SubBuf *b, int64_t i, Cell c) {
  raw_put(b, i, (unsigned)(uint64_t)c.i);
  set_bit(b->defined, i, true);
}

bool sb_load(const SubBuf *b, int64_t i, Cell *out) {
  out->i = wrap_bits(b->dtype, (int64_t)raw_get(b, i));
  return sb_defined(b, i);
}

/* Whether element span [i, i + n) starts and ends on byte boundaries. */
static bool byte_aligned(const SubBuf *b, int64_t i, int64_t n) {
  int per = 8 / info[b->dtype].bits;
  return i % per == 0 && n % per == 0;
}

void sb_copy(SubBuf *dst, int64_t di, const SubBuf *src, int64_t si, int64_t n) {
  if (byte_aligned(src, si, n) && byte_aligned(dst, di, n) && dst != src) {
    memcpy(dst->bytes + sb_byte_of(dst, di), src->bytes + sb_byte_of(src, si), (size_t)sb_byte_of(src, n));
    for (int64_t k = 0; k < n; k++) set_bit(dst->defined, di + k, sb_defined(src, si + k));
    return;
  }
  /* Overlapping spans of one buffer copy as memmove does. */
  bool back = dst == src && di > si;
  for (int64_t j = 0; j < n; j++) {
    int64_t k = back ? n - 1 - j : j;
    raw_put(dst, di + k, raw_get(src, si + k));
    set_bit(dst->defined, di + k, sb_defined(src, si + k));
  }
}
