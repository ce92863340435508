/* lowering/program.h -- the program IR: what sim/front/load builds from program.yaml
 * and what the checker, the lowering and the reference interpreter read.
 *
 * Every node carries its Loc.  All nodes live in one Arena owned by the
 * Program and freed by program_free; nothing in the IR is freed alone.
 *
 * The two string languages of the format (ref expressions and value
 * expressions) share one Expr tree: a ref expression is a NAME with postfix
 * SUBSCRIPT / AT / BITCAST / RESHAPE nodes, and whether a name denotes a ref
 * or a value is decided by the checker, which knows the bindings. */
#ifndef SC_PROGRAM_H
#define SC_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../isa/value.h"
#include "../memory/chips.h"
#include "../memory/memory.h"
#include "builtins.h"
#include "diag.h"
#include "names.h"






/* ---- expressions --------------------------------------------------- */
typedef enum {
  EX_INT,      /* ival */
  EX_FLOAT,    /* fval */
  EX_BOOL,     /* ival 0/1 */
  EX_NAME,     /* name */
  EX_UNARY,    /* op a */
  EX_BINARY,   /* a op b */
  EX_CALL,     /* name(args...), kw[i] non-NULL for keyword args */
  EX_SUBSCRIPT,/* a[args...] */
  EX_AT,       /* a.at[args...] */
  EX_BITCAST,  /* a.bitcast(dtype) */
  EX_RESHAPE,  /* a.reshape(args...) */
  EX_LIST,     /* [args...] (YAML list or bracket literal) */
  EX_SLICE,    /* a:b:c inside a subscript; each may be NULL */
  EX_ELLIPSIS, /* ... */
  EX_NONE      /* None */
} ExprKind;


typedef struct Expr Expr;
struct Expr {
  ExprKind kind;
  Loc loc;
  ExprOp op;
  int64_t ival;
  double fval;
  const char *name; /* NAME, CALL (dotted callee) */
  Builtin builtin;  /* CALL: the callee, resolved by the parser (BI_NONE: unknown) */
  Expr *a, *b, *c;  /* operands; slice parts */
  Expr **args;      /* CALL args, subscript entries, list items, reshape dims */
  const char **kw;  /* CALL keyword names (NULL entries for positional) */
  Loc *kwloc;       /* CALL: where each keyword is written */
  int nargs;
  Dtype dtype;      /* BITCAST target */
  const char *text; /* the whole source string of a top-level expression */
  /* Filled by the checker for accepted programs (types at trace time): */
  Dtype ty;         /* the value's dtype */
  Dtype oty;        /* BINARY, where/min/max: the dtype operands promote to */
  bool weak;
  bool is_ref;      /* evaluates to a ref view */
  void *view;       /* when is_ref: the checker's View (lowering/index.h) */
  bool has_sval;    /* a static integer (a size or an element index), */
  int64_t sval;     /* folded: iota(2 * 8) lowers as iota(16) */
};

/* ---- refs ---------------------------------------------------------- */
typedef enum { SEM_NONE, SEM_DMA, SEM_REGULAR } SemType;

typedef struct {
  const char *name;
  Loc loc;
  int index; /* position in Program.refs */
  Space space;
  Dtype dtype;
  int rank;
  int64_t shape[MAX_RANK];
  int64_t nelems;
  SemType sem;
  bool annotated; /* false: declared without a memory space (prints None) */
  InitKind init;
  Cell fill;              /* INIT_FILL */
  Cell *init_data;        /* INIT_LIST, nelems cells (already fitted) */
  uint64_t seed;          /* INIT_RANDOM */
  double low, high;       /* INIT_RANDOM */
  const uint8_t *init_bytes; /* INIT_BYTES: nelems little-endian elements (init: {npy: PATH}) */
  const char *init_file;  /* INIT_BYTES: the path as written */
} Ref;

