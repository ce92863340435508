/* lowering/check_scanops.c -- the tuple-valued cross-lane functions'
 * types and rules: plsc.sort_key_val (SPEC §4.K SK1-SK6, in the order of
 * the pinned jax's _masked_sort_abstract_eval, sc_primitives.py) and
 * plsc.scan_count (SC1-SC3, _scan_count_abstract_eval). */
#include "check_scanops.h"

#include <stdio.h>
#include <string.h>

#include "scanops.h"

/* A Python bool or int given as a literal (descending=True). */
static bool static_flag(IndexCtx *ix, Expr *e, int64_t *v) {
  AVal a;
  if (!ix->eval(ix, e, &a)) return false;
  if (a.rank || !a.is_static || (!dtype_is_int(a.dtype) && a.dtype != DT_BOOL))
    return index_bad_value(ix, e->loc, "descending must be a literal here (True or False)");
  *v = a.sval.i;
  e->has_sval = true, e->sval = *v;
  return true;
}

static bool is_lanes(const AVal *a, int64_t lanes) { return a->rank == 1 && a->shape[0] == lanes; }

static char *shape_of(IndexCtx *ix, const AVal *a) { return index_shape_str(ix, a->rank, a->shape); }

static AVal vector_av(Dtype t, int64_t lanes) {
  AVal a;
  memset(&a, 0, sizeof a);
  a.kind = AV_VALUE, a.dtype = t, a.rank = 1, a.shape[0] = lanes;
  return a;
}

/* plsc.sort_key_val(keys, values, *, mask=None, descending=False). */
static bool sort_key_val(IndexCtx *ix, const Program *p, Expr *e, AVal *out, int *n) {
  Expr *ke = scanop_arg(e, 0, NULL), *ve = scanop_arg(e, 1, NULL), *me = scanop_arg(e, -1, "mask");
  Expr *de = scanop_arg(e, -1, "descending");
  if (!ke || !ve || scanop_arg(e, 2, NULL)) return index_bad_value(ix, e->loc, builtin_usage(e->builtin));
  AVal k, v, m;
  int64_t lanes = p->params.num_lanes, desc = 0;
  char l[40];
  snprintf(l, sizeof l, "%lld", (long long)lanes);
  if (!index_value(ix, ke, &k) || !index_value(ix, ve, &v) || (me && !index_value(ix, me, &m))) return false;
  if (de && !static_flag(ix, de, &desc)) return false;
  if (k.dtype != DT_UINT32 && k.dtype != DT_INT32 && k.dtype != DT_FLOAT32 && index_fire(ix, D_SK1, ke->loc, dtype_name(k.dtype)))
    return false;
  if (!is_lanes(&k, lanes) && index_fire(ix, D_SK2, ke->loc, shape_of(ix, &k), index_num(ix, lanes))) return false;
  if (dtype_size(v.dtype) != 4 && index_fire(ix, D_SK3, ve->loc, dtype_name(v.dtype))) return false;
  if (!is_lanes(&v, lanes) && index_fire(ix, D_SK4, ve->loc, shape_of(ix, &v), index_num(ix, lanes))) return false;
  if (me && m.dtype != DT_BOOL && index_fire(ix, D_SK5, me->loc, dtype_name(m.dtype))) return false;
  if (me && !is_lanes(&m, lanes) && index_fire(ix, D_SK6, me->loc, shape_of(ix, &m), index_num(ix, lanes))) return false;
  e->sval = lanes; /* for the lowering's masks (has_sval stays false); descending= keeps its own sval */
  e->ty = k.dtype;
  out[0] = vector_av(k.dtype, lanes);
  out[1] = vector_av(v.dtype, lanes);
  out[2] = vector_av(DT_BOOL, lanes);
  *n = me ? 3 : 2;
  return true;
}

/* plsc.scan_count(x, mask=None): SC1-SC3 in _scan_count_abstract_eval's
 * order (no mask: lax.full(x.shape, True), which passes SC2 and SC3). */
