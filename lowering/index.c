/* lowering/index.c -- building views and NDIndexers (SPEC §3.1, §4.A, §8.1-2). */
#include "index.h"


#include <stdio.h>
#include <string.h>

bool index_fire(IndexCtx *c, DiagId id, Loc at, ...) {
  char ph = diag_phase(id);
  if (ph && ph != c->phase) return false;
  va_list ap;
  va_start(ap, at);
  diag_vset(c->d, id, at, ap);
  va_end(ap);
  c->failed = true;
  return true;
}

/* jax 0.10.2 pallas/mosaic/lowering.py:425 (_emit_pallas_lowering_rule_as_fun):
 * MLIR's VectorType refuses a size 0, and its error prints the equation's
 * location: the name stack, the kernel function, the source position.  The
 * kernel of a program is named `kernel`; the position is the operation's. */
bool index_bad_vector(IndexCtx *c, Loc at, const char *prim, int rank, const int64_t *shape, bool semaphore) {
  bool zero = false;
  for (int k = 0; k < rank; k++) zero |= shape[k] == 0;
  if (!zero && !(semaphore && rank > 0)) return false;
  char line[16], col[16];
  snprintf(line, sizeof line, "%d", at.line);
  snprintf(col, sizeof col, "%d", at.col);
  return index_fire(c, zero ? D_ZV1 : D_ZV2, at, prim, prim, "kernel", at.file ? at.file : "", line, col);
}

char *index_num(IndexCtx *c, int64_t v) {
  char *s = arena_alloc(c->arena, 24);
  snprintf(s, 24, "%lld", (long long)v);
  return s;
}

char *index_shape_str(IndexCtx *c, int rank, const int64_t *shape) {
  char b[256];
  fmt_shape(b, sizeof b, rank, shape);
  return arena_strdup(c->arena, b);
}

static char *num(IndexCtx *c, int64_t v) { return index_num(c, v); }

/* ---- reprs --------------------------------------------------------- */
void fmt_dims(char *buf, size_t n, int rank, const int64_t *shape) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < rank && len < n; i++) {
    if (shape[i] == DYN) len += (size_t)snprintf(buf + len, n - len, "%s?", i ? ", " : "");
    else len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "", (long long)shape[i]);
  }
}

void fmt_shape(char *buf, size_t n, int rank, const int64_t *shape) {
  char dims[256];
  fmt_dims(dims, sizeof dims, rank, shape);
  snprintf(buf, n, "(%s%s)", dims, rank == 1 ? "," : "");
}

static void fmt_short(char *buf, size_t n, Dtype t, int rank, const int64_t *shape) {
  char dims[256];
  fmt_dims(dims, sizeof dims, rank, shape);
  for (char *p = dims; *p; p++)
    if (*p == ' ') memmove(p, p + 1, strlen(p));
  snprintf(buf, n, "%s[%s]", dtype_name(t), dims);
}

void fmt_aval(char *buf, size_t n, const AVal *a) {
  char s[300];
  fmt_short(s, sizeof s, a->dtype, a->rank, a->shape);
  snprintf(buf, n, "ShapedArray(%s%s)", s, a->weak ? ", weak_type=True" : "");
}

/* str() of an aval: '~' marks a weak type (jax core ShapedArray.__str__). */
void fmt_aval_str(char *buf, size_t n, const AVal *a) {
  char s[300];
  fmt_short(s, sizeof s, a->dtype, a->rank, a->shape);
  snprintf(buf, n, "%s%s", a->weak ? "~" : "", s);
}

void fmt_ref_aval(char *buf, size_t n, const View *v) {
  char s[300];
  fmt_short(s, sizeof s, v->ref->dtype, v->ref->rank, v->ref->shape);
  snprintf(buf, n, "Ref<%s>{%s}", v->ref->annotated ? space_str(v->ref->space) : "hbm", s);
}

/* A dynamic index part as an abstract value: inside an abstract eval the
 * transforms are unflattened from the jaxpr, so each traced leaf is its
 * aval (a literal int index is a weakly typed int32 array there). */
static void fmt_leaf_aval(char *buf, size_t n, const Expr *e) {
  AVal a = {.kind = AV_VALUE, .dtype = e ? e->ty : DT_INT32, .weak = e ? e->weak : true};
  fmt_aval(buf, n, &a);
}

