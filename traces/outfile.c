/* traces/outfile.c -- whole-or-nothing output files (see outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct OutFile {
  FILE *f;
  char *path, *tmp; /* tmp NULL: written in place (a FIFO or a device) */
};

static int err_of(int e) { return e ? e : EIO; }

static void out_free(OutFile *o) {
  free(o->path);
  free(o->tmp);
  free(o);
}

/* A new file's mode: what open(2) with 0666 gives under the umask.  umask
 * can only be read by setting it, so it is set back at once. */
static mode_t new_file_mode(void) {
  mode_t um = umask(0);
  umask(um);
  return 0666 & ~um;
}

static bool open_temp(OutFile *o, int *err) {
  size_t n = strlen(o->path) + sizeof ".tmp.XXXXXX";
  if (!(o->tmp = malloc(n))) return *err = ENOMEM, false;
  snprintf(o->tmp, n, "%s.tmp.XXXXXX", o->path);
  int fd = mkstemp(o->tmp);
  if (fd < 0) return *err = err_of(errno), false;
  if (fchmod(fd, new_file_mode()) != 0 || !(o->f = fdopen(fd, "w"))) {
    *err = err_of(errno);
    close(fd);
    unlink(o->tmp);
    return false;
  }
  return true;
}

OutFile *outfile_open(const char *path, int *err) {
  OutFile *o = calloc(1, sizeof *o);
  if (!o || !(o->path = strdup(path))) {
    free(o);
    *err = ENOMEM;
    return NULL;
  }
  struct stat st;
  bool in_place = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
  bool ok = in_place ? (o->f = fopen(path, "w")) != NULL : open_temp(o, err);
  if (in_place && !ok) *err = err_of(errno);
  if (!ok) out_free(o);
  return ok ? o : NULL;
}

FILE *outfile_stream(const OutFile *o) { return o->f; }

bool outfile_close(OutFile *o, int *err) {
  int e = 0;
  if (fflush(o->f) != 0) e = err_of(errno);
  if (ferror(o->f) && !e) e = EIO;
  if (fclose(o->f) != 0 && !e) e = err_of(errno);
  if (!e && o->tmp && rename(o->tmp, o->path) != 0) e = err_of(errno);
  if (e && o->tmp) unlink(o->tmp);
  if (e) *err = e;
  out_free(o);
  return !e;
}

void outfile_abort(OutFile *o) {
  if (!o) return;
  fclose(o->f);
  if (o->tmp) unlink(o->tmp);
  out_free(o);
}

bool outfile_write(const char *path, const void *data, size_t n, int *err) {
  OutFile *o = outfile_open(path, err);
  if (!o) return false;
  if (fwrite(data, 1, n, o->f) != n) {
    *err = err_of(errno);
    outfile_abort(o);
    return false;
  }
  return outfile_close(o, err);
}
