/* memory/dtype.c -- dtype facts, conversions and the narrow float formats.
 *
 * Narrow floats are rounded directly from double with round-to-nearest-even
 * (no detour through float32, which would round twice). */
#include "dtype.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  int size, bits;
  DtypeKind kind;
} info[DT_COUNT] = {
#define X(e, n, s, b, k) [DT_##e] = {n, s, b, k},
    DTYPES(X)
#undef X
};

const char *dtype_name(Dtype t) { return info[t].name; }
int dtype_size(Dtype t) { return info[t].size; }
DtypeKind dtype_kind(Dtype t) { return info[t].kind; }
int dtype_bits(Dtype t) { return info[t].bits; }
bool dtype_is_subbyte(Dtype t) { return info[t].bits < 8; }
int64_t dtype_packed_bytes(Dtype t, int64_t n) { return (n * info[t].bits + 7) / 8; }
bool dtype_is_int(Dtype t) { return info[t].kind == DK_INT || info[t].kind == DK_UINT; }
bool dtype_is_float(Dtype t) { return info[t].kind == DK_FLOAT; }

bool dtype_lookup(const char *name, Dtype *out) {
  for (int t = 0; t < DT_COUNT; t++)
    if (strcmp(info[t].name, name) == 0) {
      *out = (Dtype)t;
      return true;
    }
  return false;
}

/* Rounds x to a binary format with `mant` explicit fraction bits and
 * exponent range [emin, emax] (of the normalised 1.f form), nearest even,
 * overflowing to infinity and gradually underflowing to subnormals. */
static double round_format(double x, int mant, int emin, int emax) {
  if (isnan(x) || isinf(x) || x == 0) return x;
  int e;
  frexp(x, &e); /* x = m * 2^e, 0.5 <= |m| < 1 => unbiased exponent e-1 */
  int exp = e - 1;
  if (exp < emin) exp = emin; /* subnormal: fixed quantum */
  double quantum = ldexp(1.0, exp - mant);
  double r = nearbyint(x / quantum) * quantum; /* default mode: nearest even */
  double maxv = ldexp(2.0 - ldexp(1.0, -mant), emax);
  if (fabs(r) > maxv) return copysign(INFINITY, x);
  return r;
}

/* float8_e4m3fn (ml_dtypes): 3 fraction bits, exponents -6..8, no
 * infinity; the largest finite value is 448 (S.1111.111 is NaN), so what
 * rounds past it, and infinity, become NaN. */
static double fit_e4m3fn(double x) {
  double r = round_format(x, 3, -6, 8);
  return isinf(r) || fabs(r) > 448 ? NAN : r;
}

/* A float8 value (already fitted) to its byte: sign, `ebits` exponent bits
 * of bias `bias`, `mant` fraction bits; NaN and infinity as ml_dtypes
 * writes them. */
static uint8_t f8_encode(double x, int mant, int bias, bool fn) {
  uint8_t s = signbit(x) ? 0x80 : 0;
  if (isnan(x)) return fn ? 0x7f : 0x7e;
  if (isinf(x)) return (uint8_t)(s | 0x7c);
  x = fabs(x);
  if (x == 0) return s;
  int e;
  frexp(x, &e);
  int exp = e - 1, emin = 1 - bias;
  if (exp < emin) return (uint8_t)(s | (uint8_t)nearbyint(ldexp(x, mant - emin))); /* subnormal */
  int frac = (int)nearbyint((ldexp(x, -exp) - 1) * (1 << mant));
  return (uint8_t)(s | (exp + bias) << mant | frac);
}

static double f8_decode(uint8_t b, int mant, int bias, bool fn) {
  int ebits = 7 - mant, e = (b >> mant) & ((1 << ebits) - 1), frac = b & ((1 << mant) - 1);
  double sign = b & 0x80 ? -1.0 : 1.0;
  if (fn && e == (1 << ebits) - 1 && frac == (1 << mant) - 1) return NAN;
  if (!fn && e == (1 << ebits) - 1) return frac ? NAN : sign * INFINITY;
  if (e == 0) return sign * ldexp(frac, 1 - bias - mant);
  return sign * ldexp(1.0 + ldexp(frac, -mant), e - bias);
}

static double fit_float(Dtype t, double x) {
  if (t == DT_FLOAT32) return (double)(float)x;
  if (t == DT_FLOAT8_E4M3FN) return fit_e4m3fn(x);
  if (t == DT_FLOAT8_E5M2) return round_format(x, 2, -14, 15);
  if (t == DT_BFLOAT16) return round_format(x, 7, -126, 127);
  if (t == DT_FLOAT16) return round_format(x, 10, -14, 15);
  return x;
}

static int64_t fit_int(Dtype t, int64_t v) {
  if (info[t].bits == 4) return info[t].kind == DK_UINT ? v & 15 : ((v & 15) ^ 8) - 8;
  switch (info[t].size) {
  case 1: return info[t].kind == DK_UINT ? (int64_t)(uint8_t)v : (int64_t)(int8_t)v;
  case 2: return info[t].kind == DK_UINT ? (int64_t)(uint16_t)v : (int64_t)(int16_t)v;
  case 4: return info[t].kind == DK_UINT ? (int64_t)(uint32_t)v : (int64_t)(int32_t)v;
  default: return v;
  }
}

