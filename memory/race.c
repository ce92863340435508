/* memory/race.c -- vector clocks, and the shadow: per byte the last write
 * and the reads since, checked and updated a run of equal states at a time.
 *
 * A shadow page covers PAGE bytes of one region: one state for all of them
 * while single accesses cover the page whole, else the state of each
 * 4-byte unit (the last write's access tag and the reads since: one tag
 * inline, or a read set that runs of units share), or of each byte once an
 * access covers part of a unit (int8, int16 and bool elements, packed
 * dtypes) or a race is found in it, so the detector stays exact per byte.
 * A write-write race that stores the same bytes is benign: the bytes the
 * last write left are the region's own until a write that may race with
 * it is about to overwrite them, when race_pre keeps a copy in the page.
 * An access
 * walks its bytes as runs of one state: a run whose state does not
 * conflict with the access is updated in one step, tags and sets counted
 * once per run (in bytes); only a conflicting run is walked byte by byte,
 * in the order and with the reports the per-byte detector gave. */
#include "race.h"

#include <stdlib.h>
#include <string.h>

#define PAGE 4096
#define READSET 0x80000000u /* the reads of a state: READSET | index of a read set */
#define OPEN (1ULL << 63)   /* acc_refs: the access's instruction still runs */

/* A byte's state: the last write's tag (low half, 0 none) and its reads
 * (high half: a read tag, READSET | a read set, 0 none).  Bytes of equal
 * state race alike. */
typedef uint64_t Shadow;
static uint32_t st_w(Shadow s) { return (uint32_t)s; }
static uint32_t st_r(Shadow s) { return (uint32_t)(s >> 32); }
static Shadow st_make(uint32_t w, uint32_t r) { return (uint64_t)r << 32 | w; }

#define UNIT 4 /* bytes per state in a page of units */

/* A page is uniform (st NULL: every byte in state `one`, as a new page and
 * one a single access covered whole), or holds a state per unit or per
 * byte.  Its values (val, def) are kept only once a write may race with
 * the one before it (race_pre); until then the region's bytes are what the
 * last writes left. */
typedef struct {
  Shadow *st;   /* PAGE >> shift states, or NULL */
  Shadow one;   /* the state of every byte when st is NULL */
  int shift;    /* with st: 2, a state per unit; 0, a state per byte */
  uint8_t *val; /* PAGE bytes the last write left, or NULL */
  uint8_t *def; /* which of them it left defined (a bitmap, as the region's) */
} Page;
#define SIZE_VALS (PAGE + PAGE / 8)

typedef struct {
  const Region *g;
  int64_t page;
  Page *pg;
} PageEntry;
#define PAGE_CACHE_BITS 6

/* The reads since a write, as an antichain (a read ordered before a newer
 * one is dropped), shared by the bytes whose state names it. */
typedef struct {
  uint32_t *v;
  int n, cap;
  uint64_t refs; /* the bytes whose state names the set (a unit's state: 4); free at 0 */
} TagSet;

typedef struct {
  int issuer;
  uint32_t *start_vc; /* the issuer's clock when it started */
  uint32_t wait_clock; /* 0 until a wait retires it */
  int refs;            /* 1 until retired, plus the live accesses it made; free at 0 */
} DmaThread;

/* A span a solo DMA accessed, whose shadow record waits (see defer). */
typedef struct {
  uint32_t tag;
  const Region *g;
  int64_t off, n;
} Deferred;
#define MAX_DEFERRED 64

/* A solo DMA's access, not yet a record: its tag is VIRTUAL | its index
 * here, and the record is made (real) only if the DMA stops being solo
 * (see defer). */
typedef struct {
  RaceAccess a;
  int sub;
  uint32_t real; /* the record made for it by settle, 0 before */
} Virtual;
#define MAX_VIRTUAL (2 * MAX_DEFERRED)
#define VIRTUAL 0x80000000u

/* A run of equal states race_span_clean found: bytes [i, j) of pg, the
 * page at offset base of its region. */
typedef struct {
  Page *pg;
  int64_t i, j, base;
} Run;
#define MAX_RUNS 8

/* The runs of the span race_span_clean last found clean, so that
 * race_span_record of the same span records them without a second walk;
 * any change to a page's states in between (record, page_states,
 * page_uniform) forgets them. */
typedef struct {
  bool ok;
  uint32_t tag;
  const Region *g;
  int64_t off, n;
  int nrun;
  Run run[MAX_RUNS];
} Memo;

