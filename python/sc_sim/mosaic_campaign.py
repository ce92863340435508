"""A campaign for JAX's Mosaic module on the engine (docs/mosaic.md).

    python -m sc_sim.mosaic_campaign --seed S --count N [--out DIR]

Each program of the C fuzz generator (`sc-sim fuzz --seed S --count N
--show K`) is emitted as Pallas (`sc-sim emit-pallas --legality`: the
refs' inits dropped, so scratch starts undefined, which verification
compares too), the kernel translated by the front end into a program,
and that program run twice by the C core: with sc-sim's own lowering and
with JAX's Mosaic module of the kernel (lowered on this host, read by
sc_sim/mosaic.py into the program's `lowered:` text), each verified
against the reference of the program's body.  Outcomes by class:

  match       the same exit status
  jax-device  different outcomes, and the program signals a semaphore of
              another subcore or core (`semaphore_signal` with `subcore:` /
              `core:`): jax 0.10.2 drops that target (docs/mosaic.md)
  jax-neg0    the only difference is a float -0.0 that JAX's module makes
              0.0: jax 0.10.2 lowers lax.neg as 0 - x (docs/mosaic.md)
  mismatch    different outcomes: a bug of the reader or of JAX's lowering
  unsupported the module holds an op outside the reader's subset (named)
  rejected    the kernel is not accepted (sc-sim's or JAX's checker)
  cannot      emit-pallas cannot express the program
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from . import api, roundtrip
from .binary import find_binary


def _exit(path: str, extra: list[str] | None = None) -> tuple[int, str]:
    r = subprocess.run([find_binary(), "run", os.path.basename(path)] + (extra or []),
                       cwd=os.path.dirname(path), capture_output=True, text=True)
    return r.returncode, roundtrip._first_error(r.stderr)


def one(seed: int, count: int, k: int, folder: str) -> tuple[str, str]:
    """(class, detail) of program k."""
    from . import mosaic
    binary = find_binary()
    text = subprocess.run([binary, "fuzz", "--seed", str(seed), "--count", str(count),
                           "--show", str(k)], capture_output=True, text=True).stdout
    prog = os.path.join(folder, f"fuzz{k}.yaml")
    with open(prog, "w") as f:
        f.write(text)
    r = subprocess.run([binary, "emit-pallas", "--legality", prog], capture_output=True, text=True)
    if r.returncode:
        return "cannot", roundtrip._first_error(r.stderr)[:120] or r.stderr.strip()[:120]
    out = os.path.join(folder, f"k{k}")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            scope = roundtrip.load(r.stdout)
            with api.chip_scope(scope["CHIP"]):
                fn = scope["build"]()
            args = scope["inputs"]()
        except Exception as exc:  # noqa: BLE001 -- JAX's tracing
            return "rejected", f"trace: {type(exc).__name__}"
        try:
            with api.interpret(scope["CHIP"], out_dir=out, jax_check=False):
                import jax
                jax.block_until_ready(fn(*args))
        except Exception:  # noqa: BLE001 -- the program is written before it runs
            pass
        progs = sorted(p for p in os.listdir(out) if p.endswith(".yaml"))
        if len(progs) != 1:
            return "rejected", "sc-sim's front end wrote no program"
        path = os.path.join(out, progs[0])
        a = _exit(path)
        if a[0] in (1, 2):
            return "rejected", a[1][:120]
        try:
            mtext = mosaic.kernel_module(fn, *args, chip=scope["CHIP"])
        except Exception as exc:  # noqa: BLE001 -- JAX's verdict
            return "rejected", f"JAX: {type(exc).__name__}"
    with open(os.path.join(out, "kernel.mlir"), "w") as f:
        f.write(mtext)
    try:
        low = mosaic.lowered_text(mtext, path, "kernel.mlir")
    except mosaic.MosaicInputError as exc:
        return "unsupported", exc.message[:120]
    except Exception as exc:  # noqa: BLE001 -- a reader bug, counted as a mismatch
        return "mismatch", f"the reader raised {type(exc).__name__}: {str(exc)[:120]}"
    jpath = path[:-5] + ".jax.yaml"
    mosaic.with_lowered(path, low, jpath)
    b = _exit(jpath)
    if a[0] != b[0] and re.search(r"semaphore_signal: \{[^}]*\b(subcore|core):", text):
        return "jax-device", f"sc-sim lowering exit {a[0]}; JAX's module exit {b[0]}"
    if a[0] != b[0] and re.search(r"reference -0\.0, lowering 0\.0", b[1]):
        return "jax-neg0", f"sc-sim lowering exit {a[0]}; JAX's module exit {b[0]}"
    if a[0] != b[0]:
        return "mismatch", f"sc-sim lowering exit {a[0]}; JAX's module exit {b[0]}: {b[1][:160]}"
    return "match", ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sc_sim.mosaic_campaign", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--out", help="save mismatching programs here")
    ap.add_argument("--keep", default="mismatch",
                    help="the classes --out saves, comma-separated (default: mismatch)")
    ap.add_argument("--first", type=int, default=0,
                    help="start at program FIRST of the seed's COUNT")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    table: collections.Counter = collections.Counter()
    details: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as folder:
        for k in range(a.first, a.count):
            try:
                cls, detail = one(a.seed, a.count, k, folder)
            except Exception as exc:  # noqa: BLE001 -- keep the campaign going
                cls, detail = "mismatch", f"the campaign raised {type(exc).__name__}: {str(exc)[:120]}"
            table[cls] += 1
            details[cls][detail] += 1
            if cls == "mismatch":
                if not a.quiet:
                    print(f"program {k}: {detail}", flush=True)
            if a.out and cls in a.keep.split(",") and os.path.isdir(os.path.join(folder, f"k{k}")):
                os.makedirs(a.out, exist_ok=True)
                shutil.copy(os.path.join(folder, f"fuzz{k}.yaml"), a.out)
                shutil.copytree(os.path.join(folder, f"k{k}"), os.path.join(a.out, f"k{k}"),
                                dirs_exist_ok=True)
            shutil.rmtree(os.path.join(folder, f"k{k}"), ignore_errors=True)
    print(f"mosaic campaign: seed {a.seed}, {a.count} programs, {time.time() - t0:.0f} s")
    for cls in ("match", "jax-device", "jax-neg0", "mismatch", "unsupported", "rejected", "cannot"):
        print(f"  {cls:12} {table[cls]}")
    for cls in ("mismatch", "unsupported"):
        for d, n in details[cls].most_common(12):
            print(f"    {cls}: {n} x {d}")
    return 1 if table["mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())
