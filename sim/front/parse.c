/* sim/front/parse.c -- recursive-descent parser for ref and value expressions. */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 200 /* nesting bound: deep input is an error, not a stack overflow */

typedef struct {
  Arena *a;
  const char *s;
  size_t pos;
  const Loc *map; /* map[i]: the file position of byte i of s */
  Diag *d;
  bool failed;
  int depth;
} Parser;


static Loc here(Parser *p) { return p->map[p->pos]; }

static void fail(Parser *p, const char *fmt, const char *arg) {
  if (p->failed) return;
  char msg[600];
  snprintf(msg, sizeof msg, fmt, arg);
  diag_set(p->d, D_IN_EXPR, here(p), msg);
  diag_note(p->d, "in the expression \"%.*s\"", (int)strcspn(p->s, "\n") < 200 ? (int)strcspn(p->s, "\n") : 200, p->s);
  p->failed = true;
}

/* The character at pos, whole even when it takes several UTF-8 bytes. */
static const char *utf8_char(Parser *p) {
  static char buf[8];
  const unsigned char *c = (const unsigned char *)p->s + p->pos;
  int n = *c < 0x80 ? 1 : *c >= 0xf0 ? 4 : *c >= 0xe0 ? 3 : *c >= 0xc0 ? 2 : 1;
  int k = 0;
  while (k < n && c[k]) buf[k] = (char)c[k], k++;
  buf[k] = '\0';
  return buf;
}

static void skip_ws(Parser *p) {
  while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos])) p->pos++;
}

static bool peek_str(Parser *p, const char *t) {
  skip_ws(p);
  return strncmp(p->s + p->pos, t, strlen(t)) == 0;
}

static bool is_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Accepts punctuation t (not a prefix of a longer operator in `longer`). */
static bool accept(Parser *p, const char *t) {
  if (!peek_str(p, t)) return false;
  p->pos += strlen(t);
  return true;
}

static void expect(Parser *p, const char *t, const char *what) {
  if (!accept(p, t)) fail(p, "expected %s", what);
}

static Expr *node(Parser *p, ExprKind k, Loc l) {
  Expr *e = arena_alloc(p->a, sizeof *e);
  e->kind = k;
  e->loc = l;
  return e;
}

static Expr *parse_expr(Parser *p);

/* A growable argument list in the arena. */
typedef struct {
  Expr **v;
  const char **kw;
  Loc *kwloc;
  int n, cap;
} ArgList;

static void args_push(Parser *p, ArgList *l, Expr *e, const char *kw, Loc kwl) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 4;
    Expr **v = arena_alloc(p->a, sizeof *v * cap);
    const char **k = arena_alloc(p->a, sizeof *k * cap);
    Loc *kl = arena_alloc(p->a, sizeof *kl * cap);
    if (l->n) {
      memcpy(v, l->v, sizeof *v * l->n);
      memcpy(k, l->kw, sizeof *k * l->n);
      memcpy(kl, l->kwloc, sizeof *kl * l->n);
    }
    l->v = v;
    l->kw = k;
    l->kwloc = kl;
    l->cap = cap;
  }
  l->v[l->n] = e;
  l->kwloc[l->n] = kwl;
  l->kw[l->n++] = kw;
}

static char *ident(Parser *p) {
  skip_ws(p);
  size_t b = p->pos;
  if (!isalpha((unsigned char)p->s[b]) && p->s[b] != '_') return NULL;
  while (is_ident_char(p->s[p->pos])) p->pos++;
  size_t n = p->pos - b;
  char *r = arena_alloc(p->a, n + 1);
  memcpy(r, p->s + b, n);
  return r;
}

