/* tests/test_units.c -- CUnit tests: the tables, the expression parser,
 * the dtype arithmetic, and the diagnostics catalog's coverage by the
 * golden programs. */
#include <CUnit/Basic.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../isa/isa.h"
#include "../isa/value.h"
#include "../lowering/asm.h"
#include "../lowering/check.h"
#include "../lowering/lower.h"
#include "../lowering/mosaic.h"
#include "../sim/front/parse.h"
#include "../sim/front/load.h"
#include "checked_programs.h"

/* ---- tables ------------------------------------------------------------- */
static void test_isa_table(void) {
  for (int i = 0; i < I_COUNT; i++) {
    const char *m = isa_mnemonic((Opcode)i);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    for (const char *c = m; *c; c++) CU_ASSERT(!(*c >= 'A' && *c <= 'Z'));
    for (int j = 0; j < i; j++) CU_ASSERT(strcmp(m, isa_mnemonic((Opcode)j)) != 0);
    for (const char *f = isa_form((Opcode)i); *f; f++) {
      CU_ASSERT(strchr("DABCNMVWXOabcmxoIRSTUJGF", *f) != NULL); /* only registers and views are optional */
      CU_ASSERT(strchr(f + 1, *f) == NULL && strchr(f + 1, *f ^ 0x20) == NULL);
    }
    Opcode back;
    CU_ASSERT(isa_lookup(m, &back) && back == (Opcode)i);
  }
}

static void test_diag_table(void) {
  for (int i = 0; i < D_COUNT; i++) {
    for (int j = 0; j < i; j++) CU_ASSERT(strcmp(diag_id_name((DiagId)i), diag_id_name((DiagId)j)) != 0);
    for (const char *t = diag_template((DiagId)i); *t; t++)
      if (*t == '%') {
        CU_ASSERT(t[1] == 's'); /* templates hold %s only */
      }
    if (diag_class((DiagId)i) == DC_RULE) {
      CU_ASSERT(strchr("TLV", diag_phase((DiagId)i)) != NULL);
    }
  }
}

/* EXPR_OPS: asm texts unique and read back, spellings unique per arity,
 * each precedence level all prefix or all infix. */
static void test_expr_op_table(void) {
  int level_arity[EXPR_PREC_LEVELS] = {0};
  for (int i = 1; i < EXPR_OP_COUNT; i++) {
    ExprOp op = (ExprOp)i, back = OP_NONE;
    CU_ASSERT(expr_op_from_asm(expr_op_asm(op), &back) && back == op);
    CU_ASSERT(expr_op_arity(op) == 1 || expr_op_arity(op) == 2);
    int p = expr_op_prec(op);
    CU_ASSERT_FATAL(p >= 0 && p < EXPR_PREC_LEVELS);
    CU_ASSERT(!level_arity[p] || level_arity[p] == expr_op_arity(op));
    level_arity[p] = expr_op_arity(op);
    for (int j = 1; j < i; j++) {
      CU_ASSERT(strcmp(expr_op_asm(op), expr_op_asm((ExprOp)j)) != 0);
      if (expr_op_arity(op) == expr_op_arity((ExprOp)j)) CU_ASSERT(strcmp(expr_op_text(op), expr_op_text((ExprOp)j)) != 0);
    }
  }
  ExprOp x;
  CU_ASSERT_FALSE(expr_op_from_asm("**", &x));
  CU_ASSERT(expr_op_from_asm("neg", &x) && x == OP_NEG);
}

