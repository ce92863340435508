/* sim/load.c -- the YAML front end.
 *
 * libyaml's document API parses the file; a walk over the node tree then
 * builds the IR, checking every key against the format's tables (OPS and
 * FIELDS in program.h, CHIP_PARAMS in chips.h) and every value's type.
 * The first problem stops the load with an input diagnostic that points at
 * the offending key or value and, for a misspelt key, names the nearest
 * valid one.  libyaml's own errors are mapped to one wording here, so our
 * output never depends on libyaml's phrasing. */
#include "load.h"
#include "load_pipeline.h"
#include "load_sugar.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "../../lowering/index.h"
#include "../../memory/npy.h"
#include "parse.h"
#include "select_ref.h"

typedef struct {
  Program *p;
  const char *raw; /* the file's bytes, for positions inside scalars */
  size_t rawlen;
  yaml_document_t *doc;
  Diag *d;
  bool failed;
  int depth;
  long visits;     /* nodes visited: bounds alias bombs */
  long max_visits; /* MAX_VISITS */
  long long_bytes, max_long_bytes; /* bytes of long scalars visited, and their bound */
  const LoadFiles *files; /* NULL: init: {npy: PATH} reads PATH from disk */
  yaml_node_t *defines; /* the top-level define: mapping, or NULL */
  Pipe **pipes;         /* the emit_pipelines of the kernel being loaded (load_pipeline.inc) */
  int npipes, cappipes;
  /* an item of an mpmd kernel being loaded (load_mpmd.inc): its number
   * (1-based; 0 otherwise) and the item's own scratch, which every mesh
   * of the mpmd kernel shares */
  int mesh_no;
  yaml_node_t *common;
} Loader;

#define MAX_VISITS 2000000L
#define MAX_ANCHORS 10000
#define MAX_EXPANDED 1000000LL /* nodes of the expanded document, beyond two per node written */

static Loc mark_loc(Loader *L, yaml_mark_t m) {
  Loc l = {L->p->file, (int)m.line + 1, (int)m.column + 1};
  return l;
}

static Loc node_loc(Loader *L, yaml_node_t *n) { return mark_loc(L, n->start_mark); }

static bool fail(Loader *L, DiagId id, Loc at, ...) {
  if (L->failed) return false;
  va_list ap;
  va_start(ap, at);
  diag_vset(L->d, id, at, ap);
  va_end(ap);
  L->failed = true;
  return false;
}

/* Every node lookup goes through here.  Past the visit budget (an alias
 * bomb) the load has failed; a harmless empty scalar stands in so that no
 * caller ever sees NULL while the walk unwinds. */
static yaml_node_t *get(Loader *L, int idx) {
  static yaml_char_t empty[1];
  static yaml_node_t dummy;
  yaml_node_t *peek = yaml_document_get_node(L->doc, idx);
  /* A scalar is copied, mapped and parsed per visit (about 120 bytes of
   * memory per character): aliases of a long one spend a byte budget. */
  if (peek && peek->type == YAML_SCALAR_NODE && peek->data.scalar.length >= 64) L->long_bytes += (long)peek->data.scalar.length;
  if (++L->visits > L->max_visits || L->long_bytes > L->max_long_bytes) {
    fail(L, D_IN_LIMIT, (Loc){L->p->file, 1, 1}, "the document is too large once YAML aliases are expanded");
    dummy.type = YAML_SCALAR_NODE;
    dummy.data.scalar.value = empty;
    return &dummy;
  }
  yaml_node_t *n = peek;
  if (!n) {
    dummy.type = YAML_SCALAR_NODE;
    dummy.data.scalar.value = empty;
    return &dummy;
  }
  return n;
}

static const char *scalar(yaml_node_t *n) { return (const char *)n->data.scalar.value; }
static bool is_scalar(yaml_node_t *n) { return n && n->type == YAML_SCALAR_NODE; }
static bool is_map(yaml_node_t *n) { return n && n->type == YAML_MAPPING_NODE; }
static bool is_seq(yaml_node_t *n) { return n && n->type == YAML_SEQUENCE_NODE; }

static const char *node_kind(yaml_node_t *n) {
  if (is_map(n)) return "a mapping";
  if (is_seq(n)) return "a list";
  return "a scalar";
}

static bool unknown_key(Loader *L, yaml_node_t *key, const char *where, const char *const *valid, int n) {
  char hint[256] = "";
  const char *near = n == 1 ? valid[0] : names_nearest(scalar(key), valid, n);
  if (near) snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
  else {
    size_t len = (size_t)snprintf(hint, sizeof hint, "; valid keys:");
    for (int i = 0; i < n && len < sizeof hint - 40; i++)
      len += (size_t)snprintf(hint + len, sizeof hint - len, "%s %s", i ? "," : "", valid[i]);
  }
  return fail(L, D_IN_KEY, node_loc(L, key), scalar(key), where, hint);
}

/* libyaml accepts a mapping with a key twice; a program may not.  Keys are
 * sorted (name, then position) so that a wide mapping costs n log n, and
 * each key counts once against the visit budget. */
typedef struct {
  const char *name;
  yaml_node_t *node;
} KeyAt;

static int key_cmp(const void *x, const void *y) {
  const KeyAt *a = x, *b = y;
  int c = strcmp(a->name, b->name);
  if (c) return c;
  return a->node->start_mark.index < b->node->start_mark.index ? -1 : a->node->start_mark.index > b->node->start_mark.index;
}

static bool check_dups(Loader *L, yaml_node_t *m, const char *where) {
  yaml_node_pair_t *a = m->data.mapping.pairs.start, *e = m->data.mapping.pairs.top;
  if (e - a < 2) return true;
  KeyAt *k = malloc(sizeof *k * (size_t)(e - a));
  if (!k) abort();
  size_t n = 0;
  for (yaml_node_pair_t *j = a; j < e; j++) {
    yaml_node_t *kj = get(L, j->key);
    if (is_scalar(kj)) k[n++] = (KeyAt){scalar(kj), kj};
  }
  qsort(k, n, sizeof *k, key_cmp);
  size_t best = n; /* the duplicate written first: the lowest second occurrence */
  for (size_t i = 1; i < n; i++)
    if (!strcmp(k[i].name, k[i - 1].name) && (i < 2 || strcmp(k[i].name, k[i - 2].name)) &&
        (best == n || k[i].node->start_mark.index < k[best].node->start_mark.index))
      best = i;
  bool ok = true;
  if (best < n) {
    char msg[400];
    snprintf(msg, sizeof msg, "duplicate key '%.80s' in %s (first given at line %d)", k[best].name, where,
             (int)k[best - 1].node->start_mark.line + 1);
    ok = fail(L, D_IN_DUP, node_loc(L, k[best].node), msg);
  }
  free(k);
  return ok;
}

/* ---- scalars ------------------------------------------------------- */
static bool parse_int(const char *s, int64_t *out) {
  if (!*s) return false;
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 0);
  if (*end || errno == ERANGE) return false;
  *out = v;
  return true;
}

/* An integer literal of dtype t: int64, and for uint64 also the values
 * past 2**63 - 1 (kept as their 64 bits, as a uint64 cell holds them). */
static bool parse_int_of(const char *s, Dtype t, int64_t *out) {
  if (parse_int(s, out)) return true;
  if (t != DT_UINT64 || !isdigit((unsigned char)s[0])) return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 0);
  if (*end || errno == ERANGE) return false;
  *out = (int64_t)v;
  return true;
}

static bool want_int(Loader *L, yaml_node_t *n, const char *key, int64_t lo, int64_t *out) {
  int64_t v;
  if (!is_scalar(n) || !parse_int(scalar(n), &v)) {
    char what[64];
    snprintf(what, sizeof what, "an integer, got %s", is_scalar(n) ? "text" : node_kind(n));
    if (is_scalar(n) && *scalar(n) && strspn(scalar(n), "-0123456789") == strlen(scalar(n)))
      snprintf(what, sizeof what, "an integer that fits in 64 bits");
    return fail(L, D_IN_TYPE, node_loc(L, n), key, what);
  }
  if (v < lo) {
    char what[64];
    snprintf(what, sizeof what, "at least %lld, got %lld", (long long)lo, (long long)v);
    return fail(L, D_IN_TYPE, node_loc(L, n), key, what);
  }
  *out = v;
  return true;
}

static bool want_bool(Loader *L, yaml_node_t *n, const char *key, bool *out) {
  if (is_scalar(n)) {
    const char *s = scalar(n);
    if (!strcmp(s, "true") || !strcmp(s, "True")) return *out = true, true;
    if (!strcmp(s, "false") || !strcmp(s, "False")) return *out = false, true;
  }
  return fail(L, D_IN_TYPE, node_loc(L, n), key, "true or false");
}

static bool want_string(Loader *L, yaml_node_t *n, const char *key, const char **out) {
  if (!is_scalar(n)) return fail(L, D_IN_TYPE, node_loc(L, n), key, "a string");
  *out = arena_strdup(&L->p->arena, scalar(n));
  return true;
}

