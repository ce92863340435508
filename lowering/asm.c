/* lowering/asm.c -- printing and parsing lowered code. */
#include "asm.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

/* ---- printing ------------------------------------------------------------ */
static void print_operand(FILE *f, Operand o) {
  if (o.reg >= 0 && o.imm) fprintf(f, "%%%d+%lld", o.reg, (long long)o.imm);
  else if (o.reg >= 0) fprintf(f, "%%%d", o.reg);
  else fprintf(f, "%lld", (long long)o.imm);
}

static void print_level(FILE *f, const Level *lv) {
  if (lv->kind == TR_BITCAST) {
    fprintf(f, ".bitcast(%s)", dtype_name(lv->dtype));
    return;
  }
  if (lv->kind == TR_RESHAPE) {
    fprintf(f, ".reshape(");
    for (int d = 0; d < lv->rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)lv->shape[d]);
    fprintf(f, ")");
    return;
  }
  fprintf(f, "[");
  for (int d = 0; d < lv->n; d++) {
    fprintf(f, "%s", d ? ", " : "");
    print_operand(f, lv->start[d]);
    if (lv->ek[d] != IX_SLICE) continue;
    fprintf(f, ":");
    print_operand(f, lv->size[d]);
    if (lv->stride[d] != 1) fprintf(f, ":%lld", (long long)lv->stride[d]);
  }
  fprintf(f, "]");
}

static void print_view(FILE *f, const VDesc *v, int id) {
  fprintf(f, "view v%d = %s", id, v->ref->name);
  for (int k = 0; k < v->nlev; k++) print_level(f, &v->lev[k]);
  fprintf(f, "\n");
}

static void print_instr(FILE *f, const Instr *in, int pc) {
  fprintf(f, "%d: ", pc);
  if (in->d >= 0) fprintf(f, "%%%d = ", in->d);
  fprintf(f, "%s", isa_mnemonic(in->op));
  const int regs[4] = {in->a, in->b, in->c, in->mask};
  static const char *const rk[4] = {"a", "b", "c", "mask"};
  for (int i = 0; i < 4; i++)
    if (regs[i] >= 0) fprintf(f, " %s=%%%d", rk[i], regs[i]);
  const int views[4] = {in->view, in->view2, in->view3, in->view4};
  static const char *const vk[4] = {"v", "v2", "sem", "offsets"};
  for (int i = 0; i < 4; i++)
    if (views[i] >= 0) fprintf(f, " %s=v%d", vk[i], views[i]);
  if (in->imm) fprintf(f, " imm=%lld", (long long)in->imm);
  if (in->op == I_CONST && in->ty == DT_FLOAT64) {
    char t[64];
    dtype_format_float(in->fimm, true, t, sizeof t); /* shortest float64 text: reads back exactly */
    fprintf(f, " fimm=%s", t);
  }
  if (in->sub != OP_NONE) fprintf(f, " op=\"%s\"", expr_op_asm(in->sub));
  if (strchr(isa_form(in->op), 'T')) fprintf(f, " ty=%s", dtype_name(in->ty));
  if (strchr(isa_form(in->op), 'U')) fprintf(f, " uty=%s", dtype_name(in->uty));
  if (strchr(isa_form(in->op), 'J')) fprintf(f, " target=%d", in->target);
  if (in->add) fprintf(f, " add=true");
  for (int b = 0, first = 1; b < IF_COUNT; b++)
    if (in->flags & (1u << b)) fprintf(f, "%s%s", first ? " flags=" : ",", isa_flag_key(b)), first = 0;
  if (in->log) fprintf(f, " log=%c", in->log);
  if (in->rank) {
    fprintf(f, " shape=(");
    for (int i = 0; i < in->rank; i++) fprintf(f, "%s%lld", i ? "," : "", (long long)in->shape[i]);
    fprintf(f, ")");
  }
  fprintf(f, " at=%d:%d id=%d\n", in->loc.line, in->loc.col, in->op_id);
}

