/* lowering/mosaic.c -- the Mosaic verifier's rules on lowered code. */
#include "mosaic.h"

#include <stdio.h>
#include <string.h>

/* A memref's type, as Mosaic sees an operand: space, element type, shape. */
typedef struct {
  Space space;
  Dtype dtype;
  int rank;
  const int64_t *shape;
} MemType;

static MemType mem_type(const Code *c, int view) {
  const VDesc *v = &c->views[view];
  if (!v->nlev) return (MemType){v->ref->space, v->ref->dtype, v->ref->rank, v->ref->shape};
  const Level *lv = &v->lev[v->nlev - 1];
  return (MemType){v->ref->space, lv->dtype, lv->rank, lv->shape};
}

/* The memref's element type as Mosaic compares it: MLIR integers are
 * signless (uint32 is i32) and a bool memref is i32 (jax 0.10.2). */
static Dtype signless(Dtype t) {
  switch (t) {
  case DT_BOOL: case DT_UINT32: return DT_INT32;
  case DT_UINT16: return DT_INT16;
  case DT_UINT8: return DT_INT8;
  case DT_UINT64: return DT_INT64;
  case DT_UINT4: return DT_INT4;
  case DT_INT4:
  case DT_INT32: case DT_FLOAT32: case DT_BFLOAT16: case DT_FLOAT16: case DT_INT16: case DT_INT8: case DT_INT64:
  case DT_FLOAT64: case DT_FLOAT8_E4M3FN: case DT_FLOAT8_E5M2: case DT_COUNT: break;
  }
  return t;
}

const char *mosaic_elem_name(Dtype t) {
  switch (t) {
  case DT_INT32: case DT_UINT32: return "i32";
  case DT_FLOAT32: return "f32";
  case DT_BFLOAT16: return "bf16";
  case DT_FLOAT16: return "f16";
  case DT_INT16: case DT_UINT16: return "i16";
  case DT_INT8: case DT_UINT8: return "i8";
  case DT_BOOL: return "i1";
  case DT_INT64: case DT_UINT64: return "i64";
  case DT_FLOAT64: return "f64";
  case DT_FLOAT8_E4M3FN: return "f8E4M3FN";
  case DT_FLOAT8_E5M2: return "f8E5M2";
  case DT_INT4: case DT_UINT4: return "i4";
  case DT_COUNT: break;
  }
  return "?";
}

static const char *space_attr(Space s) {
  switch (s) {
  case SP_VMEM: return "vmem";
  case SP_SMEM: return "smem";
  case SP_HBM: return "hbm";
  case SP_VMEM_SHARED: return "vmem_shared";
  case SP_SEMAPHORE: case SP_COUNT: break;
  }
  return "semaphore_mem";
}

static bool same_shape(int ra, const int64_t *a, int rb, const int64_t *b) {
  return ra == rb && !memcmp(a, b, sizeof(int64_t) * (size_t)ra);
}

/* Sets rule id at the instruction; always false, so `return fire(...)`. */
static bool fire(Diag *d, DiagId id, const Instr *in, ...) {
  va_list ap;
  va_start(ap, in);
  diag_vset(d, id, in->loc, ap);
  va_end(ap);
  return false;
}

/* ---- vector accesses (tpu.vector_load / _store and the _idx forms) ----- */

/* M-VL3: with layout passes, Mosaic types a store through an integer index
 * with the final indexer's unsqueezed sizes, while its mask keeps the
 * value's (the view's) squeezed shape. */
static bool store_mask_shape(const Code *c, const Instr *in, Diag *d) {
  const VDesc *v = &c->views[in->view];
  const Level *lv = v->nlev ? &v->lev[v->nlev - 1] : NULL;
  if (!lv || lv->kind != TR_INDEX) return true;
  int64_t sizes[MAX_RANK];
  int slices = 0;
  for (int k = 0; k < lv->n; k++) {
    bool slice = lv->ek[k] == IX_SLICE;
    sizes[k] = !slice ? 1 : lv->size[k].reg >= 0 ? DYN : lv->size[k].imm;
    slices += slice;
  }
  if (slices == lv->n) return true;
  char want[256], got[256];
  fmt_dims(want, sizeof want, lv->n, sizes);
  fmt_dims(got, sizeof got, lv->rank, lv->shape);
  return fire(d, D_M_VL3, in, want, got);
}

