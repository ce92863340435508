"""JAX's own Mosaic SparseCore module, read into sc-sim's lowered text.

The module is read with the MLIR Python bindings that jaxlib ships (the
real parser, the tpu dialect registered the way jax registers it); each
op is translated into sc-sim's ISA text (docs/isa.md), the kernel's
arguments (grid indices, operands, scratch) bound to the program's refs,
and the text is run by the C core as the program's `lowered:` key, which
verifies it against the reference of the program's body (docs/mosaic.md).

Values are matched to the program by source location: an MLIR location
carries the kernel's Python line and column, the program's operations
carry the same in their comments, and within one location memory
results are paired in order.  When the pairing does not hold for every
location the text logs nothing and only final memory is compared.
"""
from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import subprocess
import sys
from typing import Any

from . import binary

_DTYPES = {"i32": "int32", "i16": "int16", "i8": "int8", "i1": "bool",
           "f32": "float32", "bf16": "bfloat16", "f16": "float16",
           "index": "int32", "i64": "int64", "ui32": "uint32", "ui8": "uint8",
           "ui16": "uint16", "f64": "float64"}
_SPACES = {"hbm": "hbm", "vmem": "vmem", "smem": "smem",
           "vmem_shared": "vmem_shared", "semaphore_mem": "semaphore"}
_INT_BIN = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*",
            "arith.andi": "&", "arith.ori": "|", "arith.xori": "^",
            "arith.shli": "<<", "arith.shrsi": ">>", "arith.floordivsi": "//",
            "arith.addf": "+", "arith.subf": "-", "arith.mulf": "*",
            "arith.divf": "/"}
_UNSIGNED = {"arith.divui": "//", "arith.remui": "%", "arith.shrui": ">>"}
_UTYPE = {"int32": "uint32", "int16": "uint16", "int8": "uint8", "int64": "uint64"}
_MINMAX_U = {"arith.maxui": 1, "arith.minui": 0}
_MINMAX = {"arith.maxsi": 1, "arith.minsi": 0, "arith.maximumf": 1,
           "arith.minimumf": 0, "arith.maxnumf": 1, "arith.minnumf": 0}
_CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">="}   # eq ne slt sle sgt sge
_CMPU = {6: "<", 7: "<=", 8: ">", 9: ">="}                       # ult ule ugt uge
_CMPF = {1: "==", 2: ">", 3: ">=", 4: "<", 5: "<=",   # oeq ogt oge olt ole
         13: "!="}                                     # une (NaN: true, as Python's !=)
_CMPF_ONE = 6  # one: what jax 0.10.2 lowers lax.ne of floats to (docs/mosaic.md)
_CONVERT = {"arith.extsi", "arith.extui", "arith.trunci", "arith.sitofp",
            "arith.fptosi", "arith.extf", "arith.truncf", "arith.index_cast",
            "arith.uitofp"}
_MOVES = {"vector.shape_cast"}
_SKIP = {"func.return", "tpu.yield", "scf.yield"}
_VALUE_OPS = {"vector.bitcast", "math.exp", "math.absi", "math.absf", "arith.fptoui",
              "tpu.dynamic_gather", "tpu.concatenate", "tpu.scan", "tpu.all_reduce", "tpu.log",
              "tpu.sort"}
_SCAN = {"sum": 0, "max": 1, "min": 2}
_ALL_REDUCE = {"sum": 0, "find_first_set": 1}


