/* sim/run/engine.c -- the engine: lowered instructions on every subcore.
 *
 * Each subcore has a program counter and a register file of Values.  The
 * scheduler issues one instruction of each runnable subcore in turn, so the
 * subcores advance together; an instruction that cannot complete (a DMA
 * wait whose semaphore is short, a semaphore wait, a barrier) leaves its
 * subcore at the same pc to retry.  DMAs move their data when they are
 * enqueued and signal their semaphore then; a race-free program cannot tell
 * this from a copy that lands at its wait (SPEC §7.10).
 *
 * Memory operands are VDescs (lowering/lower.h).  An element is located by
 * a walk down the VDesc's levels with an explicit work list (a widening
 * bitcast splits one element into parts on several rows). */
#include "engine_priv.h"
#include "stream.h"
#include "debug_print.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* tag 0: a read for verification's own bookkeeping, not an access. */

#define HOST_LE (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

/* Whether all n elements of an affine view sit densely from its base. */
static bool dense_all(const EV *ev) { return ev->affine && eng_dense_block(ev) >= ev->n; }

static bool load_all(Eng *E, Sc *s, const Instr *in, EV *ev, Value *out, uint32_t tag) {
  eng_shape(out, ev->dt[ev->top], ev->rank[ev->top], ev->lvl[ev->top]);
  /* the fast path; a span that may race is left to the element walk, which reports as always */
  if (ev->n > 0 && dense_all(ev) && race_span(E->rd, tag, ev->reg, ev->base, ev->n * dtype_size(ev->dt[ev->top]))) {
    Dtype t = ev->dt[ev->top];
    int64_t es = dtype_size(t);
    const uint8_t *b = ev->reg->bytes + ev->base;
    dtype_load_n(t, b, ev->n, out->v);
    if (mem_range_defined(ev->reg, ev->base, ev->n * es)) memset(out->def, 1, (size_t)ev->n);
    else
      for (int64_t i = 0; i < ev->n; i++) out->def[i] = mem_range_defined(ev->reg, ev->base + i * es, es);
    return true;
  }
  Part pt[MAX_PARTS];
  int np;
  for (int64_t i = 0; i < ev->n; i++) {
    if (!eng_ev_parts(ev, i, pt, &np)) return eng_ev_oob(E, s, in, ev);
    if (tag && !eng_race_parts(E, tag, ev->reg, pt, np)) return false;
    out->v[i] = eng_ev_read(ev, pt, np, &out->def[i]);
  }
  return true;
}

/* ---- arithmetic --------------------------------------------------------- */
static void set_reg(Sc *s, int r) { s->written[r] = 1; }


static bool is_load(Opcode op) { return op == I_LOAD || op == I_VLOAD || op == I_VLOAD_IDX; }

/* ---- timing helpers (the costs are the chip table's, sim/chips.h) ---------- */
static const ChipParams *cp(const Eng *E) { return &E->p->params; }

/* Issue slots of a vector op of more bytes than one slot holds. */
static __attribute__((noinline)) uint64_t groups_many(const Eng *E, int64_t bytes) {
  int64_t words = (bytes + 3) / 4, lanes = cp(E)->num_lanes > 0 ? cp(E)->num_lanes : 1;
  return words <= lanes ? 1 : (uint64_t)((words + lanes - 1) / lanes);
}

/* Issue slots of an n-element vector op: one per num_lanes 32-bit words
 * (inline: every value instruction ends here, most of them one slot). */
static inline uint64_t groups(const Eng *E, int64_t n, Dtype t) {
  int64_t bytes = n * E->dsize[t];
  return bytes <= E->group_bytes ? 1 : groups_many(E, bytes); /* one issue slot: the common vector */
}

static inline uint64_t value_cost(const Eng *E, const Value *v) {
  if (!v || v->rank == 0) return (uint64_t)cp(E)->scalar_issue_cycles;
  return groups(E, v->n, v->dtype) * (uint64_t)cp(E)->vector_issue_cycles;
}

/* count_access of a space's statistics found already (CView.space). */
static inline void count_in(SpaceStats *st, int64_t bytes, bool write) {
  st->accesses++;
  if (write) st->bytes_written += (uint64_t)bytes;
  else st->bytes_read += (uint64_t)bytes;
}

static void count_access(Eng *E, Space sp, int64_t bytes, bool write) { count_in(&E->r->stats.space[sp], bytes, write); }

/* The bytes an instruction loaded, stored or moved, for the profile. */
static void prof_bytes(Eng *E, int64_t bytes) {
  if (E->prof) E->prof[E->cur].bytes += (uint64_t)bytes;
}

static void val_text(const Value *v, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  if (v->rank) len += (size_t)snprintf(buf, n, "[");
  for (int64_t i = 0; i < v->n && i < 8 && len < n; i++) {
    char c[48];
    if (v->def[i]) dtype_format(v->dtype, v->v[i], c, sizeof c);
    else snprintf(c, sizeof c, "?");
    len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", c);
  }
  if (v->rank && len < n) snprintf(buf + len, n - len, "%s]", v->n > 8 ? ", ..." : "");
}

static void wait_done(Eng *E, Sc *s, uint64_t t1);

/* ---- the bytes an access touched, for its trace event -------------------- */
static void span_add(Eng *E, const Part *pt, int np) {
  if (!E->spans || E->nspans + np > E->capspans) {
    int64_t c = E->capspans ? E->capspans * 2 : 64;
    while (c < E->nspans + np) c *= 2;
    int64_t *q = realloc(E->spans, sizeof *q * 2 * (size_t)c);
    if (!q) abort();
    E->spans = q, E->capspans = c;
  }
  for (int i = 0; i < np; i++) E->spans[2 * E->nspans] = pt[i].off, E->spans[2 * E->nspans++ + 1] = pt[i].n;
}

/* Starts the list of a gather or scatter (allocated, so that an access
 * with every lane masked off lists [] rather than null). */
static void spans_begin(Eng *E) {
  E->nspans = 0;
  if (E->trace) span_add(E, NULL, 0);
}

