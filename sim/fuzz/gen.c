/* sim/fuzz/gen.c -- sc-sim fuzz: the swarm generator of programs (docs/fuzz.md).
 *
 * A program is a function of (seed, index, Knobs).  Its Plan (chip, kernel,
 * mesh, layout mode, the enabled features and the list of units) is drawn
 * from the program's own stream; each unit and each step of a unit draws
 * from a stream of its own, so dropping a unit or a step, or shrinking the
 * mesh, leaves the rest of the program as it was.  A unit declares its own
 * refs and its steps touch nothing else; a step binds the names it uses
 * itself.  So every step is valid alone: the shrinker can drop any subset
 * and the text stays a valid program, race-free and fault-free by
 * construction:
 *   - per-subcore refs (vmem, smem) are written freely; shared refs (hbm,
 *     vmem_shared) are written only in the row that belongs to the subcore
 *     (core * S + subcore, or subcore), or read when nobody writes them;
 *   - every ref has an init; masked loads feed only stores with the same
 *     mask; every index is a literal in range or an expression reduced
 *     modulo the dimension; DMAs are waited in the step that starts them;
 *   - barriers stand at the top level, so every subcore reaches them.
 * Expectations are computed where the generator knows the data: iota
 * tables read by DMAs and gathers, integer arithmetic it evaluates itself,
 * literal stores it rounds itself, fetch_and_add sums, exchanges.
 *
 * A reject program adds one operation (inject.c) that breaks one rule of
 * SPEC §4 and must be rejected with exactly that id. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_priv.h"

/* ---- the units ---------------------------------------------------------- */
static void unit_vec(G *g, Unit *u);
static void unit_masked(G *g, Unit *u);
static void unit_gather(G *g, Unit *u);
static void unit_dma(G *g, Unit *u);
static void unit_idma(G *g, Unit *u);
static void unit_smem(G *g, Unit *u);
static void unit_faa(G *g, Unit *u);
static void unit_sem(G *g, Unit *u);
static void unit_exch(G *g, Unit *u);
static void unit_arith(G *g, Unit *u);
static void unit_views(G *g, Unit *u);
static void unit_shadd(G *g, Unit *u);
static void unit_undef(G *g, Unit *u);
static void unit_race(G *g, Unit *u);

static const struct {
  const char *name;
  UnitGen gen;
  int kernels, wraps;
} unit_info[U_COUNT] = {
#define X(e, n, f, k, w) [U_##e] = {n, f, k, w},
    UNITS(X)
#undef X
};




static void fresh(G *g, char *buf, const char *tag) { snprintf(buf, NAME_LEN, "%s%d_%d", tag, g->u, g->nm++); }
static void refname(G *g, char *buf, char c) { snprintf(buf, NAME_LEN, "R%d%c", g->u, c); }

static void add_name(G *g, const char *name, const Ty *t) {
  if (g->nnames == MAX_NAMES) return;
  snprintf(g->names[g->nnames].name, NAME_LEN, "%s", name);
  g->names[g->nnames++].t = *t;
}

static void shape_list(Buf *o, int rank, const int64_t *sh) {
  bput(o, "[");
  for (int i = 0; i < rank; i++) bput(o, "%s%lld", i ? ", " : "", (long long)sh[i]);
  bput(o, "]");
}

static int64_t nelems(int rank, const int64_t *sh) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= sh[i];
  return n;
}

static Ty ty_make(Dtype d, int rank, const int64_t *sh) {
  Ty t = {d, rank, {0}};
  for (int i = 0; i < rank; i++) t.sh[i] = sh[i];
  return t;
}

static bool ty_eq(const Ty *a, const Ty *b) {
  return a->d == b->d && a->rank == b->rank && !memcmp(a->sh, b->sh, sizeof(int64_t) * (size_t)a->rank);
}

/* Picks a data dtype the swarm enabled (the DTYPES up to bool: the 8-byte
 * ones come after it; then int4 and uint4); `want32` restricts to 32-bit
 * ones. */
static Dtype pick_dtype(G *g, bool want32) {
  Dtype c[DT_COUNT];
  int n = 0;
  for (int d = 0; d < DT_COUNT; d++)
    if ((d <= DT_BOOL || dtype_is_subbyte((Dtype)d)) && (g->pl->dtypes & (1u << d)) && (!want32 || dtype_size((Dtype)d) == 4))
      c[n++] = (Dtype)d;
  return n ? c[rr(R(g), 0, n - 1)] : DT_INT32;
}

/* ---- literals and ref declarations ------------------------------------ */
static const char *const float_lits[] = {"0.5", "1.5", "2.0", "-1.25", "3.0", "0.25", "-4.0", "7.75", "1.0", "-0.5"};

/* A weak literal of d's kind that fits d. */
static void lit(G *g, Buf *o, Dtype d) {
  switch (dtype_kind(d)) {
  case DK_INT:
    if (dtype_is_subbyte(d)) bput(o, "%lld", (long long)rr(R(g), -8, 7));
    else bput(o, "%lld", (long long)rr(R(g), dtype_size(d) == 1 ? -9 : -20, 20));
    break;
  case DK_UINT: bput(o, "%lld", (long long)rr(R(g), 0, dtype_is_subbyte(d) ? 15 : 30)); break;
  case DK_FLOAT: bput(o, "%s", float_lits[rr(R(g), 0, 9)]); break;
  case DK_BOOL: bput(o, "%s", rp(R(g), 50) ? "true" : "false"); break;
  }
}

/* An init that defines every element. */
static void init_any(G *g, Buf *o, Dtype d) {
  int c = (int)rr(R(g), 0, 3);
  DtypeKind k = dtype_kind(d);
  if (c == 0) bput(o, "zeros");
  else if (c == 1 && k != DK_BOOL) bput(o, "iota");
  else if (c == 2) lit(g, o, d);
  else if (k == DK_BOOL) bput(o, "{random: %lld, low: 0, high: 1}", (long long)rr(R(g), 1, 999));
  else if (k == DK_UINT) bput(o, "{random: %lld, low: 0, high: %d}", (long long)rr(R(g), 1, 999), dtype_size(d) == 1 ? 255 : 1000);
  else if (dtype_size(d) == 1) bput(o, "{random: %lld, low: -100, high: 100}", (long long)rr(R(g), 1, 999));
  else bput(o, "{random: %lld, low: -1000, high: 1000}", (long long)rr(R(g), 1, 999));
}

/* An hbm ref is sometimes declared without a memory space (annotated:
 * false), which only changes the text of a few messages. */
static void decl(G *g, const char *name, const char *space, Dtype d, int rank, const int64_t *sh, const char *init) {
  bool raw = !strcmp(space, "hbm") && rp(R(g), 20);
  bput(g->refs, "  %s: {space: %s,%s shape: ", name, space, raw ? " annotated: false," : "");
  shape_list(g->refs, rank, sh);
  bput(g->refs, ", dtype: %s", dtype_name(d));
  if (init) bput(g->refs, ", init: %s", init);
  bput(g->refs, "}\n");
}

static void decl_init(G *g, const char *name, const char *space, Dtype d, int rank, const int64_t *sh) {
  Buf b = {0};
  init_any(g, &b, d);
  decl(g, name, space, d, rank, sh, b.s);
  bfree(&b);
}

static void decl_sem(G *g, const char *name, const char *type, int n) {
  if (n > 1) bput(g->refs, "  %s: {space: semaphore, type: %s, shape: [%d]}\n", name, type, n);
  else bput(g->refs, "  %s: {space: semaphore, type: %s}\n", name, type);
}

/* ---- index expressions ---------------------------------------------------- */
/* An index in [0, n): a literal, or with DYN an expression of the
 * coordinates, the loop variable or a let-bound name that stays in range on
 * every subcore.  *val is the literal's value; *dyn says which. */
static void idx_expr(G *g, char *buf, size_t sz, int64_t n, int64_t *val, bool *dyn) {
  *val = rr(R(g), 0, n - 1);
  *dyn = false;
  int c = (int)rr(R(g), 0, 9);
  if (!has(g, F_DYN) || n == 1 || c < 5) {
    snprintf(buf, sz, "%lld", (long long)*val);
    return;
  }
  *dyn = true;
  if (c == 5) snprintf(buf, sz, "subcore %% %lld", (long long)n);
  else if (c == 6) snprintf(buf, sz, "(subcore + %lld) %% %lld", (long long)rr(R(g), 1, 7), (long long)n);
  else if (c == 7) snprintf(buf, sz, "(core * %d + subcore) %% %lld", g->S, (long long)n);
  else if (c == 8 && g->lv) snprintf(buf, sz, "%s %% %lld", g->lv, (long long)n);
  else {
    char nm[NAME_LEN];
    fresh(g, nm, "k");
    bput(g->out, "- let: {name: %s, value: \"(subcore * %lld + core + %lld) %% %lld\"}\n", nm, (long long)rr(R(g), 1, 5),
         (long long)rr(R(g), 0, 9), (long long)n);
    snprintf(buf, sz, "%s", nm);
  }
}

/* ---- views ------------------------------------------------------------------ */
/* One entry per ref dimension: an integer index or a slice of `size`. */
typedef struct {
  bool is_int;
  char e[96];   /* the index or the slice start */
  bool dyn;
  int64_t st;   /* its value when static */
  int64_t size;
} Ent;

typedef struct {
  int rank;
  int64_t sh[4]; /* the ref's shape */
  Ent e[4];
} Blk;

static void ent_int(G *g, Ent *e, int64_t dim) {
  e->is_int = true;
  idx_expr(g, e->e, sizeof e->e, dim, &e->st, &e->dyn);
}

static void ent_slice(G *g, Ent *e, int64_t dim, int64_t size) {
  e->is_int = false;
  e->size = size;
  idx_expr(g, e->e, sizeof e->e, dim - size + 1, &e->st, &e->dyn);
}

static void ent_fixed(Ent *e, const char *text) {
  e->is_int = true;
  e->dyn = true;
  snprintf(e->e, sizeof e->e, "%s", text);
}

/* A block of the ref: dims marked in `sl` are slices of the given sizes,
 * the others integer indices. */
static void blk_make(G *g, Blk *b, int rank, const int64_t *sh, const bool *sl, const int64_t *size) {
  b->rank = rank;
  memcpy(b->sh, sh, sizeof(int64_t) * (size_t)rank);
  for (int d = 0; d < rank; d++) {
    if (sl[d]) ent_slice(g, &b->e[d], sh[d], size[d]);
    else ent_int(g, &b->e[d], sh[d]);
  }
}

static bool ent_full(const Ent *e, int64_t dim) { return !e->is_int && !e->dyn && e->st == 0 && e->size == dim; }

static void ent_text(G *g, Buf *o, const Ent *e, int64_t dim) {
  if (e->is_int) {
    bput(o, "%s", e->e);
    return;
  }
  int c = (int)rr(R(g), 0, 9);
  if (ent_full(e, dim) && c < 5) bput(o, ":");
  else if (!e->dyn && e->st > 0 && e->st + e->size == dim && c < 3) bput(o, "-%lld:", (long long)e->size);
  else if (!e->dyn && c < 7) bput(o, "%lld:%lld", (long long)e->st, (long long)(e->st + e->size));
  else bput(o, "pl.ds(%s, %lld)", e->e, (long long)e->size);
}

/* Entries [from, to) as one indexer; trailing full slices may be left out. */
static void ents_text(G *g, Buf *o, const Blk *b, int from, int to) {
  int last = to;
  if (rp(R(g), 50))
    while (last > from + 1 && ent_full(&b->e[last - 1], b->sh[last - 1])) last--;
  for (int d = from; d < last; d++) {
    if (d > from) bput(o, ", ");
    ent_text(g, o, &b->e[d], b->sh[d]);
  }
}

static int lead_ints(const Blk *b) {
  int n = 0;
  while (n < b->rank && b->e[n].is_int) n++;
  return n;
}

/* With CHAIN, the first slice may be taken in two steps: a window
 * .at[ints, pl.ds(W, n1)] as a prior transform, then the block inside it
 * (relative start) with the remaining entries as the final indexer. */
static bool window_text(G *g, Buf *o, const char *ref, const Blk *b) {
  int q = lead_ints(b);
  if (q == b->rank || !has(g, F_CHAIN) || !rp(R(g), 25)) return false;
  const Ent *e = &b->e[q];
  int64_t W = 0, n1 = e->size;
  if (!e->dyn) {
    W = rr(R(g), 0, e->st);
    n1 = rr(R(g), e->st + e->size - W, b->sh[q] - W);
  }
  bput(o, "%s.at[", ref);
  for (int d = 0; d < q; d++) bput(o, "%s, ", b->e[d].e);
  if (e->dyn) bput(o, "pl.ds(%s, %lld)][pl.ds(0, %lld)", e->e, (long long)n1, (long long)e->size);
  else bput(o, "pl.ds(%lld, %lld)][pl.ds(%lld, %lld)", (long long)W, (long long)n1, (long long)(e->st - W), (long long)e->size);
  for (int d = q + 1; d < b->rank; d++) {
    bput(o, ", ");
    ent_text(g, o, &b->e[d], b->sh[d]);
  }
  bput(o, "]");
  return true;
}

/* The view of `ref` selecting the block.  The leading integer entries may go
 * into .at chains (prior transforms); `final_slices` keeps every integer
 * out of the final indexer (the masked-store rule M-VL3).  The rest is the
 * final indexer, written [...] or .at[...]. */
static void view_text(G *g, Buf *o, const char *ref, const Blk *b, bool final_slices) {
  if (window_text(g, o, ref, b)) return;
  int lead = lead_ints(b), p = 0;
  if (lead && (final_slices || (has(g, F_CHAIN) && rp(R(g), 60)))) p = final_slices ? lead : (int)rr(R(g), 1, lead);
  bput(o, "%s", ref);
  if (p && rp(R(g), 50)) {
    for (int d = 0; d < p; d++) bput(o, ".at[%s]", b->e[d].e);
  } else if (p) {
    bput(o, ".at[");
    ents_text(g, o, b, 0, p);
    bput(o, "]");
  }
  bool rest_full = true;
  for (int d = p; d < b->rank; d++) rest_full &= ent_full(&b->e[d], b->sh[d]);
  if (!final_slices && (p == b->rank || (rest_full && rp(R(g), 50)))) {
    if (rp(R(g), 50)) bput(o, "[...]");
    return;
  }
  bput(o, rp(R(g), 70) ? "[" : ".at[");
  ents_text(g, o, b, p, b->rank);
  bput(o, "]");
}

