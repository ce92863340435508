/* sim/run/debug_print.h -- pl.debug_print's line and pl.debug_check's
 * message, shared by the engine and the reference: what a print writes is
 * output, not semantics, so both runs format it the same way. */
#ifndef SC_DEBUG_PRINT_H
#define SC_DEBUG_PRINT_H

#include "run.h"

/* The operation whose id is `id` in p's body (nested bodies included), or NULL. */
const Op *run_op_by_id(const Program *p, int id);
/* Appends subcore (core, subcore)'s line for a debug_print of `msg` with
 * the value v (NULL: no input): "MSG, data: s32[8] { 0, 1, ... }", a
 * scalar as [1], rank 2 and up as nested braces; undefined elements print
 * as "undef"; bools as 1 and 0. */
void run_print(RunResult *r, int core, int subcore, const char *msg, const Value *v);

#endif
