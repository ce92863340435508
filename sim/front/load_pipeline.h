/* sim/front/load_pipeline.h -- `emit_pipeline` (pltpu.emit_pipeline), expanded
 * by the loader into the operations upstream's pipeline emitter traces.
 *
 * sim/front/load_pipeline.inc reads the YAML mapping into a Pipe and leaves
 * a placeholder operation in the body; once the whole kernel is loaded (its
 * mesh and refs known, whatever their order in the file), pipeline_rewrite
 * replaces every placeholder by its expansion (load_pipeline.c): the VMEM
 * buffers and DMA semaphores, the grid split over the cores named by
 * core_axis_name, and the double-buffered loop of async_copy / wait around
 * the body, in the order of the pinned JAX's pipeline.py. */
#ifndef SC_LOAD_PIPELINE_H
#define SC_LOAD_PIPELINE_H

#include "../../lowering/program.h"

/* One BlockSpec and the ref it is applied to. */
typedef struct {
  const char *ref;   /* the ref handed to the pipeline (args[k]) */
  Loc ref_loc;
  const char *param; /* the body's name for its block (params[k]) */
  Loc param_loc;
  int rank;
  int64_t block[MAX_RANK]; /* block_shape (1 where squeezed) */
  bool squeezed[MAX_RANK]; /* a None entry: the block index itself, no dimension in the block */
  Loc block_loc;
  const char *vars[MAX_RANK]; /* index_map's lambda parameters */
  int nvars;
  Expr *index[MAX_RANK]; /* index_map's results, one per dimension */
  int nindex;
  Loc map_loc;
  bool out; /* an out_spec */
} PipeSpec;

typedef struct {
  Op *at; /* the placeholder left in the loaded body */
  Loc loc;
  int ngrid;
  int64_t grid[MAX_RANK];
  Loc grid_loc;
  PipeSpec *specs; /* in_specs, then out_specs */
  int nspecs, nin;
  int axes[2]; /* core_axis_name: 0 names core, 1 subcore */
  int naxes;   /* 0: not given */
  Loc axes_loc;
  bool parallel[MAX_RANK]; /* dimension_semantics: PARALLEL or ARBITRARY */
  int nsem;                /* -1: not given */
  Loc sem_loc;
  Body body;
} Pipe;

/* Replaces each pipes[i]->at in p's body (nested bodies included) by its
 * expansion, adding the buffers and semaphores to p's refs.  False with *d
 * set for a pipeline upstream rejects (EP1-EP3) or one sc-sim cannot
 * express (an input error naming the key). */
bool pipeline_rewrite(Program *p, Pipe *const *pipes, int n, Diag *d);

#endif
