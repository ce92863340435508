/* lowering/check.c -- value typing and the per-operation rules. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expr.h"
#include "check_scanops.h"
#include "check_valops.h"
#include "index.h"
#include "mosaic.h"
#include "scanops.h"

/* ---- the checker state --------------------------------------------- */
typedef struct {
  const char *name;
  AVal v;
} Binding;

typedef struct {
  IndexCtx ix; /* first: the index callbacks receive &c->ix */
  Program *p;
  Binding *env;
  int nenv, capenv;
  NameIndex latest; /* name -> its latest binding in env */
  int64_t work;     /* operations checked, all passes: bounds re-traced loop bodies */
  /* GG3 / GSC4: a rule of Mosaic's verifier found while checking (phase V,
   * after every phase-L rule); D_COUNT when none */
  DiagId vpend;
  Loc vpend_at;
  char vpend_arg[3][32];
} Checker;

/* A loop whose weakly typed carries change type is traced twice, as JAX
 * does; nested, that doubles per level, so the checking work is bounded. */
#define CHECK_MAX_WORK 20000000LL

static const char *G5_VMEM_HINT =
    " To load a scalar from VMEM, load an array first and then extract a particular element, e.g. "
    "``v = ref[pl.ds(idx, ...)]; v[0]``.";
static const char *G5_SMEM_ARRAY = " Trying to load an array of shape {out_aval.shape}.";
static const char *S5_SMEM_ARRAY = "Trying to swap an array of shape {out_aval.shape}.";
static const char *MSG_STRIDED = "Strided slices of references are unsupported.";
static const char *MSG_BITCAST_1D = "Bitcast 1D ref with bitwidth change is not supported.";
static const char *MSG_RESHAPE_1D = "Reshape 1D ref is not supported.";

/* GG3 / GSC4 in jax 0.10.2: the gather/scatter abstract evals take any mask
 * dtype (sc_primitives.py:256-259, 330-333) and Mosaic's verifier rejects
 * the tpu.vector_load_idx / vector_store_idx mask operand (after the base
 * and the indices; a store's value comes first).  Kept for after phase L. */
static void pend_mask(Checker *c, bool gather, Loc at, int nidx, int64_t n, Dtype t) {
  if (c->ix.phase != 'L' || c->vpend != D_COUNT) return;
  c->vpend = gather ? D_GG3 : D_GSC4;
  c->vpend_at = at;
  snprintf(c->vpend_arg[0], sizeof c->vpend_arg[0], "%d", nidx + (gather ? 1 : 2));
  snprintf(c->vpend_arg[1], sizeof c->vpend_arg[1], "%lld", (long long)n);
  snprintf(c->vpend_arg[2], sizeof c->vpend_arg[2], "%s", mosaic_elem_name(t));
}

static bool fire(Checker *c, DiagId id, Loc at, ...) {
  char ph = diag_phase(id);
  if (ph && ph != c->ix.phase) return false;
  va_list ap;
  va_start(ap, at);
  diag_vset(c->ix.d, id, at, ap);
  va_end(ap);
  c->ix.failed = true;
  return true;
}

static void note(Checker *c, const char *fmt, const char *a, const char *b) {
  if (!c->ix.failed) return;
  char buf[512];
  snprintf(buf, sizeof buf, fmt, a, b);
  diag_note(c->ix.d, "%s", buf);
}

static char *str(Checker *c, const char *s) { return arena_strdup(c->ix.arena, s); }

static char *num(Checker *c, int64_t v) { return index_num(&c->ix, v); }

static char *shape_str(Checker *c, int rank, const int64_t *shape) { return index_shape_str(&c->ix, rank, shape); }

static void bind(Checker *c, const char *name, const AVal *v) {
  if (!name) return;
  if (c->nenv == c->capenv) {
    int cap = c->capenv ? c->capenv * 2 : 32;
    Binding *b = arena_alloc(c->ix.arena, sizeof *b * (size_t)cap);
    if (c->nenv) memcpy(b, c->env, sizeof *b * (size_t)c->nenv);
    c->env = b;
    c->capenv = cap;
  }
  names_put(&c->latest, name, c->nenv);
  c->env[c->nenv].name = name;
  c->env[c->nenv].v = *v;
  c->env[c->nenv++].v.is_static = false; /* a name is dynamic even when bound to a literal */
}

static const AVal *lookup(Checker *c, const char *name) {
  int i = names_get(&c->latest, name);
  return i >= 0 ? &c->env[i].v : NULL;
}

/* ---- values ---------------------------------------------------------- */
static AVal scalar_av(Dtype t, bool weak) {
  AVal a;
  memset(&a, 0, sizeof a);
  a.kind = AV_VALUE;
  a.dtype = t;
  a.weak = weak;
  return a;
}

static bool eval(IndexCtx *ix, Expr *e, AVal *out);

static bool input_error(Checker *c, Loc at, const char *msg) {
  fire(c, D_IN_VALUE, at, msg);
  return false;
}

static bool eval_value(Checker *c, Expr *e, AVal *out) {
  if (!eval(&c->ix, e, out)) return false;
  if (out->kind != AV_VALUE) {
    char msg[300], text[200];
    expr_print(e, text, sizeof text);
    snprintf(msg, sizeof msg, "'%.200s' is a %s, but a value is needed here", e->text ? e->text : text,
             out->kind == AV_REF ? "ref (read it with get first)" : "DMA descriptor");
    return input_error(c, e->loc, msg);
  }
  return true;
}

/* JAX's promotion for the cases the format allows (SPEC §9.4). */
static bool promote(Checker *c, Loc at, const AVal *a, const AVal *b, Dtype *t, bool *weak) {
  if (a->weak && b->weak) {
    *weak = true;
    if (dtype_is_float(a->dtype) || dtype_is_float(b->dtype)) *t = DT_FLOAT32;
    else if (a->dtype == DT_BOOL && b->dtype == DT_BOOL) *t = DT_BOOL;
    else *t = DT_INT32;
    return true;
  }
  *weak = false;
  if (a->weak || b->weak) {
    const AVal *w = a->weak ? a : b, *s = a->weak ? b : a;
    if (dtype_is_float(w->dtype) && !dtype_is_float(s->dtype)) *t = DT_FLOAT32;
    else if (s->dtype == DT_BOOL && w->dtype != DT_BOOL) *t = DT_INT32;
    else *t = s->dtype;
    return true;
  }
  if (a->dtype != b->dtype) {
    char msg[300];
    snprintf(msg, sizeof msg, "operands have different dtypes, %s and %s: convert one with astype(v, dtype)",
             dtype_name(a->dtype), dtype_name(b->dtype));
    return input_error(c, at, msg);
  }
  *t = a->dtype;
  return true;
}

static bool bshape(Checker *c, Loc at, const AVal *a, const AVal *b, AVal *r) {
  const AVal *big = a->rank >= b->rank ? a : b, *small = big == a ? b : a;
  if (small->rank && (small->rank != big->rank || memcmp(small->shape, big->shape, sizeof(int64_t) * (size_t)big->rank))) {
    char msg[400], sa[128], sb[128];
    fmt_shape(sa, sizeof sa, a->rank, a->shape);
    fmt_shape(sb, sizeof sb, b->rank, b->shape);
    snprintf(msg, sizeof msg, "operands have shapes %s and %s: only a scalar broadcasts against a vector", sa, sb);
    return input_error(c, at, msg);
  }
  r->rank = big->rank;
  memcpy(r->shape, big->shape, sizeof r->shape);
  return true;
}

static bool is_cmp(ExprOp op) { return op >= OP_EQ && op <= OP_GE; }

static bool static_fold(const AVal *a, const AVal *b, ExprOp op, AVal *r) {
  if (!a->is_static || !b->is_static || dtype_is_float(r->dtype) || dtype_is_float(a->dtype) || dtype_is_float(b->dtype))
    return false;
  int64_t x = a->sval.i, y = b->sval.i, v = 0;
  switch (op) {
  case OP_ADD: v = (int64_t)((uint64_t)x + (uint64_t)y); break;
  case OP_SUB: v = (int64_t)((uint64_t)x - (uint64_t)y); break;
  case OP_MUL: v = (int64_t)((uint64_t)x * (uint64_t)y); break;
  case OP_FLOORDIV:
    if (!y) return false;
    v = x / y - ((x % y != 0) && ((x < 0) != (y < 0)));
    break;
  case OP_MOD:
    if (!y) return false;
    v = x % y;
    if (v && ((v < 0) != (y < 0))) v += y;
    break;
  case OP_EQ: v = x == y; break;
  case OP_NE: v = x != y; break;
  case OP_LT: v = x < y; break;
  case OP_LE: v = x <= y; break;
  case OP_GT: v = x > y; break;
  case OP_GE: v = x >= y; break;
  case OP_BAND: case OP_AND: v = x & y; break;
  case OP_BOR: case OP_OR: v = x | y; break;
  case OP_BXOR: v = x ^ y; break;
  case OP_SHL: v = y >= 64 || y < 0 ? 0 : (int64_t)((uint64_t)x << y); break;
  case OP_SHR: v = y >= 64 || y < 0 ? (x < 0 ? -1 : 0) : x >> y; break;
  case OP_DIV: case OP_NONE: case OP_NEG: case OP_POS: case OP_INVERT: case OP_NOT: return false;
  }
  r->is_static = true;
  r->sval.i = dtype_fit(r->dtype, (Cell){.i = v}).i;
  return true;
}

static bool eval_binary(Checker *c, Expr *e, AVal *out) {
  AVal a, b;
  if (!eval_value(c, e->a, &a) || !eval_value(c, e->b, &b)) return false;
  *out = scalar_av(DT_INT32, false);
  if (!bshape(c, e->loc, &a, &b, out) || !promote(c, e->loc, &a, &b, &out->dtype, &out->weak)) return false;
  e->oty = out->dtype;
  bool isfloat = dtype_is_float(out->dtype);
  if (isfloat && (e->op == OP_BAND || e->op == OP_BOR || e->op == OP_BXOR || e->op == OP_SHL || e->op == OP_SHR))
    return input_error(c, e->loc, "bitwise operators need integer or bool operands");
  if (e->op == OP_DIV && !isfloat) out->dtype = DT_FLOAT32;
  if (is_cmp(e->op) || e->op == OP_AND || e->op == OP_OR) {
    out->dtype = DT_BOOL;
    out->weak = false;
  }
  static_fold(&a, &b, e->op, out);
  return true;
}

static bool eval_unary(Checker *c, Expr *e, AVal *out) {
  if (!eval_value(c, e->a, out)) return false;
  if (e->op == OP_NOT) {
    out->dtype = DT_BOOL;
    if (out->is_static) out->sval.i = !out->sval.i;
    return true;
  }
  if (e->op == OP_INVERT && dtype_is_float(out->dtype)) return input_error(c, e->loc, "~ needs an integer or bool operand");
  if (out->is_static && !dtype_is_float(out->dtype)) {
    int64_t v = out->sval.i;
    out->sval.i = e->op == OP_NEG ? -v : e->op == OP_INVERT ? (out->dtype == DT_BOOL ? !v : ~v) : v;
  }
  if (out->is_static && dtype_is_float(out->dtype) && e->op == OP_NEG) out->sval.f = -out->sval.f;
  return true;
}

static bool static_count(Checker *c, Expr *e, int64_t *v) {
  AVal a;
  if (!eval_value(c, e, &a)) return false;
  if (a.rank || !a.is_static || !dtype_is_int(a.dtype) || a.sval.i < 0 || a.sval.i > (1 << 24))
    return input_error(c, e->loc, "a size here must be a non-negative integer literal (at most 2**24)");
  *v = a.sval.i;
  e->has_sval = true, e->sval = *v;
  return true;
}

static bool eval_iota(Checker *c, Expr *e, AVal *out) {
  int64_t n;
  if (!static_count(c, e->args[0], &n)) return false;
  *out = scalar_av(DT_INT32, false);
  out->rank = 1;
  out->shape[0] = n;
  if (c->p->kernel == KERNEL_SCALAR) {
    if (fire(c, D_U1, e->loc, "sc_scalar_subcore", "iota")) return false;
  } else if (index_zero_size(&c->ix, e->loc, "iota", 1, &n)) {
    return false;
  } else if (n != c->p->params.num_lanes) {
    char got[64];
    fmt_shape(got, sizeof got, 1, &n);
    if (fire(c, D_I1, e->loc, got, num(c, c->p->params.num_lanes))) {
      note(c, "iota's length must be the chip's lane count, %s on this chip%s", num(c, c->p->params.num_lanes), "");
      return false;
    }
  }
  return true;
}

