/* sim/verify.c -- comparisons of runs and expectations. */
#include "verify.h"
#include "../../lowering/expr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const Op *find_op(const Body *b, int id) {
  for (int i = 0; i < b->n; i++) {
    const Op *op = b->ops[i];
    if (op->id == id) return op;
    const Op *r = find_op(&op->body, id);
    if (!r) r = find_op(&op->els, id);
    if (r) return r;
  }
  return NULL;
}

/* An operation of p; an mpmd kernel's scalar subcore runs a body of its own. */
static const Op *prog_op(const Program *p, int id) {
  const Op *op = find_op(&p->body, id);
  return op || !p->mpmd_vsubs ? op : find_op(&p->mpmd[1].body, id);
}


void verify_fault_diag(const RunResult *r, Diag *d) {
  if (r->fault.kind == FAULT_EXPECT) diag_set(d, D_RUN_EXPECT, r->fault.loc, r->fault.details);
  else diag_set(d, D_RUN_FAULT, r->fault.loc, fault_name(r->fault.kind), r->fault.details);
  diag_note(d, "on subcore %d.%d", r->fault.core, r->fault.subcore);
  const Loc *o = &r->fault.origin;
  if (o->line) diag_note(d, "the undefined value came from %s at %s:%d:%d", r->fault.origin_what, o->file ? o->file : "?", o->line, o->col);
}

static void cell_text(Dtype t, Cell c, bool def, char *buf, size_t n) {
  if (!def) snprintf(buf, n, "undefined");
  else dtype_format(t, c, buf, n);
}

static const char *kind_text(EventKind k) {
  return k == EV_LOADED ? "loaded value" : k == EV_OLD ? "old value" : "memory after the store";
}

/* The first difference as data: a is the reference's, b the lowering's. */
static void first_event(const Program *p, int sub, const Op *op, const Event *a, const Event *b, int64_t lane, VerifyFirst *f) {
  f->set = true;
  snprintf(f->what, sizeof f->what, "%s of '%s'", kind_text(a->kind), op ? op_key(op->kind) : "?");
  f->core = sub / (int)p->mesh_subcores, f->subcore = sub % (int)p->mesh_subcores;
  if (lane < 0) return;
  run_element(&f->at, a->val.rank, a->val.shape, lane);
  cell_text(b->val.dtype, b->val.v[lane], b->val.def[lane], f->at.got, sizeof f->at.got);
  cell_text(a->val.dtype, a->val.v[lane], a->val.def[lane], f->at.wanted, sizeof f->at.wanted);
}

static bool mismatch_event(const Program *p, int sub, const Event *a, const Event *b, int64_t lane, Diag *d, VerifyFirst *f) {
  const Op *op = prog_op(p, a->op);
  char ra[64], rb[64], msg[700];
  first_event(p, sub, op, a, b, lane, f);
  if (lane < 0) {
    snprintf(msg, sizeof msg, "the lowering's %s of '%s' differs in shape from the reference on subcore %d.%d",
             kind_text(a->kind), op ? op_key(op->kind) : "?", sub / (int)p->mesh_subcores, sub % (int)p->mesh_subcores);
  } else {
    cell_text(a->val.dtype, a->val.v[lane], a->val.def[lane], ra, sizeof ra);
    cell_text(b->val.dtype, b->val.v[lane], b->val.def[lane], rb, sizeof rb);
    snprintf(msg, sizeof msg, "%s of '%s' on subcore %d.%d, lane %lld: reference %s, lowering %s", kind_text(a->kind),
             op ? op_key(op->kind) : "?", sub / (int)p->mesh_subcores, sub % (int)p->mesh_subcores, (long long)lane, ra, rb);
  }
  diag_set(d, D_RUN_MISMATCH, op ? op->loc : (Loc){p->file, 0, 0}, msg);
  return false;
}

static void keep(VerifyStats *st, int line, const char *what, int sub, const char *where, const char *a, const char *b) {
  if (!st->list || st->nlist >= st->max_list) return;
  snprintf(st->list[st->nlist++], sizeof st->list[0], "%5d  %-22s  %3d  %-16s  %-14s  %-14s", line, what, sub, where, a, b);
}

static bool integral(Dtype t) { return dtype_kind(t) == DK_INT || dtype_kind(t) == DK_UINT; }

