/* lowering/index.h -- the indexer model of SPEC §3.
 *
 * A ref expression becomes a View: the underlying Ref plus the list of
 * transforms written after it (NDIndexers from [..] and .at[..], bitcasts,
 * reshapes), each recording the shape and dtype it produces.  An NDIndexer
 * has one entry per dimension of the shape it indexes: a Slice (start, size,
 * stride, each static or an expression), an integer, an index array value,
 * or an index ref (a plain ref or a view), optionally wrapped in
 * plsc.Indices(..., ignored_value=k).
 *
 * Building a view applies the phase-T rules of indexer construction (A1-A12,
 * T1-T4) in upstream's order (SPEC §4.A, §8.1); the caller supplies how to
 * evaluate the sub-expressions. */
#ifndef SC_INDEX_H
#define SC_INDEX_H

#include "program.h"
#include "diag.h"

#define MAX_TRANSFORMS 16
#define DYN (-1) /* a dimension whose size is only known at run time */

typedef struct View View;
typedef struct Desc Desc;

/* The abstract value of an expression at trace time. */
typedef enum { AV_VALUE, AV_REF, AV_DESC } AvKind;
typedef struct {
  AvKind kind;
  Dtype dtype;
  bool weak;     /* a Python literal (weakly typed) */
  int rank;
  int64_t shape[MAX_RANK];
  bool is_static; /* a scalar known at trace time (literals only) */
  Cell sval;
  View *view;    /* AV_REF */
  Desc *desc;    /* AV_DESC: the descriptor an async_copy made */
} AVal;

typedef enum { IX_SLICE, IX_INT, IX_ARRAY, IX_REF } IxKind;

typedef struct {
  IxKind kind;
  Loc loc;
  Expr *e;             /* INT: the index; ARRAY/REF: the index expression */
  bool pyslice;        /* SLICE written a:b:c (for reprs) */
  bool start_static, size_static;
  int64_t start, size, stride; /* INT: start is the index */
  Expr *start_e, *size_e;      /* the dynamic parts, NULL when static */
  AVal idx;            /* ARRAY: the value; REF: the index view */
  bool filtered;       /* wrapped in plsc.Indices */
  Expr *ignored_e;     /* ignored_value expression */
} IxEntry;

typedef struct {
  int n;
  IxEntry e[MAX_RANK];
  int64_t shape[MAX_RANK]; /* the shape it indexes */
  int int_rank;
  int64_t int_shape[MAX_RANK];
  bool has_ref;
} NDIndexer;

typedef enum { TR_INDEX, TR_BITCAST, TR_RESHAPE } TrKind;

typedef struct {
  TrKind kind;
  Loc loc;
  NDIndexer *idx;         /* TR_INDEX */
  Dtype in_dtype, dtype;  /* before / after */
  int in_rank, rank;
  int64_t in_shape[MAX_RANK], shape[MAX_RANK];
} Transform;

struct View {
  Ref *ref;
  Expr *expr;
  int ntr;
  Transform *tr[MAX_TRANSFORMS];
  Dtype dtype;
  int rank;
  int64_t shape[MAX_RANK];
};

/* A DMA descriptor: the views it was built from. */
struct Desc {
  Op *op;
  View *src, *dst, *sem;
};

/* How a DMA's views were split (SPEC §4.I): whether it is indirect, which
 * entry carries the offsets, and the shapes the copy moves. */
typedef struct {
  bool indirect;
  bool gather;           /* offsets on the source */
  const IxEntry *off;    /* the offsets entry */
  int off_tr;            /* index of the transform carrying it */
  View *flat;            /* the indexed view with the offsets taken as a full dim-0 slice */
  Expr *off_e;           /* merged offsets (index_without_offsets), or NULL */
  int src_rank, dst_rank;
  int64_t src_shape[MAX_RANK], dst_shape[MAX_RANK]; /* after transforms, offsets as full slice */
} DmaPlan;

/* Callbacks into the checker: evaluate a sub-expression to its abstract
 * value (false: a diagnostic was recorded, stop). */
typedef struct IndexCtx IndexCtx;
struct IndexCtx {
  Arena *arena;
  Diag *d;
  char phase;        /* the phase being checked: rules of other phases are skipped */
  const char *core_type; /* the kernel's core type as the lowering names it (sc_vector_subcore) */
  bool failed;
  void *user;
  bool (*eval)(IndexCtx *c, Expr *e, AVal *out);
};

/* Builds the view of a ref expression whose base evaluates to a ref.
 * Returns false when a rule fired (recorded in c->d) or the expression is
 * not a ref view (then *is_ref is false and nothing is recorded). */
bool index_view(IndexCtx *c, Expr *e, View **out, bool *is_ref);
/* The view with the offsets entry of transform off_tr taken as a full
 * slice of dimension 0 (what an indirect DMA's offsets index).  When index
 * arrays follow the offsets (x.at[1, v], SPEC §8.7) their dimensions are
 * merged with dimension 0 and *off_e is the merged offsets' expression;
 * otherwise *off_e is NULL and the offsets entry's own expression holds. */
View *index_without_offsets(Arena *a, const View *v, int off_tr, Expr **off_e);
/* Records rule `id` when it belongs to the phase being checked. */
bool index_fire(IndexCtx *c, DiagId id, Loc at, ...);

/* ZV1 when the vector an equation of primitive `prim` produces has a
 * dimension of size 0, ZV2 when its elements are semaphores (a scalar is
 * neither): upstream builds the result types of each cacheable equation
 * before its lowering rule runs. */
bool index_bad_vector(IndexCtx *c, Loc at, const char *prim, int rank, const int64_t *shape, bool semaphore);
static inline bool index_zero_size(IndexCtx *c, Loc at, const char *prim, int rank, const int64_t *shape) {
  return index_bad_vector(c, at, prim, rank, shape, false);
}

/* The shape an NDIndexer produces (SPEC §3.1.7). */
int index_result_shape(const NDIndexer *ix, int64_t *shape);
/* Python reprs used in messages. */
void fmt_shape(char *buf, size_t n, int rank, const int64_t *shape);
void fmt_dims(char *buf, size_t n, int rank, const int64_t *shape); /* 2, 16 */
/* Message arguments kept in the arena: a number; a shape as "(a, b)". */
char *index_num(IndexCtx *c, int64_t v);
char *index_shape_str(IndexCtx *c, int rank, const int64_t *shape);
/* The value checkers' input error msg at `at` (D_IN_VALUE); always false. */
bool index_bad_value(IndexCtx *c, Loc at, const char *msg);
/* Types e into *out, which must be a value (not a ref or a DMA descriptor). */
bool index_value(IndexCtx *c, Expr *e, AVal *out);
/* avals: as an abstract eval prints them (validate=False, traced leaves as
 * ShapedArrays); otherwise as built before binding (tracers, validate=True). */
void fmt_indexer(char *buf, size_t n, const NDIndexer *ix, bool avals);
void fmt_transforms(char *buf, size_t n, const View *v, int from, int to, bool avals);
void fmt_aval(char *buf, size_t n, const AVal *a);
void fmt_aval_str(char *buf, size_t n, const AVal *a);
void fmt_ref_aval(char *buf, size_t n, const View *v);

#endif
