/* sim/front/load_pipeline.c -- the expansion of `emit_pipeline`
 * (sim/front/load_pipeline.h) into ordinary operations.
 *
 * It follows _emit_pipeline and its Scheduler in the pinned JAX's
 * pallas/mosaic/pipeline.py, for specs of two buffers without lookahead:
 *
 *   _partition_grid: with core_axis_name over more than one core, the
 *     first PARALLEL dimension the core count divides is split evenly
 *     (offset core_id * size); failing that, the largest PARALLEL one, the
 *     first cores taking one step more.
 *   buffers: per spec a VMEM buffer of two blocks, (2, *block) or, for a
 *     1-D block, (2 * n,) (a squeezed (None) dimension is no dimension of
 *     the block: the DMA takes the block index itself there), and two DMA
 *     semaphores (sem_recvs for an input,
 *     sem_sends for an output); a spec whose block is the whole ref and
 *     whose index_map ignores the grid is "trivial": one buffer, copied
 *     whole with sync_copy before (inputs) and after (outputs) the loop.
 *   prologue: every input starts the copy of its first block into slot 0.
 *   each step s of the num_steps steps, with the grid indices of s, of
 *     the step before and of the step after (wrapping), and a block
 *     "changing" when its index_map differs between two of them:
 *       copy_in   inputs:  changes next and not the last step: start the
 *                          copy of the next block into slot copy_in % 2
 *       wait_in   inputs:  changed since the previous step, or step 0
 *       body      inputs at slot wait_in % 2, outputs at copy_out % 2
 *       copy_out  outputs: changes next, or the last step: start the copy
 *                          of the block to HBM from slot copy_out % 2
 *       wait_out  outputs: changed since the previous step, not step 0:
 *                          wait for the previous step's copy (slot wait_out % 2)
 *     each slot counter (a loop carry, as upstream's) advancing when its
 *     copy or wait ran; wait_in advances when the block changes next or on
 *     the last step.
 *   epilogue: every output waits for its last copy.
 *
 * The generated operations are written as text and parsed with the
 * format's own parser (so they are exactly what a user could write), at
 * the emit_pipeline key's position; the user's index_map results are
 * spliced in as trees and keep their own positions.  Names and refs the
 * expansion makes start with _epN_ (N the emit_pipeline's id). */
#include "load_pipeline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_sugar.h"
#include "parse.h"

typedef struct {
  Op **v;
  int n, cap;
} Ops;

enum { MAX_SPECS = 64 };

typedef struct {
  Program *p;
  Diag *d;
  const Pipe *pp;
  bool failed;
  char pre[32];                /* "_epN_" */
  char g[MAX_RANK][64];        /* each dimension's size after the split: a literal or a name */
  char o[MAX_RANK][64];        /* each dimension's offset: "0" or a name */
  char steps[96];              /* num_steps: a literal or a name */
  bool dyn;                    /* num_steps depends on the core */
  char cur[MAX_RANK][64];      /* the grid indices of this step, the previous and the next */
  char prev[MAX_RANK][64];
  char next[MAX_RANK][64];
  char fin[MAX_RANK][64];      /* of the last step, for the epilogue */
  bool trivial[MAX_SPECS];
} Gen;

static bool fail(Gen *g, Loc at, const char *msg) {
  if (!g->failed) diag_set(g->d, D_IN_VALUE, at, msg);
  g->failed = true;
  return false;
}

/* ---- expressions ----------------------------------------------------- */
static void relocate(Expr *e, Loc at) {
  if (!e) return;
  e->loc = at;
  relocate(e->a, at), relocate(e->b, at), relocate(e->c, at);
  for (int i = 0; i < e->nargs && e->args; i++) relocate(e->args[i], at);
  if (e->kwloc)
    for (int i = 0; i < e->nargs; i++) e->kwloc[i] = at;
}

static Expr *copy_expr(Arena *a, const Expr *e) {
  if (!e) return NULL;
  Expr *c = arena_alloc(a, sizeof *c);
  *c = *e;
  c->a = copy_expr(a, e->a), c->b = copy_expr(a, e->b), c->c = copy_expr(a, e->c);
  if (e->nargs && e->args) {
    c->args = arena_alloc(a, sizeof(Expr *) * (size_t)e->nargs);
    for (int i = 0; i < e->nargs; i++) c->args[i] = copy_expr(a, e->args[i]);
  }
  return c;
}

/* Every NAME names[k] in *slot becomes a copy of trees[k]. */
static void subst(Arena *a, Expr **slot, const char *const *names, Expr *const *trees, int n) {
  Expr *e = *slot;
  if (!e) return;
  if (e->kind == EX_NAME)
    for (int k = 0; k < n; k++)
      if (!strcmp(e->name, names[k])) {
        Loc keep = e->loc;
        *slot = copy_expr(a, trees[k]);
        if (trees[k]->loc.line == 0) (*slot)->loc = keep;
        return;
      }
  subst(a, &e->a, names, trees, n), subst(a, &e->b, names, trees, n), subst(a, &e->c, names, trees, n);
  for (int i = 0; i < e->nargs && e->args; i++) subst(a, &e->args[i], names, trees, n);
}

