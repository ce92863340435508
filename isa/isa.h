/* isa/isa.h -- sc-sim's instruction set: one instruction per Mosaic op of
 * SPEC §6, plus the scalar/vector arithmetic and control flow the value
 * expressions and loops need.
 *
 * ISA_OPS declares every instruction once:
 *   X(ENUM, mnemonic, form, semantics)
 * The form is the single list of an instruction's operands, one letter
 * each; for registers and views an upper-case letter is required and a
 * lower-case one optional (absent: -1).  The text printer writes exactly
 * these operands and the parser accepts exactly these, requiring the
 * upper-case ones (lowering/asm.c); the engine's scheduler waits on the
 * source registers they name (A B C M N); tests/test_units.c checks every
 * opcode's round trip against its form.
 *   D  the destination register      A B C  source registers a, b, c
 *   N  the source registers a..a+imm-1 (a run; imm is its length)
 *   M  a mask register               V      the memory operand (a view)
 *   W  a DMA's destination view      X      a DMA's semaphore view
 *   O  an indirect DMA's offsets view
 *   I  the immediate (imm; a float constant's fimm)
 *   R  a static list (shape=): a shape, extract indices, register offsets' shape
 *   S  a sub-operation (ExprOp)      T U    the result dtype, the operand dtype
 *   J  a jump target                 G      log kind (L loaded, O old, N new)
 *   F  flags: add, a DMA's priority, and the variants of ISA_FLAGS (flags=)
 * scf.yield also reads its destination (the counter it steps); the
 * scheduler need not wait on it, as only this loop's scf.for and scf.yield
 * write it.
 *
 * Registers hold Values (isa/value.h).  Views are compiled memory operands
 * (lowering/lower.h): a ref, its transform levels, and per level the
 * register or immediate of every start. */
#ifndef SC_ISA_H
#define SC_ISA_H

#include "loc.h"
#include "value.h"