/* BUILTINS: names and aliases unique and found; the derived lists. */
static void test_builtin_table(void) {
  for (int i = 1; i < BUILTIN_COUNT; i++) {
    CU_ASSERT_EQUAL(builtin_lookup(builtin_name((Builtin)i)), (Builtin)i);
    CU_ASSERT(builtin_min_args((Builtin)i) <= builtin_max_args((Builtin)i));
    CU_ASSERT(builtin_usage((Builtin)i)[0] != '\0');
  }
  CU_ASSERT_EQUAL(builtin_lookup("pl.dslice"), BI_DS);
  CU_ASSERT_EQUAL(builtin_lookup("Indices"), BI_INDICES);
  CU_ASSERT_EQUAL(builtin_lookup("jnp.where"), BI_NONE);
  CU_ASSERT_EQUAL(builtin_lookup("core"), BI_NONE);
  char buf[1000];
  builtin_list(BK_VALUE, ", ", buf, sizeof buf);
  CU_ASSERT_STRING_EQUAL(buf, "iota, full, where, min, max, astype, jnp.sum, jnp.max, jnp.min, jnp.all, jnp.any, jnp.exp, "
                              "jnp.abs, jnp.sqrt, lax.rsqrt, jnp.log, jnp.tanh, jnp.flip, jnp.take_along_axis, jnp.reshape, "
                              "plsc.bitcast, jnp.concatenate, lax.slice_in_dim, plsc.cumsum, plsc.cummax, plsc.cummin, "
                              "jnp.cumsum, jnp.sort, plsc.sort_key_val, plsc.scan_count, plsc.pack, plsc.unpack, "
                              "plsc.all_reduce_population_count, plsc.all_reduce_ffs, lax.axis_size");
  builtin_list(BK_INDEX, " and ", buf, sizeof buf);
  CU_ASSERT_STRING_EQUAL(buf, "pl.ds and plsc.Indices");
  const char *names[BUILTIN_COUNT];
  CU_ASSERT_EQUAL(builtin_names(names), 38);
  CU_ASSERT_EQUAL(builtin_lookup("pl.select_ref"), BI_SELECT_REF);
  CU_ASSERT_EQUAL(builtin_lookup("lax.cumsum"), BI_LAX_CUMSUM);
}

static void test_chip_table(void) {
  const Chip *c = chip_find("tpu7x");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->p.num_lanes, 16);
  CU_ASSERT_EQUAL(chip_find("TPU v5p")->p.num_lanes, 8);
  CU_ASSERT_EQUAL(chip_find("tpu8i")->p.num_subcores, 4);
  CU_ASSERT_EQUAL(chip_find("tpu_v6e")->p.vmem_capacity_bytes, 262144);
  CU_ASSERT_FALSE(chip_find("tpu_v5e")->has_sc);
  CU_ASSERT_PTR_NULL(chip_find("tpu9"));
}

static void test_mutant_table(void) {
  for (int i = 1; i < MUT_COUNT; i++) {
    Mutant m;
    CU_ASSERT(mutant_lookup(mutant_name((Mutant)i), &m) && m == (Mutant)i);
  }
  CU_ASSERT(MUT_COUNT - 1 >= 12);
}

/* ---- the expression parser ------------------------------------------------ */
static const struct {
  const char *text;
  const char *printed; /* NULL: a parse error expected at column err_col */
  int err_col;
} expr_cases[] = {
    {"1 + 2 * 3", "(1 + (2 * 3))", 0},
    {"a - b - c", "((a - b) - c)", 0},
    {"x << 1 + 2", "(x << (1 + 2))", 0},
    {"a & b | c ^ d", "((a & b) | (c ^ d))", 0},
    {"not a == b", "not (a == b)", 0},
    {"a < b and c >= d or e", "(((a < b) and (c >= d)) or e)", 0},
    {"-3", "-3", 0},
    {"x // 2 % 3", "((x // 2) % 3)", 0},
    {"buf[pl.ds(0, 16)]", "buf[pl.ds(0, 16)]", 0},
    {"x.at[i].at[pl.ds(0, 8)]", "x.at[i].at[pl.ds(0, 8)]", 0},
    {"x[::2]", "x[::2]", 0},
    {"x[-3:]", "x[-3:]", 0},
    {"x[:, j]", "x[:, j]", 0},
    {"x[..., 1]", "x[..., 1]", 0},
    {"x.bitcast(int16)", "x.bitcast(int16)", 0},
    {"x.reshape(4, 8)", "x.reshape(4, 8)", 0},
    {"x.at[plsc.Indices(idx, ignored_value=4)]", "x.at[plsc.Indices(idx, ignored_value=4)]", 0},
    {"where(m, a, 0.5)", "where(m, a, 0.5)", 0},
    {"buf[pl.ds(0, 16]", NULL, 16},
    {"1 +", NULL, 4},
    {"x.foo", NULL, 2},
    {"(1, 2", NULL, 6},
    {"a $ b", NULL, 3},
    {"x[]", NULL, 3},
    {"99999999999999999999", NULL, 1},
};

