"""Value operations in real Pallas SparseCore kernels: reductions,
elementwise math, flip, gathers from a vector, reshape, bitcast and
concatenate.  Expected values come from numpy."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

import sc_sim
from helpers import sds, vmesh


def _unary(chip, lanes, fn, x, out_shape=None, out_dtype=None):
    """Runs o = fn(x) for one vector x on one subcore."""
    out_shape = out_shape or x.shape
    out_dtype = out_dtype or x.dtype
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(out_shape, out_dtype), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM(x.shape, x.dtype),
                                  pltpu.VMEM(out_shape, out_dtype)])
        def k(x_hbm, o_hbm, buf, ob):
            pltpu.sync_copy(x_hbm, buf)
            ob[...] = fn(buf[...])
            pltpu.sync_copy(ob, o_hbm)
        return np.asarray(k(jnp.asarray(x)))


@pytest.mark.parametrize("red", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_reductions(chip, lanes, red, dtype):
    x = (np.arange(lanes) * 3 - 7).astype(dtype)
    f = getattr(jnp, red)
    got = _unary(chip, lanes, lambda v: jnp.full(v.shape, f(v)), x)
    np.testing.assert_array_equal(got, np.full(lanes, getattr(np, red)(x), dtype))


@pytest.mark.parametrize("red", ["all", "any"])
def test_all_any(chip, lanes, red):
    x = (np.arange(lanes) - 3).astype(np.int32)
    f = getattr(jnp, red)
    got = _unary(chip, lanes, lambda v: jnp.full(v.shape, f(v > 0).astype(jnp.int32)), x)
    np.testing.assert_array_equal(got, np.full(lanes, int(getattr(np, red)(x > 0)), np.int32))


def test_exp_and_abs(chip, lanes):
    x = (np.arange(lanes) - lanes // 2).astype(np.float32) * 0.0
    np.testing.assert_array_equal(_unary(chip, lanes, jnp.exp, x), np.exp(x))
    y = (np.arange(lanes) * 5 - 20).astype(np.int32)
    np.testing.assert_array_equal(_unary(chip, lanes, jnp.abs, y), np.abs(y))
    z = (np.arange(lanes) - 4.5).astype(np.float32)
    np.testing.assert_array_equal(_unary(chip, lanes, jnp.abs, z), np.abs(z))


def test_sqrt_is_rejected_as_upstream(chip, lanes):
    x = np.ones(lanes, np.float32)
    with pytest.raises(NotImplementedError) as info:
        _unary(chip, lanes, jnp.sqrt, x)
    assert str(info.value) == (
        "Unimplemented primitive in Pallas TPU lowering for sc_vector_subcore: "
        "sqrt. Please file an issue at https://github.com/jax-ml/jax/issues/new/choose.")


def test_flip_and_rev(chip, lanes):
    x = (np.arange(lanes) * 2 + 1).astype(np.int32)
    np.testing.assert_array_equal(_unary(chip, lanes, jnp.flip, x), x[::-1])
    np.testing.assert_array_equal(_unary(chip, lanes, lambda v: lax.rev(v, (0,)), x), x[::-1])


def test_gather_from_a_vector(chip, lanes):
    x = (np.arange(lanes) * 10).astype(np.int32)
    perm = np.array([(5 * i + 3) % lanes for i in range(lanes)], np.int32)

    def idx():
        return (lax.iota(jnp.int32, lanes) * 5 + 3) % lanes
    np.testing.assert_array_equal(
        _unary(chip, lanes, lambda v: jnp.take_along_axis(v, idx(), axis=0), x), x[perm])
    np.testing.assert_array_equal(_unary(chip, lanes, lambda v: v[idx() - lanes], x), x[perm])


def test_reshape_bitcast_concatenate(chip, lanes):
    x = (np.arange(lanes) * 65537).astype(np.int32)
    half = lanes // 2
    got = _unary(chip, lanes, lambda v: (v.reshape(2, half) * 2).reshape(lanes), x)
    np.testing.assert_array_equal(got, x * 2)
    got = _unary(chip, lanes, lambda v: plsc.bitcast(v, jnp.int16), x, (2 * lanes,), np.int16)
    np.testing.assert_array_equal(got, x.view(np.int16))
    got = _unary(chip, lanes, lambda v: jnp.concatenate([v, jnp.flip(v)]), x, (2 * lanes,))
    np.testing.assert_array_equal(got, np.concatenate([x, x[::-1]]))


def test_split_and_slices(chip, lanes):
    x = (np.arange(lanes) * 3).astype(np.int32)
    half = lanes // 2

    def swap_halves(v):
        a, b = jnp.split(v, 2)
        return jnp.concatenate([b, a])
    np.testing.assert_array_equal(_unary(chip, lanes, swap_halves, x),
                                  np.concatenate([x[half:], x[:half]]))
    got = _unary(chip, lanes, lambda v: v[2:half + 2], x, (half,))
    np.testing.assert_array_equal(got, x[2:half + 2])


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
def test_float8_astype(chip, lanes, name):
    import ml_dtypes
    f8 = getattr(ml_dtypes, name)
    x = (np.arange(lanes) * 37.5 - 100.0).astype(np.float32)
    got = _unary(chip, lanes, lambda v: jnp.concatenate([v, v, v, v]).astype(f8), x,
                 (4 * lanes,), f8)
    want = np.concatenate([x] * 4).astype(f8)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
