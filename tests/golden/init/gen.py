#!/usr/bin/env python3
"""tests/golden/init/gen.py -- writes the init goldens of this folder.

Every dtype the program format accepts, every init kind (zeros, iota, a
fill, a nested list, random, and none), with the values worked out here,
independently of sc-sim: integers wrap in two's complement, float32 and
float16 round to nearest even through struct ('f', 'e'), bfloat16 rounds
to 8 significant bits by hand, and random follows the generator that
memory/memory.h documents (splitmix64 over the seed, the instance's
coordinates and the element index).

  init_<dtype>.yaml   refs with every init and an empty body; expect.refs
                      holds the values (exit 3 when an instance differs)
  iota_<dtype>.yaml   a large iota (int16 / uint16 wrap, float16 / bfloat16
                      rounding and overflow) read back row by row with get
                      and compared with `expect` against literal rows

Run it from anywhere: python3 tests/golden/init/gen.py
(--cunit prints the random rows of tests/test_memory.c instead.)
"""
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
M64 = (1 << 64) - 1

# dtype -> (kind, bits)
DTYPES = {
    "int8": ("i", 8), "int16": ("i", 16), "int32": ("i", 32), "int64": ("i", 64),
    "uint8": ("u", 8), "uint16": ("u", 16), "uint32": ("u", 32), "uint64": ("u", 64),
    "bfloat16": ("f", 16), "float16": ("f", 16), "float32": ("f", 32), "float64": ("f", 64),
    "bool": ("b", 8),
}


def wrap(t, v):
    kind, bits = DTYPES[t]
    v &= (1 << bits) - 1
    return v - (1 << bits) if kind == "i" and v >> (bits - 1) else v


def round_bf16(x):
    """x rounded to bfloat16: 8 significant bits, nearest even (normal range)."""
    if x == 0 or math.isinf(x) or math.isnan(x):
        return x
    m, e = math.frexp(x)            # x = m * 2**e, 0.5 <= |m| < 1
    r = round(m * 256) * 2.0 ** (e - 8)  # round(): exact half-to-even on a float
    return math.copysign(math.inf, x) if abs(r) > 3.3895313892515355e38 else r


def fit(t, x):
    """A float rounded to float dtype t."""
    if t == "float64":
        return x
    if t == "float32":
        try:
            return struct.unpack("<f", struct.pack("<f", x))[0]
        except OverflowError:
            return math.copysign(math.inf, x)
    if t == "float16":
        try:
            return struct.unpack("<e", struct.pack("<e", x))[0]
        except OverflowError:  # past the midpoint of 65504 and 2**16
            return math.copysign(math.inf, x)
    return round_bf16(x)