static void test_expr_parse(void) {
  for (size_t i = 0; i < sizeof expr_cases / sizeof expr_cases[0]; i++) {
    Arena a = {0};
    Diag d;
    Expr *e = expr_parse(&a, expr_cases[i].text, (Loc){"t.yaml", 3, 10}, &d);
    if (expr_cases[i].printed) {
      char buf[256];
      CU_ASSERT_PTR_NOT_NULL(e);
      if (e) {
        expr_print(e, buf, sizeof buf);
        if (strcmp(buf, expr_cases[i].printed)) fprintf(stderr, "\n  %s printed as %s\n", expr_cases[i].text, buf);
        CU_ASSERT_STRING_EQUAL(buf, expr_cases[i].printed);
      }
    } else {
      CU_ASSERT_PTR_NULL(e);
      if (!e) {
        CU_ASSERT_EQUAL(d.loc.line, 3);
        if (d.loc.col != 10 + expr_cases[i].err_col - 1) fprintf(stderr, "\n  %s: error at column %d\n", expr_cases[i].text, d.loc.col);
        CU_ASSERT_EQUAL(d.loc.col, 10 + expr_cases[i].err_col - 1);
      }
    }
    arena_free(&a);
  }
}

static void test_expr_depth(void) {
  char buf[2000];
  memset(buf, '(', 600);
  strcpy(buf + 600, "1");
  Arena a = {0};
  Diag d;
  CU_ASSERT_PTR_NULL(expr_parse(&a, buf, (Loc){"t", 1, 1}, &d)); /* bounded, no stack overflow */
  arena_free(&a);
}

/* ---- dtype arithmetic (values worked by hand) ----------------------------- */
static void test_narrow_floats(void) {
  /* bfloat16 keeps 8 significant bits: 1 + 2^-8 is a tie -> even (1.0); 1 + 3*2^-8 -> 1 + 2^-6 */
  CU_ASSERT_EQUAL(dtype_f32_to_bf16(1.0f), 0x3f80);
  CU_ASSERT_EQUAL(dtype_f32_to_bf16(1.00390625f), 0x3f80);
  CU_ASSERT_EQUAL(dtype_f32_to_bf16(1.01171875f), 0x3f82);
  CU_ASSERT_EQUAL(dtype_f32_to_bf16(-2.0f), 0xc000);
  CU_ASSERT(dtype_bf16_to_f32(0x3f82) == 1.015625f);
  /* float16: 65504 is the largest; 65520 rounds to infinity; 2^-24 is the smallest subnormal */
  CU_ASSERT_EQUAL(dtype_f32_to_f16(65504.0f), 0x7bff);
  CU_ASSERT_EQUAL(dtype_f32_to_f16(65520.0f), 0x7c00);
  CU_ASSERT_EQUAL(dtype_f32_to_f16(5.9604645e-8f), 0x0001);
  CU_ASSERT_EQUAL(dtype_f32_to_f16(1.0f), 0x3c00);
  CU_ASSERT(dtype_f16_to_f32(0x3555) == 0.333251953125f);
}

/* SPEC §10.5: shortest text reading back to the float32 (float64), in
 * Python's repr layout; expected texts are Python's repr of those floats. */
