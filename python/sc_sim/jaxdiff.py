"""A differential campaign: JAX's own SparseCore lowering against sc-sim's
checker, on generated one-operation Pallas kernels.

    python -m sc_sim.jaxdiff --seed S --count N [--chip tpu7x] [--out DIR]

Each kernel is traced by JAX (an error there is JAX's alone: phase T, not
compared), translated to an sc-sim program, then judged by JAX's lowering
(`verdict_for_call`) and by sc-sim's checker (`sc-sim check`).  Agreement
means the same accept/reject, exception type and message.  Disagreements
are saved under DIR with the program and the kernel's description.

With --rules the programs are varied from the goldens of each rule id of
the catalogue (sc_sim.jaxdiff_rules): the table is by rule id, with the
coverage of the reachable ids.

With --fuzz the kernels are the C fuzz generator's programs
(`sc-sim fuzz --seed S --count N --show I`), emitted as Pallas by
`sc-sim emit-pallas --legality` (inits dropped: no rule reads them) and
judged by JAX (`jax_verdict`) and by `sc-sim check --json` on the program
itself; the table is by sc-sim's rule id.
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import random
import sys
import warnings
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

from . import api, chips
from . import shard as _shard
from .errors import InvalidProgramError, UnsupportedError
from .program import render
from .translate import find_kernel_eqns
from .verdict import agrees, normalize, verdict_for_call

_SPACES = ("vmem", "smem", "vmem_shared")
_DTYPES = (jnp.int32, jnp.float32, jnp.int16, jnp.bfloat16, jnp.int8)


@dataclasses.dataclass
class Case:
    """One generated kernel: a description and a builder."""
    desc: str
    build: Callable[[], Callable[..., Any]]
    args: tuple


def _space(name: str, shape: tuple, dtype: Any) -> Any:
    return {"vmem": pltpu.VMEM, "smem": pltpu.SMEM,
            "vmem_shared": pltpu.VMEM_SHARED}[name](shape, dtype)


def _shape(rng: random.Random, lanes: int) -> tuple:
    return rng.choice([(), (lanes,), (2 * lanes,), (lanes // 2,), (2, lanes),
                       (4, 2 * lanes), (lanes, lanes), (8,)])


def _indexer(rng: random.Random, shape: tuple, lanes: int) -> tuple[str, Any]:
    """A random static indexer for `shape`: its text and the index."""
    if not shape:
        return "[...]", ...
    kind = rng.choice(["full", "ds", "int", "strided", "int_then_full"])
    if kind == "full":
        return "[...]", ...
    if kind == "int" or (kind == "int_then_full" and len(shape) == 1):
        idx = tuple(rng.randrange(max(d, 1)) for d in shape)
        return f"[{', '.join(map(str, idx))}]", idx
    if kind == "int_then_full":
        i = rng.randrange(shape[0])
        return f"[{i}]", (i,)
    size = rng.choice([1, lanes // 2, lanes, 2 * lanes])
    size = min(size, shape[-1])
    start = rng.randrange(0, shape[-1] - size + 1)
    if kind == "strided" and shape[-1] >= 2 * size:
        ds = pl.ds(start % 2, size, 2)
        text = f"pl.ds({start % 2}, {size}, 2)"
    else:
        ds = pl.ds(start, size)
        text = f"pl.ds({start}, {size})"
    lead = tuple(0 for _ in shape[:-1])
    return f"[{', '.join([*map(str, lead), text])}]", (*lead, ds)


def generate(rng: random.Random, lanes: int, gaps: bool = True) -> Case:
    """One kernel with one scratch ref and one operation on it.  With
    `gaps`, also the constructs whose Mosaic verifier rules sc-sim does not
    model yet: bitcast and reshape views of the ref, 16-bit DMA offsets."""
    space = rng.choice(_SPACES)
    dtype = rng.choice(_DTYPES)
    shape = _shape(rng, lanes)
    if space == "smem" and shape and rng.random() < 0.5:
        shape = (4,)
    op = rng.choice(["get", "swap", "gather", "scatter", "expand", "compress",
                     "addupdate", "iota", "dma", "indirect", "fetch_and_add"])
    text, idx = _indexer(rng, shape, lanes)
    width = rng.choice([lanes, 2 * lanes, lanes // 2])
    name = jnp.dtype(dtype).name
    scalar_mesh = rng.random() < 0.15
    dynamic = rng.random() < 0.2 and isinstance(idx, tuple) and idx \
        and isinstance(idx[-1], pl.Slice)
    strict = rng.random() < 0.3  # needs_layout_passes=False: shape checks run
    view_kind = rng.choice([None] * 8 + ["bitcast", "reshape"])
    if not gaps:
        view_kind = None
    view_to = rng.choice([jnp.int32, jnp.int16, jnp.float32, jnp.int8])
    desc = f"{op} on {space} {name}{list(shape)} {text} width={width}"
    if scalar_mesh:
        desc = "scalar-subcore " + desc
    if dynamic:
        desc += " (dynamic start)"
    if strict:
        desc += " [needs_layout_passes=False]"
    if view_kind:
        desc += f" .{view_kind}({jnp.dtype(view_to).name if view_kind == 'bitcast' else 'flat'})"
    scratch = [_space(space, shape, dtype)]
    space2 = "hbm"
    if op == "dma":
        space2 = rng.choice(_SPACES + ("hbm",))
        scratch.append(pltpu.SemaphoreType.DMA)
        desc = f"dma {space}{text} -> {space2} {name}{list(shape)}"
        if view_kind:
            desc += f" .{view_kind}"
    if op == "indirect":
        # rows of an HBM table gathered by an index ref into `ref`
        n = rng.choice([lanes, lanes // 2, 2 * lanes])
        ispace = rng.choice(_SPACES)
        idtype = rng.choice([jnp.int32, jnp.int32, jnp.int16])
        if not gaps:
            idtype = jnp.int32
        scratch.append(_space(ispace, (n,), idtype))
        scratch.append(pltpu.SemaphoreType.DMA)
        add = rng.random() < 0.2
        scatter = rng.random() < 0.3
        desc = (f"indirect {'scatter' if scatter else 'gather'}{' add' if add else ''} "
                f"{space} {name}{list(shape)} by {ispace} "
                f"{jnp.dtype(idtype).name}[{n}]")

    def build() -> Callable[..., Any]:
        if scalar_mesh:
            mesh = plsc.ScalarSubcoreMesh(axis_name="c", num_cores=1)
        else:
            mesh = plsc.VectorSubcoreMesh(core_axis_name="c", subcore_axis_name="s",
                                          num_cores=1, num_subcores=1)
        extra = [] if op != "dma" or space2 == "hbm" else [_space(space2, shape, dtype)]

        params = pltpu.CompilerParams(needs_layout_passes=False) if strict else None

        @pl.kernel(out_type=jax.ShapeDtypeStruct(shape or (1,), dtype), mesh=mesh,
                   scratch_types=scratch + extra, compiler_params=params)
        def kernel(o_hbm, ref, *rest):
            nonlocal idx
            if view_kind == "bitcast":
                ref = ref.bitcast(view_to)
            elif view_kind == "reshape":
                ref = ref.reshape(int(np.prod(shape)) if shape else 1)
            if dynamic:
                sl = idx[-1]
                idx = (*idx[:-1], pl.ds(jax.lax.axis_index("c") * 0 + sl.start,
                                        sl.size, sl.stride))
            view = ref.at[idx] if idx is not ... else ref.at[...]
            if op == "get":
                v = ref[idx]
                del v
            elif op == "swap":
                ref[idx] = jnp.zeros(view.shape, dtype)
            elif op == "gather":
                plsc.load_gather(ref, [jax.lax.iota(jnp.int32, width)] * max(ref.ndim, 1))
            elif op == "scatter":
                plsc.store_scatter(ref, [jax.lax.iota(jnp.int32, width)] * max(ref.ndim, 1),
                                   jnp.zeros((width,), dtype))
            elif op == "expand":
                plsc.load_expanded(view, mask=jnp.ones(view.shape, jnp.bool_))
            elif op == "compress":
                plsc.store_compressed(view, jnp.zeros(view.shape, dtype),
                                      mask=jnp.ones(view.shape, jnp.bool_))
            elif op == "addupdate":
                plsc.addupdate(view, jnp.zeros(view.shape, dtype))
            elif op == "iota":
                ref[idx] = jax.lax.iota(jnp.int32, width).astype(dtype)
            elif op == "indirect":
                idx_ref, sem = rest[0], rest[1]
                table = o_hbm
                if scatter:
                    pltpu.async_copy(ref, table.at[idx_ref], sem, add=add).wait()
                else:
                    pltpu.async_copy(table.at[idx_ref], ref, sem, add=add).wait()
            elif op == "fetch_and_add":
                target = ref.at[idx] if idx is not ... else ref
                plsc.fetch_and_add(target, jnp.ones((), dtype), subcore_id=0)
            else:
                sem = rest[0]
                dst = o_hbm if space2 == "hbm" else rest[1]
                pltpu.async_copy(view, dst.at[idx] if idx is not ... else dst, sem).wait()
        return kernel
    return Case(desc, build, ())


@dataclasses.dataclass
class Outcome:
    kind: str            # agree-accept, agree-reject, disagree, phase-T, unsupported
    jax: str = ""
    sc: str = ""


def judge(case: Case, chip: str) -> tuple[Outcome, str | None]:
    """Both verdicts on one case, and the program text."""
    with api.chip_scope(chip):
        try:
            fn = case.build()
            jaxpr = jax.make_jaxpr(fn)(*case.args)
        except Exception as exc:  # JAX's tracing (phase T): JAX's alone
            return Outcome("phase-T", f"{type(exc).__name__}: {exc}"), None
        eqn = find_kernel_eqns(jaxpr.jaxpr)[0]
        try:
            prep = api.prepare(eqn.params, chip, len(eqn.invars))
            mine = api.sc_verdict(prep, api.Options(chip=chip, jax_check=False))
        except UnsupportedError as exc:
            return Outcome("unsupported", sc=str(exc)), None
        except InvalidProgramError as exc:  # the format cannot say it
            jv = verdict_for_call(eqn.params, [v.aval for v in eqn.invars])
            theirs = "accepted" if jv.accepted else f"{jv.type}: {normalize(jv.message)}"
            return Outcome("invalid", theirs, str(exc)), None
        text, _ = render(prep.info.program)
        jv = verdict_for_call(eqn.params, [v.aval for v in eqn.invars])
    theirs = "accepted" if jv.accepted else f"{jv.type}: {normalize(jv.message)}"
    ours = "accepted" if mine is None else f"{type(mine).__name__}: {mine}"
    if agrees(mine, jv):
        return Outcome("agree-accept" if jv.accepted else "agree-reject", theirs, ours), text
    return Outcome("disagree", theirs, ours), text


def campaign(seed: int, count: int, chip: str, gaps: bool = True
             ) -> tuple[collections.Counter, list]:
    """Outcome counts and the disagreements (index, description, outcome,
    program) of `count` generated kernels."""
    lanes = {"tpu_v5p": 8, "tpu_v6e": 8, "tpu7x": 16}[chips.resolve(chip).preset]
    rng = random.Random(seed)
    counts: collections.Counter = collections.Counter()
    bad = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(count):
            case = generate(rng, lanes, gaps)
            outcome, text = judge(case, chip)
            counts[outcome.kind] += 1
            if outcome.kind == "disagree":
                bad.append((k, case.desc, outcome, text))
    return counts, bad


# JAX's answers that say the emitted kernel could not be judged, not what
# JAX thinks of the program: a chip the front end has no mesh for, a list
# literal captured as a constant (the emitter writes jnp.array).
_NOT_EXPRESSED = ("sc_sim runs SparseCore kernels on", "captures non-Ref constants")


def fuzz_case(seed: int, count: int, k: int, folder: str) -> tuple[str, str, str, str]:
    """Program k of the C campaign (seed, count): (outcome, rule id,
    sc-sim's verdict, JAX's verdict); outcome is agree, disagree or
    cannot (emit-pallas refused the program or sc-sim rejects it as input)."""
    import subprocess
    from .binary import find_binary
    from .jaxdiff_rules import _chip, jax_judge, check as _sc_check
    binary = find_binary()
    prog = os.path.join(folder, f"fuzz{k}.yaml")
    text = subprocess.run([binary, "fuzz", "--seed", str(seed), "--count", str(count), "--show", str(k)],
                          capture_output=True, text=True).stdout
    with open(prog, "w") as f:
        f.write(text)
    code, rule, ours = _sc_check(prog)
    r = subprocess.run([binary, "emit-pallas", "--legality", prog], capture_output=True, text=True)
    if code == 2 or r.returncode:
        return "cannot", rule, ours, r.stderr.strip()[:200]
    try:  # under the chip's abstract device: also the chips the front end does not run (tpu8i)
        accepted, typ, msg = jax_judge(r.stdout, _chip(text) or "tpu7x")
    except Exception as exc:  # noqa: BLE001 -- JAX's verdict, whatever it raises
        accepted, typ, msg = False, type(exc).__name__, str(exc)
    if isinstance(msg, str):
        msg = msg.splitlines()[0] if msg else ""
    if msg and any(k in msg for k in _NOT_EXPRESSED):
        return "cannot", rule, ours, f"{typ}: {msg}"
    theirs = "" if accepted else f"{typ}: {normalize(msg)}"
    if typ == "MosaicVerificationError":
        theirs = "VerificationError: " + normalize(msg)
    same = ours == theirs or (ours.startswith("VerificationError") and theirs.startswith("VerificationError")
                              and normalize(ours) == normalize(theirs))
    return ("agree" if same else "disagree"), rule, ours, theirs


def fuzz_main(seed: int, count: int, out: str | None, shard: tuple[int, int] = (0, 1),
              jsonl: str | None = None) -> int:
    import tempfile
    records = []
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as folder:
        for k in range(count):
            if not _shard.mine(k, shard):
                continue
            outcome, rule, ours, theirs = fuzz_case(seed, count, k, folder)
            records.append({"kind": "jaxdiff", "mode": "fuzz", "seed": seed, "count": count, "index": k,
                            "rule": rule, "outcome": outcome, "ours": ours, "theirs": theirs})
            if outcome == "disagree" and out:
                os.makedirs(out, exist_ok=True)
                import shutil
                shutil.copy(os.path.join(folder, f"fuzz{k}.yaml"), os.path.join(out, f"fuzz{k}.yaml"))
    _write_jsonl(jsonl, records)
    return fuzz_report(seed, count, records)


def fuzz_report(seed: int, count: int, records: list[dict]) -> int:
    """The --fuzz report of a run's (or merged shards') records."""
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    bad = []
    for r in records:
        table[r["rule"]][r["outcome"]] += 1
        if r["outcome"] == "disagree":
            bad.append((r["index"], r["rule"], r["ours"], r["theirs"]))
    print(f"jaxdiff --fuzz: seed {seed}, {count} programs of the C generator")
    print(f"{'rule id':28} {'programs':>8} {'agree':>6} {'disagree':>8} {'cannot':>7}")
    for rule in sorted(table):
        c = table[rule]
        print(f"{rule:28} {sum(c.values()):8} {c['agree']:6} {c['disagree']:8} {c['cannot']:7}")
    for k, rule, ours, theirs in bad[:20]:
        print(f"program {k} ({rule}):\n  sc-sim: {ours or 'accepted'}\n  JAX:    {theirs or 'accepted'}")
    return 1 if bad else 0


def _write_jsonl(path: str | None, records: list[dict]) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")


def merge_main(paths: list[str]) -> int:
    """--merge: the report one unsharded run gives, from the shards' JSON lines."""
    records = _shard.read_lines(paths)
    if not records:
        print("jaxdiff --merge: no JSON lines", file=sys.stderr)
        return 2
    first = records[0]
    keys = ("mode", "seed", "count", "chip")
    if any(tuple(r.get(k) for k in keys) != tuple(first.get(k) for k in keys) for r in records):
        print("jaxdiff --merge: the shards are of different campaigns", file=sys.stderr)
        return 2
    try:
        _shard.check_cover(records, first["count"], "kernel")
    except ValueError as exc:
        print(f"jaxdiff --merge: {exc}", file=sys.stderr)
        return 3
    if first["mode"] == "fuzz":
        return fuzz_report(first["seed"], first["count"], records)
    if first["mode"] == "rules":
        from . import jaxdiff_rules
        return jaxdiff_rules.rules_report(first["seed"], first["count"], records)
    return kernels_report(first["seed"], first["count"], first["chip"], records)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sc_sim.jaxdiff", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--chip", default="tpu7x")
    ap.add_argument("--out", default=None, help="save disagreements here")
    ap.add_argument("--no-gaps", action="store_true",
                    help="leave out bitcast / reshape views and 16-bit DMA offsets "
                    "(Mosaic verifier rules sc-sim does not model yet)")
    ap.add_argument("--fuzz", action="store_true",
                    help="the C fuzz generator's programs, emitted by sc-sim emit-pallas")
    ap.add_argument("--rules", action="store_true",
                    help="programs varied from the golden of each rule id of the catalogue "
                    "(sc_sim.jaxdiff_rules): table by rule id and coverage of the reachable ids")
    ap.add_argument("--ids", default=None, metavar="ID,...", help="with --rules: only these rule ids")
    ap.add_argument("--shard", default=None, metavar="K/N",
                    help="judge only the kernels i with i %% N == K (0 <= K < N); --merge combines the shards")
    ap.add_argument("--jsonl", default=None, metavar="FILE", help="one JSON line per kernel judged")
    ap.add_argument("--merge", nargs="+", default=None, metavar="PATH",
                    help="print the report of the shards' JSON lines (files, or folders of *.jsonl)")
    args = ap.parse_args(argv)
    if args.merge:
        return merge_main(args.merge)
    try:
        shard = _shard.parse_shard(args.shard)
    except ValueError as exc:
        ap.error(str(exc))
    if args.rules:
        from . import jaxdiff_rules
        return jaxdiff_rules.rules_main(args.seed, args.count, args.out, shard, args.jsonl,
                                        args.ids.split(",") if args.ids else None)
    if args.fuzz:
        return fuzz_main(args.seed, args.count, args.out, shard, args.jsonl)
    lanes = {"tpu_v5p": 8, "tpu_v6e": 8, "tpu7x": 16}[chips.resolve(args.chip).preset]
    rng = random.Random(args.seed)
    records = []
    warnings.simplefilter("ignore")
    for k in range(args.count):
        case = generate(rng, lanes, not args.no_gaps)  # every kernel is generated: the rng runs in campaign order
        if not _shard.mine(k, shard):
            continue
        outcome, text = judge(case, args.chip)
        key = outcome.jax.split(":")[0] if outcome.kind != "unsupported" else "unsupported"
        records.append({"kind": "jaxdiff", "mode": "kernels", "seed": args.seed, "count": args.count,
                        "chip": args.chip, "index": k, "key": key or "accepted", "outcome": outcome.kind,
                        "desc": case.desc, "jax": outcome.jax, "sc": outcome.sc})
        if outcome.kind == "disagree" and args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, f"case{k}.yaml"), "w") as f:
                f.write(f"# {case.desc}\n# JAX: {outcome.jax}\n"
                        f"# sc-sim: {outcome.sc}\n{text}")
    _write_jsonl(args.jsonl, records)
    return kernels_report(args.seed, args.count, args.chip, records)