struct RaceDetector {
  RaceHot h;           /* first: race.h's inline tests read it (nsub, live, nopen, over) */
  uint32_t *vc;        /* nsub x nsub */
  RaceAccess *acc;     /* access table, tag = index + 1 */
  uint32_t *acc_clock; /* the thread clock at the access */
  int *acc_thread;     /* the subcore index of the access's thread */
  uint64_t *acc_refs;  /* references to the access (shadow bytes, read sets); the record is free at 0 once closed */
  int nacc, capacc;
  uint32_t *free_acc;  /* recycled tags */
  int nfree_acc, capfree_acc;
  uint32_t *open;      /* tags of the instruction running (race_done closes them) */
  int capopen;         /* (h.nopen: how many are open) */
  DmaThread *dma;
  int ndma, capdma;
  int *free_dma;       /* recycled DMA threads */
  int nfree_dma, capfree_dma;
  uint64_t shadow_bytes, max_shadow; /* the shadow pages' size, and its bound (0: none) */
  PageEntry page_cache[1 << PAGE_CACHE_BITS]; /* pages found lately, direct-mapped (pages live until race_free) */
  uint32_t *slots;     /* synchronisation objects: a vector clock each */
  int nslots, capslots;
  uint32_t *barrier;   /* 2 generations x nsub x nsub arrival clocks */
  PageEntry *pages;    /* open-addressing hash of shadow pages */
  int64_t npages, cappages;
  TagSet *sets;
  int nsets, capsets;
  int *free_sets;      /* recycled read sets */
  int nfree_sets, capfree_sets;
  RaceReport *benign;  /* benign races not yet taken (race_benign_next) */
  int nbenign, capbenign, takenbenign;
  uint64_t *pairs;     /* the pairs of operations already reported benign */
  int npairs, cappairs;
  int solo;            /* the DMA thread whose records wait in `deferred` (see defer), or -1 */
  Deferred deferred[MAX_DEFERRED];
  int ndeferred;
  Virtual virt[MAX_VIRTUAL]; /* the accesses of the solo DMA (or of the last one) */
  int nvirt;
  Memo memo;
};

/* A solo DMA's deferred records (see defer, below). */
static void settle(RaceDetector *r);
static void drop_deferred(RaceDetector *r);

static void *resize(void *p, int n, size_t size) {
  void *q = realloc(p, size * (size_t)n);
  if (!q) abort();
  return q;
}

static void *grow_to(void *p, int *cap, int need, size_t size) {
  int c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *q = realloc(p, size * (size_t)c);
  if (!q) abort();
  memset((char *)q + size * (size_t)*cap, 0, size * (size_t)(c - *cap));
  *cap = c;
  return q;
}

/* p with room for `need` elements; the test inline, as almost every call
 * (one per access, record or list push) finds the room there already. */
static inline void *grow(void *p, int *cap, int need, size_t size) { return need <= *cap ? p : grow_to(p, cap, need, size); }

RaceDetector *race_new(int nsub, uint64_t max_shadow) {
  RaceDetector *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->h.nsub = nsub;
  r->max_shadow = max_shadow;
  r->vc = calloc((size_t)nsub * (size_t)nsub, sizeof(uint32_t));
  r->barrier = calloc(2 * (size_t)nsub * (size_t)nsub, sizeof(uint32_t));
  if (!r->vc || !r->barrier) {
    race_free(r);
    return NULL;
  }
  for (int i = 0; i < nsub; i++) r->vc[i * nsub + i] = 1;
  r->solo = -1;
  return r;
}

void race_free(RaceDetector *r) {
  if (!r) return;
  for (int i = 0; i < r->ndma; i++) free(r->dma[i].start_vc);
  for (int i = 0; i < r->nsets; i++) free(r->sets[i].v);
  for (int64_t i = 0; i < r->cappages; i++)
    if (r->pages && r->pages[i].pg) free(r->pages[i].pg->st), free(r->pages[i].pg->val), free(r->pages[i].pg);
  free(r->pages);
  free(r->benign);
  free(r->pairs);
  free(r->sets);
  free(r->free_sets);
  free(r->dma);
  free(r->slots);
  free(r->acc);
  free(r->acc_clock);
  free(r->acc_thread);
  free(r->acc_refs);
  free(r->free_acc);
  free(r->open);
  free(r->free_dma);
  free(r->barrier);
  free(r->vc);
  free(r);
}

static uint32_t *vc_of(RaceDetector *r, int sub) { return r->vc + (size_t)sub * (size_t)r->h.nsub; }
static void tick(RaceDetector *r, int sub) { vc_of(r, sub)[sub]++; }
static void join(uint32_t *dst, const uint32_t *src, int n) {
  for (int i = 0; i < n; i++)
    if (src[i] > dst[i]) dst[i] = src[i];
}

int race_dma_start(RaceDetector *r, int sub) {
  if (!r) return -1;
  settle(r);
  int k;
  if (r->nfree_dma) k = r->free_dma[--r->nfree_dma];
  else {
    r->dma = grow(r->dma, &r->capdma, r->ndma + 1, sizeof *r->dma);
    k = r->ndma++;
    r->dma[k].start_vc = malloc(sizeof(uint32_t) * (size_t)r->h.nsub);
    if (!r->dma[k].start_vc) abort();
  }
  DmaThread *d = &r->dma[k];
  d->issuer = sub;
  memcpy(d->start_vc, vc_of(r, sub), sizeof(uint32_t) * (size_t)r->h.nsub);
  d->wait_clock = 0;
  d->refs = 1;
  tick(r, sub);
  if (r->h.nsub == 1 && !r->h.live) r->solo = k, r->nvirt = 0; /* the only thread besides its issuer (see defer) */
  r->h.live++;
  return k;
}

