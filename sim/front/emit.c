/* sim/front/emit.c -- a loaded program as a Pallas SparseCore kernel.
 *
 * The module defines build() (the pl.kernel), inputs() (the HBM operands as
 * numpy arrays) and CHIP; run as a script it calls the kernel inside
 * sc_sim.interpret(chip=CHIP).  HBM refs with an init are the kernel's
 * operands, HBM refs without one its outputs (undefined until written, as
 * the front end translates outputs), every other ref a scratch ref of its
 * memory space; every operation is the Pallas call of the same name
 * (PROGRAM_FORMAT.md's table), one table entry per OPS kind (EMITTERS).
 * What Pallas cannot say (an initialised scratch ref, `lowered:`, chip
 * overrides, a list-form DMA) is an input error naming the construct: the
 * round trip test (python/tests/test_roundtrip.py) skips those programs. */
#include "emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  FILE *f;
  int depth;  /* indentation, in 4-space steps */
  int serial; /* names of helper functions: _loop3, _then4 */
  Diag *d;
  bool failed;
  const Program *p;
  bool legality; /* inits dropped: for verdicts only */
  const char *vars[64]; /* the variables of the enclosing loops, outermost first */
  int nvars;
  const Body *at_body; /* the body and index of the operation being emitted */
  int at_i;
} Em;

static void fail(Em *m, Loc at, const char *what) {
  if (m->failed) return;
  m->failed = true;
  char msg[256];
  snprintf(msg, sizeof msg, "emit-pallas cannot express %s in Pallas", what);
  diag_set(m->d, D_IN_VALUE, at, msg);
}

