/* sim/cli/emit.c -- `sc-sim emit-pallas`: the program as a Pallas kernel
 * (sim/front/emit.c) on standard output or into -o FILE. */
#include "emit.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "../../traces/outfile.h"
#include "../front/emit.h"
#include "../front/load.h"

static int usage(void) {
  fputs("usage: sc-sim emit-pallas program.yaml [-o FILE.py] [--legality]\n"
        "  --legality   drop the refs' inits (no legality rule reads them): for comparing verdicts\n", stderr);
  return 2;
}

static int fail(const Diag *d) {
  fprintf(stderr, "%s:%d:%d: error: %s\n", d->loc.file, d->loc.line, d->loc.col, d->message);
  return 2;
}

int emit_main(int argc, char **argv) {
  const char *path = NULL, *out = NULL;
  bool legality = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
    else if (!strcmp(argv[i], "--legality")) legality = true;
    else if (argv[i][0] == '-' || path) return usage();
    else path = argv[i];
  }
  if (!path) return usage();
  static Program p;
  Diag d;
  memset(&d, 0, sizeof d);
  if (!load_program(path, &p, &d)) return fail(&d);
  char *text = emit_pallas(&p, legality, &d);
  int code = text ? 0 : fail(&d);
  if (text && !out) fputs(text, stdout);
  int err = 0;
  if (text && out && !outfile_write(out, text, strlen(text), &err))
    code = 2, fprintf(stderr, "sc-sim: cannot write '%s': %s\n", out, strerror(err));
  free(text);
  program_free(&p);
  return code;
}