static size_t fmt_entry(char *buf, size_t n, const IxEntry *e, bool avals) {
  static const char traced[] = "Traced<ShapedArray(int32[])>with<DynamicJaxprTrace>";
  char s[300], z[300];
  switch (e->kind) {
  case IX_SLICE:
    if (e->start_static) snprintf(s, sizeof s, "%lld", (long long)e->start);
    else if (avals) fmt_leaf_aval(s, sizeof s, e->start_e);
    else snprintf(s, sizeof s, "%s", traced);
    if (e->size_static) snprintf(z, sizeof z, "%lld", (long long)e->size);
    else if (avals) fmt_leaf_aval(z, sizeof z, e->size_e);
    else snprintf(z, sizeof z, "%s", traced);
    return (size_t)snprintf(buf, n, "Slice(start=%s, size=%s, stride=%lld)", s, z, (long long)e->stride);
  case IX_INT:
    if (avals) return fmt_aval(buf, n, &e->idx), strlen(buf);
    if (e->start_static) return (size_t)snprintf(buf, n, "%lld", (long long)e->start);
    return (size_t)snprintf(buf, n, "%s", traced);
  case IX_ARRAY: {
    if (avals) return fmt_aval(buf, n, &e->idx), strlen(buf);
    char a[300];
    fmt_short(a, sizeof a, e->idx.dtype, e->idx.rank, e->idx.shape);
    return (size_t)snprintf(buf, n, "Traced<ShapedArray(%s)>with<DynamicJaxprTrace>", a);
  }
  case IX_REF: {
    char a[300];
    fmt_short(a, sizeof a, e->idx.view->dtype, e->idx.view->rank, e->idx.view->shape);
    return (size_t)snprintf(buf, n, "Ref{%s}", a);
  }
  }
  return 0;
}

/* The NDIndexer's repr: as built (validate=True, tracers) or as an abstract
 * eval sees it after tree_unflatten (validate=False, avals). */
void fmt_indexer(char *buf, size_t n, const NDIndexer *ix, bool avals) {
  size_t len = (size_t)snprintf(buf, n, "NDIndexer(indices=(");
  for (int i = 0; i < ix->n && len < n; i++) {
    if (i) len += (size_t)snprintf(buf + len, n - len, ", ");
    if (len < n) len += fmt_entry(buf + len, n - len, &ix->e[i], avals);
  }
  char sh[256], is[256];
  fmt_shape(sh, sizeof sh, ix->n, ix->shape);
  fmt_shape(is, sizeof is, ix->int_rank, ix->int_shape);
  if (len < n)
    snprintf(buf + len, n - len, "%s), shape=%s, int_indexer_shape=%s, validate=%s)", ix->n == 1 ? "," : "", sh, is,
             avals ? "False" : "True");
}

static size_t fmt_transform(char *buf, size_t n, const Transform *t, bool avals) {
  char sh[256];
  fmt_shape(sh, sizeof sh, t->rank, t->shape);
  switch (t->kind) {
  case TR_INDEX: fmt_indexer(buf, n, t->idx, avals); return strlen(buf);
  case TR_BITCAST: return (size_t)snprintf(buf, n, "RefBitcaster(to_dtype=dtype('%s'), shape=%s)", dtype_name(t->dtype), sh);
  case TR_RESHAPE: return (size_t)snprintf(buf, n, "RefReshaper(dtype=dtype('%s'), shape=%s)", dtype_name(t->dtype), sh);
  }
  return 0;
}

void fmt_transforms(char *buf, size_t n, const View *v, int from, int to, bool avals) {
  size_t len = (size_t)snprintf(buf, n, "(");
  for (int i = from; i < to && len < n; i++) {
    if (i > from) len += (size_t)snprintf(buf + len, n - len, ", ");
    if (len < n) len += fmt_transform(buf + len, n - len, v->tr[i], avals);
  }
  if (len < n) snprintf(buf + len, n - len, "%s)", to - from == 1 ? "," : "");
}

/* ---- result shape -------------------------------------------------- */
int index_result_shape(const NDIndexer *ix, int64_t *shape) {
  int nslice = 0, first_int = -1, last_int = -1, nint = 0;
  int64_t sl[MAX_RANK];
  for (int i = 0; i < ix->n; i++) {
    if (ix->e[i].kind == IX_SLICE) sl[nslice++] = ix->e[i].size_static ? ix->e[i].size : DYN;
    else {
      if (first_int < 0) first_int = i;
      last_int = i;
      nint++;
    }
  }
  int r = 0;
  bool contiguous = nint == 0 || last_int - first_int + 1 == nint;
  int pos = contiguous && nint ? first_int : 0; /* slices before the ints */
  if (!contiguous) pos = 0;
  for (int i = 0; i < pos; i++) shape[r++] = sl[i];
  if (nint)
    for (int i = 0; i < ix->int_rank; i++) shape[r++] = ix->int_shape[i];
  for (int i = pos; i < nslice; i++) shape[r++] = sl[i];
  return r;
}