/* ---- values ---------------------------------------------------------------- */
static void gen_val(G *g, Buf *o, const Ty *t, int depth);

static bool is_lanes(const G *g, const Ty *t) { return !g->scalar && t->rank == 1 && t->sh[0] == g->L; }

static const Nm *find_name(G *g, const Ty *t) {
  int c[MAX_NAMES], n = 0;
  for (int i = 0; i < g->nnames; i++)
    if (ty_eq(&g->names[i].t, t)) c[n++] = i;
  return n ? &g->names[c[rr(R(g), 0, n - 1)]] : NULL;
}

/* A strongly typed leaf of type t. */
static void val_leaf(G *g, Buf *o, const Ty *t) {
  const Nm *nm = find_name(g, t);
  int c = (int)rr(R(g), 0, 9);
  if (nm && c < 4) {
    bput(o, "%s", nm->name);
    return;
  }
  bool cast = t->d != DT_INT32 && t->d != DT_FLOAT32 && t->d != DT_BOOL;
  if (t->rank == 0) {
    bput(o, "astype(");
    if (c < 6) bput(o, "subcore + core * %lld + %lld", (long long)rr(R(g), 1, 4), (long long)rr(R(g), 0, 9));
    else lit(g, o, t->d);
    bput(o, ", %s)", dtype_name(t->d));
    return;
  }
  if (is_lanes(g, t) && c < 8 && t->d != DT_BOOL) {
    if (t->d == DT_INT32) bput(o, "iota(%d)", g->L);
    else bput(o, "astype(iota(%d), %s)", g->L, dtype_name(t->d));
    return;
  }
  if (cast || (dtype_is_float(t->d) && c == 9)) bput(o, "astype(");
  bput(o, "full(");
  shape_list(o, t->rank, t->sh);
  bput(o, ", ");
  lit(g, o, dtype_is_float(t->d) ? DT_FLOAT32 : t->d == DT_BOOL ? DT_BOOL : DT_INT32);
  bput(o, ")");
  if (cast || (dtype_is_float(t->d) && c == 9)) bput(o, ", %s)", dtype_name(t->d));
}

/* A binary operator for t's dtype; `rhs_lit` says the right operand must be
 * a nonzero literal (// %) or a shift amount (<< >>). */
static const char *pick_op(G *g, Dtype d, int *rhs_lit) {
  static const char *const iops[] = {"+", "-", "*", "&", "|", "^", "//", "%", "<<", ">>", "min", "max"};
  static const char *const fops[] = {"+", "-", "*", "/", "min", "max"};
  *rhs_lit = 0;
  if (dtype_is_float(d)) {
    const char *op = fops[rr(R(g), 0, 5)];
    if (!strcmp(op, "/")) *rhs_lit = 1;
    return op;
  }
  const char *op = iops[rr(R(g), 0, 11)];
  if (!strcmp(op, "//") || !strcmp(op, "%")) *rhs_lit = 1;
  if (!strcmp(op, "<<") || !strcmp(op, ">>")) *rhs_lit = 2;
  return op;
}

static void val_rhs_lit(G *g, Buf *o, Dtype d, int kind) {
  if (kind == 2) bput(o, "%lld", (long long)rr(R(g), 0, dtype_bits(d) - 1));
  else if (dtype_is_float(d)) bput(o, "%s", rp(R(g), 50) ? "2.0" : "-0.5");
  else bput(o, "%lld", (long long)(dtype_kind(d) == DK_UINT ? rr(R(g), 1, 9) : (rp(R(g), 70) ? rr(R(g), 1, 9) : -rr(R(g), 1, 9))));
}

/* A strong scalar of dtype d: an element of a vector name, a coordinate. */
static void val_strong_scalar(G *g, Buf *o, Dtype d) {
  int c[MAX_NAMES], n = 0;
  for (int i = 0; i < g->nnames; i++)
    if (g->names[i].t.d == d && g->names[i].t.rank >= 1 && dtype_size(d) == 4) c[n++] = i; /* SQ1 */
  if (n && rp(R(g), 60)) {
    const Nm *nm = &g->names[c[rr(R(g), 0, n - 1)]];
    bput(o, "%s[", nm->name);
    for (int k = 0; k < nm->t.rank; k++) bput(o, "%s%lld", k ? ", " : "", (long long)rr(R(g), 0, nm->t.sh[k] - 1));
    bput(o, "]");
  } else if (d == DT_INT32 && rp(R(g), 50)) {
    bput(o, rp(R(g), 50) ? "subcore" : "core");
  } else {
    bput(o, "astype(subcore + %lld, %s)", (long long)rr(R(g), 0, 5), dtype_name(d));
  }
}

static void val_binary(G *g, Buf *o, const Ty *t, int depth) {
  int rl;
  const char *op = pick_op(g, t->d, &rl);
  bool fn = !strcmp(op, "min") || !strcmp(op, "max");
  bput(o, fn ? "%s(" : "(", op);
  gen_val(g, o, t, depth - 1);
  bput(o, fn ? ", " : " %s ", op);
  if (rl) val_rhs_lit(g, o, t->d, rl);
  else if (rp(R(g), 30)) lit(g, o, t->d);
  else if (t->rank && rp(R(g), 20)) val_strong_scalar(g, o, t->d);
  else gen_val(g, o, t, depth - 1);
  bput(o, ")");
}

/* A bool of shape t: a comparison of two int32 (or float32) values, or
 * and / or / not of bools. */
static void val_bool(G *g, Buf *o, const Ty *t, int depth) {
  static const char *const cmps[] = {"==", "!=", "<", "<=", ">", ">="};
  int c = (int)rr(R(g), 0, 5);
  if (c == 0 && depth > 1) {
    bput(o, "(not ");
    gen_val(g, o, t, depth - 1);
    bput(o, ")");
  } else if (c == 1 && depth > 1) {
    bput(o, "(");
    gen_val(g, o, t, depth - 1);
    bput(o, rp(R(g), 50) ? " and " : " or ");
    gen_val(g, o, t, depth - 1);
    bput(o, ")");
  } else {
    Ty a = *t;
    a.d = rp(R(g), 80) ? DT_INT32 : DT_FLOAT32;
    bput(o, "(");
    gen_val(g, o, &a, depth - 1);
    bput(o, " %s ", cmps[rr(R(g), 0, 5)]);
    if (rp(R(g), 60)) lit(g, o, a.d);
    else gen_val(g, o, &a, depth - 1);
    bput(o, ")");
  }
}

static void val_where(G *g, Buf *o, const Ty *t, int depth) {
  Ty m = *t;
  m.d = DT_BOOL;
  bput(o, "where(");
  if (rp(R(g), 25)) bput(o, "subcore %% 2 == 0");
  else gen_val(g, o, &m, depth - 1);
  bput(o, ", ");
  gen_val(g, o, t, depth - 1);
  bput(o, ", ");
  gen_val(g, o, t, depth - 1);
  bput(o, ")");
}

static void val_cast(G *g, Buf *o, const Ty *t, int depth) {
  static const Dtype from[] = {DT_INT32, DT_INT16, DT_UINT8, DT_FLOAT32, DT_UINT32};
  Ty a = *t;
  a.d = from[rr(R(g), 0, 4)];
  if (a.d == t->d) a.d = DT_INT32;
  bput(o, "astype(");
  gen_val(g, o, &a, depth - 1);
  bput(o, ", %s)", dtype_name(t->d));
}

/* An expression of exactly type t (strong dtype, exact shape); depth bounds
 * the tree.  Integer division and shifts take literal right operands, so no
 * division by zero can happen. */
static void gen_val(G *g, Buf *o, const Ty *t, int depth) {
  if (depth <= 0 || g->simple || rp(R(g), 30)) {
    val_leaf(g, o, t);
    return;
  }
  int c = (int)rr(R(g), 0, 9);
  if (c == 0) return val_where(g, o, t, depth);
  if (t->d == DT_BOOL) return val_bool(g, o, t, depth);
  if (c == 1) return val_cast(g, o, t, depth);
  if (c == 3 && gen_scanops_val(g, o, t, depth, gen_val)) return;
  if (c == 2) {
    bput(o, dtype_is_float(t->d) || rp(R(g), 50) ? "(-" : "(~");
    gen_val(g, o, t, depth - 1);
    bput(o, ")");
    return;
  }
  val_binary(g, o, t, depth);
}

/* A value to store into a view of type t: any integer value converts
 * implicitly into an integer ref (B3), so int32 trees are used there too. */
static void store_val(G *g, Buf *o, const Ty *t) {
  Ty v = *t;
  if (dtype_is_int(t->d) && rp(R(g), 30)) v.d = DT_INT32;
  gen_val(g, o, &v, 2);
}

/* ---- units: helpers ----------------------------------------------------- */
/* Starts step s of the unit: its own stream, an empty name table. */
static void step_begin(G *g, Unit *u, int s) {
  g->r = rng_at(g->pl->seed, (uint64_t)g->pl->index, 100 + (uint64_t)g->u, 1 + (uint64_t)s);
  g->out = &u->step[s];
  g->nnames = 0;
}

static int steps_for(G *g, Unit *u, int lo, int hi) {
  u->nsteps = (int)rr(R(g), lo, hi);
  return u->nsteps;
}

/* The row of a shared ref that belongs to this subcore. */
static const char *own_row(G *g, bool hbm, char *buf, size_t n) {
  if (hbm) snprintf(buf, n, "core * %d + subcore", g->S);
  else snprintf(buf, n, "subcore");
  return buf;
}

static int64_t shared_rows(G *g, bool hbm) { return hbm ? (int64_t)g->C * g->S : g->S; }

/* Emits an expect of `what` (value: NAME or ref: VIEW) against per-instance
 * expected texts: one expect when every instance agrees, else one when per
 * instance.  exp[i] is for core i / S, subcore i % S. */
static void expect_per_instance(G *g, const char *field, const char *what, char (*exp)[512]) {
  int n = g->C * g->S;
  bool same = true;
  for (int i = 1; i < n; i++) same &= !strcmp(exp[i], exp[0]);
  if (same) {
    bput(g->out, "- expect: {%s: \"%s\", equals: %s}\n", field, what, exp[0]);
    return;
  }
  for (int i = 0; i < n; i++)
    bput(g->out, "- when:\n    cond: \"core == %d and subcore == %d\"\n    body:\n      - expect: {%s: \"%s\", equals: %s}\n",
         i / g->S, i % g->S, field, what, exp[i]);
}

/* The vector shape a vec step accesses: any shape in layout mode, a shape
 * of the dtype's supported list (SPEC §4.F) in strict mode. */
static Ty access_ty(G *g, Dtype d) {
  int pack = 4 / dtype_size(d);
  int64_t sh[2];
  if (!g->layout || g->level >= 2) {
    bool two = pack > 1 && rp(R(g), 50);
    sh[0] = two ? pack : (int64_t)g->L * pack;
    sh[1] = g->L;
    return ty_make(d, two ? 2 : 1, sh);
  }
  int c = (int)rr(R(g), 0, 4);
  sh[0] = c == 0 ? g->L : c == 1 ? (int64_t)g->L * pack : rr(R(g), 1, 2 * g->L);
  sh[1] = rr(R(g), 1, g->L + 2);
  if (c == 4) sh[0] = rr(R(g), 1, 3);
  return ty_make(d, c >= 3 ? 2 : 1, sh);
}

/* A ref shape that holds the access shape a: leading dims, then a's dims
 * with some slack.  Returns the rank; *extra is the number of leading dims. */
static int ref_for(G *g, const Ty *a, int64_t *sh, int *extra) {
  *extra = g->level ? 0 : (int)rr(R(g), 0, 2);
  for (int i = 0; i < *extra; i++) sh[i] = rr(R(g), 1, 3);
  for (int i = 0; i < a->rank; i++) sh[*extra + i] = a->sh[i] + (g->level ? 0 : rr(R(g), 0, 3));
  return *extra + a->rank;
}

/* A block of the ref accessing shape a in its trailing dims. */
static void access_blk(G *g, Blk *b, int rank, const int64_t *sh, int extra, const Ty *a) {
  bool sl[4] = {false};
  int64_t sz[4] = {0};
  for (int i = 0; i < a->rank; i++) sl[extra + i] = true, sz[extra + i] = a->sh[i];
  blk_make(g, b, rank, sh, sl, sz);
}

/* ---- unit vec: get / set / swap / addupdate on VMEM -------------------- */
static void vec_view(G *g, Buf *o, const char *ref, int rank, const int64_t *sh, int extra, const Ty *a) {
  Blk b;
  access_blk(g, &b, rank, sh, extra, a);
  view_text(g, o, ref, &b, false);
}

static void vec_step(G *g, const char *ref, int rank, const int64_t *sh, int extra, const Ty *a) {
  Buf v = {0}, x = {0};
  char n[NAME_LEN];
  vec_view(g, &v, ref, rank, sh, extra, a);
  int c = (int)rr(R(g), 0, 4);
  if (c == 3 && a->d == DT_BOOL) c = 1;
  if (c == 0 || c == 4) { /* get, then maybe a store of something computed from it */
    fresh(g, n, "n");
    bput(g->out, "- get: {ref: \"%s\", out: %s}\n", v.s, n);
    add_name(g, n, a);
    Buf w = {0};
    vec_view(g, &w, ref, rank, sh, extra, a);
    store_val(g, &x, a);
    if (c == 4) bput(g->out, "- set: {ref: \"%s\", value: \"%s\"}\n", w.s, x.s);
    bfree(&w);
  } else if (c == 1) {
    store_val(g, &x, a);
    bput(g->out, "- set: {ref: \"%s\", value: \"%s\"}\n", v.s, x.s);
    if (has(g, F_EXPECT)) bput(g->out, "- expect: {ref: \"%s\", equals: \"%s\"}\n", v.s, x.s);
  } else if (c == 2) {
    fresh(g, n, "o");
    store_val(g, &x, a);
    bput(g->out, "- swap: {ref: \"%s\", value: \"%s\", out: %s}\n", v.s, x.s, n);
    if (rp(R(g), 50)) bput(g->out, "- swap: {ref: \"%s\", value: %s}\n", v.s, n);
  } else {
    gen_val(g, &x, a, 2);
    bput(g->out, "- addupdate: {ref: \"%s\", value: \"%s\"}\n", v.s, x.s);
  }
  bfree(&v);
  bfree(&x);
}