static bool eval_list(Checker *c, Expr *e, AVal *out) {
  if (e->nargs == 0) return input_error(c, e->loc, "an empty list has no shape sc-sim can type");
  AVal first = scalar_av(DT_INT32, false);
  Dtype t = DT_BOOL;
  bool any_float = false, all_bool = true;
  for (int i = 0; i < e->nargs; i++) {
    AVal a;
    if (!eval_value(c, e->args[i], &a)) return false;
    if (i == 0) first = a;
    else if (a.rank != first.rank || memcmp(a.shape, first.shape, sizeof a.shape))
      return input_error(c, e->args[i]->loc, "list items must all have the same shape");
    any_float |= dtype_is_float(a.dtype);
    all_bool &= a.dtype == DT_BOOL;
    if (!a.weak) t = a.dtype;
  }
  if (first.rank + 1 > MAX_RANK) return input_error(c, e->loc, "lists nest more than 8 deep");
  *out = scalar_av(all_bool ? DT_BOOL : any_float ? DT_FLOAT32 : DT_INT32, false);
  if (t != DT_BOOL && (dtype_is_float(t) || !any_float)) out->dtype = t; /* a strong item's dtype wins */
  out->rank = first.rank + 1;
  out->shape[0] = e->nargs;
  memcpy(out->shape + 1, first.shape, sizeof(int64_t) * (size_t)first.rank);
  return true;
}

static bool eval_full(Checker *c, Expr *e, AVal *out) {
  Expr *sh = e->args[0];
  AVal v;
  if (!eval_value(c, e->args[1], &v)) return false;
  if (v.rank) return input_error(c, e->args[1]->loc, "full's value must be a scalar");
  /* jnp.full(shape, x) is lax.full: weakly typed when x is (jax 0.10.2,
   * lax.py full: weak_type = dtype is None and is_weakly_typed(fill_value)) */
  *out = scalar_av(v.weak ? (dtype_is_float(v.dtype) ? DT_FLOAT32 : v.dtype == DT_BOOL ? DT_BOOL : DT_INT32) : v.dtype,
                   v.weak && v.dtype != DT_BOOL);
  if (sh->kind == EX_LIST) {
    if (sh->nargs > MAX_RANK) return input_error(c, sh->loc, "full's shape has more than 8 dimensions");
    out->rank = sh->nargs;
    for (int i = 0; i < sh->nargs; i++)
      if (!static_count(c, sh->args[i], &out->shape[i])) return false;
  } else {
    out->rank = 1;
    if (!static_count(c, sh, &out->shape[0])) return false;
  }
  return !index_zero_size(&c->ix, e->loc, "broadcast_in_dim", out->rank, out->shape);
}

static bool eval_astype(Checker *c, Expr *e, AVal *out) {
  Dtype t;
  const char *tn = e->args[1]->kind == EX_NAME ? e->args[1]->name : NULL;
  if (tn && (!strncmp(tn, "jnp.", 4) || !strncmp(tn, "np.", 3))) tn = strchr(tn, '.') + 1;
  if (tn && !dtype_lookup(tn, &t)) {
    dtype_unknown(c->ix.d, e->args[1]->loc, tn);
    c->ix.failed = true;
    return false;
  }
  if (!tn) return input_error(c, e->args[1]->loc, "astype's second argument must be a dtype name such as int16");
  if (!eval_value(c, e->args[0], out)) return false;
  if (out->is_static) out->sval = dtype_convert(dtype_is_float(out->dtype) ? DT_FLOAT64 : DT_INT64, t, out->sval);
  out->dtype = t;
  out->weak = false;
  return true;
}

static bool eval_where_minmax(Checker *c, Expr *e, AVal *out) {
  bool w = e->builtin == BI_WHERE;
  AVal m, a, b;
  int k = 0;
  if (w && !eval_value(c, e->args[k++], &m)) return false;
  if (!eval_value(c, e->args[k], &a) || !eval_value(c, e->args[k + 1], &b)) return false;
  *out = scalar_av(DT_INT32, false);
  if (!bshape(c, e->loc, &a, &b, out) || !promote(c, e->loc, &a, &b, &out->dtype, &out->weak)) return false;
  e->oty = out->dtype;
  if (w) {
    if (m.dtype != DT_BOOL) return input_error(c, e->args[0]->loc, "where's mask must be bool");
    AVal t = *out;
    if (!bshape(c, e->loc, &m, &t, out)) return false;
  }
  return true;
}

/* ---- the scans: plsc.cumsum/cummax/cummin (CU0-CU3), jnp.cumsum (CS1-CS3) */
static bool scan_static_int(Checker *c, Expr *e, const char *what, int64_t *v) {
  AVal a;
  if (!eval_value(c, e, &a)) return false;
  if (a.rank || !a.is_static || (!dtype_is_int(a.dtype) && a.dtype != DT_BOOL)) {
    char msg[120];
    snprintf(msg, sizeof msg, "%s must be a literal here", what);
    return input_error(c, e->loc, msg);
  }
  *v = a.sval.i;
  e->has_sval = true, e->sval = *v;
  return true;
}

static bool scan_dtype_ok(Dtype t) { return t == DT_UINT32 || t == DT_INT32 || t == DT_FLOAT32; }

static bool eval_scan(Checker *c, Expr *e, AVal *out) {
  Expr *xe = scanop_arg(e, 0, NULL), *me = scanop_arg(e, -1, "mask");
  bool lax = e->builtin == BI_LAX_CUMSUM;
  if (!xe || (!lax && scanop_arg(e, 1, NULL))) return input_error(c, e->loc, builtin_usage(e->builtin));
  AVal x, m;
  char a[300], b[300];
  if (!eval_value(c, xe, &x)) return false;
  if (x.kind != AV_VALUE) return input_error(c, xe->loc, "a scan takes a value; load the ref first (x[...])");
  *out = x;
  out->weak = false;
  out->is_static = false;
  e->sval = x.rank ? x.shape[0] : 1; /* the lane count, for the lowering (has_sval stays false) */
  if (lax) {
    Expr *ae = scanop_arg(e, 1, "axis"), *re = scanop_arg(e, -1, "reverse");
    int64_t axis = 0, rev = 0;
    if (ae && !scan_static_int(c, ae, "axis", &axis)) return false;
    if (re && !scan_static_int(c, re, "reverse", &rev)) return false;
    if (!ae && x.rank != 1)
      return input_error(c, e->loc, "jnp.cumsum without axis= flattens its operand first; reshape it to 1-D or give axis=0");
    /* lax.cumsum binds the axis as given: cumsum's shape rule (jax 0.10.2
     * lax/control_flow/loops.py:2997) rejects a negative or too large one;
     * jnp.cumsum normalises a negative axis first */
    bool lax_spelling = e->name && !strncmp(e->name, "lax.", 4);
    if (lax_spelling && axis < 0 && fire(c, D_CR1, e->loc)) return false;
    fmt_shape(b, sizeof b, x.rank, x.shape);
    if (lax_spelling && axis >= x.rank && fire(c, D_CR2, e->loc, num(c, axis), str(c, b))) return false;
    /* jnp.cumsum canonicalises the axis (jax 0.10.2 util.py:479-483) */
    if (!lax_spelling && (axis >= x.rank || axis < -x.rank) && fire(c, D_CR3, e->loc, num(c, axis), num(c, x.rank)))
      return false;
    if (axis < 0) axis += x.rank;
    AVal xs = x;
    if (!lax_spelling && xs.dtype == DT_BOOL) xs.dtype = DT_INT32; /* jnp.cumsum sums bools as int32 */
    fmt_aval_str(a, sizeof a, &xs);
    if (axis != 0 && fire(c, D_CS1, e->loc, num(c, axis))) return false;
    if (x.rank != 1 && fire(c, D_CS2, e->loc, str(c, a))) return false;
    if (rev && fire(c, D_CS3, e->loc)) return false;
    if (!scan_dtype_ok(x.dtype)) {
      snprintf(b, sizeof b, "jnp.cumsum of %s: sc-sim's tpu.scan takes uint32, int32 or float32", dtype_name(x.dtype));
      if (fire(c, D_SC_UNSUP, e->loc, str(c, b))) return false;
    }
    return true;
  }
  const char *fn = builtin_name(e->builtin) + 5; /* "plsc." */
  fmt_aval_str(a, sizeof a, &x);
  if (x.rank != 1 && fire(c, D_CU0, e->loc, fn, str(c, a))) return false;
  if (!scan_dtype_ok(x.dtype) && fire(c, D_CU1, xe->loc, dtype_name(x.dtype))) return false;
  if (!me) return true;
  if (!eval_value(c, me, &m)) return false;
  if (m.kind != AV_VALUE) return input_error(c, me->loc, "the mask must be a value; load the ref first (m[...])");
  if (m.dtype != DT_BOOL && fire(c, D_CU2, me->loc, dtype_name(m.dtype))) return false;
  fmt_shape(a, sizeof a, x.rank, x.shape);
  fmt_shape(b, sizeof b, m.rank, m.shape);
  if ((m.rank != x.rank || memcmp(m.shape, x.shape, sizeof(int64_t) * (size_t)x.rank)) &&
      fire(c, D_CU3, me->loc, str(c, a), str(c, b)))
    return false;
  return true;
}

/* jnp.sort / lax.sort (SO1, SO3; SO2 needs several keys, which one operand
 * cannot have): vector subcore only, like upstream's rule. */
static bool eval_sort(Checker *c, Expr *e, AVal *out) {
  Expr *xe = scanop_arg(e, 0, NULL), *ae = scanop_arg(e, 1, "axis"), *de = scanop_arg(e, -1, "dimension");
  if (xe && xe->kind == EX_LIST)
    return input_error(c, e->loc, "lax.sort of several operands gives several results: bind them with a let of as many names (name: \"k, v\")");
  if (scanop_arg(e, -1, "num_keys")) return input_error(c, e->loc, "num_keys= is for lax.sort of several operands ([keys, values...])");
  Expr *ds = scanop_arg(e, -1, "descending");
  if (!xe || scanop_arg(e, 2, NULL) || (ae && de)) return input_error(c, e->loc, builtin_usage(e->builtin));
  AVal x;
  char a[300];
  if (!eval_value(c, xe, &x)) return false;
  if (x.kind != AV_VALUE) return input_error(c, xe->loc, "a sort takes a value; load the ref first (x[...])");
  *out = x;
  out->weak = false;
  out->is_static = false;
  int64_t dim = -1, desc = 0;
  if (ae && !scan_static_int(c, ae, "axis", &dim)) return false;
  if (de && !scan_static_int(c, de, "dimension", &dim)) return false;
  if (ds && !scan_static_int(c, ds, "descending", &desc)) return false;
  if (x.rank == 0) return input_error(c, xe->loc, "a sort needs an array, not a scalar");
  if (dim < -x.rank || dim >= x.rank) return input_error(c, (ae ? ae : de)->loc, "the sort axis is out of range for this value");
  if (dim < 0) dim += x.rank; /* lax.sort canonicalises the dimension */
  e->sval = desc ? 1 : 0;     /* for the lowering: tpu.sort's descending flag (has_sval stays false) */
  if (c->p->kernel == KERNEL_SCALAR && fire(c, D_U1, e->loc, "sc_scalar_subcore", "sort")) return false;
  if (dim != 0 && fire(c, D_SO1, e->loc, num(c, dim))) return false;
  fmt_shape(a, sizeof a, x.rank, x.shape);
  if ((x.rank != 1 || x.shape[0] != c->p->params.num_lanes) &&
      fire(c, D_SO3, e->loc, "0", str(c, a), num(c, c->p->params.num_lanes)))
    return false;
  if (x.dtype != DT_INT32 && x.dtype != DT_UINT32 && x.dtype != DT_FLOAT32) {
    snprintf(a, sizeof a, "sort of %s: sc-sim's tpu.sort takes uint32, int32 or float32 keys", dtype_name(x.dtype));
    if (fire(c, D_SC_UNSUP, e->loc, str(c, a))) return false;
  }
  return true;
}

