/* lowering/asm.c -- printing and parsing lowered code. */
#include "asm.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
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

/* ---- the fields of an instruction's text ---------------------------------- */
typedef enum { AK_REG, AK_VIEW, AK_INT, AK_FIMM, AK_OP, AK_DTYPE, AK_TARGET, AK_ADD, AK_FLAGS, AK_LOG, AK_SHAPE, AK_AT, AK_ID } AsmKind;

/* Every key, in printing order, with the form letter that admits it (0:
 * every instruction) and, for registers, views and integers, its Instr
 * member.  The form (isa.h) decides which keys an instruction has. */
static const struct {
  const char *key;
  char letter;
  AsmKind kind;
  size_t off;
} fields[] = {
    {"d", 'D', AK_REG, offsetof(Instr, d)},           {"a", 'A', AK_REG, offsetof(Instr, a)},
    {"b", 'B', AK_REG, offsetof(Instr, b)},           {"c", 'C', AK_REG, offsetof(Instr, c)},
    {"mask", 'M', AK_REG, offsetof(Instr, mask)},     {"v", 'V', AK_VIEW, offsetof(Instr, view)},
    {"v2", 'W', AK_VIEW, offsetof(Instr, view2)},     {"sem", 'X', AK_VIEW, offsetof(Instr, view3)},
    {"offsets", 'O', AK_VIEW, offsetof(Instr, view4)}, {"imm", 'I', AK_INT, offsetof(Instr, imm)},
    {"fimm", 'I', AK_FIMM, 0},                        {"op", 'S', AK_OP, 0},
    {"ty", 'T', AK_DTYPE, offsetof(Instr, ty)},       {"uty", 'U', AK_DTYPE, offsetof(Instr, uty)},
    {"target", 'J', AK_TARGET, 0},                    {"add", 'F', AK_ADD, 0},
    {"flags", 'F', AK_FLAGS, 0},                      {"priority", 'F', AK_INT, offsetof(Instr, prio)},
    {"log", 'G', AK_LOG, 0},
    {"shape", 'R', AK_SHAPE, 0},                      {"at", 0, AK_AT, 0},
    {"id", 0, AK_ID, 0},
};
#define NFIELDS (int)(sizeof fields / sizeof fields[0])

/* The form's letter for field k: upper case required, lower case optional,
 * 0 when op has no such field.  A run (N) is the register a and imm. */
static char field_form(Opcode op, int k) {
  char l = fields[k].letter;
  if (!l) return '*'; /* at=, id=: every instruction has them, none needs them */
  char f = isa_operand(op, l);
  if (!f && (l == 'A' || l == 'I')) f = isa_operand(op, 'N');
  return f;
}

static int *reg_at(const Instr *in, int k) { return (int *)((char *)in + fields[k].off); }
static int64_t *int_at(const Instr *in, int k) { return (int64_t *)((char *)in + fields[k].off); }
static Dtype *dtype_at(const Instr *in, int k) { return (Dtype *)((char *)in + fields[k].off); }

/* ---- printing (continued) -------------------------------------------------- */
static void print_op(FILE *f, ExprOp op) {
  if (op != OP_NONE) fprintf(f, " op=\"%s\"", expr_op_asm(op));
}

static void print_flags(FILE *f, unsigned flags) {
  for (int b = 0, first = 1; b < IF_COUNT; b++)
    if (flags & (1u << b)) fprintf(f, "%s%s", first ? " flags=" : ",", isa_flag_key(b)), first = 0;
}

/* A float constant's value: the shortest float64 text, which reads back exactly. */
static void print_fimm(FILE *f, const Instr *in) {
  if (in->op != I_CONST || in->ty != DT_FLOAT64) return;
  char t[64];
  dtype_format_float(in->fimm, true, t, sizeof t);
  fprintf(f, " fimm=%s", t);
}