static void test_float_format(void) {
  static const struct {
    double x;
    bool f64;
    const char *want;
  } rows[] = {
      {528.0, false, "528.0"},          {1.0078125, false, "1.0078125"},  {65504.0, false, "65504.0"},
      {10.0, false, "10.0"},            {(float)1e-05, false, "1e-05"},   {(float)0.1, false, "0.1"},
      {(float)1e16, false, "1e+16"},    {(float)123456789.0, false, "123456790.0"},
      {-0.0, false, "-0.0"},            {(float)0.0001, false, "0.0001"}, {3.4028234663852886e38, false, "3.4028235e+38"},
      {1.401298464324817e-45, false, "1e-45"}, {-2.5, false, "-2.5"},     {0.1, true, "0.1"},
      {1.0 / 3.0, true, "0.3333333333333333"}, {1e22, true, "1e+22"},   {123456789.0, true, "123456789.0"},
      {1e15, true, "1000000000000000.0"}, {0.00012, true, "0.00012"},   {1.5e-7, true, "1.5e-07"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char buf[64];
    dtype_format_float(rows[i].x, rows[i].f64, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, rows[i].want);
  }
  char buf[64];
  dtype_format(DT_BFLOAT16, (Cell){.f = 528.0}, buf, sizeof buf);
  CU_ASSERT_STRING_EQUAL(buf, "528.0"); /* was 5.3e+02: the shortest that reads back to the bfloat16 */
}

static void test_int_wrap_and_convert(void) {
  Cell r;
  alu_binary(OP_ADD, DT_INT16, DT_INT16, (Cell){.i = 32767}, (Cell){.i = 1}, &r);
  CU_ASSERT_EQUAL(r.i, -32768);
  alu_binary(OP_ADD, DT_UINT8, DT_UINT8, (Cell){.i = 255}, (Cell){.i = 1}, &r);
  CU_ASSERT_EQUAL(r.i, 0);
  alu_binary(OP_FLOORDIV, DT_INT32, DT_INT32, (Cell){.i = -7}, (Cell){.i = 2}, &r);
  CU_ASSERT_EQUAL(r.i, -4);
  alu_binary(OP_MOD, DT_INT32, DT_INT32, (Cell){.i = -7}, (Cell){.i = 2}, &r);
  CU_ASSERT_EQUAL(r.i, 1);
  alu_binary(OP_MOD, DT_INT32, DT_INT32, (Cell){.i = 7}, (Cell){.i = -2}, &r);
  CU_ASSERT_EQUAL(r.i, -1);
  CU_ASSERT_EQUAL(alu_binary(OP_FLOORDIV, DT_INT32, DT_INT32, (Cell){.i = 1}, (Cell){.i = 0}, &r), ALU_DIVZERO);
  alu_binary(OP_SHL, DT_INT32, DT_INT32, (Cell){.i = 1}, (Cell){.i = 32}, &r);
  CU_ASSERT_EQUAL(r.i, 0);
  alu_binary(OP_SHR, DT_INT32, DT_INT32, (Cell){.i = -8}, (Cell){.i = 1}, &r);
  CU_ASSERT_EQUAL(r.i, -4);
  alu_binary(OP_SHR, DT_UINT32, DT_UINT32, (Cell){.i = 0xfffffff8}, (Cell){.i = 1}, &r);
  CU_ASSERT_EQUAL(r.i, 0x7ffffffc);
  alu_binary(OP_DIV, DT_INT32, DT_FLOAT32, (Cell){.i = 1}, (Cell){.i = 4}, &r);
  CU_ASSERT(r.f == 0.25);
  CU_ASSERT_EQUAL(dtype_convert(DT_FLOAT32, DT_INT8, (Cell){.f = 300.7}).i, 127);
  CU_ASSERT_EQUAL(dtype_convert(DT_FLOAT32, DT_INT32, (Cell){.f = -2.9}).i, -2);
  CU_ASSERT_EQUAL(dtype_convert(DT_FLOAT32, DT_UINT8, (Cell){.f = -5}).i, 0);
  CU_ASSERT_EQUAL(dtype_convert(DT_FLOAT32, DT_INT32, (Cell){.f = NAN}).i, 0);
}

static void test_store_load_roundtrip(void) {
  uint8_t b[8];
  for (int t = 0; t < DT_COUNT; t++) {
    Cell c = dtype_is_float((Dtype)t) ? (Cell){.f = 1.5} : (Cell){.i = 5};
    dtype_store((Dtype)t, c, b);
    Cell back = dtype_load((Dtype)t, b);
    if (dtype_is_float((Dtype)t)) {
      CU_ASSERT(back.f == 1.5);
    } else if (t == DT_BOOL) {
      CU_ASSERT_EQUAL(back.i, 1);
    } else {
      CU_ASSERT_EQUAL(back.i, 5);
    }
  }
}

/* The bulk forms against one element at a time, for every dtype, with
 * values that need wrapping or rounding (int32 2**31 + 5 wraps; a float32
 * from a double rounds), NaN, infinities and negative zero. */
static void test_bulk_load_store(void) {
  enum { N = 9 };
  const double fs[N] = {1.5, -0.0, 1e300, -1e-300, 0.1, NAN, INFINITY, -INFINITY, 65504.0};
  const int64_t is[N] = {5, -1, 2147483653LL, -2147483649LL, 255, 256, INT64_MIN, INT64_MAX, 0};
  for (int t = 0; t < DT_COUNT; t++) {
    Cell c[N], one[N], bulk[N];
    uint8_t b1[8 * N], b2[8 * N];
    int es = dtype_size((Dtype)t);
    for (int i = 0; i < N; i++) c[i] = dtype_is_float((Dtype)t) ? (Cell){.f = fs[i]} : (Cell){.i = is[i]};
    for (int i = 0; i < N; i++) dtype_store((Dtype)t, c[i], b1 + i * es);
    dtype_store_n((Dtype)t, c, N, b2);
    CU_ASSERT_EQUAL(memcmp(b1, b2, (size_t)(N * es)), 0);
    for (int i = 0; i < N; i++) one[i] = dtype_load((Dtype)t, b1 + i * es);
    dtype_load_n((Dtype)t, b1, N, bulk);
    CU_ASSERT_EQUAL(memcmp(one, bulk, sizeof one), 0);
  }
  Cell w = {.i = 2147483653LL};
  uint8_t b[4];
  dtype_store_n(DT_INT32, &w, 1, b);
  dtype_load_n(DT_INT32, b, 1, &w);
  CU_ASSERT_EQUAL(w.i, -2147483643LL); /* 2**31 + 5 wraps to -(2**31) + 5 */
}

/* ---- catalog coverage: every rule is emitted by some golden program ------- */
static int run_dir(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (e->d_name[0] == '.') continue;
    if (e->d_type == DT_DIR) {
      n += run_dir(path);
      continue;
    }
    if (len < 5 || strcmp(e->d_name + len - 5, ".yaml")) continue;
    Program p;
    Diag dg;
    memset(&p, 0, sizeof p);
    if (load_program(path, &p, &dg) && check_program(&p, &dg) && p.lowered) {
      Code c; /* a user's lowering meets the verifier's rules */
      if (asm_parse(&p, p.lowered, p.lowered_loc, &c, &dg)) {
        mosaic_verify(&c, &dg);
        lower_free(&c);
      }
    }
    program_free(&p);
    n++;
  }
  closedir(d);
  return n;
}

