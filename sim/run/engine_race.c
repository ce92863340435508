/* sim/run/engine_race.c -- the engine's side of race detection
 * (memory/race.h): accesses opened with their byte spans, reports turned
 * into faults or benign-race warnings, semaphores as race objects; and the
 * warnings a run gives at its end (undefined HBM outputs). */
#include "engine_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- race detection (memory/race.h) ------------------------------------- */

/* A DMA side covering elements [e0, e0 + n) of ev (one indirect row). */
uint32_t eng_race_open_rows(Eng *E, Sc *s, const Instr *in, bool write, bool atomic, int dma, const EV *ev, int64_t e0, int64_t n) {
  if (!E->rd) return 0;
  RaceAccess a = {in->op_id, in->loc.line, in->loc.col, s->core, s->subcore, s->t, write, atomic, dma, 0, 0};
  int64_t es = dtype_size(ev->dt[ev->top]), blk = ev->affine ? eng_dense_block(ev) : 0;
  if (ev->affine && n > 0 && blk > 0 && e0 % blk + n <= blk) {
    a.span_lo = eng_aff_off(ev, e0);
    a.span_hi = a.span_lo + n * es;
  }
  return race_begin(E->rd, &a, s->idx);
}

/* ev: the view the access covers (its byte span when it is one run), or NULL. */
uint32_t eng_race_open(Eng *E, Sc *s, const Instr *in, bool write, bool atomic, int dma, const EV *ev) {
  if (!E->rd || (dma < 0 && race_lone(E->rd))) return 0; /* no record to describe */
  RaceAccess a = {in->op_id, in->loc.line, in->loc.col, s->core, s->subcore, s->t, write, atomic, dma, 0, 0};
  if (ev && ev->affine && ev->n > 0 && eng_dense_block(ev) >= ev->n) {
    a.span_lo = ev->base;
    a.span_hi = ev->base + ev->n * dtype_size(ev->dt[ev->top]);
  }
  return race_begin(E->rd, &a, s->idx);
}

static void describe(const RaceAccess *a, char *buf, size_t n) {
  if (a->dma >= 0)
    snprintf(buf, n, "the %s by the DMA that subcore %d.%d started at line %d (cycle %llu)", a->write ? "write" : "read", a->core,
             a->subcore, a->line, (unsigned long long)a->cycle);
  else
    snprintf(buf, n, "the %s by subcore %d.%d at line %d (cycle %llu)", a->write ? "write" : "read", a->core, a->subcore, a->line,
             (unsigned long long)a->cycle);
}

/* The race report's detail, the same for a fault and a benign race. */
static void race_text(Eng *E, const RaceReport *rep, char *buf, size_t n) {
  char a[200], b[200], name[160];
  describe(&rep->first, a, sizeof a);
  describe(&rep->second, b, sizeof b);
  const Ref *ref = program_ref(E->p, rep->region->name);
  run_instance_name(ref, rep->region, name, sizeof name);
  if (dtype_is_subbyte(ref->dtype)) { /* one element a byte in the simulator: name the elements, not its bytes */
    snprintf(buf, n, "%s of %s elements [%lld, %lld) of %s '%s' races with %s: no wait, barrier or semaphore orders them", b,
             dtype_name(ref->dtype), (long long)rep->lo, (long long)rep->hi, space_key(ref->space), name, a);
    return;
  }
  snprintf(buf, n, "%s of bytes [%lld, %lld) of %s '%s' races with %s: no wait, barrier or semaphore orders them", b,
           (long long)rep->lo, (long long)rep->hi, space_key(ref->space), name, a);
}

static bool race_fault(Eng *E, const RaceReport *rep) {
  char text[700];
  race_text(E, rep, text, sizeof text);
  run_fault(E->r, FAULT_RACE, (Loc){E->p->file, rep->second.line, rep->second.col}, rep->second.core, rep->second.subcore,
            rep->second.op, "%s", text);
  return false;
}

/* Benign races (SPEC §10.2) fault at once under --strict-races; otherwise
 * they become warnings when the run ends (race_benign_warn), so that a
 * write whose later bytes differ reports only its fault. */
static bool race_benign(Eng *E) {
  RaceReport rep;
  if (!E->strict_races) return true;
  if (race_benign_next(E->rd, &rep)) return race_fault(E, &rep);
  return true;
}

/* The flat index ranges of the undefined elements of g, as text. */
static int64_t undefined_ranges(const Ref *ref, const Region *g, char *buf, size_t n) {
  int sz = dtype_size(ref->dtype), shown = 0;
  int64_t count = 0;
  size_t len = 0;
  buf[0] = 0;
  if (mem_range_defined(g, 0, ref->nelems * sz)) return 0; /* the usual case, in one pass */
  for (int64_t e = 0; e < ref->nelems; e++) {
    if (mem_range_defined(g, e * sz, sz)) continue;
    int64_t lo = e;
    while (e + 1 < ref->nelems && !mem_range_defined(g, (e + 1) * sz, sz)) e++;
    count += e + 1 - lo;
    if (shown++ < 8 && len < n) len += (size_t)snprintf(buf + len, n - len, "%s[%lld, %lld)", shown > 1 ? ", " : "", (long long)lo, (long long)e + 1);
    else if (shown == 9 && len < n) len += (size_t)snprintf(buf + len, n - len, ", ...");
  }
  return count;
}

/* SPEC §10.1: a warning names each HBM ref (the kernel's inputs and
 * outputs) left holding undefined elements when the run ends. */
