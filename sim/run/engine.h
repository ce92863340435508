/* sim/engine.h -- runs lowered code on every subcore of the mesh. */
#ifndef SC_ENGINE_H
#define SC_ENGINE_H

#include "../../lowering/lower.h"
#include "run.h"

/* Executes `c` (lowered from p) on the mesh; false when the run faulted
 * (out->fault says how).  The caller frees out with run_result_free. */
bool engine_run(const Program *p, const Code *c, const RunLimits *lim, RunResult *out);

#endif
