/* tests/fuzz/fuzz_program.c -- libFuzzer harness over the whole pipeline.
 *
 * The input bytes are a program file, run the way `sc-sim run` runs it:
 * load, check, lower (and print the lowering), the reference interpreter,
 * the engine, then verification of one against the other and of the
 * program's expectations.  Runs stop after FUZZ_MAX_OPS operations (the
 * `--max-ops` limit) so that each input stays fast; a program that reaches
 * it ends with a `limit` fault, which is a valid outcome.
 *
 * sc-sim bounds the operations a run executes, but not the memory of the
 * simulated machine: a valid program may declare 2**36-element refs, or
 * raise a chip's num_cores / num_subcores to build a mesh of millions of
 * subcores, and the run then allocates (and initialises) all of it
 * (docs/robustness.md).  So that the campaign explores behaviour instead of
 * reporting that one finding over and over, programs beyond FUZZ_MAX_SUBCORES
 * subcores or FUZZ_MAX_BYTES bytes of ref instances are checked but not run.
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
#define FUZZ_MAX_SUBCORES 64
#define FUZZ_MAX_BYTES (16u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether the run stays within the harness's budget (see above). */
static int small_enough(const Program *p) {
  if (p->mesh_cores < 1 || p->mesh_subcores < 1 || p->mesh_cores > FUZZ_MAX_SUBCORES ||
      p->mesh_subcores > FUZZ_MAX_SUBCORES || p->mesh_cores * p->mesh_subcores > FUZZ_MAX_SUBCORES)
    return 0;
  double bytes = 0;
  for (int i = 0; i < p->nrefs; i++) {
    const Ref *r = p->refs[i];
    double inst = r->space == SP_HBM ? 1 : r->space == SP_VMEM_SHARED ? (double)p->mesh_cores
                                                                     : (double)(p->mesh_cores * p->mesh_subcores);
    bytes += inst * (double)r->nelems * (double)dtype_size(r->dtype);
  }
  return bytes <= FUZZ_MAX_BYTES;
}

static FILE *sink(void) {
  static FILE *f;
  if (!f) f = fopen("/dev/null", "w");
  return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Program p;
  Diag d;
  memset(&p, 0, sizeof p);
  memset(&d, 0, sizeof d);
  if (!load_program_text("fuzz.yaml", (const char *)data, size, &p, &d) || !check_program(&p, &d) || p.expect_error ||
      !small_enough(&p)) {
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