/* plsc.all_reduce_population_count / all_reduce_ffs (AR1, AR4; jax 0.10.2
 * has no AR2/AR3: a reduce that does not divide the length truncates). */
static bool eval_all_reduce(Checker *c, Expr *e, AVal *out) {
  Expr *xe = scanop_arg(e, 0, NULL), *re = scanop_arg(e, -1, "reduce");
  if (!xe || scanop_arg(e, 1, NULL)) return input_error(c, e->loc, builtin_usage(e->builtin));
  AVal x;
  int64_t r = 1;
  if (!eval_value(c, xe, &x)) return false;
  if (x.kind != AV_VALUE) return input_error(c, xe->loc, "an all-reduce takes a value; load the ref first (x[...])");
  if (re && !scan_static_int(c, re, "reduce", &r)) return false;
  if (re && r < 1) return input_error(c, re->loc, "reduce must be at least 1 (jax 0.10.2 divides the length by it: ZeroDivisionError or a negative shape)");
  if (x.dtype != DT_BOOL && fire(c, D_AR1, xe->loc, dtype_name(x.dtype))) return false;
  if (x.rank != 1 && fire(c, D_AR4, xe->loc)) return false;
  *out = scalar_av(DT_INT32, false);
  out->rank = 1;
  out->shape[0] = x.rank == 1 ? x.shape[0] / r : 1;
  e->sval = out->shape[0]; /* the result's length, for the lowering (has_sval stays false) */
  return true;
}

/* "unknown function 'f'; did you mean 'g'?", or the list of value functions. */
static bool unknown_function(Checker *c, const Expr *e) {
  const char *fns[BUILTIN_COUNT];
  int n = builtin_names(fns);
  const char *near = names_nearest(e->name, fns, n);
  char msg[800], list[640];
  builtin_list(BK_VALUE, ", ", list, sizeof list);
  if (near) snprintf(msg, sizeof msg, "unknown function '%.60s'; did you mean '%s'?", e->name, near);
  else snprintf(msg, sizeof msg, "unknown function '%.60s' (%s)", e->name, list);
  return input_error(c, e->loc, msg);
}

/* A call: resolved by the parser to a BUILTINS row (lowering/builtins.h). */
static bool eval_axis_size(Checker *c, Expr *e, AVal *out);

static bool eval_call(Checker *c, Expr *e, AVal *out) {
  char msg[200], idx[80];
  builtin_list(BK_INDEX, " and ", idx, sizeof idx);
  for (int i = 0; i < e->nargs; i++)
    if (e->kw[i] && !scanop_takes_kw(e->builtin, e->kw[i])) {
      snprintf(msg, sizeof msg, "keyword arguments are only for %s", idx);
      return input_error(c, e->args[i]->loc, msg);
    }
  if (e->builtin != BI_NONE && builtin_kind(e->builtin) == BK_VALUE &&
      (e->nargs < builtin_min_args(e->builtin) || e->nargs > builtin_max_args(e->builtin)))
    return input_error(c, e->loc, builtin_usage(e->builtin));
  switch (e->builtin) {
  case BI_IOTA: return eval_iota(c, e, out);
  case BI_FULL: return eval_full(c, e, out);
  case BI_ASTYPE: return eval_astype(c, e, out);
  case BI_WHERE: case BI_MIN: case BI_MAX: return eval_where_minmax(c, e, out);
  case BI_VSUM: case BI_VMAX: case BI_VMIN: case BI_VALL: case BI_VANY: case BI_EXP: case BI_ABS: case BI_SQRT: case BI_RSQRT:
  case BI_LOG: case BI_TANH: case BI_FLIP: case BI_TAKE: case BI_RESHAPE: case BI_BITCAST: case BI_CONCAT: case BI_SLICE:
    return check_valops_call(&c->ix, c->p, e, out);
  case BI_CUMSUM: case BI_CUMMAX: case BI_CUMMIN: case BI_LAX_CUMSUM: return eval_scan(c, e, out);
  case BI_SORT: return eval_sort(c, e, out);
  case BI_PACK: return check_scanops_pack(&c->ix, e, out);
  case BI_SORT_KV: case BI_SCAN_COUNT: case BI_UNPACK: {
    char m[200];
    snprintf(m, sizeof m, "%s gives several results: bind them with a let of as many names (name: \"a, b\")", builtin_name(e->builtin));
    return input_error(c, e->loc, m);
  }
  case BI_AR_POPCOUNT: case BI_AR_FFS: return eval_all_reduce(c, e, out);
  case BI_AXIS_SIZE: return eval_axis_size(c, e, out);
  case BI_DS: case BI_INDICES: case BI_SELECT_REF:
    snprintf(msg, sizeof msg, "%s only appear inside a ref's [...]", idx);
    return input_error(c, e->loc, msg);
  case BI_NONE: break;
  }
  return unknown_function(c, e);
}

/* v[k]: element access on a value; a dynamic k lowers to dynamic_slice. */
static bool eval_element(Checker *c, Expr *e, AVal *out) {
  if (e->kind != EX_SUBSCRIPT) return input_error(c, e->loc, ".at, .bitcast and .reshape apply to refs, not values");
  if (!eval_value(c, e->a, out)) return false;
  bool gather;
  if (check_valops_subscript(&c->ix, c->p, e, out, &gather) || gather) return !c->ix.failed;
  if (e->nargs > out->rank) return input_error(c, e->loc, "too many indices for this value");
  bool dynamic = false;
  for (int i = 0; i < e->nargs; i++) {
    AVal k;
    if (!eval_value(c, e->args[i], &k)) return false;
    if (k.rank || !dtype_is_int(k.dtype)) return input_error(c, e->args[i]->loc, "a value's element index must be an integer scalar");
    if (k.is_static && (k.sval.i < -out->shape[i] || k.sval.i >= out->shape[i]))
      return input_error(c, e->args[i]->loc, "element index out of range for this value");
    dynamic |= !k.is_static;
    if (k.is_static) e->args[i]->has_sval = true, e->args[i]->sval = k.sval.i;
  }
  out->rank -= e->nargs;
  memmove(out->shape, out->shape + e->nargs, sizeof(int64_t) * (size_t)out->rank);
  out->is_static = false;
  if (dynamic && fire(c, D_U1, e->loc, c->p->kernel == KERNEL_SCALAR ? "sc_scalar_subcore" : "sc_vector_subcore", "dynamic_slice"))
    return false;
  /* the squeeze to a scalar (jax 0.10.2 pallas/mosaic/lowering.py:3002) */
  if (!out->rank && dtype_size(out->dtype) != 4 && fire(c, D_SQ1, e->loc, dtype_name(out->dtype))) return false;
  return true;
}

/* ---- chip and mesh constants -------------------------------------------- */
/* A Python int known when the kernel is traced: the node becomes that
 * literal, weakly typed and static, for every later pass (the lowering,
 * the reference) as sc_info.num_lanes is a plain int upstream. */
static bool chip_constant(Expr *e, int64_t v, AVal *out) {
  e->kind = EX_INT;
  e->ival = v;
  e->nargs = 0;
  *out = scalar_av(DT_INT32, true);
  out->is_static = true;
  out->sval.i = v;
  return true;
}

/* num_cores, num_subcores, num_lanes: plsc.get_sparse_core_info()'s fields
 * for the program's chip; 0 when the name is not one of them. */
static bool chip_name(const Checker *c, const char *name, int64_t *v) {
  const ChipParams *q = &c->p->params;
  if (!strcmp(name, "num_cores")) return *v = q->num_cores, true;
  if (!strcmp(name, "num_subcores")) return *v = q->num_subcores, true;
  if (!strcmp(name, "num_lanes")) return *v = q->num_lanes, true;
  return false;
}

/* lax.axis_size(core) / lax.axis_size(subcore): the mesh's extent. */
static bool eval_axis_size(Checker *c, Expr *e, AVal *out) {
  const Expr *a = e->args[0];
  bool scalar = c->p->kernel == KERNEL_SCALAR;
  if (a->kind == EX_NAME && !strcmp(a->name, "core")) return chip_constant(e, c->p->mesh_cores, out);
  if (a->kind == EX_NAME && !strcmp(a->name, "subcore") && !scalar) return chip_constant(e, c->p->mesh_subcores, out);
  return input_error(c, a->loc, scalar ? "lax.axis_size takes the mesh axis core (a scalar_subcore mesh has no subcore axis)"
                                       : "lax.axis_size takes a mesh axis: core or subcore");
}

static bool eval_name(Checker *c, Expr *e, AVal *out) {
  const AVal *b = lookup(c, e->name);
  if (b) return *out = *b, true;
  Ref *r = program_ref(c->p, e->name);
  if (r) {
    View *v = arena_alloc(c->ix.arena, sizeof *v);
    v->ref = r;
    v->dtype = r->dtype;
    v->rank = r->rank;
    memcpy(v->shape, r->shape, sizeof v->shape);
    memset(out, 0, sizeof *out);
    out->kind = AV_REF;
    out->view = v;
    out->dtype = r->dtype;
    out->rank = r->rank;
    memcpy(out->shape, r->shape, sizeof out->shape);
    return true;
  }
  if (!strcmp(e->name, "core") || !strcmp(e->name, "subcore")) return *out = scalar_av(DT_INT32, false), true;
  int64_t cv;
  if (chip_name(c, e->name, &cv)) return chip_constant(e, cv, out);
  char msg[200];
  snprintf(msg, sizeof msg, "'%.60s' is not bound here", e->name);
  return input_error(c, e->loc, msg);
}

static bool eval_node(IndexCtx *ix, Expr *e, AVal *out);

/* Evaluates and records the type on the node for the lowering. */
static bool eval(IndexCtx *ix, Expr *e, AVal *out) {
  bool ok = eval_node(ix, e, out);
  if (ok) {
    e->ty = out->dtype;
    e->weak = out->weak;
    e->is_ref = out->kind == AV_REF;
    e->view = out->kind == AV_REF ? out->view : NULL;
  }
  return ok;
}

static bool eval_node(IndexCtx *ix, Expr *e, AVal *out) {
  Checker *c = (Checker *)ix;
  memset(out, 0, sizeof *out);
  switch (e->kind) {
  case EX_INT: *out = scalar_av(DT_INT32, true); out->is_static = true; out->sval.i = e->ival; return true;
  case EX_FLOAT: *out = scalar_av(DT_FLOAT32, true); out->is_static = true; out->sval.f = e->fval; return true;
  case EX_BOOL: *out = scalar_av(DT_BOOL, true); out->is_static = true; out->sval.i = e->ival; return true;
  case EX_NAME: return eval_name(c, e, out);
  case EX_UNARY: return eval_unary(c, e, out);
  case EX_BINARY: return eval_binary(c, e, out);
  case EX_CALL: return eval_call(c, e, out);
  case EX_LIST: return eval_list(c, e, out);
  case EX_SUBSCRIPT: case EX_AT: case EX_BITCAST: case EX_RESHAPE: {
    View *v;
    bool is_ref;
    if (index_view(ix, e, &v, &is_ref)) {
      out->kind = AV_REF;
      out->view = v;
      out->dtype = v->dtype;
      out->rank = v->rank;
      memcpy(out->shape, v->shape, sizeof out->shape);
      return true;
    }
    if (ix->failed || is_ref) return false;
    return eval_element(c, e, out);
  }
  case EX_SLICE: return input_error(c, e->loc, "a slice a:b only appears inside a ref's [...]");
  case EX_ELLIPSIS: return input_error(c, e->loc, "... only appears inside a ref's [...]");
  case EX_NONE: return input_error(c, e->loc, "None is not a value");
  }
  return false;
}

/* Evaluates a field that must be a ref view. */
static bool eval_ref(Checker *c, Expr *e, View **v) {
  AVal a;
  if (!eval(&c->ix, e, &a)) return false;
  if (a.kind != AV_REF) {
    char msg[300];
    snprintf(msg, sizeof msg, "'%.200s' is not a ref: name a ref declared under refs", e->text ? e->text : "expression");
    return input_error(c, e->loc, msg);
  }
  *v = a.view;
  return true;
}

