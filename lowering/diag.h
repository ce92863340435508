/* lowering/diag.h -- the diagnostics catalog and the diagnostic record.
 *
 * DIAGS declares every diagnostic sc-sim can report, once: its id (the SPEC
 * id for upstream rules), its class, its phase, the exception type printed
 * before the message, and a printf template whose only conversions are %s.
 * Upstream texts are byte for byte SPEC's, quirks included (§4.N, §7.1):
 * the literal {strides} and {out_aval.shape}, the missing space before Got.
 *
 * Library code never prints: it fills a Diag (id, location, formatted
 * message, notes) and returns; sim/main.c prints it and picks the exit code. */
#ifndef SC_DIAG_H
#define SC_DIAG_H

#include <stdarg.h>
#include <stdbool.h>

#include "../isa/loc.h"


typedef enum {
  DC_RULE,  /* an upstream legality rule: exit 1 */
  DC_INPUT, /* not a valid program or invocation: exit 2 */
  DC_FAULT, /* a fault at run time: exit 4 */
  DC_VERIFY /* a verification difference or failed expectation: exit 3 */
} DiagClass;

#define VERIFY_PREFIX                                                                          \
  "Pallas encountered an internal verification error. Please file a bug at "                 \
  "https://github.com/jax-ml/jax/issues/new/choose. Error details: "