static void line(Em *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(Em *m, const char *fmt, ...) {
  va_list ap;
  fprintf(m->f, "%*s", 4 * m->depth, "");
  va_start(ap, fmt);
  vfprintf(m->f, fmt, ap);
  va_end(ap);
  fputc('\n', m->f);
}

/* ---- expressions ---------------------------------------------------- */

static void ex(Em *m, const Expr *e);

static void ex_list(Em *m, Expr *const *v, const char *const *kw, int n) {
  for (int i = 0; i < n; i++) {
    if (i) fputs(", ", m->f);
    if (kw && kw[i]) fprintf(m->f, "%s=", kw[i]);
    ex(m, v[i]);
  }
}

static void ex_shape(Em *m, const Expr *e) {
  if (e->kind != EX_LIST) return ex(m, e);
  fputc('(', m->f);
  ex_list(m, e->args, NULL, e->nargs);
  fputs(e->nargs == 1 ? ",)" : ")", m->f);
}

static void ex_float(Em *m, double v) {
  if (v != v) fputs("float('nan')", m->f);
  else if (v > 1e308 || v < -1e308) fputs(v > 0 ? "float('inf')" : "float('-inf')", m->f);
  else {
    char b[40];
    snprintf(b, sizeof b, "%.17g", v);
    fprintf(m->f, "%s%s", b, strpbrk(b, ".e") ? "" : ".0");
  }
}

/* The value operations whose Pallas spelling differs from the format's:
 * take_along_axis names its axis, reshape takes a tuple, bitcast a jnp
 * dtype, concatenate a Python list.  False for every other call. */
static bool ex_valops(Em *m, const Expr *e) {
  if (e->nargs == 2 && (e->builtin == BI_TAKE || e->builtin == BI_RESHAPE || e->builtin == BI_BITCAST)) {
    fprintf(m->f, "%s(", e->name), ex(m, e->args[0]), fputs(", ", m->f);
    if (e->builtin == BI_TAKE) ex(m, e->args[1]), fputs(", axis=0", m->f);
    else if (e->builtin == BI_RESHAPE) ex_shape(m, e->args[1]);
    else if (e->args[1]->kind == EX_NAME) fprintf(m->f, "jnp.%s", strchr(e->args[1]->name, '.') ? strchr(e->args[1]->name, '.') + 1 : e->args[1]->name);
    else ex(m, e->args[1]);
    return fputc(')', m->f), true;
  }
  if (e->builtin == BI_SORT && e->nargs && e->args[0]->kind == EX_LIST) { /* lax.sort of several operands: a Python list */
    fputs("jax.lax.sort([", m->f), ex_list(m, e->args[0]->args, NULL, e->args[0]->nargs), fputc(']', m->f);
    if (e->nargs > 1) fputs(", ", m->f), ex_list(m, e->args + 1, e->kw + 1, e->nargs - 1);
    return fputc(')', m->f), true;
  }
  if (e->builtin != BI_NONE && e->name && !strncmp(e->name, "lax.", 4)) { /* the kernel imports jax, not lax */
    fprintf(m->f, "jax.%s(", e->name), ex_list(m, e->args, e->kw, e->nargs), fputc(')', m->f);
    return true;
  }
  if (e->builtin != BI_CONCAT || e->nargs != 1 || e->args[0]->kind != EX_LIST) return false;
  fputs("jnp.concatenate([", m->f), ex_list(m, e->args[0]->args, NULL, e->args[0]->nargs), fputs("])", m->f);
  return true;
}

/* plsc.pack / plsc.unpack: preferred_element_type= is a jnp dtype. */
static bool ex_pack(Em *m, const Expr *e) {
  if (e->builtin != BI_PACK && e->builtin != BI_UNPACK) return false;
  fprintf(m->f, "%s(", e->name);
  for (int i = 0; i < e->nargs; i++) {
    const Expr *a = e->args[i];
    if (i) fputs(", ", m->f);
    if (e->kw[i]) fprintf(m->f, "%s=", e->kw[i]);
    if (e->kw[i] && !strcmp(e->kw[i], "preferred_element_type") && a->kind == EX_NAME)
      fprintf(m->f, "jnp.%s", strchr(a->name, '.') ? strchr(a->name, '.') + 1 : a->name);
    else ex(m, a);
  }
  return fputc(')', m->f), true;
}

/* Builtins as Python; the table order is lowering/builtins.h's. */
static void ex_call(Em *m, const Expr *e) {
  static const char *const prefix[BUILTIN_COUNT] = {
      [BI_IOTA] = "jax.lax.iota(jnp.int32, ", [BI_FULL] = "jnp.full(", [BI_WHERE] = "jnp.where(",
      [BI_MIN] = "jnp.minimum(", [BI_MAX] = "jnp.maximum(", [BI_DS] = "pl.ds(",
      [BI_INDICES] = "plsc.Indices(",
      /* jax 0.10.2's tpu_sc does not export cummin (docs/jax-versions.md) */
      [BI_CUMMIN] = "jax._src.pallas.mosaic.sc_primitives.cummin("};
  if (e->builtin == BI_ASTYPE && e->nargs == 2 && e->args[1]->kind == EX_NAME) {
    fputs("jnp.asarray(", m->f), ex(m, e->args[0]);
    fprintf(m->f, ").astype(jnp.%s)", e->args[1]->name);
    return;
  }
  if (e->builtin == BI_AXIS_SIZE && e->nargs == 1 && e->args[0]->kind == EX_NAME) {
    fprintf(m->f, "jax.lax.axis_size(\"%s\")", e->args[0]->name);
    return;
  }
  if (e->builtin == BI_FULL && e->nargs == 2) {
    fputs("jnp.full(", m->f), ex_shape(m, e->args[0]), fputs(", ", m->f), ex(m, e->args[1]);
    fputc(')', m->f);
    return;
  }
  if (ex_valops(m, e) || ex_pack(m, e)) return;
  const char *p = e->builtin != BI_NONE && prefix[e->builtin] ? prefix[e->builtin] : NULL;
  if (p) fputs(p, m->f);
  else fprintf(m->f, "%s%s(", strncmp(e->name, "lax.", 4) ? "" : "jax.", e->name); /* lax.cumsum, lax.sort */
  ex_list(m, e->args, e->kw, e->nargs);
  fputc(')', m->f);
}

static void ex_op(Em *m, const Expr *e) {
  static const char *const logical[EXPR_OP_COUNT] = {
      [OP_AND] = "jnp.logical_and", [OP_OR] = "jnp.logical_or", [OP_NOT] = "jnp.logical_not"};
  if (logical[e->op]) {
    fprintf(m->f, "%s(", logical[e->op]), ex(m, e->a);
    if (e->kind == EX_BINARY) fputs(", ", m->f), ex(m, e->b);
    fputc(')', m->f);
    return;
  }
  fputc('(', m->f);
  if (e->kind == EX_UNARY) fputs(expr_op_text(e->op), m->f), ex(m, e->a);
  else ex(m, e->a), fprintf(m->f, " %s ", expr_op_text(e->op)), ex(m, e->b);
  fputc(')', m->f);
}

/* core and subcore are the mesh's axis indices; a scalar-subcore mesh has
 * no subcore axis and its one subcore is 0, still a dynamic int32 there. */
static void ex_name(Em *m, const Expr *e) {
  if (!program_ref(m->p, e->name) && (!strcmp(e->name, "num_cores") || !strcmp(e->name, "num_subcores") || !strcmp(e->name, "num_lanes"))) {
    fprintf(m->f, "plsc.get_sparse_core_info().%s", e->name); /* the chip's constants */
    return;
  }
  bool builtin = !program_ref(m->p, e->name) && (!strcmp(e->name, "core") || !strcmp(e->name, "subcore"));
  if (!builtin) fputs(e->name, m->f);
  else if (!strcmp(e->name, "subcore") && m->p->kernel == KERNEL_SCALAR) fputs("(jax.lax.axis_index(\"core\") * 0)", m->f);
  else fprintf(m->f, "jax.lax.axis_index(\"%s\")", e->name);
}

static void ex(Em *m, const Expr *e) {
  if (!e) return;
  switch (e->kind) {
  case EX_INT: fprintf(m->f, "%lld", (long long)e->ival); break;
  case EX_FLOAT: ex_float(m, e->fval); break;
  case EX_BOOL: fputs(e->ival ? "True" : "False", m->f); break;
  case EX_NAME: ex_name(m, e); break;
  case EX_UNARY:
  case EX_BINARY: ex_op(m, e); break;
  case EX_CALL: ex_call(m, e); break;
  case EX_SUBSCRIPT: ex(m, e->a), fputc('[', m->f), ex_list(m, e->args, NULL, e->nargs), fputc(']', m->f); break;
  case EX_AT: ex(m, e->a), fputs(".at[", m->f), ex_list(m, e->args, NULL, e->nargs), fputc(']', m->f); break;
  case EX_BITCAST: ex(m, e->a), fprintf(m->f, ".bitcast(jnp.%s)", dtype_name(e->dtype)); break;
  case EX_RESHAPE: ex(m, e->a), fputs(".reshape(", m->f), ex_list(m, e->args, NULL, e->nargs), fputc(')', m->f); break;
  case EX_LIST: fputs("jnp.array([", m->f), ex_list(m, e->args, NULL, e->nargs), fputs("])", m->f); break;
  case EX_SLICE:
    ex(m, e->a), fputc(':', m->f), ex(m, e->b);
    if (e->c) fputc(':', m->f), ex(m, e->c);
    break;
  case EX_ELLIPSIS: fputs("...", m->f); break;
  case EX_NONE: fputs("None", m->f); break;
  }
}

/* A ref expression as a view (`buf[i]` -> `buf.at[i]`), for the calls that
 * take a ref. */
static void view(Em *m, const Expr *e) {
  if (e && e->kind == EX_SUBSCRIPT) {
    ex(m, e->a), fputs(".at[", m->f), ex_list(m, e->args, NULL, e->nargs), fputc(']', m->f);
  } else {
    ex(m, e);
  }
}

/* A ref expression as an indexed read target (`buf` -> `buf[...]`). */
static void indexed(Em *m, const Expr *e) {
  ex(m, e);
  if (e && e->kind != EX_SUBSCRIPT) fputs("[...]", m->f);
}

/* ---- operations ----------------------------------------------------- */

static void body(Em *m, const Body *b);

static void begin(Em *m, const Op *op) {
  fprintf(m->f, "%*s", 4 * m->depth, "");
  if (op->has & F(OUT)) fprintf(m->f, "%s = ", op->name[FLD_OUT]);
}

static void end(Em *m) { fputc('\n', m->f); }

static void kwarg(Em *m, const Op *op, FieldId f, const char *kw) {
  if (op->has & (1u << f)) fprintf(m->f, ", %s=", kw), ex(m, op->e[f]);
}

static void e_get(Em *m, const Op *op) { begin(m, op), indexed(m, op->e[FLD_REF]), end(m); }

static void e_set(Em *m, const Op *op) {
  begin(m, op), indexed(m, op->e[FLD_REF]), fputs(" = ", m->f), ex(m, op->e[FLD_VALUE]), end(m);
}

static void e_swap(Em *m, const Op *op) {
  begin(m, op), view(m, op->e[FLD_REF]), fputs(".swap(", m->f), ex(m, op->e[FLD_VALUE]);
  fputc(')', m->f), end(m);
}

/* plsc.NAME(view, value?, mask=?).  A ref operand of the format is a view
 * (SPEC §8.1 decision 3): a bare kernel ref is a tracer that jax 0.10.2's
 * isinstance(ref, Ref) test rejects (E1), so a whole ref is `ref.at[...]`. */
static void e_masked(Em *m, const Op *op) {
  begin(m, op), fprintf(m->f, "plsc.%s(", op_key(op->kind)), view(m, op->e[FLD_REF]);
  if (op->e[FLD_REF] && op->e[FLD_REF]->kind == EX_NAME) fputs(".at[...]", m->f);
  if (op->has & F(VALUE)) fputs(", ", m->f), ex(m, op->e[FLD_VALUE]);
  kwarg(m, op, FLD_MASK, "mask"), fputc(')', m->f), end(m);
}

/* plsc.NAME(ref, [indices], value?, mask=?) */
static void e_indexed(Em *m, const Op *op) {
  begin(m, op), fprintf(m->f, "plsc.%s(", op_key(op->kind)), view(m, op->e[FLD_REF]);
  fputs(", [", m->f), ex_list(m, op->list[FLD_INDICES], NULL, op->nlist[FLD_INDICES]), fputc(']', m->f);
  if (op->has & F(VALUE)) fputs(", ", m->f), ex(m, op->e[FLD_VALUE]);
  kwarg(m, op, FLD_MASK, "mask"), fputc(')', m->f), end(m);
}

static bool single(Em *m, const Op *op, FieldId f) {
  if (!(op->has & (1u << f)) || op->nlist[f] < 0) return true;
  fail(m, op->floc[f], "a list of DMA refs");
  return false;
}

static void e_async_copy(Em *m, const Op *op) {
  if (!single(m, op, FLD_SRC) || !single(m, op, FLD_DST)) return;
  begin(m, op), fputs("pltpu.async_copy(", m->f), view(m, op->e[FLD_SRC]), fputs(", ", m->f);
  view(m, op->e[FLD_DST]), fputs(", ", m->f), view(m, op->e[FLD_SEM]);
  kwarg(m, op, FLD_PRIORITY, "priority"), kwarg(m, op, FLD_ADD, "add"), fputc(')', m->f), end(m);
}

static void e_wait(Em *m, const Op *op) {
  if (op->wait_desc) return line(m, "%s.wait()", op->wait_desc);
  if (!single(m, op, FLD_SRC) || !single(m, op, FLD_DST)) return;
  begin(m, op), fputs("pltpu.make_async_copy(", m->f), view(m, op->e[FLD_SRC]), fputs(", ", m->f);
  view(m, op->e[FLD_DST]), fputs(", ", m->f), view(m, op->e[FLD_SEM]), fputs(").wait()", m->f), end(m);
}

/* One side of a sync_copy: a view, or a list of them (a pytree of refs,
 * copied pairwise as pltpu.sync_copy maps over the two trees). */
static void copy_side(Em *m, const Op *op, FieldId f) {
  if (op->nlist[f] < 0) return view(m, op->e[f]);
  fputc('[', m->f);
  for (int i = 0; i < op->nlist[f]; i++) fputs(i ? ", " : "", m->f), view(m, op->list[f][i]);
  fputc(']', m->f);
}

static void e_sync_copy(Em *m, const Op *op) {
  begin(m, op), fputs("pltpu.sync_copy(", m->f), copy_side(m, op, FLD_SRC), fputs(", ", m->f);
  copy_side(m, op, FLD_DST), kwarg(m, op, FLD_ADD, "add"), fputc(')', m->f), end(m);
}

static void e_signal(Em *m, const Op *op) {
  begin(m, op), fputs("pl.semaphore_signal(", m->f), view(m, op->e[FLD_SEM]);
  if (op->has & F(INC)) fputs(", ", m->f), ex(m, op->e[FLD_INC]);
  /* a scalar-subcore mesh has no subcore axis to name (its one subcore is 0) */
  if ((op->has & F(SUBCORE)) && m->p->kernel == KERNEL_VECTOR)
    fputs(", device_id={\"subcore\": ", m->f), ex(m, op->e[FLD_SUBCORE]), fputc('}', m->f);
  kwarg(m, op, FLD_CORE, "core_index"), fputc(')', m->f), end(m);
}

static void e_sem_wait(Em *m, const Op *op) {
  begin(m, op), fputs("pl.semaphore_wait(", m->f), view(m, op->e[FLD_SEM]);
  if (op->has & F(VALUE)) fputs(", ", m->f), ex(m, op->e[FLD_VALUE]);
  fputc(')', m->f), end(m);
}

static void e_fetch_and_add(Em *m, const Op *op) {
  begin(m, op), fputs("plsc.fetch_and_add(", m->f), view(m, op->e[FLD_REF]), fputs(", ", m->f);
  ex(m, op->e[FLD_VALUE]), kwarg(m, op, FLD_SUBCORE, "subcore_id"), fputc(')', m->f), end(m);
}

static void e_barrier(Em *m, const Op *op) { (void)op, line(m, "plsc.subcore_barrier()"); }

/* A let inside a loop's body function that rebinds the loop's variable
 * (or an enclosing one's) would make the name local to that function, and
 * Python raises UnboundLocalError where the body reads it first. */
static bool rebinds_loop_var(const Em *m, const char *name) {
  for (int i = 0; i < m->nvars && i < 64; i++)
    if (!strcmp(m->vars[i], name)) return true;
  return false;
}

static bool literal(const Expr *e) {
  if (e && e->kind == EX_UNARY) e = e->a;
  return e && (e->kind == EX_INT || e->kind == EX_FLOAT || e->kind == EX_BOOL);
}

/* A let binds a traced value (docs/format.md): a literal is written as
 * jnp.asarray(literal), a weakly typed tracer in the kernel, not a static
 * Python number (which pl.ds and the ref transforms would take as static). */
static void e_let(Em *m, const Op *op) {
  bool rebinds = rebinds_loop_var(m, op->name[FLD_NAME]);
  for (int k = 0; k < op->ncarry; k++) rebinds |= rebinds_loop_var(m, op->carry[k]); /* "k, v": each name */
  if (rebinds) return fail(m, op->loc, "a let that rebinds a loop's variable inside its body");
  bool lit = literal(op->e[FLD_VALUE]);
  fprintf(m->f, "%*s%s = %s", 4 * m->depth, "", op->name[FLD_NAME], lit ? "jnp.asarray(" : ""), ex(m, op->e[FLD_VALUE]);
  fputs(lit ? ")" : "", m->f), end(m);
}

/* "(a, b, )" of the carries' names, or of the expressions in list[f]; with
 * `bare`, one item is the item itself.  A parallel loop's next may have
 * another length than its carry (PL2, the checker's): all of it is written. */
static void items(Em *m, const Op *op, FieldId f, bool bare) {
  int n = f == FLD_NEXT && op->nlist[f] >= 0 ? op->nlist[f] : op->ncarry;
  bool one = bare && n == 1;
  if (!one) fputc('(', m->f);
  for (int i = 0; i < n; i++) {
    if (f == FLD_COUNT) fputs(op->carry[i], m->f);
    else ex(m, op->list[f][i]);
    if (!one) fputs(", ", m->f);
  }
  if (!one) fputc(')', m->f);
}

/* The carries as a pytree: one carry is the value itself, several a tuple
 * (the checker's convention, whose CF1 and PL2 texts print its paths). */
static void ptree(Em *m, const Op *op, FieldId f) { items(m, op, f, true); }

/* def NAME(args): carries unpacked, the body, return of the next values */
static void carried_body(Em *m, const Op *op, const char *name, const char *args) {
  line(m, "def %s(%s):", name, args);
  m->depth++;
  if (op->ncarry) fprintf(m->f, "%*s", 4 * m->depth, ""), ptree(m, op, FLD_COUNT), fputs(" = _carry\n", m->f);
  body(m, &op->body);
  if (op->ncarry) fprintf(m->f, "%*sreturn ", 4 * m->depth, ""), ptree(m, op, FLD_NEXT), end(m);
  m->depth--;
}

static void loop_range(Em *m, const Op *op) {
  Expr **r = op->list[FLD_RANGE];
  fputs("pl.loop(", m->f), ex(m, r[0]), fputs(", ", m->f), ex(m, r[1]);
  if (op->nlist[FLD_RANGE] > 2) fputs(", step=", m->f), ex(m, r[2]);
}

/* @pl.loop(lo, hi, step=s) over a body; with carries, pl.loop(...,
 * init_carry=...) applied to the body function returns the last carry. */
static void e_loop_fn(Em *m, const Op *op);

static void e_loop(Em *m, const Op *op) {
  if (m->nvars < 64) m->vars[m->nvars] = op->name[FLD_VAR];
  m->nvars++;
  e_loop_fn(m, op);
  m->nvars--;
}

/* plsc.parallel_loop(lo, hi, step[, carry=(...)]): the carry as a tuple. */
static void parallel_range(Em *m, const Op *op) {
  Expr **r = op->list[FLD_RANGE];
  fputs("plsc.parallel_loop(", m->f), ex(m, r[0]), fputs(", ", m->f), ex(m, r[1]);
  if (op->nlist[FLD_RANGE] > 2) fputs(", ", m->f), ex(m, r[2]);
  if (op->ncarry) fputs(", carry=", m->f), ptree(m, op, FLD_CARRY);
}

static void e_loop_fn(Em *m, const Op *op) {
  char name[32], args[128];
  snprintf(name, sizeof name, "_loop%d", m->serial++);
  snprintf(args, sizeof args, op->ncarry ? "%s, _carry" : "%s", op->name[FLD_VAR]);
  if (op_parallel(op)) {
    if (!op->ncarry) {
      fprintf(m->f, "%*s@", 4 * m->depth, ""), parallel_range(m, op), fputs(")\n", m->f);
      return carried_body(m, op, name, args);
    }
    carried_body(m, op, name, args);
    fprintf(m->f, "%*s", 4 * m->depth, ""), ptree(m, op, FLD_COUNT), fputs(" = ", m->f), parallel_range(m, op);
    fprintf(m->f, ")(%s)\n", name);
    return;
  }
  if (!op->ncarry) {
    fprintf(m->f, "%*s@", 4 * m->depth, ""), loop_range(m, op), fputs(")\n", m->f);
    return carried_body(m, op, name, args);
  }
  carried_body(m, op, name, args);
  fprintf(m->f, "%*s", 4 * m->depth, ""), ptree(m, op, FLD_COUNT), fputs(" = ", m->f), loop_range(m, op);
  fputs(", init_carry=", m->f), ptree(m, op, FLD_CARRY), fprintf(m->f, ")(%s)\n", name);
}

static void e_while(Em *m, const Op *op) {
  int k = m->serial++;
  line(m, "def _cond%d(_carry):", k);
  m->depth++;
  if (op->ncarry) fprintf(m->f, "%*s", 4 * m->depth, ""), ptree(m, op, FLD_COUNT), fputs(" = _carry\n", m->f);
  fprintf(m->f, "%*sreturn ", 4 * m->depth, ""), ex(m, op->e[FLD_COND]), end(m);
  m->depth--;
  char name[32];
  snprintf(name, sizeof name, "_body%d", k);
  carried_body(m, op, name, "_carry");
  if (!op->ncarry) line(m, "    return ()");
  fprintf(m->f, "%*s", 4 * m->depth, ""), ptree(m, op, FLD_COUNT);
  fprintf(m->f, " = jax.lax.while_loop(_cond%d, _body%d, ", k, k), ptree(m, op, FLD_CARRY), fputs(")\n", m->f);
}

/* ---- names bound in a branch and used after it --------------------------
 * The format binds a branch's names in the enclosing scope (docs/format.md);
 * a Python branch function keeps them local.  A value bound in both
 * branches and used after is returned through jax.lax.cond; a DMA
 * descriptor used by a later wait is built before the branch
 * (pltpu.make_async_copy) and started inside it, as Pallas users write it.
 * A value bound in one branch only and used after the when has no Pallas
 * spelling (the other path leaves it unbound, or bound to an older value
 * the branch function cannot replace): refused. */

static bool expr_uses(const Expr *e, const char *name) {
  if (!e) return false;
  if (e->kind == EX_NAME && e->name && !strcmp(e->name, name)) return true;
  if (expr_uses(e->a, name) || expr_uses(e->b, name) || expr_uses(e->c, name)) return true;
  for (int i = 0; i < e->nargs; i++)
    if (expr_uses(e->args[i], name)) return true;
  return false;
}

static bool body_uses(const Body *b, int from, const char *name, bool desc);

/* Whether op reads name: as a descriptor (the short wait) or as a value. */
static bool op_uses(const Op *op, const char *name, bool desc) {
  if (desc) return (op->kind == OPK_WAIT && op->wait_desc && !strcmp(op->wait_desc, name)) ||
                   body_uses(&op->body, 0, name, desc) || body_uses(&op->els, 0, name, desc);
  for (int f = 0; f < FLD_COUNT; f++) {
    if (expr_uses(op->e[f], name)) return true;
    for (int k = 0; k < op->nlist[f]; k++)
      if (expr_uses(op->list[f][k], name)) return true;
  }
  return body_uses(&op->body, 0, name, desc) || body_uses(&op->els, 0, name, desc);
}

static bool body_uses(const Body *b, int from, const char *name, bool desc) {
  for (int i = from; i < b->n; i++)
    if (op_uses(b->ops[i], name, desc)) return true;
  return false;
}

/* The name an operation of a branch binds for the code after it (a let's
 * name, an out), or NULL. */
static const char *bound_name(const Op *op) {
  if (op->kind == OPK_LET && op->ncarry == 0) return op->name[FLD_NAME];
  return (op->has & F(OUT)) ? op->name[FLD_OUT] : NULL;
}

/* Whether b binds name as a value at its top level or in a nested when
 * that binds it in both branches. */
static bool binds_value(const Body *b, const char *name) {
  for (int i = 0; i < b->n; i++) {
    const Op *op = b->ops[i];
    const char *nm = bound_name(op);
    if (nm && !strcmp(nm, name) && op->kind != OPK_ASYNC_COPY) return true;
    if (op->kind == OPK_WHEN && (op->has & F(ELSE)) && binds_value(&op->body, name) && binds_value(&op->els, name))
      return true;
  }
  return false;
}

/* The first async_copy binding name in b (nested whens included). */
static const Op *find_copy(const Body *b, const char *name) {
  for (int i = 0; i < b->n; i++) {
    const Op *op = b->ops[i];
    if (op->kind == OPK_ASYNC_COPY && bound_name(op) && !strcmp(bound_name(op), name)) return op;
    const Op *c = op->kind == OPK_WHEN ? find_copy(&op->body, name) : NULL;
    if (!c && op->kind == OPK_WHEN) c = find_copy(&op->els, name);
    if (c) return c;
  }
  return NULL;
}

/* Whether any operation of b (nested whens included) binds a name that e reads. */
static bool reads_bound(const Body *b, const Expr *e) {
  for (int i = 0; i < b->n; i++) {
    const char *nm = bound_name(b->ops[i]);
    if (nm && expr_uses(e, nm)) return true;
    if (b->ops[i]->kind == OPK_WHEN && (reads_bound(&b->ops[i]->body, e) || reads_bound(&b->ops[i]->els, e))) return true;
  }
  return false;
}

typedef struct {
  const char *name[16];
  int n;
} Names;

static void names_add(Names *ns, const char *name) {
  for (int i = 0; i < ns->n; i++)
    if (!strcmp(ns->name[i], name)) return;
  if (ns->n < 16) ns->name[ns->n++] = name;
}

/* Every name b binds (nested whens included), each once. */
static void collect(const Body *b, Names *ns) {
  for (int i = 0; i < b->n; i++) {
    if (bound_name(b->ops[i])) names_add(ns, bound_name(b->ops[i]));
    if (b->ops[i]->kind == OPK_WHEN) collect(&b->ops[i]->body, ns), collect(&b->ops[i]->els, ns);
  }
}

/* Descriptors a later wait uses: built here, before the branches. */
static void hoist_copies(Em *m, const Op *op, const Body *after, int from) {
  Names ns = {0};
  collect(&op->body, &ns), collect(&op->els, &ns);
  for (int i = 0; i < ns.n; i++) {
    const Op *c = find_copy(&op->body, ns.name[i]);
    if (!c) c = find_copy(&op->els, ns.name[i]);
    if (!c || !after || !body_uses(after, from, ns.name[i], true)) continue;
    static const FieldId sides[] = {FLD_SRC, FLD_DST, FLD_SEM};
    bool inner = false; /* an index the branch computes: not known before it */
    for (int j = 0; j < 3; j++) inner |= reads_bound(&op->body, c->e[sides[j]]) || reads_bound(&op->els, c->e[sides[j]]);
    if (inner) continue;
    if (!single(m, c, FLD_SRC) || !single(m, c, FLD_DST)) return;
    fprintf(m->f, "%*s%s = pltpu.make_async_copy(", 4 * m->depth, "", ns.name[i]), view(m, c->e[FLD_SRC]);
    fputs(", ", m->f), view(m, c->e[FLD_DST]), fputs(", ", m->f), view(m, c->e[FLD_SEM]), fputc(')', m->f), end(m);
  }
}

/* Values bound in both branches and used after the when. */
static Names exported(const Op *op, const Body *after, int from) {
  Names ns = {0}, out = {0};
  collect(&op->body, &ns);
  for (int i = 0; after && i < ns.n; i++)
    if (binds_value(&op->body, ns.name[i]) && binds_value(&op->els, ns.name[i]) && body_uses(after, from, ns.name[i], false))
      names_add(&out, ns.name[i]);
  return out;
}

/* Refuses a value one branch binds, the other does not, and the code after
 * the when reads. */
static void one_sided(Em *m, const Op *op, const Body *after, int from) {
  Names ns = {0};
  collect(&op->body, &ns), collect(&op->els, &ns);
  for (int i = 0; after && i < ns.n; i++) {
    bool t = binds_value(&op->body, ns.name[i]), e = binds_value(&op->els, ns.name[i]);
    if (t == e || !body_uses(after, from, ns.name[i], false)) continue;
    char what[160];
    snprintf(what, sizeof what, "a value read after a when that only one branch binds ('%s'; bind it in both branches)",
             ns.name[i]);
    return fail(m, op->loc, what);
  }
}

static void returns(Em *m, const Names *ns) {
  fprintf(m->f, "%*s(", 4 * m->depth, "");
  for (int i = 0; i < ns->n; i++) fprintf(m->f, "%s, ", ns->name[i]);
  fputc(')', m->f);
}

static void branch(Em *m, const char *name, const Body *b, const Names *ns) {
  line(m, "def %s():", name);
  m->depth++, body(m, b);
  if (ns && ns->n) {
    fprintf(m->f, "%*sreturn ", 4 * m->depth, "");
    for (int i = 0; i < ns->n; i++) fprintf(m->f, "%s, ", ns->name[i]);
    end(m);
  }
  m->depth--;
}

static void e_when(Em *m, const Op *op) {
  const Body *after = m->at_body;
  int from = m->at_i + 1;
  int k = m->serial++;
  char t[32], f[32];
  snprintf(t, sizeof t, "_then%d", k), snprintf(f, sizeof f, "_else%d", k);
  hoist_copies(m, op, after, from);
  one_sided(m, op, after, from);
  if (!(op->has & F(ELSE))) {
    fprintf(m->f, "%*s@pl.when(", 4 * m->depth, ""), ex(m, op->e[FLD_COND]), fputs(")\n", m->f);
    return branch(m, t, &op->body, NULL);
  }
  Names ns = exported(op, after, from);
  branch(m, t, &op->body, &ns), branch(m, f, &op->els, &ns);
  if (ns.n) returns(m, &ns), fputs(" = ", m->f);
  else fprintf(m->f, "%*s", 4 * m->depth, "");
  fputs("jax.lax.cond(", m->f), ex(m, op->e[FLD_COND]);
  fprintf(m->f, ", %s, %s)\n", t, f);
}

/* An expectation is sc-sim's, not Pallas's: kept as a comment. */
static void e_expect(Em *m, const Op *op) {
  fprintf(m->f, "%*spass  # expect: ", 4 * m->depth, ""), ex(m, op->e[FLD_VALUE] ? op->e[FLD_VALUE] : op->e[FLD_REF]);
  fputs(" == ", m->f), ex(m, op->e[FLD_EQUALS]), end(m);
}

/* A Python string literal of s (double-quoted, escaped). */
static void pystr(Em *m, const char *s) {
  fputc('"', m->f);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\') fprintf(m->f, "\\%c", ch);
    else if (ch == '\n') fputs("\\n", m->f);
    else if (ch < 32) fprintf(m->f, "\\x%02x", ch);
    else fputc(ch, m->f);
  }
  fputc('"', m->f);
}

