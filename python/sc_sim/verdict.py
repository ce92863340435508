"""JAX's own verdict on a SparseCore kernel call.

`jax.jit(fn).trace(*args).lower(lowering_platforms=("tpu",))` under the
chip's abstract mesh runs the pinned jax's SparseCore lowering on a CPU
host (no libtpu); the kernel is never compiled, so errors of the Mosaic
compiler inside libtpu stay out of reach.  Not `jax.export`, whose
forward-compatible lowering changes some choices (issue 18).
"""
from __future__ import annotations

import base64
import dataclasses
import json
import re
from typing import Any, Callable

import jax

from .runner import chip_scope


@dataclasses.dataclass
class Verdict:
    """accepted with the Mosaic module(s), or rejected with the exception."""
    accepted: bool
    modules: list[str] = dataclasses.field(default_factory=list)
    exception: BaseException | None = None
    type: str | None = None
    message: str | None = None
    stablehlo: str | None = None

    @property
    def module(self) -> str | None:
        return self.modules[0] if self.modules else None


_CONFIG = re.compile(r'backend_config\s*=\s*"((?:[^"\\]|\\.)*)"')


def _decode(data: bytes) -> str:
    """The text of a serialised Mosaic module (bytecode, mosaic-serde)."""
    from jax._src.interpreters import mlir
    from jax._src.lib import tpu
    from jaxlib.mlir import ir
    from jaxlib.mlir.passmanager import PassManager
    ctx = mlir.make_ir_context()
    tpu.register_dialect(ctx)
    with ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(data)
        PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(
            module.operation)
        return str(module)


def _mosaic_modules(hlo_text: str) -> list[str]:
    """The Mosaic modules of the tpu_custom_call ops of a lowered module:
    the custom call's backend config is JSON whose "custom_call_config"
    holds the serialised (bytecode) Mosaic module, base64-encoded."""
    mods = []
    for m in _CONFIG.finditer(hlo_text):
        raw = re.sub(r"\\([0-9A-Fa-f]{2})", lambda h: chr(int(h.group(1), 16)),
                     m.group(1))  # MLIR string escapes (\22 is ")
        try:
            cfg = json.loads(raw)
        except json.JSONDecodeError:
            continue
        body = cfg.get("custom_call_config", {}).get("body")
        if body is None:
            continue
        data = base64.b64decode(body)
        try:
            mods.append(_decode(data))
        except Exception as exc:  # keep the verdict; say why there is no text
            mods.append(f"<Mosaic bytecode, {len(data)} bytes: {exc}>")
    return mods


def jax_verdict(fn: Callable[..., Any], *args: Any, chip: str = "tpu7x") -> Verdict:
    """Lower `fn(*args)` for TPU with JAX itself and report its verdict.

    `fn` may build its kernel (meshes read the chip) or be a kernel built
    under `sc_sim.chip_scope(chip)`.
    """
    with chip_scope(chip):
        try:
            lowered = jax.jit(fn).trace(*args).lower(lowering_platforms=("tpu",))
        except Exception as exc:  # JAX's rejection, as raised
            cause = exc
            name = type(exc).__name__
            if name == "LoweringException" and exc.__cause__ is not None:
                cause = exc.__cause__
            return Verdict(False, exception=cause, type=type(cause).__name__,
                           message=str(cause))
    text = lowered.as_text()
    return Verdict(True, modules=_mosaic_modules(text), stablehlo=text)


# An MLIR location inside a message (ZV1): the kernel function's name and
# its source position, ("build.<locals>.kernel"("k.py":22:12 to :28)) in a
# Python kernel and ("kernel"("p.yaml":8:5)) in a program.
_MLIR_LOC = re.compile(r'\("[^"()]*"\("[^"]*":\d+:\d+(?: to (?:\d+)?:\d+)?\)\)')


def normalize(message: str | None) -> str:
    """A message as compared with sc-sim's: Mosaic verifier errors end with
    a dump of the MLIR operation (" see current operation: ..."), which
    sc-sim does not print (its notes say what the operation was); an MLIR
    location names the kernel's source, which differs between the program
    and the kernel emitted from it (SPEC §7.3's reprs likewise)."""
    text = (message or "").split("\n see current operation")[0]
    return _MLIR_LOC.sub("(<kernel>(<source>))", text)


def agrees(mine: BaseException | None, jv: Verdict) -> bool:
    """sc-sim's verdict (None: accepted) is JAX's: same acceptance, an
    instance of JAX's exception class, the same (normalised) message."""
    if jv.accepted or mine is None:
        return jv.accepted and mine is None
    assert jv.exception is not None
    return isinstance(mine, type(jv.exception)) and \
        normalize(str(mine)) == normalize(jv.message)


def verdict_for_call(params: dict[str, Any], avals: list[Any]) -> Verdict:
    """JAX's verdict on one `mpmd_map` call (its params and input avals),
    lowered under the abstract mesh already in force."""
    from jax._src.pallas import mpmd

    def call(*xs: Any) -> Any:
        return mpmd.mpmd_map_p.bind(*xs, **params)
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals]
    try:
        lowered = jax.jit(call).trace(*specs).lower(lowering_platforms=("tpu",))
    except Exception as exc:
        cause = exc.__cause__ if type(exc).__name__ == "LoweringException" \
            and exc.__cause__ is not None else exc
        return Verdict(False, exception=cause, type=type(cause).__name__,
                       message=str(cause))
    return Verdict(True, stablehlo=None)