/* ---- building one NDIndexer ---------------------------------------- */
typedef struct {
  int kind; /* 0 entry, 1 ellipsis, 2 python slice */
  IxEntry e;
  Expr *lo, *hi, *st; /* python slice parts */
  int64_t lo_v, hi_v, st_v;
  bool lo_set, hi_set, st_set;
} RawEntry;

static bool static_int(IndexCtx *c, Expr *e, int64_t *v, bool *is_static, Expr **dyn) {
  AVal a;
  if (!c->eval(c, e, &a)) return false;
  if (a.kind != AV_VALUE || a.rank != 0 || !(dtype_is_int(a.dtype) || a.dtype == DT_BOOL)) {
    char buf[200];
    snprintf(buf, sizeof buf, "an index must be an integer scalar");
    return index_fire(c, D_IN_VALUE, e->loc, buf), false;
  }
  *is_static = a.is_static;
  if (a.is_static) *v = a.sval.i;
  if (dyn) *dyn = a.is_static ? NULL : e;
  return true;
}

static bool is_call(const Expr *e, Builtin b) { return e->kind == EX_CALL && e->builtin == b; }

/* pl.ds(start, size, stride=1): A5 / A6 fire here, when it is evaluated. */
static bool eval_ds(IndexCtx *c, Expr *e, RawEntry *r) {
  Expr *start = NULL, *size = NULL, *stride = NULL;
  int pos = 0;
  for (int i = 0; i < e->nargs; i++) {
    const char *kw = e->kw[i];
    Expr **slot = !kw ? (pos == 0 ? &start : pos == 1 ? &size : pos == 2 ? &stride : NULL)
                      : !strcmp(kw, "start") ? &start : !strcmp(kw, "size") ? &size : !strcmp(kw, "stride") ? &stride : NULL;
    if (!kw) pos++;
    if (!slot && kw) {
      static const char *const kws[] = {"start", "size", "stride"};
      const char *near = names_nearest(kw, kws, 3);
      char msg[200];
      if (near) snprintf(msg, sizeof msg, "pl.ds has no keyword '%.40s'; did you mean '%s'?", kw, near);
      else snprintf(msg, sizeof msg, "pl.ds has no keyword '%.40s' (it takes start, size, stride)", kw);
      return index_fire(c, D_IN_EXPR, e->kwloc ? e->kwloc[i] : e->args[i]->loc, msg), false;
    }
    if (!slot) return index_fire(c, D_IN_EXPR, e->args[i]->loc, builtin_usage(BI_DS)), false;
    *slot = e->args[i];
  }
  r->kind = 0;
  r->e.kind = IX_SLICE;
  r->e.loc = e->loc;
  r->e.stride = 1;
  if (!start || start->kind == EX_NONE) { /* pl.ds(None) is ':' */
    r->kind = 2;
    return true;
  }
  if (stride) {
    bool st_static;
    int64_t st;
    AVal a;
    if (!c->eval(c, stride, &a)) return false;
    st_static = a.kind == AV_VALUE && a.rank == 0 && a.is_static && dtype_is_int(a.dtype);
    st = st_static ? a.sval.i : 0;
    if (!st_static) return index_fire(c, D_A5, stride->loc), false;
    r->e.stride = st;
  }
  if (!size) { /* pl.ds(n) is pl.ds(0, n), a dynamic n included (SPEC §10.4) */
    if (!static_int(c, start, &r->e.size, &r->e.size_static, &r->e.size_e)) return false;
    r->e.start = 0;
    r->e.start_static = true;
  } else {
    if (!static_int(c, start, &r->e.start, &r->e.start_static, &r->e.start_e)) return false;
    if (!static_int(c, size, &r->e.size, &r->e.size_static, &r->e.size_e)) return false;
  }
  if (r->e.size_static && r->e.size < 0) { /* SPEC is silent; a view of negative extent has no meaning */
    char msg[120];
    snprintf(msg, sizeof msg, "the size of a slice must be non-negative, got %lld", (long long)r->e.size);
    return index_fire(c, D_IN_EXPR, (size ? size : start)->loc, msg), false;
  }
  if (r->e.stride < 0) return index_fire(c, D_A6, e->loc), false;
  return true;
}

