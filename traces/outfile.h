/* traces/outfile.h -- an output file written whole or not at all.
 *
 * Every file sc-sim writes (--stats, --trace, the fuzz reproducers) goes
 * through here.  A regular file (or a new one) is written to a temporary
 * `PATH.tmp.XXXXXX` in the same folder and renamed onto PATH when it is
 * complete, so a reader never sees half a file and a failed run leaves
 * nothing behind.  The file gets the mode any new file gets, 0666 less the
 * user's umask (0644 under umask 022), not mkstemp's 0600.  A FIFO or a
 * device (/dev/null, /dev/stdout) is written in place: renaming onto it
 * would replace the node itself.
 *
 * Errors are errno values for the caller to word (library code never
 * prints). */
#ifndef SC_OUTFILE_H
#define SC_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct OutFile OutFile;

/* Opens PATH for writing as above; NULL with *err set (an errno) when it
 * cannot be created.  The caller owns the result: outfile_close or
 * outfile_abort frees it. */
OutFile *outfile_open(const char *path, int *err);
/* The stream to write to (valid until close or abort; the caller may
 * setvbuf it before the first write). */
FILE *outfile_stream(const OutFile *o);
/* Flushes, closes and renames the file into place; frees o.  False with
 * *err set when a write, the close or the rename failed (then nothing is
 * left at PATH that was not there before). */
bool outfile_close(OutFile *o, int *err);
/* Drops the file (the temporary is removed); frees o.  o may be NULL. */
void outfile_abort(OutFile *o);
/* Writes n bytes of data as the whole file PATH; false with *err set. */
bool outfile_write(const char *path, const void *data, size_t n, int *err);

#endif