/* A DMA thread no access names and no wait will retire is free for reuse. */
static void dma_unref(RaceDetector *r, int dma) {
  if (--r->dma[dma].refs) return;
  r->free_dma = grow(r->free_dma, &r->capfree_dma, r->nfree_dma + 1, sizeof *r->free_dma);
  r->free_dma[r->nfree_dma++] = dma;
}

void race_dma_retire(RaceDetector *r, int dma, int sub) {
  if (!r || dma < 0) return;
  if (r->solo == dma) drop_deferred(r);
  else settle(r);
  r->h.live--;
  tick(r, sub);
  r->dma[dma].wait_clock = vc_of(r, sub)[sub];
  dma_unref(r, dma);
}

int race_slot(RaceDetector *r) {
  if (!r) return 0;
  settle(r);
  r->slots = grow(r->slots, &r->capslots, (r->nslots + 1) * r->h.nsub, sizeof(uint32_t));
  return r->nslots++;
}

void race_release(RaceDetector *r, int sub, int slot) {
  if (!r) return;
  settle(r);
  join(r->slots + (size_t)slot * (size_t)r->h.nsub, vc_of(r, sub), r->h.nsub);
  tick(r, sub);
}

void race_acquire(RaceDetector *r, int sub, int slot) {
  if (r) settle(r);
  if (r) join(vc_of(r, sub), r->slots + (size_t)slot * (size_t)r->h.nsub, r->h.nsub);
}

void race_barrier_arrive(RaceDetector *r, int sub, int gen) {
  if (!r) return;
  settle(r);
  uint32_t *a = r->barrier + ((size_t)(gen & 1) * (size_t)r->h.nsub + (size_t)sub) * (size_t)r->h.nsub;
  memcpy(a, vc_of(r, sub), sizeof(uint32_t) * (size_t)r->h.nsub);
  tick(r, sub);
}

void race_barrier_leave(RaceDetector *r, int sub, int gen, int first, int n) {
  if (!r) return;
  settle(r);
  for (int k = first; k < first + n; k++)
    join(vc_of(r, sub), r->barrier + ((size_t)(gen & 1) * (size_t)r->h.nsub + (size_t)k) * (size_t)r->h.nsub, r->h.nsub);
}

/* Does access `tag` happen before the current point of thread (sub, dma)? */
static bool before(const RaceDetector *r, uint32_t tag, int sub, int dma) {
  const RaceAccess *a = &r->acc[tag - 1];
  const uint32_t *vc = dma >= 0 ? r->dma[dma].start_vc : r->vc + (size_t)sub * (size_t)r->h.nsub;
  if (a->dma >= 0) {
    if (a->dma == dma) return true; /* one DMA's own accesses */
    const DmaThread *d = &r->dma[a->dma];
    return d->wait_clock && vc[d->issuer] >= d->wait_clock;
  }
  return r->acc_clock[tag - 1] <= vc[r->acc_thread[tag - 1]];
}

static bool conflict(const RaceDetector *r, uint32_t tag, const RaceAccess *now, int sub) {
  const RaceAccess *a = &r->acc[tag - 1];
  if (!(a->write || now->write)) return false;
  if (a->atomic && now->atomic) return false;
  return !before(r, tag, sub, now->dma);
}

/* An access record lives while a shadow entry names it or its
 * instruction runs; then its tag is reused, so that the records are
 * bounded by the shadow, not by the run's length. */
static void tag_free(RaceDetector *r, uint32_t tag) {
  if (r->acc[tag - 1].dma >= 0) dma_unref(r, r->acc[tag - 1].dma);
  r->acc[tag - 1].op = -2; /* free */
  r->free_acc = grow(r->free_acc, &r->capfree_acc, r->nfree_acc + 1, sizeof *r->free_acc);
  r->free_acc[r->nfree_acc++] = tag;
}

static void tag_ref(RaceDetector *r, uint32_t tag, uint64_t n) { r->acc_refs[tag - 1] += n; }
/* n references drop; an unreferenced closed record is freed (an open one
 * waits for race_done). */
static void tag_unref(RaceDetector *r, uint32_t tag, uint64_t n) {
  if (!(r->acc_refs[tag - 1] -= n)) tag_free(r, tag);
}

static uint32_t new_tag(RaceDetector *r, const RaceAccess *a, int sub) {
  uint32_t t;
  if (r->nfree_acc) t = r->free_acc[--r->nfree_acc] - 1;
  else {
    if (r->nacc == r->capacc) { /* doubled as grow does; a record is written whole when taken, so no zeroing */
      int cap = r->capacc ? 2 * r->capacc : 64;
      r->acc = resize(r->acc, cap, sizeof *r->acc);
      r->acc_clock = resize(r->acc_clock, cap, sizeof *r->acc_clock);
      r->acc_refs = resize(r->acc_refs, cap, sizeof *r->acc_refs);
      r->acc_thread = resize(r->acc_thread, cap, sizeof *r->acc_thread);
      r->capacc = cap;
    }
    t = (uint32_t)r->nacc++;
  }
  r->acc[t] = *a;
  r->acc_thread[t] = sub;
  r->acc_clock[t] = a->dma >= 0 ? 0 : vc_of(r, sub)[sub];
  r->acc_refs[t] = OPEN;
  if (a->dma >= 0) r->dma[a->dma].refs++;
  r->open = grow(r->open, &r->capopen, r->h.nopen + 1, sizeof *r->open);
  r->open[r->h.nopen++] = t + 1;
  return t + 1;
}

