"""Rejected kernels: each raises the exception type and message of JAX's
own SparseCore lowering.  Expected texts are upstream's (the pinned jax's
sc_lowering.py / sc_primitives.py / lowering.py, as catalogued in SPEC.md
and errors.tsv), never sc-sim's output.  Errors of JAX's tracing (phase T)
come from JAX itself; errors of lowering (phase L) from sc-sim's checker,
mapped back to Python exceptions by the front end.
"""
from __future__ import annotations

import re
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

import sc_sim
from helpers import lane_iota, sds, smesh, sub, vmesh

COPY_HINT = (" Copy the data to a core-local memory space, e.g. VMEM, via "
             "`pltpu.async_copy`.")


def rejects(chip: str, build: Callable, args: tuple, exc: type, message: str
            ) -> pytest.ExceptionInfo:
    with sc_sim.interpret(chip):
        with pytest.raises(exc) as info:
            kernel = build()
            kernel(*args)
    assert str(info.value) == message
    return info


def _vec(lanes, n=1):
    return jnp.arange(n * lanes, dtype=jnp.int32)


def test_get_from_hbm(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def k(x_hbm, o_hbm, buf):
            buf[...] = x_hbm[...] + 1
        return k
    info = rejects(chip, build, (_vec(lanes),), NotImplementedError,
                   "Get does not support loading from HBM." + COPY_HINT)
    # the note points at the kernel's Python line
    assert any("test_rejected.py:" in n for n in info.value.__notes__)


def test_store_to_hbm(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh())
        def k(o_hbm):
            o_hbm[...] = lane_iota(lanes)
        return k
    rejects(chip, build, (), NotImplementedError,
            "Swap does not support storing to HBM." + COPY_HINT)


def test_get_from_vmem_shared(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 2),
                   scratch_types=[pltpu.VMEM_SHARED((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def k(o_hbm, shared, buf):
            buf[...] = shared[...]
        return k
    rejects(chip, build, (), NotImplementedError,
            "Get does not support loading from VMEM_SHARED." + COPY_HINT)


def test_array_load_from_smem(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.SMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def k(o_hbm, sm, buf):
            buf[...] = sm[...]
        return k
    rejects(chip, build, (), NotImplementedError,
            "Get only supports loading scalars from SMEM. Trying to load an array "
            "of shape {out_aval.shape}.")


def test_scalar_load_from_vmem(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.SMEM((1,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def k(o_hbm, sm, buf):
            sm[0] = buf[3]
        return k
    rejects(chip, build, (), NotImplementedError,
            "Get only supports loading scalars from SMEM. To load a scalar from "
            "VMEM, load an array first and then extract a particular element, "
            "e.g. ``v = ref[pl.ds(idx, ...)]; v[0]``.")


def test_array_store_to_smem(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.SMEM((lanes,), jnp.int32)])
        def k(o_hbm, sm):
            sm[...] = lane_iota(lanes)
        return k
    rejects(chip, build, (), NotImplementedError,
            "Swap only supports scalars in SMEM. Trying to swap an array of shape "
            "{out_aval.shape}.")


def test_scalar_store_to_vmem(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def k(o_hbm, buf):
            buf[2] = jnp.int32(7)
        return k
    rejects(chip, build, (), NotImplementedError,
            "Swap only supports scalars in SMEM. Trying to swap a scalar in VMEM.")


def test_strided_get(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((2 * lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def k(o_hbm, big, buf):
            buf[...] = big[pl.ds(0, lanes, 2)]
        return k
    rejects(chip, build, (), NotImplementedError,
            "Get only supports slices with stride 1, got {strides}")


def test_strided_swap(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((2 * lanes,), jnp.int32)])
        def k(o_hbm, big):
            big[pl.ds(1, lanes, 2)] = lane_iota(lanes)
        return k
    rejects(chip, build, (), NotImplementedError,
            "Swap only supports slices with stride 1, got {strides}")


def test_integer_index_after_slice(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes, lanes), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def k(o_hbm, sq, buf):
            buf[...] = sq[:, 3]
        return k
    rejects(chip, build, (), NotImplementedError,
            "Integer indexing of refs that follows a non-trivial slice is not "
            "supported on SC")


def test_iota_of_wrong_width(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((2 * lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((2 * lanes,), jnp.int32)])
        def k(o_hbm, buf):
            buf[...] = lax.iota(jnp.int32, 2 * lanes)
        return k
    rejects(chip, build, (), ValueError,
            f"Unsupported iota shape for SC vector subcore. Got ({2 * lanes},), "
            f"supported shape is ({lanes},).")


def test_strict_mode_vector_shape(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((2 * lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((2 * lanes,), jnp.int32)],
                   compiler_params=pltpu.CompilerParams(needs_layout_passes=False))
        def k(o_hbm, buf):
            v = buf[...]
            buf[...] = v + 1
        return k
    rejects(chip, build, (), NotImplementedError,
            f"Get only supports int32 arrays of shapes [({lanes},)], got "
            f"({2 * lanes},)")


def test_indirect_dma_hbm_to_hbm(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes, lanes)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.SemaphoreType.DMA])
        def k(t_hbm, o_hbm, idx, sem):
            idx[...] = lane_iota(lanes)
            pltpu.async_copy(t_hbm.at[idx], o_hbm, sem).wait()
        return k
    rejects(chip, build, (jnp.zeros((lanes, lanes), jnp.int32),),
            NotImplementedError,
            "Scatter/gather via `pltpu.async_copy` from HBM to HBM is not supported")


def test_gather_dma_with_indexed_destination(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes, lanes), jnp.int32),
                                  pltpu.SemaphoreType.DMA])
        def k(t_hbm, o_hbm, idx, rows, sem):
            idx[...] = lane_iota(lanes)
            pltpu.async_copy(t_hbm, rows.at[idx], sem).wait()
        return k
    rejects(chip, build, (jnp.zeros((lanes, lanes), jnp.int32),), ValueError,
            "Only the source ref can be indexed when doing a gather via "
            "`pltpu.async_copy`")


def test_scatter_dma_with_indexed_source(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes, lanes)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes, lanes), jnp.int32),
                                  pltpu.SemaphoreType.DMA])
        def k(o_hbm, idx, rows, sem):
            idx[...] = lane_iota(lanes)
            pltpu.async_copy(rows.at[idx], o_hbm, sem).wait()
        return k
    rejects(chip, build, (), ValueError,
            "Only the destination ref can be indexed when doing a scatter via "
            "`pltpu.async_copy`")


def test_dma_indices_in_smem(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes, lanes)), mesh=vmesh(),
                   scratch_types=[pltpu.SMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes, lanes), jnp.int32),
                                  pltpu.SemaphoreType.DMA])
        def k(t_hbm, o_hbm, idx, rows, sem):
            pltpu.async_copy(t_hbm.at[idx], rows, sem).wait()
        return k
    rejects(chip, build, (jnp.zeros((lanes, lanes), jnp.int32),),
            NotImplementedError,
            "Indices for scatter/gather via `pltpu.async_copy` must be in VMEM, "
            "got SMEM")


