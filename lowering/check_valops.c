/* lowering/check_valops.c -- the value operations' types and rules (SPEC
 * §4.G RV1, §4.K RD1 BC1 BC2; the jnp errors JAX raises while tracing;
 * U1 where the pinned jax registers no SparseCore lowering). */
#include "check_valops.h"

#include <stdio.h>
#include <string.h>

#include "expr.h"

bool valops_builtin(Builtin b) {
  switch (b) {
  case BI_VSUM: case BI_VMAX: case BI_VMIN: case BI_VALL: case BI_VANY: case BI_EXP: case BI_ABS:
  case BI_SQRT: case BI_RSQRT: case BI_LOG: case BI_TANH: case BI_FLIP: case BI_TAKE: case BI_RESHAPE:
  case BI_BITCAST: case BI_CONCAT: case BI_SLICE: return true;
  case BI_NONE: case BI_IOTA: case BI_FULL: case BI_WHERE: case BI_MIN: case BI_MAX: case BI_ASTYPE:
  case BI_DS: case BI_INDICES: case BI_SELECT_REF: case BI_AXIS_SIZE: case BI_CUMSUM: case BI_CUMMAX: case BI_CUMMIN:
  case BI_LAX_CUMSUM: case BI_SORT: case BI_SORT_KV: case BI_SCAN_COUNT: case BI_PACK: case BI_UNPACK: case BI_AR_POPCOUNT: case BI_AR_FFS: break;
  }
  return false;
}

static char *text(IndexCtx *ix, const char *s) { return arena_strdup(ix->arena, s); }

static char *num(IndexCtx *ix, int64_t v) { return index_num(ix, v); }

static char *shape_text(IndexCtx *ix, int rank, const int64_t *shape) { return index_shape_str(ix, rank, shape); }

/* U1 for a primitive with no lowering on this kernel kind; true when it fired. */
static bool unimplemented(IndexCtx *ix, bool scalar, Loc at, const char *prim) {
  return index_fire(ix, D_U1, at, scalar ? "sc_scalar_subcore" : "sc_vector_subcore", prim);
}

/* The axes tuple of a full reduction over rank dimensions: (), (0,), (0, 1). */
static char *axes_text(IndexCtx *ix, int rank) {
  int64_t dims[MAX_RANK];
  for (int i = 0; i < rank; i++) dims[i] = i;
  return shape_text(ix, rank, dims);
}

static const char *reduce_prim(Builtin b) {
  return b == BI_VSUM ? "reduce_sum" : b == BI_VMAX || b == BI_VANY ? "reduce_max" : "reduce_min";
}

/* jnp.sum/max/min lower to tpu.scan + vector.extract (sc_primitives.py
 * _reduce_op_lowering_rule); jnp.all/any through reduce_min/max of floats. */
static bool reduction(IndexCtx *ix, bool scalar, Expr *e, AVal *out) {
  AVal x;
  if (!index_value(ix, e->args[0], &x)) return false;
  bool logical = e->builtin == BI_VALL || e->builtin == BI_VANY;
  if (!logical && x.dtype == DT_BOOL)
    return index_bad_value(ix, e->loc, "jnp.sum, jnp.max and jnp.min need a numeric vector (jnp.any and jnp.all reduce bools)");
  if (logical && x.dtype != DT_BOOL) return index_bad_value(ix, e->loc, "jnp.all and jnp.any need a bool vector: compare first, jnp.all(x != 0)");
  /* jnp.sum promotes integers through np.iinfo, which ml_dtypes' int4
   * (a numpy void, kind 'V') fails (reductions.py _promote_integer_dtype) */
  if (e->builtin == BI_VSUM && dtype_is_subbyte(x.dtype) && index_fire(ix, D_NW1, e->loc)) return false;
  if (scalar && unimplemented(ix, scalar, e->loc, reduce_prim(e->builtin))) return false;
  if (x.rank != 1 && index_fire(ix, D_RD1, e->loc, axes_text(ix, x.rank))) return false;
  e->sval = x.rank ? x.shape[0] : 1;
  memset(out, 0, sizeof *out);
  out->kind = AV_VALUE;
  out->dtype = logical ? DT_BOOL : x.dtype;
  return true;
}