static bool mentions(const Expr *e, const char *const *names, int n) {
  if (!e) return false;
  if (e->kind == EX_NAME)
    for (int k = 0; k < n; k++)
      if (!strcmp(e->name, names[k])) return true;
  if (mentions(e->a, names, n) || mentions(e->b, names, n) || mentions(e->c, names, n)) return true;
  for (int i = 0; i < e->nargs && e->args; i++)
    if (mentions(e->args[i], names, n)) return true;
  return false;
}

/* Parses generated text at the emit_pipeline's position; the names
 * __b0 .. __b{n-1} in it are replaced by the trees. */
static Expr *exv(Gen *g, Expr *const *trees, int n, const char *fmt, va_list ap) {
  char buf[4096];
  vsnprintf(buf, sizeof buf, fmt, ap);
  if (g->failed) return NULL;
  Expr *e = expr_parse(&g->p->arena, arena_strdup(&g->p->arena, buf), g->pp->loc, g->d);
  if (!e) return g->failed = true, NULL;
  relocate(e, g->pp->loc);
  const char *names[2 * MAX_RANK];
  char nb[2 * MAX_RANK][8];
  for (int k = 0; k < n; k++) snprintf(nb[k], sizeof nb[k], "__b%d", k), names[k] = nb[k];
  subst(&g->p->arena, &e, names, trees, n);
  return e;
}

static Expr *ex(Gen *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Expr *e = exv(g, NULL, 0, fmt, ap);
  va_end(ap);
  return e;
}

static Expr *ext(Gen *g, Expr *const *trees, int n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Expr *e = exv(g, trees, n, fmt, ap);
  va_end(ap);
  return e;
}

/* The block indices of spec s at the grid indices idx (texts per dimension). */
static void block_at(Gen *g, const PipeSpec *s, char (*idx)[64], Expr **out) {
  Expr *at[MAX_RANK];
  for (int d = 0; d < s->nvars; d++) at[d] = ex(g, "%s", idx[d]);
  for (int d = 0; d < s->nindex; d++) {
    out[d] = copy_expr(&g->p->arena, s->index[d]);
    if (!g->failed) subst(&g->p->arena, &out[d], s->vars, at, s->nvars);
  }
}

/* Appends to t (cap bytes, n used), keeping n below cap whatever the length. */
static size_t cat(char *t, size_t cap, size_t n, const char *fmt, ...) {
  if (n >= cap - 1) return cap - 1;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(t + n, cap - n, fmt, ap);
  va_end(ap);
  return w < 0 || n + (size_t)w >= cap ? cap - 1 : n + (size_t)w;
}

/* ARG.at[pl.ds(b0 * B0, B0), ...]: upstream's get_dma_slice for whole blocks. */
static Expr *hbm_slice(Gen *g, const PipeSpec *s, char (*idx)[64]) {
  Expr *b[MAX_RANK];
  block_at(g, s, idx, b);
  char t[2048];
  size_t n = cat(t, sizeof t, 0, "%s.at[", s->ref);
  for (int d = 0; d < s->rank; d++)
    if (s->squeezed[d]) n = cat(t, sizeof t, n, "%s__b%d", d ? ", " : "", d);
    else n = cat(t, sizeof t, n, "%spl.ds(%lld * __b%d, %lld)", d ? ", " : "", (long long)s->block[d], d, (long long)s->block[d]);
  cat(t, sizeof t, n, "]");
  return ext(g, b, s->rank, "%s", t);
}

/* The block's shape without its squeezed dimensions (_get_block_shape). */
static int wdims(const PipeSpec *s, int64_t *out) {
  int n = 0;
  for (int d = 0; d < s->rank; d++)
    if (!s->squeezed[d]) out[n++] = s->block[d];
  return n;
}

/* The buffer's slot `slot` as a DMA sees it (with the window slice) or as
 * the body sees it (_window_ref_at without, and with, a window slice). */
static Expr *window(Gen *g, const char *buf, const PipeSpec *s, const char *slot, bool dma) {
  char t[2048];
  int64_t w[MAX_RANK];
  int nw = wdims(s, w);
  if (nw == 1) {
    snprintf(t, sizeof t, "%s.at[pl.ds(%s * %lld, %lld)]", buf, slot, (long long)w[0], (long long)w[0]);
    return ex(g, "%s", t);
  }
  if (!dma) return ex(g, "%s.at[%s]", buf, slot);
  size_t n = cat(t, sizeof t, 0, "%s.at[%s", buf, slot);
  for (int d = 0; d < nw; d++) n = cat(t, sizeof t, n, ", pl.ds(0, %lld)", (long long)w[d]);
  cat(t, sizeof t, n, "]");
  return ex(g, "%s", t);
}

/* ---- operations ------------------------------------------------------ */
static void push(Gen *g, Ops *o, Op *op) {
  if (o->n == o->cap) {
    int cap = o->cap ? 2 * o->cap : 16;
    Op **v = arena_alloc(&g->p->arena, sizeof(Op *) * (size_t)cap);
    if (o->n) memcpy(v, o->v, sizeof(Op *) * (size_t)o->n);
    o->v = v, o->cap = cap;
  }
  o->v[o->n++] = op;
}

static Body body_of(Ops *o) { return (Body){o->v, o->n}; }

