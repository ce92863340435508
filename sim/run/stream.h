/* sim/run/stream.h -- streaming verification: the engine's and the
 * reference's events compared as soon as both sides have produced them.
 *
 * The two runs execute side by side.  Each memory result (a loaded value,
 * the old value of a swap, the view after a store) goes to the subcore's
 * queue; when the other side has already queued the matching event the two
 * are compared (sim/run/verify.h) and both dropped, so a queue only ever
 * holds the events one side is ahead by.  The engine drives: when it is
 * STREAM_AHEAD events ahead on a subcore it calls the pump (the caller's:
 * run the reference until it catches up), and the reference yields a
 * subcore that is STREAM_AHEAD events ahead of the engine.  Memory is then
 * bounded by the queues, not by the run's length.  Per subcore the first
 * difference and the listed rows are kept apart and merged in subcore order
 * at the end, so the verdict reads as when the whole logs were compared
 * after both runs. */
#ifndef SC_STREAM_H
#define SC_STREAM_H

#include "verify.h"

enum { STREAM_REF = 0, STREAM_ENG = 1 };
/* Events one side may run ahead on a subcore before it waits for the other. */
#define STREAM_AHEAD 256

typedef struct Stream Stream;

/* max_list: the mismatch rows to keep (sc-sim diff), 0 for none. */
Stream *stream_open(const Program *p, int nsub, int max_list);
void stream_free(Stream *st);
/* Makes r's events (run_log) go to the stream as side's. */
void stream_attach(Stream *st, int side, RunResult *r);
/* The engine's catch-up call: run the reference until subcore sub's
 * queue holds no engine event, or until it cannot go on. */
void stream_set_pump(Stream *st, void (*pump)(void *ctx, int sub), void *ctx);
/* The events of side that sub's queue holds (those the other side has not produced yet). */
int stream_queued(const Stream *st, int side, int sub);
/* Whether side is STREAM_AHEAD events or more ahead on sub (it should wait). */
bool stream_ahead(const Stream *st, int side, int sub);
/* How much side's log bytes (RunResult.log_bytes) may grow before side
 * can be STREAM_AHEAD events ahead on sub, when it is not now: each event
 * it queues adds at least sizeof(Event), and matching the other side's
 * queued events adds none.  UINT64_MAX once the other side closed.  A
 * caller asks stream_ahead again only past it. */
uint64_t stream_slack(const Stream *st, int side, int sub);
/* No more events from side (its run ended or faulted). */
void stream_close(Stream *st, int side);
bool stream_closed(const Stream *st, int side);
/* Fetch-and-add number k in the engine's order (SPEC §9.10): 1 with *sub
 * set, 0 while the engine has not run it yet, -1 when it never will. */
int stream_atomic(const Stream *st, int k, int *sub);
/* After both sides closed: the verdict of the logs (false with *d set),
 * counted into *vs (its first difference and list), as verify_runs'. */
bool stream_verdict(Stream *st, Diag *d, VerifyStats *vs);

#endif