static bool eval_pyslice(IndexCtx *c, Expr *e, RawEntry *r) {
  r->kind = 2;
  Expr *parts[3] = {e->a, e->b, e->c};
  int64_t *vals[3] = {&r->lo_v, &r->hi_v, &r->st_v};
  bool *set[3] = {&r->lo_set, &r->hi_set, &r->st_set};
  for (int k = 0; k < 3; k++) {
    if (!parts[k] || parts[k]->kind == EX_NONE) continue;
    bool st;
    if (!static_int(c, parts[k], vals[k], &st, NULL)) return false;
    if (!st)
      return index_fire(c, D_IN_EXPR, parts[k]->loc, "a Python slice a:b:c needs static bounds; use pl.ds(start, size) for a dynamic start"), false;
    *set[k] = true;
  }
  r->e.loc = e->loc;
  return true;
}

/* An index that is a value or a ref (possibly inside plsc.Indices). */
static bool eval_index_value(IndexCtx *c, Expr *e, RawEntry *r) {
  Expr *x = e;
  r->kind = 0;
  r->e.loc = e->loc;
  r->e.e = e;
  if (is_call(e, BI_INDICES)) {
    if (e->nargs < 1 || e->kw[0]) return index_fire(c, D_IN_EXPR, e->loc, builtin_usage(BI_INDICES)), false;
    x = e->args[0];
    r->e.filtered = true;
    for (int i = 1; i < e->nargs; i++) {
      if (!e->kw[i] || strcmp(e->kw[i], "ignored_value"))
        return index_fire(c, D_IN_EXPR, e->args[i]->loc, "plsc.Indices takes one keyword, ignored_value"), false;
      r->e.ignored_e = e->args[i];
    }
    r->e.e = x;
  }
  AVal a;
  if (!c->eval(c, x, &a)) return false;
  r->e.idx = a;
  if (a.kind == AV_REF) {
    r->e.kind = IX_REF;
  } else if (a.kind == AV_VALUE && a.rank == 0 && !r->e.filtered) {
    if (!dtype_is_int(a.dtype) && a.dtype != DT_BOOL)
      return index_fire(c, D_IN_VALUE, x->loc, "an index must be an integer"), false;
    r->e.kind = IX_INT;
    r->e.start_static = a.is_static;
    r->e.start = a.is_static ? a.sval.i : 0;
    r->e.start_e = a.is_static ? NULL : x;
    r->e.size = 1;
    r->e.size_static = true;
    r->e.stride = 1;
  } else if (a.kind == AV_VALUE) {
    r->e.kind = IX_ARRAY;
  } else {
    return index_fire(c, D_IN_VALUE, x->loc, "a DMA descriptor cannot be an index"), false;
  }
  return true;
}

static bool eval_entry(IndexCtx *c, Expr *e, RawEntry *r) {
  memset(r, 0, sizeof *r);
  if (e->kind == EX_ELLIPSIS) return r->kind = 1, true;
  if (e->kind == EX_SLICE) return eval_pyslice(c, e, r);
  if (is_call(e, BI_DS)) return eval_ds(c, e, r);
  if (e->kind == EX_NONE) return index_fire(c, D_IN_EXPR, e->loc, "None (a new axis) cannot index a ref"), false;
  return eval_index_value(c, e, r);
}

/* core.canonicalize_slice with NumPy's rules, then Slice.from_slice. */
static bool from_pyslice(IndexCtx *c, RawEntry *r, int64_t n) {
  int64_t step = r->st_set ? r->st_v : 1;
  if (step == 0) return index_fire(c, D_A3, r->e.loc), false;
  if (step < 0) return index_fire(c, D_A4, r->e.loc, num(c, step)), false;
  int64_t lo = r->lo_set ? r->lo_v : 0, hi = r->hi_set ? r->hi_v : n;
  if (lo < 0) lo += n;
  if (hi < 0) hi += n;
  lo = lo < 0 ? 0 : lo > n ? n : lo;
  hi = hi < 0 ? 0 : hi > n ? n : hi;
  int64_t size = hi > lo ? (hi - lo + step - 1) / step : 0;
  r->e.kind = IX_SLICE;
  r->e.pyslice = true;
  r->e.start = lo;
  r->e.size = size;
  r->e.stride = step;
  r->e.start_static = r->e.size_static = true;
  r->kind = 0;
  return true;
}

