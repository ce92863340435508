/* tests/trace_check.c -- a strict checker of the traces sc-sim writes.
 *
 * JSON: RFC 8259 exactly (no trailing commas, no leading zeros, no raw
 * control characters, valid escapes and UTF-8, no lone surrogates) plus no
 * duplicate keys.  Structure (Chrome trace-event format as Perfetto reads
 * it): the top level is {"displayTimeUnit": "ns", "version": {...}, "traceEvents": [...]};
 * every event has name, ph, ts, pid, tid; X has dur, b/e/s/f have id; every
 * "b" meets its "e", every "f" (bp "e") follows its "s" and every "s" has
 * its "f"; each pid an event uses, and each tid but a counter's (a "C" is
 * a track of its process), is named by metadata; the X slices of a thread are in time
 * order and never overlap, even after Perfetto's rounding to whole
 * nanoseconds; a "trace truncated" instant, if any, is the last event.
 * CSV: RFC 4180 rows of the fixed columns.
 *
 * The file is mapped, and each event is parsed into a small tree that is
 * thrown away after its checks, so memory stays small on large traces.
 * tests/test_trace.c includes this file; built with -DTRACE_CHECK_MAIN it
 * is the program `trace-check FILE.json|FILE.csv` (mk/traces.mk). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the tree of one event ------------------------------------------------------------ */
typedef enum { TJ_NULL, TJ_BOOL, TJ_NUM, TJ_STR, TJ_ARR, TJ_OBJ } TjType;

typedef struct TjNode TjNode;
struct TjNode {
  TjType type;
  const char *key;  /* in an object: the member's (decoded) key */
  const char *str;  /* TJ_STR: decoded, NUL-terminated; TJ_NUM: the literal text */
  size_t len;       /* of str */
  double num;
  bool b;
  TjNode *kids;     /* first child (arrays, objects) */
  TjNode *next;     /* next sibling */
};

typedef struct {
  const char *p, *end, *start;
  int line;          /* 1-based line of p */
  char err[256];
  char *arena;       /* nodes and decoded strings of the current event */
  size_t used, cap;
  int depth;
} Tj;

static void *tj_alloc(Tj *j, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (j->used + n > j->cap) {
    snprintf(j->err, sizeof j->err, "line %d: an event is larger than %zu bytes", j->line, j->cap);
    return NULL;
  }
  void *r = j->arena + j->used;
  j->used += n;
  return r;
}

static bool tj_fail(Tj *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool tj_fail(Tj *j, const char *fmt, ...) {
  if (j->err[0]) return false;
  char m[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m, sizeof m, fmt, ap);
  va_end(ap);
  snprintf(j->err, sizeof j->err, "line %d: %s", j->line, m);
  return false;
}

static void tj_ws(Tj *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) {
    if (*j->p == '\n') j->line++;
    j->p++;
  }
}

static int tj_hex4(const char *p) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

static size_t tj_utf8_put(char *o, unsigned cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 63)), 2;
  if (cp < 0x10000)
    return o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 63)), o[2] = (char)(0x80 | (cp & 63)), 3;
  o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 63)), o[2] = (char)(0x80 | (cp >> 6 & 63));
  o[3] = (char)(0x80 | (cp & 63));
  return 4;
}

/* The length of the valid UTF-8 sequence at p, 0 if invalid (RFC 3629). */
static int tj_utf8_len(const unsigned char *p, const unsigned char *end) {
  int n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
  if (p[0] < 0xc2 || p[0] > 0xf4 || end - p < n) return 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] >= 0xa0)) return 0;
  if ((n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] >= 0x90)) return 0;
  return n;
}

