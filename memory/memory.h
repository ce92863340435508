/* memory/memory.h -- the memory spaces of one chip as a table of regions.
 *
 * Each ref of a program has one instance per place that holds it (SPEC
 * §1.3, PROGRAM_FORMAT.md "Refs"): hbm once, vmem_shared once per
 * SparseCore, vmem, smem and semaphores once per subcore.  An instance is a
 * Region: its bytes and a shadow byte per byte saying whether it holds a
 * defined value (SPEC §7.9, §9.1).  Large regions are reserved with mmap
 * and no swap reservation, so a multi-gigabyte HBM ref costs only the pages
 * a kernel touches; the shadow is a bitmap (an eighth of the bytes). */
#ifndef SC_MEMORY_H
#define SC_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

/* X(ENUM, program key, repr (!r), str) -- SPEC §0.3 */
#define SPACES(X)                                   \
  X(HBM, "hbm", "HBM", "hbm")                       \
  X(VMEM, "vmem", "VMEM", "vmem")                   \
  X(VMEM_SHARED, "vmem_shared", "VMEM_SHARED", "vmem_shared") \
  X(SMEM, "smem", "SMEM", "smem")                   \
  X(SEMAPHORE, "semaphore", "SEMAPHORE", "semaphore_mem")

typedef enum {
#define X(e, k, r, s) SP_##e,
  SPACES(X)
#undef X
  SP_COUNT
} Space;
const char *space_key(Space s);
const char *space_repr(Space s);
const char *space_str(Space s);

typedef enum { INST_GLOBAL, INST_PER_CORE, INST_PER_SUBCORE } InstScope;

/* How an instance starts (PROGRAM_FORMAT.md "Refs", `init`).
 * X(ENUM, the word that selects it in a program, or NULL) */
#define INITS(X)         \
  X(UNDEF, NULL)         \
  X(ZEROS, "zeros")      \
  X(IOTA, "iota")        \
  X(FILL, NULL)          \
  X(LIST, NULL)          \
  X(RANDOM, NULL)         /* the map {random: SEED, low: A, high: B} */ \
  X(BYTES, NULL)  /* the map {npy: PATH}: the file's little-endian elements */

typedef enum {
#define X(e, word) INIT_##e,
  INITS(X)
#undef X
} InitKind;
/* The init a word selects ("zeros", "iota"); false for any other word. */
bool mem_init_word(const char *word, InitKind *out);

/* What memory/ needs to know of a ref. */
typedef struct {
  const char *name;
  InstScope scope;
  Dtype dtype;
  int64_t nelems;
  InitKind init;
  Cell fill;           /* INIT_FILL */
  const Cell *data;    /* INIT_LIST: nelems cells */
  uint64_t seed;       /* INIT_RANDOM */
  double low, high;    /* INIT_RANDOM */
  const uint8_t *bytes; /* INIT_BYTES: nelems little-endian elements (an .npy file's data) */
} RegionSpec;

typedef struct {
  uint8_t *bytes;
  uint8_t *defined;    /* bitmap: bit b set where byte b holds a defined value */
  size_t size;         /* bytes */
  bool mapped;
  Dtype dtype;
  const char *name;
  int core, subcore;   /* -1 where the scope does not have them */
} Region;

typedef struct {
  int nrefs, cores, subcores;
  const RegionSpec *specs;
  Region **inst;       /* inst[ref]: array of instances */
} MemSystem;

static inline bool mem_defined(const Region *g, int64_t off) { return (g->defined[off >> 3] >> (off & 7)) & 1; }
/* Whether bytes [off, off + n) are all defined. */
bool mem_range_defined(const Region *g, int64_t off, int64_t n);
void mem_set_defined(Region *g, int64_t off, int64_t n, bool v);
/* Copies n bytes and their shadow from src at soff to dst at doff. */
void mem_copy_bytes(Region *dst, int64_t doff, const Region *src, int64_t soff, int64_t n);

/* Builds every instance and applies the inits; false on allocation failure. */
bool mem_init(MemSystem *m, const RegionSpec *specs, int nrefs, int cores, int subcores);
void mem_free(MemSystem *m);
/* The instance of `ref` seen by subcore (core, subcore). */
Region *mem_region(MemSystem *m, int ref, int core, int subcore);
int mem_instance_count(const MemSystem *m, int ref);
Region *mem_instance(MemSystem *m, int ref, int i);
/* The documented generator of `init: {random: SEED, low: A, high: B}`
 * (A = 0, B = 100 when left out).  With splitmix64 sm(x) (x += 0x9e3779b97f4a7c15;
 * x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9; x = (x ^ x >> 27) * 0x94d049bb133111eb;
 * x ^ x >> 31, all mod 2^64) and the instance's core and subcore (-1 where
 * the ref's scope has none: an hbm ref has neither), element i is
 *   h = sm(sm(sm(sm(SEED) ^ (core + 1)) ^ ((subcore + 1) << 20)) ^ i)
 *   u = (h >> 11) / 2^53 (in [0, 1)),  v = A + u * (B - A) (doubles)
 * and then: floats v rounded to the dtype (nearest even); bool u >= 0.5;
 * integers floor(v), wrapped to the dtype.  tests/golden/init/gen.py
 * computes it independently. */
Cell mem_random(const RegionSpec *s, int core, int subcore, int64_t i);

#endif