void asm_print(const Code *c, FILE *f) {
  fprintf(f, "# sc-sim lowered code: kernel %s, lowering %s, %d registers\n",
          c->p->kernel == KERNEL_VECTOR ? "vector_subcore" : "scalar_subcore", mutant_name(c->mutant), c->nregs);
  for (int i = 0; i < c->nviews; i++) print_view(f, &c->views[i], i);
  for (int i = 0; i < c->n; i++) print_instr(f, &c->code[i], i);
}

/* ---- parsing ---------------------------------------------------------------- */
typedef struct {
  const Program *p;
  const char *s;
  size_t pos;
  Loc at;       /* the position of s[0] */
  const Loc *map; /* or the position of every byte */
  Loc line0;    /* position of the current line's start */
  Diag *d;
  bool failed;
  Code *c;
} Asm;

static Loc here(const Asm *A) { return A->map ? A->map[A->pos] : expr_loc_at(A->s, A->at, A->pos); }

static bool afail(Asm *A, const char *fmt, const char *arg);

static bool afail_at(Asm *A, size_t pos, const char *fmt, const char *arg) {
  A->pos = pos;
  return afail(A, fmt, arg);
}

static bool afail(Asm *A, const char *fmt, const char *arg) {
  if (A->failed) return false;
  char msg[400];
  snprintf(msg, sizeof msg, fmt, arg);
  diag_set(A->d, D_IN_EXPR, here(A), msg);
  A->failed = true;
  return false;
}

static void sp(Asm *A) {
  while (A->s[A->pos] == ' ' || A->s[A->pos] == '\t') A->pos++;
}

static bool lit(Asm *A, const char *t) {
  sp(A);
  size_t n = strlen(t);
  if (strncmp(A->s + A->pos, t, n)) return false;
  A->pos += n;
  return true;
}

static bool word(Asm *A, char *buf, size_t n) {
  sp(A);
  size_t b = A->pos;
  while (isalnum((unsigned char)A->s[A->pos]) || A->s[A->pos] == '_' || A->s[A->pos] == '.') A->pos++;
  size_t len = A->pos - b;
  if (!len || len >= n) return afail(A, "expected a name%s", "");
  memcpy(buf, A->s + b, len);
  buf[len] = '\0';
  return true;
}

static bool number(Asm *A, int64_t *v) {
  sp(A);
  char *end;
  errno = 0;
  long long x = strtoll(A->s + A->pos, &end, 10);
  if (end == A->s + A->pos || errno) return afail(A, "expected an integer%s", "");
  A->pos = (size_t)(end - A->s);
  *v = x;
  return true;
}

static bool reg(Asm *A, int *r) {
  int64_t v;
  size_t at = A->pos;
  if (!lit(A, "%")) return afail(A, "expected a register such as %%3%s", "");
  if (!number(A, &v)) return false;
  if (v < 0 || v > 1000000) return afail(A, "register number out of range%s", "");
  if (v >= lower_max_regs(A->p)) {
    char most[160];
    snprintf(most, sizeof most, "%lld (sc-sim holds at most %lld registers across the mesh's subcores)",
             (long long)lower_max_regs(A->p), LOWER_MAX_REG_SLOTS);
    return afail_at(A, at, "register number out of range: this mesh allows registers below %s", most);
  }
  *r = (int)v;
  if (*r >= A->c->nregs) A->c->nregs = *r + 1;
  return true;
}

static bool operand(Asm *A, Operand *o) {
  o->reg = -1;
  o->imm = 0;
  sp(A);
  if (A->s[A->pos] == '%') {
    if (!reg(A, &o->reg)) return false;
    if (lit(A, "+")) return number(A, &o->imm);
    return true;
  }
  return number(A, &o->imm);
}

