/* traces/viewer_sdl.c -- sc-sim-view, a viewer of the Chrome JSON traces
 * sc-sim writes (one event per line; see docs/traces.md).
 *
 *   sc-sim-view trace.json [--stats stats.json] [--screenshot FILE.bmp] [--width W --height H]
 *
 * The window shows, over one time axis: a timeline row per subcore and per
 * DMA engine (bars for slices and for DMAs, overlapping ones stacked), the
 * counters as step plots, and a heat map per memory space (address against
 * time; reads blue, writes orange, both purple), each ref a band of its
 * space.  With --stats (the same run's --stats file) the profile is drawn
 * beside the timeline: one row per program line, most cycles first, a bar
 * split by cause (issuing, load latency, DMA, semaphore, barrier); the
 * pointer on a row or on an event highlights that line in both.  Mouse wheel or +/- zoom around the pointer, drag or arrows pan,
 * up/down scroll the rows, 0 resets, q quits; the line at the bottom
 * describes the event under the pointer.  --screenshot renders one frame
 * with SDL's dummy video driver into a BMP and exits.
 *
 * A program of its own, built only by `make viewer` (mk/traces.mk): the
 * core never includes SDL.  Text uses the 5x7 font below (upper case). */
#define SDL_MAIN_HANDLED
#include <SDL.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- font: 5x7 glyphs, '#' = ink ---------------------------------------------------------- */
static const struct {
  char c;
  const char *rows; /* 7 rows of 5 */
} GLYPHS[] = {
    {'A', ".###.#...##...#######...##...##...#"}, {'B', "####.#...##...#####.#...##...#####."},
    {'C', ".###.#...##....#....#....#...#.###."}, {'D', "####.#...##...##...##...##...#####."},
    {'E', "######....#....####.#....#....#####"}, {'F', "######....#....####.#....#....#...."},
    {'G', ".###.#...##....#.####...##...#.####"}, {'H', "#...##...##...#######...##...##...#"},
    {'I', ".###...#....#....#....#....#...###."}, {'J', "..###...#....#....#....##..#..##.."},
    {'K', "#...##..#.#.#..##...#.#..#..#.#...#"}, {'L', "#....#....#....#....#....#....#####"},
    {'M', "#...###.###.#.##.#.##...##...##...#"}, {'N', "#...##...###..##.#.##..###...##...#"},
    {'O', ".###.#...##...##...##...##...#.###."}, {'P', "####.#...##...#####.#....#....#...."},
    {'Q', ".###.#...##...##...##.#.##..#..##.#"}, {'R', "####.#...##...#####.#.#..#..#.#...#"},
    {'S', ".#####....#.....###.....#....#####."}, {'T', "#####..#....#....#....#....#....#.."},
    {'U', "#...##...##...##...##...##...#.###."}, {'V', "#...##...##...##...##...#.#.#...#.."},
    {'W', "#...##...##...##.#.##.#.##.#.#.#.#."}, {'X', "#...##...#.#.#...#...#.#.#...##...#"},
    {'Y', "#...##...#.#.#...#....#....#....#.."}, {'Z', "#####....#...#...#...#...#....#####"},
    {'0', ".###.#...##..###.#.###..##...#.###."}, {'1', "..#...##....#....#....#....#...###."},
    {'2', ".###.#...#....#...#...#...#...#####"}, {'3', "#####...#...#.....#....##...#.###."},
    {'4', "...#...##..#.#.#..#.#####...#....#."}, {'5', "######....####.....#....##...#.###."},
    {'6', "..##..#...#....####.#...##...#.###."}, {'7', "#####....#...#...#...#....#....#..."},
    {'8', ".###.#...##...#.###.#...##...#.###."}, {'9', ".###.#...##...#.####....#...#..##.."},
    {' ', "..................................."}, {'!', "..#....#....#....#....#.........#.."},
    {'"', ".#.#..#.#.........................."}, {'#', ".#.#..#.#.#####.#.#.#####.#.#..#.#."},
    {'%', "##..###..#...#...#...#...#..###..##"}, {'&', ".##..#..#.#.#...#...#.#.##..#..##.#"},
    {'\'', "..#....#..........................."}, {'(', "...#...#...#....#....#.....#.....#."},
    {')', ".#.....#.....#....#....#...#...#..."}, {'*', ".......#..#.#.#.###.#.#.#..#......."},
    {'+', ".......#....#..#####..#....#......."}, {',', "....................##....#...#...."},
    {'-', "...............#####..............."}, {'.', ".........................##...##..."},
    {'/', "..........#...#...#...#...#........"}, {':', ".....##...##.......##...##........"},
    {';', ".....##...##.......##....#...#....."}, {'<', "...#...#...#...#.....#.....#.....#."},
    {'=', "..........#####.....#####.........."}, {'>', ".#.....#.....#.....#...#...#...#..."},
    {'?', ".###.#...#....#...#...#.........#.."}, {'@', ".###.#...#....#.##.##.#.##.#.#.###."},
    {'[', ".###..#....#....#....#....#....###."}, {'\\', ".....#.....#.....#.....#.....#....."},
    {']', ".###....#....#....#....#....#..###."}, {'^', "..#...#.#.#...#...................."},
    {'_', "..............................#####"}, {'|', "..#....#....#....#....#....#....#.."},
    {'~', "...........#...#.#.#...#..........."}, {'{', "...#...#....#...#......#....#.....#"},
    {'}', ".#.....#....#.....#...#....#...#..."}, {'$', "..#...#####.#...###...#.#####...#.."},
    {'`', ".#.....#..........................."},
};

static unsigned char font[128][7]; /* rows, bit 4 = leftmost column */
static bool defined[128];

static void font_init(void) {
  for (size_t g = 0; g < sizeof GLYPHS / sizeof *GLYPHS; g++)
    for (int r = 0; r < 7; r++) {
      unsigned char bits = 0;
      for (int c = 0; c < 5; c++) bits = (unsigned char)(bits << 1 | (GLYPHS[g].rows[r * 5 + c] == '#'));
      font[(unsigned char)GLYPHS[g].c][r] = bits;
      defined[(unsigned char)GLYPHS[g].c] = true;
    }
}

#define CW 6 /* character cell */
#define CH 9

/* Draws s at (x, y) in the current colour, at most maxw pixels wide;
 * returns the width drawn. */
static int text(SDL_Renderer *R, int x, int y, const char *s, int maxw) {
  SDL_Point pts[35 * 64];
  int n = 0, w = 0;
  for (; *s && w + CW <= maxw; s++, w += CW) {
    unsigned char c = (unsigned char)*s;
    if (c >= 0x80) {
      while ((s[1] & 0xc0) == 0x80) s++; /* one glyph per UTF-8 character */
      c = '?';
    }
    if (c >= 'a' && c <= 'z') c = (unsigned char)(c - 32);
    if (c >= 128 || !defined[c]) c = '?';
    for (int r = 0; r < 7; r++)
      for (int b = 0; b < 5; b++)
        if (font[c][r] >> (4 - b) & 1) pts[n++] = (SDL_Point){x + w + b, y + r};
    if (n > 35 * 63) SDL_RenderDrawPoints(R, pts, n), n = 0;
  }
  if (n) SDL_RenderDrawPoints(R, pts, n);
  return w;
}

/* ---- a small JSON reader for one event per line ------------------------------------------------ */
typedef struct JV JV;
struct JV {
  char type; /* 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null */
  char *key, *s;
  double n;
  JV *kids, *next;
};

