/* lowering/hoist.c -- copies folded, invariant constants and iotas hoisted.
 *
 * Two rewrites of the correctly lowered code, as MLIR's canonicalizer and
 * loop-invariant code motion leave a Mosaic kernel:
 *
 *   %t = OP ...; ...; %x = sc.mov %t   ->   %x = OP ...; ...
 *     inside an scf.for body, when %t is a temporary written once and read
 *     only by the copy, the two are in one straight run of code (no jump
 *     lands between them, no control instruction lies between them), and
 *     nothing from OP to the copy reads %x (OP included: a masked load
 *     fills its destination while it reads the mask) or writes it between
 *     them: every instruction then sees the values it saw.  Straight-line
 *     code keeps its copies (the timing goldens of load-to-use latency
 *     count one).
 *
 *   scf.for { ...; %t = arith.constant / tpu.iota; ... }
 *     ->   %t = ...; scf.for { ... }
 *     when %t is a temporary written once, by that instruction, and read
 *     only after it inside the loop: its value does not depend on the loop
 *     variable or on anything the loop writes, and neither instruction can
 *     fault.  Each moves before the outermost scf.for around it (its
 *     preheader); a jump to that scf.for now lands on the first hoisted
 *     instruction, so every path into the loop computes them.
 *
 * A `while` body keeps its instructions (its loop is a branch and a jump,
 * not an scf.for pair). */
#include "hoist.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  Code *c;
  const bool *named;
  int *defs, *uses;     /* per register: instructions writing it, reads of it */
  int *first, *last;    /* per register: the first and last instruction reading it */
  bool *gone;           /* per instruction: removed (folded or hoisted) */
  bool *landing;        /* per instruction (and c->n): some jump lands on it */
  int *outer;           /* per instruction: its outermost scf.for, or -1 */
  int want;             /* the register find_read looks for */
  bool hit;             /* find_read saw it */
} H;

typedef void Visit(H *h, int at, int reg);

/* Calls f for every register instruction `at` reads, once per operand. */
static void each_read(H *h, int at, Visit *f) {
  const Code *c = h->c;
  const Instr *in = &c->code[at];
  const int views[4] = {in->view, in->view2, in->view3, in->view4};
  for (const char *p = isa_form(in->op); *p; p++) {
    switch (*p) {
    case 'A': case 'a': if (in->a >= 0) f(h, at, in->a); break;
    case 'B': case 'b': if (in->b >= 0) f(h, at, in->b); break;
    case 'C': case 'c': if (in->c >= 0) f(h, at, in->c); break;
    case 'M': case 'm': if (in->mask >= 0) f(h, at, in->mask); break;
    case 'N': for (int64_t k = 0; k < in->imm; k++) f(h, at, in->a + (int)k); break;
    default: break;
    }
  }
  if (in->op == I_ENDFOR) f(h, at, in->d);
  for (int v = 0; v < 4; v++) {
    if (views[v] < 0) continue;
    const VDesc *vd = &c->views[views[v]];
    for (int k = 0; k < vd->nlev; k++)
      for (int e = 0; e < vd->lev[k].n; e++) {
        if (vd->lev[k].start[e].reg >= 0) f(h, at, vd->lev[k].start[e].reg);
        if (vd->lev[k].size[e].reg >= 0) f(h, at, vd->lev[k].size[e].reg);
      }
  }
}

/* The register instruction `at` writes, or -1. */
static int written(const H *h, int at) {
  const Instr *in = &h->c->code[at];
  return isa_form(in->op)[0] == 'D' ? in->d : -1;
}

static bool is_control(Opcode op) { return op == I_FOR || op == I_ENDFOR || op == I_BRANCH_IF_FALSE || op == I_JUMP; }

static void count_use(H *h, int at, int reg) {
  h->uses[reg]++;
  if (h->first[reg] < 0) h->first[reg] = at;
  h->last[reg] = at;
}

/* Counts, from scratch, every register's writes and reads. */
static void count(H *h) {
  int n = h->c->nregs;
  memset(h->defs, 0, sizeof *h->defs * (size_t)n);
  memset(h->uses, 0, sizeof *h->uses * (size_t)n);
  for (int r = 0; r < n; r++) h->first[r] = h->last[r] = -1;
  for (int i = 0; i < h->c->n; i++) {
    if (h->gone[i]) continue;
    each_read(h, i, count_use);
    if (written(h, i) >= 0) h->defs[written(h, i)]++;
  }
}

/* outer[i]: the outermost scf.for whose body holds instruction i. */
static void find_loops(H *h) {
  const Code *c = h->c;
  for (int i = 0; i < c->n; i++) h->outer[i] = -1;
  for (int f = 0; f < c->n; f++) {
    const Instr *in = &c->code[f];
    if (in->op != I_FOR || in->target < f + 2 || in->target > c->n || c->code[in->target - 1].op != I_ENDFOR) continue;
    for (int i = f + 1; i < in->target - 1; i++)
      if (h->outer[i] < 0) h->outer[i] = f;
  }
}

/* ---- folding copies -------------------------------------------------------- */
static void find_read(H *h, int at, int reg) {
  (void)at;
  if (reg == h->want) h->hit = true;
}

