/* lowering/expr.c -- expression trees as text: positions inside an
 * expression's string, printing (operator spellings come from
 * isa/value.h EXPR_OPS), dtype names. */
#include "expr.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>


Loc expr_loc_at(const char *text, Loc at, size_t off) {
  Loc l = at;
  for (size_t i = 0; i < off && text[i]; i++) {
    if (text[i] == '\n') {
      l.line++;
      l.col = 1;
    } else {
      l.col++;
    }
  }
  return l;
}

typedef struct {
  char *buf;
  size_t n, len;
} Out;

static void put(Out *o, const char *s) {
  size_t k = strlen(s);
  if (o->len + 1 >= o->n) return;
  if (k > o->n - 1 - o->len) k = o->n - 1 - o->len;
  memcpy(o->buf + o->len, s, k);
  o->len += k;
  o->buf[o->len] = '\0';
}

static void print_rec(const Expr *e, Out *o);

static void print_list(Expr *const *v, const char *const *kw, int n, Out *o) {
  for (int i = 0; i < n; i++) {
    if (i) put(o, ", ");
    if (kw && kw[i]) {
      put(o, kw[i]);
      put(o, "=");
    }
    print_rec(v[i], o);
  }
}

static void print_rec(const Expr *e, Out *o) {
  char t[64];
  if (!e) return;
  switch (e->kind) {
  case EX_INT: snprintf(t, sizeof t, "%lld", (long long)e->ival); put(o, t); break;
  case EX_FLOAT: dtype_format_float(e->fval, true, t, sizeof t); put(o, t); break;
  case EX_BOOL: put(o, e->ival ? "True" : "False"); break;
  case EX_NAME: put(o, e->name); break;
  case EX_NONE: put(o, "None"); break;
  case EX_ELLIPSIS: put(o, "..."); break;
  case EX_UNARY:
    put(o, expr_op_text(e->op));
    if (isalpha((unsigned char)expr_op_text(e->op)[0])) put(o, " "); /* not x */
    print_rec(e->a, o);
    break;
  case EX_BINARY:
    put(o, "(");
    print_rec(e->a, o);
    put(o, " ");
    put(o, expr_op_text(e->op));
    put(o, " ");
    print_rec(e->b, o);
    put(o, ")");
    break;
  case EX_CALL: put(o, e->name); put(o, "("); print_list(e->args, e->kw, e->nargs, o); put(o, ")"); break;
  case EX_SUBSCRIPT: print_rec(e->a, o); put(o, "["); print_list(e->args, NULL, e->nargs, o); put(o, "]"); break;
  case EX_AT: print_rec(e->a, o); put(o, ".at["); print_list(e->args, NULL, e->nargs, o); put(o, "]"); break;
  case EX_BITCAST: print_rec(e->a, o); put(o, ".bitcast("); put(o, dtype_name(e->dtype)); put(o, ")"); break;
  case EX_RESHAPE: print_rec(e->a, o); put(o, ".reshape("); print_list(e->args, NULL, e->nargs, o); put(o, ")"); break;
  case EX_LIST: put(o, "["); print_list(e->args, NULL, e->nargs, o); put(o, "]"); break;
  case EX_SLICE:
    print_rec(e->a, o);
    put(o, ":");
    print_rec(e->b, o);
    if (e->c) {
      put(o, ":");
      print_rec(e->c, o);
    }
    break;
  }
}

void expr_print(const Expr *e, char *buf, size_t n) {
  Out o = {buf, n, 0};
  if (n) buf[0] = '\0';
  print_rec(e, &o);
}

void dtype_unknown(Diag *d, Loc at, const char *name) {
  const char *names[DT_COUNT];
  for (int i = 0; i < DT_COUNT; i++) names[i] = dtype_name((Dtype)i);
  const char *near = names_nearest(name, names, DT_COUNT);
  char hint[256];
  if (near) snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
  else {
    size_t len = (size_t)snprintf(hint, sizeof hint, " (");
    for (int i = 0; i < DT_COUNT && len < sizeof hint; i++)
      len += (size_t)snprintf(hint + len, sizeof hint - len, "%s%s", i ? ", " : "", names[i]);
    if (len < sizeof hint) snprintf(hint + len, sizeof hint - len, ")");
  }
  diag_set(d, D_IN_DTYPE, at, name, hint);
}