typedef struct {
  const char *p;
  bool bad;
  JV *pool;
  size_t used, cap;
} JP;

static JV *jp_node(JP *j) {
  if (j->used == j->cap) {
    j->bad = true;
    return NULL;
  }
  JV *v = &j->pool[j->used++];
  memset(v, 0, sizeof *v);
  return v;
}

static void jp_ws(JP *j) {
  while (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n') j->p++;
}

static void utf8_put(char **o, unsigned cp) {
  char *p = *o;
  if (cp < 0x80) *p++ = (char)cp;
  else if (cp < 0x800) *p++ = (char)(0xc0 | cp >> 6), *p++ = (char)(0x80 | (cp & 63));
  else *p++ = (char)(0xe0 | cp >> 12), *p++ = (char)(0x80 | (cp >> 6 & 63)), *p++ = (char)(0x80 | (cp & 63));
  *o = p;
}

/* Decodes the string at j->p in place of a fresh copy (escapes shrink). */
static char *jp_string(JP *j) {
  const char *p = ++j->p;
  size_t n = 0;
  while (p[n] && p[n] != '"') n += p[n] == '\\' && p[n + 1] ? 2 : 1;
  char *out = malloc(n + 1), *o = out;
  if (!out) abort();
  while (*p && *p != '"') {
    if (*p != '\\') {
      *o++ = *p++;
      continue;
    }
    char e = p[1];
    p += 2;
    if (e == 'u') {
      unsigned cp = (unsigned)strtoul((char[5]){p[0], p[1], p[2], p[3], 0}, NULL, 16);
      p += 4;
      utf8_put(&o, cp >= 0xd800 && cp < 0xe000 ? 0xfffd : cp);
    } else {
      *o++ = e == 'n' ? '\n' : e == 't' ? ' ' : e == 'r' ? ' ' : e == 'b' || e == 'f' ? ' ' : e;
    }
  }
  *o = '\0';
  if (*p != '"') j->bad = true;
  j->p = *p ? p + 1 : p;
  return out;
}

static JV *jp_value(JP *j);

static JV *jp_members(JP *j, JV *v, char close) {
  JV **tail = &v->kids;
  j->p++;
  jp_ws(j);
  if (*j->p == close) return j->p++, v;
  while (!j->bad) {
    jp_ws(j);
    char *key = NULL;
    if (close == '}') {
      if (*j->p != '"') break;
      key = jp_string(j);
      jp_ws(j);
      if (*j->p++ != ':') {
        free(key);
        break;
      }
    }
    JV *k = jp_value(j);
    if (!k) {
      free(key);
      break;
    }
    k->key = key;
    *tail = k, tail = &k->next;
    jp_ws(j);
    if (*j->p == ',') {
      j->p++;
      continue;
    }
    if (*j->p == close) return j->p++, v;
    break;
  }
  j->bad = true;
  return v;
}

static JV *jp_value(JP *j) {
  jp_ws(j);
  JV *v = jp_node(j);
  if (!v) return NULL;
  char c = *j->p;
  if (c == '{' || c == '[') return v->type = c == '{' ? 'o' : 'a', jp_members(j, v, c == '{' ? '}' : ']');
  if (c == '"') return v->type = 's', v->s = jp_string(j), v;
  if (c == 't' || c == 'f' || c == 'n') {
    v->type = c == 'n' ? 'z' : 'b', v->n = c == 't';
    j->p += c == 'f' ? 5 : 4;
    return v;
  }
  char *end;
  v->type = 'n', v->n = strtod(j->p, &end);
  if (end == j->p) j->bad = true;
  j->p = end;
  return v;
}

static void jp_free(JP *j) {
  for (size_t i = 0; i < j->used; i++) free(j->pool[i].key), free(j->pool[i].s);
  j->used = 0;
}

static const JV *jget(const JV *v, const char *path) {
  while (v && *path) {
    const char *dot = strchr(path, '.');
    size_t len = dot ? (size_t)(dot - path) : strlen(path);
    const JV *k = v->type == 'o' ? v->kids : NULL;
    while (k && !(strlen(k->key) == len && memcmp(k->key, path, len) == 0)) k = k->next;
    v = k;
    path += len + (dot != NULL);
  }
  return v;
}

static const char *jstr(const JV *v, const char *path) {
  const JV *k = jget(v, path);
  return k && k->type == 's' ? k->s : NULL;
}

static double jnum(const JV *v, const char *path, double dflt) {
  const JV *k = jget(v, path);
  return k && k->type == 'n' ? k->n : dflt;
}

/* ---- the model ------------------------------------------------------------------------------------ */
enum { B_SLICE, B_DMA, B_MARK };

typedef struct {
  double t0, t1; /* microseconds */
  int track, row, kind;
  Uint32 color;
  char *label, *info;
  int line; /* the program line (0: none) */
} Bar;

typedef struct {
  int pid, tid; /* tid: the base thread (lanes fold into rows) */
  char name[48];
  int sort, rows;
  int *bars; /* indexes into M.bars, by t0 */
  int nbars, capbars;
} Track;

typedef struct {
  int pid;
  char name[96];
  double *t, *v;
  int n, cap;
  double vmax;
} Counter;

typedef struct {
  char name[48];
  int64_t extent; /* bytes: the largest offset + bytes seen */
} Band;

typedef struct {
  char name[32];
  Band bands[32];
  int nbands;
  int64_t total;
  int *acc; /* indexes into M.acc, by t0 */
  int nacc, capacc;
} Space;

typedef struct {
  double t0, t1;
  int space, band, bar;
  int64_t off, bytes;
  unsigned char rw; /* 1 read, 2 write, 3 both */
} Acc;

typedef struct {
  int pid;
  char name[48];
  int sort;
} Proc;

typedef struct {
  Bar *bars;
  int nbars, capbars;
  Track tracks[512];
  int ntracks;
  Proc procs[64];
  int nprocs;
  Counter counters[128];
  int ncounters;
  Space spaces[8];
  int nspaces;
  Acc *acc;
  int nacc, capacc;
  double tmin, tmax, hz;
  struct {
    int pid, tid;
    double id, t0;
    char *args;
    int line;
  } open[256];
  int nopen;
} Model;

static Model M;

/* The profile of --stats: rows as the file lists them (most cycles first). */
enum { PC_ISSUE, PC_LOAD, PC_DMA, PC_SEM, PC_BARRIER, PC_COUNT };
static const char *const PC_NAME[PC_COUNT] = {"ISSUE", "LOAD", "DMA", "SEM", "BARRIER"};
static const char *const PC_KEY[PC_COUNT] = {"issue_cycles", "stall_load_cycles", "stall_dma_cycles",
                                             "stall_semaphore_cycles", "stall_barrier_cycles"};
static const Uint32 PC_COLOR[PC_COUNT] = {0x4e79a7, 0xb07aa1, 0xc8463c, 0xf28e2b, 0x78787f};

typedef struct {
  int line;
  char op[40];
  double cycles, instrs, bytes, part[PC_COUNT];
} ProfRow;

static struct {
  ProfRow *rows;
  int n;
  double total, max;
  char bound[200];
} P;

#define GROW(arr, n, cap)                                                 \
  do {                                                                    \
    if ((n) == (cap)) {                                                   \
      (cap) = (cap) ? (cap) * 2 : 256;                                    \
      void *q_ = realloc((arr), (size_t)(cap) * sizeof *(arr));           \
      if (!q_) abort();                                                   \
      (arr) = q_;                                                         \
    }                                                                     \
  } while (0)

static Proc *proc_get(int pid) {
  for (int i = 0; i < M.nprocs; i++)
    if (M.procs[i].pid == pid) return &M.procs[i];
  if (M.nprocs == 64) return &M.procs[63];
  Proc *p = &M.procs[M.nprocs++];
  *p = (Proc){.pid = pid, .sort = pid};
  snprintf(p->name, sizeof p->name, "pid %d", pid);
  return p;
}

static int track_get(int pid, int tid) {
  int base = tid % 10000;
  for (int i = 0; i < M.ntracks; i++)
    if (M.tracks[i].pid == pid && M.tracks[i].tid == base) return i;
  if (M.ntracks == 512) return 511;
  Track *t = &M.tracks[M.ntracks];
  *t = (Track){.pid = pid, .tid = base, .sort = base, .rows = 1};
  snprintf(t->name, sizeof t->name, "tid %d", base);
  proc_get(pid);
  return M.ntracks++;
}

static Uint32 rgb(int r, int g, int b) { return (Uint32)(r << 16 | g << 8 | b); }

static Uint32 color_of(const char *name, const char *cat) {
  if (cat && !strcmp(cat, "sync")) return !strcmp(name, "barrier") ? rgb(120, 120, 130) : rgb(200, 70, 60);
  if (cat && !strcmp(cat, "dma")) return rgb(60, 170, 160);
  static const Uint32 pal[] = {0x4e79a7, 0x59a14f, 0xedc948, 0xb07aa1, 0x76b7b2, 0xff9da7, 0x9c755f, 0xf28e2b};
  unsigned h = 5381;
  for (const char *p = name; *p; p++) h = h * 33 + (unsigned char)*p;
  return pal[h % 8];
}

static unsigned char rw_of(const char *op, bool has_old) {
  unsigned char rw = 0;
  if (strstr(op, "load") || strstr(op, "ld") || strstr(op, "gather") || strstr(op, "add")) rw |= 1;
  if (strstr(op, "store") || strstr(op, "st") || strstr(op, "scatter") || strstr(op, "swap") || strstr(op, "add")) rw |= 2;
  return rw ? rw : has_old ? 2 : 1;
}

static int add_bar(int track, double t0, double t1, int kind, Uint32 color, const char *label, char *info) {
  GROW(M.bars, M.nbars, M.capbars);
  Bar *b = &M.bars[M.nbars];
  *b = (Bar){t0, t1 < t0 ? t0 : t1, track, 0, kind, color, strdup(label), info, 0};
  if (t0 < M.tmin) M.tmin = t0;
  if (b->t1 > M.tmax) M.tmax = b->t1;
  return M.nbars++;
}

/* "12-16 cyc" from the exact cycles in args, else microseconds. */
static void when(const JV *e, double t0, double t1, char *out, size_t n) {
  const JV *c = jget(e, "args.cycle"), *d = jget(e, "args.end_cycle");
  if (c && d) snprintf(out, n, "cycles %.0f-%.0f", c->n, d->n);
  else if (c) snprintf(out, n, "cycle %.0f", c->n);
  else snprintf(out, n, "%.6f-%.6f us", t0, t1);
}

static char *fmt_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_info(const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (char *p = buf; *p; p++)
    if (*p == '\n') *p = ' ';
  char *s = strdup(buf);
  if (!s) abort();
  return s;
}

static int space_get(const char *name) {
  for (int i = 0; i < M.nspaces; i++)
    if (!strcmp(M.spaces[i].name, name)) return i;
  if (M.nspaces == 8) return 7;
  snprintf(M.spaces[M.nspaces].name, sizeof M.spaces[0].name, "%s", name);
  return M.nspaces++;
}

static int band_get(Space *s, const char *ref) {
  for (int i = 0; i < s->nbands; i++)
    if (!strcmp(s->bands[i].name, ref)) return i;
  if (s->nbands == 32) return 31;
  snprintf(s->bands[s->nbands].name, sizeof s->bands[0].name, "%s", ref);
  return s->nbands++;
}

/* One heat-map cell: bytes [off, off + bytes) of band bi, over [t0, t1). */
static void add_acc(double t0, double t1, int si, int bi, int bar, int64_t off, int64_t bytes, unsigned char rw) {
  Space *s = &M.spaces[si];
  if (off + bytes > s->bands[bi].extent) s->bands[bi].extent = off + bytes;
  GROW(M.acc, M.nacc, M.capacc);
  M.acc[M.nacc++] = (Acc){t0, t1, si, bi, bar, off, bytes > 0 ? bytes : 1, rw};
}

static void on_slice(const JV *e, int track, double ts, double dur, const char *name, const char *cat) {
  char w[64], rest[600] = "";
  when(e, ts, ts + dur, w, sizeof w);
  const char *space = jstr(e, "args.space"), *ref = jstr(e, "args.ref"), *old = jstr(e, "args.old"), *nw = jstr(e, "args.new");
  if (space && ref)
    snprintf(rest, sizeof rest, " %s %s +%.0f %.0fB%s%.200s%s%.200s", space, ref, jnum(e, "args.offset", 0),
             jnum(e, "args.bytes", 0), old ? " old=" : "", old ? old : "", nw ? " new=" : "", nw ? nw : "");
  else if (jstr(e, "args.op"))
    snprintf(rest, sizeof rest, " (%s)", jstr(e, "args.op"));
  int bar = add_bar(track, ts, ts + dur, !strcmp(name, "dma_start") || !strcmp(name, "dma_wait") ? B_MARK : B_SLICE,
                    color_of(name, cat), name,
                    fmt_info("%s %s%s %s line %.0f", M.tracks[track].name, name, rest, w, jnum(e, "args.line", 0)));
  M.bars[bar].line = (int)jnum(e, "args.line", 0);
  if (!space || !ref || !cat || strcmp(cat, "access")) return;
  int si = space_get(space);
  Space *s = &M.spaces[si];
  int bi = band_get(s, ref);
  const JV *spans = jget(e, "args.spans"); /* a gather or scatter: the bytes it touched */
  if (!spans || spans->type != 'a') {
    add_acc(ts, ts + dur, si, bi, bar, (int64_t)jnum(e, "args.offset", 0), (int64_t)jnum(e, "args.bytes", 1), rw_of(name, old != NULL));
    return;
  }
  for (const JV *k = spans->kids; k; k = k->next)
    if (k->type == 'a' && k->kids && k->kids->next)
      add_acc(ts, ts + dur, si, bi, bar, (int64_t)k->kids->n, (int64_t)k->kids->next->n, rw_of(name, old != NULL));
}

static void on_dma(const JV *e, char ph, int pid, int tid, double ts, const char *name) {
  double id = jnum(e, "id", -1);
  if (ph == 'b') {
    if (M.nopen == 256) return;
    char w[64];
    when(e, ts, ts, w, sizeof w);
    M.open[M.nopen].pid = pid, M.open[M.nopen].tid = tid, M.open[M.nopen].id = id, M.open[M.nopen].t0 = ts;
    M.open[M.nopen].line = (int)jnum(e, "args.line", 0);
    M.open[M.nopen++].args = fmt_info(
        "%s dma %.0f: %s %s -> %s %s %.0fB %s line %.0f (%s)", name, jnum(e, "args.dma", -1), jstr(e, "args.src_space") ? jstr(e, "args.src_space") : "?",
        jstr(e, "args.src_ref") ? jstr(e, "args.src_ref") : "?", jstr(e, "args.dst_space") ? jstr(e, "args.dst_space") : "?",
        jstr(e, "args.dst_ref") ? jstr(e, "args.dst_ref") : "?", jnum(e, "args.bytes", 0), w, jnum(e, "args.line", 0),
        jstr(e, "args.state") ? jstr(e, "args.state") : "");
    return;
  }
  for (int i = 0; i < M.nopen; i++)
    if (M.open[i].pid == pid && M.open[i].id == id) {
      int b = add_bar(track_get(pid, M.open[i].tid), M.open[i].t0, ts, B_DMA, color_of("dma", "dma"), "dma", M.open[i].args);
      M.bars[b].line = M.open[i].line;
      M.open[i] = M.open[--M.nopen];
      return;
    }
}

static void on_counter(const JV *e, int pid, double ts, const char *name) {
  const JV *a = jget(e, "args");
  if (!a || !a->kids || a->kids->type != 'n') return;
  int i = 0;
  while (i < M.ncounters && !(M.counters[i].pid == pid && !strcmp(M.counters[i].name, name))) i++;
  if (i == 128) return;
  Counter *c = &M.counters[i];
  if (i == M.ncounters) {
    M.ncounters++;
    *c = (Counter){.pid = pid};
    snprintf(c->name, sizeof c->name, "%s", name);
  }
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 64;
    c->t = realloc(c->t, (size_t)c->cap * sizeof *c->t);
    c->v = realloc(c->v, (size_t)c->cap * sizeof *c->v);
    if (!c->t || !c->v) abort();
  }
  c->t[c->n] = ts, c->v[c->n++] = a->kids->n;
  if (a->kids->n > c->vmax) c->vmax = a->kids->n;
  if (ts < M.tmin) M.tmin = ts;
  if (ts > M.tmax) M.tmax = ts;
}

