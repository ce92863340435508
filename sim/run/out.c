/* sim/run/out.c -- --out DIR: every hbm ref of a run as DIR/NAME.npy. */
#include "out.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../memory/npy.h"

/* mkdir -p */
static bool make_dir(const char *dir, char *err, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s", dir);
  for (char *s = path + 1;; s++) {
    bool end = !*s;
    if (*s != '/' && !end) continue;
    *s = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return snprintf(err, n, "cannot create the folder '%s': %s", path, strerror(errno)), false;
    if (end) break;
    *s = '/';
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return snprintf(err, n, "'%s' is not a folder", dir), false;
  return true;
}

/* What an undefined element holds (Pallas interpret mode's uninitialized_memory='nan'). */
static Cell undefined_fill(Dtype t) {
  Cell c = {0};
  if (dtype_is_float(t)) c.f = NAN;
  else if (dtype_kind(t) == DK_UINT) c.i = dtype_size(t) == 8 ? -1 : (int64_t)((1ULL << (dtype_bits(t))) - 1);
  else if (dtype_kind(t) == DK_INT) c.i = dtype_size(t) == 8 ? INT64_MAX : (int64_t)((1ULL << (dtype_bits(t) - 1)) - 1);
  return c; /* bool: False */
}

/* The ref's bytes with undefined elements filled; mask[i] = 1 where undefined.
 * Returns how many are undefined. */
static int64_t region_bytes(const Ref *ref, const Region *g, uint8_t *out, uint8_t *mask) {
  int sz = dtype_size(ref->dtype);
  int64_t undef = 0;
  uint8_t fill[8];
  dtype_store(ref->dtype, undefined_fill(ref->dtype), fill);
  if (ref->nelems) memcpy(out, g->bytes, (size_t)(ref->nelems * sz));
  for (int64_t e = 0; e < ref->nelems; e++) {
    mask[e] = !mem_range_defined(g, e * sz, sz);
    if (mask[e]) memcpy(out + e * sz, fill, (size_t)sz), undef++;
  }
  return undef;
}

static bool write_ref(const Ref *ref, const Region *g, const char *dir, char *err, size_t n) {
  size_t bytes = (size_t)ref->nelems * (size_t)dtype_size(ref->dtype);
  uint8_t *data = malloc(bytes ? bytes : 1), *mask = malloc(ref->nelems ? (size_t)ref->nelems : 1);
  if (!data || !mask) abort();
  int64_t undef = region_bytes(ref, g, data, mask);
  char path[4200], mpath[4200];
  snprintf(path, sizeof path, "%s/%s.npy", dir, ref->name);
  snprintf(mpath, sizeof mpath, "%s/%s.undefined.npy", dir, ref->name);
  bool ok = npy_write(path, ref->dtype, ref->rank, ref->shape, data, err, n);
  if (ok && undef) ok = npy_write(mpath, DT_BOOL, ref->rank, ref->shape, mask, err, n);
  else if (ok && remove(mpath) != 0 && errno != ENOENT) ok = (snprintf(err, n, "cannot remove the stale '%s': %s", mpath, strerror(errno)), false);
  free(data);
  free(mask);
  return ok;
}

bool run_write_npy_dir(const Program *p, RunResult *r, const char *dir, Diag *d) {
  char err[4400];
  bool ok = make_dir(dir, err, sizeof err);
  for (int k = 0; ok && k < p->nrefs; k++) {
    const Ref *ref = p->refs[k];
    if (ref->space != SP_HBM || !r->mem.inst || !r->mem.inst[k]) continue;
    ok = write_ref(ref, mem_instance(&r->mem, k, 0), dir, err, sizeof err);
  }
  if (!ok) diag_set(d, D_IN_FILE, (Loc){dir, 0, 0}, err);
  return ok;
}
