/* sim/fuzz/inject.c -- sc-sim fuzz: the rule-breaking operations (docs/fuzz.md).
 *
 * A reject program adds one operation (INJECTIONS) that breaks one rule of
 * SPEC §4 and must be rejected with exactly that id; the plan picks the row
 * (plan_inject) and gen.c writes it where the plan says. */
#include <string.h>

#include "fuzz_priv.h"

/* ---- rule-breaking operations ------------------------------------------------ */
static void inj_qv(G *g, int64_t n, const char *dt) { bput(g->refs, "  Qv: {space: vmem, shape: [%lld], dtype: %s, init: zeros}\n", (long long)n, dt); }
static void inj_qs(G *g, const char *dt) { bput(g->refs, "  Qs: {space: smem, shape: [4], dtype: %s, init: zeros}\n", dt); }
static void inj_qab(G *g) {
  bput(g->refs, "  Qa: {space: hbm, shape: [4], dtype: int32, init: iota}\n  Qb: {space: hbm, shape: [4], dtype: int32, init: zeros}\n");
}
static void inj_qh(G *g) { bput(g->refs, "  Qh: {space: hbm, shape: [4, %d], dtype: int32, init: iota}\n", g->L); }
static void inj_qi(G *g, const char *space) { bput(g->refs, "  Qi: {space: %s, shape: [2], dtype: int32, init: [1, 3]}\n", space); }

