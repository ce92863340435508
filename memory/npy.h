/* memory/npy.h -- NumPy's .npy format (versions 1.0, 2.0, 3.0), read and
 * written for sc-sim's dtypes.
 *
 *   \x93NUMPY  major minor  HEADER_LEN (u16 LE in 1.0, u32 LE in 2.0 and 3.0)
 *   HEADER: a Python dict literal, e.g.
 *     {'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }
 *   then the elements, row-major, nelems * itemsize bytes.
 *
 * The header is parsed as the small literal grammar numpy writes (a dict
 * of exactly those three keys; strings, True/False and a tuple of
 * integers); anything else -- a structured or object dtype, Fortran order,
 * a header past NPY_MAX_HEADER bytes, a shape whose size overflows -- is
 * refused with a message, never trusted.
 *
 * Dtypes (descr -> sc-sim): <i4 int32, <u4 uint32, <f4 float32, <f2
 * float16, <i2 int16, <u2 uint16, |i1 int8, |u1 uint8, |b1 bool, <i8
 * int64, <u8 uint64, <f8 float64, and <V2 (or |V2) bfloat16: ml_dtypes'
 * bfloat16 has no numpy type code, so numpy.save writes it as a 2-byte
 * void, its raw bits; ml_dtypes' int4 and uint4 likewise save as <V1 (one
 * element a byte, the value in the low nibble), read as DT_INT4 and taken
 * as the ref's int4 or uint4.  Big-endian descrs ('>i4') are read and swapped. */
#ifndef SC_NPY_H
#define SC_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

#define NPY_MAX_RANK 8
/* numpy.load's own default bound (max_header_size) */
#define NPY_MAX_HEADER 10000

typedef struct {
  int major, minor;
  char descr[24];       /* as written, for messages */
  Dtype dtype;
  bool swap;            /* big-endian: bytes are swapped on load */
  int rank;
  int64_t shape[NPY_MAX_RANK];
  int64_t nelems;
  size_t data_offset;   /* bytes before the first element */
  uint64_t data_bytes;  /* nelems * itemsize */
} NpyHeader;

/* Parses the header at the start of an .npy file; buf holds its first len
 * bytes (the whole file, or at least NPY_MAX_HEADER + 12 of it).  Returns
 * false with a sentence in err (no file name) when the header is malformed
 * or not one sc-sim reads. */
bool npy_parse_header(const uint8_t *buf, size_t len, NpyHeader *h, char *err, size_t errlen);

/* Turns the h->data_bytes of data (the file's elements) into what memory/
 * holds, in place: little-endian elements (big-endian ones are swapped)
 * and bools as 0 or 1 (any nonzero byte is True, as numpy reads it). */
void npy_decode(const NpyHeader *h, uint8_t *data);

/* The descr numpy writes for t ("<i4"; "<V2" for bfloat16). */
const char *npy_descr(Dtype t);

/* Writes an .npy file (version 1.0, header padded to 64 bytes) of dtype t
 * and the given shape from nelems little-endian elements, atomically: a
 * temporary file beside path, then rename.  Returns false with a sentence
 * in err on an I/O error (the temporary file is removed). */
bool npy_write(const char *path, Dtype t, int rank, const int64_t *shape, const uint8_t *data, char *err, size_t errlen);

#endif