/* pl.debug_print takes no `ordered` in jax 0.10.2 (a TypeError): an
 * ordered print is jax.debug.print(..., ordered=True), which DP1 stands
 * for; jax.debug.print formats its arguments into placeholders (unused
 * ones are its ValueError), so a message without any gets one per argument. */
static void e_debug_print(Em *m, const Op *op) {
  bool ordered = (op->has & F(ORDERED)) && op->e[FLD_ORDERED]->kind == EX_BOOL && op->e[FLD_ORDERED]->ival;
  int nargs = op->nlist[FLD_ARGS] < 0 ? 0 : op->nlist[FLD_ARGS];
  const char *msg = op->name[FLD_MESSAGE];
  char buf[600];
  if (ordered && !strchr(msg, '{') && nargs) {
    size_t o = (size_t)snprintf(buf, sizeof buf, "%.400s", msg);
    for (int i = 0; i < nargs && o + 4 < sizeof buf; i++) o += (size_t)snprintf(buf + o, sizeof buf - o, " {}");
    msg = buf;
  }
  fprintf(m->f, "%*s%s(", 4 * m->depth, "", ordered ? "jax.debug.print" : "pl.debug_print"), pystr(m, msg);
  for (int i = 0; i < nargs; i++) fputs(", ", m->f), ex(m, op->list[FLD_ARGS][i]);
  if (ordered) fputs(", ordered=True", m->f);
  fputs(")", m->f), end(m);
}

