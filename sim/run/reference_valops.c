/* sim/run/reference_valops.c -- reductions, math, flip, take_along_axis,
 * reshape, bitcast and concatenate as the reference computes them: a
 * reduction is a left fold (the engine scans, then takes the last lane);
 * all / any test truth directly (the engine goes through floats); a flip
 * reads backwards (the engine gathers by n - 1 - iota); a bitcast goes
 * through one byte image of the whole operand. */
#include "reference_valops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ref_valops_nargs(const Expr *e) {
  if (e->builtin == BI_CONCAT) return e->args[0]->nargs;
  return e->builtin == BI_TAKE ? 2 : 1;
}

const Expr *ref_valops_arg(const Expr *e, int k) { return e->builtin == BI_CONCAT ? e->args[0]->args[k] : e->args[k]; }

static void fold(const Expr *e, const Value *x, Value *out) {
  val_shape(out, e->ty, 0, NULL);
  bool def = true, logical = e->builtin == BI_VALL || e->builtin == BI_VANY;
  Cell acc = {.i = e->builtin == BI_VALL};
  for (int64_t i = 0; i < x->n; i++) {
    def &= x->def[i] != 0;
    if (logical) {
      bool t = alu_truthy(x->dtype, x->v[i]);
      acc.i = e->builtin == BI_VALL ? acc.i && t : acc.i || t;
    } else if (i == 0) {
      acc = x->v[0];
    } else if (e->builtin == BI_VSUM) {
      alu_binary(OP_ADD, e->ty, e->ty, acc, x->v[i], &acc);
    } else {
      acc = alu_minmax(e->ty, acc, x->v[i], e->builtin == BI_VMAX);
    }
  }
  out->v[0] = acc, out->def[0] = def;
}

static Cell math1(Builtin b, Dtype t, Cell x) {
  if (b == BI_EXP) return dtype_fit(t, (Cell){.f = exp(x.f)});
  if (dtype_is_float(t)) return dtype_fit(t, (Cell){.f = x.f < 0 || (x.f == 0 && signbit(x.f)) ? -x.f : x.f});
  return dtype_fit(t, (Cell){.i = x.i < 0 ? (int64_t)(~(uint64_t)x.i + 1) : x.i});
}

static void take(const Value *x, const Value *idx, Value *out) {
  for (int64_t i = 0; i < x->n; i++) {
    int64_t k = idx->v[i].i;
    if (k < 0) k += x->n;
    out->def[i] = idx->def[i] && k >= 0 && k < x->n && x->def[k];
    out->v[i] = out->def[i] ? x->v[k] : (Cell){0};
  }
}

/* Bit i of element x as numpy's view lays it out: byte i / 8 of its
 * little-endian bytes (int4's nibble sits in the low half of its byte). */
static int bit_of(Dtype t, Cell c, int i) {
  uint8_t b[8] = {0};
  dtype_store(t, c, b);
  return (b[i / 8] >> (i % 8)) & 1;
}

/* plsc.bitcast with a sub-byte side: the operand as one stream of bits,
 * element 0 first and each element's bits from the lowest, cut into
 * pieces of the new width. */
static void bitcast_bits(const Expr *e, const Value *x, Value *out) {
  int ob = dtype_bits(x->dtype), nb = dtype_bits(e->ty);
  int64_t nbits = x->n * ob;
  uint8_t *bit = malloc((size_t)nbits + 1), *def = malloc((size_t)nbits + 1);
  if (!bit || !def) abort();
  for (int64_t i = 0; i < nbits; i++) bit[i] = (uint8_t)bit_of(x->dtype, x->v[i / ob], (int)(i % ob)), def[i] = x->def[i / ob];
  int64_t shape[MAX_RANK];
  memcpy(shape, x->shape, sizeof shape);
  if (x->rank) shape[x->rank - 1] = shape[x->rank - 1] * ob / nb;
  val_shape(out, e->ty, x->rank, shape);
  for (int64_t j = 0; j < out->n; j++) {
    uint8_t b[8] = {0};
    bool d = true;
    for (int k = 0; k < nb; k++) {
      b[k / 8] |= (uint8_t)(bit[j * nb + k] << (k % 8));
      d = d && def[j * nb + k];
    }
    out->v[j] = dtype_load(e->ty, b), out->def[j] = d;
  }
  free(bit);
  free(def);
}

