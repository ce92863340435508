#!/usr/bin/env python3
"""traces/bmp2png.py IN.bmp OUT.png -- the viewer's 32-bit BMP screenshot as
a PNG (Python's standard library only), for docs/viewer.png (make viewer-shot)."""
import struct, zlib, sys
b = open(sys.argv[1], 'rb').read()
off, = struct.unpack_from('<I', b, 10); w, h = struct.unpack_from('<ii', b, 18); bpp, = struct.unpack_from('<H', b, 28)
assert bpp == 32
rows = []
stride = w * 4
for y in range(abs(h)):
    src = y if h < 0 else abs(h) - 1 - y
    r = b[off + src * stride: off + (src + 1) * stride]
    px = bytearray()
    for x in range(w):
        B, G, R, A = r[4*x:4*x+4]; px += bytes((R, G, B))
    rows.append(b'\x00' + bytes(px))
raw = zlib.compress(b''.join(rows), 9)
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
open(sys.argv[2], 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, abs(h), 8, 2, 0, 0, 0)) + chunk(b'IDAT', raw) + chunk(b'IEND', b''))