/* X(ENUM, "id", class, phase, "ExceptionType", "template") */
#define DIAGS(X)                                                                                 \
  X(C0, "C0", DC_RULE, 'T', "RuntimeError", "The current TPU does not have SparseCores")       \
  X(C2, "C2", DC_RULE, 'T', "ValueError", "Mesh has %s cores, but the current TPU chip has only %s SparseCores") \
  X(C3, "C3", DC_RULE, 'T', "ValueError", "Mesh has %s subcores, but the current TPU chip has only %s subcores") \
  X(A1, "A1", DC_RULE, 'T', "ValueError", "Only one ellipsis is supported.")                   \
  X(A2, "A2", DC_RULE, 'T', "ValueError", "`indices` must not be longer than `shape`: indices=%s, shape=%s") \
  X(A3, "A3", DC_RULE, 'T', "ValueError", "slice step cannot be zero")                         \
  X(A4, "A4", DC_RULE, 'T', "ValueError", "slice must have a step >= 1 (found: %s)")           \
  X(A5, "A5", DC_RULE, 'T', "ValueError", "Non-static stride in `dslice`")                     \
  X(A6, "A6", DC_RULE, 'T', "ValueError", "`stride` must be >= 0.")                            \
  X(A7, "A7", DC_RULE, 'T', "NotImplementedError", "Multiple Ref indexers are not supported")  \
  X(A8, "A8", DC_RULE, 'T', "NotImplementedError", "Ref cannot be mixed with other non-slice indexers") \
  X(A9, "A9", DC_RULE, 'T', "ValueError", "Cannot broadcast shapes for indexing: {indexer_shapes}") \
  X(A10, "A10", DC_RULE, 'T', "ValueError", "Out of bound slice: start=%s, dim=%s.")           \
  X(A11, "A11", DC_RULE, 'T', "ValueError", "Out of bound slice: start=%s, size=%s, stride=%s, dim=%s.") \
  X(T1, "T1", DC_RULE, 'T', "NotImplementedError", "Bitcast 1D ref with bitwidth change is not supported.") \
  X(T5, "T5", DC_RULE, 'T', "IndexError", "list index out of range")                               \
  X(T2, "T2", DC_RULE, 'T', "ValueError", "Expected input and output shapes are the same after multiplying the second-minor dimension by the bitwidths.") \
  X(T3, "T3", DC_RULE, 'T', "ValueError", "cannot reshape shape %s into shape %s")            \
  X(T4, "T4", DC_RULE, 'T', "NotImplementedError", "%s ref with dynamic size is not supported.") \
  X(B1, "B1", DC_RULE, 'T', "ValueError", "Cannot store a Ref into another Ref. Did you forget to load from it using `[...]`?") \
  X(B2, "B2", DC_RULE, 'T', "ValueError", "Invalid shape for `swap`. Ref shape: %s. Expected shape: %s. Value shape: %s. Transforms: %s. ") \
  X(B3, "B3", DC_RULE, 'T', "ValueError", "Invalid dtype for `swap`. Ref dtype: %s. Value dtype: %s. ") \
  X(E2, "E2", DC_RULE, 'T', "TypeError", "Mask must be a boolean array, got %s")               \
  X(E3, "E3", DC_RULE, 'T', "ValueError", "Mask must have shape %s, got %s")                   \
  X(E4, "E4", DC_RULE, 'T', "TypeError", "Ref and value must have the same dtype, got %s and %s") \
  X(E5, "E5", DC_RULE, 'T', "ValueError", "Value must have shape %s, got %s")                  \
  X(H2, "H2", DC_RULE, 'T', "ValueError", "DMA start priority must be non-negative: %s")       \
  X(H3, "H3", DC_RULE, 'T', "ValueError", "DMA source/destination/semaphore arguments must be Refs.") \
  X(H4, "H4", DC_RULE, 'T', "ValueError", "Cannot signal on a non-()-shaped semaphore: %s")    \
  X(H7, "H7", DC_RULE, 'T', "ValueError", "Expected the destination semaphore to be a reference") \
  X(H8, "H8", DC_RULE, 'T', "ValueError", "dma_wait requires a DMA semaphore, but got a regular semaphore. Use pl.semaphore_wait() instead.") \
  X(GS0, "GS0", DC_RULE, 'T', "ValueError", "Indices must not be empty")                      \
  X(GS1, "GS1", DC_RULE, 'T', "ValueError", "Can only call `%s` on a `Ref`: %s.")              \
  X(GS2, "GS2", DC_RULE, 'T', "TypeError", "ref.dtype=%s must be int32 or float32")            \
  X(GS3, "GS3", DC_RULE, 'T', "ValueError", "The number of indices does not match ref.ndim=%s") \
  X(GS4, "GS4", DC_RULE, 'T', "ValueError", "Indices must be a 1-D array, got an index with shape %s") \
  X(GS5, "GS5", DC_RULE, 'T', "ValueError", "Indices must have the same size, got {prev_idx.size} and {idx.size}")  \
  X(GG1, "GG1", DC_RULE, 'T', "NotImplementedError", "Gather only supports %s arrays of shapes [%s], got %s") \
  X(GG2, "GG2", DC_RULE, 'T', "ValueError", "mask.shape=%s does not match the expected shape (%s,)") \
  X(GG3, "GG3", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.vector_load_idx' op operand #%s must be vector of 1-bit signless integer values, but got 'vector<%sx%s>'") \
  X(GSC1, "GSC1", DC_RULE, 'T', "ValueError", "x.shape=%s does not match expected shape (%s,)") \
  X(GSC2, "GSC2", DC_RULE, 'T', "TypeError", "val.dtype=%s != ref.dtype=%s")                   \
  X(GSC3, "GSC3", DC_RULE, 'T', "ValueError", "mask.shape=%s does not match expected shape (%s,)") \
  X(GSC4, "GSC4", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.vector_store_idx' op operand #%s must be vector of 1-bit signless integer values, but got 'vector<%sx%s>'") \
  X(FA1, "FA1", DC_RULE, 'T', "ValueError", "Expected a scalar ref, but got x_ref.shape=%s.")  \
  X(FA2, "FA2", DC_RULE, 'T', "ValueError", "fetch_and_add only supports refs indexed with non-slice indices, but got %s") \
  X(FA3, "FA3", DC_RULE, 'T', "ValueError", "fetch_and_add requires a scalar ref with a single non-slice indexer, but got %s") \
  X(FA4, "FA4", DC_RULE, 'T', "NotImplementedError", "Only int32 refs are supported, but got %s") \
  X(FA5, "FA5", DC_RULE, 'T', "ValueError", "Only refs in SMEM memory space are supported, but got %s") \
  X(FA6, "FA6", DC_RULE, 'T', "ValueError", "The value must be a scalar of the same type as the ref (%s), but got %s.") \
  X(FA7, "FA7", DC_RULE, 'T', "ValueError", "All indices must be scalars of type int32, but got %s.") \
  X(FA8, "FA8", DC_RULE, 'T', "ValueError", "subcore_id= must be a scalar of type int32, but got %s.") \
  X(G1, "G1", DC_RULE, 'L', "NotImplementedError", "Get does not support loading from %s. Copy the data to a core-local memory space, e.g. VMEM, via `pltpu.async_copy`.") \
  X(G2, "G2", DC_RULE, 'L', "NotImplementedError", "%s")                                       \
  X(G3, "G3", DC_RULE, 'L', "NotImplementedError", "Integer indexing of refs that follows a non-trivial slice is not supported on SC") \
  X(G4, "G4", DC_RULE, 'L', "NotImplementedError", "Get only supports slices with stride 1, got {strides}") \
  X(G5, "G5", DC_RULE, 'L', "NotImplementedError", "Get only supports loading scalars from SMEM.%s") \
  X(G6, "G6", DC_RULE, 'L', "NotImplementedError", "Get does not support masked scalar loads") \
  X(G7, "G7", DC_RULE, 'L', "NotImplementedError", "Get only supports %s arrays of shapes [%s], got %s") \
  X(S1, "S1", DC_RULE, 'L', "NotImplementedError", "Swap does not support storing to %s. Copy the data to a core-local memory space, e.g. VMEM, via `pltpu.async_copy`.") \
  X(S2, "S2", DC_RULE, 'L', "NotImplementedError", "%s")                                       \
  X(S3, "S3", DC_RULE, 'L', "NotImplementedError", "Integer indexing of refs that follows a non-trivial slice is not supported on SC") \
  X(S4, "S4", DC_RULE, 'L', "NotImplementedError", "Swap only supports slices with stride 1, got {strides}") \
  X(S5, "S5", DC_RULE, 'L', "NotImplementedError", "Swap only supports scalars in SMEM. %s")  \
  X(S6, "S6", DC_RULE, 'L', "NotImplementedError", "Swap does not support masked scalar stores") \
  X(S7, "S7", DC_RULE, 'L', "NotImplementedError", "Swap does not support atomic scalar adds") \
  X(S8, "S8", DC_RULE, 'L', "NotImplementedError", "Swap only supports %s arrays of shapes [%s], got %s") \
  X(F0, "F0", DC_RULE, 'L', "ValueError", "Unsupported dtype: %s")                             \
  X(I1, "I1", DC_RULE, 'L', "ValueError", "Unsupported iota shape for SC vector subcore. Got %s, supported shape is (%s,).") \
  X(ZV1, "ZV1", DC_RULE, 'L', "MLIRError", "Invalid type:\nerror: \"%s:\"(\"%s\"(\"%s\"(\"%s\":%s:%s))): vector types must have positive constant sizes but got 0") \
  X(ZV2, "ZV2", DC_RULE, 'L', "MLIRError", "Invalid type:\nerror: \"%s:\"(\"%s\"(\"%s\"(\"%s\":%s:%s))): failed to verify 'elementType': VectorElementTypeInterface instance") \
  X(SQ1, "SQ1", DC_RULE, 'L', "ValueError", "Only arrays with 32-bit element types can be converted to scalars, but got: %s. Try casting the input before squeezing the scalar.") \
  X(U1, "U1", DC_RULE, 'L', "NotImplementedError", "Unimplemented primitive in Pallas TPU lowering for %s: %s. Please file an issue at https://github.com/jax-ml/jax/issues/new/choose.") \
  X(X1, "X1", DC_RULE, 'L', "NotImplementedError", "Only 1D indices are supported by scatter/gather via `pltpu.async_copy` on SparseCore, got rank %s") \
  X(X2, "X2", DC_RULE, 'L', "NotImplementedError", "The indexer shape in scatter/gather via `pltpu.async_copy` does not match the expected shape. Want: %s, got: %s.") \
  X(X3, "X3", DC_RULE, 'L', "NotImplementedError", "Only int32 indices are supported by scatter/gather via `pltpu.async_copy` with a dynamically-shaped indexer") \
  X(X4, "X4", DC_RULE, 'L', "NotImplementedError", "Indices for scatter/gather via `pltpu.async_copy` must be in VMEM, got %s") \
  X(X5, "X5", DC_RULE, 'L', "NotImplementedError", "The indexed ref in scatter/gather via `pltpu.async_copy` cannot have any transforms following the indexer") \
  X(D1, "D1", DC_RULE, 'L', "ValueError", "Only the source ref can be indexed when doing a gather via `pltpu.async_copy`") \
  X(D2, "D2", DC_RULE, 'L', "ValueError", "Only the destination ref can be indexed when doing a scatter via `pltpu.async_copy`") \
  X(D3, "D3", DC_RULE, 'L', "NotImplementedError", "Scatter/gather via `pltpu.async_copy` from %s to %s is not supported") \
  X(D4, "D4", DC_RULE, 'L', "ValueError", "DMAs with `add=True` are only supported between VMEM and HBM/VMEM_SHARED.Got (src, dst)=(%s, %s)") \
  X(D5, "D5", DC_RULE, 'L', "NotImplementedError", "DMAs with `add=True` must (for now) specify offsets of the majormost dimension. You can do this by writing `pltpu.async_copy(..., %s=%s.at[jnp.arange(vec_dim)], ...)` or `pltpu.async_copy(..., %s=%s.at[indices_ref], ...)`.") \
  X(GL1, "GL1", DC_RULE, 'L', "ValueError", "Gather only supports loading from VMEM, got %s")   \
  X(SL2, "SL2", DC_RULE, 'L', "ValueError", "Scatter only supports storing to VMEM, got %s")   \
  X(M_DMA1, "M-DMA1", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_dma' op DMA source and target element type mismatch") \
  X(M_DMA2, "M-DMA2", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_dma' op DMA source and target shape mismatch.") \
  X(M_DMA3, "M-DMA3", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_dma' op Not implemented: only support priority 0 or 1, but got %s") \
  X(M_DMA5, "M-DMA5", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_dma' op DMA target semaphore must be rank 0") \
  X(M_WAIT1, "M-WAIT1", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.wait_dma2' op DMA wait semaphore must be rank 0") \
  X(M_IND1, "M-IND1", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.%s_indirect_dma' op %s indirect DMA is supported only on the SC vector subcore") \
  X(M_IND2, "M-IND2", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_indirect_dma' op Source and target element type mismatch") \
  X(M_IND3, "M-IND3", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_indirect_dma' op Offsets memref must be in VMEM") \
  X(M_IND4, "M-IND4", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_indirect_dma' op Offsets shape must be 1D or (1, N), got (%s)") \
  X(M_IND5, "M-IND5", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_indirect_dma' op Offsets shape (%s) must match the majormost dimensions of the target (gather result) shape (%s)") \
  X(M_IND6, "M-IND6", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_indirect_dma' op %s minormost dimension%s of the source (gather operand) shape (%s) must match the minormost dimension%s of the target (gather result) shape (%s)") \
  X(M_IND7, "M-IND7", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_indirect_dma' op %s") \
  X(M_IND8, "M-IND8", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_indirect_dma' op The transfer must be between HBM and VMEM, VMEM_SHARED and VMEM, or TC VMEM and VMEM") \
  X(M_VL1, "M-VL1", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.%s' op Expected base memref to be in VMEM.") \
  X(M_VL2, "M-VL2", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "Not implemented: masked %s with non-32-bit element type") \
  X(M_VL3, "M-VL3", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.vector_store' op Expected mask shape to match result shape: (%s). Got: (%s).") \
  X(M_VL5, "M-VL5", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.vector_load' op Expected base and result element type to match.") \
  X(M_ST1, "M-ST1", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'memref.store' op failed to verify that type of 'value' matches element type of 'memref'") \
  X(M_IND9, "M-IND9", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_indirect_dma' op operand #2 must be memref of 32-bit signless integer values or vector of 32-bit signless integer values of ranks 1, but got 'memref<%sx%s, #tpu.memory_space<%s>>'") \
  X(M_IND10, "M-IND10", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.enqueue_indirect_dma' op %s sample shape must be 1D or (1, N), got (%s)") \
  X(M_RS1, "M-RS1", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "Not implemented: 1d memref reshape.") \
  X(M_FA1, "M-FA1", DC_RULE, 'V', "VerificationError", VERIFY_PREFIX "'tpu.fetch_and_add_sync' op SC scalar subcore target not supported yet") \
  X(NW1, "NW1", DC_RULE, 'T', "ValueError", "Invalid integer data type 'V'.") \
  X(NW2, "NW2", DC_RULE, 'T', "TypeError", "%s does not accept dtype %s. Support for narrow-width integers is platform-dependent and limited to a few specific operations, e.g. basic arithmetic and type casting.") \
  X(RD1, "RD1", DC_RULE, 'L', "NotImplementedError", "reductions require axes to be (0,) on SparseCore, but got %s.") \
  X(RV1, "RV1", DC_RULE, 'L', "NotImplementedError", "Invalid dimensions for SC lax.rev: %s") \
  X(BC1, "BC1", DC_RULE, 'T', "ValueError", "Cannot bitcast a ()-shaped array to a dtype with a different bitwidth: old_bitwidth=%s vs new_bitwidth=%s") \
  X(BC2, "BC2", DC_RULE, 'T', "ValueError", "Cannot bitcast from %s (%s bits) to %s (%s bits), because x.shape[-1]=%s * %s is not divisible by %s") \
  X(VR1, "VR1", DC_RULE, 'T', "TypeError", "cannot reshape array of shape %s (size %s) into shape %s (size %s)") \
  X(CC1, "CC1", DC_RULE, 'T', "TypeError", "Cannot concatenate arrays with different numbers of dimensions: got %s.") \
  X(CC2, "CC2", DC_RULE, 'T', "TypeError", "Cannot concatenate arrays with shapes that differ in dimensions other than the one being concatenated: concatenating along dimension 0 for shapes %s.") \
  X(VS1, "VS1", DC_RULE, 'T', "TypeError", "slice limit_indices must be less than or equal to operand shape, got limit_indices %s for operand shape %s.") \
  X(VS2, "VS2", DC_RULE, 'T', "TypeError", "slice limit_indices must be greater than or equal to start_indices, got start_indices %s and limit_indices %s.") \
  X(TA0, "TA0", DC_RULE, 'T', "TypeError", "take_along_axis indices must be of integer type, got %s") \
  X(TA1, "TA1", DC_RULE, 'T', "ValueError", "indices and arr must have the same number of dimensions; %s vs. %s") \
  X(CF1, "CF1", DC_RULE, 'T', "TypeError", "%s function carry input and carry output must have equal types, but they differ:\n\n%s\nRevise the function so that all output types match the corresponding input types.") \
  X(CF2, "CF2", DC_RULE, 'T', "TypeError", "cond_fun must return a boolean scalar, but got output type(s) [%s].") \
  X(SR1, "SR1", DC_RULE, 'T', "ValueError", "At least two refs are required for pl.select_ref.") \
  X(MP1, "MP1", DC_RULE, 'T', "ValueError", "At least one mesh/function pair is required") \
  X(MP2, "MP2", DC_RULE, 'T', "ValueError", "You can't use two different %s.") \
  X(MP3, "MP3", DC_RULE, 'T', "ValueError", "%s should have the same core axis name and number of cores as the %s %s.") \
  X(MP4, "MP4", DC_RULE, 'T', "ValueError", "Memory space %s is not supported by mesh %s") \
  X(MP5, "MP5", DC_RULE, 'T', "NotImplementedError", "MPMD map with more than one mesh requires scratch_type to have a `core_type` specified, but scratch_type=%s is missing it.") \
  X(EP1, "EP1", DC_RULE, 'T', "ValueError", "All elements in the grid must be strictly positive, but got grid=%s") \
  X(EP2, "EP2", DC_RULE, 'T', "ValueError", "dimension_semantics must be the same length as grid.") \
  X(EP3, "EP3", DC_RULE, 'T', "NotImplementedError", "Cannot partition over cores without parallel grid dimensions: dimension_semantics=%s") \
  X(DP0, "DP0", DC_RULE, 'T', "ValueError", "Single '%s' encountered in format string") \
  X(DP4, "DP4", DC_RULE, 'T', "ValueError", "expected '}' before end of string") \
  X(DP1, "DP1", DC_RULE, 'L', "NotImplementedError", "pl.debug_print() does not support ordered print when lowering to SparseCore") \
  X(DP2, "DP2", DC_RULE, 'L', "NotImplementedError", "pl.debug_print() does not support placeholders when lowering to SparseCore") \
  X(DP3, "DP3", DC_RULE, 'L', "NotImplementedError", "pl.debug_print() does not support multiple inputs when lowering to SparseCore") \
  X(PL1, "PL1", DC_RULE, 'T', "TypeError", "Carried values may not be refs, but got: %s") \
  X(PL2, "PL2", DC_RULE, 'T', "ValueError", "parallel_loop: body result should have same structure as carry: %s != %s") \
  X(CU0, "CU0", DC_RULE, 'T', "NotImplementedError", "%s: x=%s must be rank 1")                 \
  X(CU1, "CU1", DC_RULE, 'T', "NotImplementedError", "x.dtype=%s must be uint32, int32 or float32") \
  X(CU2, "CU2", DC_RULE, 'T', "TypeError", "mask.dtype=%s is not a boolean dtype")              \
  X(CU3, "CU3", DC_RULE, 'T', "ValueError", "x.shape=%s != mask.shape=%s")                      \
  X(SG1, "SG1", DC_RULE, 'T', "ValueError", "Must %s semaphores of the following types: {<class 'jax._src.pallas.core.semaphore'>, <class 'jax._src.pallas.core.barrier_semaphore'>, <class 'jax.numpy.int16'>}. Got dma_sem.") \
  X(CR1, "CR1", DC_RULE, 'T', "ValueError", "XLA operations do not allow negative axes")      \
  X(CR2, "CR2", DC_RULE, 'T', "ValueError", "axis %s is out of bounds for array of shape %s")    \
  X(CR3, "CR3", DC_RULE, 'T', "ValueError", "axis %s is out of bounds for array of dimension %s") \
  X(CS1, "CS1", DC_RULE, 'L', "NotImplementedError", "SC cumsum: axis=%s must be 0.")           \
  X(CS2, "CS2", DC_RULE, 'L', "NotImplementedError", "SC cumsum: x=%s must be rank 1")          \
  X(CS3, "CS3", DC_RULE, 'L', "NotImplementedError", "SC cumsum: reverse=True is not yet supported") \
  X(SO1, "SO1", DC_RULE, 'L', "ValueError", "Unsupported dimension: %s")                       \
  X(SO2, "SO2", DC_RULE, 'L', "NotImplementedError", "Multiple sort keys not supported")       \
  X(SO3, "SO3", DC_RULE, 'L', "NotImplementedError", "Unsupported shape for operand %s of SC sort: Got %s, expected (%s,)") \
  X(AR1, "AR1", DC_RULE, 'T', "TypeError", "Mask all-reduce only supports bool arrays, got %s") \
  X(AR4, "AR4", DC_RULE, 'T', "ValueError", "Mask all-reduce only supports 1D arrays")       \
  X(SK1, "SK1", DC_RULE, 'T', "NotImplementedError", "sort_key_val: keys dtype %s should be uint32, int32 or float32") \
  X(SK2, "SK2", DC_RULE, 'T', "ValueError", "keys shape %s must be (%s,)")                       \
  X(SK3, "SK3", DC_RULE, 'T', "NotImplementedError", "sort_key_val: values dtype %s should be 32 bits") \
  X(SK4, "SK4", DC_RULE, 'T', "ValueError", "values shape %s must be (%s,)")                     \
  X(SK5, "SK5", DC_RULE, 'T', "TypeError", "mask dtype %s is not boolean")                       \
  X(SK6, "SK6", DC_RULE, 'T', "ValueError", "mask shape %s must be (%s,)")                       \
  X(SC1, "SC1", DC_RULE, 'T', "NotImplementedError", "x.dtype=%s must be uint32, int32 or float32") \
  X(SC2, "SC2", DC_RULE, 'T', "TypeError", "mask.dtype=%s is not a boolean dtype")              \
  X(SC3, "SC3", DC_RULE, 'T', "ValueError", "x.shape=%s != mask.shape=%s")                      \
  X(PK1, "PK1", DC_RULE, 'T', "ValueError", "Packed arrays must have the same shape, got %s and %s") \
  X(PK2, "PK2", DC_RULE, 'T', "ValueError", "Packed arrays must be 1-D, got %s")                 \
  X(PK3, "PK3", DC_RULE, 'T', "TypeError", "Packed arrays must have the same dtype, got %s and %s") \
  X(PK4, "PK4", DC_RULE, 'T', "NotImplementedError", "Only packing of float32 and int32 is supported, got %s") \
  X(PK5, "PK5", DC_RULE, 'T', "ValueError", "preferred_element_type= must have bitwidth %s, got %s") \
  X(PK6, "PK6", DC_RULE, 'T', "TypeError", "Unexpected format: %s")                             \
  X(UP1, "UP1", DC_RULE, 'T', "ValueError", "Interleaved unpack requires a 1-D array with an even size, got %s") \
  X(UP2, "UP2", DC_RULE, 'T', "ValueError", "Compressed unpack requires an array with shape (N, 2), got %s") \
  X(UP3, "UP3", DC_RULE, 'T', "NotImplementedError", "Only unpacking of bloat16 and int16 is supported, got %s") \
  X(UP4, "UP4", DC_RULE, 'T', "ValueError", "preferred_element_type= must have bitwidth %s, got %s") \
  X(SC_UNSUP, "sc-sim", DC_RULE, 'L', "sc-sim", "%s")                                          \
  X(IN_YAML, "input-yaml", DC_INPUT, 0, "", "%s")                                              \
  X(IN_KEY, "input-key", DC_INPUT, 0, "", "unknown key '%s' in %s%s")                          \
  X(IN_MISSING, "input-missing", DC_INPUT, 0, "", "%s is missing the required key '%s'")       \
  X(IN_TYPE, "input-type", DC_INPUT, 0, "", "'%s' must be %s")                                 \
  X(IN_VALUE, "input-value", DC_INPUT, 0, "", "%s")                                            \
  X(IN_DTYPE, "input-dtype", DC_INPUT, 0, "", "unknown dtype '%s'%s")                          \
  X(IN_SUBBYTE, "input-subbyte", DC_INPUT, 0, "", "a ref view's bitcast from %s to %s changes the bit width of a sub-byte dtype; jax accepts it for refs of rank 2 or more, but sc-sim holds int4 and uint4 one element a byte and does not model such a view (plsc.bitcast of a value is modelled)") \
  X(IN_DUP, "input-duplicate", DC_INPUT, 0, "", "%s")                                          \
  X(IN_NAME, "input-undefined", DC_INPUT, 0, "", "'%s' is used before it is defined%s")        \
  X(IN_EXPR, "input-expression", DC_INPUT, 0, "", "%s")                                        \
  X(IN_FILE, "input-file", DC_INPUT, 0, "", "%s")                                              \
  X(IN_LIMIT, "input-limit", DC_INPUT, 0, "", "%s")                                          \
  X(RUN_FAULT, "fault", DC_FAULT, 0, "", "fault: %s: %s")                                     \
  X(RUN_EXPECT, "expect", DC_VERIFY, 0, "", "expect failed: %s")                              \
  X(RUN_MISMATCH, "mismatch", DC_VERIFY, 0, "", "mismatch: %s")

typedef enum {
#define X(e, id, cls, ph, ty, tmpl) D_##e,
  DIAGS(X)
#undef X
  D_COUNT
} DiagId;

#define DIAG_MAX_NOTES 4

typedef struct {
  DiagId id;
  Loc loc;
  char message[1024];
  int nnotes;
  char notes[DIAG_MAX_NOTES][512];
} Diag;

const char *diag_id_name(DiagId id);
DiagClass diag_class(DiagId id);
char diag_phase(DiagId id);
const char *diag_type(DiagId id);
const char *diag_template(DiagId id);
/* Fills d with id, location and the catalog template formatted with the
 * (string) arguments; clears notes.  Counts the hit for the coverage test. */
void diag_set(Diag *d, DiagId id, Loc loc, ...);
void diag_vset(Diag *d, DiagId id, Loc loc, va_list ap);
/* Appends a note (printf-style); extra notes past DIAG_MAX_NOTES are dropped. */
void diag_note(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* How many times each id was set in this process (for the coverage test). */
extern unsigned diag_hits[D_COUNT];

#endif