/* ---- shared pieces of the get/swap rules (SPEC §4.C, §4.D) ----------- */
typedef struct {
  int nprior;     /* transforms applied with _transform_ref */
  int rank;       /* of the memref the final indexer indexes */
  int64_t sizes[MAX_RANK];
  int64_t strides[MAX_RANK];
  bool squeeze[MAX_RANK];
  bool has_array; /* an array or ref indexer in the final indexer */
  int out_rank;
  int64_t out[MAX_RANK];
} Access;

/* _transform_ref's checks on prior transforms; returns the message or NULL. */
static const char *prior_error(const View *v, int nprior) {
  for (int i = 0; i < nprior; i++) {
    const Transform *t = v->tr[i];
    switch (t->kind) {
    case TR_INDEX:
      for (int k = 0; k < t->idx->n; k++)
        if (t->idx->e[k].kind == IX_SLICE && t->idx->e[k].stride != 1) return MSG_STRIDED;
      break;
    case TR_BITCAST:
      if (dtype_bits(t->in_dtype) != dtype_bits(t->dtype) && t->in_rank < 2) return MSG_BITCAST_1D;
      break;
    case TR_RESHAPE:
      if (t->in_rank < 2) return MSG_RESHAPE_1D;
      break;
    }
  }
  return NULL;
}

/* Splits a view into prior transforms and the final indexer (§3.2). */
static void decompose(const View *v, Access *a) {
  memset(a, 0, sizeof *a);
  const Transform *last = v->ntr ? v->tr[v->ntr - 1] : NULL;
  if (last && last->kind == TR_INDEX) {
    a->nprior = v->ntr - 1;
    a->rank = last->idx->n;
    for (int d = 0; d < a->rank; d++) {
      const IxEntry *e = &last->idx->e[d];
      a->squeeze[d] = e->kind != IX_SLICE;
      a->sizes[d] = e->kind == IX_SLICE ? (e->size_static ? e->size : DYN) : 1;
      a->strides[d] = e->kind == IX_SLICE ? e->stride : 1;
      a->has_array |= e->kind == IX_ARRAY || e->kind == IX_REF;
    }
  } else { /* a trivial full-slice indexer on the transformed shape */
    a->nprior = v->ntr;
    a->rank = v->rank;
    for (int d = 0; d < a->rank; d++) {
      a->sizes[d] = v->shape[d];
      a->strides[d] = 1;
    }
  }
  for (int d = 0; d < a->rank; d++)
    if (!a->squeeze[d]) a->out[a->out_rank++] = a->sizes[d];
}

static bool int_after_slice(const Access *a) {
  int first = a->rank;
  for (int d = 0; d < a->rank; d++)
    if (a->sizes[d] != 1) {
      first = d;
      break;
    }
  for (int d = first; d < a->rank; d++)
    if (a->squeeze[d]) return true;
  return false;
}

static bool any_stride(const Access *a) {
  for (int d = 0; d < a->rank; d++)
    if (a->strides[d] != 1) return true;
  return false;
}

/* _check_aval_is_supported (SPEC §4.F): F0, then F1 under `id`. */
static bool shape_supported(Checker *c, DiagId id, Loc at, Dtype t, int rank, const int64_t *shape) {
  int size = dtype_size(t);
  if (size > 4) return !fire(c, D_F0, at, dtype_name(t));
  int64_t L = c->p->params.num_lanes, packing = 4 / size;
  int64_t a[1] = {L * packing}, b[2] = {packing, L};
  bool ok = (rank == 1 && shape[0] == a[0]) || (packing > 1 && rank == 2 && shape[0] == b[0] && shape[1] == b[1]);
  if (ok) return true;
  char list[160], sa[64], sb[64];
  fmt_shape(sa, sizeof sa, 1, a);
  fmt_shape(sb, sizeof sb, 2, b);
  if (packing == 1) snprintf(list, sizeof list, "%s", sa);
  else snprintf(list, sizeof list, "%s, %s", sa, sb);
  if (fire(c, id, at, dtype_name(t), list, shape_str(c, rank, shape))) {
    note(c, "the chip has %s lanes; set layout_passes: true to let Mosaic's layout passes handle other shapes%s",
         num(c, L), "");
    return false;
  }
  return true;
}

static bool array_index_unsupported(Checker *c, Loc at, const char *what) {
  char msg[300];
  snprintf(msg, sizeof msg,
           "%s with an array or ref index has no SparseCore lowering (upstream fails in the Mosaic verifier); "
           "use load_gather / store_scatter, or a DMA gather",
           what);
  return fire(c, D_SC_UNSUP, at, msg);
}

/* The G rules; `mask` is set for load_expanded. */
static bool load_rules(Checker *c, Loc at, const View *v, bool mask) {
  if (index_bad_vector(&c->ix, at, mask ? "load" : "get", v->rank, v->shape, v->ref->space == SP_SEMAPHORE)) return false;
  Space sp = v->ref->space;
  if ((sp == SP_HBM || sp == SP_VMEM_SHARED) && fire(c, D_G1, at, space_repr(sp))) return false;
  Access a;
  decompose(v, &a);
  const char *pe = prior_error(v, a.nprior);
  if (pe && fire(c, D_G2, at, pe)) return false;
  if (a.has_array && array_index_unsupported(c, at, "a get")) return false;
  if (int_after_slice(&a) && fire(c, D_G3, at)) return false;
  if (any_stride(&a) && fire(c, D_G4, at)) {
    note(c, "the final indexer has strides %s%s", shape_str(c, a.rank, a.strides), "");
    return false;
  }
  bool scalar = a.out_rank == 0;
  if (scalar != (sp == SP_SMEM)) {
    const char *suffix = NULL;
    if (sp == SP_SMEM) suffix = G5_SMEM_ARRAY;
    else if (scalar && sp == SP_VMEM) suffix = G5_VMEM_HINT;
    else if (scalar) {
      char b[128];
      snprintf(b, sizeof b, " Trying to load a scalar from %s.", space_repr(sp));
      suffix = str(c, b);
    }
    if (suffix && fire(c, D_G5, at, suffix)) {
      note(c, "the loaded value has shape %s%s", shape_str(c, a.out_rank, a.out), "");
      return false;
    }
  }
  if (scalar) return !(mask && fire(c, D_G6, at));
  /* plsc's load (mask) types its result with the ref's own dtype and the
   * view's shape (jax 0.10.2 sc_primitives.py:70), state's get with the view's */
  if (!c->p->layout_passes && !shape_supported(c, D_G7, at, mask ? v->ref->dtype : v->dtype, v->rank, v->shape))
    return false;
  return true;
}

/* The S rules; add for addupdate, mask for the compressed forms. */
static bool store_rules(Checker *c, Loc at, const View *v, bool mask, bool add) {
  /* state's addupdate has no result; swap (plsc's too) returns a vector */
  if (!(add && !mask) && index_bad_vector(&c->ix, at, "swap", v->rank, v->shape, v->ref->space == SP_SEMAPHORE))
    return false;
  Space sp = v->ref->space;
  if ((sp == SP_HBM || sp == SP_VMEM_SHARED) && fire(c, D_S1, at, space_repr(sp))) return false;
  Access a;
  decompose(v, &a);
  const char *pe = prior_error(v, a.nprior);
  if (pe && fire(c, D_S2, at, pe)) return false;
  if (a.has_array && array_index_unsupported(c, at, "a swap")) return false;
  if (int_after_slice(&a) && fire(c, D_S3, at)) return false;
  if (any_stride(&a) && fire(c, D_S4, at)) {
    note(c, "the final indexer of '%s' has strides %s", v->expr && v->expr->text ? v->expr->text : "the view",
         shape_str(c, a.rank, a.strides));
    return false;
  }
  bool scalar = a.out_rank == 0;
  if (scalar != (sp == SP_SMEM)) {
    char b[128];
    if (sp == SP_SMEM) snprintf(b, sizeof b, "%s", S5_SMEM_ARRAY);
    else snprintf(b, sizeof b, "Trying to swap a scalar in %s.", space_repr(sp));
    if (fire(c, D_S5, at, str(c, b))) {
      note(c, "the swapped value has shape %s%s", shape_str(c, a.out_rank, a.out), "");
      return false;
    }
  }
  if (scalar) {
    if (mask && fire(c, D_S6, at)) return false;
    return !(add && fire(c, D_S7, at));
  }
  /* plsc's swap (mask) returns its value, of the ref's own dtype (E4) */
  if (!c->p->layout_passes && !shape_supported(c, D_S8, at, mask ? v->ref->dtype : v->dtype, v->rank, v->shape))
    return false;
  return true;
}

static bool same_shape(int ra, const int64_t *a, int rb, const int64_t *b) {
  return ra == rb && !memcmp(a, b, sizeof(int64_t) * (size_t)ra);
}

/* ---- operations ------------------------------------------------------ */
static bool check_get(Checker *c, Op *op) {
  View *v;
  if (!eval_ref(c, op->e[FLD_REF], &v)) return false;
  if (!load_rules(c, op->loc, v, false)) return false;
  AVal out = scalar_av(v->dtype, false);
  out.rank = v->rank;
  memcpy(out.shape, v->shape, sizeof out.shape);
  bind(c, op->name[FLD_OUT], &out);
  return true;
}

/* B1-B3 with _maybe_implicit_cast (SPEC §4.B). */
/* A swap of `ref[...]` is `ref.at[...].swap(v)`: `.at[...]` makes JAX's
 * indexer of the ellipsis, one full slice per dimension (as the abstract
 * eval prints it), where sc-sim's view has none; `ref[...] = v` binds no
 * transforms (SPEC §4.B). */
static void whole_ref_indexer(char *b, size_t n, const View *v) {
  size_t o = (size_t)snprintf(b, n, "(NDIndexer(indices=(");
  for (int k = 0; k < v->rank && o + 64 < n; k++)
    o += (size_t)snprintf(b + o, n - o, "%sSlice(start=0, size=%lld, stride=1)", k ? ", " : "", (long long)v->shape[k]);
  o += (size_t)snprintf(b + o, n - o, "%s), shape=", v->rank == 1 ? "," : "");
  fmt_shape(b + o, n - o, v->rank, v->shape);
  o = strlen(b);
  snprintf(b + o, n - o, ", int_indexer_shape=(), validate=False),)");
}

static bool swap_abstract_eval(Checker *c, Op *op, const View *v, const AVal *x) {
  if (x->kind == AV_REF) return !fire(c, D_B1, op->loc);
  if (!same_shape(v->rank, v->shape, x->rank, x->shape)) {
    char tr[900];
    bool ellipsis = op->kind == OPK_SWAP && op->e[FLD_REF] && op->e[FLD_REF]->kind == EX_SUBSCRIPT;
    if (ellipsis && v->ntr == 0) whole_ref_indexer(tr, sizeof tr, v);
    else fmt_transforms(tr, sizeof tr, v, 0, v->ntr, true); /* swap's abstract eval */
    if (fire(c, D_B2, op->loc, shape_str(c, v->ref->rank, v->ref->shape), shape_str(c, v->rank, v->shape),
             shape_str(c, x->rank, x->shape), str(c, tr)))
      return false;
  }
  /* a semaphore ref's dtype is pallas's semaphore dtype (printed dma_sem or
   * semaphore, jax 0.10.2 pallas/core.py), which no value has or casts to */
  if (v->ref->space == SP_SEMAPHORE &&
      fire(c, D_B3, op->loc, v->ref->sem == SEM_DMA ? "dma_sem" : "semaphore", dtype_name(x->dtype)))
    return false;
  bool cast = (x->weak && dtype_is_float(x->dtype) && dtype_is_float(v->dtype)) ||
              (dtype_is_int(x->dtype) && dtype_is_int(v->dtype));
  if (!cast && x->dtype != v->dtype && fire(c, D_B3, op->loc, dtype_name(v->dtype), dtype_name(x->dtype))) return false;
  return true;
}