/* The lowering's lane y equals the reference's x when it is the same
 * number.  Integers of two integer dtypes compare as they are, since
 * converting would wrap (int8 -1 would pass for uint8 255, and a load that
 * sign-extends would go unseen); anything else is converted to x's dtype. */
static bool same_lane(Dtype xt, Cell x, Dtype yt, Cell y) {
  if (xt != yt && integral(xt) && integral(yt)) return x.i == y.i;
  return alu_equal(xt, x, alu_convert(yt, xt, y));
}

/* Whether the first n cells and flags of x and y are bitwise equal: a
 * scalar inline, the 16 flags of the common vector as two words (a libc
 * call costs more than they) and its cells by memcmp (vectorised). */
static bool same_bits(const Cell *a, const Cell *b, const uint8_t *da, const uint8_t *db, int64_t n) {
  if (n == 1) return a[0].i == b[0].i && da[0] == db[0];
  if (n != 16) return !memcmp(da, db, (size_t)n) && !memcmp(a, b, sizeof *a * (size_t)n);
  uint64_t d0, d1, e0, e1;
  memcpy(&d0, da, 8), memcpy(&d1, da + 8, 8), memcpy(&e0, db, 8), memcpy(&e1, db + 8, 8);
  return !((d0 ^ e0) | (d1 ^ e1)) && !memcmp(a, b, 16 * sizeof *a);
}

/* Lanes i and i of x and y of one dtype: bitwise equal cells are the same
 * number for alu_equal too (a float equals itself, a NaN any NaN), so only
 * the lanes whose bits differ go to alu_equal. */
static bool same_dtype_equal(const Value *x, const Value *y) {
  const Cell *a = x->v, *b = y->v;
  const uint8_t *da = x->def, *db = y->def;
  if (same_bits(a, b, da, db, x->n)) return true;
  if (memcmp(da, db, (size_t)x->n)) return false; /* definedness is compared too (SPEC §10.1) */
  bool fl = dtype_is_float(x->dtype);
  for (int64_t i = 0; i < x->n; i++)
    if (a[i].i != b[i].i && da[i] && (!fl || !alu_equal(x->dtype, a[i], b[i]))) return false;
  return true;
}

bool verify_value_equal(const Value *x, const Value *y) {
  if (x->n != y->n) return false;
  if (x->dtype == y->dtype) return same_dtype_equal(x, y);
  for (int64_t i = 0; i < x->n; i++) /* definedness is compared too (SPEC §10.1) */
    if (x->def[i] != y->def[i] || (x->def[i] && !same_lane(x->dtype, x->v[i], y->dtype, y->v[i]))) return false;
  return true;
}

bool verify_event_equal(const Event *x, const Event *y) {
  return x->op == y->op && x->kind == y->kind && verify_value_equal(&x->val, &y->val);
}

void verify_event_pair(const Program *p, int s, const Event *x, const Event *y, bool *ok, Diag *d, VerifyStats *st) {
  if (x->op != y->op || x->kind != y->kind || x->val.n != y->val.n) {
    st->mismatched++;
    if (*ok) *ok = mismatch_event(p, s, x, y, -1, d, &st->first);
    return;
  }
  for (int64_t i = 0; i < x->val.n; i++) { /* definedness is compared too (SPEC §10.1) */
    if (x->val.def[i] == y->val.def[i] && (!x->val.def[i] || same_lane(x->val.dtype, x->val.v[i], y->val.dtype, y->val.v[i]))) {
      st->matched++;
      continue;
    }
    st->mismatched++;
    if (*ok) *ok = mismatch_event(p, s, x, y, i, d, &st->first);
    const Op *op = prog_op(p, x->op);
    char ra[64], rb[64], where[32], what[64];
    cell_text(x->val.dtype, x->val.v[i], x->val.def[i], ra, sizeof ra);
    cell_text(y->val.dtype, y->val.v[i], y->val.def[i], rb, sizeof rb);
    snprintf(where, sizeof where, "lane %lld", (long long)i);
    snprintf(what, sizeof what, "%s %s", op ? op_key(op->kind) : "?", x->kind == EV_LOADED ? "loaded" : x->kind == EV_OLD ? "old" : "new");
    keep(st, op ? op->loc.line : 0, what, s, where, ra, rb);
  }
}

