"""Several kernels in one jitted function, each run on sc-sim in turn,
the outputs of one handed to the next through HBM as XLA hands them.

Expected values come from numpy.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

import sc_sim
from helpers import sds, smesh, sub, vmesh


def test_two_kernels_in_one_jit(chip, lanes):
    x = np.arange(2 * lanes, dtype=np.int32).reshape(2, lanes)

    def double(x_hbm, o_hbm, buf):
        pltpu.sync_copy(x_hbm.at[sub()], buf)
        buf[...] = buf[...] * 2
        pltpu.sync_copy(buf, o_hbm.at[sub()])

    def add_one(x_hbm, o_hbm, buf):
        pltpu.sync_copy(x_hbm.at[sub()], buf)
        buf[...] = buf[...] + 1
        pltpu.sync_copy(buf, o_hbm.at[sub()])

    scratch = [pltpu.VMEM((lanes,), jnp.int32)]

    @jax.jit
    def f(x):
        y = pl.kernel(double, out_type=sds(x.shape), mesh=vmesh(1, 2), scratch_types=scratch)(x)
        return pl.kernel(add_one, out_type=sds(x.shape), mesh=vmesh(1, 2), scratch_types=scratch)(y)

    with sc_sim.interpret(chip) as session:
        out = jax.block_until_ready(f(jnp.asarray(x)))
    np.testing.assert_array_equal(np.asarray(out), x * 2 + 1)
    assert len(session.records) == 2


def test_kernel_over_new_refs(chip, lanes):
    """Modelled on upstream's kernels over jax.new_ref / jax.empty_ref refs
    closed over by the kernel body."""
    x = np.arange(lanes, dtype=np.int32) * 3

    @jax.jit
    def f(x):
        x_ref = jax.new_ref(x)
        o_ref = jax.empty_ref(jax.typeof(x))

        @pl.kernel(mesh=vmesh(1, 1), scratch_types=(pltpu.VMEM(x.shape, x.dtype),))
        def fn(scratch_ref):
            pltpu.sync_copy(x_ref, scratch_ref)
            pltpu.sync_copy(scratch_ref, o_ref)
        fn()
        return jax.freeze(o_ref)

    with sc_sim.interpret(chip):
        out = jax.block_until_ready(f(jnp.asarray(x)))
    np.testing.assert_array_equal(np.asarray(out), x)


def test_two_kernels_over_one_new_ref(chip, lanes):
    """A ref handed from one kernel to the next: kernel 1 writes o_ref,
    kernel 2 updates it in place."""
    x = np.arange(lanes, dtype=np.int32) - 5

    @jax.jit
    def f(x):
        x_ref = jax.new_ref(x)
        o_ref = jax.empty_ref(jax.typeof(x))
        scratch = (pltpu.VMEM(x.shape, x.dtype),)

        @pl.kernel(mesh=vmesh(1, 1), scratch_types=scratch)
        def double(buf):
            pltpu.sync_copy(x_ref, buf)
            buf[...] = buf[...] * 2
            pltpu.sync_copy(buf, o_ref)

        @pl.kernel(mesh=vmesh(1, 1), scratch_types=scratch)
        def add_one(buf):
            pltpu.sync_copy(o_ref, buf)
            buf[...] = buf[...] + 1
            pltpu.sync_copy(buf, o_ref)
        double()
        add_one()
        return jax.freeze(o_ref)

    with sc_sim.interpret(chip) as session:
        out = jax.block_until_ready(f(jnp.asarray(x)))
    np.testing.assert_array_equal(np.asarray(out), x * 2 + 1)
    assert len(session.records) == 2


def test_passing_in_two_refs_scalar_subcore(chip, lanes):
    """Modelled on upstream's kernels given two jax.new_ref refs on the
    scalar subcore: the kernel swaps their contents through SMEM."""
    x = np.arange(2 * lanes, dtype=np.int32).reshape(2, lanes)
    y = np.full_like(x, -3)

    @jax.jit
    def f(x, y):
        x_ref = jax.new_ref(x)
        y_ref = jax.new_ref(y)

        def fn(x_ref, y_ref, scratch_x, scratch_y):
            pltpu.sync_copy(x_ref, scratch_x)
            pltpu.sync_copy(y_ref, scratch_y)
            pltpu.sync_copy(scratch_x, y_ref)
            pltpu.sync_copy(scratch_y, x_ref)

        pl.kernel(body=fn, mesh=plsc.ScalarSubcoreMesh(axis_name="c", num_cores=1),
                  scratch_types=(pltpu.SMEM(x.shape, x.dtype), pltpu.SMEM(y.shape, y.dtype)))(x_ref, y_ref)
        return jax.freeze(x_ref), jax.freeze(y_ref)

    with sc_sim.interpret(chip):
        out_x, out_y = jax.block_until_ready(f(jnp.asarray(x), jnp.asarray(y)))
    np.testing.assert_array_equal(np.asarray(out_x), y)
    np.testing.assert_array_equal(np.asarray(out_y), x)


def test_mixed_outputs_and_refs(chip, lanes):
    """Modelled on upstream's kernel with an output and a jax.new_ref ref
    it updates in place."""
    x = np.arange(2 * lanes, dtype=np.int32).reshape(2, lanes)

    @jax.jit
    def f(x):
        x_ref = jax.new_ref(x)

        def fn(x_ref, out_ref, scratch_ref):
            pltpu.sync_copy(x_ref, out_ref)
            pltpu.sync_copy(x_ref, scratch_ref)
            scratch_ref[0, :] += jnp.ones(lanes, dtype=jnp.int32)
            pltpu.sync_copy(scratch_ref, x_ref)

        out = pl.kernel(body=fn, mesh=vmesh(1, 1), out_type=jax.typeof(x),
                        scratch_types=(pltpu.VMEM(x.shape, x.dtype),))(x_ref)
        return out, jax.freeze(x_ref)

    with sc_sim.interpret(chip):
        out, mutated = jax.block_until_ready(f(jnp.asarray(x)))
    want = x.copy()
    want[0] += 1
    np.testing.assert_array_equal(np.asarray(out), x)
    np.testing.assert_array_equal(np.asarray(mutated), want)


def _mpmd_map(*args, **kwargs):
    from jax._src.pallas import mpmd
    return mpmd.mpmd_map(*args, **kwargs)


def test_mpmd_vector_subcores_feed_the_scalar_subcore(chip, lanes):
    """Modelled on upstream's mpmd_map over a vector and a scalar subcore
    mesh, in the direction the pinned jaxlib lowers (JAX's own lowering
    judges it too, jax_check): each vector subcore writes its row of a
    shared VMEM_SHARED buffer and signals a semaphore of the scalar
    subcore mesh, whose subcore waits for all of them and copies the
    buffer out.  One sc-sim run of both meshes at once (one record)."""
    from jax._src.pallas import core as pallas_core
    from jax._src.pallas.mosaic import core as tpu_core
    subs = 4
    x = np.arange(subs * lanes, dtype=np.int32).reshape(subs, lanes)

    def vector_fn(x_hbm, o_hbm, stage, done, buf):
        s = sub()
        pltpu.sync_copy(x_hbm.at[s], buf)
        buf[...] = buf[...] + 100
        pltpu.sync_copy(buf, stage.at[s])
        pl.semaphore_signal(done, 1)

    def scalar_fn(x_hbm, o_hbm, stage, done, buf):
        pl.semaphore_wait(done, subs)
        pltpu.sync_copy(stage, o_hbm)

    with sc_sim.interpret(chip) as session:
        vm, sm = vmesh(1, subs), smesh(1)
        scratch = [pltpu.VMEM_SHARED((subs, lanes), jnp.int32),
                   pltpu.SemaphoreType.REGULAR @ sm,
                   pallas_core.CoreMemorySpace(tpu_core.MemorySpace.VMEM, vm)((lanes,), jnp.int32)]
        f = _mpmd_map([(vm, vector_fn), (sm, scalar_fn)], out_types=sds(x.shape),
                      scratch_types=scratch)
        out = jax.block_until_ready(f(jnp.asarray(x)))
    np.testing.assert_array_equal(np.asarray(out), x + 100)
    assert len(session.records) == 1