static void e_debug_check(Em *m, const Op *op) {
  fprintf(m->f, "%*spl.debug_check(", 4 * m->depth, ""), ex(m, op->e[FLD_COND]);
  fputs(", ", m->f), pystr(m, op->name[FLD_MESSAGE]), fputs(")", m->f), end(m);
}

/* The kernel that bound a primitive without a SparseCore rule is not
 * known from its name alone. */
static void e_unimplemented(Em *m, const Op *op) {
  fail(m, op->loc, "an operation of a primitive without a SparseCore rule (unimplemented:)");
}

typedef void (*EmitFn)(Em *, const Op *);
/* One emitter per operation of the OPS table (lowering/program.h). */
static const EmitFn EMITTERS[OPK_COUNT] = {
    [OPK_GET] = e_get, [OPK_SET] = e_set, [OPK_SWAP] = e_swap, [OPK_ADDUPDATE] = e_masked,
    [OPK_LOAD_EXPANDED] = e_masked, [OPK_STORE_COMPRESSED] = e_masked,
    [OPK_ADDUPDATE_COMPRESSED] = e_masked, [OPK_LOAD_GATHER] = e_indexed,
    [OPK_STORE_SCATTER] = e_indexed, [OPK_ADDUPDATE_SCATTER] = e_indexed,
    [OPK_ASYNC_COPY] = e_async_copy, [OPK_WAIT] = e_wait, [OPK_SYNC_COPY] = e_sync_copy,
    [OPK_SEMAPHORE_SIGNAL] = e_signal, [OPK_SEMAPHORE_WAIT] = e_sem_wait,
    [OPK_FETCH_AND_ADD] = e_fetch_and_add, [OPK_BARRIER] = e_barrier, [OPK_LET] = e_let,
    [OPK_LOOP] = e_loop, [OPK_WHILE] = e_while, [OPK_WHEN] = e_when, [OPK_EXPECT] = e_expect,
    [OPK_UNIMPLEMENTED] = e_unimplemented, [OPK_DEBUG_PRINT] = e_debug_print, [OPK_DEBUG_CHECK] = e_debug_check};

