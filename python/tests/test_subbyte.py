"""Sub-byte dtypes (int4, uint4): the pinned jax traces an int4 DMA kernel
on SparseCore, but sc-sim does not model packed sub-byte refs in programs
yet (memory/subbyte.h holds the storage model), so the front end raises
InvalidProgramError naming the dtype rather than running it wrongly."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import sc_sim
from helpers import vmesh

REFUSED = ("sc-sim refused the program of kernel copy_row: dtype '{}' has 4 "
           "bits; sc-sim programs take whole-byte dtypes only (sub-byte refs, "
           "DMA and vectors are not modelled yet)")


@pytest.mark.parametrize("dtype", [jnp.int4, jnp.uint4])
def test_subbyte_dma_is_refused(dtype):
    x = (jnp.arange(64, dtype=jnp.int32) % 8).astype(dtype)
    with sc_sim.interpret("tpu7x"):
        @pl.kernel(out_type=jax.ShapeDtypeStruct((64,), dtype),
                   mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((64,), dtype)])
        def copy_row(x_hbm, o_hbm, a):
            pltpu.sync_copy(x_hbm, a)
            pltpu.sync_copy(a, o_hbm)
        with pytest.raises(sc_sim.InvalidProgramError) as info:
            copy_row(x)
    assert str(info.value) == REFUSED.format(jnp.dtype(dtype).name)
