"""From the jaxpr of a SparseCore kernel (an `mpmd_map` equation) to a
`program.Program`.

Python only translates: every legality rule, the lowering, execution and
verification are sc-sim's.  Each equation of the kernel's jaxpr becomes
one operation of the program format (PROGRAM_FORMAT.md), or raises
`UnsupportedError` naming the primitive and the kernel line.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Sequence

import numpy as np
from jax._src import core as jax_core
from jax._src import source_info_util
from jax._src.pallas.mosaic import core as tpu_core
from jax._src.pallas.mosaic import lowering as tc_lowering
from jax._src.pallas.mosaic import sc_core
from jax._src.pallas.mosaic import sc_lowering  # noqa: F401  (registers rules)
from jax._src.pallas.mosaic import sc_primitives
from jax._src.state import indexing as state_indexing
from jax._src.state import primitives as state_primitives
from jax._src.state import types as state_types
from jax._src import indexing as jax_indexing

from . import exprs
from .errors import UnsupportedError
from .program import Op, Program, Ref, Source

_SPACES = {
    tpu_core.MemorySpace.HBM: "hbm",
    tpu_core.MemorySpace.VMEM: "vmem",
    tpu_core.MemorySpace.VMEM_SHARED: "vmem_shared",
    tpu_core.MemorySpace.SMEM: "smem",
    tpu_core.MemorySpace.SEMAPHORE: "semaphore",
}


def upstream_unimplemented_message(kernel_type: str, primitive: str) -> str:
    """The text of upstream's rejection of a primitive without a rule
    (jax/_src/pallas/mosaic/lowering.py, SPEC §4.L, id U1)."""
    return ("Unimplemented primitive in Pallas TPU lowering for"
            f" {kernel_type}: {primitive}. Please file an issue at"
            " https://github.com/jax-ml/jax/issues/new/choose.")


class UpstreamUnimplemented(Exception):
    """Raised inside the translation at the first primitive upstream cannot
    lower for the kernel's core type; the caller decides (see api)."""

    def __init__(self, primitive: str, kernel_type: str, src: Source | None):
        super().__init__(upstream_unimplemented_message(kernel_type, primitive))
        self.primitive = primitive
        self.kernel_type = kernel_type
        self.src = src


def source_of(eqn: jax_core.JaxprEqn) -> Source | None:
    frame = source_info_util.user_frame(eqn.source_info.traceback)
    if frame is None:
        return None
    return (frame.file_name, frame.start_line, frame.start_column + 1)


def format_source(src: Source | None) -> str:
    return f"{src[0]}:{src[1]}:{src[2]}" if src else "<unknown location>"


@dataclasses.dataclass(frozen=True)
class RefVal:
    """A ref in the environment: a ref expression of the program format."""
    text: str
    aval: Any


@dataclasses.dataclass
class KernelInfo:
    """What the front end needs besides the program."""
    program: Program
    inputs: list[Ref]
    outputs: list[Ref]
    out_avals: list[Any]
    kernel_type: str
    unimplemented: UpstreamUnimplemented | None = None


def _dtype_name(dtype: Any) -> str:
    return np.dtype(dtype).name


def _identifier(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", name) or "ref"
    if not re.match(r"[A-Za-z]", base) or re.fullmatch(r"t\d+", base) \
            or base in exprs.RESERVED:
        base = "r_" + base
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}_{k}"
    taken.add(name)
    return name


