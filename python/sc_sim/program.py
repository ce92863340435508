"""An sc-sim program as Python objects, and its YAML text with a line map.

The translation builds a `Program`; `render` writes it as YAML, one
operation per line where it can, and records for each written line the
Python source location (file, line, column) the operation came from, so
that sc-sim's diagnostics (which point at YAML lines) can be mapped back to
the kernel's Python source.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Union

Source = tuple[str, int, int]  # file, line (1-based), column (1-based)


@dataclasses.dataclass
class Op:
    """One operation: `kind` is the format's operation name; `fields` are
    its keys in order, a value may be a nested list of `Op` (a body)."""
    kind: str
    fields: list[tuple[str, Any]]
    src: Source | None = None


@dataclasses.dataclass
class Ref:
    name: str
    space: str                 # hbm, vmem, vmem_shared, smem, semaphore
    shape: tuple[int, ...]
    dtype: str | None = None   # None for semaphores
    sem_type: str | None = None  # dma | regular
    init: Any = None           # a YAML-ready value or None (undefined)
    role: str = "scratch"      # input, output, scratch
    owner: str | None = None   # an mpmd kernel's scratch: the kernel kind of its mesh (core_type)


@dataclasses.dataclass
class Program:
    name: str
    chip: str
    kernel: str                # vector_subcore | scalar_subcore
    mesh: dict[str, int]
    refs: list[Ref]
    body: list[Op]
    layout_passes: bool | None = None
    # an mpmd_map over several meshes (docs/format.md "Kernels over several
    # meshes"): one Program per mesh (its kernel, mesh, scratch as refs and
    # body); `refs` are the program's (hbm, semaphores) and `shared` the
    # scratch the meshes share (vmem_shared)
    mpmd: list["Program"] | None = None
    shared: list[Ref] = dataclasses.field(default_factory=list)


Scalar = Union[str, int, float, bool, None]


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items()) + "}"
    if value is None:
        return "null"
    raise TypeError(f"cannot write {value!r} in a program")


def _is_body(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, Op) for v in value) \
        and len(value) > 0


def _loc(src: Source | None) -> str:
    return f"  # {src[0]}:{src[1]}:{src[2]}" if src else ""


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.line_map: dict[int, Source] = {}

    def add(self, text: str, src: Source | None = None) -> None:
        self.lines.append(text)
        if src is not None:
            self.line_map[len(self.lines)] = src

    def ops(self, ops: list[Op], indent: int) -> None:
        pad = " " * indent
        for op in ops:
            if not any(_is_body(v) for _, v in op.fields):
                inner = ", ".join(f"{k}: {_scalar(v)}" for k, v in op.fields)
                if op.kind == "wait" and len(op.fields) == 1 and op.fields[0][0] == "":
                    self.add(f"{pad}- wait: {op.fields[0][1]}{_loc(op.src)}", op.src)
                else:
                    self.add(f"{pad}- {op.kind}: {{{inner}}}{_loc(op.src)}", op.src)
                continue
            self.add(f"{pad}- {op.kind}:{_loc(op.src)}", op.src)
            for key, value in op.fields:
                if _is_body(value):
                    self.add(f"{pad}    {key}:", op.src)
                    self.ops(value, indent + 6)
                else:
                    self.add(f"{pad}    {key}: {_scalar(value)}", op.src)


def _ref_line(w: _Writer, ref: Ref, indent: int) -> None:
    fields: dict[str, Any] = {"space": ref.space}
    if ref.space == "semaphore":
        fields["type"] = ref.sem_type or "regular"
        if ref.shape:
            fields["shape"] = list(ref.shape)
    else:
        fields["shape"] = list(ref.shape)
        fields["dtype"] = ref.dtype
        if ref.init is not None:
            fields["init"] = ref.init
    w.add(f"{' ' * indent}{ref.name}: {_scalar(fields)}  # {ref.role}")


def _mpmd(w: _Writer, prog: Program) -> None:
    """The one kernel of an mpmd_map over several meshes."""
    w.add("kernels:")
    w.add(f"  - name: {json.dumps(prog.name)}")
    if prog.shared:
        w.add("    scratch:")
        for ref in prog.shared:
            _ref_line(w, ref, 6)
    w.add("    mpmd:")
    for k in prog.mpmd or []:
        w.add(f"      - kernel: {k.kernel}")
        w.add("        mesh: " + _scalar(k.mesh))
        if k.refs:
            w.add("        scratch:")
            for ref in k.refs:
                _ref_line(w, ref, 10)
        if k.body:
            w.add("        body:")
            w.ops(k.body, 10)
        else:
            w.add("        body: []")


def render(prog: Program) -> tuple[str, dict[int, Source]]:
    """The program's YAML text and the map from its line numbers (1-based)
    to Python source locations."""
    w = _Writer()
    w.add(f"# sc-sim program translated by sc_sim from the Pallas kernel {prog.name}")
    w.add("version: 1")
    w.add(f"name: {json.dumps(prog.name)}")
    w.add(f"chip: {prog.chip}")
    if prog.mpmd is None:
        w.add(f"kernel: {prog.kernel}")
        w.add("mesh: " + _scalar(prog.mesh))
    if prog.layout_passes is not None:
        w.add(f"layout_passes: {_scalar(prog.layout_passes)}")
    w.add("refs:")
    for ref in prog.refs:
        _ref_line(w, ref, 2)
    if prog.mpmd is not None:
        _mpmd(w, prog)
        return "\n".join(w.lines) + "\n", w.line_map
    if prog.body:
        w.add("body:")
        w.ops(prog.body, 2)
    else:
        w.add("body: []")
    return "\n".join(w.lines) + "\n", w.line_map