/* args := [arg (',' arg)*] up to `close`; keyword args allowed when kw. */
static void parse_args(Parser *p, ArgList *l, const char *close, bool kw) {
  if (accept(p, close)) return;
  do {
    if (peek_str(p, close)) break; /* trailing comma */
    const char *name = NULL;
    skip_ws(p);
    size_t save = p->pos;
    Loc kwl = here(p);
    char *id = kw ? ident(p) : NULL;
    if (id && accept(p, "=") && !peek_str(p, "=")) name = id;
    else p->pos = save;
    Expr *e = parse_expr(p);
    if (p->failed) return;
    args_push(p, l, e, name, kwl);
  } while (accept(p, ","));
  expect(p, close, close[0] == ')' ? "')'" : "']'");
}

static Expr *parse_number(Parser *p) {
  Loc l = here(p);
  const char *b = p->s + p->pos;
  char *end;
  size_t n = strspn(b, "0123456789");
  bool isfloat = b[n] == '.' || b[n] == 'e' || b[n] == 'E' || (n == 0 && b[0] == '.');
  if (b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) isfloat = false;
  errno = 0;
  if (isfloat) {
    Expr *e = node(p, EX_FLOAT, l);
    e->fval = strtod(b, &end);
    p->pos += (size_t)(end - b);
    return e;
  }
  Expr *e = node(p, EX_INT, l);
  unsigned long long v = strtoull(b, &end, 0);
  if (errno == ERANGE || v > (unsigned long long)INT64_MAX) {
    char lit[64];
    size_t k = strspn(b, "0123456789xXabcdefABCDEF");
    snprintf(lit, sizeof lit, "%.*s", (int)(k < 40 ? k : 40), b);
    fail(p, "integer literal %s is too large (the limit is 2**63 - 1)", lit);
  }
  e->ival = (int64_t)v;
  p->pos += (size_t)(end - b);
  if (is_ident_char(p->s[p->pos])) fail(p, "unexpected character after a number%s", "");
  return e;
}

static Expr *parse_name_or_call(Parser *p) {
  Loc l = here(p);
  char *id = ident(p);
  /* dotted names: pl.ds, plsc.Indices, jnp.int32, plsc.PackFormat.COMPRESSED (but not x.at / x.bitcast) */
  while (p->s[p->pos] == '.' && (!strcmp(id, "pl") || !strcmp(id, "plsc") || !strcmp(id, "jnp") || !strcmp(id, "np") ||
                                 !strcmp(id, "pltpu") || !strcmp(id, "lax") || !strcmp(id, "plsc.PackFormat"))) {
    p->pos++;
    char *rest = ident(p);
    if (!rest) {
      fail(p, "expected a name after '%s.'", id);
      return NULL;
    }
    char *j = arena_alloc(p->a, strlen(id) + strlen(rest) + 2);
    sprintf(j, "%s.%s", id, rest);
    id = j;
  }
  if (!strcmp(id, "true") || !strcmp(id, "True") || !strcmp(id, "false") || !strcmp(id, "False")) {
    Expr *e = node(p, EX_BOOL, l);
    e->ival = id[0] == 't' || id[0] == 'T';
    return e;
  }
  if (!strcmp(id, "None")) return node(p, EX_NONE, l);
  if (!strcmp(id, "nan") || !strcmp(id, "inf")) { /* float literals, as numpy spells them */
    Expr *e = node(p, EX_FLOAT, l);
    e->fval = id[0] == 'n' ? NAN : INFINITY;
    return e;
  }
  if (accept(p, "(")) {
    Expr *e = node(p, EX_CALL, l);
    e->name = id;
    e->builtin = builtin_lookup(id);
    ArgList al = {0};
    parse_args(p, &al, ")", true);
    e->args = al.v;
    e->kw = al.kw;
    e->kwloc = al.kwloc;
    e->nargs = al.n;
    return e;
  }
  Expr *e = node(p, EX_NAME, l);
  e->name = id;
  return e;
}