static bool is_identifier(const char *s) {
  if (!*s || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  for (; *s; s++)
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'))) return false;
  return true;
}

/* Where the text of a scalar starts: quoted scalars start after the quote. */
static Loc text_loc(Loader *L, yaml_node_t *n) {
  Loc l = node_loc(L, n);
  yaml_scalar_style_t st = n->data.scalar.style;
  if (st == YAML_SINGLE_QUOTED_SCALAR_STYLE || st == YAML_DOUBLE_QUOTED_SCALAR_STYLE) l.col++;
  if (st == YAML_LITERAL_SCALAR_STYLE || st == YAML_FOLDED_SCALAR_STYLE) {
    l.line++;
    l.col = 1;
  }
  return l;
}

/* ---- positions inside scalars ---------------------------------------- */
typedef struct {
  size_t r;   /* raw byte offset */
  Loc l;      /* its position */
} Cursor;

static void advance(const char *raw, Cursor *c) {
  if (raw[c->r] == '\n') c->l.line++, c->l.col = 1;
  else if (((unsigned char)raw[c->r] & 0xc0) != 0x80) c->l.col++;
  c->r++;
}

static size_t escape_len(const char *raw, size_t r, size_t end) {
  char k = r + 1 < end ? raw[r + 1] : 0;
  return k == 'x' ? 4 : k == 'u' ? 6 : k == 'U' ? 10 : 2;
}

/* Maps each byte of a scalar's decoded text to the file position it came
 * from, walking the raw source alongside: quotes, escapes, doubled single
 * quotes, folded line breaks and block indentation produce no text. */
static Loc *scalar_map(Loader *L, yaml_node_t *n, const char *text) {
  size_t len = strlen(text), end = n->end_mark.index;
  Loc *map = arena_alloc(&L->p->arena, sizeof *map * (len + 1));
  yaml_scalar_style_t st = n->data.scalar.style;
  bool dq = st == YAML_DOUBLE_QUOTED_SCALAR_STYLE, sq = st == YAML_SINGLE_QUOTED_SCALAR_STYLE;
  Cursor c = {n->start_mark.index, node_loc(L, n)};
  if (end > L->rawlen) end = L->rawlen;
  if (dq || sq) advance(L->raw, &c);
  if (st == YAML_LITERAL_SCALAR_STYLE || st == YAML_FOLDED_SCALAR_STYLE)
    while (c.r < end && L->raw[c.r] != '\n') advance(L->raw, &c);
  for (size_t i = 0; i < len; i++) {
    char want = text[i];
    while (c.r < end) {
      char rc = L->raw[c.r];
      if (dq && rc == '\\') {
        map[i] = c.l;
        size_t k = escape_len(L->raw, c.r, end);
        while (i + 1 < len && ((unsigned char)text[i + 1] & 0xc0) == 0x80) map[++i] = c.l; /* a multi-byte result */
        for (size_t j = 0; j < k && c.r < end; j++) advance(L->raw, &c);
        goto next;
      }
      if (sq && rc == '\'' && want == '\'') {
        map[i] = c.l;
        advance(L->raw, &c);
        advance(L->raw, &c);
        goto next;
      }
      if (rc == want || (want == ' ' && rc == '\n')) {
        map[i] = c.l;
        advance(L->raw, &c);
        goto next;
      }
      advance(L->raw, &c);
    }
    map[i] = c.l;
  next:;
  }
  map[len] = c.l;
  return map;
}

/* ---- expressions from YAML nodes ----------------------------------- */
static Expr *expr_from_node(Loader *L, yaml_node_t *n, const char *key) {
  if (!n || L->failed) return NULL;
  if (++L->depth > LOAD_MAX_DEPTH * 4) {
    fail(L, D_IN_LIMIT, node_loc(L, n), "values are nested too deeply");
    return NULL;
  }
  Expr *e = NULL;
  if (is_scalar(n)) {
    if (!*scalar(n)) {
      fail(L, D_IN_TYPE, node_loc(L, n), key, "an expression, got an empty value");
    } else {
      e = L->raw ? expr_parse_mapped(&L->p->arena, scalar(n), scalar_map(L, n, scalar(n)), L->d)
                 : expr_parse(&L->p->arena, scalar(n), text_loc(L, n), L->d);
      if (!e) L->failed = true;
    }
  } else if (is_seq(n)) {
    e = arena_alloc(&L->p->arena, sizeof *e);
    e->kind = EX_LIST;
    e->loc = node_loc(L, n);
    int cnt = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    e->args = arena_alloc(&L->p->arena, sizeof(Expr *) * (cnt ? cnt : 1));
    for (int i = 0; i < cnt && !L->failed; i++)
      e->args[e->nargs++] = expr_from_node(L, get(L, n->data.sequence.items.start[i]), key);
  } else {
    fail(L, D_IN_TYPE, node_loc(L, n), key, "an expression (a string, a number or a list), got a mapping");
  }
  L->depth--;
  return L->failed ? NULL : e;
}

/* ---- chip, kernel, mesh -------------------------------------------- */
static const char *chip_names_buf[64];

static int chip_names(void) {
  int n = 0;
  for (int i = 0; i < chip_count() && n < 60; i++) {
    chip_names_buf[n++] = chip_at(i)->name;
    chip_names_buf[n++] = chip_at(i)->device_kind;
    if (chip_at(i)->alias) chip_names_buf[n++] = chip_at(i)->alias;
  }
  return n;
}

static bool set_chip_name(Loader *L, yaml_node_t *n) {
  if (!is_scalar(n)) return fail(L, D_IN_TYPE, node_loc(L, n), "chip", "a preset name or a mapping {preset: NAME, ...}");
  const Chip *c = chip_find(scalar(n));
  if (!c) {
    char hint[600];
    const char *near = names_nearest(scalar(n), chip_names_buf, chip_names());
    if (near) snprintf(hint, sizeof hint, "unknown chip '%s'; did you mean '%s'? (sc-sim --list-chips lists them)", scalar(n), near);
    else snprintf(hint, sizeof hint, "unknown chip '%s' (sc-sim --list-chips lists them)", scalar(n));
    return fail(L, D_IN_VALUE, node_loc(L, n), hint);
  }
  L->p->chip = c;
  L->p->params = c->p;
  return true;
}

static bool load_chip(Loader *L, yaml_node_t *n) {
  L->p->chip_loc = node_loc(L, n);
  if (!is_map(n)) return set_chip_name(L, n);
  if (!check_dups(L, n, "chip")) return false;
  yaml_node_pair_t *pr;
  bool have = false;
  for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = get(L, pr->key);
    if (is_scalar(k) && !strcmp(scalar(k), "preset")) have = set_chip_name(L, get(L, pr->value));
  }
  if (L->failed) return false;
  if (!have) return fail(L, D_IN_MISSING, node_loc(L, n), "the chip mapping", "preset");
  const char *keys[CP_COUNT + 1];
  keys[0] = "preset";
  for (int i = 0; i < CP_COUNT; i++) keys[i + 1] = chip_param_name((ChipParamId)i);
  for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top && !L->failed; pr++) {
    yaml_node_t *k = get(L, pr->key), *v = get(L, pr->value);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "chip key", "a string");
    if (!strcmp(scalar(k), "preset")) continue;
    ChipParamId id;
    if (!chip_param_lookup(scalar(k), &id)) return unknown_key(L, k, "chip", keys, CP_COUNT + 1);
    if (!L->p->chip->has_sc) continue; /* C0 rejects the program anyway */
    int64_t val, hi = id == CP_num_cores || id == CP_num_subcores || id == CP_num_lanes || id == CP_vmem_banks ||
                              id == CP_dma_queue_depth ? 1024 : (int64_t)1 << 50;
    if (!want_int(L, v, scalar(k), 1, &val)) return false;
    if (val > hi) {
      char what[96];
      snprintf(what, sizeof what, "at most %lld, got %lld", (long long)hi, (long long)val);
      return fail(L, D_IN_TYPE, node_loc(L, v), scalar(k), what);
    }
    *chip_param_ptr(&L->p->params, id) = val;
  }
  return !L->failed;
}

static bool load_kernel(Loader *L, yaml_node_t *n) {
  L->p->kernel_loc = node_loc(L, n);
  if (is_scalar(n) && !strcmp(scalar(n), "vector_subcore")) L->p->kernel = KERNEL_VECTOR;
  else if (is_scalar(n) && !strcmp(scalar(n), "scalar_subcore")) L->p->kernel = KERNEL_SCALAR;
  else return fail(L, D_IN_TYPE, node_loc(L, n), "kernel", "vector_subcore or scalar_subcore");
  return true;
}

static bool load_mesh(Loader *L, yaml_node_t *n) {
  static const char *const keys[] = {"cores", "subcores"};
  L->p->mesh_loc = node_loc(L, n);
  if (!is_map(n)) return fail(L, D_IN_TYPE, node_loc(L, n), "mesh", "a mapping {cores: N, subcores: M}");
  if (!check_dups(L, n, "mesh")) return false;
  for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top && !L->failed; pr++) {
    yaml_node_t *k = get(L, pr->key), *v = get(L, pr->value);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "mesh key", "a string");
    if (!strcmp(scalar(k), "cores")) want_int(L, v, "cores", 1, &L->p->mesh_cores);
    else if (!strcmp(scalar(k), "subcores")) {
      if (L->p->kernel == KERNEL_SCALAR)
        return fail(L, D_IN_VALUE, node_loc(L, k),
                    "a scalar_subcore mesh has one scalar subcore per SparseCore: remove 'subcores' (mesh: {cores: N})");
      want_int(L, v, "subcores", 1, &L->p->mesh_subcores);
    } else return unknown_key(L, k, "mesh", keys, 2);
  }
  return !L->failed;
}

/* ---- refs ----------------------------------------------------------- */
static bool load_shape(Loader *L, Ref *r, yaml_node_t *n) {
  if (!is_seq(n)) return fail(L, D_IN_TYPE, node_loc(L, n), "shape", "a list of non-negative integers such as [8] or [] for a scalar");
  int cnt = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
  if (cnt > MAX_RANK) {
    char msg[128];
    snprintf(msg, sizeof msg, "shape has rank %d; sc-sim supports ranks up to %d", cnt, MAX_RANK);
    return fail(L, D_IN_LIMIT, node_loc(L, n), msg);
  }
  r->rank = cnt;
  r->nelems = 1;
  for (int i = 0; i < cnt; i++) {
    yaml_node_t *d = get(L, n->data.sequence.items.start[i]);
    if (is_scalar(d) && *scalar(d) && strspn(scalar(d), "-+0123456789") != strlen(scalar(d))) { /* chip constants (load_sugar.c) */
      const char *why = NULL;
      Expr *e = expr_from_node(L, d, "shape");
      if (!e) return false;
      if (!sugar_fold_dim(e, &L->p->params, &r->shape[i], &why) || r->shape[i] < 0)
        return fail(L, D_IN_VALUE, node_loc(L, d), why ? why : "a shape dimension must not be negative");
    } else if (!want_int(L, d, "a shape dimension", 0, &r->shape[i])) return false;
    if (r->shape[i] && r->nelems > LOAD_MAX_REF_ELEMS / r->shape[i]) {
      char msg[160];
      snprintf(msg, sizeof msg, "ref '%s' has more than 2**36 elements; sc-sim's limit for one ref is 2**36", r->name);
      return fail(L, D_IN_LIMIT, node_loc(L, d), msg);
    }
    r->nelems *= r->shape[i];
  }
  return true;
}

/* An integer literal for an integer dtype must fit it, as NumPy 2 asks. */
static bool int_literal_fits(const char *s, Dtype t) {
  size_t k = s[0] == '-' || s[0] == '+' ? 1 : 0;
  if (!s[k] || strspn(s + k, "0123456789") != strlen(s + k)) return true; /* not an integer literal */
  if (!dtype_is_int(t)) return true;
  int64_t v;
  if (!parse_int_of(s, t, &v)) return false;
  if (dtype_kind(t) == DK_UINT && v < 0 && !(t == DT_UINT64 && s[0] != '-')) return false;
  return dtype_size(t) == 8 || dtype_fit(t, (Cell){.i = v}).i == v;
}

static bool scalar_cell(const char *s, Dtype t, Cell *c) {
  int64_t iv;
  if (!strcmp(s, "true") || !strcmp(s, "True")) iv = 1;
  else if (!strcmp(s, "false") || !strcmp(s, "False")) iv = 0;
  else if (!parse_int_of(s, t, &iv)) {
    char *end;
    double f = strtod(s, &end);
    if (*end || !*s) {
      if (!strcmp(s, "nan")) f = NAN;
      else if (!strcmp(s, "inf")) f = INFINITY;
      else if (!strcmp(s, "-inf")) f = -INFINITY;
      else return false;
    }
    c->f = f;
    *c = dtype_is_float(t) ? dtype_fit(t, *c) : dtype_convert(DT_FLOAT64, t, *c);
    return true;
  }
  c->i = iv;
  *c = dtype_is_float(t) ? dtype_convert(DT_INT64, t, *c) : dtype_fit(t, *c);
  return true;
}

/* Fills init_data from a nested list that must have the ref's shape. */
static bool load_init_list(Loader *L, Ref *r, yaml_node_t *n, int dim, int64_t *pos) {
  if (dim == r->rank) {
    if (is_scalar(n) && !int_literal_fits(scalar(n), r->dtype)) {
      char msg[200];
      snprintf(msg, sizeof msg, "init element %.40s does not fit in %s", scalar(n), dtype_name(r->dtype));
      return fail(L, D_IN_VALUE, node_loc(L, n), msg);
    }
    if (!is_scalar(n) || !scalar_cell(scalar(n), r->dtype, &r->init_data[*pos]))
      return fail(L, D_IN_TYPE, node_loc(L, n), "an init element", "a number (or true/false)");
    (*pos)++;
    return true;
  }
  int cnt = is_seq(n) ? (int)(n->data.sequence.items.top - n->data.sequence.items.start) : -1;
  if (cnt != r->shape[dim]) {
    char msg[300];
    snprintf(msg, sizeof msg, "init of ref '%s' has the wrong size: dimension %d must have %lld elements, got %s%d",
             r->name, dim, (long long)r->shape[dim], cnt < 0 ? "a scalar instead of a list" : "", cnt < 0 ? 0 : cnt);
    if (cnt < 0) snprintf(msg, sizeof msg, "init of ref '%s' has the wrong size: dimension %d must be a list of %lld elements", r->name, dim, (long long)r->shape[dim]);
    return fail(L, D_IN_VALUE, node_loc(L, n), msg);
  }
  for (int i = 0; i < cnt && !L->failed; i++) load_init_list(L, r, get(L, n->data.sequence.items.start[i]), dim + 1, pos);
  return !L->failed;
}

/* The nested list's lengths against the shape (first mismatch reported). */
static bool init_shape_ok(Loader *L, Ref *r, yaml_node_t *n, int dim) {
  if (dim == r->rank) return true;
  int cnt = is_seq(n) ? (int)(n->data.sequence.items.top - n->data.sequence.items.start) : -1;
  if (cnt != r->shape[dim]) {
    char msg[300];
    if (cnt < 0) snprintf(msg, sizeof msg, "init of ref '%s' has the wrong size: dimension %d must be a list of %lld elements", r->name, dim, (long long)r->shape[dim]);
    else snprintf(msg, sizeof msg, "init of ref '%s' has the wrong size: dimension %d must have %lld elements, got %d", r->name, dim, (long long)r->shape[dim], cnt);
    return fail(L, D_IN_VALUE, node_loc(L, n), msg);
  }
  for (int i = 0; i < cnt && !L->failed; i++) init_shape_ok(L, r, get(L, n->data.sequence.items.start[i]), dim + 1);
  return !L->failed;
}

