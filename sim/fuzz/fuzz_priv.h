/* sim/fuzz/fuzz_priv.h -- what the stages of sc-sim fuzz share (docs/fuzz.md).
 * Private to sim/fuzz/: the public interface is fuzz.h.  The stages call one
 * way: driver.c (the campaign, reproducers, the command line) -> shrink.c
 * (the shrinker) -> oracle.c (one program generated, run through the
 * pipeline in a child process, judged) -> gen.c (the generator) ->
 * inject.c (the rule-breaking operations) -> swarm.c (text buffers, random
 * streams, chip presets). */
#ifndef SC_FUZZ_PRIV_H
#define SC_FUZZ_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../lowering/lower.h"

enum { MAX_UNITS = 12, MAX_STEPS = 6, MAX_NAMES = 24, NAME_LEN = 24 };

/* ---- text buffers (swarm.c) ---------------------------------------------- */
typedef struct {
  char *s;
  size_t n, cap;
} Buf;

void breserve(Buf *b, size_t more);
void bput(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bfree(Buf *b);
const char *btext(const Buf *b);
/* Appends src with every line indented by ind spaces. */
void bindent(Buf *b, const char *src, int ind);

/* ---- the random streams (swarm.c) ----------------------------------------- */
typedef struct {
  uint64_t s;
} Rng;

/* A uniform integer in [lo, hi] (hi >= lo). */
int64_t rr(Rng *r, int64_t lo, int64_t hi);
bool rp(Rng *r, int pct);
/* The stream of one program (unit = step = 0), of unit u (step 0) or of
 * step s of unit u: independent of every other draw. */
Rng rng_at(uint64_t seed, uint64_t prog, uint64_t unit, uint64_t step);

/* ---- the swarm --------------------------------------------------------- */
/* X(ENUM, what a program with the feature may contain) */
#define FEATURES(X)                                                        \
  X(DYN, "dynamic indices: coordinates, loop variables, let-bound names") \
  X(CHAIN, ".at chains and slices of slices")                             \
  X(LOOP, "units wrapped in loops")                                       \
  X(WHEN, "units wrapped in when / else")                                 \
  X(EXPECT, "expectations the generator computes")                        \
  X(LET, "let-bound masks, indices and view aliases")                     \
  X(ASYNC, "async_copy + wait instead of sync_copy")

typedef enum {
#define X(e, w) F_##e,
  FEATURES(X)
#undef X
  F_COUNT
} Feature;

/* X(ENUM, name, what --avoid NAME leaves out): constructs of sc-sim bugs
 * this fuzzer found and that are still open, so that a campaign can look
 * past them.  Remove a row when its bug is fixed. */
#define KNOWN_BUGS(X)                                                                                  \
  X(NONE, "none", "(no open bug: both bugs the fuzzer found, faa-order and minmax-zero, are fixed)")

typedef enum {
#define X(e, n, w) B_##e,
  KNOWN_BUGS(X)
#undef X
  B_COUNT
} KnownBug;

extern const char *const bug_names[];

enum { K_VEC = 1, K_SCALAR = 2, K_BOTH = 3 };
enum { W_LOOP = 1, W_WHEN = 2 };

typedef struct G G;
typedef struct Unit Unit;
typedef void (*UnitGen)(G *g, Unit *u);
/* The unit of gen_valops.c (the other units are gen.c's own). */
void unit_valops(G *g, Unit *u);
void unit_sugar(G *g, Unit *u); /* gen_sugar.c */
void unit_pipeline(G *g, Unit *u); /* gen_pipeline.c */
void unit_sortkv(G *g, Unit *u); /* gen_scanops.c */

/* X(ENUM, name, generator, kernels, wrappers it allows) */
#define UNITS(X)                                                  \
  X(VEC, "vec", unit_vec, K_VEC, W_LOOP | W_WHEN)                 \
  X(MASKED, "masked", unit_masked, K_VEC, W_LOOP | W_WHEN)        \
  X(GATHER, "gather", unit_gather, K_VEC, W_LOOP | W_WHEN)        \
  X(DMA, "dma", unit_dma, K_BOTH, W_LOOP | W_WHEN)                \
  X(IDMA, "idma", unit_idma, K_VEC, W_LOOP | W_WHEN)              \
  X(SMEM, "smem", unit_smem, K_BOTH, W_LOOP | W_WHEN)             \
  X(FAA, "faa", unit_faa, K_VEC, 0)                               \
  X(SEM, "sem", unit_sem, K_BOTH, W_LOOP)                         \
  X(EXCH, "exch", unit_exch, K_BOTH, 0)                           \
  X(ARITH, "arith", unit_arith, K_BOTH, W_WHEN)                   \
  X(VIEWS, "views", unit_views, K_VEC, W_LOOP | W_WHEN)         \
  X(SHADD, "shadd", unit_shadd, K_VEC, 0)                         \
  X(UNDEF, "undef", unit_undef, K_VEC, W_LOOP | W_WHEN)           \
  X(RACE, "race", unit_race, K_BOTH, 0)                           \
  X(VALOPS, "valops", unit_valops, K_VEC, W_LOOP | W_WHEN)          \
  X(SUGAR, "sugar", unit_sugar, K_VEC, W_LOOP | W_WHEN)            \
  X(PIPELINE, "pipeline", unit_pipeline, K_VEC, W_LOOP | W_WHEN)  \
  X(SORTKV, "sortkv", unit_sortkv, K_VEC, W_LOOP | W_WHEN)

typedef enum {
#define X(e, n, f, k, w) U_##e,
  UNITS(X)
#undef X
  U_COUNT
} UnitKind;

/* X(preset, lanes, SparseCores, vector subcores) -- SPEC §2 */
#define FUZZ_CHIPS(X)      \
  X("tpu_v5p", 8, 4, 16)   \
  X("tpu_v6e", 8, 2, 16)   \
  X("tpu7x", 16, 2, 16)    \
  X("tpu8i", 16, 1, 4)

typedef struct {
  const char *name;
  int lanes, cores, subs;
} FuzzChip;
extern const FuzzChip chips[];
#define FUZZ_CHIP_ONE(n, l, c, s) +1
enum { NCHIPS = 0 FUZZ_CHIPS(FUZZ_CHIP_ONE) };

/* Everything drawn once per program. */
typedef struct {
  uint64_t seed;
  int index;
  int chip;
  bool scalar, layout;
  int cores, subs;        /* the mesh */
  unsigned feat;          /* 1 << Feature */
  unsigned dtypes;        /* 1 << Dtype: the data dtypes units may pick */
  int nunits;
  UnitKind kind[MAX_UNITS];
  int inject;             /* an INJECTIONS row, -1 for none */
  int inject_pos;         /* the unit it goes before */
  unsigned avoid;         /* 1 << KnownBug: constructs left out */
  int race_twin;          /* the race unit whose values differ per subcore (a race fault planned), -1 for none */
} Plan;

/* What the shrinker turns: caps and simplifications, and what to drop. */
typedef struct {
  int max_cores, max_subs; /* 0: the plan's mesh */
  bool simple;             /* leaves instead of expression trees */
  bool no_wrap;            /* units are not wrapped in loop / when */
  bool layout;             /* layout_passes: true whatever the plan says */
  bool no_inject;
  bool no_expect;          /* no expectations: steps that feed one can go */
  int level;               /* 0, 1, 2: smaller shapes, fewer extra dims */
  uint32_t drop_unit;
  uint32_t drop_step[MAX_UNITS];
} Knobs;

/* ---- generation context -------------------------------------------------- */
typedef struct {
  Dtype d;
  int rank;
  int64_t sh[4];
} Ty;

typedef struct {
  char name[NAME_LEN];
  Ty t;
} Nm;

struct G {
  const Plan *pl;
  const Knobs *kn;
  Rng r;
  int L, C, S;
  bool scalar, layout, simple;
  int level;
  int u, nm;
  const char *lv;   /* the unit's loop variable, or NULL */
  int64_t lv_max;   /* it takes values in [0, lv_max] */
  Buf *refs, *out;  /* the unit's ref declarations; the current step */
  int nnames;
  Nm names[MAX_NAMES];
  const char *want_fault; /* a fault the program is planned to end with (the race twin), or NULL */
};

struct Unit {
  UnitKind kind;
  Buf refs;
  int nsteps;
  Buf step[MAX_STEPS];
  int wrap;          /* 0, W_LOOP, W_WHEN, or both */
  char loopvar[NAME_LEN];
  int64_t lo, hi, st;
  char hi_text[64];  /* the bound as written: a literal or, with DYN, per subcore */
  char cond[64];
  bool els;          /* a when has an else: the steps in reverse order */
};

static inline bool has(const G *g, Feature f) { return (g->pl->feat & (1u << f)) && !(f == F_EXPECT && g->kn->no_expect); }
static inline Rng *R(G *g) { return &g->r; }

/* ---- the scans (gen_scanops.c) ------------------------------------------- */
/* Writes a scan of type t into o, its operands by sub; false (nothing
 * written) when t is not a vector of lanes of a dtype tpu.scan takes. */
bool gen_scanops_val(G *g, Buf *o, const Ty *t, int depth, void (*sub)(G *, Buf *, const Ty *, int));

/* ---- rule-breaking operations (inject.c) ------------------------------- */
/* M_FAULT: the operation is valid but must fault at run time, with the
 * fault kind named by its id (the engine and the reference alike). */
enum { M_ANY = 0, M_STRICT = 1, M_FAULT = 2 };
typedef struct {
  const char *id;
  void (*gen)(G *g);
  int kernels, mode;
} Injection;
/* INJECTIONS: one operation each that breaks one rule of SPEC §4. */
extern const Injection injections[];
/* Picks the plan's injection (reject_rate percent of programs have one). */
void plan_inject(Rng *r, Plan *pl, int reject_rate);

/* ---- the plan and the program text (gen.c) ----------------------------- */
/* What a generated text is, for the shrinker and the report. */
typedef struct {
  int nunits;
  int nsteps[MAX_UNITS];
  size_t bytes;
  int ops;
  const char *want; /* the rule the program must be rejected with, or the fault kind it must end with, or NULL */
  bool want_fault;  /* want is a fault kind (SPEC §9): a run that faults so, in both runs, is the planned outcome */
} Meta;

/* Draws the swarm configuration of program `index`. */
void plan_program(uint64_t seed, int index, int reject_rate, unsigned avoid_bugs, Plan *pl);
/* Writes the program for (plan, knobs) into o (cleared first). */
void gen_program(const Plan *pl, const Knobs *kn, Buf *o, Meta *meta);

/* ---- outcomes and verdicts (oracle.c) ---------------------------------- */
/* X(ENUM, name) -- what one run of a program gave */
#define OUTCOMES(X) X(OK, "ok") X(REJECTED, "rejected") X(INVALID, "invalid") X(MISMATCH, "mismatch") \
  X(EXPECT, "expect failed") X(FAULT, "fault") X(CRASH, "crash") X(HANG, "hang")

typedef enum {
#define X(e, n) OC_##e,
  OUTCOMES(X)
#undef X
} OcKind;

extern const char *const oc_names[];

typedef struct {
  OcKind kind;
  char id[32];   /* the diagnostic id, the fault kind or the signal */
  char msg[700];
  int line;
} Outcome;

/* X(ENUM, text, is a failure) */
#define VERDICTS(X)                                      \
  X(ACCEPTED, "accepted and verified", false)            \
  X(REJECTED, "rejected as planned", false)              \
  X(FAULTED, "faulted as planned", false)                \
  X(MISMATCH, "mismatch", true)                          \
  X(FAULT, "fault in a program meant to be fault-free", true) \
  X(UNEXPECTED, "unexpected rejection", true)            \
  X(NOT_REJECTED, "not rejected", true)                  \
  X(NOT_FAULTED, "planned fault did not happen", true)   \
  X(CRASH, "crash", true)                                \
  X(HANG, "hang", true)

typedef enum {
#define X(e, t, f) VD_##e,
  VERDICTS(X)
#undef X
} Verdict;

typedef struct {
  const char *text;
  bool failure;
} VerdictInfo;
extern const VerdictInfo verdicts[];

/* What must stay the same while shrinking. */
typedef struct {
  Verdict v;
  OcKind k;
  char id[32];
} Sig;

Sig sig_of(Verdict v, const Outcome *o);
bool sig_eq(const Sig *a, const Sig *b);

typedef struct {
  uint64_t seed;
  int count, limit, reject_rate;
  const char *out;
  const char *mutate;
  unsigned avoid;    /* --avoid: 1 << KnownBug */
  int show;          /* --show: print this program and stop; -1 for none */
  int attempts;      /* runs spent shrinking the current failure */
  int budget;
  /* tallies for the summary line */
  int programs, accepted, mismatches, faults, crashes, hangs, written, unexpected;
  int nrej, faulted;
  char rej_id[64][32];
  bool rej_bad[64];
  int rej_n[64];
  int shard_k, shard_n; /* --shard K/N: the programs i with i mod N = K */
  const char *jsonl;    /* --jsonl FILE: one JSON line per program (sc-sim merge) */
  FILE *jf;
} Fuzz;

/* Counts one program of tally class cls ("accepted", "rejected", "faulted",
 * "unexpected", "mismatch", "fault", "crash", "hang") and its rule id. */
void fuzz_tally(Fuzz *f, const char *cls, const char *rule);
/* The campaign's summary line. */
void fuzz_summary(const Fuzz *f);
/* One program's JSON line (merge.c reads it back). */
void fuzz_json_line(FILE *jf, const Fuzz *f, int index, const char *verdict, const char *cls, const char *rule, bool written,
                    const char *report);

/* Generates and runs; returns the verdict (oracle.c). */
Verdict try_program(Fuzz *f, const Plan *pl, const Knobs *k, Mutant m, Outcome *o, Meta *meta);
/* Shrinks *k while the failure keeps its signature (shrink.c). */
void shrink(Fuzz *f, const Plan *pl, Knobs *k, const Sig *want);

#endif