static void unit_vec(G *g, Unit *u) {
  Dtype d = pick_dtype(g, false);
  if (d == DT_BOOL) d = DT_INT32; /* a bool VMEM ref cannot be vector-accessed (M-VL5) */
  Ty a = access_ty(g, d);
  int64_t sh[4];
  int extra, rank = ref_for(g, &a, sh, &extra);
  char r[NAME_LEN];
  refname(g, r, 'a');
  decl_init(g, r, "vmem", d, rank, sh);
  steps_for(g, u, 1, 5);
  for (int s = 0; s < u->nsteps; s++) {
    step_begin(g, u, s);
    vec_step(g, r, rank, sh, extra, &a);
  }
}

/* ---- unit masked: load_expanded / store_compressed / addupdate_compressed - */
static void mask_val(G *g, Buf *o, const Ty *m, const char *mref) {
  if (mref && rp(R(g), 40)) {
    char n[NAME_LEN];
    fresh(g, n, "m");
    bput(g->out, "- get: {ref: \"%s[...]\", out: %s}\n", mref, n);
    bput(o, "%s != 0", n);
    return;
  }
  if (m->rank == 1 && !g->scalar && m->sh[0] == g->L && rp(R(g), 60)) {
    static const char *const cmp[] = {"<", ">=", "==", "!="};
    bput(o, "(iota(%d) * %lld + %lld) %% %lld %s %lld", g->L, (long long)rr(R(g), 1, 7), (long long)rr(R(g), 0, 9),
         (long long)rr(R(g), 2, 7), cmp[rr(R(g), 0, 3)], (long long)rr(R(g), 0, 3));
    return;
  }
  gen_val(g, o, m, 2);
}

static void masked_step(G *g, const char *ref, int rank, const int64_t *sh, int extra, const Ty *a, const char *mref) {
  Blk b;
  Buf v = {0}, m = {0}, x = {0};
  access_blk(g, &b, rank, sh, extra, a);
  view_text(g, &v, ref, &b, true);
  Ty mt = *a;
  mt.d = DT_BOOL;
  char mn[NAME_LEN], n[NAME_LEN];
  mask_val(g, &m, &mt, mref);
  fresh(g, mn, "m");
  bput(g->out, "- let: {name: %s, value: \"%s\"}\n", mn, m.s);
  int c = (int)rr(R(g), 0, 2);
  if (c == 0) {
    fresh(g, n, "e");
    bput(g->out, "- load_expanded: {ref: \"%s\", mask: %s, out: %s}\n", v.s, mn, n);
    if (rp(R(g), 60)) { /* the true lanes are defined: store them back compressed */
      Blk b2;
      Buf w = {0};
      access_blk(g, &b2, rank, sh, extra, a);
      view_text(g, &w, ref, &b2, true);
      bput(g->out, "- store_compressed: {ref: \"%s\", value: %s, mask: %s}\n", w.s, n, mn);
      bfree(&w);
    }
  } else {
    gen_val(g, &x, a, 2);
    bput(g->out, "- %s: {ref: \"%s\", value: \"%s\", mask: %s}\n", c == 1 ? "store_compressed" : "addupdate_compressed", v.s, x.s, mn);
  }
  bfree(&v);
  bfree(&m);
  bfree(&x);
}

static void unit_masked(G *g, Unit *u) {
  Dtype d = pick_dtype(g, true);
  int64_t l[2] = {2, g->L};
  Ty a = g->layout && g->level == 0 && rp(R(g), 20) ? ty_make(d, 2, l) : ty_make(d, 1, l + 1);
  int64_t sh[4];
  int extra, rank = ref_for(g, &a, sh, &extra);
  char r[NAME_LEN], mref[NAME_LEN];
  refname(g, r, 'a');
  refname(g, mref, 'm');
  decl_init(g, r, "vmem", d, rank, sh);
  /* masks kept in memory are int32 0 / 1: Mosaic holds a bool VMEM ref as
   * i32 and cannot vector-load it as i1 (M-VL5) */
  bool use_mref = rp(R(g), 50) && g->layout;
  if (use_mref) decl(g, mref, "vmem", DT_INT32, a.rank, a.sh, "{random: 7, low: 0, high: 1}");
  steps_for(g, u, 1, 4);
  for (int s = 0; s < u->nsteps; s++) {
    step_begin(g, u, s);
    masked_step(g, r, rank, sh, extra, &a, use_mref ? mref : NULL);
  }
}

/* ---- unit gather: load_gather / store_scatter / addupdate_scatter ------- */
/* An int32 index vector of n lanes with values in [0, dim). */
static void index_vec(G *g, Buf *o, int64_t n, int64_t dim) {
  if (n != g->L || rp(R(g), 20)) {
    bput(o, "[");
    for (int64_t i = 0; i < n; i++) bput(o, "%s%lld", i ? ", " : "", (long long)rr(R(g), 0, dim - 1));
    bput(o, "]");
    return;
  }
  Ty t = ty_make(DT_INT32, 1, &n);
  bput(o, "(");
  if (rp(R(g), 50)) bput(o, "iota(%d) * %lld + %lld", g->L, (long long)rr(R(g), 1, 9), (long long)rr(R(g), 0, 9));
  else gen_val(g, o, &t, 2);
  bput(o, ") %% %lld", (long long)dim);
}

static void gs_indices(G *g, Buf *o, int vrank, const int64_t *vsh, int64_t n) {
  bput(o, "[");
  for (int i = 0; i < vrank; i++) {
    bput(o, "%s\"", i ? ", " : "");
    index_vec(g, o, n, vsh[i]);
    bput(o, "\"");
  }
  bput(o, "]");
}

static void gs_mask(G *g, Buf *o, int64_t n) {
  if (n == g->L) {
    int64_t l = g->L;
    Ty m = ty_make(DT_BOOL, 1, &l);
    mask_val(g, o, &m, NULL);
    return;
  }
  bput(o, "[");
  for (int64_t i = 0; i < n; i++) bput(o, "%s%s", i ? ", " : "", rp(R(g), 50) ? "true" : "false");
  bput(o, "]");
}

/* The view a gather/scatter indexes: the ref, a row of it, or a slice. */
static void gs_view(G *g, Buf *o, const char *ref, int rank, const int64_t *sh, int *vrank, int64_t *vsh) {
  int c = (int)rr(R(g), 0, 2);
  if (rank == 2 && c == 0) {
    int64_t i;
    bool dyn;
    char e[96];
    idx_expr(g, e, sizeof e, sh[0], &i, &dyn);
    bput(o, "%s.at[%s]", ref, e);
    *vrank = 1;
    vsh[0] = sh[1];
    return;
  }
  if (rank == 1 && c == 1 && sh[0] > 2) {
    int64_t size = rr(R(g), 2, sh[0]), st;
    bool dyn;
    char e[96];
    idx_expr(g, e, sizeof e, sh[0] - size + 1, &st, &dyn);
    bput(o, "%s.at[pl.ds(%s, %lld)]", ref, e, (long long)size);
    *vrank = 1;
    vsh[0] = size;
    return;
  }
  bput(o, "%s", ref);
  *vrank = rank;
  memcpy(vsh, sh, sizeof(int64_t) * (size_t)rank);
}

/* store_scatter through a permutation of the lanes, then load_gather through
 * the same one: the gathered value must be the stored one. */
static void gs_roundtrip(G *g, const char *ref, Dtype d) {
  int64_t l = g->L;
  Ty t = ty_make(d, 1, &l);
  Buf x = {0};
  char n[NAME_LEN], p[128];
  gen_val(g, &x, &t, 2);
  snprintf(p, sizeof p, "(iota(%d) * %lld + %lld) %% %d", g->L, (long long)(2 * rr(R(g), 0, 4) + 1), (long long)rr(R(g), 0, 20), g->L);
  fresh(g, n, "g");
  bput(g->out, "- store_scatter: {ref: \"%s.at[pl.ds(0, %d)]\", indices: [\"%s\"], value: \"%s\"}\n", ref, g->L, p, x.s);
  bput(g->out, "- load_gather: {ref: \"%s.at[pl.ds(0, %d)]\", indices: [\"%s\"], out: %s}\n", ref, g->L, p, n);
  bput(g->out, "- expect: {value: %s, equals: \"%s\"}\n", n, x.s);
  bfree(&x);
}

static void gather_step(G *g, const char *ref, Dtype d, int rank, const int64_t *sh) {
  if (rank == 1 && sh[0] >= g->L && has(g, F_EXPECT) && rp(R(g), 25)) return gs_roundtrip(g, ref, d);
  Buf v = {0}, ix = {0}, m = {0}, x = {0};
  int vrank;
  int64_t vsh[4];
  gs_view(g, &v, ref, rank, sh, &vrank, vsh);
  int c = (int)rr(R(g), 0, 2);
  int64_t n = c == 0 || rp(R(g), 60) ? g->L : rr(R(g), 1, 2 * g->L);
  gs_indices(g, &ix, vrank, vsh, n);
  bool masked = rp(R(g), 40);
  if (masked) gs_mask(g, &m, n);
  char nm[NAME_LEN];
  if (c == 0) {
    fresh(g, nm, "g");
    bput(g->out, "- load_gather: {ref: \"%s\", indices: %s%s%s%s, out: %s}\n", v.s, ix.s, masked ? ", mask: \"" : "",
         masked ? m.s : "", masked ? "\"" : "", nm);
  } else {
    Ty t = ty_make(d, 1, &n);
    if (n == g->L) gen_val(g, &x, &t, 2);
    else val_leaf(g, &x, &t);
    bput(g->out, "- %s: {ref: \"%s\", indices: %s, value: \"%s\"%s%s%s}\n", c == 1 ? "store_scatter" : "addupdate_scatter",
         v.s, ix.s, x.s, masked ? ", mask: \"" : "", masked ? m.s : "", masked ? "\"" : "");
  }
  bfree(&v);
  bfree(&ix);
  bfree(&m);
  bfree(&x);
}

static void unit_gather(G *g, Unit *u) {
  Dtype d = rp(R(g), 70) ? DT_INT32 : DT_FLOAT32;
  int rank = (int)rr(R(g), 1, 2);
  int64_t sh[2] = {rank == 1 ? rr(R(g), g->L / 2, 3 * g->L) : rr(R(g), 1, 4), rr(R(g), 1, 2 * g->L)};
  if (g->level) sh[0] = rank == 1 ? g->L : 2, sh[1] = g->L;
  char r[NAME_LEN];
  refname(g, r, 'a');
  decl_init(g, r, "vmem", d, rank, sh);
  steps_for(g, u, 1, 4);
  for (int s = 0; s < u->nsteps; s++) {
    step_begin(g, u, s);
    gather_step(g, r, d, rank, sh);
  }
}

/* ---- unit dma: regular DMAs between local and shared refs --------------- */
/* A ref that holds a block of shape b: b's dims (with slack) in order, and
 * maybe extra dims (indexed by an integer) anywhere, which makes the view
 * strided in memory. */
typedef struct {
  char name[NAME_LEN];
  bool shared_row;  /* the first dim is the subcore's own row */
  bool iota;        /* iota init and never written */
  int rank;
  int64_t sh[4];
  bool sl[4];
  int64_t size[4];
} Cont;

static void cont_make(G *g, Cont *c, const Ty *b, int64_t rows) {
  int extra = g->level ? 0 : (int)rr(R(g), 0, 3 - b->rank);
  int at = c->shared_row ? 1 : 0, k = 0;
  if (c->shared_row) c->sh[0] = rows, c->sl[0] = false;
  c->rank = at + b->rank + extra;
  for (int d = at; d < c->rank; d++) {
    bool slice = k < b->rank && (extra == 0 || rp(R(g), 50) || c->rank - d == b->rank - k);
    if (slice) {
      c->sl[d] = true;
      c->size[d] = b->sh[k++];
      c->sh[d] = c->size[d] + (g->level ? 0 : rr(R(g), 0, 2));
    } else {
      c->sl[d] = false;
      c->sh[d] = rr(R(g), 1, 3);
      extra--;
    }
  }
}

static void cont_view(G *g, Buf *o, const Cont *c, bool hbm) {
  Blk b;
  blk_make(g, &b, c->rank, c->sh, c->sl, c->size);
  if (c->shared_row) {
    char row[64];
    ent_fixed(&b.e[0], own_row(g, hbm, row, sizeof row));
  }
  view_text(g, o, c->name, &b, false);
}

/* The iota table's block as a literal, when every entry is static. */
static bool cont_known(const Cont *c, const Blk *b, Buf *o) {
  int64_t idx[4] = {0}, stride[4], n = 1;
  for (int d = c->rank - 1; d >= 0; d--) stride[d] = n, n *= c->sh[d];
  for (int d = 0; d < c->rank; d++)
    if (b->e[d].dyn) return false;
  int srank = 0;
  int64_t ssz[4];
  for (int d = 0; d < c->rank; d++)
    if (!b->e[d].is_int) ssz[srank++] = b->e[d].size;
  int64_t total = nelems(srank, ssz);
  bput(o, srank == 2 ? "[[" : "[");
  for (int64_t i = 0; i < total; i++) {
    int64_t rem = i, flat = 0;
    for (int k = srank - 1; k >= 0; k--) idx[k] = rem % ssz[k], rem /= ssz[k];
    for (int d = 0, k = 0; d < c->rank; d++) flat += (b->e[d].is_int ? b->e[d].st : b->e[d].st + idx[k++]) * stride[d];
    if (i && srank == 2 && i % ssz[1] == 0) bput(o, "], [");
    else if (i) bput(o, ", ");
    bput(o, "%lld", (long long)flat);
  }
  bput(o, srank == 2 ? "]]" : "]");
  return true;
}

