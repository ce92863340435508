/* tests/test_trace.c -- CUnit tests of the trace writers (traces/trace.c).
 *
 * Each test drives a TraceSink with a hand-made event sequence, reads the
 * file back and checks it with the strict checker of tests/trace_check.c:
 * valid JSON, the fields every event needs, metadata names, matched async
 * pairs and flows, X slices in order and disjoint per thread (also after
 * Perfetto's rounding), the window and the filters, the size bound, CSV,
 * determinism, and failures that leave no file.
 *
 * `test_trace --sample FILE` writes a richer sample trace (for
 * `make viewer-test`) instead of running the tests. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <time.h>

#include "../traces/json.h"
#include "../traces/outfile.h"
#include "../traces/trace.h"
#include "trace_check.c"

static char tmpdir[128];

static const char *in_tmp(const char *name) {
  static char buf[4][256];
  static int k;
  char *p = buf[k++ % 4];
  snprintf(p, sizeof buf[0], "%s/%s", tmpdir, name);
  return p;
}

static TraceOptions options(void) {
  TraceOptions o;
  trace_options_init(&o);
  o.clock_hz = 1e9;
  o.cores = 1;
  o.subcores = 2;
  o.program_name = "sample.yaml";
  return o;
}

static TraceEvent ev(TraceKind k, uint64_t t0, uint64_t t1, int subcore) {
  TraceEvent e;
  memset(&e, 0, sizeof e);
  e.kind = k, e.t0 = t0, e.t1 = t1, e.subcore = subcore, e.dma = -1;
  return e;
}

static void acc(TraceSink *s, uint64_t t0, uint64_t t1, int sub, const char *op, const char *ref, int64_t off,
                   const char *old, const char *nw, int line) {
  TraceEvent e = ev(TE_ACCESS, t0, t1, sub);
  e.op = op, e.space = "vmem", e.ref = ref, e.offset = off, e.bytes = 64, e.old_text = old, e.new_text = nw;
  e.line = line, e.col = 3;
  trace_event(s, &e);
}

static void dma(TraceSink *s, TraceKind k, uint64_t t, int sub, int id, const char *src, const char *dst, int64_t bytes) {
  TraceEvent e = ev(k, t, t, sub);
  e.dma = id, e.op = k == TE_DMA_WAIT ? "wait" : "dma", e.bytes = bytes, e.line = 9, e.col = 5;
  e.src_space = "hbm", e.src_ref = src, e.dst_space = "vmem", e.dst_ref = dst;
  trace_event(s, &e);
}

static void counter(TraceSink *s, TraceKind k, uint64_t t, int sub, const char *name, int64_t v) {
  TraceEvent e = ev(k, t, t, sub);
  if (k == TE_SEMAPHORE) e.ref = name;
  else e.space = name;
  e.value = v;
  trace_event(s, &e);
}

/* Quotes, a backslash, a newline, a tab, a control character, UTF-8 and one
 * invalid byte (which JSON carries as U+FFFD). */
static const char OLD_TEXT[] = "[1, 2] \"q\" \\ \n\t\x01 \xc3\xa9 \xe2\x86\x92 \xff";
static const char OLD_JSON[] = "[1, 2] \"q\" \\ \n\t\x01 \xc3\xa9 \xe2\x86\x92 \xef\xbf\xbd";

/* Two subcores; two overlapping DMAs on subcore 0's engine, each waited;
 * counters; a stall, barriers; two overlapping accesses on subcore 1. */
static void sample_events(TraceSink *s) {
  acc(s, 0, 4, 0, "vld", "buf", 0, NULL, "[0, 1, 2]", 5);
  counter(s, TE_SEMAPHORE, 2, 0, "sem@0.0", 0);
  acc(s, 1, 5, 1, "vst", "buf", 64, OLD_TEXT, "[7, 8]", 6);
  dma(s, TE_DMA_START, 12, 0, 0, "x", "buf", 512);
  counter(s, TE_INFLIGHT, 12, 0, "hbm", 512);
  dma(s, TE_DMA_START, 20, 0, 1, "y", "buf2", 256);
  counter(s, TE_INFLIGHT, 20, 0, "hbm", 768);
  acc(s, 30, 40, 1, "vld", "buf", 0, NULL, "[3]", 7);
  acc(s, 35, 45, 1, "vld", "buf", 64, NULL, "[4]", 7);
  dma(s, TE_DMA_END, 50, 0, 0, "x", "buf", 512);
  counter(s, TE_SEMAPHORE, 50, 0, "sem@0.0", 512);
  counter(s, TE_INFLIGHT, 50, 0, "hbm", 256);
  TraceEvent st = ev(TE_STALL, 40, 52, 0);
  st.op = "dma";
  trace_event(s, &st);
  dma(s, TE_DMA_WAIT, 52, 0, 0, "x", "buf", 512);
  counter(s, TE_SEMAPHORE, 52, 0, "sem@0.0", 0);
  dma(s, TE_DMA_END, 60, 0, 1, "y", "buf2", 256);
  counter(s, TE_INFLIGHT, 60, 0, "hbm", 0);
  TraceEvent b0 = ev(TE_BARRIER, 70, 80, 0), b1 = ev(TE_BARRIER, 75, 80, 1);
  trace_event(s, &b0);
  trace_event(s, &b1);
  acc(s, 80, 84, 0, "vst", "out", 0, "[?]", "[1]", 11);
  dma(s, TE_DMA_WAIT, 85, 0, 1, "y", "buf2", 256);
}

