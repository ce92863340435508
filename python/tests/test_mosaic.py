"""JAX's Mosaic module run on the engine (docs/mosaic.md): a module read
as JAX lowered it runs clean, seeded wrong edits of it are each caught
(exit 3: verification; exit 4: a fault), input outside the subset is
exit 2 at its line:column of the .mlir file.

mosaic/seeded.mlir is jax 0.10.2's module of the kernel in
mosaic/seeded.yaml's comments (lowered on a CPU host)."""
from __future__ import annotations

import os
import re
import shutil

import pytest

from sc_sim import mosaic

HERE = os.path.join(os.path.dirname(__file__), "mosaic")


def _setup(tmp_path, text=None):
    for f in ("seeded.yaml", "x_hbm.npy"):
        shutil.copy(os.path.join(HERE, f), tmp_path / f)
    src = open(os.path.join(HERE, "seeded.mlir")).read()
    (tmp_path / "k.mlir").write_text(src if text is None else text(src))
    return [str(tmp_path / "k.mlir"), str(tmp_path / "seeded.yaml")]


def _edit(pattern, repl, line_only=False):
    def f(src):
        new, n = re.subn(pattern, repl, src, count=1, flags=re.M)
        assert n == 1, pattern
        return new
    return f


def test_module_as_lowered_runs_clean(tmp_path, capfd):
    assert mosaic.main(_setup(tmp_path)) == 0
    assert "values verified against the reference" in capfd.readouterr().out


# (name, edit, exit statuses that catch it)
SEEDED = [
    ("wrong offset", _edit(r"(%c8 = arith.constant )8( : index)", r"\g<1>7\2"), {3}),
    ("off-by-one loop bound", _edit(r"(%c3_i32 = arith.constant )3( : i32)", r"\g<1>4\2"), {3}),
    ("swapped operands", _edit(r"arith.subi %27, %28", "arith.subi %28, %27"), {3}),
    ("dropped mask", _edit(r"arith.select %25, %29, %33", "arith.select %25, %29, %29"), {3}),
    ("inverted condition", _edit(r"arith.cmpi sgt, %23, %24", "arith.cmpi sge, %23, %24"), {3}),
    ("wrong constant", _edit(r"(%c5_i32 = arith.constant )5( : i32)", r"\g<1>6\2"), {3}),
    ("wrong operation", _edit(r"arith.muli %10, %11", "arith.addi %10, %11"), {3}),
    ("missing wait", _edit(r"^\s*tpu.wait_dma2 semaphore\(%arg6.*\n", ""), {3, 4}),
    ("dropped store", _edit(r"^\s*tpu.vector_store %arg5\[%c8_7\].*\n", ""), {3}),
    ("wrong row of the DMA", _edit(r"(%24 = tpu.memref_slice %arg3\[)%arg1", r"\1%arg0"), {3, 4}),
    ("wrong source buffer", _edit(r"tpu.vector_load %arg4\[%c0_6\]", "tpu.vector_load %arg5[%c0_6]"), {3, 4}),
    ("missing output wait", _edit(r"^\s*tpu.wait_dma2 semaphore\(%21.*\n", ""), {3, 4}),
]


@pytest.mark.parametrize("name,edit,caught", SEEDED, ids=[s[0] for s in SEEDED])
def test_seeded_wrong_lowering_is_caught(tmp_path, capfd, name, edit, caught):
    rc = mosaic.main(_setup(tmp_path, edit))
    err = capfd.readouterr().err
    assert rc in caught, (name, rc, err)
    assert "error:" in err


BAD = [
    ("unknown op", _edit(r"arith.muli %10, %11 : vector<8xi32>", "arith.ceildivsi %10, %11 : vector<8xi32>"),
     r"operation arith.ceildivsi is outside the subset"),
    ("unknown attribute", _edit(r"\{strides = array<i32>\}", "{strides = array<i32>, foo = 1 : i32}"),
     r"tpu.vector_load: attribute foo is outside the subset"),
    ("argument mismatch", None, r"argument %arg5 of type memref<16xi32, "
     r"#tpu.memory_space<vmem>> does not match the program's ref 'sem' \(semaphore"),
]