static void pyslice_repr(char *buf, size_t n, const RawEntry *r) {
  char a[24] = "None", b[24] = "None", s[24] = "None";
  if (r->lo_set) snprintf(a, sizeof a, "%lld", (long long)r->lo_v);
  if (r->hi_set) snprintf(b, sizeof b, "%lld", (long long)r->hi_v);
  if (r->st_set) snprintf(s, sizeof s, "%lld", (long long)r->st_v);
  snprintf(buf, n, "slice(%s, %s, %s)", a, b, s);
}

static bool fire_a2(IndexCtx *c, Loc at, RawEntry *raw, int n, int rank, const int64_t *shape) {
  char buf[900], sh[256];
  size_t len = (size_t)snprintf(buf, sizeof buf, "(");
  for (int i = 0; i < n && len < sizeof buf - 1; i++) {
    if (i) len += (size_t)snprintf(buf + len, sizeof buf - len, ", ");
    if (raw[i].kind == 2) pyslice_repr(buf + len, sizeof buf - len, &raw[i]);
    else fmt_entry(buf + len, sizeof buf - len, &raw[i].e, false);
    len = strlen(buf);
  }
  if (len < sizeof buf - 2) snprintf(buf + len, sizeof buf - len, "%s)", n == 1 ? "," : "");
  fmt_shape(sh, sizeof sh, rank, shape);
  return index_fire(c, D_A2, at, buf, sh);
}

/* NumPy broadcasting of the non-slice indexers' shapes (A9). */
static bool broadcast(IndexCtx *c, NDIndexer *ix, Loc at) {
  int r = 0;
  int64_t out[MAX_RANK];
  for (int i = 0; i < ix->n; i++) {
    const IxEntry *e = &ix->e[i];
    if (e->kind == IX_SLICE || e->kind == IX_INT) continue;
    int er = e->idx.rank;
    if (er > r) {
      for (int k = r - 1; k >= 0; k--) out[k + er - r] = out[k];
      for (int k = 0; k < er - r; k++) out[k] = 1;
      r = er;
    }
    for (int k = 0; k < er; k++) {
      int64_t d = e->idx.shape[k], *o = &out[r - er + k];
      if (*o == 1) *o = d;
      else if (d != 1 && d != *o) return index_fire(c, D_A9, at), false;
    }
  }
  ix->int_rank = r;
  memcpy(ix->int_shape, out, sizeof(int64_t) * (size_t)r);
  return true;
}

static bool classify(IndexCtx *c, NDIndexer *ix, Loc at) {
  int nref = 0, nother = 0;
  for (int i = 0; i < ix->n; i++) {
    if (ix->e[i].kind == IX_SLICE) continue;
    nother++;
    nref += ix->e[i].kind == IX_REF;
  }
  if (!nother) return true;
  if (nref) {
    if (nref > 1) return index_fire(c, D_A7, at), false;
    if (nref != nother) return index_fire(c, D_A8, at), false;
    ix->has_ref = true;
    for (int i = 0; i < ix->n; i++)
      if (ix->e[i].kind == IX_REF) {
        ix->int_rank = ix->e[i].idx.view->rank;
        memcpy(ix->int_shape, ix->e[i].idx.view->shape, sizeof(int64_t) * MAX_RANK);
      }
    return true;
  }
  if (!broadcast(c, ix, at)) return false;
  /* from_indices_shape broadcasts each integer index and each index array
   * of another shape to the broadcast shape with state's broadcast_to
   * primitive, which the SparseCore lowering lacks (jax 0.10.2
   * state/indexing.py:253, state/primitives.py:1084: only an index of the
   * shape already is left as it is) */
  for (int i = 0; i < ix->n; i++) {
    const IxEntry *e = &ix->e[i];
    bool same = e->kind == IX_INT ? ix->int_rank == 0
                                  : e->idx.rank == ix->int_rank &&
                                        !memcmp(e->idx.shape, ix->int_shape, sizeof(int64_t) * (size_t)ix->int_rank);
    if (e->kind != IX_SLICE && !same)
      return !index_fire(c, D_U1, at, c->core_type ? c->core_type : "sc_vector_subcore", "broadcast_to");
  }
  return true;
}