class Translator:
    def __init__(self, params: dict[str, Any], chip: str, name: str,
                 src: Source | None = None) -> None:
        self.params = params
        self.src = src
        self.chip = chip
        self.name = name
        meshes = params["meshes"]
        if len(meshes) != 1 or len(params["jaxprs"]) != 1:
            raise UnsupportedError(
                f"kernel {name} at {format_source(src)}: MPMD kernels "
                f"with {len(meshes)} meshes are not modelled by sc-sim")
        self.mesh = meshes[0]
        self.jaxpr: jax_core.Jaxpr = params["jaxprs"][0]
        if isinstance(self.mesh, sc_core.VectorSubcoreMesh):
            self.kernel = "vector_subcore"
            self.axes = {self.mesh.core_axis_name: "core",
                         self.mesh.subcore_axis_name: "subcore"}
            self.mesh_spec = {"cores": self.mesh.num_cores,
                              "subcores": self.mesh.num_subcores}
        elif isinstance(self.mesh, sc_core.ScalarSubcoreMesh):
            self.kernel = "scalar_subcore"
            self.axes = {self.mesh.axis_name: "core"}
            self.mesh_spec = {"cores": self.mesh.num_cores}
        else:
            raise TypeError(
                f"sc_sim runs SparseCore kernels (plsc.VectorSubcoreMesh or "
                f"plsc.ScalarSubcoreMesh); kernel {name} has mesh {self.mesh!r}")
        self.core_type = self.mesh.core_type
        self.kernel_type = str(self.core_type)
        self.rules = tc_lowering.lowering_rules[self.core_type]
        cp = params.get("compiler_params")
        self.layout_passes: bool | None = None
        if cp is not None:
            tpu_cp = cp.get("mosaic_tpu") if isinstance(cp, dict) else cp
            lp = getattr(tpu_cp, "needs_layout_passes", None)
            if lp is not None and lp is not True:
                self.layout_passes = bool(lp)
        if params.get("input_output_aliases"):
            raise UnsupportedError(
                f"kernel {name}: input_output_aliases are not translated yet")
        self.taken: set[str] = set(exprs.RESERVED)
        self.refs: list[Ref] = []
        self.counter = 0
        self.env: dict[Any, Any] = {}
        self.unimplemented: UpstreamUnimplemented | None = None
        self.used: set[Any] = set()
        self.elements: set[Any] = set()  # (1,)-shaped vars holding v[k], a scalar
        self.src_stack: list[Source | None] = []

    # -- names and atoms --------------------------------------------------
    def fresh(self) -> str:
        self.counter += 1
        return f"t{self.counter}"

    def read(self, atom: Any) -> Any:
        if isinstance(atom, jax_core.Literal):
            return exprs.literal(atom.val, atom.aval)
        return self.env[atom]

    def val(self, atom: Any) -> str:
        v = self.read(atom)
        if isinstance(v, RefVal):
            raise UnsupportedError(f"a ref used as a value: {v.text}")
        return v

    def ref(self, atom: Any) -> RefVal:
        v = self.read(atom)
        if not isinstance(v, RefVal):
            raise UnsupportedError(f"a value used as a ref: {v}")
        return v

    def add_ref(self, base: str, aval: Any, role: str) -> RefVal:
        inner = aval.inner_aval
        space = _SPACES.get(aval.memory_space)
        if space is None:
            ms = aval.memory_space
            if ms is None or str(ms) in ("any", "MemorySpace.ANY", "ANY"):
                space = "hbm"
            else:
                raise UnsupportedError(f"memory space {ms} of ref {base}")
        name = _identifier(base, self.taken)
        sem_type = None
        dtype: str | None = None
        if space == "semaphore" or "sem" in str(getattr(inner, "dtype", "")):
            space = "semaphore"
            sem_type = "dma" if "dma" in str(inner.dtype) else "regular"
        else:
            dtype = _dtype_name(inner.dtype)
        ref = Ref(name=name, space=space, shape=tuple(inner.shape), dtype=dtype,
                  sem_type=sem_type, role=role)
        self.refs.append(ref)
        return RefVal(name, aval)

    # -- the kernel ----------------------------------------------------------
    def translate(self, n_inputs: int) -> KernelInfo:
        jaxpr = self.jaxpr
        n_out = len(self.params["out_avals"])
        names = list(getattr(jaxpr.debug_info, "arg_names", None) or [])
        inputs, outputs = [], []
        for k, var in enumerate(jaxpr.invars):
            role = "input" if k < n_inputs else "output" if k < n_inputs + n_out \
                else "scratch"
            base = names[k] if k < len(names) and names[k] else \
                f"{role}{k}"
            base = base.split(".")[-1].replace("[", "_").replace("]", "")
            self.env[var] = self.add_ref(base, var.aval, role)
            ref = self.refs[-1]
            (inputs if role == "input" else outputs if role == "output"
             else []).append(ref)
        for var in jaxpr.constvars:
            raise UnsupportedError(f"kernel {self.name} closes over a constant {var}")
        body: list[Op] = []
        try:
            self.eqns(jaxpr.eqns, body)
        except UpstreamUnimplemented as exc:
            self.unimplemented = exc
        prog = Program(name=self.name, chip=self.chip, kernel=self.kernel,
                       mesh=self.mesh_spec, refs=self.refs, body=body,
                       layout_passes=self.layout_passes)
        return KernelInfo(prog, inputs, outputs, list(self.params["out_avals"]),
                          self.kernel_type, self.unimplemented)

    def eqns(self, eqns: Sequence[jax_core.JaxprEqn], out: list[Op]) -> None:
        for e in eqns:
            for v in e.invars:
                if isinstance(v, jax_core.Var):
                    self.used.add(v)
        for eqn in eqns:
            self.one(eqn, out)

    def one(self, eqn: jax_core.JaxprEqn, out: list[Op]) -> None:
        src = source_of(eqn) or (self.src_stack[-1] if self.src_stack else None)
        self.src_stack.append(src)
        try:
            self._one(eqn, out, src)
        finally:
            self.src_stack.pop()

    def _one(self, eqn: jax_core.JaxprEqn, out: list[Op], src: Source | None) -> None:
        prim = eqn.primitive
        if prim not in self.rules and prim.name not in _INLINE:
            raise UpstreamUnimplemented(prim.name, self.kernel_type, src)
        handler = _HANDLERS.get(prim.name)
        if handler is None:
            raise UnsupportedError(
                f"primitive {prim.name} (lowered by Pallas on SparseCore) is not "
                f"modelled by sc-sim yet; at {format_source(src)} in kernel {self.name}")
        try:
            handler(self, eqn, out, src)
        except (UnsupportedError, UpstreamUnimplemented):
            raise
        except exprs.NotExpressible as exc:
            raise UnsupportedError(
                f"{prim.name} at {format_source(src)} in kernel {self.name}: "
                f"{exc}") from None

    def bind(self, var: Any, value: Any) -> None:
        if not isinstance(var, jax_core.DropVar):
            self.env[var] = value

    def let(self, eqn: jax_core.JaxprEqn, text: str, out: list[Op],
            src: Source | None) -> None:
        var = eqn.outvars[0]
        if isinstance(var, jax_core.DropVar):
            return
        name = self.fresh()
        out.append(Op("let", [("name", name), ("value", text)], src))
        self.env[var] = name

    # -- refs and indexers -------------------------------------------------
    def index_text(self, idx: Any, dim: int) -> str:
        if isinstance(idx, jax_indexing.Slice):
            start, size, stride = idx.start, idx.size, idx.stride
            st = self.static_or_val(start)
            sz = self.static_or_val(size)
            if stride == 1 and st == "0" and sz == str(dim):
                return ":"
            if stride == 1:
                return f"pl.ds({st}, {sz})"
            return f"pl.ds({st}, {sz}, {stride})"
        if isinstance(idx, state_types.TransformedRef):
            return self.transformed_ref_text(idx)
        if isinstance(idx, sc_core.Indices):
            inner = self.index_text(idx.values, dim)
            if idx.ignored_value is None:
                return f"plsc.Indices({inner})"
            return f"plsc.Indices({inner}, ignored_value={idx.ignored_value})"
        if isinstance(idx, (jax_core.Var, jax_core.Literal)):
            v = self.read(idx)
            return v.text if isinstance(v, RefVal) else v
        return self.static_or_val(idx)

    def static_or_val(self, x: Any) -> str:
        if isinstance(x, (int, np.integer)):
            return str(int(x))
        if isinstance(x, (jax_core.Var, jax_core.Literal)):
            v = self.read(x)
            if isinstance(v, RefVal):
                return v.text
            if isinstance(x, jax_core.Literal):
                return str(int(x.val)) if np.ndim(x.val) == 0 else v
            return v
        raise UnsupportedError(f"index {x!r}")

    def transforms_text(self, base: str, transforms: Sequence[Any],
                        final: bool) -> str:
        text = base
        items = list(transforms)
        for k, t in enumerate(items):
            last = final and k == len(items) - 1
            if isinstance(t, state_indexing.NDIndexer):
                parts = [self.index_text(i, d) for i, d in zip(t.indices, t.shape)]
                inner = ", ".join(parts) if parts else "..."
                text += f"[{inner}]" if last else f".at[{inner}]"
            elif isinstance(t, state_types.BitcastTransform):
                text += f".bitcast({_dtype_name(t.dtype)})"
            elif isinstance(t, state_types.ReshapeTransform):
                text += ".reshape(" + ", ".join(str(d) for d in t.shape) + ")"
            else:
                raise UnsupportedError(f"ref transform {type(t).__name__}")
        if final and not (items and isinstance(items[-1], state_indexing.NDIndexer)):
            text += "[...]"
        return text

    def transformed_ref_text(self, tr: Any, final: bool = False) -> str:
        if isinstance(tr, state_types.TransformedRef):
            return self.transforms_text(self.ref(tr.ref).text, tr.transforms, final)
        return self.transforms_text(self.ref(tr).text, (), final) if final \
            else self.ref(tr).text

    # -- nested jaxprs -----------------------------------------------------
    def sub(self, jaxpr: jax_core.Jaxpr, consts: Sequence[Any],
            args: Sequence[Any], out: list[Op]) -> list[Any]:
        """Translate a sub-jaxpr inline; `consts` and `args` are environment
        values (names, literals or RefVal).  Returns its outputs."""
        for var, v in zip(jaxpr.constvars, consts):
            self.env[var] = v
        for var, v in zip(jaxpr.invars, args):
            self.env[var] = v
        self.used.update(v for v in jaxpr.outvars if isinstance(v, jax_core.Var))
        self.eqns(jaxpr.eqns, out)
        return [self.read(v) for v in jaxpr.outvars]