static bool load_random(Loader *L, Ref *r, yaml_node_t *n) {
  static const char *const keys[] = {"random", "low", "high", "npy"};
  r->init = INIT_RANDOM;
  r->low = 0;
  r->high = 100;
  bool seen = false;
  if (!check_dups(L, n, "init")) return false;
  for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top && !L->failed; pr++) {
    yaml_node_t *k = get(L, pr->key), *v = get(L, pr->value);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "init key", "a string");
    int64_t iv;
    Cell c;
    if (!strcmp(scalar(k), "random")) {
      if (want_int(L, v, "random", 0, &iv)) r->seed = (uint64_t)iv, seen = true;
    } else if (!strcmp(scalar(k), "low") || !strcmp(scalar(k), "high")) {
      if (!is_scalar(v) || !scalar_cell(scalar(v), DT_FLOAT64, &c)) return fail(L, D_IN_TYPE, node_loc(L, v), scalar(k), "a number");
      *(scalar(k)[0] == 'l' ? &r->low : &r->high) = c.f;
    } else return unknown_key(L, k, "init", keys, 4);
  }
  if (!L->failed && !seen) return fail(L, D_IN_MISSING, node_loc(L, n), "a random init", "random");
  if (!L->failed && !(r->low < r->high)) return fail(L, D_IN_VALUE, node_loc(L, n), "a random init needs low < high");
  return !L->failed;
}

static yaml_node_t *map_get(Loader *L, yaml_node_t *m, const char *key, yaml_node_t **keynode);

/* ---- init: {npy: PATH} ------------------------------------------------ */
/* An .npy file's bytes, from the in-memory table or from disk; the whole
 * file is read only once its header agrees with the ref. */
typedef struct {
  const uint8_t *mem; /* in-memory file, or NULL */
  int fd;
  uint64_t size;
  char shown[600];    /* 'PATH' or 'PATH' (DIR/PATH) for messages */
} NpySource;

static bool npy_open(Loader *L, const char *path, Loc at, NpySource *src) {
  memset(src, 0, sizeof *src);
  src->fd = -1;
  snprintf(src->shown, sizeof src->shown, "'%.400s'", path);
  if (L->files) {
    for (int i = 0; i < L->files->n; i++)
      if (!strcmp(L->files->v[i].name, path)) return src->mem = L->files->v[i].data, src->size = L->files->v[i].len, true;
    char msg[700];
    snprintf(msg, sizeof msg, "cannot open %s: no such file", src->shown);
    return fail(L, D_IN_FILE, at, msg);
  }
  const char *slash = strrchr(L->p->file, '/');
  char full[4200];
  if (path[0] == '/' || !slash) snprintf(full, sizeof full, "%s", path);
  else snprintf(full, sizeof full, "%.*s/%s", (int)(slash - L->p->file), L->p->file, path);
  if (strcmp(full, path)) snprintf(src->shown, sizeof src->shown, "'%.250s' (%.300s)", path, full);
  /* O_NONBLOCK: a FIFO must not hang the loader; only regular files pass */
  src->fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  char msg[800];
  if (src->fd < 0 || fstat(src->fd, &st) != 0) snprintf(msg, sizeof msg, "cannot open %s: %s", src->shown, strerror(errno));
  else if (!S_ISREG(st.st_mode)) snprintf(msg, sizeof msg, "cannot read %s: it is not a regular file", src->shown);
  else return src->size = (uint64_t)st.st_size, true;
  if (src->fd >= 0) close(src->fd), src->fd = -1;
  return fail(L, D_IN_FILE, at, msg);
}

/* Reads n bytes at offset off of the source into out. */
static bool npy_read(NpySource *src, uint64_t off, uint8_t *out, size_t n) {
  if (src->mem) return memcpy(out, src->mem + off, n), true;
  for (size_t got = 0; got < n;) {
    ssize_t k = pread(src->fd, out + got, n - got, (off_t)(off + got));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    got += (size_t)k;
  }
  return true;
}

static bool npy_matches(Loader *L, const Ref *r, const NpyHeader *h, const NpySource *src, Loc at) {
  /* <V1 (read as int4) has no signedness: a uint4 ref takes it too */
  bool same = (h->dtype == r->dtype || (h->dtype == DT_INT4 && r->dtype == DT_UINT4)) && h->rank == r->rank;
  for (int i = 0; same && i < r->rank; i++) same = h->shape[i] == r->shape[i];
  char msg[1000], hs[256], rs[256];
  fmt_shape(hs, sizeof hs, h->rank, h->shape);
  fmt_shape(rs, sizeof rs, r->rank, r->shape);
  if (!same) {
    snprintf(msg, sizeof msg, "%s holds %s ('%s') of shape %s, but ref '%s' is %s of shape %s: save the array with the ref's dtype and shape",
             src->shown, dtype_name(h->dtype), h->descr, hs, r->name, dtype_name(r->dtype), rs);
    return fail(L, D_IN_VALUE, at, msg);
  }
  uint64_t have = src->size - h->data_offset;
  if (have == h->data_bytes) return true;
  snprintf(msg, sizeof msg, "%s is not a valid .npy file: its header says %s of shape %s, %llu bytes of data, but %llu bytes follow the header%s",
           src->shown, h->descr, hs, (unsigned long long)h->data_bytes, (unsigned long long)have, have < h->data_bytes ? " (the file is truncated)" : "");
  return fail(L, D_IN_VALUE, at, msg);
}

/* The header of the file, parsed; false (the load failed) when malformed. */
static bool npy_header(Loader *L, NpySource *src, NpyHeader *h, Loc at) {
  uint8_t head[NPY_MAX_HEADER + 12];
  size_t hn = src->size < sizeof head ? (size_t)src->size : sizeof head;
  char err[500], msg[1200];
  if (!npy_read(src, 0, head, hn)) snprintf(err, sizeof err, "reading it failed: %s", strerror(errno));
  else if (npy_parse_header(head, hn, h, err, sizeof err)) return true;
  snprintf(msg, sizeof msg, "%s is not a valid .npy file: %s", src->shown, err);
  return fail(L, D_IN_VALUE, at, msg);
}

/* ml_dtypes keeps an int4 or uint4 in the low nibble of its byte, the
 * high nibble clear; a byte with high bits is some other one-byte void
 * (a float8), not an element of the ref. */
static bool nibbles_ok(Loader *L, const Ref *r, const NpySource *src, const uint8_t *data, int64_t n, Loc at) {
  for (int64_t i = 0; i < n; i++) {
    if (data[i] < 16) continue;
    char msg[600];
    snprintf(msg, sizeof msg, "%s holds byte 0x%02x at flat index %lld, which is no %s of ml_dtypes (one element a byte, in its low nibble): "
             "save the array as ref '%s's dtype", src->shown, data[i], (long long)i, dtype_name(r->dtype), r->name);
    return fail(L, D_IN_VALUE, at, msg);
  }
  return true;
}

/* The file's elements into the arena, as the ref's init. */
static bool npy_data(Loader *L, Ref *r, NpySource *src, const NpyHeader *h, const char *path, Loc at) {
  char msg[1200];
  if (h->data_bytes > (uint64_t)LOAD_MAX_TOTAL_BYTES) {
    snprintf(msg, sizeof msg, "%s holds %llu bytes of data; sc-sim's limit for all refs together is 2**33 bytes", src->shown,
             (unsigned long long)h->data_bytes);
    return fail(L, D_IN_LIMIT, at, msg);
  }
  uint8_t *data = arena_alloc(&L->p->arena, h->data_bytes ? (size_t)h->data_bytes : 1);
  errno = 0;
  if (!npy_read(src, h->data_offset, data, (size_t)h->data_bytes)) {
    snprintf(msg, sizeof msg, "cannot read %s: %s", src->shown, errno ? strerror(errno) : "it changed while being read");
    return fail(L, D_IN_FILE, at, msg);
  }
  npy_decode(h, data);
  if (dtype_is_subbyte(r->dtype) && !nibbles_ok(L, r, src, data, h->nelems, at)) return false;
  r->init = INIT_BYTES;
  r->init_bytes = data;
  r->init_file = arena_strdup(&L->p->arena, path);
  return true;
}

static bool npy_load(Loader *L, Ref *r, const char *path, Loc at) {
  NpySource src;
  NpyHeader h;
  if (!npy_open(L, path, at, &src)) return false;
  bool ok = npy_header(L, &src, &h, at) && npy_matches(L, r, &h, &src, at) && npy_data(L, r, &src, &h, path, at);
  if (src.fd >= 0) close(src.fd);
  return ok;
}

static bool load_npy_init(Loader *L, Ref *r, yaml_node_t *n) {
  static const char *const keys[] = {"npy"};
  if (!check_dups(L, n, "init")) return false;
  yaml_node_t *key = NULL, *v = map_get(L, n, "npy", &key);
  for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = get(L, pr->key);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "init key", "a string");
    if (strcmp(scalar(k), "npy")) {
      if (!strcmp(scalar(k), "random") || !strcmp(scalar(k), "low") || !strcmp(scalar(k), "high"))
        return fail(L, D_IN_VALUE, node_loc(L, k), "an init is either {npy: PATH} or {random: SEED, low: A, high: B}, not both");
      return unknown_key(L, k, "init", keys, 1);
    }
  }
  if (!is_scalar(v) || !*scalar(v)) return fail(L, D_IN_TYPE, node_loc(L, v), "npy", "the path of an .npy file (relative to the program's folder)");
  return npy_load(L, r, scalar(v), node_loc(L, key));
}

/* init: {permutation: SEED} (load_sugar.c) */
static bool load_permutation(Loader *L, Ref *r, yaml_node_t *n) {
  static const char *const keys[] = {"permutation"};
  int64_t seed = 0;
  const char *why = NULL;
  if (!check_dups(L, n, "init")) return false;
  for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top && !L->failed; pr++) {
    yaml_node_t *k = get(L, pr->key);
    if (!is_scalar(k) || strcmp(scalar(k), "permutation")) return unknown_key(L, k, "init", keys, 1);
    if (!want_int(L, get(L, pr->value), "permutation", 0, &seed)) return false;
  }
  if (!sugar_permutation(&L->p->arena, r, (uint64_t)seed, &why)) return fail(L, D_IN_VALUE, node_loc(L, n), why);
  return true;
}

static bool load_init(Loader *L, Ref *r, yaml_node_t *n) {
  if (is_map(n) && map_get(L, n, "permutation", NULL)) return load_permutation(L, r, n);
  if (is_map(n) && map_get(L, n, "npy", NULL)) return load_npy_init(L, r, n);
  if (is_map(n)) return load_random(L, r, n);
  if (is_seq(n)) {
    r->init = INIT_LIST;
    if (!init_shape_ok(L, r, n, 0)) return false; /* before allocating nelems cells */
    r->init_data = arena_alloc(&L->p->arena, sizeof(Cell) * (size_t)(r->nelems ? r->nelems : 1));
    int64_t pos = 0;
    return load_init_list(L, r, n, 0, &pos);
  }
  const char *s = scalar(n);
  if (mem_init_word(s, &r->init)) return true;
  if (!int_literal_fits(s, r->dtype)) {
    char msg[200];
    snprintf(msg, sizeof msg, "init value %.40s does not fit in %s", s, dtype_name(r->dtype));
    return fail(L, D_IN_VALUE, node_loc(L, n), msg);
  } else if (scalar_cell(s, r->dtype, &r->fill)) r->init = INIT_FILL;
  else return fail(L, D_IN_TYPE, node_loc(L, n), "init", "zeros, iota, a number, a nested list of the ref's shape, or {random: SEED, low: A, high: B}");
  return true;
}

static const char *const ref_keys[] = {"space", "shape", "dtype", "init", "type", "annotated"};
enum { NREF_KEYS = 6 };

static yaml_node_t *map_get(Loader *L, yaml_node_t *m, const char *key, yaml_node_t **keynode) {
  for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = get(L, pr->key);
    if (is_scalar(k) && !strcmp(scalar(k), key)) {
      if (keynode) *keynode = k;
      return get(L, pr->value);
    }
  }
  return NULL;
}

static bool ref_space(Loader *L, Ref *r, yaml_node_t *n) {
  static const char *keys[SP_COUNT];
  for (int i = 0; i < SP_COUNT; i++) keys[i] = space_key((Space)i);
  if (is_scalar(n))
    for (int i = 0; i < SP_COUNT; i++)
      if (!strcmp(scalar(n), keys[i])) {
        r->space = (Space)i;
        if (r->space == SP_VMEM && L->p->kernel == KERNEL_SCALAR && !L->mesh_no) /* an mpmd mesh: rule MP4 */
          return fail(L, D_IN_VALUE, node_loc(L, n),
                      "the scalar subcore has no VMEM: a scalar_subcore program cannot declare a vmem ref (use smem or vmem_shared)");
        return true;
      }
  char msg[300];
  const char *near = is_scalar(n) ? names_nearest(scalar(n), keys, SP_COUNT) : NULL;
  snprintf(msg, sizeof msg, "space must be one of hbm, vmem, vmem_shared, smem, semaphore%s%s%s", near ? "; did you mean '" : "",
           near ? near : "", near ? "'?" : "");
  return fail(L, D_IN_VALUE, node_loc(L, n), msg);
}

