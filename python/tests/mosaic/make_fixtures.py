"""Regenerates the op fixtures of test_mosaic_ops.py: for each kernel K
below, K/kernel.mlir is jax's own Mosaic module of the kernel (lowered on
this host by the pinned jax, sc_sim.mosaic.kernel_module) and K/ holds
sc-sim's program of the same kernel (sc_sim.to_program) with its inputs.

    build/venv/bin/python python/tests/mosaic/make_fixtures.py [NAME ...]

Each kernel is small and exercises a group of the ops docs/mosaic.md
lists; test_mosaic_ops.py checks that together they hold every op of that
list.  The kernels' meaning is numpy's: each also checks its output
against a numpy expression when regenerated."""
import os
import shutil
import sys

H = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [H + "/../..", H + "/.."]

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402
from jax.experimental.pallas import tpu_sc as plsc  # noqa: E402

import sc_sim  # noqa: E402
from helpers import SUB, sds, sub, vmesh  # noqa: E402
from sc_sim import mosaic  # noqa: E402
from sc_sim.runner import chip_scope  # noqa: E402

L = 16
KERNELS = {}


def kernel(fn):
    KERNELS[fn.__name__] = fn
    return fn


def iota():
    return lax.iota(jnp.int32, L)


@kernel
def int_arith():
    x = (np.arange(L, dtype=np.int32) * 37 - 211)
    y = np.array([3, -5, 7, -2, 9, 4, -11, 6, 13, -3, 5, 8, -7, 2, 10, -9], np.int32)

    def fn(a, b):
        @pl.kernel(out_type=sds((12, L)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((L,), jnp.int32), pltpu.VMEM((L,), jnp.int32),
                                  pltpu.VMEM((12, L), jnp.int32)])
        def k(x_hbm, y_hbm, o_hbm, xv, yv, o):
            pltpu.sync_copy(x_hbm, xv)
            pltpu.sync_copy(y_hbm, yv)
            u, v = xv[...], yv[...]
            o[0] = (u + v) * v - u
            o[1] = (u & v) | (u ^ 12)
            o[2] = (u << 2) >> 3
            o[3] = lax.div(u, 4)
            o[4] = lax.div(u, v)
            o[5] = lax.rem(u, v)
            o[6] = jnp.maximum(u, v) - jnp.minimum(u, 3)
            o[7] = jnp.where(u == v, 1, 0) + jnp.where(u != 7, 2, 0) + jnp.where(u < v, 4, 0)
            o[8] = jnp.where(u <= v, 1, 0) + jnp.where(u > 5, 2, 0) + jnp.where(u >= v, 4, 0)
            o[9] = lax.rem(u, -3)
            o[10] = -u
            o[11] = v + u[3]
            pltpu.sync_copy(o, o_hbm)
        return k(a, b)

    def want(a, b):
        return np.stack([(a + b) * b - a, (a & b) | (a ^ 12), (a << 2) >> 3, np.trunc(a / 4).astype(np.int32),
                         np.trunc(a / b).astype(np.int32), np.fmod(a, b),
                         np.maximum(a, b) - np.minimum(a, 3),
                         (a == b) * 1 + (a != 7) * 2 + (a < b) * 4,
                         (a <= b) * 1 + (a > 5) * 2 + (a >= b) * 4, np.fmod(a, -3), -a, b + a[3]])
    return fn, (x, y), want


