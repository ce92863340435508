/* traces/trace.h -- the event stream the engine emits, and its writers.
 *
 * The engine describes what happens as TraceEvents (times in cycles); a
 * TraceSink turns them into a file: Chrome trace-event JSON for Perfetto
 * (one event per line) or CSV, streamed to a temporary file that is renamed
 * into place when the sink closes.  The core build never needs SDL: the
 * viewer (traces/viewer_sdl.c) is a program of its own that reads the JSON. */
#ifndef SC_TRACE_H
#define SC_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "../lowering/diag.h"

typedef enum {
  TE_ACCESS,     /* a load/store/swap/gather/scatter on a subcore: [t0, t1) */
  TE_DMA_START,  /* a DMA enqueued (async begin), id = dma id */
  TE_DMA_END,    /* its last byte landed (async end) */
  TE_DMA_WAIT,   /* the wait that retired DMA `id` completed at t0 (flow end) */
  TE_SEMAPHORE,  /* counter: semaphore `ref` of (core, subcore) now holds `value` */
  TE_INFLIGHT,   /* counter: bytes in flight to/from memory space `space` */
  TE_BARRIER,    /* a subcore waited at a barrier over [t0, t1) */
  TE_STALL       /* a subcore stalled on a DMA wait or semaphore over [t0, t1) */
} TraceKind;

/* What the writers read of each kind (every kind: kind, core, subcore, op,
 * line, col; strings may be NULL).  Times are cycles, t1 >= t0.
 *   TE_ACCESS     t0, t1, space, ref, offset (the lowest byte touched, into
 *                 the ref instance), bytes (lanes x element size), old_text,
 *                 new_text, spans/nspans (gathers, scatters, strided views)
 *   TE_DMA_START  t0; dma (unique among the DMAs in flight on that core);
 *                 src_space, src_ref, dst_space, dst_ref, bytes;
 *                 subcore = the subcore whose DMA engine runs it
 *   TE_DMA_END    max(t0, t1); core, dma (the rest is taken from the start)
 *   TE_DMA_WAIT   t0 (and t1 when the wait is an interval); core, dma;
 *                 subcore = the subcore that waited; line, col: the wait's
 *   TE_SEMAPHORE  t0, ref, value
 *   TE_INFLIGHT   t0, space, value (bytes); core < 0: chip-wide
 *   TE_BARRIER, TE_STALL  t0, t1, line, col: the instruction that waited
 *                 (ref: what it waited on, optional) */
typedef struct {
  TraceKind kind;
  uint64_t t0, t1;     /* cycles */
  int core, subcore;   /* the subcore (or the DMA engine's subcore) */
  int dma;             /* DMA id (TE_DMA_*), -1 otherwise */
  const char *op;      /* instruction mnemonic or operation key */
  const char *space;   /* memory space key: hbm, vmem, ... */
  const char *ref;     /* ref name */
  int64_t offset;      /* byte offset in the instance */
  int64_t bytes;
  const char *src_space, *dst_space, *src_ref, *dst_ref; /* DMAs */
  const char *old_text, *new_text; /* values, already truncated */
  int64_t value;       /* counters */
  int line, col;       /* program location */
  /* Additions (keep the fields above first): */
  const int64_t *spans; /* TE_ACCESS: nspans (offset, bytes) pairs, sorted and merged, */
  int64_t nspans;       /* the bytes touched; NULL: the one run [offset, offset + bytes) */
} TraceEvent;

typedef enum { TRACE_CHROME_JSON, TRACE_CSV } TraceFormat;

typedef struct {
  TraceFormat format;
  double clock_hz;          /* cycles -> microseconds for ts */
  uint64_t window_start, window_end; /* cycles; end 0: unbounded */
  int filter_core, filter_subcore;   /* -1: all */
  const char *filter_space, *filter_ref, *filter_op; /* NULL: all */
  uint64_t max_bytes;       /* size bound; 0: the default */
  const char *program_name;
  int cores, subcores;      /* the mesh, for process/thread names */
  /* Additions (keep the fields above first; zero means "default"): */
  bool scalar_subcore;      /* a scalar_subcore kernel: subcore threads are "scalar" */
} TraceOptions;

#define TRACE_DEFAULT_MAX_BYTES (256ull << 20) /* 256 MiB: chrome://tracing's limit */
#define TRACE_DEFAULT_CLOCK_HZ 1e9             /* 1 cycle = 1 ns when clock_hz is 0 */

/* Fills *o with the defaults: Chrome JSON, clock 0 (1 GHz), no window, no
 * filters (filter_core = filter_subcore = -1), the default size bound.  A
 * zeroed TraceOptions is NOT the default: its filters select core 0,
 * subcore 0. */
void trace_options_init(TraceOptions *o);

typedef struct TraceSink TraceSink;

/* Opens a sink writing to a temporary file beside `path`; NULL with *d set
 * when the file cannot be created. */
TraceSink *trace_open(const char *path, const TraceOptions *opt, Diag *d);
/* Writes (or filters out) one event.  s may be NULL (no trace): nothing
 * happens.  The strings of *e are read during the call only. */
void trace_event(TraceSink *s, const TraceEvent *e);
/* The run stopped at `cycle`: DMAs still in flight end there ("unfinished")
 * when the trace closes.  fault (NULL for a run that ended normally) names
 * the fault kind; then a global instant "run stopped" at that cycle says
 * why (message) and where (line, col). */
void trace_stop(TraceSink *s, uint64_t cycle, const char *fault, const char *message, int line, int col);
/* Finishes the file (a valid document even when the size bound cut it) and
 * renames it into place; false with *d set on an I/O error (then nothing is
 * left at `path`).  Frees the sink. */
bool trace_close(TraceSink *s, Diag *d);
/* Drops the sink and its temporary file (the run failed before the end). */
void trace_abort(TraceSink *s);

typedef struct {
  uint64_t events;    /* trace_event calls */
  uint64_t records;   /* event records written (metadata lines not counted) */
  uint64_t filtered;  /* events left out by the window or a filter */
  uint64_t dropped;   /* events lost to the size bound (or to > 32 overlapping slices) */
  uint64_t bytes;     /* bytes written so far */
  bool truncated;     /* the size bound was reached */
} TraceStats;

/* The sink's counters so far (for --stats, the bench and tests). */
void trace_get_stats(const TraceSink *s, TraceStats *st);

#endif
