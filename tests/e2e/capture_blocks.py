#!/usr/bin/env python3
"""capture_blocks.py: list a pcap/pcapng file's packets and pcapng blocks, one line each, for the
capture tests (read independently of our writer; standard library only).

  capture_blocks.py FILE            -> "pkt IFID CAPLEN ORIGLEN FLAGS QUEUE DROPCOUNT HEX" per packet
  capture_blocks.py --blocks FILE   -> "shb", "idb NAME SNAPLEN TSRESOL", "isb IFID RECV DROP", ...
Exit status 1 when the file is cut inside a block (a pcapng must end on a block boundary).
"""
import struct
import sys


def options(body):
    """pcapng options (code, value) from an option area."""
    out, off = [], 0
    while off + 4 <= len(body):
        code, length = struct.unpack_from("<HH", body, off)
        off += 4
        if code == 0:
            break
        out.append((code, body[off:off + length]))
        off += (length + 3) & ~3
    return out


def pcap(data, blocks):
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic not in (0xa1b2c3d4, 0xa1b23c4d):
        sys.exit("not a little-endian pcap")
    off = 24
    while off < len(data):
        if off + 16 > len(data):
            return 1
        _, _, caplen, origlen = struct.unpack_from("<IIII", data, off)
        if off + 16 + caplen > len(data):
            return 1
        if not blocks:
            print("pkt 0 %d %d - - - %s" % (caplen, origlen, data[off + 16:off + 16 + caplen].hex()))
        off += 16 + caplen
    return 0


def pcapng(data, blocks):
    off = 0
    while off < len(data):
        if off + 12 > len(data):
            return 1
        btype, blen = struct.unpack_from("<II", data, off)
        if blen < 12 or off + blen > len(data) or struct.unpack_from("<I", data, off + blen - 4)[0] != blen:
            return 1
        body = data[off + 8:off + blen - 4]
        if btype == 0x0A0D0D0A:
            if blocks:
                opts = dict(options(body[16:]))
                print("shb hardware=%s os=%s app=%s" % tuple(
                    opts.get(c, b"").decode(errors="replace") for c in (2, 3, 4)))
        elif btype == 1:
            linktype, _, snaplen = struct.unpack_from("<HHI", body, 0)
            opts = dict(options(body[8:]))
            if blocks:
                print("idb %s linktype=%d snaplen=%d tsresol=%s" % (
                    opts.get(2, b"?").decode(), linktype, snaplen,
                    opts.get(9, b"\x06")[0]))
        elif btype == 6:
            ifid, _, _, caplen, origlen = struct.unpack_from("<IIIII", body, 0)
            opts = dict(options(body[20 + ((caplen + 3) & ~3):]))
            flags = struct.unpack("<I", opts[2])[0] if 2 in opts else "-"
            queue = struct.unpack("<I", opts[6])[0] if 6 in opts else "-"
            drops = struct.unpack("<Q", opts[4])[0] if 4 in opts else "-"
            if not blocks:
                print("pkt %d %d %d %s %s %s %s" % (ifid, caplen, origlen, flags, queue, drops,
                                                body[20:20 + caplen].hex()))
        elif btype == 5:
            ifid = struct.unpack_from("<I", body, 0)[0]
            opts = dict(options(body[12:]))
            recv = struct.unpack("<Q", opts[4])[0] if 4 in opts else "-"
            drop = struct.unpack("<Q", opts[5])[0] if 5 in opts else "-"
            if blocks:
                print("isb %d recv=%s drop=%s" % (ifid, recv, drop))
        elif blocks:
            print("block 0x%x" % btype)
        off += blen
    return 0


def main():
    blocks = sys.argv[1] == "--blocks"
    path = sys.argv[-1]
    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    if len(data) >= 4 and struct.unpack_from("<I", data, 0)[0] == 0x0A0D0D0A:
        return pcapng(data, blocks)
    return pcap(data, blocks)


if __name__ == "__main__":
    sys.exit(main())