static bool check_swap(Checker *c, Op *op) {
  View *v;
  AVal x;
  if (!eval_ref(c, op->e[FLD_REF], &v) || !eval(&c->ix, op->e[FLD_VALUE], &x)) return false;
  if (x.kind == AV_DESC) return input_error(c, op->e[FLD_VALUE]->loc, "a DMA descriptor is not a value");
  if (!swap_abstract_eval(c, op, v, &x)) return false;
  if (!store_rules(c, op->loc, v, false, false)) return false;
  AVal out = scalar_av(v->dtype, false);
  out.rank = v->rank;
  memcpy(out.shape, v->shape, sizeof out.shape);
  bind(c, op->name[FLD_OUT], &out);
  return true;
}

/* E2/E3 (mask), then for swaps E4/E5 (SPEC §4.E, §8.3). */
static bool sc_abstract_eval(Checker *c, Op *op, const View *v, const AVal *mask, const AVal *x) {
  if (mask) {
    if (mask->dtype != DT_BOOL && fire(c, D_E2, op->loc, dtype_name(mask->dtype))) return false;
    if (!same_shape(mask->rank, mask->shape, v->rank, v->shape) &&
        fire(c, D_E3, op->loc, shape_str(c, v->rank, v->shape), shape_str(c, mask->rank, mask->shape)))
      return false;
  }
  if (!x) return true;
  Dtype xt = x->weak ? (dtype_is_float(x->dtype) ? DT_FLOAT32 : x->dtype == DT_BOOL ? DT_BOOL : DT_INT32) : x->dtype;
  if (v->ref->dtype != xt && fire(c, D_E4, op->loc, dtype_name(v->ref->dtype), dtype_name(xt))) return false;
  if (!same_shape(v->rank, v->shape, x->rank, x->shape) &&
      fire(c, D_E5, op->loc, shape_str(c, v->rank, v->shape), shape_str(c, x->rank, x->shape)))
    return false;
  return true;
}

static bool check_sc_access(Checker *c, Op *op) {
  bool load = op->kind == OPK_LOAD_EXPANDED;
  bool add = op->kind == OPK_ADDUPDATE || op->kind == OPK_ADDUPDATE_COMPRESSED;
  bool has_mask = op->kind != OPK_ADDUPDATE;
  View *v;
  AVal m, x;
  if (!eval_ref(c, op->e[FLD_REF], &v)) return false;
  if (has_mask && !eval_value(c, op->e[FLD_MASK], &m)) return false;
  if (!load && !eval_value(c, op->e[FLD_VALUE], &x)) return false;
  if (!sc_abstract_eval(c, op, v, has_mask ? &m : NULL, load ? NULL : &x)) return false;
  if (load ? !load_rules(c, op->loc, v, true) : !store_rules(c, op->loc, v, has_mask, add)) return false;
  if (load) {
    AVal out = scalar_av(v->ref->dtype, false);
    out.rank = v->rank;
    memcpy(out.shape, v->shape, sizeof out.shape);
    bind(c, op->name[FLD_OUT], &out);
  }
  return true;
}

/* ---- register gather / scatter (SPEC §4.J) --------------------------- */
static char *value_repr(Checker *c, const AVal *a) {
  char b[400], s[300];
  if (a->is_static && a->weak && !dtype_is_float(a->dtype)) return num(c, a->sval.i);
  fmt_aval(s, sizeof s, a);
  snprintf(b, sizeof b, "Traced<%s>with<DynamicJaxprTrace>", s);
  return str(c, b);
}

static const char *raw_str(const Ref *r) { return r->annotated ? space_str(r->space) : "None"; }
static const char *raw_repr(const Ref *r) { return r->annotated ? space_repr(r->space) : "None"; }

static bool gs_indices(Checker *c, Op *op, const View *v, AVal *idx, int64_t *n) {
  int cnt = op->nlist[FLD_INDICES];
  for (int i = 0; i < cnt; i++)
    if (!eval_value(c, op->list[FLD_INDICES][i], &idx[i])) return false;
  if (cnt != v->rank && fire(c, D_GS3, op->loc, num(c, v->rank))) return false;
  for (int i = 0; i < cnt; i++)
    if (idx[i].rank != 1 && fire(c, D_GS4, op->loc, shape_str(c, idx[i].rank, idx[i].shape))) return false;
  for (int i = 1; i < cnt; i++)
    /* jax 0.10.2 (sc_primitives.py:236) prints the message's braces unformatted */
    if (idx[i].shape[0] != idx[i - 1].shape[0] && fire(c, D_GS5, op->loc))
      return false;
  *n = cnt ? idx[cnt - 1].shape[0] : 0;
  return true;
}

static bool check_gather_scatter(Checker *c, Op *op) {
  bool gather = op->kind == OPK_LOAD_GATHER;
  /* addupdate_scatter names store_scatter: jax 0.10.2 passes "store_scatter" to
   * get_ref_and_transforms in both (sc_primitives.py:410) */
  const char *fn = gather ? "load_gather" : "store_scatter";
  if (op->nlist[FLD_INDICES] > MAX_RANK) return input_error(c, op->floc[FLD_INDICES], "at most 8 index vectors");
  if (!gather && op->nlist[FLD_INDICES] == 0 && fire(c, D_GS0, op->loc)) return false;
  AVal r, idx[MAX_RANK], m, x;
  if (!eval(&c->ix, op->e[FLD_REF], &r)) return false;
  if (r.kind != AV_REF) return !fire(c, D_GS1, op->loc, fn, value_repr(c, &r));
  View *v = r.view;
  bool has_mask = op->has & F(MASK);
  if (has_mask && !eval_value(c, op->e[FLD_MASK], &m)) return false;
  if (!gather && !eval_value(c, op->e[FLD_VALUE], &x)) return false;
  if (v->dtype != DT_INT32 && v->dtype != DT_FLOAT32 && fire(c, D_GS2, op->loc, dtype_name(v->dtype))) return false;
  int64_t n;
  if (!gs_indices(c, op, v, idx, &n)) return false;
  if (gather) {
    if (!shape_supported(c, D_GG1, op->loc, v->dtype, 1, &n)) return false;
    if (has_mask && !same_shape(m.rank, m.shape, 1, &n) && fire(c, D_GG2, op->loc, shape_str(c, m.rank, m.shape), num(c, n)))
      return false;
    if (has_mask && m.dtype != DT_BOOL) pend_mask(c, true, op->loc, op->nlist[FLD_INDICES], n, m.dtype);
  } else {
    if (!same_shape(x.rank, x.shape, 1, &n) && fire(c, D_GSC1, op->loc, shape_str(c, x.rank, x.shape), num(c, n))) return false;
    Dtype xt = x.weak ? (dtype_is_float(x.dtype) ? DT_FLOAT32 : DT_INT32) : x.dtype;
    if (xt != v->dtype && fire(c, D_GSC2, op->loc, dtype_name(xt), dtype_name(v->dtype))) return false;
    if (has_mask && !same_shape(m.rank, m.shape, 1, &n) && fire(c, D_GSC3, op->loc, shape_str(c, m.rank, m.shape), num(c, n)))
      return false;
    if (has_mask && m.dtype != DT_BOOL) pend_mask(c, false, op->loc, op->nlist[FLD_INDICES], n, m.dtype);
  }
  if (!(v->ref->annotated && v->ref->space == SP_VMEM) && fire(c, gather ? D_GL1 : D_SL2, op->loc, raw_str(v->ref)))
    return false;
  const char *pe = prior_error(v, v->ntr);
  if (pe && fire(c, D_G2, op->loc, pe)) return false;
  if (gather) {
    AVal out = scalar_av(v->dtype, false);
    out.rank = 1;
    out.shape[0] = n;
    bind(c, op->name[FLD_OUT], &out);
  }
  return true;
}

/* ---- DMAs (SPEC §4.H, §4.I; their phase-V rules are in mosaic.c) ----- */

static bool is_candidate(const NDIndexer *ix) {
  const IxEntry *e = &ix->e[0];
  return ix->n && (e->kind == IX_ARRAY || e->kind == IX_REF || (e->kind == IX_INT && ix->int_rank > 0));
}

/* The per-candidate checks X1-X4 (X2 only when `want` is given). */
static bool offset_checks(Checker *c, Loc at, const NDIndexer *ix, int want_rank, const int64_t *want) {
  const IxEntry *e = &ix->e[0];
  bool is_view = e->kind == IX_REF && e->idx.view->ntr > 0;
  int r = e->kind == IX_REF ? e->idx.view->rank : e->kind == IX_ARRAY ? e->idx.rank : ix->int_rank;
  if (!is_view) {
    if (r != 1 && fire(c, D_X1, at, num(c, r))) return false;
    if (want) {
      int64_t got[MAX_RANK + 1], shp[MAX_RANK];
      int sr = index_result_shape(ix, shp);
      got[0] = e->kind == IX_REF ? e->idx.view->shape[0] : e->kind == IX_ARRAY ? e->idx.shape[0] : ix->int_shape[0];
      for (int i = 1; i < sr; i++) got[i] = shp[i];
      if (!same_shape(want_rank, want, sr, got) && fire(c, D_X2, at, shape_str(c, want_rank, want), shape_str(c, sr, got)))
        return false;
    }
  } else {
    if (e->idx.view->dtype != DT_INT32 && fire(c, D_X3, at)) return false;
    const char *pe = prior_error(e->idx.view, e->idx.view->ntr);
    if (pe && fire(c, D_G2, at, pe)) return false;
  }
  if (e->kind == IX_REF && e->idx.view->ref->space != SP_VMEM &&
      fire(c, D_X4, at, space_repr(e->idx.view->ref->space)))
    return false;
  return true;
}

/* Examines every NDIndexer of v; returns the transform index of the first
 * with offsets, -1 when none, -2 when a rule fired. */
static int examine(Checker *c, Loc at, const View *v, int want_rank, const int64_t *want) {
  int found = -1;
  for (int i = 0; i < v->ntr; i++) {
    if (v->tr[i]->kind != TR_INDEX || !is_candidate(v->tr[i]->idx)) continue;
    if (!offset_checks(c, at, v->tr[i]->idx, want_rank, want)) return -2;
    if (found < 0) found = i;
    if (want) break; /* the indexed side stops at the first offsets */
  }
  return found;
}

/* The view's shape with transform `off` taking its major dim whole. */
static int shape_without_offsets(const View *v, int off, int64_t *shape) {
  if (off < 0) {
    memcpy(shape, v->shape, sizeof(int64_t) * MAX_RANK);
    return v->rank;
  }
  const Transform *t = v->tr[off];
  NDIndexer ix = *t->idx;
  ix.e[0].kind = IX_SLICE;
  ix.e[0].start = 0;
  ix.e[0].size = ix.shape[0];
  ix.e[0].stride = 1;
  ix.e[0].start_static = ix.e[0].size_static = true;
  ix.int_rank = 0;
  for (int k = 1; k < ix.n; k++)
    if (ix.e[k].kind == IX_INT && t->idx->int_rank > 0) ix.e[k].kind = IX_INT; /* broadcast ints stay squeezed */
  int r = index_result_shape(&ix, shape);
  for (int i = off + 1; i < v->ntr; i++) { /* X5 forbids these; kept for safety */
    r = v->tr[i]->rank;
    memcpy(shape, v->tr[i]->shape, sizeof(int64_t) * MAX_RANK);
  }
  return r;
}

static bool apply_transforms(Checker *c, Loc at, const View *v, int off) {
  for (int i = 0; i < v->ntr; i++) {
    const Transform *t = v->tr[i];
    if (t->kind != TR_INDEX) {
      const char *pe = prior_error(v, i + 1);
      if (pe && fire(c, D_G2, at, pe)) return false;
      continue;
    }
    for (int k = (i == off); k < t->idx->n; k++)
      if (t->idx->e[k].kind == IX_SLICE && t->idx->e[k].stride != 1 && fire(c, D_G2, at, MSG_STRIDED)) return false;
  }
  return true;
}

/* One direction of _prepare_dma_refs: `idx` is the side that may carry
 * offsets, `other` the side that must not. */
static bool prepare_indexed(Checker *c, Loc at, const View *idx, const View *other, bool gather, DmaPlan *pl) {
  int o = examine(c, at, other, 0, NULL);
  if (o == -2) return false;
  if (o >= 0 && fire(c, gather ? D_D1 : D_D2, at)) return false;
  if (!apply_transforms(c, at, other, -1)) return false;
  int f = examine(c, at, idx, other->rank, other->shape);
  if (f == -2) return false;
  if (f >= 0) {
    if (f != idx->ntr - 1 && fire(c, D_X5, at)) return false;
    pl->indirect = true;
    pl->off = &idx->tr[f]->idx->e[0];
    pl->off_tr = f;
    pl->flat = index_without_offsets(c->ix.arena, idx, f, &pl->off_e);
  }
  return apply_transforms(c, at, idx, f);
}

