/* sim/run/engine_view.c -- the engine's operands and memory operands:
 * registers read with their lane counts checked, and a VDesc resolved into
 * an EV, either affine (element i at base + sum(idx_d * bstride_d)) or
 * walked level by level with an explicit work list (a widening bitcast
 * splits one element into parts on several rows). */
#include "engine_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool eng_efault(Eng *E, Sc *s, const Instr *in, FaultKind k, const char *msg) {
  run_fault(E->r, k, in->loc, s->core, s->subcore, in->op_id, "%s", msg);
  return false;
}

/* A lowering written by hand can pair operands of different lane counts;
 * the engine's loops trust them, so a mismatch stops the run as a
 * malformed lowering (exit 2), never a read past a register. */
bool eng_fits_fault(Eng *E, Sc *s, const Instr *in, const char *what, int64_t have, const char *of, int64_t want) {
  if (have == want) return true;
  char msg[300];
  snprintf(msg, sizeof msg, "%s: the %s has %lld lanes, but %s has %lld %s", isa_mnemonic(in->op), what, (long long)have, of,
           (long long)want, strncmp(of, "the view", 8) ? "lanes" : "elements");
  return eng_efault(E, s, in, FAULT_LOWERING, msg);
}

/* A register read that was bound only on a branch that did not run. */
Value *eng_rd_unbound(Eng *E, Sc *s, const Instr *in, bool *ok) {
  *ok = eng_efault(E, s, in, FAULT_UNINIT, "a name is read that was bound only on a branch that did not run");
  return NULL;
}

static int64_t scalar_of(const Value *v) { return dtype_is_float(v->dtype) ? (int64_t)v->v[0].f : v->v[0].i; }

bool eng_int_reg_slow(Eng *E, Sc *s, const Instr *in, int r, int64_t *out) {
  bool ok = true;
  Value *v = eng_rd(E, s, in, r, &ok);
  if (!ok || !eng_fits(E, s, in, "scalar operand", v->n, "a scalar", 1)) return false;
  if (!v->def[0]) {
    eng_efault(E, s, in, FAULT_UNINIT, "an index, bound or count is undefined");
    return eng_origin_fault(E, s, in, v), false;
  }
  *out = scalar_of(v);
  return true;
}

static bool operand_value(Eng *E, Sc *s, const Instr *in, Operand o, int64_t *out) {
  int64_t r = 0;
  if (o.reg >= 0 && !eng_int_reg(E, s, in, o.reg, &r)) return false;
  *out = o.imm + r;
  return true;
}

/* ---- views ---------------------------------------------------------------- */
/* One INDEX level of the affine form; false when it leaves the fast path. */
static bool affine_index(EV *ev, int k) {
  const Level *lv = &ev->vd->lev[k];
  if (lv->int_rank) return false;
  int64_t dim[MAX_RANK], st[MAX_RANK];
  int r = 0, si = 0;
  for (int d = 0; d < lv->n; d++) {
    int64_t start = ev->start[k][d];
    if (lv->ek[d] != IX_SLICE) {
      if (start < 0 || start >= ev->adim[d]) return false;
      ev->base += start * ev->bstride[d];
      continue;
    }
    int64_t size = ev->lvl[k + 1][si++];
    int64_t last; /* overflow-checked: a dynamic start may be near 2**63 */
    if (size > 0 && (start < 0 || __builtin_mul_overflow(size - 1, lv->stride[d], &last) ||
                     __builtin_add_overflow(start, last, &last) || last < 0 || last >= ev->adim[d]))
      return false;
    ev->base += start * ev->bstride[d];
    dim[r] = size;
    st[r++] = ev->bstride[d] * lv->stride[d];
  }
  ev->arank = r;
  memcpy(ev->adim, dim, sizeof dim);
  memcpy(ev->bstride, st, sizeof st);
  return true;
}

static bool affine_reshape(EV *ev, int k) {
  int64_t esize = dtype_size(ev->dt[k]), want = esize;
  for (int d = ev->arank - 1; d >= 0; d--) { /* dense row-major only */
    if (ev->adim[d] != 1 && ev->bstride[d] != want) return false;
    want *= ev->adim[d];
  }
  const Level *lv = &ev->vd->lev[k];
  ev->arank = lv->rank;
  int64_t b = esize;
  for (int d = lv->rank - 1; d >= 0; d--) {
    ev->adim[d] = lv->shape[d];
    ev->bstride[d] = b;
    b *= lv->shape[d];
  }
  return true;
}