/* One [entries] level over shape (rank, shape); computes the result. */
static bool slice_level(Asm *A, Level *lv, int rank, const int64_t *shape, Dtype t) {
  lv->kind = TR_INDEX;
  lv->dtype = t;
  while (!lit(A, "]")) {
    if (lv->n && !lit(A, ",")) return afail(A, "expected ',' or ']'%s", "");
    if (lv->n >= MAX_RANK) return afail(A, "too many index entries%s", "");
    int d = lv->n++;
    lv->stride[d] = 1;
    lv->size[d] = (Operand){1, -1};
    if (!operand(A, &lv->start[d])) return false;
    lv->ek[d] = IX_INT;
    if (!lit(A, ":")) continue;
    lv->ek[d] = IX_SLICE;
    if (!operand(A, &lv->size[d])) return false;
    if (lit(A, ":") && !number(A, &lv->stride[d])) return false;
  }
  if (lv->n != rank) {
    char m[64];
    snprintf(m, sizeof m, "%d", rank);
    return afail(A, "the level indexes a view of rank %s with another number of entries", m);
  }
  for (int d = 0; d < lv->n; d++)
    if (lv->ek[d] == IX_SLICE) lv->shape[lv->rank++] = lv->size[d].reg >= 0 ? DYN : lv->size[d].imm;
  (void)shape;
  return true;
}

static bool parse_view(Asm *A) {
  int64_t id;
  char name[128];
  sp(A);
  size_t vpos = A->pos;
  if (!lit(A, "v") || !number(A, &id) || !lit(A, "=")) return afail(A, "expected 'view vN = REF ...'%s", "");
  if (id != A->c->nviews) return afail_at(A, vpos, "views are numbered from v0 in order%s", "");
  sp(A);
  size_t rpos = A->pos;
  while (isalnum((unsigned char)A->s[A->pos]) || A->s[A->pos] == '_') A->pos++; /* a ref name has no dots */
  if (A->pos == rpos || A->pos - rpos >= sizeof name) return afail(A, "expected a ref name%s", "");
  snprintf(name, sizeof name, "%.*s", (int)(A->pos - rpos), A->s + rpos);
  const Ref *r = program_ref(A->p, name);
  if (!r) return afail_at(A, rpos, "unknown ref '%s'", name);
  VDesc vd;
  memset(&vd, 0, sizeof vd);
  vd.ref = r;
  int rank = r->rank;
  int64_t shape[MAX_RANK];
  memcpy(shape, r->shape, sizeof shape);
  Dtype t = r->dtype;
  for (;;) {
    sp(A);
    if (A->s[A->pos] != '[' && A->s[A->pos] != '.') break;
    if (vd.nlev >= MAX_TRANSFORMS) return afail(A, "too many levels%s", "");
    Level *lv = &vd.lev[vd.nlev++];
    if (lit(A, "[")) {
      if (!slice_level(A, lv, rank, shape, t)) return false;
    } else if (lit(A, ".bitcast(")) {
      char dn[32];
      if (!word(A, dn, sizeof dn) || !dtype_lookup(dn, &lv->dtype) || !lit(A, ")")) return afail(A, "expected .bitcast(DTYPE)%s", "");
      lv->kind = TR_BITCAST;
      lv->rank = rank;
      memcpy(lv->shape, shape, sizeof shape);
      if (rank >= 2 && dtype_bits(lv->dtype) != dtype_bits(t)) lv->shape[rank - 2] = shape[rank - 2] * dtype_bits(t) / dtype_bits(lv->dtype);
    } else if (lit(A, ".reshape(")) {
      lv->kind = TR_RESHAPE;
      lv->dtype = t;
      while (!lit(A, ")")) {
        if (lv->rank && !lit(A, ",")) return afail(A, "expected ',' or ')'%s", "");
        if (lv->rank >= MAX_RANK || !number(A, &lv->shape[lv->rank++])) return false;
      }
    } else {
      return afail(A, "expected [...], .bitcast(...) or .reshape(...)%s", "");
    }
    rank = lv->rank;
    memcpy(shape, lv->shape, sizeof shape);
    t = lv->dtype;
  }
  if (A->c->nviews == A->c->capviews) {
    A->c->capviews = A->c->capviews ? A->c->capviews * 2 : 64;
    A->c->views = realloc(A->c->views, sizeof *A->c->views * (size_t)A->c->capviews);
    if (!A->c->views) abort();
  }
  A->c->views[A->c->nviews++] = vd;
  return true;
}

