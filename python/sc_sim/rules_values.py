"""Translation of value primitives: arithmetic, conversions, iota,
broadcasts, axis indices, inlined calls."""
from __future__ import annotations

from typing import Any

import numpy as np
from jax._src import core as jax_core

from . import exprs
from .errors import UnsupportedError
from .translate import RefVal, Translator, format_source, handler

_dtype_name = exprs._dtype_name


@handler(*exprs.BINARY)
def _binary(t: Translator, eqn, out, src) -> None:
    a, b = eqn.invars
    text = exprs.binary(eqn.primitive.name, t.val(a), t.val(b), a.aval, b.aval,
                        eqn.outvars[0].aval)
    t.let(eqn, text, out, src)


@handler(*exprs.UNARY)
def _unary(t: Translator, eqn, out, src) -> None:
    (a,) = eqn.invars
    t.let(eqn, exprs.unary(eqn.primitive.name, t.val(a), a.aval), out, src)


@handler("clamp")
def _clamp(t: Translator, eqn, out, src) -> None:
    lo, x, hi = (t.val(v) for v in eqn.invars)
    t.let(eqn, f"min(max({x}, {lo}), {hi})", out, src)


@handler("select_n")
def _select_n(t: Translator, eqn, out, src) -> None:
    pred, *cases = eqn.invars
    p = t.val(pred)
    vals = [t.val(c) for c in cases]
    if pred.aval.dtype == np.bool_:
        text = f"where({p}, {vals[1]}, {vals[0]})"
    else:
        text = vals[-1]
        for k in range(len(vals) - 2, -1, -1):
            text = f"where({p} == {k}, {vals[k]}, {text})"
    t.let(eqn, text, out, src)


@handler("convert_element_type")
def _convert(t: Translator, eqn, out, src) -> None:
    (a,) = eqn.invars
    new = np.dtype(eqn.params["new_dtype"])
    if isinstance(a, jax_core.Literal):
        t.let(eqn, exprs.literal(a.val, eqn.outvars[0].aval), out, src)
    elif new == np.dtype(a.aval.dtype):
        t.bind(eqn.outvars[0], t.val(a))
    else:
        t.let(eqn, f"astype({t.val(a)}, {_dtype_name(new)})", out, src)


@handler("broadcast_in_dim")
def _broadcast(t: Translator, eqn, out, src) -> None:
    (a,) = eqn.invars
    shape = tuple(eqn.params["shape"])
    if tuple(a.aval.shape) == shape:
        t.bind(eqn.outvars[0], t.val(a))
        return
    if a.aval.shape != () and int(np.prod(a.aval.shape)) != 1:
        raise UnsupportedError(
            f"broadcast_in_dim from {a.aval.shape} to {shape} at "
            f"{format_source(src)}: only scalars broadcast in sc-sim's format")
    v = t.val(a)
    if a.aval.shape != ():
        raise UnsupportedError(f"broadcast of a {a.aval.shape} value")
    dims = ", ".join(str(d) for d in shape)
    t.let(eqn, exprs.typed(f"full([{dims}], {v})", eqn.outvars[0].aval, v,
                            a.aval), out, src)


@handler("iota")
def _iota(t: Translator, eqn, out, src) -> None:
    shape = tuple(eqn.params["shape"])
    if len(shape) != 1:
        raise UnsupportedError(f"iota of shape {shape} at {format_source(src)}")
    text = f"iota({shape[0]})"
    dt = np.dtype(eqn.params["dtype"])
    if dt != np.int32:
        text = f"astype({text}, {_dtype_name(dt)})"
    t.let(eqn, text, out, src)


@handler("axis_index")
def _axis_index(t: Translator, eqn, out, src) -> None:
    axis = eqn.params["axis_name"]
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise UnsupportedError(f"axis_index over {axis}")
        axis = axis[0]
    if axis not in t.axes:
        raise UnsupportedError(f"axis_index of unknown axis {axis!r}")
    t.bind(eqn.outvars[0], t.axes[axis])


@handler("multiple_of", "copy", "copy_p", "optimization_barrier", "reshard",
         "sharding_constraint", "mesh_cast")
def _alias(t: Translator, eqn, out, src) -> None:
    for o, i in zip(eqn.outvars, eqn.invars):
        t.bind(o, t.read(i))


@handler("squeeze", "reshape")
def _reshape(t: Translator, eqn, out, src) -> None:
    a = eqn.invars[0]
    oshape = tuple(eqn.outvars[0].aval.shape)
    if tuple(a.aval.shape) == oshape:
        t.bind(eqn.outvars[0], t.val(a))
    elif oshape == () and int(np.prod(a.aval.shape)) == 1:
        v = t.val(a)
        if a in t.elements:  # the value of a single-element slice: a scalar
            t.bind(eqn.outvars[0], v)
            return
        idx = "".join("[0]" for _ in a.aval.shape)
        t.let(eqn, f"{v}{idx}", out, src)
    else:
        raise UnsupportedError(
            f"{eqn.primitive.name} from {a.aval.shape} to {oshape} at "
            f"{format_source(src)}")


@handler("pjit", "jit", "closed_call", "core_call", "remat", "checkpoint",
         "custom_jvp_call", "custom_vjp_call")
def _inline(t: Translator, eqn, out, src) -> None:
    p = eqn.params
    closed = p.get("jaxpr") or p.get("call_jaxpr") or p.get("fun_jaxpr")
    jaxpr = getattr(closed, "jaxpr", closed)
    consts = [exprs.literal(c, jax_core.get_aval(c)) for c in
              getattr(closed, "consts", ())]
    res = t.sub(jaxpr, consts, [t.read(v) for v in eqn.invars], out)
    for o, r in zip(eqn.outvars, res):
        t.bind(o, r)



@handler("slice")
def _slice(t: Translator, eqn, out, src) -> None:
    """`v[k]` on a 1-D vector: a size-1 static slice, squeezed next."""
    (a,) = eqn.invars
    starts, limits = eqn.params["start_indices"], eqn.params["limit_indices"]
    strides = eqn.params.get("strides") or (1,)
    if len(starts) != 1 or limits[0] - starts[0] != 1 or tuple(strides) != (1,):
        raise UnsupportedError(
            f"slice {starts}:{limits} of a {a.aval.shape} value at "
            f"{format_source(src)}: only single elements v[k] are translated")
    t.let(eqn, f"{t.val(a)}[{int(starts[0])}]", out, src)
    t.elements.add(eqn.outvars[0])