static Op *mk(Gen *g, OpKind k, unsigned has) {
  Op *op = arena_alloc(&g->p->arena, sizeof *op);
  op->kind = k;
  op->loc = g->pp->loc;
  op->has = has;
  op->id = g->p->nops++;
  for (int i = 0; i < FLD_COUNT; i++) op->nlist[i] = -1, op->floc[i] = op->nloc[i] = g->pp->loc;
  return op;
}

static void let(Gen *g, Ops *o, const char *name, Expr *v) {
  Op *op = mk(g, OPK_LET, F(NAME) | F(VALUE));
  op->name[FLD_NAME] = arena_strdup(&g->p->arena, name);
  op->e[FLD_VALUE] = v;
  push(g, o, op);
}

static void dma(Gen *g, Ops *o, OpKind k, Expr *src, Expr *dst, Expr *sem) {
  Op *op = mk(g, k, F(SRC) | F(DST) | (sem ? F(SEM) : 0) | (k == OPK_ASYNC_COPY ? F(OUT) : 0));
  op->e[FLD_SRC] = src, op->e[FLD_DST] = dst, op->e[FLD_SEM] = sem;
  if (k == OPK_ASYNC_COPY) {
    char name[64];
    snprintf(name, sizeof name, "%sdma", g->pre);
    op->name[FLD_OUT] = arena_strdup(&g->p->arena, name);
  }
  push(g, o, op);
}

static void when(Gen *g, Ops *o, Expr *cond, Ops *then) {
  Op *op = mk(g, OPK_WHEN, F(COND) | F(BODY));
  op->e[FLD_COND] = cond;
  op->body = body_of(then);
  push(g, o, op);
}

/* ---- refs ------------------------------------------------------------ */
static Ref *add_ref(Gen *g, const char *name, Space sp, Dtype dt, int rank, const int64_t *shape) {
  Program *p = g->p;
  Ref *r = arena_alloc(&p->arena, sizeof *r);
  r->name = arena_strdup(&p->arena, name);
  r->loc = g->pp->loc;
  r->space = sp, r->dtype = dt, r->rank = rank, r->annotated = true;
  r->sem = sp == SP_SEMAPHORE ? SEM_DMA : SEM_NONE;
  r->nelems = 1;
  for (int d = 0; d < rank; d++) r->shape[d] = shape[d], r->nelems *= shape[d];
  Ref **v = arena_alloc(&p->arena, sizeof(Ref *) * (size_t)(p->nrefs + 1));
  if (p->nrefs) memcpy(v, p->refs, sizeof(Ref *) * (size_t)p->nrefs);
  r->index = p->nrefs;
  v[p->nrefs++] = r;
  p->refs = v;
  p->ref_index.arena = &p->arena;
  names_put(&p->ref_index, r->name, r->index);
  return r;
}

/* Block shape, index_map and ref agree (all input errors, exit 2). */
static bool spec_ok(Gen *g, const PipeSpec *s, const Ref *r) {
  char msg[600];
  const Pipe *pp = g->pp;
  if (!r) {
    snprintf(msg, sizeof msg, "emit_pipeline: args names '%.80s', which is not a ref of this kernel (args are the refs the pipeline runs over, in_specs' first)", s->ref);
    return fail(g, s->ref_loc, msg);
  }
  if (strlen(r->name) > 200) return fail(g, s->ref_loc, "emit_pipeline: a ref of args has a name of at most 200 characters (sc-sim's limit)");
  if (r->space != SP_HBM && r->space != SP_VMEM_SHARED) {
    snprintf(msg, sizeof msg, "emit_pipeline: '%.80s' is in %s; sc-sim pipelines hbm and vmem_shared refs into VMEM blocks (upstream uses a VMEM ref in place, without copies, which sc-sim does not model): pass an hbm ref", r->name, space_key(r->space));
    return fail(g, s->ref_loc, msg);
  }
  if (s->rank != r->rank || r->rank == 0) {
    snprintf(msg, sizeof msg, "emit_pipeline: block_shape has %d dimension(s), but '%.80s' has %d: give one block size per dimension of the ref", s->rank, r->name, r->rank);
    return fail(g, s->block_loc, msg);
  }
  for (int d = 0; d < s->rank; d++)
    if (s->block[d] > r->shape[d] || r->shape[d] % s->block[d]) {
      snprintf(msg, sizeof msg, "emit_pipeline: block_shape[%d] = %lld does not divide dimension %d of '%.80s' (%lld): sc-sim pipelines whole blocks only (upstream rounds a partial edge block to the tiling); pick a block size that divides %lld", d, (long long)s->block[d], d, r->name, (long long)r->shape[d], (long long)r->shape[d]);
      return fail(g, s->block_loc, msg);
    }
  if (s->nvars != pp->ngrid) {
    snprintf(msg, sizeof msg, "emit_pipeline: index_map takes %d grid index(es), but the grid has %d dimension(s): write lambda with one parameter per grid dimension", s->nvars, pp->ngrid);
    return fail(g, s->map_loc, msg);
  }
  if (s->nindex != s->rank) {
    snprintf(msg, sizeof msg, "emit_pipeline: index_map returns %d block index(es), but block_shape has %d dimension(s): return one block index per dimension, as a tuple", s->nindex, s->rank);
    return fail(g, s->map_loc, msg);
  }
  return true;
}