static bool math(IndexCtx *ix, bool scalar, Expr *e, AVal *out) {
  if (!index_value(ix, e->args[0], out)) return false;
  out->is_static = false;
  if (e->builtin == BI_ABS) {
    if (out->dtype == DT_BOOL) return index_bad_value(ix, e->loc, "jnp.abs needs a number, not a bool");
    /* lax.abs_p is the one unop built with supports_narrow_ints=False;
     * jnp.abs returns an unsigned array unchanged, so uint4 passes */
    if (out->dtype == DT_INT4 && index_fire(ix, D_NW2, e->loc, "abs", dtype_name(out->dtype))) return false;
    return true;
  }
  if (!dtype_is_float(out->dtype)) out->dtype = DT_FLOAT32, out->weak = false;
  static const char *const prim[BUILTIN_COUNT] = {[BI_SQRT] = "sqrt", [BI_RSQRT] = "rsqrt", [BI_LOG] = "log", [BI_TANH] = "tanh"};
  if (prim[e->builtin] && unimplemented(ix, scalar, e->loc, prim[e->builtin])) return false;
  return true;
}

/* jnp.flip: lax.rev over every dimension; SC lowers only dimensions (0,),
 * gathering with num_lanes indices whatever the vector's length. */
static bool flip(IndexCtx *ix, bool scalar, int64_t lanes, Expr *e, AVal *out) {
  if (!index_value(ix, e->args[0], out)) return false;
  if (scalar && unimplemented(ix, scalar, e->loc, "rev")) return false;
  if (out->rank != 1 && index_fire(ix, D_RV1, e->loc, axes_text(ix, out->rank))) return false;
  if (out->rank == 1 && out->shape[0] != lanes) {
    char msg[400];
    snprintf(msg, sizeof msg,
             "jnp.flip of a %s vector: lax.rev's SparseCore rule gathers with num_lanes (%lld) indices, so the pinned jax's "
             "Mosaic verifier rejects the result; flip vectors of exactly num_lanes lanes",
             shape_text(ix, 1, out->shape), (long long)lanes);
    if (index_fire(ix, D_SC_UNSUP, e->loc, text(ix, msg))) return false;
  }
  e->sval = out->rank ? out->shape[0] : 1;
  out->is_static = false;
  return true;
}

/* jnp.take_along_axis(x, idx) along axis 0 (x[idx] on a value): lax.gather,
 * lowered to tpu.dynamic_gather. */
static bool take(IndexCtx *ix, Expr *e, AVal *out) {
  AVal idx;
  if (!index_value(ix, e->args[0], out) || !index_value(ix, e->args[1], &idx)) return false;
  /* jnp.take_along_axis checks the indices' dtype first (jax 0.10.2
   * numpy/indexing.py:852-854), then their rank (863-864) */
  if (!dtype_is_int(idx.dtype) && index_fire(ix, D_TA0, e->loc, dtype_name(idx.dtype))) return false;
  if (idx.rank != out->rank && index_fire(ix, D_TA1, e->loc, num(ix, idx.rank), num(ix, out->rank))) return false;
  if (!dtype_is_int(idx.dtype)) return index_bad_value(ix, e->args[1]->loc, "jnp.take_along_axis's indices must be integers");
  if (out->rank != 1) return index_bad_value(ix, e->loc, "sc-sim's jnp.take_along_axis gathers from a 1-D vector along axis 0");
  if (idx.shape[0] != out->shape[0])
    return index_bad_value(ix, e->loc, "jnp.take_along_axis's indices must have the vector's shape (tpu.dynamic_gather)");
  e->sval = out->shape[0];
  out->is_static = false;
  return true;
}

static bool static_dim(IndexCtx *ix, Expr *d, int64_t *v) {
  AVal a;
  if (!index_value(ix, d, &a)) return false;
  if (a.rank || !a.is_static || !dtype_is_int(a.dtype) || a.sval.i < 0 || a.sval.i > (1 << 24))
    return index_bad_value(ix, d->loc, "a size here must be a non-negative integer literal (at most 2**24)");
  d->has_sval = true, d->sval = *v = a.sval.i;
  return true;
}

static int64_t count(int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= shape[i];
  return n;
}

