/* sim/run/reference_span.c -- affine views for the reference interpreter
 * (see reference_span.h).  The bounds are checked per level on the box of
 * indices the view reaches, from the top level down: each level maps a
 * dimension's range affinely (start + i * stride) or to one integer, so the
 * first and last index of each dimension bound every element's. */
#include "reference_span.h"

#include <string.h>

#include "../../isa/value.h"

/* The per-dimension range [lo, hi] of indices reached at one level. */
typedef struct {
  int64_t lo[MAX_RANK], hi[MAX_RANK];
} Box;

/* Whether transform t (level k + 1 -> k) is one the affine form covers. */
static bool affine_transform(const Transform *t, int k, const int *rank, const Dtype *dt) {
  switch (t->kind) {
  case TR_INDEX: {
    const NDIndexer *ix = t->idx;
    int ns = 0;
    if (ix->int_rank != 0 || ix->n != rank[k]) return false;
    for (int d = 0; d < ix->n; d++) {
      if (ix->e[d].kind != IX_SLICE && ix->e[d].kind != IX_INT) return false;
      ns += ix->e[d].kind == IX_SLICE;
    }
    return ns == rank[k + 1];
  }
  case TR_BITCAST: return dtype_size(dt[k]) == dtype_size(dt[k + 1]) && rank[k] == rank[k + 1];
  case TR_RESHAPE: return false;
  }
  return false;
}

/* Maps box b of level k + 1 through the indexing t down to level k; false
 * when an index leaves [0, lvl[k][d]) or the arithmetic overflows. */
static bool box_down(const NDIndexer *ix, const int64_t *start, const int64_t *shape, Box *b) {
  Box p;
  for (int d = 0, si = 0; d < ix->n; d++) {
    const IxEntry *e = &ix->e[d];
    if (e->kind == IX_SLICE) {
      int64_t a, z;
      if (__builtin_mul_overflow(b->lo[si], e->stride, &a) || __builtin_add_overflow(a, start[d], &a) ||
          __builtin_mul_overflow(b->hi[si], e->stride, &z) || __builtin_add_overflow(z, start[d], &z))
        return false;
      p.lo[d] = a < z ? a : z, p.hi[d] = a < z ? z : a;
      si++;
    } else {
      p.lo[d] = p.hi[d] = start[d];
    }
    if (p.lo[d] < 0 || p.hi[d] >= shape[d]) return false;
  }
  *b = p;
  return true;
}

/* Byte strides of level k + 1 from those of level k; false on overflow. */
static bool strides_up(const NDIndexer *ix, const int64_t *start, int64_t *stride, int64_t *base) {
  int64_t up[MAX_RANK];
  for (int d = 0, si = 0; d < ix->n; d++) {
    int64_t o;
    if (__builtin_mul_overflow(start[d], stride[d], &o) || __builtin_add_overflow(*base, o, base)) return false;
    if (ix->e[d].kind == IX_SLICE && __builtin_mul_overflow(stride[d], ix->e[d].stride, &up[si++])) return false;
  }
  memcpy(stride, up, sizeof up);
  return true;
}

/* Whether the span's elements sit densely from its base, row-major. */
static bool dense(const RefSpan *sp) {
  int64_t want = sp->esize;
  for (int d = sp->rank - 1; d >= 0; d--)
    if ((sp->shape[d] != 1 && sp->stride[d] != want) || __builtin_mul_overflow(want, sp->shape[d], &want)) return false;
  return true;
}

/* ref_span_build of the ref itself (ix NULL) or of one indexing ix of it
 * (affine_transform holds), in one pass over the dimensions: the same
 * bounds and overflow checks as the level-by-level build, in another order
 * (either way any failure is a plain false). */