static void bitcast(const Expr *e, const Value *x, Value *out) {
  if (dtype_is_subbyte(x->dtype) || dtype_is_subbyte(e->ty)) {
    bitcast_bits(e, x, out);
    return;
  }
  int ob = dtype_size(x->dtype), nb = dtype_size(e->ty);
  int64_t bytes = x->n * ob;
  uint8_t *img = malloc((size_t)bytes + 8), *def = malloc((size_t)bytes + 8);
  if (!img || !def) abort();
  for (int64_t i = 0; i < x->n; i++) {
    dtype_store(x->dtype, x->v[i], img + i * ob);
    memset(def + i * ob, x->def[i], (size_t)ob);
  }
  int64_t shape[MAX_RANK];
  memcpy(shape, x->shape, sizeof shape);
  if (x->rank) shape[x->rank - 1] = shape[x->rank - 1] * ob / nb;
  val_shape(out, e->ty, x->rank, shape);
  for (int64_t j = 0; j < out->n; j++) {
    out->v[j] = dtype_load(e->ty, img + j * nb);
    out->def[j] = memchr(def + j * nb, 0, (size_t)nb) == NULL;
  }
  free(img);
  free(def);
}

static void concat(const Expr *e, const Value *a, int n, Value *out) {
  int64_t shape[MAX_RANK];
  memcpy(shape, a[0].shape, sizeof shape);
  for (int k = 1; k < n; k++) shape[0] += a[k].shape[0];
  val_shape(out, e->ty, a[0].rank, shape);
  int64_t at = 0;
  for (int k = 0; k < n; k++)
    for (int64_t i = 0; i < a[k].n; i++, at++) out->v[at] = alu_convert(a[k].dtype, e->ty, a[k].v[i]), out->def[at] = a[k].def[i];
}

void ref_valops(const Expr *e, const Value *a, int n, Value *out) {
  const Value *x = &a[0];
  if (e->builtin == BI_VSUM || e->builtin == BI_VMAX || e->builtin == BI_VMIN || e->builtin == BI_VALL || e->builtin == BI_VANY)
    return fold(e, x, out);
  if (e->builtin == BI_BITCAST) return bitcast(e, x, out);
  if (e->builtin == BI_CONCAT) return concat(e, a, n, out);
  if (e->builtin == BI_RESHAPE) {
    const Expr *sh = e->args[1];
    int64_t shape[MAX_RANK];
    int rank = sh->kind == EX_LIST ? sh->nargs : 1;
    for (int i = 0; i < rank; i++) shape[i] = (sh->kind == EX_LIST ? sh->args[i] : sh)->sval;
    val_shape(out, e->ty, rank, shape);
    memcpy(out->v, x->v, sizeof(Cell) * (size_t)x->n);
    memcpy(out->def, x->def, (size_t)x->n);
    return;
  }
  if (e->builtin == BI_SLICE) {
    int64_t shape[MAX_RANK], lo = e->args[1]->sval, hi = e->args[2]->sval;
    memcpy(shape, x->shape, sizeof shape);
    shape[0] = hi - lo;
    val_shape(out, e->ty, x->rank, shape);
    for (int64_t i = 0; i < out->n; i++) {
      int64_t row = lo + i / (out->n / (shape[0] ? shape[0] : 1)), col = i % (out->n / (shape[0] ? shape[0] : 1));
      int64_t k = row * (x->n / x->shape[0]) + col;
      out->v[i] = x->v[k], out->def[i] = x->def[k];
    }
    return;
  }
  val_shape(out, e->ty, x->rank, x->shape);
  if (e->builtin == BI_TAKE) return take(x, &a[1], out);
  for (int64_t i = 0; i < x->n; i++) {
    int64_t k = e->builtin == BI_FLIP ? x->n - 1 - i : i;
    out->v[i] = e->builtin == BI_FLIP ? x->v[k] : math1(e->builtin, e->ty, alu_convert(x->dtype, e->ty, x->v[k]));
    out->def[i] = x->def[k];
  }
}
