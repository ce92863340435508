/* sim/run/run_kernels.c -- what a kernel of a program of several kernels
 * takes from the one before it (sim/run/run.h): the shared hbm refs and
 * semaphores, as XLA hands buffers from one custom call to the next.  The
 * engine and the reference both call it, each on its own memory. */
#include "run.h"

#include <string.h>

/* The instance of ref r in m at (core, subcore), or NULL when m's mesh has none. */
static const Region *instance_at(const MemSystem *m, int r, int core, int subcore) {
  for (int i = 0; i < mem_instance_count(m, r); i++) {
    const Region *g = mem_instance((MemSystem *)m, r, i);
    if (g->core == core && g->subcore == subcore) return g;
  }
  return NULL;
}

/* Where the previous kernel's instance (core, subcore) of semaphore r is in
 * p's memory: a scalar subcore's to p's scalar subcore, a vector subcore's
 * to p's vector subcore of the same coordinates; NULL when p has none, with
 * *kind set when p has no subcore of that kind at all. */
static const Region *carried_to(const Program *p, const MemSystem *to, const RunLimits *lim, int r, int core, int subcore,
                                bool *kind) {
  bool scalar = lim->carry_vsubs ? subcore == lim->carry_vsubs : lim->carry_kind == KERNEL_SCALAR;
  int at = subcore;
  if (scalar) at = p->mpmd_vsubs ? (int)p->mpmd_vsubs : p->kernel == KERNEL_SCALAR ? 0 : -1;
  else if (!p->mpmd_vsubs && p->kernel == KERNEL_SCALAR) at = -1;
  else if (p->mpmd_vsubs && subcore >= p->mpmd_vsubs) return *kind = false, NULL; /* beyond p's vector subcores */
  *kind = at < 0;
  return at < 0 ? NULL : instance_at(to, r, core, at);
}

bool run_carry(const Program *p, const MemSystem *from, const RunLimits *lim, RunResult *r) {
  for (int k = 0; k < p->nshared && k < from->nrefs; k++) {
    const Ref *ref = p->refs[k];
    if (ref->space == SP_HBM) {
      Region *to = mem_instance(&r->mem, k, 0);
      const Region *g = mem_instance((MemSystem *)from, k, 0);
      mem_copy_bytes(to, 0, g, 0, (int64_t)(to->size < g->size ? to->size : g->size));
      continue;
    }
    if (ref->space != SP_SEMAPHORE) continue;
    for (int i = 0; i < mem_instance_count(from, k); i++) {
      const Region *g = mem_instance((MemSystem *)from, k, i);
      bool kind;
      const Region *to = carried_to(p, &r->mem, lim, k, g->core, g->subcore, &kind);
      if (to) {
        mem_copy_bytes((Region *)to, 0, g, 0, (int64_t)(to->size < g->size ? to->size : g->size));
        continue;
      }
      for (int64_t e = 0; e < ref->nelems; e++) {
        int64_t v = dtype_load(DT_INT32, g->bytes + e * 4).i;
        if (!v) continue;
        if (kind)
          run_fault(r, FAULT_SEMAPHORE, ref->loc, g->core, g->subcore, -1,
                    "semaphore '%s@%d.%d' element %lld holds %lld at the end of kernel %d, and kernel %d runs on the %s "
                    "subcores, which do not hold it (a DMA or signal was never waited)",
                    ref->name, g->core, g->subcore, (long long)e, (long long)v, p->kernel_index, p->kernel_index + 1,
                    p->kernel == KERNEL_SCALAR ? "scalar" : "vector");
        else
          run_fault(r, FAULT_SEMAPHORE, ref->loc, g->core, g->subcore, -1,
                    "semaphore '%s@%d.%d' element %lld holds %lld at the end of kernel %d, and kernel %d's mesh has no "
                    "subcore %d.%d to wait on it (a DMA or signal was never waited)",
                    ref->name, g->core, g->subcore, (long long)e, (long long)v, p->kernel_index, p->kernel_index + 1,
                    g->core, g->subcore);
        return false;
      }
    }
  }
  return true;
}

const char *run_sem_scope(const RunLimits *lim) { return lim && lim->program_end ? "program" : "kernel"; }
