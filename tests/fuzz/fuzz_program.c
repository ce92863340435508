/* tests/fuzz/fuzz_program.c -- libFuzzer harness over the whole pipeline.
 *
 * The input bytes are a program file, run by the pipeline driver as
 * `sc-sim run` runs it (sim/run/pipeline.h): load, check, then either the
 * user's `lowered:` text (parsed and verified) or sc-sim's own lowering, the
 * engine, the reference interpreter, verification of one against the other
 * and of the program's expectations.  The lowering is also printed (`sc-sim
 * lower`), parsed back and printed again: printing and parsing are
 * documented to be exact inverses (lowering/asm.h), so a difference aborts
 * like a crash.  The
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
 * subcores or FUZZ_MAX_BYTES bytes of ref instances are checked and lowered
 * but not run (the pipeline's max_subcores and max_bytes).
 *
 * Build and run: make fuzz-program SECONDS=N (mk/fuzz.mk, tests/fuzz/README.md). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lowering/asm.h"
#include "../../sim/run/pipeline.h"

#define FUZZ_MAX_OPS 20000
#define FUZZ_MAX_SUBCORES 64
#define FUZZ_MAX_BYTES (16u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
  static PipeOutcome out;
  PipeOptions o;
  pipe_options_init(&o);
  o.stop = PIPE_RUN;
  static const LoadFiles no_files = {NULL, 0}; /* init: {npy: PATH} never reads the disk here */
  o.files = &no_files;
  o.limits.max_ops = FUZZ_MAX_OPS;
  o.max_subcores = FUZZ_MAX_SUBCORES;
  o.max_bytes = FUZZ_MAX_BYTES;
  o.trace.format = size & 1 ? TRACE_CSV : TRACE_CHROME_JSON;
  o.trace.max_bytes = 1u << 20;
  if (out_open()) o.trace_path = trace_path, o.stats_path = stats_path;
  pipeline_text("fuzz.yaml", (const char *)data, size, &o, &out);
  if (out.lowered) round_trip(&out.program, &out.code);
  out_close();
  pipeline_free(&out);
  return 0;
}
