"""The per-rule-id campaign (issue 18): `python -m sc_sim.jaxdiff --rules`.

For each rule id of the catalogue (DIAGS of lowering/diag.h) the programs
of tests/golden and examples/ that sc-sim rejects with that id are the
templates; program k of a campaign takes the catalogue's ids in turn, picks
one of that id's templates and varies it (`mutate`): the chip (one with the
same lane count, or another lane count with the lane-sized numbers scaled),
the mesh within the chip's limits, a valid operation before the body, and
sometimes a number of the body, a ref's dtype, memory space or shape.  Each
variant is judged by `sc-sim check --json` and, emitted by `sc-sim
emit-pallas --legality`, by JAX's own lowering under the chip's abstract
device; the table is by sc-sim's rule id.  Coverage is the reachable ids
(the catalogue less UNREACHABLE) that some program reaches with JAX's
agreement.  A disagreement is saved with its smallest set of mutations
that still disagrees (the shrunk reproducer).
"""
from __future__ import annotations

import collections
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import warnings
from typing import Any

from .binary import find_binary
from .verdict import normalize

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# The catalogue's ids that no Pallas kernel on jax 0.10.2 reaches as such.
UNREACHABLE = {
    "sc-sim": "sc-sim's own error (SPEC §7.4), not a JAX rule",
    "M-DMA5": "phase V of a lowered: text only: H4 rejects a non-scalar semaphore at trace time",
    "M-IND1": "phase V of a lowered: text only: a scalar-subcore program has no VMEM side and D3 rejects the copy",
    "M-IND3": "phase V of a lowered: text only: X4 rejects offsets outside VMEM first",
    "M-IND8": "phase V of a lowered: text only: D3 rejects the memory-space pair first",
    "M-VL1": "a Pallas kernel reaches it only by a vector load of a semaphore ref, where jax 0.10.2 "
             "fails earlier, building the vector type (ZV2); the rule stays for lowered: text",
    "SR1": "emit-pallas cannot express it: the loader desugars pl.select_ref and raises SR1 itself",
}

# chip: (JAX device kind, TensorCores per chip, lanes, SC cores, SC subcores)
DEVICES = {
    "tpu_v5p": ("TPU v5p", 2, 8, 4, 16),
    "tpu_v6e": ("TPU v6e", 1, 8, 2, 16),
    "tpu7x": ("TPU7x", 2, 16, 2, 16),
    "tpu8i": ("TPU8i", 1, 16, 1, 4),
    "tpu_v5e": ("TPU v5 lite", 1, 0, 0, 0),
    "tpu_v4": ("TPU v4", 2, 0, 0, 0),
}
_SAME_LANES = {"tpu_v5p": ["tpu_v6e"], "tpu_v6e": ["tpu_v5p"], "tpu7x": ["tpu8i"], "tpu8i": ["tpu7x"]}
_OTHER_LANES = {"tpu_v5p": "tpu7x", "tpu_v6e": "tpu7x", "tpu7x": "tpu_v5p", "tpu8i": "tpu_v6e"}
_DTYPES = ("int32", "float32", "int16", "bfloat16", "int8", "uint32", "float16", "bool")
_SPACES = ("vmem", "smem", "vmem_shared", "hbm")

# JAX's answers that say the emitted kernel could not be judged, not what
# JAX thinks of the program (a list literal captured as a constant).
_NOT_EXPRESSED = ("captures non-Ref constants",)


def catalogue() -> list[str]:
    """The rule ids of DIAGS (lowering/diag.h), in the table's order."""
    with open(os.path.join(ROOT, "lowering", "diag.h"), encoding="utf-8") as f:
        return re.findall(r'X\(\w+, "([^"]+)", DC_RULE', f.read())


def check(path: str) -> tuple[int, str, str]:
    """sc-sim's checker on a program (run in its folder): exit, rule id
    ('accepted' when accepted), 'Type: message'."""
    folder, name = os.path.split(os.path.abspath(path))
    r = subprocess.run([find_binary(), "check", "--json", name], cwd=folder,
                       capture_output=True, text=True)
    try:
        j = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return 2, "crash", r.stderr.strip()[:200]
    err = j.get("error")
    if not err:
        return j["exit"], "accepted", ""
    return j["exit"], err["id"], f"{err['type']}: {err['message']}"


