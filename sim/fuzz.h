/* sim/fuzz.h -- sc-sim fuzz: generated programs through the whole pipeline. */
#ifndef SC_FUZZ_H
#define SC_FUZZ_H

/* Runs `sc-sim fuzz ARGS...` (argv[0] is "fuzz"); returns the exit status. */
int fuzz_main(int argc, char **argv);

#endif