static int span_cmp(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Sorts the spans by offset and merges those that touch or overlap. */
static void spans_merge(Eng *E) {
  if (!E->nspans) return;
  qsort(E->spans, (size_t)E->nspans, 2 * sizeof *E->spans, span_cmp);
  int64_t k = 0, *sp = E->spans;
  for (int64_t i = 1; i < E->nspans; i++) {
    int64_t end = sp[2 * k] + sp[2 * k + 1], e2 = sp[2 * i] + sp[2 * i + 1];
    if (sp[2 * i] <= end) sp[2 * k + 1] = (e2 > end ? e2 : end) - sp[2 * k];
    else k++, sp[2 * k] = sp[2 * i], sp[2 * k + 1] = sp[2 * i + 1];
  }
  E->nspans = k + 1;
}

/* The spans of every element of a view (it resolved, so each element has
 * its parts). */
static void view_spans(Eng *E, EV *ev) {
  Part pt[MAX_PARTS];
  int np;
  E->nspans = 0;
  for (int64_t i = 0; i < ev->n; i++)
    if (eng_ev_parts(ev, i, pt, &np)) span_add(E, pt, np);
  spans_merge(E);
}

/* indexed: a gather or scatter whose lanes' spans E->spans holds (listed
 * always); otherwise the view's, listed unless they are one dense run. */
static void trace_access_event(Eng *E, Sc *s, const Instr *in, EV *ev, const Value *old, const Value *nw, uint64_t cost, bool indexed,
                               int64_t lanes) {
  if (s->waiting) wait_done(E, s, s->t);
  char o[400] = "", w[400] = "";
  if (old) val_text(old, o, sizeof o);
  if (nw) val_text(nw, w, sizeof w);
  TraceEvent te;
  memset(&te, 0, sizeof te);
  te.kind = TE_ACCESS;
  te.t0 = s->t;
  te.t1 = s->t + (cost ? cost : 1);
  te.core = s->core;
  te.subcore = s->subcore;
  te.dma = -1;
  te.op = isa_mnemonic(in->op);
  te.space = space_key(ev->vd->ref->space);
  te.ref = ev->vd->ref->name;
  te.bytes = lanes * dtype_size(ev->dt[ev->top]);
  if (indexed) spans_merge(E);
  else if (ev->n > 0 && dense_all(ev)) E->nspans = 0, te.offset = ev->base;
  else view_spans(E, ev);
  bool one_run = !indexed && E->nspans == 1 && E->spans[1] == te.bytes;
  if (E->nspans) te.offset = E->spans[0];
  if ((indexed || E->nspans) && !one_run) te.spans = E->spans, te.nspans = E->nspans;
  te.old_text = old ? o : NULL;
  te.new_text = nw ? w : NULL;
  te.line = in->loc.line;
  te.col = in->loc.col;
  trace_event(E->trace, &te);
}

static inline void trace_access(Eng *E, Sc *s, const Instr *in, EV *ev, const Value *old, const Value *nw, uint64_t cost, bool indexed,
                                int64_t lanes) {
  if (E->trace) trace_access_event(E, s, in, ev, old, nw, cost, indexed, lanes);
}

/* The race detector's access tag (0, no access, when races are off). */
static inline uint32_t race_open(Eng *E, Sc *s, const Instr *in, bool write, bool atomic, int dma, const EV *ev) {
  if (E->pretag_set) { /* a specialised handler opened this access, then declined */
    E->pretag_set = false;
    return E->pretag;
  }
  if (!E->rd || (dma < 0 && race_lone(E->rd))) return 0; /* eng_race_open's first test, inline */
  return eng_race_open(E, s, in, write, atomic, dma, ev);
}

/* Whether an arith.binary is int32 +, - or * on int32 (or weak int64
 * constant) operands: the low 32 bits of the 64-bit result are the answer. */
static bool int32_wrap(const Instr *in, const Value *a, const Value *b) {
  bool op = in->sub == OP_ADD || in->sub == OP_SUB || in->sub == OP_MUL;
  bool ints = (a->dtype == DT_INT32 || a->dtype == DT_INT64) && (b->dtype == DT_INT32 || b->dtype == DT_INT64);
  return op && ints && in->uty == DT_INT32 && in->ty == DT_INT32;
}

/* t = a op b lane by lane in int32 (a or b may be one lane, broadcast):
 * XA and XB are lane i's operands as uint64_t, a broadcast one read once
 * before the loop, in blocks of 8 lanes (unrolled: -O2 leaves a loop of
 * a fixed trip count as a loop) and then the rest. */
#define LANES(XA, XB, E)                                                           \
  if (n == 16) { /* the common vector: straight-line code, no loop tests */       \
    _Pragma("GCC unroll 16")                                                       \
    for (int64_t i = 0; i < 16; i++) {                                             \
      uint32_t x = (uint32_t)(XA), y = (uint32_t)(XB);                             \
      tv[i].i = (int32_t)(E);                                                      \
    }                                                                              \
  } else {                                                                         \
    int64_t i0 = 0;                                                                \
    for (; i0 + 8 <= n; i0 += 8)                                                   \
      _Pragma("GCC unroll 8")                                                      \
      for (int j = 0; j < 8; j++) {                                                \
        int64_t i = i0 + j;                                                        \
        uint32_t x = (uint32_t)(XA), y = (uint32_t)(XB); /* the low 32 bits */     \
        tv[i].i = (int32_t)(E);                                                    \
      }                                                                            \
    for (int64_t i = i0; i < n; i++) {                                             \
      uint32_t x = (uint32_t)(XA), y = (uint32_t)(XB);                             \
      tv[i].i = (int32_t)(E);                                                      \
    }                                                                              \
  }
#define LANES_OP(XA, XB)                                                           \
  if (op == OP_ADD) LANES(XA, XB, (uint32_t)(x + y))                               \
  else if (op == OP_SUB) LANES(XA, XB, (uint32_t)(x - y))                          \
  else LANES(XA, XB, (uint32_t)(x * y))
static void int32_lanes(ExprOp op, const Value *a, const Value *b, Value *t) {
  int64_t n = t->n;
  const Cell *restrict av = a->v, *restrict bv = b->v; /* t is scratch: its lanes are no operand's */
  const uint8_t *ad = a->def, *bd = b->def;
  Cell *restrict tv = t->v;
  uint8_t *td = t->def;
  uint64_t a0 = (uint64_t)av[0].i, b0 = (uint64_t)bv[0].i; /* a broadcast operand, read once */
  /* defined flags are 0 or 1: & is && without a branch per lane, and a
   * broadcast lane that is defined leaves the other operand's flags */
  if (a->n == 1 && b->n == 1) {
    LANES_OP(a0, b0)
    td[0] = ad[0] & bd[0];
  } else if (b->n == 1) {
    LANES_OP((uint64_t)av[i].i, b0)
    if (bd[0]) eng_defs_copy(td, ad, n);
    else memset(td, 0, (size_t)n);
  } else if (a->n == 1) {
    LANES_OP(a0, (uint64_t)bv[i].i)
    if (ad[0]) eng_defs_copy(td, bd, n);
    else memset(td, 0, (size_t)n);
  } else {
    LANES_OP((uint64_t)av[i].i, (uint64_t)bv[i].i)
    for (int64_t i = 0; i < n; i++) td[i] = ad[i] & bd[i];
  }
}
#undef LANES_OP
#undef LANES

static bool is_cmp(ExprOp op) { return op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE; }

/* The floor modulo of int32 operands (y != 0), inline.  A positive
 * power of two (the common i % 256) is a mask, as two's complement floors
 * it: a division takes the divider some fifteen cycles, which every
 * instruction whose address the result makes waits for. */
static inline __attribute__((always_inline)) int64_t mod_floor32(int64_t x, int64_t y) {
  if (y > 0 && !(y & (y - 1))) return x & (y - 1);
  int64_t v = x % y;
  if (v && ((v < 0) != (y < 0))) v += y;
  return v;
}

/* One lane of the other int32 operators, as alu_binary computes them on
 * int32 operands (y != 0 for // and %). */
static int64_t int32_op(ExprOp op, int64_t x, int64_t y) {
  switch (op) {
  case OP_FLOORDIV: {
    int64_t q = x / y, m = x % y; /* int32 operands: no int64 overflow */
    return m && ((m < 0) != (y < 0)) ? q - 1 : q;
  }
  case OP_MOD: return mod_floor32(x, y);
  case OP_BAND: return x & y;
  case OP_BOR: return x | y;
  case OP_BXOR: return x ^ y;
  case OP_AND: return (x != 0) & (y != 0);
  case OP_OR: return (x != 0) | (y != 0);
  case OP_EQ: return x == y;
  case OP_NE: return x != y;
  case OP_LT: return x < y;
  case OP_LE: return x <= y;
  case OP_GT: return x > y;
  case OP_GE: return x >= y;
  case OP_NONE: case OP_SHL: case OP_SHR: case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV:
  case OP_NEG: case OP_POS: case OP_INVERT: case OP_NOT: break; /* not these (int32_other_fits) */
  }
  return 0;
}

/* Whether int32_other computes in: an int32 operator of int32 (or int64,
 * converted) operands into int32, or a comparison into bool. */
static bool int32_other_fits(const Instr *in, const Value *a, const Value *b) {
  ExprOp op = in->sub;
  bool ints = (a->dtype == DT_INT32 || a->dtype == DT_INT64) && (b->dtype == DT_INT32 || b->dtype == DT_INT64);
  bool ops = op == OP_FLOORDIV || op == OP_MOD || op == OP_BAND || op == OP_BOR || op == OP_BXOR || op == OP_AND || op == OP_OR || is_cmp(op);
  return ints && ops && in->uty == DT_INT32 && (in->ty == DT_INT32 || (in->ty == DT_BOOL && is_cmp(op)));
}

/* Those operators lane by lane (undefined lanes are left as the general
 * loop leaves them); false, deciding nothing, when a defined lane divides
 * by zero: the general loop then faults as it does. */
static bool int32_other(const Instr *in, const Value *a, const Value *b, Value *t) {
  ExprOp op = in->sub;
  bool div = op == OP_FLOORDIV || op == OP_MOD;
  for (int64_t i = 0; i < t->n; i++) {
    int64_t ia = a->n == 1 ? 0 : i, ib = b->n == 1 ? 0 : i;
    t->def[i] = a->def[ia] && b->def[ib];
    if (!t->def[i]) continue;
    int64_t x = (int32_t)a->v[ia].i, y = (int32_t)b->v[ib].i; /* alu_convert to int32 */
    if (div && !y) return false;
    int64_t v = int32_op(op, x, y);
    t->v[i].i = in->ty == DT_BOOL ? v != 0 : (int32_t)v; /* dtype_fit */
  }
  return true;
}

static bool x_binary(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *a = eng_rd(E, s, in, in->a, &ok), *b = ok ? eng_rd(E, s, in, in->b, &ok) : NULL;
  if (!ok) return false;
  const Value *big = a->n >= b->n ? a : b;
  if (!eng_fits1(E, s, in, "operand a", a->n, "operand b", big->n) || !eng_fits1(E, s, in, "operand b", b->n, "operand a", big->n))
    return false;
  Value *t = &s->tmp;
  eng_shape(t, in->ty, big->rank, big->shape);
  if (int32_wrap(in, a, b)) { /* int32 +, -, *: the common case, without a per-lane dispatch */
    int32_lanes(in->sub, a, b, t);
    eng_swap_in(s, in->d);
    return true;
  }
  if (int32_other_fits(in, a, b) && int32_other(in, a, b, t)) {
    eng_swap_in(s, in->d);
    return true;
  }
  bool ca = a->dtype != in->uty, cb = b->dtype != in->uty;
  for (int64_t i = 0; i < t->n; i++) {
    int64_t ia = a->n == 1 ? 0 : i, ib = b->n == 1 ? 0 : i;
    t->def[i] = a->def[ia] && b->def[ib];
    if (!t->def[i]) continue;
    Cell x = ca ? alu_convert(a->dtype, in->uty, a->v[ia]) : a->v[ia], y = cb ? alu_convert(b->dtype, in->uty, b->v[ib]) : b->v[ib];
    if (alu_binary(in->sub, in->uty, in->ty, x, y, &t->v[i]) == ALU_DIVZERO) {
      return eng_efault(E, s, in, FAULT_DIVZERO, "integer division by zero");
    }
  }
  eng_swap_in(s, in->d);
  return true;
}

static bool x_unary(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *a = eng_rd(E, s, in, in->a, &ok);
  if (!ok) return false;
  Value *t = &s->tmp;
  eng_shape(t, in->ty, a->rank, a->shape);
  for (int64_t i = 0; i < a->n; i++) {
    t->def[i] = a->def[i];
    t->v[i] = in->sub == OP_NOT ? alu_unary(OP_NOT, a->dtype, a->v[i]) : alu_unary(in->sub, in->ty, alu_convert(a->dtype, in->ty, a->v[i]));
  }
  eng_swap_in(s, in->d);
  return true;
}

static bool x_select(Eng *E, Sc *s, const Instr *in) {
  bool ok = true, w = in->op == I_SELECT;
  Value *m = w ? eng_rd(E, s, in, in->a, &ok) : NULL;
  Value *a = ok ? eng_rd(E, s, in, w ? in->b : in->a, &ok) : NULL;
  Value *b = ok ? eng_rd(E, s, in, w ? in->c : in->b, &ok) : NULL;
  if (!ok) return false;
  const Value *big = a;
  if (b->n > big->n) big = b;
  if (m && m->n > big->n) big = m;
  if (!eng_fits1(E, s, in, "first operand", a->n, "the result", big->n) || !eng_fits1(E, s, in, "second operand", b->n, "the result", big->n) ||
      (m && !eng_fits1(E, s, in, "condition", m->n, "the result", big->n)))
    return false;
  Value *t = &s->tmp;
  eng_shape(t, in->ty, big->rank, big->shape);
  for (int64_t i = 0; i < t->n; i++) {
    int64_t ia = a->n == 1 ? 0 : i, ib = b->n == 1 ? 0 : i;
    Cell x = alu_convert(a->dtype, in->uty, a->v[ia]), y = alu_convert(b->dtype, in->uty, b->v[ib]);
    if (w) {
      int64_t im = m->n == 1 ? 0 : i;
      bool pick = alu_truthy(m->dtype, m->v[im]);
      t->v[i] = pick ? x : y;
      t->def[i] = m->def[im] && (pick ? a->def[ia] : b->def[ib]);
      continue;
    }
    t->v[i] = alu_minmax(in->uty, x, y, in->imm == 1);
    t->def[i] = a->def[ia] && b->def[ib];
  }
  eng_swap_in(s, in->d);
  return true;
}

static bool x_misc_value(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *t = &s->tmp;
  if (in->op == I_CONST) {
    eng_scalar(t, in->ty, in->ty == DT_FLOAT64 ? (Cell){.f = in->fimm} : (Cell){.i = in->imm});
  } else if (in->op == I_COORD) {
    eng_scalar(t, DT_INT32, (Cell){.i = in->imm ? s->subcore : s->core});
  } else if (in->op == I_IOTA) {
    int64_t n = in->imm;
    eng_shape(t, DT_INT32, 1, &n);
    for (int64_t i = 0; i < n; i++) t->v[i].i = i;
    if (n > 0) memset(t->def, 1, (size_t)n);
  } else if (in->op != I_FROM_ELEMENTS) {
    Value *a = eng_rd(E, s, in, in->a, &ok);
    if (!ok) return false;
    if (in->op == I_MOV) {
      eng_copy(t, a);
    } else if (in->op == I_CAST) {
      eng_shape(t, in->ty, a->rank, a->shape);
      Cell (*conv)(Dtype, Dtype, Cell) = in->flags & IF_TRUNCATE ? alu_convert_truncate : alu_convert;
      for (int64_t i = 0; i < a->n; i++) t->v[i] = conv(a->dtype, in->ty, a->v[i]), t->def[i] = a->def[i];
    } else if (in->op == I_BROADCAST) {
      if (!eng_fits(E, s, in, "operand", a->n, "a scalar", 1)) return false;
      eng_shape(t, in->ty, in->rank, in->shape);
      for (int64_t i = 0; i < t->n; i++) t->v[i] = alu_convert(a->dtype, in->ty, a->v[0]), t->def[i] = a->def[0];
    } else {
      int64_t off = 0;
      if (in->rank > a->rank) return eng_efault(E, s, in, FAULT_LOWERING, "vector.extract: more indices than the operand has dimensions");
      for (int k = 0; k < in->rank; k++) {
        if (in->shape[k] < -a->shape[k] || in->shape[k] >= a->shape[k])
          return eng_efault(E, s, in, FAULT_LOWERING, "vector.extract: an index is outside the operand's shape");
        int64_t i = in->shape[k] < 0 ? in->shape[k] + a->shape[k] : in->shape[k];
        off = off * a->shape[k] + i;
      }
      int64_t inner = 1;
      for (int k = in->rank; k < a->rank; k++) inner *= a->shape[k];
      eng_shape(t, a->dtype, a->rank - in->rank, a->shape + in->rank);
      memcpy(t->v, a->v + off * inner, sizeof(Cell) * (size_t)inner);
      memcpy(t->def, a->def + off * inner, (size_t)inner);
    }
  } else {
    for (int64_t k = 0; k < in->imm; k++) {
      Value *it = eng_rd(E, s, in, in->a + (int)k, &ok);
      if (!ok) return false;
      if (k == 0 && it->rank >= MAX_RANK) return eng_efault(E, s, in, FAULT_LOWERING, "vector.from_elements: the result would have more than 8 dimensions");
      if (k > 0 && !eng_fits(E, s, in, "element", it->n, "the first element", t->n / in->imm)) return false;
      if (k == 0) {
        int64_t shape[MAX_RANK];
        shape[0] = in->imm;
        memcpy(shape + 1, it->shape, sizeof(int64_t) * (size_t)it->rank);
        val_shape(t, in->ty, it->rank + 1, shape);
      }
      for (int64_t i = 0; i < it->n; i++) t->v[k * it->n + i] = alu_convert(it->dtype, in->ty, it->v[i]), t->def[k * it->n + i] = it->def[i];
    }
  }
  eng_swap_in(s, in->d);
  return true;
}

/* ---- memory instructions ------------------------------------------------- */
static void log_value(Eng *E, Sc *s, const Instr *in, char kind, const Value *v) {
  if (kind && !E->no_log) stream_log(E->r, STREAM_ENG, s->idx, in->op_id, (EventKind)kind, v);
}

/* An undefined lane i of v (what: "mask", "indices", "DMA offsets"), named
 * in the message and as data. */
static bool uninit_lane(Eng *E, Sc *s, const Instr *in, const char *what, const Value *v, int64_t i) {
  RunElement at = {0};
  char where[120], msg[300];
  run_element(&at, v->rank, v->shape, i);
  run_element_text(&at, where, sizeof where);
  snprintf(at.got, sizeof at.got, "undefined");
  snprintf(msg, sizeof msg, "%s of the %s is undefined", where, what);
  bool first = !E->r->faulted;
  eng_efault(E, s, in, FAULT_UNINIT, msg);
  if (first) E->r->fault.at = at, eng_origin_fault(E, s, in, v);
  return false;
}

static bool mask_read(Eng *E, Sc *s, const Instr *in, Value **m) {
  bool ok = true;
  *m = eng_rd(E, s, in, in->mask, &ok);
  if (!ok) return false;
  for (int64_t i = 0; i < (*m)->n; i++)
    if (!(*m)->def[i]) return uninit_lane(E, s, in, "mask", *m, i);
  return true;
}

/* The instruction's mask (NULL: none), every lane defined; inline for the
 * common unmasked instruction. */
static inline bool mask_of(Eng *E, Sc *s, const Instr *in, Value **m) {
  *m = NULL;
  return in->mask < 0 || mask_read(E, s, in, m);
}

/* Lane i of a mask is on (alu_truthy; a bool mask without the call). */
static bool truthy(const Value *m, int64_t i) { return m->dtype == DT_BOOL ? m->v[i].i != 0 : alu_truthy(m->dtype, m->v[i]); }

/* Masked loads expand (SPEC §5.3): lane p_k of the result is element k. */
static bool x_load(Eng *E, Sc *s, const Instr *in) {
  EV ev;
  Value *m, *mem = &s->tmp2;
  if (!mask_of(E, s, in, &m) || !eng_ev_resolve(E, s, in, in->view, s->core, s->subcore, &ev)) return false;
  if (m && !eng_fits(E, s, in, "mask", m->n, "the view", ev.n)) return false;
  uint32_t tag = race_open(E, s, in, false, false, -1, &ev);
  Value *d = &s->reg[in->d];
  if (!m) { /* straight into the scratch value, then swapped in: no allocation */
    if (!load_all(E, s, in, &ev, &s->tmp, tag)) return false;
    eng_swap_in(s, in->d);
  } else {
    if (!load_all(E, s, in, &ev, mem, tag)) return false;
    Dtype t = in->op == I_VLOAD ? ev.vd->ref->dtype : mem->dtype;
    val_shape(d, t, mem->rank, mem->shape);
    for (int64_t i = 0, k = 0; i < m->n; i++) {
      if (!truthy(m, i)) continue;
      int64_t src = in->flags & IF_ELEM_P ? i : k, dst = in->flags & IF_LANE_K ? k : i; /* isa.h ISA_FLAGS */
      d->v[dst] = mem->v[src];
      d->def[dst] = mem->def[src];
      k++;
    }
  }
  set_reg(s, in->d);
  log_value(E, s, in, in->log, d);
  bool scalar = in->op == I_LOAD;
  s->cost = scalar ? (uint64_t)cp(E)->scalar_issue_cycles : groups(E, ev.n, ev.dt[ev.top]) * (uint64_t)cp(E)->vector_issue_cycles;
  s->ready[in->d] = s->t + (uint64_t)(scalar ? cp(E)->smem_latency_cycles : cp(E)->vmem_latency_cycles);
  count_access(E, ev.vd->ref->space, ev.n * dtype_size(ev.dt[ev.top]), false);
  prof_bytes(E, ev.n * dtype_size(ev.dt[ev.top]));
  trace_access(E, s, in, &ev, in->log == 'O' ? d : NULL, in->log == 'O' ? NULL : d, s->cost, false, ev.n);
  return true;
}

/* Masked stores compress: element k takes lane p_k; add stores add. */
static bool x_store(Eng *E, Sc *s, const Instr *in) {
  EV ev;
  Value *m, *x;
  bool ok = true;
  x = eng_rd(E, s, in, in->a, &ok);
  if (!ok || !mask_of(E, s, in, &m) || !eng_ev_resolve(E, s, in, in->view, s->core, s->subcore, &ev)) return false;
  if ((m && !eng_fits(E, s, in, "mask", m->n, "the view", ev.n)) || !eng_fits1(E, s, in, "value", x->n, "the view", ev.n)) return false;
  Dtype t = ev.dt[ev.top];
  Part pt[MAX_PARTS];
  int np;
  uint32_t tag = race_open(E, s, in, true, false, -1, m ? NULL : &ev);
  if (!m && !in->add && dense_all(&ev) && (x->n <= 0 || !memchr(x->def, 0, (size_t)x->n)) &&
      race_span_clean(E->rd, tag, ev.reg, ev.base, ev.n * dtype_size(t))) { /* the fast path: every lane defined */
    int64_t es = dtype_size(t);
    uint8_t *b = ev.reg->bytes + ev.base;
    if (x->dtype == t && x->n == ev.n) dtype_store_n(t, x->v, ev.n, b); /* no conversion */
    else
      for (int64_t i = 0; i < ev.n; i++) dtype_store(t, alu_convert(x->dtype, t, x->v[x->n == 1 ? 0 : i]), b + i * es);
    mem_set_defined(ev.reg, ev.base, ev.n * es, true);
    race_span_record(E->rd, tag, ev.reg, ev.base, ev.n * es); /* after the write, as below */
  } else
  for (int64_t i = 0, k = 0; i < (m ? m->n : ev.n); i++) {
    if (m && !truthy(m, i)) continue;
    int64_t lane = m && (in->flags & IF_LANE_K) ? k : i; /* isa.h ISA_FLAGS */
    int64_t elem = m && !(in->flags & IF_ELEM_P) ? k : i;
    k++;
    int64_t xi = x->n == 1 ? 0 : lane;
    if (!eng_ev_parts(&ev, elem, pt, &np)) return eng_ev_oob(E, s, in, &ev);
    uint8_t cdef = 1;
    Cell cur = {0};
    if (in->add) cur = eng_ev_read(&ev, pt, np, &cdef); /* the old element matters only to an add */
    eng_race_pre(E, tag, ev.reg, pt, np);
    if (!x->def[xi] || (in->add && !cdef)) eng_ev_undef(&ev, pt, np); /* SPEC §10.1: not a fault */
    else {
      Cell c = alu_convert(x->dtype, t, x->v[xi]);
      if (in->add) alu_binary(OP_ADD, t, t, cur, c, &c);
      eng_ev_write(&ev, pt, np, c);
    }
    if (tag && !eng_race_parts(E, tag, ev.reg, pt, np)) return false; /* after the write: the detector compares the bytes */
  }
  Value *after = NULL; /* the stored elements as they now are, in the second scratch value */
  if ((in->log && !E->no_log) || E->trace) {
    if (!load_all(E, s, in, &ev, &s->tmp2, 0)) return false;
    after = &s->tmp2;
    log_value(E, s, in, in->log, after);
  }
  s->cost = in->op == I_STORE ? (uint64_t)cp(E)->scalar_issue_cycles : groups(E, ev.n, t) * (uint64_t)cp(E)->vector_issue_cycles;
  count_access(E, ev.vd->ref->space, ev.n * dtype_size(t), true);
  prof_bytes(E, ev.n * dtype_size(t));
  trace_access(E, s, in, &ev, NULL, after && after->n ? after : NULL, s->cost, false, ev.n);
  return true;
}

/* ---- the specialised handlers (FastKind, engine_priv.h) ------------------ */
/* Each does what the general handler does on its fast form and declines,
 * changing nothing the general handler reads, on anything else. */

static bool int_dtype(Dtype t) { return t == DT_INT32 || t == DT_INT64; }
/* Both int_dtype, one test (the dtypes are below 32). */
_Static_assert(DT_COUNT <= 32, "int_dtypes shifts a 32-bit mask by a dtype");
#define INT_DTYPES ((1u << DT_INT32) | (1u << DT_INT64))
static inline bool int_dtypes(Dtype a, Dtype b) { return (INT_DTYPES >> a) & (INT_DTYPES >> b) & 1; }

/* FK_BIN_I32 on two scalars: one lane written straight into the result
 * register (its operands read first: either may be it), no scratch value
 * swapped in.  An undefined result keeps whatever lane value it had, as
 * the general loop leaves its scratch lane.  big is one lane, so each of
 * its dimensions (the result's) is 1. */
static inline __attribute__((always_inline)) bool fast_binary1(Eng *E, Sc *s, const Instr *in, const Value *a, const Value *b, const Value *big, ExprOp op) {
  Value *t = &s->reg[in->d];
  if (t->cap < 1) return false;
  uint8_t def = a->def[0] & b->def[0];
  uint64_t x = (uint64_t)a->v[0].i, y = (uint64_t)b->v[0].i;
  int rank = big->rank;
  if (op == OP_ADD || op == OP_SUB || op == OP_MUL) { /* int32_lanes: every lane computed, the low 32 bits kept */
    t->v[0].i = (int32_t)(uint32_t)(op == OP_ADD ? x + y : op == OP_SUB ? x - y : x * y);
  } else if (def) { /* int32_other: an undefined lane is not computed */
    int64_t xi = (int32_t)x, yi = (int32_t)y;
    if ((op == OP_FLOORDIV || op == OP_MOD) && !yi) return false; /* the general loop faults */
    int64_t v;
    if (op == OP_MOD) v = mod_floor32(xi, yi); /* the common index arithmetic (i % n), inline */
    else v = int32_op(op, xi, yi);
    t->v[0].i = is_cmp(op) && in->ty == DT_BOOL ? v != 0 : (int32_t)v; /* only a comparison is into bool (bin_i32) */
  }
  /* value_cost of one lane: one issue slot; it and the result's place
   * read before the byte stores, which may alias anything (no reloads) */
  s->cost = rank ? (uint64_t)cp(E)->vector_issue_cycles : (uint64_t)cp(E)->scalar_issue_cycles;
  uint8_t *tdef = t->def, *wr = &s->written[in->d];
  t->dtype = in->ty, t->rank = rank, t->n = 1;
  for (int k = 0; k < rank; k++) t->shape[k] = 1;
  *tdef = def;
  *wr = 1;
  return true;
}

/* fast_binary's vectors (a call of their own measured slower: it is inline too). */
static inline __attribute__((always_inline)) bool fast_binary_n(Eng *E, Sc *s, const Instr *in, const Value *a, const Value *b) {
  const Value *big = a->n >= b->n ? a : b;
  if ((a->n != big->n && a->n != 1) || (b->n != big->n && b->n != 1)) return false;
  ExprOp op = in->sub;
  bool wrap = op == OP_ADD || op == OP_SUB || op == OP_MUL;
  /* +, -, * cannot fail: with room in a result register that is no
   * operand, the lanes go straight into it rather than through the scratch */
  Value *t = wrap && in->d != in->a && in->d != in->b && s->reg[in->d].cap >= big->n ? &s->reg[in->d] : &s->tmp;
  eng_shape(t, in->ty, big->rank, big->shape);
  if (wrap) int32_lanes(op, a, b, t);
  else if (!int32_other(in, a, b, t)) return false; /* a division by zero: the general loop faults */
  if (t == &s->tmp) eng_swap_in(s, in->d);
  else s->written[in->d] = 1;
  s->cost = value_cost(E, &s->reg[in->d]);
  return true;
}

/* FK_BIN_I32: x_binary's int32 forms, its operand checks passed; two
 * one-lane operands (the scalar subcore's index arithmetic) first. */
static inline __attribute__((always_inline)) bool fast_binary(Eng *E, Sc *s, const Instr *in) {
  if (!(s->written[in->a] & s->written[in->b])) return false; /* 0 or 1 each: one test */
  const Value *a = &s->reg[in->a], *b = &s->reg[in->b];
  if (!int_dtypes(a->dtype, b->dtype)) return false;
  if (a->n == 1 && b->n == 1) return fast_binary1(E, s, in, a, b, a, in->sub); /* x_binary's big: a when the lanes tie */
  return fast_binary_n(E, s, in, a, b);
}

/* FK_BIN_S: fast_binary's scalars, whose dtypes and lanes engine_decode.c
 * proved: only their binding is tested. */
static inline __attribute__((always_inline)) bool fast_binary_s(Eng *E, Sc *s, const Instr *in, ExprOp op) {
  if (!(s->written[in->a] & s->written[in->b])) return false;
  const Value *a = &s->reg[in->a];
  return fast_binary1(E, s, in, a, &s->reg[in->b], a, op);
}

/* dtype_load_n / dtype_store_n for the fast handlers: int32 in blocks of 8
 * lanes (unrolled), then the rest. */
static void lanes_load(Dtype t, const uint8_t *restrict b, int64_t n, Cell *restrict out) {
  if (t != DT_INT32 || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
    dtype_load_n(t, b, n, out);
    return;
  }
  if (n == 16) { /* the common vector: straight-line code, no loop tests */
    _Pragma("GCC unroll 16")
    for (int j = 0; j < 16; j++) {
      int32_t w;
      memcpy(&w, b + 4 * j, 4);
      out[j].i = w;
    }
    return;
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _Pragma("GCC unroll 8")
    for (int j = 0; j < 8; j++) {
      int32_t w;
      memcpy(&w, b + 4 * (i + j), 4);
      out[i + j].i = w;
    }
  for (; i < n; i++) {
    int32_t w;
    memcpy(&w, b + 4 * i, 4);
    out[i].i = w;
  }
}

static void lanes_store(Dtype t, const Cell *restrict c, int64_t n, uint8_t *restrict b) {
  if (t != DT_INT32 || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
    dtype_store_n(t, c, n, b);
    return;
  }
  if (n == 16) { /* the common vector: four 16-byte stores of the lanes' low words */
    /* four words a store, not one: the lanes_load of a vector just stored
     * (a logged store's contents, a load after a store) reads 16 bytes at a
     * time, and a read that spans several stores waits for all of them
     * to reach the cache (no store forwarding) */
    typedef int32_t W4 __attribute__((vector_size(16)));
    _Pragma("GCC unroll 4")
    for (int j = 0; j < 16; j += 4) {
      W4 lo, hi;
      memcpy(&lo, c + j, 16);     /* lanes j, j + 1 as four words: the low ones are 0 and 2 */
      memcpy(&hi, c + j + 2, 16);
      W4 w = __builtin_shuffle(lo, hi, (W4){0, 2, 4, 6});
      memcpy(b + 4 * j, &w, 16);
    }
    return;
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _Pragma("GCC unroll 8")
    for (int j = 0; j < 8; j++) {
      int32_t w = (int32_t)c[i + j].i; /* dtype_fit of an int32: wrap to 32 bits */
      memcpy(b + 4 * (i + j), &w, 4);
    }
  for (; i < n; i++) {
    int32_t w = (int32_t)c[i].i;
    memcpy(b + 4 * i, &w, 4);
  }
}

/* mem_range_defined and mem_set_defined(.., true) for the fast handlers,
 * inline for their common spans: inside one shadow byte (a scalar; bit i
 * of shadow byte k is byte 8k + i) or eight whole shadow bytes (16 int32
 * lanes). */
static bool span_defined(const Region *g, int64_t off, int64_t n) {
  if (n > 0 && (off & 7) + n <= 8) {
    unsigned m = ((1u << n) - 1u) << (off & 7);
    return (g->defined[off >> 3] & m) == m;
  }
  if (n == 64 && !(off & 7)) {
    uint64_t w;
    memcpy(&w, g->defined + (off >> 3), 8);
    return w == UINT64_MAX;
  }
  return mem_range_defined(g, off, n);
}

static void span_set_defined(Region *g, int64_t off, int64_t n) {
  if (n > 0 && (off & 7) + n <= 8) g->defined[off >> 3] |= (uint8_t)(((1u << n) - 1u) << (off & 7));
  else if (n == 64 && !(off & 7)) memcpy(g->defined + (off >> 3), &(uint64_t){UINT64_MAX}, 8);
  else if (!((off | n) & 7) && n < 64) /* whole shadow bytes, fewer */
    for (int64_t i = off >> 3; i < (off + n) >> 3; i++) g->defined[i] = 0xff;
  else mem_set_defined(g, off, n, true);
}

/* The region and first byte of a dense compiled view, or NULL: the fast
 * memory forms need tracing off (it wants the general EV). */
static inline __attribute__((always_inline)) Region *fast_base(Eng *E, Sc *s, const CView *cv, int64_t *base);
static inline __attribute__((always_inline)) Region *fast_span(Eng *E, Sc *s, const Instr *in, int64_t *base) {
  const CView *cv = &E->cview[in->view];
  if (!cv->dense || E->trace) return NULL;
  return fast_base(E, s, cv, base);
}

/* fast_span's region and first byte once the view is known dense (and
 * tracing off): inline into the scalar handlers, whose views engine_decode.c
 * checked. */
static inline __attribute__((always_inline)) Region *fast_base(Eng *E, Sc *s, const CView *cv, int64_t *base) {
  if (cv->one) { /* the common x[pl.ds(i, n)]: eng_cview_base's one entry, straight */
    const Value *w = &s->reg[cv->start[0].reg];
    int64_t start;
    if (!s->written[cv->start[0].reg] || (cv->one == CV_ONE && (w->n != 1 || !int_dtype(w->dtype))) || !w->def[0]) return NULL;
    if (__builtin_add_overflow(cv->start[0].imm, w->v[0].i, &start) || (uint64_t)start > (uint64_t)cv->maxstart[0]) return NULL;
    *base = start * cv->rstride[0];
  } else if (!eng_cview_base(s, cv, base)) return NULL;
  Region *g = s->rg[cv->ref];
  if (!g) g = s->rg[cv->ref] = mem_region(&E->r->mem, cv->ref, s->core, s->subcore); /* instances stay put during a run */
  return g;
}

/* The race detector's access over a fast handler's dense span, as
 * eng_race_open opens it for the same view: the general handler takes it
 * (race_open) when the span may race and the handler declines, so the
 * access is opened once either way and the element walk reports as always. */
static inline __attribute__((always_inline)) uint32_t fast_race_open(Eng *E, Sc *s, const Instr *in, bool write, int64_t base, int64_t bytes) {
  if (race_lone(E->rd)) return 0; /* race_begin would take no record: none to describe */
  RaceAccess a = {in->op_id, in->loc.line, in->loc.col, s->core, s->subcore, s->t, write, false, -1, base, base + bytes};
  return race_begin(E->rd, &a, s->idx);
}
/* A masked access opens no span (x_store's race_open with no view). */
#define NO_SPAN 0, 0

static bool fast_decline(Eng *E, uint32_t tag) {
  E->pretag = tag, E->pretag_set = true;
  return false;
}

/* FK_VLOAD: x_load (a vector or scalar load) without a mask through load_all's dense path. */
static bool fast_vload(Eng *E, Sc *s, const Instr *in) {
  int64_t base;
  Region *g = fast_span(E, s, in, &base);
  if (!g) return false;
  const EV *sh = &E->cview[in->view].shape;
  Dtype t = sh->dt[1];
  int64_t n = sh->n, bytes = n * E->dsize[t];
  uint32_t tag;
  if (E->rd && (tag = fast_race_open(E, s, in, false, base, bytes)) && !race_span(E->rd, tag, g, base, bytes)) return fast_decline(E, tag);
  Value *o = &s->tmp;
  bool direct = s->reg[in->d].cap >= n; /* room for the elements: straight into the register, not through the scratch (nothing fails from here) */
  if (direct) o = &s->reg[in->d];
  eng_shape(o, t, sh->rank[1], sh->lvl[1]);
  lanes_load(t, g->bytes + base, n, o->v);
  if (span_defined(g, base, bytes)) eng_defs_set(o->def, n);
  else
    for (int64_t i = 0; i < n; i++) o->def[i] = span_defined(g, base + i * E->dsize[t], E->dsize[t]);
  if (direct) s->written[in->d] = 1;
  else eng_swap_in(s, in->d);
  log_value(E, s, in, in->log, &s->reg[in->d]);
  bool scalar = in->op == I_LOAD;
  s->cost = scalar ? (uint64_t)cp(E)->scalar_issue_cycles : groups(E, n, t) * (uint64_t)cp(E)->vector_issue_cycles;
  s->ready[in->d] = s->t + (uint64_t)(scalar ? cp(E)->smem_latency_cycles : cp(E)->vmem_latency_cycles);
  count_access(E, sh->vd->ref->space, bytes, false);
  prof_bytes(E, bytes);
  return true;
}

/* FK_VSTORE: x_store's fast path (no mask, no add, every lane defined, no
 * conversion); the logged contents read back as load_all reads them. */
static bool fast_vstore(Eng *E, Sc *s, const Instr *in) {
  const EV *sh = &E->cview[in->view].shape;
  Dtype t = sh->dt[1];
  int64_t n = sh->n, base;
  if (!s->written[in->a]) return false;
  const Value *x = &s->reg[in->a];
  if (x->dtype != t || x->n != n || !eng_defs_all(x->def, n)) return false;
  Region *g = fast_span(E, s, in, &base);
  if (!g) return false;
  int64_t bytes = n * E->dsize[t];
  uint32_t tag = 0;
  if (E->rd && (tag = fast_race_open(E, s, in, true, base, bytes)) && !race_span_clean(E->rd, tag, g, base, bytes)) return fast_decline(E, tag);
  lanes_store(t, x->v, n, g->bytes + base);
  span_set_defined(g, base, bytes);
  if (tag) race_span_record(E->rd, tag, g, base, bytes); /* after the write, as x_store */
  if (in->log && !E->no_log) {
    Value *after = &s->tmp2;
    eng_shape(after, t, sh->rank[1], sh->lvl[1]);
    lanes_load(t, g->bytes + base, n, after->v);
    eng_defs_set(after->def, n);
    log_value(E, s, in, in->log, after);
  }
  s->cost = in->op == I_STORE ? (uint64_t)cp(E)->scalar_issue_cycles : groups(E, n, t) * (uint64_t)cp(E)->vector_issue_cycles;
  count_access(E, sh->vd->ref->space, bytes, true);
  prof_bytes(E, bytes);
  return true;
}

/* The defined bits of an int32 element at a 4-byte aligned offset: inside
 * one shadow byte (span_defined's first case). */
static inline bool word_defined(const Region *g, int64_t off) { return (g->defined[off >> 3] >> (off & 7) & 0xf) == 0xf; }

/* FK_SLOAD: fast_vload of a view engine_decode.c found to be one int32
 * element at a 4-byte aligned offset (a scalar memory access, tracing
 * off): the word read straight into the result register's one lane. */
static inline __attribute__((always_inline)) bool fast_sload(Eng *E, Sc *s, const Instr *in) {
  const CView *cv = &E->cview[in->view];
  Value *o = &s->reg[in->d];
  int64_t base;
  Region *g;
  if (o->cap < 1 || !(g = fast_base(E, s, cv, &base))) return false;
  uint32_t tag;
  if (E->rd && (tag = fast_race_open(E, s, in, false, base, 4)) && !race_span(E->rd, tag, g, base, 4)) return fast_decline(E, tag);
  const EV *sh = &cv->shape;
  int32_t w;
  memcpy(&w, g->bytes + base, 4);
  o->dtype = DT_INT32, o->rank = sh->rank[1], o->n = 1; /* eng_shape of one element: every dimension 1 */
  for (int k = 0; k < sh->rank[1]; k++) o->shape[k] = 1;
  o->v[0].i = w;
  o->def[0] = word_defined(g, base);
  s->written[in->d] = 1;
  log_value(E, s, in, in->log, o);
  bool scalar = in->op == I_LOAD;
  s->cost = (uint64_t)(scalar ? cp(E)->scalar_issue_cycles : cp(E)->vector_issue_cycles); /* one element: one issue slot */
  s->ready[in->d] = s->t + (uint64_t)(scalar ? cp(E)->smem_latency_cycles : cp(E)->vmem_latency_cycles);
  count_in(cv->space, 4, false);
  prof_bytes(E, 4);
  return true;
}

/* FK_SSTORE: fast_vstore of such a view: one defined int32 lane stored as
 * a word; the logged contents are the word as lanes_load reads it back. */
static inline __attribute__((always_inline)) bool fast_sstore(Eng *E, Sc *s, const Instr *in) {
  const CView *cv = &E->cview[in->view];
  const Value *x = &s->reg[in->a];
  int64_t base;
  Region *g;
  if (!s->written[in->a] || x->dtype != DT_INT32 || x->n != 1 || !x->def[0] || !(g = fast_base(E, s, cv, &base))) return false;
  uint32_t tag = 0;
  if (E->rd && (tag = fast_race_open(E, s, in, true, base, 4)) && !race_span_clean(E->rd, tag, g, base, 4)) return fast_decline(E, tag);
  int32_t w = (int32_t)x->v[0].i;
  memcpy(g->bytes + base, &w, 4);
  g->defined[base >> 3] |= (uint8_t)(0xfu << (base & 7));
  if (tag) race_span_record(E->rd, tag, g, base, 4); /* after the write, as x_store */
  const EV *sh = &cv->shape;
  if (in->log && !E->no_log) {
    Value *after = &s->tmp2;
    eng_shape(after, DT_INT32, sh->rank[1], sh->lvl[1]);
    after->v[0].i = w;
    after->def[0] = 1;
    log_value(E, s, in, in->log, after);
  }
  s->cost = (uint64_t)(in->op == I_STORE ? cp(E)->scalar_issue_cycles : cp(E)->vector_issue_cycles);
  count_in(cv->space, 4, true);
  prof_bytes(E, 4);
  return true;
}

/* ---- duplicate offsets of a non-add scatter (SPEC §7.7) ---------------- */
/* Legal (the highest lane or row wins) but rarely meant, so the first time
 * an operation does it the run carries a warning naming the duplicates. */
typedef struct Hit {
  int64_t at, lane;
} Hit;

static int hit_cmp(const void *a, const void *b) {
  const Hit *x = a, *y = b;
  return x->at != y->at ? (x->at < y->at ? -1 : 1) : (x->lane > y->lane) - (x->lane < y->lane);
}

/* The buffer of the writes to compare, or NULL when this operation has
 * nothing to report (an add form, or already warned). */
static Hit *dup_hits(Eng *E, const Instr *in, int64_t n) {
  if (in->add || in->op_id < 0 || in->op_id >= E->nwarned || E->warned[in->op_id]) return NULL;
  if (n > E->caphits) {
    Hit *h = realloc(E->hits, sizeof *h * (size_t)n);
    if (!h) return NULL;
    E->hits = h, E->caphits = n;
  }
  return E->hits;
}

/* Whether some offset repeats, without sorting: none when they strictly
 * rise or strictly fall (the common scatter), else a set of up to 256
 * offsets open-addressed on the stack; -1 (not known) past that, or for an
 * offset below 0 (the set's empty mark), when the sort decides. */
static int dup_any(const Hit *h, int64_t n) {
  int up = 0, down = 0;
  for (int64_t i = 1; i < n; i++) up |= h[i].at <= h[i - 1].at, down |= h[i].at >= h[i - 1].at;
  if (!up || !down) return 0;
  if (n > 256) return -1;
  int64_t set[512];
  uint64_t mask = 32;
  while (mask < 2 * (uint64_t)n) mask *= 2;
  memset(set, 0xff, sizeof set[0] * mask--);
  for (int64_t i = 0; i < n; i++) {
    if (h[i].at < 0) return -1;
    uint64_t at = (uint64_t)h[i].at, j = (at * 0x9e3779b97f4a7c15ULL) >> 32 & mask;
    for (; set[j] >= 0; j = (j + 1) & mask)
      if (set[j] == h[i].at) return 1;
    set[j] = h[i].at;
  }
  return 0;
}

static void dup_warn(Eng *E, Sc *s, const Instr *in, Hit *h, int64_t n, bool rows, const EV *ev) {
  if (n < 2 || !dup_any(h, n)) return;
  qsort(h, (size_t)n, sizeof *h, hit_cmp);
  int64_t dups = 0, first = -1;
  for (int64_t i = 1; i < n; i++)
    if (h[i].at == h[i - 1].at && (i < 2 || h[i - 1].at != h[i - 2].at)) dups++, first = first < 0 ? i - 1 : first;
  if (!dups) return;
  E->warned[in->op_id] = 1;
  RunWarning *w = run_warning(E->r, "duplicate-offsets", in->loc, s->core, s->subcore);
  if (!w) return;
  int64_t last = first;
  while (last + 1 < n && h[last + 1].at == h[first].at) last++;
  char where[200];
  if (rows) snprintf(where, sizeof where, "offset (%lld)", (long long)h[first].at);
  else { /* the indices, as the program gave them (into the view) */
    int rank = ev->rank[ev->top];
    int64_t at[MAX_RANK], f = h[first].at;
    for (int d = rank - 1; d >= 0; d--) at[d] = ev->lvl[ev->top][d] ? f % ev->lvl[ev->top][d] : 0, f = ev->lvl[ev->top][d] ? f / ev->lvl[ev->top][d] : 0;
    size_t len = (size_t)snprintf(where, sizeof where, "%s (", rank > 1 ? "indices" : "index");
    for (int d = 0; d < rank && len < sizeof where - 24; d++) len += (size_t)snprintf(where + len, sizeof where - len, "%s%lld", d ? ", " : "", (long long)at[d]);
    snprintf(where + len, sizeof where - len, ")");
  }
  char who[120];
  size_t len = 0;
  for (int64_t i = first; i <= last && len < sizeof who - 40; i++) /* the lanes in order; sorted, the last wins */
    len += (size_t)snprintf(who + len, sizeof who - len, "%s%lld", i == first ? "" : i == last ? " and " : ", ", (long long)h[i].lane);
  if (len >= sizeof who - 40) snprintf(who + len, sizeof who - len, " ... %lld", (long long)h[last].lane);
  snprintf(w->text, sizeof w->text, "%s %s of this scatter%s have the same %s into %s '%s'%s; the highest %s wins (SPEC §7.7)",
           rows ? "positions" : "lanes", who, rows ? "'s offsets" : "", where, space_key(ev->vd->ref->space), ev->vd->ref->name,
           dups > 1 ? ", and other targets repeat too" : "", rows ? "position" : "lane");
}

/* Lane k's index in dimension d is outside the view. */
static bool index_oob(Eng *E, Sc *s, const Instr *in, const EV *ev, int64_t k, int d, int64_t at) {
  char msg[300];
  snprintf(msg, sizeof msg, "%slane %lld indexes %lld in dimension %d of size %lld of %s '%s'",
           in->op == I_VLOAD_IDX ? "Trying to perform an indexed vector load from out of bounds address. " : "", (long long)k,
           (long long)at, d, (long long)ev->lvl[ev->top][d], space_key(ev->vd->ref->space), ev->vd->ref->name);
  return eng_efault(E, s, in, FAULT_OOB, msg);
}

/* What an indexed access needs per lane, worked out once per access. */
typedef struct {
  const Value *m, *ix, *x; /* mask (or NULL), indices, a scatter's values */
  Value *out;              /* a gather's result */
  Hit *hit;                /* the duplicate check's buffer, or NULL */
  int64_t nhit, maxhit, bank_bytes, banks;
  int shift;               /* log2 of bank_bytes and banks both powers of two, else -1 */
  uint32_t tag;            /* the race detector's access, or 0 */
} IdxRun;

static int log2_exact(int64_t v) { return v > 0 && !(v & (v - 1)) ? __builtin_ctzll((unsigned long long)v) : -1; }

/* One gather lane of indexed_rows at byte off (a multiple of 4, so that its
 * 4 shadow bits sit in one shadow byte): checked for races before it is
 * read, as the general loop does, then read as a word. */
static inline bool row_gather(Eng *E, uint32_t tag, Region *g, int64_t off, Cell *v, uint8_t *def) {
  if (tag && !eng_race_lane(E, tag, g, off, 4)) return false;
  int32_t w;
  memcpy(&w, g->bytes + off, 4);
  v->i = w;
  *def = (g->defined[off >> 3] >> (off & 7) & 0xf) == 0xf;
  return true;
}

/* One scatter lane of indexed_rows (lane k of x, at byte off as above):
 * race_pre, the word written (or marked undefined, SPEC §10.1), then the
 * race check after the write, in the general loop's order. */
static inline bool row_scatter(Eng *E, const Instr *in, uint32_t tag, Region *g, int64_t off, const Value *x, int64_t k) {
  uint8_t *sh = g->defined + (off >> 3), bits = (uint8_t)(0xfu << (off & 7));
  if (tag) race_pre(E->rd, tag, g, off, 4); /* eng_race_pre of the one part */
  if (!x->def[k] || (in->add && (*sh & bits) != bits)) {
    *sh &= (uint8_t)~bits;
  } else {
    Cell c = x->dtype == DT_INT32 ? x->v[k] : alu_convert(x->dtype, DT_INT32, x->v[k]);
    int32_t w;
    if (in->add) {
      memcpy(&w, g->bytes + off, 4);
      alu_binary(OP_ADD, DT_INT32, DT_INT32, (Cell){.i = w}, c, &c);
    }
    w = (int32_t)c.i;
    memcpy(g->bytes + off, &w, 4);
    *sh |= bits;
  }
  return !tag || eng_race_lane(E, tag, g, off, 4);
}

/* ---- indexed_rows' loops without a fault to give ------------------------- */
/* With no mask, every index defined and inside the view, the banks a power
 * of two and, with races checked, the lanes' span clean (rows_clean), no
 * lane can fault, so the lanes run without the per-lane checks (rows_run):
 * the same reads and writes in the same order, the same bank counts, then
 * the same race records.  The loops are functions of their own (ROWS_LOOP:
 * never inlined) so that their few variables stay in registers, not
 * spilled as in x_indexed's many. */
#define ROWS_LOOP __attribute__((noinline))

/* Whether every index is inside [0, dim), as unsigned numbers: their or
 * bounds each from above (a negative one sets the top bit), so that an or
 * below dim settles it in one pass of few instructions (16 lanes: four at
 * a time); else their largest decides. */
static bool ix_inside(const Cell *iv, int64_t n, int64_t dim) {
  uint64_t any = 0, top = 0;
  if (n == 16)
    for (int k = 0; k < 16; k += 4) any |= (uint64_t)(iv[k].i | iv[k + 1].i | iv[k + 2].i | iv[k + 3].i);
  else
    for (int64_t k = 0; k < n; k++) any |= (uint64_t)iv[k].i;
  if (any < (uint64_t)dim) return true;
  for (int64_t k = 0; k < n; k++) top = (uint64_t)iv[k].i > top ? (uint64_t)iv[k].i : top;
  return top < (uint64_t)dim;
}

/* Whether the n indices strictly rise or strictly fall (then none repeats);
 * each inside the view (ix_inside), so that no difference overflows. */
/* 16 indices that do not rise: whether they strictly fall (out of line, so
 * that the common rising test does not compute this one as well). */
static __attribute__((noinline)) bool ix_falling16(const Cell *iv) {
  int64_t down = 0;
#pragma GCC unroll 16
  for (int j = 1; j < 16; j++) down |= iv[j - 1].i - iv[j].i - 1;
  return down >= 0;
}

static bool ix_monotone(const Cell *iv, int64_t n) {
  if (n == 16) { /* the usual width: the steps less one, or-ed (negative when some step is not up), no branch per lane */
    int64_t up = 0;
#pragma GCC unroll 16
    for (int j = 1; j < 16; j++) up |= iv[j].i - iv[j - 1].i - 1;
    return up >= 0 || ix_falling16(iv);
  }
  int64_t k = 1;
  while (k < n && iv[k].i > iv[k - 1].i) k++;
  if (k >= n) return true;
  for (k = 1; k < n && iv[k].i < iv[k - 1].i; k++) continue;
  return k >= n;
}

static bool rows_plain(const IdxRun *r, int64_t n, int64_t dim) {
  if (r->m || r->shift < 0 || n > (int64_t)UINT32_MAX) return false;
  return n <= 0 || (eng_defs_all(r->ix->def, n) && ix_inside(r->ix->v, n, dim));
}

/* With races checked: lanes whose elements lie close together (their span
 * at most twice their bytes, so that the bytes between them are few) and
 * whose span conflicts with nothing cannot race.  Other lanes are checked
 * one by one (indexed_rows). */
static bool rows_clean(Eng *E, const EV *ev, const IdxRun *r, int64_t n) {
  if (!r->tag || n <= 0) return true;
  const Cell *iv = r->ix->v;
  int64_t lo = iv[0].i, hi = iv[0].i;
  for (int64_t k = 1; k < n; k++) lo = iv[k].i < lo ? iv[k].i : lo, hi = iv[k].i > hi ? iv[k].i : hi;
  int64_t first = ev->base + lo * ev->bstride[0], end = ev->base + hi * ev->bstride[0] + 4;
  return end - first <= 8 * n && eng_race_lanes_clean(E, r->tag, ev->reg, first, end);
}

/* The plain loops count lanes per bank in a small array of their own
 * (cleared for the banks there are, a power of two at most 256), the most
 * in one bank kept as they go: E->bank_hits stays for the checked loops. */
#define BANK_COUNTS(r) \
  uint32_t cnt[256], most = 0; \
  if ((r)->banks <= 16) memset(cnt, 0, 16 * sizeof *cnt); /* a constant size: four stores, no call */ \
  else memset(cnt, 0, sizeof *cnt * (size_t)(r)->banks)
#define BANK_LANE(off) \
  do { \
    uint32_t c_ = ++cnt[((off) >> shift) & bmask]; \
    most = c_ > most ? c_ : most; \
  } while (0)

ROWS_LOOP static void plain_gather(const EV *ev, IdxRun *r, int64_t n) {
  const int64_t base = ev->base, stride = ev->bstride[0], bmask = r->banks - 1;
  const int shift = r->shift;
  const Cell *iv = r->ix->v;
  const uint8_t *bytes = ev->reg->bytes, *defined = ev->reg->defined;
  Cell *ov = r->out->v;
  uint8_t *od = r->out->def;
  uint8_t all = 0xff; /* the shadow bytes of every lane, and-ed: all set (the usual) is one test for all lanes */
  BANK_COUNTS(r);
  for (int64_t k = 0; k < n; k++) {
    int64_t off = base + iv[k].i * stride; /* a multiple of 4: its shadow bits are 4 of one byte */
    BANK_LANE(off);
    int32_t w;
    memcpy(&w, bytes + off, 4);
    ov[k].i = w;
    all &= defined[off >> 3];
  }
  if (all == 0xff) eng_defs_set(od, n); /* else lane by lane, the other 4 bytes of a shadow byte left out */
  else
    for (int64_t k = 0; k < n; k++) {
      int64_t off = base + iv[k].i * stride;
      od[k] = ((unsigned)defined[off >> 3] >> (off & 4) & 0xf) == 0xf;
    }
  r->maxhit = most;
}

/* The shadow bits of the 4 bytes at an offset that is a multiple of 4, by off & 7. */
static const uint8_t nibble[8] = {0x0f, 0, 0, 0, 0xf0, 0, 0, 0};

/* A plain scatter (not an add): the lanes in order (reversed when the
 * lowest lane wins), each a word or, its value undefined, four undefined
 * bytes.  The writes are listed for the duplicate check only when their
 * indices neither strictly rise nor strictly fall. */
ROWS_LOOP static void plain_scatter(const Instr *in, const EV *ev, IdxRun *r, int64_t n) {
  const int64_t base = ev->base, stride = ev->bstride[0], bmask = r->banks - 1, step = in->flags & IF_LOW_WINS ? -1 : 1;
  const int64_t first = step > 0 ? 0 : n - 1, end = step > 0 ? n : -1;
  const int shift = r->shift;
  const Cell *iv = r->ix->v, *xv = r->x->v;
  const uint8_t *xdef = r->x->def;
  uint8_t *bytes = ev->reg->bytes, *defined = ev->reg->defined;
  BANK_COUNTS(r);
  if (eng_defs_all(xdef, n)) { /* every value defined: no test per lane */
    for (int64_t k = first; k != end; k += step) {
      int64_t off = base + iv[k].i * stride;
      BANK_LANE(off);
      int32_t w = (int32_t)xv[k].i;
      memcpy(bytes + off, &w, 4);
      defined[off >> 3] |= nibble[off & 7]; /* a table, not a shift: the count register stays the banks' */
    }
  } else {
    for (int64_t k = first; k != end; k += step) {
      int64_t off = base + iv[k].i * stride;
      BANK_LANE(off);
      uint8_t bits = (uint8_t)(0xfu << (off & 4));
      if (xdef[k]) {
        int32_t w = (int32_t)xv[k].i;
        memcpy(bytes + off, &w, 4);
        defined[off >> 3] |= bits;
      } else {
        defined[off >> 3] &= (uint8_t)~bits;
      }
    }
  }
  r->maxhit = most;
  if (r->hit && !ix_monotone(iv, n))
    for (int64_t k = first; k != end; k += step) r->hit[r->nhit++] = (Hit){iv[k].i, k};
}

/* x_indexed's lane loop for one int32 index register into a one-dimension
 * affine int32 view at 4-byte aligned offsets, tracing off: the element's
 * offset is base + index x stride and its 4 bytes move as a word, lane by
 * lane in the same order with the same faults and race reports as the
 * general loop.  What the loop reads per lane is held in locals: its byte
 * stores could alias every field. */
ROWS_LOOP static bool indexed_rows(Eng *E, Sc *s, const Instr *in, EV *ev, IdxRun *r, int64_t n) {
  bool gather = in->op == I_VLOAD_IDX, first_wins = in->flags & IF_LOW_WINS;
  const int64_t dim = ev->lvl[ev->top][0], base = ev->base, stride = ev->bstride[0], banks = r->banks, bank_bytes = r->bank_bytes;
  const int shift = r->shift;
  const uint32_t tag = r->tag;
  const Value *m = r->m, *x = r->x;
  const Cell *iv = r->ix->v;
  const uint8_t *idef = r->ix->def;
  Cell *ov = gather ? r->out->v : NULL;
  uint8_t *od = gather ? r->out->def : NULL;
  Hit *hit = r->hit;
  Region *g = ev->reg;
  int64_t *hits = E->bank_hits, maxhit = 0, nhit = 0;
  for (int64_t j = 0; j < n; j++) {
    int64_t k = first_wins ? n - 1 - j : j;
    if (m && !truthy(m, k)) continue;
    if (!idef[k]) return uninit_lane(E, s, in, "indices", r->ix, k);
    int64_t at = iv[k].i;
    if (at < 0 || at >= dim) return index_oob(E, s, in, ev, k, 0, at);
    if (hit) hit[nhit++] = (Hit){at, k};
    int64_t off = base + at * stride, bank = shift >= 0 ? (off >> shift) & (banks - 1) : (off / bank_bytes) % banks;
    if (!hits[bank]++) E->bank_used[E->nbank_used++] = (uint8_t)bank;
    if (hits[bank] > maxhit) maxhit = hits[bank];
    if (!(gather ? row_gather(E, tag, g, off, &ov[k], &od[k]) : row_scatter(E, in, tag, g, off, x, k))) return false;
  }
  r->nhit = nhit, r->maxhit = maxhit;
  return true;
}

/* An indexed access of indexed_rows' form: a plain loop when no lane can
 * fault, else the checked loop. */
static bool rows_run(Eng *E, Sc *s, const Instr *in, EV *ev, IdxRun *r, int64_t n) {
  bool gather = in->op == I_VLOAD_IDX;
  if (!(gather || (!in->add && r->x->dtype == DT_INT32)) || !rows_plain(r, n, ev->lvl[ev->top][0]) || !rows_clean(E, ev, r, n))
    return indexed_rows(E, s, in, ev, r, n);
  if (gather) plain_gather(ev, r, n);
  else plain_scatter(in, ev, r, n);
  if (r->tag) eng_race_lanes_record(E, r->tag, ev->reg, ev->base, ev->bstride[0], r->ix->v, n);
  return true;
}

/* Whether a resolved view has the form indexed_rows runs on (with one
 * index register and tracing off). */
static bool rows_view(const EV *ev) {
  return HOST_LE && ev->dt[ev->top] == DT_INT32 && ev->affine && ev->arank == 1 && ev->rank[ev->top] == 1 &&
         ev->adim[0] == ev->lvl[ev->top][0] && ev->bstride[0] >= 4 && !((ev->base | ev->bstride[0]) & 3);
}

/* An indexed access's view.  One without register operands, once resolved
 * (its kept resolution, cache_state 3), is the same every run: when it has
 * indexed_rows' form only the few fields that path reads are copied, not
 * the whole affine form; otherwise eng_ev_resolve as always.  rows: whether
 * the access takes indexed_rows' path. */
static bool rows_resolve(Eng *E, Sc *s, const Instr *in, EV *ev, bool *rows) {
  const EV *c = &E->cache[in->view];
  uint8_t *form = &E->rows_form[in->view];
  if (!*form && E->cache_state[in->view] == 3) *form = !E->trace && rows_view(c) ? 1 : 2; /* settled once kept */
  if (*form != 1 || in->imm != 1) {
    if (!eng_ev_resolve(E, s, in, in->view, s->core, s->subcore, ev)) return false;
    *rows = in->imm == 1 && !E->trace && rows_view(ev);
    return true;
  }
  *rows = true;
  int top = c->top;
  ev->vd = &E->c->views[in->view];
  ev->top = top, ev->n = c->n, ev->affine = true, ev->arank = 1, ev->dense = c->dense;
  ev->base = c->base, ev->adim[0] = c->adim[0], ev->bstride[0] = c->bstride[0];
  ev->dt[top] = c->dt[top], ev->rank[top] = 1, ev->lvl[top][0] = c->lvl[top][0];
  int ref = ev->vd->ref->index;
  if (!s->rg[ref]) s->rg[ref] = mem_region(&E->r->mem, ref, s->core, s->subcore); /* as fast_span: instances stay put */
  ev->reg = s->rg[ref];
  return true;
}

/* ---- 16 lanes of int32 without x_indexed's set-up ------------------------ */
/* The usual indexed access (one index register of 16 lanes, no mask, a
 * kept resolution of indexed_rows' form, every index defined and inside
 * the view, at most 16 banks, a power of two, and for a scatter 16 defined
 * int32 values, not an add) runs here (idx16_gather, idx16_scatter): no
 * EV is built, the lanes are straight-line code and their banks or-ed and
 * and-ed (counted only when not all one bank: banks16).  The reads, writes,
 * bank counts, costs, statistics, race records and duplicate warnings are
 * rows_run's. */

/* Bytewise the larger of a and b, every byte below 128: a byte's high bit
 * of (a | 0x80) - b is set where a's byte is at least b's (no borrow
 * crosses a byte), spread into a mask of the byte. */
static inline uint64_t bytes_max(uint64_t a, uint64_t b) {
  const uint64_t hi = 0x8080808080808080ull;
  uint64_t ge = ((a | hi) - b) & hi, m = ge | (ge - (ge >> 7));
  return (a & m) | (b & ~m);
}

/* The view and banks the 16 lanes address: the region's bytes and shadow,
 * the element at base + index x stride, its bank (offset >> shift) & bmask. */
typedef struct {
  uint8_t *bytes, *defined;
  int64_t base, stride, bmask;
  int shift;
  int64_t ior; /* the indices or-ed (ix16_inside) */
} Lanes16;

/* One lane in bank b: nibble b of a count (a table, not a variable shift). */
static const uint64_t bank_one16[16] = {
    1ull << 0,  1ull << 4,  1ull << 8,  1ull << 12, 1ull << 16, 1ull << 20, 1ull << 24, 1ull << 28,
    1ull << 32, 1ull << 36, 1ull << 40, 1ull << 44, 1ull << 48, 1ull << 52, 1ull << 56, 1ull << 60};

/* Lane k's byte offset, and its bank before the mask or-ed into bor and
 * and-ed into band (banks16 masks them).  unit: 4-byte elements side by
 * side and 4-byte banks (the usual view and chip), the offset from the
 * index by an add, not a multiply, and the banks told from the indices'
 * or (ix16_inside's) and and: bank (base / 4 + index) & bmask, with
 * bmask + 1 a power of two, is alike for two lanes exactly when their
 * indices' low bits are. */
#define LANE16_AT(k)                                                       \
  int64_t off = unit ? base + 4 * iv[k].i : base + iv[k].i * stride;        \
  if (unit) band &= iv[k].i;                                                \
  else bor |= off >> shift, band &= off >> shift

/* The most of 16 lanes in one bank when they are not all in one: the
 * lanes per bank counted in the nibbles of a register (no count in memory:
 * each increment would wait for the last one's store), then folded.  A
 * second pass over the indices, so that the lane loop of the usual
 * one-bank and conflict-free accesses keeps no count. */
static __attribute__((noinline)) uint32_t banks16_spread(const Cell *iv, int64_t base, int64_t stride, int shift, int64_t bmask) {
  uint64_t nib = 0; /* nibble b: the lanes in bank b (16 in one bank is not this case: no nibble wraps) */
#pragma GCC unroll 16
  for (int k = 0; k < 16; k++) nib += bank_one16[((base + iv[k].i * stride) >> shift) & bmask];
  uint64_t a = nib & 0x0f0f0f0f0f0f0f0full, b = nib >> 4 & 0x0f0f0f0f0f0f0f0full; /* banks 0, 2, .. and 1, 3, .. as bytes */
  if (!((a | b) & ~ENG_DEFS_ONE)) return 1; /* no bank twice: the conflict-free access, no fold */
  a = bytes_max(a, b);
  a = bytes_max(a, a >> 32);
  a = bytes_max(a, a >> 16);
  return (uint32_t)(bytes_max(a, a >> 8) & 0xff);
}

/* The most of 16 lanes in one bank, from the or and the and of their
 * unmasked banks: all alike under the mask is one bank.  (banks16_spread
 * takes L's fields, not L: a pointer would keep L in memory.) */
static inline uint32_t banks16(const Lanes16 *L, const Cell *iv, int64_t bor, int64_t band) {
  return !((bor ^ band) & L->bmask) ? 16 : banks16_spread(iv, L->base, L->stride, L->shift, L->bmask);
}

/* A gather's 16 lanes into ov/od; the most lanes in one bank. */
static inline __attribute__((always_inline)) uint32_t gather16_form(const Lanes16 *L, const Cell *iv, Cell *ov, uint8_t *od, bool unit) {
  const int64_t base = L->base, stride = L->stride;
  const int shift = L->shift;
  const uint8_t *bytes = L->bytes, *defined = L->defined;
  int64_t bor = unit ? L->ior : 0, band = -1;
  uint8_t all = 0xff;       /* the shadow bytes of every lane, and-ed, as plain_gather */
#pragma GCC unroll 16
  for (int k = 0; k < 16; k++) {
    LANE16_AT(k);
    int32_t w;
    memcpy(&w, bytes + off, 4);
    ov[k].i = w;
    all &= defined[off >> 3];
  }
  if (all == 0xff) eng_defs_set(od, 16);
  else
    for (int k = 0; k < 16; k++) {
      int64_t off = base + iv[k].i * stride;
      od[k] = ((unsigned)defined[off >> 3] >> (off & 4) & 0xf) == 0xf;
    }
  return banks16(L, iv, bor, band);
}
static inline __attribute__((always_inline)) uint32_t gather16(const Lanes16 *L, const Cell *iv, Cell *ov, uint8_t *od) {
  return L->stride == 4 && L->shift == 2 ? gather16_form(L, iv, ov, od, true) : gather16_form(L, iv, ov, od, false);
}

/* A scatter's 16 lanes, in order or (rev) reversed, so that of lanes with
 * one offset the right one writes last; the shadow bytes are set only
 * when some lane's are not all set already. */
static inline __attribute__((always_inline)) uint32_t scatter16_form(const Lanes16 *L, const Cell *iv, const Cell *xv, bool rev, bool unit) {
  const int64_t base = L->base, stride = L->stride;
  const int shift = L->shift;
  uint8_t *bytes = L->bytes, *defined = L->defined;
  int64_t bor = unit ? L->ior : 0, band = -1;
  uint8_t all = 0xff;
#pragma GCC unroll 16
  for (int j = 0; j < 16; j++) {
    int k = rev ? 15 - j : j;
    LANE16_AT(k);
    int32_t w = (int32_t)xv[k].i;
    memcpy(bytes + off, &w, 4);
    all &= defined[off >> 3];
  }
  if (all != 0xff)
    for (int j = 0; j < 16; j++) {
      int64_t off = base + iv[j].i * stride;
      defined[off >> 3] |= (uint8_t)(0xfu << (off & 4));
    }
  return banks16(L, iv, bor, band);
}
static inline __attribute__((always_inline)) uint32_t scatter16(const Lanes16 *L, const Cell *iv, const Cell *xv, bool rev) {
  bool unit = L->stride == 4 && L->shift == 2;
  if (rev) return unit ? scatter16_form(L, iv, xv, true, true) : scatter16_form(L, iv, xv, true, false);
  return unit ? scatter16_form(L, iv, xv, false, true) : scatter16_form(L, iv, xv, false, false);
}

/* Whether 16 indices inside the view (no difference overflows) strictly
 * rise: the steps less one, or-ed, two at a time in a vector of two
 * (the compiler's generic vectors), negative when some step is not up. */
typedef int64_t I64x2 __attribute__((vector_size(16)));
static inline bool ix16_rising(const Cell *iv) {
  I64x2 up = {0, 0};
#pragma GCC unroll 7
  for (int j = 0; j < 14; j += 2) {
    I64x2 a, b;
    memcpy(&a, &iv[j + 1], sizeof a);
    memcpy(&b, &iv[j], sizeof b);
    up |= a - b - 1;
  }
  return (up[0] | up[1] | (iv[15].i - iv[14].i - 1)) >= 0;
}

/* ix_inside of 16 indices: their or, in one straight run (that the
 * compiler may do two lanes at a time), kept in *ior (the banks of a unit
 * Lanes16). */
static inline bool ix16_inside(const Cell *iv, int64_t dim, int64_t *ior) {
  uint64_t any = 0;
#pragma GCC unroll 16
  for (int k = 0; k < 16; k++) any |= (uint64_t)iv[k].i;
  *ior = (int64_t)any;
  return any < (uint64_t)dim || ix_inside(iv, 16, dim);
}

/* rows_clean for idx16's lanes. */
static bool lanes_clean16(Eng *E, uint32_t tag, const Region *g, int64_t base, int64_t stride, const Cell *iv) {
  int64_t lo = iv[0].i, hi = iv[0].i;
  for (int k = 1; k < 16; k++) lo = iv[k].i < lo ? iv[k].i : lo, hi = iv[k].i > hi ? iv[k].i : hi;
  int64_t first = base + lo * stride, end = base + hi * stride + 4;
  return end - first <= 8 * 16 && eng_race_lanes_clean(E, tag, g, first, end);
}

/* The duplicate check of an idx16 scatter whose indices do not rise, as
 * plain_scatter lists its writes. */
static __attribute__((noinline)) void idx16_dups(Eng *E, Sc *s, const Instr *in, const Value *ix) {
  Hit *h = dup_hits(E, in, 16);
  if (!h) return;
  for (int k = 0; k < 16; k++) h[k] = (Hit){ix->v[k].i, k};
  dup_warn(E, s, in, h, 16, false, &E->cache[in->view]);
}

/* Whether instruction E->cur has idx16's form but for its registers:
 * settled (E->idx_form) once its view's resolution is kept. */
static __attribute__((noinline)) bool idx16_form(Eng *E, const Instr *in) {
  uint8_t form = E->rows_form[in->view];
  if (!form) return false;
  bool ok = form == 1 && in->imm == 1 && in->mask < 0 && !(in->op == I_VSTORE_IDX && in->add) && E->bank_shift >= 0 && E->banks <= 16;
  E->idx_form[E->cur] = ok ? 1 : 2;
  return ok;
}

/* idx16's checks and set-up, common to both directions: false when it
 * declines, having changed nothing (but a race access opened, left for
 * the general path as the fast handlers leave theirs). */
static inline __attribute__((always_inline)) bool idx16_open(Eng *E, Sc *s, const Instr *in, bool gather, Lanes16 *L, uint32_t *tag, Space *sp) {
  const Value *ix = &s->reg[in->a];
  if (!s->written[in->a] || ix->n != 16) return false;
  if (gather ? s->tmp.cap < 16 : !s->written[in->b] || s->reg[in->b].n != 16 || s->reg[in->b].dtype != DT_INT32 || !eng_defs_all(s->reg[in->b].def, 16))
    return false;
  const EV *c = &E->cache[in->view];
  int64_t ior;
  if (!eng_defs_all(ix->def, 16) || !ix16_inside(ix->v, c->lvl[c->top][0], &ior)) return false;
  const VDesc *vd = &E->c->views[in->view];
  int ref = vd->ref->index;
  if (!s->rg[ref]) s->rg[ref] = mem_region(&E->r->mem, ref, s->core, s->subcore); /* as rows_resolve */
  Region *g = s->rg[ref];
  *L = (Lanes16){g->bytes, g->defined, c->base, c->bstride[0], E->banks - 1, E->bank_shift, ior};
  *sp = vd->ref->space;
  *tag = race_open(E, s, in, !gather, false, -1, NULL);
  return !*tag || lanes_clean16(E, *tag, g, c->base, c->bstride[0], ix->v) || fast_decline(E, *tag);
}

/* idx16's accounting after the lanes, as x_indexed's: the most lanes in
 * one bank give the conflicts; the conflicts, the issue cost. */
static inline __attribute__((always_inline)) uint64_t idx16_close(Eng *E, Sc *s, const Instr *in, bool gather, uint32_t most, uint32_t tag, Space sp) {
  if (tag) eng_race_lanes_record(E, tag, s->rg[E->c->views[in->view].ref->index], E->cache[in->view].base, E->cache[in->view].bstride[0], s->reg[in->a].v, 16);
  uint64_t conflicts = most > 1 ? most - 1 : 0;
  s->cost = groups(E, 16, DT_INT32) * (uint64_t)cp(E)->vector_issue_cycles + conflicts * (uint64_t)cp(E)->bank_conflict_cycles;
  E->r->stats.space[sp].bank_conflicts += conflicts;
  count_access(E, sp, 64, !gather);
  prof_bytes(E, 64);
  return conflicts;
}

/* An executed instruction's status (execute_general's). */
enum { X_FAULT = 0, X_OK = 1, X_BLOCKED = 2 };

static __attribute__((noinline)) bool x_indexed_general(Eng *E, Sc *s, const Instr *in);

/* idx16's two directions, each the general path when it declines: X_ statuses. */
static __attribute__((noinline)) int idx16_gather(Eng *E, Sc *s, const Instr *in) {
  Lanes16 L;
  uint32_t tag;
  Space sp;
  if (!idx16_open(E, s, in, true, &L, &tag, &sp)) return x_indexed_general(E, s, in) ? X_OK : X_FAULT;
  Value *out = in->d != in->a && s->reg[in->d].cap >= 16 ? &s->reg[in->d] : &s->tmp; /* straight into the result when it is not the indices */
  int64_t n = 16;
  eng_shape(out, DT_INT32, 1, &n);
  uint32_t most = gather16(&L, s->reg[in->a].v, out->v, out->def);
  if (out == &s->tmp) eng_swap_in(s, in->d);
  else s->written[in->d] = 1;
  uint64_t conflicts = idx16_close(E, s, in, true, most, tag, sp);
  s->ready[in->d] = s->t + (uint64_t)cp(E)->vmem_latency_cycles + conflicts * (uint64_t)cp(E)->bank_conflict_cycles;
  log_value(E, s, in, in->log, &s->reg[in->d]);
  return X_OK;
}

static __attribute__((noinline)) int idx16_scatter(Eng *E, Sc *s, const Instr *in) {
  Lanes16 L;
  uint32_t tag;
  Space sp;
  if (!idx16_open(E, s, in, false, &L, &tag, &sp)) return x_indexed_general(E, s, in) ? X_OK : X_FAULT;
  const Value *ix = &s->reg[in->a];
  uint32_t most = scatter16(&L, ix->v, s->reg[in->b].v, in->flags & IF_LOW_WINS);
  if (in->op_id >= 0 && in->op_id < E->nwarned && !E->warned[in->op_id] && !ix16_rising(ix->v)) idx16_dups(E, s, in, ix);
  idx16_close(E, s, in, false, most, tag, sp);
  return X_OK;
}

static __attribute__((noinline)) bool x_indexed_general(Eng *E, Sc *s, const Instr *in) {
  EV ev;
  Value *m, *x = NULL;
  bool ok = true, gather = in->op == I_VLOAD_IDX, rows = false;
  if (!gather) x = eng_rd(E, s, in, in->b, &ok);
  if (!ok || !mask_of(E, s, in, &m) || !rows_resolve(E, s, in, &ev, &rows)) return false;
  Value *idx[MAX_RANK];
  if (in->imm != ev.rank[ev.top]) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s: %lld index registers for a view of rank %d", isa_mnemonic(in->op), (long long)in->imm, ev.rank[ev.top]);
    return eng_efault(E, s, in, FAULT_LOWERING, msg);
  }
  for (int d = 0; d < in->imm; d++)
    if (!(idx[d] = eng_rd(E, s, in, in->a + d, &ok)) || (d && !eng_fits(E, s, in, "index", idx[d]->n, "the first index", idx[0]->n)))
      return false;
  int64_t n = in->imm ? idx[0]->n : 0;
  if ((m && !eng_fits(E, s, in, "mask", m->n, "the indices", n)) || (x && !eng_fits(E, s, in, "value", x->n, "the indices", n))) return false;
  Dtype t = ev.dt[ev.top];
  Value *out = gather ? &s->tmp : NULL; /* a gather's result is built in the scratch value, then swapped in */
  if (gather && m) val_shape(out, t, 1, &n); /* a masked-off lane stays undefined */
  else if (gather) eng_shape(out, t, 1, &n); /* both loops write every lane */
  uint32_t tag = race_open(E, s, in, !gather, false, -1, NULL);
  int64_t *hits = E->bank_hits, maxhit = 0, banks = E->banks;
  for (int b = 0; b < E->nbank_used; b++) hits[E->bank_used[b]] = 0; /* the previous access's counts, cleared */
  E->nbank_used = 0;
  bool first_wins = in->flags & IF_LOW_WINS;
  Hit *hit = gather || in->add || in->op_id < 0 || in->op_id >= E->nwarned || E->warned[in->op_id] ? NULL : dup_hits(E, in, n); /* dup_hits' first test, inline */
  int64_t nhit = 0;
  spans_begin(E);
  if (rows) {
    IdxRun run = {m, idx[0], x, out, hit, 0, 0, E->bank_bytes, banks, E->bank_shift, tag};
    if (!rows_run(E, s, in, &ev, &run, n)) return false;
    nhit = run.nhit, maxhit = run.maxhit;
  } else
  for (int64_t j = 0; j < n; j++) {
    int64_t k = first_wins ? n - 1 - j : j;
    if (m && !alu_truthy(m->dtype, m->v[k])) continue;
    int64_t at[MAX_RANK];
    for (int d = 0; d < in->imm; d++) {
      if (!idx[d]->def[k]) return uninit_lane(E, s, in, "indices", idx[d], k);
      at[d] = idx[d]->v[k].i;
      if (at[d] < 0 || at[d] >= ev.lvl[ev.top][d]) return index_oob(E, s, in, &ev, k, d, at[d]);
    }
    Part pt[MAX_PARTS];
    int np;
    int64_t flat = ev.rank[ev.top] == 1 ? at[0] : eng_to_flat(ev.rank[ev.top], ev.lvl[ev.top], at);
    if (hit) hit[nhit++] = (Hit){flat, k};
    if (!eng_ev_parts(&ev, flat, pt, &np)) return eng_ev_oob(E, s, in, &ev);
    if (gather && tag && !eng_race_parts(E, tag, ev.reg, pt, np)) return false;
    if (E->trace) span_add(E, pt, np);
    int64_t bank = (pt[0].off / (cp(E)->vmem_bank_bytes > 0 ? cp(E)->vmem_bank_bytes : 4)) % banks;
    if (!hits[bank]++) E->bank_used[E->nbank_used++] = (uint8_t)bank;
    if (hits[bank] > maxhit) maxhit = hits[bank];
    uint8_t cdef;
    Cell cur = eng_ev_read(&ev, pt, np, &cdef);
    if (gather) {
      out->v[k] = cur, out->def[k] = cdef;
      continue;
    }
    eng_race_pre(E, tag, ev.reg, pt, np);
    if (!x->def[k] || (in->add && !cdef)) eng_ev_undef(&ev, pt, np); /* SPEC §10.1: not a fault */
    else {
      Cell c = alu_convert(x->dtype, t, x->v[k]);
      if (in->add) alu_binary(OP_ADD, t, t, cur, c, &c);
      eng_ev_write(&ev, pt, np, c);
    }
    if (tag && !eng_race_parts(E, tag, ev.reg, pt, np)) return false; /* after the write, as in x_store */
  }
  if (hit && nhit > 1) dup_warn(E, s, in, hit, nhit, false, &ev); /* fewer than two writes cannot repeat */
  uint64_t conflicts = maxhit > 1 ? (uint64_t)(maxhit - 1) : 0;
  s->cost = groups(E, n, t) * (uint64_t)cp(E)->vector_issue_cycles + conflicts * (uint64_t)cp(E)->bank_conflict_cycles;
  E->r->stats.space[ev.vd->ref->space].bank_conflicts += conflicts;
  count_access(E, ev.vd->ref->space, n * E->dsize[t], !gather);
  prof_bytes(E, n * E->dsize[t]);
  if (gather) {
    eng_swap_in(s, in->d);
    out = &s->reg[in->d];
    s->ready[in->d] = s->t + (uint64_t)cp(E)->vmem_latency_cycles + conflicts * (uint64_t)cp(E)->bank_conflict_cycles;
    log_value(E, s, in, in->log, out);
  }
  trace_access(E, s, in, &ev, NULL, out, s->cost, true, n);
  return true;
}

/* An indexed access, an X_ status: idx16 when it has that form, else the
 * general path (out of line both, so that neither pays for the other's
 * registers, and reached by a jump). */
static int x_indexed(Eng *E, Sc *s, const Instr *in) {
  uint8_t form = E->idx_form[E->cur];
  if (!form) form = idx16_form(E, in) ? 1 : 2;
  if (form != 1) return x_indexed_general(E, s, in) ? X_OK : X_FAULT;
  return in->op == I_VLOAD_IDX ? idx16_gather(E, s, in) : idx16_scatter(E, s, in);
}

/* ---- DMAs and synchronisation ------------------------------------------- */

static bool sem_addr(Eng *E, Sc *s, const Instr *in, int view, int core, int subcore, Region **g, int64_t *off) {
  EV ev;
  Part pt[MAX_PARTS];
  int np;
  if (!eng_ev_resolve(E, s, in, view, core, subcore, &ev)) return false;
  if (!eng_ev_parts(&ev, 0, pt, &np)) return eng_ev_oob(E, s, in, &ev);
  *g = ev.reg;
  *off = pt[0].off;
  return true;
}

/* A semaphore's int32 word (dtype_load / dtype_store of an int32, as words
 * on a little-endian host). */
static int64_t sem_read(Region *g, int64_t off) {
  if (!(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)) return dtype_load(DT_INT32, g->bytes + off).i;
  int32_t w;
  memcpy(&w, g->bytes + off, 4);
  return w;
}
static void sem_write(Region *g, int64_t off, int64_t v) {
  if (!(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)) return dtype_store(DT_INT32, (Cell){.i = v}, g->bytes + off);
  int32_t w = (int32_t)v;
  memcpy(g->bytes + off, &w, 4);
}

/* A plain copy of n elements from src element se to dst element de by
 * memcpy when both sides are dense there; false when it does not apply. */
static bool fast_copy(Eng *E, const Instr *in, EV *src, int64_t se, EV *dst, int64_t de, int64_t n) {
  if (!src->affine || !dst->affine || in->add || src->dt[src->top] != dst->dt[dst->top])
    return false;
  int64_t sb = eng_dense_block(src), db = eng_dense_block(dst);
  if (se % sb + n > sb || de % db + n > db) return false;
  int64_t es = dtype_size(src->dt[src->top]), so = eng_aff_off(src, se), doff = eng_aff_off(dst, de);
  if (!eng_race_copy_clean(E, src->reg, so, dst->reg, doff, n * es)) return false;
  mem_copy_bytes(dst->reg, doff, src->reg, so, n * es);
  eng_race_copy_record(E, src->reg, so, dst->reg, doff, n * es);
  return true;
}

/* Copies element se of src to element de of dst (adding when asked),
 * definedness included. */
static bool copy_elem(Eng *E, Sc *s, const Instr *in, EV *src, int64_t se, EV *dst, int64_t de) {
  Part sp[MAX_PARTS], dp[MAX_PARTS];
  int ns, nd;
  if (!eng_ev_parts(src, se, sp, &ns)) return eng_ev_oob(E, s, in, src);
  if (!eng_ev_parts(dst, de, dp, &nd)) return eng_ev_oob(E, s, in, dst);
  if (!eng_race_parts(E, E->dma_read_tag, src->reg, sp, ns)) return false;
  uint8_t sdef, ddef;
  Cell c = eng_ev_read(src, sp, ns, &sdef);
  if (in->add) {
    Cell cur = eng_ev_read(dst, dp, nd, &ddef);
    Dtype t = dst->dt[dst->top];
    alu_binary(OP_ADD, t, t, cur, alu_convert(src->dt[src->top], t, c), &c);
    sdef = sdef && ddef;
  }
  eng_race_pre(E, E->dma_write_tag, dst->reg, dp, nd);
  if (sdef) {
    eng_ev_write(dst, dp, nd, c);
  } else {
    for (int i = 0; i < nd; i++) mem_set_defined(dst->reg, dp[i].off, dp[i].n, false);
  }
  return eng_race_parts(E, E->dma_write_tag, dst->reg, dp, nd); /* after the write, as in x_store */
}

static bool dma_offsets(Eng *E, Sc *s, const Instr *in, Value *o) {
  if (in->view4 >= 0) {
    EV ev;
    return eng_ev_resolve(E, s, in, in->view4, s->core, s->subcore, &ev) && load_all(E, s, in, &ev, o, race_open(E, s, in, false, false, -1, &ev));
  }
  if (in->a < 0) /* checked here, not when parsing: the verifier's rules come first */
    return eng_efault(E, s, in, FAULT_LOWERING, "tpu.enqueue_indirect_dma needs its offsets: a register (a=%3) or a view (offsets=v2)");
  bool ok = true;
  Value *v = eng_rd(E, s, in, in->a, &ok);
  if (ok) val_copy(o, v);
  return ok;
}

/* Row r of the plain side pairs with row o[r] of the indexed side. */
static bool dma_indirect(Eng *E, Sc *s, const Instr *in, EV *src, EV *dst, int64_t *bytes, int64_t *rows_done, int64_t *row_bytes) {
  bool gather = in->imm;
  EV *ix = gather ? src : dst, *pl = gather ? dst : src;
  Value o = {0};
  int64_t ignored = 0;
  bool filter = in->c >= 0;
  if (!dma_offsets(E, s, in, &o) || (filter && !eng_int_reg(E, s, in, in->c, &ignored))) return val_free(&o), false;
  int64_t rows = pl->rank[pl->top] ? pl->lvl[pl->top][0] : 1, z = ix->lvl[ix->top][0];
  int64_t row = rows ? pl->n / rows : 0;
  *bytes = dtype_packed_bytes(pl->dt[pl->top], pl->n); /* int4: two a byte */
  *row_bytes = dtype_packed_bytes(pl->dt[pl->top], row);
  *rows_done = 0;
  Hit *hit = gather ? NULL : dup_hits(E, in, rows < o.n ? rows : o.n);
  int64_t nhit = 0;
  for (int64_t r = 0; r < rows && r < o.n; r++) {
    if (!o.def[r]) { /* offsets in a register: the load they came from (a view: none) */
      uninit_lane(E, s, in, "DMA offsets", &o, r);
      if (in->view4 < 0 && in->a >= 0) eng_origin_fault(E, s, in, &s->reg[in->a]);
      return val_free(&o), false;
    }
    int64_t at = o.v[r].i;
    if (filter && at == ignored) continue;
    if (at < 0 || at >= z) {
      char msg[200];
      snprintf(msg, sizeof msg, "DMA offset %lld (row %lld) is outside [0, %lld) of the indexed ref (%s '%s')", (long long)at, (long long)r,
               (long long)z, space_key(ix->vd->ref->space), ix->vd->ref->name);
      val_free(&o);
      return eng_efault(E, s, in, FAULT_OOB, msg);
    }
    ++*rows_done;
    if (hit) hit[nhit++] = (Hit){at, r};
    if (E->rd) { /* each row of the indexed side is an access of its own, with its own span */
      if (gather) E->dma_read_tag = eng_race_open_rows(E, s, in, false, false, E->dma_thread, src, at * row, row);
      else E->dma_write_tag = eng_race_open_rows(E, s, in, true, in->add, E->dma_thread, dst, at * row, row);
    }
    if (gather ? fast_copy(E, in, src, at * row, dst, r * row, row) : fast_copy(E, in, src, r * row, dst, at * row, row)) continue;
    for (int64_t j = 0; j < row; j++) {
      bool ok = gather ? copy_elem(E, s, in, src, at * row + j, dst, r * row + j) : copy_elem(E, s, in, src, r * row + j, dst, at * row + j);
      if (!ok) return val_free(&o), false;
    }
  }
  if (hit) dup_warn(E, s, in, hit, nhit, true, ix);
  val_free(&o);
  return true;
}

static int64_t granule_round(const Eng *E, int64_t bytes) {
  int64_t g = cp(E)->dma_granule_size_bytes;
  return g > 0 ? (bytes + g - 1) / g * g : bytes;
}

static int new_dma(Eng *E) {
  int i = E->free_dma;
  if (i >= 0) E->free_dma = E->dmas[i].next;
  else {
    if (E->ndmas == E->capdmas) {
      E->capdmas = E->capdmas ? E->capdmas * 2 : 64;
      E->dmas = realloc(E->dmas, sizeof *E->dmas * (size_t)E->capdmas);
      if (!E->dmas) abort();
    }
    i = E->ndmas++;
  }
  memset(&E->dmas[i], 0, sizeof *E->dmas);
  E->dmas[i].live = true;
  E->dmas[i].id = E->issued++;
  E->dmas[i].next = -1;
  return i;
}

/* A retired DMA's record goes back to the free list. */
static void free_dma(Eng *E, int i) {
  E->dmas[i].live = false;
  E->dmas[i].next = E->free_dma;
  E->free_dma = i;
}

static size_t dq_hash(const Region *g, int64_t off, int sub, int cap) {
  uint64_t h = (uint64_t)(uintptr_t)g * 0x9E3779B97F4A7C15ull ^ (uint64_t)off * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)sub;
  return (size_t)((h ^ h >> 29) & (uint64_t)(cap - 1));
}

/* The queue of (g, off, sub); NULL when absent and !make. */
static DmaQueue *dq_find(Eng *E, const Region *g, int64_t off, int sub, bool make);

static void dq_grow(Eng *E) {
  DmaQueue *old = E->dq;
  int oldcap = E->capdq;
  E->capdq = oldcap ? oldcap * 2 : 16;
  E->dq = calloc((size_t)E->capdq, sizeof *E->dq);
  if (!E->dq) abort();
  E->ndq = 0;
  for (int i = 0; i < oldcap; i++)
    if (old[i].g) *dq_find(E, old[i].g, old[i].off, old[i].sub, true) = old[i];
  free(old);
}

static DmaQueue *dq_find(Eng *E, const Region *g, int64_t off, int sub, bool make) {
  if (make && 2 * (E->ndq + 1) > E->capdq) dq_grow(E);
  if (!E->capdq) return NULL;
  for (size_t i = dq_hash(g, off, sub, E->capdq);; i = (i + 1) & (size_t)(E->capdq - 1)) {
    DmaQueue *q = &E->dq[i];
    if (q->g == g && q->off == off && q->sub == sub) return q;
    if (q->g) continue;
    if (!make) return NULL;
    E->ndq++;
    *q = (DmaQueue){g, off, sub, -1, -1, -1, 0, 0};
    return q;
  }
}

/* Appends DMA i to its semaphore's queue. */
static void dq_push(Eng *E, int i) {
  DmaRec *d = &E->dmas[i];
  DmaQueue *q = dq_find(E, d->sem, d->sem_off, d->sub, true);
  if (q->tail >= 0) E->dmas[q->tail].next = i;
  else q->head = i;
  q->tail = i;
  q->last_id = d->id, q->last_line = d->line, q->last_col = d->col;
}

/* at: the instruction's line for a wait (the DMA's own for its start and end). */
static void trace_dma(Eng *E, const DmaRec *d, TraceKind k, uint64_t t, const Loc *at) {
  if (!E->trace) return;
  if (k == TE_DMA_WAIT && E->sc[d->sub].waiting) wait_done(E, &E->sc[d->sub], t); /* the stall comes first on the thread */
  TraceEvent te;
  memset(&te, 0, sizeof te);
  te.kind = k;
  te.t0 = te.t1 = t;
  te.core = E->sc[d->sub].core;
  te.subcore = E->sc[d->sub].subcore;
  te.dma = d->id;
  te.op = k == TE_DMA_WAIT ? "wait" : "dma";
  te.src_space = d->src_space, te.dst_space = d->dst_space, te.src_ref = d->src_ref, te.dst_ref = d->dst_ref;
  te.bytes = d->bytes;
  te.line = at ? at->line : d->line, te.col = at ? at->col : d->col;
  trace_event(E->trace, &te);
}

static void trace_counter(Eng *E, TraceKind k, int core, int sub, const char *name, int64_t v, uint64_t t) {
  if (!E->trace) return;
  TraceEvent te;
  memset(&te, 0, sizeof te);
  te.kind = k;
  te.t0 = te.t1 = t;
  te.core = core, te.subcore = sub, te.dma = -1;
  te.ref = name;
  te.space = name;
  te.value = v;
  trace_event(E->trace, &te);
}

/* Moves the data now (a race-free program cannot tell, SPEC §7.10) and
 * hands the transfer to the DMA model, which signals the semaphore when
 * the last byte lands.  A sync_copy then waits for that moment. */
static int x_dma(Eng *E, Sc *s, const Instr *in) {
  if (s->sync_tag >= 0) {
    DmaRec *d = &E->dmas[s->sync_tag];
    if (!d->done) return X_BLOCKED;
    race_dma_retire(E->rd, d->race, s->idx);
    if (E->trace) trace_dma(E, d, TE_DMA_WAIT, s->t, &in->loc);
    free_dma(E, s->sync_tag);
    s->sync_tag = -1;
    return X_OK;
  }
  if (dma_outstanding(E->dm, s->idx) >= cp(E)->dma_queue_depth) return X_BLOCKED;
  EV src, dst;
  if (!eng_ev_resolve(E, s, in, in->view, s->core, s->subcore, &src) || !eng_ev_resolve(E, s, in, in->view2, s->core, s->subcore, &dst))
    return X_FAULT;
  int64_t bytes = dtype_packed_bytes(dst.dt[dst.top], dst.n), moved;
  int thr = race_dma_start(E->rd, s->idx);
  E->dma_thread = thr;
  bool ind = in->op == I_ENQUEUE_INDIRECT_DMA;
  E->dma_read_tag = race_open(E, s, in, false, false, thr, ind && in->imm ? NULL : &src);
  E->dma_write_tag = race_open(E, s, in, true, in->add, thr, ind && !in->imm ? NULL : &dst);
  if (in->op == I_ENQUEUE_INDIRECT_DMA) {
    int64_t rows, row_bytes;
    if (!dma_indirect(E, s, in, &src, &dst, &bytes, &rows, &row_bytes)) return X_FAULT;
    moved = rows * granule_round(E, row_bytes);
  } else {
    int64_t n = src.n;
    if (!(n > 0 && fast_copy(E, in, &src, 0, &dst, 0, n)))
      for (int64_t i = 0; i < n; i++) {
        int64_t run = src.affine && dst.affine ? eng_dense_block(&src) : 1;
        if (run > 1 && i % run == 0 && i + run <= n && fast_copy(E, in, &src, i, &dst, i, run)) {
          i += run - 1;
          continue;
        }
        if (!copy_elem(E, s, in, &src, i, &dst, i)) return X_FAULT;
      }
    moved = granule_round(E, bytes);
  }
  int tag = new_dma(E);
  DmaRec *d = &E->dmas[tag];
  d->sub = s->idx;
  d->race = thr;
  d->bytes = bytes;
  d->src_space = space_key(src.vd->ref->space), d->dst_space = space_key(dst.vd->ref->space);
  d->src_ref = src.vd->ref->name, d->dst_ref = dst.vd->ref->name;
  d->line = in->loc.line, d->col = in->loc.col;
  d->t0 = s->t;
  if (in->view3 >= 0 && !sem_addr(E, s, in, in->view3, s->core, s->subcore, &d->sem, &d->sem_off)) return free_dma(E, tag), X_FAULT;
  if (d->sem) dq_push(E, tag);
  Space ss = src.vd->ref->space, ds = dst.vd->ref->space;
  DmaReq rq = {s->idx, s->core, ss == SP_HBM || ds == SP_HBM, ss == SP_VMEM_SHARED || ds == SP_VMEM_SHARED, (double)moved, s->t, tag, !E->trace};
  dma_submit(E->dm, &rq);
  E->r->stats.dma_bytes += (uint64_t)moved;
  count_access(E, ss, bytes, false);
  count_access(E, ds, bytes, true);
  prof_bytes(E, bytes);
  E->r->stats.space[ss].dma_bytes += (uint64_t)moved;
  if (ds != ss) E->r->stats.space[ds].dma_bytes += (uint64_t)moved;
  if (E->trace) {
    trace_dma(E, d, TE_DMA_START, s->t, NULL);
    trace_counter(E, TE_INFLIGHT, -1, 0, "hbm", (int64_t)dma_inflight_bytes(E->dm, 0), s->t);
    trace_counter(E, TE_INFLIGHT, s->core, 0, "vmem_shared", (int64_t)dma_inflight_shared(E->dm, s->core), s->t);
  }
  if (in->view3 >= 0) return X_OK;
  s->sync_tag = tag;
  return X_BLOCKED;
}

/* A transfer's last byte landed at cycle t. */
static void dma_complete(Eng *E, int tag, uint64_t t) {
  DmaRec *d = &E->dmas[tag];
  d->done = true;
  trace_dma(E, d, TE_DMA_END, t, NULL);
  if (!d->sem) return;
  sem_write(d->sem, d->sem_off, sem_read(d->sem, d->sem_off) + d->bytes);
  trace_counter(E, TE_SEMAPHORE, E->sc[d->sub].core, E->sc[d->sub].subcore, d->sem->name, sem_read(d->sem, d->sem_off), t);
}

static int x_wait(Eng *E, Sc *s, const Instr *in) {
  EV src, dst;
  if (!eng_ev_resolve(E, s, in, in->view, s->core, s->subcore, &src) || !eng_ev_resolve(E, s, in, in->view2, s->core, s->subcore, &dst))
    return X_FAULT;
  EV *moved = in->op == I_WAIT_INDIRECT_DMA && in->imm ? &dst : in->op == I_WAIT_INDIRECT_DMA ? &src : &dst;
  int64_t need = dtype_packed_bytes(moved->dt[moved->top], moved->n);
  Region *g;
  int64_t off;
  if (!sem_addr(E, s, in, in->view3, s->core, s->subcore, &g, &off)) return X_FAULT;
  if (sem_read(g, off) < need) return X_BLOCKED;
  sem_write(g, off, sem_read(g, off) - need);
  if (E->trace) trace_counter(E, TE_SEMAPHORE, s->core, s->subcore, g->name, sem_read(g, off), s->t);
  DmaQueue *q = dq_find(E, g, off, s->idx, false); /* the flow arrow ends at the wait that retires the oldest landed copy */
  if (!q || q->head < 0 || !E->dmas[q->head].done) return X_OK;
  int i = q->head;
  DmaRec *d = &E->dmas[i];
  q->head = d->next;
  if (q->head < 0) q->tail = -1;
  race_dma_retire(E->rd, d->race, s->idx);
  if (E->trace) trace_dma(E, d, TE_DMA_WAIT, s->t, &in->loc);
  free_dma(E, i);
  return X_OK;
}

static int x_sem(Eng *E, Sc *s, const Instr *in) {
  int64_t amount = 1, core = s->core, sub = s->subcore;
  if (in->a >= 0 && !eng_int_reg(E, s, in, in->a, &amount)) return X_FAULT;
  if (in->b >= 0 && !eng_int_reg(E, s, in, in->b, &core)) return X_FAULT;
  if (in->c >= 0 && !eng_int_reg(E, s, in, in->c, &sub)) return X_FAULT;
  if (core < 0 || core >= E->p->mesh_cores || sub < 0 || sub >= E->p->mesh_subcores)
    return eng_efault(E, s, in, FAULT_OOB, "the signalled subcore is outside the mesh"), X_FAULT;
  Region *g;
  int64_t off;
  if (!sem_addr(E, s, in, in->view, (int)core, (int)sub, &g, &off)) return X_FAULT;
  if (in->op == I_SEM_SIGNAL) {
    if (!run_sem_signal_fits(E->r, E->c->views[in->view].ref, g, sem_read(g, off), amount, in->loc, s->core, s->subcore, in->op_id))
      return X_FAULT;
    sem_write(g, off, sem_read(g, off) + amount);
    race_release(E->rd, s->idx, eng_sem_slot(E, g, off));
    for (int i = 0; i < E->nsemslots; i++)
      if (E->semslots[i].g == g && E->semslots[i].off == off) E->semslots[i].signal = in->loc;
    trace_counter(E, TE_SEMAPHORE, (int)core, (int)sub, g->name, sem_read(g, off), s->t);
    return X_OK;
  }
  if (sem_read(g, off) < amount) return X_BLOCKED;
  sem_write(g, off, sem_read(g, off) - amount);
  race_acquire(E->rd, s->idx, eng_sem_slot(E, g, off));
  trace_counter(E, TE_SEMAPHORE, s->core, s->subcore, g->name, sem_read(g, off), s->t);
  return X_OK;
}

static int x_barrier(Eng *E, Sc *s) {
  if (!s->at_barrier) {
    s->at_barrier = true, s->barrier_gen++;
    race_barrier_arrive(E->rd, s->idx, s->barrier_gen);
  }
  int here = 0, first = run_mesh_first(E->p, s->subcore), count = run_mesh_count(E->p, s->subcore); /* its mesh's subcores of its core */
  for (int i = 0; i < E->nsub; i++) {
    Sc *o = &E->sc[i];
    if (o->core == s->core && o->subcore >= first && o->subcore < first + count && o->barrier_gen >= s->barrier_gen) here++;
  }
  if (here < count) return X_BLOCKED;
  s->at_barrier = false;
  race_barrier_leave(E->rd, s->idx, s->barrier_gen, s->core * (int)E->p->mesh_subcores + first, count);
  return X_OK;
}

static int x_fetch_and_add(Eng *E, Sc *s, const Instr *in) {
  int64_t target;
  bool ok = true;
  if (!eng_int_reg(E, s, in, in->b, &target)) return X_FAULT;
  if (target < 0 || target >= E->p->mesh_subcores)
    return eng_efault(E, s, in, FAULT_OOB, "fetch_and_add targets a subcore outside the mesh"), X_FAULT;
  Value *x = eng_rd(E, s, in, in->a, &ok);
  EV ev;
  if (!ok || !eng_fits(E, s, in, "operand", x->n, "a scalar", 1) || !eng_ev_resolve(E, s, in, in->view, s->core, (int)target, &ev)) return X_FAULT;
  Part pt[MAX_PARTS];
  int np;
  if (!eng_ev_parts(&ev, 0, pt, &np)) return eng_ev_oob(E, s, in, &ev), X_FAULT;
  uint32_t tag = race_open(E, s, in, true, true, -1, NULL);
  uint8_t def;
  Cell old = eng_ev_read(&ev, pt, np, &def), c;
  eng_race_pre(E, tag, ev.reg, pt, np);
  if (def && x->def[0]) { /* an undefined operand leaves the sum undefined (SPEC §10.1) */
    alu_binary(OP_ADD, DT_INT32, DT_INT32, old, alu_convert(x->dtype, DT_INT32, x->v[0]), &c);
    eng_ev_write(&ev, pt, np, c);
  } else {
    eng_ev_undef(&ev, pt, np);
  }
  if (!eng_race_parts(E, tag, ev.reg, pt, np)) return X_FAULT; /* after the write, as in x_store */
  RunResult *r = E->r; /* the order of atomics, for the reference to replay */
  if (r->natomics == r->capatomics) {
    r->capatomics = r->capatomics ? r->capatomics * 2 : 64;
    r->atomics = realloc(r->atomics, sizeof *r->atomics * (size_t)r->capatomics);
    if (!r->atomics) abort();
  }
  r->atomics[r->natomics++] = s->idx;
  val_scalar(&s->reg[in->d], DT_INT32, old);
  s->reg[in->d].def[0] = def;
  set_reg(s, in->d);
  log_value(E, s, in, in->log, &s->reg[in->d]);
  return X_OK;
}

/* ---- control and expectations --------------------------------------------- */
static bool loop_continues(int64_t i, int64_t hi, int64_t step) { return step > 0 ? i < hi : i > hi; }

static int x_control(Eng *E, Sc *s, const Instr *in) {
  int64_t a, hi, step;
  if (in->op == I_FOR) {
    if (!eng_int_reg(E, s, in, in->a, &a) || !eng_int_reg(E, s, in, in->b, &hi) || !eng_int_reg(E, s, in, in->c, &step)) return X_FAULT;
    if (step == 0) return eng_efault(E, s, in, FAULT_LIMIT, "loop step is zero"), X_FAULT;
    if (!loop_continues(a, hi, step)) return s->pc = in->target, X_BLOCKED + 1;
    eng_scalar(&s->reg[in->d], DT_INT64, (Cell){.i = a}); /* full width: the counter must not wrap */
    set_reg(s, in->d);
    return X_OK;
  }
  if (in->op == I_ENDFOR) {
    if (!eng_int_reg(E, s, in, in->d, &a) || !eng_int_reg(E, s, in, in->b, &hi) || !eng_int_reg(E, s, in, in->c, &step)) return X_FAULT;
    int64_t next;
    if (__builtin_add_overflow(a, step, &next) || !loop_continues(next, hi, step)) return X_OK;
    eng_scalar(&s->reg[in->d], DT_INT64, (Cell){.i = next});
    return s->pc = in->target, X_BLOCKED + 1;
  }
  if (in->op == I_BRANCH_IF_FALSE) {
    bool ok = true;
    const Value *v = eng_rd(E, s, in, in->a, &ok);
    if (ok && v->n == 1 && !v->def[0]) {
      eng_efault(E, s, in, FAULT_UNINIT, "the condition (of a when or a while) is undefined");
      return eng_origin_fault(E, s, in, v), X_FAULT;
    }
    if (!ok || !eng_int_reg(E, s, in, in->a, &a)) return X_FAULT;
    if (!a) return s->pc = in->target, X_BLOCKED + 1;
    return X_OK;
  }
  return s->pc = in->target, X_BLOCKED + 1; /* I_JUMP */
  return X_FAULT;
}

/* A failed expect: names the element in the checked value's shape (got
 * NULL: it is undefined); frees got. */
static void expect_fault(Eng *E, Sc *s, const Instr *in, Value *got, int64_t i, FaultKind k, const char *g, const char *w) {
  RunElement at = {0};
  char where[120], msg[300];
  run_element(&at, got->rank, got->shape, i);
  run_element_text(&at, where, sizeof where);
  snprintf(at.got, sizeof at.got, "%s", g ? g : "undefined");
  snprintf(at.wanted, sizeof at.wanted, "%s", w ? w : "");
  if (g) snprintf(msg, sizeof msg, "%s is %s, expected %s", where, g, w);
  else snprintf(msg, sizeof msg, "expect checks %s, which is undefined", where);
  val_free(got);
  bool first = !E->r->faulted;
  eng_efault(E, s, in, k, msg);
  if (first) E->r->fault.at = at;
}

static int x_expect(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value got = {0}, *b = eng_rd(E, s, in, in->b, &ok);
  if (!ok) return X_FAULT;
  if (in->op == I_EXPECT_VIEW) {
    EV ev;
    if (!eng_ev_resolve(E, s, in, in->view, s->core, s->subcore, &ev) || !load_all(E, s, in, &ev, &got, race_open(E, s, in, false, false, -1, &ev)))
      return val_free(&got), X_FAULT;
  } else {
    Value *a = eng_rd(E, s, in, in->a, &ok);
    if (!ok) return X_FAULT;
    val_copy(&got, a);
  }
  if (!eng_fits1(E, s, in, "expected value", b->n, "the checked value", got.n)) return val_free(&got), X_FAULT;
  for (int64_t i = 0; i < got.n; i++) {
    int64_t ib = b->n == 1 ? 0 : i;
    if (!got.def[i] || !b->def[ib]) {
      const Value *undef = !got.def[i] ? (in->op == I_EXPECT ? &s->reg[in->a] : NULL) : b;
      expect_fault(E, s, in, &got, i, FAULT_UNINIT, NULL, NULL);
      return eng_origin_fault(E, s, in, undef), X_FAULT;
    }
    Cell want = alu_convert(b->dtype, got.dtype, b->v[ib]);
    if (alu_equal(got.dtype, got.v[i], want)) continue;
    char g[64], w[64];
    dtype_format(got.dtype, got.v[i], g, sizeof g);
    dtype_format(got.dtype, want, w, sizeof w);
    return expect_fault(E, s, in, &got, i, FAULT_EXPECT, g, w), X_FAULT;
  }
  val_free(&got);
  return X_OK;
}

/* ---- pl.debug_print, pl.debug_check ------------------------------------ */
static const char *op_message(const Eng *E, const Instr *in) {
  const Op *op = run_op_by_id(E->p, in->op_id);
  return op && (op->has & F(MESSAGE)) ? op->name[FLD_MESSAGE] : "";
}

static int x_log(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value got = {0};
  if (in->op == I_LOG_BUFFER) {
    EV ev;
    if (!eng_ev_resolve(E, s, in, in->view, s->core, s->subcore, &ev) || !load_all(E, s, in, &ev, &got, race_open(E, s, in, false, false, -1, &ev)))
      return val_free(&got), X_FAULT;
  } else if (in->a >= 0) {
    Value *a = eng_rd(E, s, in, in->a, &ok);
    if (!ok) return X_FAULT;
    val_copy(&got, a);
  }
  bool has = in->op == I_LOG_BUFFER || in->a >= 0;
  run_print(E->r, s->core, s->subcore, op_message(E, in), has ? &got : NULL);
  if (has) log_value(E, s, in, in->log, &got);
  val_free(&got);
  return X_OK;
}

static int x_assert(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  Value *a = eng_rd(E, s, in, in->a, &ok);
  if (!ok) return X_FAULT;
  if (a->n != 1) return eng_efault(E, s, in, FAULT_LOWERING, "cf.assert needs a scalar condition"), X_FAULT;
  if (!a->def[0]) return eng_efault(E, s, in, FAULT_UNINIT, "the condition of debug_check is undefined"), X_FAULT;
  if (a->v[0].i) return X_OK;
  char msg[600];
  snprintf(msg, sizeof msg, "%.500s", op_message(E, in));
  eng_efault(E, s, in, FAULT_CHECK, msg);
  return X_FAULT;
}

/* Whether registers x, y, z each hold a defined int32/int64 scalar
 * (eng_int_reg's common case, without its fault): the tests of the three
 * combined, a few branches rather than twelve. */
static inline bool ints_now(const Sc *s, int x, int y, int z) {
  const Value *a = &s->reg[x], *b = &s->reg[y], *c = &s->reg[z];
  if (!(s->written[x] & s->written[y] & s->written[z]) || ((a->n ^ 1) | (b->n ^ 1) | (c->n ^ 1))) return false;
  return (a->def[0] & b->def[0] & c->def[0]) && ((INT_DTYPES >> a->dtype) & (INT_DTYPES >> b->dtype) & (INT_DTYPES >> c->dtype) & 1);
}

/* x_control's scf.yield of a defined integer scalar counter, bound and
 * step: the next pc (pc + 1 when the loop ends, else its body's first). */
static inline __attribute__((always_inline)) int endfor_step(Eng *E, Sc *s, const Instr *in, int pc) {
  Value *d = &s->reg[in->d];
  int64_t a = d->v[0].i, hi = s->reg[in->b].v[0].i, step = s->reg[in->c].v[0].i, next;
  if (__builtin_add_overflow(a, step, &next) || !loop_continues(next, hi, step)) return s->cost = value_cost(E, d), pc + 1;
  d->dtype = DT_INT64, d->rank = 0, d->v[0].i = next; /* eng_scalar of a one-lane register, full width */
  s->cost = (uint64_t)cp(E)->scalar_issue_cycles; /* value_cost of the scalar counter */
  return in->target;
}

/* FK_ENDFOR: endfor_step when its counter, bound and step are defined
 * integer scalars; -1 (declined) otherwise. */
static inline __attribute__((always_inline)) int fast_endfor(Eng *E, Sc *s, const Instr *in, int pc) {
  return ints_now(s, in->d, in->b, in->c) ? endfor_step(E, s, in, pc) : -1;
}

/* FK_ENDFOR_S: fast_endfor of registers engine_decode.c proved to hold
 * int scalars whenever bound: only their binding and defined lane are
 * tested. */
static inline __attribute__((always_inline)) int fast_endfor_s(Eng *E, Sc *s, const Instr *in, int pc) {
  const Value *d = &s->reg[in->d], *b = &s->reg[in->b], *c = &s->reg[in->c];
  if (!(s->written[in->d] & s->written[in->b] & s->written[in->c]) || !(d->def[0] & b->def[0] & c->def[0])) return -1;
  return endfor_step(E, s, in, pc);
}

/* The defined flags of the n elements of t from byte base of g (as
 * load_all gives them). */
static void span_defs(const Eng *E, const Region *g, int64_t base, Dtype t, int64_t n, uint8_t *def) {
  int64_t es = E->dsize[t];
  if (span_defined(g, base, n * es)) eng_defs_set(def, n);
  else
    for (int64_t i = 0; i < n; i++) def[i] = span_defined(g, base + i * es, es);
}

/* A bool mask of n lanes, every one defined (mask_of and its fits check
 * pass), that is not the result register. */
static const Value *fast_mask(const Sc *s, const Instr *in, int64_t n) {
  if (in->mask == in->d || !s->written[in->mask]) return NULL;
  const Value *m = &s->reg[in->mask];
  return m->dtype == DT_BOOL && m->n == n && eng_defs_all(m->def, n) ? m : NULL;
}

/* fast_vload_masked's move of the elements of mem to the mask's lanes of
 * d: lane i (ep) or the k-th selected one, into lane k (lk) or lane i. */
static inline __attribute__((always_inline)) void expand_lanes(const Value *m, const Value *mem, Value *d, int64_t n, bool ep, bool lk) {
  for (int64_t i = 0, k = 0; i < n; i++) {
    if (!m->v[i].i) continue;
    int64_t src = ep ? i : k, dst = lk ? k : i;
    d->v[dst] = mem->v[src];
    d->def[dst] = mem->def[src];
    k++;
  }
}

/* fast_vstore_masked's int32 writes: the mask's lanes of x (lane k when lk,
 * else lane i) to element i (ep) or the k-th selected one; an undefined
 * lane leaves its element undefined.  Elements are int32 from a 4-byte
 * aligned base: each lies inside one shadow byte, its 4 bits set at once. */
static inline __attribute__((always_inline)) void compress_lanes(Region *g, int64_t base, const Value *m, const Value *x, int64_t n, bool ep, bool lk) {
  bool one = x->n == 1;
  for (int64_t i = 0, k = 0; i < n; i++) {
    if (!m->v[i].i) continue;
    int64_t lane = lk ? k : i, elem = ep ? i : k;
    k++;
    int64_t xi = one ? 0 : lane, off = base + 4 * elem;
    if (!x->def[xi]) { /* SPEC §10.1: not a fault */
      mem_set_defined(g, off, 4, false);
      continue;
    }
    int32_t w = (int32_t)x->v[xi].i;
    memcpy(g->bytes + off, &w, 4);
    g->defined[off >> 3] |= (uint8_t)(0xfu << (off & 7));
  }
}

/* FK_VLOAD_M: x_load's masked (expanding) vector load of a compiled view:
 * the view read whole into the second scratch value, its elements moved
 * to the mask's lanes as the general loop moves them.  The masked
 * handlers stay out of line: inlined into the dispatch, they cost every
 * other instruction registers. */
static __attribute__((noinline)) bool fast_vload_masked(Eng *E, Sc *s, const Instr *in) {
  const EV *sh = &E->cview[in->view].shape;
  Dtype t = sh->dt[1];
  int64_t n = sh->n, bytes = n * E->dsize[t], base;
  const Value *m = fast_mask(s, in, n);
  Region *g = m ? fast_span(E, s, in, &base) : NULL;
  if (!g) return false;
  uint32_t tag;
  if (E->rd && (tag = fast_race_open(E, s, in, false, base, bytes)) && !race_span(E->rd, tag, g, base, bytes)) return fast_decline(E, tag);
  Value *mem = &s->tmp2, *d = &s->reg[in->d];
  eng_shape(mem, t, sh->rank[1], sh->lvl[1]);
  lanes_load(t, g->bytes + base, n, mem->v);
  span_defs(E, g, base, t, n, mem->def);
  eng_shape(d, sh->vd->ref->dtype, mem->rank, mem->shape); /* undefined but where the mask puts an element (val_shape) */
  if (d->n == 16) memset(d->def, 0, 16); /* a fixed size: two moves */
  else if (d->n) memset(d->def, 0, (size_t)d->n);
  bool ep = in->flags & IF_ELEM_P, lk = in->flags & IF_LANE_K; /* isa.h ISA_FLAGS */
  if (ep && lk) expand_lanes(m, mem, d, n, true, true); /* each form its own loop, no per-lane flag tests */
  else if (ep) expand_lanes(m, mem, d, n, true, false);
  else if (lk) expand_lanes(m, mem, d, n, false, true);
  else expand_lanes(m, mem, d, n, false, false);
  set_reg(s, in->d);
  log_value(E, s, in, in->log, d);
  s->cost = groups(E, n, t) * (uint64_t)cp(E)->vector_issue_cycles;
  s->ready[in->d] = s->t + (uint64_t)cp(E)->vmem_latency_cycles;
  count_access(E, sh->vd->ref->space, bytes, false);
  prof_bytes(E, bytes);
  return true;
}

/* FK_VSTORE_M: x_store's masked (compressing) int32 store of a compiled
 * view, no conversion: each element the mask selects written or, from an
 * undefined lane, left undefined, as the general loop does; races only
 * when the access is not recorded (a lone subcore), else the general loop
 * takes the access. */
static __attribute__((noinline)) bool fast_vstore_masked(Eng *E, Sc *s, const Instr *in) {
  const EV *sh = &E->cview[in->view].shape;
  Dtype t = sh->dt[1];
  int64_t n = sh->n, base;
  if (t != DT_INT32 || !s->written[in->a]) return false;
  const Value *x = &s->reg[in->a], *m = fast_mask(s, in, n);
  if (!m || x->dtype != t || (x->n != n && x->n != 1)) return false;
  Region *g = fast_span(E, s, in, &base);
  if (!g || (base & 3)) return false; /* compress_lanes' elements: each inside one shadow byte */
  uint32_t tag;
  if (E->rd && (tag = fast_race_open(E, s, in, true, NO_SPAN))) return fast_decline(E, tag);
  bool ep = in->flags & IF_ELEM_P, lk = in->flags & IF_LANE_K; /* isa.h ISA_FLAGS */
  if (ep && lk) compress_lanes(g, base, m, x, n, true, true); /* as fast_vload_masked */
  else if (ep) compress_lanes(g, base, m, x, n, true, false);
  else if (lk) compress_lanes(g, base, m, x, n, false, true);
  else compress_lanes(g, base, m, x, n, false, false);
  int64_t bytes = n * E->dsize[t];
  if (in->log && !E->no_log) {
    Value *after = &s->tmp2;
    eng_shape(after, t, sh->rank[1], sh->lvl[1]);
    lanes_load(t, g->bytes + base, n, after->v);
    span_defs(E, g, base, t, n, after->def);
    log_value(E, s, in, in->log, after);
  }
  s->cost = groups(E, n, t) * (uint64_t)cp(E)->vector_issue_cycles;
  count_access(E, sh->vd->ref->space, bytes, true);
  prof_bytes(E, bytes);
  return true;
}

/* FK_MOV: x_misc_value's copy of a bound register, its lanes written
 * straight into the result register when that has room, rather than into
 * the scratch value swapped in after. */
static bool fast_mov(Eng *E, Sc *s, const Instr *in) {
  if (!s->written[in->a]) return false; /* the general path names the unbound register */
  const Value *a = &s->reg[in->a];
  Value *t = &s->reg[in->d];
  if (t != a) {
    if (t->cap < a->n) return false;
    if (a->n == 16 && a->rank == 1) { /* the common vector: its shape, lanes and flags at fixed sizes */
      t->dtype = a->dtype, t->rank = 1, t->shape[0] = 16, t->n = 16;
      memcpy(t->v, a->v, sizeof(Cell) * 16);
      memcpy(t->def, a->def, 16);
    } else {
      eng_shape(t, a->dtype, a->rank, a->shape);
      if (a->n) memcpy(t->v, a->v, sizeof(Cell) * (size_t)a->n);
      eng_defs_copy(t->def, a->def, a->n);
    }
    s->written[in->d] = 1;
  }
  s->cost = value_cost(E, t);
  return true;
}

/* The instruction's specialised handler: the pc its subcore goes on to,
 * or -1 when it declined.  Pinned inline: the compiler's own choice put it
 * out of line once it had more cases (a call and a frame per instruction). */
static inline __attribute__((always_inline)) int run_fast(Eng *E, Sc *s, const Instr *in, uint8_t k, int pc) {
  bool ok = false;
  switch ((FastKind)k) {
  case FK_BIN_I32: ok = fast_binary(E, s, in); break;
  case FK_BIN_S: ok = fast_binary_s(E, s, in, in->sub); break;
  case FK_ADD_S: ok = fast_binary_s(E, s, in, OP_ADD); break; /* the operator a constant: its tests fold away */
  case FK_MOD_S: ok = fast_binary_s(E, s, in, OP_MOD); break;
  case FK_VLOAD: ok = fast_vload(E, s, in); break;
  case FK_VSTORE: ok = fast_vstore(E, s, in); break;
  case FK_SLOAD: ok = fast_sload(E, s, in); break;
  case FK_SSTORE: ok = fast_sstore(E, s, in); break;
  case FK_ENDFOR: return fast_endfor(E, s, in, pc);
  case FK_ENDFOR_S: return fast_endfor_s(E, s, in, pc);
  case FK_VLOAD_M: ok = fast_vload_masked(E, s, in); break;
  case FK_VSTORE_M: ok = fast_vstore_masked(E, s, in); break;
  case FK_MOV: ok = fast_mov(E, s, in); break;
  case FK_NONE: break;
  default: __builtin_unreachable(); /* engine_decode.c writes only FastKinds: no bounds test before the jump */
  }
  return ok ? pc + 1 : -1;
}

/* Executes s's instruction at pc: X_OK (advance), X_BLOCKED (retry later),
 * X_BLOCKED + 1 (pc already set by a jump), X_FAULT.  issue runs the
 * specialised handler first (run_fast), this when it declines. */
static inline __attribute__((always_inline)) int execute_general(Eng *E, Sc *s, const Instr *in);

/* The general handlers, inline in issue_general (out of line itself, so
 * that the specialised ones keep the dispatch's registers); the switch is
 * out of line too. */
static __attribute__((noinline)) int execute_switch(Eng *E, Sc *s, const Instr *in);
static inline __attribute__((always_inline)) int execute_general(Eng *E, Sc *s, const Instr *in) {
  /* the handlers out of line, taken ahead of the switch, so
   * that they skip the frame the handlers inlined in it need */
  Opcode op = in->op;
  if (op == I_VLOAD_IDX || op == I_VSTORE_IDX) return x_indexed(E, s, in);
  if (op == I_ENQUEUE_DMA || op == I_ENQUEUE_INDIRECT_DMA) return x_dma(E, s, in);
  if (op == I_WAIT_DMA || op == I_WAIT_INDIRECT_DMA) return x_wait(E, s, in);
  return execute_switch(E, s, in);
}

static int execute_switch(Eng *E, Sc *s, const Instr *in) {
  switch (in->op) {
  case I_CONST: case I_COORD: case I_IOTA: case I_CAST: case I_BROADCAST:
  case I_FROM_ELEMENTS: case I_EXTRACT: case I_MOV: return x_misc_value(E, s, in) ? X_OK : X_FAULT;
  case I_BINARY: return x_binary(E, s, in) ? X_OK : X_FAULT;
  case I_UNARY: return x_unary(E, s, in) ? X_OK : X_FAULT;
  case I_SELECT: case I_MINMAX: return x_select(E, s, in) ? X_OK : X_FAULT;
  case I_SCAN: return eng_scan(E, s, in) ? X_OK : X_FAULT;
  case I_SORT: return eng_sort(E, s, in) ? X_OK : X_FAULT;
  case I_SCAN_COUNT: return eng_scan_count(E, s, in) ? X_OK : X_FAULT;
  case I_PACK: return eng_pack(E, s, in) ? X_OK : X_FAULT;
  case I_UNPACK: return eng_unpack(E, s, in) ? X_OK : X_FAULT;
  case I_ALL_REDUCE: return eng_all_reduce(E, s, in) ? X_OK : X_FAULT;
  case I_LOAD: case I_VLOAD: return x_load(E, s, in) ? X_OK : X_FAULT;
  case I_STORE: case I_VSTORE: return x_store(E, s, in) ? X_OK : X_FAULT;
  case I_VLOAD_IDX: case I_VSTORE_IDX: return x_indexed(E, s, in); /* these three: taken ahead of the switch */
  case I_ENQUEUE_DMA: case I_ENQUEUE_INDIRECT_DMA: return x_dma(E, s, in);
  case I_WAIT_DMA: case I_WAIT_INDIRECT_DMA: return x_wait(E, s, in);
  case I_SEM_SIGNAL: case I_SEM_WAIT: return x_sem(E, s, in);
  case I_BARRIER: return x_barrier(E, s);
  case I_FETCH_AND_ADD: return x_fetch_and_add(E, s, in);
  case I_FOR: case I_ENDFOR: case I_BRANCH_IF_FALSE: case I_JUMP: return x_control(E, s, in);
  case I_EXPECT: case I_EXPECT_VIEW: return x_expect(E, s, in);
  case I_DYN_GATHER: case I_EXP: case I_ABSF: case I_ABSI: case I_SHAPE_CAST: case I_BITCAST:
  case I_CONCAT: case I_SLICE: return eng_x_valops(E, s, in) ? X_OK : X_FAULT;
  case I_LOG: case I_LOG_BUFFER: return x_log(E, s, in);
  case I_ASSERT: return x_assert(E, s, in);
  case I_COUNT: break;
  }
  return X_FAULT;
}

/* ---- the scheduler --------------------------------------------------------- */
/* The cycle every source of the instruction at pc is available: the source
 * registers of its form (isa.h: A B C M, and the run N) and the registers
 * of its views, listed once by engine_decode.c. */
static uint64_t operands_ready(const Eng *E, const Sc *s, int pc) {
  uint64_t t = s->t;
  for (int i = E->src_at[pc], end = E->src_at[pc + 1]; i < end; i++) {
    uint64_t r = s->ready[E->srcs[i]];
    if (r > t) t = r;
  }
  return t;
}

static BlockKind block_kind(Opcode op) {
  return op == I_BARRIER ? BLOCK_BARRIER : op == I_SEM_WAIT ? BLOCK_SEM : BLOCK_DMA;
}

/* n cycles of s blocked at pc, in its category and its line's. */
static void charge_stall(Eng *E, Sc *s, uint64_t n) {
  SubStats *st = &E->r->stats.sub[s->idx];
  ProfLine none, *pl = E->prof ? &E->prof[s->pc] : &none;
  if (s->blocked == BLOCK_BARRIER) st->stall_barrier += n, pl->stall_barrier += n;
  else if (s->blocked == BLOCK_SEM) st->stall_sem += n, pl->stall_sem += n;
  else st->stall_dma += n, pl->stall_dma += n;
}

/* The wait of the instruction at s's pc ended at t1: one trace slice. */
static void wait_done(Eng *E, Sc *s, uint64_t t1) {
  s->waiting = false;
  if (!E->trace || t1 <= s->wait_start) return;
  TraceEvent te;
  memset(&te, 0, sizeof te);
  te.kind = s->wait_kind == BLOCK_BARRIER ? TE_BARRIER : TE_STALL;
  te.t0 = s->wait_start, te.t1 = t1, te.core = s->core, te.subcore = s->subcore, te.dma = -1;
  te.op = s->wait_kind == BLOCK_BARRIER ? "barrier" : s->wait_kind == BLOCK_SEM ? "semaphore" : "dma";
  te.line = E->c->code[s->pc].loc.line, te.col = E->c->code[s->pc].loc.col; /* the instruction that waited */
  trace_event(E->trace, &te);
}

static void unblock_all(Eng *E, uint64_t t) {
  for (int i = 0; i < E->nsub; i++) {
    Sc *s = &E->sc[i];
    if (!s->blocked) continue;
    if (s->t < t) s->t = t;
    charge_stall(E, s, s->t - s->block_start);
    s->blocked = BLOCK_NONE;
    E->woken[E->nwoken++] = i; /* joins the runnable ring once the running subcore has settled */
  }
}

/* Lands every transfer finishing by cycle t. */
static void dma_events(Eng *E, uint64_t t) {
  int tags[64], n;
  bool any = false;
  do {
    n = dma_advance(E->dm, t, tags, 64);
    for (int i = 0; i < n; i++) dma_complete(E, tags[i], t);
    any |= n > 0;
  } while (n == 64);
  if (E->trace) {
    trace_counter(E, TE_INFLIGHT, -1, 0, "hbm", (int64_t)dma_inflight_bytes(E->dm, 0), t);
    for (int c = 0; c < E->p->mesh_cores; c++) /* each SparseCore's own port */
      trace_counter(E, TE_INFLIGHT, c, 0, "vmem_shared", (int64_t)dma_inflight_shared(E->dm, c), t);
  }
  if (any) unblock_all(E, t);
}

static void engine_deadlock(Eng *E) {
  char buf[700] = "";
  size_t len = 0;
  Sc *first = NULL;
  for (int i = 0; i < E->nsub && len < sizeof buf - 100; i++) {
    Sc *s = &E->sc[i];
    if (s->done) continue;
    const Instr *in = &E->c->code[s->pc];
    if (!first) first = s;
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%ssubcore %d.%d waits at line %d (%s)", len ? "; " : "", s->core,
                            s->subcore, in->loc.line, isa_mnemonic(in->op));
  }
  const Instr *in = &E->c->code[first->pc];
  run_fault(E->r, FAULT_DEADLOCK, in->loc, first->core, first->subcore, in->op_id, "no subcore can make progress: %s", buf);
}

