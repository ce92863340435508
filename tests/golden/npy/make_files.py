#!/usr/bin/env python3
"""tests/golden/npy/make_files.py -- writes the .npy files the programs of
this folder read, with plain Python (no numpy needed), byte for byte as
numpy.save writes them: the 64-byte aligned header of format 1.0 (2.0 and
3.0 where named), then the elements.  bfloat16 is '<V2' with the raw bits,
which is what numpy.save writes for an ml_dtypes.bfloat16 array.  The bad
files are malformed on purpose, one fault each.  Checked once against
numpy 2.4 / ml_dtypes 0.7 (np.load of every good file; np.save of the same
arrays gives the same bytes)."""
import struct


def header(descr, shape, fortran=False, version=(1, 0), pad_to=64):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': %s, 'fortran_order': %s, 'shape': (%s), }" % (
        descr if descr.startswith("[") else repr(descr), fortran, dims)
    pre = 10 if version[0] == 1 else 12
    total = pre + len(text) + 1
    text += " " * ((-total) % pad_to) + "\n"
    size = struct.pack("<H", len(text)) if version[0] == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes(version) + size + text.encode("latin1")


def write(name, descr, shape, data, **kw):
    with open(name, "wb") as f:
        f.write(header(descr, shape, **kw) + data)


good = {
    "i4.npy": ("<i4", (2, 3), struct.pack("<6i", -2, -1, 0, 1, 2, 3)),
    "u4.npy": ("<u4", (4,), struct.pack("<4I", 0, 1, 4294967295, 123)),
    "f4.npy": ("<f4", (2, 2), struct.pack("<4f", 1.5, -0.25, 1e10, 0.0)),
    "bf16.npy": ("<V2", (3,), struct.pack("<3H", 0x3FC0, 0xC000, 0x3DCD)),  # 1.5, -2.0, 0.10009765625
    "f2.npy": ("<f2", (2,), struct.pack("<2H", 0x3800, 0xC200)),  # 0.5, -3.0
    "i2.npy": ("<i2", (3,), struct.pack("<3h", -32768, 7, 32767)),
    "u2.npy": ("<u2", (2,), struct.pack("<2H", 65535, 9)),
    "i1.npy": ("|i1", (4,), struct.pack("<4b", -128, -1, 5, 127)),
    "u1.npy": ("|u1", (2,), struct.pack("<2B", 255, 3)),
    "b1.npy": ("|b1", (4,), bytes([1, 0, 0, 1])),
    "be_i4.npy": (">i4", (3,), struct.pack(">3i", 1, -2, 300)),
    "scalar.npy": ("<i4", (), struct.pack("<i", 42)),
    "empty.npy": ("<f4", (0,), b""),
    "x.npy": ("<i4", (2, 16), struct.pack("<32i", *[100 * r + c for r in range(2) for c in range(16)])),
}
for name, (descr, shape, data) in good.items():
    write(name, descr, shape, data)
write("v2.npy", "<i4", (2,), struct.pack("<2i", 11, 12), version=(2, 0))
write("v3.npy", "<i4", (2,), struct.pack("<2i", 13, 14), version=(3, 0))

# malformed on purpose
open("bad_magic.npy", "wb").write(b"\x93NUMPZ" + header("<i4", (2,))[6:] + struct.pack("<2i", 1, 2))
write("bad_truncated.npy", "<i4", (2, 3), struct.pack("<5i", 1, 2, 3, 4, 5))
write("bad_extra.npy", "<i4", (2,), struct.pack("<3i", 1, 2, 3))
write("bad_fortran.npy", "<i4", (2, 3), struct.pack("<6i", 0, 1, 2, 3, 4, 5), fortran=True)
write("bad_object.npy", "|O", (2,), b"\0" * 16)
write("bad_structured.npy", "[('a', '<i4'), ('b', '<f4')]", (2,), b"\0" * 16)
write("bad_unknown_dtype.npy", "<c8", (2,), b"\0" * 16)
write("bad_overflow.npy", "<i4", (2**62, 8), b"")
write("bad_version.npy", "<i4", (2,), struct.pack("<2i", 1, 2), version=(4, 0))
write("bad_big_header.npy", "<i4", (2,), struct.pack("<2i", 1, 2), version=(2, 0), pad_to=16384)
open("bad_header_text.npy", "wb").write(header("<i4", (2,)).replace(b"'shape': (2,)", b"'shape': [2,]") + struct.pack("<2i", 1, 2))