/* A string at j->p (on the opening quote), decoded into the arena. */
static bool tj_string(Tj *j, const char **out, size_t *outlen) {
  const char *p = j->p + 1;
  size_t cap = 0;
  for (const char *q = p; q < j->end && *q != '"'; q++) cap += (*q == '\\' && q + 1 < j->end) ? (q++, 4) : 1;
  char *o = tj_alloc(j, cap + 1);
  if (!o) return false;
  size_t n = 0;
  for (;;) {
    if (p >= j->end) return tj_fail(j, "unterminated string");
    unsigned char c = (unsigned char)*p;
    if (c == '"') break;
    if (c < 0x20) return tj_fail(j, "raw control character 0x%02x in a string", c);
    if (c >= 0x80) {
      int k = tj_utf8_len((const unsigned char *)p, (const unsigned char *)j->end);
      if (!k) return tj_fail(j, "invalid UTF-8 in a string");
      memcpy(o + n, p, (size_t)k);
      n += (size_t)k, p += k;
      continue;
    }
    if (c != '\\') {
      o[n++] = (char)c, p++;
      continue;
    }
    if (p + 1 >= j->end) return tj_fail(j, "unterminated escape");
    char e = p[1];
    const char *simple = strchr("\"\\/bfnrt", e);
    if (e && simple) {
      o[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
      p += 2;
      continue;
    }
    if (e != 'u' || j->end - p < 6) return tj_fail(j, "invalid escape '\\%c'", e);
    int cp = tj_hex4(p + 2);
    if (cp < 0) return tj_fail(j, "invalid \\u escape");
    p += 6;
    if (cp >= 0xdc00 && cp <= 0xdfff) return tj_fail(j, "lone low surrogate \\u%04x", (unsigned)cp);
    if (cp >= 0xd800 && cp <= 0xdbff) {
      int lo = (j->end - p >= 6 && p[0] == '\\' && p[1] == 'u') ? tj_hex4(p + 2) : -1;
      if (lo < 0xdc00 || lo > 0xdfff) return tj_fail(j, "lone high surrogate \\u%04x", (unsigned)cp);
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      p += 6;
    }
    n += tj_utf8_put(o + n, (unsigned)cp);
  }
  o[n] = '\0';
  j->p = p + 1;
  *out = o;
  *outlen = n;
  return true;
}

static bool tj_digits(Tj *j) {
  const char *s = j->p;
  while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
  return j->p > s;
}

static bool tj_number(Tj *j, TjNode *n) {
  const char *s = j->p;
  if (*j->p == '-') j->p++;
  if (j->p < j->end && *j->p == '0') j->p++;
  else if (!tj_digits(j)) return tj_fail(j, "invalid number");
  if (j->p < j->end && *j->p == '.') {
    j->p++;
    if (!tj_digits(j)) return tj_fail(j, "invalid number: no digit after '.'");
  }
  if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
    j->p++;
    if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
    if (!tj_digits(j)) return tj_fail(j, "invalid number: no digit in the exponent");
  }
  if (j->p < j->end && *j->p >= '0' && *j->p <= '9') return tj_fail(j, "invalid number: leading zero");
  size_t len = (size_t)(j->p - s);
  char *t = tj_alloc(j, len + 1);
  if (!t) return false;
  memcpy(t, s, len);
  t[len] = '\0';
  n->type = TJ_NUM, n->str = t, n->len = len, n->num = strtod(t, NULL);
  return true;
}

static bool tj_value(Tj *j, TjNode *n);

static bool tj_members(Tj *j, TjNode *n, bool object) {
  char close = object ? '}' : ']';
  j->p++;
  if (++j->depth > 64) return tj_fail(j, "nested deeper than 64");
  tj_ws(j);
  if (j->p < j->end && *j->p == close) {
    j->p++, j->depth--;
    return true;
  }
  TjNode **tail = &n->kids;
  for (;;) {
    TjNode *k = tj_alloc(j, sizeof *k);
    if (!k) return false;
    memset(k, 0, sizeof *k);
    tj_ws(j);
    if (object) {
      size_t kl;
      if (j->p >= j->end || *j->p != '"') return tj_fail(j, "expected a key");
      if (!tj_string(j, &k->key, &kl)) return false;
      for (TjNode *o = n->kids; o; o = o->next)
        if (strcmp(o->key, k->key) == 0) return tj_fail(j, "duplicate key \"%s\"", k->key);
      tj_ws(j);
      if (j->p >= j->end || *j->p != ':') return tj_fail(j, "expected ':'");
      j->p++;
    }
    if (!tj_value(j, k)) return false;
    *tail = k, tail = &k->next;
    tj_ws(j);
    if (j->p < j->end && *j->p == ',') {
      j->p++;
      continue;
    }
    if (j->p < j->end && *j->p == close) {
      j->p++, j->depth--;
      return true;
    }
    return tj_fail(j, "expected ',' or '%c'", close);
  }
}

