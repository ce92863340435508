/* lowering/lower_mpmd.c -- the code of an mpmd kernel (docs/format.md
 * "Kernels over several meshes"): upstream lowers each (mesh, function)
 * pair of an mpmd_map into its own function of one Mosaic module; here
 * the two meshes' codes, lowered on their own, become one Code whose
 * second part the scalar subcores start at (Code.split), so that one
 * engine runs both meshes at once on one memory. */
#include "lower.h"

#include <stdlib.h>
#include <string.h>

static int moved(int r, int by) { return r >= 0 ? r + by : r; }

/* Instruction in of the scalar part, its registers, views and jump target
 * past the vector part's. */
static void move_instr(Instr *in, int regs, int views, int code) {
  in->d = moved(in->d, regs), in->a = moved(in->a, regs), in->b = moved(in->b, regs), in->c = moved(in->c, regs);
  in->mask = moved(in->mask, regs);
  in->view = moved(in->view, views), in->view2 = moved(in->view2, views);
  in->view3 = moved(in->view3, views), in->view4 = moved(in->view4, views);
  if (isa_operand(in->op, 'J')) in->target += code;
}

static void move_view(VDesc *vd, int regs) {
  for (int l = 0; l < vd->nlev; l++)
    for (int i = 0; i < MAX_RANK; i++) {
      vd->lev[l].start[i].reg = moved(vd->lev[l].start[i].reg, regs);
      vd->lev[l].size[i].reg = moved(vd->lev[l].size[i].reg, regs);
    }
}

void lower_mpmd_merge(const Program *p, Code *v, Code *s, Code *out) {
  memset(out, 0, sizeof *out);
  out->n = out->cap = v->n + s->n;
  out->nviews = out->capviews = v->nviews + s->nviews;
  out->nregs = v->nregs + s->nregs;
  out->code = malloc(sizeof *out->code * (size_t)(out->n ? out->n : 1));
  out->views = malloc(sizeof *out->views * (size_t)(out->nviews ? out->nviews : 1));
  out->reg_name = calloc((size_t)(out->nregs ? out->nregs : 1), sizeof *out->reg_name);
  if (!out->code || !out->views || !out->reg_name) abort();
  if (v->n) memcpy(out->code, v->code, sizeof *out->code * (size_t)v->n);
  if (s->n) memcpy(out->code + v->n, s->code, sizeof *out->code * (size_t)s->n);
  if (v->nviews) memcpy(out->views, v->views, sizeof *out->views * (size_t)v->nviews);
  if (s->nviews) memcpy(out->views + v->nviews, s->views, sizeof *out->views * (size_t)s->nviews);
  for (int i = 0; i < v->nregs && v->reg_name; i++) out->reg_name[i] = v->reg_name[i];
  for (int i = 0; i < s->nregs && s->reg_name; i++) out->reg_name[v->nregs + i] = s->reg_name[i];
  for (int i = v->n; i < out->n; i++) move_instr(&out->code[i], v->nregs, v->nviews, v->n);
  for (int i = v->nviews; i < out->nviews; i++) move_view(&out->views[i], v->nregs);
  out->mutant = v->mutant;
  out->p = p;
  out->split = v->n;
  lower_free(v);
  lower_free(s);
}