static bool parse_op_text(Asm *A, ExprOp *op) {
  if (!lit(A, "\"")) return afail(A, "expected a quoted operator such as \"+\"%s", "");
  size_t b = A->pos;
  while (A->s[A->pos] && A->s[A->pos] != '"') A->pos++;
  char t[16];
  snprintf(t, sizeof t, "%.*s", (int)(A->pos - b), A->s + b);
  A->pos++;
  if (expr_op_from_asm(t, op)) return true;
  return afail(A, "unknown operator \"%s\"", t);
}

static bool view_ref(Asm *A, int *v) {
  int64_t id;
  if (!lit(A, "v") || !number(A, &id)) return afail(A, "expected a view such as v0%s", "");
  *v = (int)id;
  return true;
}

static bool parse_field(Asm *A, Instr *in, const char *key) {
  char buf[32];
  if (!strcmp(key, "d")) return reg(A, &in->d);
  if (!strcmp(key, "a")) return reg(A, &in->a);
  if (!strcmp(key, "b")) return reg(A, &in->b);
  if (!strcmp(key, "c")) return reg(A, &in->c);
  if (!strcmp(key, "mask")) return reg(A, &in->mask);
  if (!strcmp(key, "v")) return view_ref(A, &in->view);
  if (!strcmp(key, "v2")) return view_ref(A, &in->view2);
  if (!strcmp(key, "sem")) return view_ref(A, &in->view3);
  if (!strcmp(key, "offsets")) return view_ref(A, &in->view4);
  if (!strcmp(key, "imm")) return number(A, &in->imm);
  if (!strcmp(key, "id")) {
    int64_t v;
    if (!number(A, &v)) return false;
    in->op_id = (int)v;
    return true;
  }
  if (!strcmp(key, "target")) {
    int64_t v;
    if (!number(A, &v)) return false;
    in->target = (int)v;
    return true;
  }
  if (!strcmp(key, "fimm")) {
    sp(A);
    char *end;
    in->fimm = strtod(A->s + A->pos, &end);
    if (end == A->s + A->pos) return afail(A, "expected a number%s", "");
    A->pos = (size_t)(end - A->s);
    return true;
  }
  if (!strcmp(key, "op")) return parse_op_text(A, &in->sub);
  if (!strcmp(key, "ty") || !strcmp(key, "uty")) {
    if (!word(A, buf, sizeof buf)) return false;
    Dtype t;
    if (!dtype_lookup(buf, &t)) return afail(A, "unknown dtype '%s'", buf);
    *(key[0] == 't' ? &in->ty : &in->uty) = t;
    return true;
  }
  if (!strcmp(key, "add")) {
    if (!word(A, buf, sizeof buf) || (strcmp(buf, "true") && strcmp(buf, "false"))) return afail(A, "add is true or false%s", "");
    in->add = buf[0] == 't';
    return true;
  }
  if (!strcmp(key, "flags")) { /* KEY,KEY,... of isa.h ISA_FLAGS */
    do {
      unsigned bit;
      if (!word(A, buf, sizeof buf)) return false;
      if (!isa_flag_lookup(buf, &bit)) return afail(A, "unknown flag '%s'", buf);
      in->flags |= bit;
    } while (lit(A, ","));
    return true;
  }
  if (!strcmp(key, "log")) {
    sp(A);
    char k = A->s[A->pos];
    if (k != 'L' && k != 'O' && k != 'N') return afail(A, "log is L, O or N%s", "");
    in->log = k;
    A->pos++;
    return true;
  }
  if (!strcmp(key, "shape")) {
    if (!lit(A, "(")) return afail(A, "expected (d0,d1,...)%s", "");
    while (!lit(A, ")")) {
      if (in->rank && !lit(A, ",")) return afail(A, "expected ',' or ')'%s", "");
      if (in->rank >= MAX_RANK || !number(A, &in->shape[in->rank++])) return afail(A, "bad shape%s", "");
    }
    return true;
  }
  if (!strcmp(key, "at")) {
    int64_t l, c;
    if (!number(A, &l) || !lit(A, ":") || !number(A, &c)) return afail(A, "at takes LINE:COL%s", "");
    in->loc = (Loc){A->p->file, (int)l, (int)c};
    return true;
  }
  return afail(A, "unknown field '%s'", key);
}