static bool write_sample(const char *path, const TraceOptions *o) {
  Diag d;
  TraceSink *s = trace_open(path, o, &d);
  if (!s) return false;
  sample_events(s);
  return trace_close(s, &d);
}

/* ---- collecting what the checker sees ---------------------------------------------------- */
typedef struct {
  char names[32][32];
  int nnames;
  bool old_ok, window_ok, carry_inflight, unfinished;
  int tid_bad, x_with_args;
  int64_t ws, we; /* ps */
} Seen;

static void seen_name(Seen *z, const char *n) {
  if (z->nnames < 32) snprintf(z->names[z->nnames++], sizeof z->names[0], "%s", n);
}

static bool seen_has(const Seen *z, const char *n) {
  for (int i = 0; i < z->nnames; i++)
    if (strcmp(z->names[i], n) == 0) return true;
  return false;
}

static void visit(const TjNode *e, void *ctx) {
  Seen *z = ctx;
  const char *ph = tj_str(e, "ph"), *name = tj_str(e, "name");
  if (*ph == 'M' && strstr(name, "_name")) seen_name(z, tj_str(e, "args.name"));
  const char *old = tj_str(e, "args.old");
  if (old && strcmp(old, OLD_JSON) == 0) z->old_ok = true;
  if (*ph == 'X' && tj_get(e, "args.line")) {
    static const char *keys[] = {"space", "ref", "offset", "bytes", "old", "new", "line"};
    bool all = true;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
      char k[32];
      snprintf(k, sizeof k, "args.%s", keys[i]);
      all &= tj_get(e, k) != NULL;
    }
    z->x_with_args += all;
  }
  int64_t ts = tc_ps(tj_get(e, "ts")), dur = tc_ps(tj_get(e, "dur"));
  if (z->we && *ph == 'X') {
    bool in = dur > 0 ? ts < z->we && ts + dur > z->ws : ts >= z->ws && ts < z->we;
    if (!in) z->window_ok = false;
  }
  if (*ph == 'C' && strcmp(name, "inflight hbm") == 0 && ts == z->ws && tc_ps(tj_get(e, "args.bytes")) == 768 * 1000000)
    z->carry_inflight = true;
  const char *state = tj_str(e, "args.state");
  if (state && strcmp(state, "unfinished") == 0) z->unfinished = true;
}

static void visit_tid(const TjNode *e, void *ctx) {
  Seen *z = ctx;
  int64_t tid;
  if (*tj_str(e, "ph") != 'M' && tc_int(tj_get(e, "tid"), &tid) && tid % 10000 != 2 && tid != 1002) z->tid_bad++;
}

/* Checks the JSON file at path; the result and what visit saw. */
static bool check_file(const char *path, TcResult *r, TcVisit v, Seen *z) {
  char err[512];
  size_t n;
  const char *m = tc_map(path, &n, err, sizeof err);
  if (!m) {
    fprintf(stderr, "%s\n", err);
    return false;
  }
  bool ok = tc_check_json(m, n, r, v, z, err, sizeof err);
  if (!ok) fprintf(stderr, "\n%s: %s\n", path, err);
  tc_unmap(m, n);
  return ok;
}

static size_t file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (size_t)sb.st_size : 0;
}

static int count_tmp_files(void) {
  DIR *d = opendir(tmpdir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".tmp.") != NULL;
  if (d) closedir(d);
  return n;
}

