/* tests/fuzz/fuzz_program.c -- libFuzzer harness over the whole pipeline.
 *
 * The input bytes are a program file, run the way `sc-sim run` runs it:
 * load, check, lower (and print the lowering), the reference interpreter,
 * the engine, then verification of one against the other and of the
 * program's expectations.  Runs stop after FUZZ_MAX_OPS operations (the
 * `--max-ops` limit) so that each input stays fast; a program that reaches
 * it ends with a `limit` fault, which is a valid outcome.
 *
 * Build and run: make fuzz-program SECONDS=N (mk/fuzz.mk, tests/fuzz/README.md). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../lowering/check.h"
#include "../../lowering/lower.h"
#include "../../sim/engine.h"
#include "../../sim/load.h"
#include "../../sim/run.h"
#include "../../sim/verify.h"

#define FUZZ_MAX_OPS 20000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink(void) {
  static FILE *f;
  if (!f) f = fopen("/dev/null", "w");
  return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Program p; /* large: keep it off the stack, as sim/main.c does */
  Diag d;
  memset(&p, 0, sizeof p);
  memset(&d, 0, sizeof d);
  if (!load_program_text("fuzz.yaml", (const char *)data, size, &p, &d) || !check_program(&p, &d) || p.expect_error) {
    program_free(&p);
    return 0;
  }
  Code code;
  RunResult ref, eng;
  RunLimits lim = {FUZZ_MAX_OPS, NULL};
  memset(&code, 0, sizeof code);
  memset(&ref, 0, sizeof ref);
  memset(&eng, 0, sizeof eng);
  if (lower_program(&p, MUT_NONE, &code, &d)) {
    FILE *f = sink();
    if (f) lower_print(&code, f);
  }
  reference_run(&p, &lim, &ref);
  engine_run(&p, &code, &lim, &eng);
  VerifyStats st = {0, 0};
  if (ref.faulted || eng.faulted) {
    if (ref.faulted) verify_fault_diag(&ref, &d);
    if (eng.faulted) verify_fault_diag(&eng, &d);
  } else if (verify_runs(&p, &ref, &eng, &d, &st)) {
    (void)verify_expect_refs(&p, &eng, &d);
  }
  run_result_free(&ref);
  run_result_free(&eng);
  lower_free(&code);
  program_free(&p);
  return 0;
}