static void inj_S4(G *g) {
  inj_qv(g, 2 * g->L, "int32");
  if (rp(R(g), 50)) bput(g->out, "- set: {ref: \"Qv[::2]\", value: \"iota(%d)\"}\n", g->L);
  else bput(g->out, "- swap: {ref: \"Qv[pl.ds(0, %d, 2)]\", value: \"iota(%d)\", out: Qx}\n", g->L, g->L);
}
static void inj_G4(G *g) {
  inj_qv(g, 2 * g->L, "int32");
  bput(g->out, "- get: {ref: \"Qv[pl.ds(0, %d, 2)]\", out: Qx}\n", g->L);
}
static void inj_G1(G *g) {
  bput(g->refs, "  Qh: {space: %s, shape: [4], dtype: int32, init: iota}\n", rp(R(g), 50) ? "hbm" : "vmem_shared");
  bput(g->out, "- get: {ref: \"Qh[...]\", out: Qx}\n");
}
static void inj_S1(G *g) {
  bput(g->refs, "  Qh: {space: %s, shape: [4], dtype: int32, init: iota}\n", rp(R(g), 50) ? "hbm" : "vmem_shared");
  bput(g->out, "- set: {ref: \"Qh[...]\", value: \"full([4], 1)\"}\n");
}
static void inj_S5(G *g) {
  inj_qs(g, "int32");
  bput(g->out, "- set: {ref: \"Qs[pl.ds(0, 2)]\", value: \"full([2], 1)\"}\n");
}
static void inj_G5(G *g) {
  if (!g->scalar && rp(R(g), 50)) {
    inj_qv(g, g->L, "int32");
    bput(g->out, "- get: {ref: \"Qv[3]\", out: Qx}\n");
    return;
  }
  inj_qs(g, "int32");
  bput(g->out, "- get: {ref: \"Qs[pl.ds(1, 2)]\", out: Qx}\n");
}
static void inj_I1(G *g) { bput(g->out, "- let: {name: Qx, value: \"iota(%d)\"}\n", g->L / 2); }
static void inj_U1(G *g) { bput(g->out, "- let: {name: Qx, value: \"iota(%d)\"}\n", g->L); }
static void inj_B2(G *g) {
  if (g->scalar) {
    inj_qs(g, "int32");
    bput(g->out, "- set: {ref: \"Qs[0]\", value: \"full([2], 1)\"}\n");
    return;
  }
  inj_qv(g, g->L, "int32");
  bput(g->out, "- set: {ref: \"Qv[...]\", value: \"full([%d], 1)\"}\n", g->L + 1);
}
static void inj_B3(G *g) {
  if (g->scalar) {
    inj_qs(g, "float32");
    bput(g->out, "- set: {ref: \"Qs[1]\", value: core}\n");
    return;
  }
  inj_qv(g, g->L, "float32");
  bput(g->out, "- set: {ref: \"Qv[...]\", value: \"iota(%d)\"}\n", g->L);
}
static void inj_A11(G *g) {
  inj_qs(g, "int32");
  bput(g->out, "- get: {ref: \"Qs[pl.ds(1, 4)]\", out: Qx}\n");
}
static void inj_A10(G *g) {
  inj_qs(g, "int32");
  bput(g->out, "- get: {ref: \"Qs[pl.ds(4, 1)]\", out: Qx}\n");
}
static void inj_D3(G *g) {
  inj_qh(g);
  inj_qi(g, "vmem");
  bput(g->refs, "  Qc: {space: hbm, shape: [2, %d], dtype: int32, init: zeros}\n", g->L);
  bput(g->out, "- sync_copy: {src: \"Qh.at[Qi]\", dst: Qc}\n");
}
static void inj_H8(G *g) {
  inj_qab(g);
  bput(g->refs, "  Qr: {space: semaphore, type: regular}\n");
  bput(g->out, "- wait: {src: Qa, dst: Qb, sem: Qr}\n");
}
static void inj_GS2(G *g) {
  inj_qv(g, 2 * g->L, "int16");
  bput(g->out, "- load_gather: {ref: Qv, indices: [\"iota(%d) %% 4\"], out: Qx}\n", g->L);
}
static void inj_GG1(G *g) {
  inj_qv(g, 2 * g->L, "int32");
  bput(g->out, "- load_gather: {ref: Qv, indices: [\"full([%d], 1)\"], out: Qx}\n", g->L / 2);
}
static void inj_E2(G *g) {
  inj_qv(g, g->L, "int32");
  bput(g->out, "- load_expanded: {ref: \"Qv[...]\", mask: \"iota(%d)\", out: Qx}\n", g->L);
}
static void inj_E4(G *g) {
  inj_qv(g, g->L, "int32");
  bput(g->out, "- store_compressed: {ref: \"Qv[...]\", value: \"astype(iota(%d), float32)\", mask: \"iota(%d) < 3\"}\n", g->L, g->L);
}
static void inj_FA5(G *g) {
  inj_qv(g, g->L, "int32");
  bput(g->out, "- fetch_and_add: {ref: \"Qv.at[0]\", value: 1, subcore: 0, out: Qx}\n");
}
static void inj_FA4(G *g) {
  inj_qs(g, "int16");
  bput(g->out, "- fetch_and_add: {ref: \"Qs.at[0]\", value: 1, subcore: 0, out: Qx}\n");
}
static void inj_H2(G *g) {
  inj_qab(g);
  bput(g->refs, "  Qd: {space: semaphore, type: dma}\n");
  bput(g->out, "- async_copy: {src: Qa, dst: Qb, sem: Qd, priority: -1, out: Qx}\n");
}
static void inj_M_DMA2(G *g) {
  inj_qab(g);
  bput(g->refs, "  Qc: {space: hbm, shape: [2], dtype: int32, init: zeros}\n");
  bput(g->out, "- sync_copy: {src: Qa, dst: Qc}\n");
}
static void inj_M_DMA3(G *g) {
  inj_qab(g);
  bput(g->refs, "  Qd: {space: semaphore, type: dma}\n");
  bput(g->out, "- async_copy: {src: Qa, dst: Qb, sem: Qd, priority: 2, out: Qx}\n");
}
static void inj_M_DMA1(G *g) {
  inj_qab(g);
  bput(g->refs, "  Qf: {space: hbm, shape: [4], dtype: float32, init: zeros}\n");
  bput(g->out, "- sync_copy: {src: Qa, dst: Qf}\n");
}
static void inj_G3(G *g) {
  bput(g->refs, "  Qm: {space: vmem, shape: [2, %d], dtype: int32, init: zeros}\n", g->L);
  bput(g->out, "- get: {ref: \"Qm[:, 0]\", out: Qx}\n");
}
static void inj_S7(G *g) {
  inj_qs(g, "int32");
  bput(g->out, "- addupdate: {ref: \"Qs[0]\", value: 1}\n");
}
static void inj_GL1(G *g) {
  bput(g->refs, "  Qh: {space: hbm, shape: [%d], dtype: int32, init: iota}\n", g->L);
  bput(g->out, "- load_gather: {ref: Qh, indices: [\"iota(%d) %% 4\"], out: Qx}\n", g->L);
}
static void inj_SL2(G *g) {
  bput(g->refs, "  Qh: {space: hbm, shape: [%d], dtype: int32, init: iota}\n", g->L);
  bput(g->out, "- store_scatter: {ref: Qh, indices: [\"iota(%d) %% 4\"], value: \"iota(%d)\"}\n", g->L, g->L);
}
static void inj_D1(G *g) {
  inj_qh(g);
  inj_qi(g, "vmem");
  bput(g->refs, "  Qg: {space: vmem, shape: [4, %d], dtype: int32, init: zeros}\n", g->L);
  bput(g->out, "- sync_copy: {src: \"Qh.at[Qi]\", dst: \"Qg.at[Qi]\"}\n");
}
static void inj_D5(G *g) {
  inj_qh(g);
  inj_qv(g, g->L, "int32");
  bput(g->out, "- sync_copy: {src: \"Qh.at[0]\", dst: Qv, add: true}\n");
}
static void inj_D4(G *g) {
  inj_qab(g);
  bput(g->out, "- sync_copy: {src: Qa, dst: Qb, add: true}\n");
}
static void inj_G7(G *g) {
  inj_qv(g, g->L, "int32");
  bput(g->out, "- get: {ref: \"Qv[pl.ds(0, %d)]\", out: Qx}\n", g->L / 2);
}
static void inj_S8(G *g) {
  inj_qv(g, g->L, "int32");
  bput(g->out, "- set: {ref: \"Qv[pl.ds(0, %d)]\", value: \"full([%d], 1)\"}\n", g->L / 2, g->L / 2);
}
static void inj_M_VL2(G *g) {
  inj_qv(g, 2 * g->L, "int16");
  bput(g->out, "- load_expanded: {ref: \"Qv[...]\", mask: \"full([%d], true)\", out: Qx}\n", 2 * g->L);
}
static void inj_T1(G *g) {
  inj_qv(g, g->L, "int32");
  bput(g->out, "- get: {ref: \"Qv.bitcast(int16)[...]\", out: Qx}\n");
}
static void inj_T3(G *g) {
  bput(g->refs, "  Qm: {space: vmem, shape: [2, %d], dtype: int32, init: zeros}\n", g->L);
  bput(g->out, "- get: {ref: \"Qm.reshape(3, 5)[...]\", out: Qx}\n");
}
static void inj_X4(G *g) {
  inj_qh(g);
  inj_qi(g, "smem");
  bput(g->refs, "  Qg: {space: vmem, shape: [2, %d], dtype: int32, init: zeros}\n", g->L);
  bput(g->out, "- sync_copy: {src: \"Qh.at[Qi]\", dst: Qg}\n");
}
static void inj_H4(G *g) {
  inj_qab(g);
  bput(g->refs, "  Qd: {space: semaphore, type: dma, shape: [2]}\n");
  bput(g->out, "- async_copy: {src: Qa, dst: Qb, sem: Qd, out: Qx}\n");
}
/* Valid, but the second signal takes the count past 2**31 - 1: a
 * `semaphore` fault in the engine and the reference alike (SPEC §10). */
