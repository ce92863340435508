/* memory/race.c -- vector clocks and per-byte shadow state. */
#include "race.h"

#include <stdlib.h>
#include <string.h>

#define PAGE 4096

typedef struct {
  uint32_t w;  /* access tag of the last write, 0 none */
  uint32_t r;  /* a read tag, or READSET | index of a read set, 0 none */
  uint8_t wv;  /* the byte the last write left, and whether it was defined: */
  uint8_t wd;  /* a write-write race storing the same bytes is benign */
} Shadow;
#define READSET 0x80000000u
#define OPEN (1ULL << 63) /* acc_refs: the access's instruction still runs */

typedef struct {
  const Region *g;
  int64_t page;
  Shadow *sh;
} PageEntry;

typedef struct {
  uint32_t *v;
  int n, cap;
} TagSet;

struct RaceDetector;
static Shadow *page_find(struct RaceDetector *r, const Region *g, int64_t page);

typedef struct {
  int issuer;
  uint32_t *start_vc; /* the issuer's clock when it started */
  uint32_t wait_clock; /* 0 until a wait retires it */
  int refs;            /* 1 until retired, plus the live accesses it made; free at 0 */
} DmaThread;

struct RaceDetector {
  int nsub;
  uint32_t *vc;        /* nsub x nsub */
  RaceAccess *acc;     /* access table, tag = index + 1 */
  uint32_t *acc_clock; /* the thread clock at the access */
  int *acc_thread;     /* the subcore index of the access's thread */
  uint64_t *acc_refs;  /* shadow entries naming the access; the record is free at 0 once closed */
  int nacc, capacc;
  uint32_t *free_acc;  /* recycled tags */
  int nfree_acc, capfree_acc;
  uint32_t *open;      /* tags of the instruction running (race_done closes them) */
  int nopen, capopen;
  DmaThread *dma;
  int ndma, capdma;
  int *free_dma;       /* recycled DMA threads */
  int nfree_dma, capfree_dma;
  uint64_t shadow_bytes, max_shadow; /* the shadow pages' size, and its bound (0: none) */
  bool over;           /* a page was refused: past max_shadow */
  uint32_t memo_tag[2], memo_w[2], memo_r[2]; /* a shadow state access memo_tag passed clean (0: none); a DMA's two sides */
  int memo_next;
  const Region *last_g; /* the page found last */
  int64_t last_page;
  Shadow *last_sh;
  uint32_t *slots;     /* synchronisation objects: a vector clock each */
  int nslots, capslots;
  uint32_t *barrier;   /* 2 generations x nsub x nsub arrival clocks */
  PageEntry *pages;    /* open-addressing hash of shadow pages */
  int64_t npages, cappages;
  TagSet *sets;
  int nsets, capsets;
  RaceReport *benign;  /* benign races not yet taken (race_benign_next) */
  int nbenign, capbenign, takenbenign;
  uint64_t *pairs;     /* the pairs of operations already reported benign */
  int npairs, cappairs;
};

static void *grow(void *p, int *cap, int need, size_t size) {
  if (need <= *cap) return p;
  int c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *q = realloc(p, size * (size_t)c);
  if (!q) abort();
  memset((char *)q + size * (size_t)*cap, 0, size * (size_t)(c - *cap));
  *cap = c;
  return q;
}

RaceDetector *race_new(int nsub, uint64_t max_shadow) {
  RaceDetector *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->nsub = nsub;
  r->max_shadow = max_shadow;
  r->vc = calloc((size_t)nsub * (size_t)nsub, sizeof(uint32_t));
  r->barrier = calloc(2 * (size_t)nsub * (size_t)nsub, sizeof(uint32_t));
  if (!r->vc || !r->barrier) {
    race_free(r);
    return NULL;
  }
  for (int i = 0; i < nsub; i++) r->vc[i * nsub + i] = 1;
  return r;
}

