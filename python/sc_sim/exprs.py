"""Value expressions of the program format, written from jaxpr atoms."""
from __future__ import annotations

from typing import Any

import numpy as np

# Names the format gives a meaning; refs and values must not take them.
RESERVED = {"core", "subcore", "iota", "full", "where", "min", "max", "astype",
            "true", "false", "and", "or", "not", "pl", "plsc", "int32", "uint32",
            "float32", "bfloat16", "float16", "int16", "uint16", "int8", "uint8",
            "bool"}


class NotExpressible(Exception):
    """A value the format's expressions cannot write."""


class Lit(str):
    """The text of a literal, with the literal's dtype (literals are weakly
    typed in the format; `strong` writes one with its dtype)."""
    dtype: np.dtype

    def __new__(cls, text: str, dtype: Any) -> "Lit":
        obj = super().__new__(cls, text)
        obj.dtype = np.dtype(dtype)
        return obj


def _dtype_name(dtype: Any) -> str:
    return np.dtype(dtype).name


def _scalar_text(x: Any, dtype: np.dtype) -> str:
    if dtype == np.bool_:
        return "true" if bool(x) else "false"
    if np.issubdtype(dtype, np.integer):
        return str(int(x))
    f = float(x)
    if np.isnan(f) or np.isinf(f):
        raise NotExpressible(f"a non-finite float literal {f}")
    return repr(f)


def literal(val: Any, aval: Any) -> str:
    dtype = np.dtype(aval.dtype)
    arr = np.asarray(val)
    if arr.ndim == 0:
        return Lit(_scalar_text(arr, dtype), dtype)
    flat = arr.reshape(-1)
    if arr.ndim == 1:
        text = "[" + ", ".join(_scalar_text(v, dtype) for v in flat) + "]"
    elif np.all(flat == flat[0]):
        dims = ", ".join(str(d) for d in arr.shape)
        text = f"full([{dims}], {_scalar_text(flat[0], dtype)})"
    else:
        raise NotExpressible(f"a constant array of shape {arr.shape}")
    if dtype not in (np.dtype(np.int32), np.dtype(np.float32)):
        text = f"astype({text}, {_dtype_name(dtype)})"
    return text


def strong(v: str) -> str:
    """A literal written with its own dtype (where it stands alone)."""
    if isinstance(v, Lit):
        return f"astype({v}, {_dtype_name(v.dtype)})"
    return v


carry_init = strong


def is_int_literal(v: Any) -> bool:
    return isinstance(v, Lit) and np.issubdtype(v.dtype, np.integer)


def range_item(v: Any) -> Any:
    return int(v) if is_int_literal(v) else str(v)


def _p(v: str) -> str:
    return f"({v})" if v.startswith("-") else v


_OPS = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^",
        "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
        "shift_left": "<<"}
BINARY = set(_OPS) | {"max", "min", "div", "rem", "shift_right_arithmetic",
                      "shift_right_logical"}
UNARY = {"neg", "not", "abs"}


def binary(prim: str, a: str, b: str, a_aval: Any, b_aval: Any,
           out_aval: Any) -> str:
    if isinstance(a, Lit) and isinstance(b, Lit):
        a = strong(a)
    dt = np.dtype(a_aval.dtype)
    integer = np.issubdtype(dt, np.integer)
    a, b = _p(a), _p(b)
    if prim in _OPS:
        return f"{a} {_OPS[prim]} {b}"
    if prim in ("max", "min"):
        return f"{prim}({a}, {b})"
    if prim == "div":
        if not integer:
            return f"{a} / {b}"
        return f"where(({a} % {b} != 0) & (({a} < 0) != ({b} < 0)), {a} // {b} + 1, {a} // {b})"
    if prim == "rem":
        if not integer:
            raise NotExpressible("a float remainder")
        div = binary("div", a, b, a_aval, b_aval, out_aval)
        return f"{a} - {b} * ({div})"
    if prim == "shift_right_arithmetic":
        if np.issubdtype(dt, np.signedinteger):
            return f"{a} >> {b}"
        signed = _dtype_name(dt).replace("uint", "int")
        return f"astype(astype({a}, {signed}) >> astype({b}, {signed}), {_dtype_name(dt)})"
    if prim == "shift_right_logical":
        if np.issubdtype(dt, np.unsignedinteger):
            return f"{a} >> {b}"
        unsigned = "u" + _dtype_name(dt)
        return (f"astype(astype({a}, {unsigned}) >> astype({b}, {unsigned}), "
                f"{_dtype_name(dt)})")
    raise NotExpressible(prim)


def unary(prim: str, a: str, aval: Any) -> str:
    dt = np.dtype(aval.dtype)
    a = _p(strong(a) if isinstance(a, Lit) else a)
    if prim == "neg":
        return f"-{a}"
    if prim == "not":
        return f"not {a}" if dt == np.bool_ else f"~{a}"
    if prim == "abs":
        return f"where({a} < 0, -{a}, {a})"
    raise NotExpressible(prim)


def typed(text: str, out_aval: Any, v: str, v_aval: Any) -> str:
    dt = np.dtype(out_aval.dtype)
    if isinstance(v, Lit) and dt not in (np.dtype(np.int32), np.dtype(np.float32)):
        return f"astype({text}, {_dtype_name(dt)})"
    return text


def inline_expression(t: Any, jaxpr: Any, src: Any) -> str:
    """One expression for a pure jaxpr with one output (a while_loop's
    condition), written over the environment's names."""
    local: dict[Any, str] = {}

    def read(atom: Any) -> str:
        from jax._src import core as jax_core
        if isinstance(atom, jax_core.Literal):
            return literal(atom.val, atom.aval)
        if atom in local:
            return local[atom]
        return t.val(atom)

    for e in jaxpr.eqns:
        name = e.primitive.name
        if name in BINARY:
            a, b = e.invars
            text = binary(name, read(a), read(b), a.aval, b.aval, e.outvars[0].aval)
        elif name in UNARY:
            text = unary(name, read(e.invars[0]), e.invars[0].aval)
        elif name == "convert_element_type":
            text = f"astype({read(e.invars[0])}, {_dtype_name(e.params['new_dtype'])})"
        else:
            from .errors import UnsupportedError
            from .translate import format_source
            raise UnsupportedError(
                f"while_loop condition using {name} at {format_source(src)}: "
                "only arithmetic and comparisons are translated there")
        local[e.outvars[0]] = f"({text})"
    return read(jaxpr.outvars[0])
