"""The front end: `interpret`, `run`, `to_program`.

A SparseCore kernel call (`pl.kernel` with a `plsc` mesh binds the
`mpmd_map` primitive) is translated to an sc-sim program, which the sc-sim
binary checks, lowers, runs and verifies; its final HBM contents come back
as the kernel's outputs.  Inside `interpret()`:

* eager calls go through the primitive's impl, replaced for the duration;
* calls under `jax.jit` go through a CPU lowering of `mpmd_map`, replaced
  for the duration, that translates and checks the kernel when it is
  lowered (so rejections surface where JAX's own lowering raises them) and
  runs it through a host callback.
"""
from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, Callable, Sequence

import jax
import numpy as np
from jax._src.interpreters import mlir
from jax._src.pallas import mpmd

from . import chips
from .runner import (DisagreementWarning, Options, Prepared, RunRecord,  # noqa: F401
                     ScSimWarning, abstract_mesh, check_only, chip_scope, execute,
                     judged, prepare, sc_verdict)


# ---------------------------------------------------------------------------
# The interpret context.

class Session:
    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.records: list[RunRecord] = []
        self.pending: BaseException | None = None
        self.programs: list[str] = []

    def call(self, params: dict[str, Any], args: Sequence[Any]) -> list[np.ndarray]:
        prep = prepare(params, self.opts.chip, len(args))
        judged(prep, params, [jax.typeof(a) for a in args], self.opts)
        if self.opts.lowering == "jax":
            from .mosaic import module_for_call
            prep.mosaic = module_for_call(params, [jax.typeof(a) for a in args])
        outs, rec = execute(prep, args, self.opts)
        self.records.append(rec)
        return outs


_local = threading.local()
_install_lock = threading.Lock()
_installed = 0
_saved: dict[str, Any] = {}


def current_session() -> Session | None:
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def _impl(*args: Any, **params: Any) -> Any:
    session = current_session()
    if session is None:
        return _saved["impl"](*args, **params)
    outs = session.call(params, [np.asarray(a) for a in args])
    return [jax.numpy.asarray(o) for o in outs]


def _cpu_lowering(ctx: Any, *in_nodes: Any, **params: Any) -> Any:
    session = current_session()
    if session is None:
        return _saved["lowering"](ctx, *in_nodes, **params)
    prep = prepare(params, session.opts.chip, len(in_nodes))
    judged(prep, params, list(ctx.avals_in), session.opts)
    opts = session.opts
    if opts.lowering == "jax":
        from .mosaic import module_for_call
        prep.mosaic = module_for_call(params, list(ctx.avals_in))
    out_avals = params["out_avals"]

    def host(*arrays_in: Any) -> list[np.ndarray]:
        try:
            outs, rec = execute(prep, [np.asarray(a) for a in arrays_in], opts)
        except BaseException as exc:  # surfaced by the session, see __exit__
            session.pending = exc
            raise
        session.records.append(rec)
        return outs

    def fn(*xs: Any) -> Any:
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in out_avals]
        return jax.pure_callback(host, shapes, *xs)

    return mlir.lower_fun(fn, multiple_results=True)(ctx, *in_nodes)


def _install() -> None:
    global _installed
    with _install_lock:
        if _installed == 0:
            p = mpmd.mpmd_map_p
            _saved["impl"] = p.impl
            _saved["lowering"] = mpmd._mpmd_map_lowering
            _saved["had_cpu"] = mlir._platform_specific_lowerings["cpu"].get(p)
            p.def_impl(_impl)
            mlir.register_lowering(p, _cpu_lowering, platform="cpu")
            jax.clear_caches()
        _installed += 1


def _uninstall() -> None:
    global _installed
    with _install_lock:
        _installed -= 1
        if _installed == 0:
            p = mpmd.mpmd_map_p
            p.def_impl(_saved["impl"])
            lowerings = mlir._platform_specific_lowerings["cpu"]
            if _saved["had_cpu"] is None:
                lowerings.pop(p, None)
            else:
                lowerings[p] = _saved["had_cpu"]
            jax.clear_caches()


class interpret(contextlib.ContextDecorator):
    """Run every SparseCore kernel called inside on sc-sim.

    Usable as `with sc_sim.interpret(chip="tpu7x"):` or as a decorator.
    """

    def __init__(self, chip: str = "tpu7x", *, trace: str | None = None,
                 stats: bool | str = False, strict_races: bool = False,
                 verify: bool = True, out_dir: str | None = None,
                 jax_check: bool = True, profile: bool = False, lowering: str | None = None) -> None:
        chips.resolve(chip)
        if lowering is None:  # SC_SIM_LOWERING=jax runs a whole suite on JAX's modules
            lowering = os.environ.get("SC_SIM_LOWERING", "sc-sim")
        if lowering not in ("sc-sim", "jax"):
            raise ValueError(f"lowering={lowering!r}: 'sc-sim' (sc-sim's own) or "
                             f"'jax' (JAX's Mosaic module)")
        self.opts = Options(chip, trace, stats, strict_races, verify, out_dir,
                            jax_check, profile, lowering)
        self._scopes: list[Any] = []

    def __enter__(self) -> Session:
        session = Session(self.opts)
        scope = chip_scope(self.opts.chip)
        scope.__enter__()
        self._scopes.append((scope, session))
        if not hasattr(_local, "stack"):
            _local.stack = []
        _local.stack.append(session)
        _install()
        return session

    def __exit__(self, et: Any, ev: Any, tb: Any) -> bool:
        scope, session = self._scopes.pop()
        _local.stack.pop()
        _uninstall()
        scope.__exit__(et, ev, tb)
        if ev is not None and session.pending is not None and ev is not session.pending:
            pending, session.pending = session.pending, None
            raise pending from None
        return False


def run(fn: Callable[..., Any], *args: Any, chip: str = "tpu7x",
        trace: str | None = None, stats: bool | str = False,
        strict_races: bool = False, verify: bool = True,
        jax_check: bool = True, profile: bool = False, lowering: str | None = None) -> tuple[Any, RunRecord]:
    """Call `fn(*args)` with its SparseCore kernels on sc-sim: its outputs
    and the record of the (last) kernel run (profile=True: with the cycles
    of each of the kernel's Python lines, `record.profile` and
    `record.profile_table()`)."""
    with interpret(chip, trace=trace, stats=stats, strict_races=strict_races,
                   verify=verify, jax_check=jax_check, profile=profile, lowering=lowering) as session:
        out = fn(*args)
        out = jax.block_until_ready(out)
    if not session.records:
        raise ValueError("the function called no SparseCore kernel (a pl.kernel "
                         "with a plsc.VectorSubcoreMesh or ScalarSubcoreMesh)")
    return out, session.records[-1]


def to_program(fn: Callable[..., Any], *args: Any, chip: str = "tpu7x",
               out_dir: str) -> str | list[str]:
    """Write the sc-sim program of every kernel call of `fn(*args)` to
    `out_dir` (inputs beside it); the program's path (a list if several)."""
    with interpret(chip, out_dir=out_dir) as session:
        jax.block_until_ready(fn(*args))
    paths = [r.program for r in session.records if r.program]
    if not paths:
        raise ValueError("the function called no SparseCore kernel")
    return paths[0] if len(paths) == 1 else paths
