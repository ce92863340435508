"""emit-pallas and names bound inside a `when` (docs/jax-versions.md): the
format binds them for the code after the branch, a Python branch function
keeps them local.  A DMA descriptor a later wait uses is built before the
branch; a value bound in both branches is returned through jax.lax.cond.
Before, both kernels raised NameError."""
from __future__ import annotations

import pathlib

from sc_sim import jaxdiff_rules, roundtrip

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
