/* sim/reference.c -- the reference interpreter: SPEC §5, §7 and §9 applied
 * to the program body directly, element by element.
 *
 * It is deliberately simple and shares nothing with the engine but the IR
 * (with the checker's types and views) and the lane arithmetic of
 * isa/value.c.  Every view element is located by walking the view's
 * transforms back to the underlying ref, checking each level's bounds
 * (§9.2), except in a view reference_span.c shows affine and in bounds as
 * a whole, which is read and written as one span (for the ref itself and
 * one indexing by slices and integers, from a plan made on the view's
 * first resolution that only its dynamic starts move); expressions run as the
 * step lists of reference_expr.c, which hand what they do not cover back
 * to the tree walk below (ev).  DMAs are applied at their wait (§7.10);
 * subcores take turns, each running until it blocks on a barrier, a
 * semaphore or a DMA wait. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lowering/index.h"
#include "reference_valops.h"
#include "debug_print.h"
#include "../../lowering/scanops.h"
#include "reference_scan.h"
#include "reference_span.h"
#include "reference_expr.h"
#include "run.h"
#include "stream.h"

#define MAX_FRAMES (64 + 4)
#define MAX_PIECES 16
#define NAME_CACHE 64

/* A name's binding; allocated when first bound, so that a pointer to its
 * value stays valid while other names are bound. */
typedef struct {
  Value v;
} Bind;

/* An operation of a body as the scheduler reads it: its kind and (for the
 * accesses exec_op runs, once one ran) its ref's plan beside it, so that
 * neither waits for a load of the operation. */
typedef struct {
  const Op *op;
  OpKind kind;
  bool counts; /* !traced_only(op): --max-ops counts it */
  struct ViewPlan *plan; /* NULL: not yet looked up */
} XOp;

/* A body's XOps (body_x), by the body's address. */
typedef struct {
  const Body *b;
  XOp *x;
} BodyX;

typedef struct {
  const Body *body;
  XOp *x; /* body's operations (body_x), and its length: the next operation one load nearer */
  int n;
  int pc;
  const Op *loop; /* a loop frame: the loop op */
  bool carried;   /* a while, or a loop with carries: its iterations end in next_iteration */
  int64_t i, hi, step;
  Value *var;     /* a loop's variable's binding (bindings never move), NULL when it has none */
} Frame;

typedef struct {
  int64_t off; /* byte offset in the region */
  int n;       /* bytes */
} Piece;

typedef struct Pending {
  struct Pending *next;
  const Op *op;     /* the async_copy or sync_copy */
  Region *sem;      /* the semaphore's region and element */
  int64_t sem_off;
  int64_t bytes;    /* what the wait consumes */
  Region *src, *dst;
  Dtype dtype;      /* element type moved (the source's) */
  Dtype dst_dtype;  /* the destination's: differs only where Mosaic's types are signless-equal */
  bool add;
  int64_t n;        /* elements */
  Piece *sp, *dp;   /* one piece list per element, MAX_PIECES each */
  int *nsp, *ndp;
  bool span;        /* both views affine, element for element: ss and ds instead of the pieces */
  RefSpan ss, ds;
} Pending;

typedef struct {
  int core, subcore, idx;
  Frame fr[MAX_FRAMES];
  int depth;
  Bind **env;     /* by name id (Ref_.names); NULL: not bound */
  int capenv;
  bool done;
  int barrier_gen; /* barriers passed */
  bool at_barrier;
  Pending *pending;
} Sub;

/* The byte pieces of every element of one resolved view, walked once and
 * reused by the operation's later reads and writes of the same view. */
typedef struct {
  uint64_t gen;  /* the view it holds (RV.gen) */
  Piece *pc;     /* the pieces of element i: pc[first[i]] .. pc[first[i + 1] - 1] */
  int64_t *first;
  int64_t cap_pc, cap_n;
} PieceCache;
#define NCACHE 8

/* A compiled expression as prog_of keeps it, with its chain's name id
 * (ref_prog_chain_id) and its affine form when it has one, at hand. */
typedef struct ProgSlot {
  const Expr *key;
  RefProg *p;
  int chain;
  bool affine;
  RefAffine aff;
  const Value *bind; /* the affine form's name's binding in subcore bsub (bindings never move) */
  const void *bsub;  /* NULL: none kept */
} ProgSlot;

/* The scratch values of the accesses (do_get, do_swap, a gather and what they call):
 * an access runs no other access, so each is used by one at a time. */
enum { SCR_READ, SCR_OLD, SCR_AFTER, SCR_NEW, SCR_STORE, SCR_COUNT };

typedef struct {
  const Program *p;
  RunResult *r;
  Sub *subs;
  int nsub;
  uint64_t max_ops;
  int *arrived; /* per core: subcores waiting at the barrier */
  const int *atomics; /* the engine's order of fetch_and_adds (SPEC §9.10) */
  int natomics, next_atomic;
  uint64_t max_log; /* bytes of event log */
  Stream *st;       /* streaming verification: the engine runs beside (NULL: run alone) */
  /* The scheduler's pass, kept between calls while streaming: the next
   * subcore, and what the pass saw so far. */
  int rr;
  bool progress, all_done, waits; /* waits: a subcore waited for the engine */
  PieceCache cache[NCACHE]; /* the views resolved last, round robin */
  uint64_t gen;
  int next_cache;
  Value pool[32]; /* temporaries' lanes kept for reuse (tmp_take, tmp_give) */
  Value scratch[SCR_COUNT]; /* the lanes of the accesses' own values, which never nest */
  int npool;
  const RunLimits *lim;
  NameIndex names; /* every name bound or read: name -> its id */
  int nnames;
  const char *nc_key[NAME_CACHE]; /* name_id's cache */
  int nc_id[NAME_CACHE];
  const char *sc_name[NAME_CACHE]; /* env_slot's answers of late: name and subcore -> binding */
  const Sub *sc_sub[NAME_CACHE];
  Value *sc_val[NAME_CACHE];
  RefProgs *progs; /* compiled expressions (reference_expr.h) */
  ProgSlot prog_slot[64]; /* prog_of's answers of late, direct-mapped on the node's address */
  struct ViewPlan **plans; /* by view, open addressing (plan_of) */
  int nplans, capplans;
  struct ViewPlan *recent[16]; /* plan_of's answers of late, direct-mapped on the view's address */
  BodyX *bx; /* the bodies' XOps (body_x), open addressing */
  int nbx, capbx;
} Ref_;

typedef struct ViewPlan ViewPlan;

/* A temporary Value, with the lanes of one given back before (no heap
 * allocation per expression once the pool is warm). */
static Value tmp_take(Ref_ *R) { return R->npool ? R->pool[--R->npool] : (Value){0}; }
static void tmp_give(Ref_ *R, Value *v) {
  if (R->npool < (int)(sizeof R->pool / sizeof R->pool[0])) R->pool[R->npool++] = *v;
  else val_free(v);
  memset(v, 0, sizeof *v);
}

/* ---- environment ----------------------------------------------------- */
/* name_id of a name its cache does not hold (kept apart: the look-up
 * stays inline). */
static __attribute__((noinline)) int name_id_slow(Ref_ *R, const char *name, unsigned h) {
  int id = names_get(&R->names, name);
  if (id < 0) names_put(&R->names, name, id = R->nnames++);
  R->nc_key[h] = name, R->nc_id[h] = id;
  return id;
}

/* The id of name, through a cache on the name's address (the same
 * address is always the same name). */
static inline int name_id(Ref_ *R, const char *name) {
  unsigned h = (unsigned)((uintptr_t)name >> 3) % NAME_CACHE;
  return R->nc_key[h] == name ? R->nc_id[h] : name_id_slow(R, name, h);
}

static Value *env_at(Sub *s, int id) { return id >= 0 && id < s->capenv && s->env[id] ? &s->env[id]->v : NULL; }
static Value *env_get(Ref_ *R, Sub *s, const char *name) { return env_at(s, names_get(&R->names, name)); }

/* The value name is bound to in s, bound (undefined, empty) if it was not. */
static __attribute__((noinline)) Value *env_bind(Ref_ *R, Sub *s, const char *name) {
  int id = name_id(R, name);
  if (id >= s->capenv) {
    int cap = s->capenv ? s->capenv : 16;
    while (cap <= id) cap *= 2;
    Bind **b = realloc(s->env, sizeof *b * (size_t)cap);
    if (!b) abort();
    memset(b + s->capenv, 0, sizeof *b * (size_t)(cap - s->capenv));
    s->env = b;
    s->capenv = cap;
  }
  if (!s->env[id] && !(s->env[id] = calloc(1, sizeof *s->env[id]))) abort();
  return &s->env[id]->v;
}

/* env_bind through a cache on the name's address and the subcore
 * (bindings never move). */
static inline Value *env_slot(Ref_ *R, Sub *s, const char *name) {
  unsigned h = (unsigned)((uintptr_t)name >> 3) % NAME_CACHE;
  if (R->sc_name[h] != name || R->sc_sub[h] != s) R->sc_name[h] = name, R->sc_sub[h] = s, R->sc_val[h] = env_bind(R, s, name);
  return R->sc_val[h];
}

static void env_set(Ref_ *R, Sub *s, const char *name, const Value *v) {
  if (!name) return;
  Value *d = env_slot(R, s, name);
  if (d == v) return;
  if (v->n > d->cap) return val_copy(d, v);
  d->dtype = v->dtype, d->rank = v->rank, d->n = v->n; /* val_copy into the lanes it has, without clearing them first */
  for (int k = 0; k < v->rank; k++) d->shape[k] = v->shape[k];
  memcpy(d->v, v->v, sizeof *v->v * (size_t)v->n);
  memcpy(d->def, v->def, (size_t)v->n);
}

/* env_set of a scratch value whose lanes the caller no longer needs: the
 * binding takes them and leaves its own in *v (no copy of the lanes). */
static inline __attribute__((always_inline)) void env_take(Ref_ *R, Sub *s, const char *name, Value *v) {
  if (!name) return;
  Value *d = env_slot(R, s, name);
  if (d == v) return;
  Cell *lanes = d->v;
  uint8_t *def = d->def;
  int64_t cap = d->cap;
  ref_shape_copy(d, v);
  d->v = v->v, d->def = v->def, d->cap = v->cap;
  v->v = lanes, v->def = def, v->cap = cap, v->n = 0; /* v keeps only lanes: every user of a scratch shapes it first */
}

/* A loop variable's next value, set in place: val_scalar(var, DT_INT32, i)
 * without reshaping a scalar that already is one. */
static void set_int32(Value *var, int64_t i) {
  if (!var) return;
  if (var->cap < 1) return val_scalar(var, DT_INT32, (Cell){.i = i});
  var->dtype = DT_INT32, var->rank = 0, var->n = 1;
  var->v[0].i = (int32_t)i; /* dtype_fit of an int32: the low word */
  var->def[0] = 1;
}

/* ---- faults ---------------------------------------------------------- */
static bool fault(Ref_ *R, Sub *s, const Op *op, FaultKind k, const char *fmt, const char *a, const char *b) {
  char buf[600];
  snprintf(buf, sizeof buf, fmt, a, b);
  run_fault(R->r, k, op ? op->loc : (Loc){R->p->file, 0, 0}, s->core, s->subcore, op ? op->id : -1, "%s", buf);
  return false;
}

/* An undefined lane i of v, named as the engine names it. */
static bool uninit_lane(Ref_ *R, Sub *s, const Op *op, const char *what, const Value *v, int64_t i) {
  RunElement at = {0};
  char where[120];
  run_element(&at, v->rank, v->shape, i);
  run_element_text(&at, where, sizeof where);
  return fault(R, s, op, FAULT_UNINIT, "%s of the %s is undefined", where, what);
}

/* ---- expressions ----------------------------------------------------- */
static bool ev(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out);

static bool ev_binary(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  Value a = tmp_take(R), b = tmp_take(R);
  bool ok = ev(R, s, op, e->a, &a) && ev(R, s, op, e->b, &b);
  if (ok) {
    const Value *big = a.n >= b.n ? &a : &b;
    val_shape(out, e->ty, big->rank, big->shape);
    for (int64_t i = 0; i < out->n && ok; i++) {
      int64_t ia = val_lane(&a, i), ib = val_lane(&b, i);
      Cell x = alu_convert(a.dtype, e->oty, a.v[ia]), y = alu_convert(b.dtype, e->oty, b.v[ib]);
      out->def[i] = a.def[ia] && b.def[ib];
      if (!out->def[i]) continue;
      if (alu_binary(e->op, e->oty, e->ty, x, y, &out->v[i]) == ALU_DIVZERO)
        ok = fault(R, s, op, FAULT_DIVZERO, "integer division by zero in '%s'%s", e->text ? e->text : "expression", "");
    }
  }
  tmp_give(R, &a);
  tmp_give(R, &b);
  return ok;
}

static bool ev_unary(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  Value a = tmp_take(R);
  if (!ev(R, s, op, e->a, &a)) return tmp_give(R, &a), false;
  val_shape(out, e->ty, a.rank, a.shape);
  for (int64_t i = 0; i < a.n; i++) {
    out->def[i] = a.def[i];
    out->v[i] = alu_unary(e->op, e->ty, alu_convert(a.dtype, e->op == OP_NOT ? a.dtype : e->ty, a.v[i]));
    if (e->op == OP_NOT) out->v[i] = alu_unary(OP_NOT, a.dtype, a.v[i]);
  }
  tmp_give(R, &a);
  return true;
}

static bool ev_select(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  bool w = e->builtin == BI_WHERE;
  Value m = {0}, a = {0}, b = {0};
  bool ok = (!w || ev(R, s, op, e->args[0], &m)) && ev(R, s, op, e->args[w], &a) && ev(R, s, op, e->args[w + 1], &b);
  if (ok) {
    const Value *big = &a;
    if (b.n > big->n) big = &b;
    if (w && m.n > big->n) big = &m;
    val_shape(out, e->ty, big->rank, big->shape);
    for (int64_t i = 0; i < out->n; i++) {
      int64_t ia = val_lane(&a, i), ib = val_lane(&b, i);
      Cell x = alu_convert(a.dtype, e->oty, a.v[ia]), y = alu_convert(b.dtype, e->oty, b.v[ib]);
      if (w) {
        int64_t im = val_lane(&m, i);
        bool pick = alu_truthy(m.dtype, m.v[im]);
        out->v[i] = pick ? x : y;
        out->def[i] = m.def[im] && (pick ? a.def[ia] : b.def[ib]);
      } else {
        out->v[i] = alu_minmax(e->oty, x, y, e->builtin == BI_MAX);
        out->def[i] = a.def[ia] && b.def[ib];
      }
    }
  }
  val_free(&m);
  val_free(&a);
  val_free(&b);
  return ok;
}

static bool ev_iota(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  int64_t n = e->args[0]->ival;
  if (e->args[0]->kind != EX_INT) {
    Value t = {0};
    ev(R, s, op, e->args[0], &t);
    n = t.v[0].i;
    val_free(&t);
  }
  val_shape(out, DT_INT32, 1, &n);
  for (int64_t i = 0; i < n; i++) out->v[i].i = i, out->def[i] = 1;
  return true;
}

static bool ev_full(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  Value v = {0}, d = {0};
  int64_t shape[MAX_RANK];
  int rank = 0;
  const Expr *sh = e->args[0];
  const Expr *const *dims = sh->kind == EX_LIST ? (const Expr *const *)sh->args : &sh;
  int nd = sh->kind == EX_LIST ? sh->nargs : 1;
  for (int i = 0; i < nd; i++) {
    ev(R, s, op, dims[i], &d);
    shape[rank++] = d.v[0].i;
  }
  if (!ev(R, s, op, e->args[1], &v)) return val_free(&v), val_free(&d), false;
  val_shape(out, e->ty, rank, shape);
  for (int64_t i = 0; i < out->n; i++) out->v[i] = alu_convert(v.dtype, e->ty, v.v[0]), out->def[i] = v.def[0];
  val_free(&v);
  val_free(&d);
  return true;
}

static bool ev_astype(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  Value v = {0};
  if (!ev(R, s, op, e->args[0], &v)) return val_free(&v), false;
  val_shape(out, e->ty, v.rank, v.shape);
  for (int64_t i = 0; i < v.n; i++) out->v[i] = alu_convert(v.dtype, e->ty, v.v[i]), out->def[i] = v.def[i];
  val_free(&v);
  return true;
}

/* A value operation of lowering/check_valops.h (reference_valops.c). */
static bool ev_valops(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  int n = ref_valops_nargs(e);
  Value *a = calloc((size_t)n, sizeof *a);
  if (!a) abort();
  bool ok = true;
  for (int k = 0; ok && k < n; k++) ok = ev(R, s, op, ref_valops_arg(e, k), &a[k]);
  if (ok) ref_valops(e, a, n, out);
  for (int k = 0; k < n; k++) val_free(&a[k]);
  free(a);
  return ok;
}

static bool ev_scan(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  const Expr *me = scanop_arg(e, -1, "mask");
  Value x = {0}, m = {0};
  bool ok = ev(R, s, op, scanop_arg(e, 0, NULL), &x) && (!me || ev(R, s, op, me, &m));
  if (ok) ref_scan(e->builtin, &x, me ? &m : NULL, e->ty, out);
  val_free(&x);
  val_free(&m);
  return ok;
}

