/* sim/run/engine_origin.c -- --track-origins: the load an undefined value
 * came from, named when that value faults (`uninit`), as valgrind's
 * --track-origins names where an uninitialised value was created.
 *
 * Off by default, and then it costs one test of E->watch (the profile or the origins) per instruction.
 * On, every (subcore, register) slot holds the instruction that last left
 * undefined lanes in it: a load (vector_load, load_gather, a scalar load)
 * that read undefined bytes is an origin itself; any other instruction
 * inherits the origin of its first source register that holds undefined
 * lanes (arithmetic, select, casts and moves carry undefinedness lane by
 * lane, SPEC §10.1).  A value read by the faulting instruction straight
 * from memory (an expect on a ref, DMA offsets from an index ref) has no
 * load before it: no origin is named.  Undefined values that decide
 * something (SPEC §10.1) reach eng_origin_fault from every uninit fault:
 * a lane of a mask, of gather/scatter indices or of DMA offsets, an
 * index, bound or count, a condition, an expect. */
#include "engine_priv.h"

#include <stdio.h>
#include <stdlib.h>

static bool has_undef(const Sc *s, int r) {
  if (r < 0 || !s->written[r]) return false;
  const Value *v = &s->reg[r];
  for (int64_t i = 0; i < v->n; i++)
    if (!v->def[i]) return true;
  return false;
}

static int *slot(Eng *E, const Sc *s, int r) { return &E->origin[(size_t)s->idx * (size_t)E->c->nregs + (size_t)r]; }

bool eng_origin_init(Eng *E) {
  size_t n = (size_t)E->nsub * (size_t)(E->c->nregs ? E->c->nregs : 1);
  E->origin = calloc(n, sizeof *E->origin);
  return E->origin != NULL;
}

/* The first register among in's sources holding undefined lanes and an origin. */
static int source_origin(Eng *E, const Sc *s, const Instr *in) {
  int src[] = {in->a, in->b, in->c, in->mask};
  int n = in->op == I_FROM_ELEMENTS ? (int)in->imm : 1;
  for (int k = 0; k < n && in->a >= 0; k++) /* from_elements reads a, a + 1, ... */
    if (has_undef(s, in->a + k) && *slot(E, s, in->a + k)) return *slot(E, s, in->a + k);
  for (size_t k = 1; k < sizeof src / sizeof *src; k++)
    if (has_undef(s, src[k]) && *slot(E, s, src[k])) return *slot(E, s, src[k]);
  return 0;
}

void eng_origin_note(Eng *E, Sc *s, const Instr *in) {
  if (in->d < 0 || in->d >= E->c->nregs) return;
  int o = 0;
  if (has_undef(s, in->d))
    o = in->op == I_LOAD || in->op == I_VLOAD || in->op == I_VLOAD_IDX || in->op == I_FETCH_AND_ADD
            ? (int)(in - E->c->code) + 1
            : source_origin(E, s, in);
  *slot(E, s, in->d) = o;
}

void eng_origin_fault(Eng *E, const Sc *s, const Instr *in, const Value *v) {
  Fault *f = &E->r->fault;
  if (!E->origin || f->kind != FAULT_UNINIT || f->origin.line || f->op != in->op_id || f->core != s->core ||
      f->subcore != s->subcore || !v || v < s->reg || v >= s->reg + E->c->nregs)
    return;
  int o = *slot(E, s, (int)(v - s->reg));
  if (!o) return;
  const Instr *ld = &E->c->code[o - 1];
  f->origin = ld->loc;
  const VDesc *vd = ld->view >= 0 ? &E->c->views[ld->view] : NULL;
  if (vd && vd->ref)
    snprintf(f->origin_what, sizeof f->origin_what, "%s of %s '%s'", isa_mnemonic(ld->op), space_key(vd->ref->space),
             vd->ref->name);
  else
    snprintf(f->origin_what, sizeof f->origin_what, "%s", isa_mnemonic(ld->op));
}
