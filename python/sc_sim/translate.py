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
from jax._src.pallas import core as pallas_core
from jax._src.pallas.mosaic import core as tpu_core
from jax._src.pallas.mosaic import lowering as tc_lowering
from jax._src.pallas.mosaic import sc_core
from jax._src.pallas.mosaic import sc_lowering  # noqa: F401  (registers rules)
from jax._src.state import indexing as state_indexing
from jax._src.state import types as state_types
from jax._src import indexing as jax_indexing

from . import exprs, rules_kernels
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
                 src: Source | None = None, which: int | None = None) -> None:
        self.params = params
        self.src = src
        self.chip = chip
        self.name = name
        meshes = params["meshes"]
        if which is None:  # one mesh (translate_kernel takes mpmd_maps of several)
            if len(meshes) != 1 or len(params["jaxprs"]) != 1:
                raise UnsupportedError(
                    f"kernel {name} at {format_source(src)}: MPMD kernels "
                    f"with {len(meshes)} meshes go through translate_kernel")
            which = 0
        self.mesh = meshes[which]
        self.jaxpr: jax_core.Jaxpr = params["jaxprs"][which]
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
        self.all_axes = dict(self.axes)  # translate_kernel: every mesh's of an mpmd_map
        self.scalar_sub: int | None = None  # translate_kernel: the scalar subcore's index on the combined mesh
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
        # input index -> output index: the output is the input's buffer
        # (rules_kernels.py: kernels over jax.new_ref refs, run_state)
        self.aliases = rules_kernels.alias_map(params.get("input_output_aliases"))
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

    def sval(self, atom: Any) -> str:
        """A value with its jaxpr dtype (a literal written strongly): what a
        memory operation stores, its mask and its indices."""
        return exprs.strong(self.val(atom))

    def ref(self, atom: Any) -> RefVal:
        v = self.read(atom)
        if not isinstance(v, RefVal):
            raise UnsupportedError(f"a value used as a ref: {v}")
        return v

    def add_ref(self, base: str, aval: Any, role: str) -> RefVal:
        inner = aval.inner_aval
        ms, owner = aval.memory_space, None
        if isinstance(ms, pallas_core.CoreMemorySpace):  # mpmd_map scratch of one mesh
            owner = _KINDS.get(type(ms.mesh))
            ms = ms.memory_space
        space = _SPACES.get(ms)
        if space is None:
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
                  sem_type=sem_type, role=role, owner=owner or self.kernel)
        self.refs.append(ref)
        return RefVal(name, aval)

    # -- the kernel ----------------------------------------------------------
    def translate(self, n_inputs: int, args: Sequence[RefVal] | None = None) -> KernelInfo:
        """args: an mpmd_map's other mesh: its refs, which this mesh's
        function receives too (the same inputs, outputs and scratch)."""
        jaxpr = self.jaxpr
        if args is not None:
            self.env.update(zip(jaxpr.invars, args))
            return self._translate_body([], [])
        n_out = len(self.params["out_avals"])
        names = list(getattr(jaxpr.debug_info, "arg_names", None) or [])
        inputs, outputs = [], []
        aliased = rules_kernels.aliased_outputs(self.aliases, n_inputs)
        for k, var in enumerate(jaxpr.invars):
            role = "input" if k < n_inputs else "output" if k < n_inputs + n_out \
                else "scratch"
            if k in aliased:  # the same ref as its input
                src = jaxpr.invars[aliased[k]]
                self.env[var] = self.env[src]
                outputs.append(next(r for r in self.refs if r.name == self.env[src].text))
                continue
            base = names[k] if k < len(names) and names[k] else \
                f"{role}{k}"
            base = base.split(".")[-1].replace("[", "_").replace("]", "")
            self.env[var] = self.add_ref(base, var.aval, role)
            ref = self.refs[-1]
            (inputs if role == "input" else outputs if role == "output"
             else []).append(ref)
        return self._translate_body(inputs, outputs)

    def _translate_body(self, inputs: list[Ref], outputs: list[Ref]) -> KernelInfo:
        jaxpr = self.jaxpr
        for var in jaxpr.constvars:
            raise UnsupportedError(f"kernel {self.name} closes over a constant {var}")
        body: list[Op] = []
        try:
            self.eqns(jaxpr.eqns, body)
        except UpstreamUnimplemented as exc:
            # The C checker rejects it with upstream's message (U1) after
            # the operations before it, as upstream lowers in order.
            self.unimplemented = exc
            body.append(Op("unimplemented", [("primitive", exc.primitive)], exc.src))
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


_KINDS = {sc_core.VectorSubcoreMesh: "vector_subcore",
          sc_core.ScalarSubcoreMesh: "scalar_subcore"}


def translate_kernel(params: dict[str, Any], chip: str, name: str,
                     n_inputs: int) -> KernelInfo:
    """An mpmd_map equation as a program: of one kernel for one mesh; for
    several meshes, a `kernels:` item with `mpmd:` (docs/format.md
    "Kernels over several meshes"), each mesh's function translated on its
    own over the same refs.  The inputs, outputs and semaphores become the
    program's refs, vmem_shared the scratch the meshes share, and the rest
    (VMEM or SMEM with a core_type, run_scoped allocations) its mesh's."""
    meshes = params["meshes"]
    if len(meshes) == 1:
        return Translator(params, chip, name).translate(n_inputs)
    ts = [Translator(params, chip, name, which=k) for k in range(len(meshes))]
    for t in ts:  # a signal names the target's axes (device_id of another mesh)
        for u in ts:
            t.all_axes.update(u.axes)
            if u.kernel == "vector_subcore":
                t.scalar_sub = u.mesh.num_subcores
    first = ts[0].translate(n_inputs)
    args = [ts[0].env[v] for v in ts[0].jaxpr.invars]
    infos = [first]
    for t in ts[1:]:
        t.taken = ts[0].taken  # one namespace: every mesh names the same refs
        infos.append(t.translate(n_inputs, args))
    refs = [r for t in ts for r in t.refs]  # mesh 0 made the arguments' refs
    top = [r for r in refs if r.role != "scratch" or r.space == "semaphore"]
    shared = [r for r in refs if r not in top and r.space == "vmem_shared"]
    kernels = [Program(name=name, chip=chip, kernel=t.kernel, mesh=t.mesh_spec,
                       refs=[r for r in refs if r not in top and r not in shared and r.owner == t.kernel],
                       body=info.program.body)
               for t, info in zip(ts, infos)]
    prog = Program(name=name, chip=chip, kernel="mpmd", mesh={}, refs=top, body=[],
                   layout_passes=first.program.layout_passes, mpmd=kernels, shared=shared)
    unimpl = next((i.unimplemented for i in infos if i.unimplemented), None)
    return KernelInfo(prog, first.inputs, first.outputs, first.out_avals,
                      first.kernel_type, unimpl)


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


# The rules register themselves with `handler`.
from . import rules_control, rules_memory, rules_sugar, rules_values  # noqa: E402,F401
from . import rules_valops  # noqa: E402,F401
from . import rules_scanops  # noqa: E402,F401
