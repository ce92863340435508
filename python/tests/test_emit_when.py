"""emit-pallas and names bound inside a `when` (docs/jax-versions.md): the
format binds them for the code after the branch, a Python branch function
keeps them local.  A DMA descriptor a later wait uses is built before the
branch; a value bound in both branches is returned through jax.lax.cond.
Before, both kernels raised NameError.  A value only one branch binds and
the code after reads has no Pallas spelling: emit-pallas refuses it."""
from __future__ import annotations

import pathlib
import subprocess

from sc_sim import jaxdiff_rules, roundtrip
from sc_sim.binary import find_binary

ROOT = pathlib.Path(__file__).resolve().parents[2]

WHEN_LET = """version: 1
chip: tpu7x
kernel: vector_subcore
mesh: {cores: 1, subcores: 2}
refs:
  o: {space: smem, shape: [6], dtype: int32}
body:
  - when:
      cond: "subcore == 1"
      body:
        - let: {name: y, value: 7}
      else:
        - let: {name: y, value: 8}
  - set: {ref: "o[4]", value: y}
  - when:
      cond: "subcore == 0"
      body:
        - get: {ref: "o[1]", out: z}
        - let: {name: y, value: "z + 1"}
      else:
        - let: {name: y, value: 3}
  - set: {ref: "o[5]", value: y}
"""


def test_select_ref_descriptor_is_built_before_the_branches() -> None:
    path = str(ROOT / "tests" / "golden" / "select_ref" / "select_ref_dma.yaml")
    text = roundtrip.emit(path)
    assert "        cp = pltpu.make_async_copy(a, buf, sem)\n        def _then0():" in text
    assert jaxdiff_rules.jax_judge(text, "tpu7x") == (True, None, "")
    assert roundtrip.through_pallas(text) == roundtrip.direct(path) == (0, "")


def test_value_bound_in_both_branches_is_returned(tmp_path: pathlib.Path) -> None:
    prog = tmp_path / "when_let.yaml"
    prog.write_text(WHEN_LET)
    text = roundtrip.emit(str(prog))
    assert text.count("return y, ") == 4 and text.count("(y, ) = jax.lax.cond(") == 2
    assert "return z" not in text  # z is not used after its branch
    assert jaxdiff_rules.jax_judge(text, "tpu7x") == (True, None, "")
    assert roundtrip.through_pallas(text) == roundtrip.direct(str(prog)) == (0, "")


ONE_SIDED = """version: 1
chip: tpu7x
kernel: vector_subcore
mesh: {cores: 1, subcores: 1}
refs:
  o: {space: smem, shape: [2], dtype: int32}
body:
  - let: {name: y, value: 1}
  - when:
      cond: "subcore == 0"
      body:
        - let: {name: y, value: 7}%s
  - set: {ref: "o[0]", value: y}
"""


def test_value_bound_in_one_branch_is_refused(tmp_path: pathlib.Path) -> None:
    # without else, and with an else that leaves y as it was before the when
    for i, els in enumerate(("", "\n      else:\n        - set: {ref: \"o[1]\", value: 2}")):
        prog = tmp_path / f"one_sided{i}.yaml"
        prog.write_text(ONE_SIDED % els)
        r = subprocess.run([find_binary(), "emit-pallas", prog.name], cwd=tmp_path,
                           capture_output=True, text=True)
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr == (f"{prog.name}:9:5: error: emit-pallas cannot express a value read after a when "
                            "that only one branch binds ('y'; bind it in both branches) in Pallas\n")
