/* sim/fuzz/gen_sugar.c -- the fuzz unit `sugar`: in-place updates
 * (update: R OP= V), plsc.parallel_loop with carries, debug_print and
 * debug_check, over a vmem ref of rows of the chip's lane count.  Every
 * value is defined and every check holds, so the engine and the reference
 * must agree on the final memory and the logs. */
#include <stdio.h>
#include <string.h>

#include "fuzz_priv.h"

static void sugar_step_begin(G *g, Unit *u, int s) {
  g->r = rng_at(g->pl->seed, (uint64_t)g->pl->index, 100 + (uint64_t)g->u, 1 + (uint64_t)s);
  g->out = &u->step[s];
  g->nnames = 0;
}

static void sugar_name(G *g, char *buf, const char *tag) { snprintf(buf, NAME_LEN, "%s%d_%d", tag, g->u, g->nm++); }

/* A vector of the row's dtype, from iota and literals only. */
static void sugar_vec(G *g, char *buf, size_t n, bool fl) {
  if (fl) snprintf(buf, n, "astype(iota(%d), float32) * %s + %s", g->L, rp(R(g), 50) ? "0.5" : "1.25", rp(R(g), 50) ? "1.0" : "-2.0");
  else snprintf(buf, n, "iota(%d) * %d + %d", g->L, (int)rr(R(g), -3, 5), (int)rr(R(g), -20, 20));
}

static void sugar_update(G *g, const char *ref, int rows, bool fl) {
  static const char *const iops[] = {"+", "-", "*", "&", "|", "^", "min", "max"};
  static const char *const fops[] = {"+", "-", "*", "min", "max"};
  const char *op = fl ? fops[rr(R(g), 0, 4)] : iops[rr(R(g), 0, 7)];
  char v[160];
  sugar_vec(g, v, sizeof v, fl);
  bput(g->out, "- update: {ref: \"%s[%d]\", op: \"%s\", value: \"%s\"}\n", ref, (int)rr(R(g), 0, rows - 1), op, v);
}

static void sugar_parallel(G *g, const char *ref, int rows, bool fl) {
  char var[NAME_LEN], acc[NAME_LEN], cnt[NAME_LEN], row[NAME_LEN];
  sugar_name(g, var, "pv"), sugar_name(g, acc, "pa"), sugar_name(g, cnt, "pc"), sugar_name(g, row, "pr");
  int lo = (int)rr(R(g), 0, rows - 1);
  bput(g->out, "- loop:\n    var: %s\n    range: [%d, %d]\n    parallel: true\n", var, lo, rows);
  bput(g->out, "    carry: {%s: \"full([%d], %s)\", %s: \"astype(0, int32)\"}\n", acc, g->L, fl ? "0.0" : "0", cnt);
  bput(g->out, "    body:\n      - get: {ref: \"%s[%s]\", out: %s}\n", ref, var, row);
  if (rp(R(g), 30)) bput(g->out, "      - update: {ref: \"%s[%s]\", op: \"+\", value: %s}\n", ref, var, row);
  bput(g->out, "    next: {%s: \"%s + %s\", %s: \"%s + 1\"}\n", acc, acc, row, cnt, cnt);
  bput(g->out, "- debug_check: {cond: \"%s == %d\", message: \"parallel_loop ran %d iterations\"}\n", cnt, rows - lo, rows - lo);
  if (rp(R(g), 50)) bput(g->out, "- debug_print: {message: \"carry\", args: [%s]}\n", acc);
  bput(g->out, "- update: {ref: \"%s[%d]\", op: \"%s\", value: %s}\n", ref, (int)rr(R(g), 0, rows - 1), fl ? "-" : "^", acc);
}

void unit_sugar(G *g, Unit *u) {
  bool fl = rp(R(g), 30);
  int rows = (int)rr(R(g), 2, 4);
  char ref[NAME_LEN];
  snprintf(ref, NAME_LEN, "R%dq", g->u);
  bput(g->refs, "  %s: {space: vmem, shape: [%d, %d], dtype: %s, init: iota}\n", ref, rows, g->L, fl ? "float32" : "int32");
  u->nsteps = (int)rr(R(g), 1, 3);
  for (int s = 0; s < u->nsteps; s++) {
    sugar_step_begin(g, u, s);
    if (rp(R(g), 50)) sugar_update(g, ref, rows, fl);
    else sugar_parallel(g, ref, rows, fl);
    if (rp(R(g), 20)) bput(g->out, "- debug_print: {message: \"row\", args: [\"%s[0]\"]}\n", ref);
  }
}