static bool ev_sort(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  Value x = {0}, d = {0};
  const Expr *ds = scanop_arg(e, -1, "descending");
  bool ok = ev(R, s, op, scanop_arg(e, 0, NULL), &x) && (!ds || ev(R, s, op, ds, &d));
  if (ok) ref_sort(&x, ds && d.v[0].i != 0, e->ty, out);
  val_free(&x);
  val_free(&d);
  return ok;
}

static bool ev_all_reduce(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  Value x = {0}, r = {0};
  const Expr *re = scanop_arg(e, -1, "reduce");
  bool ok = ev(R, s, op, scanop_arg(e, 0, NULL), &x) && (!re || ev(R, s, op, re, &r));
  if (ok) ref_all_reduce(&x, e->builtin == BI_AR_FFS, re ? r.v[0].i : 1, out);
  val_free(&x);
  val_free(&r);
  return ok;
}

static bool ev_pack(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  Value a = {0}, b = {0};
  bool ok = ev(R, s, op, scanop_arg(e, 0, NULL), &a) && ev(R, s, op, scanop_arg(e, 1, NULL), &b);
  if (ok) ref_pack(&a, &b, e->sval & 1, e->dtype, out);
  val_free(&a), val_free(&b);
  return ok;
}

/* A call the checker accepted: a value builtin (lowering/builtins.h). */
static bool ev_call(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  switch (e->builtin) {
  case BI_IOTA: return ev_iota(R, s, op, e, out);
  case BI_FULL: return ev_full(R, s, op, e, out);
  case BI_ASTYPE: return ev_astype(R, s, op, e, out);
  case BI_WHERE: case BI_MIN: case BI_MAX: return ev_select(R, s, op, e, out);
  case BI_VSUM: case BI_VMAX: case BI_VMIN: case BI_VALL: case BI_VANY: case BI_EXP: case BI_ABS: case BI_SQRT: case BI_RSQRT:
  case BI_LOG: case BI_TANH: case BI_FLIP: case BI_TAKE: case BI_RESHAPE: case BI_BITCAST: case BI_CONCAT: case BI_SLICE:
    return ev_valops(R, s, op, e, out);
  case BI_CUMSUM: case BI_CUMMAX: case BI_CUMMIN: case BI_LAX_CUMSUM: return ev_scan(R, s, op, e, out);
  case BI_SORT: return ev_sort(R, s, op, e, out);
  case BI_AR_POPCOUNT: case BI_AR_FFS: return ev_all_reduce(R, s, op, e, out);
  case BI_PACK: return ev_pack(R, s, op, e, out);
  case BI_SORT_KV: case BI_SCAN_COUNT: case BI_UNPACK: /* a let of several names: do_tuple_let */
  case BI_DS: case BI_INDICES: case BI_SELECT_REF: case BI_AXIS_SIZE: case BI_NONE: break; /* never a value (axis_size: a literal by then): the checker rejects these */
  }
  abort();
}

static bool ev_list(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  Value item = {0};
  for (int k = 0; k < e->nargs; k++) {
    if (!ev(R, s, op, e->args[k], &item)) return val_free(&item), false;
    if (k == 0) {
      int64_t shape[MAX_RANK];
      shape[0] = e->nargs;
      memcpy(shape + 1, item.shape, sizeof(int64_t) * (size_t)item.rank);
      val_shape(out, e->ty, item.rank + 1, shape);
    }
    for (int64_t i = 0; i < item.n; i++) {
      out->v[k * item.n + i] = alu_convert(item.dtype, e->ty, item.v[i]);
      out->def[k * item.n + i] = item.def[i];
    }
  }
  val_free(&item);
  return true;
}

static bool ev_element(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  Value base = {0}, k = {0};
  if (!ev(R, s, op, e->a, &base)) return val_free(&base), false;
  int64_t off = 0, stride = base.n;
  for (int d = 0; d < e->nargs; d++) {
    ev(R, s, op, e->args[d], &k);
    int64_t i = k.v[0].i;
    if (i < 0) i += base.shape[d];
    stride /= base.shape[d] ? base.shape[d] : 1;
    off += i * stride;
  }
  val_shape(out, base.dtype, base.rank - e->nargs, base.shape + e->nargs);
  memcpy(out->v, base.v + off, sizeof(Cell) * (size_t)out->n);
  memcpy(out->def, base.def + off, (size_t)out->n);
  val_free(&base);
  val_free(&k);
  return true;
}

static bool ev(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *out) {
  switch (e->kind) {
  case EX_INT: val_scalar(out, DT_INT64, (Cell){.i = e->ival}); return true;
  case EX_FLOAT: val_scalar(out, DT_FLOAT64, (Cell){.f = e->fval}); return true;
  case EX_BOOL: val_scalar(out, DT_BOOL, (Cell){.i = e->ival}); return true;
  case EX_NAME: {
    if (!strcmp(e->name, "core") || !strcmp(e->name, "subcore")) {
      Value *b = env_get(R, s, e->name);
      if (!b) return val_scalar(out, DT_INT32, (Cell){.i = e->name[0] == 'c' ? s->core : s->subcore}), true;
    }
    Value *b = env_get(R, s, e->name);
    if (!b) return fault(R, s, op, FAULT_UNINIT, "'%s' was bound only on a branch that did not run%s", e->name, "");
    val_copy(out, b);
    return true;
  }
  case EX_UNARY: return ev_unary(R, s, op, e, out);
  case EX_BINARY: return ev_binary(R, s, op, e, out);
  case EX_CALL: return ev_call(R, s, op, e, out);
  case EX_LIST: return ev_list(R, s, op, e, out);
  case EX_SUBSCRIPT: return ev_element(R, s, op, e, out);
  case EX_AT: case EX_BITCAST: case EX_RESHAPE: case EX_SLICE: case EX_ELLIPSIS: case EX_NONE: break;
  }
  return fault(R, s, op, FAULT_UNINIT, "'%s' cannot be evaluated as a value%s", e->text ? e->text : "?", "");
}

/* ---- compiled expressions (reference_expr.h) --------------------------- */
typedef struct {
  Ref_ *R;
  Sub *s;
  const Op *op;
} EvCtx;

static bool hook_walk(void *ctx, const Expr *e, Value *out) {
  EvCtx *c = ctx;
  return ev(c->R, c->s, c->op, e, out);
}

/* ev's EX_NAME, without the copy. */
static const Value *hook_name(void *ctx, const Expr *e, int id, Value *scratch) {
  EvCtx *c = ctx;
  const Value *b = env_at(c->s, id);
  if (b) return b;
  if (!strcmp(e->name, "core") || !strcmp(e->name, "subcore"))
    return val_scalar(scratch, DT_INT32, (Cell){.i = e->name[0] == 'c' ? c->s->core : c->s->subcore}), scratch;
  fault(c->R, c->s, c->op, FAULT_UNINIT, "'%s' was bound only on a branch that did not run%s", e->name, "");
  return NULL;
}

static bool hook_divzero(void *ctx, const Expr *e) {
  EvCtx *c = ctx;
  return fault(c->R, c->s, c->op, FAULT_DIVZERO, "integer division by zero in '%s'%s", e->text ? e->text : "expression", "");
}

static int hook_name_id(void *ctx, const char *name) { return name_id(ctx, name); }

static const Value *hook_bound(void *ctx, int id) { return env_at(((EvCtx *)ctx)->s, id); }

static const RefExprHooks HOOKS = {hook_walk, hook_name, hook_divzero, hook_bound};

static RefProgs *progs(Ref_ *R) {
  if (!R->progs) R->progs = ref_progs_new(hook_name_id, R);
  return R->progs;
}

/* e's compiled form (ref_progs_get), without a call when e was asked for
 * of late. */
static __attribute__((noinline)) void prog_fill(Ref_ *R, ProgSlot *sl, const Expr *e) {
  sl->key = e, sl->p = ref_progs_get(progs(R), e), sl->chain = ref_prog_chain_id(sl->p), sl->affine = ref_prog_affine(sl->p, &sl->aff);
  sl->bsub = NULL;
}

static inline ProgSlot *prog_slot(Ref_ *R, const Expr *e) {
  ProgSlot *sl = &R->prog_slot[((uintptr_t)e >> 4) & 63u];
  if (sl->key != e) prog_fill(R, sl, e);
  return sl;
}

static inline RefProg *prog_of(Ref_ *R, const Expr *e) { return prog_slot(R, e)->p; }

/* The value of e as ev gives it, owned by the compiled form (valid until e
 * is evaluated again); NULL after a fault. */
static const Value *ev_top(Ref_ *R, Sub *s, const Op *op, const Expr *e) {
  const Value *b = e->kind == EX_NAME ? env_at(s, name_id(R, e->name)) : NULL; /* an index or value by name: its binding, as eval gives it (the id its step has) */
  if (b) return b;
  EvCtx c = {R, s, op};
  return ref_prog_eval(prog_of(R, e), &HOOKS, &c);
}

/* ev_int_prog through the compiled steps (kept apart: the integer path
 * stays small). */
static __attribute__((noinline)) bool ev_int_steps(EvCtx *c, const Expr *e, RefProg *p, int64_t *v) {
  const Value *t = ref_prog_eval(p, &HOOKS, c);
  bool ok = t != NULL;
  if (ok && !t->def[0]) ok = fault(c->R, c->s, c->op, FAULT_UNINIT, "'%s' is undefined where a defined scalar is needed%s", e->text ? e->text : "a scalar", "");
  if (ok) *v = dtype_is_float(t->dtype) ? (int64_t)t->v[0].f : t->v[0].i;
  return ok;
}

/* A scalar that must be defined (an index, a bound, a condition), of e
 * compiled as p (ref_progs_get). */
static bool ev_int_prog(Ref_ *R, Sub *s, const Op *op, const Expr *e, RefProg *p, int64_t *v) {
  EvCtx c = {R, s, op};
  return ref_prog_int(p, &HOOKS, &c, v) || ev_int_steps(&c, e, p, v); /* int32 scalars: the same value without the Values */
}

static bool ev_int(Ref_ *R, Sub *s, const Op *op, const Expr *e, int64_t *v) {
  return ev_int_prog(R, s, op, e, prog_of(R, e), v);
}

/* ---- views ------------------------------------------------------------- */
/* A view with its dynamic starts and sizes evaluated: lvl[k] is the shape
 * after k transforms (lvl[0] the ref's shape).  rank, lvl and dt point at
 * the view's ViewPlan when they cannot change between resolutions, else
 * at own_rank, own_lvl and own_dt. */
typedef struct {
  const View *v;
  Region *reg;
  int64_t start[MAX_TRANSFORMS][MAX_RANK];
  int64_t size[MAX_TRANSFORMS][MAX_RANK];
  const int *rank;
  const int64_t (*lvl)[MAX_RANK];
  const Dtype *dt;
  int64_t n; /* elements of the view */
  const Op *op;
  uint64_t gen;       /* this resolution (its PieceCache holds it while cache->gen == gen) */
  PieceCache *cache;
  bool affine;        /* sp holds the view (reference_span.h): no walk per element */
  RefSpan sp;
  char oob[400];
  int own_rank[MAX_TRANSFORMS + 1];
  int64_t own_lvl[MAX_TRANSFORMS + 1][MAX_RANK];
  Dtype own_dt[MAX_TRANSFORMS + 1];
} RV;

/* What every resolution of a view that is the ref itself or one indexing
 * of it by slices of static sizes and integers computes alike: the levels'
 * ranks, shapes and dtypes, and its span but for the base, which only the
 * dynamic starts move.  fast is false for any other view (and for one
 * that ref_span_build does not show affine with its dynamic starts at 0):
 * those resolve through rv_levels every time. */
struct ViewPlan {
  const View *v;
  bool fast;
  bool word;             /* fast, and one int32 element (do_get and do_swap's one-word paths) */
  int rank[2];
  int64_t lvl[2][MAX_RANK];
  Dtype dt[2];
  int64_t n;
  RefSpan sp;            /* base: that of the static starts alone */
  int nent;              /* the indexing's entries (0: the ref itself) */
  int64_t start0[MAX_RANK]; /* their starts, the dynamic ones 0 */
  int ndyn;              /* the entries with a dynamic start: */
  int dyn[MAX_RANK];     /* which, */
  const Expr *e[MAX_RANK]; /* its start, */
  RefProg *prog[MAX_RANK]; /* its compiled form, */
  int chain[MAX_RANK];     /* the name id of a chain (ref_prog_chain_id) or -1, */
  bool affine[MAX_RANK];   /* whether it has an affine form (ref_prog_affine), which is */
  RefAffine aff[MAX_RANK];
  const Value *bind[MAX_RANK]; /* the affine ones' bindings in subcore bsub (bindings never move), */
  const void *bsub;        /* NULL: none kept */
  int64_t hi[MAX_RANK];  /* the largest start that keeps the entry in bounds (the least is 0), */
  int64_t rs[MAX_RANK];  /* and the byte stride of its dimension of the ref */
  int core, subcore;     /* the instance last resolved (core -1: none) and its region */
  Region *reg;
};

static void rv_head(Ref_ *R, const Op *op, const View *v, RV *rv) {
  rv->oob[0] = '\0'; /* every other field is set by the resolution (or only read where it is) */
  rv->v = v;
  rv->op = op;
  rv->gen = ++R->gen;
  rv->cache = NULL;
}

/* The levels' ranks, shapes and dtypes into rv's own arrays, evaluating
 * the dynamic starts and sizes (eval false: the static ones only). */
static bool rv_levels(Ref_ *R, Sub *s, const Op *op, const View *v, RV *rv, bool eval) {
  rv->rank = rv->own_rank, rv->lvl = (const int64_t(*)[MAX_RANK])rv->own_lvl, rv->dt = rv->own_dt;
  rv->own_rank[0] = v->ref->rank;
  memcpy(rv->own_lvl[0], v->ref->shape, sizeof rv->own_lvl[0]);
  rv->own_dt[0] = v->ref->dtype;
  for (int k = 0; k < v->ntr; k++) {
    const Transform *t = v->tr[k];
    rv->own_dt[k + 1] = t->dtype;
    rv->own_rank[k + 1] = t->rank;
    memcpy(rv->own_lvl[k + 1], t->shape, sizeof rv->own_lvl[0]);
    if (t->kind != TR_INDEX) continue;
    int ns = 0;
    for (int d = 0; d < t->idx->n; d++) {
      const IxEntry *e = &t->idx->e[d];
      rv->start[k][d] = e->start_e ? 0 : e->start;
      rv->size[k][d] = e->size;
      if (eval && e->start_e && !ev_int(R, s, op, e->start_e, &rv->start[k][d])) return false;
      if (eval && e->kind == IX_SLICE && e->size_e && !ev_int(R, s, op, e->size_e, &rv->size[k][d])) return false;
      if (e->kind == IX_SLICE) ns++;
    }
    /* dynamic sizes: rebuild this level's shape from the slice sizes */
    int r = 0;
    for (int d = 0; d < t->idx->n; d++)
      if (t->idx->e[d].kind == IX_SLICE) rv->own_lvl[k + 1][r++] = rv->size[k][d];
    if (t->idx->int_rank == 0 && r == ns) rv->own_rank[k + 1] = r;
  }
  rv->n = 1;
  for (int d = 0; d < rv->rank[v->ntr]; d++) rv->n *= rv->lvl[v->ntr][d];
  rv->affine = ref_span_build(v, (const int64_t(*)[MAX_RANK])rv->start, rv->rank, rv->lvl, rv->dt, &rv->sp);
  return true;
}

static bool plan_eligible(const View *v) {
  if (v->ntr == 0) return true;
  if (v->ntr != 1 || v->tr[0]->kind != TR_INDEX) return false;
  const NDIndexer *ix = v->tr[0]->idx;
  for (int d = 0; d < ix->n; d++)
    if ((ix->e[d].kind != IX_SLICE && ix->e[d].kind != IX_INT) || (ix->e[d].kind == IX_SLICE && ix->e[d].size_e)) return false;
  return true;
}

static void plan_build(Ref_ *R, const View *v, ViewPlan *pl) {
  RV *rv = calloc(1, sizeof *rv);
  if (!rv) abort();
  memset(pl, 0, sizeof *pl);
  pl->v = v;
  pl->core = -1;
  rv_levels(R, NULL, NULL, v, rv, false);
  pl->fast = plan_eligible(v) && rv->affine;
  if (pl->fast) {
    for (int k = 0; k <= v->ntr; k++) pl->rank[k] = rv->rank[k], pl->dt[k] = rv->dt[k], memcpy(pl->lvl[k], rv->lvl[k], sizeof pl->lvl[k]);
    pl->n = rv->n;
    pl->sp = rv->sp;
    pl->word = pl->n == 1 && pl->dt[v->ntr] == DT_INT32 && pl->sp.esize == 4 && pl->sp.contiguous;
    int64_t rs[MAX_RANK], sz = dtype_size(pl->dt[0]);
    for (int d = pl->rank[0] - 1; d >= 0; d--) rs[d] = sz, sz *= pl->lvl[0][d]; /* as span_one_level */
    const NDIndexer *ix = v->ntr ? v->tr[0]->idx : NULL;
    pl->nent = ix ? ix->n : 0;
    for (int d = 0, si = 0; d < pl->nent; d++) {
      const IxEntry *e = &ix->e[d];
      int64_t ext = e->kind == IX_SLICE ? (pl->lvl[1][si++] - 1) * e->stride : 0; /* the last index past the start */
      pl->start0[d] = rv->start[0][d];
      if (!e->start_e) continue;
      int j = pl->ndyn++; /* in bounds from start 0: ext does not overflow and is not negative */
      pl->dyn[j] = d, pl->e[j] = e->start_e, pl->prog[j] = ref_progs_get(progs(R), e->start_e), pl->chain[j] = ref_prog_chain_id(pl->prog[j]), pl->affine[j] = ref_prog_affine(pl->prog[j], &pl->aff[j]), pl->hi[j] = pl->lvl[0][d] - 1 - ext, pl->rs[j] = rs[d];
    }
  }
  free(rv);
}