def templates() -> dict[str, list[tuple[str, str]]]:
    """Rule id (or 'accepted') -> [(path, text)] of the goldens and examples
    that sc-sim rejects with it (or accepts); programs with command-line
    options (.args), user lowerings, .npy inits and refs without a memory
    space (which Pallas cannot write) are left out."""
    out: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    paths = []
    for top in ("tests/golden", "examples"):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            paths += [os.path.join(d, f) for f in files if f.endswith(".yaml")]
    for p in sorted(paths):
        if os.path.exists(p[:-5] + ".args"):
            continue
        with open(p, "rb") as f:
            raw = f.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:  # the input goldens of bad encodings
            continue
        # refs without a memory space: the emitter writes them as HBM
        if re.search(r"^lowered:|npy:|annotated:\s*false", text, re.M):
            continue
        code, rule, _ = check(p)
        if code in (0, 1) or rule == "accepted":
            out[rule].append((os.path.relpath(p, ROOT), text))
    return out


# ---- variation --------------------------------------------------------------

_CHIP = re.compile(r"^(chip:\s*(?:\{\s*preset:\s*)?)(\w+)", re.M)  # chip: X or chip: {preset: X, ...}


def _chip(text: str) -> str | None:
    m = _CHIP.search(text)
    return m.group(2) if m else None


def _set_chip(text: str, chip: str) -> str:
    return _CHIP.sub(lambda m: m.group(1) + chip, text, count=1)


def _lanes(chip: str | None) -> int:
    return DEVICES.get(chip or "", (0, 0, 16))[2] or 16


def _ref_lines(lines: list[str]) -> list[int]:
    """The indexes of the `refs:` entries written in flow style."""
    out, inside = [], False
    for i, ln in enumerate(lines):
        if re.match(r"^refs:", ln):
            inside = True
            continue
        if inside and re.match(r"^\S", ln):
            inside = False
        if inside and re.match(r"^\s+[A-Za-z_]\w*:\s*\{.*\}\s*(#.*)?$", ln) and "semaphore" not in ln:
            out.append(i)
    return out


def _body_lines(lines: list[str]) -> list[int]:
    out, inside = [], False
    for i, ln in enumerate(lines):
        if re.match(r"^body:", ln):
            inside = True
            continue
        if inside and re.match(r"^\S", ln):
            inside = False
        if inside and ln.strip() and not ln.lstrip().startswith("#"):
            out.append(i)
    return out


def m_chip(text: str, rng: random.Random) -> str | None:
    """Another chip of the same lane count."""
    c = _chip(text)
    if c not in _SAME_LANES:
        return None
    return _set_chip(text, rng.choice(_SAME_LANES[c]))


