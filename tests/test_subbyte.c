/* tests/test_subbyte.c -- CUnit tests for memory/subbyte: packed int4 and
 * uint4 with definedness per element.
 *
 * Every expected byte is worked out by hand in the comments (element 2k in
 * the low nibble of byte k); the wrap rows agree with ml_dtypes
 * (np.array([7, 8, 9, -9, 15, 16]).astype(ml_dtypes.int4) is
 * [7 -8 -7 7 -1 0], [17, -1, 15] as uint4 is [1 15 15]). */
#include <CUnit/Basic.h>

#include "../memory/subbyte.h"

static Cell I(int64_t v) { return (Cell){.i = v}; }

static void test_lookup_and_fit(void) {
  SubDtype t;
  CU_ASSERT_TRUE(sb_lookup("int4", &t) && t == SB_INT4);
  CU_ASSERT_TRUE(sb_lookup("uint4", &t) && t == SB_UINT4);
  CU_ASSERT_FALSE(sb_lookup("int8", &t));
  CU_ASSERT_EQUAL(sb_bits(SB_INT4), 4);
  const int64_t in4[] = {7, 8, 9, -9, 15, 16}, out4[] = {7, -8, -7, 7, -1, 0};
  for (int k = 0; k < 6; k++) CU_ASSERT_EQUAL(sb_fit(SB_INT4, I(in4[k])).i, out4[k]);
  const int64_t inu[] = {17, -1, 15}, outu[] = {1, 15, 15};
  for (int k = 0; k < 3; k++) CU_ASSERT_EQUAL(sb_fit(SB_UINT4, I(inu[k])).i, outu[k]);
}

/* [1, -2, 3, -4]: 1 = 0x1, -2 = 0xE, 3 = 0x3, -4 = 0xC -> bytes 0xE1, 0xC3. */
static void fill(SubBuf *b) {
  const int64_t v[] = {1, -2, 3, -4};
  for (int k = 0; k < 4; k++) sb_store(b, k, I(v[k]));
}

static void test_pack_layout(void) {
  SubBuf b;
  CU_ASSERT_FATAL(sb_alloc(&b, SB_INT4, 5));
  CU_ASSERT_EQUAL(sb_nbytes(&b), 3); /* 5 nibbles round up to 3 bytes */
  fill(&b);
  CU_ASSERT_EQUAL(b.bytes[0], 0xE1);
  CU_ASSERT_EQUAL(b.bytes[1], 0xC3);
  Cell c;
  CU_ASSERT_TRUE(sb_load(&b, 1, &c));
  CU_ASSERT_EQUAL(c.i, -2);
  CU_ASSERT_TRUE(sb_load(&b, 3, &c));
  CU_ASSERT_EQUAL(c.i, -4);
  CU_ASSERT_EQUAL(sb_byte_of(&b, 4), 2);
  sb_free(&b);
  /* The same bits read as uint4: 0xE is 14. */
  CU_ASSERT_FATAL(sb_alloc(&b, SB_UINT4, 2));
  sb_store(&b, 1, I(14));
  CU_ASSERT_EQUAL(b.bytes[0], 0xE0);
  CU_ASSERT_TRUE(sb_load(&b, 1, &c));
  CU_ASSERT_EQUAL(c.i, 14);
  sb_free(&b);
}

/* Writing one nibble leaves its neighbour's bits and definedness alone. */
static void test_neighbour_definedness(void) {
  SubBuf b;
  CU_ASSERT_FATAL(sb_alloc(&b, SB_INT4, 4));
  sb_store(&b, 1, I(5)); /* byte 0 = 0x50 */
  CU_ASSERT_EQUAL(b.bytes[0], 0x50);
  CU_ASSERT_FALSE(sb_defined(&b, 0));
  CU_ASSERT_TRUE(sb_defined(&b, 1));
  Cell c;
  CU_ASSERT_FALSE(sb_load(&b, 0, &c)); /* the undefined neighbour reads as undefined */
  CU_ASSERT_FALSE(sb_range_defined(&b, 0, 2));
  sb_store(&b, 0, I(3)); /* byte 0 = 0x53 */
  CU_ASSERT_EQUAL(b.bytes[0], 0x53);
  CU_ASSERT_TRUE(sb_load(&b, 1, &c));
  CU_ASSERT_EQUAL(c.i, 5);
  CU_ASSERT_TRUE(sb_range_defined(&b, 0, 2));
  CU_ASSERT_FALSE(sb_range_defined(&b, 0, 3));
  sb_set_defined(&b, 1, 1, false);
  CU_ASSERT_TRUE(sb_defined(&b, 0));
  CU_ASSERT_FALSE(sb_defined(&b, 1));
  sb_free(&b);
}

