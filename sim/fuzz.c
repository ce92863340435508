/* sim/fuzz.c -- placeholder until the generator lands (issue 8). */
#include "fuzz.h"

#include <stdio.h>

int fuzz_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fputs("sc-sim: fuzz is not available in this build\n", stderr);
  return 2;
}