/* Where a semaphore left non-zero was fed: a DMA never waited, else the
 * last signal, else the ref. */
static Loc unconsumed(const Eng *E, const Region *g, int64_t off, Loc dflt) {
  const DmaRec *first = NULL; /* the earliest DMA on it still unretired (only those keep a record) */
  for (int i = 0; i < E->ndmas; i++) {
    const DmaRec *d = &E->dmas[i];
    if (d->live && d->sem == g && d->sem_off == off && (!first || d->id < first->id)) first = d;
  }
  if (first) return (Loc){E->p->file, first->line, first->col};
  for (int i = 0; i < E->nsemslots; i++)
    if (E->semslots[i].g == g && E->semslots[i].off == off && E->semslots[i].signal.line) return E->semslots[i].signal;
  const DmaQueue *last = NULL; /* a wait consumed less than the DMA signalled: the last DMA on it */
  for (int i = 0; i < E->capdq; i++) {
    const DmaQueue *q = &E->dq[i];
    if (q->g == g && q->off == off && (!last || q->last_id > last->last_id)) last = q;
  }
  return last ? (Loc){E->p->file, last->last_line, last->last_col} : dflt;
}

static void engine_semaphores(Eng *E) {
  for (int r = 0; r < E->p->nrefs && !E->r->faulted; r++) {
    const Ref *ref = E->p->refs[r];
    if (ref->space != SP_SEMAPHORE) continue;
    for (int i = 0; i < mem_instance_count(&E->r->mem, r); i++) {
      Region *g = mem_instance(&E->r->mem, r, i);
      for (int64_t k = 0; k < ref->nelems && !E->r->faulted; k++)
        if (sem_read(g, k * 4))
          run_fault(E->r, FAULT_SEMAPHORE, unconsumed(E, g, k * 4, ref->loc), g->core, g->subcore, -1,
                    "semaphore '%s@%d.%d' element %lld holds %lld at the end of the %s (a DMA or signal was never waited)",
                    ref->name, g->core, g->subcore, (long long)k, (long long)sem_read(g, k * 4), E->sem_scope);
    }
  }
}