def test_add_dma_between_hbm_refs(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh())
        def k(x_hbm, o_hbm):
            pltpu.sync_copy(x_hbm, o_hbm, add=True)
        return k
    rejects(chip, build, (_vec(lanes),), ValueError,
            "DMAs with `add=True` are only supported between VMEM and "
            "HBM/VMEM_SHARED.Got (src, dst)=(HBM, HBM)")


def test_gather_from_smem(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.SMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def k(o_hbm, sm, buf):
            buf[...] = plsc.load_gather(sm, [lane_iota(lanes)])
        return k
    rejects(chip, build, (), ValueError,
            "Gather only supports loading from VMEM, got smem")


def test_scatter_into_smem(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.SMEM((lanes,), jnp.int32)])
        def k(o_hbm, sm):
            plsc.store_scatter(sm, [lane_iota(lanes)], lane_iota(lanes))
        return k
    rejects(chip, build, (), ValueError,
            "Scatter only supports storing to VMEM, got smem")


def test_atomic_scalar_add(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.SMEM((4,), jnp.int32)])
        def k(o_hbm, sm):
            plsc.addupdate(sm.at[1], jnp.int32(3))
        return k
    rejects(chip, build, (), NotImplementedError,
            "Swap does not support atomic scalar adds")


def test_unimplemented_integer_pow(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def k(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm, buf)
            buf[...] = buf[...] ** 3
            pltpu.sync_copy(buf, o_hbm)
        return k
    info = rejects(chip, build, (_vec(lanes),), NotImplementedError,
                   "Unimplemented primitive in Pallas TPU lowering for "
                   "sc_vector_subcore: integer_pow. Please file an issue at "
                   "https://github.com/jax-ml/jax/issues/new/choose.")
    # sc-sim's checker rejects it (U1), not the front end: JAX's type alone
    assert not isinstance(info.value, sc_sim.UnsupportedError)
    assert any("test_rejected.py" in n for n in getattr(info.value, "__notes__", []))


def test_unimplemented_after_an_earlier_rejection(chip, lanes):
    # upstream lowers in order: the earlier illegal load is reported first
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def k(x_hbm, o_hbm, buf):
            buf[...] = x_hbm[...] ** 2
        return k
    rejects(chip, build, (_vec(lanes),), NotImplementedError,
            "Get does not support loading from HBM." + COPY_HINT)


def test_iota_on_scalar_subcore(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=smesh(),
                   scratch_types=[pltpu.SMEM((lanes,), jnp.int32)])
        def k(o_hbm, sm):
            v = lax.iota(jnp.int32, lanes)
            sm[0] = v[0]
        return k
    rejects(chip, build, (), NotImplementedError,
            "Unimplemented primitive in Pallas TPU lowering for sc_scalar_subcore: "
            "iota. Please file an issue at "
            "https://github.com/jax-ml/jax/issues/new/choose.")


# -- rejected while JAX traces the kernel (phase T): JAX raises these itself --

def test_mesh_with_too_many_cores(chip, lanes):
    cores = {"tpu_v6e": 2, "tpu7x": 2}[chip]
    with sc_sim.interpret(chip):
        with pytest.raises(ValueError) as info:
            vmesh(cores + 1, 1)
    assert str(info.value) == (f"Mesh has {cores + 1} cores, but the current TPU "
                               f"chip has only {cores} SparseCores")


def test_gather_of_wrong_width(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((2 * lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((2 * lanes,), jnp.int32)])
        def k(o_hbm, buf):
            idx = jnp.concatenate([lane_iota(lanes), lane_iota(lanes)])
            buf[...] = plsc.load_gather(buf, [idx])
        return k
    rejects(chip, build, (), NotImplementedError,
            f"Gather only supports int32 arrays of shapes [({lanes},)], got "
            f"({2 * lanes},)")


def test_dma_wait_on_regular_semaphore(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.SemaphoreType.REGULAR])
        def k(x_hbm, o_hbm, buf, sem):
            pltpu.make_async_copy(x_hbm, buf, sem).wait()
        return k
    rejects(chip, build, (_vec(lanes),), ValueError,
            "dma_wait requires a DMA semaphore, but got a regular semaphore. "
            "Use pl.semaphore_wait() instead.")


def test_fetch_and_add_on_float(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.SMEM((1,), jnp.float32)])
        def k(o_hbm, sm):
            plsc.fetch_and_add(sm.at[0], jnp.float32(1), subcore_id=0)
        return k
    rejects(chip, build, (), NotImplementedError,
            "Only int32 refs are supported, but got float32")


def test_compressed_store_dtype_mismatch(chip, lanes):
    def build():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def k(o_hbm, buf):
            plsc.store_compressed(buf.at[...], jnp.zeros((lanes,), jnp.float32),
                                  mask=lane_iota(lanes) < 3)
        return k
    rejects(chip, build, (), TypeError,
            "Ref and value must have the same dtype, got int32 and float32")