static void test_copy(void) {
  SubBuf s, d;
  CU_ASSERT_FATAL(sb_alloc(&s, SB_INT4, 4));
  CU_ASSERT_FATAL(sb_alloc(&d, SB_INT4, 4));
  fill(&s);
  /* Whole byte: elements 0..1 (byte 0xE1) to elements 2..3 of d. */
  sb_copy(&d, 2, &s, 0, 2);
  CU_ASSERT_EQUAL(d.bytes[1], 0xE1);
  CU_ASSERT_FALSE(sb_defined(&d, 0) || sb_defined(&d, 1));
  CU_ASSERT_TRUE(sb_range_defined(&d, 2, 2));
  /* Straddling: d = [7, ?, ?, -8] (0x?7, 0x8?), then s[1..2] = [-2, 3]
   * to d[1..2]: byte 0 = 0xE7, byte 1 = 0x83, both ends keep theirs. */
  sb_store(&d, 0, I(7));
  sb_store(&d, 3, I(-8));
  sb_set_defined(&d, 1, 2, false);
  sb_copy(&d, 1, &s, 1, 2);
  CU_ASSERT_EQUAL(d.bytes[0], 0xE7);
  CU_ASSERT_EQUAL(d.bytes[1], 0x83);
  CU_ASSERT_TRUE(sb_range_defined(&d, 0, 4));
  /* An undefined source element arrives undefined, bits and all. */
  sb_set_defined(&s, 2, 1, false);
  sb_copy(&d, 0, &s, 2, 1);
  CU_ASSERT_EQUAL(d.bytes[0], 0xE3);
  CU_ASSERT_FALSE(sb_defined(&d, 0));
  CU_ASSERT_TRUE(sb_defined(&d, 1));
  /* Overlap inside one buffer copies as memmove: s = [1, -2, 3, -4],
   * s[0..2] to s[1..3] gives [1, 1, -2, 3] = bytes 0x11, 0x3E. */
  sb_set_defined(&s, 0, 4, true);
  sb_copy(&s, 1, &s, 0, 3);
  CU_ASSERT_EQUAL(s.bytes[0], 0x11);
  CU_ASSERT_EQUAL(s.bytes[1], 0x3E);
  sb_free(&s);
  sb_free(&d);
}

/* The program dtypes int4 and uint4 (memory/dtype.h): ml_dtypes' one byte
 * an element, the value in its low nibble; 4 bits for the wrap, the
 * conversions and the packed size. */
static void test_program_dtypes(void) {
  Dtype t;
  CU_ASSERT_TRUE(dtype_lookup("int4", &t) && t == DT_INT4);
  CU_ASSERT_TRUE(dtype_lookup("uint4", &t) && t == DT_UINT4);
  CU_ASSERT_EQUAL(dtype_size(DT_INT4), 1);
  CU_ASSERT_EQUAL(dtype_bits(DT_INT4), 4);
  CU_ASSERT_TRUE(dtype_is_subbyte(DT_UINT4));
  CU_ASSERT_FALSE(dtype_is_subbyte(DT_INT8));
  /* 9 = 0b1001 wraps to -7 as int4; 17 to 1 as uint4; -9 to 7 as int4 */
  CU_ASSERT_EQUAL(dtype_fit(DT_INT4, (Cell){.i = 9}).i, -7);
  CU_ASSERT_EQUAL(dtype_fit(DT_UINT4, (Cell){.i = 17}).i, 1);
  CU_ASSERT_EQUAL(dtype_fit(DT_INT4, (Cell){.i = -9}).i, 7);
  /* floats truncate and saturate to -8..7 and 0..15 (jnp on CPU) */
  CU_ASSERT_EQUAL(dtype_convert(DT_FLOAT32, DT_INT4, (Cell){.f = 9.7}).i, 7);
  CU_ASSERT_EQUAL(dtype_convert(DT_FLOAT32, DT_INT4, (Cell){.f = -8.5}).i, -8);
  CU_ASSERT_EQUAL(dtype_convert(DT_FLOAT32, DT_UINT4, (Cell){.f = 17.5}).i, 15);
  CU_ASSERT_EQUAL(dtype_convert(DT_FLOAT32, DT_UINT4, (Cell){.f = -1.0}).i, 0);
  /* the byte ml_dtypes holds: -1 is 0x0F, -8 is 0x08, high bits clear */
  uint8_t b[1];
  dtype_store(DT_INT4, (Cell){.i = -1}, b);
  CU_ASSERT_EQUAL(b[0], 0x0F);
  dtype_store(DT_INT4, (Cell){.i = -8}, b);
  CU_ASSERT_EQUAL(b[0], 0x08);
  b[0] = 0xFE; /* a set high nibble is not part of the value */
  CU_ASSERT_EQUAL(dtype_load(DT_INT4, b).i, -2);
  CU_ASSERT_EQUAL(dtype_load(DT_UINT4, b).i, 14);
  /* packed: two a byte, an odd one rounds up */
  CU_ASSERT_EQUAL(dtype_packed_bytes(DT_INT4, 64), 32);
  CU_ASSERT_EQUAL(dtype_packed_bytes(DT_UINT4, 31), 16);
  CU_ASSERT_EQUAL(dtype_packed_bytes(DT_INT32, 3), 12);
}

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_pSuite s = CU_add_suite("subbyte", NULL, NULL);
  CU_add_test(s, "lookup and fit", test_lookup_and_fit);
  CU_add_test(s, "pack layout", test_pack_layout);
  CU_add_test(s, "neighbour definedness", test_neighbour_definedness);
  CU_add_test(s, "copy", test_copy);
  CU_add_test(s, "program dtypes", test_program_dtypes);
  CU_basic_set_mode(CU_BRM_NORMAL);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures();
  CU_cleanup_registry();
  return failed != 0;
}