void verify_event_counts(const Program *p, int s, uint64_t na, uint64_t nb, int extra_op, bool *ok, Diag *d, VerifyStats *st) {
  if (na == nb) return;
  st->mismatched += na > nb ? na - nb : nb - na;
  if (!*ok) return;
  /* located at the first result only one side has */
  const Op *op = prog_op(p, extra_op);
  char msg[200];
  snprintf(msg, sizeof msg, "subcore %d.%d logged %llu memory results in the reference and %llu in the lowering",
           s / (int)p->mesh_subcores, s % (int)p->mesh_subcores, (unsigned long long)na, (unsigned long long)nb);
  diag_set(d, D_RUN_MISMATCH, op ? op->loc : (Loc){p->file, 0, 0}, msg);
  st->first = (VerifyFirst){.set = true, .core = s / (int)p->mesh_subcores, .subcore = s % (int)p->mesh_subcores};
  snprintf(st->first.what, sizeof st->first.what, "number of memory results");
  *ok = false;
}

static bool compare_logs(const Program *p, const RunResult *ref, const RunResult *eng, Diag *d, VerifyStats *st) {
  bool ok = true;
  for (int s = 0; s < ref->nsub; s++) {
    const EventLog *a = &ref->logs[s], *b = &eng->logs[s];
    int n = a->n < b->n ? a->n : b->n;
    for (int k = 0; k < n; k++) verify_event_pair(p, s, &a->ev[k], &b->ev[k], &ok, d, st);
    if (a->n != b->n) verify_event_counts(p, s, (uint64_t)a->n, (uint64_t)b->n, (a->n > b->n ? a : b)->ev[n].op, &ok, d, st);
  }
  return ok;
}

/* The first differing element of a ref instance as data. */
static void first_element(const Ref *rf, const char *name, int64_t e, const char *got, const char *wanted, const char *what,
                          VerifyFirst *f) {
  *f = (VerifyFirst){.set = true, .core = -1, .subcore = -1};
  snprintf(f->what, sizeof f->what, "%s of '%s'", what, name);
  snprintf(f->instance, sizeof f->instance, "%s", name);
  run_element(&f->at, rf->rank, rf->shape, e);
  snprintf(f->at.got, sizeof f->at.got, "%s", got);
  snprintf(f->at.wanted, sizeof f->at.wanted, "%s", wanted);
}

static bool compare_memory(const Program *p, const RunResult *ref, const RunResult *eng, Diag *d, VerifyStats *st) {
  bool ok = true;
  for (int r = 0; r < p->nrefs; r++) {
    const Ref *rf = p->refs[r];
    int sz = dtype_size(rf->dtype);
    for (int i = 0; i < mem_instance_count(&ref->mem, r); i++) {
      Region *a = mem_instance((MemSystem *)&ref->mem, r, i), *b = mem_instance((MemSystem *)&eng->mem, r, i);
      int64_t all = rf->nelems * sz;
      if (mem_range_defined(a, 0, all) && mem_range_defined(b, 0, all) && !memcmp(a->bytes, b->bytes, (size_t)all)) {
        st->matched += (uint64_t)rf->nelems; /* the usual case: every element defined and the same, in one pass */
        continue;
      }
      for (int64_t e = 0; e < rf->nelems; e++) {
        const uint8_t *ab = a->bytes + e * sz, *bb = b->bytes + e * sz;
        bool adef = true, bdef = true;
        adef = mem_range_defined(a, e * sz, sz);
        bdef = mem_range_defined(b, e * sz, sz);
        if (adef == bdef && (!adef || !memcmp(ab, bb, (size_t)sz))) { /* definedness is compared too (SPEC §10.1) */
          st->matched++;
          continue;
        }
        st->mismatched++;
        char name[160], va[64], vb[64], msg[600], where[40];
        run_instance_name(rf, a, name, sizeof name);
        cell_text(rf->dtype, dtype_load(rf->dtype, ab), adef, va, sizeof va);
        cell_text(rf->dtype, dtype_load(rf->dtype, bb), bdef, vb, sizeof vb);
        snprintf(where, sizeof where, "element %lld", (long long)e);
        keep(st, rf->loc.line, name, a->subcore < 0 ? 0 : a->subcore, where, va, vb);
        if (!ok) continue;
        snprintf(msg, sizeof msg, "final contents of '%s', element %lld: reference %s, lowering %s", name, (long long)e, va, vb);
        diag_set(d, D_RUN_MISMATCH, rf->loc, msg);
        first_element(rf, name, e, vb, va, "final contents", &st->first);
        ok = false;
      }
    }
  }
  return ok;
}

