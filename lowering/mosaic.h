/* lowering/mosaic.h -- the Mosaic verifier's rules (phase V, SPEC §4.M), in
 * one place, for every lowered Code: sc-sim's own lowering of the body
 * (check_program lowers and verifies it after phases T and L) and any
 * `lowered:` text a user supplies (parsed by asm_parse, then verified).
 *
 * The rules read the lowered instructions and their views, not the
 * checker's typed IR.  Upstream runs them the same way: func_op.verify()
 * sees the MLIR the lowering emitted, once the whole kernel is lowered.
 * So one input form serves both paths (and the Mosaic MLIR input to
 * come); a rule fires on exactly the instruction that would run, at its
 * location; and a lowering that emits an op Mosaic would refuse is caught
 * like a user's.  What the rules need that an untyped register cannot
 * say is carried by the instruction: a DMA's priority (prio) and, when an
 * indirect DMA's offsets come from a register, their shape (rank, shape;
 * rank 0 in a user's text: unknown until the run).  A memref's type is
 * its view's: the ref's space and the last level's dtype and shape.
 *
 * Within an instruction the rules fire in SPEC's order (the lowest id of
 * the group first); across instructions, the first in program order. */
#ifndef SC_MOSAIC_H
#define SC_MOSAIC_H

#include "lower.h"

/* True when every instruction of c passes; otherwise false with *d set to
 * the first rule that fires (a VerificationError of the catalog, at the
 * instruction's location, with notes on what differs). */
bool mosaic_verify(const Code *c, Diag *d);

/* MLIR's element type of a dtype as Mosaic's messages print it (signless
 * integers: i32 for int32 and uint32, i1 for bool vectors). */
const char *mosaic_elem_name(Dtype t);

#endif