/* The plan's dynamic start j into *dyn, other than by its affine form (a
 * chain, or the compiled steps): false after a fault.  Kept apart, so
 * that plan_base stays small. */
static __attribute__((noinline)) bool plan_start(Ref_ *R, Sub *s, const Op *op, const ViewPlan *pl, int j, int64_t *dyn) {
  return (pl->chain[j] >= 0 && ref_prog_chain(pl->prog[j], env_at(s, pl->chain[j]), dyn)) || ev_int_prog(R, s, op, pl->e[j], pl->prog[j], dyn);
}

/* The bindings of pl's affine starts in s (pl->bind), kept when every
 * one is bound; the j-th. */
static __attribute__((noinline)) const Value *plan_bind(ViewPlan *pl, Sub *s, int j) {
  bool all = true;
  for (int k = 0; k < pl->ndyn; k++) {
    pl->bind[k] = pl->affine[k] ? env_at(s, pl->aff[k].id) : NULL;
    all &= !pl->affine[k] || pl->bind[k];
  }
  pl->bsub = all ? s : NULL;
  return pl->bind[j];
}

/* The plan's dynamic starts evaluated in order (dyn[j] := the j-th):
 * 1 and the span's *base, or 0 after a fault, or -1 when a start is out of
 * bounds (rv_levels then finds the view not affine, for the walk).
 * span_one_level's bounds: a start in [0, hi] keeps the first and the
 * last index of its entry in bounds. */
static inline __attribute__((always_inline)) int plan_base(Ref_ *R, Sub *s, const Op *op, ViewPlan *pl, int64_t *base, int64_t *dyn) {
  int64_t b = pl->sp.base;
  if (pl->ndyn == 1 && pl->affine[0] && pl->bsub == s && ref_affine_run(&pl->aff[0], pl->bind[0], dyn)) { /* the commonest, without the loop's registers */
    if ((uint64_t)dyn[0] > (uint64_t)pl->hi[0]) return -1;
    return *base = b + dyn[0] * pl->rs[0], 1;
  }
  for (int j = 0; j < pl->ndyn; j++) {
    bool got = pl->affine[j] && ref_affine_run(&pl->aff[j], pl->bsub == s ? pl->bind[j] : plan_bind(pl, s, j), &dyn[j]); /* the binding, without a hook or a call */
    if (!got && !plan_start(R, s, op, pl, j, &dyn[j])) return 0;
    if ((uint64_t)dyn[j] > (uint64_t)pl->hi[j]) return -1; /* below 0 or past hi */
    b += dyn[j] * pl->rs[j]; /* in bounds: no overflow */
  }
  *base = b;
  return 1;
}

/* rv of a view whose plan_base gave base and dyn. */
static void rv_from_plan(const ViewPlan *pl, int64_t base, const int64_t *dyn, RV *rv) {
  rv->rank = pl->rank, rv->lvl = pl->lvl, rv->dt = pl->dt;
  rv->n = pl->n;
  rv->sp = pl->sp;
  rv->sp.base = base;
  rv->affine = true;
  memcpy(rv->start[0], pl->start0, sizeof pl->start0);
  for (int j = 0; j < pl->ndyn; j++) rv->start[0][pl->dyn[j]] = dyn[j];
}

/* rv from the plan: plan_base, then rv_from_plan. */
static int plan_span(Ref_ *R, Sub *s, const Op *op, ViewPlan *pl, RV *rv) {
  int64_t base, dyn[MAX_RANK];
  int got = plan_base(R, s, op, pl, &base, dyn);
  if (got == 1) rv_from_plan(pl, base, dyn, rv);
  return got;
}

/* v's plan, built on its first use (kept apart: plan_of stays small). */
static __attribute__((noinline)) ViewPlan *plan_find(Ref_ *R, const View *v) {
  if (2 * (R->nplans + 1) > R->capplans) {
    ViewPlan **old = R->plans;
    int oc = R->capplans;
    R->capplans = oc ? 2 * oc : 64;
    if (!(R->plans = calloc((size_t)R->capplans, sizeof *R->plans))) abort();
    for (int i = 0; i < oc; i++)
      if (old[i]) {
        size_t j = ((uintptr_t)old[i]->v >> 4) & (size_t)(R->capplans - 1);
        while (R->plans[j]) j = (j + 1) & (size_t)(R->capplans - 1);
        R->plans[j] = old[i];
      }
    free(old);
  }
  size_t j = ((uintptr_t)v >> 4) & (size_t)(R->capplans - 1);
  while (R->plans[j] && R->plans[j]->v != v) j = (j + 1) & (size_t)(R->capplans - 1);
  if (!R->plans[j]) {
    if (!(R->plans[j] = malloc(sizeof *R->plans[j]))) abort();
    plan_build(R, v, R->plans[j]);
    R->nplans++;
  }
  return R->plans[j];
}

static inline ViewPlan *plan_of(Ref_ *R, const View *v) {
  ViewPlan **front = &R->recent[((uintptr_t)v >> 4) & 15u];
  if (*front && (*front)->v == v) return *front;
  return *front = plan_find(R, v);
}

/* x's operation's ref's plan, kept by x (looked up on the first run). */
static __attribute__((noinline)) ViewPlan *x_plan_fill(Ref_ *R, XOp *x) { return x->plan = plan_of(R, x->op->e[FLD_REF]->view); }

static inline ViewPlan *x_plan(Ref_ *R, XOp *x) { return x->plan ? x->plan : x_plan_fill(R, x); }

/* rv_resolve level by level (kept apart: the plan's path stays small). */
static __attribute__((noinline)) bool rv_walked(Ref_ *R, Sub *s, const Op *op, const View *v, RV *rv) {
  if (!rv_levels(R, s, op, v, rv, true)) return false; /* the starts again: expressions have no effects but faults */
  if (!rv->affine) rv->cache = &R->cache[R->next_cache++ % NCACHE];
  return true;
}

/* v's plan, its region that of instance core.subcore. */
static inline ViewPlan *plan_here(Ref_ *R, ViewPlan *pl, const View *v, int core, int subcore) {
  if (pl->core != core || pl->subcore != subcore) /* regions stay where run_mem_init put them */
    pl->reg = run_region(R->r, v->ref, core, subcore), pl->core = core, pl->subcore = subcore;
  return pl;
}

static inline ViewPlan *plan_at(Ref_ *R, const View *v, int core, int subcore) { return plan_here(R, plan_of(R, v), v, core, subcore); }

static bool rv_resolve(Ref_ *R, Sub *s, const Op *op, const View *v, int core, int subcore, RV *rv) {
  rv_head(R, op, v, rv);
  ViewPlan *pl = plan_at(R, v, core, subcore);
  rv->reg = pl->reg;
  int got = pl->fast ? plan_span(R, s, op, pl, rv) : -1;
  return got >= 0 ? got : rv_walked(R, s, op, v, rv);
}

static void unflat(int64_t flat, int rank, const int64_t *shape, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    int64_t n = shape[d] ? shape[d] : 1;
    idx[d] = flat % n;
    flat /= n;
  }
}

static int64_t flat_of(int rank, const int64_t *shape, const int64_t *idx) {
  int64_t f = 0;
  for (int d = 0; d < rank; d++) f = f * shape[d] + idx[d];
  return f;
}

static bool oob(RV *rv, int level, int d, int64_t i) {
  const View *v = rv->v;
  snprintf(rv->oob, sizeof rv->oob, "index %lld of dimension %d is outside [0, %lld) %s of '%s' (%s '%s')", (long long)i, d,
           (long long)rv->lvl[level][d], level ? "at a view level" : "of the ref", v->expr && v->expr->text ? v->expr->text : v->ref->name,
           space_key(v->ref->space), v->ref->name);
  return false;
}

/* Maps an index at `level` to byte pieces of the region (see the file
 * comment); [lo, lo+nb) is the byte range wanted within that element. */
static bool locate(RV *rv, int level, const int64_t *idx, int lo, int nb, Piece *out, int *np) {
  if (level == 0) {
    if (*np >= MAX_PIECES) return false;
    int64_t f = flat_of(rv->rank[0], rv->lvl[0], idx);
    out[(*np)++] = (Piece){f * dtype_size(rv->dt[0]) + lo, nb};
    return true;
  }
  const Transform *t = rv->v->tr[level - 1];
  int64_t parent[MAX_RANK];
  int pr = rv->rank[level - 1];
  switch (t->kind) {
  case TR_INDEX: {
    const NDIndexer *ix = t->idx;
    int nint = 0, first = -1, last = -1;
    for (int d = 0; d < ix->n; d++)
      if (ix->e[d].kind != IX_SLICE) nint++, last = d, first = first < 0 ? d : first;
    bool contiguous = nint == 0 || last - first + 1 == nint;
    int pos = contiguous && nint ? first : 0, si = 0, ci;
    for (int d = 0; d < ix->n; d++) {
      const IxEntry *e = &ix->e[d];
      if (e->kind == IX_SLICE) {
        ci = si < pos ? si : si + ix->int_rank;
        int64_t off; /* a dynamic start may be near 2**63: past it is out of bounds, not a wrap */
        if (__builtin_mul_overflow(idx[ci], e->stride, &off) || __builtin_add_overflow(rv->start[level - 1][d], off, &parent[d]))
          parent[d] = rv->start[level - 1][d] < 0 ? INT64_MIN : INT64_MAX;
        si++;
      } else {
        parent[d] = rv->start[level - 1][d];
      }
      if (parent[d] < 0 || parent[d] >= rv->lvl[level - 1][d]) return oob(rv, level - 1, d, parent[d]);
    }
    return locate(rv, level - 1, parent, lo, nb, out, np);
  }
  case TR_RESHAPE:
    unflat(flat_of(rv->rank[level], rv->lvl[level], idx), pr, rv->lvl[level - 1], parent);
    return locate(rv, level - 1, parent, lo, nb, out, np);
  case TR_BITCAST: {
    int ob = dtype_size(rv->dt[level - 1]), nbytes = dtype_size(rv->dt[level]);
    memcpy(parent, idx, sizeof(int64_t) * (size_t)pr);
    if (ob == nbytes) return locate(rv, level - 1, parent, lo, nb, out, np);
    int d2 = pr - 2;
    if (ob > nbytes) { /* narrowing: element i is part i % r of parent i / r */
      int r = ob / nbytes;
      parent[d2] = idx[d2] / r;
      return locate(rv, level - 1, parent, lo + (int)(idx[d2] % r) * nbytes, nb, out, np);
    }
    int r = nbytes / ob; /* widening: parts k of rows i*r + k, low part first */
    for (int k = 0; k < r; k++) {
      int plo = k * ob, phi = plo + ob;
      int a = lo > plo ? lo : plo, b = lo + nb < phi ? lo + nb : phi;
      if (a >= b) continue;
      parent[d2] = idx[d2] * r + k;
      if (!locate(rv, level - 1, parent, a - plo, b - a, out, np)) return false;
    }
    return true;
  }
  }
  return false;
}

static bool rv_element(RV *rv, int64_t i, Piece *pc, int *np) {
  if (rv->affine && i < rv->n) { /* past the end the walk wraps, as unflat does */
    pc[0] = (Piece){ref_span_offset(&rv->sp, i), rv->sp.esize};
    *np = 1;
    return true;
  }
  const PieceCache *c = rv->cache;
  if (c && c->gen == rv->gen) {
    *np = (int)(c->first[i + 1] - c->first[i]);
    memcpy(pc, c->pc + c->first[i], sizeof *pc * (size_t)*np);
    return true;
  }
  int64_t idx[MAX_RANK];
  int top = rv->v->ntr;
  unflat(i, rv->rank[top], rv->lvl[top], idx);
  *np = 0;
  return locate(rv, top, idx, 0, dtype_size(rv->dt[top]), pc, np);
}

static bool read_pieces(Region *g, Dtype t, const Piece *pc, int np, Cell *c, uint8_t *def) {
  if (np == 1 && pc[0].n == dtype_size(t)) { /* one whole element in place: the same bytes without the copy */
    *c = ref_load(t, g->bytes + pc[0].off);
    *def = ref_bytes_defined(g, pc[0].off, pc[0].n);
    return true;
  }
  uint8_t buf[16];
  int k = 0;
  bool d = true;
  for (int i = 0; i < np; i++)
    for (int j = 0; j < pc[i].n; j++, k++) {
      buf[k] = g->bytes[pc[i].off + j];
      d &= mem_defined(g, pc[i].off + j);
    }
  *c = dtype_load(t, buf);
  *def = d;
  return true;
}

static void write_pieces(Region *g, Dtype t, const Piece *pc, int np, Cell c) {
  if (np == 1 && pc[0].n == dtype_size(t)) { /* one whole element in place */
    ref_set_defined(g, pc[0].off, pc[0].n, true);
    ref_store(t, c, g->bytes + pc[0].off);
    return;
  }
  uint8_t buf[16];
  dtype_store(t, c, buf);
  int k = 0;
  for (int i = 0; i < np; i++) mem_set_defined(g, pc[i].off, pc[i].n, true);
  for (int i = 0; i < np; i++)
    for (int j = 0; j < pc[i].n; j++, k++) {
      g->bytes[pc[i].off + j] = buf[k];
    }
}

/* Storing an undefined lane leaves its element undefined (SPEC §10.1:
 * not a fault; only its definedness travels, its bytes mean nothing). */
static void undef_pieces(Region *g, const Piece *pc, int np) {
  for (int i = 0; i < np; i++) mem_set_defined(g, pc[i].off, pc[i].n, false);
}

static bool view_oob(Ref_ *R, Sub *s, RV *rv) {
  return fault(R, s, rv->op, FAULT_OOB, "%s%s", rv->oob, "");
}

static void *grow_to(void *p, int64_t *cap, int64_t need, size_t size) {
  if (need <= *cap) return p;
  int64_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *q = realloc(p, size * (size_t)c);
  if (!q) abort();
  *cap = c;
  return q;
}

/* val_shape without clearing the definedness, for a caller that writes
 * every lane's. */
static void shape_lanes(Value *v, Dtype t, int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= shape[i];
  if (n > v->cap) return val_shape(v, t, rank, shape);
  v->dtype = t, v->rank = rank, v->n = n;
  if (rank == 1) v->shape[0] = shape[0]; /* the commonest, without a call to memcpy */
  else
    for (int i = 0; i < rank; i++) v->shape[i] = shape[i];
}

static bool view_read(Ref_ *R, Sub *s, RV *rv, Value *out) {
  int top = rv->v->ntr;
  if (rv->affine) { /* ref_span_read writes every lane and its definedness */
    shape_lanes(out, rv->dt[top], rv->rank[top], rv->lvl[top]);
    if (rv->n == 1) { /* ref_span_read's one element */
      out->v[0] = ref_load(rv->dt[top], rv->reg->bytes + rv->sp.base);
      out->def[0] = ref_bytes_defined(rv->reg, rv->sp.base, rv->sp.esize);
      return true;
    }
    return ref_span_read(rv->reg, rv->dt[top], &rv->sp, out->v, out->def), true;
  }
  val_shape(out, rv->dt[top], rv->rank[top], rv->lvl[top]);
  Piece pc[MAX_PIECES];
  int np;
  PieceCache *c = rv->cache;
  bool fill = c && c->gen != rv->gen; /* walk once, keep the pieces */
  if (fill) c->gen = 0, c->first = grow_to(c->first, &c->cap_n, rv->n + 1, sizeof *c->first), c->first[0] = 0;
  for (int64_t i = 0; i < rv->n; i++) {
    if (!rv_element(rv, i, pc, &np)) return view_oob(R, s, rv);
    read_pieces(rv->reg, rv->dt[top], pc, np, &out->v[i], &out->def[i]);
    if (fill) {
      c->pc = grow_to(c->pc, &c->cap_pc, c->first[i] + np, sizeof *c->pc);
      memcpy(c->pc + c->first[i], pc, sizeof *pc * (size_t)np);
      c->first[i + 1] = c->first[i] + np;
    }
  }
  if (fill) c->gen = rv->gen;
  return true;
}

static bool view_write_lane(Ref_ *R, Sub *s, RV *rv, int64_t i, Cell c, bool def) {
  if (rv->affine) return ref_span_write(rv->reg, rv->dt[rv->v->ntr], &rv->sp, i, c, def), true;
  Piece pc[MAX_PIECES];
  int np;
  if (!rv_element(rv, i, pc, &np)) return view_oob(R, s, rv);
  if (def) write_pieces(rv->reg, rv->dt[rv->v->ntr], pc, np, c);
  else undef_pieces(rv->reg, pc, np);
  return true;
}

/* ---- plain and masked accesses (SPEC §5.1-§5.3) ------------------------ */
static bool resolve_field(Ref_ *R, Sub *s, const Op *op, FieldId f, RV *rv) {
  return rv_resolve(R, s, op, (const View *)op->e[f]->view, s->core, s->subcore, rv);
}