static bool prepare_dma(Checker *c, Loc at, const View *src, const View *dst, bool add, bool start, DmaPlan *pl) {
  memset(pl, 0, sizeof *pl);
  pl->off_tr = -1;
  Space s = src->ref->space, d = dst->ref->space;
  if ((s == SP_HBM || s == SP_VMEM_SHARED) && d == SP_VMEM) {
    pl->gather = true;
    if (!prepare_indexed(c, at, src, dst, true, pl)) return false;
  } else if (s == SP_VMEM && (d == SP_HBM || d == SP_VMEM_SHARED)) {
    if (!prepare_indexed(c, at, dst, src, false, pl)) return false;
  } else {
    int f = examine(c, at, src, 0, NULL);
    if (f == -2) return false;
    if (f < 0 && (f = examine(c, at, dst, 0, NULL)) == -2) return false;
    if (f >= 0 && fire(c, D_D3, at, space_repr(s), space_repr(d))) return false;
    if (add && start && fire(c, D_D4, at, raw_repr(src->ref), raw_repr(dst->ref))) return false;
    if (!apply_transforms(c, at, src, -1) || !apply_transforms(c, at, dst, -1)) return false;
  }
  if (add && start && !pl->indirect) {
    const char *r = pl->gather ? "src_ref" : "dst_ref";
    if (fire(c, D_D5, at, r, r, r, r)) return false;
  }
  pl->src_rank = shape_without_offsets(src, pl->gather ? pl->off_tr : -1, pl->src_shape);
  pl->dst_rank = shape_without_offsets(dst, pl->gather ? -1 : pl->off_tr, pl->dst_shape);
  return true;
}

static bool dma_ref(Checker *c, Expr *e, View **v, bool *ok) {
  AVal a;
  if (!eval(&c->ix, e, &a)) return false;
  *ok = a.kind == AV_REF;
  *v = *ok ? a.view : NULL;
  return true;
}

static bool static_field(Checker *c, Op *op, FieldId f, int64_t dflt, int64_t *out) {
  *out = dflt;
  if (!(op->has & (1u << f))) return true;
  AVal a;
  if (!eval_value(c, op->e[f], &a)) return false;
  if (a.rank || !a.is_static || dtype_is_float(a.dtype)) {
    char msg[128];
    snprintf(msg, sizeof msg, "'%s' must be a literal %s", field_key(f), f == FLD_ADD ? "true or false" : "integer");
    return input_error(c, op->e[f]->loc, msg);
  }
  *out = a.sval.i;
  op->e[f]->has_sval = true, op->e[f]->sval = a.sval.i; /* for the lowering */
  return true;
}

static bool check_async_copy(Checker *c, Op *op) {
  int64_t prio, add;
  if (!static_field(c, op, FLD_PRIORITY, 0, &prio) || !static_field(c, op, FLD_ADD, 0, &add)) return false;
  View *src, *dst, *sem;
  bool s_ok, d_ok, m_ok;
  if (!dma_ref(c, op->e[FLD_SRC], &src, &s_ok) || !dma_ref(c, op->e[FLD_DST], &dst, &d_ok) ||
      !dma_ref(c, op->e[FLD_SEM], &sem, &m_ok))
    return false;
  if (prio < 0 && fire(c, D_H2, op->loc, num(c, prio))) return false;
  if (!(s_ok && d_ok && m_ok) && fire(c, D_H3, op->loc)) return false;
  if (!s_ok || !d_ok || !m_ok) return false;
  if (sem->ref->space != SP_SEMAPHORE) return input_error(c, op->e[FLD_SEM]->loc, "sem must name a semaphore ref (space: semaphore)");
  if (sem->rank && fire(c, D_H4, op->loc, shape_str(c, sem->rank, sem->shape))) return false;
  DmaPlan pl;
  if (!prepare_dma(c, op->loc, src, dst, add, true, &pl)) return false;
  op->dma = arena_alloc(c->ix.arena, sizeof pl);
  memcpy(op->dma, &pl, sizeof pl);
  Desc *d = arena_alloc(c->ix.arena, sizeof *d);
  *d = (Desc){op, src, dst, sem};
  AVal out;
  memset(&out, 0, sizeof out);
  out.kind = AV_DESC;
  out.desc = d;
  bind(c, op->name[FLD_OUT], &out);
  return true;
}

static bool check_wait(Checker *c, Op *op) {
  View *src, *dst, *sem;
  if (op->wait_desc) {
    const AVal *a = lookup(c, op->wait_desc);
    if (!a || a->kind != AV_DESC) {
      char msg[200];
      snprintf(msg, sizeof msg, "'%.60s' is not a DMA descriptor: wait takes the out: name of an async_copy", op->wait_desc);
      return input_error(c, op->nloc[FLD_NAME], msg);
    }
    src = a->desc->src, dst = a->desc->dst, sem = a->desc->sem;
  } else {
    bool s_ok, d_ok, m_ok;
    if (!dma_ref(c, op->e[FLD_SRC], &src, &s_ok) || !dma_ref(c, op->e[FLD_DST], &dst, &d_ok) ||
        !dma_ref(c, op->e[FLD_SEM], &sem, &m_ok))
      return false;
    if (!m_ok && fire(c, D_H7, op->loc)) return false;
    if (!s_ok || !d_ok) return input_error(c, op->loc, "wait's src and dst must be ref expressions");
    if (!m_ok) return false;
  }
  if (sem->ref->space != SP_SEMAPHORE) return input_error(c, op->loc, "sem must name a semaphore ref (space: semaphore)");
  if (sem->ref->sem == SEM_REGULAR && fire(c, D_H8, op->loc)) return false;
  DmaPlan pl;
  if (!prepare_dma(c, op->loc, src, dst, false, false, &pl)) return false;
  op->dma = arena_alloc(c->ix.arena, sizeof pl);
  memcpy(op->dma, &pl, sizeof pl);
  op->view[FLD_SRC] = src;
  op->view[FLD_DST] = dst;
  op->view[FLD_SEM] = sem;
  return true;
}

static bool check_sync_copy(Checker *c, Op *op) {
  int64_t add;
  if (!static_field(c, op, FLD_ADD, 0, &add)) return false;
  int n = op->nlist[FLD_SRC] < 0 ? 1 : op->nlist[FLD_SRC];
  if (n > 64) return input_error(c, op->floc[FLD_SRC], "sync_copy copies at most 64 pairs");
  View *src[64], *dst[64];
  DmaPlan pl[64];
  for (int i = 0; i < n; i++) {
    Expr *se = n == 1 && op->nlist[FLD_SRC] < 0 ? op->e[FLD_SRC] : op->list[FLD_SRC][i];
    Expr *de = n == 1 && op->nlist[FLD_DST] < 0 ? op->e[FLD_DST] : op->list[FLD_DST][i];
    bool s_ok, d_ok;
    if (!dma_ref(c, se, &src[i], &s_ok) || !dma_ref(c, de, &dst[i], &d_ok)) return false;
    if (!(s_ok && d_ok) && fire(c, D_H3, op->loc)) return false;
    if (!s_ok || !d_ok) return false;
    if (!prepare_dma(c, op->loc, src[i], dst[i], add, true, &pl[i])) return false;
  }
  DmaPlan *plans = arena_alloc(c->ix.arena, sizeof *plans * (size_t)n);
  memcpy(plans, pl, sizeof *plans * (size_t)n);
  op->dma = plans;
  op->views[FLD_SRC] = arena_alloc(c->ix.arena, sizeof(void *) * (size_t)n);
  op->views[FLD_DST] = arena_alloc(c->ix.arena, sizeof(void *) * (size_t)n);
  for (int i = 0; i < n; i++) op->views[FLD_SRC][i] = src[i], op->views[FLD_DST][i] = dst[i];
  return true;
}

static bool int_scalar(Checker *c, Expr *e, const char *what) {
  AVal a;
  if (!eval_value(c, e, &a)) return false;
  if (a.rank || !(dtype_is_int(a.dtype) || a.dtype == DT_BOOL)) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s must be an integer scalar", what);
    return input_error(c, e->loc, msg);
  }
  return true;
}

static bool check_semaphore(Checker *c, Op *op) {
  View *sem;
  bool ok;
  if (!dma_ref(c, op->e[FLD_SEM], &sem, &ok)) return false;
  if (!ok || sem->ref->space != SP_SEMAPHORE) return input_error(c, op->e[FLD_SEM]->loc, "sem must name a semaphore ref (space: semaphore)");
  if (sem->rank) return input_error(c, op->e[FLD_SEM]->loc, "pick one semaphore of the array, e.g. sems.at[0]");
  /* check_sem_avals (jax 0.10.2 pallas/primitives.py:877): only regular and
   * barrier semaphores are signalled or waited on by value; the message
   * prints a Python set, whose order varies from run to run */
  if (sem->ref->sem == SEM_DMA &&
      fire(c, D_SG1, op->loc, op->kind == OPK_SEMAPHORE_SIGNAL ? "signal" : "wait"))
    return false;
  static const FieldId fs[] = {FLD_INC, FLD_CORE, FLD_SUBCORE, FLD_VALUE};
  for (int i = 0; i < 4; i++)
    if ((op->has & (1u << fs[i])) && !int_scalar(c, op->e[fs[i]], field_key(fs[i]))) return false;
  return true;
}

/* ---- fetch_and_add (SPEC §4.K, FA1-FA8) ------------------------------ */
static bool check_fetch_and_add(Checker *c, Op *op) {
  View *v;
  AVal val, sub;
  if (!eval_ref(c, op->e[FLD_REF], &v) || !eval_value(c, op->e[FLD_VALUE], &val) || !eval_value(c, op->e[FLD_SUBCORE], &sub))
    return false;
  int64_t size = 1;
  for (int i = 0; i < v->rank; i++) size *= v->shape[i];
  if (size != 1 && fire(c, D_FA1, op->loc, shape_str(c, v->rank, v->shape))) return false;
  const NDIndexer *ix = v->ntr == 1 && v->tr[0]->kind == TR_INDEX ? v->tr[0]->idx : NULL;
  if (v->ntr && !ix) {
    char tr[900];
    fmt_transforms(tr, sizeof tr, v, 0, v->ntr, false);
    if (fire(c, D_FA3, op->loc, str(c, tr))) return false;
  }
  if (ix)
    for (int i = 0; i < ix->n; i++)
      if (ix->e[i].kind == IX_SLICE) {
        char b[900];
        fmt_indexer(b, sizeof b, ix, false);
        char *open = strchr(b, '('), *end = strstr(b, "), shape=");
        if (open && end) end[1] = '\0';
        if (fire(c, D_FA2, op->loc, str(c, open ? open + 9 : b))) return false;
      }
  if (v->ref->dtype != DT_INT32 && fire(c, D_FA4, op->loc, dtype_name(v->ref->dtype))) return false;
  if (!(v->ref->space == SP_SMEM) ) {
    char b[300];
    fmt_ref_aval(b, sizeof b, v);
    if (fire(c, D_FA5, op->loc, str(c, b))) return false;
  }
  char b[300];
  fmt_aval_str(b, sizeof b, &val);
  if ((val.dtype != DT_INT32 || val.rank) && fire(c, D_FA6, op->loc, "int32", str(c, b))) return false;
  if (ix)
    for (int i = 0; i < ix->n; i++)
      if (ix->e[i].kind != IX_SLICE && (ix->e[i].kind != IX_INT || ix->e[i].idx.dtype != DT_INT32)) {
        fmt_aval(b, sizeof b, &ix->e[i].idx);
        char l[320];
        snprintf(l, sizeof l, "[%s]", b);
        if (fire(c, D_FA7, op->loc, str(c, l))) return false;
      }
  fmt_aval_str(b, sizeof b, &sub);
  if ((sub.dtype != DT_INT32 || sub.rank) && fire(c, D_FA8, op->loc, str(c, b))) return false;
  AVal out = scalar_av(DT_INT32, false);
  bind(c, op->name[FLD_OUT], &out);
  return true;
}

