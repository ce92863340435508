/* sim/front/load.h -- program.yaml (PROGRAM_FORMAT.md) to the Program IR. */
#ifndef SC_LOAD_H
#define SC_LOAD_H

#include "../../lowering/program.h"

#define LOAD_MAX_FILE_BYTES (64u << 20) /* a larger program file is refused */
#define LOAD_MAX_OPS 100000             /* operations in the whole body */
#define LOAD_MAX_DEPTH 64               /* nesting of loop / when bodies */
#define LOAD_MAX_REF_ELEMS (1LL << 36)  /* elements of one ref */
#define LOAD_MAX_TOTAL_BYTES (1LL << 33) /* bytes of all ref instances together */
#define LOAD_MAX_SUBCORES 65536         /* cores x subcores of the mesh */

/* Files an `init: {npy: PATH}` may name, held in memory (tests and the
 * fuzzing harness): PATH is looked up as written, never on disk. */
typedef struct {
  const char *name;
  const uint8_t *data;
  size_t len;
} LoadFile;
typedef struct {
  const LoadFile *v;
  int n;
} LoadFiles;

/* Loads `path` into *p (zeroed by the caller).  Returns false with *d set
 * (an input diagnostic, exit 2) when the file is not a valid program; the
 * caller then still calls program_free(p). */
bool load_program(const char *path, Program *p, Diag *d);
/* The same from a buffer (for tests and the fuzzing harness); `path` is
 * only used in locations. */
bool load_program_text(const char *path, const char *text, size_t len, Program *p, Diag *d);
/* The same with the .npy files taken from `files` (not from disk). */
bool load_program_files(const char *path, const char *text, size_t len, const LoadFiles *files, Program *p, Diag *d);

#endif