static void body(Em *m, const Body *b) {
  for (int i = 0; i < b->n; i++) {
    line(m, "# line %d", b->ops[i]->loc.line);
    m->at_body = b, m->at_i = i;
    if (EMITTERS[b->ops[i]->kind]) EMITTERS[b->ops[i]->kind](m, b->ops[i]);
    else fail(m, b->ops[i]->loc, "this operation (no emitter)");
  }
  if (!b->n) line(m, "pass");
}

/* ---- refs and the kernel --------------------------------------------- */

static bool is_input(const Ref *r) { return r->space == SP_HBM && r->init != INIT_UNDEF; }
static bool is_output(const Ref *r) { return r->space == SP_HBM && r->init == INIT_UNDEF; }

static void shape(Em *m, const Ref *r) {
  fputc('(', m->f);
  for (int i = 0; i < r->rank; i++) fprintf(m->f, "%lld, ", (long long)r->shape[i]);
  fputc(')', m->f);
}

static const char *jnp_dtype(Dtype t) { return t == DT_BOOL ? "bool_" : dtype_name(t); }

static void scratch_type(Em *m, const Ref *r) {
  static const char *const space[SP_COUNT] = {
      [SP_VMEM] = "VMEM", [SP_VMEM_SHARED] = "VMEM_SHARED", [SP_SMEM] = "SMEM"};
  if (r->space == SP_SEMAPHORE) {
    fprintf(m->f, "pltpu.SemaphoreType.%s", r->sem == SEM_REGULAR ? "REGULAR" : "DMA");
    if (r->rank) fputc('(', m->f), shape(m, r), fputc(')', m->f);
    return;
  }
  if (r->init != INIT_UNDEF && !m->legality) fail(m, r->loc, "an initialised scratch ref");
  fprintf(m->f, "pltpu.%s(", space[r->space]), shape(m, r), fprintf(m->f, ", jnp.%s)", jnp_dtype(r->dtype));
}