void race_free(RaceDetector *r) {
  if (!r) return;
  for (int i = 0; i < r->ndma; i++) free(r->dma[i].start_vc);
  for (int i = 0; i < r->nsets; i++) free(r->sets[i].v);
  for (int64_t i = 0; i < r->cappages; i++) free(r->pages ? r->pages[i].sh : NULL);
  free(r->pages);
  free(r->benign);
  free(r->pairs);
  free(r->sets);
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

static uint32_t *vc_of(RaceDetector *r, int sub) { return r->vc + (size_t)sub * (size_t)r->nsub; }
/* A clock moves: what passed clean before may not now. */
static void forget(RaceDetector *r) { r->memo_tag[0] = r->memo_tag[1] = 0; }
static void tick(RaceDetector *r, int sub) { vc_of(r, sub)[sub]++, forget(r); }
static void join(uint32_t *dst, const uint32_t *src, int n) {
  for (int i = 0; i < n; i++)
    if (src[i] > dst[i]) dst[i] = src[i];
}

int race_dma_start(RaceDetector *r, int sub) {
  if (!r) return -1;
  int k;
  if (r->nfree_dma) k = r->free_dma[--r->nfree_dma];
  else {
    r->dma = grow(r->dma, &r->capdma, r->ndma + 1, sizeof *r->dma);
    k = r->ndma++;
    r->dma[k].start_vc = malloc(sizeof(uint32_t) * (size_t)r->nsub);
    if (!r->dma[k].start_vc) abort();
  }
  DmaThread *d = &r->dma[k];
  d->issuer = sub;
  memcpy(d->start_vc, vc_of(r, sub), sizeof(uint32_t) * (size_t)r->nsub);
  d->wait_clock = 0;
  d->refs = 1;
  tick(r, sub);
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
  tick(r, sub);
  r->dma[dma].wait_clock = vc_of(r, sub)[sub];
  dma_unref(r, dma);
}

int race_slot(RaceDetector *r) {
  if (!r) return 0;
  r->slots = grow(r->slots, &r->capslots, (r->nslots + 1) * r->nsub, sizeof(uint32_t));
  return r->nslots++;
}

void race_release(RaceDetector *r, int sub, int slot) {
  if (!r) return;
  join(r->slots + (size_t)slot * (size_t)r->nsub, vc_of(r, sub), r->nsub);
  tick(r, sub);
}

void race_acquire(RaceDetector *r, int sub, int slot) {
  if (r) forget(r), join(vc_of(r, sub), r->slots + (size_t)slot * (size_t)r->nsub, r->nsub);
}

void race_barrier_arrive(RaceDetector *r, int sub, int gen) {
  if (!r) return;
  uint32_t *a = r->barrier + ((size_t)(gen & 1) * (size_t)r->nsub + (size_t)sub) * (size_t)r->nsub;
  memcpy(a, vc_of(r, sub), sizeof(uint32_t) * (size_t)r->nsub);
  tick(r, sub);
}

void race_barrier_leave(RaceDetector *r, int sub, int gen, int first, int n) {
  if (!r) return;
  forget(r);
  for (int k = first; k < first + n; k++)
    join(vc_of(r, sub), r->barrier + ((size_t)(gen & 1) * (size_t)r->nsub + (size_t)k) * (size_t)r->nsub, r->nsub);
}

/* Does access `tag` happen before the current point of thread (sub, dma)? */
static bool before(const RaceDetector *r, uint32_t tag, int sub, int dma) {
  const RaceAccess *a = &r->acc[tag - 1];
  const uint32_t *vc = dma >= 0 ? r->dma[dma].start_vc : r->vc + (size_t)sub * (size_t)r->nsub;
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

static void tag_ref(RaceDetector *r, uint32_t tag) { r->acc_refs[tag - 1]++; }
/* The reference's count drops; an unreferenced closed record is freed
 * (an open one waits for race_done). */
static void tag_unref(RaceDetector *r, uint32_t tag) {
  if (!--r->acc_refs[tag - 1]) tag_free(r, tag);
}

static uint32_t new_tag(RaceDetector *r, const RaceAccess *a, int sub) {
  uint32_t t;
  if (r->nfree_acc) t = r->free_acc[--r->nfree_acc] - 1;
  else {
    int need = r->nacc + 1;
    int cap = r->capacc;
    r->acc = grow(r->acc, &cap, need, sizeof *r->acc);
    cap = r->capacc;
    r->acc_clock = grow(r->acc_clock, &cap, need, sizeof *r->acc_clock);
    cap = r->capacc;
    r->acc_refs = grow(r->acc_refs, &cap, need, sizeof *r->acc_refs);
    r->acc_thread = grow(r->acc_thread, &r->capacc, need, sizeof *r->acc_thread);
    t = (uint32_t)r->nacc++;
  }
  r->acc[t] = *a;
  r->acc_thread[t] = sub;
  r->acc_clock[t] = a->dma >= 0 ? 0 : vc_of(r, sub)[sub];
  r->acc_refs[t] = OPEN;
  if (a->dma >= 0) r->dma[a->dma].refs++;
  r->open = grow(r->open, &r->capopen, r->nopen + 1, sizeof *r->open);
  r->open[r->nopen++] = t + 1;
  if (r->memo_tag[0] == t + 1) r->memo_tag[0] = 0;
  if (r->memo_tag[1] == t + 1) r->memo_tag[1] = 0;
  return t + 1;
}

void race_done(RaceDetector *r) {
  if (!r) return;
  r->memo_tag[0] = r->memo_tag[1] = 0;
  for (int i = 0; i < r->nopen; i++) {
    uint32_t t = r->open[i];
    if (!(r->acc_refs[t - 1] &= ~OPEN)) tag_free(r, t);
  }
  r->nopen = 0;
}

static Shadow *page_of(RaceDetector *r, const Region *g, int64_t page) {
  if (r->last_sh && r->last_g == g && r->last_page == page) return r->last_sh;
  Shadow *sh = page_find(r, g, page);
  if (sh) r->last_g = g, r->last_page = page, r->last_sh = sh;
  return sh;
}

static Shadow *page_find(RaceDetector *r, const Region *g, int64_t page) {
  if (r->npages * 2 >= r->cappages) { /* rehash */
    int64_t cap = r->cappages ? r->cappages * 2 : 256;
    PageEntry *t = calloc((size_t)cap, sizeof *t);
    if (!t) abort();
    for (int64_t i = 0; i < r->cappages; i++) {
      if (!r->pages[i].sh) continue;
      uint64_t h = ((uint64_t)(uintptr_t)r->pages[i].g * 31u + (uint64_t)r->pages[i].page) * 0x9e3779b97f4a7c15ULL;
      int64_t k = (int64_t)(h % (uint64_t)cap);
      while (t[k].sh) k = (k + 1) % cap;
      t[k] = r->pages[i];
    }
    free(r->pages);
    r->pages = t;
    r->cappages = cap;
  }
  uint64_t h = ((uint64_t)(uintptr_t)g * 31u + (uint64_t)page) * 0x9e3779b97f4a7c15ULL;
  int64_t k = (int64_t)(h % (uint64_t)r->cappages);
  while (r->pages[k].sh && !(r->pages[k].g == g && r->pages[k].page == page)) k = (k + 1) % r->cappages;
  if (!r->pages[k].sh) {
    if (r->max_shadow && r->shadow_bytes + PAGE * sizeof(Shadow) > r->max_shadow) return r->over = true, NULL;
    Shadow *sh = calloc(PAGE, sizeof(Shadow));
    if (!sh) return r->over = true, NULL;
    r->pages[k].g = g;
    r->pages[k].page = page;
    r->pages[k].sh = sh;
    r->npages++;
    r->shadow_bytes += PAGE * sizeof(Shadow);
  }
  return r->pages[k].sh;
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

/* The reads since the last write, as a list of tags. */
static int reads_of(RaceDetector *r, const Shadow *s, const uint32_t **out, uint32_t *one) {
  if (!s->r) return 0;
  if (!(s->r & READSET)) {
    *one = s->r;
    *out = one;
    return 1;
  }
  const TagSet *t = &r->sets[s->r & ~READSET];
  *out = t->v;
  return t->n;
}

static void add_read(RaceDetector *r, Shadow *s, uint32_t tag, int sub, int dma) {
  const uint32_t *old;
  uint32_t one;
  int n = reads_of(r, s, &old, &one);
  tag_ref(r, tag);
  if (n == 0 || (n == 1 && before(r, old[0], sub, dma))) {
    if (n) tag_unref(r, old[0]);
    if (s->r & READSET) r->sets[s->r & ~READSET].n = 0;
    else s->r = tag;
    if (s->r & READSET) r->sets[s->r & ~READSET].v[r->sets[s->r & ~READSET].n++] = tag;
    return;
  }
  if (!(s->r & READSET)) {
    r->sets = grow(r->sets, &r->capsets, r->nsets + 1, sizeof *r->sets);
    TagSet *t = &r->sets[r->nsets];
    t->cap = 4;
    t->v = malloc(sizeof(uint32_t) * 4);
    if (!t->v) abort();
    t->n = 1;
    t->v[0] = s->r;
    s->r = READSET | (uint32_t)r->nsets++;
  }
  TagSet *t = &r->sets[s->r & ~READSET];
  int k = 0;
  for (int i = 0; i < t->n; i++) /* keep an antichain: drop reads ordered before this one */
    if (!before(r, t->v[i], sub, dma)) t->v[k++] = t->v[i];
    else tag_unref(r, t->v[i]);
  t->n = k;
  t->v = grow(t->v, &t->cap, t->n + 1, sizeof(uint32_t));
  t->v[t->n++] = tag;
}

/* Whether the write just made at byte `at` left what the last write did
 * (both undefined counts as the same). */
static bool same_byte(const Shadow *s, const Region *g, int64_t at) {
  bool d = mem_defined(g, at);
  return s->wd == d && (!d || s->wv == g->bytes[at]);
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

/* One byte's check and update; *clean: no earlier access conflicted
 * (then a byte with the same shadow state passes the same way). */
static bool access_byte(RaceDetector *r, Shadow *s, uint32_t tag, const RaceAccess *a, int sub, const Region *g, int64_t at,
                        RaceReport *rep, bool *clean) {
  *clean = true;
  if (s->w && conflict(r, s->w, a, sub)) {
    *clean = false;
    if (!a->write || !same_byte(s, g, at)) return report(r, s->w, a, g, at, rep);
    benign(r, s->w, a, g, at);
  }
  if (!a->write) {
    add_read(r, s, tag, sub, a->dma);
    return true;
  }
  const uint32_t *reads;
  uint32_t one;
  int n = reads_of(r, s, &reads, &one);
  for (int i = 0; i < n; i++)
    if (conflict(r, reads[i], a, sub)) return report(r, reads[i], a, g, at, rep);
  tag_ref(r, tag);
  if (s->w) tag_unref(r, s->w);
  s->w = tag;
  s->wv = g->bytes[at];
  s->wd = mem_defined(g, at);
  for (int i = 0; i < n; i++) tag_unref(r, reads[i]);
  if (s->r & READSET) r->sets[s->r & ~READSET].n = 0;
  else s->r = 0;
  return true;
}

bool race_benign_next(RaceDetector *r, RaceReport *rep) {
  if (!r || r->takenbenign == r->nbenign) return false;
  *rep = r->benign[r->takenbenign++];
  return true;
}

uint32_t race_begin(RaceDetector *r, const RaceAccess *a, int sub) { return r ? new_tag(r, a, sub) : 0; }

bool race_bytes(RaceDetector *r, uint32_t tag, const Region *g, int64_t off, int64_t n, RaceReport *rep) {
  if (!r || !tag) return true;
  const RaceAccess *a = &r->acc[tag - 1];
  int sub = r->acc_thread[tag - 1];
  Shadow *pg = NULL;
  /* the state of the last byte that passed clean: within one instruction no
   * clock moves, so it holds for every call of the same access */
  int m = r->memo_tag[0] == tag ? 0 : r->memo_tag[1] == tag ? 1 : -1;
  uint32_t pw = m >= 0 ? r->memo_w[m] : 0, pr = m >= 0 ? r->memo_r[m] : 0;
  bool same = m >= 0;
  int64_t page_end = off; /* pg covers bytes up to here */
  for (int64_t b = off; b < off + n; b++) {
    if (b >= page_end) { /* offsets are never negative: pages by masks */
      pg = page_of(r, g, (int64_t)((uint64_t)b / PAGE));
      if (!pg) return true; /* past the shadow's bound: the caller stops the run (race_over) */
      page_end = (int64_t)(((uint64_t)b / PAGE + 1) * PAGE);
    }
    Shadow *s = &pg[(uint64_t)b & (PAGE - 1)];
    if (same && s->w == pw && s->r == pr && !(pr & READSET)) { /* the checks of the byte before hold: update only */
      if (!a->write) {
        add_read(r, s, tag, sub, a->dma);
        continue;
      }
      tag_ref(r, tag);
      if (s->w) tag_unref(r, s->w);
      if (s->r) tag_unref(r, s->r);
      s->w = tag, s->r = 0;
      s->wv = g->bytes[b];
      s->wd = mem_defined(g, b);
      continue;
    }
    pw = s->w, pr = s->r;
    if (!access_byte(r, s, tag, a, sub, g, b, rep, &same)) {
      if (rep->hi > b + 1) return false; /* the spans gave the whole overlap */
      int64_t hi = b + 1;
      while (hi < off + n) { /* widen the report over the overlapping run */
        Shadow *tp = page_of(r, g, hi / PAGE);
        if (!tp) break;
        Shadow *t = &tp[hi % PAGE];
        if (t->w != s->w || t->r != s->r) break; /* another last writer or other reads: another overlap */
        hi++;
      }
      rep->hi = hi;
      return false;
    }
  }
  if (m < 0) m = r->memo_next, r->memo_next ^= 1;
  r->memo_tag[m] = same ? tag : 0, r->memo_w[m] = pw, r->memo_r[m] = pr;
  return true;
}

bool race_over(const RaceDetector *r) { return r && r->over; }
uint64_t race_shadow_bytes(const RaceDetector *r) { return r ? r->shadow_bytes : 0; }
