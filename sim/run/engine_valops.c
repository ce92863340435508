/* sim/run/engine_valops.c -- the engine's value instructions of
 * lowering/lower_valops.c: tpu.scan, tpu.dynamic_gather, math.exp,
 * math.absf / math.absi, vector.shape_cast, tpu.bitcast, tpu.concatenate,
 * vector.extract_strided_slice.
 *
 * Costs (docs/timing.md): the vector issue cost of the result, except the
 * cross-lane tpu.scan and tpu.dynamic_gather, which add xlane_cycles. */
#include <math.h>
#include <string.h>

#include "engine_priv.h"

/* The scratch value becomes register r, as engine.c's own results do. */
static uint64_t vcost(const Eng *E, int64_t n, Dtype t) {
  int64_t words = (n * dtype_size(t) + 3) / 4, lanes = E->p->params.num_lanes > 0 ? E->p->params.num_lanes : 1;
  return (uint64_t)((words + lanes - 1) / lanes < 1 ? 1 : (words + lanes - 1) / lanes) * (uint64_t)E->p->params.vector_issue_cycles;
}

/* Inclusive scan: lane k holds a[0] op ... op a[k]; defined while every lane so far is. */
static bool x_gather(Eng *E, Sc *s, const Instr *in, const Value *a) {
  bool ok = true;
  Value *idx = eng_rd(E, s, in, in->b, &ok);
  if (!ok || !eng_fits(E, s, in, "indices", idx->n, "the operand", a->n)) return false;
  Value *t = &s->tmp;
  val_shape(t, in->ty, a->rank, a->shape);
  for (int64_t i = 0; i < a->n; i++) {
    int64_t k = idx->v[i].i;
    bool in_range = idx->def[i] && k >= 0 && k < a->n;
    t->v[i] = in_range ? alu_convert(a->dtype, in->ty, a->v[k]) : (Cell){0};
    t->def[i] = in_range && a->def[k];
  }
  s->cost = vcost(E, a->n, in->ty) + (uint64_t)E->p->params.xlane_cycles;
  return true;
}

static bool x_lanewise(Sc *s, const Instr *in, const Value *a) {
  Value *t = &s->tmp;
  val_shape(t, in->ty, a->rank, a->shape);
  for (int64_t i = 0; i < a->n; i++) {
    Cell x = alu_convert(a->dtype, in->ty, a->v[i]);
    if (in->op == I_EXP) x.f = exp(x.f);
    else if (in->op == I_ABSF) x.f = fabs(x.f);
    else x.i = x.i < 0 ? (int64_t)(0 - (uint64_t)x.i) : x.i;
    t->v[i] = dtype_fit(in->ty, x), t->def[i] = a->def[i];
  }
  return true;
}

static bool x_shape_cast(Eng *E, Sc *s, const Instr *in, const Value *a) {
  int64_t n = 1;
  for (int k = 0; k < in->rank; k++) n *= in->shape[k];
  if (!eng_fits(E, s, in, "operand", a->n, "the new shape", n)) return false;
  Value *t = &s->tmp;
  val_shape(t, in->ty, in->rank, in->shape);
  memcpy(t->v, a->v, sizeof(Cell) * (size_t)n);
  memcpy(t->def, a->def, (size_t)n);
  return true;
}

/* An element's bits as it is stored: its little-endian bytes, an int4's
 * nibble. */
static uint64_t raw_bits(Dtype t, Cell c) {
  uint8_t b[8] = {0};
  dtype_store(t, c, b);
  uint64_t u = 0;
  for (int k = 0; k < dtype_size(t); k++) u |= (uint64_t)b[k] << (8 * k);
  return u;
}

static Cell from_bits(Dtype t, uint64_t u) {
  uint8_t b[8];
  for (int k = 0; k < 8; k++) b[k] = (uint8_t)(u >> (8 * k));
  return dtype_load(t, b);
}

/* plsc.bitcast to or from a sub-byte dtype: the operand's bits, element 0
 * lowest, regrouped into widths of nb (int4 from int8 splits each byte
 * into its low then its high nibble).  The widths are powers of two, so an
 * output element gathers whole inputs (nb >= ob) or is a slice of one. */
static bool x_bitcast_bits(Eng *E, Sc *s, const Instr *in, const Value *a) {
  int ob = dtype_bits(a->dtype), nb = dtype_bits(in->ty);
  if ((a->n * ob) % nb || (a->rank == 0 && ob != nb)) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.bitcast: the operand's bits do not divide into the new dtype");
  int64_t shape[MAX_RANK];
  memcpy(shape, a->shape, sizeof shape);
  if (a->rank) shape[a->rank - 1] = shape[a->rank - 1] * ob / nb;
  Value *t = &s->tmp;
  val_shape(t, in->ty, a->rank, shape);
  uint64_t mask = nb == 64 ? ~UINT64_C(0) : (UINT64_C(1) << nb) - 1;
  for (int64_t j = 0; j < t->n; j++) {
    uint64_t u = 0;
    bool def = true;
    if (nb >= ob) {
      for (int k = 0; k < nb / ob; k++) {
        int64_t e = j * (nb / ob) + k;
        u |= raw_bits(a->dtype, a->v[e]) << (k * ob);
        def = def && a->def[e];
      }
    } else {
      int64_t e = j * nb / ob;
      u = raw_bits(a->dtype, a->v[e]) >> (j * nb % ob) & mask;
      def = a->def[e];
    }
    t->v[j] = from_bits(in->ty, u), t->def[j] = def;
  }
  return true;
}