class MosaicInputError(Exception):
    """Input outside the subset (exit 2): message, and its .mlir line:col."""

    def __init__(self, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


# ---------------------------------------------------------------------------
# Obtaining and parsing the module.

def context() -> Any:
    """An MLIR context as jax makes it, with the tpu dialect registered."""
    from jax._src.interpreters import mlir
    from jax._src.lib import tpu
    ctx = mlir.make_ir_context()
    tpu.register_dialect(ctx)
    ctx.allow_unregistered_dialects = True
    return ctx


def module_texts(hlo_text: str) -> list[str]:
    """The Mosaic modules of a lowered jax module's tpu_custom_calls, as
    text with locations (the custom call's base64 bytecode, deserialised
    with the mosaic-serde pass)."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.passmanager import PassManager
    from .verdict import _CONFIG
    out = []
    for m in _CONFIG.finditer(hlo_text):
        raw = re.sub(r"\\([0-9A-Fa-f]{2})", lambda h: chr(int(h.group(1), 16)),
                     m.group(1))
        try:
            body = json.loads(raw).get("custom_call_config", {}).get("body")
        except json.JSONDecodeError:
            continue
        if body is None:
            continue
        ctx = context()
        with ctx, ir.Location.unknown():
            module = ir.Module.parse(base64.b64decode(body))
            PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(
                module.operation)
            out.append(module.operation.get_asm(enable_debug_info=True))
    return out


def kernel_module(fn: Any, *args: Any, chip: str = "tpu7x") -> str:
    """JAX's Mosaic module (text with locations) for the kernel `fn(*args)`
    calls, lowered on this host with lowering_platforms=("tpu",)."""
    import jax
    from .runner import chip_scope
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    with chip_scope(chip):
        lowered = jax.jit(fn).trace(*specs).lower(lowering_platforms=("tpu",))
    mods = module_texts(lowered.as_text())
    if not mods:
        raise ValueError("the lowered module holds no Mosaic kernel")
    return mods[0]


def module_for_call(params: dict[str, Any], avals: list[Any]) -> str:
    """JAX's Mosaic module for one `mpmd_map` call (params, input avals),
    lowered under the abstract mesh already in force."""
    import jax
    from jax._src.pallas import mpmd

    def call(*xs: Any) -> Any:
        return mpmd.mpmd_map_p.bind(*xs, **params)
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals]
    lowered = jax.jit(call).trace(*specs).lower(lowering_platforms=("tpu",))
    mods = module_texts(lowered.as_text())
    if not mods:
        raise ValueError("JAX's lowering of the kernel holds no Mosaic module")
    return mods[0]


_OPLINE = re.compile(r'^(\s*)(?:(?:%[\w#]+(?::\d+)?(?:, )?)+ = )?"?([a-z_]+\.[a-z_0-9.]+)')


def _op_positions(text: str) -> list[tuple[str, int, int]]:
    """(name, line, col) of every op in the order the text holds them."""
    pos = []
    for i, line in enumerate(text.splitlines(), 1):
        m = _OPLINE.match(line)
        if m and not line.lstrip().startswith(("#", "module", "}")):
            pos.append((m.group(2), i, len(m.group(1)) + 1))
    return pos


# ---------------------------------------------------------------------------
# Source locations.

_FILELOC = re.compile(r'"([^"]*)":(\d+):(\d+)')


def py_loc(loc: Any) -> tuple[int, int] | None:
    """The innermost Python (line, column 1-based) an MLIR location names."""
    m = _FILELOC.findall(str(loc))
    if not m:
        return None
    _, line, col = m[-1]
    return int(line), int(col) + 1


@dataclasses.dataclass
class ProgOp:
    id: int
    at: str
    logs: list[tuple[str, str]]  # (log kind, mnemonic) in order
    py: tuple[int, int] | None
    block: tuple[int, int] = (0, 0)  # the program lines of the op and its body (inclusive)


def _block(lines: list[str], yl: int) -> tuple[int, int]:
    """Lines yl.. of the program op at line yl and of the body under it
    (the lines indented deeper, up to the next op at its level)."""
    if not 0 < yl <= len(lines):
        return (yl, yl)
    ind = len(lines[yl - 1]) - len(lines[yl - 1].lstrip().lstrip("- "))
    end = yl
    while end < len(lines):
        ln = lines[end]
        if ln.strip() and not ln.lstrip().startswith("#") and \
                len(ln) - len(ln.lstrip().lstrip("- ")) <= ind:
            break
        end += 1
    return (yl, end)


def program_ops(program: str, lowered_text: str) -> dict[int, ProgOp]:
    """The program's operations: id, location, what they log (from sc-sim's
    own lowering of the program) and their Python location (comment)."""
    with open(program) as f:
        lines = f.read().splitlines()
    ops: dict[int, ProgOp] = {}
    for ln in lowered_text.splitlines():
        m = re.search(r"at=(\d+):(\d+) id=(\d+)", ln)
        if not m:
            continue
        i = int(m.group(3))
        op = ops.get(i)
        if op is None:
            yl = int(m.group(1))
            src = re.search(r"#\s*\S*?:(\d+):(\d+)\s*$", lines[yl - 1]) if yl <= len(lines) else None
            op = ops[i] = ProgOp(i, f"{m.group(1)}:{m.group(2)}", [],
                                 (int(src.group(1)), int(src.group(2))) if src else None,
                                 _block(lines, yl))
        g = re.search(r" log=([LON])", ln)
        if g:
            mn = re.match(r"^\d+: (?:%\d+ = )?(\S+)", ln)
            op.logs.append((g.group(1), mn.group(1) if mn else ""))
    return ops


_BITCAST = re.compile(r"\b([A-Za-z_]\w*)\.bitcast\((\w+)\)")


def program_bitcasts(program: str) -> tuple[dict[tuple[int, int], set[str]], dict[str, set[str]]]:
    """The dtypes the program's views bitcast to, per Python location and
    per ref: MLIR integers are signless, so a memref_bitcast to i8 is an
    int8 or a uint8 view, which only the program tells."""
    at: dict[tuple[int, int], set[str]] = {}
    by_ref: dict[str, set[str]] = {}
    with open(program) as f:
        for ln in f:
            casts = _BITCAST.findall(ln)
            if not casts:
                continue
            src = re.search(r"#\s*\S*?:(\d+):(\d+)\s*$", ln)
            for ref, dt in casts:
                by_ref.setdefault(ref, set()).add(dt)
                if src:
                    at.setdefault((int(src.group(1)), int(src.group(2))), set()).add(dt)
    return at, by_ref


# ---------------------------------------------------------------------------
# Program refs (the top-level `refs:` of a program written by sc-sim).

def program_refs(program: str) -> list[dict[str, Any]]:
    refs, inside = [], False
    with open(program) as f:
        for ln in f:
            if re.match(r"^refs:\s*$", ln):
                inside = True
                continue
            if inside and not ln.startswith(" "):
                if ln.strip() and not ln.startswith("#"):
                    inside = False
                continue
            if inside:
                m = re.match(r"^\s+([A-Za-z_]\w*):\s*\{(.*)\}", ln)
                if not m:
                    continue
                body = m.group(2)
                space = re.search(r'space:\s*"?(\w+)"?', body)
                shape = re.search(r"shape:\s*\[([^\]]*)\]", body)
                dtype = re.search(r'dtype:\s*"?(\w+)"?', body)
                refs.append({"name": m.group(1),
                             "space": space.group(1) if space else "",
                             "shape": [int(s) for s in shape.group(1).split(",") if s.strip()]
                             if shape else [],
                             "dtype": dtype.group(1) if dtype else
                             ("int32" if space and space.group(1) == "semaphore" else "int32")})
    return refs


# ---------------------------------------------------------------------------
# The translation.

@dataclasses.dataclass
class Mem:
    ref: str
    # per level: [(kind, start, size)] entries, or the text of a transform
    # level (".bitcast(int16)", ".reshape(2, 8)")
    levels: list[Any]


def _mtype(t: Any) -> tuple[list[int], str, str]:
    """(shape, dtype, space) of a memref type."""
    s = str(t)
    m = re.match(r"memref<(.*)>$", s)
    if not m:
        raise ValueError(s)
    body = m.group(1)
    space = re.search(r"#tpu\.memory_space<(\w+)>", body)
    sp = _SPACES.get(space.group(1), space.group(1)) if space else "vmem"
    if "semaphore" in body.split(",")[0]:
        dims = re.match(r"((?:\d+x)*)!", body)
        shape = [int(d) for d in dims.group(1).split("x") if d] if dims else []
        return shape, "semaphore", "semaphore"
    first = body.split(",")[0]
    parts = first.split("x")
    return [-1 if p == "?" else int(p) for p in parts[:-1]], _DTYPES.get(parts[-1], parts[-1]), sp  # ?: dynamic


def _ints(attr: Any) -> list[int]:
    """The integers of an array attribute: `array<i64: 1, 2>`, `[1 : i64]`."""
    s = str(attr)
    if s.startswith("array<"):
        s = s.split(":", 1)[1] if ":" in s else ""
    return [int(v) for v in re.findall(r"-?\d+", re.sub(r":\s*[a-z]+\d+", "", s))]


def _vtype(t: Any) -> tuple[list[int], str]:
    s = str(t)
    m = re.match(r"vector<(.*)>$", s)
    if m:
        parts = m.group(1).split("x")
        return [int(p) for p in parts[:-1]], parts[-1]
    return [], s


class Reader:
    def __init__(self, text: str, mlir_name: str = "kernel.mlir") -> None:
        from jaxlib.mlir import ir
        self.ir = ir
        self.text = text
        self.name = mlir_name
        self.ctx = context()
        with self.ctx:
            try:
                self.module = ir.Module.parse(text)
            except ir.MLIRError as exc:
                m = re.search(r":(\d+):(\d+)", str(exc))
                raise MosaicInputError(f"not a valid MLIR module: {exc}",
                                       int(m.group(1)) if m else 0,
                                       int(m.group(2)) if m else 0) from None
        self.positions = _op_positions(text)
        self.pos_index = 0
        self.where: dict[Any, tuple[int, int]] = {}
        self._walk_positions()

    def _walk_positions(self) -> None:
        """The .mlir line:col of each op: the ops in parse order, paired with
        the op lines of the text in order (one op per line as printed)."""
        k = 0
        def visit(op: Any) -> None:
            nonlocal k
            if op.name != "builtin.module":
                j = k  # a terminator may be implicit (not printed): look a little ahead only
                while j < min(k + 3, len(self.positions)) and self.positions[j][0] != op.name:
                    j += 1
                if j < len(self.positions) and self.positions[j][0] == op.name:
                    self.where[op] = self.positions[j][1:]
                    k = j + 1
            for r in op.regions:
                for b in r.blocks:
                    for o in b.operations:
                        visit(o.operation)
        visit(self.module.operation)

    def at(self, op: Any) -> tuple[int, int]:
        return self.where.get(op, (0, 0))

    def fail(self, op: Any, msg: str) -> MosaicInputError:
        line, col = self.at(op)
        return MosaicInputError(msg, line, col)

    # -- translation state --------------------------------------------------

    def translate(self, refs: list[dict[str, Any]], ops: dict[int, ProgOp],
                  kernel: str, bitcasts: tuple[dict[tuple[int, int], set[str]],
                                               dict[str, set[str]]] = ({}, {})) -> str:
        self.refs = refs
        self.bitcasts = bitcasts
        self.allocs: dict[tuple[str, str], Mem] = {}
        self.ops = ops
        self.regs: dict[Any, int] = {}
        self.simshape: dict[Any, list[int]] = {}
        self.mems: dict[Any, Mem] = {}
        self.nreg = 0
        self.views: list[str] = []
        self.code: list[list[Any]] = []   # [text, python loc, is memory op, op]
        funcs = [o for o in self.module.body.operations if o.operation.name == "func.func"]
        if len(funcs) != 1:
            raise MosaicInputError(f"the module holds {len(funcs)} func.func ops, not one",
                                   *self.at(self.module.operation))
        fn = funcs[0].operation
        self.func_attrs(fn, kernel)
        block = fn.regions[0].blocks[0]
        bounds = list(self.ibounds)
        args = list(block.arguments)
        ngrid = len(bounds)
        for k in range(ngrid):
            r = self.new_reg(args[k])
            coord = 0 if (k == 0 and ngrid == 2) or kernel == "scalar_subcore" else 1
            self.emit(f"%{r} = sc.coord imm={coord}", None, False, fn)
        mem_args = args[ngrid:]
        self.unbound = list(refs)
        for k, a in enumerate(mem_args):
            self.bind(a, fn, f"argument %arg{ngrid + k}")
        self.block(block)
        return self.finish()

    def func_attrs(self, fn: Any, kernel: str) -> None:
        attrs = {}
        for a in fn.attributes:
            if isinstance(a, str):
                attrs[a] = fn.attributes[a]
            else:
                attrs[a.name] = a.attr
        ct = str(attrs.get("tpu.core_type", ""))
        want = {"vector_subcore": "sc_vector_subcore", "scalar_subcore": "sc_scalar_subcore"}[kernel]
        if want not in ct:
            raise self.fail(fn, f"attribute tpu.core_type is {ct or 'missing'}, the "
                                f"program's kernel {kernel} wants #tpu.core_type<{want}>")
        ib = attrs.get("iteration_bounds")
        if ib is None:
            raise self.fail(fn, "attribute iteration_bounds is missing")
        self.ibounds = _ints(ib)
        for key in attrs:
            if key not in {"dimension_semantics", "iteration_bounds", "scalar_prefetch",
                           "scratch_operands", "tpu.core_type", "window_params",
                           "function_type", "sym_name", "arg_attrs", "res_attrs",
                           "sym_visibility"}:
                raise self.fail(fn, f"attribute {key} of func.func is outside the subset")
        sp = attrs.get("scalar_prefetch")
        if sp is not None and int(str(sp).split(":")[0]) != 0:
            raise self.fail(fn, f"attribute scalar_prefetch = {sp} is outside the subset (0 only)")

    def bind(self, value: Any, op: Any, what: str) -> None:
        shape, dtype, space = _mtype(value.type)
        if not self.unbound:
            raise self.fail(op, f"{what} of type {value.type} has no ref of the program "
                                f"left to bind to")
        ref = self.unbound.pop(0)
        rshape = ref["shape"]
        # bool refs are i32 memrefs; MLIR integers are signless (uintN is iN)
        rdtype = "int32" if ref["dtype"] == "bool" else ref["dtype"].replace("uint", "int")
        if ref["space"] != space or rshape != shape or \
                (space != "semaphore" and rdtype != dtype):
            raise self.fail(op, f"{what} of type {value.type} does not match the program's "
                                f"ref '{ref['name']}' ({ref['space']}, shape {rshape}, "
                                f"{ref['dtype']})")
        self.mems[value] = Mem(ref["name"], [])

    def new_reg(self, value: Any = None) -> int:
        r = self.nreg
        self.nreg += 1
        if value is not None:
            self.regs[value] = r
        return r

    def reg(self, value: Any, op: Any) -> int:
        if value in self.regs:
            return self.regs[value]
        raise self.fail(op, f"{op.name}: operand {value.get_name()} is not a value sc-sim "
                            f"holds in a register")

    def emit(self, text: str, op: Any, memory: bool = False, src: Any = None) -> int:
        loc = py_loc(op.location) if op is not None else None
        self.code.append([text, loc, memory, op if op is not None else src])
        return len(self.code) - 1

    def view(self, mem: Mem, extra: list[tuple[str, str, int]] | None = None) -> str:
        levels = list(mem.levels) + ([extra] if extra else [])
        text = mem.ref
        for lv in levels:
            if isinstance(lv, str):
                text += lv
                continue
            ents = []
            for kind, start, size in lv:
                ents.append(start if kind == "int" else f"{start}:{size}")
            text += "[" + ", ".join(ents) + "]"
        k = len(self.views)
        self.views.append(f"view v{k} = {text}")
        return f"v{k}"

    def mem(self, value: Any, op: Any) -> Mem:
        if value in self.mems:
            return self.mems[value]
        raise self.fail(op, f"{op.name}: memref operand {value.get_name()} is not bound to "
                            f"a ref of the program")

    def block(self, block: Any) -> None:
        for o in block.operations:
            self.op(o.operation)

    def segments(self, op: Any) -> list[list[Any]]:
        if "operandSegmentSizes" not in op.attributes:
            return [[v] for v in op.operands]
        sizes = [int(v) for v in re.findall(r"\d+", str(op.attributes["operandSegmentSizes"]).split(":", 1)[1])]
        out, k = [], 0
        ops = list(op.operands)
        for s in sizes:
            out.append(ops[k:k + s])
            k += s
        return out

    def dtype_of(self, t: Any, op: Any) -> str:
        s = str(t)
        if s.startswith("vector<"):
            s = _vtype(t)[1]
        if s not in _DTYPES:
            raise self.fail(op, f"{op.name}: type {t} is outside the subset")
        return _DTYPES[s]

    def op(self, op: Any) -> None:  # noqa: C901 -- one branch per op
        name = op.name
        res = list(op.results)
        if name in _SKIP:
            return
        if name == "arith.constant":
            t = res[0].type
            ty = self.dtype_of(t, op)
            val = str(op.attributes["value"])
            shape = _vtype(t)[0]
            if shape and "dense<" not in val:
                raise self.fail(op, f"arith.constant: value {val} is outside the subset")
            m = re.search(r"dense<([^>]*)>", val)
            lit = (m.group(1) if m else val.split(":")[0]).strip()
            if lit.startswith("["):
                raise self.fail(op, f"arith.constant: a non-splat vector {val} is outside the subset")
            lit = {"true": "1", "false": "0"}.get(lit, lit)
            r = self.new_reg(None if shape else res[0])
            if ty.startswith(("float", "bfloat")):  # a float64 literal, converted
                w = self.new_reg()
                self.emit(f"%{w} = arith.constant fimm={float(lit)!r} ty=float64", op)
                self.emit(f"%{r} = arith.convert a=%{w} ty={ty}", op)
            else:
                self.emit(f"%{r} = arith.constant imm={int(lit)} ty={ty}", op)
            if shape:
                d = self.new_reg(res[0])
                self.emit(f"%{d} = vector.broadcast a=%{r} ty={ty} shape=({','.join(map(str, shape))})", op)
            return
        if name in _INT_BIN or name in ("arith.cmpi", "arith.cmpf") or name in _MINMAX \
                or name in _MINMAX_U or name in ("arith.divsi", "arith.remsi") or name in _UNSIGNED:
            a, b = (self.reg(v, op) for v in op.operands)
            uty = self.dtype_of(op.operands[0].type, op)
            if name in _UNSIGNED:  # operands read as unsigned, the result as signed
                d = self.new_reg(res[0])
                self.emit(f'%{d} = arith.binary a=%{a} b=%{b} op="{_UNSIGNED[name]}" '
                          f'ty={uty} uty={_UTYPE.get(uty, uty)}', op)
                return
            ty = self.dtype_of(res[0].type, op)
            d = self.new_reg(res[0])
            if name in _MINMAX_U:
                self.emit(f"%{d} = arith.minmax a=%{a} b=%{b} imm={_MINMAX_U[name]} "
                          f"ty={ty} uty={_UTYPE.get(uty, uty)}", op)
            elif name in _MINMAX:
                self.emit(f"%{d} = arith.minmax a=%{a} b=%{b} imm={_MINMAX[name]} ty={ty} uty={uty}", op)
            elif name in ("arith.divsi", "arith.remsi"):
                self.trunc_div(d, a, b, ty, name == "arith.remsi", op)
            else:
                if name == "arith.cmpi":
                    p = int(str(op.attributes["predicate"]).split(":")[0])
                    if p in _CMPU:  # unsigned: the operands read as uintN
                        sym, uty = _CMPU[p], _UTYPE.get(uty, uty)
                    elif p not in _CMPI:
                        raise self.fail(op, f"arith.cmpi: predicate {p} is outside the subset")
                    else:
                        sym = _CMPI[p]
                elif name == "arith.cmpf":
                    p = int(str(op.attributes["predicate"]).split(":")[0])
                    if p == _CMPF_ONE:  # ordered and unequal: a < b or a > b (NaN: false)
                        lt, gt = self.new_reg(), self.new_reg()
                        self.emit(f'%{lt} = arith.binary a=%{a} b=%{b} op="<" ty=bool uty={uty}', op)
                        self.emit(f'%{gt} = arith.binary a=%{a} b=%{b} op=">" ty=bool uty={uty}', op)
                        self.emit(f'%{d} = arith.binary a=%{lt} b=%{gt} op="|" ty=bool uty=bool', op)
                        return
                    if p not in _CMPF:
                        raise self.fail(op, f"arith.cmpf: predicate {p} is outside the subset")
                    sym = _CMPF[p]
                else:
                    sym = _INT_BIN[name]
                self.emit(f'%{d} = arith.binary a=%{a} b=%{b} op="{sym}" ty={ty} uty={uty}', op)
            return
        if name == "arith.negf":
            a = self.reg(op.operands[0], op)
            ty = self.dtype_of(res[0].type, op)
            d = self.new_reg(res[0])
            self.emit(f'%{d} = arith.unary a=%{a} op="neg" ty={ty} uty={ty}', op)
            return
        if name == "arith.select":
            c, a, b = (self.reg(v, op) for v in op.operands)
            ty = self.dtype_of(res[0].type, op)
            d = self.new_reg(res[0])
            self.emit(f"%{d} = arith.select a=%{c} b=%{a} c=%{b} ty={ty} uty={ty}", op)
            return
        if name in _CONVERT:
            a = self.reg(op.operands[0], op)
            ty = self.dtype_of(res[0].type, op)
            if name in ("arith.extui", "arith.uitofp"):  # zero-extend: through uintN
                sty = self.dtype_of(op.operands[0].type, op)
                if sty != "bool":
                    u = self.new_reg()
                    self.emit(f"%{u} = arith.convert a=%{a} ty={_UTYPE.get(sty, sty)}", op)
                    a = u
            d = self.new_reg(res[0])
            self.emit(f"%{d} = arith.convert a=%{a} ty={ty}", op)
            return
        if name in _MOVES:  # the register keeps its shape (sc.mov)
            a = self.reg(op.operands[0], op)
            self.simshape[res[0]] = self.shape_of(op.operands[0])
            d = self.new_reg(res[0])
            self.emit(f"%{d} = sc.mov a=%{a}", op)
            return
        if name == "vector.broadcast":
            src = op.operands[0]
            if str(src.type).startswith("vector<"):
                if _vtype(src.type)[0] != _vtype(res[0].type)[0]:
                    raise self.fail(op, "vector.broadcast: a vector source of another shape is outside the subset")
                a = self.reg(src, op)
                d = self.new_reg(res[0])
                self.emit(f"%{d} = sc.mov a=%{a}", op)
                return
            a = self.reg(src, op)
            shape, _ = _vtype(res[0].type)
            ty = self.dtype_of(res[0].type, op)
            d = self.new_reg(res[0])
            self.emit(f"%{d} = vector.broadcast a=%{a} ty={ty} shape=({','.join(map(str, shape))})", op)
            return
        if name == "tpu.iota":
            self.iota(op)
            return
        if name == "tpu.memref_slice":
            base, idx = op.operands[0], list(op.operands)[1:]
            src = self.mem(base, op)
            shape, _, _ = _mtype(res[0].type)
            if len(idx) != len(shape) or -1 in shape:
                raise self.fail(op, "tpu.memref_slice: dynamic sizes are outside the subset")
            lv = [("slice", f"%{self.reg(v, op)}", s) for v, s in zip(idx, shape)]
            self.mems[res[0]] = Mem(src.ref, src.levels + [lv])
            return
        if name == "tpu.memref_squeeze":
            src = self.mem(op.operands[0], op)
            sshape, _, _ = _mtype(op.operands[0].type)
            dshape, _, _ = _mtype(res[0].type)
            keep, j = [], 0  # keep a dimension while it matches the result's next one
            for n in sshape:
                if j < len(dshape) and n == dshape[j]:
                    keep.append(True)
                    j += 1
                elif n == 1:
                    keep.append(False)
                else:
                    raise self.fail(op, f"tpu.memref_squeeze: {sshape} to {dshape} is not a squeeze")
            if j != len(dshape):
                raise self.fail(op, f"tpu.memref_squeeze: {sshape} to {dshape} is not a squeeze")
            if src.levels and not isinstance(src.levels[-1], str) and \
                    all(k == "slice" for k, _, _ in src.levels[-1]) and \
                    len(src.levels[-1]) == len(sshape):
                last = [(e if k else ("int", e[1], 1)) for e, k in zip(src.levels[-1], keep)]
                self.mems[res[0]] = Mem(src.ref, src.levels[:-1] + [last])
            else:
                lv = [("slice", "0", s) if k else ("int", "0", 1) for s, k in zip(sshape, keep)]
                self.mems[res[0]] = Mem(src.ref, src.levels + [lv])
            return
        if name in ("tpu.memref_bitcast", "tpu.memref_reshape"):
            self.known_attrs(op, set())
            src = self.mem(op.operands[0], op)
            shape, dtype, _ = _mtype(res[0].type)
            lv = f".bitcast({self.bitcast_dtype(op, src.ref, dtype)})" \
                if name == "tpu.memref_bitcast" else \
                f".reshape({', '.join(map(str, shape))})"
            self.mems[res[0]] = Mem(src.ref, src.levels + [lv])
            return
        if name in ("tpu.vector_load", "tpu.vector_store"):
            seg = self.segments(op)
            load = name == "tpu.vector_load"
            base = seg[0][0] if load else seg[1][0]
            value = None if load else seg[0][0]
            idx = seg[1] if load else seg[2]
            mask = (seg[2] if load else seg[3]) if len(seg) > (2 if load else 3) else []
            m = self.mem(base, op)
            mshape, _, _ = _mtype(base.type)
            vshape, _ = _vtype((res[0] if load else value).type)
            strides = op.attributes["strides"] if "strides" in op.attributes else None
            if strides is not None and any(int(x) != 1 for x in re.findall(r"-?\d+", str(strides).split(":", 1)[-1]) if ":" in str(strides)):
                raise self.fail(op, f"{name}: attribute strides = {strides} is outside the subset")
            lead = len(mshape) - len(vshape)
            if lead < 0:
                raise self.fail(op, f"{name}: a vector of rank above the memref's is outside the subset")
            ents = []
            for k, v in enumerate(idx):
                r = f"%{self.reg(v, op)}"
                ents.append(("int", r, 1) if k < lead else ("slice", r, vshape[k - lead]))
            vw = self.view(m, ents)
            mk = f" mask=%{self.reg(mask[0], op)}" if mask else ""
            self.known_attrs(op, {"strides", "add", "operandSegmentSizes"})
            add = " add=true" if not load and self.flag(op, "add") else ""
            if load:
                d = self.new_reg(res[0])
                self.emit(f"%{d} = tpu.vector_load v={vw}{mk}", op, True)
            else:
                a = self.reg(value, op)
                self.emit(f"tpu.vector_store a=%{a} v={vw}{mk}{add}", op, True)
            return
        if name in ("tpu.vector_load_idx", "tpu.vector_store_idx"):
            load = name == "tpu.vector_load_idx"
            self.known_attrs(op, {"add", "operandSegmentSizes"})
            seg = self.segments(op)
            base = seg[0][0] if load else seg[1][0]
            idx = seg[1] if load else seg[2]
            mask = (seg[2] if load else seg[3]) if len(seg) > (2 if load else 3) else []
            vw = self.view(self.mem(base, op))
            first = self.nreg
            for v in idx:  # the index registers, a run a..a+imm-1
                r = self.reg(v, op)
                self.emit(f"%{self.new_reg()} = sc.mov a=%{r}", op)
            mk = f" mask=%{self.reg(mask[0], op)}" if mask else ""
            if load:
                d = self.new_reg(res[0])
                self.emit(f"%{d} = tpu.vector_load_idx v={vw} a=%{first} imm={len(idx)}{mk}", op, True)
            else:
                add = " add=true" if self.flag(op, "add") else ""
                b = self.reg(seg[0][0], op)
                self.emit(f"tpu.vector_store_idx v={vw} a=%{first} imm={len(idx)} b=%{b}{mk}{add}",
                          op, True)
            return
        if name == "tpu.barrier":
            self.emit("tpu.barrier", op)
            return
        if name in ("tpu.sem_wait", "tpu.sem_signal"):
            ops = list(op.operands)
            extra = ""
            if name == "tpu.sem_signal":  # semaphore, amount, [device_id], [core_id], [subcore_id]
                seg = self.segments(op) + [[], [], []]
                if seg[2]:
                    raise self.fail(op, "tpu.sem_signal: a device id is outside the subset")
                if seg[3]:
                    extra += f" b=%{self.reg(seg[3][0], op)}"
                if seg[4]:
                    extra += f" c=%{self.reg(seg[4][0], op)}"
                ops = seg[0] + seg[1]
            vw = self.view(self.mem(ops[0], op))
            self.emit(f"{name} v={vw} a=%{self.reg(ops[1], op)}{extra}", op)
            return
        if name in ("memref.load", "memref.store"):
            load = name == "memref.load"
            ops = list(op.operands)
            base = ops[0] if load else ops[1]
            idx = ops[1:] if load else ops[2:]
            m = self.mem(base, op)
            vw = self.view(m, [("int", f"%{self.reg(v, op)}", 1) for v in idx]) if idx else self.view(m)
            if load:
                d = self.new_reg(res[0])
                self.emit(f"%{d} = memref.load v={vw}", op, True)
            else:
                self.emit(f"memref.store a=%{self.reg(ops[0], op)} v={vw}", op, True)
            return
        if name == "tpu.enqueue_dma":
            seg = self.segments(op)
            src, ssem, dst, dsem = seg[0], seg[1], seg[2], seg[3]
            if ssem or any(seg[4:]):
                raise self.fail(op, "tpu.enqueue_dma: a source semaphore, device or core id is outside the subset")
            pri = int(str(op.attributes["priority"]).split(":")[0]) if "priority" in op.attributes else 0
            sem = f" sem={self.view(self.mem(dsem[0], op))}" if dsem else ""
            p = f" priority={pri}" if pri else ""
            self.emit(f"tpu.enqueue_dma v={self.view(self.mem(src[0], op))} "
                      f"v2={self.view(self.mem(dst[0], op))}{sem}{p}", op)
            return
        if name == "tpu.wait_dma2":
            seg = self.segments(op)
            sem, src, dst = seg[0], seg[1], seg[2]
            if any(seg[3:]):
                raise self.fail(op, "tpu.wait_dma2: a device or core id is outside the subset")
            self.emit(f"tpu.wait_dma2 v={self.view(self.mem(src[0], op))} "
                      f"v2={self.view(self.mem(dst[0], op))} sem={self.view(self.mem(sem[0], op))}", op)
            return
        if name == "tpu.enqueue_indirect_dma":
            self.known_attrs(op, {"operandSegmentSizes", "add"})
            # source, target, offsets (a memref or a register), [offset_filter], [semaphore]
            ops = list(op.operands)
            src, dst, offs = ops[0], ops[1], ops[2]
            filt = [v for v in ops[3:] if not str(v.type).startswith("memref<")]
            sem = [v for v in ops[3:] if str(v.type).startswith("memref<")]
            gather = _mtype(dst.type)[2] == "vmem" and _mtype(src.type)[2] != "vmem"
            text = (f"tpu.enqueue_indirect_dma v={self.view(self.mem(src, op))} "
                    f"v2={self.view(self.mem(dst, op))}")
            if sem:
                text += f" sem={self.view(self.mem(sem[0], op))}"
            if str(offs.type).startswith("memref<"):
                text += f" offsets={self.view(self.mem(offs, op))}"
            else:
                oshape, _ = _vtype(offs.type)
                text += f" a=%{self.reg(offs, op)} shape=({','.join(map(str, oshape))})"
            if filt:
                text += f" c=%{self.reg(filt[0], op)}"
            if gather:
                text += " imm=1"
            if self.flag(op, "add"):
                text += " add=true"
            self.emit(text, op)
            return
        if name == "tpu.wait_indirect_dma":
            sem, src, dst = list(op.operands)[:3]
            gather = _mtype(dst.type)[2] == "vmem" and _mtype(src.type)[2] != "vmem"
            self.emit(f"tpu.wait_indirect_dma v={self.view(self.mem(src, op))} "
                      f"v2={self.view(self.mem(dst, op))} sem={self.view(self.mem(sem, op))}"
                      + (" imm=1" if gather else ""), op)
            return
        if name == "tpu.fetch_and_add_sync":
            ops = list(op.operands)
            base, idx, val, who = ops[0], ops[1:-2], ops[-2], ops[-1]
            vw = self.view(self.mem(base, op), [("int", f"%{self.reg(v, op)}", 1) for v in idx]) \
                if idx else self.view(self.mem(base, op))
            d = self.new_reg(res[0])
            self.emit(f"%{d} = tpu.fetch_and_add_sync a=%{self.reg(val, op)} "
                      f"b=%{self.reg(who, op)} v={vw}", op, True)
            return
        if name in ("tpu.sem_alloc", "memref.alloca"):
            # the same allocation lowered twice (the branches of a cond) is
            # the one ref the program has for it
            key = (str(op.location), str(res[0].type))
            if key in self.allocs:
                self.mems[res[0]] = self.allocs[key]
                return
            self.bind(res[0], op, f"{name} result")
            self.allocs[key] = self.mems[res[0]]
            return
        if name == "tpu.region":
            self.block(op.regions[0].blocks[0])
            return
        if name == "scf.for":
            self.scf_for(op)
            return
        if name == "scf.if":
            self.scf_if(op)
            return
        if name == "scf.while":
            self.scf_while(op)
            return
        if name == "vector.extract_strided_slice":
            shape, _ = _vtype(op.operands[0].type)
            nums = {k: _ints(op.attributes[k]) for k in ("offsets", "sizes", "strides")}
            if len(shape) != 1 or nums["strides"] != [1]:
                raise self.fail(op, "vector.extract_strided_slice: only a unit-stride slice of a 1-D "
                                    "vector is inside the subset")
            if nums["sizes"] != [1]:  # a run of lanes: the ISA's slice along dimension 0
                a = self.flat(op.operands[0], op)
                d = self.new_reg(res[0])
                self.emit(f"%{d} = vector.extract_strided_slice a=%{a} imm={nums['offsets'][0]} "
                          f"shape=({nums['sizes'][0]})", op)
                return
            d = self.new_reg(res[0])
            idx, flat = [], nums["offsets"][0]  # the element in the register's own shape
            for n in reversed(self.shape_of(op.operands[0])):
                idx.insert(0, flat % n)
                flat //= n
            self.emit(f"%{d} = vector.extract a=%{self.reg(op.operands[0], op)} "
                      f"shape=({','.join(map(str, idx))})", op)
            return
        if name == "vector.extract":
            if len(list(op.operands)) != 1:
                raise self.fail(op, "vector.extract: a dynamic position is outside the subset")
            pos = _ints(op.attributes["static_position"])
            shape, _ = _vtype(op.operands[0].type)
            a = self.reg(op.operands[0], op)
            d = self.new_reg(res[0])
            if all(n == 1 for n in shape) and not any(pos):
                self.emit(f"%{d} = sc.mov a=%{a}", op)
            else:
                self.emit(f"%{d} = vector.extract a=%{a} shape=({','.join(map(str, pos))})", op)
            return
        if name in _VALUE_OPS:
            self.value_op(op)
            return
        raise self.fail(op, f"operation {name} is outside the subset sc-sim reads")

    def value_op(self, op: Any) -> None:
        """The register ops sc-sim's ISA has under another name or form:
        vector.bitcast, math.*, arith.fptoui, tpu.dynamic_gather,
        tpu.concatenate, tpu.scan, tpu.all_reduce, tpu.log."""
        name = op.name
        res = list(op.results)
        ops = list(op.operands)
        if name == "tpu.log":
            self.known_attrs(op, {"formatted", "tag"})
            if len(ops) > 1:
                raise self.fail(op, "tpu.log: more than one input is outside the subset")
            a = f" a=%{self.reg(ops[0], op)}" if ops else ""
            self.emit(f"tpu.log{a}", op, True)
            return
        if name == "tpu.sort":  # keys, values, mask -> out mask, sorted keys, sorted values
            self.known_attrs(op, {"descending"})
            if len(ops) != 3 or ops[1] != ops[0]:
                raise self.fail(op, "tpu.sort: values other than the keys are outside the subset")
            d = self.new_reg()
            imm = " imm=1" if self.flag(op, "descending") else ""
            self.emit(f"%{d} = tpu.sort a=%{self.reg(ops[0], op)} mask=%{self.reg(ops[2], op)}{imm} "
                      f"ty={self.dtype_of(res[1].type, op)}", op)
            self.regs[res[1]] = self.regs[res[2]] = d  # the output mask: not read
            return
        ty = self.dtype_of(res[0].type, op)
        d = self.new_reg()
        if name in ("vector.bitcast", "math.exp", "math.absi", "math.absf", "arith.fptoui"):
            self.known_attrs(op, {"fastmath"})
            mn = {"vector.bitcast": "tpu.bitcast", "arith.fptoui": "arith.convert"}.get(name, name)
            if name == "arith.fptoui":  # to uintN: the value is the unsigned integer
                ty = _UTYPE.get(ty, ty)
            self.emit(f"%{d} = {mn} a=%{self.reg(ops[0], op)} ty={ty}", op)
        elif name == "tpu.dynamic_gather":
            self.known_attrs(op, {"dimensions"})
            if _ints(op.attributes["dimensions"]) != [0] or len(_vtype(res[0].type)[0]) != 1:
                raise self.fail(op, "tpu.dynamic_gather: only dimension 0 of a 1-D vector is inside the subset")
            a, b = (self.flat(v, op) for v in ops)
            self.emit(f"%{d} = tpu.dynamic_gather a=%{a} b=%{b} ty={ty}", op)
        elif name == "tpu.concatenate":
            self.known_attrs(op, {"dimension"})
            if int(str(op.attributes["dimension"]).split(":")[0]) != 0 or len(_vtype(res[0].type)[0]) != 1:
                raise self.fail(op, "tpu.concatenate: only dimension 0 of 1-D vectors is inside the subset")
            srcs = [self.flat(v, op) for v in ops]
            first = self.nreg
            for r in srcs:  # the operands, a run a..a+imm-1
                self.emit(f"%{self.new_reg()} = sc.mov a=%{r}", op)
            self.emit(f"%{d} = tpu.concatenate a=%{first} imm={len(srcs)} ty={ty}", op)
        elif name == "tpu.scan":
            self.known_attrs(op, {"kind"})
            kind = re.search(r"<(\w+)>", str(op.attributes["kind"])).group(1)
            if kind not in _SCAN or len(ops) != 2:
                raise self.fail(op, f"tpu.scan: kind {kind} is outside the subset")
            self.emit(f"%{d} = tpu.scan a=%{self.reg(ops[0], op)} mask=%{self.reg(ops[1], op)} "
                      f"imm={_SCAN[kind]} ty={ty}", op)
        else:  # tpu.all_reduce
            self.known_attrs(op, {"dim", "kind"})
            kind = re.search(r"<(\w+)>", str(op.attributes["kind"])).group(1)
            if kind not in _ALL_REDUCE or int(str(op.attributes["dim"]).split(":")[0]) != 0:
                raise self.fail(op, f"tpu.all_reduce: kind {kind} is outside the subset")
            shape, _ = _vtype(res[0].type)
            self.emit(f"%{d} = tpu.all_reduce a=%{self.flat(ops[0], op)} imm={_ALL_REDUCE[kind]} "
                      f"shape=({','.join(map(str, shape))})", op)
        self.regs[res[0]] = d

    def flat(self, value: Any, op: Any) -> int:
        """The register of a 1-D value, shape-cast to its MLIR shape when
        sc-sim's register kept another (vector.shape_cast is a move)."""
        r = self.reg(value, op)
        shape = _vtype(value.type)[0]
        if self.shape_of(value) == shape:
            return r
        f = self.new_reg()
        self.emit(f"%{f} = vector.shape_cast a=%{r} ty={self.dtype_of(value.type, op)} "
                  f"shape=({','.join(map(str, shape))})", op)
        return f

    def iota(self, op: Any) -> None:
        """tpu.iota along dimensions [k]: 1-D is tpu.iota; on a shape of
        rank r it is (flat iota // stride_k) % shape[k], shape-cast to the
        shape (strides row-major)."""
        self.known_attrs(op, {"dimensions"})
        res = op.results[0]
        shape, _ = _vtype(res.type)
        ty = self.dtype_of(res.type, op)
        dims = _ints(op.attributes["dimensions"]) if "dimensions" in op.attributes else [0]
        if len(dims) != 1 or not 0 <= dims[0] < len(shape) or ty.startswith(("float", "bfloat")):
            raise self.fail(op, f"tpu.iota: dimensions {dims} of {res.type} are outside the subset "
                                f"(one dimension of an integer vector)")
        n, k = 1, dims[0]
        for m in shape:
            n *= m
        stride = 1
        for m in shape[k + 1:]:
            stride *= m
        flat = self.new_reg()
        self.emit(f"%{flat} = tpu.iota imm={n}", op)
        val = flat
        for sym, c in (("//", stride), ("%", shape[k])):
            if len(shape) == 1:
                break
            cr, cv, q = self.new_reg(), self.new_reg(), self.new_reg()
            self.emit(f"%{cr} = arith.constant imm={c} ty=int32", op)
            self.emit(f"%{cv} = vector.broadcast a=%{cr} ty=int32 shape=({n})", op)
            self.emit(f'%{q} = arith.binary a=%{val} b=%{cv} op="{sym}" ty=int32 uty=int32', op)
            val = q
        if len(shape) > 1:
            q = self.new_reg()
            self.emit(f"%{q} = vector.shape_cast a=%{val} ty=int32 shape=({','.join(map(str, shape))})", op)
            val = q
        if ty != "int32":
            q = self.new_reg()
            self.emit(f"%{q} = arith.convert a=%{val} ty={ty}", op)
            val = q
        self.regs[res] = val

    def _optional(self, slot: tuple[int, str, str], lines: set[int],
                  mem_at: dict[tuple[int, int], list[int]]) -> bool:
        """A result that may go unpaired: its Python line has no code in the
        module, or its location has no memory instruction."""
        py = self.ops[slot[0]].py
        return py is not None and (py[0] not in lines or (bool(mem_at) and py not in mem_at))

    def bitcast_dtype(self, op: Any, ref: str, dtype: str) -> str:
        """dtype (signless: intN), or uintN when the program's bitcast at
        the op's Python location (else of the same ref) is to uintN only."""
        u = _UTYPE.get(dtype)
        if u is None:
            return dtype
        loc = py_loc(op.location)
        for cands in (self.bitcasts[0].get(loc) if loc else None, self.bitcasts[1].get(ref)):
            if cands and u in cands and dtype not in cands:
                return u
            if cands and dtype in cands:
                return dtype
        return dtype

    def pair(self, ks: list[int], slots: list[tuple[int, str, str]],
             optional: list[bool] | None = None) -> dict[int, tuple[int, str]] | None:
        """Memory instructions (code order) paired with the program's logged
        results (in order) of the same mnemonic; an instruction whose
        mnemonic is not the next slot's logs nothing, an optional slot may
        go unpaired.  None unless every other slot is paired."""
        out: dict[int, tuple[int, str]] = {}
        j = 0
        opt = optional or [False] * len(slots)
        for k in ks:
            mn = self.mnemonic(k)
            i = j  # the next slot of this mnemonic, past optional slots only
            while i < len(slots) and slots[i][2] != mn and opt[i]:
                i += 1
            if i < len(slots) and slots[i][2] == mn:
                out[k] = (slots[i][0], slots[i][1])
                j = i + 1
        return out if all(opt[j:]) else None

    def shape_of(self, value: Any) -> list[int]:
        """The shape sc-sim's register of value has (shape casts keep it)."""
        return self.simshape.get(value) or _vtype(value.type)[0]

    def mnemonic(self, k: int) -> str:
        return re.match(r"(?:%\d+ = )?(\S+)", self.code[k][0]).group(1)

    def known_attrs(self, op: Any, known: set[str]) -> None:
        for a in op.attributes:
            key = a if isinstance(a, str) else a.name
            if key not in known:
                raise self.fail(op, f"{op.name}: attribute {key} is outside the subset")

    def flag(self, op: Any, key: str) -> bool:
        return key in op.attributes and str(op.attributes[key]) == "true"

    def trunc_div(self, d: int, a: int, b: int, ty: str, rem: bool, op: Any) -> None:
        """arith.divsi / remsi (toward zero) from floor division: q = a // b,
        plus one when the remainder is non-zero and the signs differ."""
        q, r, z, sa, sb, ne, fix, one, zero, inc = (self.new_reg() for _ in range(10))
        self.emit(f'%{q} = arith.binary a=%{a} b=%{b} op="//" ty={ty} uty={ty}', op)
        self.emit(f'%{r} = arith.binary a=%{a} b=%{b} op="%" ty={ty} uty={ty}', op)
        self.emit(f"%{zero} = arith.constant imm=0 ty={ty}", op)
        self.emit(f"%{one} = arith.constant imm=1 ty={ty}", op)
        self.emit(f'%{z} = arith.binary a=%{r} b=%{zero} op="!=" ty=bool uty={ty}', op)
        self.emit(f'%{sa} = arith.binary a=%{a} b=%{zero} op="<" ty=bool uty={ty}', op)
        self.emit(f'%{sb} = arith.binary a=%{b} b=%{zero} op="<" ty=bool uty={ty}', op)
        self.emit(f'%{ne} = arith.binary a=%{sa} b=%{sb} op="!=" ty=bool uty=bool', op)
        self.emit(f'%{fix} = arith.binary a=%{z} b=%{ne} op="&" ty=bool uty=bool', op)
        self.emit(f"%{inc} = arith.select a=%{fix} b=%{one} c=%{zero} ty={ty} uty={ty}", op)
        if not rem:
            self.emit(f'%{d} = arith.binary a=%{q} b=%{inc} op="+" ty={ty} uty={ty}', op)
            return
        qt, m = self.new_reg(), self.new_reg()
        self.emit(f'%{qt} = arith.binary a=%{q} b=%{inc} op="+" ty={ty} uty={ty}', op)
        self.emit(f'%{m} = arith.binary a=%{qt} b=%{b} op="*" ty={ty} uty={ty}', op)
        self.emit(f'%{d} = arith.binary a=%{a} b=%{m} op="-" ty={ty} uty={ty}', op)

    def moves(self, dsts: list[int], srcs: list[int], op: Any) -> None:
        tmps = []
        for s in srcs:
            t = self.new_reg()
            self.emit(f"%{t} = sc.mov a=%{s}", op)
            tmps.append(t)
        for d, t in zip(dsts, tmps):
            self.emit(f"%{d} = sc.mov a=%{t}", op)

    def scf_for(self, op: Any) -> None:
        ops = list(op.operands)
        lo, hi, step = (self.reg(v, op) for v in ops[:3])
        inits = [self.reg(v, op) for v in ops[3:]]
        body = op.regions[0].blocks[0]
        bargs = list(body.arguments)
        carries = [self.new_reg(a) for a in bargs[1:]]
        for r, c in zip(op.results, carries):
            self.regs[r] = c
        self.moves(carries, inits, op)
        iv = self.new_reg(bargs[0])
        head = self.emit("", op)
        start = len(self.code)
        for o in body.operations:
            if o.operation.name == "scf.yield":
                self.moves(carries, [self.reg(v, o.operation) for v in o.operation.operands], o.operation)
            else:
                self.op(o.operation)
        self.emit(f"%{iv} = scf.yield b=%{hi} c=%{step} target=@{start}", op)
        self.code[head][0] = f"%{iv} = scf.for a=%{lo} b=%{hi} c=%{step} target=@{len(self.code)}"

    def scf_while(self, op: Any) -> None:
        """before region (ends in scf.condition), after region (ends in
        scf.yield): carries := inits; TOP: before; results := condition's
        values; if not cond: exit; after; carries := yielded; jump TOP."""
        inits = [self.reg(v, op) for v in op.operands]
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        carries = [self.new_reg(a) for a in before.arguments]
        outs = [self.new_reg(r) for r in op.results]
        for a, r in zip(after.arguments, outs):
            self.regs[a] = r
        self.moves(carries, inits, op)
        top = len(self.code)
        exit_at = None
        for o in before.operations:
            o = o.operation
            if o.name == "scf.condition":
                vals = list(o.operands)
                self.moves(outs, [self.reg(v, o) for v in vals[1:]], o)
                exit_at = self.emit("", o)
                cond = self.reg(vals[0], o)
            else:
                self.op(o)
        for o in after.operations:
            o = o.operation
            if o.name == "scf.yield":
                self.moves(carries, [self.reg(v, o) for v in o.operands], o)
            else:
                self.op(o)
        self.emit(f"cf.br target=@{top}", op)
        if exit_at is None:
            raise self.fail(op, "scf.while: the before region has no scf.condition")
        self.code[exit_at][0] = f"scf.if a=%{cond} target=@{len(self.code)}"

    def scf_if(self, op: Any) -> None:
        cond = self.reg(op.operands[0], op)
        outs = [self.new_reg(r) for r in op.results]
        br = self.emit("", op)
        def region(k: int) -> None:
            if len(op.regions) <= k or not op.regions[k].blocks:
                return
            for o in op.regions[k].blocks[0].operations:
                if o.operation.name == "scf.yield":
                    self.moves(outs, [self.reg(v, o.operation) for v in o.operation.operands], o.operation)
                else:
                    self.op(o.operation)
        region(0)
        jump = self.emit("", op)
        self.code[br][0] = f"scf.if a=%{cond} target=@{len(self.code)}"
        region(1)
        self.code[jump][0] = f"cf.br target=@{len(self.code)}"

    # -- matching and printing ----------------------------------------------

    def finish(self) -> str:
        # run_scoped allocations of code JAX left out (a branch it resolved
        # statically) have no allocation in the module
        self.unbound = [r for r in self.unbound if not re.fullmatch(r"scoped\d+", r["name"])]
        if self.unbound:
            names = ", ".join(r["name"] for r in self.unbound)
            raise MosaicInputError(f"the program's refs {names} are bound to no argument "
                                   f"or allocation of the module", 0, 0)
        by_loc: dict[tuple[int, int], list[ProgOp]] = {}
        by_line: dict[int, list[ProgOp]] = {}
        for p in sorted(self.ops.values(), key=lambda p: p.id):
            if p.py:
                by_loc.setdefault(p.py, []).append(p)
                by_line.setdefault(p.py[0], []).append(p)
        # memory ops per Python location, paired in order with the logs
        mem_at: dict[tuple[int, int], list[int]] = {}
        for k, (_, loc, memory, _) in enumerate(self.code):
            if memory and loc:
                mem_at.setdefault(loc, []).append(k)
        logs: dict[int, tuple[int, str]] = {}
        loggable = {mn for p in self.ops.values() for _, mn in p.logs}
        # a result at a location with no memory instruction is of code JAX
        # left out (a branch it resolved statically): it is not wanted
        lines = {c[1][0] for c in self.code if c[1]}
        rest_ks = [k for k, c in enumerate(self.code) if c[2] and not c[1]]
        used: set[tuple[int, str, str]] = set()
        for loc, ks in mem_at.items():
            slots = [(p.id, g, mn) for p in by_loc.get(loc, []) for g, mn in p.logs]
            got = self.pair(ks, slots) if slots else None
            if got is None:
                rest_ks += ks
                continue
            logs.update(got)
            used.update(slots)
        self.matched = True
        # memory instructions at the location of a program op with a body
        # (JAX puts a plsc.parallel_loop's body at the loop's location) pair
        # in order with the results of that body left unpaired
        groups: dict[tuple[int, int], list[int]] = {}
        for k in rest_ks:
            groups.setdefault(self.code[k][1], []).append(k)
        for loc, ks in groups.items():
            heads = [p for p in by_loc.get(loc, []) if p.block[1] > p.block[0]] if loc else []
            inner = [(q.id, g, mn) for q in sorted(self.ops.values(), key=lambda q: q.id)
                     if any(h.block[0] < int(q.at.split(":")[0]) <= h.block[1] for h in heads)
                     for g, mn in q.logs if (q.id, g, mn) not in used]
            got = self.pair(ks, inner) if inner else None
            if got is None:
                if any(self.mnemonic(k) in loggable for k in ks):
                    self.matched = False
                continue
            logs.update(got)
            used.update(inner)
        if not self.matched:  # by order: memory ops in code order, logs in program order
            ks = [k for k, c in enumerate(self.code) if c[2]]
            slots = [(p.id, g, mn) for p in sorted(self.ops.values(), key=lambda p: p.id)
                     for g, mn in p.logs]
            optional = [self._optional(sl, lines, {}) for sl in slots]
            got = self.pair(ks, slots)
            if got is None:
                got = self.pair(ks, slots, optional)
            if got is None:  # without the results of lines the module has no code of
                got = self.pair(ks, [sl for sl, o in zip(slots, optional) if not o])
            self.matched = got is not None
            logs = got or {}
        first = min(self.ops) if self.ops else 0
        out = [f"# sc-sim lowered code read from the Mosaic module {os.path.basename(self.name)}"
               + ("" if self.matched else " (values unmatched: final memory only)")]
        out += self.views
        last = (self.ops[first].at, first) if self.ops else ("0:0", 0)
        for k, (txt, loc, memory, op) in enumerate(self.code):
            txt = re.sub(r"target=@(\d+)", r"target=\1", txt)
            p = None
            if loc:
                cands = by_loc.get(loc) or by_line.get(loc[0])
                if cands:
                    p = cands[0]
            if k in logs and self.matched:
                p = self.ops[logs[k][0]]
                txt += f" log={logs[k][1]}"
            if p is not None:
                last = (p.at, p.id)
            line, col = self.at(op) if op is not None else (0, 0)
            out.append(f"# {os.path.basename(self.name)}:{line}:{col}")
            out.append(f"{k}: {txt} at={last[0]} id={last[1]}")
        return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Running it.

