#!/usr/bin/env python3
"""pcapng_inbound.py FILE.pcapng...: write FILE.in.pcapng holding only the packets whose
EPB flags say inbound (or say nothing): what an ingress-only (XDP) capture on that host
would hold. Used to build per-host ingress traces from agentxdp-synth --vantage each-host."""
import struct
import sys


def inbound_only(src, dst):
    data = open(src, "rb").read()
    out, i, e = [], 0, "<"
    while i + 12 <= len(data):
        if struct.unpack_from("<I", data, i)[0] == 0x0A0D0D0A:  # section header: byte order
            e = "<" if struct.unpack_from("<I", data, i + 8)[0] == 0x1A2B3C4D else ">"
        btype, blen = struct.unpack_from(e + "II", data, i)
        if blen < 12 or i + blen > len(data):
            sys.exit("%s: truncated block at offset %d" % (src, i))
        block = data[i:i + blen]
        keep = True
        if btype == 6:  # enhanced packet block: options after the padded packet data
            caplen = struct.unpack_from(e + "I", block, 20)[0]
            j = 28 + (caplen + 3) // 4 * 4
            while j + 4 <= blen - 4:
                code, olen = struct.unpack_from(e + "HH", block, j)
                if code == 0:
                    break
                if code == 2 and olen == 4 and struct.unpack_from(e + "I", block, j + 4)[0] & 3 == 2:
                    keep = False  # epb_flags direction 2 = outbound
                j += 4 + (olen + 3) // 4 * 4
        if keep:
            out.append(block)
        i += blen
    with open(dst, "wb") as f:
        f.write(b"".join(out))


for path in sys.argv[1:]:
    inbound_only(path, path[: -len(".pcapng")] + ".in.pcapng")