@kernel
def unsigned():
    x = (np.arange(L, dtype=np.int64) * 0x1357_9BDF - 0x7000_0000).astype(np.uint32)
    y = (np.arange(L, dtype=np.uint32) * 3 + 5).astype(np.uint32)

    def fn(a, b):
        @pl.kernel(out_type=sds((6, L), jnp.uint32), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((L,), jnp.uint32), pltpu.VMEM((L,), jnp.uint32),
                                  pltpu.VMEM((6, L), jnp.uint32)])
        def k(x_hbm, y_hbm, o_hbm, xv, yv, o):
            pltpu.sync_copy(x_hbm, xv)
            pltpu.sync_copy(y_hbm, yv)
            u, v = xv[...], yv[...]
            o[0] = lax.div(u, v)
            o[1] = lax.rem(u, v)
            o[2] = lax.shift_right_logical(u, jnp.full((L,), 7, jnp.uint32))
            o[3] = jnp.maximum(u, v) - jnp.minimum(u, v)
            o[4] = jnp.where(u < v, 1, 0).astype(jnp.uint32) + jnp.where(u <= v, 2, 0).astype(jnp.uint32) \
                + jnp.where(u > v, 4, 0).astype(jnp.uint32) + jnp.where(u >= v, 8, 0).astype(jnp.uint32)
            o[5] = (u.astype(jnp.float32) / 1024.0).astype(jnp.int32).astype(jnp.uint32)
            pltpu.sync_copy(o, o_hbm)
        return k(a, b)

    def want(a, b):
        return np.stack([a // b, a % b, a >> 7, np.maximum(a, b) - np.minimum(a, b),
                         ((a < b) * 1 + (a <= b) * 2 + (a > b) * 4 + (a >= b) * 8).astype(np.uint32),
                         (a.astype(np.float32) / np.float32(1024)).astype(np.int32).astype(np.uint32)])
    return fn, (x, y), want


@kernel
def floats():
    x = (np.arange(L, dtype=np.float32) - 7.5) / 4
    y = np.linspace(-2, 3, L, dtype=np.float32)

    def fn(a, b):
        @pl.kernel(out_type=sds((7, L), jnp.float32), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((L,), jnp.float32), pltpu.VMEM((L,), jnp.float32),
                                  pltpu.VMEM((7, L), jnp.float32)])
        def k(x_hbm, y_hbm, o_hbm, xv, yv, o):
            pltpu.sync_copy(x_hbm, xv)
            pltpu.sync_copy(y_hbm, yv)
            u, v = xv[...], yv[...]
            o[0] = (u + v) * v - u / 2.0
            o[1] = jnp.maximum(u, v) - jnp.minimum(u, 0.5)
            o[2] = jnp.where(u < v, 1.0, 0.0) + jnp.where(u >= v, 2.0, 0.0) + jnp.where(u == v, 4.0, 0.0)
            o[3] = jnp.where(u != v, u, v) + jnp.where(u > 1.0, 8.0, 0.0) + jnp.where(u <= -1.0, 16.0, 0.0)
            o[4] = -u
            o[5] = u.astype(jnp.int32).astype(jnp.float32)
            o[6] = jnp.fmax(u, v) + jnp.fmin(u, v)
            pltpu.sync_copy(o, o_hbm)
        return k(a, b)

    def want(a, b):
        return np.stack([(a + b) * b - a / 2, np.maximum(a, b) - np.minimum(a, 0.5),
                         (a < b) * 1.0 + (a >= b) * 2.0 + (a == b) * 4.0,
                         np.where(a != b, a, b) + (a > 1) * 8.0 + (a <= -1) * 16.0, -a,
                         a.astype(np.int32).astype(np.float32), np.fmax(a, b) + np.fmin(a, b)]
                        ).astype(np.float32)
    return fn, (x, y), want


@kernel
def narrow():
    x = (np.arange(2 * L, dtype=np.int32) * 3001 - 40000).astype(np.int16)

    def fn(a):
        @pl.kernel(out_type=sds((3, 2 * L), jnp.int16), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((2 * L,), jnp.int16), pltpu.VMEM((3, 2 * L), jnp.int16),
                                  pltpu.VMEM((2 * L,), jnp.bfloat16)])
        def k(x_hbm, o_hbm, xv, o, fb):
            pltpu.sync_copy(x_hbm, xv)
            u = xv[...]
            o[0] = (u.astype(jnp.int32) * 3 + 1).astype(jnp.int16)
            o[1] = (u.astype(jnp.uint16).astype(jnp.int32) >> 4).astype(jnp.int16)
            fb[...] = u.astype(jnp.bfloat16)
            o[2] = (fb[...].astype(jnp.float32) * 0.5).astype(jnp.bfloat16).astype(jnp.int16)
            pltpu.sync_copy(o, o_hbm)
        return k(a)
    return fn, (x,), None