#define ISA_OPS(X)                                                                                  \
  X(CONST, "arith.constant", "DIT", "d := imm (ty)")                                             \
  X(COORD, "sc.coord", "DI", "d := this subcore's core (imm 0) or subcore (imm 1) index")         \
  X(IOTA, "tpu.iota", "DI", "d := [0, 1, ..., imm-1] (int32)")                                   \
  X(BINARY, "arith.binary", "DABSTU", "d := a op b, operands converted to U, result T")           \
  X(UNARY, "arith.unary", "DASTU", "d := op a")                                                 \
  X(SELECT, "arith.select", "DABCTU", "d := where(a, b, c)")                                    \
  X(MINMAX, "arith.minmax", "DABITU", "d := min (imm 0) or max (imm 1) of a and b")              \
  X(SCAN, "tpu.scan", "DAMIT", "d := inclusive scan of a over the lanes where mask M holds: sum (imm 0), max (1), min (2); integer max/min compare unsigned; other lanes keep the running value (max/min: a until the first)") \
  X(SORT, "tpu.sort", "DAbMIT", "d := one result of sorting the lanes of a where mask M holds, stably by key (integers compare unsigned, NaN last; imm & 2: by decreasing key, the descending attribute), then the others in order; imm & 1: the whole result reversed; imm >> 2 picks the result: 0 the keys, 1 the payload b moved with its keys, 2 the output mask (the first popcount(M) lanes true)") \
  X(SCAN_COUNT, "tpu.scan_count", "DAMIT", "d := one result of counting duplicates among the lanes of a where mask M holds (equal 32-bit words): imm 0 the counts (lane i: how many selected lanes at or before i equal it; unselected lanes undefined) (int32), imm 1 the last-occurrence mask (a selected lane no later selected lane equals) (bool)") \
  X(PACK, "tpu.pack_subelements", "DABITR", "d := a and b converted to T (narrower: integers keep their low bits, floats round to nearest even) and interleaved, a[0] b[0] a[1] b[1] ..., in shape R ((2n,) for imm 0, interleaved; (n, 2) for imm 1, compressed)") \
  X(UNPACK, "tpu.unpack_subelements", "DAITR", "d := the lanes imm & 1 + 2k of a (imm & 1: 0 the first half of each pair, 1 the second; imm >> 1: 0 interleaved, 1 compressed) widened to T (integers sign- or zero-extend by a's dtype, floats exactly), in shape R") \
  X(ALL_REDUCE, "tpu.all_reduce", "DAIR", "d := full(shape R, the number of true lanes of a (imm 0) or the index of its first true lane, its length if none (imm 1)) (int32)") \
  X(CAST, "arith.convert", "DATF", "d := astype(a, T) (truncate: a float to bfloat16 rounds toward zero)")                                         \
  X(BROADCAST, "vector.broadcast", "DATR", "d := full(shape R, a)") \
  X(FROM_ELEMENTS, "vector.from_elements", "DNT", "d := [regs a..a+imm-1] stacked")              \
  X(EXTRACT, "vector.extract", "DAR", "d := a[static indices R]")                                  \
  X(MOV, "sc.mov", "DA", "d := a")                                                              \
  X(DYN_GATHER, "tpu.dynamic_gather", "DABT", "d[k] := a[b[k]] (b[k] outside [0, n): undefined)") \
  X(EXP, "math.exp", "DAT", "d := exp(a) (float)")                                               \
  X(ABSF, "math.absf", "DAT", "d := |a| (float)")                                                \
  X(ABSI, "math.absi", "DAT", "d := |a| (integer, wraps)")                                       \
  X(SHAPE_CAST, "vector.shape_cast", "DATR", "d := a reshaped to shape R (row-major)")          \
  X(BITCAST, "tpu.bitcast", "DAT", "d := the bytes of a as dtype T (the last dimension scales by the bit widths)")                   \
  X(CONCAT, "tpu.concatenate", "DNT", "d := regs a..a+imm-1 joined along dimension 0")           \
  X(SLICE, "vector.extract_strided_slice", "DAIR", "d := a[imm : imm + R[0]] along dimension 0 (shape R)") \
  X(LOAD, "memref.load", "DVG", "d := scalar at view (SMEM)")                                    \
  X(STORE, "memref.store", "VAG", "scalar at view := a")                                         \
  X(VLOAD, "tpu.vector_load", "DVmGF", "d := view (masked: expanded)")                            \
  X(VSTORE, "tpu.vector_store", "VAmFG", "view := a (masked: compressed; add: +=)")             \
  X(VLOAD_IDX, "tpu.vector_load_idx", "DVNmG", "d[k] := view[idx regs a..a+imm-1 at k]")         \
  X(VSTORE_IDX, "tpu.vector_store_idx", "VNBmF", "view[idx regs a.. at k] := b[k] (add: +=; equal indices: highest k wins)")   \
  X(ENQUEUE_DMA, "tpu.enqueue_dma", "VWxF", "copy view to view W, signal semaphore X (none: complete before the next instruction)")     \
  X(ENQUEUE_INDIRECT_DMA, "tpu.enqueue_indirect_dma", "VWxoaRcIF", "gather (imm 1) or scatter rows by offsets view O or register a (shape R); c: ignored value") \
  X(WAIT_DMA, "tpu.wait_dma2", "VWX", "wait until semaphore X holds the bytes of the copy, consume") \
  X(WAIT_INDIRECT_DMA, "tpu.wait_indirect_dma", "VWXI", "the same for an indirect copy")         \
  X(SEM_SIGNAL, "tpu.sem_signal", "Vabc", "semaphore view on (core b, subcore c) += a")         \
  X(SEM_WAIT, "tpu.sem_wait", "Va", "block until semaphore >= a, then subtract a")              \
  X(BARRIER, "tpu.barrier", "", "block until every vector subcore of the core arrives")          \
  X(FETCH_AND_ADD, "tpu.fetch_and_add_sync", "DVABG", "d := view on subcore b; view += a (atomic)") \
  X(FOR, "scf.for", "DABCJ", "d := a; loop while d < b (step c); exit to J")                     \
  X(ENDFOR, "scf.yield", "DBCJ", "d += c; while d is in range (hi b), jump to J (the body's first instruction)")                                   \
  X(BRANCH_IF_FALSE, "scf.if", "AJ", "if not a: jump to J")                                      \
  X(JUMP, "cf.br", "J", "jump to J")                                                             \
  X(EXPECT, "sc.expect", "AB", "every lane of a equals b (broadcast)")                          \
  X(EXPECT_VIEW, "sc.expect_view", "VB", "every element of view equals b")                      \
  X(LOG, "tpu.log", "aG", "print the operation's message (and a) on this subcore's log")         \
  X(LOG_BUFFER, "tpu.log_buffer", "VG", "print the operation's message and the contents of view") \
  X(ASSERT, "cf.assert", "A", "fault `check` with the operation's message unless a (bool) holds")