static void ev_affine(EV *ev) {
  ev->affine = false;
  ev->base = 0;
  ev->arank = ev->rank[0];
  int64_t b = dtype_size(ev->dt[0]);
  for (int d = ev->arank - 1; d >= 0; d--) {
    ev->adim[d] = ev->lvl[0][d];
    ev->bstride[d] = b;
    b *= ev->lvl[0][d];
  }
  for (int k = 0; k < ev->vd->nlev; k++) {
    const Level *lv = &ev->vd->lev[k];
    bool ok = lv->kind == TR_INDEX     ? affine_index(ev, k)
              : lv->kind == TR_RESHAPE ? affine_reshape(ev, k)
                                       : dtype_size(ev->dt[k]) == dtype_size(lv->dtype);
    if (!ok) return;
  }
  ev->affine = true;
}

static bool ev_resolve_full(Eng *E, Sc *s, const Instr *in, int view, EV *ev) {
  const VDesc *vd = &E->c->views[view];
  ev->vd = vd;
  ev->why[0] = '\0';
  ev->rank[0] = vd->ref->rank;
  memcpy(ev->lvl[0], vd->ref->shape, sizeof ev->lvl[0]);
  ev->dt[0] = vd->ref->dtype;
  for (int k = 0; k < vd->nlev; k++) {
    const Level *lv = &vd->lev[k];
    ev->dt[k + 1] = lv->dtype;
    ev->rank[k + 1] = lv->rank;
    memcpy(ev->lvl[k + 1], lv->shape, sizeof ev->lvl[0]);
    if (lv->kind != TR_INDEX) continue;
    int r = 0;
    for (int d = 0; d < lv->n; d++) {
      if (!operand_value(E, s, in, lv->start[d], &ev->start[k][d])) return false;
      if (lv->ek[d] != IX_SLICE) continue;
      int64_t size;
      if (!operand_value(E, s, in, lv->size[d], &size)) return false;
      ev->lvl[k + 1][r++] = size;
    }
    if (!lv->int_rank) ev->rank[k + 1] = r;
  }
  ev->top = vd->nlev;
  ev->n = 1;
  for (int d = 0; d < ev->rank[ev->top]; d++) ev->n *= ev->lvl[ev->top][d];
  ev_affine(ev);
  ev->dense = -1;
  if (ev->affine) ev->dense = eng_dense_block(ev);
  return true;
}

static bool static_view(const VDesc *vd) {
  for (int k = 0; k < vd->nlev; k++)
    for (int d = 0; d < vd->lev[k].n; d++)
      if (vd->lev[k].start[d].reg >= 0 || vd->lev[k].size[d].reg >= 0) return false;
  return true;
}

/* A dynamic view's register operands, read in the order ev_resolve_full
 * reads them (so a fault is the same fault), into key; false on a fault. */
static bool view_key(Eng *E, Sc *s, const Instr *in, const VDesc *vd, int64_t *key) {
  int n = 0;
  for (int k = 0; k < vd->nlev; k++) {
    const Level *lv = &vd->lev[k];
    if (lv->kind != TR_INDEX) continue;
    for (int d = 0; d < lv->n; d++) {
      if (lv->start[d].reg >= 0 && !eng_int_reg(E, s, in, lv->start[d].reg, &key[n++])) return false;
      if (lv->ek[d] == IX_SLICE && lv->size[d].reg >= 0 && !eng_int_reg(E, s, in, lv->size[d].reg, &key[n++])) return false;
    }
  }
  return true;
}

static void ev_copy(EV *ev, const EV *c) {
  ev->top = c->top;
  ev->n = c->n;
  ev->affine = c->affine;
  if (c->affine) { /* the fast path needs only these */
    ev->arank = c->arank;
    ev->base = c->base;
    ev->dense = c->dense;
    memcpy(ev->adim, c->adim, sizeof ev->adim); /* whole arrays: fixed-size copies, no call */
    memcpy(ev->bstride, c->bstride, sizeof ev->bstride);
    ev->dt[ev->top] = c->dt[c->top];
    ev->rank[ev->top] = c->rank[c->top];
    memcpy(ev->lvl[ev->top], c->lvl[c->top], sizeof ev->lvl[0]);
  } else {
    *ev = *c;
  }
}