Cell dtype_fit(Dtype t, Cell c) {
  switch (info[t].kind) {
  case DK_FLOAT: c.f = fit_float(t, c.f); break;
  case DK_BOOL: c.i = c.i != 0; break;
  case DK_INT:
  case DK_UINT: c.i = fit_int(t, c.i); break;
  }
  return c;
}

/* Float to integer: truncate toward zero, saturate, NaN gives 0. */
static int64_t float_to_int(Dtype to, double f) {
  if (isnan(f)) return 0;
  int bits = dtype_bits(to);
  double lo, hi;
  if (info[to].kind == DK_UINT) {
    lo = 0;
    hi = bits == 64 ? 18446744073709551615.0 : ldexp(1.0, bits) - 1;
  } else {
    lo = -ldexp(1.0, bits - 1);
    hi = ldexp(1.0, bits - 1) - 1;
  }
  if (f <= lo) return info[to].kind == DK_UINT ? 0 : bits == 64 ? INT64_MIN : (int64_t)lo;
  if (f >= hi) { /* 2**63 - 1 and 2**64 - 1 round up as doubles: saturate exactly */
    if (bits == 64) return info[to].kind == DK_UINT ? (int64_t)UINT64_MAX : INT64_MAX;
    return (int64_t)hi;
  }
  if (info[to].kind == DK_UINT && bits == 64) return (int64_t)(uint64_t)trunc(f);
  return (int64_t)trunc(f);
}

Cell dtype_convert(Dtype from, Dtype to, Cell c) {
  Cell r;
  bool ff = info[from].kind == DK_FLOAT, tf = info[to].kind == DK_FLOAT;
  if (ff && tf) r.f = c.f;
  else if (ff && info[to].kind == DK_BOOL) r.i = c.f != 0;
  else if (ff) r.i = float_to_int(to, c.f);
  else if (tf) r.f = info[from].kind == DK_UINT && info[from].size == 8 ? (double)(uint64_t)c.i : (double)c.i;
  else r.i = c.i;
  return dtype_fit(to, r);
}

uint16_t dtype_f32_to_bf16(float f) {
  float r = (float)round_format(f, 7, -126, 127);
  uint32_t u;
  memcpy(&u, &r, 4);
  if (isnan(f)) return 0x7fc0;
  return (uint16_t)(u >> 16);
}

float dtype_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

uint16_t dtype_f32_to_f16(float f) {
  double r = round_format(f, 10, -14, 15);
  uint16_t sign = signbit(r) ? 0x8000 : 0;
  if (isnan(r)) return 0x7e00;
  if (isinf(r)) return sign | 0x7c00;
  double a = fabs(r);
  if (a == 0) return sign;
  int e;
  frexp(a, &e);
  int exp = e - 1;
  if (exp < -14) return sign | (uint16_t)(a / ldexp(1.0, -24)); /* subnormal */
  uint16_t frac = (uint16_t)((a / ldexp(1.0, exp) - 1.0) * 1024.0);
  return sign | (uint16_t)((exp + 15) << 10) | frac;
}

float dtype_f16_to_f32(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 31, frac = h & 1023;
  double v;
  if (exp == 0) v = ldexp(frac, -24);
  else if (exp == 31) v = frac ? NAN : INFINITY;
  else v = ldexp(1024 + frac, exp - 25);
  return (float)(sign ? -v : v);
}

void dtype_store(Dtype t, Cell c, uint8_t *b) {
  c = dtype_fit(t, c);
  uint64_t u = (uint64_t)c.i;
  if (t == DT_FLOAT32) {
    float f = (float)c.f;
    uint32_t w;
    memcpy(&w, &f, 4);
    u = w;
  } else if (t == DT_FLOAT64) {
    memcpy(&u, &c.f, 8);
  } else if (t == DT_BFLOAT16) {
    u = dtype_f32_to_bf16((float)c.f);
  } else if (t == DT_FLOAT16) {
    u = dtype_f32_to_f16((float)c.f);
  } else if (t == DT_FLOAT8_E4M3FN || t == DT_FLOAT8_E5M2) {
    u = t == DT_FLOAT8_E4M3FN ? f8_encode(c.f, 3, 7, true) : f8_encode(c.f, 2, 15, false);
  }
  if (info[t].bits == 4) u &= 15; /* ml_dtypes' byte: the nibble, high bits clear */
  for (int k = 0; k < info[t].size; k++) b[k] = (uint8_t)(u >> (8 * k));
}