static bool reshape(IndexCtx *ix, Expr *e, AVal *out) {
  if (!index_value(ix, e->args[0], out)) return false;
  Expr *sh = e->args[1];
  int rank = sh->kind == EX_LIST ? sh->nargs : 1;
  if (rank > MAX_RANK) return index_bad_value(ix, sh->loc, "jnp.reshape's shape has more than 8 dimensions");
  int64_t shape[MAX_RANK];
  for (int i = 0; i < rank; i++)
    if (!static_dim(ix, sh->kind == EX_LIST ? sh->args[i] : sh, &shape[i])) return false;
  int64_t have = count(out->rank, out->shape), want = count(rank, shape);
  if (have != want && index_fire(ix, D_VR1, e->loc, shape_text(ix, out->rank, out->shape), num(ix, have), shape_text(ix, rank, shape), num(ix, want)))
    return false;
  out->rank = rank;
  memcpy(out->shape, shape, sizeof shape);
  out->is_static = false;
  return true;
}

/* plsc.bitcast (sc_primitives.py _bitcast_abstract_eval): the last
 * dimension scales by the ratio of the bit widths. */
static bool bitcast(IndexCtx *ix, Expr *e, AVal *out) {
  const char *tn = e->args[1]->kind == EX_NAME ? e->args[1]->name : NULL;
  if (tn && (!strncmp(tn, "jnp.", 4) || !strncmp(tn, "np.", 3))) tn = strchr(tn, '.') + 1;
  if (!tn) return index_bad_value(ix, e->args[1]->loc, "plsc.bitcast's second argument must be a dtype name such as int32");
  Dtype t;
  if (!dtype_lookup(tn, &t)) {
    dtype_unknown(ix->d, e->args[1]->loc, tn);
    ix->failed = true;
    return false;
  }
  if (!index_value(ix, e->args[0], out)) return false;
  int ob = dtype_bits(out->dtype), nb = dtype_bits(t);
  e->dtype = t;
  out->is_static = false;
  if (ob == nb) return out->dtype = t, true;
  if (out->rank == 0) return !index_fire(ix, D_BC1, e->loc, num(ix, ob), num(ix, nb)) && (out->dtype = t, true);
  int64_t m = out->shape[out->rank - 1];
  if (m * ob % nb && index_fire(ix, D_BC2, e->loc, dtype_name(out->dtype), num(ix, ob), dtype_name(t), num(ix, nb), num(ix, m), num(ix, ob), num(ix, nb)))
    return false;
  out->shape[out->rank - 1] = m * ob / nb;
  out->dtype = t;
  return true;
}

/* jnp.concatenate([a, b, ...]) along axis 0: lax.concatenate, lowered to
 * tpu.concatenate. */
static bool concat(IndexCtx *ix, Expr *e, AVal *out) {
  Expr *l = e->args[0];
  if (l->kind != EX_LIST || l->nargs < 1) return index_bad_value(ix, e->loc, builtin_usage(BI_CONCAT));
  AVal it[64];
  memset(it, 0, sizeof it);
  if (l->nargs > 64) return index_bad_value(ix, l->loc, "jnp.concatenate joins at most 64 vectors here");
  char shapes[512] = "";
  size_t len = 0;
  bool ranks = false, dims = false;
  for (int k = 0; k < l->nargs; k++) {
    if (!index_value(ix, l->args[k], &it[k])) return false;
    char b[128];
    fmt_shape(b, sizeof b, it[k].rank, it[k].shape);
    len += (size_t)snprintf(shapes + len, len < sizeof shapes ? sizeof shapes - len : 0, "%s%s", k ? ", " : "", b);
    if (len >= sizeof shapes) len = sizeof shapes - 1;
    ranks |= it[k].rank != it[0].rank;
    for (int d = 1; !ranks && d < it[k].rank; d++) dims |= it[k].shape[d] != it[0].shape[d];
  }
  if (!ranks && it[0].rank == 0) return index_bad_value(ix, e->loc, "Zero-dimensional arrays cannot be concatenated.");
  if (ranks && index_fire(ix, D_CC1, e->loc, text(ix, shapes))) return false;
  if (dims && index_fire(ix, D_CC2, e->loc, text(ix, shapes))) return false;
  *out = it[0];
  out->is_static = out->weak = false;
  for (int k = 1; k < l->nargs; k++) {
    if (it[k].dtype != it[0].dtype) return index_bad_value(ix, l->args[k]->loc, "jnp.concatenate's vectors must share one dtype here (astype first)");
    out->shape[0] += it[k].shape[0];
  }
  l->ty = out->dtype;
  return true;
}

