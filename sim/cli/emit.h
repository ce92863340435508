/* sim/cli/emit.h -- `sc-sim emit-pallas program.yaml [-o FILE]`. */
#ifndef SC_CLI_EMIT_H
#define SC_CLI_EMIT_H

/* argv[0] is "emit-pallas"; the exit status (0, or 2 for a program that
 * does not load or that Pallas cannot express). */
int emit_main(int argc, char **argv);

#endif
