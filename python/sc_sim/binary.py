"""Finding and running the sc-sim binary."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
from typing import Any

ENV_VAR = "SC_SIM_BINARY"


def find_binary() -> str:
    """SC_SIM_BINARY, else an sc-sim beside the package (or in the source
    tree's build/), else sc-sim on PATH."""
    env = os.environ.get(ENV_VAR)
    if env:
        if not os.access(env, os.X_OK):
            raise FileNotFoundError(f"{ENV_VAR}={env!r} is not an executable file")
        return env
    here = pathlib.Path(__file__).resolve().parent
    for cand in (here / "sc-sim", here / "bin" / "sc-sim",
                 here.parent.parent / "build" / "sc-sim"):
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    found = shutil.which("sc-sim")
    if found:
        return found
    raise FileNotFoundError(
        "sc-sim binary not found: set SC_SIM_BINARY, put sc-sim on PATH, "
        "or build it with `make` in the sc-sim repository")


def run_json(args: list[str], cwd: str | None = None,
             timeout: float = 300.0) -> tuple[dict[str, Any], str]:
    """Run ``sc-sim ARGS --json``; the parsed JSON outcome and stderr."""
    proc = subprocess.run([find_binary(), *args, "--json"], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
    try:
        outcome = json.loads(proc.stdout) if proc.stdout.strip() else {}
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"sc-sim printed no valid JSON (exit {proc.returncode}): "
                           f"{exc}\n{proc.stderr}") from None
    outcome.setdefault("exit", proc.returncode)
    if "status" not in outcome:
        outcome["status"] = "invalid"
        outcome.setdefault("error", {"type": "", "message": proc.stderr.strip()})
    return outcome, proc.stderr


_HELP: dict[str, str] = {}


def supports_option(option: str) -> bool:
    """Whether `sc-sim --help` lists a run option (e.g. --strict-races)."""
    exe = find_binary()
    if exe not in _HELP:
        proc = subprocess.run([exe, "--help"], capture_output=True, text=True,
                              timeout=30)
        _HELP[exe] = proc.stdout + proc.stderr
    return any(line.split()[:1] == [option] for line in _HELP[exe].splitlines())
