/* sim/chips.h -- the chip presets of SPEC §2, one table.
 *
 * CHIP_PARAMS declares every overridable parameter once: its key in the
 * program's `chip:` mapping (JAX's SparseCoreInfo field names where JAX has
 * one), its unit, and where the value comes from.  CHIPS declares every
 * preset once with its values in CHIP_PARAMS order. */
#ifndef SC_CHIPS_H
#define SC_CHIPS_H

#include <stdbool.h>
#include <stdint.h>

/* X(field, unit, source) */
#define CHIP_PARAMS(X)                                                                           \
  X(num_cores, "SparseCores", "jax/_src/tpu_info.py SparseCoreInfo (SPEC §2)")                 \
  X(num_subcores, "vector subcores per SparseCore", "SparseCoreInfo (SPEC §2)")                \
  X(num_lanes, "32-bit lanes", "SparseCoreInfo (SPEC §2)")                                     \
  X(vmem_capacity_bytes, "bytes per vector subcore", "SparseCoreInfo (SPEC §2)")               \
  X(dma_granule_size_bytes, "bytes", "SparseCoreInfo (SPEC §2)")                               \
  X(smem_capacity_bytes, "bytes per subcore", "assumption: TpuInfo smem_capacity_bytes (SPEC §2 gives no SC value)") \
  X(hbm_bytes_per_second, "bytes/s", "TpuInfo mem_bw_bytes_per_second (SPEC §2), shared by every DMA engine of the chip") \
  X(clock_hz, "Hz", "assumption: 1 GHz (no public SparseCore clock)")                          \
  X(scalar_issue_cycles, "cycles", "assumption: one scalar instruction per cycle")              \
  X(vector_issue_cycles, "cycles per lane group", "assumption: one vector instruction per num_lanes lanes per cycle") \
  X(smem_latency_cycles, "cycles", "assumption: scalar SMEM load-to-use latency")               \
  X(vmem_latency_cycles, "cycles", "assumption: vector VMEM load-to-use latency")               \
  X(vmem_banks, "banks", "assumption: VMEM word-interleaved over 16 banks")                    \
  X(vmem_bank_bytes, "bytes", "assumption: 4-byte bank words")                                 \
  X(bank_conflict_cycles, "cycles per extra access", "assumption: an indexed access serialises lanes that hit one bank") \
  X(dma_setup_cycles, "cycles", "assumption: descriptor issue to first byte")                  \
  X(dma_bytes_per_cycle, "bytes/cycle per engine", "assumption: 64 B/cycle per subcore DMA engine") \
  X(vmem_shared_bytes_per_cycle, "bytes/cycle per SparseCore", "assumption: 256 B/cycle VMEM_SHARED port") \
  X(dma_queue_depth, "DMAs", "assumption: 8 outstanding DMAs per engine; an enqueue beyond stalls") \
  X(xlane_cycles, "cycles", "assumption: a cross-lane gather (tpu.dynamic_gather) takes 2 cycles more than its vector issue") \
  X(xlane_issue_cycles, "cycles per lane group", "assumption: a cross-lane vector op (tpu.scan) takes log2(16) = 4 issue slots per num_lanes lanes")

typedef struct {
#define X(f, u, s) int64_t f;
  CHIP_PARAMS(X)
#undef X
} ChipParams;

typedef enum {
#define X(f, u, s) CP_##f,
  CHIP_PARAMS(X)
#undef X
  CP_COUNT
} ChipParamId;

typedef struct {
  const char *name;        /* preset name in programs: tpu7x */
  const char *device_kind; /* JAX device-kind string: "TPU7x" */
  const char *alias;       /* a second device-kind string, or NULL */
  const char *version;     /* ChipVersion value, printed by C1: 7x */
  bool has_sc;
  ChipParams p;
} Chip;

int chip_count(void);
const Chip *chip_at(int i);
/* Finds a preset by name or device-kind alias; NULL when unknown. */
const Chip *chip_find(const char *name);
const char *chip_param_name(ChipParamId id);
const char *chip_param_unit(ChipParamId id);
const char *chip_param_source(ChipParamId id);
int64_t *chip_param_ptr(ChipParams *p, ChipParamId id);
/* Looks up a parameter by key; false when unknown. */
bool chip_param_lookup(const char *key, ChipParamId *out);

#endif
