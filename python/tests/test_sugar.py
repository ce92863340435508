"""pl.debug_print and pl.debug_check through the Python front end.

Modelled on upstream's DebugPrintTest.test_vector_subcore; the expected
lines are worked out by hand (x = arange(16), x[:8] + 100, the mask < 103).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl

import sc_sim
from helpers import sds, vmesh


def test_debug_print_vector_subcore(capfd):
    x = np.arange(16, dtype=np.int32)
    with sc_sim.interpret("tpu7x"):
        @pl.kernel(out_type=sds((16,)), mesh=vmesh(1, 1))
        def kernel(x_hbm, o_hbm):
            pl.debug_print("Memref", x_hbm)
            pl.debug_print("Single int", 1234552)
            pl.debug_print("Single float", 12344.625)
            pl.debug_print("No values")
        jax.block_until_ready(kernel(jnp.asarray(x)))
    err = capfd.readouterr().err
    assert "[0.0] Memref, data: s32[16] { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 }" in err
    assert "[0.0] Single int, data: s32[1] { 1234552 }" in err
    assert "[0.0] Single float, data: f32[1] { 12344.625 }" in err
    assert "[0.0] No values" in err


def test_debug_print_placeholder_rejected():
    with sc_sim.interpret("tpu7x"):
        @pl.kernel(out_type=sds((16,)), mesh=vmesh(1, 1))
        def kernel(x_hbm, o_hbm):
            pl.debug_print("x = {}", 1)
        with pytest.raises(NotImplementedError, match="does not support placeholders"):
            jax.block_until_ready(kernel(jnp.zeros(16, jnp.int32)))


def test_debug_check_fails():
    with sc_sim.interpret("tpu7x"), pl.enable_debug_checks():
        @pl.kernel(out_type=sds((16,)), mesh=vmesh(1, 2))
        def kernel(x_hbm, o_hbm):
            pl.debug_check(jax.lax.axis_index("subcore") == 0, "only subcore 0")
        with pytest.raises(Exception, match="only subcore 0"):
            jax.block_until_ready(kernel(jnp.zeros(16, jnp.int32)))