static bool scan_count(IndexCtx *ix, Expr *e, AVal *out, int *n) {
  Expr *xe = scanop_arg(e, 0, NULL), *me = scanop_arg(e, -1, "mask");
  if (!xe || scanop_arg(e, 1, NULL)) return index_bad_value(ix, e->loc, builtin_usage(e->builtin));
  AVal x, m;
  if (!index_value(ix, xe, &x) || (me && !index_value(ix, me, &m))) return false;
  if (x.dtype != DT_UINT32 && x.dtype != DT_INT32 && x.dtype != DT_FLOAT32 && index_fire(ix, D_SC1, xe->loc, dtype_name(x.dtype)))
    return false;
  if (me && m.dtype != DT_BOOL && index_fire(ix, D_SC2, me->loc, dtype_name(m.dtype))) return false;
  if (me && (m.rank != x.rank || memcmp(m.shape, x.shape, sizeof(int64_t) * (size_t)x.rank)) &&
      index_fire(ix, D_SC3, me->loc, shape_of(ix, &x), shape_of(ix, &m)))
    return false;
  if (x.rank != 1) {
    char msg[200];
    snprintf(msg, sizeof msg, "scan_count of a %s value: sc-sim's tpu.scan_count takes one vector (rank 1)", shape_of(ix, &x));
    if (index_fire(ix, D_SC_UNSUP, e->loc, arena_strdup(ix->arena, msg))) return false;
  }
  e->sval = x.rank ? x.shape[0] : 1; /* the lane count, for the lowering's all-true mask */
  e->ty = x.dtype;
  out[0] = out[1] = x; /* upstream's results: x's shape, int32 counts and a bool mask */
  out[0].dtype = DT_INT32, out[1].dtype = DT_BOOL;
  out[0].weak = out[1].weak = out[0].is_static = out[1].is_static = false;
  *n = 2;
  return true;
}

/* ---- plsc.pack / plsc.unpack (PK1-PK6, UP1-UP4) ---------------------- */
/* format=: 0 interleaved, 1 compressed; -1 with *text for another literal
 * (PK6 prints it).  Python's TypeError when it is missing. */
static bool pack_format(IndexCtx *ix, const Expr *e, int *fmt, const char **text) {
  const Expr *fe = scanop_arg(e, -1, "format");
  char msg[120];
  *text = NULL;
  if (!fe) {
    snprintf(msg, sizeof msg, "TypeError: %s() missing 1 required keyword-only argument: 'format'", builtin_name(e->builtin) + 5);
    return index_bad_value(ix, e->loc, msg);
  }
  if (fe->kind == EX_NAME && !strcmp(fe->name, "plsc.PackFormat.INTERLEAVED")) return *fmt = 0, true;
  if (fe->kind == EX_NAME && !strcmp(fe->name, "plsc.PackFormat.COMPRESSED")) return *fmt = 1, true;
  if (fe->kind == EX_INT) return *fmt = -1, *text = index_num(ix, fe->ival), true;
  if (fe->kind == EX_BOOL) return *fmt = -1, *text = fe->ival ? "True" : "False", true;
  return index_bad_value(ix, fe->loc, "format= takes plsc.PackFormat.INTERLEAVED or plsc.PackFormat.COMPRESSED");
}

/* preferred_element_type=: a dtype name (jnp. or np. optional), None or
 * absent (*t DT_COUNT). */
static bool preferred(IndexCtx *ix, const Expr *e, Dtype *t) {
  const Expr *pe = scanop_arg(e, -1, "preferred_element_type");
  *t = DT_COUNT;
  if (!pe || pe->kind == EX_NONE) return true;
  const char *n = pe->kind == EX_NAME ? pe->name : NULL;
  if (n && (!strncmp(n, "jnp.", 4) || !strncmp(n, "np.", 3))) n = strchr(n, '.') + 1;
  if (n && dtype_lookup(n, t)) return true;
  return index_bad_value(ix, pe->loc, "preferred_element_type= takes a dtype name such as int16, or None");
}

/* A conversion sc-sim's pack and unpack make: within integers or within
 * floats (upstream's rules accept any dtype of the right width). */
static bool same_kind(IndexCtx *ix, const Expr *e, Dtype a, Dtype b) {
  if (dtype_is_float(a) == dtype_is_float(b) && a != DT_BOOL && b != DT_BOOL) return true;
  char msg[200];
  snprintf(msg, sizeof msg, "%s between %s and %s: sc-sim converts within integers or within floats only", builtin_name(e->builtin), dtype_name(a),
           dtype_name(b));
  index_fire(ix, D_SC_UNSUP, e->loc, arena_strdup(ix->arena, msg));
  return false;
}