/* The int32 lanes of a store that ref_span_store writes whole (a dense
 * span, every lane defined): what a read of the span right after it gives,
 * lane for lane, so that read can be skipped (log_new). */
static bool stored_whole(const RV *rv, Dtype t, const Value *nv) {
  if (!rv->affine || !rv->sp.contiguous || t != DT_INT32 || nv->n != rv->n) return false;
  return nv->n == 1 ? nv->def[0] : !memchr(nv->def, 0, (size_t)nv->n);
}

/* ref_span_store of a stored_whole span, keeping each word stored as
 * after's lane: int32 words, so a store wraps as val_convert did and a
 * load sign-extends back, as a read of the span right after it gives. */
static void store_words(RV *rv, const Value *nv, Value *after) {
  int top = rv->v->ntr;
  uint8_t *restrict b = rv->reg->bytes + rv->sp.base;
  shape_lanes(after, DT_INT32, rv->rank[top], rv->lvl[top]);
  if (nv->n <= 2) ref_set_defined(rv->reg, rv->sp.base, (int)nv->n * 4, true); /* up to 8 bytes: the inline form */
  else mem_set_defined(rv->reg, rv->sp.base, nv->n * 4, true);
  const Cell *restrict x = nv->v;
  Cell *restrict o = after->v;
  int64_t n = nv->n;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) /* four lanes a turn: the loop's own steps were most of a lane's cost */
    for (int k = 0; k < 4; k++) {
      int32_t w = (int32_t)x[i + k].i;
      memcpy(b + 4 * (i + k), &w, 4);
      o[i + k].i = w;
    }
  for (; i < n; i++) {
    int32_t w = (int32_t)x[i].i;
    memcpy(b + 4 * i, &w, 4);
    o[i].i = w;
  }
  memset(after->def, 1, (size_t)n);
}

/* Stores x into the view whose elements hold old (read just before).  With
 * `after` (an affine view), the stored lanes are left there when
 * stored_whole holds (after->n set), else after->n is 0. */
static bool store_value(Ref_ *R, Sub *s, RV *rv, const Value *x, bool add, const Value *old, Value *after) {
  Dtype t = rv->dt[rv->v->ntr];
  bool ok = true;
  if (rv->affine) { /* the lanes first, then one pass over the span */
    const Value *nv = x; /* the lanes as they are, when they are the view's */
    if (add || x->dtype != t || x->n != rv->n) {
      Value *w = &R->scratch[SCR_STORE];
      shape_lanes(w, t, 1, &rv->n);
      for (int64_t i = 0; i < rv->n; i++) {
        int64_t xi = val_lane(x, i);
        w->def[i] = x->def[xi] && (!add || old->def[i]);
        w->v[i] = x->dtype == t ? x->v[xi] : alu_convert(x->dtype, t, x->v[xi]); /* alu_convert's own shortcut, inline */
        if (add && w->def[i]) alu_binary(OP_ADD, t, t, old->v[i], w->v[i], &w->v[i]);
      }
      nv = w;
    }
    if (after && stored_whole(rv, t, nv)) return store_words(rv, nv, after), true;
    ref_span_store(rv->reg, t, &rv->sp, nv->v, nv->def);
    if (after) after->n = 0;
    return true;
  }
  if (after) after->n = 0;
  for (int64_t i = 0; ok && i < rv->n; i++) {
    int64_t xi = val_lane(x, i);
    bool def = x->def[xi] && (!add || old->def[i]);
    Cell c = alu_convert(x->dtype, t, x->v[xi]);
    if (add && def) alu_binary(OP_ADD, t, t, old->v[i], c, &c);
    ok = view_write_lane(R, s, rv, i, c, def);
  }
  return ok;
}

static bool log_new(Ref_ *R, Sub *s, const Op *op, RV *rv) {
  Value *after = &R->scratch[SCR_NEW];
  bool ok = view_read(R, s, rv, after);
  if (ok) run_log(R->r, s->idx, op->id, EV_NEW, after);
  return ok;
}

/* log_new, given what store_value left in *after (n 0: read the view). */
static bool log_stored(Ref_ *R, Sub *s, const Op *op, RV *rv, Value *after) {
  if (!after->n) return log_new(R, s, op, rv);
  run_log(R->r, s->idx, op->id, EV_NEW, after);
  return true;
}

/* The elements of an affine view where they sit densely from base, as
 * swap_words and do_get read them: from an RV, or from a view's plan and
 * its plan_base without one. */
typedef struct {
  Region *reg;
  int64_t base, n;
  Dtype dt;
  int rank;
  const int64_t *shape; /* a row of lvl (MAX_RANK long) */
  int esize;
  bool dense; /* affine and contiguous: else only reg and dense are set */
} Dense;

static Dense dense_of_rv(const RV *rv) {
  int top = rv->v->ntr;
  if (!rv->affine || !rv->sp.contiguous) return (Dense){.reg = rv->reg};
  return (Dense){rv->reg, rv->sp.base, rv->n, rv->dt[top], rv->rank[top], rv->lvl[top], rv->sp.esize, true};
}

static Dense dense_of_plan(const ViewPlan *pl, int64_t base) {
  int top = pl->v->ntr;
  return (Dense){pl->reg, base, pl->n, pl->dt[top], pl->rank[top], pl->lvl[top], pl->sp.esize, pl->sp.contiguous};
}

/* v's plan and its span's base when the plan resolves it (plan_base: 1,
 * or 0 after a fault); -1 for the RV's way (rv_resolve: the walk, or a
 * plan that only is when one element is wanted and there are more). */
static inline int plan_dense(Ref_ *R, Sub *s, const Op *op, const View *v, bool one, ViewPlan **pl, int64_t *base, int64_t *dyn) {
  *pl = plan_at(R, v, s->core, s->subcore);
  if (!(*pl)->fast || (one && (*pl)->n != 1)) return -1;
  return plan_base(R, s, op, *pl, base, dyn);
}

/* plan_dense of op's ref, whose plan is opl (x_plan). */
static inline __attribute__((always_inline)) int op_dense(Ref_ *R, Sub *s, const Op *op, ViewPlan *opl, bool one, ViewPlan **pl, int64_t *base, int64_t *dyn) {
  *pl = plan_here(R, opl, opl->v, s->core, s->subcore);
  if (!(*pl)->fast || (one && (*pl)->n != 1)) return -1;
  return plan_base(R, s, op, *pl, base, dyn);
}

/* resolve_field and view_read into v (kept apart: do_get's frame holds no RV). */
static __attribute__((noinline)) bool get_walked(Ref_ *R, Sub *s, const Op *op, Value *v) {
  RV rv;
  return resolve_field(R, s, op, FLD_REF, &rv) && view_read(R, s, &rv, v);
}

static inline __attribute__((always_inline)) bool do_get(Ref_ *R, Sub *s, const Op *op, ViewPlan *opl) {
  Value *v = &R->scratch[SCR_READ];
  ViewPlan *pl;
  int64_t base, dyn[MAX_RANK];
  int got = op_dense(R, s, op, opl, true, &pl, &base, dyn);
  if (!got) return false;
  if (got > 0) { /* view_read's one element, without an RV, into the binding when it has a lane (as env_set writes one) */
    Value *d = op->name[FLD_OUT] ? env_slot(R, s, op->name[FLD_OUT]) : v;
    if (d->cap < 1) d = v;
    int top = pl->v->ntr;
    Dtype t = pl->dt[top];
    if (d->cap >= 1) { /* shape_lanes of one element (a scalar's: no row to copy) */
      int rank = d->rank = pl->rank[top];
      d->dtype = t, d->n = 1;
      for (int k = 0; k < rank; k++) d->shape[k] = pl->lvl[top][k];
    } else {
      shape_lanes(d, t, pl->rank[top], pl->lvl[top]);
    }
    d->v[0] = ref_load(t, pl->reg->bytes + base);
    d->def[0] = ref_bytes_defined(pl->reg, base, pl->sp.esize);
    run_log(R->r, s->idx, op->id, EV_LOADED, d);
    if (d == v) env_take(R, s, op->name[FLD_OUT], v);
    return true;
  }
  if (!get_walked(R, s, op, v)) return false;
  run_log(R->r, s->idx, op->id, EV_LOADED, v);
  env_take(R, s, op->name[FLD_OUT], v);
  return true;
}

/* shape_lanes(v, the view's dtype and shape), the element count known. */
static void shape_view(Value *v, const Dense *d) {
  if (d->n > v->cap) return val_shape(v, d->dt, d->rank, d->shape);
  v->dtype = d->dt, v->rank = d->rank, v->n = d->n;
  memcpy(v->shape, d->shape, sizeof v->shape); /* a whole row of lvl: a few moves, not a call */
}

/* mem_range_defined / mem_set_defined (true) of n int32 words from base,
 * eight words a shadow word where base falls on one (no calls). */
static bool words_defined(const Region *g, int64_t base, int64_t n) {
  if ((base & 63) || (n & 15)) return mem_range_defined(g, base, n * 4);
  const uint8_t *d = g->defined + (base >> 3);
  for (int64_t k = 0; k < n / 2; k += 8) {
    uint64_t w;
    memcpy(&w, d + k, 8);
    if (w != UINT64_MAX) return false;
  }
  return true;
}

static void words_set_defined(Region *g, int64_t base, int64_t n) {
  if ((base & 63) || (n & 15)) return mem_set_defined(g, base, n * 4, true);
  uint8_t *d = g->defined + (base >> 3);
  if (n == 16) memset(d, 0xff, 8); /* a vector of 16: one move */
  else memset(d, 0xff, (size_t)n / 2);
}

/* Four int32 words and four int64 lanes (Cells' .i), for swap_words. */
typedef int32_t I32x4 __attribute__((vector_size(16)));
typedef int64_t I64x4 __attribute__((vector_size(32)));

/* Four words into four lanes, sign-extended: each word next to its sign
 * (little-endian; two unpacks), which the conversion builtin does not give. */
static inline void widen4(Cell *c, I32x4 w) {
  I32x4 sign = w >> 31, lo = {w[0], sign[0], w[1], sign[1]}, hi = {w[2], sign[2], w[3], sign[3]};
  memcpy(c, &lo, sizeof lo);
  memcpy(c + 2, &hi, sizeof hi);
}

/* swap_words of one word (a scalar's access, the tests passed): the
 * lanes' loops and flag runs left out. */
static bool swap_word(const Dense *d, const Value *x, Value *old, Value *after) {
  Region *g = d->reg;
  uint8_t *b = g->bytes + d->base;
  int32_t was, w = (int32_t)x->v[0].i;
  shape_view(old, d);
  after->dtype = old->dtype, after->rank = old->rank, after->n = 1;
  for (int k = 0; k < old->rank; k++) after->shape[k] = old->shape[k];
  bool was_def = ref_bytes_defined(g, d->base, 4);
  old->def[0] = was_def; /* before the store */
  memcpy(&was, b, 4);
  memcpy(b, &w, 4);
  old->v[0].i = was, after->v[0].i = w;
  if (!was_def) ref_set_defined(g, d->base, 4, true); /* as swap_int */
  after->def[0] = 1;
  return true;
}

/* view_read into old, then store_value of x (not an add) into a
 * stored_whole span, in one pass: each word is read into old, then x's
 * lane is stored and kept in after.  False (nothing done) for any other
 * span or value. */
static bool swap_words(const Dense *d, const Value *x, Value *old, Value *after) {
  Region *g = d->reg;
  int64_t n = d->n, base = d->base;
  if (!d->dense || d->dt != DT_INT32 || x->dtype != DT_INT32 || x->n != n) return false; /* stored_whole's tests */
  if (n == 1 ? !x->def[0] : !ref_flags_all(x->def, n)) return false;
  if (n == 1 && after->cap >= 1) return swap_word(d, x, old, after);
  shape_view(old, d);
  if (n > after->cap) shape_view(after, d);
  else { /* after as old: shape_view's fields, its rows up to the rank */
    after->dtype = old->dtype, after->rank = old->rank, after->n = n;
    if (old->rank == 1) after->shape[0] = old->shape[0]; /* the commonest, without the call to memcpy the loop becomes */
    else
      for (int k = 0; k < old->rank; k++) after->shape[k] = old->shape[k];
  }
  if (n > 2 && words_defined(g, base, n)) ref_flags_set(old->def, n); /* the old definedness, before the store */
  else
    for (int64_t i = 0; i < n; i++) old->def[i] = ref_bytes_defined(g, base + 4 * i, 4);
  uint8_t *restrict b = g->bytes + base;
  const Cell *restrict xv = x->v;
  Cell *restrict ov = old->v, *restrict av = after->v;
  int64_t i = 0;
  for (; __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && i + 4 <= n; i += 4) { /* four lanes a turn in vector registers: the words narrowed and widened whole */
    I64x4 xq;
    I32x4 was, w;
    memcpy(&xq, xv + i, sizeof xq);
    w = __builtin_convertvector(xq, I32x4); /* the low word of each lane, as (int32_t) */
    memcpy(&was, b + 4 * i, sizeof was);
    memcpy(b + 4 * i, &w, sizeof w);
    widen4(ov + i, was); /* Cell's int64 member: the sign-extended word */
    widen4(av + i, w);
  }
  for (; i + 2 <= n; i += 2) { /* two lanes a turn: the loop's own steps were a third of a lane's cost */
    int32_t was0, was1, w0 = (int32_t)xv[i].i, w1 = (int32_t)xv[i + 1].i;
    memcpy(&was0, b + 4 * i, 4);
    memcpy(&was1, b + 4 * i + 4, 4);
    memcpy(b + 4 * i, &w0, 4);
    memcpy(b + 4 * i + 4, &w1, 4);
    ov[i].i = was0, ov[i + 1].i = was1, av[i].i = w0, av[i + 1].i = w1;
  }
  for (; i < n; i++) {
    int32_t was, w = (int32_t)xv[i].i;
    memcpy(&was, b + 4 * i, 4);
    memcpy(b + 4 * i, &w, 4);
    ov[i].i = was, av[i].i = w;
  }
  if (n <= 2) ref_set_defined(g, base, (int)n * 4, true); /* up to 8 bytes: the inline form */
  else words_set_defined(g, base, n);
  ref_flags_set(after->def, n);
  return true;
}

/* The binding of sl's affine form's name in s, kept when it is bound
 * (kept apart: value_word stays small). */
static __attribute__((noinline)) const Value *slot_bind(ProgSlot *sl, Sub *s) {
  const Value *b = env_at(s, sl->aff.id);
  if (b) sl->bind = b, sl->bsub = s;
  return b;
}

/* e's value when a chain of int32 scalars gives it defined (a name bound
 * to one, or int32 operators of it and literals: v + 1): the lane ev_top's
 * value would hold, without the Value.  False for anything else (the
 * caller then takes ev_top, which gives the value or the fault). */
static inline __attribute__((always_inline)) bool value_word(Ref_ *R, Sub *s, const Expr *e, int64_t *w) {
  if (e->kind != EX_NAME && e->ty != DT_INT32) return false; /* a comparison's chain gives a bool */
  ProgSlot *sl = prog_slot(R, e);
  if (sl->affine) return ref_affine_run(&sl->aff, sl->bsub == s ? sl->bind : slot_bind(sl, s), w);
  return sl->chain >= 0 && ref_prog_chain(sl->p, env_at(s, sl->chain), w);
}

/* swap_word of the int32 w into a word plan's element at base (old and
 * after have lanes). */
static inline __attribute__((always_inline)) void swap_int(const ViewPlan *pl, int64_t base, int64_t w, Value *old, Value *after) {
  Region *g = pl->reg;
  int top = pl->v->ntr;
  uint8_t *b = g->bytes + base;
  int32_t was, x = (int32_t)w;
  int rank = old->rank = after->rank = pl->rank[top];
  old->dtype = after->dtype = DT_INT32, old->n = after->n = 1;
  for (int k = 0; k < rank; k++) old->shape[k] = after->shape[k] = pl->lvl[top][k]; /* a scalar's: none */
  bool was_def = ref_bytes_defined(g, base, 4);
  old->def[0] = was_def; /* before the store */
  memcpy(&was, b, 4);
  memcpy(b, &x, 4);
  old->v[0].i = was, after->v[0].i = x;
  if (!was_def) ref_set_defined(g, base, 4, true); /* a defined word's flags left alone: no store for the next load of them to wait on */
  after->def[0] = 1;
}

/* do_swap's logs and binding after swap_words. */
static inline __attribute__((always_inline)) bool swapped(Ref_ *R, Sub *s, const Op *op, Value *old, Value *after) {
  run_log(R->r, s->idx, op->id, EV_OLD, old); /* the logs copy what they are given: the order of memory and logs is free */
  run_log(R->r, s->idx, op->id, EV_NEW, after);
  if (op->kind == OPK_SWAP) env_take(R, s, op->name[FLD_OUT], old);
  return true;
}

/* do_swap through an RV: the plan's span (got 1: x its value) that
 * swap_words declined, or the view resolved (got -1).  Kept apart, so
 * that do_swap's frame holds no RV. */
