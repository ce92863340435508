/* sim/run.c -- helpers shared by the engine's and the reference's results. */
#include "run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *fault_name(FaultKind k) {
  switch (k) {
#define X(e, n) \
  case FAULT_##e: return n;
    FAULT_KINDS(X)
#undef X
  case FAULT_NONE: break;
  }
  return "none";
}

RegionSpec *run_region_specs(const Program *p) {
  RegionSpec *s = arena_alloc((Arena *)&p->arena, sizeof *s * (size_t)(p->nrefs ? p->nrefs : 1));
  for (int i = 0; i < p->nrefs; i++) {
    const Ref *r = p->refs[i];
    s[i].name = r->name;
    s[i].scope = r->space == SP_HBM ? INST_GLOBAL : r->space == SP_VMEM_SHARED ? INST_PER_CORE : INST_PER_SUBCORE;
    s[i].dtype = r->dtype;
    s[i].nelems = r->nelems;
    s[i].init = r->space == SP_SEMAPHORE ? INIT_ZEROS : r->init;
    s[i].fill = r->fill;
    s[i].data = r->init_data;
    s[i].bytes = r->init_bytes;
    s[i].seed = r->seed;
    s[i].low = r->low;
    s[i].high = r->high;
  }
  return s;
}

bool run_mem_init(const Program *p, MemSystem *m) {
  return mem_init(m, run_region_specs(p), p->nrefs, (int)p->mesh_cores, (int)p->mesh_subcores);
}

uint64_t run_max_log_bytes(const RunLimits *lim) {
  return lim && lim->max_log_bytes ? lim->max_log_bytes : RUN_DEFAULT_MAX_LOG_MB << 20;
}

void run_log_append(void *ctx, int sub, int op, EventKind k, const Value *v) {
  RunResult *r = ctx;
  EventLog *l = &r->logs[sub];
  r->log_bytes += sizeof(Event) + (uint64_t)v->n * (sizeof(Cell) + 1) + 32; /* 32: two allocations' headers */
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 64;
    Event *e = realloc(l->ev, sizeof *e * (size_t)cap);
    if (!e) abort();
    memset(e + l->cap, 0, sizeof *e * (size_t)(cap - l->cap));
    l->ev = e;
    l->cap = cap;
  }
  Event *e = &l->ev[l->n++];
  e->op = op;
  e->kind = k;
  val_copy(&e->val, v);
}

void run_result_free(RunResult *r) {
  for (int i = 0; i < r->nsub && r->logs; i++) {
    for (int k = 0; k < r->logs[i].cap; k++) val_free(&r->logs[i].ev[k].val);
    free(r->logs[i].ev);
  }
  free(r->logs);
  for (int i = 0; i < r->nvalues; i++) val_free(&r->values[i].val);
  free(r->values);
  free(r->atomics);
  for (int i = 0; i < r->nprints; i++) free(r->prints[i].text);
  free(r->prints);
  free(r->warnings);
  free(r->stats.sub);
  free(r->stats.dma);
  free(r->stats.prof);
  mem_free(&r->mem);
  memset(r, 0, sizeof *r);
}

void run_fault(RunResult *r, FaultKind k, Loc at, int core, int subcore, int op, const char *fmt, ...) {
  if (r->faulted) return;
  r->faulted = true;
  if (r->fault_note) *r->fault_note = true;
  r->fault.kind = k;
  r->fault.loc = at;
  r->fault.core = core;
  r->fault.subcore = subcore;
  r->fault.op = op;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->fault.details, sizeof r->fault.details, fmt, ap);
  va_end(ap);
}

void run_element(RunElement *e, int rank, const int64_t *shape, int64_t flat) {
  e->set = true;
  e->rank = rank;
  for (int d = rank - 1; d >= 0; d--) {
    e->index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
}

void run_element_text(const RunElement *e, char *buf, size_t n) {
  if (e->rank <= 1) {
    snprintf(buf, n, "lane %lld", (long long)(e->rank ? e->index[0] : 0));
    return;
  }
  size_t k = (size_t)snprintf(buf, n, "element [");
  for (int d = 0; d < e->rank && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? ", " : "", (long long)e->index[d]);
  if (k < n) snprintf(buf + k, n - k, "]");
}

Region *run_region(RunResult *r, const Ref *ref, int core, int subcore) {
  return mem_region(&r->mem, ref->index, core, subcore);
}

void run_instance_name(const Ref *ref, const Region *g, char *buf, size_t n) {
  if (ref->space == SP_HBM) snprintf(buf, n, "%s", ref->name);
  else if (ref->space == SP_VMEM_SHARED) snprintf(buf, n, "%s@%d", ref->name, g->core);
  else snprintf(buf, n, "%s@%d.%d", ref->name, g->core, g->subcore);
}

bool run_sem_signal_fits(RunResult *r, const Ref *ref, const Region *g, int64_t count, int64_t inc, Loc at, int core,
                         int subcore, int op) {
  int64_t sum;
  if (!__builtin_add_overflow(count, inc, &sum) && sum >= INT32_MIN && sum <= INT32_MAX) return true;
  char name[200];
  run_instance_name(ref, g, name, sizeof name);
  run_fault(r, FAULT_SEMAPHORE, at, core, subcore, op,
            "semaphore_signal takes the count of '%s' past int32's range (2**31 - 1): count %lld, increment %lld", name,
            (long long)count, (long long)inc);
  return false;
}

RunWarning *run_warning(RunResult *r, const char *kind, Loc at, int core, int subcore) {
  if (r->nwarnings == RUN_MAX_WARNINGS) {
    r->more_warnings++;
    return NULL;
  }
  if (!r->warnings && !(r->warnings = calloc(RUN_MAX_WARNINGS, sizeof *r->warnings))) return NULL;
  RunWarning *w = &r->warnings[r->nwarnings++];
  w->kind = kind, w->loc = at, w->core = core, w->subcore = subcore;
  w->text[0] = 0;
  return w;
}
