/* lowering/lower.h -- accepted operations to ISA instructions (SPEC §6).
 *
 * Each value expression becomes arithmetic on registers; every name (let,
 * out, loop variable) owns one register.  Each ref expression becomes a
 * VDesc, compiled once here: the ref, and per transform level its kind,
 * result shape and dtype and, for an NDIndexer, each entry's start and size
 * as an immediate or the register computed just before the access.  A swap
 * is a load then a store; a store is a swap whose old value is dropped.
 *
 * Mutants: --mutate NAME lowers one thing deliberately wrong, so that users
 * and tests can see verification catch a broken lowering.  Each mutant is a
 * rewrite of the correctly lowered code (lowering/mutate.c): instructions
 * removed, reordered or inserted, views changed, or an instruction variant
 * (isa.h ISA_FLAGS) chosen; the engine runs what it is given and knows no
 * mutant. */
#ifndef SC_LOWER_H
#define SC_LOWER_H

#include <stdio.h>

#include "../isa/isa.h"
#include "index.h"

/* X(ENUM, name, what it breaks) */
#define MUTANTS(X)                                                                    \
  X(SWAP_STORE_FIRST, "swap-store-first", "a swap stores before it loads the old value") \
  X(MASK_AS_SELECT, "mask-as-select", "a masked load/store selects lanes instead of expanding/compressing") \
  X(ADD_OVERWRITES, "add-overwrites", "addupdate stores the value instead of adding it") \
  X(OFF_BY_ONE_LANE, "off-by-one-lane", "vector accesses start one element late") \
  X(BF16_TRUNCATE, "bf16-truncate", "bfloat16 stores truncate instead of rounding to nearest even") \
  X(SCATTER_FIRST_WINS, "scatter-first-wins", "duplicate scatter indices keep the lowest lane") \
  X(SCATTER_ADD_OVERWRITES, "scatter-add-overwrites", "addupdate_scatter overwrites instead of adding") \
  X(COMPRESS_NO_SKIP, "compress-no-skip", "store_compressed writes x[k] instead of the k-th selected lane") \
  X(EXPAND_NO_SKIP, "expand-no-skip", "load_expanded puts element k in lane k instead of the k-th selected lane") \
  X(SCALAR_STORE_DROPPED, "scalar-store-dropped", "scalar SMEM stores are not emitted") \
  X(DMA_DROP_LAST, "dma-drop-last", "a DMA stops one element short in its last dimension") \
  X(IOTA_FROM_ONE, "iota-from-one", "iota counts from 1")                            \
  X(LOOP_SKIP_LAST, "loop-skip-last", "loops stop one iteration early")              \
  X(UNSIGNED_SIGN_EXTEND, "unsigned-sign-extend", "unsigned 8/16-bit loads sign-extend")

typedef enum {
  MUT_NONE,
#define X(e, n, w) MUT_##e,
  MUTANTS(X)
#undef X
  MUT_COUNT
} Mutant;

const char *mutant_name(Mutant m);
const char *mutant_what(Mutant m);
bool mutant_lookup(const char *name, Mutant *out);

typedef struct {
  int64_t imm;
  int reg; /* >= 0: the value comes from this register at run time */
} Operand;

typedef struct {
  TrKind kind;
  Dtype dtype;                 /* after the level */
  int rank;
  int64_t shape[MAX_RANK];     /* after the level (DYN where dynamic) */
  int n;                       /* INDEX: entries */
  IxKind ek[MAX_RANK];
  Operand start[MAX_RANK], size[MAX_RANK];
  int64_t stride[MAX_RANK];
  int int_rank;
} Level;

typedef struct {
  const Ref *ref;
  const View *src;             /* for printing */
  int nlev;
  Level lev[MAX_TRANSFORMS];
} VDesc;

typedef struct {
  Instr *code;
  int n, cap;
  VDesc *views;
  int nviews, capviews;
  int nregs;
  const char **reg_name; /* nregs entries: the program name a register holds, or NULL */
  Mutant mutant;              /* the rewrite applied (MUT_NONE: the correct lowering) */
  const Program *p;
  int split;                  /* an mpmd kernel: [0, split) is the vector mesh's code, [split, n) the scalar
                               * subcore's (lowering/lower_mpmd.c); 0 for any other code */
} Code;

/* Every register lives on every subcore of the mesh, so registers times
 * subcores are bounded before anything runs (about 200 bytes a slot). */
#define LOWER_MAX_REG_SLOTS (1LL << 22)
/* The most registers a lowering may use on the program's mesh. */
int64_t lower_max_regs(const Program *p);

/* Lowers the whole body of an accepted program (checked by check_program,
 * whose types and views it reads).  Returns false with *d set only for a
 * size limit.  The caller frees with lower_free. */
bool lower_program(const Program *p, Mutant mut, Code *out, Diag *d);
void lower_free(Code *c);

/* Rewrites c, correctly lowered, into mutant m's wrong lowering (nothing
 * for MUT_NONE) and records m in c->mutant.  Jump targets follow the
 * instructions they named; new registers and views are appended.  Called
 * by lower_program before it sizes reg_name. */
void mutant_apply(Code *c, Mutant m);

/* An mpmd kernel (Program.mpmd): the vector mesh's code v and the scalar
 * subcore's code s, each lowered on its own, as one Code for p (the
 * combined program): s follows v, its registers, views and jump targets
 * moved past v's, and out->split marks where it starts.  v and s are
 * left empty (their arrays move into out). */
void lower_mpmd_merge(const Program *p, Code *v, Code *s, Code *out);


#endif