@pytest.mark.parametrize("name,edit,msg", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_exit_2_at_its_line(tmp_path, capfd, name, edit, msg):
    args = _setup(tmp_path, edit)
    if edit is None:  # the program's side: sem declared before buf2
        y = tmp_path / "seeded.yaml"
        lines = y.read_text().splitlines(keepends=True)
        i = next(k for k, ln in enumerate(lines) if ln.startswith("  buf2:"))
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
        y.write_text("".join(lines))
    rc = mosaic.main(args)
    err = capfd.readouterr().err
    assert rc == 2, err
    m = re.match(r"(\S+\.mlir):(\d+):(\d+): error: (.*)", err)
    assert m and re.search(msg, m.group(4)), err
    assert int(m.group(2)) > 0


def test_run_with_lowering_jax_gives_sc_sims_outputs(chip, lanes):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    import sc_sim
    from helpers import lane_iota, sds, sub, vmesh
    x = (np.arange(4 * lanes, dtype=np.int32) * 5 - 37).reshape(4, lanes)

    def fn(a):
        @pl.kernel(out_type=sds(x.shape), mesh=vmesh(1, 4),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32)])
        def k(x_hbm, o_hbm, buf):
            pltpu.sync_copy(x_hbm.at[sub()], buf)

            @pl.loop(0, 3)
            def _(i):
                v = buf[...]
                buf[...] = jnp.where(lane_iota(lanes) % 3 == i, (v >> 1) + 3, v * 2 - i)
            pltpu.sync_copy(buf, o_hbm.at[sub()])
        return k(a)
    ours, _ = sc_sim.run(fn, jnp.asarray(x), chip=chip, jax_check=False)
    theirs, rec = sc_sim.run(fn, jnp.asarray(x), chip=chip, jax_check=False, lowering="jax")
    np.testing.assert_array_equal(np.asarray(theirs), np.asarray(ours))
    assert rec.cycles
    with pytest.raises(ValueError, match="lowering="):
        sc_sim.interpret(chip, lowering="mosaic")


def test_jax_drops_the_subcore_of_a_semaphore_signal(lanes):
    """jax 0.10.2 lowers semaphore_signal(device_id={subcore: 1}) on a
    scratch semaphore to a tpu.sem_signal without a target (docs/mosaic.md):
    subcore 1 then waits forever, which the engine reports."""
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    import sc_sim
    from helpers import SUB, sds, sub, vmesh

    def fn():
        @pl.kernel(out_type=sds((lanes,)), mesh=vmesh(1, 2),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.int32),
                                  pltpu.SemaphoreType.REGULAR])
        def handoff(o_hbm, buf, ready):
            @pl.when(sub() == 0)
            def _():
                pl.semaphore_signal(ready, 1, device_id={SUB: 1},
                                    device_id_type=pl.DeviceIdType.MESH)

            @pl.when(sub() == 1)
            def _():
                pl.semaphore_wait(ready, 1)
                buf[...] = jnp.zeros((lanes,), jnp.int32)
                pltpu.sync_copy(buf, o_hbm)
        return handoff()
    sc_sim.run(fn, chip="tpu7x", jax_check=False)  # sc-sim's lowering: fine
    from sc_sim import mosaic as m
    text = m.kernel_module(fn)
    assert re.search(r"tpu.sem_signal %\w+, %\w+ :", text)  # no core or subcore operand
    with pytest.raises((sc_sim.VerificationError, sc_sim.FaultError), match="deadlock"):
        sc_sim.run(fn, chip="tpu7x", jax_check=False, lowering="jax")


def test_campaign_smoke(capsys):
    """25 fuzz programs: emitted, lowered by JAX, read, run, verified."""
    from sc_sim import mosaic_campaign
    assert mosaic_campaign.main(["--seed", "7", "--count", "25", "--quiet"]) == 0
    out = capsys.readouterr().out
    # how many of 25 programs JAX accepts and the reader covers depends on the generator's
    # units; some must run, and none may differ
    assert re.search(r"match +(\d+)", out) and int(re.search(r"match +(\d+)", out).group(1)) >= 3
    assert re.search(r"mismatch +0\b", out)


def test_jax_neg_of_zero_is_plus_zero(lanes):
    """jax 0.10.2 lowers lax.neg as 0 - x (docs/mosaic.md): -(0.0) stores
    +0.0 in JAX's module, -0.0 in the kernel's meaning."""
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu

    import sc_sim
    from helpers import sds, vmesh

    def fn():
        @pl.kernel(out_type=sds((lanes,), jnp.float32), mesh=vmesh(1, 1),
                   scratch_types=[pltpu.VMEM((lanes,), jnp.float32)])
        def neg(o_hbm, buf):
            buf[...] = -jnp.zeros((lanes,), jnp.float32)
            pltpu.sync_copy(buf, o_hbm)
        return neg()
    out, _ = sc_sim.run(fn, chip="tpu7x", jax_check=False)
    assert np.signbit(np.asarray(out)).all()  # -0.0, as numpy's negative(0.0)
    with pytest.raises(sc_sim.VerificationError, match=r"reference -0\.0, lowering 0\.0"):
        sc_sim.run(fn, chip="tpu7x", jax_check=False, lowering="jax")