/* ---- control flow and the walk --------------------------------------- */
static bool check_body(Checker *c, const Body *b);
static bool check_carried(Checker *c, Op *op, const AVal *var, bool scan);

/* pl.loop with static bounds and step calls fori_loop(0, cdiv(hi - lo, step))
 * (pallas/helpers.py), a scan of length max(that, 0); cdiv is
 * (a + b - 1) // b with floor division, whatever the sign of the step. */
static bool static_zero_trips(Checker *c, Op *op) {
  int64_t v[3] = {0, 0, 1};
  for (int i = 0; i < op->nlist[FLD_RANGE] && i < 3; i++) {
    AVal a;
    eval_value(c, op->list[FLD_RANGE][i], &a);
    if (!a.is_static) return false;
    v[i] = a.sval.i;
  }
  int64_t a = v[1] - v[0] + v[2] - 1, b = v[2];
  int64_t q = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
  return q <= 0;
}

static bool check_loop(Checker *c, Op *op) {
  for (int i = 0; i < op->nlist[FLD_RANGE]; i++) {
    if (!int_scalar(c, op->list[FLD_RANGE][i], "a loop bound")) return false;
    AVal v; /* the counter is an int32 register: bounds past it would wrap */
    eval_value(c, op->list[FLD_RANGE][i], &v);
    if (v.is_static && (v.sval.i < INT32_MIN || v.sval.i > INT32_MAX)) {
      char msg[160];
      snprintf(msg, sizeof msg, "loop range values must fit in int32 (the loop variable is an int32), got %lld", (long long)v.sval.i);
      return input_error(c, op->list[FLD_RANGE][i]->loc, msg);
    }
  }
  if (op->nlist[FLD_RANGE] == 3) {
    AVal st;
    eval_value(c, op->list[FLD_RANGE][2], &st);
    if (st.is_static && st.sval.i == 0) return input_error(c, op->list[FLD_RANGE][2]->loc, "a loop step cannot be zero");
  }
  AVal var = scalar_av(DT_INT32, true);
  bool scan = true; /* fori_loop uses scan when both bounds are static */
  for (int i = 0; i < 2; i++) {
    AVal b;
    eval_value(c, op->list[FLD_RANGE][i], &b);
    scan &= b.is_static;
  }
  if (c->ix.phase != 'L' || !static_zero_trips(c, op)) return check_carried(c, op, &var, scan);
  /* Mosaic's for-loop lowering emits no scf.for for a scan of length 0
   * (has_main = main_steps > 0, jax 0.10.2 pallas/mosaic/lowering.py), so
   * no lowering rule sees the body: trace it again with no rule armed. */
  c->ix.phase = '-';
  bool ok = check_carried(c, op, &var, scan);
  c->ix.phase = 'L';
  return ok;
}

/* ---- plsc.parallel_loop's carries (sc_primitives.py) ---------------------- */
/* PL1, _parallel_loop_abstract_eval: the carries' avals as a list. */
static bool parallel_ref_carry(Checker *c, Op *op) {
  char b[900] = "[", t[300];
  for (int k = 0; k < op->ncarry; k++) {
    AVal a;
    if (!eval(&c->ix, op->list[FLD_CARRY][k], &a)) return false;
    if (a.kind == AV_REF) fmt_ref_aval(t, sizeof t, a.view);
    else fmt_aval(t, sizeof t, &a);
    if (strlen(b) + strlen(t) + 4 < sizeof b) strcat(b, k ? ", " : ""), strcat(b, t);
  }
  strcat(b, "]");
  fire(c, D_PL1, op->loc, str(c, b));
  return false;
}

/* PL2: the body's result (next) and the carry as pytrees: one carry is
 * the value itself, several a tuple (as the carry conventions of CF1). */
static void tree_text(char *b, size_t n, int k) {
  if (k == 1) { snprintf(b, n, "PyTreeDef(*)"); return; }
  size_t o = (size_t)snprintf(b, n, "PyTreeDef((");
  for (int i = 0; i < k && o + 8 < n; i++) o += (size_t)snprintf(b + o, n - o, "%s*", i ? ", " : "");
  snprintf(b + o, n - o, "))");
}

static bool parallel_tree_ok(Checker *c, Op *op) {
  int nn = op->nlist[FLD_NEXT] < 0 ? 0 : op->nlist[FLD_NEXT];
  if (!op_parallel(op) || nn == op->ncarry) return true;
  char r[300], t[300];
  tree_text(r, sizeof r, nn);
  tree_text(t, sizeof t, op->ncarry);
  fire(c, D_PL2, op->loc, str(c, r), str(c, t));
  return false;
}

/* ---- carries (lax.fori_loop / scan / while_loop) ------------------------ */
/* A parallel loop's whole-ref carry (*ref_carry) is traced through the body
 * first: jax 0.10.2 raises PL1 in parallel_loop_p's abstract eval, when the
 * traced body is bound (sc_primitives.py:766-769). */
static bool carry_inits(Checker *c, Op *op, AVal *init, bool *ref_carry) {
  for (int k = 0; k < op->ncarry; k++) {
    AVal a;
    if (!eval(&c->ix, op->list[FLD_CARRY][k], &a)) return false;
    if (a.kind == AV_REF && op_parallel(op) && a.view->ntr == 0) {
      init[k] = a, *ref_carry = true;
      continue;
    }
    if (a.kind != AV_VALUE) {
      char msg[200];
      snprintf(msg, sizeof msg, "the carry '%.60s' must be a value, not a %s (a loop reads refs directly)", op->carry[k],
               a.kind == AV_REF ? "ref" : "DMA descriptor");
      return input_error(c, op->list[FLD_CARRY][k]->loc, msg);
    }
    init[k] = a;
  }
  return true;
}

/* Evaluates `next` into out (the body has been checked). */
static bool carry_nexts(Checker *c, Op *op, AVal *out) {
  for (int k = 0; k < op->ncarry; k++)
    if (!eval_value(c, op->list[FLD_NEXT][k], &out[k])) return false;
  return true;
}

static bool typematch(const AVal *a, const AVal *b) { return a->dtype == b->dtype && same_shape(a->rank, a->shape, b->rank, b->shape); }

/* JAX's _promote_weak_typed_inputs: a weakly typed initial value that does
 * not match takes result_type(init, next), strongly typed.  True when any
 * carry changed (the body is then traced again). */
static bool promote_weak(Checker *c, Op *op, AVal *init, const AVal *out) {
  bool changed = false;
  for (int k = 0; k < op->ncarry; k++) {
    if (!init[k].weak || typematch(&init[k], &out[k])) continue;
    Dtype t;
    bool w;
    if (!promote(c, op->list[FLD_CARRY][k]->loc, &init[k], &out[k], &t, &w)) return false;
    init[k].dtype = t;
    init[k].weak = false;
    changed = true;
  }
  return changed;
}

/* The components of the carry pytree: a single carry is the value itself,
 * several are a tuple in the order of `carry`; `base` is the path of the
 * user's carry inside the function's argument. */
static void carry_path(char *buf, size_t n, const Op *op, int k, const char *base) {
  if (op->ncarry == 1) snprintf(buf, n, "%s", base);
  else snprintf(buf, n, "%s[%d]", base, k);
}

static void carry_diff(char *buf, size_t n, const Op *op, int k, const AVal *in, const AVal *out, bool scan) {
  char path[96], a[160], b[160];
  AVal si = *in, so = *out;
  si.weak = so.weak = false; /* str_short shows no weak type */
  fmt_aval_str(a, sizeof a, &si);
  fmt_aval_str(b, sizeof b, &so);
  bool dt = in->dtype != out->dtype, sh = !same_shape(in->rank, in->shape, out->rank, out->shape);
  /* fori_loop traces scan's scanned_fun(loop_carry, _) with loop_carry =
   * (i, val) when its bounds are static, else while_loop's
   * while_body_fun(loop_carry) with (i, upper, val); a while's body
   * function is the user's, whose parameter name sc-sim does not know:
   * JAX then names the carry by its path. */
  if (op->kind == OPK_LOOP)
    carry_path(path, sizeof path, op, k, scan ? "the input carry component loop_carry[1]" : "the input carry component loop_carry[2]");
  else if (op->ncarry == 1) snprintf(path, sizeof path, "the input carry");
  else snprintf(path, sizeof path, "the input carry at path [%d]", k);
  snprintf(buf, n, "%s has type %s but the corresponding output carry component has type %s%s%s%s%s", path, a, b,
           dt || sh ? ", so " : "", dt ? "the dtypes do not match" : "", dt && sh ? ", and " : "", sh ? "the shapes do not match" : "");
}

/* CF1 when a next value's type differs from its carry's. */
static bool carry_types_ok(Checker *c, Op *op, const AVal *init, const AVal *out, bool scan) {
  char diffs[900] = "", one[300];
  int bad = 0, last = -1;
  for (int k = 0; k < op->ncarry; k++) bad += !typematch(&init[k], &out[k]);
  if (!bad) return true;
  size_t len = 0;
  for (int k = 0, i = 0; k < op->ncarry && len < sizeof diffs - 1; k++) {
    if (typematch(&init[k], &out[k])) continue;
    carry_diff(one, sizeof one, op, k, &init[k], &out[k], scan);
    if (bad == 1) one[0] = (char)(one[0] - 'a' + 'A'); /* _capitalize */
    i++;
    len += (size_t)snprintf(diffs + len, sizeof diffs - len, bad == 1 ? "%s.\n" : i < bad ? "  * %s;\n%s" : "  * %s.\n", one, i < bad - 1 ? "\n" : "");
    last = k;
  }
  const char *name = op->kind == OPK_WHILE ? "while_loop body" : scan ? "scan body" : "while_loop body";
  if (!fire(c, D_CF1, op->loc, name, diffs)) return true;
  char where[200];
  snprintf(where, sizeof where, "the carry '%.60s' starts as %%s and 'next' gives it %%s (line %d)", op->carry[last], op->next_loc[last].line);
  char a[160], b[160];
  fmt_aval_str(a, sizeof a, &init[last]);
  fmt_aval_str(b, sizeof b, &out[last]);
  note(c, where, a, b);
  return false;
}

static void bind_carries(Checker *c, const Op *op, const AVal *v) {
  for (int k = 0; k < op->ncarry; k++) bind(c, op->carry[k], &v[k]);
}

/* One trace of the loop: carries bound to init, the cond (while), the
 * body, then the next values. */
static bool trace_loop(Checker *c, Op *op, const AVal *var, AVal *init, AVal *out) {
  bind_carries(c, op, init);
  if (var) bind(c, op->name[FLD_VAR], var);
  if (op->kind == OPK_WHILE) {
    AVal a;
    if (!eval_value(c, op->e[FLD_COND], &a)) return false;
    if (a.rank || a.dtype != DT_BOOL) {
      char ty[200];
      fmt_aval(ty, sizeof ty, &a);
      fire(c, D_CF2, op->loc, ty);
      note(c, "the condition is '%s'%s", op->e[FLD_COND]->text ? op->e[FLD_COND]->text : "?", "");
      return false;
    }
  }
  return check_body(c, &op->body) && parallel_tree_ok(c, op) && carry_nexts(c, op, out);
}

/* Traces the body with the carries' types, again when a weakly typed
 * carry takes the next value's type, then checks they agree (CF1); after
 * the loop the carries keep those types. */
static bool check_carried(Checker *c, Op *op, const AVal *var, bool scan) {
  AVal *init = arena_alloc(c->ix.arena, sizeof *init * (size_t)(op->ncarry + 1));
  AVal *out = arena_alloc(c->ix.arena, sizeof *out * (size_t)(op->ncarry + 1));
  bool ref_carry = false;
  if (!carry_inits(c, op, init, &ref_carry)) return false;
  if (!trace_loop(c, op, var, init, out)) return false;
  if (ref_carry) return parallel_ref_carry(c, op);
  if (promote_weak(c, op, init, out)) {
    if (c->ix.failed) return false;
    if (c->work > CHECK_MAX_WORK)
      return input_error(c, op->loc, "the loops' carries need too many traces to settle their types (nested loops whose weakly typed carries each change type): give the carries' initial values a dtype, e.g. astype(0, int32)");
    if (!trace_loop(c, op, var, init, out)) return false;
  }
  if (c->ix.failed || !carry_types_ok(c, op, init, out, scan)) return !c->ix.failed;
  op->carry_ty = arena_alloc(c->ix.arena, sizeof *op->carry_ty * (size_t)(op->ncarry + 1));
  for (int k = 0; k < op->ncarry; k++) op->carry_ty[k] = init[k].dtype;
  bind_carries(c, op, init);
  return true;
}