/* ---- operations ---------------------------------------------------- */
/* X(ENUM, key, required fields, optional fields) -- field bits below */
#define OPS(X)                                                                  \
  X(GET, "get", F(REF) | F(OUT), 0)                                             \
  X(SET, "set", F(REF) | F(VALUE), 0)                                           \
  X(SWAP, "swap", F(REF) | F(VALUE), F(OUT))                                    \
  X(ADDUPDATE, "addupdate", F(REF) | F(VALUE), 0)                               \
  X(LOAD_EXPANDED, "load_expanded", F(REF) | F(MASK) | F(OUT), 0)               \
  X(STORE_COMPRESSED, "store_compressed", F(REF) | F(VALUE) | F(MASK), 0)       \
  X(ADDUPDATE_COMPRESSED, "addupdate_compressed", F(REF) | F(VALUE) | F(MASK), 0) \
  X(LOAD_GATHER, "load_gather", F(REF) | F(INDICES) | F(OUT), F(MASK))          \
  X(STORE_SCATTER, "store_scatter", F(REF) | F(INDICES) | F(VALUE), F(MASK))    \
  X(ADDUPDATE_SCATTER, "addupdate_scatter", F(REF) | F(INDICES) | F(VALUE), F(MASK)) \
  X(ASYNC_COPY, "async_copy", F(SRC) | F(DST) | F(SEM) | F(OUT), F(PRIORITY) | F(ADD)) \
  X(WAIT, "wait", 0, F(SRC) | F(DST) | F(SEM))                                  \
  X(SYNC_COPY, "sync_copy", F(SRC) | F(DST), F(ADD))                            \
  X(SEMAPHORE_SIGNAL, "semaphore_signal", F(SEM), F(INC) | F(CORE) | F(SUBCORE)) \
  X(SEMAPHORE_WAIT, "semaphore_wait", F(SEM), F(VALUE))                         \
  X(FETCH_AND_ADD, "fetch_and_add", F(REF) | F(VALUE) | F(SUBCORE) | F(OUT), 0) \
  X(BARRIER, "barrier", 0, 0)                                                   \
  X(LET, "let", F(NAME) | F(VALUE), 0)                                          \
  X(LOOP, "loop", F(VAR) | F(RANGE) | F(BODY), F(CARRY) | F(NEXT) | F(PARALLEL)) \
  X(WHILE, "while", F(COND) | F(BODY), F(CARRY) | F(NEXT))                      \
  X(WHEN, "when", F(COND) | F(BODY), F(ELSE))                                   \
  X(EXPECT, "expect", F(EQUALS), F(VALUE) | F(REF))                            \
  X(UNIMPLEMENTED, "unimplemented", F(PRIMITIVE), 0)                            \
  X(DEBUG_PRINT, "debug_print", F(MESSAGE), F(ARGS) | F(ORDERED))               \
  X(DEBUG_CHECK, "debug_check", F(COND) | F(MESSAGE), 0)                       \
  X(UPDATE, "update", F(REF) | F(OP) | F(VALUE), 0)                             \
  X(CALL, "call", F(NAME), F(WITH))

/* X(ENUM, key, kind) -- the fields an operation can have */
#define FIELDS(X)                 \
  X(REF, "ref", FK_EXPR)          \
  X(VALUE, "value", FK_EXPR)      \
  X(PRIMITIVE, "primitive", FK_NAME) \
  X(OUT, "out", FK_NAME)          \
  X(MASK, "mask", FK_EXPR)        \
  X(INDICES, "indices", FK_LIST)  \
  X(SRC, "src", FK_EXPR_OR_LIST)  \
  X(DST, "dst", FK_EXPR_OR_LIST)  \
  X(SEM, "sem", FK_EXPR)          \
  X(PRIORITY, "priority", FK_EXPR)\
  X(ADD, "add", FK_EXPR)          \
  X(INC, "inc", FK_EXPR)          \
  X(CORE, "core", FK_EXPR)        \
  X(SUBCORE, "subcore", FK_EXPR)  \
  X(NAME, "name", FK_NAME)        \
  X(VAR, "var", FK_NAME)          \
  X(RANGE, "range", FK_LIST)      \
  X(BODY, "body", FK_BODY)        \
  X(COND, "cond", FK_EXPR)        \
  X(ELSE, "else", FK_BODY)        \
  X(EQUALS, "equals", FK_EXPR)    \
  X(CARRY, "carry", FK_MAP)       \
  X(NEXT, "next", FK_MAP)         \
  X(MESSAGE, "message", FK_TEXT)  \
  X(ARGS, "args", FK_LIST)        \
  X(ORDERED, "ordered", FK_EXPR)  \
  X(PARALLEL, "parallel", FK_EXPR) \
  X(OP, "op", FK_TEXT)            \
  X(WITH, "with", FK_MAP)

/* FK_MAP: a mapping name -> expression (loop carries); the names go to
 * Op.carry, the expressions to Op.list in the same order. */
/* FK_TEXT: any string (debug_print's message), kept in Op.name like a name. */
typedef enum { FK_EXPR, FK_NAME, FK_LIST, FK_EXPR_OR_LIST, FK_BODY, FK_MAP, FK_TEXT } FieldKind;

typedef enum {
#define X(e, k, kind) FLD_##e,
  FIELDS(X)
#undef X
  FLD_COUNT
} FieldId;
#define F(e) (1u << FLD_##e)

typedef enum {
#define X(e, k, req, opt) OPK_##e,
  OPS(X)
#undef X
  OPK_COUNT
} OpKind;

typedef struct Op Op;
typedef struct {
  Op **ops;
  int n;
} Body;

