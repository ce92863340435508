/* traces/trace.c -- the trace writers: Chrome trace-event JSON and CSV.
 *
 * A TraceSink streams records to `path.tmp.XXXXXX` (outfile.h, same folder)
 * through one stdio buffer and renames the file into place when it closes;
 * its memory is bounded by the mesh and the DMAs in flight, never by the
 * length of the trace.  Every record is one line built from one format
 * string of the table below (R13), fields in a fixed order, `ts` first, so
 * a line starts `{"ts":` and sorts and greps by time.
 *
 * Time.  Cycles become picoseconds once, in integer arithmetic (the clock
 * rounded to 1 Hz), and ts/dur are printed in microseconds with six
 * decimals: identical inputs give identical bytes on every machine.
 * Perfetto rounds ts and dur to whole nanoseconds separately, and drops a
 * slice that partially overlaps another on its thread, so no printed time
 * ends in exactly half a nanosecond and a slice's dur is trimmed (by less
 * than 1 ns) when that rounding would carry its end past its own end.
 *
 * Tracks.  pid = core + 1 and tid = subcore + 1 (Perfetto reserves pid and
 * tid 0 for the kernel's swapper), DMA engine tid = 1001 + subcore, named
 * "SC0" / "vec3" / "scalar" / "dma3" by metadata records.  Slices on one
 * thread must nest or be disjoint; an event that overlaps the previous one
 * of its track goes to the first free "lane", a thread of its own
 * ("vec3+1", tid + 10000 * lane).
 *
 * DMAs.  A DMA is an async slice ("b"/"e", cat "dma", name = its engine,
 * id = a serial number), written when it ends, so that a window and the
 * filters see the whole interval and every "b" has its "e".  Its start is
 * also a zero-length slice "dma_start" on the engine's thread and its wait a
 * slice "dma_wait" on the waiting subcore; a flow ("s" then "f" with bp "e")
 * joins the two, each bound to its enclosing slice as Perfetto requires.
 *
 * Size bound.  A record that would take the file past the bound stops the
 * trace: nothing more is written, and trace_close ends the document with a
 * global instant "trace truncated" saying at which cycle and why (room for
 * it and for the closing brackets is kept from the start). */
#include "trace.h"

#include "json.h"
#include "outfile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LANES 32          /* overlapping slices per thread before events are dropped */
#define STR_MAX 1024          /* bytes of one string field kept (then "...") */
#define TAIL_RESERVE 2048     /* bytes kept for the closing record and "]}" */
#define MIN_BYTES 4096        /* the smallest size bound honoured */
#define LANDED_MAX 4096       /* landed DMAs remembered for a wait that may follow */
#define CARRY_MAX 1024        /* counters carried to the window's start */
#define CHIP_PID 999          /* chip-wide counters (core < 0) */
#define CORE_TID 999          /* core-wide events (subcore < 0) */
#define DMA_TID 1001          /* + subcore */
#define LANE_TID 10000        /* * lane */
#define PS_PER_S 1000000000000ull

/* ---- record formats --------------------------------------------------------
 * %T picoseconds printed as microseconds, %d int64_t, %u uint64_t,
 * %s JSON string (NULL: ""), %S JSON string or null, %c CSV field,
 * %P byte spans (const int64_t * pairs, int64_t count) as a JSON array of
 * [offset, bytes] or null, %Q the same as a CSV field "OFFSET:BYTES ...".
 * Add fields only at the end of a record (R13). */
#define JSON_HEADER "{\"displayTimeUnit\": \"ns\", \"version\": " SC_JSON_VERSION ", \"traceEvents\": ["
#define JSON_FOOTER "\n]}\n"
#define R_PROCESS_NAME "{\"ts\":0,\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"process_name\",\"args\":{\"name\":%s}}"
#define R_PROCESS_SORT "{\"ts\":0,\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}"
#define R_PROCESS_LABELS "{\"ts\":0,\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"process_labels\",\"args\":{\"labels\":%s}}"
#define R_THREAD_NAME "{\"ts\":0,\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":%s}}"
#define R_THREAD_SORT "{\"ts\":0,\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%d}}"
#define R_ACCESS                                                                                     \
  "{\"ts\":%T,\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"dur\":%T,\"name\":%s,\"cat\":\"access\",\"args\":{" \
  "\"space\":%S,\"ref\":%S,\"offset\":%d,\"bytes\":%d,\"old\":%S,\"new\":%S,\"line\":%d,\"col\":%d,"      \
  "\"cycle\":%u,\"end_cycle\":%u,\"spans\":%P}}"
#define R_SYNC                                                                                       \
  "{\"ts\":%T,\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"dur\":%T,\"name\":%s,\"cat\":\"sync\",\"args\":{"   \
  "\"op\":%S,\"ref\":%S,\"line\":%d,\"col\":%d,\"cycle\":%u,\"end_cycle\":%u}}"
#define R_DMA_START                                                                                  \
  "{\"ts\":%T,\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"dur\":0,\"name\":\"dma_start\",\"cat\":\"dma\",\"args\":{" \
  "\"dma\":%d,\"flow\":%u,\"op\":%S,\"src_space\":%S,\"src_ref\":%S,\"dst_space\":%S,\"dst_ref\":%S,"     \
  "\"bytes\":%d,\"line\":%d,\"col\":%d,\"cycle\":%u}}"
#define R_FLOW_START "{\"ts\":%T,\"ph\":\"s\",\"pid\":%d,\"tid\":%d,\"id\":%u,\"name\":\"dma\",\"cat\":\"dma\"}"
#define R_DMA_BEGIN                                                                                  \
  "{\"ts\":%T,\"ph\":\"b\",\"pid\":%d,\"tid\":%d,\"id\":%u,\"name\":%s,\"cat\":\"dma\",\"args\":{"      \
  "\"dma\":%d,\"op\":%S,\"src_space\":%S,\"src_ref\":%S,\"dst_space\":%S,\"dst_ref\":%S,\"bytes\":%d,"   \
  "\"line\":%d,\"col\":%d,\"cycle\":%u,\"end_cycle\":%u,\"state\":%s}}"