/* NDIndexer.__post_init__ validation; a 0 start or size is skipped (§3.1.6). */
static bool validate(IndexCtx *c, NDIndexer *ix) {
  for (int i = 0; i < ix->n; i++) {
    IxEntry *e = &ix->e[i];
    int64_t dim = ix->shape[i];
    if (e->kind == IX_SLICE) {
      if (!e->start_static || !e->start) continue;
      if (e->start >= dim) return index_fire(c, D_A10, e->loc, num(c, e->start), num(c, dim)), false;
      int64_t last; /* overflow-checked: a static size may be near 2**63 */
      if (e->size_static && e->size &&
          (__builtin_mul_overflow(e->size - 1, e->stride, &last) || __builtin_add_overflow(e->start, last, &last) || last >= dim))
        return index_fire(c, D_A11, e->loc, num(c, e->start), num(c, e->size), num(c, e->stride), num(c, dim)), false;
    }
    /* A static integer index past its dim (A12) is not checked here: jax
     * 0.10.2 broadcasts integer indices with jnp.asarray, a tracer inside
     * the kernel, so indexing.py's bound check never sees a concrete value
     * (docs/jax-versions.md); such an index faults (oob) when it runs. */
  }
  return true;
}

/* NDIndexer.from_indices_shape over a subscript's entries. */
static NDIndexer *build_indexer(IndexCtx *c, Expr *sub, int rank, const int64_t *shape) {
  RawEntry raw[MAX_RANK + 8];
  int n = sub->nargs;
  if (n > MAX_RANK + 8) {
    index_fire(c, D_IN_LIMIT, sub->loc, "too many index entries");
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!eval_entry(c, sub->args[i], &raw[i])) return NULL;
  int nell = 0, ell = -1;
  for (int i = 0; i < n; i++)
    if (raw[i].kind == 1) nell++, ell = ell < 0 ? i : ell;
  if (nell > 1) return index_fire(c, D_A1, sub->loc), NULL;
  RawEntry full[MAX_RANK + 8];
  int m = 0;
  for (int i = 0; i < n; i++) {
    if (i == ell) {
      for (int k = 0; k < rank - n + 1; k++) {
        memset(&full[m], 0, sizeof full[m]);
        full[m].kind = 2;
        full[m++].e.loc = raw[i].e.loc;
      }
    } else {
      full[m++] = raw[i];
    }
  }
  if (m > rank) return fire_a2(c, sub->loc, full, m, rank, shape), NULL;
  while (m < rank) {
    memset(&full[m], 0, sizeof full[m]);
    full[m].kind = 2;
    full[m++].e.loc = sub->loc;
  }
  NDIndexer *ix = arena_alloc(c->arena, sizeof *ix);
  ix->n = rank;
  memcpy(ix->shape, shape, sizeof(int64_t) * (size_t)rank);
  for (int i = 0; i < rank; i++) {
    if (full[i].kind == 2 && !from_pyslice(c, &full[i], shape[i])) return NULL;
    ix->e[i] = full[i].e;
  }
  if (!classify(c, ix, sub->loc) || !validate(c, ix)) return NULL;
  return ix;
}

/* ---- views ---------------------------------------------------------- */
static Transform *push(IndexCtx *c, View *v, TrKind k, Loc at) {
  if (v->ntr >= MAX_TRANSFORMS) {
    index_fire(c, D_IN_LIMIT, at, "a view has more than 16 transforms");
    return NULL;
  }
  Transform *t = arena_alloc(c->arena, sizeof *t);
  t->kind = k;
  t->loc = at;
  t->in_dtype = t->dtype = v->dtype;
  t->in_rank = v->rank;
  memcpy(t->in_shape, v->shape, sizeof v->shape);
  v->tr[v->ntr++] = t;
  return t;
}

static void settle(View *v, Transform *t) {
  v->dtype = t->dtype;
  v->rank = t->rank;
  memcpy(v->shape, t->shape, sizeof v->shape);
}

static bool has_dyn(const View *v) {
  for (int i = 0; i < v->rank; i++)
    if (v->shape[i] == DYN) return true;
  return false;
}

static bool add_index(IndexCtx *c, View *v, Expr *sub) {
  if (sub->kind == EX_SUBSCRIPT && sub->nargs == 1 && (sub->args[0]->kind == EX_ELLIPSIS || sub->args[0]->kind == EX_NONE))
    return true; /* ref[...] and ref[None] add no transform */
  NDIndexer *ix = build_indexer(c, sub, v->rank, v->shape);
  if (!ix) return false;
  Transform *t = push(c, v, TR_INDEX, sub->loc);
  if (!t) return false;
  t->idx = ix;
  t->rank = index_result_shape(ix, t->shape);
  settle(v, t);
  return true;
}

