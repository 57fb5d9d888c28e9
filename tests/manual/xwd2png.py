#!/usr/bin/env python3
"""Converts an `xwd -root` dump (24/32-bit TrueColor ZPixmap) to PNG without
ImageMagick or PIL. usage: xwd2png.py IN.xwd OUT.png"""
import struct
import sys
import zlib

data = open(sys.argv[1], "rb").read()
h = struct.unpack(">25I", data[:100])
hsize, w, ht, order, bpp, bpl, ncolors = h[0], h[4], h[5], h[7], h[11], h[12], h[19]
rmask, gmask, bmask = h[14], h[15], h[16]
off = hsize + ncolors * 12
assert bpl >= w * 4, "only 4 bytes per pixel"  # Xvfb depth 24 stores 32 bits


def shift(m):
    return (m & -m).bit_length() - 1


rs, gs, bs = shift(rmask), shift(gmask), shift(bmask)
fmt = "<" if order == 0 else ">"
rows = []
for y in range(ht):
    line = data[off + y * bpl: off + y * bpl + w * 4]
    px = struct.unpack(fmt + "%dI" % w, line)
    rows.append(b"\0" + bytes(c for p in px for c in ((p >> rs) & 255, (p >> gs) & 255, (p >> bs) & 255)))


def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)


png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, ht, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(b"".join(rows), 6)) + chunk(b"IEND", b"")
open(sys.argv[2], "wb").write(png)
