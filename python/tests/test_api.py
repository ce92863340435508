"""The API around the kernels: run records, programs on disk, faults,
warnings, undefined outputs, and bad usage."""
from __future__ import annotations

import os
import subprocess
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

import sc_sim
from sc_sim import binary
from helpers import lane_iota, sds, sub, vmesh


def _double(lanes, subcores=2):
    @pl.kernel(out_type=sds((subcores, lanes)), mesh=vmesh(1, subcores),
               scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
    def double(x_hbm, o_hbm, buf):
        pltpu.sync_copy(x_hbm.at[sub()], buf)
        buf[...] = buf[...] * 2
        pltpu.sync_copy(buf, o_hbm.at[sub()])
    return double


def test_run_returns_outputs_and_record(chip, lanes, tmp_path):
    x = jnp.arange(2 * lanes, dtype=jnp.int32).reshape(2, lanes)
    trace = tmp_path / "trace.json"

    def fn(x):
        return _double(lanes)(x)
    out, rec = sc_sim.run(fn, x, chip=chip, trace=str(trace), stats=True)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * 2)
    assert rec.kernel == "double" and rec.chip == chip
    assert rec.cycles > 0 and rec.microseconds > 0
    assert rec.stats["cycles"] == rec.cycles
    assert rec.warnings == [] and rec.undefined == {}
    assert trace.exists() and trace.stat().st_size > 0


def test_run_without_verification(chip, lanes):
    x = jnp.arange(2 * lanes, dtype=jnp.int32).reshape(2, lanes)
    out, rec = sc_sim.run(lambda x: _double(lanes)(x), x, chip=chip, verify=False)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x) * 2)


def test_to_program_reruns_with_the_cli(chip, lanes, tmp_path):
    x = jnp.arange(2 * lanes, dtype=jnp.int32).reshape(2, lanes)
    path = sc_sim.to_program(lambda x: _double(lanes)(x), x, chip=chip,
                             out_dir=str(tmp_path))
    assert os.path.dirname(path) == str(tmp_path)
    text = open(path).read()
    assert f"chip: {chip}" in text
    assert "test_api.py:" in text  # the kernel's source lines
    proc = subprocess.run([binary.find_binary(), path], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_race_is_a_fault(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 2),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def racy(o_hbm, buf):
            buf[...] = lane_iota(lanes) + sub()
            pltpu.sync_copy(buf, o_hbm)
        with pytest.raises(sc_sim.FaultError) as info:
            racy()
    assert info.value.kind == "race"
    assert "test_api.py:" in str(info.value)


def test_out_of_bounds_is_a_fault(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 2),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def oob(o_hbm, buf):
            buf[pl.ds(sub() * lanes, lanes)] = lane_iota(lanes)
        with pytest.raises(sc_sim.FaultError) as info:
            oob()
    assert info.value.kind == "oob"


def test_deadlock_is_a_fault(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.SemaphoreType.REGULAR])
        def stuck(o_hbm, sem):
            pl.semaphore_wait(sem, 1)
        with pytest.raises(sc_sim.FaultError) as info:
            stuck()
    assert info.value.kind == "deadlock"


def test_undefined_index_is_a_fault(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.VMEM((lanes,), jnp.int32)])
        def uninit(o_hbm, idx, buf):
            buf[...] = plsc.load_gather(buf, [idx[...]])
        with pytest.raises(sc_sim.FaultError) as info:
            uninit()
    assert info.value.kind == "uninit"


def test_fault_under_jit_keeps_its_type(chip, lanes):
    # Under jit the kernel runs in a host callback, whose exception JAX
    # wraps; leaving the interpret() block re-raises the FaultError itself.
    with pytest.raises(sc_sim.FaultError) as info:
        with sc_sim.interpret(chip):
            @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                       scratch_types=[pltpu.SemaphoreType.REGULAR])
            def stuck(o_hbm, sem):
                pl.semaphore_wait(sem, 1)
            jax.block_until_ready(jax.jit(stuck)())
    assert info.value.kind == "deadlock"