struct Op {
  OpKind kind;
  Loc loc;                   /* the operation's key */
  unsigned has;              /* F(...) bits present */
  Loc floc[FLD_COUNT];       /* each field's key */
  Expr *e[FLD_COUNT];        /* FK_EXPR fields */
  Expr **list[FLD_COUNT];    /* FK_LIST and list-form FK_EXPR_OR_LIST */
  int nlist[FLD_COUNT];      /* length; -1 when the field is a single expr */
  const char *name[FLD_COUNT]; /* FK_NAME fields */
  Loc nloc[FLD_COUNT];       /* the name value's position */
  Body body, els;
  const char *wait_desc;     /* wait: the descriptor's name (short form) */
  /* loop / while carries: the names of `carry`, in order, with where each
   * is written; list[FLD_CARRY] holds their initial values and
   * list[FLD_NEXT] the next values, aligned with them (the loader orders
   * `next` as `carry`); next_loc: where each next value's key is. */
  const char **carry;
  Loc *carry_loc, *next_loc;
  int ncarry;
  const char **next_name;    /* the loader's: `next` keys as written */
  Dtype *carry_ty;           /* the checker's: each carry's dtype (a weakly typed
                              * initial value takes its next value's dtype) */
  /* Filled by the checker for accepted programs: the View of each ref
   * field (sync_copy lists: one per item) and, for DMAs, whether the copy
   * is indirect and on which side (lowering/index.h, lowering/check.c). */
  void *view[FLD_COUNT];
  void **views[FLD_COUNT];
  void *dma;                 /* async_copy / wait / sync_copy: DmaPlan(s) */
  int id;                    /* program-order number, 0-based, unique */
};

/* A loop written `parallel: true` (plsc.parallel_loop). */
bool op_parallel(const Op *op);

const char *op_key(OpKind k);
unsigned op_required(OpKind k);
unsigned op_optional(OpKind k);
const char *field_key(FieldId f);
FieldKind field_kind(FieldId f);

/* ---- the program --------------------------------------------------- */
typedef enum { KERNEL_VECTOR, KERNEL_SCALAR } KernelKind;

typedef struct Program {
  const char *file; /* path as given */
  const char *name;
  int version;
  const Chip *chip;
  Loc chip_loc;
  ChipParams params; /* the preset's values with overrides applied */
  KernelKind kernel;
  Loc kernel_loc;
  int64_t mesh_cores, mesh_subcores; /* subcores is 1 on scalar kernels */
  Loc mesh_loc;
  bool layout_passes;
  Ref **refs;
  int nrefs;
  Body body;
  int nops; /* operations in the whole tree */
  const char *lowered; /* the user's lowering text, or NULL */
  Loc lowered_loc;
  const Loc *lowered_map; /* the file position of each byte of lowered */
  /* expectations */
  bool expect_error;
  const char *expect_error_type, *expect_error_message;
  Loc expect_loc;
  int nexpect_refs;
  const char **expect_ref_names;
  Expr **expect_ref_values;
  Loc *expect_ref_locs;
  bool expect_cycles;
  int64_t expect_cycles_max;
  Arena arena;
  NameIndex ref_index; /* refs by name: index into refs (the loader builds it) */
  /* A program of several kernels (`kernels:`, docs/format.md): each item
   * is a Program of its own (its kernel kind, mesh, refs, body, lowered),
   * whose first nshared refs are the top-level refs, in the same order;
   * the top-level Program has no body, and its mesh is its last kernel's.
   * nkernels is 0 for a program of one kernel. */
  struct Program *kernels;
  int nkernels;
  Loc kernels_loc;
  int nshared;      /* a kernel: how many of its refs are the program's */
  int kernel_index; /* a kernel: its position in the list, 0-based */
  /* An item of `kernels` that is an mpmd_map over a vector and a scalar
   * mesh (docs/format.md "Kernels over several meshes"): this Program is
   * what runs, on the combined mesh of mesh_cores x (mpmd_vsubs + 1)
   * subcores, the scalar subcore of each core being its subcore
   * mpmd_vsubs; its refs are the shared ones, then each mesh's scratch,
   * and its body is the vector mesh's.  mpmd[0] (vector) and mpmd[1]
   * (scalar) are the two meshes' kernels, each checked and lowered on
   * its own.  mpmd_vsubs is 0 for any other kernel. */
  struct Program *mpmd;
  int nmpmd;
  int64_t mpmd_vsubs;
  bool mpmd_scalar_first; /* the scalar mesh's kernel comes first in the file (what is checked first) */
} Program;

/* Finds a ref by name; NULL when none. */
Ref *program_ref(const Program *p, const char *name);
void program_free(Program *p);

#endif