static Expr *parse_primary(Parser *p) {
  skip_ws(p);
  Loc l = here(p);
  char c = p->s[p->pos];
  if (accept(p, "...")) return node(p, EX_ELLIPSIS, l);
  if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)p->s[p->pos + 1]))) return parse_number(p);
  if (isalpha((unsigned char)c) || c == '_') return parse_name_or_call(p);
  if (accept(p, "(")) {
    Expr *e = parse_expr(p);
    if (p->failed) return NULL;
    if (accept(p, ",")) { /* a tuple: (a, b, ...) */
      Expr *t = node(p, EX_LIST, l);
      ArgList al = {0};
      args_push(p, &al, e, NULL, e->loc);
      parse_args(p, &al, ")", false);
      t->args = al.v;
      t->nargs = al.n;
      return t;
    }
    expect(p, ")", "')'");
    return e;
  }
  if (accept(p, "[")) {
    Expr *e = node(p, EX_LIST, l);
    ArgList al = {0};
    parse_args(p, &al, "]", false);
    e->args = al.v;
    e->nargs = al.n;
    return e;
  }
  if (!c) fail(p, "unexpected end of the expression%s", "");
  else fail(p, "unexpected character '%s'", utf8_char(p));
  return NULL;
}

/* entry := '...' | [expr] ':' [expr] [':' [expr]] | expr */
static Expr *parse_entry(Parser *p) {
  skip_ws(p);
  Loc l = here(p);
  Expr *lo = NULL;
  if (!peek_str(p, ":")) {
    lo = parse_expr(p);
    if (p->failed || !peek_str(p, ":")) return lo;
  }
  Expr *s = node(p, EX_SLICE, l);
  s->a = lo;
  accept(p, ":");
  if (!peek_str(p, ":") && !peek_str(p, ",") && !peek_str(p, "]")) s->b = parse_expr(p);
  if (accept(p, ":") && !peek_str(p, ",") && !peek_str(p, "]")) s->c = parse_expr(p);
  return s;
}

static void parse_subscript(Parser *p, Expr *e) {
  ArgList al = {0};
  if (peek_str(p, "]")) {
    fail(p, "empty subscript: write x[...] for the whole ref%s", "");
    return;
  }
  do {
    if (peek_str(p, "]")) break;
    Expr *en = parse_entry(p);
    if (p->failed) return;
    args_push(p, &al, en, NULL, en->loc);
  } while (accept(p, ","));
  expect(p, "]", "']'");
  e->args = al.v;
  e->nargs = al.n;
}

static Expr *parse_bitcast(Parser *p, Expr *base, Loc l) {
  Expr *e = node(p, EX_BITCAST, l);
  e->a = base;
  expect(p, "(", "'(' after bitcast");
  skip_ws(p);
  Loc tl = here(p);
  char *id = ident(p);
  if (id && (!strcmp(id, "jnp") || !strcmp(id, "np")) && accept(p, ".")) id = ident(p);
  if (!id || !dtype_lookup(id, &e->dtype)) {
    if (!p->failed) {
      if (id) dtype_unknown(p->d, tl, id);
      else diag_set(p->d, D_IN_EXPR, tl, "bitcast needs a dtype name such as int16 or float32");
      p->failed = true;
    }
    return NULL;
  }
  expect(p, ")", "')'");
  return e;
}

static void unknown_method(Parser *p) {
  static const char *const methods[] = {"at", "bitcast", "reshape"};
  size_t b = p->pos + 1, e = b;
  while (is_ident_char(p->s[e])) e++;
  char name[64], msg[200];
  snprintf(name, sizeof name, "%.*s", (int)(e - b < 60 ? e - b : 60), p->s + b);
  const char *near = names_nearest(name, methods, 3);
  if (near) snprintf(msg, sizeof msg, "unknown view method '.%s'; did you mean '.%s'?", name, near);
  else snprintf(msg, sizeof msg, "unknown view method '.%s': refs have .at[...], .bitcast(dtype) and .reshape(...)", name);
  fail(p, "%s", msg);
}