static Instr *new_instr(Code *c) {
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 256;
    c->code = realloc(c->code, sizeof *c->code * (size_t)c->cap);
    if (!c->code) abort();
  }
  Instr *in = &c->code[c->n++];
  memset(in, 0, sizeof *in);
  in->d = in->a = in->b = in->c = in->mask = in->view = in->view2 = in->view3 = in->view4 = in->op_id = -1;
  return in;
}

static bool parse_instr(Asm *A) {
  sp(A);
  if (isdigit((unsigned char)A->s[A->pos])) { /* an optional "N:" index */
    int64_t n;
    if (!number(A, &n) || !lit(A, ":")) return afail(A, "expected 'N:' before the instruction%s", "");
    if (n != A->c->n) return afail(A, "instructions are numbered from 0 in order%s", "");
  }
  int d = -1;
  sp(A);
  if (A->s[A->pos] == '%') {
    if (!reg(A, &d) || !lit(A, "=")) return afail(A, "expected '%%N = MNEMONIC ...'%s", "");
  }
  char m[64];
  Opcode op;
  size_t mpos = A->pos;
  if (!word(A, m, sizeof m)) return false;
  if (!isa_lookup(m, &op)) {
    A->pos = mpos;
    sp(A);
    return afail(A, "unknown instruction '%s' (sc-sim --list-ops lists them)", m);
  }
  Instr *in = new_instr(A->c);
  in->op = op;
  in->d = d;
  for (;;) {
    sp(A);
    char c = A->s[A->pos];
    if (!c || c == '\n' || c == '#' || c == ';') break;
    char key[32];
    size_t kpos = A->pos;
    if (!word(A, key, sizeof key) || !lit(A, "=")) return afail(A, "expected key=value%s", "");
    if (!parse_field(A, in, key)) {
      if (!strncmp(A->d->message, "unknown field", 13)) A->d->loc = A->map ? A->map[kpos] : expr_loc_at(A->s, A->at, kpos);
      return false;
    }
  }
  if (in->loc.line == 0) in->loc = (Loc){A->p->file, A->line0.line, A->line0.col};
  return true;
}

/* The registers an instruction reads or writes unconditionally: the engine
 * trusts them, so a lowering that omits one is refused here.  (The form's
 * letters say which slots may appear; sem_signal's a, b and c and a DMA's
 * filter register are optional.) */
static const char *asm_needs(Opcode op) {
  switch (op) {
  case I_CONST: case I_COORD: case I_IOTA: case I_LOAD: case I_VLOAD: return "d";
  case I_UNARY: case I_CAST: case I_BROADCAST: case I_EXTRACT: case I_MOV: case I_FROM_ELEMENTS:
  case I_VLOAD_IDX: return "da";
  case I_BINARY: case I_MINMAX: case I_FETCH_AND_ADD: return "dab";
  case I_SELECT: case I_FOR: return "dabc";
  case I_ENDFOR: return "dbc";
  case I_STORE: case I_VSTORE: case I_BRANCH_IF_FALSE: return "a";
  case I_VSTORE_IDX: case I_EXPECT: return "ab";
  case I_EXPECT_VIEW: return "b";
  case I_ENQUEUE_DMA: case I_ENQUEUE_INDIRECT_DMA: case I_WAIT_DMA: case I_WAIT_INDIRECT_DMA:
  case I_SEM_SIGNAL: case I_SEM_WAIT: case I_BARRIER: case I_JUMP: case I_COUNT: break;
  }
  return "";
}