#define R_DMA_END "{\"ts\":%T,\"ph\":\"e\",\"pid\":%d,\"tid\":%d,\"id\":%u,\"name\":%s,\"cat\":\"dma\"}"
#define R_DMA_WAIT                                                                                   \
  "{\"ts\":%T,\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"dur\":%T,\"name\":\"dma_wait\",\"cat\":\"dma\",\"args\":{" \
  "\"dma\":%d,\"op\":%S,\"line\":%d,\"col\":%d,\"cycle\":%u,\"end_cycle\":%u}}"
#define R_FLOW_END "{\"ts\":%T,\"ph\":\"f\",\"bp\":\"e\",\"pid\":%d,\"tid\":%d,\"id\":%u,\"name\":\"dma\",\"cat\":\"dma\"}"
#define R_SEMAPHORE "{\"ts\":%T,\"ph\":\"C\",\"pid\":%d,\"tid\":%d,\"name\":%s,\"cat\":\"semaphore\",\"args\":{\"value\":%d}}"
#define R_INFLIGHT "{\"ts\":%T,\"ph\":\"C\",\"pid\":%d,\"tid\":%d,\"name\":%s,\"cat\":\"inflight\",\"args\":{\"bytes\":%d}}"
#define R_TRUNCATED                                                                                  \
  "{\"ts\":%T,\"ph\":\"i\",\"s\":\"g\",\"pid\":%d,\"tid\":%d,\"name\":\"trace truncated\",\"cat\":\"trace\"," \
  "\"args\":{\"reason\":%s,\"cycle\":%u,\"max_bytes\":%u,\"records\":%u,\"events_dropped\":%u}}"
#define R_STOPPED                                                                                    \
  "{\"ts\":%T,\"ph\":\"i\",\"s\":\"g\",\"pid\":%d,\"tid\":%d,\"name\":\"run stopped\",\"cat\":\"run\","         \
  "\"args\":{\"fault\":%s,\"message\":%s,\"line\":%d,\"col\":%d,\"cycle\":%u}}"
#define CSV_HEADER "cycle,core,subcore,op,space,ref,offset,bytes,old,new,end_cycle,line,col,spans\n"
#define CSV_ACCESS "%u,%d,%d,%c,%c,%c,%d,%d,%c,%c,%u,%d,%d,%Q\n"
#define CSV_TRUNCATED "%u,,,truncated,,,,,,%c,,,,\n"

/* ---- types ----------------------------------------------------------------- */
typedef struct {
  char *p;
  size_t n, cap;
} Buf;

typedef struct {
  uint64_t end_ps; /* the end of the last slice on the lane */
  bool named;      /* its thread_name record is written */
} Lane;

typedef struct {
  int core, subcore;
  bool dma; /* the subcore's DMA engine */
  int nlanes;
  Lane lane[MAX_LANES];
} Track;

/* A DMA from its start to its end (all fields) and then, until its wait,
 * only what the wait needs (its strings are freed when it lands). */
typedef struct {
  uint64_t key; /* core and engine id */
  int core, dma, subcore;
  uint64_t start, end, flow; /* cycles; flow: the serial id of flow and async slice */
  bool pass;    /* every filter keeps it */
  bool pass_sr; /* the space and ref filters keep it (for its wait) */
  bool start_written, ended, waited;
  int start_tid; /* the thread of its dma_start slice (the flow's start binds to it) */
  char *op, *src_space, *src_ref, *dst_space, *dst_ref;
  int64_t bytes;
  int line, col;
} Dma;

/* key -> index + 1 into TraceSink.dmas; open addressing, 0 = empty */
typedef struct {
  uint64_t *keys;
  uint32_t *vals;
  size_t cap, n;
} Map;

typedef struct {
  int core, subcore;
  bool inflight;
  char name[160];
  int64_t value;
} Carry;

struct TraceSink {
  TraceOptions o; /* strings are the sink's copies */
  char *path;     /* for messages */
  OutFile *out;
  FILE *f;        /* its stream */
  uint64_t hz, max_bytes;
  Buf chunk;      /* the lines of the record being built */
  bool any_line;  /* a line follows the header (JSON: the next one needs a comma) */
  bool cut;       /* the size bound was reached */
  uint64_t cut_cycle;
  int io_errno;   /* first write error, 0 if none */
  uint64_t last_cycle;
  int main_core, main_subcore; /* the first core/subcore the filters keep */
  Track *mesh;    /* [core][subcore][dma] when inside the mesh */
  Track *extra;   /* the others, searched linearly */
  size_t nextra;
  unsigned char named_pid[128]; /* bitset of pids < 1024 already named */
  Dma *dmas;
  size_t ndma, capdma;
  Map map;                    /* (core, dma) -> its index in dmas */
  uint64_t landed[LANDED_MAX]; /* keys of landed, unwaited DMAs, oldest first */
  size_t landed_head, nlanded;
  uint64_t next_flow;
  Carry *carry;
  size_t ncarry;
  bool carry_done;
  TraceStats st;
};

/* ---- buffers and the formatter ----------------------------------------------- */
static void need(Buf *b, size_t k) {
  if (b->n + k <= b->cap) return;
  size_t c = b->cap ? b->cap : 4096;
  while (c < b->n + k) c *= 2;
  char *q = realloc(b->p, c);
  if (!q) abort();
  b->p = q;
  b->cap = c;
}

