"""Accepted kernels: register gathers and scatters, expand and compress,
atomic adds, fetch_and_add, barriers, semaphores, DMAs (plain and
indirect), the scalar subcore, multi-core meshes."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

import sc_sim
from helpers import SUB, core, lane_iota, sds, smesh, sub, vmesh


def test_gather_reverse(chip, lanes):
    x = np.arange(lanes, dtype=np.int32) * 11
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def reverse(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            o[...] = plsc.load_gather(a, [lanes - 1 - lane_iota(lanes)])
            pltpu.sync_copy(o, o_hbm)
        out = reverse(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x[::-1])


def test_gather_by_loaded_indices(chip, lanes):
    rng = np.random.default_rng(2)
    table = rng.integers(-1000, 1000, 4 * lanes, dtype=np.int32)
    idx = rng.integers(0, 4 * lanes, lanes, dtype=np.int32)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((4 * lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def lookup(t_hbm, i_hbm, o_hbm, t, i, o):
            pltpu.sync_copy(t_hbm, t)
            pltpu.sync_copy(i_hbm, i)
            o[...] = plsc.load_gather(t, [i[...]])
            pltpu.sync_copy(o, o_hbm)
        out = lookup(jnp.asarray(table), jnp.asarray(idx))
    np.testing.assert_array_equal(np.asarray(out), table[idx])


def test_masked_gather(chip, lanes):
    x = np.arange(lanes, dtype=np.float32) * 1.5
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,), jnp.float32), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.float32),
                                  pltpu.VMEM((lanes,), jnp.float32)])
        def masked(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            m = lane_iota(lanes) % 3 != 0
            g = plsc.load_gather(a, [(lane_iota(lanes) + 1) % lanes], mask=m)
            o[...] = jnp.where(m, g, -1.0)
            pltpu.sync_copy(o, o_hbm)
        out = masked(jnp.asarray(x))
    i = np.arange(lanes)
    np.testing.assert_array_equal(np.asarray(out),
                                  np.where(i % 3 != 0, x[(i + 1) % lanes], -1))


def test_gather_2d(chip, lanes):
    x = np.arange(4 * lanes, dtype=np.int32).reshape(4, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((4, lanes), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def diag(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            i = lane_iota(lanes)
            o[...] = plsc.load_gather(a, [i % 4, i])
            pltpu.sync_copy(o, o_hbm)
        out = diag(jnp.asarray(x))
    i = np.arange(lanes)
    np.testing.assert_array_equal(np.asarray(out), x[i % 4, i])


def test_scatter_permutation(chip, lanes):
    rng = np.random.default_rng(3)
    perm = rng.permutation(lanes).astype(np.int32)
    x = np.arange(lanes, dtype=np.int32) + 40
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def permute(x_hbm, p_hbm, o_hbm, a, p, o):
            pltpu.sync_copy(x_hbm, a)
            pltpu.sync_copy(p_hbm, p)
            plsc.store_scatter(o, [p[...]], a[...])
            pltpu.sync_copy(o, o_hbm)
        out = permute(jnp.asarray(x), jnp.asarray(perm))
    want = np.empty(lanes, np.int32)
    want[perm] = x
    np.testing.assert_array_equal(np.asarray(out), want)


def test_masked_scatter(chip, lanes):
    x = np.arange(lanes, dtype=np.int32) * 2
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def evens(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            o[...] = jnp.zeros((lanes,), jnp.int32)
            i = lane_iota(lanes)
            plsc.store_scatter(o, [lanes - 1 - i], a[...], mask=i % 2 == 0)
            pltpu.sync_copy(o, o_hbm)
        out = evens(jnp.asarray(x))
    want = np.zeros(lanes, np.int32)
    i = np.arange(0, lanes, 2)
    want[lanes - 1 - i] = x[i]
    np.testing.assert_array_equal(np.asarray(out), want)


def test_scatter_add_histogram(chip, lanes):
    rng = np.random.default_rng(4)
    vals = rng.integers(0, 4, (3, lanes), dtype=np.int32)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((3, lanes), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def histogram(v_hbm, o_hbm, v, h):
            pltpu.sync_copy(v_hbm, v)
            h[...] = jnp.zeros((lanes,), jnp.int32)

            @pl.loop(0, 3)
            def _(r):
                plsc.addupdate_scatter(h, [v[r]], jnp.ones((lanes,), jnp.int32))
            pltpu.sync_copy(h, o_hbm)
        out = histogram(jnp.asarray(vals))
    want = np.bincount(vals.reshape(-1), minlength=lanes).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(out), want)


def test_addupdate_accumulates(chip, lanes):
    x = np.arange(lanes, dtype=np.int32) - 3
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def acc(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            o[...] = jnp.full((lanes,), 100, jnp.int32)
            plsc.addupdate(o.at[...], a[...])
            plsc.addupdate(o.at[...], a[...] * 2)
            pltpu.sync_copy(o, o_hbm)
        out = acc(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), 100 + 3 * x)


def test_store_compressed_filters_positive(chip, lanes):
    x = np.array([(-1) ** k * k for k in range(lanes)], dtype=np.int32)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def compress(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            o[...] = jnp.zeros((lanes,), jnp.int32)
            v = a[...]
            plsc.store_compressed(o.at[...], v, mask=v > 0)
            pltpu.sync_copy(o, o_hbm)
        out = compress(jnp.asarray(x))
    kept = x[x > 0]
    want = np.zeros(lanes, np.int32)
    want[:kept.size] = kept
    np.testing.assert_array_equal(np.asarray(out), want)


def test_load_expanded(chip, lanes):
    x = np.arange(lanes, dtype=np.int32) + 1
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def expand(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            m = lane_iota(lanes) % 2 == 1
            v = plsc.load_expanded(a.at[...], mask=m)
            o[...] = jnp.where(m, v, 0)
            pltpu.sync_copy(o, o_hbm)
        out = expand(jnp.asarray(x))
    want = np.zeros(lanes, np.int32)
    want[1::2] = x[:lanes // 2]
    np.testing.assert_array_equal(np.asarray(out), want)


def test_addupdate_compressed(chip, lanes):
    x = np.arange(lanes, dtype=np.int32) * 10
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def addc(x_hbm, o_hbm, a, o):
            pltpu.sync_copy(x_hbm, a)
            o[...] = jnp.ones((lanes,), jnp.int32)
            plsc.addupdate_compressed(o.at[...], a[...], mask=lane_iota(lanes) >= 2)
            pltpu.sync_copy(o, o_hbm)
        out = addc(jnp.asarray(x))
    want = np.ones(lanes, np.int32)
    want[:lanes - 2] += x[2:]
    np.testing.assert_array_equal(np.asarray(out), want)


def test_fetch_and_add_total(chip, lanes):
    n = 4
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, n),
                   scratch_types=[pltpu.SMEM((1,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def total(o_hbm, counter, buf):
            @pl.when(sub() == 0)
            def _():
                counter[0] = 0
            plsc.subcore_barrier()
            plsc.fetch_and_add(counter.at[0], sub() + 1, subcore_id=0)
            plsc.subcore_barrier()

            @pl.when(sub() == 0)
            def _():
                buf[...] = jnp.zeros((lanes,), jnp.int32) + counter[0]
                pltpu.sync_copy(buf, o_hbm)
        out = total()
    np.testing.assert_array_equal(np.asarray(out), np.full(lanes, n * (n + 1) // 2))


def test_fetch_and_add_tickets(chip, lanes):
    n = 4
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((n, lanes)), mesh=vmesh(1, n),
                   scratch_types=[pltpu.SMEM((1,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def tickets(o_hbm, counter, buf):
            @pl.when(sub() == 0)
            def _():
                counter[0] = 0
            plsc.subcore_barrier()
            t = plsc.fetch_and_add(counter.at[0], 1, subcore_id=0)
            buf[...] = jnp.zeros((lanes,), jnp.int32) + t
            pltpu.sync_copy(buf, o_hbm.at[sub()])
        out = np.asarray(tickets())
    assert sorted(out[:, 0].tolist()) == list(range(n))
    np.testing.assert_array_equal(out, np.repeat(out[:, :1], lanes, axis=1))


def test_barrier_exchange_through_shared(chip, lanes):
    n = 4
    x = np.arange(n * lanes, dtype=np.int32).reshape(n, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, n),
                   scratch_types=[pltpu.VMEM_SHARED((n, lanes), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def rotate(x_hbm, o_hbm, shared, buf):
            s = sub()
            pltpu.sync_copy(x_hbm.at[s], buf)
            pltpu.sync_copy(buf, shared.at[s])
            plsc.subcore_barrier()
            pltpu.sync_copy(shared.at[(s + 1) % n], buf)
            pltpu.sync_copy(buf, o_hbm.at[s])
        out = rotate(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), np.roll(x, -1, axis=0))


def test_barrier_then_reduce_on_one_subcore(chip, lanes):
    n = 4
    x = np.arange(n * lanes, dtype=np.int32).reshape(n, lanes) * 3
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, n),
                   scratch_types=[pltpu.VMEM_SHARED((n, lanes), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def reduce_rows(x_hbm, o_hbm, shared, buf, acc):
            s = sub()
            pltpu.sync_copy(x_hbm.at[s], buf)
            pltpu.sync_copy(buf, shared.at[s])
            plsc.subcore_barrier()

            @pl.when(s == 0)
            def _():
                acc[...] = jnp.zeros((lanes,), jnp.int32)

                @pl.loop(0, n)
                def _(r):
                    pltpu.sync_copy(shared.at[r], buf)
                    acc[...] = acc[...] + buf[...]
                pltpu.sync_copy(acc, o_hbm)
        out = reduce_rows(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x.sum(axis=0))


def test_semaphore_handoff(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 2),
                   scratch_types=[pltpu.VMEM_SHARED((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.SemaphoreType.REGULAR])
        def handoff(o_hbm, shared, buf, ready):
            @pl.when(sub() == 0)
            def _():
                buf[...] = lane_iota(lanes) * 5
                pltpu.sync_copy(buf, shared)
                pl.semaphore_signal(ready, 1, device_id={SUB: 1},
                                    device_id_type=pl.DeviceIdType.MESH)

            @pl.when(sub() == 1)
            def _():
                pl.semaphore_wait(ready, 1)
                pltpu.sync_copy(shared, buf)
                buf[...] = buf[...] + 1
                pltpu.sync_copy(buf, o_hbm)
        out = handoff()
    np.testing.assert_array_equal(np.asarray(out), np.arange(lanes) * 5 + 1)


def test_two_dmas_one_semaphore(chip, lanes):
    x = np.arange(2 * lanes, dtype=np.int32).reshape(2, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((2, lanes), jnp.int32),
                                  pltpu.SemaphoreType.DMA])
        def both(x_hbm, o_hbm, buf, sem):
            c0 = pltpu.make_async_copy(x_hbm.at[0], buf.at[1], sem)
            c1 = pltpu.make_async_copy(x_hbm.at[1], buf.at[0], sem)
            c0.start()
            c1.start()
            c0.wait()
            c1.wait()
            pltpu.sync_copy(buf, o_hbm)
        out = both(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x[::-1])


def test_semaphore_array_per_chunk(chip, lanes):
    n = 4
    x = np.arange(n * lanes, dtype=np.int32).reshape(n, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((n, lanes), jnp.int32),
                                  pltpu.SemaphoreType.DMA((n,))])
        def chunks(x_hbm, o_hbm, buf, sems):
            @pl.loop(0, n)
            def _(i):
                pltpu.make_async_copy(x_hbm.at[i], buf.at[i], sems.at[i]).start()

            @pl.loop(0, n)
            def _(i):
                pltpu.make_async_copy(x_hbm.at[i], buf.at[i], sems.at[i]).wait()
                buf[i] = buf[i] - i
            pltpu.sync_copy(buf, o_hbm)
        out = chunks(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x - np.arange(n)[:, None])


def test_indirect_dma_gather_rows(chip, lanes):
    rows = 8
    table = np.arange(rows * lanes, dtype=np.int32).reshape(rows, lanes)
    idx = np.array([5, 0, 7, 2] * (lanes // 4), dtype=np.int32)[:lanes]
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes, lanes)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes, lanes), jnp.int32),
                                  pltpu.SemaphoreType.DMA])
        def gather_rows(t_hbm, i_hbm, o_hbm, i, g, sem):
            pltpu.sync_copy(i_hbm, i)
            pltpu.async_copy(t_hbm.at[i], g, sem).wait()
            pltpu.sync_copy(g, o_hbm)
        out = gather_rows(jnp.asarray(table), jnp.asarray(idx))
    np.testing.assert_array_equal(np.asarray(out), table[idx])


def test_indirect_dma_scatter_rows(chip, lanes):
    x = np.arange(lanes * lanes, dtype=np.int32).reshape(lanes, lanes)
    perm = np.random.default_rng(5).permutation(lanes).astype(np.int32)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes, lanes), jnp.int32),
                                  pltpu.SemaphoreType.DMA])
        def scatter_rows(x_hbm, p_hbm, o_hbm, p, rows, sem):
            pltpu.sync_copy(p_hbm, p)
            pltpu.sync_copy(x_hbm, rows)
            pltpu.async_copy(rows, o_hbm.at[p], sem).wait()
        out = scatter_rows(jnp.asarray(x), jnp.asarray(perm))
    want = np.empty_like(x)
    want[perm] = x
    np.testing.assert_array_equal(np.asarray(out), want)


def test_dma_add_into_shared(chip, lanes):
    n = 4
    x = np.arange(n * lanes, dtype=np.int32).reshape(n, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((1, lanes)), mesh=vmesh(1, n),
                   scratch_types=[pltpu.VMEM_SHARED((1, lanes), jnp.int32),
                                  pltpu.VMEM((1, lanes), jnp.int32),
                                  pltpu.VMEM((1,), jnp.int32)])
        def sum_rows(x_hbm, o_hbm, shared, buf, zero):
            @pl.when(sub() == 0)
            def _():
                buf[...] = jnp.zeros((1, lanes), jnp.int32)
                pltpu.sync_copy(buf, shared)
            plsc.subcore_barrier()
            pltpu.sync_copy(x_hbm.at[pl.ds(sub(), 1)], buf)
            zero[...] = jnp.zeros((1,), jnp.int32)
            pltpu.sync_copy(buf, shared.at[zero], add=True)
            plsc.subcore_barrier()

            @pl.when(sub() == 0)
            def _():
                pltpu.sync_copy(shared, buf)
                pltpu.sync_copy(buf, o_hbm)
        out = sum_rows(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x.sum(axis=0, keepdims=True))


def test_scalar_subcore_drives_dmas(chip, lanes):
    x = np.arange(4 * lanes, dtype=np.int32).reshape(4, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=smesh(1),
                   scratch_types=[pltpu.SemaphoreType.DMA((4,))])
        def reverse_rows(x_hbm, o_hbm, sems):
            @pl.loop(0, 4)
            def _(r):
                pltpu.make_async_copy(x_hbm.at[r], o_hbm.at[3 - r], sems.at[r]).start()

            @pl.loop(0, 4)
            def _(r):
                pltpu.make_async_copy(x_hbm.at[r], o_hbm.at[3 - r], sems.at[r]).wait()
        out = reverse_rows(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x[::-1])


def test_scalar_subcore_smem_compute(chip, lanes):
    x = np.arange(8, dtype=np.int32) * 3
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((8,)), mesh=smesh(1),
                   scratch_types=[pltpu.SMEM((8,), jnp.int32)])
        def prefix(x_hbm, o_hbm, s):
            pltpu.sync_copy(x_hbm, s)

            @pl.loop(1, 8)
            def _(i):
                s[i] = s[i] + s[i - 1]
            pltpu.sync_copy(s, o_hbm)
        out = prefix(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), np.cumsum(x))


def test_multicore_rows(chip, lanes):
    cores, subs = 2, 4
    x = np.arange(cores * subs * lanes, dtype=np.int32).reshape(cores * subs, lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(cores, subs),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def rows(x_hbm, o_hbm, buf):
            r = core() * subs + sub()
            pltpu.sync_copy(x_hbm.at[r], buf)
            buf[...] = buf[...] * 2 + core()
            pltpu.sync_copy(buf, o_hbm.at[r])
        out = rows(jnp.asarray(x))
    want = x * 2 + (np.arange(cores * subs) // subs)[:, None]
    np.testing.assert_array_equal(np.asarray(out), want)


def test_multicore_shared_per_core(chip, lanes):
    cores, subs = 2, 2
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((cores * subs, lanes)), mesh=vmesh(cores, subs),
                   scratch_types=[pltpu.VMEM_SHARED((subs, lanes), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def swap_pairs(o_hbm, shared, buf):
            buf[...] = lane_iota(lanes) + 100 * core() + 10 * sub()
            pltpu.sync_copy(buf, shared.at[sub()])
            plsc.subcore_barrier()
            pltpu.sync_copy(shared.at[1 - sub()], buf)
            pltpu.sync_copy(buf, o_hbm.at[core() * subs + sub()])
        out = swap_pairs()
    c = np.repeat(np.arange(cores), subs)[:, None]
    s = np.tile(np.arange(subs), cores)[:, None]
    want = np.arange(lanes)[None, :] + 100 * c + 10 * (1 - s)
    np.testing.assert_array_equal(np.asarray(out), want)


def test_indirect_dma_gather_with_ignored_indices(chip, lanes):
    rows = 4
    table = np.arange(rows * lanes, dtype=np.int32).reshape(rows, lanes) + 1
    idx = np.array([2, -1, 0, -1, 3, 1, -1, 2] * (lanes // 8), dtype=np.int32)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes, lanes)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes, lanes), jnp.int32),
                                  pltpu.SemaphoreType.DMA])
        def gather_some(t_hbm, i_hbm, o_hbm, i, g, sem):
            pltpu.sync_copy(i_hbm, i)
            @pl.loop(0, lanes)
            def _(r):
                g[r] = jnp.zeros((lanes,), jnp.int32)
            pltpu.async_copy(t_hbm.at[plsc.Indices(i, ignored_value=-1)], g, sem).wait()
            pltpu.sync_copy(g, o_hbm)
        out = gather_some(jnp.asarray(table), jnp.asarray(idx))
    want = np.where((idx >= 0)[:, None], table[np.maximum(idx, 0)], 0)
    np.testing.assert_array_equal(np.asarray(out), want)


def test_float_scatter_add(chip, lanes):
    vals = (np.arange(lanes, dtype=np.float32) + 1) / 2
    bins = (np.arange(lanes) % 3).astype(np.int32)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,), jnp.float32), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.float32),
                                  pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.float32)])
        def sums(v_hbm, b_hbm, o_hbm, v, b, h):
            pltpu.sync_copy(v_hbm, v)
            pltpu.sync_copy(b_hbm, b)
            h[...] = jnp.zeros((lanes,), jnp.float32)
            plsc.addupdate_scatter(h, [b[...]], v[...])
            pltpu.sync_copy(h, o_hbm)
        out = sums(jnp.asarray(vals), jnp.asarray(bins))
    want = np.zeros(lanes, np.float32)
    np.add.at(want, bins, vals)
    np.testing.assert_array_equal(np.asarray(out), want)


def test_multicore_fetch_and_add_per_core(chip, lanes):
    cores, subs = 2, 4
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((cores, lanes)), mesh=vmesh(cores, subs),
                   scratch_types=[pltpu.SMEM((1,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def count(o_hbm, counter, buf):
            @pl.when(sub() == 0)
            def _():
                counter[0] = 0
            plsc.subcore_barrier()
            plsc.fetch_and_add(counter.at[0], core() + 1, subcore_id=0)
            plsc.subcore_barrier()

            @pl.when(sub() == 0)
            def _():
                buf[...] = jnp.zeros((lanes,), jnp.int32) + counter[0]
                pltpu.sync_copy(buf, o_hbm.at[core()])
        out = count()
    want = np.repeat((np.arange(cores) + 1)[:, None] * subs, lanes, axis=1)
    np.testing.assert_array_equal(np.asarray(out), want)