typedef enum {
#define X(e, m, f, s) I_##e,
  ISA_OPS(X)
#undef X
  I_COUNT
} Opcode;

/* Instruction variants, bits of Instr.flags (text: flags=KEY,KEY), for the
 * instructions whose form has F.  A masked access pairs, for the k-th
 * selected lane p_k (k = 0, 1, ...), a register lane and a memory element:
 * by default lane p_k and element k (a load expands, a store compresses);
 * lane_k and elem_p change either side (elem_p alone is a select-style
 * masked access, lane p_k to element p_k).  sc-sim's lowering emits only
 * the defaults; the variants exist so that the mutants (lowering/mutate.c)
 * are instructions the engine executes, not branches inside it.
 *   X(ENUM, key, meaning) */
#define ISA_FLAGS(X)                                                                                 \
  X(LANE_K, "lane_k", "masked vector_load/vector_store: the register side is lane k, not lane p_k")  \
  X(ELEM_P, "elem_p", "masked vector_load/vector_store: the memory side is element p_k, not k")     \
  X(LOW_WINS, "low_wins", "vector_store_idx: lanes apply from the highest down (equal indices: the lowest wins)") \
  X(TRUNCATE, "truncate", "arith.convert: a float converts to bfloat16 by truncation (toward zero)")

typedef enum {
#define X(e, k, m) IFB_##e,
  ISA_FLAGS(X)
#undef X
  IF_COUNT
} IsaFlagBit;

enum {
#define X(e, k, m) IF_##e = 1u << IFB_##e,
  ISA_FLAGS(X)
#undef X
};

typedef struct {
  Opcode op;
  int d, a, b, c;    /* registers, -1 when unused */
  int mask;          /* mask register or -1 */
  int view, view2;   /* view ids or -1 (memory operand; DMA destination) */
  int view3, view4;  /* DMA: the semaphore view; the offsets view (or -1) */
  int rank;          /* BROADCAST shape / EXTRACT indices */
  int64_t shape[MAX_RANK];
  int64_t imm;
  double fimm;       /* CONST of a float */
  ExprOp sub;
  Dtype ty, uty;
  int target;        /* jump target (instruction index) */
  bool add;
  unsigned flags;    /* IF_* bits (ISA_FLAGS) */
  int64_t prio;      /* ENQUEUE_DMA: the DMA's priority (Mosaic takes 0 or 1) */
  char log;          /* 0, 'L', 'O', 'N' */
  int op_id;         /* the program operation it came from */
  Loc loc;
} Instr;

const char *isa_mnemonic(Opcode op);
const char *isa_form(Opcode op);
const char *isa_semantics(Opcode op);
/* The text key of flag bit b (IsaFlagBit) and what it means. */
const char *isa_flag_key(int b);
const char *isa_flag_meaning(int b);
/* Looks up a flag key; false when unknown. */
bool isa_flag_lookup(const char *key, unsigned *bit);
/* The form's letter for operand `letter` (upper case): itself when the
 * operand is required, its lower case when optional, 0 when the
 * instruction has no such operand. */
char isa_operand(Opcode op, char letter);
/* Looks up a mnemonic; false when unknown. */
bool isa_lookup(const char *mnemonic, Opcode *out);

#endif