def sm(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def random_value(t, seed, core, subcore, i, low=0.0, high=100.0):
    h = sm(seed)
    h = sm(h ^ ((core + 1) & M64))
    h = sm(h ^ (((subcore + 1) << 20) & M64))
    h = sm(h ^ i)
    u = (h >> 11) / 9007199254740992.0
    v = low + u * (high - low)
    kind = DTYPES[t][0]
    if kind == "f":
        return fit(t, v)
    if kind == "b":
        return 1 if u >= 0.5 else 0
    return wrap(t, math.floor(v))


def iota_value(t, i):
    kind = DTYPES[t][0]
    if kind == "f":
        return fit(t, float(i))
    if kind == "b":
        return 1 if i else 0
    return wrap(t, i)


def nest(items, shape):
    if len(shape) <= 1:
        return items
    step = len(items) // shape[0]
    return [nest(items[k * step:(k + 1) * step], shape[1:]) for k in range(shape[0])]


# Per dtype: the iota length (past the wrap or the exact range where that is
# small), the fill (text, value), the [2, 3] list (texts, values) and the
# random range of the per-subcore ref.
def case(t):
    kind = DTYPES[t][0]
    n_iota = {"int8": 300, "uint8": 300, "bfloat16": 300, "bool": 4}.get(t, 20)
    if kind == "i":
        lo, hi = -(1 << (DTYPES[t][1] - 1)), (1 << (DTYPES[t][1] - 1)) - 1
        if t == "int64":
            lo += 1  # -2**63 has no literal (expect.refs takes literals only); tests/test_memory.c has it
        fill = (str(lo), lo)
        lst = [lo, -1, 0, 1, 7, hi]
        return n_iota, fill, [str(v) for v in lst], lst, (-50.0, 50.0)
    if kind == "u":
        hi = (1 << DTYPES[t][1]) - 1
        lst = [0, 1, 2, 100, hi - 1, hi]
        return n_iota, (str(hi), hi), [str(v) for v in lst], lst, (0.0, 1000.0)
    if kind == "b":
        return n_iota, ("true", 1), ["true", "false", "false", "true", "true", "false"], [1, 0, 0, 1, 1, 0], (0.0, 1.0)
    # floats: texts that round in the narrow types (1.01171875 is a bfloat16
    # tie between 1.0078125 and 1.015625, even: 1.015625; 0.1 is inexact in all)
    texts = ["1.01171875", "-2.5", "0.1", "65519.0", "1e-3", "-0.0"]
    return n_iota, ("1.01171875", fit(t, 1.01171875)), texts, [fit(t, float(x)) for x in texts], (-1.0, 1.0)


def write(name, yaml, expected, args=None, stdout=None):
    with open(os.path.join(HERE, name + ".yaml"), "w") as f:
        f.write(yaml)
    with open(os.path.join(HERE, name + ".expected"), "w") as f:
        f.write(expected)
    for ext, text in ((".args", args), (".stdout", stdout)):
        path = os.path.join(HERE, name + ext)
        if text is not None:
            with open(path, "w") as f:
                f.write(text)
        elif os.path.exists(path):
            os.remove(path)


def yaml_lit(t, v):
    """A value as an expect.refs literal that converts exactly to dtype t."""
    if isinstance(v, list):
        return "[" + ", ".join(yaml_lit(t, x) for x in v) + "]"
    kind = DTYPES[t][0]
    if kind == "b":
        return "true" if v else "false"
    if kind == "f":
        return ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(float(v))
    if kind == "u" and v >= 1 << 63:
        return f'"{v - (1 << 64)}"'  # past int64's literals: the same 64 bits, wrapped into uint64
    return str(v)


def init_golden(t):
    n_iota, (ftext, fval), ltexts, lvals, (rlo, rhi) = case(t)
    seed, seed2 = 7, 12345
    refs = [
        ("z", [0.0 if DTYPES[t][0] == "f" else 0] * 4),
        ("i", [iota_value(t, k) for k in range(n_iota)]),
        ("f", [fval] * 3),
        ("l", nest(lvals, [2, 3])),
        ("r", [random_value(t, seed, -1, -1, k) for k in range(8)]),
        ("s@0.0", [random_value(t, seed2, 0, 0, k, rlo, rhi) for k in range(4)]),
        ("s@0.1", [random_value(t, seed2, 0, 1, k, rlo, rhi) for k in range(4)]),
    ]
    expect = "".join(f"    {k}: {yaml_lit(t, v)}\n" for k, v in refs)
    yaml = f"""# Every init kind for {t}, checked by expect.refs against values gen.py works out
# independently of sc-sim (rerun gen.py to rewrite this file):
#   z zeros; i iota of {n_iota} (integers wrap, floats round to nearest even);
#   f fill {ftext}; l a [2, 3] list; r random seed {seed} in [0, 100) on hbm (core = subcore = -1);
#   s random seed {seed2} in [{rlo}, {rhi}) on vmem, one instance per subcore (0.0 and 0.1);
#   u no init (undefined; tests/test_memory.c checks its shadow).  The body is empty: the final
#   contents are the inits.
version: 1
chip: tpu7x
kernel: vector_subcore
mesh: {{cores: 1, subcores: 2}}
refs:
  z: {{space: hbm, shape: [4], dtype: {t}, init: zeros}}
  i: {{space: hbm, shape: [{n_iota}], dtype: {t}, init: iota}}
  f: {{space: hbm, shape: [3], dtype: {t}, init: {ftext}}}
  l: {{space: hbm, shape: [2, 3], dtype: {t}, init: [[{", ".join(ltexts[:3])}], [{", ".join(ltexts[3:])}]]}}
  r: {{space: hbm, shape: [8], dtype: {t}, init: {{random: {seed}}}}}
  s: {{space: vmem, shape: [4], dtype: {t}, init: {{random: {seed2}, low: {rlo}, high: {rhi}}}}}
  u: {{space: hbm, shape: [2], dtype: {t}}}
body: []
expect:
  refs:
""" + expect
    write(f"init_{t}", yaml, "exit: 0\n")


# Large iotas, read back row by row: (dtype, rows of 16, the rows to read, why).
IOTAS = [
    ("int16", 4100, [0, 2047, 2048, 4095, 4096, 4099], "32767 -> -32768 at row 2048; 65536 wraps to 0 at row 4096"),
    ("uint16", 4100, [0, 2047, 2048, 4095, 4096, 4099], "65535 -> 0 at row 4096"),
    ("float16", 4100, [127, 128, 256, 4094, 4095],
     "exact to 2048; ulp 2 from 2048 (row 128), 4 from 4096 (row 256); 65504 is the largest, 65520 and up round to inf"),
    ("bfloat16", 4100, [15, 16, 32, 4095], "exact to 256; ulp 2 from 256 (row 16), 4 from 512 (row 32), 256 from 32768"),
]


def lit(t, v):
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v) if isinstance(v, float) else str(v)