void race_close(RaceDetector *r) {
  for (int i = 0; i < r->h.nopen; i++) {
    uint32_t t = r->open[i];
    if (!(r->acc_refs[t - 1] &= ~OPEN)) tag_free(r, t);
  }
  r->h.nopen = 0;
}

/* ---- shadow pages ---------------------------------------------------------- */

static uint64_t page_hash(const Region *g, int64_t page) { return ((uint64_t)(uintptr_t)g * 31u + (uint64_t)page) * 0x9e3779b97f4a7c15ULL; }

static void pages_rehash(RaceDetector *r) {
  int64_t cap = r->cappages ? r->cappages * 2 : 256;
  PageEntry *t = calloc((size_t)cap, sizeof *t);
  if (!t) abort();
  for (int64_t i = 0; i < r->cappages; i++) {
    if (!r->pages[i].pg) continue;
    int64_t k = (int64_t)(page_hash(r->pages[i].g, r->pages[i].page) % (uint64_t)cap);
    while (t[k].pg) k = (k + 1) % cap;
    t[k] = r->pages[i];
  }
  free(r->pages);
  r->pages = t;
  r->cappages = cap;
}

/* Whether n more bytes of shadow fit under the bound (then they count). */
static bool shadow_take(RaceDetector *r, uint64_t n) {
  if (r->max_shadow && r->shadow_bytes + n > r->max_shadow) return r->h.over = true, false;
  r->shadow_bytes += n;
  return true;
}

/* The shadow page of g's page `page`, made (all bytes unaccessed) when new;
 * NULL past the shadow's bound. */
static Page *page_find(RaceDetector *r, const Region *g, int64_t page) {
  if (r->npages * 2 >= r->cappages) pages_rehash(r);
  int64_t k = (int64_t)(page_hash(g, page) % (uint64_t)r->cappages);
  while (r->pages[k].pg && !(r->pages[k].g == g && r->pages[k].page == page)) k = (k + 1) % r->cappages;
  if (!r->pages[k].pg) {
    Page *pg = shadow_take(r, sizeof *pg) ? calloc(1, sizeof *pg) : NULL;
    if (!pg) return r->h.over = true, NULL;
    r->pages[k] = (PageEntry){g, page, pg};
    r->npages++;
  }
  return r->pages[k].pg;
}

static Page *page_of(RaceDetector *r, const Region *g, int64_t page) {
  PageEntry *c = &r->page_cache[page_hash(g, page) >> (64 - PAGE_CACHE_BITS)]; /* a multiplicative hash: its high bits */
  if (c->pg && c->g == g && c->page == page) return c->pg;
  Page *pg = page_find(r, g, page);
  if (pg) *c = (PageEntry){g, page, pg};
  return pg;
}

/* Copies n bits from bit s0 of s to bit d0 of d (d0 and s0 equal modulo 8). */
static void bits_copy(uint8_t *d, int64_t d0, const uint8_t *s, int64_t s0, int64_t n) {
  for (; n > 0 && (d0 & 7); d0++, s0++, n--) d[d0 >> 3] = (uint8_t)((d[d0 >> 3] & ~(1u << (d0 & 7))) | (s[s0 >> 3] & (1u << (s0 & 7))));
  memcpy(d + (d0 >> 3), s + (s0 >> 3), (size_t)(n >> 3));
  d0 += n & ~7, s0 += n & ~7, n &= 7;
  for (; n > 0; d0++, s0++, n--) d[d0 >> 3] = (uint8_t)((d[d0 >> 3] & ~(1u << (d0 & 7))) | (s[s0 >> 3] & (1u << (s0 & 7))));
}

static uint64_t states_size(const Page *pg) { return pg->st ? (uint64_t)(PAGE >> pg->shift) * sizeof(Shadow) : 0; }

/* pg takes a state per 1 << shift bytes (each byte keeps its state: the
 * counts, kept in bytes, do not change); false past the shadow's bound. */
static bool page_states(RaceDetector *r, Page *pg, int shift) {
  uint64_t n = PAGE >> shift;
  r->memo.ok = false;
  if (!shadow_take(r, n * sizeof(Shadow))) return false;
  Shadow *st = malloc(n * sizeof *st);
  if (!st) return r->h.over = true, false;
  for (uint64_t k = 0; k < n; k++) st[k] = pg->st ? pg->st[(k << shift) >> pg->shift] : pg->one;
  r->shadow_bytes -= states_size(pg);
  free(pg->st);
  pg->st = st;
  pg->shift = shift;
  return true;
}

/* Bytes [i, stop) of pg as whole states: a uniform page takes states per
 * unit when they are not the whole page, and a page of units a state per
 * byte when they cover part of a unit. */
static bool page_fit(RaceDetector *r, Page *pg, int64_t i, int64_t stop) {
  bool units = !((i | stop) & (UNIT - 1));
  if (!pg->st) return (i == 0 && stop == PAGE) || page_states(r, pg, units ? 2 : 0);
  return !pg->shift || units || page_states(r, pg, 0);
}