bool verify_runs(const Program *p, const RunResult *ref, const RunResult *eng, Diag *d, VerifyStats *st) {
  VerifyStats local = {0};
  if (!st) st = &local;
  return verify_memory(p, ref, eng, compare_logs(p, ref, eng, d, st), d, st);
}

bool verify_memory(const Program *p, const RunResult *ref, const RunResult *eng, bool a, Diag *d, VerifyStats *st) {
  Diag d2;
  bool b = compare_memory(p, ref, eng, a ? d : &d2, st);
  return a && b;
}

/* ---- expect.refs ---------------------------------------------------------- */
#define EXPECT_ANY 2 /* a defs entry: `_`, the element is not checked */
/* Flattens a literal expectation into cells of dtype t; returns the count
 * or -1 when it is not a literal (*bad: the first element that is not).
 * None expects an undefined element (what --json prints as null). */
static int64_t flatten(const Expr *e, Dtype t, Cell *out, uint8_t *def, int64_t cap, int64_t at, const Expr **bad) {
  if (e->kind == EX_LIST) {
    for (int i = 0; i < e->nargs; i++) {
      int64_t n = flatten(e->args[i], t, out, def, cap, at, bad);
      if (n < 0) return -1;
      at = n;
    }
    return at;
  }
  Cell c = {0};
  if (e->kind == EX_NONE) {
    if (at < cap) def[at] = 0;
    return at + 1;
  }
  if (e->kind == EX_NAME && !strcmp(e->name, "_")) { /* don't care: any value, defined or not */
    if (at < cap) def[at] = EXPECT_ANY;
    return at + 1;
  }
  if (e->kind == EX_INT || e->kind == EX_BOOL) c = dtype_convert(DT_INT64, t, (Cell){.i = e->ival});
  else if (e->kind == EX_FLOAT) c = dtype_convert(DT_FLOAT64, t, (Cell){.f = e->fval});
  else if (e->kind == EX_NAME && (!strcmp(e->name, "nan") || !strcmp(e->name, "inf"))) c = dtype_convert(DT_FLOAT64, t, (Cell){.f = e->name[0] == 'n' ? NAN : INFINITY});
  else return *bad = e, -1;
  if (at < cap) out[at] = c, def[at] = 1;
  return at + 1;
}

static bool instance_matches(const char *want, const Ref *ref, const Region *g) {
  char name[200];
  if (!strcmp(want, ref->name)) return true; /* a bare name: every instance */
  run_instance_name(ref, g, name, sizeof name);
  return !strcmp(want, name);
}

static bool check_instance(const Program *p, int k, const Ref *ref, Region *g, const Cell *cells, const uint8_t *defs, int64_t n,
                           Diag *d, VerifyFirst *x) {
  int sz = dtype_size(ref->dtype);
  for (int64_t e = 0; e < ref->nelems; e++) {
    Cell want = cells[n == 1 ? 0 : e];
    if (defs[n == 1 ? 0 : e] == EXPECT_ANY) continue;
    bool wdef = defs[n == 1 ? 0 : e], def = mem_range_defined(g, e * sz, sz);
    Cell got = dtype_load(ref->dtype, g->bytes + e * sz);
    if (def == wdef && (!def || alu_equal(ref->dtype, got, want))) continue;
    char name[160], a[64], b[64], msg[600];
    run_instance_name(ref, g, name, sizeof name);
    cell_text(ref->dtype, got, def, a, sizeof a);
    cell_text(ref->dtype, want, wdef, b, sizeof b);
    char where[120];
    first_element(ref, name, e, a, b, "expect.refs", x);
    run_element_text(&x->at, where, sizeof where);
    if (ref->rank <= 1) snprintf(where, sizeof where, "element %lld", (long long)e); /* a rank-1 ref has elements, not lanes */
    snprintf(msg, sizeof msg, "expect.refs: '%s' %s is %s, expected %s", name, where, a, b);
    diag_set(d, D_RUN_EXPECT, p->expect_ref_locs[k], msg);
    return false;
  }
  return true;
}

