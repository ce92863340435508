/* memory/dtype.h -- element types and their arithmetic.
 *
 * Every dtype of the program format is declared once in DTYPES below; the
 * enum, the name table and the per-type facts all expand from it.  Values
 * travel through the simulator as a 64-bit "cell" per lane: integers are
 * kept sign- or zero-extended, floats as a double, so one scalar path
 * serves every dtype; narrowing to the stored width (with bfloat16 and
 * float16 rounding to nearest even) happens only at dtype_store. */
#ifndef SC_DTYPE_H
#define SC_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { DK_INT, DK_UINT, DK_FLOAT, DK_BOOL } DtypeKind;

/* X(ENUM, name, itemsize in bytes, bits, kind).  int4 and uint4 have
 * ml_dtypes' itemsize 1 (what jax's shape rules see, SPEC §4.F) and 4 bits
 * (what plsc.bitcast, lax.bitcast_convert_type and the wrap see): the
 * simulator holds one element a byte, its value in the low nibble, as
 * ml_dtypes does, so definedness and races are per element.  The packed
 * size a DMA moves is dtype_packed_bytes. */
#define DTYPES(X)                                      \
  X(INT32, "int32", 4, 32, DK_INT)                     \
  X(UINT32, "uint32", 4, 32, DK_UINT)                  \
  X(FLOAT32, "float32", 4, 32, DK_FLOAT)               \
  X(BFLOAT16, "bfloat16", 2, 16, DK_FLOAT)             \
  X(FLOAT16, "float16", 2, 16, DK_FLOAT)               \
  X(INT16, "int16", 2, 16, DK_INT)                     \
  X(UINT16, "uint16", 2, 16, DK_UINT)                  \
  X(INT8, "int8", 1, 8, DK_INT)                        \
  X(UINT8, "uint8", 1, 8, DK_UINT)                     \
  X(BOOL, "bool", 1, 8, DK_BOOL)                       \
  X(INT64, "int64", 8, 64, DK_INT)                     \
  X(UINT64, "uint64", 8, 64, DK_UINT)                  \
  X(FLOAT64, "float64", 8, 64, DK_FLOAT)               \
  X(FLOAT8_E4M3FN, "float8_e4m3fn", 1, 8, DK_FLOAT)    \
  X(FLOAT8_E5M2, "float8_e5m2", 1, 8, DK_FLOAT)        \
  X(INT4, "int4", 1, 4, DK_INT)                        \
  X(UINT4, "uint4", 1, 4, DK_UINT)

typedef enum {
#define X(e, n, s, b, k) DT_##e,
  DTYPES(X)
#undef X
  DT_COUNT
} Dtype;

typedef union {
  int64_t i; /* integers and bool (0/1), sign/zero-extended */
  double f;  /* floats, already rounded to the dtype's precision */
} Cell;

const char *dtype_name(Dtype t);
int dtype_size(Dtype t);
DtypeKind dtype_kind(Dtype t);
bool dtype_is_int(Dtype t);   /* signed or unsigned integer (not bool) */
bool dtype_is_float(Dtype t);
int dtype_bits(Dtype t);
/* Whether t is narrower than a byte (int4, uint4). */
bool dtype_is_subbyte(Dtype t);
/* The bytes n elements of t take packed, as HBM and VMEM hold them (two
 * int4 a byte, a trailing odd one in a byte of its own): what a DMA moves
 * and an allocation takes.  n * itemsize for the whole-byte types. */
int64_t dtype_packed_bytes(Dtype t, int64_t n);
/* Looks a dtype up by its numpy name; false when unknown. */
bool dtype_lookup(const char *name, Dtype *out);

/* Wraps or rounds a cell to what dtype t can hold (two's complement wrap
 * for integers, round-to-nearest-even for the narrow floats, 0/1 for bool). */
Cell dtype_fit(Dtype t, Cell c);
/* Converts a cell of type `from` to type `to` as astype does: float to
 * integer truncates toward zero and saturates, NaN gives 0. */
Cell dtype_convert(Dtype from, Dtype to, Cell c);
/* Encodes / decodes one element to / from little-endian bytes. */
void dtype_store(Dtype t, Cell c, uint8_t *bytes);
Cell dtype_load(Dtype t, const uint8_t *bytes);
/* n consecutive elements at once: the same results as n calls, with the
 * common 32-bit types done without a per-element dispatch. */
void dtype_store_n(Dtype t, const Cell *c, int64_t n, uint8_t *bytes);
void dtype_load_n(Dtype t, const uint8_t *bytes, int64_t n, Cell *out);
/* float <-> narrow float helpers, exposed for tests. */
uint16_t dtype_f32_to_bf16(float f);
float dtype_bf16_to_f32(uint16_t h);
uint16_t dtype_f32_to_f16(float f);
float dtype_f16_to_f32(uint16_t h);
/* Prints a cell: ints plainly, bool as true/false, floats with
 * dtype_format_float (64-bit dtypes as float64, the others as the float32
 * they convert to exactly). */
int dtype_format(Dtype t, Cell c, char *buf, size_t n);
/* Every float sc-sim writes (SPEC §10.5): the shortest text that reads back
 * to x as a float32 (as a float64 when f64), in Python's repr layout:
 * 528.0, 1.0078125, 65504.0, 10.0, 1e-05, 1e+16, -0.0; nan, inf, -inf. */
int dtype_format_float(double x, bool f64, char *buf, size_t n);

#endif