static Shadow state_at(const Page *pg, int64_t i) { return pg->st ? pg->st[i >> pg->shift] : pg->one; }

/* The state of the whole page is `now`: the page is uniform again. */
static void page_uniform(RaceDetector *r, Page *pg, Shadow now) {
  r->memo.ok = false;
  r->shadow_bytes -= states_size(pg);
  free(pg->st);
  pg->st = NULL;
  pg->one = now;
}

/* pg (at offset base of g) keeps its values from now on: the region's bytes
 * are what the last writes left until the store about to come. */
static bool page_values(RaceDetector *r, Page *pg, const Region *g, int64_t base) {
  if (pg->val) return true;
  if (!shadow_take(r, SIZE_VALS)) return false;
  pg->val = calloc(1, SIZE_VALS);
  if (!pg->val) return r->h.over = true, false;
  pg->def = pg->val + PAGE;
  int64_t n = (int64_t)g->size - base < PAGE ? (int64_t)g->size - base : PAGE;
  memcpy(pg->val, g->bytes + base, (size_t)n);
  bits_copy(pg->def, 0, g->defined, base, n);
  return true;
}

/* A write over the whole page: the region's bytes are all its own. */
static void page_drop_values(RaceDetector *r, Page *pg) {
  if (!pg->val) return;
  free(pg->val);
  pg->val = pg->def = NULL;
  r->shadow_bytes -= SIZE_VALS;
}

/* ---- reads ----------------------------------------------------------------- */

/* The reads of a state, as a list of tags. */
static int reads_of(const RaceDetector *r, uint32_t rd, const uint32_t **out, uint32_t *one) {
  if (!rd) return 0;
  if (!(rd & READSET)) {
    *one = rd;
    *out = one;
    return 1;
  }
  const TagSet *t = &r->sets[rd & ~READSET];
  *out = t->v;
  return t->n;
}

static int set_new(RaceDetector *r) {
  if (r->nfree_sets) return r->free_sets[--r->nfree_sets];
  r->sets = grow(r->sets, &r->capsets, r->nsets + 1, sizeof *r->sets);
  return r->nsets++;
}

static void set_put(RaceDetector *r, TagSet *t, uint32_t tag) {
  t->v = grow(t->v, &t->cap, t->n + 1, sizeof *t->v);
  t->v[t->n++] = tag;
  tag_ref(r, tag, 1);
}

/* n bytes stop naming the reads rd. */
static void reads_unref(RaceDetector *r, uint32_t rd, uint64_t n) {
  if (!rd) return;
  if (!(rd & READSET)) {
    tag_unref(r, rd, n);
    return;
  }
  int k = (int)(rd & ~READSET);
  if ((r->sets[k].refs -= n)) return;
  for (int i = 0; i < r->sets[k].n; i++) tag_unref(r, r->sets[k].v[i], 1);
  r->sets[k].n = 0;
  r->free_sets = grow(r->free_sets, &r->capfree_sets, r->nfree_sets + 1, sizeof *r->free_sets);
  r->free_sets[r->nfree_sets++] = k;
}

/* The reads of n bytes of reads rd after read `tag` of thread (sub, dma):
 * those not ordered before it, then it.  A set all of whose bytes are
 * these n changes in place; otherwise they take a set of their own. */
static uint32_t add_read(RaceDetector *r, uint32_t rd, uint64_t n, uint32_t tag, int sub, int dma) {
  const uint32_t *old;
  uint32_t one;
  int m = reads_of(r, rd, &old, &one), keep = 0;
  for (int i = 0; i < m; i++) keep += !before(r, old[i], sub, dma);
  if (!keep) {
    tag_ref(r, tag, n);
    reads_unref(r, rd, n);
    return tag;
  }
  if ((rd & READSET) && r->sets[rd & ~READSET].refs == n) {
    TagSet *t = &r->sets[rd & ~READSET];
    int k = 0;
    for (int i = 0; i < t->n; i++)
      if (!before(r, t->v[i], sub, dma)) t->v[k++] = t->v[i];
      else tag_unref(r, t->v[i], 1);
    t->n = k;
    set_put(r, t, tag);
    return rd;
  }
  int k = set_new(r); /* old stays valid: it points into a set's own array, or at one */
  TagSet *t = &r->sets[k];
  t->refs = n;
  for (int i = 0; i < m; i++)
    if (!before(r, old[i], sub, dma)) set_put(r, t, old[i]);
  set_put(r, t, tag);
  reads_unref(r, rd, n);
  return READSET | (uint32_t)k;
}

/* ---- checks and updates ------------------------------------------------------ */

/* States [k, end) become `now` (four stores a step: a vector access's
 * units). */
static void states_fill(Shadow *st, int64_t k, int64_t end, Shadow now) {
  for (; k + 4 <= end; k += 4) st[k] = st[k + 1] = st[k + 2] = st[k + 3] = now;
  for (; k < end; k++) st[k] = now;
}