/* A run limit: where every subcore stands, so a hang can be located. */
static void limit_fault(Eng *E, Sc *s, const Instr *in, const char *what, uint64_t n) {
  char buf[700];
  size_t len = (size_t)snprintf(buf, sizeof buf, what, (unsigned long long)n);
  for (int i = 0; i < E->nsub && len < sizeof buf - 80; i++) {
    const Sc *o = &E->sc[i];
    const Instr *at = o->pc < o->end ? &E->c->code[o->pc] : NULL;
    if (at) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s subcore %d.%d at line %d", i ? ";" : ":", o->core, o->subcore, at->loc.line);
    else len += (size_t)snprintf(buf + len, sizeof buf - len, "%s subcore %d.%d done", i ? ";" : ":", o->core, o->subcore);
  }
  run_fault(E->r, FAULT_LIMIT, in->loc, s->core, s->subcore, in->op_id, "%s", buf);
}


/* s blocked at its instruction: it retries when released. */
static void issue_blocked(Sc *s, const Instr *in) {
  s->blocked = block_kind(in->op);
  s->block_start = s->t;
  if (!s->waiting) s->waiting = true, s->wait_kind = s->blocked, s->wait_start = s->t;
}

#define MAX_OPS_MSG "the run executed more than %llu operations (--max-ops)"
/* The run limits, checked after every instruction (in this order: the
 * first that fails is the fault). */