static bool tj_word(Tj *j, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0) return tj_fail(j, "invalid literal");
  j->p += n;
  return true;
}

static bool tj_value(Tj *j, TjNode *n) {
  tj_ws(j);
  if (j->p >= j->end) return tj_fail(j, "unexpected end of file");
  switch (*j->p) {
  case '{': n->type = TJ_OBJ; return tj_members(j, n, true);
  case '[': n->type = TJ_ARR; return tj_members(j, n, false);
  case '"': n->type = TJ_STR; return tj_string(j, &n->str, &n->len);
  case 't': n->type = TJ_BOOL, n->b = true; return tj_word(j, "true");
  case 'f': n->type = TJ_BOOL; return tj_word(j, "false");
  case 'n': n->type = TJ_NULL; return tj_word(j, "null");
  default:
    if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) return tj_number(j, n);
    return tj_fail(j, "unexpected character '%c'", *j->p);
  }
}

/* The member at a dotted path ("args.name"), NULL if absent. */
static const TjNode *tj_get(const TjNode *n, const char *path) {
  while (n && *path) {
    const char *dot = strchr(path, '.');
    size_t len = dot ? (size_t)(dot - path) : strlen(path);
    const TjNode *k = n->type == TJ_OBJ ? n->kids : NULL;
    while (k && !(strlen(k->key) == len && memcmp(k->key, path, len) == 0)) k = k->next;
    n = k;
    path += len + (dot != NULL);
  }
  return n;
}

static const char *tj_str(const TjNode *ev, const char *path) {
  const TjNode *n = tj_get(ev, path);
  return n && n->type == TJ_STR ? n->str : NULL;
}

/* ---- the checks ----------------------------------------------------------------------- */
typedef struct {
  uint64_t events, x, b, e, s, f, c, m, i;
  uint64_t named_threads, named_processes;
  bool truncated;      /* the last event is the "trace truncated" instant */
  uint64_t max_tid_lane; /* the largest lane (tid / 10000) of an X event */
} TcResult;

typedef void (*TcVisit)(const TjNode *ev, void *ctx);

typedef struct {
  int pid, tid;
  bool named;
  bool used;
  int64_t last_ts, last_end; /* ps, of the last X */
  int64_t last_end_ns;       /* Perfetto's view of that end */
} TcTrack;

typedef struct {
  int pid;
  uint64_t id;
  char name[64];
  int64_t ts;
} TcOpen;

typedef struct {
  TcTrack *t;
  size_t nt;
  int *procs_named, *procs_used;
  size_t npn, npu;
  TcOpen *open;
  size_t nopen;
  uint64_t *flows; /* open addressing, 0 = empty; ids are stored + 1 */
  size_t flowcap, nflows;
  int64_t *flow_ts;
  bool *flow_ended;
  size_t nflows_ended;
} TcState;

/* A time in picoseconds from its decimal microseconds (6 decimals exactly
 * for what sc-sim writes; other forms go through a double). */
static int64_t tc_ps(const TjNode *n) {
  if (!n || n->type != TJ_NUM) return -1;
  const char *s = n->str;
  if (strpbrk(s, "eE-")) return (int64_t)llround(n->num * 1e6);
  int64_t whole = 0, frac = 0;
  int k = 0;
  for (; *s && *s != '.'; s++) whole = whole * 10 + (*s - '0');
  if (*s == '.')
    for (s++; *s; s++)
      if (k < 6) frac = frac * 10 + (*s - '0'), k++;
  for (; k < 6; k++) frac *= 10;
  return whole * 1000000 + frac;
}

static int64_t tc_ns(int64_t ps) { return (ps + 500) / 1000; } /* llround(us * 1000) */

