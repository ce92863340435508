"""Sub-byte dtypes (int4, uint4): the pinned jax lowers an int4 DMA kernel
on SparseCore, and sc-sim runs it (memory/dtype.h: ml_dtypes' one byte an
element, packed bytes for the DMA), definedness per element."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import sc_sim
from helpers import vmesh


@pytest.mark.parametrize("dtype", [jnp.int4, jnp.uint4])
def test_subbyte_dma_at_odd_offset(dtype):
    # elements 1..31 of x land at 3..33 of the output, the rest stay 0
    # (a zero-filled VMEM buffer copied out whole).
    x = (jnp.arange(64, dtype=jnp.int32) % 8).astype(dtype)
    with sc_sim.interpret("tpu7x"):
        @pl.kernel(out_type=jax.ShapeDtypeStruct((64,), dtype),
                   mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((64,), dtype)])
        def copy_row(x_hbm, o_hbm, a):
            a[...] = jnp.zeros((64,), dtype)
            pltpu.sync_copy(x_hbm.at[pl.ds(1, 31)], a.at[pl.ds(3, 31)])
            pltpu.sync_copy(a, o_hbm)
        out = copy_row(x)
    want = np.zeros(64, np.int32)
    want[3:34] = np.arange(1, 32) % 8
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out).astype(np.int32), want)