static bool span_one_level(const NDIndexer *ix, const int64_t *start, const int *rank, const int64_t (*lvl)[MAX_RANK],
                           const Dtype *dt, RefSpan *sp) {
  int top = ix != NULL;
  int64_t rs[MAX_RANK], s = dtype_size(dt[0]);
  sp->n = 1;
  for (int d = 0; d < rank[top]; d++) {
    if (lvl[top][d] <= 0) return false; /* empty: nothing to gain */
    sp->n *= lvl[top][d], sp->shape[d] = lvl[top][d];
  }
  for (int d = rank[0] - 1; d >= 0; d--) rs[d] = s, s *= lvl[0][d]; /* in bounds: no overflow */
  sp->rank = rank[top], sp->esize = dtype_size(dt[top]), sp->base = 0;
  if (!ix) {
    for (int d = 0; d < rank[0]; d++) sp->stride[d] = rs[d];
  } else {
    for (int d = 0, si = 0; d < ix->n; d++) {
      const IxEntry *e = &ix->e[d];
      int64_t a = start[d], z = a, o;
      if (e->kind == IX_SLICE) {
        if (__builtin_mul_overflow(lvl[1][si] - 1, e->stride, &z) || __builtin_add_overflow(z, a, &z) ||
            __builtin_mul_overflow(rs[d], e->stride, &sp->stride[si]))
          return false;
        si++;
      }
      if ((a < z ? a : z) < 0 || (a < z ? z : a) >= lvl[0][d]) return false;
      if (__builtin_mul_overflow(a, rs[d], &o) || __builtin_add_overflow(sp->base, o, &sp->base)) return false;
    }
  }
  sp->contiguous = dense(sp);
  return true;
}

bool ref_span_build(const View *v, const int64_t (*start)[MAX_RANK], const int *rank, const int64_t (*lvl)[MAX_RANK],
                    const Dtype *dt, RefSpan *sp) {
  int top = v->ntr;
  Box b;
  for (int k = 0; k < top; k++)
    if (!affine_transform(v->tr[k], k, rank, dt)) return false;
  if (top == 0) return span_one_level(NULL, NULL, rank, lvl, dt, sp);
  if (top == 1 && v->tr[0]->kind == TR_INDEX) return span_one_level(v->tr[0]->idx, start[0], rank, lvl, dt, sp);
  sp->n = 1;
  for (int d = 0; d < rank[top]; d++) {
    if (lvl[top][d] <= 0) return false; /* empty: nothing to gain */
    b.lo[d] = 0, b.hi[d] = lvl[top][d] - 1, sp->n *= lvl[top][d];
  }
  for (int k = top - 1; k >= 0; k--)
    if (v->tr[k]->kind == TR_INDEX && !box_down(v->tr[k]->idx, start[k], lvl[k], &b)) return false;
  int64_t stride[MAX_RANK], s = dtype_size(dt[0]);
  for (int d = rank[0] - 1; d >= 0; d--) stride[d] = s, s *= lvl[0][d]; /* in bounds: no overflow */
  sp->base = 0;
  for (int k = 0; k < top; k++)
    if (v->tr[k]->kind == TR_INDEX && !strides_up(v->tr[k]->idx, start[k], stride, &sp->base)) return false;
  sp->rank = rank[top];
  sp->esize = dtype_size(dt[top]);
  memcpy(sp->shape, lvl[top], sizeof sp->shape);
  memcpy(sp->stride, stride, sizeof sp->stride);
  sp->contiguous = dense(sp);
  return true;
}

int64_t ref_span_offset(const RefSpan *sp, int64_t i) {
  if (sp->contiguous) return sp->base + i * sp->esize;
  int64_t off = sp->base;
  for (int d = sp->rank - 1; d >= 0; d--) {
    off += (i % sp->shape[d]) * sp->stride[d];
    i /= sp->shape[d];
  }
  return off;
}


/* read_dense of 16 int32 elements from an offset that is a multiple of 8:
 * four a SIMD load, and their 64 bytes' definedness one shadow word. */
static void read16(const Region *g, const uint8_t *b, int64_t base, Cell *v, uint8_t *def) {
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    RefU32x4 w;
    memcpy(&w, b + 4 * i, sizeof w);
    ref_wide4(v + i, w);
  }
  uint64_t d;
  memcpy(&d, g->defined + (base >> 3), 8);
  if (d == UINT64_MAX) return ref_flags_set(def, 16);
  for (int i = 0; i < 16; i++) def[i] = ref_bytes_defined(g, base + 4 * i, 4);
}