/* Bytes [i, j) of page pg (at offset base of g) take access tag. */
static void record(RaceDetector *r, Page *pg, int64_t i, int64_t j, uint32_t tag, const RaceAccess *a, int sub, const Region *g, int64_t base) {
  Shadow st = state_at(pg, i), now;
  uint64_t n = (uint64_t)(j - i);
  r->memo.ok = false;
  if (a->write) {
    tag_ref(r, tag, n); /* before the old ones drop: tag may be one of them */
    if (st_w(st)) tag_unref(r, st_w(st), n);
    reads_unref(r, st_r(st), n);
    now = st_make(tag, 0);
    if (i == 0 && j == PAGE) page_drop_values(r, pg);
    if (pg->val) {
      memcpy(pg->val + i, g->bytes + base + i, (size_t)n);
      bits_copy(pg->def, i, g->defined, base + i, (int64_t)n);
    }
  } else {
    now = st_make(st_w(st), add_read(r, st_r(st), n, tag, sub, a->dma));
  }
  if (i == 0 && j == PAGE) page_uniform(r, pg, now);
  else
    states_fill(pg->st, i >> pg->shift, j >> pg->shift, now);
}

/* Whether no earlier access of state st races with access a. */
static bool clean(const RaceDetector *r, Shadow st, const RaceAccess *a, int sub) {
  if (st_w(st) && conflict(r, st_w(st), a, sub)) return false;
  if (!a->write) return true;
  const uint32_t *reads;
  uint32_t one;
  int n = reads_of(r, st_r(st), &reads, &one);
  for (int i = 0; i < n; i++)
    if (conflict(r, reads[i], a, sub)) return false;
  return true;
}

static bool report(const RaceDetector *r, uint32_t tag, const RaceAccess *now, const Region *g, int64_t at, RaceReport *rep) {
  rep->first = r->acc[tag - 1];
  rep->second = *now;
  rep->region = g;
  rep->lo = at;
  rep->hi = at + 1;
  const RaceAccess *a = &rep->first;
  if (a->span_hi > a->span_lo && now->span_hi > now->span_lo) { /* the whole overlap of two contiguous accesses */
    rep->lo = a->span_lo > now->span_lo ? a->span_lo : now->span_lo;
    rep->hi = a->span_hi < now->span_hi ? a->span_hi : now->span_hi;
    if (rep->lo > at || rep->hi <= at) rep->lo = at, rep->hi = at + 1;
  }
  return false;
}

/* Whether the write just made at byte `at` (byte i of pg) left what the
 * last write did (both undefined counts as the same). */
static bool same_byte(const Page *pg, int64_t i, const Region *g, int64_t at) {
  if (!pg->val) return false; /* past the shadow's bound (race_pre): the run stops with a limit fault */
  bool d = mem_defined(g, at), was = (pg->def[i >> 3] >> (i & 7)) & 1;
  return was == d && (!d || pg->val[i] == g->bytes[at]);
}

/* Records a benign race once per pair of operations. */
static void benign(RaceDetector *r, uint32_t tag, const RaceAccess *now, const Region *g, int64_t at) {
  int a = r->acc[tag - 1].op, b = now->op;
  uint64_t key = (uint64_t)(uint32_t)(a < b ? a : b) << 32 | (uint32_t)(a < b ? b : a);
  for (int i = r->npairs - 1; i >= 0; i--)
    if (r->pairs[i] == key) return;
  r->pairs = grow(r->pairs, &r->cappairs, r->npairs + 1, sizeof *r->pairs);
  r->pairs[r->npairs++] = key;
  r->benign = grow(r->benign, &r->capbenign, r->nbenign + 1, sizeof *r->benign);
  report(r, tag, now, g, at, &r->benign[r->nbenign++]);
}

/* One byte (byte i of pg, a page of byte states, at offset at of g) of a
 * run that conflicts: checked and updated alone, as the per-byte detector
 * did. */
static bool access_byte(RaceDetector *r, Page *pg, int64_t i, uint32_t tag, const RaceAccess *a, int sub, const Region *g, int64_t at,
                        RaceReport *rep) {
  Shadow st = pg->st[i];
  if (st_w(st) && conflict(r, st_w(st), a, sub)) {
    if (!a->write || !same_byte(pg, i, g, at)) return report(r, st_w(st), a, g, at, rep);
    benign(r, st_w(st), a, g, at);
  }
  if (a->write) {
    const uint32_t *reads;
    uint32_t one;
    int n = reads_of(r, st_r(st), &reads, &one);
    for (int i2 = 0; i2 < n; i2++)
      if (conflict(r, reads[i2], a, sub)) return report(r, reads[i2], a, g, at, rep);
  }
  record(r, pg, i, i + 1, tag, a, sub, g, at - i);
  return true;
}

/* A race found at byte `at` of state st: unless the spans gave the whole
 * overlap, the report covers the bytes from `at` on, up to `end`, that
 * have that state (the same last writer and reads: the same overlap). */
static bool widen(RaceDetector *r, const Region *g, int64_t at, int64_t end, Shadow st, RaceReport *rep) {
  if (rep->hi > at + 1) return false;
  int64_t hi = at + 1;
  for (; hi < end; hi++) {
    Page *tp = page_of(r, g, hi / PAGE);
    if (!tp || state_at(tp, hi % PAGE) != st) break;
  }
  rep->hi = hi;
  return false;
}