static __attribute__((noinline)) bool swap_walked(Ref_ *R, Sub *s, const Op *op, int got, const ViewPlan *pl, int64_t base,
                                                  const int64_t *dyn, const Value *x) {
  RV rv;
  Value *old = &R->scratch[SCR_OLD], *after = &R->scratch[SCR_AFTER];
  bool add = op->kind == OPK_ADDUPDATE;
  if (got > 0) {
    rv_head(R, op, op->e[FLD_REF]->view, &rv);
    rv.reg = pl->reg;
    rv_from_plan(pl, base, dyn, &rv);
  } else {
    if (!resolve_field(R, s, op, FLD_REF, &rv) || !(x = ev_top(R, s, op, op->e[FLD_VALUE]))) return false;
    Dense d = dense_of_rv(&rv);
    if (!add && swap_words(&d, x, old, after)) return swapped(R, s, op, old, after);
  }
  bool ok = view_read(R, s, &rv, old);
  if (ok) run_log(R->r, s->idx, op->id, EV_OLD, old);
  ok = ok && store_value(R, s, &rv, x, add, old, after) && log_stored(R, s, op, &rv, after);
  if (ok && op->kind == OPK_SWAP) env_take(R, s, op->name[FLD_OUT], old);
  return ok;
}

static inline __attribute__((always_inline)) bool do_swap(Ref_ *R, Sub *s, const Op *op, ViewPlan *opl) {
  Value *old = &R->scratch[SCR_OLD], *after = &R->scratch[SCR_AFTER];
  const Value *x = NULL;
  bool add = op->kind == OPK_ADDUPDATE;
  ViewPlan *pl;
  int64_t base = 0, dyn[MAX_RANK]; /* read by swap_walked only when got is 1 */
  int got = op_dense(R, s, op, opl, false, &pl, &base, dyn);
  if (!got) return false;
  if (got > 0) { /* the plan's span: an RV only when swap_words declines */
    int64_t w;
    if (!add && pl->word && old->cap >= 1 && after->cap >= 1 && value_word(R, s, op->e[FLD_VALUE], &w)) /* a scalar's set */
      return swap_int(pl, base, w, old, after), swapped(R, s, op, old, after);
    if (!(x = ev_top(R, s, op, op->e[FLD_VALUE]))) return false;
    Dense d = dense_of_plan(pl, base);
    if (!add && swap_words(&d, x, old, after)) return swapped(R, s, op, old, after);
  }
  return swap_walked(R, s, op, got, pl, base, dyn, x);
}

/* A mask that must be defined in every lane; NULL after a fault. */
static const Value *eval_mask(Ref_ *R, Sub *s, const Op *op, const Expr *e) {
  const Value *m = ev_top(R, s, op, e);
  if (m && ref_flags_all(m->def, m->n)) return m; /* the usual: eight flags a test */
  for (int64_t i = 0; m && i < m->n; i++)
    if (!m->def[i]) return uninit_lane(R, s, op, "mask", m, i), NULL;
  return m;
}

/* One int32 element at byte offset off of a region: its word stored and
 * its four shadow bits set, or (undefined) its bits cleared and its bytes
 * left (SPEC §10.1). */
static inline void word32_put(uint8_t *bytes, uint8_t *defined, int64_t off, bool def, int64_t v) {
  uint8_t bits = (uint8_t)(0xfu << (off & 7));
  if (!def) {
    defined[off >> 3] &= (uint8_t)~bits;
    return;
  }
  int32_t w = (int32_t)v;
  defined[off >> 3] |= bits;
  memcpy(bytes + off, &w, 4);
}

/* do_expand_compress's store_compressed lanes for int32 values into a
 * dense int32 view under a bool mask: the same writes (ref_span_write of
 * element k) without the per-lane conversions and calls, and *after the
 * view as a read of it would give it then (its elements are distinct
 * words: the old ones but the k written, each x's word, or undefined with
 * its old bytes).  false, having done nothing, for any other. */
static bool compress32(const RV *rv, const Value *m, const Value *x, const Value *mem, Value *out, Value *after) {
  int64_t base = rv->sp.base, n = m->n;
  if (!rv->affine || !rv->sp.contiguous || rv->dt[rv->v->ntr] != DT_INT32 || rv->sp.esize != 4 || (base & 3) ||
      x->dtype != DT_INT32 || m->dtype != DT_BOOL)
    return false;
  shape_lanes(after, mem->dtype, mem->rank, mem->shape);
  memcpy(after->v, mem->v, sizeof *after->v * (size_t)mem->n);
  memcpy(after->def, mem->def, (size_t)mem->n);
  const Cell *mv = m->v, *xv = x->v, *old = mem->v; /* at hand, not read again through the Values */
  const uint8_t *xd = x->def, *oldd = mem->def;
  Cell *ov = out->v, *av = after->v;
  uint8_t *od = out->def, *ad = after->def;
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) { /* the lanes expanded and compressed; the memory below */
    if (!mv[i].i) continue; /* alu_truthy of a bool */
    ov[i] = old[k], od[i] = oldd[k];
    av[k].i = xd[i] ? (int32_t)xv[i].i : old[k].i, ad[k] = xd[i]; /* undefined: its bytes left (SPEC §10.1) */
    k++;
  }
  uint8_t *bytes = rv->reg->bytes, *defined = rv->reg->defined;
  for (int64_t j = 0; j < k; j++) { /* elements 0 .. k: distinct words, in any order */
    word32_put(bytes, defined, base + 4 * j, ad[j], av[j].i);
  }
  return true;
}

/* load_expanded: out[p_k] = M[k]; store_compressed: M[k] = x[p_k] with the
 * old value expanded the same way; the add form adds. */
static bool do_expand_compress(Ref_ *R, Sub *s, const Op *op) {
  RV rv;
  const Value *m = NULL, *x = NULL;
  Value *mem = &R->scratch[SCR_READ], *out = &R->scratch[SCR_OLD]; /* an access's own lanes, no pool's Values to copy */
  Value *after = &R->scratch[SCR_NEW];
  after->n = 0; /* log_stored: read the view again, unless compress32 gives it */
  bool load = op->kind == OPK_LOAD_EXPANDED, add = op->kind == OPK_ADDUPDATE_COMPRESSED;
  bool ok = resolve_field(R, s, op, FLD_REF, &rv) && (m = eval_mask(R, s, op, op->e[FLD_MASK])) &&
            (load || (x = ev_top(R, s, op, op->e[FLD_VALUE]))) && view_read(R, s, &rv, mem);
  if (ok) {
    Dtype t = rv.v->ref->dtype; /* §8.3: the underlying ref's dtype */
    shape_lanes(out, load ? t : mem->dtype, mem->rank, mem->shape); /* val_shape's, */
    ref_flags_clear(out->def, out->n); /* every lane undefined but those the mask selects */
    bool done = !load && !add && compress32(&rv, m, x, mem, out, after);
    for (int64_t i = 0, k = 0; !done && i < m->n; i++) {
      if (!alu_truthy(m->dtype, m->v[i])) continue;
      out->v[i] = mem->v[k];
      out->def[i] = mem->def[k];
      if (!load) {
        bool def = x->def[i] && (!add || mem->def[k]);
        Cell c = alu_convert(x->dtype, mem->dtype, x->v[i]);
        if (add && def) alu_binary(OP_ADD, mem->dtype, mem->dtype, mem->v[k], c, &c);
        if (!(ok = view_write_lane(R, s, &rv, k, c, def))) break;
      }
      k++;
    }
  }
  if (ok) {
    run_log(R->r, s->idx, op->id, load ? EV_LOADED : EV_OLD, out);
    if (load) env_take(R, s, op->name[FLD_OUT], out); /* the binding's old lanes become the scratch's */
    else ok = log_stored(R, s, op, &rv, after);
  }
  return ok;
}

/* ---- register gather / scatter (SPEC §5.4) ----------------------------- */
/* gs_dense's lanes for int32 elements at offsets that are multiples of 4
 * (an element's 4 defined bits in one shadow byte), not an add: the same
 * reads and writes, in loops of their own (GS_LOOP: never inlined) so that
 * a lane's few values stay in registers.  Each returns the first lane it
 * did not do, as gs_dense. */
#define GS_LOOP __attribute__((noinline))

typedef uint64_t U64x2 __attribute__((vector_size(16))); /* unsigned: arithmetic that wraps */
typedef int64_t I64x2 __attribute__((vector_size(16)));

static inline U64x2 lanes2(const Cell *c) {
  U64x2 w;
  memcpy(&w, c, sizeof w);
  return w;
}

/* Whether 16 indices are all defined and in [0, size).  Their or, taken
 * as unsigned, bounds each of them: below size, they all are (the usual:
 * small indices); else the exact test, at | (size - 1 - at) with its top
 * bit clear exactly for one in bounds (size >= 0; wrapping), or-ed over
 * the lanes two at a time. */
static inline bool lanes16_in(const Value *ix, int64_t size) {
  if (!ref_flags_all16(ix->def)) return false;
  const Cell *v = ix->v; /* or-ed as a tree, two lanes a load: 4 ors deep, not 16 in a chain */
  U64x2 or2 = ((lanes2(v) | lanes2(v + 2)) | (lanes2(v + 4) | lanes2(v + 6))) | ((lanes2(v + 8) | lanes2(v + 10)) | (lanes2(v + 12) | lanes2(v + 14)));
  or2 |= __builtin_shufflevector(or2, or2, 1, 0);
  if (or2[0] < (uint64_t)size) return true;
  U64x2 bad = {0, 0}, last = {(uint64_t)size - 1, (uint64_t)size - 1};
#pragma GCC unroll 8
  for (int j = 0; j < 16; j += 2) {
    U64x2 at;
    memcpy(&at, &ix->v[j], sizeof at);
    bad |= at | (last - at);
  }
  return !((bad[0] | bad[1]) >> 63);
}

GS_LOOP static int64_t gather32(const Region *g, int64_t base, int64_t size, const Value *ix, Value *out, int64_t n) {
  const uint8_t *bytes = g->bytes, *defined = g->defined, *idef = ix->def;
  const Cell *iv = ix->v;
  Cell *ov = out->v;
  uint8_t *od = out->def;
  uint8_t all = 0xff; /* the lanes' shadow bytes and-ed: all set (the usual) gives every lane's flag at once */
  int64_t k = 0;
  if (n == 16 && lanes16_in(ix, size)) /* a vector register's lanes, checked once: no test per lane */
#pragma GCC unroll 8
    for (; k < 16; k += 2) { /* two lanes a store: an operator reads them 16 bytes at a time (ref_low4) */
      int64_t off0 = base + 4 * iv[k].i, off1 = base + 4 * iv[k + 1].i;
      int32_t w0, w1;
      memcpy(&w0, bytes + off0, 4), memcpy(&w1, bytes + off1, 4);
      I64x2 pair = {w0, w1};
      memcpy(ov + k, &pair, sizeof pair);
      all &= defined[off0 >> 3] & defined[off1 >> 3];
    }
  for (; k < n; k++) {
    int64_t at = iv[k].i, off = base + 4 * at;
    if (!idef[k] || (uint64_t)at >= (uint64_t)size) break;
    int32_t w;
    memcpy(&w, bytes + off, 4);
    ov[k].i = w;
    all &= defined[off >> 3];
  }
  if (all == 0xff) ref_flags_set(od, k);
  else
    for (int64_t j = 0; j < k; j++) { /* lane by lane: the other 4 bytes of a shadow byte left out */
      int64_t off = base + 4 * iv[j].i;
      od[j] = (defined[off >> 3] >> (off & 7) & 0xf) == 0xf;
    }
  return k;
}

/* The shadow bits of the 4 bytes at an offset that is a multiple of 4, by off & 7. */
static const uint8_t word_bits[8] = {0x0f, 0, 0, 0, 0xf0, 0, 0, 0};

/* x int32: its lanes stored as they are (an undefined one leaves its
 * element undefined, SPEC §10.1). */
GS_LOOP static int64_t scatter32(Region *g, int64_t base, int64_t size, const Value *ix, const Value *x, int64_t n) {
  uint8_t *bytes = g->bytes, *defined = g->defined;
  const uint8_t *idef = ix->def, *xdef = x->def;
  const Cell *iv = ix->v, *xv = x->v;
  int64_t k = 0;
  if (n == 16 && ref_flags_all16(xdef) && lanes16_in(ix, size)) { /* a vector register's lanes, all checked once */
    uint8_t have = 0xff; /* whether every element was defined already (the usual): then no shadow byte to write */
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) {
      int64_t off = base + 4 * iv[j].i;
      have &= (uint8_t)(defined[off >> 3] | ~word_bits[off & 7]);
    }
#pragma GCC unroll 16
    for (; k < 16; k++) {
      int64_t off = base + 4 * iv[k].i;
      int32_t w = (int32_t)xv[k].i;
      memcpy(bytes + off, &w, 4);
    }
    if (have != 0xff)
      for (int j = 0; j < 16; j++) {
        int64_t off = base + 4 * iv[j].i;
        defined[off >> 3] |= word_bits[off & 7];
      }
    return k;
  }
  if (ref_flags_all(xdef, n)) { /* every lane defined (the commonest): no test of its own per lane */
    for (; k < n; k++) {
      int64_t at = iv[k].i, off = base + 4 * at;
      if (!idef[k] || (uint64_t)at >= (uint64_t)size) return k;
      int32_t w = (int32_t)xv[k].i;
      defined[off >> 3] |= word_bits[off & 7]; /* a table, not a shift by a register */
      memcpy(bytes + off, &w, 4);
    }
    return k;
  }
  for (; k < n; k++) {
    int64_t at = iv[k].i;
    if (!idef[k] || (uint64_t)at >= (uint64_t)size) break;
    word32_put(bytes, defined, base + 4 * at, xdef[k], xv[k].i);
  }
  return k;
}

/* do_gather_scatter's lanes from k on, for one index vector into a dense
 * affine view without a mask, while each lane is defined and in bounds:
 * the same reads and writes in the same order, at base + index x esize.
 * Returns the first lane it did not do (the general loop's from there). */
static int64_t gs_dense(const Dense *d, Dtype t, bool gather, bool add, const Value *ix, const Value *x, Value *out, int64_t n) {
  Region *g = d->reg;
  int64_t size = d->shape[0], base = d->base, es = d->esize, k = 0;
  if (t == DT_INT32 && es == 4 && !(base & 3) && !add && (gather || x->dtype == DT_INT32))
    return gather ? gather32(g, base, size, ix, out, n) : scatter32(g, base, size, ix, x, n);
  for (; k < n; k++) {
    int64_t at = ix->v[k].i;
    if (!ix->def[k] || at < 0 || at >= size) break; /* the general loop faults as it always did */
    int64_t off = base + at * es;
    if (gather) {
      out->v[k] = ref_load(t, g->bytes + off), out->def[k] = ref_bytes_defined(g, off, (int)es);
      continue;
    }
    if (!x->def[k] || (add && !ref_bytes_defined(g, off, (int)es))) { /* the element becomes undefined (SPEC §10.1) */
      ref_set_defined(g, off, (int)es, false);
      continue;
    }
    Cell c = x->dtype == t ? x->v[k] : alu_convert(x->dtype, t, x->v[k]);
    if (add) alu_binary(OP_ADD, t, t, ref_load(t, g->bytes + off), c, &c);
    ref_set_defined(g, off, (int)es, true);
    ref_store(t, c, g->bytes + off);
  }
  return k;
}

/* do_gather_scatter's lanes from k0 on (those before done by a dense
 * path), then a gather's event and binding: got, pl, base and dyn as
 * plan_dense gave them (got < 0: *rv resolved), idx the indices, m the
 * mask or NULL, x a scatter's value, out a gather's lanes, of dtype t. */
static bool gs_lanes(Ref_ *R, Sub *s, const Op *op, int got, const ViewPlan *pl, int64_t base, const int64_t *dyn, RV *rv,
                     const Value *const *idx, const Value *m, const Value *x, Value *out, Dtype t, int64_t n, int64_t k0) {
  bool gather = op->kind == OPK_LOAD_GATHER, add = op->kind == OPK_ADDUPDATE_SCATTER, ok = true;
  int ni = op->nlist[FLD_INDICES];
  const View *v = op->e[FLD_REF]->view;
  if (k0 < n && got > 0) { /* the general loop's RV, from the plan */
    rv_head(R, op, v, rv);
    rv->reg = pl->reg;
    rv_from_plan(pl, base, dyn, rv);
  }
  for (int64_t k = k0; ok && k < n; k++) {
    if ((op->has & F(MASK)) && !alu_truthy(m->dtype, m->v[k])) continue;
    int64_t at[MAX_RANK], flat = 0;
    for (int d = 0; d < ni; d++) {
      if (!idx[d]->def[k]) {
        ok = uninit_lane(R, s, op, "indices", idx[d], k);
        break;
      }
      at[d] = idx[d]->v[k].i;
      if (at[d] < 0 || at[d] >= rv->lvl[rv->v->ntr][d]) {
        char msg[200];
        snprintf(msg, sizeof msg, "lane %lld indexes %lld in dimension %d of size %lld of %s '%s'", (long long)k, (long long)at[d], d,
                 (long long)rv->lvl[rv->v->ntr][d], space_key(rv->v->ref->space), rv->v->ref->name);
        ok = fault(R, s, op, FAULT_OOB, "%s%s", gather ? "Trying to perform an indexed vector load from out of bounds address. " : "", msg);
        break;
      }
      flat = flat * rv->lvl[rv->v->ntr][d] + at[d];
    }
    if (!ok) break;
    Piece pc[MAX_PIECES];
    int np = 1;
    Cell cur;
    uint8_t def;
    if (rv->affine) { /* one whole element in place (flat < rv->n: in bounds per dimension): read_pieces' own shortcut */
      pc[0] = (Piece){rv->sp.contiguous ? rv->sp.base + flat * rv->sp.esize : ref_span_offset(&rv->sp, flat), rv->sp.esize};
      cur = ref_load(t, rv->reg->bytes + pc[0].off);
      def = ref_bytes_defined(rv->reg, pc[0].off, pc[0].n);
    } else {
      if (!rv_element(rv, flat, pc, &np)) {
        ok = view_oob(R, s, rv);
        break;
      }
      read_pieces(rv->reg, t, pc, np, &cur, &def);
    }
    if (gather) {
      out->v[k] = cur, out->def[k] = def;
      continue;
    }
    if (!x->def[k] || (add && !def)) { /* the element becomes undefined (SPEC §10.1) */
      undef_pieces(rv->reg, pc, np);
      continue;
    }
    Cell c = x->dtype == t ? x->v[k] : alu_convert(x->dtype, t, x->v[k]); /* alu_convert's own shortcut, inline */
    if (add) alu_binary(OP_ADD, t, t, cur, c, &c);
    if (rv->affine) { /* write_pieces' shortcut for one whole element */
      ref_set_defined(rv->reg, pc[0].off, pc[0].n, true);
      ref_store(t, c, rv->reg->bytes + pc[0].off);
    } else {
      write_pieces(rv->reg, t, pc, np, c);
    }
  }
  if (ok && gather) {
    run_log(R->r, s->idx, op->id, EV_LOADED, out);
    env_take(R, s, op->name[FLD_OUT], out); /* the binding's old lanes become the scratch's */
  }
  return ok;
}