static void inj_sem_past_int32(G *g) {
  int64_t a = 2147483647 - rr(R(g), 0, 1000);
  bput(g->refs, "  Qs: {space: semaphore, type: regular}\n");
  bput(g->out, "- semaphore_signal: {sem: Qs, inc: %lld}\n", (long long)a);
  bput(g->out, "- semaphore_signal: {sem: Qs, inc: %lld}\n", (long long)(2147483647 - a + rr(R(g), 1, 1000)));
}
static void inj_mesh(G *g) { (void)g; } /* C2 / C3: the plan's mesh is too big */


/* X(rule id, generator, kernels, mode) */
#define INJECTIONS(X)                       \
  X("S4", inj_S4, K_VEC, M_ANY)             \
  X("G4", inj_G4, K_VEC, M_ANY)             \
  X("G1", inj_G1, K_BOTH, M_ANY)            \
  X("S1", inj_S1, K_BOTH, M_ANY)            \
  X("S5", inj_S5, K_BOTH, M_ANY)            \
  X("G5", inj_G5, K_BOTH, M_ANY)            \
  X("I1", inj_I1, K_VEC, M_ANY)             \
  X("U1", inj_U1, K_SCALAR, M_ANY)          \
  X("B2", inj_B2, K_BOTH, M_ANY)            \
  X("B3", inj_B3, K_BOTH, M_ANY)            \
  X("A11", inj_A11, K_BOTH, M_ANY)          \
  X("A10", inj_A10, K_BOTH, M_ANY)          \
  X("D3", inj_D3, K_VEC, M_ANY)             \
  X("H8", inj_H8, K_BOTH, M_ANY)            \
  X("GS2", inj_GS2, K_VEC, M_ANY)           \
  X("GG1", inj_GG1, K_VEC, M_ANY)           \
  X("E2", inj_E2, K_VEC, M_ANY)             \
  X("E4", inj_E4, K_VEC, M_ANY)             \
  X("FA5", inj_FA5, K_VEC, M_ANY)           \
  X("FA4", inj_FA4, K_VEC, M_ANY)           \
  X("H2", inj_H2, K_BOTH, M_ANY)            \
  X("M-DMA2", inj_M_DMA2, K_BOTH, M_ANY)    \
  X("M-DMA3", inj_M_DMA3, K_BOTH, M_ANY)    \
  X("M-DMA1", inj_M_DMA1, K_BOTH, M_ANY)    \
  X("G3", inj_G3, K_VEC, M_ANY)             \
  X("S7", inj_S7, K_BOTH, M_ANY)            \
  X("GL1", inj_GL1, K_VEC, M_ANY)           \
  X("SL2", inj_SL2, K_VEC, M_ANY)           \
  X("D1", inj_D1, K_VEC, M_ANY)             \
  X("D5", inj_D5, K_VEC, M_ANY)             \
  X("D4", inj_D4, K_BOTH, M_ANY)            \
  X("G7", inj_G7, K_VEC, M_STRICT)          \
  X("S8", inj_S8, K_VEC, M_STRICT)          \
  X("M-VL2", inj_M_VL2, K_VEC, M_ANY)       \
  X("T1", inj_T1, K_VEC, M_ANY)             \
  X("T3", inj_T3, K_VEC, M_ANY)             \
  X("X4", inj_X4, K_VEC, M_ANY)             \
  X("H4", inj_H4, K_BOTH, M_ANY)            \
  X("C2", inj_mesh, K_BOTH, M_ANY)          \
  X("C3", inj_mesh, K_VEC, M_ANY)           \
  X("semaphore", inj_sem_past_int32, K_BOTH, M_FAULT)

const Injection injections[] = {
#define X(id, f, k, m) {id, f, k, m},
    INJECTIONS(X)
#undef X
};

enum { NINJ = sizeof injections / sizeof injections[0] };


void plan_inject(Rng *r, Plan *pl, int reject_rate) {
  pl->inject = -1;
  if (!rp(r, reject_rate)) return;
  int c[NINJ], n = 0;
  for (int i = 0; i < NINJ; i++) {
    bool kern = injections[i].kernels & (pl->scalar ? K_SCALAR : K_VEC);
    if (kern && (injections[i].mode != M_STRICT || !pl->layout)) c[n++] = i;
  }
  pl->inject = c[rr(r, 0, n - 1)];
  pl->inject_pos = (int)rr(r, 0, pl->nunits);
  if (!strcmp(injections[pl->inject].id, "C2")) pl->cores = chips[pl->chip].cores + 1;
  if (!strcmp(injections[pl->inject].id, "C3")) pl->subs = chips[pl->chip].subs + 1;
}
