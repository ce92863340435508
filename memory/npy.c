/* memory/npy.c -- the .npy header grammar, element decoding and an atomic
 * writer (memory/npy.h). */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* descr -> dtype; the byte-order character is handled apart. */
static const struct {
  const char *code; /* without the byte-order character */
  Dtype dtype;
} codes[] = {
    {"i4", DT_INT32}, {"u4", DT_UINT32}, {"f4", DT_FLOAT32}, {"V2", DT_BFLOAT16}, {"f2", DT_FLOAT16},
    {"i2", DT_INT16}, {"u2", DT_UINT16}, {"i1", DT_INT8},    {"u1", DT_UINT8},   {"b1", DT_BOOL},
    {"i8", DT_INT64}, {"u8", DT_UINT64}, {"f8", DT_FLOAT64},
    {"V1", DT_INT4}, /* a one-byte void: ml_dtypes' int4 or uint4 (the ref says which) */
};
enum { NCODES = sizeof codes / sizeof codes[0] };

static bool failf(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool failf(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return false;
}

/* ---- the header literal ----------------------------------------------- */
typedef struct {
  const char *s, *end;
  char *err;
  size_t errlen;
} Cur;

static void ws(Cur *c) {
  while (c->s < c->end && (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r')) c->s++;
}

static bool eat(Cur *c, char ch) {
  ws(c);
  if (c->s < c->end && *c->s == ch) return c->s++, true;
  return false;
}

/* A quoted string ('...' or "...") of at most n - 1 characters, no escapes. */
static bool string_lit(Cur *c, char *out, size_t n) {
  ws(c);
  if (c->s >= c->end || (*c->s != '\'' && *c->s != '"')) return false;
  char q = *c->s++;
  size_t k = 0;
  while (c->s < c->end && *c->s != q) {
    if (*c->s == '\\' || k + 1 >= n) return false;
    out[k++] = *c->s++;
  }
  if (c->s >= c->end) return false;
  c->s++;
  out[k] = '\0';
  return true;
}

static bool word(Cur *c, const char *w) {
  ws(c);
  size_t n = strlen(w);
  if ((size_t)(c->end - c->s) < n || memcmp(c->s, w, n)) return false;
  c->s += n;
  return true;
}

/* A non-negative integer that fits in int64. */
static bool int_lit(Cur *c, int64_t *v) {
  ws(c);
  if (c->s >= c->end || *c->s < '0' || *c->s > '9') return false;
  int64_t x = 0;
  while (c->s < c->end && *c->s >= '0' && *c->s <= '9') {
    if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *c->s - '0', &x)) return false;
    c->s++;
  }
  *v = x;
  return true;
}

/* (d0, d1, ...) with Python's tuple forms: (), (5,), (2, 3) and (2, 3,). */
static bool shape_lit(Cur *c, NpyHeader *h) {
  if (!eat(c, '(')) return failf(c->err, c->errlen, "its header's 'shape' is not a tuple of integers");
  h->rank = 0;
  while (!eat(c, ')')) {
    int64_t d;
    if (h->rank == NPY_MAX_RANK) return failf(c->err, c->errlen, "its shape has more than %d dimensions; sc-sim supports ranks up to %d", NPY_MAX_RANK, NPY_MAX_RANK);
    if (!int_lit(c, &d)) return failf(c->err, c->errlen, "its header's 'shape' is not a tuple of non-negative integers that fit in 64 bits");
    h->shape[h->rank++] = d;
    if (eat(c, ')')) {
      if (h->rank == 1) return failf(c->err, c->errlen, "its header's 'shape' is malformed: a one-element tuple is written (n,)");
      break;
    }
    if (!eat(c, ',')) return failf(c->err, c->errlen, "its header's 'shape' is malformed (expected ',' or ')')");
  }
  return true;
}

static bool descr_of(const char *d, NpyHeader *h, char *err, size_t n) {
  snprintf(h->descr, sizeof h->descr, "%s", d);
  char order = d[0];
  const char *code = strchr("<>|=", order) && order ? d + 1 : d;
  if (code == d) order = '|';
  if (!strcmp(code, "O") || !strcmp(code, "O8") || !strcmp(code, "O4"))
    return failf(err, n, "it holds Python objects (dtype '%s'), which sc-sim cannot read", d);
  for (int i = 0; i < NCODES; i++) {
    if (strcmp(code, codes[i].code)) continue;
    h->dtype = codes[i].dtype;
    if ((codes[i].dtype == DT_BFLOAT16 || codes[i].dtype == DT_INT4) && order == '>') break; /* a void has no byte order: not what ml_dtypes writes */
    h->swap = order == '>' && dtype_size(h->dtype) > 1;
    return true;
  }
  return failf(err, n,
               "its dtype '%s' is not one sc-sim reads (int32 <i4, uint32 <u4, float32 <f4, bfloat16 <V2 as ml_dtypes saves it, int4 and uint4 <V1 likewise, "
               "float16 <f2, int16 <i2, uint16 <u2, int8 |i1, uint8 |u1, bool |b1, int64 <i8, uint64 <u8, float64 <f8)",
               d);
}

/* The value of one key of the header dict. */
static bool dict_value(Cur *c, const char *key, NpyHeader *h, unsigned *seen) {
  char s[64];
  if (!strcmp(key, "descr")) {
    *seen |= 1;
    ws(c);
    if (c->s < c->end && *c->s == '[') return failf(c->err, c->errlen, "it holds a structured dtype (a list of fields), which sc-sim cannot read");
    if (!string_lit(c, s, sizeof s)) return failf(c->err, c->errlen, "its header's 'descr' is not a dtype string");
    return descr_of(s, h, c->err, c->errlen);
  }
  if (!strcmp(key, "fortran_order")) {
    *seen |= 2;
    if (word(c, "False")) return true;
    if (word(c, "True")) return failf(c->err, c->errlen, "it is in Fortran order (fortran_order: True); save a C-ordered array (numpy.ascontiguousarray)");
    return failf(c->err, c->errlen, "its header's 'fortran_order' is neither True nor False");
  }
  if (!strcmp(key, "shape")) {
    *seen |= 4;
    return shape_lit(c, h);
  }
  return failf(c->err, c->errlen, "its header has the key '%.40s'; an .npy header has exactly 'descr', 'fortran_order' and 'shape'", key);
}

static bool dict_lit(Cur *c, NpyHeader *h) {
  unsigned seen = 0;
  if (!eat(c, '{')) return failf(c->err, c->errlen, "its header is not a Python dict literal");
  while (!eat(c, '}')) {
    char key[32];
    if (!string_lit(c, key, sizeof key) || !eat(c, ':')) return failf(c->err, c->errlen, "its header is not a Python dict literal");
    unsigned bit = !strcmp(key, "descr") ? 1 : !strcmp(key, "fortran_order") ? 2 : !strcmp(key, "shape") ? 4 : 0;
    if (seen & bit) return failf(c->err, c->errlen, "its header gives '%s' twice", key);
    if (!dict_value(c, key, h, &seen)) return false;
    if (eat(c, '}')) break;
    if (!eat(c, ',')) return failf(c->err, c->errlen, "its header is not a Python dict literal (expected ',' or '}')");
  }
  ws(c);
  if (c->s != c->end) return failf(c->err, c->errlen, "its header has text after the dict");
  if (seen != 7) return failf(c->err, c->errlen, "its header lacks '%s'", !(seen & 1) ? "descr" : !(seen & 2) ? "fortran_order" : "shape");
  return true;
}

/* ---- the preamble -------------------------------------------------------- */
static bool preamble(const uint8_t *b, size_t len, NpyHeader *h, size_t *hlen, char *err, size_t n) {
  if (len < 10 || memcmp(b, "\x93NUMPY", 6)) return failf(err, n, "it does not start with \\x93NUMPY, the .npy magic");
  h->major = b[6], h->minor = b[7];
  if (h->major < 1 || h->major > 3 || h->minor != 0) return failf(err, n, "it is .npy format version %d.%d; sc-sim reads 1.0, 2.0 and 3.0", h->major, h->minor);
  size_t at = h->major == 1 ? 10 : 12;
  if (len < at) return failf(err, n, "it is truncated inside its preamble");
  *hlen = h->major == 1 ? (size_t)(b[8] | b[9] << 8) : (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
  if (*hlen > NPY_MAX_HEADER) return failf(err, n, "its header is %zu bytes long; sc-sim, like numpy.load, reads headers of at most %d bytes", *hlen, NPY_MAX_HEADER);
  if (len - at < *hlen) return failf(err, n, "it is truncated inside its header");
  h->data_offset = at + *hlen;
  return true;
}

bool npy_parse_header(const uint8_t *buf, size_t len, NpyHeader *h, char *err, size_t errlen) {
  memset(h, 0, sizeof *h);
  size_t hlen = 0;
  if (!preamble(buf, len, h, &hlen, err, errlen)) return false;
  const char *text = (const char *)buf + h->data_offset - hlen;
  for (size_t i = 0; i < hlen; i++)
    if ((unsigned char)text[i] >= 0x80 || ((unsigned char)text[i] < 0x20 && !strchr("\n\r\t", text[i])))
      return failf(err, errlen, "its header holds a byte (0x%02x) that is not printable ASCII", (unsigned char)text[i]);
  Cur c = {text, text + hlen, err, errlen};
  if (!dict_lit(&c, h)) return false;
  h->nelems = 1;
  for (int i = 0; i < h->rank; i++)
    if (__builtin_mul_overflow(h->nelems, h->shape[i], &h->nelems))
      return failf(err, errlen, "its shape has more elements than 64 bits count");
  int64_t bytes;
  if (__builtin_mul_overflow(h->nelems, (int64_t)dtype_size(h->dtype), &bytes)) return failf(err, errlen, "its data would be more bytes than 64 bits count");
  h->data_bytes = (uint64_t)bytes;
  return true;
}

void npy_decode(const NpyHeader *h, uint8_t *data) {
  int sz = dtype_size(h->dtype);
  if (h->dtype == DT_BOOL) {
    for (uint64_t i = 0; i < h->data_bytes; i++) data[i] = data[i] != 0;
    return;
  }
  if (!h->swap) return;
  for (int64_t i = 0; i < h->nelems; i++)
    for (int k = 0; k < sz / 2; k++) {
      uint8_t t = data[i * sz + k];
      data[i * sz + k] = data[i * sz + sz - 1 - k];
      data[i * sz + sz - 1 - k] = t;
    }
}

/* ---- writing -------------------------------------------------------------- */
const char *npy_descr(Dtype t) {
  static char buf[DT_COUNT][4];
  for (int i = 0; i < NCODES; i++)
    if (codes[i].dtype == t) {
      snprintf(buf[t], sizeof buf[t], "%c%s", dtype_size(t) == 1 ? '|' : '<', codes[i].code);
      return buf[t];
    }
  return "|V1";
}

/* The header numpy writes: the dict, spaces, '\n', the whole preamble a
 * multiple of 64 bytes. */
static size_t header(char *out, size_t n, Dtype t, int rank, const int64_t *shape) {
  char dims[NPY_MAX_RANK * 22 + 4] = "";
  size_t k = 0;
  for (int i = 0; i < rank; i++) k += (size_t)snprintf(dims + k, sizeof dims - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (rank == 1) snprintf(dims + k, sizeof dims - k, ",");
  int len = snprintf(out + 10, n - 10, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", npy_descr(t), dims);
  size_t total = 10 + (size_t)len + 1;
  size_t padded = (total + 63) / 64 * 64;
  memset(out + 10 + len, ' ', padded - total);
  out[padded - 1] = '\n';
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  out[8] = (char)((padded - 10) & 0xff);
  out[9] = (char)((padded - 10) >> 8);
  return padded;
}

bool npy_write(const char *path, Dtype t, int rank, const int64_t *shape, const uint8_t *data, char *err, size_t errlen) {
  char head[512], tmp[4200];
  size_t hn = header(head, sizeof head, t, rank, shape);
  int64_t nelems = 1;
  for (int i = 0; i < rank; i++) nelems *= shape[i];
  size_t bytes = (size_t)nelems * (size_t)dtype_size(t);
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp) return failf(err, errlen, "the path is too long");
  FILE *f = fopen(tmp, "wb");
  if (!f) return failf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
  bool ok = fwrite(head, 1, hn, f) == hn && (!bytes || fwrite(data, 1, bytes, f) == bytes);
  int e = errno;
  if (fclose(f) != 0 && ok) ok = false, e = errno;
  if (ok && rename(tmp, path) != 0) ok = false, e = errno;
  if (!ok) {
    remove(tmp);
    return failf(err, errlen, "cannot write '%s': %s", path, strerror(e));
  }
  return true;
}
