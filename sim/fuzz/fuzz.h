/* sim/fuzz.h -- sc-sim fuzz: generated programs through the whole pipeline.
 *
 * A deterministic generator (seeded by --seed and the program's index)
 * writes program YAML text with a random subset of the format's features
 * (swarm testing), runs it in a forked child through the loader, the
 * checker, the lowering, the engine and the reference interpreter, and
 * judges the outcome: accepted and verified, rejected with the one rule
 * the program was built to break, or a failure (mismatch, unexpected fault
 * or rejection, crash, hang), which is shrunk and written as a reproducer.
 * docs/fuzz.md describes the generator, the oracle and the shrinker. */
#ifndef SC_FUZZ_H
#define SC_FUZZ_H

/* Runs `sc-sim fuzz ARGS...` (argv[0] is "fuzz"); returns the exit status:
 * 0 clean, 2 bad invocation, 3 a mismatch or an unexpected fault or
 * rejection, 4 a crash or a hang.  With --mutate: 0 when every mutant was
 * detected, 3 otherwise.  Prints its own report on standard output. */
int fuzz_main(int argc, char **argv);

#endif