static inline __attribute__((always_inline)) void issue_limits(Eng *E, Sc *s, const Instr *in, uint8_t f) {
  if ((f & OPF_START) && ++E->r->ops > E->max_ops) limit_fault(E, s, in, MAX_OPS_MSG, E->max_ops);
  if (s->t > E->cycle_cap) limit_fault(E, s, in, "the run passed %llu cycles (--max-cycles)", E->max_cycles);
  if ((f & OPF_LOGS) && E->r->log_bytes > E->max_log && !E->r->faulted) limit_fault(E, s, in, RUN_LOG_LIMIT_MSG, E->max_log >> 20);
  /* the shadow grows only in instructions that reach the detector (a DMA's landing does not) */
  if ((f & OPF_RACE) && race_over(E->rd) && !E->r->faulted) limit_fault(E, s, in, RUN_SHADOW_LIMIT_MSG, RUN_MAX_SHADOW_MB);
}


/* What issue tells the scheduler: the run stops; s may run on; s's turn
 * ends (it blocked, or it released blocked subcores). */
enum { ISSUE_STOP, ISSUE_ON, ISSUE_YIELD };

/* The bookkeeping of every instruction that ran, at its end t1: the
 * profile and --track-origins (one test when both are off), its result's
 * ready cycle, the subcore's cycle and statistics. */