static void dma_copy(G *g, const char *src, const char *dst, const char *sem) {
  if (!has(g, F_ASYNC) || rp(R(g), 40)) {
    bput(g->out, "- sync_copy: {src: \"%s\", dst: \"%s\"}\n", src, dst);
    return;
  }
  char d[NAME_LEN];
  fresh(g, d, "d");
  bput(g->out, "- async_copy: {src: \"%s\", dst: \"%s\", sem: \"%s\"%s, out: %s}\n", src, dst, sem, rp(R(g), 20) ? ", priority: 1" : "", d);
  if (rp(R(g), 70)) bput(g->out, "- wait: %s\n", d);
  else bput(g->out, "- wait: {src: \"%s\", dst: \"%s\", sem: \"%s\"}\n", src, dst, sem);
}

typedef struct {
  Cont h, t, v, w;
  bool hbm, thbm, vvmem;
  char sem[NAME_LEN + 8];
  Dtype d;
} DmaUnit;

/* A copy of table t into local v, checked when the block is known. */
static void dma_from_table(G *g, DmaUnit *m) {
  Blk b;
  Buf s = {0}, dv = {0}, lit_ = {0};
  blk_make(g, &b, m->t.rank, m->t.sh, m->t.sl, m->t.size);
  view_text(g, &s, m->t.name, &b, false);
  cont_view(g, &dv, &m->v, false);
  dma_copy(g, s.s, dv.s, m->sem);
  if (has(g, F_EXPECT) && (m->d == DT_INT32 || m->d == DT_FLOAT32) && cont_known(&m->t, &b, &lit_))
    bput(g->out, "- expect: {ref: \"%s\", equals: %s}\n", dv.s, lit_.s);
  bfree(&s);
  bfree(&dv);
  bfree(&lit_);
}

/* Two copies in flight on one semaphore, their sources read meanwhile (not
 * a race, SPEC 7.10), waited in either order. */
static void dma_two(G *g, DmaUnit *m) {
  Blk t;
  Buf a = {0}, b = {0}, c = {0}, d = {0};
  char da[NAME_LEN], db[NAME_LEN];
  blk_make(g, &t, m->t.rank, m->t.sh, m->t.sl, m->t.size);
  cont_view(g, &a, &m->v, false);
  cont_view(g, &b, &m->h, m->hbm);
  view_text(g, &c, m->t.name, &t, false);
  cont_view(g, &d, &m->w, false);
  fresh(g, da, "d");
  fresh(g, db, "d");
  bput(g->out, "- async_copy: {src: \"%s\", dst: \"%s\", sem: \"%s\", out: %s}\n", a.s, b.s, m->sem, da);
  bput(g->out, "- async_copy: {src: \"%s\", dst: \"%s\", sem: \"%s\", out: %s}\n", c.s, d.s, m->sem, db);
  if (m->vvmem && g->layout && m->v.rank == 1 && rp(R(g), 60)) {
    char n[NAME_LEN];
    fresh(g, n, "n");
    bput(g->out, "- get: {ref: \"%s\", out: %s}\n", a.s, n);
  }
  bool ab = rp(R(g), 50);
  bput(g->out, "- wait: %s\n- wait: %s\n", ab ? da : db, ab ? db : da);
  bfree(&a);
  bfree(&b);
  bfree(&c);
  bfree(&d);
}

static void dma_step(G *g, DmaUnit *m) {
  Buf a = {0}, b = {0}, c = {0}, d = {0};
  int k = (int)rr(R(g), 0, 6);
  if (k == 6 && has(g, F_ASYNC)) return dma_two(g, m);
  if (k == 0) dma_from_table(g, m);
  if (k == 1 || k == 2) {
    cont_view(g, &a, &m->v, false);
    cont_view(g, &b, &m->h, m->hbm);
    if (k == 1) dma_copy(g, a.s, b.s, m->sem);
    else dma_copy(g, b.s, a.s, m->sem);
  } else if (k == 3) {
    cont_view(g, &a, &m->v, false);
    cont_view(g, &b, &m->w, false);
    dma_copy(g, a.s, b.s, m->sem);
  } else if (k == 4) {
    Blk t;
    blk_make(g, &t, m->t.rank, m->t.sh, m->t.sl, m->t.size);
    view_text(g, &a, m->t.name, &t, false);
    cont_view(g, &b, &m->h, m->hbm);
    dma_copy(g, a.s, b.s, m->sem);
  } else if (k == 5) { /* two copies at once: a pytree sync_copy */
    Blk t;
    blk_make(g, &t, m->t.rank, m->t.sh, m->t.sl, m->t.size);
    cont_view(g, &a, &m->v, false);
    cont_view(g, &b, &m->h, m->hbm);
    view_text(g, &c, m->t.name, &t, false);
    cont_view(g, &d, &m->w, false);
    bput(g->out, "- sync_copy: {src: [\"%s\", \"%s\"], dst: [\"%s\", \"%s\"]}\n", a.s, c.s, b.s, d.s);
  }
  bfree(&a);
  bfree(&b);
  bfree(&c);
  bfree(&d);
}

static void unit_dma(G *g, Unit *u) {
  DmaUnit m;
  memset(&m, 0, sizeof m);
  m.d = pick_dtype(g, false);
  if (m.d == DT_BOOL) m.d = DT_UINT8; /* the copies are read back with vector loads (M-VL5) */
  int64_t bs[2] = {rr(R(g), 1, g->L), rr(R(g), 1, g->L)};
  Ty b = ty_make(m.d, g->level ? 1 : (int)rr(R(g), 1, 2), bs);
  bool smem = g->scalar || rp(R(g), 25);
  m.vvmem = !smem;
  m.hbm = rp(R(g), 60);
  m.thbm = rp(R(g), 60);
  m.h.shared_row = true;
  refname(g, m.h.name, 'h');
  refname(g, m.t.name, 't');
  refname(g, m.v.name, 'v');
  refname(g, m.w.name, 'w');
  cont_make(g, &m.h, &b, shared_rows(g, m.hbm));
  cont_make(g, &m.t, &b, 0);
  cont_make(g, &m.v, &b, 0);
  cont_make(g, &m.w, &b, 0);
  decl_init(g, m.h.name, m.hbm ? "hbm" : "vmem_shared", m.d, m.h.rank, m.h.sh);
  decl(g, m.t.name, m.thbm ? "hbm" : "vmem_shared", m.d, m.t.rank, m.t.sh, "iota");
  decl_init(g, m.v.name, smem ? "smem" : "vmem", m.d, m.v.rank, m.v.sh);
  decl_init(g, m.w.name, smem || rp(R(g), 20) ? "smem" : "vmem", m.d, m.w.rank, m.w.sh);
  char sem[NAME_LEN];
  refname(g, sem, 's');
  bool arr = rp(R(g), 30);
  decl_sem(g, sem, "dma", arr ? 2 : 1);
  if (arr) snprintf(m.sem, sizeof m.sem, "%s.at[%d]", sem, (int)rr(R(g), 0, 1));
  else snprintf(m.sem, sizeof m.sem, "%s", sem);
  steps_for(g, u, 1, 5);
  for (int s = 0; s < u->nsteps; s++) {
    step_begin(g, u, s);
    dma_step(g, &m);
  }
}

/* ---- unit idma: DMA gathers and scatters with offsets -------------------- */
typedef struct {
  char t[NAME_LEN], dg[NAME_LEN], ix[NAME_LEN], sv[NAME_LEN], hs[NAME_LEN], sem[NAME_LEN];
  bool thbm, hhbm;
  Dtype d;
  int64_t Z, Wt, w, O, ixlen, dgrows;
  int64_t ixv[24];
} Idma;

/* The offsets: the index ref, a view of it, or a vector value, maybe in a
 * plsc.Indices filter.  off[] gets their values. */
/* dn gets the name of a traced count n when the offsets are idx.at[pl.ds(n)]
 * (empty otherwise): the other side of the copy then takes pl.ds(n) too, as
 * Mosaic wants the offsets' (dynamic) shape to match it. */
static void idma_offsets(G *g, const Idma *m, Buf *o, int64_t *off, bool *filtered, bool *vec, char *dn) {
  Buf x = {0};
  dn[0] = '\0';
  int c = (int)rr(R(g), 0, 2);
  *vec = m->O == g->L && c == 2;
  if (m->O == g->L && c == 2) {
    int64_t a = rr(R(g), 1, 9), b = rr(R(g), 0, 9);
    bput(&x, "(iota(%d) * %lld + %lld) %% %lld", g->L, (long long)a, (long long)b, (long long)m->Z);
    for (int64_t i = 0; i < m->O; i++) off[i] = (i * a + b) % m->Z;
  } else if (m->ixlen == m->O && c == 0) {
    bput(&x, "%s", m->ix);
    memcpy(off, m->ixv, sizeof(int64_t) * (size_t)m->O);
  } else {
    int64_t s = rr(R(g), 0, m->ixlen - m->O);
    if (s == 0 && has(g, F_DYN) && rp(R(g), 50)) { /* pl.ds(n), n a traced name: pl.ds(0, n) (SPEC §10.4) */
      fresh(g, dn, "n");
      bput(g->out, "- let: {name: %s, value: %lld}\n", dn, (long long)m->O);
      bput(&x, "%s.at[pl.ds(%s)]", m->ix, dn);
    } else {
      bput(&x, "%s.at[pl.ds(%lld, %lld)]", m->ix, (long long)s, (long long)m->O);
    }
    memcpy(off, m->ixv + s, sizeof(int64_t) * (size_t)m->O);
  }
  *filtered = rp(R(g), 20);
  if (*filtered) bput(o, "plsc.Indices(%s, ignored_value=%lld)", x.s, (long long)rr(R(g), 0, m->Z - 1));
  else bput(o, "%s", x.s);
  bfree(&x);
}

static void idma_copy(G *g, const Idma *m, const char *src, const char *dst, bool add) {
  if (!has(g, F_ASYNC) || rp(R(g), 40)) {
    bput(g->out, "- sync_copy: {src: \"%s\", dst: \"%s\"%s}\n", src, dst, add ? ", add: true" : "");
    return;
  }
  char d[NAME_LEN];
  fresh(g, d, "d");
  bput(g->out, "- async_copy: {src: \"%s\", dst: \"%s\", sem: %s%s, out: %s}\n", src, dst, m->sem, add ? ", add: true" : "", d);
  bput(g->out, "- wait: %s\n", d);
}

static void idma_minor(G *g, const Idma *m, Buf *o, int64_t *s) {
  *s = rr(R(g), 0, m->Wt - m->w);
  if (m->Wt != m->w || rp(R(g), 20)) bput(o, ", pl.ds(%lld, %lld)", (long long)*s, (long long)m->w);
}

static void idma_gather(G *g, const Idma *m) {
  Buf off = {0}, src = {0}, dst = {0};
  int64_t o[24], s;
  bool filtered, vec, add = rp(R(g), 25);
  char dn[NAME_LEN];
  idma_offsets(g, m, &off, o, &filtered, &vec, dn);
  bput(&src, "%s.at[%s", m->t, off.s);
  idma_minor(g, m, &src, &s);
  bput(&src, "]");
  if (dn[0]) bput(&dst, "%s.at[pl.ds(%s)]", m->dg, dn);
  else if (m->dgrows == m->O && rp(R(g), 60)) bput(&dst, "%s", m->dg);
  else bput(&dst, "%s.at[pl.ds(%lld, %lld)]", m->dg, (long long)rr(R(g), 0, m->dgrows - m->O), (long long)m->O);
  idma_copy(g, m, src.s, dst.s, add);
  if (has(g, F_EXPECT) && !filtered && !add && (m->d == DT_INT32 || m->d == DT_FLOAT32)) {
    char sv[NAME_LEN + 32]; /* a static view: expect compares shapes, and pl.ds(n)'s is dynamic */
    snprintf(sv, sizeof sv, "%s.at[pl.ds(0, %lld)]", m->dg, (long long)m->O);
    bput(g->out, "- expect: {ref: \"%s\", equals: [", dn[0] ? sv : dst.s);
    for (int64_t i = 0; i < m->O; i++) {
      bput(g->out, "%s[", i ? ", " : "");
      for (int64_t j = 0; j < m->w; j++) bput(g->out, "%s%lld", j ? ", " : "", (long long)(o[i] * m->Wt + s + j));
      bput(g->out, "]");
    }
    bput(g->out, "]}\n");
  }
  bfree(&off);
  bfree(&src);
  bfree(&dst);
}

static void idma_scatter(G *g, const Idma *m) {
  Buf off = {0}, dst = {0};
  int64_t o[24], s;
  bool filtered, vec, add = rp(R(g), 30);
  char row[64], dn[NAME_LEN], src[NAME_LEN + 24];
  idma_offsets(g, m, &off, o, &filtered, &vec, dn);
  if (dn[0]) snprintf(src, sizeof src, "%s.at[pl.ds(%s)]", m->sv, dn);
  else snprintf(src, sizeof src, "%s", m->sv);
  /* x.at[row, v] (an integer beside an index vector, SPEC §8.7) is U1 on
   * jax 0.10.2 (its broadcast_to has no SparseCore lowering): x.at[row].at[v] */
  if (vec && !filtered) (void)rp(R(g), 50); /* the draw that chose it: later streams stay as they were */
  bput(&dst, "%s.at[%s].at[%s", m->hs, own_row(g, m->hhbm, row, sizeof row), off.s);
  idma_minor(g, m, &dst, &s);
  bput(&dst, "]");
  idma_copy(g, m, src, dst.s, add);
  bfree(&off);
  bfree(&dst);
}