static Expr *parse_postfix(Parser *p) {
  Expr *e = parse_primary(p);
  int chain = 0;
  while (!p->failed) {
    skip_ws(p);
    Loc l = here(p);
    if ((p->s[p->pos] == '[' || p->s[p->pos] == '.') && p->depth + ++chain > MAX_DEPTH) {
      fail(p, "the expression is nested too deeply (more than %s levels)", "200");
      break;
    }
    if (accept(p, "[")) {
      Expr *s = node(p, EX_SUBSCRIPT, l);
      s->a = e;
      parse_subscript(p, s);
      e = s;
    } else if (peek_str(p, ".at") && !is_ident_char(p->s[p->pos + 3])) {
      p->pos += 3;
      Expr *s = node(p, EX_AT, l);
      s->a = e;
      expect(p, "[", "'[' after .at");
      if (!p->failed) parse_subscript(p, s);
      e = s;
    } else if (peek_str(p, ".bitcast") && !is_ident_char(p->s[p->pos + 8])) {
      p->pos += 8;
      e = parse_bitcast(p, e, l);
    } else if (peek_str(p, ".reshape") && !is_ident_char(p->s[p->pos + 8])) {
      p->pos += 8;
      Expr *s = node(p, EX_RESHAPE, l);
      s->a = e;
      expect(p, "(", "'(' after reshape");
      ArgList al = {0};
      if (!p->failed) parse_args(p, &al, ")", false);
      s->args = al.v;
      s->nargs = al.n;
      e = s;
    } else if (p->s[p->pos] == '.' && isalpha((unsigned char)p->s[p->pos + 1])) {
      unknown_method(p);
    } else {
      break;
    }
  }
  return e;
}

/* Operators come from EXPR_OPS (isa/value.h): its precedence column is the
 * parser's level, loosest first, and each level is either prefix (not; the
 * unary - + ~) or infix.  A word operator matches as a whole word; a
 * one-character symbol does not match the start of a doubled or augmented
 * token ("//", "<<", "**", "+="), and a longer spelling wins ("<=" over "<"). */
#define LEVEL_NOT (expr_op_prec(OP_NOT))
#define LEVEL_UNARY (expr_op_prec(OP_NEG))

static size_t op_matches(Parser *p, ExprOp op) {
  const char *s = p->s + p->pos, *t = expr_op_text(op);
  size_t n = strlen(t);
  if (isalpha((unsigned char)t[0])) return strncmp(s, t, n) || is_ident_char(s[n]) ? 0 : n;
  if (strncmp(s, t, n)) return 0;
  if (n == 1 && expr_op_arity(op) == 2 && (s[1] == t[0] || s[1] == '=')) return 0;
  return n;
}

/* The longest operator of `arity` at `level` that starts here, consumed;
 * OP_NONE when none does. */
static ExprOp match_level(Parser *p, int level, int arity) {
  skip_ws(p);
  ExprOp best = OP_NONE;
  size_t bn = 0;
  for (int i = 1; i < EXPR_OP_COUNT; i++) {
    if (expr_op_prec((ExprOp)i) != level || expr_op_arity((ExprOp)i) != arity) continue;
    size_t n = op_matches(p, (ExprOp)i);
    if (n > bn) best = (ExprOp)i, bn = n;
  }
  p->pos += bn;
  return best;
}

static ExprOp match_unary(Parser *p, int level) { return match_level(p, level, 1); }
static ExprOp match_op(Parser *p, int level) { return match_level(p, level, 2); }