static void refs_where(Em *m, bool (*pick)(const Ref *), void (*each)(Em *, const Ref *)) {
  for (int i = 0; i < m->p->nrefs; i++)
    if (pick(m->p->refs[i])) each(m, m->p->refs[i]), fputs(", ", m->f);
}

static bool is_scratch(const Ref *r) { return r->space != SP_HBM; }
static void ref_name(Em *m, const Ref *r) { fputs(r->name, m->f); }
static void out_type(Em *m, const Ref *r) {
  fputs("jax.ShapeDtypeStruct(", m->f), shape(m, r), fprintf(m->f, ", jnp.%s)", jnp_dtype(r->dtype));
}

static void mesh(Em *m) {
  const Program *p = m->p;
  if (p->kernel == KERNEL_SCALAR)
    return line(m, "mesh = plsc.ScalarSubcoreMesh(axis_name=\"core\", num_cores=%lld)", (long long)p->mesh_cores);
  line(m, "mesh = plsc.VectorSubcoreMesh(core_axis_name=\"core\", subcore_axis_name=\"subcore\",");
  line(m, "                              num_cores=%lld, num_subcores=%lld)", (long long)p->mesh_cores,
       (long long)p->mesh_subcores);
}

static void kernel(Em *m) {
  line(m, "def build():");
  m->depth++;
  mesh(m);
  fprintf(m->f, "    @pl.kernel(out_type=[");
  refs_where(m, is_output, out_type);
  fputs("], mesh=mesh,\n               scratch_types=[", m->f);
  refs_where(m, is_scratch, scratch_type);
  fputs("],\n               compiler_params=", m->f);
  fputs(m->p->layout_passes ? "None)\n" : "pltpu.CompilerParams(needs_layout_passes=False))\n", m->f);
  fputs("    def kernel(", m->f);
  refs_where(m, is_input, ref_name), refs_where(m, is_output, ref_name), refs_where(m, is_scratch, ref_name);
  fputs("):\n", m->f);
  m->depth++, body(m, &m->p->body), m->depth--;
  line(m, "return kernel");
  m->depth--;
}