static void on_meta(const JV *e, int pid, int tid, const char *name) {
  const char *v = jstr(e, "args.name");
  double sort = jnum(e, "args.sort_index", 0);
  if (!strcmp(name, "process_name") && v) snprintf(proc_get(pid)->name, sizeof M.procs[0].name, "%s", v);
  else if (!strcmp(name, "process_sort_index")) proc_get(pid)->sort = (int)sort;
  else if (!strcmp(name, "thread_name") && v && tid < 10000) snprintf(M.tracks[track_get(pid, tid)].name, sizeof M.tracks[0].name, "%s", v);
  else if (!strcmp(name, "thread_sort_index") && tid < 10000) M.tracks[track_get(pid, tid)].sort = (int)sort;
  else if (!strcmp(name, "process_labels") && jstr(e, "args.labels")) {
    const char *hz = strstr(jstr(e, "args.labels"), "clock ");
    if (hz) M.hz = atof(hz + 6);
  }
}

static void on_event(const JV *e) {
  const char *ph = jstr(e, "ph"), *name = jstr(e, "name"), *cat = jstr(e, "cat");
  if (!ph || !name) return;
  int pid = (int)jnum(e, "pid", 0), tid = (int)jnum(e, "tid", 0);
  double ts = jnum(e, "ts", 0), dur = jnum(e, "dur", 0);
  switch (*ph) {
  case 'M': on_meta(e, pid, tid, name); break;
  case 'X': on_slice(e, track_get(pid, tid), ts, dur, name, cat); break;
  case 'b':
  case 'e': on_dma(e, *ph, pid, tid, ts, name); break;
  case 'C': on_counter(e, pid, ts, name); break;
  case 'i':
    if (!strcmp(name, "run stopped"))
      add_bar(track_get(pid, tid), ts, ts, B_MARK, rgb(255, 80, 80), name,
              fmt_info("run stopped at cycle %.0f: fault %s: %s (line %.0f)", jnum(e, "args.cycle", 0),
                       jstr(e, "args.fault") ? jstr(e, "args.fault") : "?", jstr(e, "args.message") ? jstr(e, "args.message") : "",
                       jnum(e, "args.line", 0)));
    break;
  default: break;
  }
}