/* A dynamic view: its resolution depends only on its operands' values, so
 * the last one is kept and reused while they are unchanged. */
static bool ev_resolve_dynamic(Eng *E, Sc *s, const Instr *in, int view, EV *ev) {
  int64_t key[2 * MAX_TRANSFORMS * MAX_RANK], *kept = E->vkey + E->vkey_at[view];
  int nk = E->vkey_at[view + 1] - E->vkey_at[view];
  if (!view_key(E, s, in, &E->c->views[view], key)) return false;
  if (E->cache_state[view] != 4 || memcmp(key, kept, sizeof *key * (size_t)nk)) {
    if (!ev_resolve_full(E, s, in, view, &E->cache[view])) return false;
    memcpy(kept, key, sizeof *key * (size_t)nk);
    E->cache_state[view] = 4;
  }
  ev_copy(ev, &E->cache[view]);
  return true;
}

/* Whether a start keeps its entry of a compiled view inside the ref (as
 * affine_index checks it). */
static bool cview_fits(const CView *cv, int d, int64_t start) {
  if (!cv->slice[d]) return start >= 0 && start < cv->dim[d];
  int64_t last;
  return cv->size[d] <= 0 || !(start < 0 || __builtin_mul_overflow(cv->size[d] - 1, cv->stride[d], &last) ||
                               __builtin_add_overflow(start, last, &last) || last < 0 || last >= cv->dim[d]);
}

/* A compiled view: its starts read (every one, in ev_resolve_full's order,
 * so a fault is the same fault) and checked; a start outside its dimension
 * leaves the view to the full walk, which names the index. */
static bool ev_resolve_compiled(Eng *E, Sc *s, const Instr *in, int view, EV *ev) {
  const CView *cv = &E->cview[view];
  int64_t base = 0;
  bool aff = true;
  for (int d = 0; d < cv->nd; d++) {
    int64_t start = cv->start[d].imm, r = 0;
    if (cv->start[d].reg >= 0 && !eng_int_reg(E, s, in, cv->start[d].reg, &r)) return false;
    start += r;
    aff = aff && cview_fits(cv, d, start);
    if (aff) base += start * cv->rstride[d];
  }
  if (!aff) return ev_resolve_full(E, s, in, view, ev);
  ev_copy(ev, &cv->shape);
  ev->base = base;
  return true;
}

/* Reads a view's operands.  A view without register operands resolves the
 * same way every time: it is resolved once and copied (only its instance
 * changes with the subcore). */
bool eng_ev_resolve(Eng *E, Sc *s, const Instr *in, int view, int core, int subcore, EV *ev) {
  const VDesc *vd = &E->c->views[view];
  if (E->cache_state[view] == 0) E->cache_state[view] = static_view(vd) ? 1 : 2;
  if (E->cache_state[view] == 1) {
    if (!ev_resolve_full(E, s, in, view, &E->cache[view])) return false;
    E->cache_state[view] = 3;
  }
  ev->vd = vd;
  if (E->cache_state[view] == 3) {
    ev_copy(ev, &E->cache[view]);
  } else if (E->cview[view].on) {
    if (!ev_resolve_compiled(E, s, in, view, ev)) return false;
  } else if (!ev_resolve_dynamic(E, s, in, view, ev)) {
    return false;
  }
  ev->reg = mem_region(&E->r->mem, vd->ref->index, core, subcore);
  return true;
}

typedef struct {
  int level;
  int64_t idx[MAX_RANK];
  int lo, nb;
} Work;

/* Index `idx` at level k to the parent index at level k-1: INDEX levels add
 * starts and scale by strides; the position of a slice dim in the child is
 * after the integer block when the integers are adjacent (SPEC §3.1.7). */