/* _spec_has_trivial_windowing: the whole ref, whatever the grid index. */
static bool trivial(Gen *g, const PipeSpec *s, const Ref *r) {
  for (int d = 0; d < s->rank; d++)
    if (s->squeezed[d] || s->block[d] != r->shape[d]) return false;
  const char *live[MAX_RANK];
  int n = 0;
  for (int d = 0; d < s->nvars; d++)
    if (strcmp(g->g[d], "1")) live[n++] = s->vars[d];
  for (int d = 0; d < s->nindex; d++)
    if (mentions(s->index[d], live, n)) return false;
  return true;
}

/* ---- the grid and its split over cores (_partition_grid) --------------- */
static void sem_repr(const Pipe *pp, int n, char *out, size_t cap) {
  size_t k = cat(out, cap, 0, "(");
  for (int d = 0; d < n; d++)
    k = cat(out, cap, k, "%s<GridDimensionSemantics.%s>%s", d ? ", " : "",
            pp->nsem >= 0 && pp->parallel[d] ? "PARALLEL: 'parallel'" : "ARBITRARY: 'arbitrary'", n == 1 ? "," : "");
  cat(out, cap, k, ")");
}

/* lax.axis_index and lax.axis_size of core_axis_name's axes (the last one
 * minor): the core id as text into cid, the core count returned. */
static int64_t core_id(const Gen *g, char *cid, size_t cap) {
  const Pipe *pp = g->pp;
  int64_t ncores = 1;
  snprintf(cid, cap, "0");
  for (int a = 0; a < pp->naxes; a++) {
    int64_t size = pp->axes[a] ? g->p->mesh_subcores : g->p->mesh_cores;
    const char *axis = pp->axes[a] ? "subcore" : "core";
    char t[256];
    if (a == 0) snprintf(t, sizeof t, "%s", axis);
    else snprintf(t, sizeof t, "(%.200s) * %lld + %s", cid, (long long)size, axis);
    snprintf(cid, cap, "%s", t);
    ncores *= size;
  }
  return ncores;
}

static bool split_grid(Gen *g, Ops *o) {
  const Pipe *pp = g->pp;
  for (int d = 0; d < pp->ngrid; d++) snprintf(g->g[d], sizeof g->g[d], "%lld", (long long)pp->grid[d]), snprintf(g->o[d], sizeof g->o[d], "0");
  char cid[256];
  int64_t ncores = core_id(g, cid, sizeof cid);
  if (!pp->naxes || ncores == 1) return true;
  int nsem = pp->nsem < 0 ? pp->ngrid : pp->nsem;
  if (nsem != pp->ngrid) {
    diag_set(g->d, D_EP2, pp->sem_loc);
    return g->failed = true, false;
  }
  int pd = -1;
  for (int d = 0; d < pp->ngrid && pd < 0; d++)
    if (pp->nsem >= 0 && pp->parallel[d] && pp->grid[d] % ncores == 0) pd = d;
  bool any = false;
  for (int d = 0; d < pp->ngrid; d++) any |= pp->nsem >= 0 && pp->parallel[d];
  if (!any) {
    char r[600];
    sem_repr(pp, nsem, r, sizeof r);
    diag_set(g->d, D_EP3, pp->nsem >= 0 ? pp->sem_loc : pp->loc, r);
    return g->failed = true, false;
  }
  char name[64];
  snprintf(name, sizeof name, "%scid", g->pre);
  let(g, o, name, ex(g, "%s", cid));
  if (pd >= 0) {
    int64_t size = pp->grid[pd] / ncores;
    snprintf(g->g[pd], sizeof g->g[pd], "%lld", (long long)size);
    snprintf(g->o[pd], sizeof g->o[pd], "%so%d", g->pre, pd);
    let(g, o, g->o[pd], ex(g, "%scid * %lld", g->pre, (long long)size));
    return !g->failed;
  }
  for (int d = 0; d < pp->ngrid; d++) /* the largest PARALLEL dimension, the first of equals */
    if (pp->parallel[d] && (pd < 0 || pp->grid[d] > pp->grid[pd])) pd = d;
  int64_t base = pp->grid[pd] / ncores, rem = pp->grid[pd] % ncores;
  snprintf(g->g[pd], sizeof g->g[pd], "%sg%d", g->pre, pd);
  snprintf(g->o[pd], sizeof g->o[pd], "%so%d", g->pre, pd);
  let(g, o, g->g[pd], ex(g, "where(%scid < %lld, %lld, %lld)", g->pre, (long long)rem, (long long)(base + 1), (long long)base));
  let(g, o, g->o[pd], ex(g, "where(%scid < %lld, %scid * %s, %scid * %lld + %lld)", g->pre, (long long)rem, g->pre, g->g[pd], g->pre,
                         (long long)base, (long long)rem));
  g->dyn = true;
  return !g->failed;
}