# ---------------------------------------------------------------------------
# Handlers: one per primitive name.

Handler = Callable[[Translator, jax_core.JaxprEqn, list, Any], None]
_HANDLERS: dict[str, Handler] = {}
_INLINE = {"pjit", "jit", "closed_call", "custom_jvp_call", "custom_vjp_call",
           "core_call", "remat", "checkpoint"}


def handler(*names: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for n in names:
            _HANDLERS[n] = fn
        return fn
    return deco


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
            out.append(Op("set", [("ref", text), ("value", t.val(value))], src))
        else:
            name = t.fresh()
            out.append(Op("swap", [("ref", text), ("value", t.val(value)),
                                   ("out", name)], src))
            t.bind(eqn.outvars[0], name)
        return
    assert eqn.primitive is sc_primitives.swap_p
    has_mask, add = eqn.params["has_mask"], eqn.params["add"]
    ref, value, *rest = eqn.invars
    mask = rest.pop() if has_mask else None
    transforms = eqn.params["tree"].unflatten(rest)
    text = t.transforms_text(t.ref(ref).text, transforms, final=True)
    fields = [("ref", text), ("value", t.val(value))]
    if mask is not None:
        fields.append(("mask", t.val(mask)))
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
    out.append(Op("load_expanded", [("ref", text), ("mask", t.val(mask)),
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
              ("indices", [t.val(i) for i in indices])]
    if mask is not None:
        fields.append(("mask", t.val(mask)))
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
              ("indices", [t.val(i) for i in indices]),
              ("value", t.val(x))]
    if mask is not None:
        fields.append(("mask", t.val(mask)))
    kind = "addupdate_scatter" if eqn.params["add"] else "store_scatter"
    out.append(Op(kind, fields, src))


@handler("sc_fetch_and_add")
def _fetch_and_add(t: Translator, eqn, out, src) -> None:
    ref, value, *indices, subcore = eqn.invars
    base = t.ref(ref).text
    text = base + ("[" + ", ".join(t.static_or_val(i) for i in indices) + "]"
                   if indices else "")
    name = t.fresh()
    out.append(Op("fetch_and_add", [("ref", text), ("value", t.val(value)),
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
        for axis, idx in device_id.items():
            if axis not in t.axes:
                raise UnsupportedError(f"semaphore_signal on axis {axis!r}")
            fields.append((t.axes[axis], t.val(idx)))
    out.append(Op("semaphore_signal", fields, src))


@handler("semaphore_wait")
def _sem_wait(t: Translator, eqn, out, src) -> None:
    ref, transforms, value, decrement = \
        eqn.params["args_tree"].unflatten(eqn.invars)
    if decrement is False:
        raise UnsupportedError("semaphore_wait(decrement=False)")
    out.append(Op("semaphore_wait", [("sem", _sem_text(t, ref, transforms)),
                                     ("value", t.val(value))], src))


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


# -- control flow ------------------------------------------------------------

def _counter_pattern(jaxpr: jax_core.Jaxpr, index: int, out_index: int) -> bool:
    """Whether output `out_index` is `invars[index] + 1` (the loop counter
    fori_loop and pl.loop carry)."""
    target = jaxpr.outvars[out_index]
    var = jaxpr.invars[index]
    for e in jaxpr.eqns:
        if e.outvars and e.outvars[0] is target and e.primitive.name == "add":
            a, b = e.invars
            lit = b if isinstance(b, jax_core.Literal) else a
            other = a if lit is b else b
            return other is var and isinstance(lit, jax_core.Literal) \
                and int(lit.val) == 1
    return False


def _carry_fields(t: Translator, names: list[str], inits: list[str]) -> dict:
    return dict(zip(names, inits))


@handler("scan")
def _scan(t: Translator, eqn, out, src) -> None:
    p = eqn.params
    closed = p["jaxpr"]
    jaxpr = closed.jaxpr
    if closed.consts:
        raise UnsupportedError("a scan body with constants")
    nc, ncar, length = p["num_consts"], p["num_carry"], p["length"]
    if p["reverse"]:
        raise UnsupportedError(f"scan(reverse=True) at {format_source(src)}")
    n_xs = len(eqn.invars) - nc - ncar
    ys = eqn.outvars[ncar:]
    if n_xs or any(not isinstance(y, jax_core.DropVar) and y in t.used for y in ys):
        raise UnsupportedError(
            f"scan over xs or stacking ys at {format_source(src)} (only carries "
            "are translated)")
    consts = [t.read(v) for v in eqn.invars[:nc]]
    inits = [t.read(v) for v in eqn.invars[nc:nc + ncar]]
    for var, v in zip(jaxpr.invars[:nc], consts):
        t.env[var] = v
    counter = ncar >= 1 and _counter_pattern(jaxpr, nc, 0)
    if counter:
        var_name = t.fresh()
        start = inits[0]
        t.env[jaxpr.invars[nc]] = var_name
        carry_vars = jaxpr.invars[nc + 1:nc + ncar]
        carry_inits = inits[1:]
        carry_outs = jaxpr.outvars[1:ncar]
        hi: Any = f"{start} + {length}" if not exprs.is_int_literal(start) \
            else int(start) + length
        rng = [exprs.range_item(start), hi, 1]
    else:
        var_name = t.fresh()
        carry_vars = jaxpr.invars[nc:nc + ncar]
        carry_inits = inits
        carry_outs = jaxpr.outvars[:ncar]
        rng = [0, length, 1]
    carry_names = [t.fresh() for _ in carry_vars]
    for var, name in zip(carry_vars, carry_names):
        t.env[var] = name
    body: list[Op] = []
    _use_outs(t, jaxpr)
    t.eqns(jaxpr.eqns, body)
    fields: list[tuple[str, Any]] = [("var", var_name), ("range", rng)]
    if carry_names:
        fields.append(("carry", dict(zip(carry_names,
                                         [exprs.carry_init(v) for v in carry_inits]))))
    fields.append(("body", body))
    if carry_names:
        fields.append(("next", {n: _as_text(t, o) for n, o in
                                zip(carry_names, carry_outs)}))
    out.append(Op("loop", fields, src))
    outs = eqn.outvars[:ncar]
    if counter:
        hi_text = rng[1] if isinstance(rng[1], str) else \
            f"astype({rng[1]}, int32)"
        if not isinstance(outs[0], jax_core.DropVar):
            name = t.fresh()
            out.append(Op("let", [("name", name), ("value", hi_text)], src))
            t.env[outs[0]] = name
        outs = outs[1:]
    for o, name in zip(outs, carry_names):
        t.bind(o, name)


def _use_outs(t: Translator, jaxpr: jax_core.Jaxpr) -> None:
    t.used.update(v for v in jaxpr.outvars if isinstance(v, jax_core.Var))


def _as_text(t: Translator, atom: Any) -> str:
    v = t.read(atom)
    if isinstance(v, RefVal):
        raise UnsupportedError("a loop carrying a ref")
    return v


@handler("while")
def _while(t: Translator, eqn, out, src) -> None:
    p = eqn.params
    cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
    if cj.consts or bj.consts:
        raise UnsupportedError("a while_loop with closed-over constants")
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cconsts = [t.read(v) for v in eqn.invars[:cn]]
    bconsts = [t.read(v) for v in eqn.invars[cn:cn + bn]]
    inits = [t.read(v) for v in eqn.invars[cn + bn:]]
    for var, v in zip(bj.jaxpr.invars[:bn], bconsts):
        t.env[var] = v
    # fori_loop with dynamic bounds: carries (i, upper, *rest), cond i < upper.
    cjx = cj.jaxpr
    if (len(inits) >= 2 and len(cjx.eqns) == 1 and cjx.eqns[0].primitive.name == "lt"
            and cjx.eqns[0].invars[0] is cjx.invars[cn]
            and cjx.eqns[0].invars[1] is cjx.invars[cn + 1]
            and _counter_pattern(bj.jaxpr, bn, 0)
            and bj.jaxpr.outvars[1] is bj.jaxpr.invars[bn + 1]):
        var_name = t.fresh()
        t.env[bj.jaxpr.invars[bn]] = var_name
        t.env[bj.jaxpr.invars[bn + 1]] = inits[1]
        carry_vars = bj.jaxpr.invars[bn + 2:]
        carry_names = [t.fresh() for _ in carry_vars]
        for var, name in zip(carry_vars, carry_names):
            t.env[var] = name
        body: list[Op] = []
        _use_outs(t, bj.jaxpr)
        t.eqns(bj.jaxpr.eqns, body)
        fields: list[tuple[str, Any]] = [
            ("var", var_name),
            ("range", [exprs.range_item(inits[0]), exprs.range_item(inits[1]), 1])]
        if carry_names:
            fields.append(("carry", dict(zip(carry_names, [exprs.carry_init(v)
                                                            for v in inits[2:]]))))
        fields.append(("body", body))
        if carry_names:
            fields.append(("next", {n: _as_text(t, o) for n, o in
                                    zip(carry_names, bj.jaxpr.outvars[2:])}))
        out.append(Op("loop", fields, src))
        outs = eqn.outvars
        for k, o in enumerate(outs[:2]):
            if not isinstance(o, jax_core.DropVar):
                name = t.fresh()
                out.append(Op("let", [("name", name), ("value",
                                     f"max({inits[0]}, {inits[1]})" if k == 0
                                     else inits[1])], src))
                t.env[o] = name
        for o, name in zip(outs[2:], carry_names):
            t.bind(o, name)
        return
    carry_names = [t.fresh() for _ in inits]
    for var, v in zip(cjx.invars[:cn], cconsts):
        t.env[var] = v
    for var, name in zip(cjx.invars[cn:], carry_names):
        t.env[var] = name
    cond = exprs.inline_expression(t, cjx, src)
    for var, name in zip(bj.jaxpr.invars[bn:], carry_names):
        t.env[var] = name
    body = []
    _use_outs(t, bj.jaxpr)
    t.eqns(bj.jaxpr.eqns, body)
    fields = [("carry", dict(zip(carry_names, [exprs.carry_init(v) for v in inits]))),
              ("cond", cond), ("body", body),
              ("next", {n: _as_text(t, o) for n, o in
                        zip(carry_names, bj.jaxpr.outvars)})]
    out.append(Op("while", fields, src))
    for o, name in zip(eqn.outvars, carry_names):
        t.bind(o, name)


@handler("cond")
def _cond(t: Translator, eqn, out, src) -> None:
    branches = eqn.params["branches"]
    index, *ops = eqn.invars
    idx = t.val(index)
    args = [t.read(v) for v in ops]
    results = [t.fresh() for _ in eqn.outvars]

    def branch(k: int) -> list[Op]:
        closed = branches[k]
        if closed.consts:
            raise UnsupportedError("a cond branch with constants")
        body: list[Op] = []
        res = t.sub(closed.jaxpr, [], args, body)
        for name, r in zip(results, res):
            if isinstance(r, RefVal):
                raise UnsupportedError("a cond returning a ref")
            body.append(Op("let", [("name", name), ("value", exprs.carry_init(r))],
                           src))
        return body

    if len(branches) == 1:
        out.extend(branch(0))
    elif len(branches) == 2:
        cond = idx if index.aval.dtype == np.bool_ else f"{idx} != 0"
        then_body = branch(1)
        else_body = branch(0)
        fields: list[tuple[str, Any]] = [("cond", cond), ("body", then_body)]
        if else_body:
            fields.append(("else", else_body))
        out.append(Op("when", fields, src))
    else:
        raise UnsupportedError(f"lax.switch with {len(branches)} branches")
    for o, name in zip(eqn.outvars, results):
        t.bind(o, name)


def find_kernel_eqns(jaxpr: jax_core.Jaxpr) -> list[jax_core.JaxprEqn]:
    """Every mpmd_map equation of a jaxpr, inside jit calls too."""
    found = []
    for e in jaxpr.eqns:
        if e.primitive.name == "mpmd_map":
            found.append(e)
        elif e.primitive.name in _INLINE:
            closed = e.params.get("jaxpr") or e.params.get("call_jaxpr")
            if closed is not None:
                found.extend(find_kernel_eqns(getattr(closed, "jaxpr", closed)))
    return found


@handler("parallel_loop")
def _parallel_loop(t: Translator, eqn, out, src) -> None:
    """plsc.parallel_loop: iterations may overlap; running them in order is
    one of the schedules it allows, so it becomes a `loop`."""
    lower, upper, step, consts, carry = eqn.params["tree"].unflatten(eqn.invars)
    jaxpr = eqn.params["jaxpr"]
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    for var, c in zip(jaxpr.constvars, consts):
        t.env[var] = t.read(c)
    ivar, *cvars = jaxpr.invars
    var_name = t.fresh()
    t.env[ivar] = var_name
    names = [t.fresh() for _ in cvars]
    for v, n in zip(cvars, names):
        t.env[v] = n
    inits = [t.read(c) for c in carry]
    body: list[Op] = []
    _use_outs(t, jaxpr)
    t.eqns(jaxpr.eqns, body)
    rng = [exprs.range_item(t.read(lower)), exprs.range_item(t.read(upper)),
           exprs.range_item(t.read(step))]
    fields: list[tuple[str, Any]] = [("var", var_name), ("range", rng)]
    if names:
        fields.append(("carry", {n: exprs.carry_init(v) for n, v in zip(names, inits)}))
    fields.append(("body", body))
    if names:
        fields.append(("next", {n: _as_text(t, o) for n, o in zip(names, jaxpr.outvars)}))
    out.append(Op("loop", fields, src))
    for o, n in zip(eqn.outvars, names):
        t.bind(o, n)


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
