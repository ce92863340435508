"""Translation of pl.debug_print (debug_print_p) and pl.debug_check
(checkify's check_p) into the format's debug_print and debug_check."""
from __future__ import annotations

import jax
from jax._src.pallas import core as pallas_core

from .errors import UnsupportedError
from .program import Op
from .translate import RefVal, Translator, format_source, handler


@handler("debug_print")
def _debug_print(t: Translator, eqn, out, src) -> None:
    p = eqn.params
    args = []
    for v in eqn.invars:
        r = t.read(v)
        args.append(r.text if isinstance(r, RefVal) else str(r))
    fields: list = [("message", p["fmt"])]
    if args:
        fields.append(("args", args))
    if p.get("ordered"):
        fields.append(("ordered", True))
    out.append(Op("debug_print", fields, src))


@handler("check")
def _check(t: Translator, eqn, out, src) -> None:
    """As Mosaic lowers check_p: nothing unless pl.enable_debug_checks() is
    set; then the check's predicate (checkify's `error happened`) negated."""
    if not eqn.params["debug"]:
        raise UnsupportedError(
            f"a non-debug checkify check at {format_source(src)} (Mosaic "
            "supports only pl.debug_check)")
    if not pallas_core.debug_checks_enabled():
        return
    error = jax.tree.unflatten(eqn.params["err_tree"], eqn.invars)
    [pred] = error._pred.values()
    [exception_tree] = error._metadata.values()
    [payload] = error._payload.values()
    exception = jax.tree.unflatten(exception_tree, payload)
    message = getattr(exception, "fmt_string", None)
    if message is None:
        raise UnsupportedError(f"a check that is not a FailedCheckError at {format_source(src)}")
    out.append(Op("debug_check", [("cond", f"not {t.val(pred)}"), ("message", message)], src))