static inline __attribute__((always_inline)) void issue_account(Eng *E, Sc *s, const Instr *in, int pc, uint8_t f, uint64_t cost, uint64_t t1) {
  if (E->watch) { /* the profile (a stats file asks for it too) and --track-origins */
    E->acct[pc].instructions++, E->acct[pc].issue += cost;
    if (E->origin) eng_origin_note(E, s, in);
  }
  if (f & OPF_READY) s->ready[in->d] = t1;
  s->t = t1;
  s->busy += cost;
  s->ninstr++;
}

/* issue's general handler (its specialised one declined or there is none)
 * and what may follow it: a fault, a block, a wait's end, released
 * subcores; out of line, so that the specialised path keeps its registers. */
static __attribute__((noinline)) int issue_general(Eng *E, Sc *s, const Instr *in, int pc, uint8_t f) {
  s->cost = 0;
  int st = execute_general(E, s, in);
  if (f & OPF_RACE) race_done(E->rd);
  if (st == X_FAULT) return ISSUE_STOP;
  if (st == X_BLOCKED) return issue_blocked(s, in), ISSUE_YIELD;
  if (s->waiting) wait_done(E, s, s->t); /* before pc moves: nothing that blocks jumps (nor runs specialised) */
  if (!s->cost) s->cost = in->d >= 0 && s->written[in->d] ? value_cost(E, &s->reg[in->d]) : (uint64_t)cp(E)->scalar_issue_cycles;
  uint64_t cost = s->cost, t1 = s->t + cost;
  issue_account(E, s, in, pc, f, cost, t1);
  if (st == X_OK) s->pc = pc + 1;
  if (f & OPF_WAKE) unblock_all(E, t1);
  if ((f & (OPF_START | OPF_LOGS | OPF_RACE)) || t1 > E->cycle_cap) issue_limits(E, s, in, f);
  if (E->r->faulted) return ISSUE_STOP; /* a general handler or a limit faulted */
  return f & OPF_WAKE ? ISSUE_YIELD : ISSUE_ON;
}

