"""One kernel call on sc-sim: translate, judge (sc-sim's checker and, if
asked, JAX's lowering), write the program and its inputs, run the binary,
and turn its outcome into outputs, a run record, warnings or exceptions."""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import sys
import tempfile
import warnings
from typing import Any, Sequence

import jax
import numpy as np
from jax.sharding import AbstractDevice, AbstractMesh

from . import arrays, binary, chips
from .errors import (FaultError, InvalidProgramError, ScSimError, UnsupportedError,
                     VerificationError, exception_class)
from .profile import ProfileRow, format_profile, python_profile
from .program import Source, render
from .translate import KernelInfo, format_source, translate_kernel


class ScSimWarning(UserWarning):
    """A warning sc-sim gave on a run (benign race, undefined output, ...)."""


class DisagreementWarning(ScSimWarning):
    """JAX's lowering and sc-sim's checker judged a kernel differently."""


@dataclasses.dataclass
class RunRecord:
    """What one kernel call did on sc-sim."""
    kernel: str
    chip: str
    cycles: int | None
    microseconds: float | None
    stats: dict[str, Any] | None
    warnings: list[dict[str, Any]]
    undefined: dict[str, np.ndarray]   # per output: mask of undefined elements
    program: str | None = None         # the program's path, if kept
    profile: list[ProfileRow] | None = None  # profile=True: cycles per Python line, most first

    def profile_table(self) -> str:
        """The profile (profile=True) as a text table (sc_sim.profile.format_profile)."""
        if self.profile is None:
            raise ValueError("no profile: run with profile=True")
        return format_profile(self.profile)


@dataclasses.dataclass
class Options:
    chip: str = "tpu7x"
    trace: str | None = None
    stats: bool | str = False
    strict_races: bool = False
    verify: bool = True
    out_dir: str | None = None  # to_program: keep programs here
    jax_check: bool = True      # also ask JAX's own lowering (issue 18)
    profile: bool = False       # RunRecord.profile: the cycles of each Python line
    lowering: str = "sc-sim"    # "jax": run JAX's Mosaic module (docs/mosaic.md)


def abstract_mesh(chip: str) -> AbstractMesh:
    c = chips.resolve(chip)
    dev = AbstractDevice(device_kind=c.device_kind, num_cores=c.num_cores,
                         platform="tpu")
    return AbstractMesh((1,), ("_sc_sim",), abstract_device=dev)


def chip_scope(chip: str) -> contextlib.AbstractContextManager:
    """Inside it, SparseCore meshes see the chip (get_sparse_core_info)."""
    return jax.sharding.use_abstract_mesh(abstract_mesh(chip))


# ---------------------------------------------------------------------------
# One kernel call.

@dataclasses.dataclass
class Prepared:
    info: KernelInfo
    name: str
    path: str | None = None  # where the program was written in out_dir
    mosaic: str | None = None  # JAX's Mosaic module, run instead (lowering="jax")


def kernel_name(params: dict[str, Any]) -> str:
    if params.get("name"):
        return str(params["name"])
    dbg = getattr(params["jaxprs"][0], "debug_info", None)
    fn = getattr(dbg, "func_name", None) or "kernel"
    return str(fn).split(" ")[0]


def prepare(params: dict[str, Any], chip: str, n_inputs: int) -> Prepared:
    """Translate an mpmd_map call (raises UnsupportedError / TypeError)."""
    name = kernel_name(params)
    info = translate_kernel(params, chips.resolve(chip).preset, name, n_inputs)
    return Prepared(info, name)


def _py_location(line_map: dict[int, Source], line: int | None) -> str | None:
    if line is None:
        return None
    src = line_map.get(int(line))
    return format_source(src) if src else None