static void test_catalog_coverage(void) {
  memset(diag_hits, 0, sizeof diag_hits);
  int n = run_dir("tests/golden") + run_dir("examples");
  CU_ASSERT(n > 0);
  int missing = 0;
  for (int i = 0; i < D_COUNT; i++) {
    /* unreachable from the format: docs/diagnostics.md says why */
    if (diag_class((DiagId)i) != DC_RULE || i == D_SC_UNSUP) continue;
    if (!diag_hits[i]) {
      fprintf(stderr, "\n  catalog id %s is emitted by no golden program", diag_id_name((DiagId)i));
      missing++;
    }
  }
  CU_ASSERT_EQUAL(missing, 0);
}

/* ---- the ISA text round trip: print, parse, compare ------------------------ */
static bool same_code(const Code *a, const Code *b) {
  if (a->n != b->n || a->nviews != b->nviews) return false;
  for (int i = 0; i < a->n; i++) {
    Instr x = a->code[i], y = b->code[i];
    if (x.op != y.op || x.d != y.d || x.a != y.a || x.b != y.b || x.c != y.c || x.mask != y.mask || x.view != y.view ||
        x.view2 != y.view2 || x.view3 != y.view3 || x.view4 != y.view4 || x.imm != y.imm || x.sub != y.sub ||
        x.add != y.add || x.flags != y.flags || x.prio != y.prio || x.log != y.log || x.rank != y.rank || x.op_id != y.op_id || x.loc.line != y.loc.line ||
        x.loc.col != y.loc.col || (x.op == I_CONST && x.fimm != y.fimm && !(x.fimm != x.fimm && y.fimm != y.fimm)))
      return false;
    if (strchr(isa_form(x.op), 'T') && x.ty != y.ty) return false;
    if (strchr(isa_form(x.op), 'U') && x.uty != y.uty) return false;
    if (strchr(isa_form(x.op), 'J') && x.target != y.target) return false;
    if (memcmp(x.shape, y.shape, sizeof(int64_t) * (size_t)x.rank)) return false;
  }
  for (int i = 0; i < a->nviews; i++) {
    const VDesc *x = &a->views[i], *y = &b->views[i];
    if (x->ref != y->ref || x->nlev != y->nlev) return false;
    for (int k = 0; k < x->nlev; k++) {
      const Level *u = &x->lev[k], *w = &y->lev[k];
      if (u->kind != w->kind || u->dtype != w->dtype || u->rank != w->rank || u->n != w->n) return false;
      if (u->int_rank == 0 && memcmp(u->shape, w->shape, sizeof(int64_t) * (size_t)u->rank)) return false;
      for (int d = 0; d < u->n; d++)
        if (u->ek[d] != w->ek[d] || u->start[d].reg != w->start[d].reg || u->start[d].imm != w->start[d].imm ||
            (u->ek[d] == IX_SLICE && (u->size[d].reg != w->size[d].reg || u->size[d].imm != w->size[d].imm || u->stride[d] != w->stride[d])))
          return false;
    }
  }
  return true;
}

