"""Translation of memory primitives: ref accesses, plsc masked and
indexed accesses, atomics, barriers, semaphores, DMAs, run_scoped."""
from __future__ import annotations

from typing import Any, Sequence

from jax._src import core as jax_core
from jax._src.pallas import core as pallas_core
from jax._src.pallas.mosaic import sc_core
from jax._src.pallas.mosaic import sc_primitives
from jax._src.state import primitives as state_primitives

from .errors import UnsupportedError
from .program import Op
from .translate import RefVal, Translator, format_source, handler


# -- memory ------------------------------------------------------------------

@handler("get")
def _get(t: Translator, eqn, out, src) -> None:
    ref, *flat = eqn.invars
    transforms = eqn.params["tree"].unflatten(flat)
    text = t.transforms_text(t.ref(ref).text, transforms, final=True)
    name = t.fresh()
    out.append(Op("get", [("ref", text), ("out", name)], src))
    t.bind(eqn.outvars[0], name)


@handler("swap")
def _swap(t: Translator, eqn, out, src) -> None:
    if eqn.primitive is state_primitives.swap_p:
        ref, value, *flat = eqn.invars
        transforms = eqn.params["tree"].unflatten(flat)
        text = t.transforms_text(t.ref(ref).text, transforms, final=True)
        if isinstance(eqn.outvars[0], jax_core.DropVar) or \
                eqn.outvars[0] not in t.used:
            out.append(Op("set", [("ref", text), ("value", t.sval(value))], src))
        else:
            name = t.fresh()
            out.append(Op("swap", [("ref", text), ("value", t.sval(value)),
                                   ("out", name)], src))
            t.bind(eqn.outvars[0], name)
        return
    assert eqn.primitive is sc_primitives.swap_p
    has_mask, add = eqn.params["has_mask"], eqn.params["add"]
    ref, value, *rest = eqn.invars
    mask = rest.pop() if has_mask else None
    transforms = eqn.params["tree"].unflatten(rest)
    text = t.transforms_text(t.ref(ref).text, transforms, final=True)
    fields = [("ref", text), ("value", t.sval(value))]
    if mask is not None:
        fields.append(("mask", t.sval(mask)))
    kind = {(False, True): "store_compressed", (True, False): "addupdate",
            (True, True): "addupdate_compressed"}.get((add, has_mask))
    if kind is None:
        raise UnsupportedError("an unmasked non-add plsc swap")
    out.append(Op(kind, fields, src))


@handler("load")
def _load(t: Translator, eqn, out, src) -> None:
    has_mask = eqn.params["has_mask"]
    ref, *rest = eqn.invars
    mask = rest.pop() if has_mask else None
    transforms = eqn.params["tree"].unflatten(rest)
    text = t.transforms_text(t.ref(ref).text, transforms, final=True)
    if mask is None:
        raise UnsupportedError("an unmasked plsc load")
    name = t.fresh()
    out.append(Op("load_expanded", [("ref", text), ("mask", t.sval(mask)),
                                    ("out", name)], src))
    t.bind(eqn.outvars[0], name)


def _ref_with(t: Translator, ref: Any, transforms: Sequence[Any]) -> str:
    return t.transforms_text(t.ref(ref).text, transforms, final=False) \
        if transforms else t.ref(ref).text


@handler("gather")
def _gather(t: Translator, eqn, out, src) -> None:
    if eqn.primitive is not sc_primitives.gather_p:
        raise UnsupportedError("lax.gather (use plsc.load_gather)")
    ref, transforms, indices, mask = eqn.params["tree"].unflatten(eqn.invars)
    fields = [("ref", _ref_with(t, ref, transforms)),
              ("indices", [t.sval(i) for i in indices])]
    if mask is not None:
        fields.append(("mask", t.sval(mask)))
    name = t.fresh()
    fields.append(("out", name))
    out.append(Op("load_gather", fields, src))
    t.bind(eqn.outvars[0], name)


@handler("scatter")
def _scatter(t: Translator, eqn, out, src) -> None:
    if eqn.primitive is not sc_primitives.scatter_p:
        raise UnsupportedError("lax.scatter (use plsc.store_scatter)")
    ref, transforms, indices, x, mask = eqn.params["tree"].unflatten(eqn.invars)
    fields = [("ref", _ref_with(t, ref, transforms)),
              ("indices", [t.sval(i) for i in indices]),
              ("value", t.sval(x))]
    if mask is not None:
        fields.append(("mask", t.sval(mask)))
    kind = "addupdate_scatter" if eqn.params["add"] else "store_scatter"
    out.append(Op(kind, fields, src))