Cell dtype_load(Dtype t, const uint8_t *b) {
  uint64_t u = 0;
  for (int k = 0; k < info[t].size; k++) u |= (uint64_t)b[k] << (8 * k);
  Cell c;
  c.i = (int64_t)u;
  if (t == DT_FLOAT32) {
    uint32_t w = (uint32_t)u;
    float f;
    memcpy(&f, &w, 4);
    c.f = f;
  } else if (t == DT_FLOAT64) {
    memcpy(&c.f, &u, 8);
  } else if (t == DT_BFLOAT16) {
    c.f = dtype_bf16_to_f32((uint16_t)u);
  } else if (t == DT_FLOAT16) {
    c.f = dtype_f16_to_f32((uint16_t)u);
  } else if (t == DT_FLOAT8_E4M3FN || t == DT_FLOAT8_E5M2) {
    c.f = t == DT_FLOAT8_E4M3FN ? f8_decode((uint8_t)u, 3, 7, true) : f8_decode((uint8_t)u, 2, 15, false);
  } else {
    c = dtype_fit(t, c);
  }
  return c;
}

/* The host is little-endian (as the byte loops above assume nothing
 * about): the 32-bit fast paths copy whole words. */
#define HOST_LE (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

void dtype_store_n(Dtype t, const Cell *c, int64_t n, uint8_t *b) {
  if (HOST_LE && t == DT_INT32) {
    for (int64_t i = 0; i < n; i++) {
      int32_t w = (int32_t)c[i].i; /* dtype_fit of an int32: wrap to 32 bits */
      memcpy(b + 4 * i, &w, 4);
    }
  } else if (HOST_LE && t == DT_FLOAT32) {
    for (int64_t i = 0; i < n; i++) {
      float f = (float)c[i].f;
      memcpy(b + 4 * i, &f, 4);
    }
  } else {
    int es = info[t].size;
    for (int64_t i = 0; i < n; i++) dtype_store(t, c[i], b + i * es);
  }
}

void dtype_load_n(Dtype t, const uint8_t *b, int64_t n, Cell *out) {
  if (HOST_LE && t == DT_INT32) {
    for (int64_t i = 0; i < n; i++) {
      int32_t w;
      memcpy(&w, b + 4 * i, 4);
      out[i].i = w;
    }
  } else if (HOST_LE && t == DT_FLOAT32) {
    for (int64_t i = 0; i < n; i++) {
      float f;
      memcpy(&f, b + 4 * i, 4);
      out[i].f = f;
    }
  } else {
    int es = info[t].size;
    for (int64_t i = 0; i < n; i++) out[i] = dtype_load(t, b + i * es);
  }
}

/* The shortest "%.*e" text of x that reads back to x (as a float32 unless
 * f64); returns the significant digits in dig (no trailing zeros) and the
 * decimal exponent of the first one. */
static int shortest_digits(double x, bool f64, char *dig, int *exp10) {
  char t[40];
  for (int p = 1; p <= 17; p++) {
    snprintf(t, sizeof t, "%.*e", p - 1, x);
    if (f64 ? strtod(t, NULL) == x : strtof(t, NULL) == (float)x) break;
  }
  int nd = 0;
  const char *q = t;
  for (; *q && *q != 'e'; q++)
    if (*q >= '0' && *q <= '9') dig[nd++] = *q;
  while (nd > 1 && dig[nd - 1] == '0') nd--;
  dig[nd] = 0;
  *exp10 = atoi(q + 1);
  return nd;
}

int dtype_format_float(double x, bool f64, char *buf, size_t n) {
  if (isnan(x)) return snprintf(buf, n, "nan");
  if (isinf(x)) return snprintf(buf, n, x > 0 ? "inf" : "-inf");
  char dig[40], out[64];
  int e, nd = shortest_digits(fabs(x), f64, dig, &e), decpt = e + 1, k = 0;
  if (signbit(x)) out[k++] = '-';
  if (decpt <= -4 || decpt > 16) { /* Python's repr: d.ddde-XX outside [1e-4, 1e16) */
    out[k++] = dig[0];
    if (nd > 1) k += snprintf(out + k, sizeof out - (size_t)k, ".%s", dig + 1);
    k += snprintf(out + k, sizeof out - (size_t)k, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
  } else if (decpt <= 0) {
    k += snprintf(out + k, sizeof out - (size_t)k, "0.%.*s%s", -decpt, "0000", dig);
  } else if (decpt >= nd) {
    k += snprintf(out + k, sizeof out - (size_t)k, "%s%.*s.0", dig, decpt - nd, "0000000000000000");
  } else {
    k += snprintf(out + k, sizeof out - (size_t)k, "%.*s.%s", decpt, dig, dig + decpt);
  }
  return snprintf(buf, n, "%s", out);
}

int dtype_format(Dtype t, Cell c, char *buf, size_t n) {
  if (info[t].kind == DK_BOOL) return snprintf(buf, n, "%s", c.i ? "true" : "false");
  if (info[t].kind == DK_UINT) return snprintf(buf, n, "%llu", (unsigned long long)c.i);
  if (info[t].kind == DK_INT) return snprintf(buf, n, "%lld", (long long)c.i);
  return dtype_format_float(c.f, info[t].size == 8, buf, n);
}
