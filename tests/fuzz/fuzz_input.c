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
 * Build and run: make fuzz-input SECONDS=N (mk/fuzz.mk, tests/fuzz/README.md). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../lowering/asm.h"
#include "../../lowering/mosaic.h"
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
  if (load_program_text("fuzz.yaml", (const char *)data, size, &p, &d) && check_program(&p, &d) && !p.expect_error &&
      p.lowered) {
    Code c;
    memset(&c, 0, sizeof c);
    if (asm_parse(&p, p.lowered, p.lowered_loc, &c, &d)) {
      (void)mosaic_verify(&c, &d);
      lower_free(&c);
    }
  }
  program_free(&p);
  return 0;
}
