/* tests/fuzz/fuzz_input.c -- libFuzzer harness over the front end.
 *
 * The input bytes are a program file: the loader (libyaml, the format's
 * tables, both expression languages) reads them, and when they load the
 * legality checker types and checks the body; when the program is accepted
 * and carries a `lowered:` text, the lowering parser and verifier read it
 * too (lowering/asm.h).  Whatever the bytes, this must return without a
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

#include "../../lowering/asm.h"
#include "../../lowering/check.h"
#include "../../sim/front/load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Program p;
  Diag d;
  memset(&p, 0, sizeof p);
  memset(&d, 0, sizeof d);
  /* load_program_text takes a length: the bytes need no terminating NUL,
   * and libFuzzer's buffer has none, so ASan sees any read past the end. */
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
  if (load_program_files("fuzz.yaml", (const char *)data, plen, &files, &p, &d) && check_program(&p, &d) && !p.expect_error &&
      p.lowered) {
    Code c;
    memset(&c, 0, sizeof c);
    if (asm_parse(&p, p.lowered, p.lowered_loc, &c, &d)) {
      (void)asm_verify(&c, &d);
      lower_free(&c);
    }
  }
  program_free(&p);
  return 0;
}