static bool vector_access(const Code *c, const Instr *in, Diag *d) {
  MemType base = mem_type(c, in->view);
  bool load = in->op == I_VLOAD || in->op == I_VLOAD_IDX;
  if (base.space != SP_VMEM) return fire(d, D_M_VL1, in, isa_mnemonic(in->op) + strlen("tpu."));
  /* M-VL5 also: the plsc masked accesses and addupdate keep the ref's own
   * memref under a bitcast, so its element type is not the vector's */
  bool plsc_access = (in->op == I_VLOAD || in->op == I_VSTORE) && (in->mask >= 0 || in->add);
  if (plsc_access && base.dtype != c->views[in->view].ref->dtype) return fire(d, D_M_VL5, in);
  if (in->mask >= 0 && dtype_size(base.dtype) != 4) return fire(d, D_M_VL2, in, load ? "load" : "store");
  /* M-VL5: a bool memref is i32 in Mosaic, a bool vector i1; jax 0.10.2
   * lowers a set as a swap, so a store meets the same vector_load */
  if ((in->op == I_VLOAD || in->op == I_VSTORE) && base.dtype == DT_BOOL) return fire(d, D_M_VL5, in);
  if (in->op == I_VSTORE && in->mask >= 0 && c->p->layout_passes) return store_mask_shape(c, in, d);
  return true;
}

/* M-ST1: a scalar bool in SMEM is an i32 memref element, so only a value
 * loaded from such a memref (an i32, possibly through copies) stores
 * into one; a computed bool (i1) does not.  The last write of the value's
 * register before the store, in code order, names where it came from. */
static bool bool_store(const Code *c, int at, Diag *d) {
  const Instr *in = &c->code[at];
  if (mem_type(c, in->view).dtype != DT_BOOL) return true;
  int reg = in->a;
  for (int i = at - 1; i >= 0 && reg >= 0; i--) {
    const Instr *w = &c->code[i];
    if (w->d != reg || isa_form(w->op)[0] != 'D') continue;
    if (w->op == I_MOV) { reg = w->a; continue; }
    if (w->op == I_LOAD && mem_type(c, w->view).dtype == DT_BOOL) return true;
    break;
  }
  return fire(d, D_M_ST1, in);
}

/* ---- DMAs ----------------------------------------------------------------- */
static bool enqueue_dma(const Code *c, const Instr *in, Diag *d) {
  MemType src = mem_type(c, in->view), dst = mem_type(c, in->view2);
  char a[256], b[256];
  if (signless(src.dtype) != signless(dst.dtype)) {
    fire(d, D_M_DMA1, in);
    diag_note(d, "the source has dtype %s and the destination %s", dtype_name(src.dtype), dtype_name(dst.dtype));
    return false;
  }
  if (!same_shape(src.rank, src.shape, dst.rank, dst.shape)) {
    fire(d, D_M_DMA2, in);
    fmt_shape(a, sizeof a, src.rank, src.shape);
    fmt_shape(b, sizeof b, dst.rank, dst.shape);
    diag_note(d, "the source view has shape %s and the destination view %s", a, b);
    return false;
  }
  if (in->prio != 0 && in->prio != 1) {
    snprintf(a, sizeof a, "%lld", (long long)in->prio);
    return fire(d, D_M_DMA3, in, a);
  }
  if (in->view3 >= 0 && mem_type(c, in->view3).rank) return fire(d, D_M_DMA5, in);
  return true;
}

/* The offsets' shape: their view's, or the register's as the instruction
 * states it; false when unknown (a user's register without shape=). */