static TcTrack *tc_track(TcState *st, int pid, int tid) {
  for (size_t i = 0; i < st->nt; i++)
    if (st->t[i].pid == pid && st->t[i].tid == tid) return &st->t[i];
  TcTrack *q = realloc(st->t, (st->nt + 1) * sizeof *q);
  if (!q) abort();
  st->t = q;
  q[st->nt] = (TcTrack){pid, tid, false, false, -1, -1, -1};
  return &q[st->nt++];
}

static void tc_add_int(int **a, size_t *n, int v) {
  for (size_t i = 0; i < *n; i++)
    if ((*a)[i] == v) return;
  int *q = realloc(*a, (*n + 1) * sizeof *q);
  if (!q) abort();
  *a = q;
  q[(*n)++] = v;
}

static bool tc_has_int(const int *a, size_t n, int v) {
  for (size_t i = 0; i < n; i++)
    if (a[i] == v) return true;
  return false;
}

static size_t tc_flow_slot(const TcState *st, uint64_t id) {
  size_t h = (size_t)((id + 1) * 0x9e3779b97f4a7c15ull) & (st->flowcap - 1);
  while (st->flows[h] && st->flows[h] != id + 1) h = (h + 1) & (st->flowcap - 1);
  return h;
}

static void tc_flow_add(TcState *st, uint64_t id, int64_t ts) {
  if (2 * (st->nflows + 1) > st->flowcap) {
    TcState old = *st;
    st->flowcap = st->flowcap ? st->flowcap * 2 : 1024;
    st->flows = calloc(st->flowcap, sizeof *st->flows);
    st->flow_ts = calloc(st->flowcap, sizeof *st->flow_ts);
    st->flow_ended = calloc(st->flowcap, sizeof *st->flow_ended);
    if (!st->flows || !st->flow_ts || !st->flow_ended) abort();
    for (size_t i = 0; i < old.flowcap; i++)
      if (old.flows[i]) {
        size_t h = tc_flow_slot(st, old.flows[i] - 1);
        st->flows[h] = old.flows[i], st->flow_ts[h] = old.flow_ts[i], st->flow_ended[h] = old.flow_ended[i];
      }
    free(old.flows);
    free(old.flow_ts);
    free(old.flow_ended);
  }
  size_t h = tc_flow_slot(st, id);
  if (!st->flows[h]) st->nflows++;
  else if (st->flow_ended[h]) st->nflows_ended--; /* an id used again starts a new flow */
  st->flows[h] = id + 1, st->flow_ts[h] = ts, st->flow_ended[h] = false;
}

static bool tc_int(const TjNode *n, int64_t *v) {
  if (!n || n->type != TJ_NUM || strpbrk(n->str, ".eE")) return false;
  *v = strtoll(n->str, NULL, 10);
  return true;
}

static bool tc_metadata(Tj *j, TcState *st, const TjNode *ev, const char *name, int pid, int tid) {
  if (strcmp(name, "process_name") == 0 || strcmp(name, "thread_name") == 0) {
    if (!tj_str(ev, "args.name")) return tj_fail(j, "%s without args.name", name);
    if (name[0] == 'p') tc_add_int(&st->procs_named, &st->npn, pid);
    else tc_track(st, pid, tid)->named = true;
  } else if (strstr(name, "sort_index")) {
    int64_t v;
    if (!tc_int(tj_get(ev, "args.sort_index"), &v)) return tj_fail(j, "%s without an integer args.sort_index", name);
  } else if (strcmp(name, "process_labels") != 0) {
    return tj_fail(j, "unknown metadata record '%s'", name);
  }
  return true;
}

/* X slices of one thread: in time order and disjoint, exactly and after
 * Perfetto's rounding to whole nanoseconds. */