/* lax.slice_in_dim(x, start, limit) along axis 0 (jnp.split's pieces and
 * x[a:b] on a value): static bounds, a negative one counting from the end. */
static bool slice_in_dim(IndexCtx *ix, Expr *e, AVal *out) {
  if (!index_value(ix, e->args[0], out)) return false;
  if (out->rank == 0) return index_bad_value(ix, e->loc, "lax.slice_in_dim needs a vector, not a scalar");
  int64_t b[2], n = out->shape[0];
  for (int k = 0; k < 2; k++) {
    AVal a;
    if (!index_value(ix, e->args[1 + k], &a)) return false;
    if (a.rank || !a.is_static || !dtype_is_int(a.dtype)) return index_bad_value(ix, e->args[1 + k]->loc, "lax.slice_in_dim's bounds must be integer literals");
    b[k] = a.sval.i < 0 ? a.sval.i + n : a.sval.i;
    e->args[1 + k]->has_sval = true, e->args[1 + k]->sval = b[k];
  }
  int64_t st[MAX_RANK], lim[MAX_RANK];
  memset(st, 0, sizeof st);
  memcpy(lim, out->shape, sizeof lim);
  st[0] = b[0], lim[0] = b[1];
  if (b[1] > n && index_fire(ix, D_VS1, e->loc, shape_text(ix, out->rank, lim), shape_text(ix, out->rank, out->shape))) return false;
  if (b[1] < b[0] && index_fire(ix, D_VS2, e->loc, shape_text(ix, out->rank, st), shape_text(ix, out->rank, lim))) return false;
  if (b[0] < 0 || b[1] > n || b[1] < b[0]) return index_bad_value(ix, e->loc, "lax.slice_in_dim's bounds are outside the vector");
  out->shape[0] = b[1] - b[0];
  out->is_static = false;
  return !index_zero_size(ix, e->loc, "slice", out->rank, out->shape);
}

bool check_valops_subscript(IndexCtx *ix, const Program *p, Expr *e, AVal *out, bool *handled) {
  AVal k;
  *handled = false;
  if (e->nargs != 1 || !ix->eval(ix, e->args[0], &k)) return false;
  if (k.kind != AV_VALUE || k.rank != 1 || !dtype_is_int(k.dtype)) return false;
  Expr **args = arena_alloc(ix->arena, 2 * sizeof *args);
  args[0] = e->a, args[1] = e->args[0];
  e->kind = EX_CALL, e->builtin = BI_TAKE, e->name = builtin_name(BI_TAKE);
  e->args = args, e->nargs = 2, e->a = NULL;
  e->kw = arena_alloc(ix->arena, 2 * sizeof *e->kw);
  e->kwloc = NULL;
  *handled = true;
  return check_valops_call(ix, p, e, out);
}

bool check_valops_call(IndexCtx *ix, const Program *p, Expr *e, AVal *out) {
  bool scalar = p->kernel == KERNEL_SCALAR;
  switch (e->builtin) {
  case BI_VSUM: case BI_VMAX: case BI_VMIN: case BI_VALL: case BI_VANY: return reduction(ix, scalar, e, out);
  case BI_EXP: case BI_ABS: case BI_SQRT: case BI_RSQRT: case BI_LOG: case BI_TANH: return math(ix, scalar, e, out);
  case BI_FLIP: return flip(ix, scalar, p->params.num_lanes, e, out);
  case BI_TAKE: return take(ix, e, out);
  case BI_RESHAPE: return reshape(ix, e, out);
  case BI_BITCAST: return bitcast(ix, e, out);
  case BI_CONCAT: return concat(ix, e, out);
  case BI_SLICE: return slice_in_dim(ix, e, out);
  case BI_NONE: case BI_IOTA: case BI_FULL: case BI_WHERE: case BI_MIN: case BI_MAX: case BI_ASTYPE:
  case BI_DS: case BI_INDICES: case BI_SELECT_REF: case BI_AXIS_SIZE: case BI_CUMSUM: case BI_CUMMAX: case BI_CUMMIN:
  case BI_LAX_CUMSUM: case BI_SORT: case BI_SORT_KV: case BI_SCAN_COUNT: case BI_PACK: case BI_UNPACK: case BI_AR_POPCOUNT: case BI_AR_FFS: break;
  }
  return index_bad_value(ix, e->loc, "not a value operation");
}