static void unit_idma(G *g, Unit *u) {
  Idma m;
  memset(&m, 0, sizeof m);
  m.d = pick_dtype(g, false);
  if (m.d == DT_BOOL) m.d = DT_UINT8; /* the copies are read back with vector loads (M-VL5) */
  m.Z = rr(R(g), 2, 8);
  m.w = rr(R(g), 1, g->level ? 2 : g->L);
  m.Wt = m.w + (g->level ? 0 : rr(R(g), 0, 2));
  m.O = rp(R(g), 30) ? g->L : rr(R(g), 1, 6);
  m.ixlen = m.O + (rp(R(g), 50) ? 0 : rr(R(g), 1, 3));
  if (m.ixlen > 24) m.ixlen = m.O;
  m.dgrows = m.O + (g->level || rp(R(g), 50) ? 0 : rr(R(g), 1, 2));
  m.thbm = rp(R(g), 60);
  m.hhbm = rp(R(g), 60);
  refname(g, m.t, 't');
  refname(g, m.dg, 'g');
  refname(g, m.ix, 'i');
  refname(g, m.sv, 'v');
  refname(g, m.hs, 'h');
  refname(g, m.sem, 's');
  int64_t tsh[2] = {m.Z, m.Wt}, gsh[2] = {m.dgrows, m.w}, vsh[2] = {m.O, m.w};
  int64_t hsh[3] = {shared_rows(g, m.hhbm), m.Z, m.Wt};
  decl(g, m.t, m.thbm ? "hbm" : "vmem_shared", m.d, 2, tsh, "iota");
  decl_init(g, m.dg, "vmem", m.d, 2, gsh);
  Buf il = {0};
  bput(&il, "[");
  for (int64_t i = 0; i < m.ixlen; i++) bput(&il, "%s%lld", i ? ", " : "", (long long)(m.ixv[i] = rr(R(g), 0, m.Z - 1)));
  bput(&il, "]");
  decl(g, m.ix, "vmem", DT_INT32, 1, &m.ixlen, il.s);
  bfree(&il);
  decl_init(g, m.sv, "vmem", m.d, 2, vsh);
  decl_init(g, m.hs, m.hhbm ? "hbm" : "vmem_shared", m.d, 3, hsh);
  decl_sem(g, m.sem, "dma", 1);
  steps_for(g, u, 1, 4);
  for (int s = 0; s < u->nsteps; s++) {
    step_begin(g, u, s);
    if (rp(R(g), 55)) idma_gather(g, &m);
    else idma_scatter(g, &m);
  }
}

/* ---- unit smem: scalar loads and stores ---------------------------------- */
/* k / 2^m rounded to `bits` significant bits, ties to even: what a store of
 * the literal into a bfloat16 (8 bits) or float16 (11 bits) ref keeps.
 * Computed on the integer k, independently of memory/dtype.c. */
static double round_sig(int64_t k, int m, int bits) {
  int w = 0;
  while ((k >> w) > 0) w++;
  int shift = w - bits;
  if (shift > 0) {
    int64_t q = k >> shift, rem = k & ((1LL << shift) - 1), half = 1LL << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    k = q << shift;
  }
  return ldexp((double)k, -m);
}

/* %.17g, with a decimal point so that the literal is a float. */
static void float_text(char *buf, size_t n, double x) {
  snprintf(buf, n, "%.17g", x);
  if (!strpbrk(buf, ".en")) snprintf(buf + strlen(buf), n - strlen(buf), ".0");
}

/* Literals whose text the shortest-repr printer (SPEC §10.5) gets wrong
 * when it prints for the narrow dtype: k / 2^m, written several ways. */
static const struct {
  const char *text;
  int64_t k;
  int m;
} tricky_floats[] = {
    {"528.0", 528, 0},        {"5.28e2", 528, 0},       {"1.0078125", 129, 7},   {"65504.0", 65504, 0},
    {"6.5504e+4", 65504, 0},  {"10.0", 10, 0},          {"1e1", 10, 0},          {"0.0001220703125", 1, 13},
    {"1.220703125e-4", 1, 13}, {"-3.0517578125e-05", -1, 15}, {"2.5e-1", 1, 2}, {"-0.0078125", -1, 7},
};

/* k / 2^m as d keeps it (k may be negative). */
static double keep_as(Dtype d, int64_t k, int m) {
  int64_t a = k < 0 ? -k : k;
  double x = d == DT_FLOAT32 || d == DT_FLOAT64 ? ldexp((double)a, -m) : round_sig(a, m, d == DT_BFLOAT16 ? 8 : 11);
  return k < 0 ? -x : x;
}

static void smem_literal(G *g, Dtype d, const char *view) {
  char v[64], e[64];
  if (dtype_is_float(d) && rp(R(g), 30)) {
    int i = (int)rr(R(g), 0, (int64_t)(sizeof tricky_floats / sizeof tricky_floats[0]) - 1);
    snprintf(v, sizeof v, "%s", tricky_floats[i].text);
    float_text(e, sizeof e, keep_as(d, tricky_floats[i].k, tricky_floats[i].m));
  } else if (dtype_is_float(d)) {
    int64_t k = rr(R(g), 257, 4095);
    int m = (int)rr(R(g), 8, 11);
    float_text(v, sizeof v, ldexp((double)k, -m));
    float_text(e, sizeof e, d == DT_FLOAT32 ? ldexp((double)k, -m) : round_sig(k, m, d == DT_BFLOAT16 ? 8 : 11));
  } else {
    Buf b = {0};
    lit(g, &b, d);
    snprintf(v, sizeof v, "%s", b.s);
    snprintf(e, sizeof e, "%s", b.s);
    bfree(&b);
  }
  bput(g->out, "- set: {ref: \"%s\", value: %s}\n", view, v);
  if (has(g, F_EXPECT)) bput(g->out, "- expect: {ref: \"%s\", equals: %s}\n", view, e);
}

static void scalar_view(G *g, Buf *o, const char *ref, int rank, const int64_t *sh) {
  Blk b;
  bool sl[4] = {false};
  int64_t sz[4] = {0};
  blk_make(g, &b, rank, sh, sl, sz);
  view_text(g, o, ref, &b, false);
}

static void smem_step(G *g, const char *ref, Dtype d, int rank, const int64_t *sh) {
  Buf v = {0}, w = {0}, x = {0};
  Ty t = ty_make(d, 0, sh);
  char n[NAME_LEN];
  scalar_view(g, &v, ref, rank, sh);
  int c = (int)rr(R(g), 0, 3);
  if (c == 3 && (!g->lv || d == DT_BOOL)) c = 1;
  if (c == 0) {
    fresh(g, n, "s");
    bput(g->out, "- get: {ref: \"%s\", out: %s}\n", v.s, n);
    add_name(g, n, &t);
    scalar_view(g, &w, ref, rank, sh);
    gen_val(g, &x, &t, 2);
    bput(g->out, "- set: {ref: \"%s\", value: \"%s\"}\n", w.s, x.s);
  } else if (c == 1) {
    smem_literal(g, d, v.s);
  } else if (c == 2) {
    fresh(g, n, "o");
    gen_val(g, &x, &t, 2);
    bput(g->out, "- swap: {ref: \"%s\", value: \"%s\", out: %s}\n", v.s, x.s, n);
    if (rp(R(g), 50)) bput(g->out, "- swap: {ref: \"%s\", value: %s}\n", v.s, n);
  } else {
    fresh(g, n, "a");
    bput(g->out, "- get: {ref: \"%s\", out: %s}\n", v.s, n);
    /* Python rebinding (SPEC §10.3): the rest of the iteration sees the new
     * value (still >= 0, so `i % n` indices stay in range), the next
     * iteration takes its value from the range again. */
    if (rp(R(g), 40)) bput(g->out, "- let: {name: %s, value: \"%s + %lld\"}\n", g->lv, g->lv, (long long)rr(R(g), 1, 5));
    bput(g->out, "- set: {ref: \"%s\", value: \"%s + %s\"}\n", v.s, n, g->lv);
  }
  bfree(&v);
  bfree(&w);
  bfree(&x);
}

static void unit_smem(G *g, Unit *u) {
  Dtype d = pick_dtype(g, false);
  if (d == DT_BOOL) d = DT_INT32; /* a computed bool cannot be stored in SMEM (M-ST1) */
  int rank = (int)rr(R(g), 1, 2);
  int64_t sh[2] = {rr(R(g), 1, 6), rr(R(g), 1, 6)};
  char r[NAME_LEN];
  refname(g, r, 'a');
  decl_init(g, r, "smem", d, rank, sh);
  steps_for(g, u, 1, 5);
  for (int s = 0; s < u->nsteps; s++) {
    step_begin(g, u, s);
    smem_step(g, r, d, rank, sh);
  }
}

/* ---- unit faa: fetch_and_add, a barrier, then every subcore's counters -- */
typedef struct {
  int k, vpat, tpat;
  int64_t c;
} Faa;

static int64_t faa_value(const Faa *f, int s) { return f->vpat == 0 ? f->c : f->vpat == 1 ? s + f->c : s * f->c; }

static int faa_target(const Faa *f, int s, int S) {
  return f->tpat == 0 ? s : f->tpat == 1 ? (s + 1) % S : f->tpat == 2 ? 0 : S - 1 - s;
}

static void faa_text(G *g, const Faa *f, char *v, char *t) {
  if (f->vpat == 0) sprintf(v, "%lld", (long long)f->c);
  else sprintf(v, f->vpat == 1 ? "subcore + %lld" : "subcore * %lld", (long long)f->c);
  if (f->tpat == 0) sprintf(t, "subcore");
  else if (f->tpat == 1) sprintf(t, "(subcore + 1) %% %d", g->S);
  else if (f->tpat == 2) sprintf(t, "0");
  else sprintf(t, "%d - subcore", g->S - 1);
}

/* The last step: a barrier, then every subcore reads its counters, whose
 * sums the generator knows whatever the order of the adds. */
static void faa_reads(G *g, const char *r, const Faa *f, int nfa, int K, int64_t init, const int *uses) {
  bput(g->out, "- barrier: {}\n");
  for (int k = 0; k < K; k++) {
    if (!uses[k]) continue;
    char n[NAME_LEN], view[64];
    char (*exp)[512] = calloc((size_t)(g->C * g->S), 512);
    fresh(g, n, "c");
    snprintf(view, sizeof view, "%s[%d]", r, k);
    bput(g->out, "- get: {ref: \"%s\", out: %s}\n", view, n);
    for (int i = 0; i < g->C * g->S; i++) {
      int64_t sum = init;
      for (int j = 0; j < nfa; j++)
        for (int s = 0; s < g->S; s++)
          if (f[j].k == k && faa_target(&f[j], s, g->S) == i % g->S) sum += faa_value(&f[j], s);
      snprintf(exp[i], 512, "%lld", (long long)sum);
    }
    if (has(g, F_EXPECT)) expect_per_instance(g, "value", n, exp);
    free(exp);
  }
}

static void unit_faa(G *g, Unit *u) {
  int K = (int)rr(R(g), 1, 3), nfa = (int)rr(R(g), 1, 3);
  int64_t init = rr(R(g), 0, 50), k64 = K;
  char r[NAME_LEN], buf[32];
  refname(g, r, 'c');
  snprintf(buf, sizeof buf, "%lld", (long long)init);
  Faa f[3];
  int uses[3] = {0};
  for (int i = 0; i < nfa; i++) {
    f[i] = (Faa){(int)rr(R(g), 0, K - 1), (int)rr(R(g), 0, 2), (int)rr(R(g), 0, 3), rr(R(g), 1, 9)};
    if (f[i].k >= K) K = f[i].k + 1, k64 = K;
    uses[f[i].k]++;
  }
  decl(g, r, "smem", DT_INT32, 1, &k64, buf);
  u->nsteps = nfa + 1; /* one step per fetch_and_add, then the barrier and the reads */
  for (int i = 0; i < nfa; i++) {
    char v[64], t[64], o[NAME_LEN];
    step_begin(g, u, i);
    faa_text(g, &f[i], v, t);
    fresh(g, o, "f");
    bput(g->out, "- fetch_and_add: {ref: \"%s.at[%d]\", value: \"%s\", subcore: \"%s\", out: %s}\n", r, f[i].k, v, t, o);
    bool bijective = f[i].tpat != 2 || g->S == 1;
    if (has(g, F_EXPECT) && uses[f[i].k] == 1 && bijective) bput(g->out, "- expect: {value: %s, equals: %lld}\n", o, (long long)init);
  }
  step_begin(g, u, nfa);
  faa_reads(g, r, f, nfa, K, init, uses);
}

/* ---- unit sem: regular semaphores, signalled and waited back to zero ---- */
/* `shared`: every subcore names the same semaphore (else only the self
 * pattern is safe). */
