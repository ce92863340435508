/* memory/memory.c -- instances, their shadow state and their inits. */
#include "memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAP_THRESHOLD (1u << 20) /* larger regions come from mmap */

/* SPACES, expanded */
static const struct {
  const char *key, *repr, *str;
} spaces[SP_COUNT] = {
#define X(e, k, r, s) [SP_##e] = {k, r, s},
    SPACES(X)
#undef X
};
const char *space_key(Space s) { return spaces[s].key; }
const char *space_repr(Space s) { return spaces[s].repr; }
const char *space_str(Space s) { return spaces[s].str; }

static size_t shadow_size(size_t n) { return (n + 7) / 8; }

static bool alloc_region(Region *r, size_t size) {
  r->size = size;
  size_t n = size ? size : 1, sn = shadow_size(n);
  if (n >= MAP_THRESHOLD) {
    void *b = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *d = mmap(NULL, sn, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (b == MAP_FAILED || d == MAP_FAILED) {
      if (b != MAP_FAILED) munmap(b, n);
      if (d != MAP_FAILED) munmap(d, sn);
      return false;
    }
    r->bytes = b;
    r->defined = d;
    r->mapped = true;
    return true;
  }
  r->bytes = calloc(1, n);
  r->defined = calloc(1, sn);
  return r->bytes && r->defined;
}

static uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Cell mem_random(const RegionSpec *s, int core, int subcore, int64_t i) {
  uint64_t h = splitmix(s->seed);
  h = splitmix(h ^ (uint64_t)(core + 1));
  h = splitmix(h ^ ((uint64_t)(subcore + 1) << 20));
  h = splitmix(h ^ (uint64_t)i);
  double u = (double)(h >> 11) / 9007199254740992.0; /* [0, 1) */
  double v = s->low + u * (s->high - s->low);
  Cell c;
  if (dtype_is_float(s->dtype)) c.f = v;
  else if (s->dtype == DT_BOOL) c.i = u < 0.5 ? 0 : 1;
  else {
    c.i = (int64_t)floor(v);
    return dtype_convert(DT_INT64, s->dtype, c);
  }
  return dtype_fit(s->dtype, c);
}

static const char *const init_words[] = {
#define X(e, word) [INIT_##e] = word,
    INITS(X)
#undef X
};

bool mem_init_word(const char *word, InitKind *out) {
  for (size_t k = 0; k < sizeof init_words / sizeof init_words[0]; k++)
    if (init_words[k] && !strcmp(init_words[k], word)) return *out = (InitKind)k, true;
  return false;
}

/* Element i of an instance that starts from a computed init. */
static Cell init_cell(const Region *r, const RegionSpec *s, int64_t i) {
  switch (s->init) {
  case INIT_IOTA: return dtype_convert(DT_INT64, s->dtype, (Cell){.i = i}); /* integers wrap, floats round */
  case INIT_FILL: return s->fill;
  case INIT_LIST: return s->data[i];
  case INIT_RANDOM: return mem_random(s, r->core, r->subcore, i);
  case INIT_UNDEF: case INIT_ZEROS: case INIT_BYTES: break;
  }
  return (Cell){.i = 0};
}

static void init_region(Region *r, const RegionSpec *s) {
  int sz = dtype_size(s->dtype);
  switch (s->init) {
  case INIT_UNDEF: return; /* the shadow stays 0 */
  case INIT_ZEROS: break;  /* calloc / mmap already zeroed the bytes */
  case INIT_IOTA:
    if (s->dtype == DT_INT32) { /* the commonest: int32 wraps as dtype_convert from int64 does */
      for (int64_t i = 0; i < s->nelems; i++) {
        int32_t w = (int32_t)(uint32_t)i;
        memcpy(r->bytes + 4 * i, &w, 4);
      }
      break;
    }
    /* fall through */
  case INIT_FILL: case INIT_LIST: case INIT_RANDOM:
    for (int64_t i = 0; i < s->nelems; i++) dtype_store(s->dtype, init_cell(r, s, i), r->bytes + i * sz);
    break;
  case INIT_BYTES:
    if (r->size) memcpy(r->bytes, s->bytes, r->size);
    break;
  }
  mem_set_defined(r, 0, (int64_t)r->size, true);
}

static int count_for(InstScope sc, int cores, int subcores) {
  return sc == INST_GLOBAL ? 1 : sc == INST_PER_CORE ? cores : cores * subcores;
}

bool mem_init(MemSystem *m, const RegionSpec *specs, int nrefs, int cores, int subcores) {
  memset(m, 0, sizeof *m);
  m->nrefs = nrefs;
  m->cores = cores;
  m->subcores = subcores;
  m->specs = specs;
  m->inst = calloc((size_t)(nrefs ? nrefs : 1), sizeof *m->inst);
  if (!m->inst) return false;
  for (int r = 0; r < nrefs; r++) {
    int n = count_for(specs[r].scope, cores, subcores);
    m->inst[r] = calloc((size_t)n, sizeof(Region));
    if (!m->inst[r]) return false;
    for (int i = 0; i < n; i++) {
      Region *g = &m->inst[r][i];
      g->dtype = specs[r].dtype;
      g->name = specs[r].name;
      g->core = specs[r].scope == INST_GLOBAL ? -1 : specs[r].scope == INST_PER_CORE ? i : i / subcores;
      g->subcore = specs[r].scope == INST_PER_SUBCORE ? i % subcores : -1;
      if (!alloc_region(g, (size_t)specs[r].nelems * (size_t)dtype_size(specs[r].dtype))) return false;
      init_region(g, &specs[r]);
    }
  }
  return true;
}

void mem_free(MemSystem *m) {
  for (int r = 0; r < m->nrefs && m->inst; r++) {
    if (!m->inst[r]) continue;
    int n = count_for(m->specs[r].scope, m->cores, m->subcores);
    for (int i = 0; i < n; i++) {
      Region *g = &m->inst[r][i];
      if (g->mapped) {
        munmap(g->bytes, g->size);
        munmap(g->defined, shadow_size(g->size));
      } else {
        free(g->bytes);
        free(g->defined);
      }
    }
    free(m->inst[r]);
  }
  free(m->inst);
  m->inst = NULL;
}

int mem_instance_count(const MemSystem *m, int ref) { return count_for(m->specs[ref].scope, m->cores, m->subcores); }
Region *mem_instance(MemSystem *m, int ref, int i) { return &m->inst[ref][i]; }

Region *mem_region(MemSystem *m, int ref, int core, int subcore) {
  switch (m->specs[ref].scope) {
  case INST_GLOBAL: return &m->inst[ref][0];
  case INST_PER_CORE: return &m->inst[ref][core];
  case INST_PER_SUBCORE: return &m->inst[ref][core * m->subcores + subcore];
  }
  return NULL;
}

/* The bits [lo, hi) of one definedness byte (0 <= lo < hi <= 8). */
static uint8_t bits(int lo, int hi) { return (uint8_t)(((1u << (hi - lo)) - 1u) << lo); }

bool mem_range_defined(const Region *g, int64_t off, int64_t n) {
  int64_t end = off + n;
  if (off < end && (off & 7)) { /* a partial first byte */
    int64_t lim = (off | 7) + 1 < end ? (off | 7) + 1 : end;
    uint8_t m = bits((int)(off & 7), (int)(lim - (off & ~7)));
    if ((g->defined[off >> 3] & m) != m) return false;
    off = lim;
  }
  for (; off + 64 <= end; off += 64) { /* eight shadow bytes at a time */
    uint64_t w;
    memcpy(&w, g->defined + (off >> 3), 8);
    if (w != UINT64_MAX) return false;
  }
  for (; off + 8 <= end; off += 8)
    if (g->defined[off >> 3] != 0xff) return false;
  if (off < end) {
    uint8_t m = bits(0, (int)(end - off));
    if ((g->defined[off >> 3] & m) != m) return false;
  }
  return true;
}

void mem_set_defined(Region *g, int64_t off, int64_t n, bool v) {
  int64_t end = off + n;
  if (off < end && (off & 7)) {
    int64_t lim = (off | 7) + 1 < end ? (off | 7) + 1 : end;
    uint8_t m = bits((int)(off & 7), (int)(lim - (off & ~7)));
    g->defined[off >> 3] = v ? (uint8_t)(g->defined[off >> 3] | m) : (uint8_t)(g->defined[off >> 3] & ~m);
    off = lim;
  }
  if (end - off >= 8) {
    memset(g->defined + (off >> 3), v ? 0xff : 0, (size_t)((end - off) >> 3));
    off += (end - off) & ~(int64_t)7;
  }
  if (off < end) {
    uint8_t m = bits(0, (int)(end - off));
    g->defined[off >> 3] = v ? (uint8_t)(g->defined[off >> 3] | m) : (uint8_t)(g->defined[off >> 3] & ~m);
  }
}

void mem_copy_bytes(Region *dst, int64_t doff, const Region *src, int64_t soff, int64_t n) {
  memmove(dst->bytes + doff, src->bytes + soff, (size_t)n);
  if (!((doff | soff | n) & 7)) {
    memmove(dst->defined + (doff >> 3), src->defined + (soff >> 3), (size_t)(n >> 3));
    return;
  }
  for (int64_t b = 0; b < n; b++) {
    bool v = mem_defined(src, soff + b);
    if (v) dst->defined[(doff + b) >> 3] |= (uint8_t)(1u << ((doff + b) & 7));
    else dst->defined[(doff + b) >> 3] &= (uint8_t)~(1u << ((doff + b) & 7));
  }
}
