"""Kernels that call pltpu.emit_pipeline, modelled on the SparseCore docs
(docs/pallas/tpu/sparsecore.md: sc_add_one, gather, scatter).  The pinned
JAX expands the pipeline while tracing (run_scoped buffers, a fori_loop,
conds, dma_start / dma_wait), so the kernels translate as they are; the
results are numpy's."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import sc_sim
from helpers import sds, vmesh


def test_sc_add_one(chip, lanes):
    """The docs' sc_add_one: 2-D blocks, PARALLEL over (core, subcore)."""
    x = np.random.default_rng(0).integers(0, 64, (32, 4 * lanes), dtype=np.int32)
    block = (8, 2 * lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(2, 2))
        def sc_add_one(x_hbm, o_hbm):
            def body(in_vmem, out_vmem):
                @pl.loop(0, in_vmem.shape[0])
                def _(c0):
                    @pl.loop(0, in_vmem.shape[1], step=lanes)
                    def _(c1):
                        slc = (pl.ds(c0, 1), pl.ds(c1, lanes))
                        out_vmem.at[*slc][...] = in_vmem.at[*slc][...] + 1

            pltpu.emit_pipeline(
                body,
                grid=(x.shape[0] // block[0], x.shape[1] // block[1]),
                in_specs=[pl.BlockSpec(block_shape=block, index_map=lambda i, j: (i, j))],
                out_specs=[pl.BlockSpec(block_shape=block, index_map=lambda i, j: (i, j))],
                core_axis_name=("core", "subcore"),
                dimension_semantics=(pltpu.PARALLEL, pltpu.PARALLEL),
            )(x_hbm, o_hbm)
        out = sc_add_one(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x + 1)


def _indices(n: int, batch: int) -> np.ndarray:
    return np.asarray([(37 * j + 5) % batch for j in range(n)], np.int32).reshape(1, n)


def test_gather(chip, lanes):
    """The docs' gather: indices pipelined into VMEM, an indirect DMA per window."""
    batch, dim, window = 64, lanes, 16
    x = np.arange(batch * dim, dtype=np.int32).reshape(batch, dim)
    idx = _indices(64, batch)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((idx.size, dim)), mesh=vmesh(1, 2))
        def gather(x_hbm, i_hbm, o_hbm):
            def body(i_vmem, o_vmem):
                pltpu.sync_copy(x_hbm.at[i_vmem.at[0]], o_vmem)

            pltpu.emit_pipeline(
                body,
                grid=(idx.size // window,),
                in_specs=[pl.BlockSpec((1, window), index_map=lambda i: (0, i))],
                out_specs=[pl.BlockSpec((window, dim), index_map=lambda i: (i, 0))],
                core_axis_name="subcore",
                dimension_semantics=(pltpu.PARALLEL,),
            )(i_hbm, o_hbm)
        out = gather(jnp.asarray(x), jnp.asarray(idx))
    np.testing.assert_array_equal(np.asarray(out), x[idx[0]])


def test_scatter(chip, lanes):
    """The docs' scatter: two in_specs, no out_specs."""
    batch, dim, window = 64, lanes, 16
    x = np.arange(batch * dim, dtype=np.int32).reshape(batch, dim)
    idx = _indices(64, batch)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((batch, dim)), mesh=vmesh(1, 2))
        def scatter(g_hbm, i_hbm, o_hbm):
            def body(x_vmem, i_vmem):
                pltpu.sync_copy(x_vmem, o_hbm.at[i_vmem.at[0]])

            pltpu.emit_pipeline(
                body,
                grid=(idx.size // window,),
                in_specs=[pl.BlockSpec((window, dim), index_map=lambda i: (i, 0)),
                          pl.BlockSpec((1, window), index_map=lambda i: (0, i))],
                out_specs=[],
                core_axis_name="subcore",
                dimension_semantics=(pltpu.PARALLEL,),
            )(g_hbm, i_hbm)
        out = scatter(jnp.asarray(x[idx[0]]), jnp.asarray(idx))
    np.testing.assert_array_equal(np.asarray(out), x)


def test_revisited_output(chip, lanes):
    """An output block kept across the ARBITRARY dimension, pl.program_id in the body."""
    x = np.arange(2 * 4 * lanes, dtype=np.int32).reshape(2, 4 * lanes)
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((2, lanes)), mesh=vmesh(1, 2))
        def accumulate(x_hbm, o_hbm):
            def body(xb, acc):
                @pl.when(pl.program_id(1) == 0)
                def _():
                    acc[0, :] = jnp.zeros((lanes,), jnp.int32)
                acc[0, :] += xb[0, :]

            pltpu.emit_pipeline(
                body,
                grid=(2, 4),
                in_specs=[pl.BlockSpec((1, lanes), index_map=lambda i, j: (i, j))],
                out_specs=[pl.BlockSpec((1, lanes), index_map=lambda i, j: (i, 0))],
                core_axis_name="subcore",
                dimension_semantics=(pltpu.PARALLEL, pltpu.ARBITRARY),
            )(x_hbm, o_hbm)
        out = accumulate(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x.reshape(2, 4, lanes).sum(axis=1))