/* The lowered code of p survives print, parse (ctx: the failure count). */
static void roundtrip_one(Program *p, const char *path, void *ctx) {
  int *failed = ctx;
  Code a, b;
  Diag dg;
  lower_program(p, MUT_NONE, &a, &dg);
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  asm_print(&a, f);
  fclose(f);
  bool ok = asm_parse(p, buf, (Loc){path, 1, 1}, &b, &dg);
  if (!ok || !same_code(&a, &b)) {
    fprintf(stderr, "\n  round trip differs for %s%s%s", path, ok ? "" : ": ", ok ? "" : dg.message);
    ++*failed;
  }
  if (ok) lower_free(&b);
  lower_free(&a);
  free(buf);
}

static int roundtrip_dir(const char *dir, int *failed) { return each_checked_program(dir, roundtrip_one, failed); }

/* The name index against a plain scan: 5000 names, each bound twice (the
 * second binding wins), through several growths, in malloc and arena mode. */
static void test_name_index(void) {
  static char names[5000][8];
  for (int mode = 0; mode < 2; mode++) {
    Arena a = {0};
    NameIndex m = {0};
    m.arena = mode ? &a : NULL;
    CU_ASSERT_EQUAL(names_get(&m, "x"), -1);
    for (int i = 0; i < 5000; i++) {
      snprintf(names[i], sizeof names[i], "v%d", i);
      names_put(&m, names[i], i);
    }
    for (int i = 0; i < 5000; i += 2) names_put(&m, names[i], -i - 7);
    CU_ASSERT_EQUAL(m.n, 5000);
    int bad = 0;
    for (int i = 0; i < 5000; i++) bad += names_get(&m, names[i]) != (i % 2 ? i : -i - 7);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(names_get(&m, "v5000"), -1);
    CU_ASSERT_EQUAL(names_get(&m, ""), -1);
    names_free(&m);
    CU_ASSERT_EQUAL(names_get(&m, "v1"), -1);
    arena_free(&a);
  }
}

static void test_isa_roundtrip(void) {
  int failed = 0, n = 0;
  static const char *const dirs[] = {"tests/golden/exec", "tests/golden/race", "tests/golden/timing", "tests/golden/worked", "tests/golden/carry", "examples"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) n += roundtrip_dir(dirs[i], &failed);
  CU_ASSERT(n > 20);
  CU_ASSERT_EQUAL(failed, 0);
}

/* ---- the ISA form column: printer and parser follow it ------------------- */
/* Each form letter of isa.h: the text it prints as when set by set_letter,
 * and the letter it shares an Instr member with (a run N is a and imm). */
static const struct {
  char letter;
  const char *text[2];
  const char *shares;
} letters[] = {
    {'D', {"%9 = "}, ""},         {'A', {" a=%2"}, "N"},        {'B', {" b=%3"}, ""},
    {'C', {" c=%4"}, ""},         {'N', {" a=%2", " imm=2"}, "AI"}, {'M', {" mask=%5"}, ""},
    {'V', {" v=v0"}, ""},         {'W', {" v2=v1"}, ""},        {'X', {" sem=v2"}, ""},
    {'O', {" offsets=v3"}, ""},   {'I', {" imm=7"}, "N"},       {'R', {" shape=(2,3)"}, ""},
    {'S', {" op=\"+\""}, ""},     {'T', {" ty=float64"}, ""},   {'U', {" uty=int8"}, ""},
    {'J', {" target=1"}, ""},     {'G', {" log=O"}, ""},        {'F', {" add=true", " priority=1"}, ""},
};
#define NLETTERS (int)(sizeof letters / sizeof letters[0])