/* ---- tests ------------------------------------------------------------------------------ */
static void test_structure(void) {
  TraceOptions o = options();
  const char *p = in_tmp("sample.json");
  CU_ASSERT_FATAL(write_sample(p, &o));
  TcResult r;
  Seen z = {0};
  CU_ASSERT_FATAL(check_file(p, &r, visit, &z));
  CU_ASSERT_EQUAL(r.x, 12); /* 5 accesses, stall, 2 barriers, 2 dma_start, 2 dma_wait */
  CU_ASSERT_EQUAL(r.b, 2);
  CU_ASSERT_EQUAL(r.e, 2);
  CU_ASSERT_EQUAL(r.s, 2);
  CU_ASSERT_EQUAL(r.f, 2);
  CU_ASSERT_EQUAL(r.c, 7);
  CU_ASSERT_EQUAL(r.max_tid_lane, 1); /* the overlapping accesses of subcore 1 */
  CU_ASSERT_FALSE(r.truncated);
  CU_ASSERT(seen_has(&z, "SC0") && seen_has(&z, "vec0") && seen_has(&z, "vec1") && seen_has(&z, "vec1+1"));
  CU_ASSERT(seen_has(&z, "dma0") && seen_has(&z, "dma1"));
  CU_ASSERT(z.old_ok);
  CU_ASSERT_EQUAL(z.x_with_args, 5);
  CU_ASSERT_EQUAL(count_tmp_files(), 0);
}

