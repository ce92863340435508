"""sc_sim.run(..., profile=True): the per-line profile mapped to the
kernel's Python lines (python/sc_sim/profile.py)."""
from __future__ import annotations

import inspect

import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import sc_sim
from helpers import sds, vmesh


def gather_kernel():
    """The documented gather kernel (examples/dma_gather.yaml) in Pallas, on
    tpu7x: an indirect DMA gathers 4 rows of 16 int32, each row + 1, copied out."""
    @pl.kernel(out_type=sds((4, 16)), mesh=vmesh(1, 1),
               scratch_types=[pltpu.VMEM((4,), jnp.int32), pltpu.VMEM((4, 16), jnp.int32),
                              pltpu.SemaphoreType.DMA])
    def gather(t_hbm, i_hbm, o_hbm, idx, rows, sem):
        pltpu.sync_copy(i_hbm, idx)
        copy = pltpu.async_copy(t_hbm.at[idx], rows, sem)
        copy.wait()
        for r in range(4):
            rows[r] = rows[r] + 1
        pltpu.sync_copy(rows, o_hbm)
    return gather


def kernel_line(fn, text: str) -> int:
    """The file line of the first line of fn's source holding text."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_profile_by_python_line():
    table = np.arange(64, dtype=np.int32).reshape(4, 16)
    idx = np.array([3, 0, 2, 1], dtype=np.int32)
    out, rec = sc_sim.run(lambda t, i: gather_kernel()(t, i), jnp.asarray(table), jnp.asarray(idx), chip="tpu7x",
                          profile=True)
    np.testing.assert_array_equal(np.asarray(out), table[idx] + 1)
    rows = {r.line: r for r in rec.profile if r.file == __file__}
    wait, start = rows[kernel_line(gather_kernel, "copy.wait()")], rows[kernel_line(gather_kernel, "async_copy(")]
    # docs/timing.md: the gather is enqueued at t, its 4 x 64 bytes move from
    # t + 100 at 64 B/cycle and land at t + 104; the wait, issued at t + 1,
    # stalls 103 cycles and then retires in 1; the enqueue itself takes 1.
    assert (wait.stall_dma_cycles, wait.cycles, wait.instructions) == (103, 104, 1)
    assert (start.cycles, start.bytes) == (1, 256)
    assert wait.source == "copy.wait()"
    # the unrolled loop's four get/add/set triples are one Python line: the
    # bytes of dma_gather.yaml's get and set lines, 256 + 512 (docs/timing.md)
    body = rows[kernel_line(gather_kernel, "rows[r] = rows[r] + 1")]
    assert (body.bytes, len(body.program_lines)) == (768, 12)
    # every cycle of the profile is on some Python line, most cycles first
    assert sum(r.cycles for r in rec.profile) == sum(p["cycles"] for p in rec.stats["profile"])
    assert [r.cycles for r in rec.profile] == sorted((r.cycles for r in rec.profile), reverse=True)
    text = rec.profile_table()
    assert text.splitlines()[0] == f"profile: {sum(r.cycles for r in rec.profile)} subcore cycles by Python line:"
    assert f"test_profile.py:{wait.line}" in text and "copy.wait()" in text


def test_no_profile_unless_asked():
    table = np.arange(64, dtype=np.int32).reshape(4, 16)
    _, rec = sc_sim.run(lambda t, i: gather_kernel()(t, i), jnp.asarray(table), jnp.asarray(np.arange(4, dtype=np.int32)))
    assert rec.profile is None