/* num_steps as text: a literal, or a name bound here when the split is uneven. */
static void steps_text(Gen *g, Ops *o) {
  int64_t k = 1;
  const char *dyn = NULL;
  for (int d = 0; d < g->pp->ngrid; d++)
    if (g->g[d][0] == '_') dyn = g->g[d];
    else k *= atoll(g->g[d]);
  if (!dyn) {
    snprintf(g->steps, sizeof g->steps, "%lld", (long long)k);
    return;
  }
  snprintf(g->steps, sizeof g->steps, "%ssteps", g->pre);
  let(g, o, g->steps, ex(g, "%s * %lld", dyn, (long long)k));
}

/* The stride of dimension d in steps, as text. */
static void stride_text(Gen *g, int d, char *out, size_t cap) {
  int64_t k = 1;
  const char *dyn = NULL;
  for (int e = d + 1; e < g->pp->ngrid; e++)
    if (g->g[e][0] == '_') dyn = g->g[e];
    else k *= atoll(g->g[e]);
  if (dyn) snprintf(out, cap, "(%s * %lld)", dyn, (long long)k);
  else snprintf(out, cap, "%lld", (long long)k);
}

/* The global grid index of dimension d at step `step` (a text in [0,
 * num_steps)): row-major, the last dimension fastest, as _next_index
 * counts; a dimension of size 1 is 0 (_filter_indices). */
static void index_text(Gen *g, int d, const char *step, char *out, size_t cap) {
  char st[128], local[400];
  stride_text(g, d, st, sizeof st);
  if (!strcmp(g->g[d], "1")) snprintf(local, sizeof local, "0");
  else if (d == 0 && !strcmp(st, "1")) snprintf(local, sizeof local, "%s", step);
  else if (d == 0) snprintf(local, sizeof local, "(%s) // %s", step, st);
  else if (!strcmp(st, "1")) snprintf(local, sizeof local, "(%s) %% %s", step, g->g[d]);
  else snprintf(local, sizeof local, "(%s) // %s %% %s", step, st, g->g[d]);
  if (!strcmp(g->o[d], "0")) snprintf(out, cap, "%s", local);
  else if (!strcmp(local, "0")) snprintf(out, cap, "%s", g->o[d]);
  else snprintf(out, cap, "%s + %s", local, g->o[d]);
}

/* Binds the grid indices of step `step` as names PRE TAG d (a literal 0 stays). */
static void bind_indices(Gen *g, Ops *o, const char *step, const char *tag, char (*names)[64]) {
  for (int d = 0; d < g->pp->ngrid; d++) {
    char v[600];
    index_text(g, d, step, v, sizeof v);
    if (!strcmp(v, "0")) {
      snprintf(names[d], 64, "0");
      continue;
    }
    snprintf(names[d], 64, "%s%s%d", g->pre, tag, d);
    let(g, o, names[d], ex(g, "%s", v));
  }
}

/* pl.program_id(d) and pl.num_programs(d) in the body: upstream's grid_env
 * gives the step's global index and the (split) grid's size. */
static void grid_calls_expr(Gen *g, Expr **slot) {
  Expr *e = *slot;
  if (!e || g->failed) return;
  bool id = e->kind == EX_CALL && e->name && !strcmp(e->name, "pl.program_id");
  bool num = e->kind == EX_CALL && e->name && !strcmp(e->name, "pl.num_programs");
  if (id || num) {
    if (e->nargs != 1 || e->args[0]->kind != EX_INT || e->args[0]->ival < 0 || e->args[0]->ival >= g->pp->ngrid) {
      fail(g, e->loc, "emit_pipeline: pl.program_id and pl.num_programs take one literal grid dimension of the pipeline (0 .. len(grid) - 1)");
      return;
    }
    int d = (int)e->args[0]->ival;
    Loc at = e->loc;
    *slot = ex(g, "%s", id ? g->cur[d] : g->g[d]);
    if (*slot) relocate(*slot, at);
    return;
  }
  grid_calls_expr(g, &e->a), grid_calls_expr(g, &e->b), grid_calls_expr(g, &e->c);
  for (int i = 0; i < e->nargs && e->args; i++) grid_calls_expr(g, &e->args[i]);
}

static void grid_calls(Gen *g, const Body *b) {
  for (int i = 0; i < b->n; i++) {
    Op *op = b->ops[i];
    for (int f = 0; f < FLD_COUNT; f++) {
      grid_calls_expr(g, &op->e[f]);
      for (int k = 0; k < op->nlist[f] && op->list[f]; k++) grid_calls_expr(g, &op->list[f][k]);
    }
    grid_calls(g, &op->body), grid_calls(g, &op->els);
  }
}

/* ---- the schedule ----------------------------------------------------- */
static void spec_name(Gen *g, int k, const char *what, char *out, size_t cap) {
  const PipeSpec *s = &g->pp->specs[k];
  int j = s->out ? k - g->pp->nin : k;
  snprintf(out, cap, "%s%s%d%s", g->pre, s->out ? "out" : "in", j, what);
}

/* _tuples_differ of spec k's blocks at a and b: a bool expression; the
 * components that name no grid index are equal on both sides. */
