#!/usr/bin/env python3
"""Checks a PNG that `ddtkit inspect --png` wrote, independently of its encoder: the signature,
every chunk's CRC-32, IHDR (8-bit RGB, no interlace), the zlib stream of IDAT decoded by
Python's zlib (which checks its Adler-32), one filter byte per row, and optionally the size
and some pixels, or that at least P percent of the cells are coloured (touched bytes: neither the
grey of untouched cells, the lighter grey of cell borders, white, nor the dark element ticks).

usage: check_png.py FILE [--size W H] [--pixel X Y R G B]... [--coloured-min P]
"""
import struct
import sys
import zlib


def fail(msg):
    print(f"check_png: {sys.argv[1]}: {msg}")
    sys.exit(1)


def main():
    args = sys.argv[2:]
    data = open(sys.argv[1], "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("bad signature")
    at, chunks = 8, []
    while at < len(data):
        if at + 12 > len(data):
            fail("truncated chunk")
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length:at + 12 + length])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            fail(f"CRC of chunk {kind!r} is wrong")
        chunks.append((kind, body))
        at += 12 + length
    kinds = [k for k, _ in chunks]
    if kinds[0] != b"IHDR" or kinds[-1] != b"IEND" or b"IDAT" not in kinds:
        fail(f"chunks {kinds}")
    w, h, depth, colour, comp, filt, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if (depth, colour, comp, filt, interlace) != (8, 2, 0, 0, 0):
        fail("not 8-bit RGB without interlace")
    z = b"".join(b for k, b in chunks if k == b"IDAT")
    try:
        raw = zlib.decompress(z)  # checks the Adler-32 at its end
    except zlib.error as e:
        fail(f"zlib stream: {e}")
    if len(raw) != h * (3 * w + 1):
        fail(f"{len(raw)} bytes of image data for {w} x {h}")
    rows = [raw[y * (3 * w + 1):(y + 1) * (3 * w + 1)] for y in range(h)]
    if any(r[0] != 0 for r in rows):
        fail("a row with a filter other than none")
    i = 0
    while i < len(args):
        if args[i] == "--size":
            if (w, h) != (int(args[i + 1]), int(args[i + 2])):
                fail(f"size {w} x {h}, expected {args[i + 1]} x {args[i + 2]}")
            i += 3
        elif args[i] == "--pixel":
            x, y, r, g, b = (int(v) for v in args[i + 1:i + 6])
            got = tuple(rows[y][1 + 3 * x:4 + 3 * x])
            if got != (r, g, b):
                fail(f"pixel ({x}, {y}) is {got}, expected {(r, g, b)}")
            i += 6
        elif args[i] == "--coloured-min":
            plain = {(200, 200, 200), (235, 235, 235), (255, 255, 255), (30, 30, 30)}
            pixels = [tuple(r[1 + 3 * x:4 + 3 * x]) for r in rows for x in range(w)]
            share = 100.0 * sum(p not in plain for p in pixels) / len(pixels)
            if share < float(args[i + 1]):
                fail(f"{share:.2f}% of the pixels are coloured, expected at least {args[i + 1]}%")
            i += 2
        else:
            fail(f"unknown argument {args[i]}")
    print(f"check_png: {sys.argv[1]}: valid, {w} x {h}, {len(chunks)} chunks")


main()
