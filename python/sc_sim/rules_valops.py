"""Translation of the value operations: reductions, elementwise math, rev,
take_along_axis-like gathers, reshapes, bitcasts and concatenation, into
the format's jnp.sum / jnp.max / jnp.min / jnp.all / jnp.any, jnp.exp /
jnp.abs (jnp.sqrt, lax.rsqrt, jnp.log, jnp.tanh, which sc-sim rejects as
the pinned jax does), jnp.flip, jnp.take_along_axis, jnp.reshape,
plsc.bitcast and jnp.concatenate."""
from __future__ import annotations

import numpy as np

from jax import lax

from . import exprs, rules_memory, rules_values
from .errors import UnsupportedError
from .translate import Translator, format_source, handler

_dtype_name = exprs._dtype_name

_REDUCE = {"reduce_sum": "jnp.sum", "reduce_max": "jnp.max",
           "reduce_min": "jnp.min", "reduce_and": "jnp.all",
           "reduce_or": "jnp.any"}
_MATH = {"exp": "jnp.exp", "abs": "jnp.abs", "sqrt": "jnp.sqrt",
         "rsqrt": "lax.rsqrt", "log": "jnp.log", "tanh": "jnp.tanh"}


@handler(*_REDUCE)
def _reduce(t: Translator, eqn, out, src) -> None:
    (a,) = eqn.invars
    axes = tuple(eqn.params["axes"])
    if axes != tuple(range(len(a.aval.shape))):
        raise UnsupportedError(
            f"{eqn.primitive.name} over axes {axes} of a {a.aval.shape} value at "
            f"{format_source(src)}: the format reduces every axis")
    t.let(eqn, f"{_REDUCE[eqn.primitive.name]}({t.val(a)})", out, src)


@handler(*_MATH)
def _math(t: Translator, eqn, out, src) -> None:
    (a,) = eqn.invars
    t.let(eqn, f"{_MATH[eqn.primitive.name]}({t.val(a)})", out, src)


@handler("rev")
def _rev(t: Translator, eqn, out, src) -> None:
    (a,) = eqn.invars
    dims = tuple(eqn.params["dimensions"])
    if dims != tuple(range(len(a.aval.shape))):
        raise UnsupportedError(
            f"rev over dimensions {dims} at {format_source(src)}: the format "
            "reverses every dimension (jnp.flip)")
    t.let(eqn, f"jnp.flip({t.val(a)})", out, src)


@handler("broadcast_in_dim")
def _broadcast(t: Translator, eqn, out, src) -> None:
    """A trailing unit dimension (jnp's gather indices) is a reshape."""
    (a,) = eqn.invars
    shape = tuple(eqn.params["shape"])
    if a.aval.shape and shape == tuple(a.aval.shape) + (1,):
        dims = ", ".join(str(d) for d in shape)
        t.let(eqn, f"jnp.reshape({t.val(a)}, [{dims}])", out, src)
        return
    rules_values._broadcast(t, eqn, out, src)


@handler("gather")
def _gather(t: Translator, eqn, out, src) -> None:
    """lax.gather of a value; plsc.load_gather's primitive is also named
    gather and stays rules_memory's."""
    if eqn.primitive is not lax.gather_p:
        rules_memory._gather(t, eqn, out, src)
        return
    x, idx = eqn.invars
    dn = eqn.params["dimension_numbers"]
    n = x.aval.shape
    if (len(n) != 1 or tuple(idx.aval.shape) != (n[0], 1)
            or tuple(dn.collapsed_slice_dims) != (0,)
            or tuple(dn.start_index_map) != (0,) or tuple(dn.offset_dims)
            or tuple(eqn.params["slice_sizes"]) != (1,)):
        raise UnsupportedError(
            f"gather at {format_source(src)}: only take_along_axis-like "
            "gathers of a 1-D vector")
    t.let(eqn, f"jnp.take_along_axis({t.val(x)}, jnp.reshape({t.val(idx)}, "
               f"[{n[0]}]))", out, src)


@handler("squeeze", "reshape")
def _reshape(t: Translator, eqn, out, src) -> None:
    a = eqn.invars[0]
    oshape = tuple(eqn.outvars[0].aval.shape)
    if (tuple(a.aval.shape) == oshape or oshape == () or a.aval.shape == ()
            or eqn.params.get("dimensions") is not None):
        rules_values._reshape(t, eqn, out, src)
        return
    dims = ", ".join(str(d) for d in oshape)
    t.let(eqn, f"jnp.reshape({t.val(a)}, [{dims}])", out, src)


@handler("bitcast", "bitcast_convert_type")
def _bitcast(t: Translator, eqn, out, src) -> None:
    (a,) = eqn.invars
    new = np.dtype(eqn.params.get("dtype", eqn.params.get("new_dtype")))
    if (eqn.primitive.name == "bitcast_convert_type"
            and new.itemsize != np.dtype(a.aval.dtype).itemsize):
        raise UnsupportedError(
            f"lax.bitcast_convert_type between widths at {format_source(src)}: "
            "use plsc.bitcast")
    t.let(eqn, f"plsc.bitcast({t.val(a)}, {_dtype_name(new)})", out, src)


@handler("slice")
def _slice(t: Translator, eqn, out, src) -> None:
    """x[a:b] along dimension 0; single elements stay v[k]."""
    (a,) = eqn.invars
    shape = tuple(a.aval.shape)
    starts = tuple(int(s) for s in eqn.params["start_indices"])
    limits = tuple(int(s) for s in eqn.params["limit_indices"])
    strides = eqn.params.get("strides")
    if len(shape) == 1 and limits[0] - starts[0] == 1:
        rules_values._slice(t, eqn, out, src)
        return
    if ((strides is not None and any(s != 1 for s in strides))
            or starts[1:] != (0,) * (len(shape) - 1) or limits[1:] != shape[1:]):
        raise UnsupportedError(
            f"slice {starts}:{limits} of a {shape} value at {format_source(src)}: "
            "the format slices dimension 0 with stride 1 (lax.slice_in_dim)")
    t.let(eqn, f"lax.slice_in_dim({t.val(a)}, {starts[0]}, {limits[0]})", out, src)


@handler("split")
def _split(t: Translator, eqn, out, src) -> None:
    """jnp.split: one lax.slice_in_dim per piece."""
    (a,) = eqn.invars
    if eqn.params["axis"] != 0:
        raise UnsupportedError(
            f"split along axis {eqn.params['axis']} at {format_source(src)}: "
            "the format splits dimension 0")
    v = t.val(a)
    start = 0
    for var, size in zip(eqn.outvars, eqn.params["sizes"]):
        size = int(size)
        one = type(eqn)(eqn.invars, [var], eqn.primitive, eqn.params,
                        eqn.effects, eqn.source_info, eqn.ctx)
        t.let(one, f"lax.slice_in_dim({v}, {start}, {start + size})", out, src)
        start += size


@handler("concatenate")
def _concatenate(t: Translator, eqn, out, src) -> None:
    if eqn.params["dimension"] != 0:
        raise UnsupportedError(
            f"concatenate along dimension {eqn.params['dimension']} at "
            f"{format_source(src)}: the format joins along dimension 0")
    items = ", ".join(t.val(v) for v in eqn.invars)
    t.let(eqn, f"jnp.concatenate([{items}])", out, src)