static bool ref_dtype(Loader *L, Ref *r, yaml_node_t *n) {
  if (is_scalar(n) && dtype_lookup(scalar(n), &r->dtype)) return true;
  if (!is_scalar(n)) {
    char what[80];
    snprintf(what, sizeof what, "a dtype name such as int32, got %s", node_kind(n));
    return fail(L, D_IN_TYPE, node_loc(L, n), "dtype", what);
  }
  if (L->failed) return false;
  dtype_unknown(L->d, node_loc(L, n), scalar(n)); /* the hint lists DTYPES */
  L->failed = true;
  return false;
}

static bool ref_keys_ok(Loader *L, yaml_node_t *n, const char *where) {
  for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = get(L, pr->key);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "ref key", "a string");
    bool ok = false;
    for (int i = 0; i < NREF_KEYS; i++) ok |= !strcmp(scalar(k), ref_keys[i]);
    if (!ok) return unknown_key(L, k, where, ref_keys, NREF_KEYS);
  }
  return true;
}

static bool load_sem_type(Loader *L, Ref *r, yaml_node_t *n) {
  if (is_scalar(n) && !strcmp(scalar(n), "dma")) r->sem = SEM_DMA;
  else if (is_scalar(n) && !strcmp(scalar(n), "regular")) r->sem = SEM_REGULAR;
  else return fail(L, D_IN_TYPE, node_loc(L, n), "type", "dma or regular");
  return true;
}

static Ref *load_ref(Loader *L, yaml_node_t *key, yaml_node_t *n) {
  Ref *r = arena_alloc(&L->p->arena, sizeof *r);
  r->name = arena_strdup(&L->p->arena, scalar(key));
  r->loc = node_loc(L, key);
  r->annotated = true;
  char where[160];
  snprintf(where, sizeof where, "ref '%.100s'", r->name);
  if (!is_identifier(r->name)) {
    fail(L, D_IN_VALUE, r->loc, "a ref name must be an identifier (letters, digits and _, not starting with a digit)");
    return NULL;
  }
  if (!is_map(n)) {
    fail(L, D_IN_TYPE, node_loc(L, n), r->name, "a mapping {space: ..., shape: [...], dtype: ...}");
    return NULL;
  }
  if (!check_dups(L, n, where) || !ref_keys_ok(L, n, where)) return NULL;
  yaml_node_t *kn = NULL, *v;
  if (!(v = map_get(L, n, "space", NULL))) {
    fail(L, D_IN_MISSING, node_loc(L, n), where, "space");
    return NULL;
  }
  if (!ref_space(L, r, v)) return NULL;
  bool sem = r->space == SP_SEMAPHORE;
  if ((v = map_get(L, n, "shape", NULL))) {
    if (!load_shape(L, r, v)) return NULL;
  } else if (!sem) {
    fail(L, D_IN_MISSING, node_loc(L, n), where, "shape");
    return NULL;
  } else {
    r->nelems = 1;
  }
  if ((v = map_get(L, n, "dtype", &kn))) {
    if (sem) {
      fail(L, D_IN_VALUE, node_loc(L, kn), "a semaphore ref has no dtype: remove 'dtype' (give 'type: dma' or 'type: regular')");
      return NULL;
    }
    if (!ref_dtype(L, r, v)) return NULL;
  } else if (!sem) {
    fail(L, D_IN_MISSING, node_loc(L, n), where, "dtype");
    return NULL;
  } else {
    r->dtype = DT_INT32;
  }
  if ((v = map_get(L, n, "type", &kn))) {
    if (!sem) {
      fail(L, D_IN_VALUE, node_loc(L, kn), "'type' is only for semaphore refs (space: semaphore)");
      return NULL;
    }
    if (!load_sem_type(L, r, v)) return NULL;
  } else if (sem) {
    r->sem = SEM_DMA;
  }
  if ((v = map_get(L, n, "init", &kn))) {
    if (sem) {
      fail(L, D_IN_VALUE, node_loc(L, kn), "semaphores start at 0 and take no init");
      return NULL;
    }
    if (!load_init(L, r, v)) return NULL;
  }
  if ((v = map_get(L, n, "annotated", &kn))) {
    if (!want_bool(L, v, "annotated", &r->annotated)) return NULL;
    if (!r->annotated && r->space != SP_HBM) {
      fail(L, D_IN_VALUE, node_loc(L, kn), "'annotated: false' models an operand without a memory space, which resolves to HBM: use it only with space: hbm");
      return NULL;
    }
  }
  return r;
}

static bool load_refs(Loader *L, yaml_node_t *n) {
  if (!is_map(n)) return fail(L, D_IN_TYPE, node_loc(L, n), "refs", "a mapping of ref names to refs");
  int cnt = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
  Ref **had = L->p->refs; /* a kernel's scratch follows the program's refs */
  L->p->refs = arena_alloc(&L->p->arena, sizeof(Ref *) * (size_t)(L->p->nrefs + cnt ? L->p->nrefs + cnt : 1));
  for (int i = 0; i < L->p->nrefs; i++) L->p->refs[i] = had[i];
  for (int i = 0; i < cnt && !L->failed; i++) {
    yaml_node_pair_t *pr = &n->data.mapping.pairs.start[i];
    yaml_node_t *k = get(L, pr->key);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "ref name", "a string");
    Ref *prev = program_ref(L->p, scalar(k));
    if (prev) {
      char msg[300];
      snprintf(msg, sizeof msg, "duplicate ref name '%.100s' (first defined at line %d): rename one of them", prev->name, prev->loc.line);
      return fail(L, D_IN_DUP, node_loc(L, k), msg);
    }
    if (!strcmp(scalar(k), "core") || !strcmp(scalar(k), "subcore"))
      return fail(L, D_IN_VALUE, node_loc(L, k), "'core' and 'subcore' name the subcore's coordinates and cannot name a ref");
    Ref *r = load_ref(L, k, get(L, pr->value));
    if (!r) return false;
    r->index = L->p->nrefs;
    L->p->refs[L->p->nrefs++] = r;
    L->p->ref_index.arena = &L->p->arena;
    names_put(&L->p->ref_index, r->name, r->index);
  }
  return !L->failed;
}

/* ---- operations ---------------------------------------------------- */
static bool load_body(Loader *L, yaml_node_t *n, Body *b, const char *what);

static const char *op_names[OPK_COUNT];

static int find_op(const char *key) {
  for (int i = 0; i < OPK_COUNT; i++)
    if (!strcmp(op_key((OpKind)i), key)) return i;
  return -1;
}

static int find_field(const char *key) {
  for (int i = 0; i < FLD_COUNT; i++)
    if (!strcmp(field_key((FieldId)i), key)) return i;
  return -1;
}

static bool load_expr_list(Loader *L, Op *op, FieldId f, yaml_node_t *v) {
  int cnt = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
  op->list[f] = arena_alloc(&L->p->arena, sizeof(Expr *) * (cnt ? cnt : 1));
  op->nlist[f] = cnt;
  for (int i = 0; i < cnt && !L->failed; i++)
    op->list[f][i] = expr_from_node(L, get(L, v->data.sequence.items.start[i]), field_key(f));
  return !L->failed;
}

/* carry: / next: a mapping of carry names to value expressions, in order. */
static bool load_carry_map(Loader *L, Op *op, FieldId f, yaml_node_t *v) {
  const char *key = field_key(f);
  if (!is_map(v)) return fail(L, D_IN_TYPE, node_loc(L, v), key, "a mapping of carry names to values, such as {acc: \"0\"}");
  if (!check_dups(L, v, key)) return false;
  int cnt = (int)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
  const char **names = arena_alloc(&L->p->arena, sizeof *names * (size_t)(cnt ? cnt : 1));
  Loc *locs = arena_alloc(&L->p->arena, sizeof *locs * (size_t)(cnt ? cnt : 1));
  op->list[f] = arena_alloc(&L->p->arena, sizeof(Expr *) * (size_t)(cnt ? cnt : 1));
  op->nlist[f] = cnt;
  for (int i = 0; i < cnt && !L->failed; i++) {
    yaml_node_pair_t *pr = &v->data.mapping.pairs.start[i];
    yaml_node_t *k = get(L, pr->key);
    if (!is_scalar(k) || !is_identifier(scalar(k))) return fail(L, D_IN_TYPE, node_loc(L, k), "a carry name", "a name (an identifier)");
    if (!strcmp(scalar(k), "core") || !strcmp(scalar(k), "subcore"))
      return fail(L, D_IN_VALUE, node_loc(L, k), "'core' and 'subcore' name the subcore's coordinates and cannot name a carry");
    names[i] = arena_strdup(&L->p->arena, scalar(k));
    locs[i] = node_loc(L, k);
    op->list[f][i] = expr_from_node(L, get(L, pr->value), names[i]);
  }
  if (f == FLD_CARRY) op->carry = names, op->carry_loc = locs, op->ncarry = cnt;
  else op->next_name = names, op->next_loc = locs;
  return !L->failed;
}

/* `next` must give each carry once; it is reordered as `carry`. */
static bool align_next(Loader *L, Op *op) {
  const char *kind = op_key(op->kind);
  if (op->has & F(PARALLEL)) {
    Expr *e = op->e[FLD_PARALLEL];
    if (e->kind != EX_BOOL) return fail(L, D_IN_TYPE, e->loc, "parallel", "true or false");
    /* plsc.parallel_loop: a next of another length is PL2, the checker's */
    if (op_parallel(op) && (op->has & F(CARRY)) && (op->has & F(NEXT)) && op->nlist[FLD_NEXT] != op->ncarry) return true;
  }
  if ((op->has & F(NEXT)) && !(op->has & F(CARRY)))
    return fail(L, D_IN_VALUE, op->floc[FLD_NEXT], "'next' gives the next values of the carries: declare them (and their initial values) in 'carry'");
  if (op->ncarry && !(op->has & F(NEXT))) {
    char where[64];
    snprintf(where, sizeof where, "operation '%s' with carries", kind);
    return fail(L, D_IN_MISSING, op->floc[FLD_CARRY], where, "next");
  }
  for (int i = 0; i < op->ncarry; i++)
    if (op->name[FLD_VAR] && !strcmp(op->carry[i], op->name[FLD_VAR]))
      return fail(L, D_IN_VALUE, op->carry_loc[i], "a carry cannot have the name of the loop variable: rename one of them");
  int nn = op->nlist[FLD_NEXT] < 0 ? 0 : op->nlist[FLD_NEXT];
  Expr **ordered = arena_alloc(&L->p->arena, sizeof(Expr *) * (size_t)(op->ncarry ? op->ncarry : 1));
  Loc *locs = arena_alloc(&L->p->arena, sizeof(Loc) * (size_t)(op->ncarry ? op->ncarry : 1));
  char msg[400];
  for (int j = 0; j < nn; j++) {
    int i = 0;
    while (i < op->ncarry && strcmp(op->carry[i], op->next_name[j])) i++;
    if (i == op->ncarry) {
      snprintf(msg, sizeof msg, "next gives '%.60s', which is not a carry of this %s (declare it in 'carry')", op->next_name[j], kind);
      return fail(L, D_IN_VALUE, op->next_loc[j], msg);
    }
    ordered[i] = op->list[FLD_NEXT][j];
    locs[i] = op->next_loc[j];
  }
  for (int i = 0; i < op->ncarry; i++)
    if (!ordered[i]) {
      snprintf(msg, sizeof msg, "next has no value for the carry '%.60s' (write %.60s: %.60s to keep it)", op->carry[i], op->carry[i], op->carry[i]);
      return fail(L, D_IN_VALUE, op->floc[FLD_NEXT], msg);
    }
  if (op->has & F(NEXT)) op->list[FLD_NEXT] = ordered, op->next_loc = locs, op->nlist[FLD_NEXT] = op->ncarry;
  return true;
}

/* let: {name: "k, v"}: Python's tuple unpacking, for a function with
 * several results (plsc.sort_key_val); the names go to Op.carry (a let has
 * no carries), the text stays in Op.name, as the emitter writes it. */