static bool tc_slice(Tj *j, TcState *st, const TjNode *ev, int pid, int tid, int64_t ts, TcResult *r) {
  int64_t dur = tc_ps(tj_get(ev, "dur"));
  if (dur < 0) return tj_fail(j, "X event without a non-negative dur");
  TcTrack *t = tc_track(st, pid, tid);
  if (ts < t->last_ts) return tj_fail(j, "X events of pid %d tid %d out of time order", pid, tid);
  if (ts < t->last_end) return tj_fail(j, "X events of pid %d tid %d overlap", pid, tid);
  if (tc_ns(ts) < t->last_end_ns) return tj_fail(j, "X events of pid %d tid %d overlap once rounded to ns", pid, tid);
  t->last_ts = ts, t->last_end = ts + dur, t->last_end_ns = tc_ns(ts) + tc_ns(dur);
  if ((uint64_t)(tid / 10000) > r->max_tid_lane) r->max_tid_lane = (uint64_t)(tid / 10000);
  r->x++;
  return true;
}

static bool tc_async(Tj *j, TcState *st, const TjNode *ev, char ph, int pid, uint64_t id, const char *name, int64_t ts) {
  if (!tj_str(ev, "cat")) return tj_fail(j, "async event without cat");
  size_t i = 0;
  while (i < st->nopen && !(st->open[i].pid == pid && st->open[i].id == id && strcmp(st->open[i].name, name) == 0)) i++;
  if (ph == 'b') {
    if (i < st->nopen) return tj_fail(j, "async id %llu begun twice", (unsigned long long)id);
    TcOpen *q = realloc(st->open, (st->nopen + 1) * sizeof *q);
    if (!q) abort();
    st->open = q;
    q[st->nopen] = (TcOpen){.pid = pid, .id = id, .ts = ts};
    snprintf(q[st->nopen++].name, sizeof q->name, "%s", name);
    return true;
  }
  if (i == st->nopen) return tj_fail(j, "\"e\" of async id %llu without its \"b\"", (unsigned long long)id);
  if (ts < st->open[i].ts) return tj_fail(j, "async id %llu ends before it begins", (unsigned long long)id);
  st->open[i] = st->open[--st->nopen];
  return true;
}

static bool tc_flow(Tj *j, TcState *st, const TjNode *ev, char ph, uint64_t id, int64_t ts) {
  if (ph == 's') {
    tc_flow_add(st, id, ts);
    return true;
  }
  const char *bp = tj_str(ev, "bp");
  if (!bp || strcmp(bp, "e") != 0) return tj_fail(j, "flow end without bp \"e\"");
  size_t h = st->flowcap ? tc_flow_slot(st, id) : 0;
  if (!st->flowcap || !st->flows[h]) return tj_fail(j, "flow end %llu without its start", (unsigned long long)id);
  if (ts < st->flow_ts[h]) return tj_fail(j, "flow %llu ends before it starts", (unsigned long long)id);
  if (st->flow_ended[h]) return tj_fail(j, "flow %llu ends twice", (unsigned long long)id);
  st->flow_ended[h] = true;
  st->nflows_ended++;
  return true;
}