def _kernel_kind(program: str) -> str:
    with open(program) as f:
        m = re.search(r"^kernel:\s*\"?(\w+)", f.read(), re.M)
    return m.group(1) if m else "vector_subcore"


def lowered_text(mlir_text: str, program: str, mlir_name: str = "kernel.mlir") -> str:
    """sc-sim's lowered text of the module, bound to the program's refs."""
    own = subprocess.run([binary.find_binary(), "lower", program], capture_output=True, text=True)
    if own.returncode != 0:
        raise MosaicInputError(f"sc-sim cannot lower the program {program}: "
                               f"{own.stderr.strip()}")
    reader = Reader(mlir_text, mlir_name)
    with reader.ctx:
        return reader.translate(program_refs(program), program_ops(program, own.stdout),
                                _kernel_kind(program), program_bitcasts(program))


def with_lowered(program: str, text: str, out: str) -> None:
    """Write `program` with `lowered:` set to text at path out."""
    with open(program) as f:
        src = f.read()
    src = re.sub(r"^lowered:.*?(?=^\S)", "", src + "\n", flags=re.S | re.M)
    block = "lowered: |\n" + "".join(f"  {ln}\n" for ln in text.splitlines())
    with open(out, "w") as f:
        f.write(src.rstrip("\n") + "\n" + block)