static void test_scalar_names(void) {
  TraceOptions o = options();
  o.subcores = 1;
  o.scalar_subcore = true;
  const char *p = in_tmp("scalar.json");
  Diag d;
  TraceSink *s = trace_open(p, &o, &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  acc(s, 0, 2, 0, "sld", "x", 0, NULL, "5", 3);
  CU_ASSERT_FATAL(trace_close(s, &d));
  TcResult r;
  Seen z = {0};
  CU_ASSERT_FATAL(check_file(p, &r, visit, &z));
  CU_ASSERT(seen_has(&z, "scalar") && seen_has(&z, "dma0") && !seen_has(&z, "vec0"));
}

static void test_window(void) {
  TraceOptions o = options();
  o.window_start = 30, o.window_end = 58;
  const char *p = in_tmp("window.json");
  CU_ASSERT_FATAL(write_sample(p, &o));
  TcResult r;
  Seen z = {.window_ok = true, .ws = 30000, .we = 58000};
  CU_ASSERT_FATAL(check_file(p, &r, visit, &z));
  CU_ASSERT(z.window_ok);
  CU_ASSERT_EQUAL(r.x, 4); /* the two accesses at 30 and 35, the stall, the first wait */
  CU_ASSERT_EQUAL(r.b, 2); /* both DMAs overlap the window */
  CU_ASSERT_EQUAL(r.s, 0); /* their starts are before it, so no flow either */
  CU_ASSERT_EQUAL(r.f, 0);
  CU_ASSERT_EQUAL(r.c, 5); /* sem and inflight carried to 30, then 3 inside */
  CU_ASSERT(z.carry_inflight);
}

/* A window that holds a DMA's start but not its wait draws no flow: an
 * arrow is written with both its ends or not at all. */
static void test_window_flows(void) {
  TraceOptions o = options();
  o.window_start = 10, o.window_end = 60; /* starts at 12 and 20; waits at 52 and 85 */
  const char *p = in_tmp("window_flows.json");
  CU_ASSERT_FATAL(write_sample(p, &o));
  TcResult r;
  CU_ASSERT_FATAL(check_file(p, &r, NULL, NULL));
  CU_ASSERT_EQUAL(r.s, 1);
  CU_ASSERT_EQUAL(r.f, 1);
}

static void visit_chip_threads(const TjNode *e, void *ctx) {
  int64_t pid;
  const char *name = tj_str(e, "name");
  if (*tj_str(e, "ph") == 'M' && tc_int(tj_get(e, "pid"), &pid) && pid == 999 && !strcmp(name, "thread_name"))
    ((Seen *)ctx)->tid_bad++;
}

/* The chip's counters (core -1) are tracks of the "chip" process and name
 * no thread under it (there is no subcore there). */
static void test_chip_counter(void) {
  TraceOptions o = options();
  const char *p = in_tmp("chip.json");
  Diag d;
  TraceSink *s = trace_open(p, &o, &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  TraceEvent e = ev(TE_INFLIGHT, 3, 3, 0);
  e.core = -1, e.space = "hbm", e.value = 64;
  trace_event(s, &e);
  CU_ASSERT_FATAL(trace_close(s, &d));
  TcResult r;
  Seen z = {0};
  CU_ASSERT_FATAL(check_file(p, &r, visit_chip_threads, &z));
  CU_ASSERT_EQUAL(r.c, 1);
  CU_ASSERT_EQUAL(z.tid_bad, 0); /* thread names under the chip */
}

static void test_filters(void) {
  struct {
    const char *name;
    int core, subcore;
    const char *space, *ref, *op;
    uint64_t x, b, c;
  } cases[] = {
      {"subcore 1", -1, 1, NULL, NULL, NULL, 4, 0, 0},
      {"space hbm", -1, -1, "hbm", NULL, NULL, 4, 2, 4},
      {"ref buf", -1, -1, NULL, "buf", NULL, 6, 1, 0},
      {"ref sem", -1, -1, NULL, "sem", NULL, 0, 0, 3},
      {"op vst", -1, -1, NULL, NULL, "vst", 2, 0, 0},
      {"core 1", 1, -1, NULL, NULL, NULL, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    TraceOptions o = options();
    o.filter_core = cases[i].core, o.filter_subcore = cases[i].subcore;
    o.filter_space = cases[i].space, o.filter_ref = cases[i].ref, o.filter_op = cases[i].op;
    const char *p = in_tmp("filter.json");
    CU_ASSERT_FATAL(write_sample(p, &o));
    TcResult r;
    Seen z = {0};
    CU_ASSERT_FATAL(check_file(p, &r, i == 0 ? visit_tid : NULL, &z));
    if (r.x != cases[i].x || r.b != cases[i].b || r.c != cases[i].c)
      fprintf(stderr, "\nfilter %s: X %llu b %llu C %llu\n", cases[i].name, (unsigned long long)r.x,
              (unsigned long long)r.b, (unsigned long long)r.c);
    CU_ASSERT_EQUAL(r.x, cases[i].x);
    CU_ASSERT_EQUAL(r.b, cases[i].b);
    CU_ASSERT_EQUAL(r.c, cases[i].c);
    CU_ASSERT_EQUAL(z.tid_bad, 0);
  }
}

static void busy_events(TraceSink *s, int n) {
  for (int i = 0; i < n; i++) {
    acc(s, (uint64_t)i * 10, (uint64_t)i * 10 + 4, i % 2, "vld", "buf", i * 64, NULL, "[1, 2, 3, 4]", 5);
    if (i % 10 == 0) dma(s, TE_DMA_START, (uint64_t)i * 10, 0, i, "x", "buf", 4096);
    if (i % 10 == 9) dma(s, TE_DMA_END, (uint64_t)i * 10, 0, i - 9, "x", "buf", 4096);
    if (i % 10 == 9) dma(s, TE_DMA_WAIT, (uint64_t)i * 10 + 1, 0, i - 9, "x", "buf", 4096);
  }
}

static void test_size_bound(void) {
  TraceOptions o = options();
  o.max_bytes = 8192;
  const char *p = in_tmp("bound.json");
  Diag d;
  TraceSink *s = trace_open(p, &o, &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  busy_events(s, 1000);
  TraceStats st;
  trace_get_stats(s, &st);
  CU_ASSERT(st.truncated);
  CU_ASSERT(st.dropped > 0);
  CU_ASSERT_EQUAL(st.events, 1000 + 300);
  CU_ASSERT_FATAL(trace_close(s, &d));
  CU_ASSERT(file_size(p) <= 8192);
  TcResult r;
  CU_ASSERT_FATAL(check_file(p, &r, NULL, NULL));
  CU_ASSERT(r.truncated);
  CU_ASSERT(r.x > 10);
  CU_ASSERT_EQUAL(r.b, r.e);
}

static void csv_row(char **f, int nf, void *ctx) {
  int *n_old = ctx;
  if (nf == TC_CSV_COLUMNS && strcmp(f[8], OLD_TEXT) == 0 && strcmp(f[9], "[7, 8]") == 0 && strcmp(f[3], "vst") == 0)
    (*n_old)++;
}

static bool check_csv_file(const char *path, uint64_t *rows, bool *cut, int *n_old) {
  char err[512];
  size_t n;
  const char *m = tc_map(path, &n, err, sizeof err);
  if (!m) return false;
  bool ok = tc_check_csv(m, n, rows, cut, csv_row, n_old, err, sizeof err);
  if (!ok) fprintf(stderr, "\n%s: %s\n", path, err);
  tc_unmap(m, n);
  return ok;
}

static void test_csv(void) {
  TraceOptions o = options();
  o.format = TRACE_CSV;
  const char *p = in_tmp("sample.csv");
  CU_ASSERT_FATAL(write_sample(p, &o));
  uint64_t rows;
  bool cut;
  int n_old = 0;
  CU_ASSERT_FATAL(check_csv_file(p, &rows, &cut, &n_old));
  CU_ASSERT_EQUAL(rows, 5);
  CU_ASSERT_FALSE(cut);
  CU_ASSERT_EQUAL(n_old, 1);
  o.max_bytes = 4096;
  Diag d;
  TraceSink *s = trace_open(p, &o, &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  busy_events(s, 1000);
  CU_ASSERT_FATAL(trace_close(s, &d));
  CU_ASSERT(file_size(p) <= 4096);
  CU_ASSERT_FATAL(check_csv_file(p, &rows, &cut, &n_old));
  CU_ASSERT(cut);
  CU_ASSERT(rows > 10 && rows < 1000);
}

static bool same_bytes(const char *a, const char *b) {
  char err[256];
  size_t na, nb;
  const char *ma = tc_map(a, &na, err, sizeof err), *mb = tc_map(b, &nb, err, sizeof err);
  bool same = ma && mb && na == nb && memcmp(ma, mb, na) == 0;
  if (ma) tc_unmap(ma, na);
  if (mb) tc_unmap(mb, nb);
  return same;
}

static void test_determinism(void) {
  TraceOptions o = options();
  o.clock_hz = 1.37e9;
  CU_ASSERT_FATAL(write_sample(in_tmp("det1.json"), &o));
  CU_ASSERT_FATAL(write_sample(in_tmp("det2.json"), &o));
  CU_ASSERT(same_bytes(in_tmp("det1.json"), in_tmp("det2.json")));
  o.format = TRACE_CSV;
  CU_ASSERT_FATAL(write_sample(in_tmp("det1.csv"), &o));
  CU_ASSERT_FATAL(write_sample(in_tmp("det2.csv"), &o));
  CU_ASSERT(same_bytes(in_tmp("det1.csv"), in_tmp("det2.csv")));
}

static void test_failed_open(void) {
  TraceOptions o = options();
  Diag d;
  memset(&d, 0, sizeof d);
  CU_ASSERT_PTR_NULL(trace_open(in_tmp("no/such/dir/t.json"), &o, &d));
  CU_ASSERT_EQUAL(d.id, D_IN_FILE);
  CU_ASSERT_PTR_NOT_NULL(strstr(d.message, "cannot create the trace file"));
  CU_ASSERT_PTR_NOT_NULL(strstr(d.message, "no/such/dir/t.json"));
  FILE *f = fopen(in_tmp("plain"), "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fclose(f);
  memset(&d, 0, sizeof d);
  CU_ASSERT_PTR_NULL(trace_open(in_tmp("plain/t.json"), &o, &d)); /* a file where a folder should be */
  CU_ASSERT_PTR_NOT_NULL(strstr(d.message, "Not a directory"));
  if (geteuid() != 0) { /* root writes into read-only folders */
    mkdir(in_tmp("ro"), 0500);
    CU_ASSERT_PTR_NULL(trace_open(in_tmp("ro/t.json"), &o, &d));
    CU_ASSERT_EQUAL(access(in_tmp("ro/t.json"), F_OK), -1);
    rmdir(in_tmp("ro"));
  }
  CU_ASSERT_EQUAL(count_tmp_files(), 0);
  unlink(in_tmp("plain"));
}

static void test_rename_and_abort(void) {
  TraceOptions o = options();
  const char *p = in_tmp("late.json");
  Diag d;
  TraceSink *s = trace_open(p, &o, &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  sample_events(s);
  CU_ASSERT_EQUAL(access(p, F_OK), -1); /* nothing at the path before close */
  CU_ASSERT_EQUAL(count_tmp_files(), 1);
  trace_abort(s);
  CU_ASSERT_EQUAL(access(p, F_OK), -1);
  CU_ASSERT_EQUAL(count_tmp_files(), 0);
  s = trace_open(p, &o, &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_FATAL(trace_close(s, &d));
  CU_ASSERT_EQUAL(access(p, R_OK), 0);
  CU_ASSERT_EQUAL(count_tmp_files(), 0);
  trace_event(NULL, &(TraceEvent){0}); /* no sink: nothing happens */
  CU_ASSERT(trace_close(NULL, &d));
  trace_abort(NULL);
}

/* Back-to-back one- and two-cycle slices at clocks whose cycle is not a
 * whole nanosecond stay on one lane and never overlap once Perfetto rounds
 * ts and dur to nanoseconds (the checker verifies that). */
static void test_rounding(void) {
  static const double clocks[] = {1.5e9, 3e9, 0.7e9, 1.37e9, 940e6};
  for (size_t c = 0; c < sizeof clocks / sizeof *clocks; c++) {
    TraceOptions o = options();
    o.clock_hz = clocks[c];
    o.subcores = 1;
    const char *p = in_tmp("round.json");
    Diag d;
    TraceSink *s = trace_open(p, &o, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    uint64_t t = 0;
    for (int i = 0; i < 3000; i++) {
      uint64_t len = 1 + (uint64_t)(i % 2);
      acc(s, t, t + len, 0, "vld", "buf", 0, NULL, NULL, 1);
      t += len;
    }
    CU_ASSERT_FATAL(trace_close(s, &d));
    TcResult r;
    CU_ASSERT_FATAL(check_file(p, &r, NULL, NULL));
    CU_ASSERT_EQUAL(r.x, 3000);
    CU_ASSERT_EQUAL(r.max_tid_lane, 0);
  }
}

static void test_unfinished_dma(void) {
  TraceOptions o = options();
  const char *p = in_tmp("unfinished.json");
  Diag d;
  TraceSink *s = trace_open(p, &o, &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  dma(s, TE_DMA_START, 5, 1, 7, "x", "buf", 64);
  acc(s, 6, 9, 1, "vld", "buf", 0, NULL, NULL, 2);
  CU_ASSERT_FATAL(trace_close(s, &d));
  TcResult r;
  Seen z = {0};
  CU_ASSERT_FATAL(check_file(p, &r, visit, &z));
  CU_ASSERT_EQUAL(r.b, 1);
  CU_ASSERT(z.unfinished);
}

/* Many DMAs, ids reused, half of them waited, then more landed DMAs than
 * are remembered: every "b" has its "e", every "f" its "s". */
static void test_dma_bookkeeping(void) {
  TraceOptions o = options();
  const char *p = in_tmp("dmas.json");
  Diag d;
  TraceSink *s = trace_open(p, &o, &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  for (int i = 0; i < 20000; i++) {
    int id = i % 300, sub = i % 2;
    dma(s, TE_DMA_START, (uint64_t)i * 10, sub, id, "x", "buf", 64);
    dma(s, TE_DMA_END, (uint64_t)i * 10 + 5, sub, id, "x", "buf", 64);
    if (i % 2 == 0) dma(s, TE_DMA_WAIT, (uint64_t)i * 10 + 6, sub, id, "x", "buf", 64);
  }
  uint64_t t = 200000;
  for (int i = 0; i < 5000; i++, t += 10) { /* never waited: the first ones are forgotten */
    dma(s, TE_DMA_START, t, 0, 1000 + i, "x", "buf", 64);
    dma(s, TE_DMA_END, t + 5, 0, 1000 + i, "x", "buf", 64);
  }
  dma(s, TE_DMA_WAIT, t, 0, 1000, "x", "buf", 64);      /* forgotten: no flow */
  dma(s, TE_DMA_WAIT, t + 1, 0, 1000 + 4999, "x", "buf", 64); /* remembered */
  CU_ASSERT_FATAL(trace_close(s, &d));
  TcResult r;
  CU_ASSERT_FATAL(check_file(p, &r, NULL, NULL));
  CU_ASSERT_EQUAL(r.b, 25000);
  CU_ASSERT_EQUAL(r.e, 25000);
  CU_ASSERT_EQUAL(r.s, 10000 + 1); /* a flow is written with its end */
  CU_ASSERT_EQUAL(r.f, 10000 + 1);
  CU_ASSERT_EQUAL(r.x, 25000 + 10000 + 2); /* dma_start and dma_wait slices */
}

/* Writes n access events; reports events per second and bytes per event. */
static void test_throughput(void) {
  TraceOptions o = options();
  o.subcores = 16;
  const char *p = in_tmp("speed.json");
  Diag d;
  enum { N = 200000 };
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  TraceSink *s = trace_open(p, &o, &d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  for (int i = 0; i < N; i++)
    acc(s, (uint64_t)(i / 16) * 8, (uint64_t)(i / 16) * 8 + 6, i % 16, i % 3 ? "vld" : "vst", "buf", (i % 512) * 64,
           i % 3 ? NULL : "[0, 1, 2, 3, 4, 5, 6, 7, ...]", "[8, 9, 10, 11, 12, 13, 14, 15, ...]", 12);
  CU_ASSERT_FATAL(trace_close(s, &d));
  clock_gettime(CLOCK_MONOTONIC, &b);
  double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
  size_t bytes = file_size(p);
  printf("\n  trace throughput: %d events in %.3f s = %.2f M events/s, %.1f bytes/event\n", N, secs, N / secs / 1e6,
         (double)bytes / N);
  TcResult r;
  CU_ASSERT(check_file(p, &r, NULL, NULL));
  CU_ASSERT_EQUAL(r.x, N);
  unlink(p);
}

/* ---- the viewer's sample ------------------------------------------------------------------ */
static int write_viewer_sample(const char *path) {
  TraceOptions o = options();
  o.cores = 2, o.subcores = 4, o.program_name = "viewer sample";
  Diag d;
  TraceSink *s = trace_open(path, &o, &d);
  if (!s) return fprintf(stderr, "%s\n", d.message), 1;
  for (int c = 0; c < 2; c++)
    for (int sc = 0; sc < 4; sc++) {
      int tag = (c * 4 + sc) * 10;
      for (int k = 0; k < 3; k++) {
        TraceEvent e = ev(TE_DMA_START, (uint64_t)(10 + 40 * k + 5 * sc), 0, sc);
        e.core = c, e.dma = tag + k, e.op = "dma", e.bytes = 2048;
        e.src_space = "hbm", e.src_ref = "x", e.dst_space = "vmem", e.dst_ref = "buf";
        trace_event(s, &e);
      }
      for (int i = 0; i < 60; i++) {
        TraceEvent e = ev(TE_ACCESS, (uint64_t)(20 + i * 4 + sc), (uint64_t)(23 + i * 4 + sc), sc);
        e.core = c, e.op = i % 2 ? "vst" : "vld", e.space = i % 5 ? "vmem" : "vmem_shared", e.ref = i % 5 ? "buf" : "acc";
        e.offset = ((i * 7 + sc * 13) % 64) * 64, e.bytes = 64, e.new_text = "[1, 2, 3]", e.old_text = i % 2 ? "[0]" : NULL;
        e.line = 10 + i % 4;
        trace_event(s, &e);
      }
      for (int k = 0; k < 3; k++) {
        TraceEvent e = ev(TE_DMA_END, (uint64_t)(90 + 50 * k + 7 * sc), 0, sc);
        e.core = c, e.dma = tag + k;
        trace_event(s, &e);
        TraceEvent w = ev(TE_DMA_WAIT, (uint64_t)(280 + k + sc), 0, sc);
        w.core = c, w.dma = tag + k, w.op = "wait";
        trace_event(s, &w);
        TraceEvent m = ev(TE_SEMAPHORE, (uint64_t)(90 + 50 * k + 7 * sc), 0, sc);
        m.core = c, m.ref = "sem", m.value = 2048 * (k + 1);
        trace_event(s, &m);
      }
      TraceEvent b = ev(TE_BARRIER, (uint64_t)(300 + sc * 3), 320, sc);
      b.core = c;
      trace_event(s, &b);
    }
  if (!trace_close(s, &d)) return fprintf(stderr, "%s\n", d.message), 1;
  return 0;
}

static int clean_tmpdir(void) {
  DIR *d = opendir(tmpdir);
  for (struct dirent *e; d && (e = readdir(d));)
    if (e->d_name[0] != '.') unlink(in_tmp(e->d_name));
  if (d) closedir(d);
  return rmdir(tmpdir);
}

/* The whole file at path, NUL-terminated (the caller frees it), or NULL. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *b = calloc(1, 1 << 16);
  size_t n = b ? fread(b, 1, (1 << 16) - 1, f) : 0;
  b[n] = '\0';
  fclose(f);
  return b;
}

/* An access with spans NULL (one run), none (every lane masked) and two. */
static void span_events(TraceSink *s) {
  static const int64_t two[] = {8, 4, 64, 12};
  TraceEvent e = ev(TE_ACCESS, 0, 1, 0);
  e.op = "vld", e.space = "vmem", e.ref = "buf", e.offset = 64, e.bytes = 64, e.line = 3, e.col = 5;
  trace_event(s, &e);
  e.t0 = 1, e.t1 = 2, e.spans = two, e.nspans = 0, e.offset = 0;
  trace_event(s, &e);
  e.t0 = 2, e.t1 = 3, e.nspans = 2, e.offset = 8;
  trace_event(s, &e);
}

static void test_spans(void) {
  static const struct { TraceFormat f; const char *name, *want[3]; } cases[] = {
      {TRACE_CHROME_JSON, "spans.json", {"\"offset\":64,\"bytes\":64,", "\"spans\":null}}", "\"spans\":[]}}"}},
      {TRACE_CHROME_JSON, "spans2.json", {"\"offset\":8,", "\"spans\":[[8,4],[64,12]]}}", "\"end_cycle\":3,\"spans\""}},
      {TRACE_CSV, "spans.csv", {",line,col,spans\n", "0,0,0,vld,vmem,buf,64,64,,,1,3,5,\n", "2,0,0,vld,vmem,buf,8,64,,,3,3,5,8:4 64:12\n"}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    TraceOptions o = options();
    o.format = cases[i].f;
    Diag d;
    TraceSink *s = trace_open(in_tmp(cases[i].name), &o, &d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    span_events(s);
    CU_ASSERT_FATAL(trace_close(s, &d));
    char *text = slurp(in_tmp(cases[i].name));
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    for (int k = 0; k < 3; k++)
      if (!strstr(text, cases[i].want[k])) CU_FAIL(cases[i].want[k]);
    free(text);
  }
}

static void buf_put(void *ctx, const char *p, size_t n) { strncat(ctx, p, n); }

static void test_json_text(void) {
  static const struct { const char *in; size_t max; const char *want; } strs[] = {
      {"we\"ird.yaml", SIZE_MAX, "\"we\\\"ird.yaml\""},
      {"a\\b", SIZE_MAX, "\"a\\\\b\""},
      {"\t\n\r\b\f\x01\x1f\x7f", SIZE_MAX, "\"\\t\\n\\r\\b\\f\\u0001\\u001f\\u007f\""},
      {"\xc3\xa9 \xff \xed\xa0\x80", SIZE_MAX, "\"\xc3\xa9 \\ufffd \\ufffd\\ufffd\\ufffd\""},
      {"abcdef", 3, "\"abc...\""},
      {NULL, SIZE_MAX, "\"\""},
  };
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
    char out[128] = "";
    json_put_str(buf_put, out, strs[i].in, strs[i].max);
    CU_ASSERT_STRING_EQUAL(out, strs[i].want);
  }
  static const struct { const char *text; bool number; } nums[] = {
      {"0", true}, {"-12", true}, {"1.5", true}, {"1e+10", true}, {"2.5E-3", true}, {"-0.0", true},
      {"nan", false}, {"inf", false}, {"-inf", false}, {"01", false}, {".5", false}, {"1.", false}, {"1e", false}, {"", false},
  };
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) CU_ASSERT_EQUAL(json_is_number(nums[i].text), nums[i].number);
}

static mode_t mode_of(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? st.st_mode & 0777 : 0;
}

/* A finished file gets 0666 less the umask (mkstemp's own mode is 0600);
 * an aborted one leaves nothing, not even its temporary. */
static void test_outfile(void) {
  static const struct { mode_t umask, want; } cases[] = {{022, 0644}, {077, 0600}, {002, 0664}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    mode_t old = umask(cases[i].umask);
    int err = 0;
    const char *p = in_tmp("out.txt");
    unlink(p);
    CU_ASSERT_FATAL(outfile_write(p, "hello\n", 6, &err));
    CU_ASSERT_EQUAL(mode_of(p), cases[i].want);
    CU_ASSERT_EQUAL(file_size(p), 6);
    umask(old);
  }
  int err = 0;
  OutFile *o = outfile_open(in_tmp("dropped.txt"), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(o);
  fputs("half", outfile_stream(o));
  outfile_abort(o);
  CU_ASSERT_EQUAL(access(in_tmp("dropped.txt"), F_OK), -1);
  CU_ASSERT_PTR_NULL(outfile_open(in_tmp("no/such/dir/x"), &err));
  CU_ASSERT_EQUAL(err, ENOENT);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--sample") == 0) return write_viewer_sample(argv[2]);
  snprintf(tmpdir, sizeof tmpdir, "/tmp/test_trace.XXXXXX");
  if (!mkdtemp(tmpdir)) return perror("mkdtemp"), 1;
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_pSuite s = CU_add_suite("traces", NULL, NULL);
  CU_add_test(s, "chrome json structure", test_structure);
  CU_add_test(s, "scalar subcore names", test_scalar_names);
  CU_add_test(s, "window and carried counters", test_window);
  CU_add_test(s, "window: flows with both ends only", test_window_flows);
  CU_add_test(s, "chip counters name no thread", test_chip_counter);
  CU_add_test(s, "filters", test_filters);
  CU_add_test(s, "size bound", test_size_bound);
  CU_add_test(s, "csv", test_csv);
  CU_add_test(s, "determinism", test_determinism);
  CU_add_test(s, "failed open leaves no file", test_failed_open);
  CU_add_test(s, "rename on close, abort", test_rename_and_abort);
  CU_add_test(s, "nanosecond rounding", test_rounding);
  CU_add_test(s, "unfinished dma", test_unfinished_dma);
  CU_add_test(s, "dma bookkeeping", test_dma_bookkeeping);
  CU_add_test(s, "throughput", test_throughput);
  CU_add_test(s, "access spans, json and csv", test_spans);
  CU_add_test(s, "json strings and numbers", test_json_text);
  CU_add_test(s, "outfile modes and abort", test_outfile);
  CU_basic_set_mode(CU_BRM_NORMAL);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures();
  CU_cleanup_registry();
  clean_tmpdir();
  return failed ? 1 : 0;
}
