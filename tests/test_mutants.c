/* tests/test_mutants.c -- CUnit tests of the mutants as rewrites of lowered
 * code (lowering/mutate.c): every mutant changes the code of some execution
 * golden, and mutated code survives the text round trip (print, parse,
 * print gives the same text), flags included.  Whether verification then
 * catches each mutant is tests/mutants.sh's job. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lowering/asm.h"
#include "../lowering/check.h"
#include "../lowering/lower.h"
#include "../sim/front/load.h"
#include "checked_programs.h"

static char *print_code(const Code *c) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  asm_print(c, f);
  fclose(f);
  return buf;
}

/* Where the text after the header line (which names the mutant) starts. */
static size_t body_at(const char *text) { return strcspn(text, "\n") + (text[strcspn(text, "\n")] != '\0'); }

/* Lowers p correctly and with mutant m; *changed when the code differs;
 * false when the mutated code's text does not round-trip. */
static bool one(const Program *p, Mutant m, bool *changed, const char *path) {
  Code good, bad, back;
  Diag d;
  lower_program(p, MUT_NONE, &good, &d);
  lower_program(p, m, &bad, &d);
  char *g = print_code(&good), *b = print_code(&bad), *r = NULL;
  *changed = strcmp(g + body_at(g), b + body_at(b)) != 0;
  bool ok = asm_parse(p, b + body_at(b), (Loc){path, 1, 1}, &back, &d);
  if (ok) {
    back.mutant = m; /* the header is not part of the text parsed */
    r = print_code(&back);
    ok = !strcmp(b, r);
    lower_free(&back);
  }
  if (!ok) fprintf(stderr, "\n  %s with %s: the mutated code does not round-trip%s%s", path, mutant_name(m), r ? "" : ": ", r ? "" : d.message);
  free(g), free(b), free(r);
  lower_free(&good), lower_free(&bad);
  return ok;
}

typedef struct {
  bool changed_any[MUT_COUNT];
  int failed;
} Rewrites;

static void rewrite_all(Program *p, const char *path, void *ctx) {
  Rewrites *r = ctx;
  for (int m = 1; m < MUT_COUNT; m++) {
    bool changed;
    r->failed += !one(p, (Mutant)m, &changed, path);
    r->changed_any[m] |= changed;
  }
}

static void test_mutant_rewrites(void) {
  Rewrites r = {{false}, 0};
  int n = each_checked_program("tests/golden/exec", rewrite_all, &r);
  bool *changed_any = r.changed_any;
  int failed = r.failed;
  CU_ASSERT(n > 20);
  CU_ASSERT_EQUAL(failed, 0);
  for (int m = 1; m < MUT_COUNT; m++) {
    if (!changed_any[m]) fprintf(stderr, "\n  mutant %s changes no execution golden's code", mutant_name((Mutant)m));
    CU_ASSERT(changed_any[m]);
  }
}

/* MUT_NONE leaves the code as it is. */
static void test_mutant_none(void) {
  Code c;
  memset(&c, 0, sizeof c);
  Instr in;
  memset(&in, 0, sizeof in);
  in.op = I_IOTA;
  in.d = 0;
  in.imm = 4;
  c.code = &in, c.n = 1, c.cap = 1, c.nregs = 1;
  mutant_apply(&c, MUT_NONE);
  CU_ASSERT_EQUAL(c.n, 1);
  CU_ASSERT_EQUAL(c.nregs, 1);
  CU_ASSERT_PTR_EQUAL(c.code, &in);
  CU_ASSERT_EQUAL(c.mutant, MUT_NONE);
}

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_pSuite s = CU_add_suite("mutants", NULL, NULL);
  CU_add_test(s, "MUT_NONE leaves code alone", test_mutant_none);
  CU_add_test(s, "each mutant rewrites code that round-trips", test_mutant_rewrites);
  CU_basic_set_mode(CU_BRM_NORMAL);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures();
  CU_cleanup_registry();
  return failed ? 1 : 0;
}