static bool load(const char *path, char *err, size_t errcap) {
  FILE *f = fopen(path, "r");
  if (!f) return snprintf(err, errcap, "cannot open %s", path), false;
  M.tmin = INFINITY, M.tmax = -INFINITY;
  JP j = {.cap = 1 << 16}; /* nodes of one line: a gather lists up to thousands of spans */
  j.pool = malloc(j.cap * sizeof *j.pool);
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int lineno = 0, bad = 0;
  while ((n = getline(&line, &cap, f)) > 0) {
    lineno++;
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ',' || line[n - 1] == ' ')) line[--n] = '\0';
    if (strncmp(line, "{\"ts\"", 5) && strncmp(line, "{\"name\"", 7) && strncmp(line, "{\"ph\"", 5)) continue;
    j.p = line, j.bad = false;
    JV *v = jp_value(&j);
    if (v && !j.bad) on_event(v);
    else bad++;
    jp_free(&j);
  }
  free(line);
  free(j.pool);
  fclose(f);
  if (bad) fprintf(stderr, "sc-sim-view: %s: %d line(s) could not be read\n", path, bad);
  if (!M.nbars && !M.ncounters) return snprintf(err, errcap, "%s: no events (is it a trace sc-sim wrote?)", path), false;
  if (!(M.hz > 0)) M.hz = 1e9;
  return true;
}

/* The profile section of a --stats file (the whole file is one JSON value). */
static bool load_stats(const char *path, char *err, size_t errcap) {
  FILE *f = fopen(path, "rb");
  if (!f) return snprintf(err, errcap, "cannot open %s", path), false;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n >= 0 && n < (1L << 30) ? malloc((size_t)n + 1) : NULL;
  size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  if (!buf || got != (size_t)n) return free(buf), snprintf(err, errcap, "cannot read %s", path), false;
  buf[n] = '\0';
  JP j = {.p = buf, .cap = (size_t)n / 2 + 1024}; /* a node takes at least two bytes of text */
  j.pool = malloc(j.cap * sizeof *j.pool);
  if (!j.pool) abort();
  JV *doc = jp_value(&j);
  const JV *prof = doc && !j.bad ? jget(doc, "profile") : NULL;
  bool ok = prof && prof->type == 'a';
  if (ok) {
    int cap = 0;
    for (const JV *k = prof->kids; k; k = k->next) cap++;
    P.rows = calloc((size_t)(cap ? cap : 1), sizeof *P.rows);
    if (!P.rows) abort();
    for (const JV *k = prof->kids; k; k = k->next) {
      ProfRow *r = &P.rows[P.n++];
      r->line = (int)jnum(k, "line", 0);
      snprintf(r->op, sizeof r->op, "%s", jstr(k, "op") ? jstr(k, "op") : "?");
      r->cycles = jnum(k, "cycles", 0), r->instrs = jnum(k, "instructions", 0), r->bytes = jnum(k, "bytes", 0);
      for (int c = 0; c < PC_COUNT; c++) r->part[c] = jnum(k, PC_KEY[c], 0);
      P.total += r->cycles;
      if (r->cycles > P.max) P.max = r->cycles;
    }
    snprintf(P.bound, sizeof P.bound, "%s", jstr(doc, "bound.verdict") ? jstr(doc, "bound.verdict") : "");
  } else {
    snprintf(err, errcap, "%s: no profile section (is it a --stats file sc-sim wrote?)", path);
  }
  jp_free(&j);
  free(j.pool);
  free(buf);
  return ok;
}

