/* memory/dma.h -- the DMA engines' timing: one engine per subcore, each a
 * FIFO serving one transfer at a time; engines run concurrently and share
 * the chip's HBM bandwidth and each SparseCore's VMEM_SHARED port.
 *
 * The model is a fluid one: at any moment every active transfer moves at
 * min(engine rate, its fair share of each shared port it uses); rates are
 * recomputed whenever a transfer starts or finishes.  Times are cycles. */
#ifndef SC_DMA_H
#define SC_DMA_H

#include <stdbool.h>
#include <stdint.h>

#define DMA_NEVER UINT64_MAX

typedef struct {
  int engine;        /* the issuing subcore's engine */
  int core;          /* its SparseCore (for the VMEM_SHARED port) */
  bool hbm, shared;  /* which shared ports the transfer uses */
  double bytes;      /* bytes moved, granule-rounded by the caller */
  uint64_t t;        /* enqueue cycle */
  int tag;           /* the caller's id, returned on completion */
  /* Nothing samples the bytes in flight (no trace): the end of its setup
   * need not be an event of its own, and dma_next_event may answer a
   * lone transfer's completion at once (the same cycle and figures). */
  bool quiet;
} DmaReq;

typedef struct {
  uint64_t transfers, bytes;
  double busy_cycles;       /* time with a transfer active (moving bytes) */
  /* Of the transfers that landed, each one's enqueue to last byte split in
   * three: setup (enqueue + setup), waiting for the engine behind earlier
   * transfers after its setup (queue), moving (transfer, = busy_cycles
   * once all landed); their sum is the integral over time of the queued +
   * active transfers, counted from each one's enqueue. */
  double setup_cycles, queue_cycles, transfer_cycles;
  double occupancy_integral;
  uint64_t max_queue;
} DmaEngineStats;

typedef struct DmaModel DmaModel;

DmaModel *dma_new(int engines, int cores, double engine_bpc, double hbm_bpc, double shared_bpc, uint64_t setup);
void dma_free(DmaModel *m);
void dma_submit(DmaModel *m, const DmaReq *r);
/* The next cycle at which a transfer completes or a setup ends (DMA_NEVER
 * when idle); a lone quiet transfer's setup end is passed over. */
uint64_t dma_next_event(DmaModel *m);
/* Advances the model to cycle t; writes the tags of transfers completed by
 * then (at most max) and returns how many. */
int dma_advance(DmaModel *m, uint64_t t, int *tags, int max);
int dma_outstanding(const DmaModel *m, int engine);
const DmaEngineStats *dma_stats(const DmaModel *m, int engine);
/* Bytes moving at cycle `now` through HBM (space 0) or VMEM_SHARED (1). */
double dma_inflight_bytes(const DmaModel *m, int space);
/* Bytes moving at cycle `now` through SparseCore `core`'s VMEM_SHARED port. */
double dma_inflight_shared(const DmaModel *m, int core);

#endif