/* Issues s's next instruction at its cycle.  *pcp and *tp are s->pc and
 * s->t as engine_schedule keeps them in registers across a turn: s->pc
 * and s->t are stored for the handlers but not reloaded (a reload waits
 * for the store of the instruction before, a chain through memory). */
static int issue(Eng *E, Sc *s, int *pcp, uint64_t *tp) {
  int pc = *pcp;
  const Instr *in = &E->code[pc];
  uint8_t k = E->fast[pc], f = E->op_start[pc];
  uint64_t t = *tp;
  if (f & OPF_SRCS) { /* only a load's result is ready after its instruction ends */
    uint64_t tr = operands_ready(E, s, pc);
    if (tr > t) {
      s->stall_load += tr - t;
      if (E->prof) E->prof[pc].stall_load += tr - t;
      s->t = t = tr;
    }
  }
  E->cur = pc;
  int next = run_fast(E, s, in, k, pc); /* FK_NONE declines */
  if (next < 0) {
    int st = issue_general(E, s, in, pc, f);
    *pcp = s->pc, *tp = s->t;
    return st;
  }
  /* A specialised handler that ran set the cost, never blocks, never
   * faults (it declines instead) and is no signal nor barrier (OPF_WAKE). */
  uint64_t cost = s->cost, t1 = t + cost;
  issue_account(E, s, in, pc, f, cost, t1);
  *tp = t1;
  s->pc = *pcp = next;
  /* one test for the common instruction: it meets no limit (only these
   * flags count, log or grow the shadow); an operation's first instruction
   * that neither logs nor races counts it, and can meet --max-ops only */
  if (!(f & (OPF_START | OPF_LOGS | OPF_RACE)) && t1 <= E->cycle_cap) return ISSUE_ON;
  if (!(f & (OPF_LOGS | OPF_RACE)) && t1 <= E->cycle_cap) {
    if (!(f & OPF_START) || ++E->r->ops <= E->max_ops) return ISSUE_ON;
    limit_fault(E, s, in, MAX_OPS_MSG, E->max_ops);
    return ISSUE_STOP;
  }
  if (f & OPF_RACE) race_done(E->rd);
  issue_limits(E, s, in, f);
  return E->r->faulted ? ISSUE_STOP : ISSUE_ON;
}