/* A dense span: one pass over its bytes, and one test of its definedness
 * when all of it is defined. */
static void read_dense(const Region *g, Dtype t, const RefSpan *sp, Cell *v, uint8_t *def) {
  const uint8_t *b = g->bytes + sp->base;
  if (t == DT_INT32 && sp->n == 16 && !(sp->base & 7)) return read16(g, b, sp->base, v, def);
  if (t == DT_INT32)
    for (int64_t i = 0; i < sp->n; i++) v[i] = ref_load(DT_INT32, b + 4 * i);
  else
    for (int64_t i = 0; i < sp->n; i++) v[i] = dtype_load(t, b + i * sp->esize);
  if (mem_range_defined(g, sp->base, sp->n * sp->esize)) {
    memset(def, 1, (size_t)sp->n);
    return;
  }
  for (int64_t i = 0; i < sp->n; i++) def[i] = ref_bytes_defined(g, sp->base + i * sp->esize, sp->esize);
}

void ref_span_read(const Region *g, Dtype t, const RefSpan *sp, Cell *v, uint8_t *def) {
  if (sp->contiguous) return read_dense(g, t, sp, v, def);
  int64_t idx[MAX_RANK] = {0}, off = sp->base;
  for (int64_t i = 0; i < sp->n; i++) {
    v[i] = ref_load(t, g->bytes + off);
    def[i] = ref_bytes_defined(g, off, sp->esize);
    for (int d = sp->rank - 1; d >= 0; d--) { /* the next element, row-major */
      off += sp->stride[d];
      if (++idx[d] < sp->shape[d]) break;
      off -= sp->stride[d] * idx[d];
      idx[d] = 0;
    }
  }
}

void ref_span_write(Region *g, Dtype t, const RefSpan *sp, int64_t i, Cell c, bool def) {
  int64_t off = ref_span_offset(sp, i);
  ref_set_defined(g, off, sp->esize, def);
  if (def) ref_store(t, c, g->bytes + off);
}

void ref_span_store(Region *g, Dtype t, const RefSpan *sp, const Cell *v, const uint8_t *def) {
  bool all = sp->contiguous && t == DT_INT32 && !memchr(def, 0, (size_t)sp->n); /* flags are 0 or 1 */
  if (!all) {
    for (int64_t i = 0; i < sp->n; i++) ref_span_write(g, t, sp, i, v[i], def[i]);
    return;
  }
  mem_set_defined(g, sp->base, sp->n * 4, true);
  uint8_t *b = g->bytes + sp->base;
  for (int64_t i = 0; i < sp->n; i++) {
    int32_t w = (int32_t)v[i].i;
    memcpy(b + 4 * i, &w, 4);
  }
}

/* Whether the dense spans a (in g) and b (in h) share no byte. */
static bool apart(const Region *g, const RefSpan *a, const Region *h, const RefSpan *b) {
  int64_t na = a->n * a->esize, nb = b->n * b->esize;
  return g != h || a->base + na <= b->base || b->base + nb <= a->base;
}

void ref_span_copy(Region *dst, const RefSpan *ds, const Region *src, const RefSpan *ss, Dtype t, bool add) {
  if (!add && t == DT_INT32 && ss->contiguous && ds->contiguous && apart(src, ss, dst, ds) &&
      mem_range_defined(src, ss->base, ss->n * 4)) { /* the same bytes, all defined */
    memcpy(dst->bytes + ds->base, src->bytes + ss->base, (size_t)ss->n * 4);
    mem_set_defined(dst, ds->base, ds->n * 4, true);
    return;
  }
  for (int64_t i = 0; i < ss->n; i++) { /* element by element, in order: overlapping spans see earlier writes */
    int64_t so = ref_span_offset(ss, i), dof = ref_span_offset(ds, i);
    Cell c = ref_load(t, src->bytes + so), cur;
    bool def = ref_bytes_defined(src, so, ss->esize);
    if (add) {
      cur = ref_load(t, dst->bytes + dof);
      alu_binary(OP_ADD, t, t, cur, c, &c);
      def = def && ref_bytes_defined(dst, dof, ds->esize);
    }
    ref_span_write(dst, t, ds, i, c, def);
  }
}