/* The ref an expect.refs entry names (NAME or NAME@C or NAME@C.S). */
static const Ref *expect_ref(const Program *p, int k) {
  char base[256];
  snprintf(base, sizeof base, "%s", p->expect_ref_names[k]);
  char *at = strchr(base, '@');
  if (at) *at = '\0';
  return program_ref(p, base);
}

/* The entry's literal as one cell (and defined flag) per element, or one
 * for all (*n, into cells and defs unless NULL); false with *d set when it
 * is neither. */
static bool expect_cells(const Program *p, int k, const Ref *ref, Cell *cells, uint8_t *defs, int64_t *n, Diag *d) {
  const Expr *bad = NULL;
  *n = flatten(p->expect_ref_values[k], ref->dtype, cells, defs, cells ? ref->nelems : 0, 0, &bad);
  if (*n == 1 || *n == ref->nelems) return true;
  char msg[300], text[120];
  if (bad) expr_print(bad, text, sizeof text);
  size_t tl = bad ? strlen(text) : 0;
  bool outer = tl > 2 && text[0] == '(' && text[tl - 1] == ')'; /* expr_print brackets binaries: drop the outer pair */
  for (size_t i = 1, depth = 1; outer && i + 1 < tl; i++)
    if ((depth += (text[i] == '(') - (text[i] == ')')) == 0) outer = false;
  if (bad)
    snprintf(msg, sizeof msg, "expect.refs: '%s' must be a literal of the ref's shape or one scalar, and '%.*s' is not a literal",
             p->expect_ref_names[k], (int)(outer ? tl - 2 : tl), text + outer);
  else snprintf(msg, sizeof msg, "expect.refs: '%s' expects %lld elements, the ref has %lld (give a literal of its shape, or one scalar)",
           p->expect_ref_names[k], (long long)*n, (long long)ref->nelems);
  diag_set(d, D_IN_VALUE, p->expect_ref_locs[k], msg);
  return false;
}

static bool no_instance(const Program *p, int k, Diag *d) {
  char msg[300];
  snprintf(msg, sizeof msg, "expect.refs: no instance '%s' in this mesh", p->expect_ref_names[k]);
  diag_set(d, D_IN_VALUE, p->expect_ref_locs[k], msg);
  return false;
}

/* Whether the mesh has the instance an entry names, from the program alone:
 * the instances a run would make, named as run_instance_name names them. */
static bool instance_exists(const Program *p, int k, const Ref *ref) {
  int cores = ref->space == SP_HBM ? 1 : (int)p->mesh_cores;
  int subs = ref->space == SP_HBM || ref->space == SP_VMEM_SHARED ? 1 : (int)p->mesh_subcores;
  for (int c = 0; c < cores; c++)
    for (int s = 0; s < subs; s++) {
      Region g;
      memset(&g, 0, sizeof g);
      g.core = c, g.subcore = s;
      if (instance_matches(p->expect_ref_names[k], ref, &g)) return true;
    }
  return false;
}

bool verify_expect_static(const Program *p, Diag *d) {
  for (int k = 0; k < p->nexpect_refs; k++) {
    const Ref *ref = expect_ref(p, k);
    int64_t n;
    if (!expect_cells(p, k, ref, NULL, NULL, &n, d)) return false;
    if (!instance_exists(p, k, ref)) return no_instance(p, k, d);
  }
  return true;
}

bool verify_expect_refs(const Program *p, RunResult *r, Diag *d, VerifyFirst *x) {
  for (int k = 0; k < p->nexpect_refs; k++) {
    const Ref *ref = expect_ref(p, k);
    Cell *cells = calloc((size_t)(ref->nelems ? ref->nelems : 1), sizeof(Cell));
    uint8_t *defs = calloc((size_t)(ref->nelems ? ref->nelems : 1), 1);
    if (!cells || !defs) abort();
    int64_t n;
    if (!expect_cells(p, k, ref, cells, defs, &n, d)) {
      free(cells);
      free(defs);
      return false;
    }
    bool found = false, ok = true;
    for (int i = 0; i < mem_instance_count(&r->mem, ref->index) && ok; i++) {
      Region *g = mem_instance(&r->mem, ref->index, i);
      if (!instance_matches(p->expect_ref_names[k], ref, g)) continue;
      found = true;
      ok = check_instance(p, k, ref, g, cells, defs, n, d, x);
    }
    free(cells);
    free(defs);
    if (!ok) return false;
    if (!found) return no_instance(p, k, d);
  }
  return true;
}