static void sem_step(G *g, const char *sem, bool shared) {
  int c = (int)rr(R(g), 0, 3);
  int64_t a = rr(R(g), 1, 4);
  if (!shared) c = 0;
  if (c == 1 && g->S > 1) {
    bput(g->out, "- semaphore_signal: {sem: \"%s\", subcore: \"(subcore + 1) %% %d\"}\n", sem, g->S);
    bput(g->out, "- semaphore_wait: {sem: \"%s\"}\n", sem);
  } else if (c == 2 && g->C > 1) {
    bput(g->out, "- semaphore_signal: {sem: \"%s\", inc: %lld, core: \"(core + 1) %% %d\", subcore: subcore}\n", sem, (long long)a, g->C);
    bput(g->out, "- semaphore_wait: {sem: \"%s\", value: %lld}\n", sem, (long long)a);
  } else if (c == 3 && g->S > 1) {
    bput(g->out, "- semaphore_signal: {sem: \"%s\", subcore: 0}\n", sem);
    bput(g->out, "- when:\n    cond: \"subcore == 0\"\n    body:\n      - semaphore_wait: {sem: \"%s\", value: %d}\n", sem, g->S);
  } else if (rp(R(g), 20)) { /* up to int32's top exactly: no fault (the injection "semaphore" goes past
                              * it), on a semaphore of its own: a signal from another step could
                              * otherwise come in between, and whether it did depends on the schedule */
    int64_t b = rr(R(g), 1, 1000);
    char own[NAME_LEN];
    fresh(g, own, "t");
    decl_sem(g, own, "regular", 1);
    sem = own;
    bput(g->out, "- semaphore_signal: {sem: \"%s\", inc: %lld}\n", sem, (long long)(2147483647 - b));
    bput(g->out, "- semaphore_signal: {sem: \"%s\", inc: %lld}\n", sem, (long long)b);
    bput(g->out, "- semaphore_wait: {sem: \"%s\", value: 2147483647}\n", sem);
  } else {
    int64_t b = rr(R(g), 0, a);
    bput(g->out, "- semaphore_signal: {sem: \"%s\", inc: %lld}\n", sem, (long long)a);
    if (b) bput(g->out, "- semaphore_wait: {sem: \"%s\", value: %lld}\n", sem, (long long)b);
    if (a - b) bput(g->out, "- semaphore_wait: {sem: \"%s\", value: %lld}\n", sem, (long long)(a - b));
  }
}

static void unit_sem(G *g, Unit *u) {
  char s[NAME_LEN], v[NAME_LEN + 24];
  refname(g, s, 's');
  bool arr = rp(R(g), 30);
  decl_sem(g, s, "regular", arr ? 2 : 1);
  steps_for(g, u, 1, 3);
  for (int i = 0; i < u->nsteps; i++) {
    step_begin(g, u, i);
    int j = (int)rr(R(g), 0, 2);
    if (arr && j < 2) snprintf(v, sizeof v, "%s.at[%d]", s, j);
    else if (arr) snprintf(v, sizeof v, "%s.at[subcore %% 2]", s);
    else snprintf(v, sizeof v, "%s", s);
    sem_step(g, v, !arr || j < 2);
  }
}

/* ---- unit exch: write my row, synchronise, read my neighbour's ---------- */
/* Rows go round a ring of N instances: instance r reads the row of r + 1,
 * so the writer of a row tells r - 1 that it is there.  N is the core's
 * subcores (a barrier or a signal within the core) or the whole mesh. */
static void exch_sync(G *g, bool barrier, const char *sem, int N) {
  if (barrier) {
    bput(g->out, "- barrier: {}\n");
    return;
  }
  if (N == g->S)
    bput(g->out, "- semaphore_signal: {sem: %s, subcore: \"(subcore + %d) %% %d\"}\n", sem, g->S - 1, g->S);
  else
    bput(g->out,
         "- semaphore_signal: {sem: %s, core: \"((core * %d + subcore + %d) %% %d) // %d\", "
         "subcore: \"((core * %d + subcore + %d) %% %d) %% %d\"}\n",
         sem, g->S, N - 1, N, g->S, g->S, N - 1, N, g->S);
  bput(g->out, "- semaphore_wait: {sem: %s}\n", sem);
}

static void unit_exch(G *g, Unit *u) {
  bool hbm = rp(R(g), 50), barrier = !g->scalar && rp(R(g), 50);
  bool local_vmem = !g->scalar && rp(R(g), 70);
  int64_t W = local_vmem ? g->L : rr(R(g), 1, 3);
  int N = hbm && !barrier ? g->C * g->S : g->S;
  char x[NAME_LEN], a[NAME_LEN], b[NAME_LEN], s[NAME_LEN], nb[160], rd[160], row[64];
  refname(g, x, 'x');
  refname(g, a, 'a');
  refname(g, b, 'b');
  refname(g, s, 's');
  int64_t xs[2] = {shared_rows(g, hbm), W};
  decl(g, x, hbm ? "hbm" : "vmem_shared", DT_INT32, 2, xs, "zeros");
  decl(g, a, local_vmem ? "vmem" : "smem", DT_INT32, 1, &W, "zeros");
  decl(g, b, local_vmem ? "vmem" : "smem", DT_INT32, 1, &W, "zeros");
  if (!barrier) decl_sem(g, s, "regular", 1);
  if (N == g->S) snprintf(nb, sizeof nb, "core * %d + (subcore + 1) %% %d", g->S, g->S);
  else snprintf(nb, sizeof nb, "(core * %d + subcore + 1) %% %d", g->S, N);
  if (hbm) snprintf(rd, sizeof rd, "%s", nb);
  else snprintf(rd, sizeof rd, "(subcore + 1) %% %d", g->S);
  u->nsteps = 1;
  step_begin(g, u, 0);
  if (local_vmem) bput(g->out, "- set: {ref: \"%s[...]\", value: \"iota(%d) + (core * %d + subcore) * 100\"}\n", a, g->L, g->S);
  else
    for (int64_t j = 0; j < W; j++)
      bput(g->out, "- set: {ref: \"%s[%lld]\", value: \"(core * %d + subcore) * 100 + %lld\"}\n", a, (long long)j, g->S, (long long)j);
  bput(g->out, "- sync_copy: {src: %s, dst: \"%s.at[%s]\"}\n", a, x, hbm ? own_row(g, true, row, sizeof row) : "subcore");
  exch_sync(g, barrier, s, N);
  bput(g->out, "- sync_copy: {src: \"%s.at[%s]\", dst: %s}\n", x, rd, b);
  if (!has(g, F_EXPECT)) return;
  if (local_vmem) bput(g->out, "- expect: {ref: \"%s[...]\", equals: \"iota(%d) + (%s) * 100\"}\n", b, g->L, nb);
  else
    for (int64_t j = 0; j < W; j++)
      bput(g->out, "- expect: {ref: \"%s[%lld]\", equals: \"(%s) * 100 + %lld\"}\n", b, (long long)j, nb, (long long)j);
}

/* ---- unit arith: integer expressions the generator evaluates itself ------ */
/* Two's complement wrap to d (bool: 0 or 1); its own code, not dtype.c's. */
static int64_t wrap_to(Dtype d, uint64_t v) {
  int bits = dtype_bits(d);
  if (d == DT_BOOL) return v != 0;
  if (bits >= 64) return (int64_t)v;
  uint64_t m = (1ULL << bits) - 1, x = v & m;
  if (dtype_kind(d) == DK_UINT) return (int64_t)x;
  return (x >> (bits - 1)) ? (int64_t)(x | ~m) : (int64_t)x;
}

static int64_t floordiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
static int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

/* One arithmetic operation on lane values of dtype d. */
static int64_t ar_apply(Dtype d, const char *op, int64_t a, int64_t b) {
  int bits = dtype_bits(d);
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  if (!strcmp(op, "+")) return wrap_to(d, ua + ub);
  if (!strcmp(op, "-")) return wrap_to(d, ua - ub);
  if (!strcmp(op, "*")) return wrap_to(d, ua * ub);
  if (!strcmp(op, "&")) return wrap_to(d, ua & ub);
  if (!strcmp(op, "|")) return wrap_to(d, ua | ub);
  if (!strcmp(op, "^")) return wrap_to(d, ua ^ ub);
  if (!strcmp(op, "//")) return wrap_to(d, (uint64_t)floordiv(a, b));
  if (!strcmp(op, "%")) return wrap_to(d, (uint64_t)floormod(a, b));
  if (!strcmp(op, "<<")) return b >= bits ? 0 : wrap_to(d, ua << b);
  if (!strcmp(op, ">>")) return b >= bits ? (a < 0 ? -1 : 0) : a >> b; /* a is sign- or zero-extended */
  if (!strcmp(op, "min")) return a < b ? a : b;
  return a > b ? a : b;
}

/* An integer expression of dtype d over n lanes (n == L: iota is there;
 * n == 1: literals only); its lane values go to val[]. */
static void ar_gen(G *g, Buf *o, Dtype d, int n, int depth, int64_t *val) {
  static const char *const ops[] = {"+", "-", "*", "&", "|", "^", "//", "%", "<<", ">>", "min", "max"};
  if (depth <= 0 || rp(R(g), 25)) {
    const char *dn = dtype_name(d);
    if (n > 1 && rp(R(g), 70)) {
      int64_t k = rr(R(g), 1, 40);
      bput(o, "astype(iota(%d) * %lld, %s)", n, (long long)k, dn);
      for (int i = 0; i < n; i++) val[i] = wrap_to(d, (uint64_t)(i * k));
      return;
    }
    int64_t c = dtype_kind(d) == DK_UINT ? rr(R(g), 0, 200) : rr(R(g), -100, 100);
    if (n > 1) bput(o, "astype(full([%d], %lld), %s)", n, (long long)c, dn);
    else bput(o, "astype(%lld, %s)", (long long)c, dn);
    for (int i = 0; i < n; i++) val[i] = wrap_to(d, (uint64_t)c);
    return;
  }
  const char *op = ops[rr(R(g), 0, 11)];
  bool fn = !strcmp(op, "min") || !strcmp(op, "max");
  int64_t a[16], b[16];
  bput(o, fn ? "%s(" : "(", op);
  ar_gen(g, o, d, n, depth - 1, a);
  bput(o, fn ? ", " : " %s ", op);
  if (!strcmp(op, "//") || !strcmp(op, "%") || !strcmp(op, "<<") || !strcmp(op, ">>")) {
    bool sh = op[0] == '<' || op[0] == '>';
    int64_t c = sh ? rr(R(g), 0, dtype_bits(d) - 1) : dtype_kind(d) == DK_UINT ? rr(R(g), 1, 9) : (rp(R(g), 50) ? 1 : -1) * rr(R(g), 1, 9);
    bput(o, "%lld", (long long)c);
    for (int i = 0; i < n; i++) b[i] = c;
  } else {
    ar_gen(g, o, d, n, depth - 1, b);
  }
  bput(o, ")");
  for (int i = 0; i < n; i++) val[i] = ar_apply(d, op, a[i], b[i]);
}

static void unit_arith(G *g, Unit *u) {
  static const Dtype ints[] = {DT_INT32, DT_UINT32, DT_INT16, DT_UINT16, DT_INT8, DT_UINT8};
  steps_for(g, u, 1, 3);
  for (int s = 0; s < u->nsteps; s++) {
    step_begin(g, u, s);
    Dtype d = ints[rr(R(g), 0, 5)];
    int n = g->scalar ? 1 : g->L;
    int64_t val[16];
    Buf e = {0};
    char nm[NAME_LEN];
    ar_gen(g, &e, d, n, g->simple ? 1 : 3, val);
    fresh(g, nm, "x");
    bput(g->out, "- let: {name: %s, value: \"%s\"}\n", nm, e.s);
    bput(g->out, "- expect: {value: %s, equals: %s", nm, n > 1 ? "[" : "");
    for (int i = 0; i < n; i++) bput(g->out, "%s%lld", i ? ", " : "", (long long)val[i]);
    bput(g->out, "%s}\n", n > 1 ? "]" : "");
    bfree(&e);
  }
}

/* ---- unit views: bitcast, reshape and let-bound view aliases ------------ */
static void views_step(G *g, const char *x, Dtype d, const int64_t *sh) {
  static const Dtype narrow[] = {DT_INT16, DT_UINT16, DT_INT8, DT_UINT8, DT_BFLOAT16, DT_FLOAT16, DT_INT32, DT_FLOAT32};
  Dtype nd = narrow[rr(R(g), 0, 7)];
  int k = 4 / dtype_size(nd);
  int64_t vs[2] = {sh[0] * k, sh[1]};
  char base[96];
  int c = (int)rr(R(g), 0, 2);
  if (c == 0) {
    snprintf(base, sizeof base, "%s.bitcast(%s)", x, dtype_name(nd));
  } else if (c == 1 && (sh[0] * sh[1]) % 2 == 0) {
    nd = d;
    vs[0] = sh[0] * 2, vs[1] = sh[1] / 2;
    if (sh[1] % 2) vs[0] = 1, vs[1] = sh[0] * sh[1];
    snprintf(base, sizeof base, "%s.reshape(%lld, %lld)", x, (long long)vs[0], (long long)vs[1]);
  } else {
    nd = d;
    c = 2;
    char nm[NAME_LEN], e[96];
    int64_t i;
    bool dyn;
    fresh(g, nm, "w");
    idx_expr(g, e, sizeof e, sh[0], &i, &dyn);
    bput(g->out, "- let: {name: %s, value: \"%s.at[%s]\"}\n", nm, x, e);
    snprintf(base, sizeof base, "%s", nm);
    vs[0] = 1, vs[1] = sh[1];
  }
  int brank = c == 2 ? 1 : 2, arank = brank == 1 ? 1 : (int)rr(R(g), 1, 2);
  int64_t bsh[2] = {brank == 2 ? vs[0] : vs[1], vs[1]}, ash[2];
  if (arank == 2) ash[0] = rr(R(g), 1, bsh[0]), ash[1] = rr(R(g), 1, bsh[1]);
  else ash[0] = rr(R(g), 1, bsh[brank - 1]);
  Ty a = ty_make(nd, arank, ash);
  Blk b;
  Buf v = {0}, val = {0};
  access_blk(g, &b, brank, bsh, brank - arank, &a);
  view_text(g, &v, base, &b, false);
  char n[NAME_LEN];
  fresh(g, n, "v");
  bput(g->out, "- get: {ref: \"%s\", out: %s}\n", v.s, n);
  add_name(g, n, &a);
  store_val(g, &val, &a);
  bput(g->out, "- set: {ref: \"%s\", value: \"%s\"}\n", v.s, val.s);
  bfree(&v);
  bfree(&val);
}

static void unit_views(G *g, Unit *u) {
  if (!g->layout) return unit_vec(g, u);
  Dtype d = rp(R(g), 50) ? DT_INT32 : rp(R(g), 50) ? DT_UINT32 : DT_FLOAT32;
  int64_t sh[2] = {rr(R(g), 1, 3), rr(R(g), g->L / 2, 2 * g->L)};
  char x[NAME_LEN];
  refname(g, x, 'a');
  decl_init(g, x, "vmem", d, 2, sh);
  steps_for(g, u, 1, 4);
  for (int s = 0; s < u->nsteps; s++) {
    step_begin(g, u, s);
    views_step(g, x, d, sh);
  }
}