def _raise_for(outcome: dict[str, Any], line_map: dict[int, Source],
               path: str, name: str) -> None:
    status = outcome.get("status")
    if status == "ok":
        return
    if status == "rejected":
        err = outcome.get("error", {})
        exc = exception_class(err.get("type", ""))(err.get("message", ""))
        _annotate(exc, err, line_map, path, name)
        raise exc
    if status == "invalid":
        err = outcome.get("error", {})
        exc = InvalidProgramError(
            f"sc-sim refused the program of kernel {name}: {err.get('message', '')}")
        _annotate(exc, err, line_map, path, name)
        raise exc
    if status == "fault":
        f = outcome.get("fault") or {}
        loc = _py_location(line_map, f.get("line"))
        exc = FaultError(f"{f.get('kind', 'fault')}: {f.get('details') or f.get('message', '')}"
                         + (f" (at {loc} in kernel {name})" if loc else ""),
                         kind=f.get("kind", ""), details=f.get("details"))
        exc.add_note(f"sc-sim program: {path}:{f.get('line')}:{f.get('column')}")
        raise exc
    if status in ("mismatch", "expect-failed"):
        what = outcome.get("mismatch") or outcome.get("expect") or {}
        loc = _py_location(line_map, what.get("line"))
        head = (f"sc-sim's lowering of kernel {name} differs from its reference"
                if status == "mismatch" else f"an expectation of kernel {name} failed")
        exc = VerificationError(f"{head}: {what.get('message', what)}" + (f" (at {loc})" if loc else ""))
        exc.add_note(f"sc-sim program: {path}:{what.get('line')}:{what.get('column')}")
        raise exc
    raise ScSimError(f"sc-sim ended with status {status!r}: {outcome}")


def _annotate(exc: BaseException, err: dict[str, Any], line_map: dict[int, Source],
              path: str, name: str) -> None:
    loc = _py_location(line_map, err.get("line"))
    if loc:
        exc.add_note(f"{loc}: in SparseCore kernel {name}")
    for note in err.get("notes") or []:
        exc.add_note(f"note: {note}")
    exc.add_note(f"sc-sim program: {path}:{err.get('line')}:{err.get('column')}")


def _program_dir(opts: Options) -> tuple[str, bool]:
    if opts.out_dir:
        os.makedirs(opts.out_dir, exist_ok=True)
        return opts.out_dir, False
    return tempfile.mkdtemp(prefix="sc_sim_"), os.environ.get("SC_SIM_KEEP") != "1"


def _unique_path(directory: str, name: str) -> str:
    path = os.path.join(directory, f"{name}.yaml")
    k = 1
    while os.path.exists(path):
        k += 1
        path = os.path.join(directory, f"{name}_{k}.yaml")
    return path


def check_unimplemented(prep: Prepared, opts: Options) -> None:
    """A primitive upstream cannot lower: the program ends with an
    `unimplemented` operation, which sc-sim's checker rejects with
    upstream's message (U1) after checking the operations before it."""
    un = prep.info.unimplemented
    if un is None:
        return
    with tempfile.TemporaryDirectory(prefix="sc_sim_") as d:
        path = os.path.join(d, f"{prep.name}.yaml")
        text, line_map = render(prep.info.program)
        with open(path, "w") as f:
            f.write(text)
        outcome, _ = binary.run_json(["check", path])
        if outcome.get("status") == "rejected":
            _raise_for(outcome, line_map, path, prep.name)
    raise UnsupportedError(f"{un} (sc-sim's checker accepted the kernel's "
                           f"`unimplemented` operation: an sc-sim bug)")


def check_only(prep: Prepared, opts: Options) -> None:
    """sc-sim's legality check of the kernel (no inputs needed)."""
    check_unimplemented(prep, opts)
    with tempfile.TemporaryDirectory(prefix="sc_sim_") as d:
        if opts.out_dir:
            os.makedirs(opts.out_dir, exist_ok=True)
            prep.path = prep.path or _unique_path(opts.out_dir, prep.name)
            path = prep.path
        else:
            path = os.path.join(d, f"{prep.name}.yaml")
        text, line_map = render(prep.info.program)
        with open(path, "w") as f:
            f.write(text)
        outcome, _ = binary.run_json(["check", path])
        if outcome.get("status") != "ok":
            _raise_for(outcome, line_map, path, prep.name)


_DEBUG_LINE = re.compile(r"^\[\d+\.\d+\] ")


def _forward_debug_prints(stderr: str) -> None:
    """pl.debug_print's lines (sc-sim writes them to standard error under
    --json, "[C.S] MESSAGE..."), to this process's standard error."""
    for line in (stderr or "").splitlines():
        if _DEBUG_LINE.match(line):
            print(line, file=sys.stderr)


