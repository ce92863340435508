/* sim/run/debug_print.c -- the lines pl.debug_print writes (debug_print.h). */
#include "debug_print.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const Op *find_in(const Body *b, int id) {
  for (int i = 0; i < b->n; i++) {
    const Op *op = b->ops[i];
    if (op->id == id) return op;
    const Op *f = find_in(&op->body, id);
    if (!f) f = find_in(&op->els, id);
    if (f) return f;
  }
  return NULL;
}

const Op *run_op_by_id(const Program *p, int id) { return id < 0 ? NULL : find_in(&p->body, id); }

/* XLA's short element type names, as the log recorder prints them. */
static const char *short_name(Dtype t) {
  switch (t) {
  case DT_INT32: return "s32";
  case DT_UINT32: return "u32";
  case DT_FLOAT32: return "f32";
  case DT_BFLOAT16: return "bf16";
  case DT_FLOAT16: return "f16";
  case DT_INT16: return "s16";
  case DT_UINT16: return "u16";
  case DT_INT8: return "s8";
  case DT_UINT8: return "u8";
  case DT_BOOL: return "pred";
  case DT_INT64: return "s64";
  case DT_UINT64: return "u64";
  case DT_FLOAT64: return "f64";
  case DT_FLOAT8_E4M3FN: return "f8e4m3fn";
  case DT_FLOAT8_E5M2: return "f8e5m2";
  case DT_INT4: return "s4";
  case DT_UINT4: return "u4";
  case DT_COUNT: break;
  }
  return "?";
}

typedef struct {
  char *s;
  size_t n, cap;
} Buf;

static void put(Buf *b, const char *t) {
  size_t k = strlen(t);
  if (b->n + k + 1 > b->cap) {
    b->cap = (b->n + k + 1) * 2;
    b->s = realloc(b->s, b->cap);
    if (!b->s) abort();
  }
  memcpy(b->s + b->n, t, k + 1);
  b->n += k;
}

/* Elements [*at, *at + prod(shape[d..])) as braces nested from dimension d. */
static void put_level(Buf *b, const Value *v, int rank, const int64_t *shape, int d, int64_t *at) {
  put(b, "{ ");
  for (int64_t i = 0; i < shape[d]; i++) {
    if (i) put(b, ", ");
    if (d + 1 < rank) {
      put_level(b, v, rank, shape, d + 1, at);
      continue;
    }
    char t[64];
    int64_t k = (*at)++;
    if (!v->def[k]) snprintf(t, sizeof t, "undef");
    else if (v->dtype == DT_BOOL) snprintf(t, sizeof t, "%d", v->v[k].i ? 1 : 0);
    else dtype_format(v->dtype, v->v[k], t, sizeof t);
    put(b, t);
  }
  put(b, " }");
}

void run_print(RunResult *r, int core, int subcore, const char *msg, const Value *v) {
  Buf b = {0};
  char t[160];
  snprintf(t, sizeof t, "[%d.%d] ", core, subcore);
  put(&b, t);
  put(&b, msg);
  if (v) {
    int rank = v->rank ? v->rank : 1;
    int64_t one = 1, at = 0;
    const int64_t *shape = v->rank ? v->shape : &one;
    put(&b, ", data: ");
    put(&b, short_name(v->dtype));
    put(&b, "[");
    for (int i = 0; i < rank; i++) {
      snprintf(t, sizeof t, "%s%lld", i ? "," : "", (long long)shape[i]);
      put(&b, t);
    }
    put(&b, "] ");
    if (v->n == 0) put(&b, "{}");
    else put_level(&b, v, rank, shape, 0, &at);
  }
  if (r->nprints == r->capprints) {
    r->capprints = r->capprints ? r->capprints * 2 : 16;
    r->prints = realloc(r->prints, sizeof *r->prints * (size_t)r->capprints);
    if (!r->prints) abort();
  }
  r->prints[r->nprints++] = (RunPrint){core, subcore, b.s};
}