/* ---- unit shadd: every subcore scatter-adds into one vmem_shared ref ---- */
/* The adds accumulate exactly (SPEC 5.6, upstream test_scatter_add); after
 * a barrier every subcore checks the sums, which the generator knows: the
 * source is iota, the same on every subcore, and the values are small
 * integers, exact in float32 in any order. */
/* Every element: init plus S times the iota values added into it. */
static void shadd_expect(G *g, const char *acc, int64_t Z, int64_t w, int64_t O, int64_t init, const int64_t *idx) {
  bput(g->out, "- expect: {ref: \"%s[...]\", equals: [", acc);
  for (int64_t z = 0; z < Z; z++) {
    bput(g->out, "%s[", z ? ", " : "");
    for (int64_t j = 0; j < w; j++) {
      int64_t sum = init;
      for (int64_t i = 0; i < O; i++)
        if (idx[i] == z) sum += g->S * (i * w + j);
      bput(g->out, "%s%lld", j ? ", " : "", (long long)sum);
    }
    bput(g->out, "]");
  }
  bput(g->out, "]}\n");
}

static void unit_shadd(G *g, Unit *u) {
  Dtype d = rp(R(g), 60) ? DT_INT32 : DT_FLOAT32;
  int64_t Z = rr(R(g), 2, 6), w = rr(R(g), 1, g->level ? 2 : g->L), O = rr(R(g), 1, 6), init = rr(R(g), 0, 3);
  int64_t idx[6], zs[2] = {Z, w}, os[2] = {O, w};
  char acc[NAME_LEN], src[NAME_LEN], ix[NAME_LEN], sem[NAME_LEN], buf[32];
  refname(g, acc, 'z');
  refname(g, src, 'v');
  refname(g, ix, 'i');
  refname(g, sem, 's');
  snprintf(buf, sizeof buf, "%lld", (long long)init);
  decl(g, acc, "vmem_shared", d, 2, zs, buf);
  decl(g, src, "vmem", d, 2, os, "iota");
  Buf il = {0};
  bput(&il, "[");
  for (int64_t i = 0; i < O; i++) bput(&il, "%s%lld", i ? ", " : "", (long long)(idx[i] = rr(R(g), 0, Z - 1)));
  bput(&il, "]");
  decl(g, ix, "vmem", DT_INT32, 1, &O, il.s);
  decl_sem(g, sem, "dma", 1);
  bfree(&il);
  u->nsteps = 1;
  step_begin(g, u, 0);
  if (has(g, F_ASYNC) && rp(R(g), 50)) {
    bput(g->out, "- async_copy: {src: %s, dst: \"%s.at[%s]\", sem: %s, add: true, out: d%d}\n", src, acc, ix, sem, g->u);
    bput(g->out, "- wait: d%d\n", g->u);
  } else {
    bput(g->out, "- sync_copy: {src: %s, dst: \"%s.at[%s]\", add: true}\n", src, acc, ix);
  }
  bput(g->out, "- barrier: {}\n");
  if (has(g, F_EXPECT)) shadd_expect(g, acc, Z, w, O, init, idx);
}

/* ---- unit undef: partly undefined vectors stored whole (SPEC §10.1) ----- */
/* What upstream's masked tests do (test_load_gather masked, test_load_expanded):
 * a masked load_gather or load_expanded leaves the false lanes undefined;
 * the vector is stored whole (set, swap, store_scatter), maybe after
 * lane-wise arithmetic, maybe DMAd to HBM and back, into a ref without
 * init, and only the true lanes are checked (where(m, x, 0)).  The
 * engine and the reference must agree on the definedness of every lane. */
typedef struct {
  int64_t a, b, c, d;
  int cmp;
} Pat;

static const char *const pat_cmps[] = {"<", ">=", "==", "!="};

static void pat_make(G *g, Pat *p) {
  p->a = rr(R(g), 1, 7), p->b = rr(R(g), 0, 9), p->c = rr(R(g), 2, 7), p->d = rr(R(g), 0, 3);
  p->cmp = (int)rr(R(g), 0, 3);
}

/* Lane i of the mask, as the generator evaluates it. */
static bool pat_lane(const Pat *p, int64_t i) {
  int64_t v = (i * p->a + p->b) % p->c;
  switch (p->cmp) {
  case 0: return v < p->d;
  case 1: return v >= p->d;
  case 2: return v == p->d;
  default: return v != p->d;
  }
}

typedef struct {
  char a[NAME_LEN], u[NAME_LEN], h[NAME_LEN], sem[NAME_LEN];
  Dtype d;
  int64_t n, rows;
} Undef;

/* Binds the mask m (an iota pattern) and returns it in p. */
static void undef_mask(G *g, Pat *p, char *m) {
  pat_make(g, p);
  fresh(g, m, "m");
  bput(g->out, "- let: {name: %s, value: \"(iota(%d) * %lld + %lld) %% %lld %s %lld\"}\n", m, g->L, (long long)p->a, (long long)p->b,
       (long long)p->c, pat_cmps[p->cmp], (long long)p->d);
}

/* A masked load_gather from the iota table: lane i is idx[i] where m holds. */
static void undef_gather(G *g, const Undef *x, const char *m, char *out, char *idx, size_t n) {
  snprintf(idx, n, "(iota(%d) * %lld + %lld) %% %lld", g->L, (long long)rr(R(g), 1, 9), (long long)rr(R(g), 0, 9), (long long)x->n);
  fresh(g, out, "g");
  bput(g->out, "- load_gather: {ref: %s, indices: [\"%s\"], mask: %s, out: %s}\n", x->a, idx, m, out);
}

/* Maybe lane-wise arithmetic on a partly undefined value: *k1, *k2 of
 * x * k1 + k2 (1, 0: none). */
static void undef_arith(G *g, char *v, int64_t *k1, int64_t *k2) {
  *k1 = 1, *k2 = 0;
  if (!rp(R(g), 40)) return;
  *k1 = rr(R(g), 1, 5), *k2 = rr(R(g), -5, 5);
  char h[NAME_LEN];
  fresh(g, h, "h");
  bput(g->out, "- let: {name: %s, value: \"%s * %lld + %lld\"}\n", h, v, (long long)*k1, (long long)*k2);
  snprintf(v, NAME_LEN, "%s", h);
}

/* Stores v whole into row `row` of u (set, swap or a store_scatter through
 * a lane permutation) and reads it back into `back`. */
static void undef_store(G *g, const Undef *x, const char *row, const char *v, char *back) {
  int c = (int)rr(R(g), 0, 2);
  fresh(g, back, "x");
  if (c == 2) {
    char p[128];
    snprintf(p, sizeof p, "(iota(%d) * %lld + %lld) %% %d", g->L, (long long)(2 * rr(R(g), 0, 4) + 1), (long long)rr(R(g), 0, 20), g->L);
    bput(g->out, "- store_scatter: {ref: \"%s.at[%s]\", indices: [\"%s\"], value: %s}\n", x->u, row, p, v);
    bput(g->out, "- load_gather: {ref: \"%s.at[%s]\", indices: [\"%s\"], out: %s}\n", x->u, row, p, back);
    return;
  }
  if (c == 1) {
    char o[NAME_LEN];
    fresh(g, o, "o");
    bput(g->out, "- swap: {ref: \"%s.at[%s]\", value: %s, out: %s}\n", x->u, row, v, o);
  } else {
    bput(g->out, "- set: {ref: \"%s.at[%s]\", value: %s}\n", x->u, row, v);
  }
  bput(g->out, "- get: {ref: \"%s.at[%s]\", out: %s}\n", x->u, row, back);
}

/* The row partly undefined data goes to: a literal or, with DYN, per subcore. */
static void undef_row(G *g, const Undef *x, char *row, size_t n) {
  int64_t v;
  bool dyn;
  idx_expr(g, row, n, x->rows, &v, &dyn);
}

/* Copies row `row` of u to this subcore's row of the hbm ref and back. */
static void undef_dma(G *g, const Undef *x, const char *row) {
  char a[96], b[96], r[64];
  snprintf(a, sizeof a, "%s.at[%s]", x->u, row);
  snprintf(b, sizeof b, "%s.at[%s]", x->h, own_row(g, true, r, sizeof r));
  dma_copy(g, a, b, x->sem);
  dma_copy(g, b, a, x->sem);
}

/* Checks the true lanes of `back` only: where(m, back, 0) against what the
 * generator knows (an expression, or a list). */
static void undef_expect(G *g, const Undef *x, const char *m, const char *back, const char *want) {
  if (!has(g, F_EXPECT)) return;
  char w[NAME_LEN];
  fresh(g, w, "w");
  const char *zero = x->d == DT_FLOAT32 ? "0.0" : "0";
  bput(g->out, "- let: {name: %s, value: \"where(%s, %s, %s)\"}\n", w, m, back, zero);
  bput(g->out, "- expect: {value: %s, equals: \"where(%s, %s, %s)\"}\n", w, m, want, zero);
}

static void undef_step(G *g, const Undef *x) {
  char m[NAME_LEN], v[NAME_LEN], back[NAME_LEN], idx[128], row[96], want[400];
  Pat p;
  int64_t k1, k2;
  int c = (int)rr(R(g), 0, 3);
  undef_row(g, x, row, sizeof row);
  undef_mask(g, &p, m);
  if (c == 1) { /* load_expanded: the true lanes take consecutive elements from s */
    int64_t s = rr(R(g), 0, x->n - g->L), cnt = 0;
    fresh(g, v, "e");
    bput(g->out, "- load_expanded: {ref: \"%s.at[pl.ds(%lld, %d)]\", mask: %s, out: %s}\n", x->a, (long long)s, g->L, m, v);
    undef_arith(g, v, &k1, &k2);
    int at = snprintf(want, sizeof want, "[");
    for (int64_t i = 0; i < g->L; i++) {
      int64_t e = pat_lane(&p, i) ? (s + cnt++) * k1 + k2 : 0;
      at += snprintf(want + at, sizeof want - (size_t)at, "%s%lld%s", i ? ", " : "", (long long)e, x->d == DT_FLOAT32 ? ".0" : "");
    }
    snprintf(want + at, sizeof want - (size_t)at, "]");
    if (x->d == DT_FLOAT32) {
      char t[400];
      snprintf(t, sizeof t, "%s", want);
      snprintf(want, sizeof want, "astype(%s, float32)", t);
    }
  } else {
    undef_gather(g, x, m, v, idx, sizeof idx);
    undef_arith(g, v, &k1, &k2);
    snprintf(want, sizeof want, x->d == DT_FLOAT32 ? "astype(%s, float32) * %lld + %lld" : "(%s) * %lld + %lld", idx, (long long)k1,
             (long long)k2);
  }
  if (c == 2) { /* where(m, g, 0): defined everywhere, checked whole */
    bput(g->out, "- set: {ref: \"%s.at[%s]\", value: \"where(%s, %s, %s)\"}\n", x->u, row, m, v, x->d == DT_FLOAT32 ? "0.0" : "0");
    if (has(g, F_EXPECT))
      bput(g->out, "- expect: {ref: \"%s.at[%s]\", equals: \"where(%s, %s, %s)\"}\n", x->u, row, m, want, x->d == DT_FLOAT32 ? "0.0" : "0");
    return;
  }
  if (c == 3) {
    bput(g->out, "- set: {ref: \"%s.at[%s]\", value: %s}\n", x->u, row, v);
    undef_dma(g, x, row);
    fresh(g, back, "x");
    bput(g->out, "- get: {ref: \"%s.at[%s]\", out: %s}\n", x->u, row, back);
  } else {
    undef_store(g, x, row, v, back);
  }
  undef_expect(g, x, m, back, want);
}

static void unit_undef(G *g, Unit *u) {
  Undef x;
  memset(&x, 0, sizeof x);
  x.d = rp(R(g), 70) ? DT_INT32 : DT_FLOAT32;
  x.n = g->L + (g->level ? 0 : rr(R(g), 0, g->L));
  x.rows = g->level ? 1 : rr(R(g), 1, 3);
  refname(g, x.a, 'a');
  refname(g, x.u, 'u');
  refname(g, x.h, 'h');
  refname(g, x.sem, 's');
  int64_t ush[2] = {x.rows, g->L}, hsh[2] = {(int64_t)g->C * g->S, g->L};
  decl(g, x.a, "vmem", x.d, 1, &x.n, "iota");
  decl(g, x.u, "vmem", x.d, 2, ush, NULL);
  decl(g, x.h, "hbm", x.d, 2, hsh, rp(R(g), 50) ? NULL : "zeros");
  decl_sem(g, x.sem, "dma", 1);
  steps_for(g, u, 1, 4);
  for (int s = 0; s < u->nsteps; s++) {
    step_begin(g, u, s);
    undef_step(g, &x);
  }
}

/* ---- unit race: identical concurrent writes (SPEC §10.2) ---------------- */
/* What upstream's 16-subcore tests do: every subcore DMAs the same values
 * (maybe partly undefined: a source without init) into the same bytes of
 * an HBM or VMEM_SHARED ref, unordered.  A benign race: a warning, the run
 * goes on, and after a barrier the bytes hold the value.  The plan's twin
 * (race_twin) writes values that depend on the subcore: a race fault in
 * both runs is then the planned outcome. */
typedef struct {
  char x[NAME_LEN], v[NAME_LEN], b[NAME_LEN], sem[NAME_LEN];
  bool vs, twin;
  Dtype d;
  int64_t W, Wd, rows, j, k, c;
} Race;

/* The value every instance writes: iota(Wd) * k + c, plus its instance
 * number in the twin. */
static void race_value(G *g, const Race *x, char *buf, size_t n, const char *lane) {
  bool f = x->d == DT_FLOAT32;
  int at = snprintf(buf, n, "%s%s * %lld + %lld", f ? "astype(" : "", lane, (long long)x->k, (long long)x->c);
  if (x->twin) at += snprintf(buf + at, n - (size_t)at, " + (core * %d + subcore) * 100", g->S);
  if (f) snprintf(buf + at, n - (size_t)at, ", float32)");
}