static void set_letter(Instr *in, char l, bool on) {
  switch (l) {
  case 'D': in->d = on ? 9 : -1; break;
  case 'A': in->a = on ? 2 : -1; break;
  case 'B': in->b = on ? 3 : -1; break;
  case 'C': in->c = on ? 4 : -1; break;
  case 'N': in->a = on ? 2 : -1, in->imm = on ? 2 : 0; break;
  case 'M': in->mask = on ? 5 : -1; break;
  case 'V': in->view = on ? 0 : -1; break;
  case 'W': in->view2 = on ? 1 : -1; break;
  case 'X': in->view3 = on ? 2 : -1; break;
  case 'O': in->view4 = on ? 3 : -1; break;
  case 'I': in->imm = on ? 7 : 0; break;
  case 'R': in->rank = on ? 2 : 0, in->shape[0] = 2, in->shape[1] = 3; break;
  case 'S': in->sub = on ? OP_ADD : OP_NONE; break;
  case 'T': in->ty = on ? DT_FLOAT64 : (Dtype)0; break;
  case 'U': in->uty = on ? DT_INT8 : (Dtype)0; break;
  case 'J': in->target = on; break;
  case 'G': in->log = on ? 'O' : 0; break;
  case 'F': in->add = on, in->prio = on; break;
  }
}

static char form_has(Opcode op, char l) { return isa_operand(op, l); }

/* The instruction of op with every operand of its form set. */
static Instr full_instr(Opcode op) {
  Instr in;
  memset(&in, 0, sizeof in);
  in.op = op;
  in.d = in.a = in.b = in.c = in.mask = in.view = in.view2 = in.view3 = in.view4 = -1;
  in.op_id = 3;
  in.loc = (Loc){"forms.yaml", 5, 7};
  for (int k = 0; k < NLETTERS; k++)
    if (form_has(op, letters[k].letter)) set_letter(&in, letters[k].letter, true);
  if (op == I_CONST) in.fimm = 2.5; /* printed with ty=float64 */
  return in;
}

static bool same_instr(const Instr *x, const Instr *y) {
  return x->op == y->op && x->d == y->d && x->a == y->a && x->b == y->b && x->c == y->c && x->mask == y->mask &&
         x->view == y->view && x->view2 == y->view2 && x->view3 == y->view3 && x->view4 == y->view4 && x->imm == y->imm &&
         x->fimm == y->fimm && x->sub == y->sub && x->ty == y->ty && x->uty == y->uty && x->target == y->target &&
         x->add == y->add && x->prio == y->prio && x->log == y->log && x->rank == y->rank &&
         !memcmp(x->shape, y->shape, sizeof(int64_t) * (size_t)x->rank) && x->op_id == y->op_id &&
         x->loc.line == y->loc.line && x->loc.col == y->loc.col;
}

/* The text asm_print writes for one instruction over the views of base. */
static char *print_one(const Code *base, const Instr *in) {
  Code c = *base;
  c.code = (Instr *)in;
  c.n = 1;
  c.nregs = 10;
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  asm_print(&c, f);
  fclose(f);
  return buf;
}

/* Parses text; on success *out holds its only instruction. */
static bool parse_one(const Program *p, const char *text, Instr *out, Diag *d) {
  Code c;
  if (!asm_parse(p, text, (Loc){"forms.yaml", 1, 1}, &c, d)) return false;
  bool ok = c.n == 1;
  if (ok) *out = c.code[0];
  lower_free(&c);
  return ok;
}

/* Inserts frag before " at=" (a prefix "%9 = " after "0: "). */
static char *with_fragment(const char *text, const char *frag) {
  const char *at = frag[0] == '%' ? strstr(text, "0: ") + 3 : strstr(text, " at=");
  size_t n = strlen(text) + strlen(frag) + 1;
  char *out = malloc(n);
  snprintf(out, n, "%.*s%s%s", (int)(at - text), text, frag, at);
  return out;
}

