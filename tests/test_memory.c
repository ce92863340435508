/* tests/test_memory.c -- CUnit tables for memory/: the inits.
 *
 * Each row builds one ref with mem_init (a 2-core x 2-subcore mesh) and
 * reads the bytes of one instance directly, little-endian, so a wrong init
 * shows here even when the engine and the reference, which both start from
 * memory.c, agree with each other.  The bits are worked out by hand in the
 * comments; the random rows come from tests/golden/init/gen.py --cunit,
 * which implements the generator memory.h documents in Python. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../memory/memory.h"

#define NAT 6

typedef struct {
  const char *what;
  Dtype t;
  InitKind init;
  int64_t n;            /* elements */
  Cell fill;            /* INIT_FILL */
  Cell data[4];         /* INIT_LIST (n <= 4) */
  int64_t at[NAT];      /* elements checked (a repeated 0 pads a short row) */
  uint64_t bits[NAT];   /* their bits */
} InitCase;

#define I(v) {.i = (v)}
#define F(v) {.f = (v)}

static const InitCase cases[] = {
    /* iota: integers wrap in two's complement (300 = 256 + 44 -> 0x2c at 300, 0x2b at 299) */
    {"iota int8", DT_INT8, INIT_IOTA, 300, {0}, {{0}}, {0, 127, 128, 255, 256, 299}, {0x00, 0x7f, 0x80, 0xff, 0x00, 0x2b}},
    {"iota uint8", DT_UINT8, INIT_IOTA, 300, {0}, {{0}}, {1, 127, 128, 255, 256, 299}, {0x01, 0x7f, 0x80, 0xff, 0x00, 0x2b}},
    /* 69999 - 65536 = 4463 = 0x116f */
    {"iota int16", DT_INT16, INIT_IOTA, 70000, {0}, {{0}}, {1, 32767, 32768, 65535, 65536, 69999}, {0x0001, 0x7fff, 0x8000, 0xffff, 0x0000, 0x116f}},
    {"iota uint16", DT_UINT16, INIT_IOTA, 70000, {0}, {{0}}, {2, 32767, 32768, 65535, 65536, 69999}, {0x0002, 0x7fff, 0x8000, 0xffff, 0x0000, 0x116f}},
    {"iota int32", DT_INT32, INIT_IOTA, 1000, {0}, {{0}}, {0, 1, 255, 256, 998, 999}, {0, 1, 0xff, 0x100, 0x3e6, 0x3e7}},
    {"iota uint32", DT_UINT32, INIT_IOTA, 1000, {0}, {{0}}, {0, 1, 255, 256, 998, 999}, {0, 1, 0xff, 0x100, 0x3e6, 0x3e7}},
    {"iota int64", DT_INT64, INIT_IOTA, 4, {0}, {{0}}, {0, 1, 2, 3, 0, 0}, {0, 1, 2, 3, 0, 0}},
    {"iota uint64", DT_UINT64, INIT_IOTA, 4, {0}, {{0}}, {0, 1, 2, 3, 0, 0}, {0, 1, 2, 3, 0, 0}},
    /* bool: 0 is false, every other index true */
    {"iota bool", DT_BOOL, INIT_IOTA, 4, {0}, {{0}}, {0, 1, 2, 3, 0, 0}, {0, 1, 1, 1, 0, 0}},
    /* float32: exact to 2^24 = 0x4b800000; 2^24 + 1 ties to even (2^24), 2^24 + 3 to 2^24 + 4 (0x4b800002) */
    {"iota float32", DT_FLOAT32, INIT_IOTA, 16777220, {0}, {{0}},
     {3, 16777215, 16777216, 16777217, 16777218, 16777219}, {0x40400000, 0x4b7fffff, 0x4b800000, 0x4b800000, 0x4b800001, 0x4b800002}},
    /* bfloat16 (8 significant bits): 255 = 0x437f; 256 = 0x4380; 257 ties to 256; 259 ties to 260 = 0x4382;
     * from 512 (0x4400) the ulp is 4: 513 -> 512, 515 -> 516 = 0x4401 */
    {"iota bfloat16", DT_BFLOAT16, INIT_IOTA, 600, {0}, {{0}}, {255, 256, 257, 259, 513, 515}, {0x437f, 0x4380, 0x4380, 0x4382, 0x4400, 0x4401}},
    /* float16 (11 significant bits): 2048 = 0x6800; 2049 ties to 2048; 2051 ties to 2052 = 0x6802;
     * 65504 = 0x7bff is the largest; 65519 -> 65504; 65520 (the midpoint to 2^16) -> inf = 0x7c00 */
    {"iota float16", DT_FLOAT16, INIT_IOTA, 65536, {0}, {{0}}, {2048, 2049, 2051, 65504, 65519, 65520}, {0x6800, 0x6800, 0x6802, 0x7bff, 0x7bff, 0x7c00}},
    {"iota float64", DT_FLOAT64, INIT_IOTA, 4, {0}, {{0}}, {0, 3, 0, 0, 0, 0}, {0, 0x4008000000000000ULL, 0, 0, 0, 0}},
    /* zeros */
    {"zeros int16", DT_INT16, INIT_ZEROS, 5, {0}, {{0}}, {0, 1, 2, 3, 4, 0}, {0, 0, 0, 0, 0, 0}},
    {"zeros float32", DT_FLOAT32, INIT_ZEROS, 5, {0}, {{0}}, {0, 1, 2, 3, 4, 0}, {0, 0, 0, 0, 0, 0}},
    /* fill: the value wrapped or rounded to the dtype at the store */
    {"fill int8", DT_INT8, INIT_FILL, 3, I(-5), {{0}}, {0, 2, 0, 0, 0, 0}, {0xfb, 0xfb, 0xfb, 0xfb, 0xfb, 0xfb}},
    {"fill uint8", DT_UINT8, INIT_FILL, 3, I(255), {{0}}, {0, 2, 0, 0, 0, 0}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
    {"fill int16", DT_INT16, INIT_FILL, 3, I(-2), {{0}}, {0, 2, 0, 0, 0, 0}, {0xfffe, 0xfffe, 0xfffe, 0xfffe, 0xfffe, 0xfffe}},
    {"fill uint16", DT_UINT16, INIT_FILL, 3, I(65535), {{0}}, {0, 2, 0, 0, 0, 0}, {0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff}},
    {"fill int32", DT_INT32, INIT_FILL, 3, I(-1), {{0}}, {0, 2, 0, 0, 0, 0}, {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
    {"fill uint32", DT_UINT32, INIT_FILL, 3, I(2147483648), {{0}}, {0, 2, 0, 0, 0, 0}, {0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000, 0x80000000}},
    {"fill int64", DT_INT64, INIT_FILL, 3, I(INT64_MIN), {{0}}, {0, 2, 0, 0, 0, 0},
     {0x8000000000000000ULL, 0x8000000000000000ULL, 0x8000000000000000ULL, 0x8000000000000000ULL, 0x8000000000000000ULL, 0x8000000000000000ULL}},
    {"fill uint64", DT_UINT64, INIT_FILL, 3, I(-1), {{0}}, {0, 2, 0, 0, 0, 0}, {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX}},
    {"fill bool", DT_BOOL, INIT_FILL, 3, I(1), {{0}}, {0, 2, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}},
    {"fill float32", DT_FLOAT32, INIT_FILL, 3, F(0.1), {{0}}, {0, 2, 0, 0, 0, 0}, {0x3dcccccd, 0x3dcccccd, 0x3dcccccd, 0x3dcccccd, 0x3dcccccd, 0x3dcccccd}},
    /* 1 + 3 * 2^-8 is a bfloat16 tie between 1 + 2^-7 (odd) and 1 + 2^-6 (even) = 0x3f82 */
    {"fill bfloat16", DT_BFLOAT16, INIT_FILL, 3, F(1.01171875), {{0}}, {0, 2, 0, 0, 0, 0}, {0x3f82, 0x3f82, 0x3f82, 0x3f82, 0x3f82, 0x3f82}},
    /* -2.5 = -1.25 * 2^1: sign 1, exponent 16, fraction 256 -> 0xc100 */
    {"fill float16", DT_FLOAT16, INIT_FILL, 3, F(-2.5), {{0}}, {0, 2, 0, 0, 0, 0}, {0xc100, 0xc100, 0xc100, 0xc100, 0xc100, 0xc100}},
    {"fill float64", DT_FLOAT64, INIT_FILL, 3, F(0.1), {{0}}, {0, 2, 0, 0, 0, 0},
     {0x3fb999999999999aULL, 0x3fb999999999999aULL, 0x3fb999999999999aULL, 0x3fb999999999999aULL, 0x3fb999999999999aULL, 0x3fb999999999999aULL}},
    /* list */
    {"list int16", DT_INT16, INIT_LIST, 4, {0}, {I(-32768), I(32767), I(-1), I(0)}, {0, 1, 2, 3, 0, 0}, {0x8000, 0x7fff, 0xffff, 0, 0x8000, 0x8000}},
    {"list uint8", DT_UINT8, INIT_LIST, 4, {0}, {I(0), I(1), I(128), I(255)}, {0, 1, 2, 3, 0, 0}, {0, 1, 0x80, 0xff, 0, 0}},
    /* 0.5 = 0x3800, -0.0 = 0x8000, inf = 0x7c00; 1e-7 / 2^-24 = 1.68 -> the subnormal 2 * 2^-24 = 0x0002 */
    {"list float16", DT_FLOAT16, INIT_LIST, 4, {0}, {F(0.5), F(-0.0), F(INFINITY), F(1e-7)}, {0, 1, 2, 3, 0, 0}, {0x3800, 0x8000, 0x7c00, 0x0002, 0x3800, 0x3800}},
    /* -1 = 0xbf80; 0.1 = 1.6 * 2^-4: fraction 0.6 * 128 = 76.8 -> 77 = 0x4d: 0x3dcd */
    {"list bfloat16", DT_BFLOAT16, INIT_LIST, 2, {0}, {F(-1.0), F(0.1)}, {0, 1, 0, 0, 0, 0}, {0xbf80, 0x3dcd, 0xbf80, 0xbf80, 0xbf80, 0xbf80}},
    {"list bool", DT_BOOL, INIT_LIST, 3, {0}, {I(1), I(0), I(1)}, {0, 1, 2, 0, 0, 0}, {1, 0, 1, 1, 1, 1}},
};

/* The instance's element i, little-endian. */
static uint64_t element_bits(const Region *g, Dtype t, int64_t i) {
  int sz = dtype_size(t);
  uint64_t u = 0;
  for (int k = 0; k < sz; k++) u |= (uint64_t)g->bytes[i * sz + k] << (8 * k);
  return u;
}

static RegionSpec spec_of(const char *name, Dtype t, InstScope scope, InitKind init, int64_t n) {
  RegionSpec s;
  memset(&s, 0, sizeof s);
  s.name = name;
  s.scope = scope;
  s.dtype = t;
  s.nelems = n;
  s.init = init;
  return s;
}

/* Checks `at` / `bits` of instance inst, and that every byte is defined. */
static void check_instance(MemSystem *m, int inst, Dtype t, const char *what, const int64_t *at, const uint64_t *bits) {
  Region *g = mem_instance(m, 0, inst);
  for (int k = 0; k < NAT; k++) {
    uint64_t got = element_bits(g, t, at[k]);
    if (got != bits[k]) printf("\n  %s: element %lld is 0x%llx, want 0x%llx", what, (long long)at[k], (unsigned long long)got, (unsigned long long)bits[k]);
    CU_ASSERT_EQUAL(got, bits[k]);
  }
  CU_ASSERT(mem_range_defined(g, 0, (int64_t)g->size));
}

static void test_init_table(void) {
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const InitCase *ic = &cases[c];
    /* every instance of a per-subcore ref, but one of a large one (float32 past 2^24 is 64 MiB) */
    RegionSpec s = spec_of("x", ic->t, ic->n > 100000 ? INST_GLOBAL : INST_PER_SUBCORE, ic->init, ic->n);
    s.fill = ic->fill;
    s.data = ic->data;
    MemSystem m;
    CU_ASSERT_FATAL(mem_init(&m, &s, 1, 2, 2));
    for (int inst = 0; inst < mem_instance_count(&m, 0); inst++) check_instance(&m, inst, ic->t, ic->what, ic->at, ic->bits);
    mem_free(&m);
  }
}

/* Random: every instance draws from its own coordinates. */
typedef struct {
  const char *what;
  Dtype t;
  InstScope scope;
  int inst; /* on a 2 x 2 mesh: per subcore k is core k / 2, subcore k % 2; per core k is core k */
  uint64_t seed;
  double low, high;
  int64_t at[NAT];
  uint64_t bits[NAT];
} RandomCase;

static const RandomCase random_cases[] = {
    /* python3 tests/golden/init/gen.py --cunit */
    {"random int32", DT_INT32, INST_GLOBAL, 0, 7ULL, 0.0, 100.0, {0, 1, 2, 3, 100, 999}, {0x11, 0x3, 0x1c, 0x55, 0x54, 0x47}},
    {"random int8", DT_INT8, INST_PER_SUBCORE, 3, 12345ULL, -50.0, 50.0, {0, 1, 2, 3, 100, 999}, {0x2e, 0x9, 0x1c, 0xec, 0xfb, 0xd0}},
    {"random uint8", DT_UINT8, INST_PER_SUBCORE, 2, 5ULL, 0.0, 1000.0, {0, 1, 2, 3, 100, 999}, {0xa, 0x51, 0xc7, 0xf0, 0xa7, 0x84}},
    {"random uint16", DT_UINT16, INST_PER_CORE, 1, 5ULL, 0.0, 1000.0, {0, 1, 2, 3, 100, 999}, {0x373, 0x31b, 0x3ac, 0x216, 0x322, 0x92}},
    {"random float32", DT_FLOAT32, INST_GLOBAL, 0, 7ULL, -1.0, 1.0, {0, 1, 2, 3, 100, 999}, {0xbf281210, 0xbf6e8a89, 0xbeded5d9, 0x3f38275b, 0x3f2e1f7e, 0x3edeb82c}},
    {"random bfloat16", DT_BFLOAT16, INST_PER_SUBCORE, 1, 99ULL, 0.0, 100.0, {0, 1, 2, 3, 100, 999}, {0x4243, 0x42c0, 0x42ae, 0x4207, 0x420c, 0x428a}},
    {"random float16", DT_FLOAT16, INST_PER_SUBCORE, 2, 99ULL, -3.0, 3.0, {0, 1, 2, 3, 100, 999}, {0x4143, 0x3f2e, 0x3f46, 0xb8f1, 0xb42b, 0x3fc9}},
    {"random bool", DT_BOOL, INST_GLOBAL, 0, 7ULL, 0.0, 100.0, {0, 1, 2, 3, 100, 999}, {0x0, 0x0, 0x0, 0x1, 0x1, 0x1}},
    {"random int64", DT_INT64, INST_GLOBAL, 0, 1099511627776ULL, -1000000000000.0, 1000000000000.0, {0, 1, 2, 3, 100, 999}, {0xffffff445e047d0b, 0x1f492b6d35, 0x3cc6bdde1a, 0x631827b9d2, 0xffffffd6630dd630, 0xffffffeaece9e277}},
};

static void test_random_table(void) {
  for (size_t c = 0; c < sizeof random_cases / sizeof random_cases[0]; c++) {
    const RandomCase *rc = &random_cases[c];
    RegionSpec s = spec_of("r", rc->t, rc->scope, INIT_RANDOM, 1000);
    s.seed = rc->seed;
    s.low = rc->low;
    s.high = rc->high;
    MemSystem m;
    CU_ASSERT_FATAL(mem_init(&m, &s, 1, 2, 2));
    check_instance(&m, rc->inst, rc->t, rc->what, rc->at, rc->bits);
    if (rc->scope != INST_GLOBAL) { /* another instance draws other values */
      Region *a = mem_instance(&m, 0, rc->inst), *b = mem_instance(&m, 0, rc->inst ^ 1);
      CU_ASSERT(memcmp(a->bytes, b->bytes, a->size) != 0);
    }
    mem_free(&m);
  }
}

/* No init: the bytes are there, none of them defined. */
static void test_undefined(void) {
  RegionSpec s = spec_of("u", DT_INT32, INST_PER_CORE, INIT_UNDEF, 5);
  MemSystem m;
  CU_ASSERT_FATAL(mem_init(&m, &s, 1, 2, 2));
  CU_ASSERT_EQUAL(mem_instance_count(&m, 0), 2);
  for (int i = 0; i < 2; i++) {
    Region *g = mem_instance(&m, 0, i);
    CU_ASSERT_EQUAL(g->size, 20);
    for (int64_t b = 0; b < 20; b++) CU_ASSERT_FALSE(mem_defined(g, b));
  }
  mem_free(&m);
}

/* The words of INITS. */
static void test_init_words(void) {
  InitKind k = INIT_UNDEF;
  CU_ASSERT(mem_init_word("zeros", &k) && k == INIT_ZEROS);
  CU_ASSERT(mem_init_word("iota", &k) && k == INIT_IOTA);
  CU_ASSERT_FALSE(mem_init_word("random", &k));
  CU_ASSERT_FALSE(mem_init_word("Zeros", &k));
  CU_ASSERT_FALSE(mem_init_word("", &k));
}

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_pSuite s = CU_add_suite("memory", NULL, NULL);
  CU_add_test(s, "init table (every dtype, zeros / iota / fill / list)", test_init_table);
  CU_add_test(s, "random init (the documented splitmix64 generator)", test_random_table);
  CU_add_test(s, "no init: undefined", test_undefined);
  CU_add_test(s, "init words", test_init_words);
  CU_basic_set_mode(CU_BRM_NORMAL);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures();
  CU_cleanup_registry();
  return failed ? 1 : 0;
}