static bool add_bitcast(IndexCtx *c, View *v, Expr *e) {
  if (has_dyn(v)) return index_fire(c, D_T4, e->loc, "Bitcast"), false;
  int ob = dtype_bits(v->dtype), nb = dtype_bits(e->dtype);
  Transform *t = push(c, v, TR_BITCAST, e->loc);
  if (!t) return false;
  t->dtype = e->dtype;
  t->rank = v->rank;
  memcpy(t->shape, v->shape, sizeof t->shape);
  if (ob != nb) {
    if (v->rank < 2) return index_fire(c, D_T1, e->loc), false;
    int64_t d = v->shape[v->rank - 2] * ob;
    if (d % nb) return index_fire(c, D_T2, e->loc), false;
    /* upstream accepts it, but sc-sim holds int4 one element a byte: a
     * view that regroups bits across elements is not modelled */
    if (dtype_is_subbyte(v->dtype) || dtype_is_subbyte(e->dtype))
      return index_fire(c, D_IN_SUBBYTE, e->loc, dtype_name(v->dtype), dtype_name(e->dtype)), false;
    t->shape[v->rank - 2] = d / nb;
  } else if (v->rank < 2) {
    /* jax 0.10.2 state/utils.py:98 scales shape[-2] even when the widths
     * agree: a same-width bitcast of a 1-D (or scalar) ref is IndexError */
    return index_fire(c, D_T5, e->loc), false;
  }
  settle(v, t);
  return true;
}

static bool add_reshape(IndexCtx *c, View *v, Expr *e) {
  if (has_dyn(v)) return index_fire(c, D_T4, e->loc, "Reshape"), false;
  Transform *t = push(c, v, TR_RESHAPE, e->loc);
  if (!t) return false;
  Expr **dims = e->args;
  int n = e->nargs;
  if (n == 1 && dims[0]->kind == EX_LIST) { /* .reshape((4, 8)) */
    n = dims[0]->nargs;
    dims = dims[0]->args;
  }
  if (n > MAX_RANK) return index_fire(c, D_IN_LIMIT, e->loc, "a reshape to more than 8 dimensions"), false;
  int64_t total = 1, in_total = 1;
  for (int i = 0; i < n; i++) {
    bool st;
    if (!static_int(c, dims[i], &t->shape[i], &st, NULL)) return false;
    if (!st || t->shape[i] < 0) return index_fire(c, D_IN_EXPR, dims[i]->loc, "reshape dimensions must be non-negative integer literals"), false;
    total *= t->shape[i];
  }
  for (int i = 0; i < v->rank; i++) in_total *= v->shape[i];
  t->rank = n;
  if (total != in_total) {
    char a[256], b[256];
    fmt_shape(a, sizeof a, v->rank, v->shape);
    fmt_shape(b, sizeof b, n, t->shape);
    return index_fire(c, D_T3, e->loc, a, b), false;
  }
  settle(v, t);
  return true;
}

static bool view_rec(IndexCtx *c, Expr *e, View **out, bool *is_ref) {
  switch (e->kind) {
  case EX_SUBSCRIPT:
  case EX_AT:
  case EX_BITCAST:
  case EX_RESHAPE: {
    if (!view_rec(c, e->a, out, is_ref) || !*is_ref) return false;
    View *v = *out;
    if (e->kind == EX_BITCAST) return add_bitcast(c, v, e);
    if (e->kind == EX_RESHAPE) return add_reshape(c, v, e);
    return add_index(c, v, e);
  }
  case EX_NAME: {
    AVal a;
    if (!c->eval(c, e, &a)) return false;
    if (a.kind != AV_REF) return *is_ref = false, false;
    View *v = arena_alloc(c->arena, sizeof *v);
    *v = *a.view;
    v->expr = e;
    *out = v;
    *is_ref = true;
    return true;
  }
  case EX_INT: case EX_FLOAT: case EX_BOOL: case EX_UNARY: case EX_BINARY: case EX_CALL:
  case EX_LIST: case EX_SLICE: case EX_ELLIPSIS: case EX_NONE:
    break;
  }
  *is_ref = false;
  return false;
}

bool index_view(IndexCtx *c, Expr *e, View **out, bool *is_ref) {
  *is_ref = false;
  bool ok = view_rec(c, e, out, is_ref);
  if (ok) (*out)->expr = e;
  return ok;
}

