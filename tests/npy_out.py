#!/usr/bin/env python3
"""tests/npy_out.py SC_SIM -- `sc-sim run --out DIR` writes .npy files.

Runs tests/golden/npy/npy_roundtrip.yaml with --out into a fresh nested
folder (created by sc-sim) and checks every file against values worked out
by hand (the program's comment), reading the .npy format with a few lines
of plain Python; when numpy is installed, numpy.load must read the same.
Also: files whose contents are unchanged are byte for byte the inputs
(which make_files.py writes as numpy.save does), a stale NAME.undefined.npy
is removed, no temporary file is left behind, and an --out that cannot be
created is an input error (exit 2)."""
import ast
import math
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG = os.path.join(ROOT, "tests", "golden", "npy")
FMT = {"<i4": "i", "<u4": "I", "<f4": "f", "<u2": "H", "|b1": "?", "|V2": "H", "<V2": "H"}


def read_npy(path):
    b = open(path, "rb").read()
    assert b[:6] == b"\x93NUMPY", path
    n = struct.unpack("<H", b[8:10])[0]
    assert (10 + n) % 64 == 0, path
    h = ast.literal_eval(b[10:10 + n].decode("latin1"))
    count = math.prod(h["shape"])
    vals = list(struct.unpack("<%d%s" % (count, FMT[h["descr"]]), b[10 + n:]))
    return h["descr"], h["shape"], vals


failures = []


def check(what, ok):
    if not ok:
        failures.append(what)


def main():
    sim = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "a", "b")
        os.makedirs(out)
        open(os.path.join(out, "y.undefined.npy"), "wb").write(b"stale")
        r = subprocess.run([sim, "run", "npy_roundtrip.yaml", "--out", out], cwd=PROG, capture_output=True, text=True)
        check("exit 0, got %d: %s" % (r.returncode, r.stderr), r.returncode == 0)
        x = [100 * r_ + c for r_ in range(2) for c in range(16)]
        want = {
            "x.npy": ("<i4", (2, 16), x),
            "y.npy": ("<i4", (2, 16), [2 * v + 1 for v in x]),
            "half.undefined.npy": ("|b1", (2, 16), [False] * 16 + [True] * 16),
            "never.npy": ("<u2", (4,), [65535] * 4),
            "never.undefined.npy": ("|b1", (4,), [True] * 4),
            "h.npy": ("<V2", (3,), [0x3FC0, 0xC000, 0x3DCD]),
        }
        for name, exp in want.items():
            got = read_npy(os.path.join(out, name))
            check("%s: %s, want %s" % (name, got, exp), got == exp)
        d, s, half = read_npy(os.path.join(out, "half.npy"))
        check("half.npy row 0", (d, s, half[:16]) == ("<f4", (2, 16), [c / 2 for c in range(16)]))
        check("half.npy row 1 is NaN", all(math.isnan(v) for v in half[16:]))
        check("y.undefined.npy (stale) removed", not os.path.exists(os.path.join(out, "y.undefined.npy")))
        check("x.npy is the input's bytes", open(os.path.join(out, "x.npy"), "rb").read() == open(os.path.join(PROG, "x.npy"), "rb").read())
        check("h.npy is bf16.npy's bytes", open(os.path.join(out, "h.npy"), "rb").read() == open(os.path.join(PROG, "bf16.npy"), "rb").read())
        check("exactly the expected files, no temporary ones",
              sorted(os.listdir(out)) == sorted(list(want) + ["half.npy"]))
        try:
            import numpy as np
        except ImportError:
            np = None
        if np is not None:
            check("numpy reads y.npy", np.load(os.path.join(out, "y.npy")).tolist() == [[2 * v + 1 for v in x[:16]], [2 * v + 1 for v in x[16:]]])
            check("numpy reads half.undefined.npy", np.load(os.path.join(out, "half.undefined.npy")).dtype == np.bool_)
        blocked = os.path.join(tmp, "file")
        open(blocked, "w").write("")
        r = subprocess.run([sim, "run", "npy_roundtrip.yaml", "--out", os.path.join(blocked, "sub")], cwd=PROG, capture_output=True, text=True)
        check("an --out under a file: exit 2, got %d" % r.returncode, r.returncode == 2 and "cannot create the folder" in r.stderr)
    for f in failures:
        print("npy-out: FAILED:", f)
    print("npy-out: %s" % ("ok" if not failures else "%d failed" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