bool check_scanops_pack(IndexCtx *ix, Expr *e, AVal *out) {
  Expr *ae = scanop_arg(e, 0, NULL), *be = scanop_arg(e, 1, NULL);
  if (!ae || !be || scanop_arg(e, 2, NULL)) return index_bad_value(ix, e->loc, builtin_usage(e->builtin));
  AVal a, b;
  Dtype pt, t;
  int fmt;
  const char *ftext;
  if (!index_value(ix, ae, &a) || !index_value(ix, be, &b) || !preferred(ix, e, &pt) || !pack_format(ix, e, &fmt, &ftext)) return false;
  if ((a.rank != b.rank || memcmp(a.shape, b.shape, sizeof(int64_t) * (size_t)a.rank)) &&
      index_fire(ix, D_PK1, e->loc, shape_of(ix, &a), shape_of(ix, &b)))
    return false;
  if (a.rank != 1 && index_fire(ix, D_PK2, e->loc, index_num(ix, a.rank))) return false;
  if (a.dtype != b.dtype && index_fire(ix, D_PK3, e->loc, dtype_name(a.dtype), dtype_name(b.dtype))) return false;
  if (pt == DT_COUNT) {
    t = a.dtype == DT_FLOAT32 ? DT_BFLOAT16 : DT_INT16;
    if (a.dtype != DT_FLOAT32 && a.dtype != DT_INT32 && index_fire(ix, D_PK4, e->loc, dtype_name(a.dtype))) return false;
  } else {
    t = pt;
    int half = dtype_size(a.dtype) * 4;
    if (dtype_bits(pt) != half && index_fire(ix, D_PK5, e->loc, index_num(ix, half), index_num(ix, dtype_bits(pt)))) return false;
  }
  if (fmt < 0 && index_fire(ix, D_PK6, e->loc, ftext)) return false;
  if (!same_kind(ix, e, a.dtype, t)) return false;
  e->sval = a.shape[0] << 1 | fmt; /* for the lowering: the length and the format */
  e->dtype = t;
  *out = vector_av(t, fmt ? a.shape[0] : 2 * a.shape[0]);
  if (fmt) out->rank = 2, out->shape[1] = 2;
  return true;
}

static bool unpack(IndexCtx *ix, Expr *e, AVal *out, int *n) {
  Expr *xe = scanop_arg(e, 0, NULL);
  if (!xe || scanop_arg(e, 1, NULL)) return index_bad_value(ix, e->loc, builtin_usage(e->builtin));
  AVal x;
  Dtype pt, t;
  int fmt;
  const char *ftext;
  if (!index_value(ix, xe, &x) || !preferred(ix, e, &pt) || !pack_format(ix, e, &fmt, &ftext)) return false;
  if (fmt < 0) return index_bad_value(ix, e->loc, "format= of plsc.unpack must be a plsc.PackFormat (the pinned jax fails on format.value)");
  int64_t size = 1;
  for (int i = 0; i < x.rank; i++) size *= x.shape[i];
  if (fmt == 0 && (x.rank != 1 || size % 2) && index_fire(ix, D_UP1, e->loc, shape_of(ix, &x))) return false;
  if (fmt == 1 && (x.rank != 2 || x.shape[1] != 2) && index_fire(ix, D_UP2, e->loc, shape_of(ix, &x))) return false;
  if (pt == DT_COUNT) {
    t = x.dtype == DT_BFLOAT16 ? DT_FLOAT32 : DT_INT32;
    if (x.dtype != DT_BFLOAT16 && x.dtype != DT_INT16 && index_fire(ix, D_UP3, e->loc, dtype_name(x.dtype))) return false;
  } else {
    t = pt;
    int twice = dtype_size(x.dtype) * 16;
    if (dtype_bits(pt) != twice && index_fire(ix, D_UP4, e->loc, index_num(ix, twice), index_num(ix, dtype_bits(pt))))
      return false;
  }
  if (!same_kind(ix, e, x.dtype, t)) return false;
  e->sval = size / 2 << 1 | fmt; /* for the lowering: each half's length and the format */
  e->dtype = t;
  out[0] = out[1] = vector_av(t, size / 2);
  *n = 2;
  return true;
}

/* ---- lax.sort([keys, values...], dimension=-1, num_keys=1) ----------------
 * SO1, SO2, SO3 in _sort_lowering_rule's order (phase L); upstream sorts
 * the keys once per value operand, with no sign flip. */
static bool static_int(IndexCtx *ix, Expr *e, const char *what, int64_t *v) {
  AVal a;
  char msg[80];
  if (!ix->eval(ix, e, &a)) return false;
  snprintf(msg, sizeof msg, "%s must be a literal here", what);
  if (a.rank || !a.is_static || !dtype_is_int(a.dtype)) return index_bad_value(ix, e->loc, msg);
  *v = a.sval.i;
  e->has_sval = true, e->sval = *v;
  return true;
}