static bool touches(H *h, int at, int reg) {
  h->want = reg, h->hit = false;
  each_read(h, at, find_read);
  return h->hit || written(h, at) == reg;
}

/* The instruction writing temporary t before copy `at` in its straight run
 * of code, with nothing in between touching x; -1 when there is none. */
static int copy_source(H *h, int at, int t, int x) {
  for (int k = at - 1; k >= 0; k--) {
    if (h->landing[k + 1]) return -1;
    if (h->gone[k]) continue;
    if (is_control(h->c->code[k].op)) return -1;
    if (written(h, k) == t) return touches(h, k, x) ? -1 : k; /* an instruction may write d before it reads all */
    if (touches(h, k, x)) return -1;
  }
  return -1;
}

/* Only copies inside scf.for bodies: straight-line code keeps its moves,
 * whose cycles the timing goldens of load-to-use latency count. */
static void fold_copies(H *h) {
  Code *c = h->c;
  for (int i = 0; i < c->n; i++) {
    Instr *mv = &c->code[i];
    int t = mv->a, x = mv->d;
    if (mv->op != I_MOV || h->outer[i] < 0 || t < 0 || x < 0 || t == x || h->named[t] || h->defs[t] != 1 || h->uses[t] != 1)
      continue;
    int src = copy_source(h, i, t, x);
    if (src < 0) continue;
    c->code[src].d = x;
    h->gone[i] = true;
    h->defs[t] = h->uses[t] = 0;
  }
}


/* ---- hoisting --------------------------------------------------------------- */
/* An iota of the lane counts the ISA takes (lowering/asm.c: 0 to 2^24)
 * cannot fault; a body the checker traced without its phase-L rules (a
 * static zero-trip loop) may hold another, which stays where it is. */
static bool cannot_fault(const Instr *in) {
  return in->op == I_CONST || (in->op == I_IOTA && in->imm >= 0 && in->imm <= (1 << 24));
}

static bool hoistable(const H *h, int i) {
  const Instr *in = &h->c->code[i];
  int f = h->outer[i], d = in->d;
  if (h->gone[i] || f < 0 || !cannot_fault(in) || d < 0 || h->named[d] || h->defs[d] != 1) return false;
  return h->uses[d] == 0 || (h->first[d] > i && h->last[d] < h->c->code[f].target);
}

/* Rebuilds the code: each hoisted instruction just before its outermost
 * scf.for, the rest in order; old targets map to the new places.  A
 * hoisted instruction keeps its line but joins the loop's operation, so
 * that the operation it came from still starts inside the body and
 * --max-ops counts it once per iteration (engine.c op_starts). */
static void rebuild(H *h, const bool *hoist) {
  Code *c = h->c;
  Instr *out = malloc(sizeof *out * (size_t)(c->n ? c->n : 1));
  int *at = malloc(sizeof *at * ((size_t)c->n + 1));
  if (!out || !at) abort();
  int n = 0;
  for (int i = 0; i < c->n; i++) {
    at[i] = -1;
    if (c->code[i].op == I_FOR && h->outer[i] < 0) {
      at[i] = n;
      for (int k = i + 1; k < c->code[i].target; k++)
        if (hoist[k]) {
          out[n] = c->code[k];
          out[n++].op_id = c->code[i].op_id; /* the loop's: run once, as it is entered */
        }
    }
    if (h->gone[i] || hoist[i]) continue;
    if (at[i] < 0) at[i] = n;
    out[n++] = c->code[i];
  }
  at[c->n] = n;
  for (int i = c->n - 1; i >= 0; i--)
    if (at[i] < 0) at[i] = at[i + 1]; /* a removed instruction's place: the next kept one */
  for (int i = 0; i < n; i++)
    if (strchr(isa_form(out[i].op), 'J')) out[i].target = at[out[i].target];
  free(c->code);
  c->code = out, c->n = n, c->cap = c->n ? c->n : 1;
  free(at);
}

static void hoist_loops(H *h) {
  Code *c = h->c;
  bool *hoist = calloc((size_t)c->n + 1, 1);
  if (!hoist) abort();
  count(h);
  for (int i = 0; i < c->n; i++) hoist[i] = hoistable(h, i);
  rebuild(h, hoist);
  free(hoist);
}

void hoist_code(Code *c, const bool *named) {
  if (!c->n) return;
  size_t n = (size_t)c->n + 1, r = (size_t)c->nregs + 1;
  H h = {c, named, calloc(r, sizeof(int)), calloc(r, sizeof(int)), calloc(r, sizeof(int)), calloc(r, sizeof(int)),
         calloc(n, 1), calloc(n, 1), calloc(n, sizeof(int)), -1, false};
  if (!h.defs || !h.uses || !h.first || !h.last || !h.gone || !h.landing || !h.outer) abort();
  for (int i = 0; i < c->n; i++)
    if (strchr(isa_form(c->code[i].op), 'J') && c->code[i].target >= 0 && c->code[i].target <= c->n) h.landing[c->code[i].target] = true;
  find_loops(&h);
  count(&h);
  fold_copies(&h);
  hoist_loops(&h);
  free(h.defs), free(h.uses), free(h.first), free(h.last), free(h.gone), free(h.landing), free(h.outer);
}