/* do_gather_scatter of the commonest form: one index vector, no mask, not
 * an add, into a rank-1 int32 view of 4-byte elements that its plan gives
 * densely.  The same evaluations in the same order as do_gather_scatter's
 * (the view's starts, the index, the value), then gather32 or scatter32
 * straight away, and gs_lanes for whatever they leave.  -1 (nothing done)
 * for an op of another form. */
static int gs_plain(Ref_ *R, Sub *s, const Op *op) {
  const View *v = op->e[FLD_REF]->view;
  int top = v->ntr;
  if (op->nlist[FLD_INDICES] != 1 || (op->has & F(MASK)) || op->kind == OPK_ADDUPDATE_SCATTER) return -1;
  ViewPlan *pl = plan_at(R, v, s->core, s->subcore);
  if (!pl->fast || pl->rank[top] != 1 || !pl->sp.contiguous || pl->dt[top] != DT_INT32 || pl->sp.esize != 4) return -1;
  RV rv;
  int64_t base = 0, dyn[MAX_RANK];
  int got = plan_base(R, s, op, pl, &base, dyn); /* plan_dense's */
  if (got == 0 || (got < 0 && !resolve_field(R, s, op, FLD_REF, &rv))) return 0;
  bool gather = op->kind == OPK_LOAD_GATHER;
  const Value *ix = ev_top(R, s, op, op->list[FLD_INDICES][0]), *x = NULL;
  if (!ix || (!gather && !(x = ev_top(R, s, op, op->e[FLD_VALUE])))) return 0;
  int64_t n = ix->n, k0 = 0;
  Value *out = gather ? &R->scratch[SCR_READ] : NULL;
  if (gather && n > out->cap) val_shape(out, DT_INT32, 1, &n);
  else if (gather) out->dtype = DT_INT32, out->rank = 1, out->shape[0] = n, out->n = n; /* shape_lanes of a vector */
  if (got > 0 && !(base & 3) && gather) k0 = gather32(pl->reg, base, pl->lvl[top][0], ix, out, n);
  else if (got > 0 && !(base & 3) && x->dtype == DT_INT32) k0 = scatter32(pl->reg, base, pl->lvl[top][0], ix, x, n);
  else if (got > 0) k0 = gs_dense(&(Dense){pl->reg, base, pl->n, DT_INT32, 1, pl->lvl[top], 4, true}, DT_INT32, gather, false, ix, x, out, n);
  if (k0 < n) return gs_lanes(R, s, op, got, pl, base, dyn, &rv, &ix, NULL, x, out, DT_INT32, n, k0);
  if (gather) { /* gs_lanes' end */
    run_log(R->r, s->idx, op->id, EV_LOADED, out);
    env_take(R, s, op->name[FLD_OUT], out);
  }
  return 1;
}

static bool do_gather_scatter(Ref_ *R, Sub *s, const Op *op) {
  int plain = gs_plain(R, s, op);
  if (plain >= 0) return plain;
  RV rv;
  bool gather = op->kind == OPK_LOAD_GATHER, add = op->kind == OPK_ADDUPDATE_SCATTER;
  int ni = op->nlist[FLD_INDICES];
  const Value *idx[MAX_RANK], *m = NULL, *x = NULL; /* idx[0 .. ni) set below before any use */
  Value *out = gather ? &R->scratch[SCR_READ] : NULL; /* a gather's lanes (a scatter has none) */
  const View *v = op->e[FLD_REF]->view;
  ViewPlan *pl;
  int64_t base = 0, dyn[MAX_RANK];
  int got = plan_dense(R, s, op, v, false, &pl, &base, dyn); /* 1: an RV only for the general loop */
  bool ok = got > 0 || (got < 0 && resolve_field(R, s, op, FLD_REF, &rv));
  for (int d = 0; ok && d < ni; d++) ok = (idx[d] = ev_top(R, s, op, op->list[FLD_INDICES][d])) != NULL;
  if (ok && (op->has & F(MASK))) ok = (m = eval_mask(R, s, op, op->e[FLD_MASK])) != NULL;
  if (ok && !gather) ok = (x = ev_top(R, s, op, op->e[FLD_VALUE])) != NULL;
  if (!ok) return false;
  int64_t n = ni ? idx[0]->n : 0;
  Dtype t = got > 0 ? pl->dt[v->ntr] : rv.dt[v->ntr];
  if (gather && m) val_shape(out, t, 1, &n); /* a masked-off lane stays undefined */
  else if (gather) shape_lanes(out, t, 1, &n); /* every lane is read, or the gather faults */
  int64_t k0 = 0;
  Dense dn = got > 0 ? dense_of_plan(pl, base) : dense_of_rv(&rv);
  if (ni == 1 && !(op->has & F(MASK)) && dn.dense && dn.rank == 1) k0 = gs_dense(&dn, t, gather, add, idx[0], x, out, n);
  return gs_lanes(R, s, op, got, pl, base, dyn, &rv, idx, m, x, out, t, n, k0);
}

/* ---- DMAs (SPEC §5.5, §5.6, §7.5, §7.10) -------------------------------- */
enum { ST_FAULT = 0, ST_OK = 1, ST_BLOCKED = 2 };

static bool read_offsets(Ref_ *R, Sub *s, const Op *op, const DmaPlan *pl, Value *o) {
  const IxEntry *e = pl->off;
  if (e->kind == IX_REF) {
    RV rv;
    return rv_resolve(R, s, op, e->idx.view, s->core, s->subcore, &rv) && view_read(R, s, &rv, o);
  }
  return ev(R, s, op, pl->off_e ? pl->off_e : e->e, o);
}

/* The bytes a DMA of the view moves, packed (two int4 a byte). */
static int64_t view_bytes(const RV *rv) { return dtype_packed_bytes(rv->dt[rv->v->ntr], rv->n); }

static bool pend_alloc(Pending *pd, int64_t n) {
  pd->n = n;
  /* pieces are read only up to nsp/ndp (zero until an element is paired): no zeroing */
  pd->sp = malloc((size_t)(n ? n : 1) * MAX_PIECES * sizeof(Piece));
  pd->dp = malloc((size_t)(n ? n : 1) * MAX_PIECES * sizeof(Piece));
  pd->nsp = calloc((size_t)(n ? n : 1), sizeof(int));
  pd->ndp = calloc((size_t)(n ? n : 1), sizeof(int));
  return pd->sp && pd->dp && pd->nsp && pd->ndp;
}

static void pend_free(Pending *pd) {
  free(pd->sp);
  free(pd->dp);
  free(pd->nsp);
  free(pd->ndp);
  free(pd);
}

/* A plain copy between two affine views of the same element width and
 * count: the spans instead of a piece list per element. */
static bool spans_pair(const RV *sv, const RV *dv) {
  if (!sv->affine || !dv->affine || sv->n != dv->n || sv->sp.esize != dv->sp.esize) return false;
  return !(dv->dt[dv->v->ntr] == DT_BOOL && sv->dt[sv->v->ntr] != DT_BOOL); /* bytes are not bools: dma_land */
}

static bool pend_span(Pending *pd, const RV *sv, const RV *dv) {
  if (!spans_pair(sv, dv)) return false;
  pd->span = true;
  pd->n = sv->n;
  pd->ss = sv->sp, pd->ds = dv->sp;
  return true;
}

/* Element i of the copy: src element si of sv, dst element di of dv. */
static bool pend_pair(Ref_ *R, Sub *s, Pending *pd, int64_t i, RV *sv, int64_t si, RV *dv, int64_t di) {
  if (!rv_element(sv, si, pd->sp + i * MAX_PIECES, &pd->nsp[i])) return view_oob(R, s, sv);
  if (!rv_element(dv, di, pd->dp + i * MAX_PIECES, &pd->ndp[i])) return view_oob(R, s, dv);
  return true;
}

/* Indirect copies: row r of the plain side pairs with row o[r] of the
 * indexed side; filtered rows (o[r] == ignored_value) are skipped. */
static bool pend_indirect(Ref_ *R, Sub *s, const Op *op, Pending *pd, const DmaPlan *pl, RV *sv, RV *dv) {
  Value o = {0};
  int64_t ignored = 0;
  bool filtered = pl->off->filtered && pl->off->ignored_e;
  if (!read_offsets(R, s, op, pl, &o) || (filtered && !ev_int(R, s, op, pl->off->ignored_e, &ignored)))
    return val_free(&o), false;
  RV *iv = pl->gather ? sv : dv, *pv = pl->gather ? dv : sv;
  int64_t rows = pv->rank[pv->v->ntr] ? pv->lvl[pv->v->ntr][0] : 1, z = iv->lvl[iv->v->ntr][0];
  int64_t row = rows ? pv->n / rows : 0, k = 0;
  bool ok = pend_alloc(pd, pv->n);
  for (int64_t r = 0; ok && r < rows && r < o.n; r++) {
    if (!o.def[r]) {
      ok = uninit_lane(R, s, op, "DMA offsets", &o, r);
      break;
    }
    int64_t at = o.v[r].i;
    if (filtered && at == ignored) continue;
    if (at < 0 || at >= z) {
      char msg[160];
      snprintf(msg, sizeof msg, "DMA offset %lld (row %lld) is outside [0, %lld) of the indexed ref (%s '%s')", (long long)at,
               (long long)r, (long long)z, space_key(iv->v->ref->space), iv->v->ref->name);
      ok = fault(R, s, op, FAULT_OOB, "%s%s", msg, "");
      break;
    }
    for (int64_t j = 0; ok && j < row; j++, k++)
      ok = pl->gather ? pend_pair(R, s, pd, k, sv, at * row + j, dv, r * row + j)
                      : pend_pair(R, s, pd, k, sv, r * row + j, dv, at * row + j);
  }
  pd->n = k;
  val_free(&o);
  return ok;
}

/* The value a destination element of type `to` holds after a copy of `c`
 * of type `from`.  Mosaic has no bool memrefs: a bool ref is an i32 memref
 * whose loads compare with zero (jax/_src/pallas/mosaic/lowering.py,
 * _maybe_cast_load_to_bool), so an int32 word copied into it reads as
 * (word != 0).  The other pairs the checker lets through (int32 and uint32)
 * keep their bits. */
static Cell dma_land(Dtype from, Dtype to, Cell c) {
  if (to == DT_BOOL && from != DT_BOOL) c.i = c.i != 0;
  return c;
}

static void apply_pending(Pending *pd) {
  if (pd->span) return ref_span_copy(pd->dst, &pd->ds, pd->src, &pd->ss, pd->dtype, pd->add);
  Dtype dt = pd->dst_dtype;
  for (int64_t i = 0; i < pd->n; i++) {
    Cell c, cur;
    uint8_t def, cdef;
    read_pieces(pd->src, pd->dtype, pd->sp + i * MAX_PIECES, pd->nsp[i], &c, &def);
    c = dma_land(pd->dtype, dt, c);
    if (pd->add) {
      read_pieces(pd->dst, dt, pd->dp + i * MAX_PIECES, pd->ndp[i], &cur, &cdef);
      alu_binary(OP_ADD, dt, dt, cur, c, &c);
      def = def && cdef;
    }
    if (def) write_pieces(pd->dst, dt, pd->dp + i * MAX_PIECES, pd->ndp[i], c);
    else { /* DMAs copy definedness (§9.1) */
      const Piece *p = pd->dp + i * MAX_PIECES;
      for (int k = 0; k < pd->ndp[i]; k++) mem_set_defined(pd->dst, p[k].off, p[k].n, false);
    }
  }
}

static bool sem_locate(Ref_ *R, Sub *s, const Op *op, const View *sv, int core, int subcore, Region **g, int64_t *off) {
  RV rv;
  Piece pc[MAX_PIECES];
  int np;
  if (!rv_resolve(R, s, op, sv, core, subcore, &rv)) return false;
  if (!rv_element(&rv, 0, pc, &np)) return view_oob(R, s, &rv);
  *g = rv.reg;
  *off = pc[0].off;
  return true;
}

static int64_t sem_get(Region *g, int64_t off) { return dtype_load(DT_INT32, g->bytes + off).i; }
static void sem_add(Region *g, int64_t off, int64_t d) {
  dtype_store(DT_INT32, (Cell){.i = sem_get(g, off) + d}, g->bytes + off);
}

/* Starts one copy; `sem` NULL for sync_copy (applied at once). */
static bool dma_start(Ref_ *R, Sub *s, const Op *op, const View *src, const View *dst, const DmaPlan *pl, bool add,
                      const View *sem) {
  const View *sv = pl->indirect && pl->gather ? pl->flat : src;
  const View *dv = pl->indirect && !pl->gather ? pl->flat : dst;
  RV srv, drv;
  if (!rv_resolve(R, s, op, sv, s->core, s->subcore, &srv) || !rv_resolve(R, s, op, dv, s->core, s->subcore, &drv)) return false;
  if (!sem && !pl->indirect && spans_pair(&srv, &drv)) /* a sync_copy of two spans: apply_pending's, without the record */
    return ref_span_copy(drv.reg, &drv.sp, srv.reg, &srv.sp, srv.dt[sv->ntr], add), true;
  Pending local, *pd = sem ? malloc(sizeof *pd) : &local; /* a sync_copy lands at once: no heap record */
  if (!pd) abort();
  memset(pd, 0, offsetof(Pending, ss)); /* the spans are read only once pend_span sets them */
  pd->op = op;
  pd->src = srv.reg;
  pd->dst = drv.reg;
  pd->dtype = srv.dt[sv->ntr];
  pd->dst_dtype = drv.dt[dv->ntr];
  pd->add = add;
  bool ok;
  if (pl->indirect) {
    ok = pend_indirect(R, s, op, pd, pl, &srv, &drv);
    pd->bytes = view_bytes(pl->gather ? &drv : &srv);
  } else {
    ok = pend_span(pd, &srv, &drv) || pend_alloc(pd, srv.n);
    for (int64_t i = 0; ok && !pd->span && i < srv.n; i++) ok = pend_pair(R, s, pd, i, &srv, i, &drv, i);
    pd->bytes = view_bytes(&drv);
  }
  if (ok && sem) ok = sem_locate(R, s, op, sem, s->core, s->subcore, &pd->sem, &pd->sem_off);
  if (!ok || !sem) {
    if (ok) apply_pending(pd);
    if (pd == &local) free(pd->sp), free(pd->dp), free(pd->nsp), free(pd->ndp);
    else pend_free(pd);
    return ok;
  }
  sem_add(pd->sem, pd->sem_off, pd->bytes);
  Pending **tail = &s->pending;
  while (*tail) tail = &(*tail)->next;
  *tail = pd;
  return true;
}

static int do_async_copy(Ref_ *R, Sub *s, const Op *op) {
  int64_t add = 0;
  if ((op->has & F(ADD)) && !ev_int(R, s, op, op->e[FLD_ADD], &add)) return ST_FAULT;
  return dma_start(R, s, op, op->e[FLD_SRC]->view, op->e[FLD_DST]->view, op->dma, add, op->e[FLD_SEM]->view) ? ST_OK : ST_FAULT;
}

static int do_sync_copy(Ref_ *R, Sub *s, const Op *op) {
  int64_t add = 0;
  if ((op->has & F(ADD)) && !ev_int(R, s, op, op->e[FLD_ADD], &add)) return ST_FAULT;
  int n = op->nlist[FLD_SRC] < 0 ? 1 : op->nlist[FLD_SRC];
  const DmaPlan *pl = op->dma;
  for (int i = 0; i < n; i++)
    if (!dma_start(R, s, op, op->views[FLD_SRC][i], op->views[FLD_DST][i], &pl[i], add, NULL)) return ST_FAULT;
  return ST_OK;
}

/* A wait consumes the bytes of its own views from its semaphore, then the
 * oldest pending copy it names (its descriptor, or its semaphore) lands. */