static bool tc_event(Tj *j, TcState *st, const TjNode *ev, TcResult *r, bool *after_cut) {
  const char *name = tj_str(ev, "name"), *ph = tj_str(ev, "ph");
  int64_t pid, tid, ts = tc_ps(tj_get(ev, "ts"));
  if (ev->type != TJ_OBJ) return tj_fail(j, "an event is not an object");
  if (!name || !ph || !ph[0] || ph[1]) return tj_fail(j, "event without a string name and a one-letter ph");
  if (ts < 0) return tj_fail(j, "event '%s' without a non-negative ts", name);
  if (!tc_int(tj_get(ev, "pid"), &pid) || !tc_int(tj_get(ev, "tid"), &tid) || pid <= 0 || tid <= 0)
    return tj_fail(j, "event '%s' without a positive integer pid and tid", name);
  if (*after_cut) return tj_fail(j, "an event follows the \"trace truncated\" record");
  r->events++;
  if (*ph != 'M') {
    tc_add_int(&st->procs_used, &st->npu, (int)pid);
    if (*ph != 'C') tc_track(st, (int)pid, (int)tid)->used = true; /* a counter is its process's track */
  }
  int64_t id = 0;
  if (strchr("besf", *ph) && !tc_int(tj_get(ev, "id"), &id)) return tj_fail(j, "'%c' event without an integer id", *ph);
  switch (*ph) {
  case 'M': r->m++; return tc_metadata(j, st, ev, name, (int)pid, (int)tid);
  case 'X': return tc_slice(j, st, ev, (int)pid, (int)tid, ts, r);
  case 'b': r->b++; return tc_async(j, st, ev, 'b', (int)pid, (uint64_t)id, name, ts);
  case 'e': r->e++; return tc_async(j, st, ev, 'e', (int)pid, (uint64_t)id, name, ts);
  case 's': r->s++; return tc_flow(j, st, ev, 's', (uint64_t)id, ts);
  case 'f': r->f++; return tc_flow(j, st, ev, 'f', (uint64_t)id, ts);
  case 'C': {
    r->c++;
    const TjNode *a = tj_get(ev, "args");
    if (!a || a->type != TJ_OBJ || !a->kids) return tj_fail(j, "counter '%s' without args", name);
    for (const TjNode *k = a->kids; k; k = k->next)
      if (k->type != TJ_NUM) return tj_fail(j, "counter '%s' has a non-numeric value", name);
    return true;
  }
  case 'i': {
    r->i++;
    const char *s = tj_str(ev, "s");
    if (s && strcmp(s, "g") && strcmp(s, "p") && strcmp(s, "t")) return tj_fail(j, "instant with scope '%s'", s);
    if (strcmp(name, "trace truncated") == 0) {
      if (!tj_str(ev, "args.reason")) return tj_fail(j, "\"trace truncated\" without args.reason");
      *after_cut = r->truncated = true;
    }
    return true;
  }
  default: return tj_fail(j, "unknown phase '%s'", ph);
  }
}

static bool tc_finish(Tj *j, TcState *st, TcResult *r) {
  if (st->nopen) return tj_fail(j, "async id %llu never ends", (unsigned long long)st->open[0].id);
  for (size_t i = 0; i < st->flowcap; i++) /* an arrow needs both ends */
    if (st->flows[i] && !st->flow_ended[i]) return tj_fail(j, "flow %llu has no end", (unsigned long long)(st->flows[i] - 1));
  for (size_t i = 0; i < st->npu; i++)
    if (!tc_has_int(st->procs_named, st->npn, st->procs_used[i]))
      return tj_fail(j, "pid %d has no process_name", st->procs_used[i]);
  for (size_t i = 0; i < st->nt; i++) {
    if (st->t[i].used && !st->t[i].named) return tj_fail(j, "pid %d tid %d has no thread_name", st->t[i].pid, st->t[i].tid);
    r->named_threads += st->t[i].named;
  }
  r->named_processes = st->npn;
  return true;
}

static void tc_free(TcState *st) {
  free(st->t);
  free(st->procs_named);
  free(st->procs_used);
  free(st->open);
  free(st->flows);
  free(st->flow_ts);
  free(st->flow_ended);
}

static bool tc_key(Tj *j, const char *want) {
  const char *k;
  size_t kl;
  tj_ws(j);
  if (j->p >= j->end || *j->p != '"' || !tj_string(j, &k, &kl) || strcmp(k, want) != 0)
    return tj_fail(j, "the top level must be {\"displayTimeUnit\": \"ns\", \"traceEvents\": [...]}");
  tj_ws(j);
  if (j->p >= j->end || *j->p != ':') return tj_fail(j, "expected ':'");
  j->p++;
  return true;
}