@kernel
def memory():
    x = (np.arange(4 * L, dtype=np.int32) * 5 - 30).reshape(4, L)
    idx = np.array([3, 0, 2, 1] * (L // 4), np.int32)

    def fn(a, i):
        @pl.kernel(out_type=sds((4, L)), mesh=vmesh(1, 4),
                   scratch_types=[pltpu.VMEM((4, L), jnp.int32), pltpu.VMEM((L,), jnp.int32),
                                  pltpu.VMEM((L,), jnp.int32), pltpu.VMEM((L,), jnp.int32),
                                  pltpu.SMEM((4,), jnp.int32)])
        def k(x_hbm, i_hbm, o_hbm, t, iv, buf, acc, sm):
            pltpu.sync_copy(x_hbm, t)
            pltpu.sync_copy(i_hbm, iv)
            s = sub()
            sm[0] = s * 2 + 1
            g = plsc.load_gather(t, [iv[...], iota()])
            acc[...] = g
            plsc.store_scatter(acc, [(iota() + s) % L], g * 2, mask=iota() % 2 == 0)
            plsc.addupdate_scatter(acc, [iota()], jnp.full((L,), sm[0], jnp.int32))
            plsc.addupdate(acc.at[...], t[s])
            buf[...] = jnp.zeros((L,), jnp.int32)
            plsc.store_compressed(buf.at[...], acc[...], mask=acc[...] > 0)
            v = plsc.load_expanded(buf.at[...], mask=iota() >= s)
            acc[...] = jnp.where(iota() >= s, v, 0) + acc[...]
            acc[pl.ds(0, 8)] = buf[pl.ds(8, 8)] + acc[pl.ds(8, 8)]
            pltpu.sync_copy(acc, o_hbm.at[s])
        return k(a, i)
    return fn, (x, idx), None


@kernel
def control():
    x = (np.arange(2 * L, dtype=np.int32) * 7 - 60).reshape(2, L)

    def fn(a):
        @pl.kernel(out_type=sds((2, L)), mesh=vmesh(1, 2),
                   scratch_types=[pltpu.VMEM((L,), jnp.int32)])
        def k(x_hbm, o_hbm, buf):
            s = sub()
            pltpu.sync_copy(x_hbm.at[s], buf)

            def body(i, c):
                return c + buf[...] * i
            c = lax.fori_loop(0, 3, body, jnp.zeros((L,), jnp.int32))
            n = lax.while_loop(lambda v: v < 100, lambda v: v * 3 + 1, s + 1)
            m = lax.cond(s == 0, lambda: n + 7, lambda: n * 2)

            @pl.when(s == 1)
            def _():
                buf[...] = c + m

            @pl.when(s == 0)
            def _():
                buf[...] = c - m

            @plsc.parallel_loop(0, L, 8)
            def _(j):
                buf[pl.ds(j, 8)] = buf[pl.ds(j, 8)] + j
            pltpu.sync_copy(buf, o_hbm.at[s])
        return k(a)
    return fn, (x,), None


@kernel
def dma_sync():
    n = 4
    x = (np.arange(n * L, dtype=np.int32) * 3 - 17).reshape(n, L)
    rows = np.array([2, 0, 3, 1, 1, 3, 0, 2], np.int32)

    def fn(a, r):
        @pl.kernel(out_type=sds((n, L)), mesh=vmesh(1, n),
                   scratch_types=[pltpu.VMEM_SHARED((n, L), jnp.int32),
                                  pltpu.VMEM((L,), jnp.int32), pltpu.VMEM((8,), jnp.int32),
                                  pltpu.VMEM((8, L), jnp.int32), pltpu.SMEM((1,), jnp.int32),
                                  pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.REGULAR])
        def k(x_hbm, r_hbm, o_hbm, shared, buf, rv, g, counter, dsem, sem):
            s = sub()

            @pl.when(s == 0)
            def _():
                counter[0] = 0
            pltpu.async_copy(x_hbm.at[s], shared.at[s], dsem).wait()
            plsc.subcore_barrier()
            plsc.fetch_and_add(counter.at[0], s + 1, subcore_id=0)
            pl.semaphore_signal(sem, 2)
            pl.semaphore_wait(sem, 2)
            pltpu.sync_copy(r_hbm, rv)
            pltpu.async_copy(x_hbm.at[rv], g, dsem).wait()
            plsc.subcore_barrier()

            def scoped(tmp):
                pltpu.sync_copy(shared.at[(s + 1) % n], tmp)
                buf[...] = tmp[...] + g[s]
            pl.run_scoped(scoped, pltpu.VMEM((L,), jnp.int32))
            pltpu.sync_copy(buf, o_hbm.at[s])
        return k(a, r)
    return fn, (x, rows), None


@kernel
def views():
    x = (np.arange(4 * L, dtype=np.int32) * 65537 - 99).reshape(4, L)

    def fn(a):
        @pl.kernel(out_type=sds((4, L)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((4, L), jnp.int32), pltpu.VMEM((4, L), jnp.int32),
                                  pltpu.VMEM((8, L), jnp.int16)])
        def k(x_hbm, o_hbm, t, o, h):
            pltpu.sync_copy(x_hbm, t)
            o[0] = (t.bitcast(jnp.uint32)[1] >> 3).astype(jnp.int32)
            pltpu.sync_copy(t.bitcast(jnp.int16), h)
            o[1] = h.bitcast(jnp.int32)[2] + 1
            o.reshape(2, 2 * L)[1, pl.ds(0, L)] = t.reshape(2, 2 * L)[1, pl.ds(L, L)] * 2
            o[3] = t.reshape(2, 2 * L)[0, pl.ds(L, L)]
            pltpu.sync_copy(o, o_hbm)
        return k(a)

    def want(a):
        return np.stack([((a[1].view(np.uint32)) >> 3).astype(np.int32), a[2] + 1, a[3] * 2, a[1]])
    return fn, (x,), want


def _masked_cummax(a, m):
    """plsc.cummax with a mask: the running maximum of the masked lanes;
    an unmasked lane keeps the running value (before the first masked
    lane: its own value), as sc-sim's tpu.scan (docs/isa.md)."""
    out, run = a.copy(), None
    for i in range(len(a)):
        if m[i]:
            run = a[i] if run is None else max(run, a[i])
        out[i] = a[i] if run is None else run
    return out


@kernel
def valops():
    x = (np.arange(L, dtype=np.int32) * 29 - 200)
    f = (np.arange(L, dtype=np.float32) - 6) / 8

    def fn(a, b):
        @pl.kernel(out_type=sds((12, L)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((L,), jnp.int32), pltpu.VMEM((L,), jnp.float32),
                                  pltpu.VMEM((12, L), jnp.int32)])
        def k(x_hbm, f_hbm, o_hbm, xv, fv, o):
            pltpu.sync_copy(x_hbm, xv)
            pltpu.sync_copy(f_hbm, fv)
            u, w = xv[...], fv[...]
            o[0] = jnp.abs(u)
            o[1] = plsc.bitcast(jnp.abs(w) + jnp.exp(w), jnp.int32)
            o[2] = (jnp.abs(w) * 100.0).astype(jnp.uint32).astype(jnp.int32)
            o[3] = jnp.take_along_axis(u, (iota() * 5 + 3) % L, axis=0)
            o[4] = jnp.concatenate([lax.slice_in_dim(u, 11, L), lax.slice_in_dim(u, 0, 11)])
            o[5] = lax.cumsum(u, axis=0)
            o[6] = plsc.cummax(u, mask=iota() % 3 != 1) + jnp.min(u)
            o[7] = plsc.bitcast(plsc.cumsum(w) + plsc.cummax(w) - jnp.min(w),
                                jnp.int32)
            o[8] = plsc.all_reduce_population_count(u > 0)
            o[9] = plsc.all_reduce_ffs(u > 100)
            pl.debug_print("row", u)
            o[10] = u * 2
            o[11] = plsc.bitcast(plsc.bitcast(u, jnp.int16) + jnp.int16(1), jnp.int32)
            pltpu.sync_copy(o, o_hbm)
        return k(a, b)

    def want(a, b):
        i16 = a.view(np.int16) + np.int16(1)
        return np.stack([np.abs(a), (np.abs(b) + np.exp(b)).view(np.int32),
                         (np.abs(b) * np.float32(100)).astype(np.uint32).astype(np.int32),
                         a[(np.arange(L) * 5 + 3) % L], np.roll(a, L - 11), np.cumsum(a, dtype=np.int32),
                         _masked_cummax(a, np.arange(L) % 3 != 1) + a.min(),
                         (np.cumsum(b, dtype=np.float32) + np.maximum.accumulate(b)
                          - b.min()).view(np.int32),
                         np.full(L, (a > 0).sum(), np.int32), np.full(L, np.argmax(a > 100), np.int32),
                         a * 2, i16.view(np.int32)])
    want.approx = (1,)  # exp
    return fn, (x, f), want


@kernel
def sort():
    x = np.array([5, -3, 12, 0, 7, -3, 9, 1, 44, -20, 3, 8, 2, 6, -1, 10], np.int32)

    def fn(a):
        @pl.kernel(out_type=sds((2, L), jnp.float32), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((L,), jnp.int32), pltpu.VMEM((2, L), jnp.float32)])
        def k(x_hbm, o_hbm, xv, o):
            pltpu.sync_copy(x_hbm, xv)
            w = xv[...].astype(jnp.float32)
            o[0] = lax.sort(w, dimension=0)
            o[1] = -lax.sort(-w, dimension=0)
            pltpu.sync_copy(o, o_hbm)
        return k(a)

    def want(a):
        w = np.sort(a.astype(np.float32))
        return np.stack([w, w[::-1]])
    return fn, (x,), want


def make(name):
    fn, args, want = KERNELS[name]()
    jargs = [jnp.asarray(a) for a in args]
    d = os.path.join(H, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with chip_scope("tpu7x"):
        text = mosaic.kernel_module(fn, *jargs)
    with open(os.path.join(d, "kernel.mlir"), "w") as f:
        f.write(text)
    tmp = os.path.join(d, "tmp")
    prog = sc_sim.to_program(fn, *jargs, out_dir=tmp)
    for f in os.listdir(tmp):
        if f.endswith(".npy") and not f.endswith(".out.npy") or f == os.path.basename(prog):
            shutil.copy(os.path.join(tmp, f), os.path.join(d, "program.yaml" if f.endswith(".yaml") else f))
    shutil.rmtree(tmp)
    if want is not None:
        out, _ = sc_sim.run(fn, *jargs, chip="tpu7x", jax_check=False)
        got, exp = np.array(out), want(*args)
        for r in getattr(want, "approx", ()):  # float rows bitcast to int32: to 1 ulp
            np.testing.assert_allclose(got[r].view(np.float32), exp[r].view(np.float32), rtol=2e-7)
            got[r] = exp[r]
        np.testing.assert_array_equal(got, exp)
    print(name, "written")


if __name__ == "__main__":
    for n in sys.argv[1:] or list(KERNELS):
        try:
            make(n)
        except Exception as exc:  # noqa: BLE001 -- report and go on
            print(n, "FAILED:", type(exc).__name__, str(exc)[:400])
