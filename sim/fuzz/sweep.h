/* sim/fuzz/sweep.h -- design sweeps and campaign shards (docs/cluster.md).
 *
 * sc-sim sweep runs one program at every point of a parameter grid (chip
 * parameters, the chip preset, the mesh) through the one pipeline driver
 * (sim/run/pipeline.h) and writes a JSON line per point and a table.
 * sc-sim merge combines the JSON lines of the shards of a sweep or of a
 * fuzz campaign (--shard K/N) into the report one unsharded run gives. */
#ifndef SC_SWEEP_H
#define SC_SWEEP_H

#include <stdbool.h>

/* `sc-sim sweep ARGS...` (argv[0] is "sweep"): 0 when the sweep ran, 2 on
 * bad input, 3 or 4 when a point failed verification or faulted. */
int sweep_main(int argc, char **argv);
/* `sc-sim merge [--out FILE] DIR_OR_FILE...`: 0, 2 on bad input, 3 when
 * the shards do not cover the campaign (a point or program missing or
 * twice) or the fuzz campaign found failures. */
int merge_main(int argc, char **argv);
/* --shard K/N: 0 <= K < N; false (message on stderr) when malformed. */
bool shard_arg(const char *cmd, const char *v, int *k, int *n);

#endif
