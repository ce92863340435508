"""Shared fixtures: every kernel runs on an 8-lane and a 16-lane chip."""
from __future__ import annotations

import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
if "SC_SIM_BINARY" not in os.environ and (ROOT / "build" / "sc-sim").exists():
    os.environ["SC_SIM_BINARY"] = str(ROOT / "build" / "sc-sim")

# chip -> (lanes, SparseCores, vector subcores per SparseCore)
CHIPS = {"tpu_v6e": (8, 2, 16), "tpu7x": (16, 2, 16)}


@pytest.fixture(params=sorted(CHIPS))
def chip(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def lanes(chip: str) -> int:
    return CHIPS[chip][0]