static void print_field(FILE *f, const Instr *in, int k) {
  const char *key = fields[k].key;
  switch (fields[k].kind) {
  case AK_REG: if (*reg_at(in, k) >= 0) fprintf(f, " %s=%%%d", key, *reg_at(in, k)); break;
  case AK_VIEW: if (*reg_at(in, k) >= 0) fprintf(f, " %s=v%d", key, *reg_at(in, k)); break;
  case AK_INT: if (*int_at(in, k)) fprintf(f, " %s=%lld", key, (long long)*int_at(in, k)); break;
  case AK_FIMM: print_fimm(f, in); break;
  case AK_OP: print_op(f, in->sub); break;
  case AK_DTYPE: fprintf(f, " %s=%s", key, dtype_name(*dtype_at(in, k))); break;
  case AK_TARGET: fprintf(f, " target=%d", in->target); break;
  case AK_ADD: if (in->add) fprintf(f, " add=true"); break;
  case AK_FLAGS: print_flags(f, in->flags); break;
  case AK_LOG: if (in->log) fprintf(f, " log=%c", in->log); break;
  case AK_SHAPE:
    if (!in->rank) break;
    fprintf(f, " shape=(");
    for (int i = 0; i < in->rank; i++) fprintf(f, "%s%lld", i ? "," : "", (long long)in->shape[i]);
    fprintf(f, ")");
    break;
  case AK_AT: fprintf(f, " at=%d:%d", in->loc.line, in->loc.col); break;
  case AK_ID: fprintf(f, " id=%d", in->op_id); break;
  }
}

/* Writes exactly the fields of the instruction's form (d as the prefix). */
static void print_instr(FILE *f, const Instr *in, int pc) {
  fprintf(f, "%d: ", pc);
  if (field_form(in->op, 0) && in->d >= 0) fprintf(f, "%%%d = ", in->d);
  fprintf(f, "%s", isa_mnemonic(in->op));
  for (int k = 1; k < NFIELDS; k++)
    if (field_form(in->op, k)) print_field(f, in, k);
  fprintf(f, "\n");
}

