/* sim/fuzz/merge.c -- sc-sim merge: the JSON lines of the shards of a sweep
 * or a fuzz campaign (--shard K/N) combined into the report one unsharded
 * run gives (docs/cluster.md).
 *
 * The lines are the ones sweep.c and the fuzz driver write; each carries
 * its index in the campaign, so the merge sorts them back into campaign
 * order, checks that every point or program is there exactly once, and
 * then prints what the unsharded run prints: the sweep table, or the fuzz
 * failures with their reproducers and the summary line (counts per rule). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../traces/json.h"
#include "fuzz_priv.h"
#include "sweep.h"

void sweep_table_header(FILE *f, const char *const *names, int n);
void sweep_table_row(FILE *f, int index, const char *const *vals, int n, const char *verdict, const char *cycles, const char *us,
                     const char *bound);

/* ---- reading the flat lines back ------------------------------------------------ */
/* The text after `"key": ` (keys are unique in a line, and a key's quotes
 * cannot be an escaped quote inside a string); NULL when absent. */
static const char *field(const char *line, const char *key) {
  char pat[80];
  snprintf(pat, sizeof pat, "\"%s\": ", key);
  const char *p = strstr(line, pat);
  return p ? p + strlen(pat) : NULL;
}

/* A JSON string at s (decoded: the escapes json.h writes), or a bare token
 * (a number, true, null) up to , or }; false when absent. */
static bool token(const char *s, char *out, size_t n) {
  size_t k = 0;
  if (!s) return false;
  if (*s != '"') {
    while (*s && *s != ',' && *s != '}' && k + 1 < n) out[k++] = *s++;
    out[k] = '\0';
    return k > 0;
  }
  for (s++; *s && *s != '"' && k + 1 < n; s++) {
    char c = *s;
    if (c == '\\' && s[1]) {
      c = *++s;
      if (c == 'n') c = '\n';
      else if (c == 't') c = '\t';
      else if (c == 'r') c = '\r';
      else if (c == 'b') c = '\b';
      else if (c == 'f') c = '\f';
      else if (c == 'u' && s[1] && s[2] && s[3] && s[4]) {
        char hex[5] = {s[1], s[2], s[3], s[4], 0};
        long u = strtol(hex, NULL, 16);
        s += 4;
        if (u < 0x80) c = (char)u;
        else if (u < 0x800 && k + 2 < n) {
          out[k++] = (char)(0xc0 | (u >> 6));
          c = (char)(0x80 | (u & 0x3f));
        } else if (k + 3 < n) {
          out[k++] = (char)(0xe0 | (u >> 12));
          out[k++] = (char)(0x80 | ((u >> 6) & 0x3f));
          c = (char)(0x80 | (u & 0x3f));
        }
      }
    }
    out[k++] = c;
  }
  out[k] = '\0';
  return true;
}

static bool get(const char *line, const char *key, char *out, size_t n) { return token(field(line, key), out, n); }

static long long get_int(const char *line, const char *key, long long dflt) {
  char t[40];
  return get(line, key, t, sizeof t) ? atoll(t) : dflt;
}

/* ---- the files ------------------------------------------------------------------- */
typedef struct {
  char **v;
  int n, cap;
} Lines;

static void add_line(Lines *l, const char *s) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 256;
    l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
    if (!l->v) abort();
  }
  l->v[l->n++] = strdup(s);
}