static void check_form(const Program *p, const Code *base, Opcode op) {
  Instr x = full_instr(op), back;
  Diag d;
  char *text = print_one(base, &x);
  for (int k = 0; k < NLETTERS; k++) { /* the printer writes every form operand */
    for (int t = 0; t < 2 && letters[k].text[t]; t++)
      if (form_has(op, letters[k].letter)) CU_ASSERT(strstr(text, letters[k].text[t]) != NULL);
  }
  CU_ASSERT(parse_one(p, text, &back, &d) && same_instr(&x, &back)); /* and the parser reads them back */
  for (int k = 0; k < NLETTERS; k++) {
    char l = letters[k].letter, f = form_has(op, l);
    if (f && isupper((unsigned char)f) && strchr("DABCNMVWXO", l)) { /* a required register or view */
      Instr y = x;
      set_letter(&y, l, false);
      char *t2 = print_one(base, &y);
      CU_ASSERT(!parse_one(p, t2, &back, &d) && strstr(d.message, "needs its operand") != NULL);
      free(t2);
    }
    bool shared = false;
    for (const char *o = letters[k].shares; *o; o++) shared |= form_has(op, *o) != 0;
    if (f || shared) continue;
    Instr y = x; /* an operand outside the form: not printed, not accepted */
    set_letter(&y, l, true);
    char *t2 = print_one(base, &y), *t3 = with_fragment(text, letters[k].text[0]);
    CU_ASSERT(strcmp(t2, text) == 0);
    CU_ASSERT(!parse_one(p, t3, &back, &d) && strstr(d.message, "is not an operand of") != NULL);
    free(t2);
    free(t3);
  }
  Instr opt = x; /* optional operands may be left out */
  for (int k = 0; k < NLETTERS; k++)
    if (islower((unsigned char)form_has(op, letters[k].letter))) set_letter(&opt, letters[k].letter, false);
  char *t4 = print_one(base, &opt);
  CU_ASSERT(parse_one(p, t4, &back, &d) && same_instr(&opt, &back));
  free(t4);
  free(text);
}

static void test_isa_forms(void) {
  static const char prog[] =
      "version: 1\nchip: tpu7x\nkernel: vector_subcore\nmesh: {cores: 1, subcores: 1}\nrefs:\n"
      "  buf: {space: vmem, shape: [16], dtype: int32}\n  sem: {space: semaphore, type: dma}\n"
      "  idx: {space: vmem, shape: [4], dtype: int32}\nbody: []\n";
  static Program p;
  Diag d;
  Code base;
  CU_ASSERT_FATAL(load_program_text("forms.yaml", prog, sizeof prog - 1, &p, &d));
  CU_ASSERT_FATAL(asm_parse(&p, "view v0 = buf\nview v1 = buf\nview v2 = sem\nview v3 = idx\n", (Loc){"forms.yaml", 1, 1}, &base, &d));
  for (int i = 0; i < I_COUNT; i++) check_form(&p, &base, (Opcode)i);
  lower_free(&base);
  program_free(&p);
}

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_pSuite s = CU_add_suite("sc-sim", NULL, NULL);
  CU_add_test(s, "isa table", test_isa_table);
  CU_add_test(s, "diagnostics table", test_diag_table);
  CU_add_test(s, "chip table", test_chip_table);
  CU_add_test(s, "expression operator table", test_expr_op_table);
  CU_add_test(s, "builtin table", test_builtin_table);
  CU_add_test(s, "mutant table", test_mutant_table);
  CU_add_test(s, "expression parser", test_expr_parse);
  CU_add_test(s, "expression depth bound", test_expr_depth);
  CU_add_test(s, "bfloat16 and float16 rounding", test_narrow_floats);
  CU_add_test(s, "float printing", test_float_format);
  CU_add_test(s, "integer wrap and conversions", test_int_wrap_and_convert);
  CU_add_test(s, "store/load round trip", test_store_load_roundtrip);
  CU_add_test(s, "name index", test_name_index);
  CU_add_test(s, "bulk load and store", test_bulk_load_store);
  CU_add_test(s, "catalog coverage by golden programs", test_catalog_coverage);
  CU_add_test(s, "ISA text round trip", test_isa_roundtrip);
  CU_add_test(s, "ISA forms: printer and parser", test_isa_forms);
  CU_basic_set_mode(CU_BRM_NORMAL);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures();
  CU_cleanup_registry();
  return failed ? 1 : 0;
}
