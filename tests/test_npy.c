/* tests/test_npy.c -- CUnit: the .npy header grammar (memory/npy.h) on a
 * table of good and bad headers, the writer read back, and init: {npy:}
 * through the loader with in-memory files (sim/front/load.h). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../memory/npy.h"
#include "../sim/front/load.h"

/* An .npy file: magic, version, the header text as given (no padding),
 * then `data` bytes of zeros. */
static size_t make(uint8_t *buf, int major, const char *text, size_t data) {
  size_t n = strlen(text), at = major == 1 ? 10 : 12;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (uint8_t)major, buf[7] = 0;
  buf[8] = (uint8_t)(n & 0xff), buf[9] = (uint8_t)(n >> 8);
  if (major != 1) buf[10] = (uint8_t)(n >> 16), buf[11] = (uint8_t)(n >> 24);
  memcpy(buf + at, text, n);
  memset(buf + at + n, 0, data);
  return at + n + data;
}

static const struct {
  int major;
  const char *header;
  const char *error; /* NULL: accepted; else a piece of the message */
  Dtype dtype;
  int rank;
  int64_t d0, d1;
  bool swap;
} headers[] = {
    {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }\n", NULL, DT_INT32, 2, 2, 3, false},
    {1, "{'shape': (5,), 'fortran_order': False, 'descr': '<f4'}", NULL, DT_FLOAT32, 1, 5, 0, false},
    {2, "{\"descr\": \"<V2\", \"fortran_order\": False, \"shape\": ()}", NULL, DT_BFLOAT16, 0, 0, 0, false},
    {3, "{'descr': '|V2', 'fortran_order': False, 'shape': (4, ), }", NULL, DT_BFLOAT16, 1, 4, 0, false},
    {1, "{'descr': '>i2', 'fortran_order': False, 'shape': (2,3,), }", NULL, DT_INT16, 2, 2, 3, true},
    {1, "{'descr': '|b1', 'fortran_order': False, 'shape': (0,), }", NULL, DT_BOOL, 1, 0, 0, false},
    {1, "{'descr': '>u1', 'fortran_order': False, 'shape': (1,), }", NULL, DT_UINT8, 1, 1, 0, false},
    {1, "{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", NULL, DT_UINT16, 1, 1, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", "Fortran order", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "Python objects", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }", "structured", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "is not one sc-sim reads", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '>V2', 'fortran_order': False, 'shape': (2,), }", "is not one sc-sim reads", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (5), }", "one-element tuple", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (-1,), }", "non-negative integers", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999,), }", "fit in 64 bits", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "more elements than 64 bits", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2305843009213693952,), }", "more bytes than 64 bits", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", "more than 8 dimensions", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': False}", "lacks 'shape'", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': ()}", "twice", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (), 'x': 1}", "exactly 'descr'", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': 0, 'shape': ()}", "neither True nor False", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': False, 'shape': ()} x", "text after the dict", DT_INT32, 0, 0, 0, false},
    {1, "['descr', '<i4']", "not a Python dict", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i\\x34', 'fortran_order': False, 'shape': ()}", "not a dtype string", DT_INT32, 0, 0, 0, false},
    {1, "{'descr': '<i4', 'fortran_order': False, 'shape': ()\x01}", "not printable ASCII", DT_INT32, 0, 0, 0, false},
    {4, "{'descr': '<i4', 'fortran_order': False, 'shape': ()}", "version 4.0", DT_INT32, 0, 0, 0, false},
};

static void test_npy_headers(void) {
  static uint8_t buf[1 << 15];
  for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
    size_t n = make(buf, headers[i].major, headers[i].header, 0);
    NpyHeader h;
    char err[600] = "";
    bool ok = npy_parse_header(buf, n, &h, err, sizeof err);
    if (headers[i].error) {
      CU_ASSERT_FALSE(ok);
      if (!strstr(err, headers[i].error)) fprintf(stderr, "\n  header %zu: got '%s', want '%s'", i, err, headers[i].error);
      CU_ASSERT_PTR_NOT_NULL(strstr(err, headers[i].error));
      continue;
    }
    if (!ok) fprintf(stderr, "\n  header %zu refused: %s", i, err);
    CU_ASSERT_FATAL(ok);
    CU_ASSERT_EQUAL(h.dtype, headers[i].dtype);
    CU_ASSERT_EQUAL(h.rank, headers[i].rank);
    CU_ASSERT_EQUAL(h.swap, headers[i].swap);
    if (h.rank > 0) CU_ASSERT_EQUAL(h.shape[0], headers[i].d0);
    if (h.rank > 1) CU_ASSERT_EQUAL(h.shape[1], headers[i].d1);
    CU_ASSERT_EQUAL(h.data_offset, n);
  }
}