/* The end of the run of equal states from byte i of pg, before `stop`
 * (both whole states: page_fit). */
static int64_t run_end(const Page *pg, int64_t i, int64_t stop) {
  if (!pg->st) return stop;
  int64_t u = i >> pg->shift, end = stop >> pg->shift;
  const Shadow *p = pg->st, st = p[u];
  for (; u + 4 <= end && !((p[u] ^ st) | (p[u + 1] ^ st) | (p[u + 2] ^ st) | (p[u + 3] ^ st)); u += 4) {} /* four at a time, from u: aligned spans of 4n units take no single steps */
  while (u < end && p[u] == st) u++;
  return u << pg->shift;
}

bool race_benign_next(RaceDetector *r, RaceReport *rep) {
  if (!r || r->takenbenign == r->nbenign) return false;
  *rep = r->benign[r->takenbenign++];
  return true;
}

/* One subcore whose DMAs have all been retired is the only thread: each
 * earlier access (its own, or a retired DMA's) is ordered before its
 * access, and every later one (its own, or a DMA it starts later, whose
 * clock starts from its own) after it, so it can race with none and needs
 * no record (tag 0, no access).  What the shadow keeps instead (older
 * states) is ordered before every later access just the same. */
static bool lone_thread(const RaceDetector *r, const RaceAccess *a) { return r->h.nsub == 1 && !r->h.live && a->dma < 0; }

uint32_t race_begin(RaceDetector *r, const RaceAccess *a, int sub) {
  if (!r || lone_thread(r, a)) return 0;
  if (a->dma >= 0 && a->dma == r->solo && r->nvirt < MAX_VIRTUAL) { /* no record unless it stops being solo */
    r->virt[r->nvirt] = (Virtual){*a, sub, 0};
    return VIRTUAL | (uint32_t)r->nvirt++;
  }
  settle(r); /* another thread (or too many accesses): the solo DMA's records first */
  return new_tag(r, a, sub);
}

/* A walk over the shadow pages of bytes [off, off + n) of a region: each
 * walk_page gives the next page (pg) and the part [from, stop) of it that
 * the span covers, base being the page's first byte.  False at the end, or
 * past the shadow's bound (the caller stops the run: race_over).  Offsets
 * are never negative: pages by division. */
typedef struct {
  int64_t b, end, base, from, stop;
  Page *pg;
} Walk;

static Walk walk_of(int64_t off, int64_t n) { return (Walk){.b = off, .end = off + n}; }

static inline bool walk_page(RaceDetector *r, const Region *g, Walk *w) {
  if (w->b >= w->end) return false;
  w->base = w->b / PAGE * PAGE;
  w->stop = w->end - w->base < PAGE ? w->end - w->base : PAGE;
  w->from = w->b - w->base;
  w->pg = page_of(r, g, w->b / PAGE);
  w->b = w->base + w->stop;
  return w->pg && page_fit(r, w->pg, w->from, w->stop);
}

/* ---- a solo DMA ------------------------------------------------------------- *
 * With one subcore, a DMA it starts while no other is in flight (r->solo)
 * is ordered after everything the shadow holds: the subcore's accesses
 * come before its start in program order, and every earlier DMA was
 * retired by a wait the start follows.  Its accesses are clean, and their
 * records can wait: if its wait retires it before any other thread
 * touches the detector, everything after is ordered after it, so the
 * records would never be looked at (they are dropped, as the older states
 * they would have replaced are ordered before everything later too);
 * anything else first makes them (settle), in order, so that the shadow is
 * then as if they had been made at once (the bytes have not changed: no
 * access came between).  A bounded list: a DMA with more pieces than it
 * holds is made ordinary there.  Its accesses wait the same way: they
 * take no record (a virtual tag, race_begin) unless settle needs one, so
 * a solo DMA retired in time costs the detector no record at all. */
static void span_record(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n);

/* While its DMA is solo, an access is virtual (see Virtual); after, a
 * virtual tag stands for the record settle made for it. */
static bool solo_tag(const RaceDetector *r, uint32_t tag) { return (tag & VIRTUAL) && r->solo >= 0; }
bool race_solo(const RaceDetector *r, uint32_t tag) { return r && solo_tag(r, tag); }
static uint32_t real_tag(const RaceDetector *r, uint32_t tag) { return tag & VIRTUAL ? r->virt[tag & ~VIRTUAL].real : tag; }

static void drop_deferred(RaceDetector *r) {
  r->ndeferred = 0;
  r->solo = -1;
}

/* Another thread acts, or the clocks move: the solo DMA's accesses become
 * records, in the order they were opened, and its spans are recorded. */
static void settle(RaceDetector *r) {
  if (r->solo < 0) return;
  for (int i = 0; i < r->nvirt; i++) r->virt[i].real = new_tag(r, &r->virt[i].a, r->virt[i].sub);
  for (int i = 0; i < r->ndeferred; i++) {
    const Deferred *d = &r->deferred[i];
    span_record(r, real_tag(r, d->tag), d->g, d->off, d->n);
  }
  r->ndeferred = 0;
  r->solo = -1;
}

