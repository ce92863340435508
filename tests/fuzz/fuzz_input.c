/* tests/fuzz/fuzz_input.c -- libFuzzer harness over the front end.
 *
 * The input bytes are a program file, taken as `sc-sim check` takes it
 * (the pipeline driver, sim/run/pipeline.h): the loader (libyaml, the
 * format's tables, both expression languages) reads them, and when they load
 * the legality checker types and checks the body; when the program is
 * accepted it is lowered, or its `lowered:` text is read by the lowering
 * parser and verifier (lowering/asm.h).  Whatever the bytes, this must return without a
 * crash, a sanitizer report, a leak, a hang or an unbounded allocation: an
 * invalid program is a diagnostic, never more.
 *
 * The .npy files an `init: {npy: PATH}` names come from the input too,
 * never from disk: after a line "#--npy--" (a YAML comment) the rest of
 * the input is the file every PATH names, so the seeds of
 * tests/fuzz/make_corpus.sh (a program and its .npy file) reach the .npy
 * parser, and mutations reach its header grammar and size checks.
 *
 * Build and run: make fuzz-input SECONDS=N (mk/fuzz.mk, tests/fuzz/README.md). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../sim/run/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static PipeOutcome out;
  PipeOptions o;
  pipe_options_init(&o);
  o.stop = PIPE_CHECK;
  /* everything after a marker line is the .npy file a program's
   * init: {npy: in.npy} reads, so the harness never touches the disk */
  static const char marker[] = "\n#--npy--\n";
  const uint8_t *cut = memmem(data, size, marker, sizeof marker - 1);
  size_t plen = cut ? (size_t)(cut - data) + 1 : size;
  LoadFile file[1];
  LoadFiles files = {file, 0};
  if (cut) {
    const uint8_t *npy = cut + sizeof marker - 1;
    file[0] = (LoadFile){"in.npy", npy, size - (size_t)(npy - data)};
    files.n = 1;
  }
  o.files = &files;
  /* the pipeline hands the loader a length: the bytes need no terminating
   * NUL, and libFuzzer's buffer has none, so ASan sees any read past the end. */
  pipeline_text("fuzz.yaml", (const char *)data, plen, &o, &out);
  pipeline_free(&out);
  return 0;
}