static bool up_index(EV *ev, int k, const int64_t *idx, int64_t *parent) {
  const Level *lv = &ev->vd->lev[k - 1];
  int first = -1, last = -1, nint = 0;
  for (int d = 0; d < lv->n; d++)
    if (lv->ek[d] != IX_SLICE) nint++, last = d, first = first < 0 ? d : first;
  int lead = (nint && last - first + 1 == nint) ? first : 0;
  int child = 0;
  for (int d = 0; d < lv->n; d++) {
    if (lv->ek[d] == IX_SLICE) {
      int pos = child < lead ? child : child + lv->int_rank;
      int64_t off;
      if (__builtin_mul_overflow(idx[pos], lv->stride[d], &off) || __builtin_add_overflow(ev->start[k - 1][d], off, &parent[d]))
        parent[d] = ev->start[k - 1][d] < 0 ? INT64_MIN : INT64_MAX; /* far outside either way */
      child++;
    } else {
      parent[d] = ev->start[k - 1][d];
    }
    if (parent[d] < 0 || parent[d] >= ev->lvl[k - 1][d]) {
      snprintf(ev->why, sizeof ev->why, "index %lld is outside dimension %d of size %lld (%s '%s')", (long long)parent[d], d,
               (long long)ev->lvl[k - 1][d], space_key(ev->vd->ref->space), ev->vd->ref->name);
      return false;
    }
  }
  return true;
}

static void to_index(int64_t flat, int rank, const int64_t *shape, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    int64_t n = shape[d] > 0 ? shape[d] : 1;
    idx[d] = flat % n;
    flat /= n;
  }
}

int64_t eng_to_flat(int rank, const int64_t *shape, const int64_t *idx) {
  int64_t f = 0;
  for (int d = 0; d < rank; d++) f = f * shape[d] + idx[d];
  return f;
}

bool eng_ev_parts(EV *ev, int64_t elem, Part *parts, int *np) {
  if (ev->affine && ev->arank == 1 && elem >= 0 && elem < ev->adim[0]) { /* a row: no division */
    parts[0] = (Part){ev->base + elem * ev->bstride[0], dtype_size(ev->dt[ev->top])};
    *np = 1;
    return true;
  }
  if (ev->affine) {
    int64_t off = ev->base;
    for (int d = ev->arank - 1; d >= 0; d--) {
      int64_t n = ev->adim[d] > 0 ? ev->adim[d] : 1;
      off += (elem % n) * ev->bstride[d];
      elem /= n;
    }
    parts[0] = (Part){off, dtype_size(ev->dt[ev->top])};
    *np = 1;
    return true;
  }
  Work stack[MAX_PARTS];
  int sp = 0;
  *np = 0;
  stack[sp].level = ev->top;
  to_index(elem, ev->rank[ev->top], ev->lvl[ev->top], stack[sp].idx);
  stack[sp].lo = 0;
  stack[sp++].nb = dtype_size(ev->dt[ev->top]);
  while (sp) {
    Work w = stack[--sp];
    if (w.level == 0) {
      if (*np >= MAX_PARTS) return false;
      parts[(*np)++] = (Part){eng_to_flat(ev->rank[0], ev->lvl[0], w.idx) * dtype_size(ev->dt[0]) + w.lo, w.nb};
      continue;
    }
    const Level *lv = &ev->vd->lev[w.level - 1];
    Work up = w;
    up.level--;
    if (lv->kind == TR_INDEX) {
      if (!up_index(ev, w.level, w.idx, up.idx)) return false;
    } else if (lv->kind == TR_RESHAPE) {
      to_index(eng_to_flat(ev->rank[w.level], ev->lvl[w.level], w.idx), ev->rank[up.level], ev->lvl[up.level], up.idx);
    } else {
      int pb = dtype_size(ev->dt[up.level]), cb = dtype_size(ev->dt[w.level]), d2 = ev->rank[up.level] - 2;
      if (pb > cb) { /* narrowing */
        up.idx[d2] = w.idx[d2] / (pb / cb);
        up.lo = w.lo + (int)(w.idx[d2] % (pb / cb)) * cb;
      } else if (pb < cb) { /* widening: parts in reverse so the low part pops first */
        for (int k = cb / pb - 1; k >= 0; k--) {
          int a = w.lo > k * pb ? w.lo : k * pb, b = w.lo + w.nb < (k + 1) * pb ? w.lo + w.nb : (k + 1) * pb;
          if (a >= b || sp >= MAX_PARTS) continue;
          Work part = up;
          part.idx[d2] = w.idx[d2] * (cb / pb) + k;
          part.lo = a - k * pb;
          part.nb = b - a;
          stack[sp++] = part;
        }
        continue;
      }
    }
    if (sp >= MAX_PARTS) return false;
    stack[sp++] = up;
  }
  /* the pops visit parts high to low for widening; order them by the element's byte order */
  return true;
}