static int cmp_proc(const void *a, const void *b) {
  const Proc *x = a, *y = b;
  return x->sort != y->sort ? (x->sort > y->sort) - (x->sort < y->sort) : (x->pid > y->pid) - (x->pid < y->pid);
}

static int proc_rank(int pid) {
  for (int i = 0; i < M.nprocs; i++)
    if (M.procs[i].pid == pid) return i;
  return M.nprocs;
}

static int cmp_track(const void *a, const void *b) {
  const Track *x = a, *y = b;
  int px = proc_rank(x->pid), py = proc_rank(y->pid);
  if (px != py) return px - py;
  return x->sort != y->sort ? (x->sort > y->sort) - (x->sort < y->sort) : x->tid - y->tid;
}

static int cmp_bar_t0(const void *a, const void *b) {
  double x = M.bars[*(const int *)a].t0, y = M.bars[*(const int *)b].t0;
  return (x > y) - (x < y);
}

static int cmp_acc_t0(const void *a, const void *b) {
  double x = M.acc[*(const int *)a].t0, y = M.acc[*(const int *)b].t0;
  return (x > y) - (x < y);
}

/* Sorts processes and tracks, gives overlapping bars of a track rows of
 * their own, and indexes bars and accesses by start time. */
static void finish(void) {
  if (M.nprocs > 1) qsort(M.procs, (size_t)M.nprocs, sizeof *M.procs, cmp_proc);
  int old_of[512];
  Track sorted[512];
  memcpy(sorted, M.tracks, sizeof(Track) * (size_t)M.ntracks);
  if (M.ntracks > 1) qsort(sorted, (size_t)M.ntracks, sizeof *sorted, cmp_track);
  for (int i = 0; i < M.ntracks; i++)
    for (int k = 0; k < M.ntracks; k++)
      if (M.tracks[k].pid == sorted[i].pid && M.tracks[k].tid == sorted[i].tid) old_of[k] = i;
  memcpy(M.tracks, sorted, sizeof(Track) * (size_t)M.ntracks);
  for (int i = 0; i < M.nbars; i++) {
    Bar *b = &M.bars[i];
    b->track = old_of[b->track];
    Track *t = &M.tracks[b->track];
    GROW(t->bars, t->nbars, t->capbars);
    t->bars[t->nbars++] = i;
  }
  for (int i = 0; i < M.ntracks; i++) {
    Track *t = &M.tracks[i];
    if (t->nbars > 1) qsort(t->bars, (size_t)t->nbars, sizeof *t->bars, cmp_bar_t0);
    double end[16] = {0};
    for (int k = 0; k < t->nbars; k++) {
      Bar *b = &M.bars[t->bars[k]];
      int r = 0;
      while (r < 15 && r < t->rows && end[r] > b->t0) r++;
      if (r == t->rows && r < 16) t->rows++;
      b->row = r;
      end[r] = b->t1 > b->t0 ? b->t1 : b->t0 + 1e-9;
    }
    if (t->rows > 4) t->rows = 4; /* deeper rows share the last */
    for (int k = 0; k < t->nbars; k++)
      if (M.bars[t->bars[k]].row > 3) M.bars[t->bars[k]].row = 3;
  }
  for (int i = 0; i < M.nacc; i++) {
    Space *s = &M.spaces[M.acc[i].space];
    GROW(s->acc, s->nacc, s->capacc);
    s->acc[s->nacc++] = i;
  }
  for (int i = 0; i < M.nspaces; i++) {
    Space *s = &M.spaces[i];
    if (s->nacc > 1) qsort(s->acc, (size_t)s->nacc, sizeof *s->acc, cmp_acc_t0);
    for (int b = 0; b < s->nbands; b++) s->total += s->bands[b].extent;
  }
  if (!(M.tmax > M.tmin)) M.tmax = M.tmin + 1e-3;
}

/* ---- drawing ------------------------------------------------------------------------------------------ */
typedef struct {
  int W, H;
  double v0, v1; /* the visible time range, microseconds */
  int scroll;    /* first timeline row shown */
  int mx, my;
  char status[1024];
  /* layout of the last frame, for hovering */
  int label_w, plot_x, plot_w;
  int rows_y0, rows_y1, row_h;
  int row_track[1024], row_sub[1024], row_y[1024], nrows;
  int cnt_y[128], cnt_h, cnt_first, ncnt;
  int heat_y0[8], heat_h[8];
  int prof_x, prof_y0, prof_row_h, prof_first, prof_nrows; /* the profile panel (prof_x 0: none) */
  int hl_line;   /* the program line highlighted in the timeline and the profile (0: none) */
} View;

static void color(SDL_Renderer *R, Uint32 c) {
  SDL_SetRenderDrawColor(R, (Uint8)(c >> 16), (Uint8)(c >> 8), (Uint8)c, 255);
}

static void fill(SDL_Renderer *R, int x, int y, int w, int h, Uint32 c) {
  color(R, c);
  SDL_RenderFillRect(R, &(SDL_Rect){x, y, w, h});
}

static double x_to_t(const View *v, int x) { return v->v0 + (v->v1 - v->v0) * (x - v->plot_x) / (double)v->plot_w; }
static double t_to_x(const View *v, double t) { return v->plot_x + (t - v->v0) / (v->v1 - v->v0) * v->plot_w; }

static void draw_ruler(SDL_Renderer *R, View *v, int y) {
  double span = v->v1 - v->v0, step = pow(10, floor(log10(span / 6)));
  if (span / step > 12) step *= 5;
  else if (span / step > 6) step *= 2;
  char buf[64];
  for (double t = ceil(v->v0 / step) * step; t <= v->v1; t += step) {
    int x = (int)t_to_x(v, t);
    if (fabs(t) < step * 1e-6) t = 0; /* no "-0" */
    fill(R, x, y + CH, 1, 4, 0x808080);
    fill(R, x, y + CH + 4, 1, v->H - y - CH - 4 - CH - 4, 0x2a2a2e);
    snprintf(buf, sizeof buf, step >= 1 ? "%.0fus" : step >= 1e-3 ? "%.0fns" : "%.1fns", step >= 1 ? t : t * 1e3);
    color(R, 0xa0a0a0);
    text(R, x + 2, y, buf, 80);
  }
}

static void draw_bar(SDL_Renderer *R, const View *v, const Bar *b, int y, int h) {
  double x0 = t_to_x(v, b->t0), x1 = t_to_x(v, b->t1);
  if (x1 < v->plot_x || x0 > v->plot_x + v->plot_w) return;
  if (x0 < v->plot_x) x0 = v->plot_x;
  if (x1 > v->plot_x + v->plot_w) x1 = v->plot_x + v->plot_w;
  int w = (int)(x1 - x0) < 1 ? 1 : (int)(x1 - x0);
  if (b->kind == B_MARK) {
    fill(R, (int)x0, y, 1, h, 0xf0d050);
    return;
  }
  fill(R, (int)x0, y + 1, w, h - 2, b->color);
  if (v->hl_line && b->line == v->hl_line) { /* the highlighted program line: a white frame */
    color(R, 0xffffff);
    SDL_RenderDrawRect(R, &(SDL_Rect){(int)x0, y, w < 2 ? 2 : w, h});
  }
  if (w > 3 * CW) {
    color(R, 0x101010);
    text(R, (int)x0 + 2, y + (h - 7) / 2, b->label, w - 4);
  }
}