static void defer(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n) {
  if (n <= 0) return;
  Deferred *last = r->ndeferred ? &r->deferred[r->ndeferred - 1] : NULL;
  if (last && last->tag == tag && last->g == g && last->off + last->n == off) { /* one span, grown */
    last->n += n;
    return;
  }
  if (r->ndeferred == MAX_DEFERRED) { /* too many pieces: an ordinary DMA from here on */
    settle(r);
    span_record(r, real_tag(r, tag), g, off, n);
    return;
  }
  r->deferred[r->ndeferred++] = (Deferred){tag, g, off, n};
}

bool race_bytes(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n, RaceReport *rep) {
  if (!r || !tag) return true;
  if (solo_tag(r, tag)) return defer(r, tag, g, off, n), true;
  tag = real_tag(r, tag);
  const RaceAccess *a = &r->acc[tag - 1];
  int sub = r->acc_thread[tag - 1];
  for (Walk w = walk_of(off, n); walk_page(r, g, &w);) {
    Page *pg = w.pg;
    for (int64_t i = w.from, j; i < w.stop; i = j) {
      j = run_end(pg, i, w.stop);
      Shadow st = state_at(pg, i);
      if (clean(r, st, a, sub)) {
        record(r, pg, i, j, tag, a, sub, g, w.base);
        continue;
      }
      if ((!pg->st || pg->shift) && !page_states(r, pg, 0)) return true;
      for (int64_t k = i; k < j; k++)
        if (!access_byte(r, pg, k, tag, a, sub, g, w.base + k, rep)) return widen(r, g, w.base + k, w.end, st, rep);
    }
  }
  return true;
}

/* The walks, out of line: the entry points' early returns (no access, a
 * solo DMA: most calls) then cost no register saves. */
#define OUT_OF_LINE __attribute__((noinline))

static OUT_OF_LINE bool span_clean(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n) {
  const RaceAccess *a = &r->acc[tag - 1];
  int sub = r->acc_thread[tag - 1];
  Memo *m = &r->memo;
  int nrun = 0;
  for (Walk w = walk_of(off, n); walk_page(r, g, &w);) /* (page_fit may forget an older memo) */
    for (int64_t i = w.from, j; i < w.stop; i = j) {
      j = run_end(w.pg, i, w.stop);
      if (!clean(r, state_at(w.pg, i), a, sub)) return m->ok = false, false;
      if (nrun < MAX_RUNS) m->run[nrun] = (Run){w.pg, i, j, w.base};
      nrun++;
    }
  m->ok = nrun <= MAX_RUNS && !r->h.over; /* a walk stopped by the shadow's bound is walked again */
  m->tag = tag, m->g = g, m->off = off, m->n = n, m->nrun = nrun;
  return true;
}

bool race_span_clean(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n) {
  if (!r || !tag || solo_tag(r, tag)) return true;
  return span_clean(r, real_tag(r, tag), g, off, n);
}

void race_span_record(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n) {
  if (!r || !tag) return;
  if (solo_tag(r, tag)) return defer(r, tag, g, off, n);
  span_record(r, real_tag(r, tag), g, off, n);
}

/* Records access tag over the span: the runs race_span_clean just found
 * there when nothing has changed since, else a walk. */
static OUT_OF_LINE void span_record(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n) {
  const RaceAccess *a = &r->acc[tag - 1];
  int sub = r->acc_thread[tag - 1];
  const Memo *m = &r->memo;
  if (m->ok && m->tag == tag && m->g == g && m->off == off && m->n == n) {
    int nrun = m->nrun; /* record forgets the memo, not its runs */
    for (int k = 0; k < nrun; k++) record(r, m->run[k].pg, m->run[k].i, m->run[k].j, tag, a, sub, g, m->run[k].base);
    return;
  }
  for (Walk w = walk_of(off, n); walk_page(r, g, &w);)
    for (int64_t i = w.from, j; i < w.stop; i = j) {
      j = run_end(w.pg, i, w.stop);
      record(r, w.pg, i, j, tag, a, sub, g, w.base);
    }
}

void race_pre(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n) {
  if (!r || !tag || solo_tag(r, tag)) return; /* a solo DMA races with nothing */
  tag = real_tag(r, tag);
  if (!r->acc[tag - 1].write) return;
  const RaceAccess *a = &r->acc[tag - 1];
  int sub = r->acc_thread[tag - 1];
  for (Walk w = walk_of(off, n); walk_page(r, g, &w);)
    for (int64_t i = w.from, j; i < w.stop && !w.pg->val; i = j) {
      j = run_end(w.pg, i, w.stop);
      Shadow st = state_at(w.pg, i);
      if (st_w(st) && conflict(r, st_w(st), a, sub) && !page_values(r, w.pg, g, w.base)) return;
    }
}

bool race_span(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n) {
  if (!race_span_clean(r, tag, g, off, n)) return false;
  race_span_record(r, tag, g, off, n);
  return true;
}

uint64_t race_shadow_bytes(const RaceDetector *r) { return r ? r->shadow_bytes : 0; }