static bool load_tuple_names(Loader *L, Op *op, yaml_node_t *v) {
  char *t = arena_strdup(&L->p->arena, scalar(v));
  int n = 1;
  for (const char *p = t; *p; p++) n += *p == ',';
  const char **names = arena_alloc(&L->p->arena, sizeof *names * (size_t)n);
  Loc *locs = arena_alloc(&L->p->arena, sizeof *locs * (size_t)n);
  char *p = t;
  for (int k = 0; k < n; k++) {
    char *end = strchr(p, ',');
    if (end) *end = 0;
    while (*p == ' ') p++;
    for (char *q = p + strlen(p); q > p && q[-1] == ' '; q--) q[-1] = 0;
    if (!is_identifier(p)) return fail(L, D_IN_TYPE, node_loc(L, v), "name", "a name, or names separated by commas (\"k, v\")");
    names[k] = p, locs[k] = node_loc(L, v);
    p = end ? end + 1 : p;
  }
  op->carry = names, op->carry_loc = locs, op->ncarry = n;
  op->name[FLD_NAME] = arena_strdup(&L->p->arena, scalar(v));
  op->nloc[FLD_NAME] = node_loc(L, v);
  return true;
}

static bool load_field(Loader *L, Op *op, FieldId f, yaml_node_t *v) {
  const char *key = field_key(f);
  op->nlist[f] = -1;
  switch (field_kind(f)) {
  case FK_EXPR:
    if ((f == FLD_REF || f == FLD_SEM) && is_seq(v)) return fail(L, D_IN_TYPE, node_loc(L, v), key, "one ref expression, got a list");
    return (op->e[f] = expr_from_node(L, v, key)) != NULL;
  case FK_NAME:
    if (op->kind == OPK_LET && is_scalar(v) && strchr(scalar(v), ',')) return load_tuple_names(L, op, v);
    if (!is_scalar(v) || !is_identifier(scalar(v))) return fail(L, D_IN_TYPE, node_loc(L, v), key, "a name (an identifier)");
    op->name[f] = arena_strdup(&L->p->arena, scalar(v));
    op->nloc[f] = node_loc(L, v);
    return true;
  case FK_LIST:
    if (!is_seq(v)) return fail(L, D_IN_TYPE, node_loc(L, v), key, f == FLD_RANGE ? "a list [lo, hi] or [lo, hi, step]" : "a list");
    return load_expr_list(L, op, f, v);
  case FK_EXPR_OR_LIST:
    if (is_seq(v)) return load_expr_list(L, op, f, v);
    return (op->e[f] = expr_from_node(L, v, key)) != NULL;
  case FK_BODY: return load_body(L, v, f == FLD_BODY ? &op->body : &op->els, key);
  case FK_MAP: return load_carry_map(L, op, f, v);
  case FK_TEXT:
    if (!is_scalar(v)) return fail(L, D_IN_TYPE, node_loc(L, v), key, "a string");
    op->name[f] = arena_strdup(&L->p->arena, scalar(v));
    op->nloc[f] = node_loc(L, v);
    return true;
  }
  return false;
}

static bool load_fields(Loader *L, Op *op, yaml_node_t *m) {
  unsigned allowed = op_required(op->kind) | op_optional(op->kind);
  const char *valid[FLD_COUNT];
  int nvalid = 0;
  for (int i = 0; i < FLD_COUNT; i++)
    if (allowed & (1u << i)) valid[nvalid++] = field_key((FieldId)i);
  char where[64];
  snprintf(where, sizeof where, "operation '%s'", op_key(op->kind));
  if (!check_dups(L, m, where)) return false;
  for (yaml_node_pair_t *pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top && !L->failed; pr++) {
    yaml_node_t *k = get(L, pr->key);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "field name", "a string");
    int f = find_field(scalar(k));
    if ((f < 0 || !(allowed & (1u << f))) && !nvalid) {
      char msg[300];
      snprintf(msg, sizeof msg, "unknown key '%.80s' in %s, which takes no fields (write '- %s: {}')", scalar(k), where, op_key(op->kind));
      return fail(L, D_IN_VALUE, node_loc(L, k), msg);
    }
    if (f < 0 || !(allowed & (1u << f))) return unknown_key(L, k, where, valid, nvalid);
    op->has |= 1u << f;
    op->floc[f] = node_loc(L, k);
    load_field(L, op, (FieldId)f, get(L, pr->value));
  }
  if (L->failed) return false;
  unsigned missing = op_required(op->kind) & ~op->has;
  for (int i = 0; i < FLD_COUNT; i++)
    if (missing & (1u << i)) return fail(L, D_IN_MISSING, op->loc, where, field_key((FieldId)i));
  return true;
}

static bool check_op_shape(Loader *L, Op *op) {
  if (op->kind == OPK_LOOP && (op->nlist[FLD_RANGE] < 2 || op->nlist[FLD_RANGE] > 3))
    return fail(L, D_IN_TYPE, op->floc[FLD_RANGE], "range", "[lo, hi] or [lo, hi, step]");
  if ((op->kind == OPK_LOOP || op->kind == OPK_WHILE) && !align_next(L, op)) return false;
  if (op->kind == OPK_EXPECT && !(op->has & (F(VALUE) | F(REF))))
    return fail(L, D_IN_MISSING, op->loc, "operation 'expect'", "value' or 'ref");
  if (op->kind == OPK_EXPECT && (op->has & F(VALUE)) && (op->has & F(REF)))
    return fail(L, D_IN_VALUE, op->floc[FLD_REF], "expect takes 'value' or 'ref', not both");
  if (op->kind == OPK_SYNC_COPY && op->nlist[FLD_SRC] != op->nlist[FLD_DST])
    return fail(L, D_IN_VALUE, op->floc[FLD_DST], "sync_copy: src and dst must both be single ref expressions or lists of the same length");
  if ((op->kind == OPK_ASYNC_COPY || op->kind == OPK_WAIT) && (op->nlist[FLD_SRC] >= 0 || op->nlist[FLD_DST] >= 0)) {
    FieldId f = op->nlist[FLD_SRC] >= 0 ? FLD_SRC : FLD_DST;
    return fail(L, D_IN_TYPE, op->floc[f], field_key(f), "one ref expression (only sync_copy copies lists)");
  }
  return true;
}

static bool load_wait(Loader *L, Op *op, yaml_node_t *v) {
  if (is_scalar(v)) {
    if (!is_identifier(scalar(v))) return fail(L, D_IN_TYPE, node_loc(L, v), "wait", "a descriptor name or {src, dst, sem}");
    op->wait_desc = arena_strdup(&L->p->arena, scalar(v));
    op->nloc[FLD_NAME] = node_loc(L, v);
    return true;
  }
  if (!is_map(v)) return fail(L, D_IN_TYPE, node_loc(L, v), "wait", "a descriptor name or {src, dst, sem}");
  if (!load_fields(L, op, v)) return false;
  for (int f = FLD_SRC; f <= FLD_SEM; f++)
    if (!(op->has & (1u << f))) return fail(L, D_IN_MISSING, op->loc, "operation 'wait'", field_key((FieldId)f));
  return check_op_shape(L, op);
}

static Op *load_op(Loader *L, yaml_node_t *n) {
  if (!is_map(n) || n->data.mapping.pairs.top == n->data.mapping.pairs.start) {
    fail(L, D_IN_TYPE, node_loc(L, n), "a body item", "a mapping whose key names the operation, such as {swap: {ref: ..., value: ...}}");
    return NULL;
  }
  yaml_node_pair_t *pr = n->data.mapping.pairs.start;
  yaml_node_t *k = get(L, pr->key), *v = get(L, pr->value);
  if (!is_scalar(k)) {
    fail(L, D_IN_TYPE, node_loc(L, k), "an operation name", "a string");
    return NULL;
  }
  int kind = find_op(scalar(k));
  if (kind < 0) {
    for (int i = 0; i < OPK_COUNT; i++) op_names[i] = op_key((OpKind)i);
    unknown_key(L, k, "the body (not an operation)", op_names, OPK_COUNT);
    return NULL;
  }
  if (pr + 1 < n->data.mapping.pairs.top) {
    yaml_node_t *k2 = get(L, pr[1].key);
    char msg[300];
    snprintf(msg, sizeof msg, "an operation item has one key, the operation; put '%.60s' inside the mapping of '%s'",
             is_scalar(k2) ? scalar(k2) : "?", scalar(k));
    fail(L, D_IN_VALUE, node_loc(L, k2), msg);
    return NULL;
  }
  Op *op = arena_alloc(&L->p->arena, sizeof *op);
  op->kind = (OpKind)kind;
  op->loc = node_loc(L, k);
  op->id = L->p->nops++;
  for (int i = 0; i < FLD_COUNT; i++) op->nlist[i] = -1;
  if (L->p->nops > LOAD_MAX_OPS) {
    fail(L, D_IN_LIMIT, op->loc, "the program has more than 100000 operations");
    return NULL;
  }
  if (op->kind == OPK_WAIT) return load_wait(L, op, v) ? op : NULL;
  if (op->kind == OPK_BARRIER && is_scalar(v) && !*scalar(v)) return op; /* barrier: (null) */
  if (!is_map(v)) {
    char what[128];
    snprintf(what, sizeof what, "a mapping of its fields, got %s", node_kind(v));
    fail(L, D_IN_TYPE, node_loc(L, v), scalar(k), what);
    return NULL;
  }
  if (!load_fields(L, op, v) || !check_op_shape(L, op)) return NULL;
  return op;
}

#include "load_pipeline.inc"

/* call: {name: D, with: {P: EXPR}}: define D's body, loaded afresh (its
 * own operation ids), with each parameter replaced by its argument. */
static bool load_call(Loader *L, Op *op, Body *out) {
  const char *name = op->name[FLD_NAME];
  yaml_node_t *d = L->defines ? map_get(L, L->defines, name, NULL) : NULL;
  char msg[300];
  if (!d) {
    snprintf(msg, sizeof msg, "call: no sub-body named '%.60s' (declare it under the top-level define:)", name);
    return fail(L, D_IN_VALUE, op->nloc[FLD_NAME], msg);
  }
  if (!is_map(d)) return fail(L, D_IN_TYPE, node_loc(L, d), name, "a mapping {params: [...], body: [...]}");
  yaml_node_t *ps = map_get(L, d, "params", NULL), *bd = map_get(L, d, "body", NULL);
  for (yaml_node_pair_t *pr = d->data.mapping.pairs.start; pr < d->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = get(L, pr->key);
    static const char *const keys[] = {"params", "body"};
    if (!is_scalar(k) || (strcmp(scalar(k), "params") && strcmp(scalar(k), "body"))) return unknown_key(L, k, "a define", keys, 2);
  }
  if (!bd) return fail(L, D_IN_MISSING, node_loc(L, d), "a define", "body");
  int np = ps ? (is_seq(ps) ? (int)(ps->data.sequence.items.top - ps->data.sequence.items.start) : -1) : 0;
  if (np < 0) return fail(L, D_IN_TYPE, node_loc(L, ps), "params", "a list of names");
  const char **params = arena_alloc(&L->p->arena, sizeof(char *) * (size_t)(np ? np : 1));
  Expr **args = arena_alloc(&L->p->arena, sizeof(Expr *) * (size_t)(np ? np : 1));
  int ng = op->nlist[FLD_WITH] < 0 ? 0 : op->nlist[FLD_WITH];
  for (int k = 0; k < np; k++) {
    yaml_node_t *pn = get(L, ps->data.sequence.items.start[k]);
    if (!is_scalar(pn) || !is_identifier(scalar(pn))) return fail(L, D_IN_TYPE, node_loc(L, pn), "a parameter", "a name (an identifier)");
    params[k] = scalar(pn);
    for (int j = 0; j < ng && !args[k]; j++)
      if (!strcmp(op->next_name[j], params[k])) args[k] = op->list[FLD_WITH][j];
    if (!args[k]) {
      snprintf(msg, sizeof msg, "call of '%.60s' gives no value for its parameter '%.60s' (with: {%.60s: ...})", name, params[k], params[k]);
      return fail(L, D_IN_VALUE, op->loc, msg);
    }
  }
  for (int j = 0; j < ng; j++) {
    int k = 0;
    while (k < np && strcmp(op->next_name[j], params[k])) k++;
    if (k == np) {
      snprintf(msg, sizeof msg, "'%.60s' is not a parameter of '%.60s'", op->next_name[j], name);
      return fail(L, D_IN_VALUE, op->next_loc[j], msg);
    }
  }
  if (!load_body(L, bd, out, name)) return false;
  sugar_substitute(&L->p->arena, out, params, args, np);
  return true;
}