def kernels_report(seed: int, count: int, chip: str, records: list[dict]) -> int:
    """The report of a run's (or merged shards') records."""
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    by_op: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    messages: collections.Counter = collections.Counter()
    invalid: collections.Counter = collections.Counter()
    disagreements = []
    for r in records:
        kind = r["outcome"]
        table[r["key"]][kind] += 1
        by_op[r["desc"].split()[0]][kind] += 1
        if kind in ("agree-reject", "disagree"):
            messages[r["jax"][:90]] += 1
        if kind == "invalid":
            invalid[(r["jax"][:70], r["sc"][:110])] += 1
        if kind == "disagree":
            disagreements.append(r)
    print(f"jaxdiff: seed {seed}, {count} kernels on {chip}")
    print(f"{'JAX verdict':28} {'agree':>6} {'disagree':>8} {'phase-T':>8} {'unsupp.':>8} {'invalid':>8}")
    for key in sorted(table):
        c = table[key]
        print(f"{key:28} {c['agree-accept'] + c['agree-reject']:6} {c['disagree']:8} "
              f"{c['phase-T']:8} {c['unsupported']:8} {c['invalid']:8}")
    print(f"\n{'operation':28} {'agree':>6} {'disagree':>8} {'phase-T':>8} {'unsupp.':>8} {'invalid':>8}")
    for key in sorted(by_op):
        c = by_op[key]
        print(f"{key:28} {c['agree-accept'] + c['agree-reject']:6} {c['disagree']:8} "
              f"{c['phase-T']:8} {c['unsupported']:8} {c['invalid']:8}")
    print("\nrejections compared (JAX's message, first 90 characters):")
    for msg, n in messages.most_common():
        print(f"{n:6}  {msg}")
    if invalid:
        print("\nprograms sc-sim refuses as input (JAX's verdict / sc-sim's message):")
        for (j, m), n in invalid.most_common():
            print(f"{n:6}  JAX {j}\n        sc-sim {m}")
    for r in disagreements[:20]:
        print(f"case {r['index']}: {r['desc']}\n  JAX:    {r['jax']}\n  sc-sim: {r['sc']}")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