/* Checks the JSON trace in buf[0, n); visit (may be NULL) sees each event. */
static bool tc_check_json(const char *buf, size_t n, TcResult *r, TcVisit visit, void *ctx, char *err, size_t errcap) {
  Tj j = {.p = buf, .end = buf + n, .start = buf, .line = 1, .cap = 1 << 20};
  TcState st = {0};
  TjNode dtu = {0};
  bool after_cut = false, ok = false;
  memset(r, 0, sizeof *r);
  if (!(j.arena = malloc(j.cap))) abort();
  tj_ws(&j);
  if (j.p >= j.end || *j.p != '{') {
    tj_fail(&j, "the file does not start with '{'");
    goto out;
  }
  j.p++;
  if (!tc_key(&j, "displayTimeUnit") || !tj_value(&j, &dtu)) goto out;
  if (dtu.type != TJ_STR || strcmp(dtu.str, "ns") != 0) {
    tj_fail(&j, "displayTimeUnit is not \"ns\"");
    goto out;
  }
  tj_ws(&j);
  if (j.p >= j.end || *j.p++ != ',' || !tc_key(&j, "version") || !tj_value(&j, &dtu)) goto out;
  if (dtu.type != TJ_OBJ) {
    tj_fail(&j, "version is not an object");
    goto out;
  }
  tj_ws(&j);
  if (j.p >= j.end || *j.p++ != ',' || !tc_key(&j, "traceEvents")) goto out;
  tj_ws(&j);
  if (j.p >= j.end || *j.p++ != '[') {
    tj_fail(&j, "traceEvents is not an array");
    goto out;
  }
  tj_ws(&j);
  bool more = j.p < j.end && *j.p != ']';
  while (more) {
    TjNode ev = {0};
    j.used = 0;
    if (!tj_value(&j, &ev) || !tc_event(&j, &st, &ev, r, &after_cut)) goto out;
    if (visit) visit(&ev, ctx);
    tj_ws(&j);
    if (j.p < j.end && *j.p == ',') j.p++;
    else more = false;
  }
  tj_ws(&j);
  if (j.p >= j.end || *j.p++ != ']') {
    tj_fail(&j, "expected ',' or ']' after an event");
    goto out;
  }
  tj_ws(&j);
  if (j.p >= j.end || *j.p++ != '}') {
    tj_fail(&j, "expected '}' after traceEvents");
    goto out;
  }
  tj_ws(&j);
  if (j.p != j.end) {
    tj_fail(&j, "text after the document");
    goto out;
  }
  ok = tc_finish(&j, &st, r);
out:
  if (!ok) snprintf(err, errcap, "%s", j.err[0] ? j.err : "invalid");
  free(j.arena);
  tc_free(&st);
  return ok;
}

/* ---- CSV ---------------------------------------------------------------------------- */
#define TC_CSV_HEADER "cycle,core,subcore,op,space,ref,offset,bytes,old,new,end_cycle,line,col,spans"
#define TC_CSV_COLUMNS 14

typedef void (*TcRow)(char **fields, int nfields, void *ctx);

/* Splits one RFC 4180 record at *pp into fields (decoded into out);
 * false on a malformed record. */
static bool tc_csv_record(const char **pp, const char *end, char *out, char **fields, int *nf) {
  const char *p = *pp;
  *nf = 0;
  for (;;) {
    if (*nf == TC_CSV_COLUMNS + 1) return false;
    fields[(*nf)++] = out;
    if (p < end && *p == '"') {
      for (p++;; p++) {
        if (p >= end) return false;
        if (*p == '"' && p + 1 < end && p[1] == '"') *out++ = *p++;
        else if (*p == '"') break;
        else *out++ = *p;
      }
      p++;
    } else {
      while (p < end && *p != ',' && *p != '\n') {
        if (*p == '"' || *p == '\r') return false;
        *out++ = *p++;
      }
    }
    *out++ = '\0';
    if (p < end && *p == ',') {
      p++;
      continue;
    }
    if (p >= end || *p != '\n') return false;
    *pp = p + 1;
    return true;
  }
}

static bool tc_is_int(const char *s, bool empty_ok) {
  if (!*s) return empty_ok;
  if (*s == '-') s++;
  if (!*s) return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return false;
  return true;
}

/* Checks a CSV trace: the header, then rows of 14 fields whose numeric
 * columns are integers; a "truncated" row may only come last. */