static bool read_lines(const char *path, Lines *l) {
  FILE *f = fopen(path, "r");
  if (!f) return fprintf(stderr, "sc-sim merge: cannot read '%s': %s\n", path, strerror(errno)), false;
  char *buf = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&buf, &cap, f)) > 0) {
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = '\0';
    if (n && buf[0] == '{') add_line(l, buf);
  }
  free(buf);
  fclose(f);
  return true;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool read_path(const char *path, Lines *l, int *files) {
  struct stat st;
  if (stat(path, &st)) return fprintf(stderr, "sc-sim merge: cannot read '%s': %s\n", path, strerror(errno)), false;
  if (!S_ISDIR(st.st_mode)) return ++*files, read_lines(path, l);
  DIR *d = opendir(path);
  if (!d) return fprintf(stderr, "sc-sim merge: cannot read '%s': %s\n", path, strerror(errno)), false;
  Lines names = {0};
  for (struct dirent *e; (e = readdir(d));) {
    size_t k = strlen(e->d_name);
    if (k > 6 && !strcmp(e->d_name + k - 6, ".jsonl")) add_line(&names, e->d_name);
  }
  closedir(d);
  if (names.n) qsort(names.v, (size_t)names.n, sizeof *names.v, cmp_str);
  bool ok = true;
  for (int i = 0; i < names.n; i++) {
    char full[4200];
    snprintf(full, sizeof full, "%s/%s", path, names.v[i]);
    ok = ok && read_lines(full, l);
    ++*files;
    free(names.v[i]);
  }
  free(names.v);
  return ok;
}

static int by_index(const void *a, const void *b) {
  long long x = get_int(*(char *const *)a, "index", -1), y = get_int(*(char *const *)b, "index", -1);
  return x < y ? -1 : x > y;
}

/* Every index 0 .. total-1 exactly once (the lines sorted by index). */
static bool covered(const Lines *l, long long total, const char *what) {
  long long want = 0;
  for (int i = 0; i < l->n; i++) {
    long long x = get_int(l->v[i], "index", -1);
    if (x != want) {
      if (x < want) fprintf(stderr, "sc-sim merge: %s %lld is in the shards twice\n", what, x);
      else fprintf(stderr, "sc-sim merge: %s %lld is in none of the shards (a shard missing or cut short?)\n", what, want);
      return false;
    }
    want++;
  }
  if (want != total) {
    fprintf(stderr, "sc-sim merge: %lld of %lld %ss are in the shards (a shard missing or cut short?)\n", want, total, what);
    return false;
  }
  return true;
}

/* ---- sweeps ---------------------------------------------------------------------- */
enum { MAX_COLS = 8 };

/* The params object's keys and values, in order. */
static int params_of(const char *line, char names[][64], char vals[][64]) {
  const char *p = field(line, "params");
  int n = 0;
  if (!p || *p != '{') return 0;
  p++;
  while (*p && *p != '}' && n < MAX_COLS) {
    while (*p == ' ' || *p == ',') p++;
    if (*p != '"') break;
    token(p, names[n], 64);
    p = strchr(p + 1, '"');
    if (!p) break;
    p += 3; /* '": ' */
    token(p, vals[n], 64);
    if (*p == '"') p = strchr(p + 1, '"') + 1;
    else
      while (*p && *p != ',' && *p != '}') p++;
    n++;
  }
  return n;
}

static int merge_sweep(Lines *l, FILE *out) {
  long long total = get_int(l->v[0], "points", -1);
  if (!covered(l, total, "point")) return 3;
  char names[MAX_COLS][64], vals[MAX_COLS][64];
  const char *np[MAX_COLS], *vp[MAX_COLS];
  int n = params_of(l->v[0], names, vals);
  for (int i = 0; i < n; i++) np[i] = names[i], vp[i] = vals[i];
  sweep_table_header(stdout, np, n);
  int code = 0;
  for (int i = 0; i < l->n; i++) {
    const char *s = l->v[i];
    char verdict[40] = "", cycles[40] = "-", us[40] = "-", bound[400] = "";
    params_of(s, names, vals);
    get(s, "verdict", verdict, sizeof verdict);
    get(s, "cycles", cycles, sizeof cycles);
    get(s, "us", us, sizeof us);
    if (!get(s, "bound_verdict", bound, sizeof bound) && strcmp(verdict, "ok")) get(s, "diag", bound, sizeof bound);
    sweep_table_row(stdout, (int)get_int(s, "index", -1), vp, n, verdict, cycles, us, bound);
    long long x = get_int(s, "exit", 0);
    if (x >= 3 && x > code) code = (int)x;
    if (out) fprintf(out, "%s\n", s);
  }
  return code;
}

