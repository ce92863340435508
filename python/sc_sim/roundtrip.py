"""The emitter's round trip (issue 18): program -> `sc-sim emit-pallas` ->
Pallas kernel -> the front end (`sc_sim.run`) -> program, and the same
outcome (exit status and message) as the program run directly; and JAX's
own verdict (`jax_verdict`) on the emitted kernel.

    python -m sc_sim.roundtrip GOLDEN.yaml...    one line per program
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from typing import Any

from . import binary, errors
from .verdict import jax_verdict

_LOC = re.compile(r"^\S+:\d+:\d+: error: (.*)$")


class CannotExpress(Exception):
    """emit-pallas refused the program: Pallas cannot say it."""


def direct(path: str) -> tuple[int, str]:
    """Exit status and first error message of `sc-sim PATH` (run in the
    program's folder, as the goldens are)."""
    folder, name = os.path.split(os.path.abspath(path))
    args = []
    if os.path.exists(path[:-5] + ".args"):
        return -1, "has .args"
    r = subprocess.run([binary.find_binary(), name, *args], cwd=folder, capture_output=True, text=True)
    return r.returncode, _first_error(r.stderr)


def _first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        m = _LOC.match(line)
        if m:
            return m.group(1)
    return ""


def emit(path: str) -> str:
    """The Pallas module text of the program at PATH."""
    folder, name = os.path.split(os.path.abspath(path))
    r = subprocess.run([binary.find_binary(), "emit-pallas", name], cwd=folder,
                       capture_output=True, text=True)
    if r.returncode:
        raise CannotExpress(_first_error(r.stderr) or r.stderr.strip())
    return r.stdout


def load(text: str) -> dict[str, Any]:
    scope: dict[str, Any] = {"__name__": "emitted"}
    exec(compile(text, "<emitted>", "exec"), scope)  # noqa: S102 -- our own emitter's output
    return scope


def _outcome(exc: BaseException) -> tuple[int, str]:
    first = str(exc).splitlines()[0] if str(exc) else ""
    if isinstance(exc, errors.FaultError):
        return 4, first
    if isinstance(exc, errors.VerificationError):
        return 3, first
    if isinstance(exc, errors.InvalidProgramError):
        return 2, first
    if isinstance(exc, errors.UnsupportedError):
        return -2, first
    name = type(exc).__name__
    if isinstance(exc, errors.MosaicVerificationError):
        name = "VerificationError"  # sc-sim's type for the Mosaic verifier's errors
    return 1, f"{name}: {first}"


def through_pallas(text: str) -> tuple[int, str]:
    """Exit status and message of the emitted kernel run by the front end."""
    from . import api
    scope = load(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with api.chip_scope(scope["CHIP"]):
                fn = scope["build"]()
            api.run(fn, *scope["inputs"](), chip=scope["CHIP"], jax_check=False)
        except Exception as exc:  # the outcome to compare
            return _outcome(exc)
    return 0, ""


def jax_says(text: str) -> tuple[bool, str | None, str | None]:
    """JAX's own verdict on the emitted kernel: accepted, type, message."""
    from . import api
    scope = load(text)
    try:
        with api.chip_scope(scope["CHIP"]):
            fn = scope["build"]()
    except Exception as exc:  # phase T: JAX's tracing
        return False, type(exc).__name__, str(exc)
    v = jax_verdict(fn, *scope["inputs"](), chip=scope["CHIP"])
    return v.accepted, v.type, v.message


def main(argv: list[str]) -> int:
    bad = 0
    for path in argv:
        want = direct(path)
        if want[0] == -1:
            print(f"{path}: cannot express: command-line options (.args)")
            continue
        try:
            got = through_pallas(emit(path))
        except CannotExpress as exc:
            print(f"{path}: cannot express: {exc}")
            continue
        same = got == want
        bad += not same
        print(f"{path}: {'same' if same else 'DIFFERENT'} {want} {'' if same else got}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
