/* sim/fuzz/gen_scanops.c -- the generator's scans: plsc.cumsum, plsc.cummax,
 * plsc.cummin (with a generated mask or none) and jnp.cumsum / lax.cumsum
 * over one vector of the chip's lane count, of a dtype tpu.scan takes;
 * jnp.sort (ascending or descending) and the mask all-reduces. */
#include "fuzz_priv.h"

bool gen_scanops_val(G *g, Buf *o, const Ty *t, int depth, void (*sub)(G *, Buf *, const Ty *, int)) {
  bool lanes = !g->scalar && t->rank == 1 && t->sh[0] == g->L;
  if (!lanes || (t->d != DT_INT32 && t->d != DT_FLOAT32 && t->d != DT_UINT32) || depth < 1) return false;
  static const char *const fns[] = {"plsc.cumsum", "plsc.cummax", "plsc.cummin", "jnp.cumsum", "lax.cumsum"};
  int f = (int)rr(R(g), 0, 7);
  if (f == 5) { /* jnp.sort, ascending or descending */
    bput(o, "jnp.sort(");
    sub(g, o, t, depth - 1);
    bput(o, rp(R(g), 50) ? ", descending=True)" : ")");
    return true;
  }
  if (f >= 6 && t->d == DT_INT32) { /* an all-reduce of a generated mask */
    Ty m = *t;
    m.d = DT_BOOL;
    bput(o, "%s(", f == 6 ? "plsc.all_reduce_population_count" : "plsc.all_reduce_ffs");
    sub(g, o, &m, depth - 1);
    bput(o, ")");
    return true;
  }
  if (f >= 5) f = 0;
  bput(o, "%s(", fns[f]);
  sub(g, o, t, depth - 1);
  if (f == 4) { /* lax.cumsum takes no negative axis (CR1); the draw keeps the random stream */
    (void)rp(R(g), 50);
    bput(o, ", axis=0");
  }
  if (f < 3 && rp(R(g), 70)) {
    Ty m = *t;
    m.d = DT_BOOL;
    bput(o, ", mask=");
    sub(g, o, &m, depth - 1);
  }
  bput(o, ")");
  return true;
}