static bool load_body(Loader *L, yaml_node_t *n, Body *b, const char *what) {
  if (!is_seq(n)) return fail(L, D_IN_TYPE, node_loc(L, n), what, "a list of operations");
  if (++L->depth > LOAD_MAX_DEPTH) return fail(L, D_IN_LIMIT, node_loc(L, n), "loop and when bodies are nested more than 64 deep");
  int cnt = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
  int ups = 0; /* each update becomes two operations (load_sugar.c) */
  for (int i = 0; i < cnt; i++) {
    yaml_node_t *it = get(L, n->data.sequence.items.start[i]);
    if (is_map(it) && it->data.mapping.pairs.top > it->data.mapping.pairs.start && is_scalar(get(L, it->data.mapping.pairs.start->key)) &&
        !strcmp(scalar(get(L, it->data.mapping.pairs.start->key)), "update"))
      ups++;
  }
  int cap = cnt + ups ? cnt + ups : 1;
  b->ops = arena_alloc(&L->p->arena, sizeof(Op *) * (size_t)cap);
  for (int i = 0; i < cnt && !L->failed; i++) {
    yaml_node_t *it = get(L, n->data.sequence.items.start[i]);
    Op *op = is_pipeline_item(L, it) ? load_pipeline(L, it) : load_op(L, it);
    if (op && op->kind == OPK_CALL) {
      Body sub = {0};
      if (!load_call(L, op, &sub)) break;
      if (b->n + sub.n > cap) {
        cap = b->n + sub.n + (cnt - i) + ups;
        Op **grown = arena_alloc(&L->p->arena, sizeof(Op *) * (size_t)cap);
        memcpy(grown, b->ops, sizeof(Op *) * (size_t)b->n);
        b->ops = grown;
      }
      for (int k = 0; k < sub.n; k++) b->ops[b->n++] = sub.ops[k];
      continue;
    }
    if (b->n + 2 > cap) { /* an update after calls filled the array */
      cap = b->n + 2 + (cnt - i) + ups;
      Op **grown = arena_alloc(&L->p->arena, sizeof(Op *) * (size_t)cap);
      memcpy(grown, b->ops, sizeof(Op *) * (size_t)b->n);
      b->ops = grown;
    }
    if (op && op->kind == OPK_UPDATE) {
      yaml_node_t *f = map_get(L, get(L, it->data.mapping.pairs.start->value), "ref", NULL);
      Expr *ref2 = expr_from_node(L, f, "ref");
      Op *g, *s;
      const char *why = NULL;
      if (!ref2) break;
      if (!sugar_update(&L->p->arena, op, ref2, &g, &s, &why)) {
        fail(L, D_IN_VALUE, op->nloc[FLD_OP], why);
        break;
      }
      s->id = L->p->nops++;
      b->ops[b->n++] = g, b->ops[b->n++] = s;
    } else if (op) b->ops[b->n++] = op;
  }
  L->depth--;
  return !L->failed;
}

/* ---- expectations -------------------------------------------------- */
static bool load_expect_error(Loader *L, yaml_node_t *n) {
  static const char *const keys[] = {"type", "message"};
  Program *p = L->p;
  if (!is_map(n)) return fail(L, D_IN_TYPE, node_loc(L, n), "error", "a mapping {type: ..., message: ...}");
  if (!check_dups(L, n, "expect.error")) return false;
  p->expect_error = true;
  for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top && !L->failed; pr++) {
    yaml_node_t *k = get(L, pr->key), *v = get(L, pr->value);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "error key", "a string");
    if (!strcmp(scalar(k), "type")) want_string(L, v, "type", &p->expect_error_type);
    else if (!strcmp(scalar(k), "message")) want_string(L, v, "message", &p->expect_error_message);
    else return unknown_key(L, k, "expect.error", keys, 2);
  }
  if (!L->failed && !p->expect_error_message) return fail(L, D_IN_MISSING, node_loc(L, n), "expect.error", "message");
  return !L->failed;
}

static bool load_expect_refs(Loader *L, yaml_node_t *n) {
  Program *p = L->p;
  if (!is_map(n)) return fail(L, D_IN_TYPE, node_loc(L, n), "refs", "a mapping of ref (instance) names to values");
  if (!check_dups(L, n, "expect.refs")) return false;
  int cnt = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
  p->expect_ref_names = arena_alloc(&p->arena, sizeof(char *) * (cnt ? cnt : 1));
  p->expect_ref_values = arena_alloc(&p->arena, sizeof(Expr *) * (cnt ? cnt : 1));
  p->expect_ref_locs = arena_alloc(&p->arena, sizeof(Loc) * (cnt ? cnt : 1));
  for (int i = 0; i < cnt && !L->failed; i++) {
    yaml_node_pair_t *pr = &n->data.mapping.pairs.start[i];
    yaml_node_t *k = get(L, pr->key);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "expect.refs key", "a ref instance name");
    char base[256];
    snprintf(base, sizeof base, "%s", scalar(k));
    char *at = strchr(base, '@');
    if (at) *at = '\0';
    if (!program_ref(p, base)) {
      char msg[400];
      snprintf(msg, sizeof msg, "expect.refs names '%.100s', which is not a ref (instances are name, name@C or name@C.S)", scalar(k));
      return fail(L, D_IN_VALUE, node_loc(L, k), msg);
    }
    p->expect_ref_names[i] = arena_strdup(&p->arena, scalar(k));
    p->expect_ref_locs[i] = node_loc(L, k);
    p->expect_ref_values[i] = expr_from_node(L, get(L, pr->value), scalar(k));
    p->nexpect_refs++;
  }
  return !L->failed;
}

static bool load_cycles(Loader *L, yaml_node_t *v) {
  static const char *const keys[] = {"max"};
  if (!is_map(v)) return fail(L, D_IN_TYPE, node_loc(L, v), "cycles", "a mapping {max: N}");
  if (!check_dups(L, v, "expect.cycles")) return false;
  for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top && !L->failed; pr++) {
    yaml_node_t *k = get(L, pr->key);
    if (!is_scalar(k) || strcmp(scalar(k), "max")) return unknown_key(L, k, "expect.cycles", keys, 1);
    L->p->expect_cycles = true;
    want_int(L, get(L, pr->value), "max", 0, &L->p->expect_cycles_max);
  }
  if (!L->failed && !L->p->expect_cycles) return fail(L, D_IN_MISSING, node_loc(L, v), "expect.cycles", "max");
  return !L->failed;
}

static bool load_expect(Loader *L, yaml_node_t *n) {
  static const char *const keys[] = {"error", "refs", "cycles"};
  L->p->expect_loc = node_loc(L, n);
  if (!is_map(n)) return fail(L, D_IN_TYPE, node_loc(L, n), "expect", "a mapping with error, refs or cycles");
  if (!check_dups(L, n, "expect")) return false;
  for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top && !L->failed; pr++) {
    yaml_node_t *k = get(L, pr->key), *v = get(L, pr->value);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "expect key", "a string");
    if (!strcmp(scalar(k), "error")) load_expect_error(L, v);
    else if (!strcmp(scalar(k), "refs")) load_expect_refs(L, v);
    else if (!strcmp(scalar(k), "cycles")) load_cycles(L, v);
    else return unknown_key(L, k, "expect", keys, 3);
  }
  return !L->failed;
}

/* ---- names: every use must follow a binding ------------------------ */
typedef struct {
  const char **v; /* in binding order, for the suggestions of a misspelt name */
  int n, cap;
  NameIndex index;
} NameSet;

static bool names_has(NameSet *s, const char *n) { return names_get(&s->index, n) >= 0; }

static void names_add(Loader *L, NameSet *s, const char *n) {
  if (!n || names_has(s, n)) return;
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    const char **v = arena_alloc(&L->p->arena, sizeof *v * cap);
    if (s->n) memcpy(v, s->v, sizeof *v * s->n);
    s->v = v;
    s->cap = cap;
  }
  names_put(&s->index, n, s->n);
  s->v[s->n++] = n;
}

static bool check_names_expr(Loader *L, NameSet *s, const Expr *e) {
  if (!e || L->failed) return !L->failed;
  Dtype t;
  if (e->kind == EX_NAME && !names_has(s, e->name) && !program_ref(L->p, e->name) && !dtype_lookup(e->name, &t)) {
    const char *cands[512];
    int nc = 0;
    for (int i = 0; i < s->n && nc < 512; i++) cands[nc++] = s->v[i];
    for (int i = 0; i < L->p->nrefs && nc < 512; i++) cands[nc++] = L->p->refs[i]->name;
    const char *near = names_nearest(e->name, cands, nc);
    char hint[160] = "";
    if (near) snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
    else snprintf(hint, sizeof hint, " (bind it with let or out first)");
    return fail(L, D_IN_NAME, e->loc, e->name, hint);
  }
  check_names_expr(L, s, e->a);
  check_names_expr(L, s, e->b);
  check_names_expr(L, s, e->c);
  bool astype = e->kind == EX_CALL && e->builtin == BI_ASTYPE;
  bool pack = e->kind == EX_CALL && (e->builtin == BI_PACK || e->builtin == BI_UNPACK);
  for (int i = 0; i < e->nargs; i++) {
    if (astype && i == 1 && e->args[i]->kind == EX_NAME) continue; /* a dtype name */
    if (pack && e->kw && e->kw[i] && e->args[i]->kind == EX_NAME) continue; /* format=, preferred_element_type=: the checker's */
    check_names_expr(L, s, e->args[i]);
  }
  return !L->failed;
}

static bool check_names_body(Loader *L, NameSet *s, const Body *b);

/* A loop's carries are bound inside its body (and after it); `next` and a
 * while's `cond` see them, `next` also what the body bound. */
static bool check_names_loop(Loader *L, NameSet *s, Op *op) {
  for (int f = 0; f < FLD_COUNT; f++) {
    if (f == FLD_BODY || f == FLD_NEXT || f == FLD_COND) continue;
    check_names_expr(L, s, op->e[f]);
    for (int i = 0; i < op->nlist[f]; i++) check_names_expr(L, s, op->list[f][i]);
  }
  if (op->kind == OPK_LOOP) names_add(L, s, op->name[FLD_VAR]);
  for (int i = 0; i < op->ncarry; i++) names_add(L, s, op->carry[i]);
  check_names_expr(L, s, op->e[FLD_COND]);
  check_names_body(L, s, &op->body);
  for (int i = 0; i < op->nlist[FLD_NEXT]; i++) check_names_expr(L, s, op->list[FLD_NEXT][i]);
  return !L->failed;
}

static bool check_names_op(Loader *L, NameSet *s, Op *op) {
  if (op->kind == OPK_LOOP || op->kind == OPK_WHILE) return check_names_loop(L, s, op);
  for (int f = 0; f < FLD_COUNT; f++) {
    if (f == FLD_BODY || f == FLD_ELSE) continue;
    check_names_expr(L, s, op->e[f]);
    for (int i = 0; i < op->nlist[f]; i++) check_names_expr(L, s, op->list[f][i]);
  }
  if (op->wait_desc && !names_has(s, op->wait_desc)) {
    char hint[160];
    snprintf(hint, sizeof hint, " (name a descriptor that an earlier async_copy gave with out:)");
    return fail(L, D_IN_NAME, op->nloc[FLD_NAME], op->wait_desc, hint);
  }
  check_names_body(L, s, &op->body);
  check_names_body(L, s, &op->els);
  names_add(L, s, op->name[FLD_OUT]);
  if (op->kind == OPK_LET && op->ncarry)
    for (int i = 0; i < op->ncarry; i++) names_add(L, s, op->carry[i]);
  else names_add(L, s, op->name[FLD_NAME]);
  return !L->failed;
}

static bool check_names_body(Loader *L, NameSet *s, const Body *b) {
  for (int i = 0; i < b->n && !L->failed; i++) check_names_op(L, s, b->ops[i]);
  return !L->failed;
}

static bool check_names(Loader *L) {
  NameSet s = {0};
  names_add(L, &s, "core");
  names_add(L, &s, "subcore");
  names_add(L, &s, "num_cores"), names_add(L, &s, "num_subcores"), names_add(L, &s, "num_lanes"); /* the chip's (check.c) */
  if (check_names_body(L, &s, &L->p->body)) {
    names_add(L, &s, "_"); /* expect.refs: an element whose value is not checked (verify.c) */
    for (int i = 0; i < L->p->nexpect_refs; i++) check_names_expr(L, &s, L->p->expect_ref_values[i]);
  }
  names_free(&s.index);
  return !L->failed;
}

/* ---- top level ------------------------------------------------------ */
static const char *const top_keys[] = {"version", "name", "chip", "kernel", "mesh", "layout_passes", "refs", "body", "lowered", "expect", "define"};
enum { NTOP = 11 };

