"""JAX's own verdict (issue 18): the pinned jax lowers the kernel for TPU
on this CPU host; sc-sim's checker must agree with it."""
from __future__ import annotations

import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import sc_sim
from sc_sim import api, verdict
from helpers import lane_iota, sds, sub, vmesh


def _kernel(lanes, bad=False):
    @pl.kernel(out_type=sds((2, lanes)), mesh=vmesh(1, 2),
               scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
    def inc(x_hbm, o_hbm, buf):
        if bad:
            buf[...] = x_hbm[sub()]
        else:
            pltpu.sync_copy(x_hbm.at[sub()], buf)
        buf[...] = buf[...] + lane_iota(lanes)
        pltpu.sync_copy(buf, o_hbm.at[sub()])
    return inc


def test_accepted_with_mosaic_module(chip, lanes):
    x = jnp.zeros((2, lanes), jnp.int32)
    v = sc_sim.jax_verdict(lambda x: _kernel(lanes)(x), x, chip=chip)
    assert v.accepted and v.exception is None
    assert "tpu.vector_load" in v.module and "tpu.enqueue_dma" in v.module
    assert f"vector<{lanes}xi32>" in v.module


def test_rejected_with_type_and_message(chip, lanes):
    x = jnp.zeros((2, lanes), jnp.int32)
    v = sc_sim.jax_verdict(lambda x: _kernel(lanes, bad=True)(x), x, chip=chip)
    assert not v.accepted
    assert v.type == "NotImplementedError"
    assert v.message.startswith("Get does not support loading from HBM.")


def test_disagreement_warns_and_jax_wins(chip, lanes, monkeypatch):
    # Pretend JAX accepted a kernel sc-sim rejects: a warning names both.
    monkeypatch.setattr(verdict, "verdict_for_call",
                        lambda params, avals: verdict.Verdict(True))
    x = jnp.zeros((2, lanes), jnp.int32)
    with sc_sim.interpret(chip):
        k = _kernel(lanes, bad=True)
        with pytest.warns(sc_sim.DisagreementWarning, match="sc-sim bug"):
            with pytest.raises(sc_sim.ScSimError, match="which JAX accepts"):
                k(x)