static Expr *differs(Gen *g, int k, char (*a)[64], char (*b)[64]) {
  const PipeSpec *s = &g->pp->specs[k];
  Expr *x[MAX_RANK], *y[MAX_RANK], *t[2 * MAX_RANK];
  block_at(g, s, a, x);
  block_at(g, s, b, y);
  char text[1024] = "";
  size_t n = 0;
  int m = 0;
  for (int d = 0; d < s->nindex; d++) {
    if (!mentions(s->index[d], s->vars, s->nvars)) continue;
    n = cat(text, sizeof text, n, "%s(__b%d != __b%d)", m ? " or " : "", m, m + 1);
    t[m] = x[d], t[m + 1] = y[d];
    m += 2;
  }
  return m ? ext(g, t, m, "%s", text) : ex(g, "false");
}

static void carry(Gen *g, Op *loop, const char *name, int init, Expr *next) {
  int i = loop->ncarry++;
  loop->carry[i] = arena_strdup(&g->p->arena, name);
  loop->carry_loc[i] = loop->next_loc[i] = g->pp->loc;
  loop->next_name[i] = loop->carry[i];
  loop->list[FLD_CARRY][i] = ex(g, "astype(%d, int32)", init);
  loop->list[FLD_NEXT][i] = next;
}

static Op *mk_loop(Gen *g, int ncarry) {
  Op *loop = mk(g, OPK_LOOP, F(VAR) | F(RANGE) | F(BODY) | (ncarry ? F(CARRY) | F(NEXT) : 0));
  char v[64];
  snprintf(v, sizeof v, "%ss", g->pre);
  loop->name[FLD_VAR] = arena_strdup(&g->p->arena, v);
  loop->list[FLD_RANGE] = arena_alloc(&g->p->arena, sizeof(Expr *) * 2);
  loop->nlist[FLD_RANGE] = 2;
  loop->list[FLD_RANGE][0] = ex(g, "0");
  loop->list[FLD_RANGE][1] = ex(g, "%s", g->steps);
  int cap = ncarry ? ncarry : 1;
  loop->carry = arena_alloc(&g->p->arena, sizeof(char *) * (size_t)cap);
  loop->next_name = arena_alloc(&g->p->arena, sizeof(char *) * (size_t)cap);
  loop->carry_loc = arena_alloc(&g->p->arena, sizeof(Loc) * (size_t)cap);
  loop->next_loc = arena_alloc(&g->p->arena, sizeof(Loc) * (size_t)cap);
  loop->list[FLD_CARRY] = arena_alloc(&g->p->arena, sizeof(Expr *) * (size_t)cap);
  loop->list[FLD_NEXT] = arena_alloc(&g->p->arena, sizeof(Expr *) * (size_t)cap);
  if (ncarry) loop->nlist[FLD_CARRY] = loop->nlist[FLD_NEXT] = ncarry;
  return loop;
}

/* One DMA of spec k between its HBM block at idx and its buffer's slot. */
static void copy_block(Gen *g, Ops *o, OpKind kind, int k, char (*idx)[64], const char *slot) {
  const PipeSpec *s = &g->pp->specs[k];
  char buf[96], sem[128], semx[200];
  spec_name(g, k, "", buf, sizeof buf);
  spec_name(g, k, "_sem", sem, sizeof sem);
  snprintf(semx, sizeof semx, "%s.at[%s]", sem, slot);
  Expr *hbm = hbm_slice(g, s, idx), *win = window(g, buf, s, slot, true);
  if (s->out) dma(g, o, kind, win, hbm, ex(g, "%s", semx));
  else dma(g, o, kind, hbm, win, ex(g, "%s", semx));
}

/* The four phases of a step, in the Scheduler's order (copy_in and wait_in
 * over the inputs, the body, copy_out and wait_out over the outputs): the
 * specs they serve, the DMA, its slot counter (a loop carry), the grid
 * indices of its block, when it runs and when its counter advances.  In
 * the predicates {cn} / {cp} say the spec's block differs at the next /
 * previous step, {s} is the step and {t} num_steps. */
typedef enum { AT_CUR, AT_PREV, AT_NEXT } At;
typedef struct {
  bool out;
  OpKind kind;
  const char *counter;
  int init; /* after the prologue */
  At at;
  const char *when, *advance;
} Phase;

static const Phase phases[] = {
    {false, OPK_ASYNC_COPY, "_ci", 1, AT_NEXT, "{cn} and not ({s} >= {t} - 1)", "{cn} and not ({s} >= {t} - 1)"},
    {false, OPK_WAIT, "_wi", 0, AT_CUR, "{cp} or {s} == 0", "{cn} or {s} == {t} - 1"},
    {true, OPK_ASYNC_COPY, "_co", 0, AT_CUR, "{cn} or {s} == {t} - 1", "{cn} or {s} == {t} - 1"},
    {true, OPK_WAIT, "_wo", 0, AT_PREV, "{cp} and not {s} == 0", "{cp} and not {s} == 0"},
};

