"""The emitter's round trip over the rule goldens (issue 18): program ->
`sc-sim emit-pallas` -> Pallas -> the front end -> program gives the
program's own outcome (exit status and first message).  The goldens whose
outcome differs are listed with why (docs/jax-versions.md has the
categories); each listed one must still differ, so the list stays true.
SC_SIM_ROUNDTRIP_ALL=1 covers every golden group, not only rules/."""
from __future__ import annotations

import os
import pathlib

import pytest

from sc_sim import roundtrip

ROOT = pathlib.Path(__file__).resolve().parents[2]
GROUPS = ["*"] if os.environ.get("SC_SIM_ROUNDTRIP_ALL") else ["rules"]
GOLDENS = sorted(p for g in GROUPS for p in (ROOT / "tests" / "golden").glob(f"{g}/*.yaml")
                 if not p.with_suffix(".args").exists())

# name -> why the round trip's outcome differs
CHIP = "the front end runs only tpu7x, tpu_v5p, tpu_v6e"
UNANNOTATED = "a ref without a memory space is emitted as HBM"
KNOWN = {
    "C0_no_sparsecore": CHIP, "C0_no_sparsecore_mapping": CHIP, "C3_too_many_subcores": CHIP,
    "prec_50_C0_before_everything": CHIP,
    "D4_add_unannotated_source": UNANNOTATED, "GL1_gather_unannotated": UNANNOTATED,
    "SL2_scatter_unannotated": UNANNOTATED,
}


def same_fault(got, want) -> bool:
    """A fault of the emitted kernel names its own line: the same kind and
    text otherwise ("fault: KIND: ..." against "KIND: ... (at <emitted>...)")."""
    return (got[0] == want[0] == 4 and want[1].startswith("fault: ")
            and got[1].split(" (at <emitted>")[0] == want[1][len("fault: "):])


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_roundtrip(path: pathlib.Path) -> None:
    want = roundtrip.direct(str(path))
    try:
        text = roundtrip.emit(str(path))
    except roundtrip.CannotExpress as exc:
        pytest.skip(f"cannot express: {exc}")
    got = roundtrip.through_pallas(text)
    if path.stem in KNOWN:
        assert got != want, f"{path.stem} now round-trips: drop it from KNOWN"
    else:
        assert got == want or same_fault(got, want)


def test_emit_refuses_initialised_scratch(tmp_path: pathlib.Path) -> None:
    prog = tmp_path / "p.yaml"
    prog.write_text("version: 1\nchip: tpu7x\nkernel: vector_subcore\nmesh: {cores: 1, subcores: 1}\n"
                    "refs:\n  buf: {space: vmem, shape: [16], dtype: int32, init: zeros}\n"
                    "body:\n  - get: {ref: 'buf[...]', out: v}\n")
    with pytest.raises(roundtrip.CannotExpress, match="an initialised scratch ref"):
        roundtrip.emit(str(prog))


def test_emitted_kernel_names_the_pallas_calls(tmp_path: pathlib.Path) -> None:
    text = roundtrip.emit(str(ROOT / "examples" / "quickstart.yaml"))
    for call in ("plsc.VectorSubcoreMesh(", "pltpu.sync_copy(x.at[jax.lax.axis_index(\"subcore\")], buf)",
                 ".swap(", "pltpu.async_copy(buf, out.at[", "c.wait()", "pltpu.SemaphoreType.DMA"):
        assert call in text
    assert roundtrip.through_pallas(text) == (0, "")
