/* lowering/builtins.h -- the functions an expression can call, declared once.
 *
 * The expression parser (sim/front/parse.c) resolves a call's name to its
 * Builtin when it builds the EX_CALL node (Expr.builtin); the loader, the
 * indexer, the checker, the lowering and the reference interpreter switch
 * on that id and never compare the name again.  The checker's messages for
 * an unknown callee ("did you mean", the list of functions) come from here.
 *
 * X(ENUM, name, alias, kind, min args, max args, usage)
 *   alias     a second spelling the parser also accepts, or NULL
 *   kind      BK_VALUE: a value function, typed by the checker;
 *             BK_INDEX: an index of a ref's [...] (lowering/index.c);
 *             BK_REF: a choice among refs, which the loader rewrites into
 *             operations (sim/front/select_ref.c)
 *   min, max  how many arguments (positional and keyword) it takes; the
 *             checker enforces them for BK_VALUE; index.c places the
 *             positional and keyword arguments of BK_INDEX itself
 *   usage     the message for a call with the wrong arguments */
#ifndef SC_BUILTINS_H
#define SC_BUILTINS_H

#include <stddef.h>

typedef enum { BK_VALUE, BK_INDEX, BK_REF } BuiltinKind;

#define BUILTINS(X)                                                                               \
  X(IOTA, "iota", NULL, BK_VALUE, 1, 1, "iota takes one argument, the length: iota(16)")           \
  X(FULL, "full", NULL, BK_VALUE, 2, 2, "full takes (shape, value): full([16], 0)")                \
  X(WHERE, "where", NULL, BK_VALUE, 3, 3, "where takes (mask, a, b)")                              \
  X(MIN, "min", NULL, BK_VALUE, 2, 2, "min and max take two arguments")                            \
  X(MAX, "max", NULL, BK_VALUE, 2, 2, "min and max take two arguments")                            \
  X(ASTYPE, "astype", NULL, BK_VALUE, 2, 2, "astype takes (value, dtype)")                         \
  X(VSUM, "jnp.sum", NULL, BK_VALUE, 1, 1, "jnp.sum, jnp.max, jnp.min, jnp.all and jnp.any take one vector: jnp.sum(x)") \
  X(VMAX, "jnp.max", NULL, BK_VALUE, 1, 1, "jnp.sum, jnp.max, jnp.min, jnp.all and jnp.any take one vector: jnp.sum(x)") \
  X(VMIN, "jnp.min", NULL, BK_VALUE, 1, 1, "jnp.sum, jnp.max, jnp.min, jnp.all and jnp.any take one vector: jnp.sum(x)") \
  X(VALL, "jnp.all", NULL, BK_VALUE, 1, 1, "jnp.sum, jnp.max, jnp.min, jnp.all and jnp.any take one vector: jnp.sum(x)") \
  X(VANY, "jnp.any", NULL, BK_VALUE, 1, 1, "jnp.sum, jnp.max, jnp.min, jnp.all and jnp.any take one vector: jnp.sum(x)") \
  X(EXP, "jnp.exp", "lax.exp", BK_VALUE, 1, 1, "jnp.exp takes one argument: jnp.exp(x)")       \
  X(ABS, "jnp.abs", "abs", BK_VALUE, 1, 1, "jnp.abs takes one argument: jnp.abs(x)")           \
  X(SQRT, "jnp.sqrt", "lax.sqrt", BK_VALUE, 1, 1, "jnp.sqrt takes one argument")               \
  X(RSQRT, "lax.rsqrt", NULL, BK_VALUE, 1, 1, "lax.rsqrt takes one argument")                  \
  X(LOG, "jnp.log", "lax.log", BK_VALUE, 1, 1, "jnp.log takes one argument")                   \
  X(TANH, "jnp.tanh", "lax.tanh", BK_VALUE, 1, 1, "jnp.tanh takes one argument")               \
  X(FLIP, "jnp.flip", NULL, BK_VALUE, 1, 1, "jnp.flip takes one vector: jnp.flip(x)")          \
  X(TAKE, "jnp.take_along_axis", NULL, BK_VALUE, 2, 2, "jnp.take_along_axis takes (x, indices): jnp.take_along_axis(x, idx)") \
  X(RESHAPE, "jnp.reshape", NULL, BK_VALUE, 2, 2, "jnp.reshape takes (x, shape): jnp.reshape(x, [2, 8])") \
  X(BITCAST, "plsc.bitcast", NULL, BK_VALUE, 2, 2, "plsc.bitcast takes (x, dtype): plsc.bitcast(x, int32)") \
  X(CONCAT, "jnp.concatenate", NULL, BK_VALUE, 1, 1, "jnp.concatenate takes one list of vectors: jnp.concatenate([a, b])") \
  X(SLICE, "lax.slice_in_dim", NULL, BK_VALUE, 3, 3, "lax.slice_in_dim takes (x, start, limit): lax.slice_in_dim(x, 0, 8)") \
  X(CUMSUM, "plsc.cumsum", NULL, BK_VALUE, 1, 2, "plsc.cumsum takes (x, mask=m)")                \
  X(CUMMAX, "plsc.cummax", NULL, BK_VALUE, 1, 2, "plsc.cummax takes (x, mask=m)")                \
  X(CUMMIN, "plsc.cummin", NULL, BK_VALUE, 1, 2, "plsc.cummin takes (x, mask=m)")                \
  X(LAX_CUMSUM, "jnp.cumsum", "lax.cumsum", BK_VALUE, 1, 3, "jnp.cumsum takes (x, axis=0) and lax.cumsum (x, axis=0, reverse=False)") \
  X(SORT, "jnp.sort", "lax.sort", BK_VALUE, 1, 3, "jnp.sort takes (x, axis=-1, descending=False) and lax.sort (x, dimension=-1), or ([keys, values...], dimension=-1, num_keys=1)") \
  X(SORT_KV, "plsc.sort_key_val", NULL, BK_VALUE, 2, 4, "plsc.sort_key_val takes (keys, values, mask=m, descending=False)") \
  X(SCAN_COUNT, "plsc.scan_count", NULL, BK_VALUE, 1, 2, "plsc.scan_count takes (x, mask=m)") \
  X(PACK, "plsc.pack", NULL, BK_VALUE, 3, 4, "plsc.pack takes (a, b, format=plsc.PackFormat.INTERLEAVED or COMPRESSED, preferred_element_type=None)") \
  X(UNPACK, "plsc.unpack", NULL, BK_VALUE, 2, 3, "plsc.unpack takes (ab, format=plsc.PackFormat.INTERLEAVED or COMPRESSED, preferred_element_type=None)") \
  X(AR_POPCOUNT, "plsc.all_reduce_population_count", NULL, BK_VALUE, 1, 2, "plsc.all_reduce_population_count takes (mask, reduce=1)") \
  X(AR_FFS, "plsc.all_reduce_ffs", NULL, BK_VALUE, 1, 2, "plsc.all_reduce_ffs takes (mask, reduce=1)") \
  X(DS, "pl.ds", "pl.dslice", BK_INDEX, 0, 3, "pl.ds takes (start, size, stride)")                 \
  X(INDICES, "plsc.Indices", "Indices", BK_INDEX, 1, 2, "plsc.Indices(indices, ignored_value=k) needs the indices first") \
  X(SELECT_REF, "pl.select_ref", NULL, BK_REF, 3, 64, "pl.select_ref takes (index, ref0, ref1, ...)") \
  X(AXIS_SIZE, "lax.axis_size", "jax.lax.axis_size", BK_VALUE, 1, 1, "lax.axis_size takes a mesh axis: lax.axis_size(core) or lax.axis_size(subcore)")

typedef enum {
  BI_NONE, /* not a builtin: the checker reports the unknown function */
#define X(e, name, alias, kind, lo, hi, usage) BI_##e,
  BUILTINS(X)
#undef X
} Builtin;
/* BI_NONE and every builtin; not a Builtin, so switches need no case for it. */
#define X(e, name, alias, kind, lo, hi, usage) +1
enum { BUILTIN_COUNT = 1 BUILTINS(X) };
#undef X

/* The builtin spelled `name` (or its alias); BI_NONE when none is. */
Builtin builtin_lookup(const char *name);
const char *builtin_name(Builtin b);
BuiltinKind builtin_kind(Builtin b);
int builtin_min_args(Builtin b);
int builtin_max_args(Builtin b);
const char *builtin_usage(Builtin b);
/* Every builtin's name, in table order, into out[BUILTIN_COUNT - 1]; the
 * count.  For "did you mean". */
int builtin_names(const char **out);
/* The names of the builtins of kind k joined by sep ("iota, full, ..."). */
void builtin_list(BuiltinKind k, const char *sep, char *buf, size_t n);

#endif