static int do_wait(Ref_ *R, Sub *s, const Op *op) {
  const View *src = op->view[FLD_SRC], *dst = op->view[FLD_DST], *sem = op->view[FLD_SEM];
  const DmaPlan *pl = op->dma;
  const View *sv = pl->indirect && pl->gather ? pl->flat : src;
  const View *dv = pl->indirect && !pl->gather ? pl->flat : dst;
  RV srv, drv;
  Region *g;
  int64_t off;
  if (!rv_resolve(R, s, op, sv, s->core, s->subcore, &srv) || !rv_resolve(R, s, op, dv, s->core, s->subcore, &drv) ||
      !sem_locate(R, s, op, sem, s->core, s->subcore, &g, &off))
    return ST_FAULT;
  int64_t need = pl->indirect ? view_bytes(pl->gather ? &drv : &srv) : view_bytes(&drv);
  if (sem_get(g, off) < need) return ST_BLOCKED;
  sem_add(g, off, -need);
  const Op *desc = NULL;
  if (op->wait_desc) {
    for (Pending *p = s->pending; p; p = p->next)
      if (p->op->name[FLD_OUT] && !strcmp(p->op->name[FLD_OUT], op->wait_desc) && p->sem == g && p->sem_off == off) {
        desc = p->op;
        break;
      }
  }
  for (Pending **pp = &s->pending; *pp; pp = &(*pp)->next) {
    Pending *p = *pp;
    if (p->sem != g || p->sem_off != off || (desc && p->op != desc)) continue;
    apply_pending(p);
    *pp = p->next;
    pend_free(p);
    break;
  }
  return ST_OK;
}

/* ---- cross-subcore primitives (SPEC §5.7) ------------------------------ */
static int target_of(Ref_ *R, Sub *s, const Op *op, FieldId f, int dflt, int limit, int *out) {
  int64_t v = dflt;
  if ((op->has & (1u << f)) && !ev_int(R, s, op, op->e[f], &v)) return ST_FAULT;
  if (v < 0 || v >= limit) {
    char msg[64];
    snprintf(msg, sizeof msg, "%lld", (long long)v);
    fault(R, s, op, FAULT_OOB, "target %s is outside the mesh (%s)", msg, field_key(f));
    return ST_FAULT;
  }
  *out = (int)v;
  return ST_OK;
}

static int do_semaphore(Ref_ *R, Sub *s, const Op *op) {
  int core = s->core, sub = s->subcore;
  int64_t amount = 1;
  Region *g;
  int64_t off;
  if (op->kind == OPK_SEMAPHORE_SIGNAL) {
    if (target_of(R, s, op, FLD_CORE, s->core, (int)R->p->mesh_cores, &core) != ST_OK ||
        target_of(R, s, op, FLD_SUBCORE, s->subcore, (int)R->p->mesh_subcores, &sub) != ST_OK)
      return ST_FAULT;
    if ((op->has & F(INC)) && !ev_int(R, s, op, op->e[FLD_INC], &amount)) return ST_FAULT;
  } else if ((op->has & F(VALUE)) && !ev_int(R, s, op, op->e[FLD_VALUE], &amount)) {
    return ST_FAULT;
  }
  if (!sem_locate(R, s, op, op->e[FLD_SEM]->view, core, sub, &g, &off)) return ST_FAULT;
  if (op->kind == OPK_SEMAPHORE_SIGNAL) {
    if (!run_sem_signal_fits(R->r, ((const View *)op->e[FLD_SEM]->view)->ref, g, sem_get(g, off), amount,
                             op->loc, s->core, s->subcore, op->id))
      return ST_FAULT;
    sem_add(g, off, amount);
    return ST_OK;
  }
  if (sem_get(g, off) < amount) return ST_BLOCKED;
  sem_add(g, off, -amount);
  return ST_OK;
}

static int do_fetch_and_add(Ref_ *R, Sub *s, const Op *op) {
  /* atomics whose order is free replay the engine's order (SPEC §9.10) */
  int who = -1, known = R->st ? stream_atomic(R->st, R->next_atomic, &who) : R->next_atomic < R->natomics;
  if (!R->st && known) who = R->atomics[R->next_atomic];
  if (known == 0 && R->st) return R->waits = true, ST_BLOCKED; /* the engine has not run it yet */
  if (known == 1 && who != s->idx) return ST_BLOCKED;
  int target;
  if (target_of(R, s, op, FLD_SUBCORE, 0, (int)R->p->mesh_subcores, &target) != ST_OK) return ST_FAULT;
  RV rv;
  Value x = {0}, old = {0};
  bool ok = rv_resolve(R, s, op, op->e[FLD_REF]->view, s->core, target, &rv) && ev(R, s, op, op->e[FLD_VALUE], &x) &&
            view_read(R, s, &rv, &old);
  if (ok) { /* an undefined operand leaves the sum undefined (SPEC §10.1) */
    Cell c = {0};
    bool def = old.def[0] && x.def[0];
    if (def) alu_binary(OP_ADD, DT_INT32, DT_INT32, old.v[0], alu_convert(x.dtype, DT_INT32, x.v[0]), &c);
    ok = view_write_lane(R, s, &rv, 0, c, def);
    run_log(R->r, s->idx, op->id, EV_OLD, &old);
    env_set(R, s, op->name[FLD_OUT], &old);
    if (known == 1) R->next_atomic++;
  }
  val_free(&x);
  val_free(&old);
  return ok ? ST_OK : ST_FAULT;
}

/* All vector subcores of the core arrive, then all leave. */
static int do_barrier(Ref_ *R, Sub *s) {
  if (!s->at_barrier) {
    s->at_barrier = true;
    s->barrier_gen++;
    R->arrived[s->core]++;
  }
  int first = run_mesh_first(R->p, s->subcore), total = run_mesh_count(R->p, s->subcore), passed = 0; /* its mesh only */
  for (int i = 0; i < R->nsub; i++) {
    Sub *o = &R->subs[i];
    if (o->core == s->core && o->subcore >= first && o->subcore < first + total && o->barrier_gen >= s->barrier_gen) passed++;
  }
  if (passed < total) return ST_BLOCKED;
  s->at_barrier = false;
  return ST_OK;
}

/* ---- expect ------------------------------------------------------------ */
static int do_expect(Ref_ *R, Sub *s, const Op *op) {
  Value a = {0}, e = {0};
  bool ok;
  if (op->has & F(REF)) {
    RV rv;
    ok = resolve_field(R, s, op, FLD_REF, &rv) && view_read(R, s, &rv, &a);
  } else {
    ok = ev(R, s, op, op->e[FLD_VALUE], &a);
  }
  ok = ok && ev(R, s, op, op->e[FLD_EQUALS], &e);
  for (int64_t i = 0; ok && i < a.n; i++) {
    int64_t ie = val_lane(&e, i);
    RunElement at = {0};
    char where[120], got[64], exp[64], msg[300];
    run_element(&at, a.rank, a.shape, i);
    run_element_text(&at, where, sizeof where);
    if (!a.def[i] || !e.def[ie]) {
      snprintf(msg, sizeof msg, "expect checks %s, which is undefined", where);
      ok = fault(R, s, op, FAULT_UNINIT, "%s%s", msg, "");
      break;
    }
    Cell want = alu_convert(e.dtype, a.dtype, e.v[ie]);
    if (!alu_equal(a.dtype, a.v[i], want)) {
      dtype_format(a.dtype, a.v[i], got, sizeof got);
      dtype_format(a.dtype, want, exp, sizeof exp);
      snprintf(msg, sizeof msg, "%s is %s, expected %s", where, got, exp);
      ok = fault(R, s, op, FAULT_EXPECT, "%s%s", msg, "");
    }
  }
  val_free(&a);
  val_free(&e);
  return ok ? ST_OK : ST_FAULT;
}

/* ---- pl.debug_print, pl.debug_check ------------------------------------ */
static int do_debug_print(Ref_ *R, Sub *s, const Op *op) {
  const Expr *arg = op->nlist[FLD_ARGS] > 0 ? op->list[FLD_ARGS][0] : NULL;
  Value v = {0};
  bool ok = true;
  if (arg && arg->is_ref) {
    RV rv;
    ok = rv_resolve(R, s, op, (const View *)arg->view, s->core, s->subcore, &rv) && view_read(R, s, &rv, &v);
  } else if (arg) {
    Value raw = {0};
    ok = ev(R, s, op, arg, &raw);
    if (ok) { /* a weak literal prints in the dtype the checker gave it */
      val_shape(&v, arg->ty, raw.rank, raw.shape);
      for (int64_t i = 0; i < raw.n; i++) v.v[i] = alu_convert(raw.dtype, arg->ty, raw.v[i]), v.def[i] = raw.def[i];
    }
    val_free(&raw);
  }
  if (ok) {
    run_print(R->r, s->core, s->subcore, op->name[FLD_MESSAGE], arg ? &v : NULL);
    if (arg) run_log(R->r, s->idx, op->id, EV_LOADED, &v);
  }
  val_free(&v);
  return ok ? ST_OK : ST_FAULT;
}

static int do_debug_check(Ref_ *R, Sub *s, const Op *op) {
  Value c = {0};
  bool ok = ev(R, s, op, op->e[FLD_COND], &c);
  if (ok && !c.def[0]) ok = fault(R, s, op, FAULT_UNINIT, "the condition of debug_check is undefined%s%s", "", "");
  else if (ok && !c.v[0].i) ok = fault(R, s, op, FAULT_CHECK, "%.500s%s", op->name[FLD_MESSAGE], "");
  val_free(&c);
  return ok ? ST_OK : ST_FAULT;
}

/* ---- control flow and the scheduler ------------------------------------ */
static bool traced_only(const Op *op);
static XOp *body_x_build(const Body *b) {
  XOp *x = calloc((size_t)b->n + 1, sizeof *x);
  if (!x) abort();
  for (int i = 0; i < b->n; i++) x[i].op = b->ops[i], x[i].kind = b->ops[i]->kind, x[i].counts = !traced_only(b->ops[i]);
  return x;
}

/* b's XOps, built on its first push. */
static XOp *body_x(Ref_ *R, const Body *b) {
  if (2 * (R->nbx + 1) > R->capbx) {
    BodyX *old = R->bx;
    int oc = R->capbx;
    R->capbx = oc ? 2 * oc : 64;
    if (!(R->bx = calloc((size_t)R->capbx, sizeof *R->bx))) abort();
    for (int i = 0; i < oc; i++)
      if (old[i].b) {
        size_t j = ((uintptr_t)old[i].b >> 4) & (size_t)(R->capbx - 1);
        while (R->bx[j].b) j = (j + 1) & (size_t)(R->capbx - 1);
        R->bx[j] = old[i];
      }
    free(old);
  }
  size_t j = ((uintptr_t)b >> 4) & (size_t)(R->capbx - 1);
  while (R->bx[j].b && R->bx[j].b != b) j = (j + 1) & (size_t)(R->capbx - 1);
  if (!R->bx[j].b) R->bx[j] = (BodyX){b, body_x_build(b)}, R->nbx++;
  return R->bx[j].x;
}

static int push(Ref_ *R, Sub *s, const Op *op, const Body *b) {
  if (s->depth >= MAX_FRAMES) return fault(R, s, op, FAULT_LIMIT, "bodies nest too deeply%s%s", "", ""), ST_FAULT;
  Frame *f = &s->fr[s->depth++];
  memset(f, 0, sizeof *f);
  f->body = b;
  f->x = body_x(R, b), f->n = b->n;
  return ST_OK;
}

/* Binds a loop's carries to vals (initial or next values): all are
 * evaluated before any is bound, so a next value reads the carries' old
 * values; a weakly typed initial value the checker promoted is converted
 * to the carry's dtype (as astype would). */
static bool set_carries(Ref_ *R, Sub *s, const Op *op, Expr *const *vals, bool init) {
  Value *v = calloc((size_t)op->ncarry + 1, sizeof *v);
  if (!v) abort();
  bool ok = true;
  for (int k = 0; k < op->ncarry && ok; k++) {
    ok = ev(R, s, op, vals[k], &v[k]);
    Dtype t = op->carry_ty[k];
    if (!ok || !init || vals[k]->ty == t) continue;
    Value c = {0};
    val_shape(&c, t, v[k].rank, v[k].shape);
    for (int64_t i = 0; i < c.n; i++) c.v[i] = alu_convert(v[k].dtype, t, v[k].v[i]), c.def[i] = v[k].def[i];
    val_free(&v[k]);
    v[k] = c;
  }
  for (int k = 0; k < op->ncarry && ok; k++) env_set(R, s, op->carry[k], &v[k]);
  for (int k = 0; k < op->ncarry; k++) val_free(&v[k]);
  free(v);
  return ok;
}

/* The bounds are computed, then the carries' initial values, and only
 * then are the bounds tested defined, in the lowering's order. */
static int do_loop(Ref_ *R, Sub *s, const Op *op) {
  int64_t b[3] = {0, 0, 1};
  Value bv[3] = {{0}};
  int nb = op->nlist[FLD_RANGE];
  bool ok = true;
  for (int i = 0; i < nb && ok; i++) ok = ev(R, s, op, op->list[FLD_RANGE][i], &bv[i]);
  if (ok && op->ncarry) ok = set_carries(R, s, op, op->list[FLD_CARRY], true);
  for (int i = 0; i < nb && ok; i++) {
    if (!bv[i].def[0]) ok = fault(R, s, op, FAULT_UNINIT, "'%s' is undefined where a defined scalar is needed%s", op->list[FLD_RANGE][i]->text ? op->list[FLD_RANGE][i]->text : "a loop bound", "");
    else b[i] = dtype_is_float(bv[i].dtype) ? (int64_t)bv[i].v[0].f : bv[i].v[0].i;
  }
  for (int i = 0; i < nb; i++) val_free(&bv[i]);
  if (!ok) return ST_FAULT;
  int64_t lo = b[0], hi = b[1], step = b[2];
  if (step == 0) return fault(R, s, op, FAULT_LIMIT, "loop step is zero%s%s", "", ""), ST_FAULT;
  if (step > 0 ? lo >= hi : lo <= hi) return ST_OK;
  if (push(R, s, op, &op->body) != ST_OK) return ST_FAULT;
  Frame *f = &s->fr[s->depth - 1];
  f->loop = op;
  f->carried = op->ncarry > 0;
  f->i = lo;
  f->hi = hi;
  f->step = step;
  f->var = op->name[FLD_VAR] ? env_slot(R, s, op->name[FLD_VAR]) : NULL;
  set_int32(f->var, lo);
  return ST_OK;
}

/* while: the carries, then the condition before every iteration. */
static int do_while(Ref_ *R, Sub *s, const Op *op) {
  int64_t go;
  if (!set_carries(R, s, op, op->list[FLD_CARRY], true) || !ev_int(R, s, op, op->e[FLD_COND], &go)) return ST_FAULT;
  if (!go) return ST_OK;
  if (push(R, s, op, &op->body) != ST_OK) return ST_FAULT;
  s->fr[s->depth - 1].loop = op;
  s->fr[s->depth - 1].carried = true;
  return ST_OK;
}

/* The end of an iteration of a loop with carries or of a while: the next
 * values, then the test.  A while's iteration counts as an operation, so
 * that an endless while meets --max-ops (the engine counts its back edge);
 * a loop's does not, as for a loop without carries.  Returns ST_OK
 * (continue or leave) or ST_FAULT. */
static int next_iteration(Ref_ *R, Sub *s, Frame *f) {
  const Op *op = f->loop;
  int64_t next, go;
  R->r->ops += op->kind == OPK_WHILE;
  if (!set_carries(R, s, op, op->list[FLD_NEXT], false)) return ST_FAULT;
  if (op->kind == OPK_WHILE) {
    if (!ev_int(R, s, op, op->e[FLD_COND], &go)) return ST_FAULT;
  } else {
    go = !__builtin_add_overflow(f->i, f->step, &next) && (f->step > 0 ? next < f->hi : next > f->hi);
    if (go) {
      f->i = next;
      set_int32(f->var, f->i);
    }
  }
  if (go) f->pc = 0;
  else s->depth--;
  return ST_OK;
}

static int do_when(Ref_ *R, Sub *s, const Op *op) {
  const Expr *c = op->e[FLD_COND];
  int64_t v;
  if (c->kind == EX_BOOL) v = c->ival;
  else if (!ev_int(R, s, op, c, &v)) return ST_FAULT;
  const Body *b = v ? &op->body : &op->els;
  return b->n ? push(R, s, op, b) : ST_OK;
}

/* lax.sort([k, v1, ...]): the list's items bound as the let's names. */
static bool do_sort_operands(Ref_ *R, Sub *s, const Op *op, const Expr *e, Value *list, Value *unused) {
  const Expr *le = e->args[0];
  Value x[3] = {{0}}, out[3] = {{0}};
  bool ok = true;
  for (int i = 0; ok && i < le->nargs && i < 3; i++) ok = ev(R, s, op, le->args[i], &x[i]);
  if (ok) ref_sort_operands(x, le->nargs, out);
  for (int i = 0; ok && i < op->ncarry && i < 3; i++) env_set(R, s, op->carry[i], &out[i]);
  for (int i = 0; i < 3; i++) val_free(&x[i]), val_free(&out[i]);
  val_free(list), val_free(unused);
  return ok;
}

/* let: {name: "k, v", value: plsc.sort_key_val(keys, values, ...)},
 * plsc.scan_count(x, mask=m) or plsc.unpack(ab, format=f). */