static Expr *int_node(Arena *a, Expr *proto, ExprKind k, ExprOp op, Expr *x, Expr *y, int64_t ival) {
  Expr *e = arena_alloc(a, sizeof *e);
  memset(e, 0, sizeof *e);
  e->kind = k;
  e->loc = proto->loc;
  e->op = op;
  e->a = x, e->b = y, e->ival = ival;
  e->ty = e->oty = DT_INT32;
  e->weak = k == EX_INT;
  return e;
}

/* How many leading entries of ix are advanced indices (an index array, or
 * the integer in first place broadcast beside them) to be merged into one
 * offset dimension; 1 when only the first entry is. */
static int merged_dims(const NDIndexer *ix) {
  int k = 1;
  for (int d = 1; d < ix->n; d++)
    if (ix->e[d].kind == IX_ARRAY) k = d + 1;
  for (int d = 1; d < k; d++)
    if (ix->e[d].kind != IX_ARRAY || ix->shape[d] == DYN) return 1; /* not contiguous: no merge */
  return k;
}

/* x.at[1, v] (SPEC §8.7): the integer is broadcast to v's shape and is the
 * DMA's offsets; v indexes the next dimension lane by lane, as NumPy's
 * advanced indexing pairs them.  The k leading dims are merged into one
 * (a reshape after the indexer), and the offsets become
 * e0 * (d1 * ... * dk-1) + e1 * (...) + ... + ek-1. */
static Expr *merge_offsets(Arena *a, View *w, Transform *t, const NDIndexer *orig, int k) {
  Expr *sum = NULL;
  int64_t stride = 1;
  for (int d = k - 1; d >= 0; d--) {
    Expr *e = orig->e[d].e;
    Expr *term = stride == 1 ? e : int_node(a, e, EX_BINARY, OP_MUL, e, int_node(a, e, EX_INT, OP_NONE, NULL, NULL, stride), 0);
    sum = sum ? int_node(a, e, EX_BINARY, OP_ADD, term, sum, 0) : term;
    stride *= orig->shape[d];
  }
  Transform *r = arena_alloc(a, sizeof *r);
  memset(r, 0, sizeof *r);
  r->kind = TR_RESHAPE;
  r->loc = t->loc;
  r->in_dtype = r->dtype = t->dtype;
  r->in_rank = t->rank;
  memcpy(r->in_shape, t->shape, sizeof r->in_shape);
  r->rank = t->rank - k + 1;
  r->shape[0] = stride;
  for (int d = 1; d < r->rank; d++) r->shape[d] = t->shape[d + k - 1];
  w->tr[w->ntr++] = r;
  w->rank = r->rank;
  memcpy(w->shape, r->shape, sizeof w->shape);
  return sum;
}

View *index_without_offsets(Arena *a, const View *v, int off_tr, Expr **off_e) {
  View *w = arena_alloc(a, sizeof *w);
  *w = *v;
  Transform *t = arena_alloc(a, sizeof *t);
  *t = *v->tr[off_tr];
  NDIndexer *ix = arena_alloc(a, sizeof *ix);
  *ix = *t->idx;
  int k = off_tr == v->ntr - 1 && v->ntr < MAX_TRANSFORMS && ix->int_rank ? merged_dims(ix) : 1;
  for (int d = 0; d < v->rank; d++)
    if (v->shape[d] == DYN) k = 1; /* a reshape needs static sizes */
  for (int d = 0; d < k; d++) {
    ix->e[d].kind = IX_SLICE;
    ix->e[d].start = 0;
    ix->e[d].start_e = ix->e[d].size_e = NULL;
    ix->e[d].size = ix->shape[d];
    ix->e[d].stride = 1;
    ix->e[d].start_static = ix->e[d].size_static = true;
  }
  ix->int_rank = 0;
  t->idx = ix;
  t->rank = index_result_shape(ix, t->shape);
  w->tr[off_tr] = t;
  w->rank = t->rank;
  memcpy(w->shape, t->shape, sizeof w->shape);
  *off_e = k > 1 ? merge_offsets(a, w, t, v->tr[off_tr]->idx, k) : NULL;
  return w;
}


bool index_bad_value(IndexCtx *c, Loc at, const char *msg) {
  index_fire(c, D_IN_VALUE, at, msg);
  return false;
}

bool index_value(IndexCtx *c, Expr *e, AVal *out) {
  if (!c->eval(c, e, out)) return false;
  if (out->kind != AV_VALUE)
    return index_bad_value(c, e->loc, "this operand is a ref or a DMA descriptor, but a value is needed here (read a ref with get first)");
  return true;
}