def iota_golden(t, rows, read, why):
    lines = []
    for r in read:
        vals = [iota_value(t, r * 16 + c) for c in range(16)]
        lines.append(f'  - get: {{ref: "a[{r}]", out: r{r}}}\n')
        lines.append(f'  - expect: {{value: r{r}, equals: "[{", ".join(lit(t, v) for v in vals)}]"}}\n')
    yaml = f"""# A large {t} iota in VMEM ([{rows}, 16], row-major), read back row by row and compared
# with literal rows worked out by gen.py: {why}.
version: 1
chip: tpu7x
kernel: vector_subcore
mesh: {{cores: 1, subcores: 1}}
refs:
  a: {{space: vmem, shape: [{rows}, 16], dtype: {t}, init: iota}}
body:
""" + "".join(lines)
    write(f"iota_{t}", yaml, "exit: 0\n")


# The random rows of tests/test_memory.c: (dtype, scope, instance, core,
# subcore, seed, low, high).  Per-subcore instances on a 2 x 2 mesh:
# instance k is core k // 2, subcore k % 2.
CUNIT_RANDOM = [
    ("int32", "INST_GLOBAL", 0, -1, -1, 7, 0.0, 100.0),
    ("int8", "INST_PER_SUBCORE", 3, 1, 1, 12345, -50.0, 50.0),
    ("uint8", "INST_PER_SUBCORE", 2, 1, 0, 5, 0.0, 1000.0),
    ("uint16", "INST_PER_CORE", 1, 1, -1, 5, 0.0, 1000.0),
    ("float32", "INST_GLOBAL", 0, -1, -1, 7, -1.0, 1.0),
    ("bfloat16", "INST_PER_SUBCORE", 1, 0, 1, 99, 0.0, 100.0),
    ("float16", "INST_PER_SUBCORE", 2, 1, 0, 99, -3.0, 3.0),
    ("bool", "INST_GLOBAL", 0, -1, -1, 7, 0.0, 100.0),
    ("int64", "INST_GLOBAL", 0, -1, -1, 2**40, -1e12, 1e12),
]


def bits(t, v):
    kind, nbits = DTYPES[t]
    if kind == "f":
        if t == "bfloat16":
            return struct.unpack("<I", struct.pack("<f", v))[0] >> 16
        return struct.unpack({16: "<H", 32: "<I", 64: "<Q"}[nbits], struct.pack({16: "<e", 32: "<f", 64: "<d"}[nbits], v))[0]
    return v & ((1 << nbits) - 1)


def cunit_rows():
    for t, scope, inst, core, sub, seed, lo, hi in CUNIT_RANDOM:
        at = [0, 1, 2, 3, 100, 999]
        b = ", ".join("0x%x" % bits(t, random_value(t, seed, core, sub, i, lo, hi)) for i in at)
        dt = "DT_" + t.upper()
        print(f'    {{"random {t}", {dt}, {scope}, {inst}, {seed}ULL, {lo!r}, {hi!r}, {{{", ".join(map(str, at))}}}, {{{b}}}}},')


def main():
    if sys.argv[1:] == ["--cunit"]:
        return cunit_rows()
    for t in DTYPES:
        init_golden(t)
    for t, rows, read, why in IOTAS:
        iota_golden(t, rows, read, why)


if __name__ == "__main__":
    main()
