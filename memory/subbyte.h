/* memory/subbyte.h -- sub-byte element storage: int4 and uint4.
 *
 * A sub-byte buffer packs its elements two to a byte, element 2k in the
 * low nibble of byte k and 2k + 1 in the high nibble (the packed layout
 * XLA gives int4 arrays), and keeps definedness per ELEMENT: one shadow
 * bit per nibble, so writing one element never changes whether its
 * neighbour in the same byte is defined.  Values travel as the same
 * sign- or zero-extended Cell as the whole-byte dtypes (memory/dtype.h).
 *
 * Programs do name int4 and uint4 (memory/dtype.h), but the simulator
 * holds them one element a byte, as ml_dtypes does; this packed model is
 * kept, unit-tested, for a memory that packs them as the device does. */
#ifndef SC_SUBBYTE_H
#define SC_SUBBYTE_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"

/* X(ENUM, numpy name, bits, kind) */
#define SUBBYTE_DTYPES(X)     \
  X(INT4, "int4", 4, DK_INT)  \
  X(UINT4, "uint4", 4, DK_UINT)

typedef enum {
#define X(e, n, b, k) SB_##e,
  SUBBYTE_DTYPES(X)
#undef X
  SB_COUNT
} SubDtype;

const char *sb_name(SubDtype t);
int sb_bits(SubDtype t);
DtypeKind sb_kind(SubDtype t);
/* Looks a sub-byte dtype up by its numpy name; false when unknown. */
bool sb_lookup(const char *name, SubDtype *out);
/* Wraps an integer cell to what t holds: int4 -8..7 and uint4 0..15, in
 * two's complement (9 -> -7 as int4, 17 -> 1 as uint4). */
Cell sb_fit(SubDtype t, Cell c);

typedef struct {
  SubDtype dtype;
  int64_t nelems;
  uint8_t *bytes;   /* (nelems * bits + 7) / 8 bytes */
  uint8_t *defined; /* bit i set where element i holds a defined value */
} SubBuf;

/* A buffer of n elements, all bytes zero and every element undefined;
 * false on allocation failure. */
bool sb_alloc(SubBuf *b, SubDtype t, int64_t n);
void sb_free(SubBuf *b);
int64_t sb_nbytes(const SubBuf *b);
/* The byte element i lives in (what a race detector counts as touched). */
static inline int64_t sb_byte_of(const SubBuf *b, int64_t i) { return i * sb_bits(b->dtype) / 8; }

/* Writes element i (fitted to the dtype) and marks it defined; the other
 * nibble of its byte keeps its bits and its definedness. */
void sb_store(SubBuf *b, int64_t i, Cell c);
/* Reads element i into *out (sign-extended for int4); returns whether it
 * is defined.  An undefined element still reads its bits. */
bool sb_load(const SubBuf *b, int64_t i, Cell *out);
bool sb_defined(const SubBuf *b, int64_t i);
/* Whether elements [i, i + n) are all defined. */
bool sb_range_defined(const SubBuf *b, int64_t i, int64_t n);
void sb_set_defined(SubBuf *b, int64_t i, int64_t n, bool v);
/* Copies elements [si, si + n) of src and their definedness to [di, di +
 * n) of dst (same dtype).  Byte-aligned spans (both starts and n even for
 * 4-bit types) move whole bytes; any other span moves nibble by nibble,
 * leaving the neighbours at either end untouched. */
void sb_copy(SubBuf *dst, int64_t di, const SubBuf *src, int64_t si, int64_t n);

#endif