static void draw_rows(SDL_Renderer *R, View *v, int y0, int y1) {
  v->nrows = 0;
  v->rows_y0 = y0;
  int y = y0, row = 0, last_pid = -1;
  for (int i = 0; i < M.ntracks && y + v->row_h <= y1; i++) {
    Track *t = &M.tracks[i];
    for (int r = 0; r < t->rows && y + v->row_h <= y1; r++, row++) {
      if (row < v->scroll) continue;
      if (t->pid != last_pid) { /* a header row names the process */
        last_pid = t->pid;
        fill(R, 0, y, v->W, 1, 0x505058);
        color(R, 0xe0e0a0);
        text(R, 2, y + 3, M.procs[proc_rank(t->pid)].name, v->label_w - 4);
        y += v->row_h;
        if (y + v->row_h > y1) break;
      }
      color(R, 0xc8c8c8);
      if (r == 0) text(R, 2 + 2 * CW, y + 2, t->name, v->label_w - 2 * CW - 4);
      v->row_track[v->nrows] = i, v->row_sub[v->nrows] = r, v->row_y[v->nrows++] = y;
      for (int k = 0; k < t->nbars; k++) {
        Bar *b = &M.bars[t->bars[k]];
        if (b->row == r) draw_bar(R, v, b, y, v->row_h);
      }
      y += v->row_h;
      if (v->nrows == 1024) return;
    }
  }
  v->rows_y1 = y;
}

/* A counter's label names its process: "SC1 VMEM_SHARED" for the bytes in
 * flight through SC1's VMEM_SHARED port, "CHIP HBM"; a semaphore instance
 * ("sem@1.0") names its core already. */
static const char *counter_label(const Counter *c) {
  static char buf[160];
  const char *proc = M.procs[proc_rank(c->pid) < M.nprocs ? proc_rank(c->pid) : 0].name;
  if (!strncmp(c->name, "inflight ", 9)) snprintf(buf, sizeof buf, "%s %s", proc, c->name + 9);
  else snprintf(buf, sizeof buf, "%s", c->name);
  return buf;
}

static void draw_counters(SDL_Renderer *R, View *v, int y0, int n) {
  v->ncnt = 0;
  for (int i = 0; i < n; i++) {
    Counter *c = &M.counters[i];
    int y = y0 + i * v->cnt_h, h = v->cnt_h - 2;
    v->cnt_y[v->ncnt++] = y;
    fill(R, v->plot_x, y + h, v->plot_w, 1, 0x404048);
    color(R, 0xc8c8c8);
    if (h >= 8) text(R, 2, y + (h - 7) / 2, counter_label(c), v->label_w - 4);
    double prev_v = 0, vmax = c->vmax > 0 ? c->vmax : 1;
    int px = v->plot_x;
    for (int k = 0; k <= c->n; k++) {
      double t = k < c->n ? c->t[k] : v->v1;
      int x = (int)t_to_x(v, t);
      if (x < v->plot_x) x = v->plot_x;
      if (x > v->plot_x + v->plot_w) x = v->plot_x + v->plot_w;
      int yy = y + h - (int)(prev_v / vmax * (h - 2));
      if (x > px) fill(R, px, yy, x - px, y + h - yy, 0x3a6a3a);
      if (k < c->n) prev_v = c->v[k];
      px = x;
    }
  }
}

/* The heat map of one space: reads and writes counted per pixel. */
static void draw_heat(SDL_Renderer *R, View *v, const Space *s, int y0, int h) {
  int w = v->plot_w;
  if (h < 4 || w < 4 || s->total <= 0) return;
  uint32_t *rd = calloc((size_t)w * (size_t)h, 4), *wr = calloc((size_t)w * (size_t)h, 4), mx = 1;
  Uint32 *px = malloc((size_t)w * (size_t)h * 4);
  if (!rd || !wr || !px) abort();
  int64_t base[32];
  for (int b = 0, acc = 0; b < s->nbands; acc += (int)s->bands[b].extent, b++) base[b] = acc;
  for (int k = 0; k < s->nacc; k++) {
    const Acc *a = &M.acc[s->acc[k]];
    if (a->t0 > v->v1) break;
    if (a->t1 < v->v0) continue;
    int x0 = (int)(t_to_x(v, a->t0) - v->plot_x), x1 = (int)(t_to_x(v, a->t1) - v->plot_x);
    int64_t lo = base[a->band] + a->off, hi = lo + a->bytes;
    int ya = (int)((double)lo / s->total * h), yb = (int)((double)hi / s->total * h);
    if (x1 <= x0) x1 = x0 + 1;
    if (yb <= ya) yb = ya + 1;
    for (int y = ya < 0 ? 0 : ya; y < yb && y < h; y++)
      for (int x = x0 < 0 ? 0 : x0; x < x1 && x < w; x++) {
        size_t i = (size_t)(h - 1 - y) * (size_t)w + (size_t)x;
        if (a->rw & 1 && ++rd[i] > mx) mx = rd[i];
        if (a->rw & 2 && ++wr[i] > mx) mx = wr[i];
      }
  }
  double lm = log1p(mx);
  for (size_t i = 0; i < (size_t)w * (size_t)h; i++) {
    double r = rd[i] ? 0.25 + 0.75 * log1p(rd[i]) / lm : 0, q = wr[i] ? 0.25 + 0.75 * log1p(wr[i]) / lm : 0;
    int R8 = 24 + (int)(q * 231), G8 = 24 + (int)(r * 110 + q * 120), B8 = 28 + (int)(r * 227);
    px[i] = 0xff000000u | (Uint32)(R8 > 255 ? 255 : R8) << 16 | (Uint32)(G8 > 255 ? 255 : G8) << 8 | (Uint32)(B8 > 255 ? 255 : B8);
  }
  SDL_Texture *tex = SDL_CreateTexture(R, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STATIC, w, h);
  if (tex) {
    SDL_UpdateTexture(tex, NULL, px, w * 4);
    SDL_RenderCopy(R, tex, NULL, &(SDL_Rect){v->plot_x, y0, w, h});
    SDL_DestroyTexture(tex);
  }
  free(rd), free(wr), free(px);
  fill(R, 0, y0, v->W, 1, 0x505058);
  color(R, 0xe0e0a0);
  text(R, 2, y0 + 2, s->name, v->label_w - 4);
  for (int b = 0; b < s->nbands; b++) {
    int yb = y0 + h - (int)((double)(base[b] + s->bands[b].extent) / s->total * h);
    fill(R, v->plot_x, yb, v->plot_w, 1, 0x606068);
    color(R, 0xb0b0b0);
    int ty = yb < y0 + CH + 3 ? y0 + CH + 3 : yb + 2; /* below the space's name */
    if (ty + CH < y0 + h) text(R, 2 + CW, ty, s->bands[b].name, v->label_w - CW - 4);
  }
}

/* The profile beside the timeline, from x0 to the right edge: a header
 * (total, the bound verdict, the causes' colours), then one row per
 * program line: line, cycles, share, operation, and a bar of its cycles
 * (to scale with the costliest line) split by cause. */
