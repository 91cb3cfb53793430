#!/usr/bin/env python3
"""png_colour_count.py PNG RRGGBB [TOL]: pixels of that colour (each channel within TOL,
default 12) and the number of distinct colours, as "MATCHES DISTINCT". Standard library
only (zlib): 8-bit RGB or RGBA, non-interlaced, as Chromium writes its screenshots."""
import struct
import sys
import zlib


def decode(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise SystemExit('not a PNG: ' + path)
    pos, idat, hdr = 8, b'', None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise SystemExit('unsupported PNG (depth %d, colour type %d)' % (depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def main():
    w, h, bpp, rows = decode(sys.argv[1])
    want = bytes.fromhex(sys.argv[2])
    tol = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    matches, seen = 0, set()
    for line in rows:
        for x in range(0, w * bpp, bpp):
            px = bytes(line[x:x + 3])
            seen.add(px)
            if all(abs(px[k] - want[k]) <= tol for k in range(3)):
                matches += 1
    print(matches, len(seen))


main()
