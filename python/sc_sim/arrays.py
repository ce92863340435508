"""Kernel inputs into a program, final HBM contents out of sc-sim.

Two ways, chosen by `use_npy()` (a probe of the binary):

* npy (the C core's `init: {npy: PATH}` and `--out DIR`): inputs written as
  `NAME.npy` beside the program, outputs read from `DIR/NAME.npy` and
  `DIR/NAME.undefined.npy`;
* literal (works with every sc-sim): inputs as `init: [nested list]`,
  outputs from the `--json` outcome's "refs" (undefined elements null).
"""
from __future__ import annotations

import os
from typing import Any

import ml_dtypes
import numpy as np

from .program import Ref

def _detect_npy() -> bool:
    """Whether the binary reads `init: {npy: PATH}` and writes `--out DIR`
    (both land together in the C core): a two-element probe program is
    run once.  SC_SIM_NPY=0 or 1 forces a choice."""
    forced = os.environ.get("SC_SIM_NPY")
    if forced in ("0", "1"):
        return forced == "1"
    import subprocess
    import tempfile
    from .binary import find_binary
    with tempfile.TemporaryDirectory(prefix="sc_sim_probe_") as d:
        np.save(os.path.join(d, "x.npy"), np.arange(2, dtype=np.int32))
        with open(os.path.join(d, "p.yaml"), "w") as f:
            f.write("version: 1\nchip: tpu7x\nmesh: {cores: 1, subcores: 1}\n"
                    "refs:\n  x: {space: hbm, shape: [2], dtype: int32, "
                    "init: {npy: x.npy}}\nbody: []\n")
        try:
            proc = subprocess.run([find_binary(), "run", "p.yaml", "--out", "o"],
                                  cwd=d, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return False
        return proc.returncode == 0 and os.path.exists(os.path.join(d, "o", "x.npy"))


_USE_NPY: bool | None = None


def use_npy() -> bool:
    global _USE_NPY
    if _USE_NPY is None:
        _USE_NPY = _detect_npy()
    return _USE_NPY

_DTYPES = {"bfloat16": np.dtype(ml_dtypes.bfloat16),
           "float8_e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
           "float8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
           "int4": np.dtype(ml_dtypes.int4), "uint4": np.dtype(ml_dtypes.uint4)}
# ml_dtypes' 4-bit integers: numpy saves them as '<V1' (one a byte, the
# value in the low nibble) and np.iinfo does not know them.
_NIBBLES = {np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)}
_VOIDS = {np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn),
          np.dtype(ml_dtypes.float8_e5m2)}


def np_dtype(name: str) -> np.dtype:
    return _DTYPES.get(name) or np.dtype(name)


def _as_list(arr: np.ndarray) -> Any:
    if arr.dtype == np.bool_:
        return arr.tolist()
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64).tolist()
    f = arr.astype(np.float32)
    if not np.all(np.isfinite(f)):
        raise ValueError("non-finite input values need the npy input path "
                         "(sc-sim's init: {npy: PATH})")
    # float32 values print exactly as doubles; sc-sim rounds them back.
    return f.astype(np.float64).tolist()


def set_input(ref: Ref, value: np.ndarray, program_dir: str) -> None:
    """Make `value` the initial contents of input ref `ref`."""
    if use_npy():
        fname = f"{ref.name}.npy"
        np.save(os.path.join(program_dir, fname), value)
        ref.init = {"npy": fname}
    else:
        ref.init = _as_list(value) if value.ndim else _as_list(value.reshape(()))


def output_flags(out_dir: str) -> list[str]:
    return ["--out", out_dir] if use_npy() else []


def undefined_fill(dtype: np.dtype) -> Any:
    """What Pallas interpret mode puts in uninitialised memory."""
    if dtype == np.bool_:
        return False
    if dtype in _NIBBLES:
        return ml_dtypes.iinfo(dtype).max
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).max
    return np.nan


def read_output(ref: Ref, outcome: dict[str, Any],
                out_dir: str) -> tuple[np.ndarray, np.ndarray]:
    """The final contents of HBM ref `ref` and its mask of undefined elements."""
    dtype = np_dtype(ref.dtype or "int32")
    if use_npy():
        arr = np.load(os.path.join(out_dir, f"{ref.name}.npy"))
        mpath = os.path.join(out_dir, f"{ref.name}.undefined.npy")
        mask = np.load(mpath) if os.path.exists(mpath) else \
            np.zeros(arr.shape, np.bool_)
        if (dtype in _VOIDS or dtype in _NIBBLES) and arr.dtype != dtype and arr.dtype.itemsize == dtype.itemsize:
            arr = arr.view(dtype)  # saved as '<V2' / '|V1' (ml_dtypes) or as bits
        arr = arr.astype(dtype, copy=True)
        if mask.any():
            arr[mask] = undefined_fill(dtype)
        return arr, mask
    raw = outcome.get("refs", {}).get(ref.name)
    if raw is None and ref.shape:
        raise RuntimeError(f"sc-sim reported no contents for ref {ref.name!r}")
    obj = np.array(raw, dtype=object).reshape(ref.shape)
    mask = np.vectorize(lambda v: v is None, otypes=[np.bool_])(obj) \
        if obj.size else np.zeros(ref.shape, np.bool_)
    fill = undefined_fill(dtype)

    def conv(v: Any) -> Any:
        if v is None:
            return fill
        if isinstance(v, str):
            return float(v)  # "nan", "inf", "-inf"
        return v

    vals = np.vectorize(conv, otypes=[object])(obj) if obj.size else obj
    if np.issubdtype(dtype, np.floating) or dtype in _VOIDS:
        arr = np.array(vals.tolist() if vals.ndim else vals.item(),
                       dtype=np.float32).astype(dtype)
    else:
        arr = np.array(vals.tolist() if vals.ndim else vals.item(), dtype=dtype)
    return arr.reshape(ref.shape), mask.reshape(ref.shape)