/* Whether the n bytes from off are all defined (n <= 8). */
static bool bytes_defined(const Region *g, int64_t off, int n) {
  if ((off & 7) + n <= 8) { /* within one shadow byte */
    unsigned m = ((1u << n) - 1) << (off & 7);
    return (g->defined[off >> 3] & m) == m;
  }
  bool d = true;
  for (int j = 0; j < n; j++) d = d && mem_defined(g, off + j);
  return d;
}

/* One part holding the whole element: no assembly of its bytes. */
static bool whole(const EV *ev, const Part *pt, int np) { return np == 1 && pt[0].n == dtype_size(ev->dt[ev->top]) && pt[0].n <= 8; }

#define HOST_LE (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

Cell eng_ev_read(EV *ev, const Part *pt, int np, uint8_t *def) {
  if (HOST_LE && ev->dt[ev->top] == DT_INT32 && np == 1 && pt[0].n == 4) { /* dtype_load of an int32: its 4 bytes, sign-extended */
    int32_t w;
    memcpy(&w, ev->reg->bytes + pt[0].off, 4);
    *def = bytes_defined(ev->reg, pt[0].off, 4);
    return (Cell){.i = w};
  }
  if (whole(ev, pt, np)) {
    *def = bytes_defined(ev->reg, pt[0].off, pt[0].n);
    return dtype_load(ev->dt[ev->top], ev->reg->bytes + pt[0].off);
  }
  uint8_t b[16];
  int k = 0;
  *def = 1;
  for (int i = 0; i < np; i++)
    for (int j = 0; j < pt[i].n; j++) {
      b[k++] = ev->reg->bytes[pt[i].off + j];
      *def &= mem_defined(ev->reg, pt[i].off + j);
    }
  return dtype_load(ev->dt[ev->top], b);
}

void eng_ev_write(EV *ev, const Part *pt, int np, Cell c) {
  if (HOST_LE && ev->dt[ev->top] == DT_INT32 && np == 1 && pt[0].n == 4 && (pt[0].off & 7) <= 4) { /* dtype_store of an int32: its low 4 bytes */
    int64_t off = pt[0].off;
    int32_t w = (int32_t)c.i;
    memcpy(ev->reg->bytes + off, &w, 4);
    ev->reg->defined[off >> 3] |= (uint8_t)(0xfu << (off & 7));
    return;
  }
  if (whole(ev, pt, np)) {
    mem_set_defined(ev->reg, pt[0].off, pt[0].n, true);
    dtype_store(ev->dt[ev->top], c, ev->reg->bytes + pt[0].off);
    return;
  }
  uint8_t b[16];
  for (int i = 0; i < np; i++) mem_set_defined(ev->reg, pt[i].off, pt[i].n, true);
  dtype_store(ev->dt[ev->top], c, b);
  int k = 0;
  for (int i = 0; i < np; i++)
    for (int j = 0; j < pt[i].n; j++) {
      ev->reg->bytes[pt[i].off + j] = b[k++];
    }
}

/* An element left undefined by a store of an undefined lane. */
void eng_ev_undef(EV *ev, const Part *pt, int np) {
  for (int i = 0; i < np; i++) mem_set_defined(ev->reg, pt[i].off, pt[i].n, false);
}

bool eng_ev_oob(Eng *E, Sc *s, const Instr *in, EV *ev) { return eng_efault(E, s, in, FAULT_OOB, ev->why); }

/* The byte offset of element i of an affine view. */
int64_t eng_aff_off(const EV *ev, int64_t i) {
  int64_t off = ev->base;
  for (int d = ev->arank - 1; d >= 0; d--) {
    int64_t n = ev->adim[d] > 0 ? ev->adim[d] : 1;
    off += (i % n) * ev->bstride[d];
    i /= n;
  }
  return off;
}

/* How many trailing elements form a dense row-major block (a run of them
 * starting on a multiple of it sits at consecutive addresses). */
int64_t eng_dense_block(const EV *ev) {
  if (ev->dense >= 0) return ev->dense;
  int64_t want = dtype_size(ev->dt[ev->top]), n = 1;
  for (int d = ev->arank - 1; d >= 0; d--) {
    if (ev->adim[d] != 1 && ev->bstride[d] != want) break;
    want *= ev->adim[d];
    n *= ev->adim[d];
  }
  return n;
}