static bool asm_fail_at(Asm *A, const Instr *in, const char *fmt, const char *arg) {
  char msg[300];
  snprintf(msg, sizeof msg, fmt, isa_mnemonic(in->op), arg);
  diag_set(A->d, D_IN_EXPR, in->loc, msg);
  return false;
}

/* Registers named, register runs (a..a+imm-1) in range, and sizes the
 * engine allocates bounded, as they are for lowered value expressions. */
static bool asm_operands(Asm *A, const Instr *in) {
  const char *need = asm_needs(in->op);
  const int slot[4] = {in->d, in->a, in->b, in->c};
  static const char *const names[4] = {"d", "a", "b", "c"};
  for (int k = 0; k < 4; k++)
    if (strchr(need, names[k][0]) && slot[k] < 0)
      return asm_fail_at(A, in, "%s needs its operand %s (a register such as %%3)", names[k]);
  bool run = in->op == I_FROM_ELEMENTS || in->op == I_VLOAD_IDX || in->op == I_VSTORE_IDX;
  int64_t most = in->op == I_FROM_ELEMENTS ? 1 << 24 : MAX_RANK;
  if (run && (in->imm < (in->op == I_FROM_ELEMENTS) || in->imm > most || in->a + in->imm > A->c->nregs))
    return asm_fail_at(A, in, "%s takes imm=N registers a..a+N-1 that exist (N from 1 to the rank%s)",
                       in->op == I_FROM_ELEMENTS ? "; any number of elements for vector.from_elements" : "");
  if (in->op == I_IOTA && (in->imm < 0 || in->imm > (1 << 24)))
    return asm_fail_at(A, in, "%s takes imm=N lanes, N from 0 to 16777216%s", "");
  int64_t n = 1;
  for (int k = 0; k < in->rank; k++) {
    if (in->op != I_EXTRACT && (in->shape[k] < 1 || (n *= in->shape[k]) > (1 << 24)))
      return asm_fail_at(A, in, "%s: shape= needs dimensions of at least 1 and at most 16777216 elements in all%s", "");
  }
  return true;
}

/* Operand references must name registers, views and targets that exist. */
static bool asm_links(Asm *A) {
  for (int i = 0; i < A->c->n; i++) {
    Instr *in = &A->c->code[i];
    if (!asm_operands(A, in)) return false;
    const int views[4] = {in->view, in->view2, in->view3, in->view4};
    bool bad = false;
    for (int k = 0; k < 4; k++) bad |= views[k] >= A->c->nviews;
    if (strchr(isa_form(in->op), 'J') && (in->target < 0 || in->target > A->c->n)) bad = true;
    if (strchr(isa_form(in->op), 'V') && in->view < 0) bad = true;
    if (!bad) continue;
    diag_set(A->d, D_IN_EXPR, in->loc, "an instruction names a view or jump target that does not exist, or lacks its view");
    return false;
  }
  return true;
}