/* ---- fuzz campaigns ---------------------------------------------------------------- */
static int merge_fuzz(Lines *l) {
  long long total = get_int(l->v[0], "count", -1);
  char seed[40] = "";
  get(l->v[0], "seed", seed, sizeof seed);
  for (int i = 0; i < l->n; i++) {
    char s2[40] = "";
    get(l->v[i], "seed", s2, sizeof s2);
    if (strcmp(s2, seed) || get_int(l->v[i], "count", -1) != total)
      return fprintf(stderr, "sc-sim merge: the shards are of different campaigns (seed %s count %lld, and seed %s count %lld)\n", seed,
                     total, s2, get_int(l->v[i], "count", -1)),
             2;
  }
  if (!covered(l, total, "program")) return 3;
  static Fuzz f;
  memset(&f, 0, sizeof f);
  for (int i = 0; i < l->n; i++) {
    const char *s = l->v[i];
    char cls[40] = "", rule[64] = "", report[6000] = "", w[8] = "";
    get(s, "class", cls, sizeof cls);
    get(s, "rule", rule, sizeof rule);
    if (get(s, "report", report, sizeof report) && strcmp(report, "null")) printf("%s\n", report);
    fuzz_tally(&f, cls, rule);
    get(s, "reproducer_written", w, sizeof w);
    f.written += !strcmp(w, "true");
  }
  fuzz_summary(&f);
  if (f.crashes || f.hangs) return 4;
  return f.mismatches || f.faults || f.unexpected ? 3 : 0;
}

int merge_main(int argc, char **argv) {
  const char *outp = NULL;
  Lines l = {0};
  int files = 0, npaths = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      puts("usage: sc-sim merge [--out FILE] DIR_OR_FILE...\n"
           "  reads the JSON lines (*.jsonl in each DIR) of the shards of one sc-sim sweep or sc-sim fuzz campaign and\n"
           "  prints the report the unsharded run gives; --out FILE: the merged lines, in campaign order");
      return 0;
    }
    if (!strcmp(argv[i], "--out")) {
      if (i + 1 >= argc) return fprintf(stderr, "sc-sim merge: --out needs a value\n"), 2;
      outp = argv[++i];
    } else if (argv[i][0] == '-' && argv[i][1]) return fprintf(stderr, "sc-sim merge: unknown option '%s'\n", argv[i]), 2;
    else {
      npaths++;
      if (!read_path(argv[i], &l, &files)) return 2;
    }
  }
  if (!npaths) return fprintf(stderr, "usage: sc-sim merge [--out FILE] DIR_OR_FILE...\n"), 2;
  if (!l.n) return fprintf(stderr, "sc-sim merge: no JSON lines in %d file(s)\n", files), 2;
  char kind[16] = "";
  get(l.v[0], "kind", kind, sizeof kind);
  if (!strcmp(kind, "jaxdiff"))
    return fprintf(stderr, "sc-sim merge: these are python -m sc_sim.jaxdiff shards: merge them with python -m sc_sim.jaxdiff --merge DIR...\n"), 2;
  for (int i = 0; i < l.n; i++) {
    char k2[16] = "";
    get(l.v[i], "kind", k2, sizeof k2);
    if (strcmp(k2, kind) || (strcmp(kind, "sweep") && strcmp(kind, "fuzz")))
      return fprintf(stderr, "sc-sim merge: lines of kind '%s' and '%s': merge the shards of one sweep or one fuzz campaign\n", kind, k2), 2;
  }
  qsort(l.v, (size_t)l.n, sizeof *l.v, by_index);
  FILE *out = NULL;
  if (outp && !(out = fopen(outp, "w"))) return fprintf(stderr, "sc-sim merge: cannot write '%s': %s\n", outp, strerror(errno)), 2;
  int code = !strcmp(kind, "sweep") ? merge_sweep(&l, out) : merge_fuzz(&l);
  if (out && fclose(out)) return fprintf(stderr, "sc-sim merge: cannot write '%s'\n", outp), 2;
  for (int i = 0; i < l.n; i++) free(l.v[i]);
  free(l.v);
  return code;
}
