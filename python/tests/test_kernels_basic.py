"""Accepted kernels: copies, pipelines, arithmetic, control flow.

Every kernel is written for this suite; expected values come from numpy.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import sc_sim
from helpers import lane_iota, sds, sub, vmesh


def test_add_one(chip, lanes):
    x = np.arange(4 * lanes, dtype=np.int32).reshape(4, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 4),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def add_one(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm.at[sub()], buf)
            buf[...] = buf[...] + 1
            pltpu.sync_copy(buf, o_hbm.at[sub()])
        out = add_one(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x + 1)


def test_add_one_double_buffered_pipeline(chip, lanes):
    n = 6
    x = (np.arange(n * lanes, dtype=np.int32) * 7 - 50).reshape(n, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((2, lanes), jnp.int32),
                                  pltpu.SemaphoreType.DMA((2,)),
                                  pltpu.SemaphoreType.DMA((2,))])
        def pipeline(x_hbm, o_hbm, bufs, in_sems, out_sems):
            pltpu.make_async_copy(x_hbm.at[0], bufs.at[0], in_sems.at[0]).start()

            @pl.loop(0, n)
            def _(i):
                slot = i % 2

                @pl.when(i + 1 < n)
                def _():
                    pltpu.make_async_copy(x_hbm.at[i + 1], bufs.at[1 - slot],
                                          in_sems.at[1 - slot]).start()

                pltpu.make_async_copy(x_hbm.at[i], bufs.at[slot],
                                      in_sems.at[slot]).wait()
                bufs[slot] = bufs[slot] + 1
                pltpu.sync_copy(bufs.at[slot], o_hbm.at[i])
        out = pipeline(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x + 1)


def test_float_scale_and_shift(chip, lanes):
    x = (np.arange(2 * lanes, dtype=np.float32) / 4 - 3).reshape(2, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape, jnp.float32), mesh=vmesh(1, 2),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.float32)])
        def affine(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm.at[sub()], buf)
            buf[...] = buf[...] * 2.5 + 1.0
            pltpu.sync_copy(buf, o_hbm.at[sub()])
        out = affine(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x * np.float32(2.5) + np.float32(1))


def test_two_inputs(chip, lanes):
    rng = np.random.default_rng(1)
    x = rng.integers(-100, 100, (2, lanes), dtype=np.int32)
    y = rng.integers(-100, 100, (2, lanes), dtype=np.int32)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 2),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def axpy(x_hbm, y_hbm, o_hbm, a, b):
            pltpu.sync_copy(x_hbm.at[sub()], a)
            pltpu.sync_copy(y_hbm.at[sub()], b)
            a[...] = a[...] + b[...] * 3
            pltpu.sync_copy(a, o_hbm.at[sub()])
        out = axpy(jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_array_equal(np.asarray(out), x + y * 3)


def test_bitwise_and_shifts(chip, lanes):
    x = (np.arange(lanes, dtype=np.int32) * 37 - 200)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((4, lanes)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((4, lanes), jnp.int32)])
        def bits(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            v = a[...]
            o[0] = (v & 0xF) | (v << 2)
            o[1] = v ^ 0x55
            o[2] = v >> 3
            o[3] = lax.shift_right_logical(v, 28)
            pltpu.sync_copy(o, o_hbm)
        out = bits(jnp.asarray(x))
    u = x.view(np.uint32)
    want = np.stack([(x & 0xF) | (x << 2), x ^ 0x55, x >> 3,
                     (u >> 28).astype(np.int32)])
    np.testing.assert_array_equal(np.asarray(out), want)


def test_compare_and_where(chip, lanes):
    x = np.arange(lanes, dtype=np.int32) * 3 - lanes
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((2, lanes)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((2, lanes), jnp.int32)])
        def relu_abs(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            v = a[...]
            o[0] = jnp.maximum(v, 0)
            o[1] = jnp.where(v > 2, v, -v)
            pltpu.sync_copy(o, o_hbm)
        out = relu_abs(jnp.asarray(x))
    want = np.stack([np.maximum(x, 0), np.where(x > 2, x, -x)])
    np.testing.assert_array_equal(np.asarray(out), want)


def test_clip_min_max(chip, lanes):
    x = np.arange(lanes, dtype=np.float32) - lanes / 2
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,), jnp.float32), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.float32)])
        def clip(x_hbm, o_hbm, a):
            pltpu.sync_copy(x_hbm, a)
            a[...] = jnp.minimum(jnp.maximum(a[...], -2.0), 3.5)
            pltpu.sync_copy(a, o_hbm)
        out = clip(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), np.clip(x, -2, 3.5))


def test_truncating_div_rem(chip, lanes):
    x = np.arange(lanes, dtype=np.int32) * 5 - 3 * lanes
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((2, lanes)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((2, lanes), jnp.int32)])
        def divrem(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            v = a[...]
            o[0] = lax.div(v, jnp.full((lanes,), 4, jnp.int32))
            o[1] = lax.rem(v, jnp.full((lanes,), -3, jnp.int32))
            pltpu.sync_copy(o, o_hbm)
        out = divrem(jnp.asarray(x))
    want = np.stack([np.trunc(x / 4).astype(np.int32), np.fmod(x, -3)])
    np.testing.assert_array_equal(np.asarray(out), want)


def test_int_float_conversions(chip, lanes):
    x = np.arange(lanes, dtype=np.int32) * 3 - 7
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def conv(x_hbm, o_hbm, a):
            pltpu.sync_copy(x_hbm, a)
            f = a[...].astype(jnp.float32) * 0.5
            a[...] = f.astype(jnp.int32)
            pltpu.sync_copy(a, o_hbm)
        out = conv(jnp.asarray(x))
    want = (x.astype(np.float32) * np.float32(0.5)).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(out), want)


def test_iota_times_subcore(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((4, lanes)), mesh=vmesh(1, 4),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def iota_rows(o_hbm, buf):
            buf[...] = lane_iota(lanes) * sub() + 100
            pltpu.sync_copy(buf, o_hbm.at[sub()])
        out = iota_rows()
    want = np.arange(lanes)[None, :] * np.arange(4)[:, None] + 100
    np.testing.assert_array_equal(np.asarray(out), want)


def test_row_loop_on_2d_buffer(chip, lanes):
    x = np.arange(5 * lanes, dtype=np.int32).reshape(5, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM(x.shape, jnp.int32)])
        def rows(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm, buf)

            @pl.loop(0, 5)
            def _(r):
                buf[r] = buf[r] * (r + 1)
            pltpu.sync_copy(buf, o_hbm)
        out = rows(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x * np.arange(1, 6)[:, None])


def test_dynamic_slices_with_step(chip, lanes):
    x = np.arange(8 * lanes, dtype=np.int32)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM(x.shape, jnp.int32)])
        def chunks(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm, buf)

            @pl.loop(0, 8, step=2)
            def _(c):
                sl = pl.ds(c * lanes, lanes)
                buf[sl] = -buf[sl]
            pltpu.sync_copy(buf, o_hbm)
        out = chunks(jnp.asarray(x))
    want = x.reshape(8, lanes).copy()
    want[0::2] *= -1
    np.testing.assert_array_equal(np.asarray(out), want.reshape(-1))


def test_fori_loop_without_carry(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((3, lanes)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((3, lanes), jnp.int32)])
        def fill(o_hbm, buf):
            def body(i, c):
                buf[i] = jnp.full((lanes,), 10, jnp.int32) * i + lane_iota(lanes)
                return c
            lax.fori_loop(0, 3, body, None)
            pltpu.sync_copy(buf, o_hbm)
        out = fill()
    want = 10 * np.arange(3)[:, None] + np.arange(lanes)[None, :]
    np.testing.assert_array_equal(np.asarray(out), want)


def test_when_else_by_parity(chip, lanes):
    x = np.arange(4 * lanes, dtype=np.int32).reshape(4, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 4),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def parity(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm.at[sub()], buf)
            even = sub() % 2 == 0

            @pl.when(even)
            def _():
                buf[...] = buf[...] * 2

            @pl.when(jnp.logical_not(even))
            def _():
                buf[...] = buf[...] + 100
            pltpu.sync_copy(buf, o_hbm.at[sub()])
        out = parity(jnp.asarray(x))
    want = np.where((np.arange(4) % 2 == 0)[:, None], x * 2, x + 100)
    np.testing.assert_array_equal(np.asarray(out), want)


def test_cond_with_value(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((2, lanes)), mesh=vmesh(1, 2),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def pick(o_hbm, buf):
            s = sub()
            k = lax.cond(s == 0, lambda: s + 7, lambda: s * 30)
            buf[...] = jnp.full((lanes,), 1, jnp.int32) * k
            pltpu.sync_copy(buf, o_hbm.at[s])
        out = pick()
    want = np.stack([np.full(lanes, 7), np.full(lanes, 30)])
    np.testing.assert_array_equal(np.asarray(out), want)


def test_smem_scalars(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.SMEM((4,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def scalars(o_hbm, sm, buf):
            sm[0] = 5
            sm[1] = sm[0] * 3
            sm[2] = 0

            @pl.loop(0, 4)
            def _(i):
                sm[2] = sm[2] + sm[1] + i
            buf[...] = lane_iota(lanes) + sm[2]
            pltpu.sync_copy(buf, o_hbm)
        out = scalars()
    np.testing.assert_array_equal(np.asarray(out), np.arange(lanes) + 4 * 15 + 6)


def test_under_jit_with_jnp_around(chip, lanes):
    x = np.arange(2 * lanes, dtype=np.int32).reshape(2, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 2),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def triple(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm.at[sub()], buf)
            buf[...] = buf[...] * 3
            pltpu.sync_copy(buf, o_hbm.at[sub()])

        @jax.jit
        def f(x):
            return triple(x + 1).sum(axis=1)
        out = f(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), ((x + 1) * 3).sum(axis=1))


def test_decorator_form(chip, lanes):
    x = np.arange(lanes, dtype=np.int32)

    @sc_sim.interpret(chip)
    def program(x):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def neg(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm, buf)
            buf[...] = -buf[...]
            pltpu.sync_copy(buf, o_hbm)
        return neg(x)
    np.testing.assert_array_equal(np.asarray(program(jnp.asarray(x))), -x)


def test_bfloat16_add(chip, lanes):
    n = 2 * lanes  # a bfloat16 vector register holds 2 x lanes
    x = (np.arange(n, dtype=np.float32) / 8).astype(jnp.bfloat16)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((n,), jnp.bfloat16), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((n,), jnp.bfloat16)])
        def bf(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm, buf)
            buf[...] = buf[...] + buf[...]
            pltpu.sync_copy(buf, o_hbm)
        out = bf(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out).astype(np.float32),
                                  (x.astype(np.float32) * 2))


def test_parallel_loop(chip, lanes):
    from jax.experimental.pallas import tpu_sc as plsc
    x = np.arange(4 * lanes, dtype=np.int32)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM(x.shape, jnp.int32)])
        def par(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm, buf)

            @plsc.parallel_loop(0, 4 * lanes, lanes)
            def _(i):
                buf[pl.ds(i, lanes)] = buf[pl.ds(i, lanes)] * 3 - 1
            pltpu.sync_copy(buf, o_hbm)
        out = par(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x * 3 - 1)


def test_vector_element_to_smem(chip, lanes):
    x = np.arange(lanes, dtype=np.int32) * 9
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.SMEM((1,), jnp.int32)])
        def elem(x_hbm, o_hbm, buf, sm):
            pltpu.sync_copy(x_hbm, buf)
            v = buf[...]
            sm[0] = v[3]
            buf[...] = v + sm[0]
            pltpu.sync_copy(buf, o_hbm)
        out = elem(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x + x[3])
