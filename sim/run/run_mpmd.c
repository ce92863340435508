/* sim/run/run_mpmd.c -- the two meshes of an mpmd kernel (docs/format.md
 * "Kernels over several meshes") as the engine and the reference both see
 * them: one combined mesh whose subcore mpmd_vsubs of each core is the
 * scalar subcore.  Barriers are per mesh (a vector mesh's barrier waits
 * for its vector subcores only); semaphores, vmem_shared and hbm are one
 * memory. */
#include "run.h"

bool run_is_scalar_sub(const Program *p, int subcore) { return p->mpmd_vsubs && subcore == p->mpmd_vsubs; }

int run_mesh_first(const Program *p, int subcore) { return run_is_scalar_sub(p, subcore) ? (int)p->mpmd_vsubs : 0; }

int run_mesh_count(const Program *p, int subcore) {
  if (!p->mpmd_vsubs) return (int)p->mesh_subcores;
  return run_is_scalar_sub(p, subcore) ? 1 : (int)p->mpmd_vsubs;
}

const Body *run_body_of(const Program *p, int subcore) {
  return run_is_scalar_sub(p, subcore) ? &p->mpmd[1].body : &p->body;
}