static Expr *parse_unary(Parser *p) {
  skip_ws(p);
  Loc l = here(p);
  ExprOp op = match_unary(p, LEVEL_UNARY);
  if (op == OP_NONE) return parse_postfix(p);
  if (++p->depth > MAX_DEPTH) {
    fail(p, "the expression is nested too deeply (more than %s levels)", "200");
    return NULL;
  }
  Expr *e = node(p, EX_UNARY, l);
  e->op = op;
  e->a = parse_unary(p);
  p->depth--;
  if (p->failed) return NULL;
  /* fold literal negation so that -3 is a static literal */
  if (e->a && op == OP_NEG && e->a->kind == EX_INT) {
    e->a->ival = -e->a->ival;
    e->a->loc = l;
    return e->a;
  }
  if (e->a && op == OP_NEG && e->a->kind == EX_FLOAT) {
    e->a->fval = -e->a->fval;
    e->a->loc = l;
    return e->a;
  }
  return e;
}

static Expr *parse_level(Parser *p, int level);

static Expr *parse_not(Parser *p);

/* An operand of an operator at `level`: the next tighter level. */
static Expr *parse_operand(Parser *p, int level) {
  if (level + 1 == LEVEL_NOT) return parse_not(p);
  if (level + 1 == LEVEL_UNARY) return parse_unary(p);
  return parse_level(p, level + 1);
}

static Expr *parse_not(Parser *p) {
  skip_ws(p);
  Loc l = here(p);
  ExprOp op = match_unary(p, LEVEL_NOT);
  if (op == OP_NONE) return parse_level(p, LEVEL_NOT + 1);
  if (++p->depth > MAX_DEPTH) {
    fail(p, "the expression is nested too deeply (more than %s levels)", "200");
    return NULL;
  }
  Expr *e = node(p, EX_UNARY, l);
  e->op = op;
  e->a = parse_not(p);
  p->depth--;
  return e;
}

static Expr *parse_level(Parser *p, int level) {
  Expr *e = parse_operand(p, level);
  int chain = 0; /* a left-leaning chain deepens the tree: bound it like nesting */
  while (!p->failed) {
    skip_ws(p);
    Loc l = here(p);
    ExprOp op = match_op(p, level);
    if (op == OP_NONE) break;
    if (p->depth + ++chain > MAX_DEPTH) {
      fail(p, "the expression is nested too deeply (more than %s levels)", "200");
      break;
    }
    Expr *b = node(p, EX_BINARY, l);
    b->op = op;
    b->a = e;
    b->b = parse_operand(p, level);
    e = b;
  }
  return e;
}

static Expr *parse_expr(Parser *p) {
  if (++p->depth > MAX_DEPTH) {
    fail(p, "the expression is nested too deeply (more than %s levels)", "200");
    return NULL;
  }
  Expr *e = parse_level(p, 0);
  p->depth--;
  return e;
}

Expr *expr_parse(Arena *a, const char *text, Loc at, Diag *d) {
  size_t n = strlen(text);
  Loc *map = malloc(sizeof *map * (n + 1));
  if (!map) abort();
  Loc l = at;
  for (size_t i = 0; i <= n; i++) {
    map[i] = l;
    if (i < n && text[i] == '\n') l.line++, l.col = 1;
    else if (i < n && ((unsigned char)text[i] & 0xc0) != 0x80) l.col++;
  }
  Expr *e = expr_parse_mapped(a, text, map, d);
  free(map);
  return e;
}

Expr *expr_parse_mapped(Arena *a, const char *text, const Loc *map, Diag *d) {
  Parser p = {a, text, 0, map, d, false, 0};
  Expr *e = parse_expr(&p);
  skip_ws(&p);
  if (!p.failed && p.s[p.pos]) {
    char c = p.s[p.pos];
    if (isalnum((unsigned char)c) || strchr("_([\"'.", c))
      fail(&p, "unexpected '%s' after the end of the expression (an operator or a comma is missing)", utf8_char(&p));
    else if (strchr(")]}", c))
      fail(&p, "unexpected '%s' after the end of the expression", utf8_char(&p));
    else
      fail(&p, "unexpected character '%s'", utf8_char(&p));
  }
  if (p.failed) return NULL;
  e->text = arena_strdup(a, text);
  return e;
}

