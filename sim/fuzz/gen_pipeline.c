/* sim/fuzz/gen_pipeline.c -- the fuzz unit `pipeline`: an emit_pipeline
 * (docs/format.md "Pipelines") from an hbm ref of rows of the chip's lane
 * count to another, over a grid of one or two dimensions, with 1-D or 2-D
 * blocks, split over none, one or both mesh axes (evenly or not), the body
 * an elementwise function of the block.  The loader expands it into the
 * double-buffered DMA loop (sim/front/load_pipeline.c), which the engine
 * and the reference must run alike; where the axes leave subcores running
 * the same blocks their copies out race benignly (identical bytes). */
#include <stdio.h>
#include <string.h>

#include "fuzz_priv.h"

static const char *const axes[] = {NULL, "subcore", "core", "[core, subcore]"};

/* The body: one get and one set of the block, v * K + C. */
static void pipe_body(G *g, const char *blk, bool flat, bool fl) {
  const char *at = flat ? "[...]" : "[0, :]";
  bput(g->out, "    body:\n      - get: {ref: \"xb%s\", out: pv%d}\n", at, g->u);
  if (fl) bput(g->out, "      - set: {ref: \"%s%s\", value: \"pv%d * %s + %s\"}\n", blk, at, g->u, rp(R(g), 50) ? "0.5" : "-1.25", rp(R(g), 50) ? "1.0" : "3.0");
  else bput(g->out, "      - set: {ref: \"%s%s\", value: \"pv%d * %d + %d\"}\n", blk, at, g->u, (int)rr(R(g), -3, 5), (int)rr(R(g), -20, 20));
}

void unit_pipeline(G *g, Unit *u) {
  bool fl = rp(R(g), 30), flat = rp(R(g), 40), two = !flat && rp(R(g), 40);
  int rows = (int)rr(R(g), 1, 6), cols = two ? (int)rr(R(g), 1, 3) : 1;
  int ax = (int)rr(R(g), 0, 3);
  const char *dt = fl ? "float32" : "int32";
  char x[NAME_LEN], o[NAME_LEN];
  snprintf(x, NAME_LEN, "P%dx", g->u), snprintf(o, NAME_LEN, "P%do", g->u);
  if (flat) {
    bput(g->refs, "  %s: {space: hbm, shape: [%d], dtype: %s, init: iota}\n", x, rows * g->L, dt);
    bput(g->refs, "  %s: {space: hbm, shape: [%d], dtype: %s, init: zeros}\n", o, rows * g->L, dt);
  } else {
    bput(g->refs, "  %s: {space: hbm, shape: [%d, %d], dtype: %s, init: iota}\n", x, rows, cols * g->L, dt);
    bput(g->refs, "  %s: {space: hbm, shape: [%d, %d], dtype: %s, init: zeros}\n", o, rows, cols * g->L, dt);
  }
  u->nsteps = 1;
  g->r = rng_at(g->pl->seed, (uint64_t)g->pl->index, 200 + (uint64_t)g->u, 1);
  g->out = &u->step[0];
  g->nnames = 0;
  bput(g->out, "- emit_pipeline:\n");
  if (flat) {
    bput(g->out, "    grid: [%d]\n    in_specs: [{block_shape: [%d], index_map: \"lambda i: (i,)\"}]\n", rows, g->L);
    bput(g->out, "    out_specs: [{block_shape: [%d], index_map: \"lambda i: (i,)\"}]\n", g->L);
  } else if (two) {
    bput(g->out, "    grid: [%d, %d]\n    in_specs: [{block_shape: [1, %d], index_map: \"lambda i, j: (i, j)\"}]\n", rows, cols, g->L);
    bput(g->out, "    out_specs: [{block_shape: [1, %d], index_map: \"lambda i, j: (i, j)\"}]\n", g->L);
  } else {
    bput(g->out, "    grid: [%d]\n    in_specs: [{block_shape: [1, %d], index_map: \"lambda i: (i, 0)\"}]\n", rows, g->L);
    bput(g->out, "    out_specs: [{block_shape: [1, %d], index_map: \"lambda i: (i, 0)\"}]\n", g->L);
  }
  if (axes[ax]) bput(g->out, "    core_axis_name: %s\n    dimension_semantics: [parallel%s]\n", axes[ax], two ? (rp(R(g), 50) ? ", parallel" : ", arbitrary") : "");
  bput(g->out, "    args: [%s, %s]\n    params: [xb, ob]\n", x, o);
  pipe_body(g, "ob", flat, fl);
}