def test_undefined_output_elements(chip, lanes):
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=[sds((2, lanes)), sds((lanes,), jnp.float32)],
                   mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def half(o_hbm, f_hbm, buf):
            buf[...] = lane_iota(lanes)
            pltpu.sync_copy(buf, o_hbm.at[0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out, fl = half()
    out = np.asarray(out)
    np.testing.assert_array_equal(out[0], np.arange(lanes))
    assert (out[1] == np.iinfo(np.int32).max).all()
    assert np.isnan(np.asarray(fl)).all()
    assert any(issubclass(w.category, sc_sim.ScSimWarning) for w in caught)


def test_undefined_mask_in_record(chip, lanes):
    def fn():
        @pl.kernel(out_type=sds((2, lanes)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def half(o_hbm, buf):
            buf[...] = lane_iota(lanes)
            pltpu.sync_copy(buf, o_hbm.at[1])
        return half()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, rec = sc_sim.run(fn, chip=chip)
    (mask,) = rec.undefined.values()
    np.testing.assert_array_equal(mask, np.array([[True] * lanes, [False] * lanes]))


# -- bad usage ----------------------------------------------------------------

def test_unknown_chip():
    with pytest.raises(ValueError, match="unsupported chip 'tpu_v9'"):
        sc_sim.interpret("tpu_v9")


def test_non_sparsecore_kernel(chip, lanes):
    with sc_sim.interpret(chip):
        mesh = pltpu.create_tensorcore_mesh("x", num_cores=1)

        @pl.kernel(out_type=sds((8, 128)), mesh=mesh)
        def tc(o_ref):
            o_ref[...] = jnp.zeros((8, 128), jnp.int32)
        with pytest.raises(TypeError, match="sc_sim runs SparseCore kernels"):
            tc()


def test_inputs_that_do_not_fit(chip, lanes):
    vmem_words = {"tpu_v6e": 262144, "tpu7x": 524288}[chip] // 4
    with sc_sim.interpret(chip):
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((2 * vmem_words,), jnp.int32)])
        def huge(x_hbm, o_hbm, big):
            pltpu.sync_copy(x_hbm, big)
        with pytest.raises((sc_sim.ScSimError, ValueError)) as info:
            huge(jnp.zeros((2 * vmem_words,), jnp.int32))
    assert "vmem" in str(info.value).lower() or "capacity" in str(info.value).lower()


def test_wrong_input_given_to_run(chip, lanes):
    with pytest.raises(ValueError, match="no SparseCore kernel"):
        sc_sim.run(lambda x: x + 1, jnp.zeros(3), chip=chip)


def test_outside_the_context_jax_behaves_as_before(lanes):
    with sc_sim.chip_scope("tpu7x"):
        k = _double(16)
    with pytest.raises(Exception, match="interpret mode"):
        k(jnp.zeros((2, 16), jnp.int32))


def _same_writes(lanes):
    @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 2),
               scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
    def same(o_hbm, buf):
        buf[...] = lane_iota(lanes)
        pltpu.sync_copy(buf, o_hbm)
    return same


def test_benign_race_warns(chip, lanes):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, rec = sc_sim.run(lambda: _same_writes(lanes)(), chip=chip)
    np.testing.assert_array_equal(np.asarray(out), np.arange(lanes))
    assert rec.warnings and any(issubclass(w.category, sc_sim.ScSimWarning)
                                for w in caught)


def test_strict_races(chip, lanes):
    if not binary.supports_option("--strict-races"):
        with pytest.raises(sc_sim.UnsupportedError, match="--strict-races"):
            sc_sim.run(lambda: _same_writes(lanes)(), chip=chip, strict_races=True)
        return
    with pytest.raises(sc_sim.FaultError) as info:
        sc_sim.run(lambda: _same_writes(lanes)(), chip=chip, strict_races=True)
    assert info.value.kind == "race"


def test_npy_inputs_beside_the_program(chip, lanes, tmp_path, monkeypatch):
    """The npy path (C core: `init: {npy: PATH}`, `--out DIR`): inputs are
    written beside the program, named relative to it."""
    from sc_sim import arrays
    monkeypatch.setattr(arrays, "_USE_NPY", True)
    x = jnp.arange(2 * lanes, dtype=jnp.int32).reshape(2, lanes) * 5
    try:
        sc_sim.to_program(lambda x: _double(lanes)(x), x, chip=chip,
                          out_dir=str(tmp_path))
    except sc_sim.InvalidProgramError:
        pass  # an sc-sim without npy support refuses the init
    (prog,) = [p for p in os.listdir(tmp_path) if p.endswith(".yaml")]
    text = open(tmp_path / prog).read()
    assert 'x_hbm: {space: "hbm", shape: [2, %d], dtype: "int32", init: {npy: "x_hbm.npy"}}' \
        % lanes in text
    np.testing.assert_array_equal(np.load(tmp_path / "x_hbm.npy"), np.asarray(x))


# What the front end reads from `sc-sim run --json` (PROGRAM_FORMAT.md, "Outcome").
OUTCOME_SCHEMA = {
    "type": "object",
    "required": ["status", "exit"],
    "properties": {
        "status": {"enum": ["ok", "rejected", "invalid", "mismatch",
                            "expect-failed", "fault"]},
        "exit": {"type": "integer", "minimum": 0, "maximum": 4},
        "cycles": {"type": "integer"},
        "refs": {"type": "object"},
        "error": {"type": "object", "required": ["type", "message", "line"]},
        "warnings": {"type": "array"},
    },
}


def test_outcome_json_has_what_the_front_end_reads(chip, lanes, tmp_path):
    import json
    import jsonschema
    x = jnp.arange(2 * lanes, dtype=jnp.int32).reshape(2, lanes)
    path = sc_sim.to_program(lambda x: _double(lanes)(x), x, chip=chip,
                             out_dir=str(tmp_path))
    proc = subprocess.run([binary.find_binary(), path, "--json"],
                          capture_output=True, text=True)
    outcome = json.loads(proc.stdout)
    jsonschema.validate(outcome, OUTCOME_SCHEMA)
    assert outcome["status"] == "ok" and "x_hbm" in outcome["refs"]


def test_npy_outputs_and_undefined_masks(tmp_path, monkeypatch):
    """Reading `--out DIR` (C core): NAME.npy and NAME.undefined.npy."""
    import ml_dtypes
    from sc_sim import arrays
    from sc_sim.program import Ref
    monkeypatch.setattr(arrays, "_USE_NPY", True)
    np.save(tmp_path / "o.npy", np.arange(6, dtype=np.int32).reshape(2, 3))
    np.save(tmp_path / "o.undefined.npy", np.array([[0, 1, 0], [0, 0, 1]], bool))
    np.save(tmp_path / "b.npy", np.array([1.5, -2], ml_dtypes.bfloat16))
    arr, mask = arrays.read_output(Ref("o", "hbm", (2, 3), "int32"), {}, str(tmp_path))
    np.testing.assert_array_equal(mask, [[0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(arr, [[0, np.iinfo(np.int32).max, 2],
                                        [3, 4, np.iinfo(np.int32).max]])
    arr, mask = arrays.read_output(Ref("b", "hbm", (2,), "bfloat16"), {}, str(tmp_path))
    assert arr.dtype == ml_dtypes.bfloat16 and not mask.any()
    np.testing.assert_array_equal(arr.astype(np.float32), [1.5, -2])