static bool offsets_shape(const Code *c, const Instr *in, int *rank, const int64_t **shape) {
  if (in->view4 >= 0) {
    MemType o = mem_type(c, in->view4);
    *rank = o.rank, *shape = o.shape;
    return true;
  }
  *rank = in->rank, *shape = in->shape;
  return in->a >= 0 && in->rank > 0;
}

/* M-IND4 to M-IND7: the offsets index the major dimension of the indexed
 * side (imm 1: the source, a gather), whose other dimensions must match. */
static bool indirect_shapes(const Code *c, const Instr *in, Diag *d) {
  int orank;
  const int64_t *os;
  char a[256], b[256], msg[700];
  if (!offsets_shape(c, in, &orank, &os)) return true;
  fmt_dims(a, sizeof a, orank, os);
  if (!(orank == 1 || (orank == 2 && os[0] == 1))) return fire(d, D_M_IND4, in, a);
  int64_t o = orank == 1 ? os[0] : os[1];
  bool gather = in->imm != 0;
  MemType tgt = mem_type(c, gather ? in->view2 : in->view), big = mem_type(c, gather ? in->view : in->view2);
  /* M-IND10: (1, N) offsets take the indexed side as a sample, 1-D or (1, N)
   * itself (jax 0.10.2's verifier; a 1-D side is another message there) */
  if (orank == 2 && big.rank == 2 && big.shape[0] != 1) {
    char bs[256];
    fmt_dims(bs, sizeof bs, big.rank, big.shape);
    return fire(d, D_M_IND10, in, gather ? "Source (gather operand)" : "Target (scatter operand)", bs);
  }
  snprintf(a, sizeof a, "%lld", (long long)o);
  fmt_dims(b, sizeof b, tgt.rank, tgt.shape);
  if (tgt.rank < 1 || tgt.shape[0] != o) {
    if (gather) return fire(d, D_M_IND5, in, a, b);
    snprintf(msg, sizeof msg, "Offsets shape (%s) must match the majormost dimensions of the source (scatter updates) shape (%s)", a, b);
    return fire(d, D_M_IND7, in, msg);
  }
  if (big.rank == tgt.rank && !memcmp(big.shape + 1, tgt.shape + 1, sizeof(int64_t) * (size_t)(tgt.rank - 1))) return true;
  char bigs[256];
  fmt_dims(bigs, sizeof bigs, big.rank, big.shape);
  /* the verifier's "%d minormost dimension%s": plural past one */
  const char *pl = (gather ? big.rank : tgt.rank) - 1 == 1 ? "" : "s";
  if (gather) {
    snprintf(a, sizeof a, "%d", big.rank - 1);
    return fire(d, D_M_IND6, in, a, pl, bigs, pl, b);
  }
  snprintf(msg, sizeof msg,
           "%d minormost dimension%s of the source (scatter updates) shape (%s) must match the minormost dimension%s of the target (scatter operand) shape (%s)",
           tgt.rank - 1, pl, b, pl, bigs);
  return fire(d, D_M_IND7, in, msg);
}

static bool far_side(Space s) { return s == SP_HBM || s == SP_VMEM_SHARED; }

/* M-IND9: the op's operand types (ODS, verified before its own verifier):
 * offsets in memory are a memref of 32-bit integers. */
static bool offsets_type(const Code *c, const Instr *in, Diag *d) {
  if (in->view4 < 0) return true;
  MemType o = mem_type(c, in->view4);
  if (signless(o.dtype) == DT_INT32) return true;
  char dims[256];
  size_t n = 0;
  dims[0] = 0;
  for (int k = 0; k < o.rank && n + 24 < sizeof dims; k++)
    n += (size_t)snprintf(dims + n, sizeof dims - n, "%s%lld", k ? "x" : "", (long long)o.shape[k]);
  return fire(d, D_M_IND9, in, dims, mosaic_elem_name(o.dtype), space_attr(o.space));
}