static bool check_while(Checker *c, Op *op) { return check_carried(c, op, NULL, false); }

static bool check_when(Checker *c, Op *op) {
  Expr *cond = op->e[FLD_COND];
  if (cond->kind == EX_BOOL) /* a Python if: the untaken body is not traced */
    return check_body(c, cond->ival ? &op->body : &op->els);
  AVal a;
  if (!eval_value(c, cond, &a)) return false;
  if (a.rank || dtype_is_float(a.dtype)) return input_error(c, cond->loc, "a when condition must be a bool or integer scalar");
  return check_body(c, &op->body) && check_body(c, &op->els);
}

/* expect is sc-sim's own operation, never lowered by JAX: no phase-L rule
 * applies to its expressions (the rules of phase T still type them). */
static bool check_expect_traced(Checker *c, Op *op);

static bool check_expect(Checker *c, Op *op) {
  if (c->ix.phase != 'L') return check_expect_traced(c, op);
  c->ix.phase = '-';
  bool ok = check_expect_traced(c, op);
  c->ix.phase = 'L';
  return ok;
}

static bool check_expect_traced(Checker *c, Op *op) {
  AVal a, e;
  if (op->has & F(REF)) {
    View *v;
    if (!eval_ref(c, op->e[FLD_REF], &v)) return false;
    a = scalar_av(v->dtype, false);
    a.rank = v->rank;
    memcpy(a.shape, v->shape, sizeof a.shape);
  } else if (!eval_value(c, op->e[FLD_VALUE], &a)) {
    return false;
  }
  if (!eval_value(c, op->e[FLD_EQUALS], &e)) return false;
  AVal r;
  return bshape(c, op->e[FLD_EQUALS]->loc, &a, &e, &r);
}

/* let: {name: "k, v", value: plsc.sort_key_val(...)}: each name bound to
 * its result, as Python unpacks the tuple. */
static bool check_tuple_let(Checker *c, Op *op) {
  AVal r[3];
  int n;
  if (!check_scanops_tuple(&c->ix, c->p, op->e[FLD_VALUE], r, &n)) return false;
  if (!check_scanops_unpack(&c->ix, op->nloc[FLD_NAME], op->ncarry, n)) return false;
  for (int k = 0; k < n; k++) bind(c, op->carry[k], &r[k]);
  return true;
}

static bool check_let(Checker *c, Op *op) {
  AVal a;
  if (op->ncarry) return check_tuple_let(c, op);
  if (!eval(&c->ix, op->e[FLD_VALUE], &a)) return false;
  bind(c, op->name[FLD_NAME], &a);
  return true;
}

/* A jaxpr primitive that has no lowering rule for the kernel's core type
 * (the Python front end writes one where a kernel uses it): upstream's
 * lowering rejects it when it reaches the equation (U1, phase L). */
static bool check_unimplemented(Checker *c, const Op *op) {
  const char *kt = c->p->kernel == KERNEL_SCALAR ? "sc_scalar_subcore" : "sc_vector_subcore";
  return !fire(c, D_U1, op->loc, kt, op->name[FLD_PRIMITIVE]);
}

/* ---- pl.debug_print, pl.debug_check ------------------------------------ */
/* Whether a format string has a replacement field, as JAX's debug_print
 * decides it: only the first chunk string.Formatter().parse yields counts,
 * so "a {{ b {}" has none (the chunk "a {" ends at the escaped brace).
 * Parsing that first chunk can raise Python's ValueError (DP0): *err is
 * then the message's brace, or "}" with *unclosed for a field never closed. */
static bool has_placeholder(const char *s, const char **err, bool *unclosed) {
  *err = NULL, *unclosed = false;
  for (; *s; s++) {
    if (*s == '}') {
      if (s[1] == '}') return false;
      return *err = "}", false;
    }
    if (*s != '{') continue;
    if (s[1] == '{') return false;
    if (!s[1]) return *err = "{", false;
    if (!strchr(s + 1, '}')) return *unclosed = true, false;
    return true;
  }
  return false;
}

/* _debug_print_lowering_rule (sc_lowering.py): ordered, then placeholders,
 * then the number of inputs; each input is typed at trace time first. */
static bool check_debug_print(Checker *c, Op *op) {
  int n = op->nlist[FLD_ARGS] < 0 ? 0 : op->nlist[FLD_ARGS];
  for (int i = 0; i < n; i++) {
    AVal a;
    if (!eval(&c->ix, op->list[FLD_ARGS][i], &a)) return false;
    if (a.kind == AV_DESC) return input_error(c, op->list[FLD_ARGS][i]->loc, "debug_print prints a value or a ref, not a DMA descriptor");
  }
  bool ordered = false;
  if (op->has & F(ORDERED)) {
    Expr *e = op->e[FLD_ORDERED];
    if (e->kind != EX_BOOL) return input_error(c, e->loc, "'ordered' must be true or false");
    ordered = e->ival != 0;
  }
  if (ordered && fire(c, D_DP1, op->loc)) return false;
  const char *brace;
  bool unclosed, ph = has_placeholder(op->name[FLD_MESSAGE], &brace, &unclosed);
  if (unclosed && fire(c, D_DP4, op->loc)) return false;
  if (brace && fire(c, D_DP0, op->loc, brace)) return false;
  if (ph && fire(c, D_DP2, op->loc)) return false;
  if (n > 1 && fire(c, D_DP3, op->loc)) return false;
  return true;
}

/* checkify.debug_check takes a scalar predicate. */
static bool check_debug_check(Checker *c, Op *op) {
  AVal a;
  if (!eval_value(c, op->e[FLD_COND], &a)) return false;
  if (a.dtype != DT_BOOL || a.rank != 0) {
    char msg[400], dims[200] = "";
    for (int i = 0, k = 0; i < a.rank && k < 180; i++) k += snprintf(dims + k, sizeof dims - (size_t)k, "%s%lld", i ? "," : "", (long long)a.shape[i]);
    snprintf(msg, sizeof msg, "debug_check: 'cond' must be a boolean scalar (pl.debug_check takes a scalar predicate), got %s[%s]",
             dtype_name(a.dtype), dims);
    return input_error(c, op->e[FLD_COND]->loc, msg);
  }
  return true;
}

static bool check_op(Checker *c, Op *op) {
  switch (op->kind) {
  case OPK_GET: return check_get(c, op);
  case OPK_SET:
  case OPK_SWAP: return check_swap(c, op);
  case OPK_ADDUPDATE:
  case OPK_LOAD_EXPANDED:
  case OPK_STORE_COMPRESSED:
  case OPK_ADDUPDATE_COMPRESSED: return check_sc_access(c, op);
  case OPK_LOAD_GATHER:
  case OPK_STORE_SCATTER:
  case OPK_ADDUPDATE_SCATTER: return check_gather_scatter(c, op);
  case OPK_ASYNC_COPY: return check_async_copy(c, op);
  case OPK_WAIT: return check_wait(c, op);
  case OPK_SYNC_COPY: return check_sync_copy(c, op);
  case OPK_SEMAPHORE_SIGNAL:
  case OPK_SEMAPHORE_WAIT: return check_semaphore(c, op);
  case OPK_FETCH_AND_ADD: return check_fetch_and_add(c, op);
  case OPK_BARRIER: return true;
  case OPK_LET: return check_let(c, op);
  case OPK_LOOP: return check_loop(c, op);
  case OPK_WHILE: return check_while(c, op);
  case OPK_WHEN: return check_when(c, op);
  case OPK_EXPECT: return check_expect(c, op);
  case OPK_UNIMPLEMENTED: return check_unimplemented(c, op);
  case OPK_UPDATE: case OPK_CALL: break; /* the loader expanded them (load_sugar.c) */
  case OPK_DEBUG_PRINT: return check_debug_print(c, op);
  case OPK_DEBUG_CHECK: return check_debug_check(c, op);
  case OPK_COUNT: break;
  }
  return false;
}

/* Checker errors point at the operation's key (PROGRAM_FORMAT.md); when a
 * rule fired on a sub-expression, a note keeps where. */
static void at_operation(Diag *d, const Op *op) {
  if (diag_class(d->id) != DC_RULE || op->kind == OPK_LOOP || op->kind == OPK_WHILE || op->kind == OPK_WHEN) return;
  if (d->loc.line != op->loc.line || d->loc.col != op->loc.col) {
    Loc inner = d->loc;
    d->loc = op->loc;
    if (inner.line > 0 && d->nnotes < DIAG_MAX_NOTES) {
      memmove(d->notes[1], d->notes[0], sizeof d->notes[0] * (size_t)d->nnotes);
      snprintf(d->notes[0], sizeof d->notes[0], "raised by the expression at line %d, column %d", inner.line, inner.col);
      d->nnotes++;
    }
  }
}

static bool check_body(Checker *c, const Body *b) {
  for (int i = 0; i < b->n; i++) {
    c->work++;
    check_op(c, b->ops[i]);
    if (c->ix.failed) {
      at_operation(c->ix.d, b->ops[i]);
      return false;
    }
  }
  return true;
}

/* C0, C2, C3: building the mesh fails before anything is traced. */
static bool check_mesh(Checker *c) {
  Program *p = c->p;
  if (!p->chip->has_sc) return !fire(c, D_C0, p->chip_loc.line ? p->chip_loc : p->mesh_loc);
  Loc at = p->mesh_loc.line ? p->mesh_loc : p->chip_loc;
  if (p->mesh_cores > p->params.num_cores && fire(c, D_C2, at, num(c, p->mesh_cores), num(c, p->params.num_cores)))
    return false;
  if (p->kernel == KERNEL_VECTOR && p->mesh_subcores > p->params.num_subcores &&
      fire(c, D_C3, at, num(c, p->mesh_subcores), num(c, p->params.num_subcores)))
    return false;
  return true;
}

/* Phase V: Mosaic verifies the kernel once it is lowered whole, so the
 * body's own lowering meets the verifier's rules (mosaic.h).  A register
 * bound the lowering reports is the driver's to report when it lowers. */
static bool verify_lowering(const Program *p, Diag *d) {
  Code code;
  Diag limit;
  lower_program(p, MUT_NONE, &code, &limit);
  bool ok = mosaic_verify(&code, d);
  lower_free(&code);
  return ok;
}

static bool loc_before(Loc a, Loc b) { return a.line < b.line || (a.line == b.line && a.col < b.col); }

/* Phase V with a pending GG3 / GSC4: the verifier's first error in program
 * order, the lowered code's or the pending one. */
static bool verify_with_pending(Checker *c, Diag *d) {
  if (!verify_lowering(c->p, d) && loc_before(d->loc, c->vpend_at)) return false;
  diag_set(d, c->vpend, c->vpend_at, c->vpend_arg[0], c->vpend_arg[1], c->vpend_arg[2]);
  return false;
}

bool check_program(Program *p, Diag *d) {
  static const char phases[] = "TL";
  Checker c;
  memset(&c, 0, sizeof c);
  c.ix.arena = &p->arena; /* views and plans stay with the program for the lowering */
  c.ix.d = d;
  c.ix.eval = eval;
  c.ix.core_type = p->kernel == KERNEL_SCALAR ? "sc_scalar_subcore" : "sc_vector_subcore";
  c.p = p;
  c.vpend = D_COUNT;
  c.ix.phase = 'T';
  bool ok = check_mesh(&c);
  for (int i = 0; ok && phases[i]; i++) {
    c.ix.phase = phases[i];
    c.nenv = 0;
    names_free(&c.latest);
    ok = check_body(&c, &p->body);
  }
  names_free(&c.latest);
  if (!ok || c.ix.failed) return false;
  if (c.vpend == D_COUNT) return verify_lowering(p, d);
  return verify_with_pending(&c, d);
}
