/* sim/run/out.h -- a run's HBM refs as .npy files (sc-sim run --out DIR). */
#ifndef SC_OUT_H
#define SC_OUT_H

#include "run.h"

/* Writes the final contents of every hbm ref of run r as DIR/NAME.npy
 * (memory/npy.h; creating DIR and its parents when missing), each file
 * atomically.  Undefined elements hold what Pallas interpret mode leaves in
 * uninitialised memory: NaN for floats, the dtype's maximum for integers,
 * False for bool; a ref with any undefined element also gets
 * DIR/NAME.undefined.npy, a bool array of its shape, True where undefined
 * (a stale one from an earlier run is removed).  Returns false with *d set
 * (an input error naming the file) when a file cannot be written. */
bool run_write_npy_dir(const Program *p, RunResult *r, const char *dir, Diag *d);

#endif