/* A phase predicate with its names filled in. */
static Expr *predicate(Gen *g, const char *tmpl, int k, const char *s) {
  char out[600] = "", cn[128], cp[128];
  spec_name(g, k, "_cn", cn, sizeof cn), spec_name(g, k, "_cp", cp, sizeof cp);
  size_t n = 0;
  for (const char *t = tmpl; *t && n < sizeof out - 200; t++) {
    const char *w = !strncmp(t, "{cn}", 4) ? cn : !strncmp(t, "{cp}", 4) ? cp : !strncmp(t, "{s}", 3) ? s : !strncmp(t, "{t}", 3) ? g->steps : NULL;
    if (!w) {
      out[n++] = *t;
      continue;
    }
    n = cat(out, sizeof out, n, "%s", w);
    t += t[2] == '}' ? 2 : 3;
  }
  out[n] = 0;
  return ex(g, "%s", out);
}

static void phase(Gen *g, Ops *o, const Phase *ph, const char *s) {
  char (*at[3])[64] = {g->cur, g->prev, g->next};
  for (int k = 0; k < g->pp->nspecs; k++) {
    if (g->trivial[k] || g->pp->specs[k].out != ph->out) continue;
    char slot[160];
    spec_name(g, k, ph->counter, slot, sizeof slot);
    strncat(slot, " % 2", sizeof slot - strlen(slot) - 1);
    Ops then = {0};
    copy_block(g, &then, ph->kind, k, at[ph->at], slot);
    when(g, o, predicate(g, ph->when, k, s), &then);
  }
}

/* The loop body of one step, and the carries' next values. */
static void step(Gen *g, Ops *o, Op *loop) {
  const Pipe *pp = g->pp;
  const char *s = loop->name[FLD_VAR];
  char c[160], name[128];
  bind_indices(g, o, s, "c", g->cur);
  snprintf(c, sizeof c, "(%s + %s - 1) %% %s", s, g->steps, g->steps);
  bind_indices(g, o, c, "p", g->prev);
  snprintf(c, sizeof c, "(%s + 1) %% %s", s, g->steps);
  bind_indices(g, o, c, "n", g->next);
  for (int k = 0; k < pp->nspecs; k++) {
    if (g->trivial[k]) continue;
    spec_name(g, k, "_cn", name, sizeof name);
    let(g, o, name, differs(g, k, g->cur, g->next));
    spec_name(g, k, "_cp", name, sizeof name);
    let(g, o, name, differs(g, k, g->cur, g->prev));
  }
  phase(g, o, &phases[0], s), phase(g, o, &phases[1], s);
  grid_calls(g, &pp->body);
  for (int i = 0; i < pp->body.n; i++) push(g, o, pp->body.ops[i]);
  phase(g, o, &phases[2], s), phase(g, o, &phases[3], s);
  for (int k = 0; k < pp->nspecs; k++)
    for (int i = 0; i < 4 && !g->trivial[k]; i++) {
      const Phase *ph = &phases[i];
      if (pp->specs[k].out != ph->out) continue;
      spec_name(g, k, ph->counter, name, sizeof name);
      Expr *adv = predicate(g, ph->advance, k, s);
      carry(g, loop, name, ph->init, ext(g, &adv, 1, "where(__b0, %s + 1, %s)", name, name));
    }
}

/* Buffers, semaphores and the body's view of each block. */
static bool buffers(Gen *g, Expr **views) {
  const Pipe *pp = g->pp;
  for (int k = 0; k < pp->nspecs; k++) {
    const PipeSpec *s = &pp->specs[k];
    const Ref *r = program_ref(g->p, s->ref);
    if (!spec_ok(g, s, r)) return false;
    g->trivial[k] = trivial(g, s, r);
    char buf[96], sem[128], slot[128];
    spec_name(g, k, "", buf, sizeof buf);
    spec_name(g, k, "_sem", sem, sizeof sem);
    if (program_ref(g->p, buf) || program_ref(g->p, sem)) {
      char msg[300];
      snprintf(msg, sizeof msg, "emit_pipeline: the ref name '%s' is taken; the pipeline names its buffers and semaphores %s...: rename the ref", program_ref(g->p, buf) ? buf : sem, g->pre);
      return fail(g, g->pp->loc, msg);
    }
    if (g->trivial[k]) {
      add_ref(g, buf, SP_VMEM, r->dtype, r->rank, r->shape);
      views[k] = ex(g, "%s", buf);
      continue;
    }
    int64_t shape[MAX_RANK + 1] = {2}, two = 2;
    int nw = wdims(s, shape + 1);
    if (nw == 1) shape[0] = 2 * shape[1];
    if (nw + 1 > MAX_RANK) return fail(g, s->block_loc, "emit_pipeline: a block of more than 7 dimensions does not fit a buffer of two blocks");
    add_ref(g, buf, SP_VMEM, r->dtype, nw == 1 ? 1 : nw + 1, shape);
    add_ref(g, sem, SP_SEMAPHORE, DT_INT32, 1, &two);
    spec_name(g, k, s->out ? "_co" : "_wi", slot, sizeof slot);
    strncat(slot, " % 2", sizeof slot - strlen(slot) - 1);
    views[k] = window(g, buf, s, slot, false);
  }
  return !g->failed;
}

static void prologue(Gen *g, Ops *o) {
  const Pipe *pp = g->pp;
  char zero[MAX_RANK][64], buf[96];
  for (int d = 0; d < pp->ngrid; d++) snprintf(zero[d], 64, "%s", g->o[d]);
  for (int k = 0; k < pp->nin; k++)
    if (g->trivial[k]) spec_name(g, k, "", buf, sizeof buf), dma(g, o, OPK_SYNC_COPY, ex(g, "%s", pp->specs[k].ref), ex(g, "%s", buf), NULL);
  for (int k = 0; k < pp->nin; k++)
    if (!g->trivial[k]) copy_block(g, o, OPK_ASYNC_COPY, k, zero, "0");
}

