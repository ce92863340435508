"""Loops with carried values: fori_loop with carries, scan, while_loop.

The translation emits the C core's `loop: {..., carry, next}` and
`while: {carry, cond, body, next}` forms; until the C core reads them
these tests are expected to fail (the format check is asserted below).
"""
from __future__ import annotations

import os
import re
import tempfile

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import sc_sim
from helpers import lane_iota, sds, sub, vmesh

def _sum_rows(lanes):
    @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
               scratch_types=[pltpu.VMEM((4, lanes), jnp.int32),
                              pltpu.VMEM((lanes,), jnp.int32)])
    def sum_rows(x_hbm, o_hbm, rows, acc):
        pltpu.sync_copy(x_hbm, rows)
        total = lax.fori_loop(0, 4, lambda r, a: a + rows[r],
                              jnp.zeros((lanes,), jnp.int32))
        acc[...] = total
        pltpu.sync_copy(acc, o_hbm)
    return sum_rows


def test_fori_loop_vector_carry(chip, lanes):
    x = np.arange(4 * lanes, dtype=np.int32).reshape(4, lanes)
    with sc_sim.interpret(chip):
        out = _sum_rows(lanes)(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), x.sum(axis=0))


def test_scan_two_carries(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((2, lanes)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((2, lanes), jnp.int32)])
        def fib(o_hbm, buf):
            def step(c, _):
                a, b = c
                return (b, a + b), None
            (a, b), _ = lax.scan(step, (jnp.zeros((lanes,), jnp.int32),
                                        lane_iota(lanes)), None, length=6)
            buf[0] = a
            buf[1] = b
            pltpu.sync_copy(buf, o_hbm)
        out = fib()
    a, b = np.zeros(lanes, np.int64), np.arange(lanes)
    for _ in range(6):
        a, b = b, a + b
    np.testing.assert_array_equal(np.asarray(out), np.stack([a, b]))


def test_while_loop_scalar(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def doubling(o_hbm, buf):
            n = lax.while_loop(lambda v: v < 1000, lambda v: v * 2 + 1, jnp.int32(1))
            buf[...] = jnp.zeros((lanes,), jnp.int32) + n
            pltpu.sync_copy(buf, o_hbm)
        out = doubling()
    n = 1
    while n < 1000:
        n = n * 2 + 1
    np.testing.assert_array_equal(np.asarray(out), np.full(lanes, n))


def test_carry_form_emitted(chip, lanes, tmp_path):
    """The program holds the carried loop in the format the C core gets."""
    x = jnp.zeros((4, lanes), jnp.int32)
    with sc_sim.interpret(chip, out_dir=str(tmp_path)) as session:
        try:
            _sum_rows(lanes)(x)
        except sc_sim.InvalidProgramError:
            pass  # the C core does not read carries yet
    (path,) = [p for p in os.listdir(tmp_path) if p.endswith(".yaml")]
    text = open(tmp_path / path).read()
    assert re.search(r"^\s+carry: \{t\d+: \"astype\(full\(\[%d\], 0\), int32\)\"\}|"
                     r"^\s+carry: \{t\d+: \"t\d+\"\}" % lanes, text, re.M), text
    assert re.search(r"^\s+next: \{t\d+: \"t\d+\"\}", text, re.M), text
    assert "range: [0, 4, 1]" in text