static bool enqueue_indirect(const Code *c, const Instr *in, Diag *d) {
  if (!offsets_type(c, in, d)) return false;
  if (c->p->kernel == KERNEL_SCALAR) return fire(d, D_M_IND1, in, "enqueue", "Enqueue");
  MemType src = mem_type(c, in->view), dst = mem_type(c, in->view2);
  if (signless(src.dtype) != signless(dst.dtype)) return fire(d, D_M_IND2, in);
  if (in->view4 >= 0 && mem_type(c, in->view4).space != SP_VMEM) return fire(d, D_M_IND3, in);
  if (!indirect_shapes(c, in, d)) return false;
  if (!((src.space == SP_VMEM && far_side(dst.space)) || (dst.space == SP_VMEM && far_side(src.space))))
    return fire(d, D_M_IND8, in);
  return true;
}

static bool wait_dma(const Code *c, const Instr *in, Diag *d) {
  if (in->op == I_WAIT_INDIRECT_DMA)
    return c->p->kernel == KERNEL_SCALAR ? fire(d, D_M_IND1, in, "wait", "Wait") : true;
  if (in->view3 >= 0 && mem_type(c, in->view3).rank) return fire(d, D_M_WAIT1, in);
  return true;
}

/* M-RS1: tpu.memref_reshape to a rank-1 memref does not verify (jax 0.10.2
 * builds one for every access through a reshape view, lowering.py
 * _reshape_memref, before the access's own op). */
static bool reshape_1d(const Code *c, int view) {
  if (view < 0) return false;
  const VDesc *v = &c->views[view];
  for (int k = 0; k < v->nlev; k++)
    if (v->lev[k].kind == TR_RESHAPE && v->lev[k].rank == 1) return true;
  return false;
}

/* ---- the walk ---------------------------------------------------------------- */
static bool verify_instr(const Code *c, const Instr *in, Diag *d) {
  if (reshape_1d(c, in->view) || reshape_1d(c, in->view2) || reshape_1d(c, in->view4)) return fire(d, D_M_RS1, in);
  switch (in->op) {
  case I_VLOAD: case I_VSTORE: case I_VLOAD_IDX: case I_VSTORE_IDX: return vector_access(c, in, d);
  case I_ENQUEUE_DMA: return enqueue_dma(c, in, d);
  case I_ENQUEUE_INDIRECT_DMA: return enqueue_indirect(c, in, d);
  case I_WAIT_DMA: case I_WAIT_INDIRECT_DMA: return wait_dma(c, in, d);
  case I_FETCH_AND_ADD: return c->p->kernel == KERNEL_SCALAR ? fire(d, D_M_FA1, in) : true;
  case I_CONST: case I_COORD: case I_IOTA: case I_BINARY: case I_UNARY: case I_SELECT: case I_MINMAX: case I_SCAN: case I_SORT: case I_SCAN_COUNT: case I_PACK: case I_UNPACK: case I_ALL_REDUCE: case I_CAST:
  case I_BROADCAST: case I_FROM_ELEMENTS: case I_EXTRACT: case I_MOV: case I_LOAD: case I_STORE: case I_SEM_SIGNAL:
  case I_SEM_WAIT: case I_BARRIER: case I_FOR: case I_ENDFOR: case I_BRANCH_IF_FALSE: case I_JUMP: case I_EXPECT:
  case I_EXPECT_VIEW: case I_DYN_GATHER: case I_EXP: case I_ABSF: case I_ABSI: case I_SHAPE_CAST:
  case I_BITCAST: case I_CONCAT: case I_SLICE: case I_LOG: case I_LOG_BUFFER: case I_ASSERT: case I_COUNT: break;
  }
  return true;
}

bool mosaic_verify(const Code *c, Diag *d) {
  for (int i = 0; i < c->n; i++)
    if (!verify_instr(c, &c->code[i], d) || (c->code[i].op == I_STORE && !bool_store(c, i, d))) return false;
  return true;
}
