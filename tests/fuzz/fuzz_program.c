/* tests/fuzz/fuzz_program.c -- libFuzzer harness over the whole pipeline.
 *
 * The input bytes are a program file, run the way `sc-sim run` runs it
 * (sim/main.c): load, check, then either the user's `lowered:` text (parsed
 * and verified) or sc-sim's own lowering, the reference interpreter, the
 * engine, verification of one against the other and of the program's
 * expectations.  The lowering is also printed (`sc-sim lower`), parsed
 * back and printed again: printing and parsing are documented to be exact
 * inverses (lowering/asm.h), so a difference aborts like a crash.  The
 * engine's events go to a trace (Chrome JSON, or CSV for odd-sized inputs)
 * and the run's statistics to a JSON file, as `--trace` and `--stats` would,
 * in a private folder under /dev/shm (not /dev/null: both writers replace
 * their target by renaming a temporary file onto it, which as root turns
 * /dev/null into a regular file; docs/robustness.md, finding F22).
 *
 * Runs stop after FUZZ_MAX_OPS operations (the `--max-ops` limit) so that
 * each input stays fast; a program that reaches it ends with a `limit`
 * fault, which is a valid outcome.
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lowering/asm.h"
#include "../../lowering/check.h"
#include "../../lowering/lower.h"
#include "../../sim/run/engine.h"
#include "../../sim/front/load.h"
#include "../../sim/run/run.h"
#include "../../sim/run/verify.h"
#include "../../traces/stats.h"
#include "../../traces/trace.h"

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

/* Where the trace and the statistics go: a folder of this input's own,
 * removed when the input is done (libFuzzer's processes do not always run
 * atexit handlers). */
static char out_dir[64];
static char trace_path[96], stats_path[96];

static int out_open(void) {
  snprintf(out_dir, sizeof out_dir, "%s", access("/dev/shm", W_OK) == 0 ? "/dev/shm/fuzz_program.XXXXXX" : "/tmp/fuzz_program.XXXXXX");
  if (!mkdtemp(out_dir)) return out_dir[0] = 0, 0;
  snprintf(trace_path, sizeof trace_path, "%s/trace", out_dir);
  snprintf(stats_path, sizeof stats_path, "%s/stats.json", out_dir);
  return 1;
}

static void out_close(void) {
  if (!out_dir[0]) return;
  unlink(trace_path);
  unlink(stats_path);
  rmdir(out_dir);
  out_dir[0] = 0;
}

/* The text form of c, in a malloc'd string. */
static char *print_code(const Code *c) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  asm_print(c, f);
  fclose(f);
  return buf;
}

/* print, parse, print: the two texts must be equal. */
static void round_trip(const Program *p, const Code *c) {
  char *a = print_code(c);
  if (!a) return;
  Code back;
  Diag d;
  memset(&back, 0, sizeof back);
  Loc at = {"lowered", 1, 1};
  if (!asm_parse(p, a, at, &back, &d)) {
    fprintf(stderr, "fuzz_program: sc-sim cannot parse its own lowering: %s:%d:%d: %s\n--- text:\n%s", d.loc.file,
            d.loc.line, d.loc.col, d.message, a);
    abort();
  }
  char *b = print_code(&back);
  if (b && strcmp(a, b)) {
    fprintf(stderr, "fuzz_program: the lowering printed, parsed and printed again differs\n--- first:\n%s--- second:\n%s", a, b);
    abort();
  }
  lower_free(&back);
  free(a);
  free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Program p;
  Diag d;
  memset(&p, 0, sizeof p);
  memset(&d, 0, sizeof d);
  static const LoadFiles no_files = {NULL, 0}; /* init: {npy: PATH} never reads the disk here */
  if (!load_program_files("fuzz.yaml", (const char *)data, size, &no_files, &p, &d) || !check_program(&p, &d) || p.expect_error ||
      !small_enough(&p)) {
    program_free(&p);
    return 0;
  }
  Code code;
  RunResult ref, eng;
  RunLimits lim;
  VerifyStats st;
  memset(&code, 0, sizeof code);
  memset(&ref, 0, sizeof ref);
  memset(&eng, 0, sizeof eng);
  memset(&lim, 0, sizeof lim);
  memset(&st, 0, sizeof st);
  lim.max_ops = FUZZ_MAX_OPS;
  TraceOptions topt;
  trace_options_init(&topt);
  topt.format = size & 1 ? TRACE_CSV : TRACE_CHROME_JSON;
  topt.program_name = p.name;
  topt.cores = (int)p.mesh_cores;
  topt.subcores = (int)p.mesh_subcores;
  topt.scalar_subcore = p.kernel == KERNEL_SCALAR;
  Diag td;
  topt.max_bytes = 1u << 20;
  TraceSink *trace = out_open() ? trace_open(trace_path, &topt, &td) : NULL;
  if (p.lowered) { /* as sim/main.c: the user's lowering instead of sc-sim's */
    if (!asm_parse(&p, p.lowered, p.lowered_loc, &code, &d) || !asm_verify(&code, &d)) {
      if (diag_class(d.id) == DC_RULE) lower_free(&code); /* parsed, then rejected by the verifier */
      if (trace) trace_abort(trace);
      out_close();
      program_free(&p);
      return 0;
    }
  } else if (!lower_program(&p, MUT_NONE, &code, &d)) { /* too many registers for the mesh: an input error */
    lower_free(&code);
    if (trace) trace_abort(trace);
    out_close();
    program_free(&p);
    return 0;
  }
  round_trip(&p, &code);
  lim.trace = trace;
  reference_run(&p, &lim, &ref);
  engine_run(&p, &code, &lim, &eng);
  if (ref.faulted || eng.faulted) {
    if (ref.faulted) verify_fault_diag(&ref, &d);
    if (eng.faulted) verify_fault_diag(&eng, &d);
  } else if (verify_runs(&p, &ref, &eng, &d, &st)) {
    (void)verify_expect_refs(&p, &eng, &d);
  }
  if (trace) trace_close(trace, &td);
  if (out_dir[0]) (void)stats_write(stats_path, &p, &eng.stats, &td);
  out_close();
  run_result_free(&ref);
  run_result_free(&eng);
  lower_free(&code);
  program_free(&p);
  return 0;
}