/* Always advances the earliest thing: a subcore's next instruction or a DMA
 * landing; ties go to the DMA, then to the lowest subcore, so every run of
 * a program is identical. */
static void engine_schedule(Eng *E) {
  eng_ring_fill(E);
  for (;;) {
    uint64_t second;
    Sc *s = eng_ring_top(E, &second);
    uint64_t te = dma_next_event(E->dm);
    if (!s && te == DMA_NEVER) {
      for (int i = 0; i < E->nsub; i++)
        if (!E->sc[i].done) return engine_deadlock(E);
      return;
    }
    if (!s || te <= s->t) {
      dma_events(E, te);
      eng_ring_settle(E, false);
      continue;
    }
    /* s may run on alone while it stays strictly earliest */
    uint64_t limit = te < second ? te : second;
    bool plain = false; /* its turn ended at the limit: still runnable, nobody released */
    int pc = s->pc, end = s->end;
    uint64_t t = s->t;
    for (;;) {
      if (pc >= end) {
        s->done = true;
        E->r->stats.sub[s->idx].end = t;
        break;
      }
      int st = issue(E, s, &pc, &t);
      if (st == ISSUE_STOP) return;
      if (st == ISSUE_YIELD) break; /* blocked, or others released */
      if (t >= limit) {
        plain = true;
        break;
      }
    }
    if (plain) eng_ring_requeue(E, s);
    else eng_ring_ran(E, s);
  }
}

/* The run stopped (it ended, faulted or deadlocked): a subcore still
 * blocked stalls until the cycle the last subcore reached, and every
 * subcore ends where it stands, so a stopped run's figures add up too. */
static void engine_stop(Eng *E) {
  uint64_t stop = 0;
  for (int i = 0; i < E->nsub; i++) {
    const Sc *s = &E->sc[i];
    uint64_t t = s->done ? E->r->stats.sub[i].end : s->t;
    if (t > stop) stop = t;
  }
  for (int i = 0; i < E->nsub; i++) {
    Sc *s = &E->sc[i];
    s->stats->busy += s->busy, s->stats->instructions += s->ninstr, s->stats->stall_load += s->stall_load;
    if (s->done) continue;
    if (s->blocked) charge_stall(E, s, stop - s->t), s->t = stop, s->blocked = BLOCK_NONE;
    if (s->waiting) wait_done(E, s, s->t);
    E->r->stats.sub[i].end = s->t;
  }
  const Fault *f = &E->r->fault;
  if (E->trace) trace_stop(E->trace, stop, E->r->faulted ? fault_name(f->kind) : NULL, f->details, f->loc.line, f->loc.col);
}

static int prof_by_line(const void *a, const void *b) {
  const ProfLine *x = a, *y = b;
  return (x->line > y->line) - (x->line < y->line);
}

static uint64_t prof_cost(const ProfLine *l) { return l->issue + l->stall_load + l->stall_dma + l->stall_sem + l->stall_barrier; }

static int prof_by_cost(const void *a, const void *b) {
  const ProfLine *x = a, *y = b;
  uint64_t cx = prof_cost(x), cy = prof_cost(y);
  return cx != cy ? (cx < cy) - (cx > cy) : prof_by_line(a, b);
}

/* The per-instruction counts summed per program line, most cycles first
 * (lines that never ran are left out); the array becomes Stats.prof. */
static void prof_lines(Eng *E) {
  int n = E->c->n, k = 0;
  ProfLine *p = E->prof;
  for (int i = 0; i < n; i++) p[i].line = E->c->code[i].loc.line;
  qsort(p, (size_t)n, sizeof *p, prof_by_line);
  for (int i = 0; i < n; i++) {
    if (!p[i].instructions && !prof_cost(&p[i])) continue;
    if (k && p[k - 1].line == p[i].line) {
      ProfLine *d = &p[k - 1];
      d->instructions += p[i].instructions, d->issue += p[i].issue, d->stall_load += p[i].stall_load;
      d->stall_dma += p[i].stall_dma, d->stall_sem += p[i].stall_sem, d->stall_barrier += p[i].stall_barrier, d->bytes += p[i].bytes;
    } else {
      p[k++] = p[i];
    }
  }
  qsort(p, (size_t)k, sizeof *p, prof_by_cost);
  E->r->stats.prof = p, E->r->stats.nprof = k;
  E->prof = NULL;
}

/* The instructions whose handlers (x_misc_value, x_binary, x_unary,
 * x_select, x_control) touch no memory. */
static bool regs_only(Opcode op) {
  static const Opcode regs[] = {I_CONST, I_COORD,  I_IOTA,   I_CAST,   I_BROADCAST, I_FROM_ELEMENTS,    I_EXTRACT, I_MOV,
                                I_BINARY, I_UNARY, I_SELECT, I_MINMAX, I_FOR,       I_ENDFOR, I_BRANCH_IF_FALSE, I_JUMP};
  for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
    if (op == regs[i]) return true;
  return false;
}

/* --max-ops counts program operations, as the reference does: an operation
 * is counted when its first instruction in the code runs (a loop's back
 * edge and the rest of its instructions do not count again); an instruction
 * of no operation (a hand-written one without id=) counts as one.  A
 * while's back edge (a cf.br to an earlier instruction) counts too: each
 * iteration is an operation, so an endless while meets the limit. */
static uint8_t *op_starts(const Code *c) {
  int maxid = -1;
  for (int i = 0; i < c->n; i++) maxid = c->code[i].op_id > maxid ? c->code[i].op_id : maxid;
  uint8_t *start = calloc((size_t)(c->n ? c->n : 1), 1), *seen = calloc((size_t)maxid + 1, 1);
  if (!start || !seen) abort();
  for (int i = 0; i < c->n; i++) {
    const Instr *in = &c->code[i];
    int id = in->op_id;
    start[i] = id < 0 || !seen[id] || (in->op == I_JUMP && in->target <= i) ? OPF_START : 0;
    if (is_load(in->op)) start[i] |= OPF_LOAD;
    if (in->op == I_SEM_SIGNAL || in->op == I_BARRIER) start[i] |= OPF_WAKE;
    if (regs_only(in->op)) start[i] |= OPF_REGS;
    if (in->log) start[i] |= OPF_LOGS;
    if (id >= 0) seen[id] = 1;
  }
  free(seen);
  return start;
}

/* Whether any access of the run could meet another thread's: not with one
 * subcore and no DMA (no thread but the subcore's ever starts, so
 * race_lone holds throughout and the detector would record nothing and
 * find nothing: it is not made, and no instruction tests it). */
static bool races_possible(int nsub, const Code *c) {
  if (nsub > 1) return true;
  for (int i = 0; i < c->n; i++)
    if (c->code[i].op == I_ENQUEUE_DMA || c->code[i].op == I_ENQUEUE_INDIRECT_DMA) return true;
  return false;
}

static bool engine_init(Eng *E, const Program *p, const Code *c) {
  RunResult *out = E->r;
  out->logs = calloc((size_t)E->nsub, sizeof *out->logs);
  out->stats.sub = calloc((size_t)E->nsub, sizeof *out->stats.sub);
  out->stats.dma = calloc((size_t)E->nsub, sizeof *out->stats.dma);
  E->sc = calloc((size_t)E->nsub, sizeof *E->sc);
  for (int t = 0; t < DT_COUNT; t++) E->dsize[t] = (uint8_t)dtype_size((Dtype)t);
  E->group_bytes = 4 * (int64_t)(p->params.num_lanes > 0 ? p->params.num_lanes : 1);
  const ChipParams *q = &p->params;
  double clock = q->clock_hz > 0 ? (double)q->clock_hz : 1e9;
  E->dm = dma_new(E->nsub, (int)p->mesh_cores, (double)q->dma_bytes_per_cycle, (double)q->hbm_bytes_per_second / clock,
                  (double)q->vmem_shared_bytes_per_cycle, (uint64_t)q->dma_setup_cycles);
  E->rd = E->no_races || !races_possible(E->nsub, c) ? NULL : race_new(E->nsub, RUN_MAX_SHADOW_MB << 20);
  E->cache = calloc((size_t)(c->nviews ? c->nviews : 1), sizeof *E->cache);
  if (E->profile && !(E->prof = calloc((size_t)(c->n ? c->n : 1), sizeof *E->prof))) return false;
  if (E->track_origins && !eng_origin_init(E)) return false;
  E->watch = E->prof || E->origin;
  E->acct = E->prof;
  if (E->watch && !E->acct && !(E->acct = calloc((size_t)(c->n ? c->n : 1), sizeof *E->acct))) return false;
  E->cache_state = calloc((size_t)(c->nviews ? c->nviews : 1), 1);
  E->rows_form = calloc((size_t)(c->nviews ? c->nviews : 1), 1);
  E->idx_form = calloc((size_t)(c->n ? c->n : 1), 1);
  E->banks = q->vmem_banks > 0 && q->vmem_banks <= 256 ? q->vmem_banks : 1;
  E->bank_bytes = q->vmem_bank_bytes > 0 ? q->vmem_bank_bytes : 4;
  E->bank_shift = log2_exact(E->banks) >= 0 ? log2_exact(E->bank_bytes) : -1;
  if (!eng_decode(E) || !eng_ring_init(E)) return false;
  for (int i = 0; i < c->n; i++) { /* the flags that depend on the run's checks and on the decoding */
    if (E->rd && !(E->op_start[i] & OPF_REGS)) E->op_start[i] |= OPF_RACE;
    if (E->no_log && !E->r->sink) E->op_start[i] &= (uint8_t)~OPF_LOGS; /* nothing logs nor holds log bytes: no log limit to meet */
    if (E->src_at[i + 1] > E->src_at[i]) E->op_start[i] |= OPF_SRCS;
  }
  E->nwarned = p->nops; /* operation ids are 0 .. nops - 1 (a user's lowering may say otherwise: not warned) */
  E->warned = calloc((size_t)(E->nwarned ? E->nwarned : 1), 1);
  bool ok = out->logs && out->stats.sub && out->stats.dma && E->sc && E->dm && (E->rd || E->no_races || !races_possible(E->nsub, c)) && E->cache && E->cache_state && E->rows_form && E->idx_form && E->warned &&
            run_mem_init(p, &out->mem);
  size_t nr = (size_t)(c->nregs ? c->nregs : 1);
  for (int i = 0; ok && i < E->nsub; i++) {
    Sc *s = &E->sc[i];
    s->idx = i;
    s->stats = &out->stats.sub[i];
    s->core = i / (int)p->mesh_subcores;
    s->subcore = i % (int)p->mesh_subcores;
    bool scalar = run_is_scalar_sub(p, s->subcore); /* an mpmd kernel: the scalar subcore runs the second part */
    s->pc = scalar ? c->split : 0;
    s->end = c->split && !scalar ? c->split : c->n;
    s->sync_tag = -1;
    s->reg = calloc(nr, sizeof(Value));
    s->written = calloc(nr, 1);
    s->ready = calloc(nr, sizeof(uint64_t));
    s->rg = calloc((size_t)(p->nrefs ? p->nrefs : 1), sizeof *s->rg);
    ok = s->reg && s->written && s->ready && s->rg;
  }
  return ok;
}

static void engine_stats(Eng *E) {
  RunResult *out = E->r;
  for (int i = 0; i < E->nsub; i++) {
    const DmaEngineStats *d = dma_stats(E->dm, i);
    DmaStats *o = &out->stats.dma[i];
    o->transfers = d->transfers, o->bytes = d->bytes, o->max_queue = d->max_queue, o->busy_cycles = d->busy_cycles;
    if (out->stats.sub[i].end > out->cycles) out->cycles = out->stats.sub[i].end;
  }
  for (int i = 0; i < E->nsub; i++) {
    const DmaEngineStats *d = dma_stats(E->dm, i);
    DmaStats *o = &out->stats.dma[i];
    o->occupancy_avg = out->cycles ? d->occupancy_integral / (double)out->cycles : 0;
    o->setup_cycles = d->setup_cycles, o->queue_cycles = d->queue_cycles, o->transfer_cycles = d->transfer_cycles;
    out->stats.sub[i].finished = out->cycles - out->stats.sub[i].end;
  }
  if (E->prof) prof_lines(E), E->acct = NULL; /* handed over to Stats.prof */
  out->stats.cycles = out->cycles;
  out->stats.nsub = E->nsub;
}

/* Each named register's last value, for --json "values". */
static void keep_values(Eng *E) {
  if (!E->sc || !E->c->reg_name) return;
  int n = 0;
  for (int i = 0; i < E->nsub; i++)
    for (int r = 0; r < E->c->nregs; r++) n += E->c->reg_name[r] && E->sc[i].written && E->sc[i].written[r];
  E->r->values = calloc((size_t)(n ? n : 1), sizeof *E->r->values);
  if (!E->r->values) return;
  for (int i = 0; i < E->nsub; i++)
    for (int r = 0; r < E->c->nregs; r++) {
      if (!E->c->reg_name[r] || !E->sc[i].written || !E->sc[i].written[r]) continue;
      NamedValue *nv = &E->r->values[E->r->nvalues++];
      nv->name = E->c->reg_name[r];
      nv->core = E->sc[i].core;
      nv->subcore = E->sc[i].subcore;
      val_copy(&nv->val, &E->sc[i].reg[r]);
    }
}

bool engine_run(const Program *p, const Code *c, const RunLimits *lim, RunResult *out) {
  memset(out, 0, sizeof *out);
  clock_t host0 = clock();
  Eng E;
  memset(&E, 0, sizeof E);
  E.p = p, E.c = c, E.code = c->code, E.r = out;
  E.free_dma = -1;
  E.nsub = (int)(p->mesh_cores * p->mesh_subcores);
  E.max_ops = lim && lim->max_ops ? lim->max_ops : RUN_DEFAULT_MAX_OPS;
  E.op_start = op_starts(c);
  E.max_cycles = lim ? lim->max_cycles : 0;
  E.cycle_cap = E.max_cycles ? E.max_cycles : UINT64_MAX;
  E.max_log = run_max_log_bytes(lim);
  E.trace = lim ? lim->trace : NULL;
  E.no_log = lim && lim->no_log;
  E.no_races = lim && lim->no_races;
  E.strict_races = lim && lim->strict_races;
  E.profile = lim && lim->profile;
  E.track_origins = lim && lim->track_origins;
  out->nsub = E.nsub;
  if (lim && lim->stream) stream_attach(lim->stream, STREAM_ENG, out);
  E.sem_scope = run_sem_scope(lim);
  if (!engine_init(&E, p, c)) run_fault(out, FAULT_LIMIT, (Loc){p->file, 0, 0}, 0, 0, -1, "out of memory for the program's refs or registers");
  else if (lim && lim->carry && !run_carry(p, lim->carry, lim, out)) {
  } else {
    for (int i = 0; lim && lim->t0 && i < E.nsub; i++) E.sc[i].t = lim->t0; /* after the previous kernels */
    engine_schedule(&E);
    engine_stop(&E);
    if (!out->faulted && !(lim && lim->defer_sem_check)) engine_semaphores(&E);
    if (!out->faulted) eng_undefined_outputs(&E);
    engine_stats(&E);
  }
  eng_race_benign_warn(&E);
  keep_values(&E);
  for (int i = 0; i < E.nsub && E.sc; i++) {
    for (int r = 0; r < c->nregs && E.sc[i].reg; r++) val_free(&E.sc[i].reg[r]);
    free(E.sc[i].reg);
    free(E.sc[i].written);
    free(E.sc[i].ready);
    free(E.sc[i].rg);
    val_free(&E.sc[i].tmp);
    val_free(&E.sc[i].tmp2);
  }
  free(E.sc);
  if (E.acct != E.prof) free(E.acct);
  free(E.dmas);
  free(E.dq);
  free(E.semslots);
  free(E.cache);
  free(E.cache_state);
  free(E.rows_form);
  free(E.idx_form);
  eng_decode_free(&E);
  eng_ring_free(&E);
  free(E.warned);
  free(E.hits);
  free(E.spans);
  free(E.prof);
  free(E.origin);
  free(E.op_start);
  dma_free(E.dm);
  race_free(E.rd);
  out->stats.host_seconds = (double)(clock() - host0) / CLOCKS_PER_SEC;
  return !out->faulted;
}