def execute(prep: Prepared, args: Sequence[Any], opts: Options
            ) -> tuple[list[np.ndarray], RunRecord]:
    """Run a prepared kernel on concrete inputs; outputs in order."""
    check_unimplemented(prep, opts)
    info = prep.info
    if len(args) != len(info.inputs):
        raise ValueError(f"kernel {prep.name} takes {len(info.inputs)} inputs, "
                         f"got {len(args)}")
    directory, cleanup = _program_dir(opts)
    try:
        path = prep.path if (prep.path and not cleanup) else \
            _unique_path(directory, prep.name)
        for ref, a in zip(info.inputs, args):
            value = np.asarray(a)
            want = arrays.np_dtype(ref.dtype or "int32")
            if value.shape != ref.shape or value.dtype != want:
                raise ValueError(f"input {ref.name}: {value.dtype}{list(value.shape)}"
                                 f" given, the kernel wants {want}{list(ref.shape)}")
            arrays.set_input(ref, value, directory)
        text, line_map = render(info.program)
        with open(path, "w") as f:
            f.write(text)
        if prep.mosaic is not None:
            from .mosaic import use_module
            use_module(prep.mosaic, path)
        stats_path = os.path.join(directory, f"{os.path.basename(path)}.stats.json")
        out_dir = os.path.join(directory, os.path.basename(path) + ".out")
        flags = ["run", os.path.basename(path), "--stats", os.path.basename(stats_path)]
        if arrays.use_npy():
            flags += arrays.output_flags(os.path.basename(out_dir))
        if opts.trace:
            flags += ["--trace", os.path.abspath(opts.trace)]
        if not opts.verify:
            flags.append("--no-verify")
        if opts.strict_races:
            if not binary.supports_option("--strict-races"):
                raise UnsupportedError(
                    "strict_races=True needs sc-sim's --strict-races (SPEC §10.2), "
                    "which this sc-sim binary does not offer")
            flags.append("--strict-races")
        outcome, stderr = binary.run_json(flags, cwd=directory)
        _forward_debug_prints(stderr)
        _raise_for(outcome, line_map, path, prep.name)
        outs, masks = [], {}
        for ref in info.outputs:
            arr, mask = arrays.read_output(ref, outcome, out_dir)
            outs.append(arr)
            if mask.any():
                masks[ref.name] = mask
        stats = None
        if os.path.exists(stats_path):
            with open(stats_path) as f:
                stats = json.load(f)
            if isinstance(opts.stats, str):
                shutil.copyfile(stats_path, opts.stats)
        warns = list(outcome.get("warnings") or [])
        for w in warns:
            loc = _py_location(line_map, w.get("line"))
            warnings.warn(ScSimWarning(
                f"{loc or prep.name}: {w.get('kind', 'warning')}: {w.get('message', '')}"),
                stacklevel=4)
        for name, mask in masks.items():
            warnings.warn(ScSimWarning(
                f"kernel {prep.name}: {int(mask.sum())} element(s) of output "
                f"{name} are undefined (NaN / the dtype's maximum)"), stacklevel=4)
        cycles = outcome.get("cycles")
        us = stats.get("time_us") if stats else None
        record = RunRecord(prep.name, opts.chip, cycles, us,
                           stats, warns, masks,
                           path if not cleanup else None)
        if opts.profile and stats:
            record.profile = python_profile(stats, line_map)
        return outs, record
    finally:
        if cleanup:
            shutil.rmtree(directory, ignore_errors=True)


def sc_verdict(prep: Prepared, opts: Options) -> BaseException | None:
    """sc-sim's verdict: None if its checker accepts, else the exception
    the front end raises for its rejection."""
    try:
        check_only(prep, opts)
    except UnsupportedError as exc:
        if getattr(exc, "upstream", False):
            return exc
        raise  # not modelled: sc-sim has no verdict to compare
    except (InvalidProgramError, FaultError, VerificationError):
        raise
    except Exception as exc:
        return exc
    return None


def judged(prep: Prepared, params: dict[str, Any], avals: list[Any],
           opts: Options) -> None:
    """Check the kernel with sc-sim and, if asked, with JAX's lowering;
    a disagreement warns (an sc-sim bug) and JAX's verdict is raised."""
    mine = sc_verdict(prep, opts)
    if not opts.jax_check:
        if mine is not None:
            raise mine
        return
    from .verdict import agrees, verdict_for_call
    jv = verdict_for_call(params, avals)
    if agrees(mine, jv):
        if mine is not None:
            raise mine
        return
    theirs = "accepted" if jv.accepted else f"{jv.type}: {jv.message}"
    ours = "accepted" if mine is None else f"{type(mine).__name__}: {mine}"
    warnings.warn(DisagreementWarning(
        f"sc-sim bug: kernel {prep.name}: JAX's lowering says {theirs!r}, "
        f"sc-sim's checker says {ours!r}; JAX's verdict stands"), stacklevel=4)
    if not jv.accepted:
        assert jv.exception is not None
        raise jv.exception
    raise ScSimError(f"sc-sim rejects kernel {prep.name}, which JAX accepts "
                     f"(an sc-sim bug): {ours}")
