"""Design sweeps from Python: `sc_sim.sweep(fn, *args, grid={...})`.

The kernels `fn(*args)` calls are written as sc-sim programs
(`sc_sim.to_program`) and each is run by `sc-sim sweep` at every point of
the grid; the result is the sweep's JSON lines as dicts, one per point and
kernel (docs/cluster.md).
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from typing import Any, Callable, Iterable

from .binary import find_binary


def _set_args(grid: dict[str, Iterable[Any]]) -> list[str]:
    out = []
    for name, values in grid.items():
        vals = [str(int(v)) if isinstance(v, float) and v == int(v) else str(v) for v in values]
        if not vals:
            raise ValueError(f"grid[{name!r}] has no values")
        out += ["--set", f"{name}={','.join(vals)}"]
    return out


def sweep_program(path: str, grid: dict[str, Iterable[Any]], *, verify: bool = False,
                  shard: str | None = None) -> list[dict]:
    """`sc-sim sweep PATH --set ...`: the JSON lines as dicts.  A bad grid
    (unknown parameter, bad value) raises ValueError with sc-sim's message."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "sweep.jsonl")
        cmd = [find_binary(), "sweep", path, *_set_args(grid), "--out", out]
        if verify:
            cmd.append("--verify")
        if shard:
            cmd += ["--shard", shard]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode == 2:
            raise ValueError(proc.stderr.strip())
        with open(out, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.startswith("{")]


def sweep(fn: Callable[..., Any], *args: Any, grid: dict[str, Iterable[Any]], chip: str = "tpu7x",
          verify: bool = False) -> list[dict]:
    """Run every SparseCore kernel of `fn(*args)` at every point of `grid`
    (chip parameters of `sc-sim --list-chips`, `preset`, `cores`,
    `subcores`, each a list of values): one dict per kernel and point, with
    "kernel" (the call's number), "params", "cycles", "us", "bound", ..."""
    from .api import to_program
    with tempfile.TemporaryDirectory() as tmp:
        paths = to_program(fn, *args, chip=chip, out_dir=tmp)
        paths = [paths] if isinstance(paths, str) else paths
        rows = []
        for k, p in enumerate(paths):
            for r in sweep_program(p, grid, verify=verify):
                r["kernel"] = k
                rows.append(r)
        return rows