static bool load_top_key(Loader *L, const char *key, yaml_node_t *k, yaml_node_t *v) {
  Program *p = L->p;
  int64_t ver;
  if (!strcmp(key, "version")) {
    if (!want_int(L, v, "version", 1, &ver)) return false;
    if (ver != 1) return fail(L, D_IN_VALUE, node_loc(L, v), "this sc-sim reads format version 1 only");
    p->version = 1;
    return true;
  }
  if (!strcmp(key, "name")) return want_string(L, v, "name", &p->name);
  if (!strcmp(key, "layout_passes")) return want_bool(L, v, "layout_passes", &p->layout_passes);
  if (!strcmp(key, "lowered")) {
    p->lowered_loc = text_loc(L, v);
    if (!want_string(L, v, "lowered", &p->lowered)) return false;
    if (L->raw) p->lowered_map = scalar_map(L, v, p->lowered);
    return true;
  }
  if (!strcmp(key, "mesh")) return load_mesh(L, v);
  if (!strcmp(key, "refs")) return load_refs(L, v);
  if (!strcmp(key, "body")) return load_body(L, v, &p->body, "body");
  if (!strcmp(key, "expect")) return load_expect(L, v);
  if (!strcmp(key, "chip") || !strcmp(key, "kernel") || !strcmp(key, "define")) return true; /* done first */
  return unknown_key(L, k, "the program", top_keys, NTOP);
}

/* Every subcore of the mesh gets its own engine and reference state, so
 * the mesh is bounded as a whole.  A mesh larger than its chip is left to
 * C2 / C3, which report it with upstream's words. */
static bool mesh_ok(Loader *L) {
  const Program *p = L->p;
  int64_t c = p->mesh_cores, s = p->mesh_subcores;
  if (c > p->params.num_cores || s > p->params.num_subcores || c * s <= LOAD_MAX_SUBCORES) return true;
  char msg[200];
  snprintf(msg, sizeof msg, "the mesh has %lld subcores (%lld cores x %lld subcores); sc-sim's limit is %d",
           (long long)(c * s), (long long)c, (long long)s, LOAD_MAX_SUBCORES);
  return fail(L, D_IN_LIMIT, p->mesh_loc.line ? p->mesh_loc : p->chip_loc, msg);
}

/* All instances of all refs together are bounded: a run holds them twice
 * (engine and reference) with a shadow, and inits touch every page. */
static bool total_ok(Loader *L) {
  const Program *p = L->p;
  const int64_t limit = LOAD_MAX_TOTAL_BYTES;
  int64_t total = 0;
  for (int i = 0; i < p->nrefs; i++) {
    const Ref *r = p->refs[i];
    int64_t inst = r->space == SP_HBM ? 1 : p->mesh_cores;
    if (r->space != SP_HBM && r->space != SP_VMEM_SHARED && __builtin_mul_overflow(inst, p->mesh_subcores, &inst))
      inst = INT64_MAX; /* the mesh is checked against the chip later (C2): the total must not wrap first */
    int64_t bytes = r->nelems * dtype_size(r->dtype);
    if (bytes && inst > limit / bytes) total = limit + 1;
    else total += bytes * inst;
    if (total <= limit) continue;
    char msg[300];
    snprintf(msg, sizeof msg, "the refs of this program take more than %lld bytes up to ref '%s' (every instance counted); sc-sim's limit is 2**33",
             (long long)limit, r->name);
    return fail(L, D_IN_LIMIT, r->loc, msg);
  }
  return true;
}

/* The vmem (or smem) refs of one subcore must fit the preset's capacity;
 * the ref that overflows it is named. */
static bool capacity_ok(Loader *L, Space sp, int64_t cap, const char *param) {
  const Program *p = L->p;
  if (!p->chip->has_sc || cap <= 0) return true;
  int64_t used = 0;
  for (int i = 0; i < p->nrefs; i++) {
    const Ref *r = p->refs[i];
    if (r->space != sp) continue;
    used += dtype_packed_bytes(r->dtype, r->nelems); /* the device packs int4 two a byte */
    if (used <= cap) continue;
    char msg[500];
    snprintf(msg, sizeof msg,
             "ref '%s' does not fit in %s: the %s refs of a subcore need %lld bytes up to it, and %s has %lld per subcore (%s; "
             "override it in chip: {preset: %s, %s: N} to model more)",
             r->name, space_repr(sp), space_key(sp), (long long)used, p->chip->name, (long long)cap, param, p->chip->name, param);
    return fail(L, D_IN_LIMIT, r->loc, msg);
  }
  return true;
}

/* An expect.refs name is `name`, `name@C` (vmem_shared) or `name@C.S`
 * (vmem, smem, semaphore), with C and S inside the mesh. */
static bool expect_instance_ok(Loader *L, int k) {
  const Program *p = L->p;
  const char *want = p->expect_ref_names[k], *at = strchr(want, '@');
  if (!at) return true;
  char base[256];
  snprintf(base, sizeof base, "%.*s", (int)(at - want), want);
  const Ref *r = program_ref(p, base);
  char msg[500];
  long c = -1, sc = -1;
  char tail = 0;
  int n = r->space == SP_VMEM_SHARED ? sscanf(at + 1, "%ld%c", &c, &tail) : sscanf(at + 1, "%ld.%ld%c", &c, &sc, &tail);
  bool shape_ok = r->space == SP_VMEM_SHARED ? n == 1 : n == 2;
  if (!shape_ok && !(r->space == SP_HBM && (sscanf(at + 1, "%ld%c", &c, &tail) == 1 || sscanf(at + 1, "%ld.%ld%c", &c, &sc, &tail) == 2))) {
    snprintf(msg, sizeof msg, "expect.refs names '%.100s', which is not an instance of ref '%s' (instances are name, name@C or name@C.S)",
             want, r->name);
    return fail(L, D_IN_VALUE, p->expect_ref_locs[k], msg);
  }
  if (r->space == SP_HBM) {
    snprintf(msg, sizeof msg, "expect.refs names '%.100s', but the hbm ref '%s' has one instance, named '%s'", want, r->name, r->name);
    return fail(L, D_IN_VALUE, p->expect_ref_locs[k], msg);
  }

  if (c < 0 || c >= p->mesh_cores || (r->space != SP_VMEM_SHARED && (sc < 0 || sc >= p->mesh_subcores))) {
    snprintf(msg, sizeof msg, "expect.refs names '%.100s', outside the mesh of %lld core(s) x %lld subcore(s)", want,
             (long long)p->mesh_cores, (long long)p->mesh_subcores);
    return fail(L, D_IN_VALUE, p->expect_ref_locs[k], msg);
  }
  return true;
}

/* pl.select_ref rewritten into when operations (sim/front/select_ref.c). */
static bool select_refs(Loader *L) { return select_ref_rewrite(L->p, L->d) || (L->failed = true, false); }

#include "load_kernels.inc"
#include "load_mpmd.inc"

/* chip and kernel come first whatever their position: refs and mesh
 * depend on them. */
static bool load_top(Loader *L, yaml_node_t *root) {
  Program *p = L->p;
  if (!is_map(root)) return fail(L, D_IN_TYPE, node_loc(L, root), "the program", "a mapping with version, chip, refs and body");
  if (!check_dups(L, root, "the program")) return false;
  yaml_node_t *v;
  if ((v = map_get(L, root, "chip", NULL)) && !load_chip(L, v)) return false;
  if (map_get(L, root, "kernels", NULL)) return load_kernels(L, root);
  if ((v = map_get(L, root, "kernel", NULL)) && !load_kernel(L, v)) return false;
  if ((v = map_get(L, root, "define", NULL))) { /* named sub-bodies, before any call (load_call) */
    if (!is_map(v)) return fail(L, D_IN_TYPE, node_loc(L, v), "define", "a mapping NAME: {params: [...], body: [...]}");
    if (!check_dups(L, v, "define")) return false;
    L->defines = v;
  }
  bool seen[NTOP] = {0};
  for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top && !L->failed; pr++) {
    yaml_node_t *k = get(L, pr->key);
    if (!is_scalar(k)) return fail(L, D_IN_TYPE, node_loc(L, k), "a top-level key", "a string");
    for (int i = 0; i < NTOP; i++)
      if (!strcmp(scalar(k), top_keys[i])) seen[i] = true;
    load_top_key(L, scalar(k), k, get(L, pr->value));
  }
  if (L->failed) return false;
  if (!seen[7]) return fail(L, D_IN_MISSING, node_loc(L, root), "the program", "body");
  if (!seen[6]) return fail(L, D_IN_MISSING, node_loc(L, root), "the program", "refs");
  if (!p->mesh_cores) p->mesh_cores = p->params.num_cores;
  if (!p->mesh_subcores) p->mesh_subcores = p->kernel == KERNEL_SCALAR ? 1 : p->params.num_subcores;
  if (!pipelines(L)) return false;
  for (int k = 0; k < p->nexpect_refs; k++)
    if (!expect_instance_ok(L, k)) return false;
  if (!mesh_ok(L)) return false;
  if (!total_ok(L) || !capacity_ok(L, SP_VMEM, p->params.vmem_capacity_bytes, "vmem_capacity_bytes") ||
      !capacity_ok(L, SP_SMEM, p->params.smem_capacity_bytes, "smem_capacity_bytes"))
    return false;
  return check_names(L) && select_refs(L);
}

static Loc offset_loc(Loader *L, size_t off) {
  Cursor c = {0, {L->p->file, 1, 1}};
  while (c.r < off && c.r < L->rawlen) advance(L->raw, &c);
  return c.l;
}

/* Maps libyaml's problems to sc-sim's wording (the output must not depend
 * on libyaml's phrasing); anything unknown keeps libyaml's words. */
static bool yaml_error(Loader *L, yaml_parser_t *yp) {
  Loc at = {L->p->file, (int)yp->problem_mark.line + 1, (int)yp->problem_mark.column + 1};
  Loc ctx = {L->p->file, (int)yp->context_mark.line + 1, (int)yp->context_mark.column + 1};
  const char *problem = yp->problem ? yp->problem : "unreadable input";
  const char *context = yp->context ? yp->context : "";
  size_t off = yp->problem_mark.index;
  char msg[512];
  if (yp->error == YAML_READER_ERROR) {
    size_t bad = yp->problem_offset; /* a broken sequence is reported at its lead byte */
    for (int k = 0; k < 3 && bad > 0 && bad < L->rawlen && (unsigned char)L->raw[bad] < 0xc0 && ((unsigned char)L->raw[bad] < 0x80 || ((unsigned char)L->raw[bad] & 0xc0) == 0x80) &&
                    (unsigned char)L->raw[bad - 1] >= 0x80;
         k++)
      bad--;
    yp->problem_offset = bad;
    at = offset_loc(L, yp->problem_offset);
    int byte = yp->problem_value >= 0 ? yp->problem_value : 0;
    if (strstr(problem, "control characters"))
      snprintf(msg, sizeof msg, "the file contains a control character (byte 0x%02x), which YAML does not allow", byte & 0xff);
    else
      snprintf(msg, sizeof msg, "the file is not valid UTF-8 text (invalid byte 0x%02x)",
               yp->problem_offset < L->rawlen ? (unsigned char)L->raw[yp->problem_offset] : byte & 0xff);
  } else if (strstr(problem, "cannot start any token") && off < L->rawlen && L->raw[off] == '\t') {
    snprintf(msg, sizeof msg, "YAML syntax error: a tab character cannot indent YAML: indent with spaces");
  } else if (strstr(problem, "did not find expected key") && strstr(context, "block mapping")) {
    snprintf(msg, sizeof msg,
             "YAML syntax error: bad indentation: this line is not aligned with the keys of the mapping that starts at line %d",
             ctx.line);
  } else if (strstr(problem, "end of stream") && strstr(context, "quoted scalar")) {
    at = ctx;
    snprintf(msg, sizeof msg, "YAML syntax error: the quoted string that starts here is never closed");
  } else if (strstr(problem, "undefined alias")) {
    size_t b = off < L->rawlen && L->raw[off] == '*' ? off + 1 : off, e = b;
    while (e < L->rawlen && e - b < 60 && (isalnum((unsigned char)L->raw[e]) || L->raw[e] == '_' || L->raw[e] == '-')) e++;
    snprintf(msg, sizeof msg, "YAML syntax error: undefined alias '*%.*s': no anchor '&%.*s' comes before it", (int)(e - b),
             L->raw + b, (int)(e - b), L->raw + b);
  } else {
    snprintf(msg, sizeof msg, "YAML syntax error: %s%s%s", problem, *context ? " " : "", context);
  }
  return fail(L, D_IN_YAML, at, msg);
}