@handler("sc_fetch_and_add")
def _fetch_and_add(t: Translator, eqn, out, src) -> None:
    ref, value, *indices, subcore = eqn.invars
    base = t.ref(ref).text
    text = base + ("[" + ", ".join(t.static_or_val(i) for i in indices) + "]"
                   if indices else "")
    name = t.fresh()
    out.append(Op("fetch_and_add", [("ref", text), ("value", t.sval(value)),
                                    ("subcore", t.val(subcore)), ("out", name)], src))
    t.bind(eqn.outvars[0], name)


@handler("barrier")
def _barrier(t: Translator, eqn, out, src) -> None:
    if eqn.primitive is not sc_primitives.barrier_p:
        raise UnsupportedError("a non-SparseCore barrier")
    out.append(Op("barrier", [], src))


def _sem_text(t: Translator, ref: Any, transforms: Sequence[Any]) -> str:
    return t.transforms_text(t.ref(ref).text, transforms, final=False) \
        if transforms else t.ref(ref).text


@handler("semaphore_signal")
def _sem_signal(t: Translator, eqn, out, src) -> None:
    ref, transforms, inc, device_id, core_index = \
        eqn.params["args_tree"].unflatten(eqn.invars)
    fields = [("sem", _sem_text(t, ref, transforms)), ("inc", t.val(inc))]
    if core_index is not None:
        fields.append(("core", t.val(core_index)))
    if device_id is not None:
        if not isinstance(device_id, dict):
            raise UnsupportedError("semaphore_signal to another device")
        for axis, idx in device_id.items():  # an mpmd_map's other mesh's axes too
            if axis not in t.all_axes:
                raise UnsupportedError(f"semaphore_signal on axis {axis!r}")
            fields.append((t.all_axes[axis], t.val(idx)))
    ms = getattr(t.ref(ref).aval, "memory_space", None)
    if isinstance(ms, pallas_core.CoreMemorySpace) and t.scalar_sub is not None \
            and isinstance(ms.mesh, sc_core.ScalarSubcoreMesh) and t.kernel == "vector_subcore" \
            and not any(k == "subcore" for k, _ in fields):
        # an mpmd_map's scalar subcore's semaphore: on the combined mesh
        # the scalar subcore of a core is its subcore scalar_sub
        fields.append(("subcore", str(t.scalar_sub)))
    out.append(Op("semaphore_signal", fields, src))


@handler("semaphore_wait")
def _sem_wait(t: Translator, eqn, out, src) -> None:
    ref, transforms, value, decrement = \
        eqn.params["args_tree"].unflatten(eqn.invars)
    if decrement is False:
        raise UnsupportedError("semaphore_wait(decrement=False)")
    out.append(Op("semaphore_wait", [("sem", _sem_text(t, ref, transforms)),
                                     ("value", t.sval(value))], src))


def _dma_parts(t: Translator, eqn) -> tuple[str, str, str]:
    parts = eqn.params["tree"].unflatten(eqn.invars)
    src_ref, dst_ref, dst_sem, src_sem, device_id = parts
    if src_sem is not None or device_id is not None:
        raise UnsupportedError("remote DMAs (device_id / a source semaphore)")
    return (t.transformed_ref_text(src_ref), t.transformed_ref_text(dst_ref),
            t.transformed_ref_text(dst_sem))


@handler("dma_start")
def _dma_start(t: Translator, eqn, out, src) -> None:
    s, d, sem = _dma_parts(t, eqn)
    fields: list[tuple[str, Any]] = [("src", s), ("dst", d), ("sem", sem)]
    if eqn.params.get("priority", 0):
        fields.append(("priority", int(eqn.params["priority"])))
    if eqn.params.get("add", False):
        fields.append(("add", True))
    fields.append(("out", t.fresh()))
    out.append(Op("async_copy", fields, src))


@handler("dma_wait")
def _dma_wait(t: Translator, eqn, out, src) -> None:
    s, d, sem = _dma_parts(t, eqn)
    out.append(Op("wait", [("src", s), ("dst", d), ("sem", sem)], src))


@handler("run_scoped")
def _run_scoped(t: Translator, eqn, out, src) -> None:
    jaxpr = eqn.params["jaxpr"]
    consts = [t.read(v) for v in eqn.invars]
    allocs = []
    for k, var in enumerate(jaxpr.invars):
        allocs.append(t.add_ref(f"scoped{len(t.refs)}", var.aval, "scratch"))
    res = t.sub(jaxpr, consts, allocs, out)
    for o, r in zip(eqn.outvars, res):
        t.bind(o, r)