static void draw_profile(SDL_Renderer *R, View *v, int x0, int y0, int y1) {
  int w = v->W - x0;
  fill(R, x0, y0, w, y1 - y0, 0x24242a);
  fill(R, x0, y0, 1, y1 - y0, 0x505058);
  char buf[256];
  snprintf(buf, sizeof buf, "PROFILE: %.0f SUBCORE CYCLES BY LINE", P.total);
  color(R, 0xe0e0a0);
  text(R, x0 + 4, y0 + 2, buf, w - 8);
  color(R, 0xc8c8c8);
  text(R, x0 + 4, y0 + 2 + CH, P.bound, w - 8);
  int lx = x0 + 4, ly = y0 + 2 + 2 * CH;
  for (int c = 0; c < PC_COUNT; c++) {
    fill(R, lx, ly + 1, 5, 5, PC_COLOR[c]);
    color(R, 0xb0b0b0);
    lx += 7 + text(R, lx + 7, ly, PC_NAME[c], v->W - lx - 7) + CW;
  }
  color(R, 0x909090);
  text(R, x0 + 4, y0 + 2 + 3 * CH + 2, "LINE   CYCLES      %  OP", w - 8);
  v->prof_x = x0, v->prof_row_h = CH + 6, v->prof_y0 = y0 + 4 * CH + 6;
  int maxw = w - 12, y = v->prof_y0;
  v->prof_nrows = 0;
  for (int i = v->prof_first; i < P.n && y + v->prof_row_h <= y1; i++, y += v->prof_row_h, v->prof_nrows++) {
    const ProfRow *r = &P.rows[i];
    if (v->hl_line && r->line == v->hl_line) fill(R, x0 + 1, y, w - 1, v->prof_row_h, 0x3c3c4c);
    snprintf(buf, sizeof buf, "%4d %8.0f %6.1f  %s", r->line, r->cycles, P.total > 0 ? 100 * r->cycles / P.total : 0, r->op);
    color(R, 0xe0e0e0);
    text(R, x0 + 4, y + 1, buf, w - 8);
    double bx = x0 + 6;
    for (int c = 0; c < PC_COUNT; c++) {
      double bw = P.max > 0 ? r->part[c] / P.max * maxw : 0;
      if (bw >= 0.5) fill(R, (int)bx, y + CH, bw < 1 ? 1 : (int)(bx + bw) - (int)bx, 3, PC_COLOR[c]);
      bx += bw;
    }
  }
}

static void render(SDL_Renderer *R, View *v) {
  fill(R, 0, 0, v->W, v->H, 0x1c1c20);
  v->label_w = 16 * CW; /* "SC0 VMEM_SHARED" */
  int prof_w = P.n ? (v->W * 3 / 10 > 44 * CW ? v->W * 3 / 10 : 44 * CW) : 0;
  if (prof_w > v->W / 2) prof_w = v->W / 2;
  v->prof_x = 0;
  v->plot_x = v->label_w, v->plot_w = v->W - v->label_w - 4 - prof_w;
  v->row_h = 12, v->cnt_h = 22;
  if (v->plot_w < 10) return;
  char title[256];
  snprintf(title, sizeof title, "sc-sim-view  %.6f - %.6f us (%.0f - %.0f cycles)   wheel/+-: zoom  drag/arrows: pan  0: reset  q: quit",
           v->v0, v->v1, v->v0 * M.hz / 1e6, v->v1 * M.hz / 1e6);
  color(R, 0xffffff);
  text(R, 4, 3, title, v->W - 8);
  draw_ruler(R, v, 14);
  int top = 14 + CH + 6, bottom = v->H - CH - 6;
  int avail = bottom - top, heat_total = M.nspaces ? avail / 3 : 0, ncnt = M.ncounters;
  if (ncnt * v->cnt_h > avail / 5) v->cnt_h = ncnt ? avail / 5 / ncnt : 0;
  if (v->cnt_h < 5) v->cnt_h = 5, ncnt = avail / 5 / 5; /* only the first ones fit */
  int cnt_total = ncnt * v->cnt_h, rows_end = bottom - heat_total - cnt_total;
  draw_rows(R, v, top, rows_end);
  draw_counters(R, v, rows_end, ncnt);
  int y = rows_end + cnt_total;
  for (int i = 0; i < M.nspaces; i++) {
    int h = heat_total / M.nspaces;
    v->heat_y0[i] = y + 2, v->heat_h[i] = h - 4;
    draw_heat(R, v, &M.spaces[i], y + 2, h - 4);
    y += h;
  }
  if (prof_w) draw_profile(R, v, v->W - prof_w, 14 + CH + 6, bottom);
  fill(R, 0, v->H - CH - 5, v->W, CH + 5, 0x303036);
  color(R, 0xffffa0);
  text(R, 4, v->H - CH - 2, v->status, v->W - 8);
}

/* ---- hovering ----------------------------------------------------------------------------------------------- */
static bool hover_profile(View *v) {
  if (!v->prof_x || v->mx < v->prof_x) return false;
  int i = v->my >= v->prof_y0 ? (v->my - v->prof_y0) / v->prof_row_h : -1;
  if (i < 0 || i >= v->prof_nrows) return true;
  const ProfRow *r = &P.rows[v->prof_first + i];
  v->hl_line = r->line;
  snprintf(v->status, sizeof v->status,
           "line %d %s: %.0f cycles (%.1f %%), %.0f instrs, issue %.0f, load %.0f, dma %.0f, sem %.0f, barrier %.0f, %.0f bytes",
           r->line, r->op, r->cycles, P.total > 0 ? 100 * r->cycles / P.total : 0, r->instrs, r->part[PC_ISSUE],
           r->part[PC_LOAD], r->part[PC_DMA], r->part[PC_SEM], r->part[PC_BARRIER], r->bytes);
  return true;
}

static void hover(View *v) {
  v->status[0] = '\0';
  v->hl_line = 0;
  if (hover_profile(v)) return;
  if (v->mx < v->plot_x) return;
  double t = x_to_t(v, v->mx), slack = (v->v1 - v->v0) / v->plot_w * 2;
  for (int i = 0; i < v->nrows; i++) {
    if (v->my < v->row_y[i] || v->my >= v->row_y[i] + v->row_h) continue;
    const Track *tr = &M.tracks[v->row_track[i]];
    for (int k = tr->nbars; k-- > 0;) {
      const Bar *b = &M.bars[tr->bars[k]];
      if (b->row == v->row_sub[i] && b->t0 - slack <= t && t <= b->t1 + slack) {
        snprintf(v->status, sizeof v->status, "%s", b->info);
        v->hl_line = b->line;
        return;
      }
    }
  }
  for (int i = 0; i < v->ncnt; i++) {
    if (v->my < v->cnt_y[i] || v->my >= v->cnt_y[i] + v->cnt_h) continue;
    const Counter *c = &M.counters[i];
    double val = 0;
    for (int k = 0; k < c->n && c->t[k] <= t; k++) val = c->v[k];
    snprintf(v->status, sizeof v->status, "%s = %.0f at %.6f us", counter_label(c), val, t);
    return;
  }
  for (int s = 0; s < M.nspaces; s++) {
    if (v->my < v->heat_y0[s] || v->my >= v->heat_y0[s] + v->heat_h[s]) continue;
    const Space *sp = &M.spaces[s];
    double addr = (double)(v->heat_y0[s] + v->heat_h[s] - v->my) / v->heat_h[s] * (double)sp->total;
    double per_px = (double)sp->total / v->heat_h[s];
    int64_t base = 0;
    for (int k = sp->nacc; k-- > 0;) {
      const Acc *a = &M.acc[sp->acc[k]];
      base = 0;
      for (int b = 0; b < a->band; b++) base += sp->bands[b].extent;
      if (a->t0 - slack <= t && t <= a->t1 + slack && base + a->off - per_px <= addr && addr <= base + a->off + a->bytes + per_px) {
        snprintf(v->status, sizeof v->status, "%s", M.bars[a->bar].info);
        v->hl_line = M.bars[a->bar].line;
        return;
      }
    }
    snprintf(v->status, sizeof v->status, "%s: byte %.0f of %lld at %.6f us", sp->name, addr, (long long)sp->total, t);
    return;
  }
}