static bool sort_operands(IndexCtx *ix, const Program *p, Expr *e, AVal *out, int *n) {
  Expr *le = e->args[0], *de = scanop_arg(e, -1, "dimension"), *ke = scanop_arg(e, -1, "num_keys");
  if (!e->name || strcmp(e->name, "lax.sort") || scanop_arg(e, 1, NULL) || scanop_arg(e, -1, "axis") || scanop_arg(e, -1, "descending"))
    return index_bad_value(ix, e->loc, "several operands are for lax.sort([keys, values...], dimension=-1, num_keys=1)");
  if (le->nargs < 2 || le->nargs > 3) return index_bad_value(ix, le->loc, "sc-sim's lax.sort takes the keys and one or two value operands");
  int64_t dim = -1, keys = 1, lanes = p->params.num_lanes;
  for (int i = 0; i < le->nargs; i++) {
    if (!index_value(ix, le->args[i], &out[i])) return false;
    if (out[i].rank != out[0].rank || memcmp(out[i].shape, out[0].shape, sizeof(int64_t) * (size_t)out[0].rank))
      return index_bad_value(ix, le->args[i]->loc, "lax.sort's operands must have one shape");
    out[i].weak = out[i].is_static = false;
  }
  if ((de && !static_int(ix, de, "dimension", &dim)) || (ke && !static_int(ix, ke, "num_keys", &keys))) return false;
  if (keys < 1 || keys > le->nargs) return index_bad_value(ix, (ke ? ke : e)->loc, "num_keys must be between 1 and the number of operands");
  if (out[0].rank == 0) return index_bad_value(ix, le->loc, "a sort needs arrays, not scalars");
  if (dim < -out[0].rank || dim >= out[0].rank) return index_bad_value(ix, (de ? de : e)->loc, "the sort axis is out of range for this value");
  if (dim < 0) dim += out[0].rank;
  if (p->kernel == KERNEL_SCALAR && index_fire(ix, D_U1, e->loc, "sc_scalar_subcore", "sort")) return false;
  if (dim != 0 && index_fire(ix, D_SO1, e->loc, index_num(ix, dim))) return false;
  if (keys != 1 && index_fire(ix, D_SO2, e->loc)) return false;
  for (int i = 0; i < le->nargs; i++)
    if (!is_lanes(&out[i], lanes) && index_fire(ix, D_SO3, e->loc, index_num(ix, i), shape_of(ix, &out[i]), index_num(ix, lanes))) return false;
  for (int i = 0; i < le->nargs; i++) {
    Dtype t = out[i].dtype;
    if (i == 0 ? t == DT_INT32 || t == DT_UINT32 || t == DT_FLOAT32 : dtype_size(t) == 4 && t != DT_BOOL) continue;
    char msg[200];
    snprintf(msg, sizeof msg, "lax.sort of %s %s: sc-sim's tpu.sort takes uint32, int32 or float32 keys and 32-bit values", i ? "values" : "keys",
             dtype_name(t));
    if (index_fire(ix, D_SC_UNSUP, e->loc, arena_strdup(ix->arena, msg))) return false;
  }
  e->sval = lanes; /* the all-true mask's lanes */
  e->ty = out[0].dtype;
  *n = le->nargs;
  return true;
}

bool check_scanops_tuple(IndexCtx *ix, const Program *p, Expr *e, AVal *out, int *n) {
  *n = 0;
  if (e->kind == EX_CALL && e->builtin == BI_SORT_KV) return sort_key_val(ix, p, e, out, n);
  if (e->kind == EX_CALL && e->builtin == BI_SCAN_COUNT) return scan_count(ix, e, out, n);
  if (e->kind == EX_CALL && e->builtin == BI_UNPACK) return unpack(ix, e, out, n);
  if (e->kind == EX_CALL && e->builtin == BI_SORT && e->nargs && e->args[0]->kind == EX_LIST) return sort_operands(ix, p, e, out, n);
  return index_bad_value(ix, e->loc, "a let of several names unpacks a function with several results (plsc.sort_key_val, plsc.scan_count, plsc.unpack)");
}

bool check_scanops_unpack(IndexCtx *ix, Loc at, int want, int have) {
  char msg[160];
  /* Python's own messages for a tuple unpacking of the wrong length */
  if (have < want) snprintf(msg, sizeof msg, "ValueError: not enough values to unpack (expected %d, got %d)", want, have);
  else if (have > want) snprintf(msg, sizeof msg, "ValueError: too many values to unpack (expected %d)", want);
  else return true;
  return index_bad_value(ix, at, msg);
}