bool asm_parse(const Program *p, const char *text, Loc at, Code *out, Diag *d) {
  memset(out, 0, sizeof *out);
  out->p = p;
  Asm A = {p, text, 0, at, text == p->lowered ? p->lowered_map : NULL, at, d, false, out};
  while (A.s[A.pos] && !A.failed) {
    A.line0 = here(&A);
    sp(&A);
    char c = A.s[A.pos];
    if (c == '#' || c == '\n' || !c) {
      while (A.s[A.pos] && A.s[A.pos] != '\n') A.pos++;
    } else if (lit(&A, "view ")) {
      parse_view(&A);
    } else {
      parse_instr(&A);
    }
    sp(&A);
    if (!A.failed && A.s[A.pos] == '#')
      while (A.s[A.pos] && A.s[A.pos] != '\n') A.pos++;
    if (!A.failed && A.s[A.pos] && A.s[A.pos] != '\n') afail(&A, "unexpected text at the end of the line%s", "");
    if (A.s[A.pos] == '\n') A.pos++;
  }
  if (A.failed || !asm_links(&A)) {
    lower_free(out);
    return false;
  }
  out->reg_name = calloc((size_t)(out->nregs ? out->nregs : 1), sizeof *out->reg_name);
  return true;
}

/* ---- the verifier of a user's lowering (SPEC §4.M) --------------------------- */
static void view_type(const VDesc *v, Dtype *t, int *rank, const int64_t **shape) {
  if (!v->nlev) {
    *t = v->ref->dtype, *rank = v->ref->rank, *shape = v->ref->shape;
    return;
  }
  const Level *lv = &v->lev[v->nlev - 1];
  *t = lv->dtype, *rank = lv->rank, *shape = lv->shape;
}

static bool verify_instr(const Code *c, const Instr *in, Diag *d) {
  const VDesc *v = in->view >= 0 ? &c->views[in->view] : NULL;
  Dtype t, t2;
  int r, r2;
  const int64_t *sh, *sh2;
  switch (in->op) {
  case I_VLOAD: case I_VSTORE: case I_VLOAD_IDX: case I_VSTORE_IDX: {
    static const char *const names[] = {"vector_load", "vector_store", "vector_load_idx", "vector_store_idx"};
    const char *name = names[in->op == I_VLOAD ? 0 : in->op == I_VSTORE ? 1 : in->op == I_VLOAD_IDX ? 2 : 3];
    if (v->ref->space != SP_VMEM) return diag_set(d, D_M_VL1, in->loc, name), false;
    view_type(v, &t, &r, &sh);
    if (in->mask >= 0 && dtype_size(t) != 4)
      return diag_set(d, D_M_VL2, in->loc, in->op == I_VLOAD || in->op == I_VLOAD_IDX ? "load" : "store"), false;
    return true;
  }
  case I_ENQUEUE_DMA:
    view_type(v, &t, &r, &sh);
    view_type(&c->views[in->view2], &t2, &r2, &sh2);
    if (t != t2) return diag_set(d, D_M_DMA1, in->loc), false;
    if (r != r2 || memcmp(sh, sh2, sizeof(int64_t) * (size_t)r)) return diag_set(d, D_M_DMA2, in->loc), false;
    return true;
  case I_ENQUEUE_INDIRECT_DMA:
  case I_WAIT_INDIRECT_DMA:
    if (c->p->kernel == KERNEL_SCALAR) {
      bool e = in->op == I_ENQUEUE_INDIRECT_DMA;
      return diag_set(d, D_M_IND1, in->loc, e ? "enqueue" : "wait", e ? "Enqueue" : "Wait"), false;
    }
    return true;
  case I_CONST: case I_COORD: case I_IOTA: case I_BINARY: case I_UNARY: case I_SELECT: case I_MINMAX: case I_CAST:
  case I_BROADCAST: case I_FROM_ELEMENTS: case I_EXTRACT: case I_MOV: case I_LOAD: case I_STORE: case I_WAIT_DMA:
  case I_SEM_SIGNAL: case I_SEM_WAIT: case I_BARRIER: case I_FETCH_AND_ADD: case I_FOR: case I_ENDFOR:
  case I_BRANCH_IF_FALSE: case I_JUMP: case I_EXPECT: case I_EXPECT_VIEW: case I_COUNT: break;
  }
  return true;
}

bool asm_verify(const Code *c, Diag *d) {
  for (int i = 0; i < c->n; i++)
    if (!verify_instr(c, &c->code[i], d)) return false;
  return true;
}