static int do_tuple_let(Ref_ *R, Sub *s, const Op *op) {
  const Expr *e = op->e[FLD_VALUE], *me = scanop_arg(e, -1, "mask"), *de = scanop_arg(e, -1, "descending");
  bool count = e->builtin == BI_SCAN_COUNT || e->builtin == BI_UNPACK || e->builtin == BI_SORT;
  Value k = {0}, v = {0}, m = {0}, d = {0}, out[3] = {{0}};
  bool ok = ev(R, s, op, scanop_arg(e, 0, NULL), &k) && (count || ev(R, s, op, scanop_arg(e, 1, NULL), &v)) &&
            (!me || ev(R, s, op, me, &m)) && (!de || ev(R, s, op, de, &d));
  if (ok && e->builtin == BI_SORT) return do_sort_operands(R, s, op, e, &k, &d) ? ST_OK : ST_FAULT;
  if (ok && e->builtin == BI_UNPACK) ref_unpack(&k, e->dtype, out);
  else if (ok && count) ref_scan_count(&k, me ? &m : NULL, out);
  else if (ok) ref_sort_key_val(&k, &v, me ? &m : NULL, de && d.v[0].i != 0, out);
  for (int i = 0; ok && i < op->ncarry; i++) env_set(R, s, op->carry[i], &out[i]);
  val_free(&k), val_free(&v), val_free(&m), val_free(&d);
  for (int i = 0; i < 3; i++) val_free(&out[i]);
  return ok ? ST_OK : ST_FAULT;
}

static int do_let(Ref_ *R, Sub *s, const Op *op) {
  if (op->ncarry) return do_tuple_let(R, s, op);
  if (op->e[FLD_VALUE]->is_ref) return ST_OK; /* a view alias: uses carry their own views */
  EvCtx c = {R, s, op};
  RefProg *p = prog_of(R, op->e[FLD_VALUE]);
  const Value *v = ref_prog_eval(p, &HOOKS, &c);
  if (!v) return ST_FAULT;
  if (!op->name[FLD_NAME] || !ref_prog_take(p, v, env_slot(R, s, op->name[FLD_NAME]))) /* the lanes without a copy */
    env_set(R, s, op->name[FLD_NAME], v);
  return ST_OK;
}

/* Any operation but the accesses exec_op runs itself. */
static inline int exec_any(Ref_ *R, Sub *s, const Op *op) {
  switch (op->kind) {
  case OPK_GET:
  case OPK_SET:
  case OPK_SWAP:
  case OPK_ADDUPDATE: break; /* exec_op's */
  case OPK_LOAD_EXPANDED:
  case OPK_STORE_COMPRESSED:
  case OPK_ADDUPDATE_COMPRESSED: return do_expand_compress(R, s, op) ? ST_OK : ST_FAULT;
  case OPK_LOAD_GATHER:
  case OPK_STORE_SCATTER:
  case OPK_ADDUPDATE_SCATTER: return do_gather_scatter(R, s, op) ? ST_OK : ST_FAULT;
  case OPK_ASYNC_COPY: return do_async_copy(R, s, op);
  case OPK_WAIT: return do_wait(R, s, op);
  case OPK_SYNC_COPY: return do_sync_copy(R, s, op);
  case OPK_SEMAPHORE_SIGNAL:
  case OPK_SEMAPHORE_WAIT: return do_semaphore(R, s, op);
  case OPK_FETCH_AND_ADD: return do_fetch_and_add(R, s, op);
  case OPK_BARRIER: return do_barrier(R, s);
  case OPK_LET: return do_let(R, s, op);
  case OPK_LOOP: return do_loop(R, s, op);
  case OPK_WHILE: return do_while(R, s, op);
  case OPK_WHEN: return do_when(R, s, op);
  case OPK_EXPECT: return do_expect(R, s, op);
  case OPK_DEBUG_PRINT: return do_debug_print(R, s, op);
  case OPK_DEBUG_CHECK: return do_debug_check(R, s, op);
  case OPK_UPDATE: case OPK_CALL: /* expanded by the loader (sim/front/load_sugar.c) */
  case OPK_UNIMPLEMENTED: /* rejected by the checker (U1) */
  case OPK_COUNT: break;
  }
  return ST_FAULT;
}

/* The commonest operations as tests ahead of exec_any's switch, whose
 * jump waits for its table's load. */
static inline int exec_op(Ref_ *R, Sub *s, XOp *x) {
  OpKind k = x->kind;
  const Op *op = x->op;
  if (k == OPK_GET) return do_get(R, s, op, x_plan(R, x)) ? ST_OK : ST_FAULT;
  if (k == OPK_SET || k == OPK_SWAP || k == OPK_ADDUPDATE) return do_swap(R, s, op, x_plan(R, x)) ? ST_OK : ST_FAULT;
  return exec_any(R, s, op);
}

/* Whether op is decided when the kernel is traced, so that the kernel does
 * not execute it: a `when` on a literal (a Python `if`) and a `let` that
 * names a view.  --max-ops counts the operations the kernel executes, as the
 * engine counts them in the lowered code. */
static bool traced_only(const Op *op) {
  return (op->kind == OPK_WHEN && op->e[FLD_COND]->kind == EX_BOOL) || (op->kind == OPK_LET && op->e[FLD_VALUE]->is_ref);
}

/* A loop frame without carries whose body ended: its next iteration
 * (true), or false when the loop ends (settle pops it). */
static inline bool loop_next(Frame *f) {
  int64_t next;
  if (!f->loop || f->carried || __builtin_add_overflow(f->i, f->step, &next) || !(f->step > 0 ? next < f->hi : next > f->hi))
    return false;
  f->i = next;
  set_int32(f->var, next);
  return true;
}

/* The ends of s's bodies, until an operation is next: ST_READY, or the
 * status of the step taken instead (a carried iteration's end, or s done). */
enum { ST_READY = 3 };
static int settle(Ref_ *R, Sub *s) {
  while (s->depth) {
    Frame *f = &s->fr[s->depth - 1];
    if (f->pc < f->n) return ST_READY;
    if (f->carried) return next_iteration(R, s, f);
    if (loop_next(f)) f->pc = 0;
    else s->depth--;
  }
  s->done = true;
  return ST_OK;
}

/* The log bytes after which run_ops leaves to schedule's tests: it goes on
 * while log_bytes - *lo < *span, which holds only where the log limit
 * and, when streaming, the stream's test (slack past asked) pass.  Leaving
 * early is safe: schedule then makes its tests itself. */
static void log_window(const Ref_ *R, uint64_t asked, uint64_t slack, uint64_t *lo, uint64_t *span) {
  uint64_t room = R->max_log == UINT64_MAX ? UINT64_MAX : R->max_log + 1; /* log_bytes below it: within the limit */
  *lo = R->st ? asked : 0;
  *span = !R->st ? room : asked < room ? (slack < room - asked ? slack : room - asked) : 0;
}

/* One step of s (an operation, or what settle did instead), then more
 * operations of the same frame while none of schedule's tests between
 * operations is due (a fault, a run limit, the stream's test, a frame
 * pushed or popped): the frame's pc and operations, the operation count
 * and a loop's variable stay in registers, and a loop's next iteration is
 * taken in place.  Returns the last step's status, for schedule's tests
 * after it. */
static int run_ops(Ref_ *R, Sub *s, uint64_t asked, uint64_t slack) {
  int st = settle(R, s);
  if (st != ST_READY) return st;
  int depth = s->depth;
  Frame *f = &s->fr[depth - 1];
  XOp *xs = f->x;
  int pc = f->pc, n = f->n;
  RunResult *r = R->r;
  uint64_t count = r->ops, max_ops = R->max_ops, lo, span; /* count <= max_ops: schedule tested it */
  log_window(R, asked, slack, &lo, &span);
  bool iter = f->loop && !f->carried;
  int64_t i = f->i, hi = f->hi, by = f->step, next;
  for (bool first = true;; first = false) {
    XOp *x = &xs[pc];
    st = exec_op(R, s, x);
    if (st != ST_OK) {
      R->progress |= st == ST_BLOCKED && !first; /* an earlier operation went on: schedule's break skips its own */
      break;
    }
    pc++;
    count += x->counts;
    if (r->faulted || count > max_ops || r->log_bytes - lo >= span || s->depth != depth) break;
    if (pc < n) continue;
    /* the body's end, after the tests as settle's: loop_next */
    if (!iter || __builtin_add_overflow(i, by, &next) || !(by > 0 ? next < hi : next > hi)) break;
    i = next;
    set_int32(f->var, i);
    pc = 0;
  }
  r->ops = count;
  f->pc = pc, f->i = i; /* f stays valid: pushes only add frames above it */
  return st;
}

static void deadlock(Ref_ *R) {
  char buf[700] = "";
  size_t len = 0;
  Sub *first = NULL;
  for (int i = 0; i < R->nsub && len < sizeof buf - 100; i++) {
    Sub *s = &R->subs[i];
    if (s->done) continue;
    const Frame *f = &s->fr[s->depth - 1];
    const Op *op = f->body->ops[f->pc];
    if (!first) first = s;
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%ssubcore %d.%d waits at line %d (%s)", len ? "; " : "", s->core,
                            s->subcore, op->loc.line, op_key(op->kind));
  }
  const Op *op = first->fr[first->depth - 1].body->ops[first->fr[first->depth - 1].pc];
  run_fault(R->r, FAULT_DEADLOCK, op->loc, first->core, first->subcore, op->id, "no subcore can make progress: %s", buf);
}

/* At the end every semaphore must be back at zero (SPEC §7.5). */
static void check_semaphores(Ref_ *R) {
  for (int r = 0; r < R->p->nrefs && !R->r->faulted; r++) {
    const Ref *ref = R->p->refs[r];
    if (ref->space != SP_SEMAPHORE) continue;
    for (int i = 0; i < mem_instance_count(&R->r->mem, r); i++) {
      Region *g = mem_instance(&R->r->mem, r, i);
      for (int64_t k = 0; k < ref->nelems; k++) {
        int64_t v = sem_get(g, k * 4);
        if (v)
          run_fault(R->r, FAULT_SEMAPHORE, ref->loc, g->core, g->subcore, -1,
                    "semaphore '%s@%d.%d' element %lld holds %lld at the end of the %s (a DMA or signal was never waited)",
                    ref->name, g->core, g->subcore, (long long)k, (long long)v, run_sem_scope(R->lim));
      }
    }
  }
}

/* A kernel followed by another: the copies still in flight land when it
 * ends (the DMA engine finishes them), in the order each subcore started
 * them; their semaphores keep their counts for the next kernel's waits. */
static void land_pending(Ref_ *R) {
  for (int i = 0; i < R->nsub; i++)
    for (Pending *pd = R->subs[i].pending; pd; pd = pd->next) apply_pending(pd);
}

/* The operation a subcore is at (a loop between iterations: the loop). */
static Loc where(const Sub *s) {
  for (int k = s->depth - 1; k >= 0; k--) {
    const Frame *f = &s->fr[k];
    if (f->pc < f->body->n) return f->body->ops[f->pc]->loc;
    if (f->loop) return f->loop->loc;
  }
  return (Loc){NULL, 0, 0};
}

/* A run limit: where every subcore stands, so a hang can be located. */
static void limit(Ref_ *R, Sub *s, const char *what, uint64_t n) {
  char buf[700];
  size_t len = (size_t)snprintf(buf, sizeof buf, what, (unsigned long long)n);
  for (int i = 0; i < R->nsub && len < sizeof buf - 80; i++) {
    const Sub *o = &R->subs[i];
    Loc at = where(o);
    if (at.line)
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s subcore %d.%d at line %d", i ? ";" : ":", o->core, o->subcore, at.line);
    else
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s subcore %d.%d %s", i ? ";" : ":", o->core, o->subcore, o->done ? "done" : "between operations");
  }
  Loc at = where(s);
  if (!at.line) at = (Loc){R->p->file, 0, 0};
  run_fault(R->r, FAULT_LIMIT, at, s->core, s->subcore, -1, "%s", buf);
}

/* The subcores take turns, each running until it blocks.  While streaming
 * (target >= 0: the engine still runs) a subcore also yields when it is
 * STREAM_AHEAD events ahead of the engine, and the call returns after a
 * turn that leaves target's queue without an engine event, or when no
 * subcore can go on before the engine does. */
static void schedule(Ref_ *R, int target) {
  for (;;) {
    for (; R->rr < R->nsub && !R->r->faulted; R->rr++) {
      Sub *s = &R->subs[R->rr];
      uint64_t asked = 0, slack = 0; /* log_bytes when stream_ahead last said no, and stream_slack then */
      while (!s->done && !R->r->faulted) {
        /* s gets ahead only by queueing events, which raise the log bytes (the
         * engine, which lowers them, does not run during a turn): asked again past the slack */
        if (R->st && R->r->log_bytes - asked >= slack) {
          if (stream_ahead(R->st, STREAM_REF, s->idx)) {
            R->waits = true;
            break;
          }
          asked = R->r->log_bytes, slack = stream_slack(R->st, STREAM_REF, s->idx);
        }
        int st = run_ops(R, s, asked, slack);
        if (st == ST_BLOCKED) break;
        R->progress = true;
        if (R->r->ops > R->max_ops) limit(R, s, "the run executed more than %llu operations (--max-ops)", R->max_ops);
        else if (R->r->log_bytes > R->max_log) limit(R, s, RUN_LOG_LIMIT_MSG, R->max_log >> 20);
      }
      R->all_done &= s->done;
      if (target >= 0 && !stream_queued(R->st, STREAM_ENG, target)) {
        R->rr++;
        return;
      }
    }
    if (R->r->faulted || R->all_done) return;
    bool progress = R->progress, waits = R->waits;
    R->rr = 0, R->progress = false, R->all_done = true, R->waits = false;
    if (!progress && waits && target >= 0) return;
    if (!progress && !waits) return deadlock(R);
  }
}

struct RefRun *reference_open(const Program *p, const RunLimits *lim, RunResult *out) {
  memset(out, 0, sizeof *out);
  Ref_ *R = calloc(1, sizeof *R);
  if (!R) abort();
  R->p = p, R->r = out;
  R->max_ops = lim && lim->max_ops ? lim->max_ops : RUN_DEFAULT_MAX_OPS;
  R->atomics = lim ? lim->atomics : NULL, R->natomics = lim ? lim->natomics : 0;
  R->max_log = run_max_log_bytes(lim);
  R->st = lim ? lim->stream : NULL;
  R->lim = lim;
  R->all_done = true;
  R->nsub = (int)(p->mesh_cores * p->mesh_subcores);
  out->nsub = R->nsub;
  if (R->st) stream_attach(R->st, STREAM_REF, out);
  out->logs = calloc((size_t)R->nsub, sizeof *out->logs);
  R->subs = calloc((size_t)R->nsub, sizeof *R->subs);
  R->arrived = calloc((size_t)p->mesh_cores, sizeof(int));
  if (!out->logs || !R->subs || !R->arrived || !run_mem_init(p, &out->mem)) {
    run_fault(out, FAULT_LIMIT, (Loc){p->file, 0, 0}, 0, 0, -1, "out of memory for the program's refs");
  } else if (lim && lim->carry && !run_carry(p, lim->carry, lim, out)) {
  } else {
    for (int i = 0; i < R->nsub; i++) {
      Sub *s = &R->subs[i];
      s->idx = i;
      s->core = i / (int)p->mesh_subcores;
      s->subcore = i % (int)p->mesh_subcores;
      push(R, s, NULL, run_body_of(p, s->subcore)); /* an mpmd kernel: the scalar subcore's own body */
    }
  }
  return (struct RefRun *)R;
}

void reference_pump(struct RefRun *run, int sub) {
  Ref_ *R = (Ref_ *)run;
  if (!R->r->faulted && R->subs && R->arrived) schedule(R, sub);
}

bool reference_close(struct RefRun *run) {
  Ref_ *R = (Ref_ *)run;
  RunResult *out = R->r;
  if (!out->faulted) {
    schedule(R, -1);
    bool defer = R->lim && R->lim->defer_sem_check; /* a kernel that another follows */
    if (!out->faulted && !defer) check_semaphores(R);
    if (!out->faulted && defer) land_pending(R);
  }
  for (int i = 0; i < R->nsub && R->subs; i++) {
    for (int k = 0; k < R->subs[i].capenv; k++)
      if (R->subs[i].env[k]) val_free(&R->subs[i].env[k]->v), free(R->subs[i].env[k]);
    free(R->subs[i].env);
    for (Pending *pd = R->subs[i].pending, *nx; pd; pd = nx) {
      nx = pd->next;
      pend_free(pd);
    }
  }
  free(R->subs);
  free(R->arrived);
  for (int i = 0; i < NCACHE; i++) free(R->cache[i].pc), free(R->cache[i].first);
  for (int i = 0; i < R->npool; i++) val_free(&R->pool[i]);
  for (int i = 0; i < SCR_COUNT; i++) val_free(&R->scratch[i]);
  ref_progs_free(R->progs);
  for (int i = 0; i < R->capplans; i++) free(R->plans[i]);
  free(R->plans);
  for (int i = 0; i < R->capbx; i++) free(R->bx[i].x);
  free(R->bx);
  names_free(&R->names);
  free(R);
  return !out->faulted;
}

bool reference_run(const Program *p, const RunLimits *lim, RunResult *out) {
  return reference_close(reference_open(p, lim, out));
}
