"""Translation of the scans over a vector's lanes: plsc.cumsum, plsc.cummax,
plsc.cummin (the masked_cum* primitives) and jnp.cumsum / lax.cumsum (the
cumsum primitive)."""
from __future__ import annotations

from .translate import Translator, handler

_MASKED = {"masked_cumsum": "plsc.cumsum", "masked_cummax": "plsc.cummax",
           "masked_cummin": "plsc.cummin"}


@handler(*_MASKED)
def _masked_scan(t: Translator, eqn, out, src) -> None:
    x, mask = eqn.invars
    t.let(eqn, f"{_MASKED[eqn.primitive.name]}({t.val(x)}, mask={t.val(mask)})", out, src)


@handler("cumsum")
def _cumsum(t: Translator, eqn, out, src) -> None:
    (x,) = eqn.invars
    axis = eqn.params["axis"]
    rev = ", reverse=True" if eqn.params.get("reverse") else ""
    t.let(eqn, f"lax.cumsum({t.val(x)}, axis={axis}{rev})", out, src)