/* Truncations and bounds of the preamble itself. */
static void test_npy_preamble(void) {
  static uint8_t buf[1 << 15];
  NpyHeader h;
  char err[600];
  size_t n = make(buf, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': ()}", 0);
  for (size_t cut = 0; cut < n; cut++) CU_ASSERT_FALSE(npy_parse_header(buf, cut, &h, err, sizeof err)); /* every prefix */
  CU_ASSERT_TRUE(npy_parse_header(buf, n, &h, err, sizeof err));
  buf[0] = 'x';
  CU_ASSERT_FALSE(npy_parse_header(buf, n, &h, err, sizeof err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "magic"));
  char big[NPY_MAX_HEADER + 2];
  memset(big, ' ', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  n = make(buf, 2, big, 0);
  CU_ASSERT_FALSE(npy_parse_header(buf, n, &h, err, sizeof err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "at most 10000"));
}

/* npy_write, then the parser and the bytes read back; big-endian decode. */
static void test_npy_write_read(void) {
  char path[64];
  snprintf(path, sizeof path, "/tmp/sc-sim-test-npy-%ld.npy", (long)getpid());
  int64_t shape[2] = {2, 3};
  int16_t v[6] = {1, -2, 3, -4, 5, -6};
  char err[600];
  CU_ASSERT_FATAL(npy_write(path, DT_INT16, 2, shape, (const uint8_t *)v, err, sizeof err));
  uint8_t buf[512];
  FILE *f = fopen(path, "rb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  remove(path);
  NpyHeader h;
  CU_ASSERT_FATAL(npy_parse_header(buf, n, &h, err, sizeof err));
  CU_ASSERT_EQUAL(h.data_offset % 64, 0);
  CU_ASSERT_EQUAL(h.dtype, DT_INT16);
  CU_ASSERT_EQUAL(h.data_offset + h.data_bytes, n);
  CU_ASSERT_EQUAL(memcmp(buf + h.data_offset, v, sizeof v), 0);
  CU_ASSERT_STRING_EQUAL(npy_descr(DT_BFLOAT16), "<V2");
  CU_ASSERT_STRING_EQUAL(npy_descr(DT_BOOL), "|b1");
  uint8_t be[4] = {0x01, 0x02, 0x03, 0x04};
  NpyHeader bh = {.dtype = DT_INT16, .swap = true, .nelems = 2, .data_bytes = 4};
  npy_decode(&bh, be);
  CU_ASSERT(be[0] == 0x02 && be[1] == 0x01 && be[2] == 0x04 && be[3] == 0x03);
}

/* The loader with in-memory files: a match loads, mismatches name both. */
static void test_npy_loader(void) {
  static uint8_t buf[256];
  size_t n = make(buf, 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 12);
  memcpy(buf + n - 12, (const int32_t[]){7, -8, 9}, 12);
  LoadFile file = {"a.npy", buf, n};
  LoadFiles files = {&file, 1};
  static const struct {
    const char *ref, *error;
  } cases[] = {
      {"{space: hbm, shape: [3], dtype: int32, init: {npy: a.npy}}", NULL},
      {"{space: hbm, shape: [3], dtype: uint32, init: {npy: a.npy}}", "'a.npy' holds int32 ('<i4') of shape (3,), but ref 'x' is uint32 of shape (3,)"},
      {"{space: hbm, shape: [1, 3], dtype: int32, init: {npy: a.npy}}", "but ref 'x' is int32 of shape (1, 3)"},
      {"{space: hbm, shape: [3], dtype: int32, init: {npy: b.npy}}", "cannot open 'b.npy': no such file"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[400];
    snprintf(text, sizeof text, "version: 1\nrefs:\n  x: %s\nbody: []\n", cases[i].ref);
    Program p;
    Diag d;
    memset(&p, 0, sizeof p);
    bool ok = load_program_files("t.yaml", text, strlen(text), &files, &p, &d);
    if (!cases[i].error) {
      CU_ASSERT_FATAL(ok);
      const Ref *r = program_ref(&p, "x");
      CU_ASSERT_EQUAL(r->init, INIT_BYTES);
      CU_ASSERT_EQUAL(memcmp(r->init_bytes, buf + n - 12, 12), 0);
    } else {
      CU_ASSERT_FALSE(ok);
      if (!strstr(d.message, cases[i].error)) fprintf(stderr, "\n  loader case %zu: %s", i, d.message);
      CU_ASSERT_PTR_NOT_NULL(strstr(d.message, cases[i].error));
      CU_ASSERT_EQUAL(d.loc.line, 3); /* at the npy key */
    }
    program_free(&p);
  }
  /* a truncated file, cut anywhere: always an input error, never a crash */
  for (size_t cut = 0; cut < n; cut++) {
    file.len = cut;
    const char *text = "version: 1\nrefs:\n  x: {space: hbm, shape: [3], dtype: int32, init: {npy: a.npy}}\nbody: []\n";
    Program p;
    Diag d;
    memset(&p, 0, sizeof p);
    CU_ASSERT_FALSE(load_program_files("t.yaml", text, strlen(text), &files, &p, &d));
    program_free(&p);
  }
}

int main(void) {
  CU_initialize_registry();
  CU_pSuite s = CU_add_suite("npy", NULL, NULL);
  CU_add_test(s, "npy headers", test_npy_headers);
  CU_add_test(s, "npy preamble and bounds", test_npy_preamble);
  CU_add_test(s, "npy write and read back", test_npy_write_read);
  CU_add_test(s, "init: {npy:} in the loader", test_npy_loader);
  CU_basic_set_mode(CU_BRM_NORMAL);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures();
  CU_cleanup_registry();
  return failed ? 1 : 0;
}
