"""The scans over a vector's lanes through the front end: plsc.cumsum,
plsc.cummax, plsc.cummin (masked) and jnp.cumsum.  Expected values come
from numpy."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc
from jax._src.pallas.mosaic import sc_primitives  # cummin: not exported by tpu_sc in jax 0.10.2

import sc_sim
from helpers import sds, vmesh


def _run(chip, lanes, x, body, dtype):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape, dtype), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), dtype), pltpu.VMEM((lanes,), dtype)])
        def kernel(x_hbm, o_hbm, xv, ov):
            pltpu.sync_copy(x_hbm, xv)
            ov[...] = body(xv[...])
            pltpu.sync_copy(ov, o_hbm)
        return np.asarray(kernel(jnp.asarray(x)))


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_cumsum(chip, lanes, dtype):
    x = np.arange(lanes, dtype=dtype)
    got = _run(chip, lanes, x, jnp.cumsum, dtype)
    np.testing.assert_array_equal(got, np.cumsum(x))


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_masked_cumsum(chip, lanes, dtype):
    x = np.arange(lanes, dtype=dtype)
    got = _run(chip, lanes, x, lambda v: plsc.cumsum(v, mask=(v.astype(jnp.int32) % 2) == 1), dtype)
    np.testing.assert_array_equal(got, np.cumsum(x * (x % 2)))


def test_masked_cummax_and_cummin_signed(chip, lanes):
    x = (np.arange(lanes, dtype=np.int32) * 7919 % lanes - lanes // 2).astype(np.int32)
    mask = x % 3 != 0
    def ref(op):
        want, acc, seen = [], None, False
        for v, m in zip(x, mask):
            if m:
                acc = v if not seen else op(acc, v)
                seen = True
            want.append(acc if seen else v)
        return np.array(want, np.int32)
    got = _run(chip, lanes, x, lambda v: plsc.cummax(v, mask=v % 3 != 0), np.int32)
    np.testing.assert_array_equal(got, ref(max))
    got = _run(chip, lanes, x, lambda v: sc_primitives.cummin(v, mask=v % 3 != 0), np.int32)
    np.testing.assert_array_equal(got, ref(min))


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_sort(chip, lanes, dtype):
    x = np.arange(lanes, dtype=dtype)
    np.random.default_rng(0).shuffle(x)
    got = _run(chip, lanes, x, jnp.sort, dtype)
    np.testing.assert_array_equal(got, np.sort(x))


def test_sort_unsigned_order_of_negative_int32(chip, lanes):
    # lax.sort lowers to tpu.sort without a sign flip: keys compare as uint32
    x = (np.arange(lanes, dtype=np.int32) - lanes // 2)[::-1].copy()
    got = _run(chip, lanes, x, jnp.sort, np.int32)
    np.testing.assert_array_equal(got, np.sort(x.view(np.uint32)).view(np.int32))


def test_all_reduce(chip, lanes):
    x = (np.arange(lanes, dtype=np.int32) * 5 % 7).astype(np.int32)
    got = _run(chip, lanes, x, lambda v: plsc.all_reduce_population_count(v > 4), np.int32)
    np.testing.assert_array_equal(got, np.full(lanes, np.count_nonzero(x > 4)))
    got = _run(chip, lanes, x, lambda v: plsc.all_reduce_ffs(v > 4), np.int32)
    np.testing.assert_array_equal(got, np.full(lanes, np.argmax(x > 4)))
    got = _run(chip, lanes, x, lambda v: plsc.all_reduce_ffs(v > 100), np.int32)
    np.testing.assert_array_equal(got, np.full(lanes, lanes))