/* The operand's bytes, little-endian, reread as ty; an element is defined
 * when every byte it takes is. */
static bool x_bitcast(Eng *E, Sc *s, const Instr *in, const Value *a) {
  if (dtype_is_subbyte(a->dtype) || dtype_is_subbyte(in->ty)) return x_bitcast_bits(E, s, in, a);
  int ob = dtype_size(a->dtype), nb = dtype_size(in->ty);
  int64_t bytes = a->n * ob;
  if (bytes % nb || (a->rank == 0 && ob != nb)) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.bitcast: the operand's bytes do not divide into the new dtype");
  int64_t shape[MAX_RANK];
  memcpy(shape, a->shape, sizeof shape);
  if (a->rank) shape[a->rank - 1] = shape[a->rank - 1] * ob / nb;
  Value *t = &s->tmp;
  val_shape(t, in->ty, a->rank, shape);
  for (int64_t j = 0; j < t->n; j++) {
    uint8_t buf[8], b[8];
    bool def = true;
    for (int k = 0; k < nb; k++) {
      int64_t at = j * nb + k, e = at / ob;
      dtype_store(a->dtype, a->v[e], b);
      buf[k] = b[at % ob];
      def = def && a->def[e];
    }
    t->v[j] = dtype_load(in->ty, buf), t->def[j] = def;
  }
  return true;
}

static bool x_concat(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  int64_t rows = 0, inner = 0;
  Value *first = NULL;
  for (int64_t k = 0; k < in->imm; k++) {
    Value *it = eng_rd(E, s, in, in->a + (int)k, &ok);
    if (!ok) return false;
    if (!it->rank) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.concatenate: an operand is a scalar");
    if (k == 0) first = it, inner = it->n / it->shape[0];
    else if (!eng_fits(E, s, in, "operand row", it->n / it->shape[0], "the first operand's row", inner)) return false;
    rows += it->shape[0];
  }
  if (!first) return eng_efault(E, s, in, FAULT_LOWERING, "tpu.concatenate: no operands");
  int64_t shape[MAX_RANK];
  memcpy(shape, first->shape, sizeof shape);
  shape[0] = rows;
  Value *t = &s->tmp;
  val_shape(t, in->ty, first->rank, shape);
  int64_t at = 0;
  for (int64_t k = 0; k < in->imm; k++) {
    Value *it = eng_rd(E, s, in, in->a + (int)k, &ok);
    for (int64_t i = 0; i < it->n; i++, at++) t->v[at] = alu_convert(it->dtype, in->ty, it->v[i]), t->def[at] = it->def[i];
  }
  return true;
}

/* Rows imm .. imm + shape[0] of dimension 0. */
static bool x_slice(Eng *E, Sc *s, const Instr *in, const Value *a) {
  if (!a->rank || in->imm < 0 || in->shape[0] < 0 || in->imm + in->shape[0] > a->shape[0])
    return eng_efault(E, s, in, FAULT_LOWERING, "vector.extract_strided_slice: the rows are outside the operand");
  int64_t shape[MAX_RANK], inner = a->n / (a->shape[0] ? a->shape[0] : 1);
  memcpy(shape, a->shape, sizeof shape);
  shape[0] = in->shape[0];
  Value *t = &s->tmp;
  val_shape(t, in->ty, a->rank, shape);
  memcpy(t->v, a->v + in->imm * inner, sizeof(Cell) * (size_t)t->n);
  memcpy(t->def, a->def + in->imm * inner, (size_t)t->n);
  return true;
}

bool eng_x_valops(Eng *E, Sc *s, const Instr *in) {
  bool ok = true;
  if (in->op == I_CONCAT) {
    if (!x_concat(E, s, in)) return false;
    return eng_swap_in(s, in->d), true;
  }
  Value *a = eng_rd(E, s, in, in->a, &ok);
  if (!ok) return false;
  else if (in->op == I_DYN_GATHER) ok = x_gather(E, s, in, a);
  else if (in->op == I_SHAPE_CAST) ok = x_shape_cast(E, s, in, a);
  else if (in->op == I_BITCAST) ok = x_bitcast(E, s, in, a);
  else if (in->op == I_SLICE) ok = x_slice(E, s, in, a);
  else ok = x_lanewise(s, in, a); /* math.exp, math.absf, math.absi */
  if (ok) eng_swap_in(s, in->d);
  return ok;
}