static void put(Buf *b, const char *s, size_t n) {
  if (!n) return;
  need(b, n);
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

static void put_u(Buf *b, uint64_t v) {
  char t[24];
  int i = 24;
  do t[--i] = (char)('0' + v % 10); while ((v /= 10) != 0);
  put(b, t + i, (size_t)(24 - i));
}

static void put_d(Buf *b, int64_t v) {
  if (v < 0) {
    put(b, "-", 1);
    put_u(b, (uint64_t)0 - (uint64_t)v);
  } else {
    put_u(b, (uint64_t)v);
  }
}

/* picoseconds as microseconds with six decimals */
static void put_ts(Buf *b, uint64_t ps) {
  char t[8];
  uint64_t frac = ps % 1000000;
  put_u(b, ps / 1000000);
  for (int i = 6; i >= 1; i--, frac /= 10) t[i] = (char)('0' + frac % 10);
  t[0] = '.';
  put(b, t, 7);
}

static void put_cb(void *b, const char *s, size_t n) { put(b, s, n); }

/* A JSON string (json.h), at most STR_MAX bytes of s, then "...". */
static void put_json_str(Buf *b, const char *s) { json_put_str(put_cb, b, s, STR_MAX); }

/* A CSV field (RFC 4180): quoted when it holds a comma, a quote, a line
 * break or a leading/trailing space; quotes doubled. */
static void put_csv(Buf *b, const char *s) {
  if (!s) return;
  size_t n = strnlen(s, STR_MAX);
  bool q = n && (s[0] == ' ' || s[n - 1] == ' ');
  for (size_t i = 0; i < n && !q; i++) q = strchr(",\"\r\n", s[i]) && s[i];
  if (!q) {
    put(b, s, n);
    return;
  }
  put(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') put(b, "\"", 1);
    put(b, s + i, 1);
  }
  put(b, "\"", 1);
}

/* Byte spans: JSON [[offset, bytes], ...] (null when there are none to
 * list), or CSV "offset:bytes offset:bytes" (empty). */
static void put_spans(Buf *b, const int64_t *sp, int64_t n, bool json) {
  if (!sp) {
    if (json) put(b, "null", 4);
    return;
  }
  if (json) put(b, "[", 1);
  for (int64_t i = 0; i < n; i++) {
    if (i) put(b, json ? "," : " ", 1);
    if (json) put(b, "[", 1);
    put_d(b, sp[2 * i]);
    put(b, json ? "," : ":", 1);
    put_d(b, sp[2 * i + 1]);
    if (json) put(b, "]", 1);
  }
  if (json) put(b, "]", 1);
}

/* Appends fmt (the conversions of the record table) to b. */
static void fmt(Buf *b, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  for (const char *p = f; *p; p++) {
    const char *q = strchr(p, '%');
    size_t lit = q ? (size_t)(q - p) : strlen(p);
    put(b, p, lit);
    if (!q) break;
    p = q + 1;
    switch (*p) {
    case 'T': put_ts(b, va_arg(ap, uint64_t)); break;
    case 'd': put_d(b, va_arg(ap, int64_t)); break;
    case 'u': put_u(b, va_arg(ap, uint64_t)); break;
    case 's': put_json_str(b, va_arg(ap, const char *)); break;
    case 'S': {
      const char *s = va_arg(ap, const char *);
      if (s) put_json_str(b, s);
      else put(b, "null", 4);
      break;
    }
    case 'c': put_csv(b, va_arg(ap, const char *)); break;
    case 'P':
    case 'Q': {
      const int64_t *sp = va_arg(ap, const int64_t *);
      put_spans(b, sp, va_arg(ap, int64_t), *p == 'P');
      break;
    }
    default: put(b, p, 1); break;
    }
  }
  va_end(ap);
}

/* ---- time -------------------------------------------------------------------- */
/* cycles -> picoseconds, rounded; a value ending in exactly 500 ps moves to
 * 501 so that every reader rounds it to the same nanosecond. */
static uint64_t ps_of(const TraceSink *s, uint64_t cycles) {
  unsigned __int128 q = ((unsigned __int128)cycles * PS_PER_S + s->hz / 2) / s->hz;
  uint64_t ps = q > UINT64_MAX - 1 ? UINT64_MAX - 1 : (uint64_t)q;
  return ps % 1000 == 500 ? ps + 1 : ps;
}

static uint64_t ns_round(uint64_t ps) { return (ps + 500) / 1000; }

/* The printed duration of [a, b): b - a, trimmed so that Perfetto's
 * round(ts) + round(dur) never exceeds round(b). */
static uint64_t dur_of(uint64_t a, uint64_t b) {
  uint64_t d = b > a ? b - a : 0;
  if (d % 1000 == 500) d--;
  uint64_t an = ns_round(a), bn = ns_round(b);
  if (an + ns_round(d) > bn) d = (bn - an) * 1000 + 499;
  return d;
}

/* ---- tracks ------------------------------------------------------------------ */
static int pid_of(int core) { return core < 0 ? CHIP_PID : core + 1; }

static int tid_of(const Track *t, int lane) {
  int base = t->subcore < 0 ? CORE_TID : t->dma ? DMA_TID + t->subcore : t->subcore + 1;
  return base + LANE_TID * lane;
}

static Track *track_get(TraceSink *s, int core, int subcore, bool dma) {
  int C = s->o.cores, S = s->o.subcores;
  if (core >= 0 && core < C && subcore >= 0 && subcore < S) return &s->mesh[((size_t)core * (size_t)S + (size_t)subcore) * 2 + dma];
  if (subcore < 0) dma = false;
  for (size_t i = 0; i < s->nextra; i++) {
    Track *t = &s->extra[i];
    if (t->core == core && t->subcore == subcore && t->dma == dma) return t;
  }
  Track *q = realloc(s->extra, (s->nextra + 1) * sizeof *q);
  if (!q) abort();
  s->extra = q;
  Track *t = &q[s->nextra++];
  *t = (Track){.core = core, .subcore = subcore, .dma = dma, .nlanes = 1};
  return t;
}

/* The first lane of t whose last slice ends by start (then it ends at end),
 * -1 when all MAX_LANES are busy. */
static int lane_take(Track *t, uint64_t start, uint64_t end) {
  for (int i = 0; i < MAX_LANES; i++) {
    if (i == t->nlanes) t->lane[t->nlanes++] = (Lane){0, false};
    if (t->lane[i].end_ps <= start) {
      t->lane[i].end_ps = end;
      return i;
    }
  }
  return -1;
}

static void thread_name(const TraceSink *s, const Track *t, int lane, char *out, size_t cap) {
  char base[64];
  if (t->subcore < 0) snprintf(base, sizeof base, "%s", t->core < 0 ? "chip" : "core");
  else if (t->dma) snprintf(base, sizeof base, "dma%d", t->subcore);
  else if (s->o.scalar_subcore) snprintf(base, sizeof base, t->subcore ? "scalar%d" : "scalar", t->subcore);
  else snprintf(base, sizeof base, "vec%d", t->subcore);
  if (lane) snprintf(out, cap, "%s+%d", base, lane);
  else snprintf(out, cap, "%s", base);
}

/* Appends the metadata records naming the process of `core` and the thread
 * of (t, lane) when they are not named yet. */
static void name_process(TraceSink *s, int core) {
  int pid = pid_of(core);
  if (pid >= 1024 || (s->named_pid[pid / 8] >> (pid % 8) & 1)) return;
  s->named_pid[pid / 8] |= (unsigned char)(1u << (pid % 8));
  char name[32];
  snprintf(name, sizeof name, core < 0 ? "chip" : "SC%d", core);
  int tid = core >= 0 ? s->main_subcore + 1 : CORE_TID;
  fmt(&s->chunk, ",\n" R_PROCESS_NAME, (int64_t)pid, (int64_t)tid, name);
  fmt(&s->chunk, ",\n" R_PROCESS_SORT, (int64_t)pid, (int64_t)tid, (int64_t)(core < 0 ? -1 : core));
  if (s->o.program_name) {
    char labels[320];
    snprintf(labels, sizeof labels, "%.200s, clock %" PRIu64 " Hz", s->o.program_name, s->hz);
    fmt(&s->chunk, ",\n" R_PROCESS_LABELS, (int64_t)pid, (int64_t)tid, labels);
  }
}

static void name_thread(TraceSink *s, Track *t, int lane) {
  name_process(s, t->core);
  if (t->lane[lane].named) return;
  t->lane[lane].named = true;
  char name[96];
  thread_name(s, t, lane, name, sizeof name);
  int64_t pid = pid_of(t->core), tid = tid_of(t, lane);
  int64_t sort = t->subcore < 0 ? -1 : ((int64_t)t->subcore * 2 + t->dma) * MAX_LANES + lane;
  fmt(&s->chunk, ",\n" R_THREAD_NAME, pid, tid, name);
  fmt(&s->chunk, ",\n" R_THREAD_SORT, pid, tid, sort);
}

/* A counter is a track of its process (Perfetto and chrome://tracing read
 * no thread from a "C" record), so it names no thread: its tid is the
 * subcore's when that one is in the mesh (named already), else the
 * process's own (the chip's counters: CORE_TID, under no thread name). */
static int64_t counter_tid(const TraceSink *s, int core, int subcore) {
  if (core < 0 || core >= s->o.cores || subcore < 0 || subcore >= s->o.subcores) return CORE_TID;
  return subcore + 1;
}

/* ---- window and filters ---------------------------------------------------------- */
static bool in_window(const TraceSink *s, uint64_t t0, uint64_t t1) {
  uint64_t ws = s->o.window_start, we = s->o.window_end;
  if (we && t0 >= we) return false;
  return t1 > t0 ? t1 > ws : t0 >= ws;
}

/* A ref filter "buf" also matches the instance names "buf@0.1". */
static bool same(const char *filter, const char *v, bool instances) {
  if (!v) return false;
  size_t n = strlen(filter);
  return strncmp(v, filter, n) == 0 && (v[n] == '\0' || (instances && v[n] == '@'));
}

/* The filters on who did it: core, subcore, mnemonic. */
static bool keep_who(const TraceSink *s, int core, int subcore, const char *op) {
  const TraceOptions *o = &s->o;
  if (o->filter_core >= 0 && core != o->filter_core) return false;
  if (o->filter_subcore >= 0 && subcore != o->filter_subcore) return false;
  return !o->filter_op || same(o->filter_op, op, false);
}

/* The filters on where: the space and the ref (a DMA has two of each). */
static bool keep_where(const TraceSink *s, const char *space1, const char *space2, const char *ref1, const char *ref2) {
  const TraceOptions *o = &s->o;
  if (o->filter_space && !same(o->filter_space, space1, false) && !same(o->filter_space, space2, false)) return false;
  return !o->filter_ref || same(o->filter_ref, ref1, true) || same(o->filter_ref, ref2, true);
}

static bool keep(const TraceSink *s, int core, int subcore, const char *space1, const char *space2, const char *ref1,
                 const char *ref2, const char *op) {
  return keep_who(s, core, subcore, op) && keep_where(s, space1, space2, ref1, ref2);
}

/* ---- output ---------------------------------------------------------------------- */
static void write_raw(TraceSink *s, const char *p, size_t n) {
  if (s->io_errno) return;
  if (fwrite(p, 1, n, s->f) != n) s->io_errno = errno ? errno : EIO;
  s->st.bytes += n;
}

/* Writes the chunk when it fits under the size bound (JSON: without the
 * comma before the first line).  `record`: the chunk is an event record
 * (counted), not metadata.  False when the chunk was not written. */
static bool commit(TraceSink *s, uint64_t cycle, bool record) {
  Buf *c = &s->chunk;
  size_t off = (s->o.format == TRACE_CHROME_JSON && !s->any_line && c->n) ? 1 : 0;
  bool ok = !s->cut && !s->io_errno;
  if (ok && s->st.bytes + (c->n - off) + TAIL_RESERVE > s->max_bytes) {
    s->cut = s->st.truncated = true;
    s->cut_cycle = cycle;
    ok = false;
  }
  if (ok && c->n > off) {
    write_raw(s, c->p + off, c->n - off);
    s->any_line = true;
  }
  if (record) {
    if (ok) s->st.records++;
    else s->st.dropped++;
  }
  c->n = 0;
  return ok;
}

/* Counters seen before the window are written at its start, once, before
 * the first record inside it. */
static void carry_flush(TraceSink *s) {
  if (s->carry_done || !s->o.window_start) return;
  s->carry_done = true;
  uint64_t ts = ps_of(s, s->o.window_start);
  for (size_t i = 0; i < s->ncarry; i++) {
    Carry *k = &s->carry[i];
    name_process(s, k->core);
    fmt(&s->chunk, k->inflight ? ",\n" R_INFLIGHT : ",\n" R_SEMAPHORE, ts, (int64_t)pid_of(k->core),
        counter_tid(s, k->core, k->subcore), k->name, k->value);
  }
  commit(s, s->o.window_start, false);
}

static void carry_store(TraceSink *s, const TraceEvent *e, const char *name) {
  size_t i = 0;
  while (i < s->ncarry && !(s->carry[i].core == e->core && strcmp(s->carry[i].name, name) == 0)) i++;
  if (i == CARRY_MAX) return;
  if (i == s->ncarry) {
    if (!s->carry && !(s->carry = malloc(CARRY_MAX * sizeof *s->carry))) abort();
    s->ncarry++;
  }
  Carry *k = &s->carry[i];
  *k = (Carry){.core = e->core, .subcore = e->subcore, .inflight = e->kind == TE_INFLIGHT, .value = e->value};
  snprintf(k->name, sizeof k->name, "%s", name);
}

/* Starts a record: the carried counters go first. */
static void begin_record(TraceSink *s) {
  if (!s->carry_done && s->o.window_start) carry_flush(s);
  s->chunk.n = 0;
}

/* ---- DMA bookkeeping ------------------------------------------------------------ */
static char *copy_str(const char *s) {
  if (!s) return NULL;
  char *d = strdup(s);
  if (!d) abort();
  return d;
}

static void dma_strings_free(Dma *m) {
  free(m->op);
  free(m->src_space);
  free(m->src_ref);
  free(m->dst_space);
  free(m->dst_ref);
  m->op = m->src_space = m->src_ref = m->dst_space = m->dst_ref = NULL;
}

static uint64_t dma_key(int core, int dma) { return (uint64_t)(uint32_t)core << 32 | (uint32_t)dma; }

static size_t map_slot(const Map *m, uint64_t key) {
  size_t h = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
  while (m->vals[h] && m->keys[h] != key) h = (h + 1) & (m->cap - 1);
  return h;
}

static long map_get(const Map *m, uint64_t key) {
  if (!m->cap) return -1;
  size_t h = map_slot(m, key);
  return m->vals[h] ? (long)m->vals[h] - 1 : -1;
}

static void map_put(Map *m, uint64_t key, size_t idx) {
  if (2 * (m->n + 1) > m->cap) {
    Map old = *m;
    m->cap = m->cap ? m->cap * 2 : 64;
    m->keys = calloc(m->cap, sizeof *m->keys);
    m->vals = calloc(m->cap, sizeof *m->vals);
    if (!m->keys || !m->vals) abort();
    m->n = 0;
    for (size_t i = 0; i < old.cap; i++)
      if (old.vals[i]) map_put(m, old.keys[i], old.vals[i] - 1);
    free(old.keys);
    free(old.vals);
  }
  size_t h = map_slot(m, key);
  m->n += !m->vals[h];
  m->keys[h] = key;
  m->vals[h] = (uint32_t)idx + 1;
}

/* Deletes by shifting the rest of the probe run back (no tombstones). */
static void map_del(Map *m, uint64_t key) {
  if (!m->cap) return;
  size_t h = map_slot(m, key), mask = m->cap - 1;
  if (!m->vals[h]) return;
  m->vals[h] = 0;
  m->n--;
  for (size_t j = (h + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
    size_t home = (size_t)(m->keys[j] * 0x9e3779b97f4a7c15ull >> 20) & mask;
    if (((j - home) & mask) >= ((j - h) & mask)) { /* home is not in (h, j]: move it to h */
      m->keys[h] = m->keys[j], m->vals[h] = m->vals[j], m->vals[j] = 0;
      h = j;
    }
  }
}

static Dma *dma_find(TraceSink *s, int core, int dma) {
  long i = map_get(&s->map, dma_key(core, dma));
  return i < 0 ? NULL : &s->dmas[i];
}

static void dma_remove(TraceSink *s, Dma *m) {
  size_t i = (size_t)(m - s->dmas), last = --s->ndma;
  dma_strings_free(m);
  map_del(&s->map, m->key);
  if (i != last) {
    s->dmas[i] = s->dmas[last];
    map_put(&s->map, s->dmas[i].key, i);
  }
}

/* A landed DMA waits here for its wait; past LANDED_MAX the oldest is
 * forgotten (its wait, if one comes, then draws no flow arrow). */
static void dma_landed(TraceSink *s, Dma *m) {
  dma_strings_free(m);
  if (s->nlanded == LANDED_MAX) {
    uint64_t old = s->landed[s->landed_head];
    s->landed_head = (s->landed_head + 1) % LANDED_MAX;
    s->nlanded--;
    long i = map_get(&s->map, old);
    if (i >= 0 && s->dmas[i].ended && !s->dmas[i].waited) {
      bool self = &s->dmas[i] == m;
      dma_remove(s, &s->dmas[i]);
      if (self) return;
    }
  }
  s->landed[(s->landed_head + s->nlanded++) % LANDED_MAX] = m->key;
}

static Dma *dma_add(TraceSink *s, const TraceEvent *e, uint64_t start) {
  Dma *old = dma_find(s, e->core, e->dma);
  if (old) dma_remove(s, old); /* the engine reused the id */
  if (s->ndma == s->capdma) {
    size_t c = s->capdma ? s->capdma * 2 : 16;
    Dma *q = realloc(s->dmas, c * sizeof *q);
    if (!q) abort();
    s->dmas = q;
    s->capdma = c;
  }
  Dma *m = &s->dmas[s->ndma];
  *m = (Dma){.key = dma_key(e->core, e->dma), .core = e->core, .dma = e->dma, .subcore = e->subcore, .start = start,
             .end = start, .flow = ++s->next_flow, .bytes = e->bytes, .line = e->line, .col = e->col};
  map_put(&s->map, m->key, s->ndma++);
  m->op = copy_str(e->op);
  m->src_space = copy_str(e->src_space);
  m->src_ref = copy_str(e->src_ref);
  m->dst_space = copy_str(e->dst_space);
  m->dst_ref = copy_str(e->dst_ref);
  m->pass = keep(s, e->core, e->subcore, e->src_space, e->dst_space, e->src_ref, e->dst_ref, e->op);
  m->pass_sr = keep_where(s, e->src_space, e->dst_space, e->src_ref, e->dst_ref);
  return m;
}

/* The async slice of a DMA, "b" and "e" together. */
static void dma_slice(TraceSink *s, const Dma *m, const char *state) {
  if (!m->pass || !in_window(s, m->start, m->end)) {
    s->st.filtered++;
    return;
  }
  Track *t = track_get(s, m->core, m->subcore, true);
  begin_record(s);
  name_thread(s, t, 0);
  char name[96];
  thread_name(s, t, 0, name, sizeof name);
  int64_t pid = pid_of(m->core), tid = tid_of(t, 0);
  fmt(&s->chunk, ",\n" R_DMA_BEGIN, ps_of(s, m->start), pid, tid, m->flow, name, (int64_t)m->dma, m->op, m->src_space,
      m->src_ref, m->dst_space, m->dst_ref, m->bytes, (int64_t)m->line, (int64_t)m->col, m->start, m->end, state);
  fmt(&s->chunk, ",\n" R_DMA_END, ps_of(s, m->end), pid, tid, m->flow, name);
  commit(s, m->start, true);
}

/* ---- the event kinds ---------------------------------------------------------------- */
static void on_slice(TraceSink *s, const TraceEvent *e, uint64_t t1) {
  bool access = e->kind == TE_ACCESS;
  if (!keep(s, e->core, e->subcore, e->space, NULL, e->ref, NULL, e->op) || !in_window(s, e->t0, t1)) {
    s->st.filtered++;
    return;
  }
  Track *t = track_get(s, e->core, e->subcore, false);
  uint64_t a = ps_of(s, e->t0), b = ps_of(s, t1);
  int lane = lane_take(t, a, b);
  if (lane < 0) {
    s->st.dropped++;
    return;
  }
  begin_record(s);
  name_thread(s, t, lane);
  int64_t pid = pid_of(e->core), tid = tid_of(t, lane);
  if (access)
    fmt(&s->chunk, ",\n" R_ACCESS, a, pid, tid, dur_of(a, b), e->op ? e->op : "access", e->space, e->ref, e->offset,
        e->bytes, e->old_text, e->new_text, (int64_t)e->line, (int64_t)e->col, e->t0, t1, e->spans, e->nspans);
  else
    fmt(&s->chunk, ",\n" R_SYNC, a, pid, tid, dur_of(a, b), e->kind == TE_BARRIER ? "barrier" : "stall", e->op, e->ref,
        (int64_t)e->line, (int64_t)e->col, e->t0, t1);
  commit(s, e->t0, true);
}

static void on_dma_start(TraceSink *s, const TraceEvent *e) {
  Dma *m = dma_add(s, e, e->t0);
  if (!m->pass || !in_window(s, e->t0, e->t0)) {
    s->st.filtered++;
    return;
  }
  Track *t = track_get(s, e->core, e->subcore, true);
  uint64_t a = ps_of(s, e->t0);
  int lane = lane_take(t, a, a);
  if (lane < 0) {
    s->st.dropped++;
    return;
  }
  begin_record(s);
  name_thread(s, t, lane);
  int64_t pid = pid_of(e->core), tid = tid_of(t, lane);
  fmt(&s->chunk, ",\n" R_DMA_START, a, pid, tid, (int64_t)e->dma, m->flow, e->op, e->src_space, e->src_ref, e->dst_space,
      e->dst_ref, e->bytes, (int64_t)e->line, (int64_t)e->col, e->t0);
  m->start_written = commit(s, e->t0, true);
  m->start_tid = (int)tid;
}

static void on_dma_end(TraceSink *s, const TraceEvent *e, uint64_t t) {
  Dma *m = dma_find(s, e->core, e->dma);
  if (!m || m->ended) m = dma_add(s, e, t); /* its start was never seen: a zero-length slice */
  m->end = t > m->start ? t : m->start;
  m->ended = true;
  dma_slice(s, m, "complete");
  if (m->waited) dma_remove(s, m);
  else dma_landed(s, m);
}

static void on_dma_wait(TraceSink *s, const TraceEvent *e, uint64_t t1) {
  Dma *m = dma_find(s, e->core, e->dma);
  if (m && m->waited) m = NULL; /* waited twice: the second has no DMA */
  bool pass = keep_who(s, e->core, e->subcore, e->op) && (m ? m->pass_sr : keep_where(s, e->space, NULL, e->ref, NULL));
  if (!pass || !in_window(s, e->t0, t1)) {
    s->st.filtered++;
  } else {
    Track *t = track_get(s, e->core, e->subcore, false);
    uint64_t a = ps_of(s, e->t0), b = ps_of(s, t1);
    int lane = lane_take(t, a, b);
    if (lane < 0) {
      s->st.dropped++;
    } else {
      begin_record(s);
      name_thread(s, t, lane);
      int64_t pid = pid_of(e->core), tid = tid_of(t, lane);
      fmt(&s->chunk, ",\n" R_DMA_WAIT, a, pid, tid, dur_of(a, b), (int64_t)e->dma, e->op, (int64_t)e->line,
          (int64_t)e->col, e->t0, t1);
      if (m && m->start_written) { /* both ends are written: the flow, start and end together */
        fmt(&s->chunk, ",\n" R_FLOW_START, ps_of(s, m->start), (int64_t)pid_of(m->core), (int64_t)m->start_tid, m->flow);
        fmt(&s->chunk, ",\n" R_FLOW_END, a, pid, tid, m->flow);
      }
      commit(s, e->t0, true);
    }
  }
  if (!m) return;
  m->waited = true;
  if (m->ended) dma_remove(s, m);
}

static void on_counter(TraceSink *s, const TraceEvent *e) {
  bool inflight = e->kind == TE_INFLIGHT;
  char name[160];
  if (inflight) snprintf(name, sizeof name, "inflight %.100s", e->space ? e->space : "?");
  else if (e->ref && strchr(e->ref, '@')) snprintf(name, sizeof name, "%.150s", e->ref);
  else snprintf(name, sizeof name, "%.100s@%d.%d", e->ref ? e->ref : "sem", e->core, e->subcore);
  if (!keep(s, e->core, e->subcore, inflight ? e->space : NULL, NULL, inflight ? NULL : e->ref, NULL, e->op) ||
      (s->o.window_end && e->t0 >= s->o.window_end)) {
    s->st.filtered++;
    return;
  }
  if (e->t0 < s->o.window_start) {
    if (!s->carry_done) carry_store(s, e, name);
    s->st.filtered++;
    return;
  }
  begin_record(s);
  name_process(s, e->core);
  fmt(&s->chunk, inflight ? ",\n" R_INFLIGHT : ",\n" R_SEMAPHORE, ps_of(s, e->t0), (int64_t)pid_of(e->core),
      counter_tid(s, e->core, e->subcore), name, e->value);
  commit(s, e->t0, true);
}

static void on_csv(TraceSink *s, const TraceEvent *e, uint64_t t1) {
  if (e->kind != TE_ACCESS || !keep(s, e->core, e->subcore, e->space, NULL, e->ref, NULL, e->op) ||
      !in_window(s, e->t0, t1)) {
    s->st.filtered++;
    return;
  }
  s->chunk.n = 0;
  fmt(&s->chunk, CSV_ACCESS, e->t0, (int64_t)e->core, (int64_t)e->subcore, e->op, e->space, e->ref, e->offset, e->bytes,
      e->old_text, e->new_text, t1, (int64_t)e->line, (int64_t)e->col, e->spans, e->nspans);
  commit(s, e->t0, true);
}

void trace_event(TraceSink *s, const TraceEvent *e) {
  if (!s) return;
  s->st.events++;
  uint64_t t1 = e->t1 > e->t0 ? e->t1 : e->t0;
  if (t1 > s->last_cycle) s->last_cycle = t1;
  if (s->cut || s->io_errno) {
    s->st.dropped++;
    return;
  }
  if (s->o.format == TRACE_CSV) {
    on_csv(s, e, t1);
    return;
  }
  switch (e->kind) {
  case TE_ACCESS: on_slice(s, e, t1); break;
  case TE_BARRIER: on_slice(s, e, t1); break;
  case TE_STALL: on_slice(s, e, t1); break;
  case TE_DMA_START: on_dma_start(s, e); break;
  case TE_DMA_END: on_dma_end(s, e, t1); break;
  case TE_DMA_WAIT: on_dma_wait(s, e, t1); break;
  case TE_SEMAPHORE: on_counter(s, e); break;
  case TE_INFLIGHT: on_counter(s, e); break;
  }
}

void trace_stop(TraceSink *s, uint64_t cycle, const char *fault, const char *message, int line, int col) {
  if (!s) return;
  if (cycle > s->last_cycle) s->last_cycle = cycle;
  if (!fault || s->o.format != TRACE_CHROME_JSON || s->cut || s->io_errno) return;
  if (!in_window(s, cycle, cycle)) {
    s->st.filtered++;
    return;
  }
  Track *t = track_get(s, s->main_core, s->main_subcore, false);
  begin_record(s);
  name_thread(s, t, 0);
  fmt(&s->chunk, ",\n" R_STOPPED, ps_of(s, cycle), (int64_t)pid_of(s->main_core), (int64_t)tid_of(t, 0), fault, message,
      (int64_t)line, (int64_t)col, cycle);
  commit(s, cycle, true);
}

/* ---- options ------------------------------------------------------------------------ */
void trace_options_init(TraceOptions *o) {
  *o = (TraceOptions){.format = TRACE_CHROME_JSON, .filter_core = -1, .filter_subcore = -1,
                      .max_bytes = TRACE_DEFAULT_MAX_BYTES};
}

/* ---- open and close -------------------------------------------------------------------- */
static void sink_free(TraceSink *s) {
  for (size_t i = 0; i < s->ndma; i++) dma_strings_free(&s->dmas[i]);
  free(s->dmas);
  free(s->map.keys);
  free(s->map.vals);
  free(s->carry);
  free(s->mesh);
  free(s->extra);
  free(s->chunk.p);
  free((char *)s->o.filter_space);
  free((char *)s->o.filter_ref);
  free((char *)s->o.filter_op);
  free((char *)s->o.program_name);
  free(s->path);
  free(s);
}

static void io_diag(Diag *d, const char *what, const char *path, int err) {
  char msg[1024];
  snprintf(msg, sizeof msg, "cannot %s the trace file '%.800s': %s", what, path, strerror(err));
  if (d) diag_set(d, D_IN_FILE, (Loc){NULL, 0, 0}, msg);
}

/* The names of the mesh's processes and threads, up front, in order. */
static void write_mesh_names(TraceSink *s) {
  for (int c = 0; c < s->o.cores; c++)
    for (int sc = 0; sc < s->o.subcores; sc++) {
      if ((s->o.filter_core >= 0 && c != s->o.filter_core) || (s->o.filter_subcore >= 0 && sc != s->o.filter_subcore)) continue;
      name_thread(s, track_get(s, c, sc, false), 0);
      name_thread(s, track_get(s, c, sc, true), 0);
    }
  commit(s, 0, false);
}

static void first_kept(TraceSink *s) {
  const TraceOptions *o = &s->o;
  s->main_core = o->filter_core >= 0 ? o->filter_core : 0;
  s->main_subcore = o->filter_subcore >= 0 ? o->filter_subcore : 0;
}

TraceSink *trace_open(const char *path, const TraceOptions *opt, Diag *d) {
  TraceSink *s = calloc(1, sizeof *s);
  if (!s) abort();
  s->o = *opt;
  s->o.filter_space = copy_str(opt->filter_space);
  s->o.filter_ref = copy_str(opt->filter_ref);
  s->o.filter_op = copy_str(opt->filter_op);
  s->o.program_name = copy_str(opt->program_name);
  if (s->o.cores < 0 || s->o.subcores < 0 || s->o.cores > 4096 || s->o.subcores > 998) s->o.cores = s->o.subcores = 0;
  double hz = opt->clock_hz > 0 && isfinite(opt->clock_hz) ? opt->clock_hz : TRACE_DEFAULT_CLOCK_HZ;
  s->hz = hz < 1 ? 1 : hz > 1e15 ? 1000000000000000ull : (uint64_t)llround(hz);
  s->max_bytes = opt->max_bytes ? opt->max_bytes : TRACE_DEFAULT_MAX_BYTES;
  if (s->max_bytes < MIN_BYTES) s->max_bytes = MIN_BYTES;
  s->path = copy_str(path);
  int err = 0;
  if (!(s->out = outfile_open(path, &err))) { /* whole or not at all (outfile.h) */
    io_diag(d, "create", path, err);
    sink_free(s);
    return NULL;
  }
  s->f = outfile_stream(s->out);
  setvbuf(s->f, NULL, _IOFBF, 1 << 20);
  size_t nmesh = (size_t)s->o.cores * (size_t)s->o.subcores * 2;
  s->mesh = calloc(nmesh ? nmesh : 1, sizeof *s->mesh);
  if (!s->mesh) abort();
  for (size_t i = 0; i < nmesh; i++)
    s->mesh[i] = (Track){.core = (int)(i / 2 / (size_t)s->o.subcores), .subcore = (int)(i / 2 % (size_t)s->o.subcores),
                         .dma = i % 2, .nlanes = 1};
  first_kept(s);
  if (s->o.format == TRACE_CSV) {
    write_raw(s, CSV_HEADER, strlen(CSV_HEADER));
  } else {
    write_raw(s, JSON_HEADER, strlen(JSON_HEADER));
    write_mesh_names(s);
  }
  return s;
}

/* What a JSON trace still owes at its end: the DMAs that never ended, the
 * counters carried to a window no record reached, the truncation record. */
static void finish_json(TraceSink *s) {
  for (size_t i = 0; i < s->ndma && !s->cut; i++) {
    Dma *m = &s->dmas[i];
    if (m->ended) continue;
    m->end = s->last_cycle > m->start ? s->last_cycle : m->start;
    dma_slice(s, m, "unfinished");
  }
  if (!s->cut) begin_record(s);
  if (s->cut) {
    char reason[160];
    snprintf(reason, sizeof reason, "the size bound of %" PRIu64 " bytes was reached", s->max_bytes);
    Buf *c = &s->chunk;
    Track *t = track_get(s, s->main_core, s->main_subcore, false);
    int64_t pid = pid_of(s->main_core), tid = tid_of(t, 0);
    char pname[32], tname[96];
    snprintf(pname, sizeof pname, "SC%d", s->main_core);
    thread_name(s, t, 0, tname, sizeof tname);
    c->n = 0; /* its names again: the record that named them may be the one the bound cut */
    fmt(c, ",\n" R_PROCESS_NAME, pid, tid, pname);
    fmt(c, ",\n" R_THREAD_NAME, pid, tid, tname);
    fmt(c, ",\n" R_TRUNCATED, ps_of(s, s->cut_cycle), pid, tid, reason, s->cut_cycle, s->max_bytes, s->st.records,
        s->st.dropped);
    size_t off = s->any_line ? 0 : 1;
    write_raw(s, c->p + off, c->n - off);
  }
  write_raw(s, JSON_FOOTER, strlen(JSON_FOOTER));
}

static void finish_csv(TraceSink *s) {
  if (!s->cut) return;
  char reason[200];
  snprintf(reason, sizeof reason, "the size bound of %" PRIu64 " bytes was reached; %" PRIu64 " events dropped",
           s->max_bytes, s->st.dropped);
  s->chunk.n = 0;
  fmt(&s->chunk, CSV_TRUNCATED, s->cut_cycle, reason);
  write_raw(s, s->chunk.p, s->chunk.n);
}

bool trace_close(TraceSink *s, Diag *d) {
  if (!s) return true;
  if (s->o.format == TRACE_CSV) finish_csv(s);
  else finish_json(s);
  int err = s->io_errno;
  if (err) outfile_abort(s->out);
  else if (!outfile_close(s->out, &err)) s->io_errno = err;
  if (err) io_diag(d, "write", s->path, err);
  sink_free(s);
  return !err;
}

void trace_abort(TraceSink *s) {
  if (!s) return;
  outfile_abort(s->out);
  sink_free(s);
}

void trace_get_stats(const TraceSink *s, TraceStats *st) {
  if (s) *st = s->st;
  else *st = (TraceStats){0};
}