static void cell(Em *m, Dtype t, Cell c) {
  if (dtype_is_float(t)) ex_float(m, c.f);
  else if (t == DT_BOOL) fputs(c.i ? "True" : "False", m->f);
  else fprintf(m->f, "%lld", (long long)c.i);
}

static void input(Em *m, const Ref *r) {
  const char *dt = r->dtype == DT_BFLOAT16 ? "jnp.bfloat16" : r->dtype == DT_BOOL ? "np.bool_" : NULL;
  char np[32];
  /* ml_dtypes' int4 and uint4 are jnp's, not numpy's */
  snprintf(np, sizeof np, "%s.%s", dtype_is_subbyte(r->dtype) ? "jnp" : "np", dtype_name(r->dtype));
  if (!dt) dt = np;
  fprintf(m->f, "np.asarray(");
  InitKind init = m->legality && r->init != INIT_IOTA ? INIT_ZEROS : r->init;
  switch (init) {
  case INIT_ZEROS: fputs("np.zeros(", m->f), shape(m, r), fputc(')', m->f); break;
  case INIT_IOTA: fprintf(m->f, "np.arange(%lld).reshape(", (long long)r->nelems), shape(m, r), fputc(')', m->f); break;
  case INIT_FILL: fputs("np.full(", m->f), shape(m, r), fputs(", ", m->f), cell(m, r->dtype, r->fill), fputc(')', m->f); break;
  case INIT_LIST:
    fputs("np.array([", m->f);
    for (int64_t i = 0; i < r->nelems; i++) cell(m, r->dtype, r->init_data[i]), fputs(", ", m->f);
    fputs("]).reshape(", m->f), shape(m, r), fputc(')', m->f);
    break;
  case INIT_UNDEF:
  case INIT_RANDOM:
  case INIT_BYTES: fail(m, r->loc, "this init of an HBM ref (random or npy)"); break;
  }
  fprintf(m->f, ", dtype=%s)", dt);
}