static void epilogue(Gen *g, Ops *o) {
  const Pipe *pp = g->pp;
  char last[128], buf[96], wo[128];
  snprintf(last, sizeof last, "%s - 1", g->steps);
  bind_indices(g, o, last, "f", g->fin);
  for (int k = pp->nin; k < pp->nspecs; k++) {
    if (g->trivial[k]) continue;
    spec_name(g, k, "_wo", wo, sizeof wo);
    strncat(wo, " % 2", sizeof wo - strlen(wo) - 1);
    copy_block(g, o, OPK_WAIT, k, g->fin, wo);
  }
  for (int k = pp->nin; k < pp->nspecs; k++)
    if (g->trivial[k]) spec_name(g, k, "", buf, sizeof buf), dma(g, o, OPK_SYNC_COPY, ex(g, "%s", buf), ex(g, "%s", pp->specs[k].ref), NULL);
}

static bool grid_ok(Gen *g) {
  const Pipe *pp = g->pp;
  for (int d = 0; d < pp->ngrid; d++)
    if (pp->grid[d] <= 0) {
      char r[400];
      size_t n = cat(r, sizeof r, 0, "(");
      for (int e = 0; e < pp->ngrid; e++) n = cat(r, sizeof r, n, "%s%lld", e ? ", " : "", (long long)pp->grid[e]);
      cat(r, sizeof r, n, pp->ngrid == 1 ? ",)" : ")");
      diag_set(g->d, D_EP1, pp->grid_loc, r);
      return g->failed = true, false;
    }
  int64_t steps = 1;
  for (int d = 0; d < pp->ngrid; d++)
    if (pp->grid[d] > (1LL << 31) / steps) return fail(g, pp->grid_loc, "emit_pipeline: the grid has more than 2**31 steps (sc-sim's limit)");
    else steps *= pp->grid[d];
  return true;
}

static bool expand(Program *p, const Pipe *pp, Body *out, Diag *d) {
  Gen g = {.p = p, .d = d, .pp = pp};
  snprintf(g.pre, sizeof g.pre, "_ep%d_", pp->at->id);
  Ops o = {0}, run = {0}, lp = {0};
  if (p->kernel == KERNEL_SCALAR) {
    diag_set(d, D_IN_VALUE, pp->loc, "emit_pipeline: the pipeline's buffers are in VMEM, which the scalar subcore does not have: run it on a vector_subcore kernel");
    return false;
  }
  if (!grid_ok(&g) || !split_grid(&g, &o)) return false;
  Expr *views[MAX_SPECS];
  if (!buffers(&g, views)) return false;
  const char *params[MAX_SPECS];
  for (int k = 0; k < pp->nspecs; k++) params[k] = pp->specs[k].param;
  sugar_substitute(&p->arena, (Body *)&pp->body, params, views, pp->nspecs);
  steps_text(&g, &o);
  Ops *r = g.dyn ? &run : &o;
  prologue(&g, r);
  int ncarry = 0;
  for (int k = 0; k < pp->nspecs; k++) ncarry += g.trivial[k] ? 0 : 2;
  Op *loop = mk_loop(&g, ncarry);
  step(&g, &lp, loop);
  loop->body = body_of(&lp);
  push(&g, r, loop);
  epilogue(&g, r);
  if (g.dyn) when(&g, &o, ex(&g, "%s > 0", g.steps), &run);
  if (g.failed) return false;
  *out = body_of(&o);
  return true;
}

/* ---- the walk ---------------------------------------------------------- */
typedef struct {
  Program *p;
  Pipe *const *pipes;
  int n;
  Diag *d;
} Walk;

static bool walk_body(Walk *w, Body *b);

static const Pipe *pipe_of(const Walk *w, const Op *op) {
  for (int i = 0; i < w->n; i++)
    if (w->pipes[i]->at == op) return w->pipes[i];
  return NULL;
}

static bool walk_body(Walk *w, Body *b) {
  Ops o = {0};
  Gen g = {.p = w->p};
  for (int i = 0; i < b->n; i++) {
    Op *op = b->ops[i];
    const Pipe *pp = pipe_of(w, op);
    if (!pp) {
      if (!walk_body(w, &op->body) || !walk_body(w, &op->els)) return false;
      push(&g, &o, op);
      continue;
    }
    if (!walk_body(w, (Body *)&pp->body)) return false;
    Body x;
    if (!expand(w->p, pp, &x, w->d)) return false;
    for (int k = 0; k < x.n; k++) push(&g, &o, x.ops[k]);
  }
  if (o.n != b->n || (o.n && memcmp(o.v, b->ops, sizeof(Op *) * (size_t)o.n))) *b = body_of(&o);
  return true;
}

bool pipeline_rewrite(Program *p, Pipe *const *pipes, int n, Diag *d) {
  Walk w = {p, pipes, n, d};
  return walk_body(&w, &p->body);
}
