"""Translation of the scans over a vector's lanes: plsc.cumsum, plsc.cummax,
plsc.cummin (the masked_cum* primitives), jnp.cumsum / lax.cumsum (the
cumsum primitive), the sorts, plsc.sort_key_val (masked_sort) and
plsc.scan_count (unique), plsc.pack and plsc.unpack; the tuple-valued
ones are bound by a let of several names."""
from __future__ import annotations

import numpy as np

from .errors import UnsupportedError
from .program import Op
from .translate import Translator, format_source, handler

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


@handler("sort")
def _sort(t: Translator, eqn, out, src) -> None:
    """lax.sort / jnp.sort; with value operands (lax.sort([k, v]),
    lax.sort_key_val) a let of one name per operand."""
    if len(eqn.invars) > 3:
        raise UnsupportedError(
            f"sort with {len(eqn.invars) - 1} value operand(s) at {format_source(src)}: "
            "sc-sim's format sorts the keys with at most two value operands")
    dim = eqn.params["dimension"]
    if len(eqn.invars) == 1:
        (x,) = eqn.invars
        t.let(eqn, f"lax.sort({t.val(x)}, dimension={dim})", out, src)
        return
    ops = ", ".join(t.val(v) for v in eqn.invars)
    names = [t.fresh() for _ in eqn.outvars]
    text = f"lax.sort([{ops}], dimension={dim}, num_keys={eqn.params['num_keys']})"
    out.append(Op("let", [("name", ", ".join(names)), ("value", text)], src))
    for var, name in zip(eqn.outvars, names):
        t.bind(var, name)


@handler("all_reduce_population_count", "all_reduce_ffs")
def _all_reduce(t: Translator, eqn, out, src) -> None:
    (x,) = eqn.invars
    r = eqn.params.get("reduce", 1)
    kw = f", reduce={r}" if r != 1 else ""
    t.let(eqn, f"plsc.{eqn.primitive.name}({t.val(x)}{kw})", out, src)


@handler("masked_sort")
def _masked_sort(t: Translator, eqn, out, src) -> None:
    """plsc.sort_key_val: keys, values and, with a mask, the output mask,
    bound by one let of several names (Python's tuple unpacking)."""
    keys, values, *mask = eqn.invars
    kw = f", mask={t.val(mask[0])}" if mask else ""
    if eqn.params.get("descending"):
        kw += ", descending=True"
    names = [t.fresh() for _ in eqn.outvars]
    text = f"plsc.sort_key_val({t.val(keys)}, {t.val(values)}{kw})"
    out.append(Op("let", [("name", ", ".join(names)), ("value", text)], src))
    for var, name in zip(eqn.outvars, names):
        t.bind(var, name)


@handler("unique")
def _scan_count(t: Translator, eqn, out, src) -> None:
    """plsc.scan_count (primitive "unique"): the counts and the mask of last
    occurrences; without a mask, plsc.scan_count binds lax.full(True)."""
    x, mask = eqn.invars
    names = [t.fresh() for _ in eqn.outvars]
    text = f"plsc.scan_count({t.val(x)}, mask={t.val(mask)})"
    out.append(Op("let", [("name", ", ".join(names)), ("value", text)], src))
    for var, name in zip(eqn.outvars, names):
        t.bind(var, name)


def _pack_kw(eqn) -> str:
    """format= and preferred_element_type= as the format writes them."""
    kw = f", format=plsc.PackFormat.{eqn.params['format'].name}"
    pet = eqn.params.get("preferred_element_type")
    if pet is not None:
        kw += f", preferred_element_type={np.dtype(pet).name}"
    return kw


@handler("pack")
def _pack(t: Translator, eqn, out, src) -> None:
    a, b = eqn.invars
    t.let(eqn, f"plsc.pack({t.val(a)}, {t.val(b)}{_pack_kw(eqn)})", out, src)


@handler("unpack")
def _unpack(t: Translator, eqn, out, src) -> None:
    """plsc.unpack: the two halves, bound by a let of two names."""
    (ab,) = eqn.invars
    names = [t.fresh() for _ in eqn.outvars]
    out.append(Op("let", [("name", ", ".join(names)), ("value", f"plsc.unpack({t.val(ab)}{_pack_kw(eqn)})")], src))
    for var, name in zip(eqn.outvars, names):
        t.bind(var, name)