static void race_write(G *g, const Race *x) {
  char val[160], lane[48], dst[96];
  if (g->scalar) {
    for (int64_t i = 0; i < x->Wd; i++) {
      snprintf(lane, sizeof lane, "%lld", (long long)i);
      race_value(g, x, val, sizeof val, lane);
      bput(g->out, "- set: {ref: \"%s[%lld]\", value: \"%s\"}\n", x->v, (long long)i, val);
    }
  } else {
    snprintf(lane, sizeof lane, "iota(%lld)", (long long)x->Wd);
    race_value(g, x, val, sizeof val, lane);
    bput(g->out, "- set: {ref: \"%s.at[pl.ds(0, %lld)]\", value: \"%s\"}\n", x->v, (long long)x->Wd, val);
  }
  snprintf(dst, sizeof dst, "%s.at[%lld]", x->x, (long long)x->j);
  dma_copy(g, x->v, dst, x->sem);
}

/* After a barrier every subcore reads the row back: its defined part is
 * the value. */
static void race_check(G *g, const Race *x) {
  char val[160], lane[48];
  bput(g->out, "- barrier: {}\n");
  bput(g->out, "- sync_copy: {src: \"%s.at[%lld]\", dst: %s}\n", x->x, (long long)x->j, x->b);
  if (!has(g, F_EXPECT)) return;
  snprintf(lane, sizeof lane, "iota(%lld)", (long long)x->Wd);
  race_value(g, x, val, sizeof val, lane);
  bput(g->out, "- expect: {ref: \"%s.at[pl.ds(0, %lld)]\", equals: \"%s\"}\n", x->b, (long long)x->Wd, val);
}

static void unit_race(G *g, Unit *u) {
  Race x;
  memset(&x, 0, sizeof x);
  Dtype d = x.d = rp(R(g), 70) ? DT_INT32 : DT_FLOAT32;
  x.vs = !g->scalar && rp(R(g), 50);
  x.twin = g->pl->race_twin == g->u;
  x.W = g->scalar ? rr(R(g), 1, 3) : g->L + (g->level ? 0 : rr(R(g), 0, 3));
  bool partial = rp(R(g), 50); /* a source without init: its tail stays undefined */
  x.Wd = partial && g->scalar ? rr(R(g), 1, x.W) : g->scalar ? x.W : g->L;
  x.rows = rr(R(g), 1, 3), x.j = rr(R(g), 0, x.rows - 1), x.k = rr(R(g), 1, 5), x.c = rr(R(g), 0, 9);
  refname(g, x.x, 'x');
  refname(g, x.v, 'v');
  refname(g, x.b, 'b');
  refname(g, x.sem, 's');
  int64_t xs[2] = {x.rows, x.W};
  decl(g, x.x, x.vs ? "vmem_shared" : "hbm", d, 2, xs, rp(R(g), 50) ? "zeros" : NULL);
  decl(g, x.v, g->scalar ? "smem" : "vmem", d, 1, &x.W, partial ? NULL : "iota");
  decl_sem(g, x.sem, "dma", 1);
  bool check = !x.twin && !g->scalar && (x.vs || g->C == 1);
  if (check) decl(g, x.b, "vmem", d, 1, &x.W, "zeros");
  u->nsteps = 1; /* one step: the check needs the write */
  step_begin(g, u, 0);
  race_write(g, &x);
  if (check) race_check(g, &x);
  int writers = x.vs ? g->S : g->C * g->S;
  if (x.twin && writers > 1 && !(g->kn->drop_unit >> g->u & 1)) g->want_fault = "race";
}

/* ---- units: generation and wrappers --------------------------------------- */
static void unit_wrap(G *g, Unit *u) {
  int w = unit_info[u->kind].wraps;
  bool loop = (w & W_LOOP) && has(g, F_LOOP) && rp(R(g), 40);
  bool when = (w & W_WHEN) && has(g, F_WHEN) && rp(R(g), 40);
  int64_t lo = rr(R(g), 0, 2), trips = rr(R(g), 1, 3), st = rr(R(g), 1, 2);
  bool down = rp(R(g), 25);
  int c = (int)rr(R(g), 0, 5);
  u->els = rp(R(g), 50);
  if (g->kn->no_wrap) loop = when = false;
  if (loop) {
    u->wrap |= W_LOOP;
    snprintf(u->loopvar, NAME_LEN, "i%d", g->u);
    int64_t top = lo + (trips - 1) * st;
    if (down) u->lo = top, u->hi = lo - 1, u->st = -st;
    else u->lo = lo, u->hi = top + 1, u->st = st;
    snprintf(u->hi_text, sizeof u->hi_text, "%lld", (long long)u->hi);
    if (has(g, F_DYN) && (w & W_WHEN) && !down && st == 1 && c < 2) /* even subcores run one trip less */
      snprintf(u->hi_text, sizeof u->hi_text, "\"%lld + subcore %% 2\"", (long long)top);
    g->lv = u->loopvar;
    g->lv_max = top;
  }
  if (when) {
    static const char *const conds[] = {"subcore %% 2 == 0", "core == 0", "subcore < %d", "true", "false", "%s %% 2 == 1"};
    u->wrap |= W_WHEN;
    if (c == 5 && !loop) c = 0;
    if (c == 2) snprintf(u->cond, sizeof u->cond, conds[2], (int)rr(R(g), 1, 3));
    else if (c == 5) snprintf(u->cond, sizeof u->cond, conds[5], u->loopvar);
    else snprintf(u->cond, sizeof u->cond, conds[c], 0);
  }
}

static void unit_gen(G *g, Unit *u, UnitKind k) {
  u->kind = k;
  g->r = rng_at(g->pl->seed, (uint64_t)g->pl->index, 100 + (uint64_t)g->u, 0);
  g->refs = &u->refs;
  g->out = NULL;
  g->nm = 0;
  g->lv = NULL;
  unit_wrap(g, u);
  unit_info[k].gen(g, u);
}

static void unit_free(Unit *u) {
  bfree(&u->refs);
  for (int s = 0; s < MAX_STEPS; s++) bfree(&u->step[s]);
}

/* The unit's kept steps, wrapped, at the body's indentation. */
static void unit_render(const Unit *u, uint32_t drop, Buf *o) {
  Buf body = {0}, els = {0}, w = {0}, l = {0};
  for (int s = 0; s < u->nsteps; s++)
    if (!(drop >> s & 1)) bput(&body, "%s", btext(&u->step[s]));
  for (int s = u->nsteps - 1; s >= 0; s--)
    if (!(drop >> s & 1)) bput(&els, "%s", btext(&u->step[s]));
  const Buf *cur = &body;
  if (body.n && (u->wrap & W_WHEN)) {
    bput(&w, "- when:\n    cond: \"%s\"\n    body:\n", u->cond);
    bindent(&w, btext(cur), 6);
    if (u->els) {
      bput(&w, "    else:\n");
      bindent(&w, btext(&els), 6);
    }
    cur = &w;
  }
  if (body.n && (u->wrap & W_LOOP)) {
    bput(&l, "- loop:\n    var: %s\n    range: [%lld, %s, %lld]\n    body:\n", u->loopvar, (long long)u->lo, u->hi_text, (long long)u->st);
    bindent(&l, btext(cur), 6);
    cur = &l;
  }
  bindent(o, btext(cur), 2);
  bfree(&body);
  bfree(&els);
  bfree(&w);
  bfree(&l);
}

/* ---- the plan and the program text ---------------------------------------- */
static int imin(int a, int b) { return a < b ? a : b; }


/* Draws the swarm configuration of program `index`. */
void plan_program(uint64_t seed, int index, int reject_rate, unsigned avoid_bugs, Plan *pl) {
  Rng r = rng_at(seed, (uint64_t)index, 0, 0);
  memset(pl, 0, sizeof *pl);
  pl->avoid = avoid_bugs;
  pl->seed = seed;
  pl->index = index;
  pl->chip = (int)rr(&r, 0, NCHIPS - 1);
  pl->scalar = rp(&r, 15);
  pl->layout = rp(&r, 75);
  pl->cores = (int)rr(&r, 1, imin(2, chips[pl->chip].cores));
  pl->subs = pl->scalar ? 1 : (int)rr(&r, 1, imin(4, chips[pl->chip].subs));
  for (int f = 0; f < F_COUNT; f++)
    if (rp(&r, 60)) pl->feat |= 1u << f;
  pl->dtypes = 1u << DT_INT32;
  for (int d = 0; d <= DT_BOOL; d++)
    if (rp(&r, 40)) pl->dtypes |= 1u << d;
  /* int4 and uint4 draw from a stream of their own: the plans of the
   * whole-byte dtypes stay what they were before the 4-bit ones */
  Rng r4 = rng_at(seed, (uint64_t)index, 0x4b17, 0);
  if (rp(&r4, 25)) pl->dtypes |= 1u << DT_INT4;
  if (rp(&r4, 25)) pl->dtypes |= 1u << DT_UINT4;
  unsigned kinds = 0;
  for (int k = 0; k < U_COUNT; k++)
    if ((unit_info[k].kernels & (pl->scalar ? K_SCALAR : K_VEC)) && rp(&r, 50)) kinds |= 1u << k;
  if (!kinds) kinds = 1u << (pl->scalar ? U_SMEM : U_VEC);
  pl->nunits = (int)rr(&r, 1, 8);
  for (int i = 0; i < pl->nunits; i++) {
    do pl->kind[i] = (UnitKind)rr(&r, 0, U_COUNT - 1);
    while (!(kinds >> pl->kind[i] & 1));
  }
  plan_inject(&r, pl, reject_rate);
  pl->race_twin = -1;
  for (int i = 0; i < pl->nunits && pl->inject < 0; i++)
    if (pl->kind[i] == U_RACE) {
      if (rp(&r, 35)) pl->race_twin = i;
      break;
    }
}


static int count_ops(const char *s) {
  int n = 0;
  for (const char *p = s; *p; p++)
    if (p[0] == '-' && p[1] == ' ' && (p == s || p[-1] == ' ' || p[-1] == '\n')) {
      const char *q = p;
      while (q > s && q[-1] == ' ') q--;
      if (q == s || q[-1] == '\n') n++;
    }
  return n;
}

static void header(const Plan *pl, const G *g, Buf *o) {
  bput(o, "version: 1\nname: fuzz-%llu-%d\nchip: %s\nkernel: %s\n", (unsigned long long)pl->seed, pl->index, chips[pl->chip].name,
       pl->scalar ? "scalar_subcore" : "vector_subcore");
  if (pl->scalar) bput(o, "mesh: {cores: %d}\n", g->C);
  else bput(o, "mesh: {cores: %d, subcores: %d}\n", g->C, g->S);
  bput(o, "layout_passes: %s\n", g->layout ? "true" : "false");
}

static void g_init(G *g, const Plan *pl, const Knobs *kn) {
  memset(g, 0, sizeof *g);
  g->pl = pl;
  g->kn = kn;
  g->L = chips[pl->chip].lanes;
  g->C = kn->max_cores ? imin(pl->cores, kn->max_cores) : pl->cores;
  g->S = kn->max_subs ? imin(pl->subs, kn->max_subs) : pl->subs;
  g->scalar = pl->scalar;
  g->layout = pl->layout || kn->layout;
  g->simple = kn->simple;
  g->level = kn->level;
}

/* The refs of the units that keep a step, then the injection's. */
static void render_refs(const Plan *pl, const Knobs *kn, const Unit *units, const Buf *irefs, Buf *o) {
  size_t at = o->n;
  bput(o, "refs:\n");
  for (int u = 0; u < pl->nunits; u++)
    if (!(kn->drop_unit >> u & 1) && ((~kn->drop_step[u]) & ((1u << units[u].nsteps) - 1))) bput(o, "%s", btext(&units[u].refs));
  bput(o, "%s", btext(irefs));
  if (o->n == at + strlen("refs:\n")) o->n = at, bput(o, "refs: {}\n");
}

/* Writes the program for (plan, knobs) into o (cleared first). */
void gen_program(const Plan *pl, const Knobs *kn, Buf *o, Meta *meta) {
  G g;
  g_init(&g, pl, kn);
  Unit *units = calloc(MAX_UNITS, sizeof *units);
  if (!units) abort();
  Buf irefs = {0}, iop = {0}, body = {0};
  memset(meta, 0, sizeof *meta);
  meta->nunits = pl->nunits;
  for (int u = 0; u < pl->nunits; u++) {
    g.u = u;
    unit_gen(&g, &units[u], pl->kind[u]);
    meta->nsteps[u] = units[u].nsteps;
  }
  bool inject = pl->inject >= 0 && !kn->no_inject;
  if (inject) {
    g.refs = &irefs;
    g.out = &iop;
    g.r = rng_at(pl->seed, (uint64_t)pl->index, 99, 0);
    injections[pl->inject].gen(&g);
    meta->want = injections[pl->inject].id;
    meta->want_fault = injections[pl->inject].mode == M_FAULT;
  } else if (g.want_fault) {
    meta->want = g.want_fault;
    meta->want_fault = true;
  }
  o->n = 0;
  breserve(o, 0);
  o->s[0] = '\0';
  header(pl, &g, o);
  render_refs(pl, kn, units, &irefs, o);
  for (int u = 0; u <= pl->nunits; u++) {
    if (inject && u == pl->inject_pos) bindent(&body, btext(&iop), 2);
    if (u < pl->nunits && !(kn->drop_unit >> u & 1)) unit_render(&units[u], kn->drop_step[u], &body);
  }
  bput(o, "body:%s\n%s", body.n ? "" : " []", btext(&body));
  meta->bytes = o->n;
  meta->ops = count_ops(btext(&body));
  for (int u = 0; u < MAX_UNITS; u++) unit_free(&units[u]);
  free(units);
  bfree(&irefs);
  bfree(&iop);
  bfree(&body);
}