/* ---- main -------------------------------------------------------------------------------------------------------- */
static void reset(View *v) {
  double pad = (M.tmax - M.tmin) * 0.02;
  v->v0 = M.tmin - pad, v->v1 = M.tmax + pad, v->scroll = 0;
}

static void zoom(View *v, double f, int x) {
  double t = x >= v->plot_x ? x_to_t(v, x) : (v->v0 + v->v1) / 2;
  double span = (v->v1 - v->v0) * f;
  if (span < 1e-6) span = 1e-6;
  v->v0 = t - (t - v->v0) * span / (v->v1 - v->v0);
  v->v1 = v->v0 + span;
}

static void pan(View *v, double frac) {
  double d = (v->v1 - v->v0) * frac;
  v->v0 += d, v->v1 += d;
}

static int usage(void) {
  fprintf(stderr, "usage: sc-sim-view trace.json [--stats stats.json] [--screenshot FILE.bmp] [--width W --height H]\n");
  return 2;
}

static int screenshot(View *v, const char *path) {
  SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, v->W, v->H, 32, SDL_PIXELFORMAT_ARGB8888);
  SDL_Renderer *R = s ? SDL_CreateSoftwareRenderer(s) : NULL;
  if (!R) return fprintf(stderr, "sc-sim-view: %s\n", SDL_GetError()), 1;
  render(R, v); /* once for the layout, */
  v->mx = v->plot_x + v->plot_w / 3, v->my = v->nrows ? v->row_y[0] + v->row_h / 2 : 0;
  hover(v); /* then with the pointer on the first row */
  render(R, v);
  SDL_RenderPresent(R);
  int rc = SDL_SaveBMP(s, path) == 0 ? 0 : 1;
  if (rc) fprintf(stderr, "sc-sim-view: cannot write %s: %s\n", path, SDL_GetError());
  else
    printf("sc-sim-view: %d bars, %d counters, %d accesses in %d space(s) on %d track(s), %d profile line(s) -> %s (%dx%d)\n",
           M.nbars, M.ncounters, M.nacc, M.nspaces, M.ntracks, P.n, path, v->W, v->H);
  SDL_DestroyRenderer(R);
  SDL_FreeSurface(s);
  return rc;
}

static bool key(View *v, SDL_Keycode k) {
  if (k == SDLK_q || k == SDLK_ESCAPE) return false;
  if (k == SDLK_PLUS || k == SDLK_EQUALS || k == SDLK_KP_PLUS) zoom(v, 0.8, v->mx);
  if (k == SDLK_MINUS || k == SDLK_KP_MINUS) zoom(v, 1.25, v->mx);
  if (k == SDLK_LEFT) pan(v, -0.1);
  if (k == SDLK_RIGHT) pan(v, 0.1);
  if (k == SDLK_UP && v->scroll > 0) v->scroll--;
  if (k == SDLK_DOWN) v->scroll++;
  if (k == SDLK_0 || k == SDLK_HOME) reset(v);
  return true;
}

static int interactive(View *v) {
  SDL_Window *win = SDL_CreateWindow("sc-sim-view", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, v->W, v->H,
                                     SDL_WINDOW_RESIZABLE);
  SDL_Renderer *R = win ? SDL_CreateRenderer(win, -1, 0) : NULL;
  if (!R) return fprintf(stderr, "sc-sim-view: %s\n", SDL_GetError()), 1;
  bool run = true, drag = false;
  int drag_x = 0;
  double drag_v0 = 0, drag_v1 = 0;
  while (run) {
    render(R, v);
    SDL_RenderPresent(R);
    SDL_Event e;
    if (!SDL_WaitEvent(&e)) break;
    do {
      if (e.type == SDL_QUIT) run = false;
      else if (e.type == SDL_KEYDOWN) run = key(v, e.key.keysym.sym);
      else if (e.type == SDL_MOUSEWHEEL) zoom(v, e.wheel.y > 0 ? 0.8 : 1.25, v->mx);
      else if (e.type == SDL_MOUSEBUTTONDOWN && e.button.button == SDL_BUTTON_LEFT)
        drag = true, drag_x = e.button.x, drag_v0 = v->v0, drag_v1 = v->v1;
      else if (e.type == SDL_MOUSEBUTTONUP) drag = false;
      else if (e.type == SDL_MOUSEMOTION) {
        v->mx = e.motion.x, v->my = e.motion.y;
        if (drag) {
          double d = (drag_v1 - drag_v0) * (e.motion.x - drag_x) / v->plot_w;
          v->v0 = drag_v0 - d, v->v1 = drag_v1 - d;
        }
        hover(v);
      } else if (e.type == SDL_WINDOWEVENT && e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED)
        v->W = e.window.data1, v->H = e.window.data2;
    } while (run && SDL_PollEvent(&e));
  }
  SDL_DestroyRenderer(R);
  SDL_DestroyWindow(win);
  return 0;
}

int main(int argc, char **argv) {
  const char *path = NULL, *shot = NULL, *stats = NULL;
  View v = {.W = 1280, .H = 720};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--screenshot") && i + 1 < argc) shot = argv[++i];
    else if (!strcmp(argv[i], "--stats") && i + 1 < argc) stats = argv[++i];
    else if (!strcmp(argv[i], "--width") && i + 1 < argc) v.W = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--height") && i + 1 < argc) v.H = atoi(argv[++i]);
    else if (argv[i][0] != '-' && !path) path = argv[i];
    else return usage();
  }
  if (!path || v.W < 64 || v.H < 64 || v.W > 16384 || v.H > 16384) return usage();
  char err[512];
  font_init();
  if (!load(path, err, sizeof err)) return fprintf(stderr, "sc-sim-view: %s\n", err), 1;
  if (stats && !load_stats(stats, err, sizeof err)) return fprintf(stderr, "sc-sim-view: %s\n", err), 1;
  finish();
  reset(&v);
  if (shot) {
    const char *drv = getenv("SDL_VIDEODRIVER");
    if (!drv || strcmp(drv, "offscreen")) setenv("SDL_VIDEODRIVER", "dummy", 1); /* no window, no display */
  }
  SDL_SetMainReady();
  if (SDL_Init(SDL_INIT_VIDEO) != 0) return fprintf(stderr, "sc-sim-view: SDL_Init: %s\n", SDL_GetError()), 1;
  int rc = shot ? screenshot(&v, shot) : interactive(&v);
  SDL_Quit();
  return rc;
}