void eng_undefined_outputs(Eng *E) {
  for (int k = 0; k < E->p->nrefs; k++) {
    const Ref *ref = E->p->refs[k];
    if (ref->space != SP_HBM) continue;
    char ranges[400];
    int64_t count = undefined_ranges(ref, mem_region(&E->r->mem, k, 0, 0), ranges, sizeof ranges);
    if (!count) continue;
    RunWarning *w = run_warning(E->r, "undefined-output", ref->loc, -1, -1);
    if (w)
      snprintf(w->text, sizeof w->text, "hbm ref '%s' holds %lld undefined element(s) of %lld at the end of the run, at flat indices %s",
               ref->name, (long long)count, (long long)ref->nelems, ranges);
  }
}

void eng_race_benign_warn(Eng *E) {
  RaceReport rep;
  const Fault *f = &E->r->fault;
  while (race_benign_next(E->rd, &rep)) {
    if (E->r->faulted && f->kind == FAULT_RACE && f->op == rep.second.op && f->core == rep.second.core && f->subcore == rep.second.subcore)
      continue; /* the same access turned out to differ further on */
    RunWarning *w = run_warning(E->r, "benign-race", (Loc){E->p->file, rep.second.line, rep.second.col}, rep.second.core,
                                rep.second.subcore);
    if (!w) continue;
    char text[700];
    race_text(E, &rep, text, sizeof text);
    snprintf(w->text, sizeof w->text, "benign race: %s; both writes store the same bytes (SPEC §10.2)", text);
  }
}

/* Before a write of parts pt is stored (race_pre). */
void eng_race_pre(Eng *E, uint32_t tag, const Region *g, const Part *pt, int np) {
  if (!tag) return;
  for (int i = 0; i < np; i++) race_pre(E->rd, tag, g, pt[i].off, pt[i].n);
}

bool eng_race_parts(Eng *E, uint32_t tag, const Region *g, const Part *pt, int np) {
  if (!tag) return true;
  RaceReport rep;
  for (int i = 0; i < np; i++)
    if (!race_bytes(E->rd, tag, g, pt[i].off, pt[i].n, &rep)) return race_fault(E, &rep);
  return race_benign(E);
}

/* A DMA's copy of n bytes moved whole (fast_copy): whether neither side's
 * span may race, so that each is checked and recorded in one step.  When
 * the two sides overlap, the element walk keeps its order (each element's
 * read, then its write), and with it each byte's final state. */
bool eng_race_copy_clean(Eng *E, const Region *sg, int64_t soff, const Region *dg, int64_t doff, int64_t n) {
  if (!E->rd) return true;
  if (sg == dg && soff < doff + n && doff < soff + n) return false;
  if (race_solo(E->rd, E->dma_read_tag) && race_solo(E->rd, E->dma_write_tag)) return true; /* the usual lone DMA */
  return race_span_clean(E->rd, E->dma_read_tag, sg, soff, n) && race_span_clean(E->rd, E->dma_write_tag, dg, doff, n);
}

/* After the copy, as the element walk records its write after storing it. */
void eng_race_copy_record(Eng *E, const Region *sg, int64_t soff, const Region *dg, int64_t doff, int64_t n) {
  race_span_record(E->rd, E->dma_read_tag, sg, soff, n);
  race_span_record(E->rd, E->dma_write_tag, dg, doff, n);
}

int eng_sem_slot(Eng *E, const Region *g, int64_t off) {
  for (int i = 0; i < E->nsemslots; i++)
    if (E->semslots[i].g == g && E->semslots[i].off == off) return E->semslots[i].slot;
  if (E->nsemslots == E->capsemslots) {
    E->capsemslots = E->capsemslots ? E->capsemslots * 2 : 16;
    E->semslots = realloc(E->semslots, sizeof *E->semslots * (size_t)E->capsemslots);
    if (!E->semslots) abort();
  }
  E->semslots[E->nsemslots].g = g;
  E->semslots[E->nsemslots].off = off;
  E->semslots[E->nsemslots].signal = (Loc){NULL, 0, 0};
  return E->semslots[E->nsemslots++].slot = race_slot(E->rd);
}

/* ---- indexed accesses (engine.c x_indexed) ---------------------------------- */

/* One lane's n bytes at off: eng_race_parts for a single part. */
bool eng_race_lane(Eng *E, uint32_t tag, const Region *g, int64_t off, int n) {
  RaceReport rep;
  if (!race_bytes(E->rd, tag, g, off, n, &rep)) return race_fault(E, &rep);
  return race_benign(E);
}

/* The lanes of an indexed access whose elements lie within [lo, hi):
 * whether no byte of the span, the elements and the bytes between them
 * alike, conflicts with access tag, so that no lane can race
 * (race_span_clean: nothing changes; on false each lane goes through
 * eng_race_lane, which reports as always). */
bool eng_race_lanes_clean(Eng *E, uint32_t tag, const Region *g, int64_t lo, int64_t hi) {
  return race_span_clean(E->rd, tag, g, lo, hi - lo);
}

/* Then each lane's 4 bytes at base + iv[k] x stride are recorded (for a
 * write once they are stored), as race_bytes records a lane that does not
 * race; lanes whose elements follow each other in lane order, one record. */
void eng_race_lanes_record(Eng *E, uint32_t tag, const Region *g, int64_t base, int64_t stride, const Cell *iv, int64_t n) {
  for (int64_t k = 0, j; k < n; k = j) {
    int64_t off = base + iv[k].i * stride;
    for (j = k + 1; j < n && base + iv[j].i * stride == off + 4 * (j - k);) j++;
    race_span_record(E->rd, tag, g, off, 4 * (j - k));
  }
}