def m_relane(text: str, rng: random.Random) -> str | None:
    """A chip of the other lane count, every multiple of the lane count in
    the refs and the body scaled to the new one."""
    c = _chip(text)
    if c not in _OTHER_LANES:
        return None
    new = _OTHER_LANES[c]
    a, b = _lanes(c), _lanes(new)
    lines = _set_chip(text, new).split("\n")
    for i in _ref_lines(lines) + _body_lines(lines):
        code, _, comment = lines[i].partition("#")
        code = re.sub(r"(?<![\w.])(\d+)(?![\w.])",
                      lambda mm: str(int(mm.group(1)) * b // a) if int(mm.group(1)) % a == 0
                      and int(mm.group(1)) else mm.group(1), code)
        lines[i] = code + ("#" + comment if comment else "")
    return "\n".join(lines)


def m_mesh(text: str, rng: random.Random) -> str | None:
    """Another mesh within the chip's limits."""
    c = _chip(text)
    if c not in DEVICES or not DEVICES[c][3]:
        return None
    cores, subs = DEVICES[c][3], DEVICES[c][4]
    m = re.search(r"^mesh:\s*\{([^}]*)\}", text, re.M)
    if not m or "cores" not in m.group(1):
        return None
    body = re.sub(r"(?<!sub)cores:\s*\d+", f"cores: {rng.randint(1, cores)}", m.group(1))
    body = re.sub(r"subcores:\s*\d+", f"subcores: {rng.randint(1, min(subs, 4))}", body)
    return text[:m.start(1)] + body + text[m.end(1):]


def m_noise(text: str, rng: random.Random) -> str | None:
    """A valid scratch ref and one valid operation on it, first in the body."""
    if not re.search(r"^refs:", text, re.M) or not re.search(r"^body:", text, re.M) or "zz_n" in text:
        return None
    scalar = re.search(r"^kernel:\s*scalar_subcore", text, re.M) is not None
    L = _lanes(_chip(text))
    if scalar or rng.random() < 0.3:
        ref = "  zz_n: {space: smem, shape: [4], dtype: int32}"
        op = rng.choice(["  - set: {ref: \"zz_n[1]\", value: 7}",
                         "  - get: {ref: \"zz_n[2]\", out: zz_v}"])
    else:
        dt = rng.choice(["int32", "float32"])
        ref = f"  zz_n: {{space: vmem, shape: [{2 * L}], dtype: {dt}}}"
        op = rng.choice([f"  - set: {{ref: \"zz_n[pl.ds({L}, {L})]\", value: \"astype(iota({L}), {dt})\"}}",
                         f"  - get: {{ref: \"zz_n[pl.ds(0, {L})]\", out: zz_v}}",
                         f"  - set: {{ref: \"zz_n[3]\", value: \"astype(1, {dt})\"}}"])
    out = re.sub(r"^refs:[^\n]*\n", lambda mm: mm.group(0) + ref + "\n", text, count=1, flags=re.M)
    return re.sub(r"^body:[^\n]*\n", lambda mm: mm.group(0) + op + "\n", out, count=1, flags=re.M)


def m_int(text: str, rng: random.Random) -> str | None:
    """One integer of the body (outside comments) moved by a little."""
    lines = text.split("\n")
    spots = []
    for i in _body_lines(lines):
        code = lines[i].split("#")[0]
        spots += [(i, mm.start(), mm.end()) for mm in re.finditer(r"(?<![\w.])\d+(?![\w.])", code)]
    if not spots:
        return None
    i, a, b = rng.choice(spots)
    n = int(lines[i][a:b])
    n = max(0, rng.choice([n + 1, n - 1, n * 2, n // 2, 0]))
    lines[i] = lines[i][:a] + str(n) + lines[i][b:]
    return "\n".join(lines)


def _ref_field(text: str, rng: random.Random, key: str, choices: tuple) -> str | None:
    lines = text.split("\n")
    spots = [i for i in _ref_lines(lines) if re.search(rf"\b{key}:\s*\w+", lines[i])]
    if not spots:
        return None
    i = rng.choice(spots)
    lines[i] = re.sub(rf"\b{key}:\s*\w+", f"{key}: {rng.choice(choices)}", lines[i], count=1)
    return "\n".join(lines)


def m_dtype(text: str, rng: random.Random) -> str | None:
    return _ref_field(text, rng, "dtype", _DTYPES)


def m_space(text: str, rng: random.Random) -> str | None:
    return _ref_field(text, rng, "space", _SPACES)


def m_shape(text: str, rng: random.Random) -> str | None:
    """One dimension of a ref's shape doubled or halved."""
    lines = text.split("\n")
    spots = [i for i in _ref_lines(lines) if re.search(r"shape:\s*\[\s*\d", lines[i])]
    if not spots:
        return None
    i = rng.choice(spots)
    m = re.search(r"shape:\s*\[([^\]]*)\]", lines[i])
    dims = [d.strip() for d in m.group(1).split(",")]
    ints = [k for k, d in enumerate(dims) if d.isdigit()]
    if not ints:
        return None
    k = rng.choice(ints)
    dims[k] = str(max(1, rng.choice([int(dims[k]) * 2, int(dims[k]) // 2])))
    lines[i] = lines[i][:m.start(1)] + ", ".join(dims) + lines[i][m.end(1):]
    return "\n".join(lines)


# the variations that keep a rule's preconditions, then those that may not
KEEP = {"chip": m_chip, "mesh": m_mesh, "noise": m_noise, "relane": m_relane}
BREAK = {"int": m_int, "dtype": m_dtype, "space": m_space, "shape": m_shape}
MUTATIONS = {**KEEP, **BREAK}


def pick_mutations(rng: random.Random) -> list[str]:
    n = rng.choice([0, 1, 1, 2, 2, 3])
    names = []
    for _ in range(n):
        pool = KEEP if rng.random() < 0.7 else BREAK
        names.append(rng.choice(sorted(pool)))
    return names


def apply(text: str, names: list[str], seed: str) -> tuple[str, list[str]]:
    """The template with the named mutations applied (each with its own
    rng, so a subset of them applies the same way); those that applied."""
    done = []
    for j, name in enumerate(names):
        out = MUTATIONS[name](text, random.Random(f"{seed}:{j}:{name}"))
        if out is not None and out != text:
            text, done = out, done + [name]
    return text, done


# ---- JAX's verdict ------------------------------------------------------------

def jax_judge(kernel_text: str, chip: str) -> tuple[bool, str | None, str]:
    """JAX's verdict on an emitted kernel, under the chip's abstract device
    (any chip of DEVICES, also those sc_sim's front end does not run)."""
    import jax
    from jax.sharding import AbstractDevice, AbstractMesh
    from .roundtrip import load
    kind, tcs = DEVICES[chip][0], DEVICES[chip][1]
    mesh = AbstractMesh((1,), ("_sc_sim",),
                        abstract_device=AbstractDevice(device_kind=kind, num_cores=tcs, platform="tpu"))
    scope = load(kernel_text)
    with jax.sharding.use_abstract_mesh(mesh):
        try:
            fn = scope["build"]()
            jax.jit(fn).trace(*scope["inputs"]()).lower(lowering_platforms=("tpu",))
        except Exception as exc:  # JAX's rejection, as raised
            cause = exc.__cause__ if type(exc).__name__ == "LoweringException" \
                and exc.__cause__ is not None else exc
            return False, type(cause).__name__, str(cause)
    return True, None, ""


_SET = re.compile(r"\{(<class [^}]*)\}")


_WHILE_CARRY = ((re.compile(r"([Tt]he input carry) component _carry\["), r"\1 at path ["),
                (re.compile(r"([Tt]he input carry) _carry\b"), r"\1"))


def same(ours: str, theirs: str) -> bool:
    """sc-sim's 'Type: message' is JAX's; a Python set printed in the
    message (SG1) compares as a set (its order varies from run to run).
    CF1 of a while loop: JAX names the carry by the body function's
    parameter (`_carry` in the emitted kernel), which a program does not
    have; sc-sim says what JAX says of a body whose name it cannot read."""
    for pat, rep in _WHILE_CARRY:
        theirs = pat.sub(rep, theirs)
    ours, theirs = normalize(ours), normalize(theirs)
    if ours == theirs:
        return True
    a, b = _SET.search(ours), _SET.search(theirs)
    if a and b:
        items = lambda m: sorted(s.strip() for s in m.group(1).split(","))  # noqa: E731
        return items(a) == items(b) and _SET.sub("{}", ours) == _SET.sub("{}", theirs)
    return False


def judge(text: str, folder: str, name: str) -> dict[str, Any]:
    """Both verdicts on one program text: outcome (agree, disagree, cannot),
    sc-sim's rule id and verdict, JAX's verdict."""
    prog = os.path.join(folder, name + ".yaml")
    with open(prog, "w", encoding="utf-8") as f:
        f.write(text)
    code, rule, ours = check(prog)
    r = {"rule": rule, "ours": ours, "theirs": ""}
    chip = _chip(text) or "tpu7x"
    if code == 2 or chip not in DEVICES:
        return {**r, "outcome": "cannot", "theirs": "sc-sim: input error" if code == 2 else f"chip {chip}"}
    e = subprocess.run([find_binary(), "emit-pallas", "--legality", prog], capture_output=True, text=True)
    if e.returncode:
        return {**r, "outcome": "cannot", "theirs": e.stderr.strip()[:200]}
    with open(os.path.join(folder, name + ".py"), "w", encoding="utf-8") as f:
        f.write(e.stdout)
    try:
        accepted, typ, msg = jax_judge(e.stdout, chip)
    except Exception as exc:  # noqa: BLE001 -- the emitted module itself failed
        accepted, typ, msg = False, type(exc).__name__, str(exc)
    msg = msg or ""
    if any(k in msg for k in _NOT_EXPRESSED):
        return {**r, "outcome": "cannot", "theirs": f"{typ}: {msg}"}
    if typ == "MosaicVerificationError":
        typ = "VerificationError"
    theirs = "" if accepted else f"{typ}: {normalize(msg)}"
    if rule == "sc-sim" and (accepted or typ == "VerificationError"):
        # sc-sim's own limit (SPEC §7.4) is no verdict on legality: JAX lowers
        # the construct, and accepts it or fails after the lowering (phase V)
        return {**r, "outcome": "cannot", "theirs": f"sc-sim's own limit; JAX: {theirs or 'accepted'}"}
    return {**r, "theirs": theirs, "outcome": "agree" if same(ours, theirs) else "disagree"}


# ---- the campaign -------------------------------------------------------------

def plan(seed: int, k: int, ids: list[str], temps: dict) -> tuple[str, str, list[str]]:
    """Program k: the id it targets, its template's path, its mutations."""
    target = ids[k % len(ids)]
    rng = random.Random(f"rules:{seed}:{k}")
    path, _ = rng.choice(temps[target])
    names = [] if k < len(ids) else pick_mutations(rng)
    return target, path, names


def shrink(template: str, names: list[str], seed: str, folder: str) -> tuple[str, list[str]]:
    """The smallest subset of the mutations whose program still disagrees."""
    import itertools
    for n in range(len(names) + 1):
        for sub in itertools.combinations(range(len(names)), n):
            keep = [names[i] if i in sub else None for i in range(len(names))]
            text, done = _apply_kept(template, keep, seed)
            if judge(text, folder, "shrink")["outcome"] == "disagree":
                return text, done
    return apply(template, names, seed)


def _apply_kept(text: str, keep: list[str | None], seed: str) -> tuple[str, list[str]]:
    done = []
    for j, name in enumerate(keep):
        if name is None:
            continue
        out = MUTATIONS[name](text, random.Random(f"{seed}:{j}:{name}"))
        if out is not None and out != text:
            text, done = out, done + [name]
    return text, done


def reachable_ids(temps: dict) -> tuple[list[str], dict[str, str]]:
    """The catalogue's reachable ids and, for the rest, why not."""
    why = dict(UNREACHABLE)
    ids = [i for i in catalogue() if i not in why]
    for i in ids:
        if i not in temps:
            why[i] = "no golden program rejected with this id"
    return [i for i in ids if i not in why], why


def run(seed: int, count: int, shard: tuple[int, int] = (0, 1), only: list[str] | None = None,
        out: str | None = None, temps: dict | None = None) -> list[dict]:
    """The records of the campaign's programs (those of the shard)."""
    from . import shard as _shard
    warnings.simplefilter("ignore")
    temps = templates() if temps is None else temps
    ids, _ = reachable_ids(temps)
    if only:
        ids = [i for i in ids if i in only]
    ids = ids + ["accepted"]
    records = []
    with tempfile.TemporaryDirectory() as folder:
        for k in range(count):
            if not _shard.mine(k, shard):
                continue
            target, path, names = plan(seed, k, ids, temps)
            template = dict(temps[target])[path]
            text, done = apply(template, names, f"{seed}:{k}")
            r = judge(text, folder, f"p{k}")
            records.append({"kind": "jaxdiff", "mode": "rules", "seed": seed, "count": count,
                            "chip": None, "index": k, "target": target, "template": path,
                            "mutations": done, **r})
            if r["outcome"] == "disagree" and out:  # shrunk over the planned names: their
                _save(out, k, template, names, f"{seed}:{k}", folder, path, r)  # positions seed them
    return records


def _save(out: str, k: int, template: str, done: list[str], seed: str, folder: str,
          path: str, r: dict) -> None:
    """A disagreement's shrunk reproducer: program and emitted kernel."""
    os.makedirs(out, exist_ok=True)
    small, kept = shrink(template, done, seed, folder)
    with open(os.path.join(out, f"rules{k}.yaml"), "w", encoding="utf-8") as f:
        f.write(f"# from {path} with {kept}\n# sc-sim: {r['ours'] or 'accepted'}\n"
                f"# JAX:    {r['theirs'] or 'accepted'}\n{small}")
    if os.path.exists(os.path.join(folder, "shrink.py")):
        shutil.copy(os.path.join(folder, "shrink.py"), os.path.join(out, f"rules{k}.py"))


def rules_main(seed: int, count: int, out: str | None, shard: tuple[int, int],
               jsonl: str | None, only: list[str] | None = None) -> int:
    from .jaxdiff import _write_jsonl
    temps = templates()
    records = run(seed, count, shard, only, out, temps)
    _write_jsonl(jsonl, records)
    return rules_report(seed, count, records, temps, only)


def rules_report(seed: int, count: int, records: list[dict], temps: dict | None = None,
                 only: list[str] | None = None) -> int:
    """The table by sc-sim's rule id, the coverage (of the ids `only`, if
    given), the disagreements."""
    if temps is None:
        temps = templates()
    ids, why = reachable_ids(temps)
    if only:
        ids = [i for i in ids if i in only]
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    hit: collections.Counter = collections.Counter()
    bad = []
    for r in records:
        table[r["rule"]][r["outcome"]] += 1
        table[r["target"]]["targeted"] += 1
        if r["rule"] == r["target"]:
            hit[r["target"]] += 1
        if r["outcome"] == "disagree":
            bad.append(r)
    print(f"jaxdiff --rules: seed {seed}, {count} programs varied from the rule goldens")
    print(f"{'rule id':14} {'programs':>8} {'agree':>6} {'disagree':>8} {'cannot':>7} {'targeted':>8} {'on target':>9}")
    for rule in [*catalogue(), "accepted", *sorted(set(table) - set(catalogue()) - {"accepted"})]:
        c = table.get(rule)
        if not c:
            continue
        n = c["agree"] + c["disagree"] + c["cannot"]
        print(f"{rule:14} {n:8} {c['agree']:6} {c['disagree']:8} {c['cannot']:7} {c['targeted']:8} {hit[rule]:9}")
    covered = [i for i in ids if table[i]["agree"]]
    comparable = sum(c["agree"] + c["disagree"] for c in table.values())
    agree = sum(c["agree"] for c in table.values())
    print(f"\ncompared: {comparable} programs, {agree} agree, {comparable - agree} disagree "
          f"({100.0 * agree / max(comparable, 1):.2f} %); not comparable: "
          f"{sum(c['cannot'] for c in table.values())}")
    print(f"coverage: {len(covered)} of {len(ids)} reachable rule ids "
          f"({100.0 * len(covered) / max(len(ids), 1):.1f} %); catalogue {len(catalogue())} ids")
    missing = [i for i in ids if i not in covered]
    if missing:
        print("reachable, not covered: " + ", ".join(missing))
    print("not reachable through a JAX kernel on this release:")
    for i in catalogue():
        if i in why:
            print(f"  {i}: {why[i]}")
    for r in bad[:30]:
        print(f"program {r['index']} ({r['template']} {r['mutations']}):\n"
              f"  sc-sim: {r['ours'] or 'accepted'}\n  JAX:    {r['theirs'] or 'accepted'}")
    return 1 if bad else 0