static void inputs(Em *m) {
  fputs("def inputs():\n    return [", m->f);
  refs_where(m, is_input, input);
  fputs("]\n", m->f);
}

static void header(Em *m) {
  const Program *p = m->p;
  if (p->lowered) fail(m, p->lowered_loc, "a user lowering (lowered:)");
  if (memcmp(&p->params, &p->chip->p, sizeof p->params)) fail(m, p->chip_loc, "chip parameter overrides");
  fprintf(m->f, "# Emitted by sc-sim emit-pallas from %s: the Pallas SparseCore kernel of the program.\n", p->file);
  fputs("import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom jax.experimental import pallas as pl\n"
        "from jax.experimental.pallas import tpu as pltpu\nfrom jax.experimental.pallas import tpu_sc as plsc\n\n"
        "import sc_sim\n\n", m->f);
  fprintf(m->f, "CHIP = \"%s\"\n\n\n", p->chip->name);
}

static void trailer(Em *m) {
  fputs("\n\nif __name__ == \"__main__\":\n    with sc_sim.interpret(chip=CHIP):\n"
        "        print(build()(*inputs()))\n", m->f);
}

char *emit_pallas(const Program *p, bool legality, Diag *d) {
  if (p->nkernels) { /* one pl.kernel per program for now */
    char msg[300];
    snprintf(msg, sizeof msg,
             "sc-sim emit-pallas writes a program of one kernel, and this one has %d (kernels:); emit each kernel from a "
             "program of its own",
             p->nkernels);
    diag_set(d, D_IN_VALUE, p->kernels_loc, msg);
    return NULL;
  }
  char *buf = NULL;
  size_t n = 0;
  Em m = {.f = open_memstream(&buf, &n), .d = d, .p = p, .legality = legality};
  if (!m.f) return NULL;
  header(&m), kernel(&m), fputs("\n\n", m.f), inputs(&m), trailer(&m);
  fclose(m.f);
  if (m.failed) free(buf), buf = NULL;
  return buf;
}