def use_module(mlir_text: str, program: str) -> None:
    """Rewrite `program` in place so that sc-sim runs JAX's module (its
    `lowered:` text) instead of its own lowering; MosaicInputError is an
    UnsupportedError for the front end."""
    from .errors import UnsupportedError
    dump = os.environ.get("SC_SIM_MOSAIC_DUMP")  # keep every module read (debugging)
    if dump:
        os.makedirs(dump, exist_ok=True)
        name = os.path.basename(program)[:-5]
        with open(os.path.join(dump, f"{name}.{os.getpid()}.{len(os.listdir(dump))}.mlir"), "w") as f:
            f.write(mlir_text)
    try:
        text = lowered_text(mlir_text, program, "kernel.mlir")
    except MosaicInputError as exc:
        raise UnsupportedError(f"JAX's Mosaic module: {exc.line}:{exc.col}: "
                               f"{exc.message}") from None
    with_lowered(program, text, program)


def main(argv: list[str]) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m sc_sim mosaic",
                                 description="run JAX's Mosaic module on sc-sim's engine, "
                                             "verified against the program's reference")
    ap.add_argument("mlir")
    ap.add_argument("program")
    ap.add_argument("-o", "--output", help="where to write the program with its lowered: "
                                           "text (default: PROGRAM.jax.yaml beside it)")
    ap.add_argument("--print", action="store_true", help="print the lowered text and stop")
    a, rest = ap.parse_known_args(argv)
    a.rest = rest
    try:
        with open(a.mlir) as f:
            mtext = f.read()
    except OSError as exc:
        print(f"{a.mlir}: error: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        text = lowered_text(mtext, a.program, a.mlir)
    except MosaicInputError as exc:
        print(f"{a.mlir}:{exc.line}:{exc.col}: error: {exc.message}", file=sys.stderr)
        return 2
    if a.print:
        sys.stdout.write(text)
        return 0
    base = a.program[:-5] if a.program.endswith(".yaml") else a.program
    out = a.output or base + ".jax.yaml"
    with_lowered(a.program, text, out)
    return subprocess.run([binary.find_binary(), "run", out] + a.rest).returncode