void asm_print(const Code *c, FILE *f) {
  fprintf(f, "# sc-sim lowered code: kernel %s, lowering %s, %d registers\n",
          c->split ? "mpmd (vector_subcore, then scalar_subcore)" : c->p->kernel == KERNEL_VECTOR ? "vector_subcore" : "scalar_subcore", mutant_name(c->mutant), c->nregs);
  for (int i = 0; i < c->nviews; i++) print_view(f, &c->views[i], i);
  for (int i = 0; i < c->n; i++) {
    if (c->split && i == c->split) fprintf(f, "# mpmd: the scalar_subcore mesh's code; the scalar subcores start here\n");
    print_instr(f, &c->code[i], i);
  }
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

static bool parse_flag(Asm *A, bool *out) {
  char buf[32];
  if (!word(A, buf, sizeof buf) || (strcmp(buf, "true") && strcmp(buf, "false"))) return afail(A, "add is true or false%s", "");
  *out = buf[0] == 't';
  return true;
}

/* KEY,KEY,... of isa.h ISA_FLAGS */
static bool parse_flags(Asm *A, unsigned *out) {
  char buf[32];
  do {
    unsigned bit;
    if (!word(A, buf, sizeof buf)) return false;
    if (!isa_flag_lookup(buf, &bit)) return afail(A, "unknown flag '%s'", buf);
    *out |= bit;
  } while (lit(A, ","));
  return true;
}

static bool parse_log(Asm *A, char *out) {
  sp(A);
  char k = A->s[A->pos];
  if (k != 'L' && k != 'O' && k != 'N') return afail(A, "log is L, O or N%s", "");
  *out = k;
  A->pos++;
  return true;
}

static bool parse_shape(Asm *A, Instr *in) {
  if (!lit(A, "(")) return afail(A, "expected (d0,d1,...)%s", "");
  while (!lit(A, ")")) {
    if (in->rank && !lit(A, ",")) return afail(A, "expected ',' or ')'%s", "");
    if (in->rank >= MAX_RANK || !number(A, &in->shape[in->rank++])) return afail(A, "bad shape%s", "");
  }
  return true;
}

static bool parse_int(Asm *A, int *out) {
  int64_t v;
  if (!number(A, &v)) return false;
  *out = (int)v;
  return true;
}

static bool parse_fimm(Asm *A, double *out) {
  sp(A);
  char *end;
  *out = strtod(A->s + A->pos, &end);
  if (end == A->s + A->pos) return afail(A, "expected a number%s", "");
  A->pos = (size_t)(end - A->s);
  return true;
}

static bool parse_dtype(Asm *A, Dtype *out) {
  char buf[32];
  if (!word(A, buf, sizeof buf)) return false;
  if (!dtype_lookup(buf, out)) return afail(A, "unknown dtype '%s'", buf);
  return true;
}

static bool parse_at(Asm *A, Instr *in) {
  int64_t l, c;
  if (!number(A, &l) || !lit(A, ":") || !number(A, &c)) return afail(A, "at takes LINE:COL%s", "");
  in->loc = (Loc){A->p->file, (int)l, (int)c};
  return true;
}

/* The value of field k. */
static bool parse_field(Asm *A, Instr *in, int k) {
  switch (fields[k].kind) {
  case AK_REG: return reg(A, reg_at(in, k));
  case AK_VIEW: return view_ref(A, reg_at(in, k));
  case AK_INT: return number(A, int_at(in, k));
  case AK_FIMM: return parse_fimm(A, &in->fimm);
  case AK_OP: return parse_op_text(A, &in->sub);
  case AK_DTYPE: return parse_dtype(A, dtype_at(in, k));
  case AK_TARGET: return parse_int(A, &in->target);
  case AK_ADD: return parse_flag(A, &in->add);
  case AK_FLAGS: return parse_flags(A, &in->flags);
  case AK_LOG: return parse_log(A, &in->log);
  case AK_SHAPE: return parse_shape(A, in);
  case AK_AT: return parse_at(A, in);
  case AK_ID: return parse_int(A, &in->op_id);
  }
  return false;
}

/* The field `key` names, if the instruction's form has it (errors at kpos). */
static int field_of(Asm *A, Opcode op, const char *key, size_t kpos) {
  for (int k = 0; k < NFIELDS; k++) {
    if (strcmp(fields[k].key, key)) continue;
    if (field_form(op, k)) return k;
    char msg[160];
    snprintf(msg, sizeof msg, "'%s' is not an operand of %s", key, isa_mnemonic(op));
    return afail_at(A, kpos, "%s", msg), -1;
  }
  return afail_at(A, kpos, "unknown field '%s'", key), -1;
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
  size_t dpos = A->pos;
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
  if (d >= 0 && !field_form(op, 0)) return field_of(A, op, "d", dpos) >= 0;
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
    int k = field_of(A, op, key, kpos);
    if (k < 0 || !parse_field(A, in, k)) return false;
  }
  if (in->loc.line == 0) in->loc = (Loc){A->p->file, A->line0.line, A->line0.col};
  return true;
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
  for (int k = 0; k < NFIELDS; k++) {
    char f = field_form(in->op, k);
    bool slot = fields[k].kind == AK_REG || fields[k].kind == AK_VIEW;
    if (!slot || !isupper((unsigned char)f) || *reg_at(in, k) >= 0) continue;
    return asm_fail_at(A, in, fields[k].kind == AK_REG ? "%s needs its operand %s (a register such as %%3)"
                                                       : "%s needs its operand %s (a view such as v0)", fields[k].key);
  }
  bool run = isa_operand(in->op, 'N');
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
    if (isa_operand(in->op, 'J') && (in->target < 0 || in->target > A->c->n)) bad = true;
    if (!bad) continue;
    diag_set(A->d, D_IN_EXPR, in->loc, "an instruction names a view or jump target that does not exist");
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