static bool tc_check_csv(const char *buf, size_t n, uint64_t *rows, bool *truncated, TcRow visit, void *ctx, char *err,
                         size_t errcap) {
  const char *p = buf, *end = buf + n;
  size_t hl = strlen(TC_CSV_HEADER);
  *rows = 0, *truncated = false;
  if (n < hl + 1 || memcmp(buf, TC_CSV_HEADER "\n", hl + 1) != 0) {
    snprintf(err, errcap, "line 1: the header is not '%s'", TC_CSV_HEADER);
    return false;
  }
  p += hl + 1;
  char *out = malloc(n + 1);
  char *fields[TC_CSV_COLUMNS + 1];
  if (!out) abort();
  bool ok = true;
  for (int line = 2; ok && p < end; line++) {
    int nf;
    const char *rec = p;
    if (*truncated || !tc_csv_record(&p, end, out, fields, &nf) || nf != TC_CSV_COLUMNS) {
      snprintf(err, errcap, "line %d: %s", line, *truncated ? "a row follows the truncated row" : "not a row of 14 fields");
      ok = false;
      break;
    }
    if (strcmp(fields[3], "truncated") == 0 && !fields[1][0]) {
      *truncated = true;
      continue;
    }
    static const int numeric[] = {0, 1, 2, 6, 7, 10, 11, 12};
    for (size_t k = 0; k < sizeof numeric / sizeof *numeric; k++)
      if (!tc_is_int(fields[numeric[k]], false)) {
        snprintf(err, errcap, "line %d: column %d is not an integer: %.40s", line, numeric[k] + 1, rec);
        ok = false;
      }
    (*rows)++;
    if (ok && visit) visit(fields, nf, ctx);
  }
  free(out);
  return ok;
}

/* ---- files --------------------------------------------------------------------------- */
/* Maps path read-only; *n = 0 and a non-NULL pointer for an empty file. */
static const char *tc_map(const char *path, size_t *n, char *err, size_t errcap) {
  int fd = open(path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) {
    snprintf(err, errcap, "cannot open %s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return NULL;
  }
  *n = (size_t)sb.st_size;
  const char *m = *n ? mmap(NULL, *n, PROT_READ, MAP_PRIVATE, fd, 0) : "";
  close(fd);
  if (m == MAP_FAILED) {
    snprintf(err, errcap, "cannot map %s: %s", path, strerror(errno));
    return NULL;
  }
  return m;
}

static void tc_unmap(const char *m, size_t n) {
  if (n) munmap((void *)m, n);
}

#ifdef TRACE_CHECK_MAIN
int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: trace-check FILE.json | FILE.csv\n");
    return 2;
  }
  char err[512];
  size_t n;
  const char *m = tc_map(argv[1], &n, err, sizeof err);
  if (!m) {
    fprintf(stderr, "trace-check: %s\n", err);
    return 2;
  }
  size_t len = strlen(argv[1]);
  bool csv = len > 4 && strcmp(argv[1] + len - 4, ".csv") == 0, ok;
  if (csv) {
    uint64_t rows;
    bool cut;
    ok = tc_check_csv(m, n, &rows, &cut, NULL, NULL, err, sizeof err);
    if (ok) printf("trace-check: %s: valid CSV, %llu rows%s\n", argv[1], (unsigned long long)rows, cut ? ", truncated" : "");
  } else {
    TcResult r;
    ok = tc_check_json(m, n, &r, NULL, NULL, err, sizeof err);
    if (ok)
      printf("trace-check: %s: valid, %llu events (X %llu, b/e %llu/%llu, s/f %llu/%llu, C %llu, M %llu, i %llu), "
             "%llu threads named, %llu bytes/event%s\n",
             argv[1], (unsigned long long)r.events, (unsigned long long)r.x, (unsigned long long)r.b,
             (unsigned long long)r.e, (unsigned long long)r.s, (unsigned long long)r.f, (unsigned long long)r.c,
             (unsigned long long)r.m, (unsigned long long)r.i, (unsigned long long)r.named_threads,
             (unsigned long long)(r.events ? n / r.events : 0), r.truncated ? ", truncated" : "");
  }
  if (!ok) fprintf(stderr, "trace-check: %s: %s\n", argv[1], err);
  tc_unmap(m, n);
  return ok ? 0 : 1;
}
#endif
