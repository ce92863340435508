/* lowering/asm.h -- the text form of lowered code (sc-sim lower, and the
 * `lowered:` lowerings users write; grammar in docs/isa.md).
 *
 *   view v0 = buf[%1:16, 3]             a ref and its transform levels
 *   view v1 = x.bitcast(int16)[0:32:2]
 *   0: %0 = sc.coord imm=1 at=17:5 id=0  one instruction: index, [dest =],
 *   1: tpu.vector_load d=%2 v=v0 log=O   mnemonic, then key=value fields
 *
 * Printing and parsing are exact inverses (tests/test_units.c checks the
 * round trip on every golden program).  A parsed lowering meets the Mosaic
 * verifier's rules (mosaic_verify, mosaic.h) before it runs. */
#ifndef SC_ASM_H
#define SC_ASM_H

#include <stdio.h>

#include "lower.h"

void asm_print(const Code *c, FILE *f);
/* Parses `text` (starting at file position `at`) into *out for program p
 * (whose refs the views name).  False with *d set (IN_EXPR at the
 * offending token) when the text is not valid. */
bool asm_parse(const Program *p, const char *text, Loc at, Code *out, Diag *d);

#endif