/* libyaml's composer recurses once per level of flow nesting and slows
 * down quadratically; deep nesting is refused before it is parsed. */
static bool nesting_ok(Loader *L) {
  int depth = 0, anchors = 0;
  char quote = 0;
  bool comment = false;
  for (size_t i = 0; i < L->rawlen; i++) {
    char ch = L->raw[i];
    if (ch == '\n') comment = false;
    if (comment) continue;
    if (quote) {
      if (ch == quote) quote = 0;
      else if (ch == '\\' && quote == '"') i++;
      continue;
    }
    if (ch == '#' && (i == 0 || L->raw[i - 1] == ' ' || L->raw[i - 1] == '\n')) comment = true;
    else if (ch == '"' || (ch == '\'' && (i == 0 || strchr(" [{,:", L->raw[i - 1])))) quote = ch;
    else if (ch == '[' || ch == '{') {
      if (++depth > 256) return fail(L, D_IN_LIMIT, offset_loc(L, i), "lists and mappings nest more than 256 levels deep");
    } else if ((ch == ']' || ch == '}') && depth > 0) depth--;
    else if (ch == '&' && (i == 0 || strchr(" \t\n[{,", L->raw[i - 1])) && i + 1 < L->rawlen && !strchr(" \t\r\n&", L->raw[i + 1]) &&
             ++anchors > MAX_ANCHORS) /* libyaml compares every anchor with all earlier ones */
      return fail(L, D_IN_LIMIT, offset_loc(L, i), "the file defines more than 10000 YAML anchors (&name); sc-sim's limit is 10000");
  }
  return true;
}

/* A UTF-16 file (with its BOM) becomes UTF-8 first, so that every position
 * sc-sim computes counts the same characters libyaml does.  NULL when it is
 * not UTF-16 or not valid UTF-16. */
static char *from_utf16(const char *text, size_t len, size_t *outlen) {
  const unsigned char *b = (const unsigned char *)text;
  if (len < 2 || !((b[0] == 0xff && b[1] == 0xfe) || (b[0] == 0xfe && b[1] == 0xff))) return NULL;
  bool le = b[0] == 0xff;
  char *out = malloc(len / 2 * 3 + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (size_t i = 2; i + 1 < len; i += 2) {
    uint32_t c = le ? (uint32_t)(b[i] | b[i + 1] << 8) : (uint32_t)(b[i] << 8 | b[i + 1]);
    if (c >= 0xd800 && c < 0xdc00 && i + 3 < len) { /* a surrogate pair */
      uint32_t c2 = le ? (uint32_t)(b[i + 2] | b[i + 3] << 8) : (uint32_t)(b[i + 2] << 8 | b[i + 3]);
      if (c2 >= 0xdc00 && c2 < 0xe000) c = 0x10000 + ((c - 0xd800) << 10) + (c2 - 0xdc00), i += 2;
    }
    if (c < 0x80) out[o++] = (char)c;
    else if (c < 0x800) out[o++] = (char)(0xc0 | c >> 6), out[o++] = (char)(0x80 | (c & 0x3f));
    else if (c < 0x10000) out[o++] = (char)(0xe0 | c >> 12), out[o++] = (char)(0x80 | ((c >> 6) & 0x3f)), out[o++] = (char)(0x80 | (c & 0x3f));
    else out[o++] = (char)(0xf0 | c >> 18), out[o++] = (char)(0x80 | ((c >> 12) & 0x3f)), out[o++] = (char)(0x80 | ((c >> 6) & 0x3f)), out[o++] = (char)(0x80 | (c & 0x3f));
  }
  out[o] = '\0';
  *outlen = o;
  return out;
}

/* The size of the tree the document becomes once its aliases are expanded,
 * computed once per node (an explicit stack: alias chains can be long) and
 * saturated at cap; an alias inside its own anchor (a cycle) counts as cap
 * and sets *cycle to the anchored node. */
static int64_t expanded_nodes(yaml_document_t *doc, int64_t cap, int *cycle) {
  int64_t nn = doc->nodes.top - doc->nodes.start;
  int64_t *size = calloc((size_t)nn + 1, sizeof *size);
  int *stack = malloc(sizeof *stack * ((size_t)nn + 1)), *next = calloc((size_t)nn + 1, sizeof *next);
  uint8_t *state = calloc((size_t)nn + 1, 1); /* 0 new, 1 open, 2 done */
  if (!size || !stack || !next || !state) abort();
  int top = 0;
  int64_t total = nn ? 0 : 1;
  if (nn) stack[top++] = 1, state[1] = 1, size[1] = 1;
  while (top && total < cap) {
    int i = stack[top - 1];
    yaml_node_t *n = &doc->nodes.start[i - 1];
    int nkids = n->type == YAML_SEQUENCE_NODE ? (int)(n->data.sequence.items.top - n->data.sequence.items.start)
                : n->type == YAML_MAPPING_NODE ? 2 * (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start) : 0;
    if (next[i] == nkids) { /* all children counted: close the node */
      state[i] = 2, top--;
      if (top) {
        int64_t *up = &size[stack[top - 1]];
        *up = *up > cap - size[i] ? cap : *up + size[i];
      } else total = size[i];
      continue;
    }
    int k = next[i]++;
    int c = n->type == YAML_SEQUENCE_NODE ? n->data.sequence.items.start[k]
            : k % 2 ? n->data.mapping.pairs.start[k / 2].value : n->data.mapping.pairs.start[k / 2].key;
    if (c < 1 || c > nn) continue;
    if (state[c] == 1) total = cap, *cycle = c;
    else if (state[c] == 2) size[i] = size[i] > cap - size[c] ? cap : size[i] + size[c];
    else stack[top++] = c, state[c] = 1, size[c] = 1;
  }
  free(size), free(stack), free(next), free(state);
  return total < cap ? total : cap;
}

/* Aliases may repeat a node, but the expanded document is bounded by what
 * was written: 1,000,000 nodes plus two per node of the file. */
static bool expansion_ok(Loader *L) {
  int64_t nn = L->doc->nodes.top - L->doc->nodes.start;
  int cycle = 0;
  int64_t cap = MAX_EXPANDED + 2 * nn, got = expanded_nodes(L->doc, cap + 1, &cycle);
  if (cycle)
    return fail(L, D_IN_YAML, node_loc(L, &L->doc->nodes.start[cycle - 1]),
                "this node contains an alias of itself (its anchor is used inside it), so the document never ends: remove the alias");
  if (got <= cap) {
    L->max_visits = MAX_VISITS + 64 * got; /* each node is looked up a few times per key asked */
    return true;
  }
  char msg[300];
  snprintf(msg, sizeof msg,
           "the document is too large once YAML aliases are expanded: it would have more than %lld nodes (sc-sim allows %lld "
           "plus two per node written, %lld here); repeat fewer aliases",
           (long long)cap, (long long)MAX_EXPANDED, (long long)nn);
  return fail(L, D_IN_LIMIT, (Loc){L->p->file, 1, 1}, msg);
}

static bool load_utf8(const char *path, const char *text, size_t len, const LoadFiles *files, Program *p, Diag *d);

bool load_program_text(const char *path, const char *text, size_t len, Program *p, Diag *d) {
  return load_program_files(path, text, len, NULL, p, d);
}

bool load_program_files(const char *path, const char *text, size_t len, const LoadFiles *files, Program *p, Diag *d) {
  size_t n8;
  char *utf8 = from_utf16(text, len, &n8);
  if (!utf8) return load_utf8(path, text, len, files, p, d);
  bool ok = load_utf8(path, utf8, n8, files, p, d);
  /* the IR keeps no pointer into the text: it may go */
  free(utf8);
  return ok;
}

/* A double-quoted scalar may spell NUL ("\0"); the loader works on C
 * strings, which would end there and run a program the file does not
 * say.  The first such scalar in the document is refused, by its key. */
static bool has_nul(yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE && strlen((const char *)n->data.scalar.value) != n->data.scalar.length;
}

static bool no_nul_scalars(Loader *L) {
  yaml_node_t *first = NULL;
  const char *key = NULL;
  for (yaml_node_t *n = L->doc->nodes.start; n < L->doc->nodes.top; n++) {
    if (n->type != YAML_MAPPING_NODE) continue;
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
      yaml_node_t *k = yaml_document_get_node(L->doc, pr->key), *v = yaml_document_get_node(L->doc, pr->value);
      yaml_node_t *hit = has_nul(k) ? k : has_nul(v) ? v : NULL;
      for (yaml_node_item_t *it = v && v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start : NULL;
           !hit && it && it < v->data.sequence.items.top; it++)
        if (has_nul(yaml_document_get_node(L->doc, *it))) hit = yaml_document_get_node(L->doc, *it);
      if (hit && (!first || hit->start_mark.index < first->start_mark.index))
        first = hit, key = hit == k ? NULL : scalar(k);
    }
  }
  for (yaml_node_t *n = L->doc->nodes.start; !first && n < L->doc->nodes.top; n++)
    if (has_nul(n)) first = n;
  if (!first) return true;
  char msg[200];
  if (key) snprintf(msg, sizeof msg, "'%.60s' must be text without NUL characters (\\0)", key);
  else snprintf(msg, sizeof msg, "YAML text must be without NUL characters (\\0): remove the \\0 escape");
  return fail(L, D_IN_VALUE, node_loc(L, first), msg);
}

static bool load_utf8(const char *path, const char *text, size_t len, const LoadFiles *files, Program *p, Diag *d) {
  Loader L = {p, text, len, NULL, d, false, 0, 0, MAX_VISITS, 0, 1L << 20, files, NULL, NULL, 0, 0, 0, NULL};
  p->file = path;
  p->version = 1;
  p->layout_passes = true;
  p->kernel = KERNEL_VECTOR;
  p->chip = chip_find("tpu7x");
  p->params = p->chip->p;
  const char *slash = strrchr(path, '/');
  p->name = slash ? slash + 1 : path;
  if (!nesting_ok(&L)) return false;
  yaml_parser_t yp;
  yaml_document_t doc, extra;
  if (!yaml_parser_initialize(&yp)) return fail(&L, D_IN_FILE, (Loc){path, 0, 0}, "cannot initialise the YAML parser");
  yaml_parser_set_input_string(&yp, (const unsigned char *)text, len);
  bool ok = yaml_parser_load(&yp, &doc);
  if (!ok) {
    yaml_error(&L, &yp);
    yaml_parser_delete(&yp);
    return false;
  }
  L.doc = &doc;
  /* Long scalars are bounded by bytes: without aliases each is visited a
   * few times, so 8 bytes of budget per byte of file leaves room. */
  L.max_visits = MAX_VISITS;
  L.max_long_bytes = (1L << 20) + 8L * (long)len;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root) ok = fail(&L, D_IN_FILE, (Loc){path, 1, 1}, "the file is empty: a program needs at least refs and body");
  else if (!yaml_parser_load(&yp, &extra)) ok = yaml_error(&L, &yp);
  else {
    if (yaml_document_get_root_node(&extra))
      ok = fail(&L, D_IN_YAML, (Loc){path, (int)extra.start_mark.line + 1, (int)extra.start_mark.column + 1},
                "the file holds more than one YAML document: a program is a single document (remove '---' and what follows)");
    yaml_document_delete(&extra);
    if (ok) ok = no_nul_scalars(&L) && expansion_ok(&L) && load_top(&L, root);
  }
  yaml_document_delete(&doc);
  yaml_parser_delete(&yp);
  return ok && !L.failed;
}

bool load_program(const char *path, Program *p, Diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    char msg[600];
    snprintf(msg, sizeof msg, "cannot open '%.400s': %s", path, strerror(errno));
    p->file = path;
    diag_set(d, D_IN_FILE, (Loc){path, 0, 0}, msg);
    return false;
  }
  char *buf = malloc(LOAD_MAX_FILE_BYTES + 1);
  size_t n = buf ? fread(buf, 1, LOAD_MAX_FILE_BYTES + 1, f) : 0;
  bool err = ferror(f);
  fclose(f);
  bool ok;
  if (!buf || err) {
    diag_set(d, D_IN_FILE, (Loc){path, 0, 0}, "cannot read the file");
    ok = false;
  } else if (n > LOAD_MAX_FILE_BYTES) {
    diag_set(d, D_IN_LIMIT, (Loc){path, 0, 0}, "the file is larger than 64 MiB, sc-sim's limit for a program");
    ok = false;
  } else {
    ok = load_program_text(path, buf, n, p, d);
  }
  free(buf);
  return ok;
}