def _dma_starts(program: pathlib.Path, tmp: pathlib.Path) -> list[tuple[str, str, int]]:
    trace = tmp / (program.stem + ".trace.json")
    subprocess.run([os.environ["SC_SIM_BINARY"], program.name, "--trace", str(trace)],
                   cwd=program.parent, check=True, capture_output=True)
    starts = []
    for line in trace.read_text().splitlines():
        if '"name":"dma_start"' in line:
            a = json.loads(line.rstrip(","))["args"]
            starts.append((a["src_space"], a["dst_space"], a["bytes"]))
    return starts


def _accumulate(x_):
    @pl.kernel(out_type=sds((2, 16)), mesh=vmesh(1, 2))
    def accumulate(x_hbm, o_hbm):
        def body(xb, acc):
            @pl.when(pl.program_id(1) == 0)
            def _():
                acc[0, :] = jnp.zeros((16,), jnp.int32)
            acc[0, :] += xb[0, :]

        pltpu.emit_pipeline(
            body, grid=(2, 4),
            in_specs=[pl.BlockSpec((1, 16), index_map=lambda i, j: (i, j))],
            out_specs=[pl.BlockSpec((1, 16), index_map=lambda i, j: (i, 0))],
            core_axis_name="subcore",
            dimension_semantics=(pltpu.PARALLEL, pltpu.ARBITRARY),
        )(x_hbm, o_hbm)
    return accumulate(x_)


def _squeezed(x_):
    @pl.kernel(out_type=sds((4, 16)), mesh=vmesh(1, 2))
    def squeezed(x_hbm, o_hbm):
        def body(xb, ob):
            ob[...] = xb[...] * 2 + pl.program_id(0)

        pltpu.emit_pipeline(
            body, grid=(4,),
            in_specs=[pl.BlockSpec((None, 16), index_map=lambda i: (i, 0))],
            out_specs=[pl.BlockSpec((None, 16), index_map=lambda i: (i, 0))],
            core_axis_name="subcore",
            dimension_semantics=(pltpu.PARALLEL,),
        )(x_hbm, o_hbm)
    return squeezed(x_)


@pytest.mark.parametrize("fn, x, golden, ndma", [
    (_accumulate, np.arange(128, dtype=np.int32).reshape(2, 64), "revisit_accumulate", 10),
    (_squeezed, np.arange(64, dtype=np.int32).reshape(4, 16), "squeezed", 8),
])
def test_same_dmas_as_the_golden(tmp_path, fn, x, golden, ndma):
    """Upstream's own expansion of a pipeline (traced by JAX, translated by
    the front end) starts the DMAs that sc-sim's expansion of the golden
    program tests/golden/pipeline/GOLDEN starts, in the same order (the
    golden's expect.refs holds the result, computed by hand)."""
    upstream = pathlib.Path(sc_sim.to_program(fn, jnp.asarray(x), chip="tpu7x", out_dir=str(tmp_path)))
    program = pathlib.Path(__file__).resolve().parents[2] / f"tests/golden/pipeline/{golden}.yaml"
    ours = _dma_starts(program, tmp_path)
    assert len(ours) == ndma
    assert _dma_starts(upstream, tmp_path) == ours
