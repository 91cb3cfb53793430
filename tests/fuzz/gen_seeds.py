#!/usr/bin/env python3
"""gen_seeds.py: write the fuzz seed corpora for fuzz_decode and fuzz_pcapng from frames built here.

No bytes come from the shared captures (they must not be copied into the repository): every
frame is assembled field by field from the header layouts (IBA vol. 1 ch. 9, RFC 791/8200/768).
Usage: python3 tests/fuzz/gen_seeds.py   (rewrites tests/fuzz/corpus/{decode,pcapng}/seed-*)
       python3 tests/fuzz/gen_seeds.py --traces DIR   (crafted traces + .expect for the tshark test)
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MACS = bytes([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2])
IP4_SRC, IP4_DST = bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2])
IP6_SRC = bytes([0xfd, 0x99] + [0] * 13 + [1])
IP6_DST = bytes([0xfd, 0x99] + [0] * 13 + [2])


def bth(opcode, qp=0x12, psn=100, ack=1, pad=0, tver=0):
    return struct.pack(">BBHB", opcode, (pad << 4) | tver, 0xFFFF, 0) + qp.to_bytes(3, "big") + \
        bytes([0x80 if ack else 0]) + psn.to_bytes(3, "big")


def reth(va=0x7F0000001000, rkey=0x1234, length=4096):
    return struct.pack(">QII", va, rkey, length)


def aeth(syndrome=0x1F, msn=7):
    return bytes([syndrome]) + msn.to_bytes(3, "big")


def deth(qkey=0x80010000, srcqp=1):
    return struct.pack(">II", qkey, srcqp)


ICRC = b"\0\0\0\0"


def cm_mad(attr, fields):
    hdr = struct.pack(">BBBBHHQHHI", 1, 0x07, 2, 3, 0, 0, 0x1122334455667788, attr, 0, 0)
    msg = bytearray(232)
    for off, size, val in fields:
        msg[off:off + size] = val.to_bytes(size, "big")
    return hdr + bytes(msg)


def ipv4(payload, tos=0x02, opts=b"", proto=17, frag=0x4000):
    ihl = 5 + len(opts) // 4
    return struct.pack(">BBHHHBBH", 0x40 | ihl, tos, 20 + len(opts) + len(payload), 1, frag, 64,
                       proto, 0) + IP4_SRC + IP4_DST + opts + payload


def ipv6(payload, tc=0x02, ext=b"", first_next=17):
    word = (6 << 28) | (tc << 20) | 0x12345
    return struct.pack(">IHBB", word, len(ext) + len(payload), first_next, 64) + IP6_SRC + \
        IP6_DST + ext + payload


def udp(ib, sport=49152, dport=4791, delta=0):
    return struct.pack(">HHHH", sport, dport, 8 + len(ib) + delta, 0) + ib


def eth(l3, ethertype=0x0800, tags=()):
    out = MACS
    for tpid, vid in tags:
        out += struct.pack(">HH", tpid, vid)
    return out + struct.pack(">H", ethertype) + l3


def sll(l3, ethertype=0x0800):
    return struct.pack(">HHH", 0, 1, 6) + MACS[:8] + struct.pack(">H", ethertype) + l3


def sll2(l3, ethertype=0x0800):
    return struct.pack(">HHIHBB", ethertype, 0, 3, 1, 0, 6) + MACS[:8] + l3


def grh(ib, tc=0):
    return struct.pack(">IHBB", (6 << 28) | (tc << 20), len(ib), 0x1B, 1) + IP6_SRC + IP6_DST


def lrh(rest, lnh=2):
    return struct.pack(">BBHHH", 0, lnh, 3, (8 + len(rest)) // 4, 1) + rest


def erf(payload, rtype=21, ext=0, pad_before=b"", pad_after=b"", ts=(1210794479 << 32) | 0x7FEBEA60):
    """An ERF record (Endace ERF types reference): LE64 time, type (0x80: extension headers
    follow), flags (interface 1, varying length), rlen, loss counter, wlen."""
    exts = b"".join(bytes([(0x80 if i + 1 < ext else 0) | 3]) + bytes(7) for i in range(ext))
    rlen = 16 + len(exts) + len(pad_before) + len(payload) + len(pad_after)
    hdr = struct.pack("<Q", ts) + struct.pack(">BBHHH", rtype | (0x80 if ext else 0), 0x05, rlen, 0, len(payload))
    return hdr + exts + pad_before + payload + pad_after


# ---- mirror-session tunnels (draft-foschiano-erspan-03, RFC 2784/2890, RFC 7348) ----

def gre(inner, proto, seq=None, key=None, csum=False):
    flags = (0x8000 if csum else 0) | (0x2000 if key is not None else 0) | (0x1000 if seq is not None else 0)
    out = struct.pack(">HH", flags, proto)
    if csum:
        out += struct.pack(">HH", 0xABCD, 0)
    if key is not None:
        out += struct.pack(">I", key)
    if seq is not None:
        out += struct.pack(">I", seq)
    return out + inner


def erspan2(frame, session=100, ver=1):
    return struct.pack(">HHI", ver << 12, session & 0x3FF, 0x12345) + frame


def erspan3(frame, session=200, ts=123456789, gra=2, platform_secs=None, ver=2):
    o = 1 if platform_secs is not None else 0
    out = struct.pack(">HHII", ver << 12, session & 0x3FF, ts, (1 << 15) | (gra << 1) | o)
    if o:
        out += struct.pack(">II", 3 << 26, platform_secs)
    return out + frame


def vxlan(frame, vni=4242, flags=0x08000000):
    return struct.pack(">II", flags, vni << 8) + frame


def outer4(tunnel, proto=47, **kw):
    return eth(ipv4(tunnel, proto=proto), **kw)


def v2(ib, **kw):
    return eth(ipv4(udp(ib)), **kw)


def decode_seeds():
    s = {}
    s["rc-send-first"] = v2(bth(0x00) + bytes(256) + ICRC)
    s["rc-send-only-imm"] = v2(bth(0x05) + b"\xde\xad\xbe\xef" + bytes(16) + ICRC)
    s["rc-write-first"] = v2(bth(0x06) + reth() + bytes(256) + ICRC)
    s["rc-write-only-imm-pad"] = v2(bth(0x0B, pad=2) + reth(length=18) + b"\1\2\3\4" + bytes(20) + ICRC)
    s["rc-read-req"] = v2(bth(0x0C) + reth(length=65536) + ICRC)
    s["rc-read-resp-first"] = v2(bth(0x0D, ack=0) + aeth(0x00) + bytes(256) + ICRC)
    s["rc-read-resp-middle"] = v2(bth(0x0E, ack=0) + bytes(256) + ICRC)
    s["rc-ack"] = v2(bth(0x11, ack=0) + aeth(0x1F, 929) + ICRC)
    s["rc-rnr-nak"] = v2(bth(0x11, ack=0) + aeth(0x2E, 5) + ICRC)
    s["rc-nak-seq"] = v2(bth(0x11, ack=0) + aeth(0x60, 5) + ICRC)
    s["rc-cmpswap"] = v2(bth(0x13) + struct.pack(">QIQQ", 0x1000, 7, 1, 2) + ICRC)
    s["rc-atomic-ack"] = v2(bth(0x12, ack=0) + aeth() + struct.pack(">Q", 9) + ICRC)
    s["rc-send-inv"] = v2(bth(0x17) + struct.pack(">I", 0x4455) + bytes(8) + ICRC)
    s["uc-send-first"] = v2(bth(0x20, ack=0) + bytes(1024) + ICRC)
    s["rd-send-only"] = v2(bth(0x44) + struct.pack(">I", 0x777) + deth(0x11111111, 0x999) + bytes(32) + ICRC)
    s["rd-ack"] = v2(bth(0x51) + struct.pack(">I", 0x777) + aeth() + ICRC)
    s["ud-send-only-imm"] = v2(bth(0x65, qp=0x99) + deth(0x1234, 0x55) + b"\0\0\0\1" + bytes(64) + ICRC)
    s["xrc-write-first"] = v2(bth(0xA6) + struct.pack(">I", 0xABCDEF) + reth() + bytes(64) + ICRC)
    s["cnp"] = v2(bth(0x81, ack=0) + bytes(16) + ICRC)
    s["mlx-dc-vendor"] = v2(bth(0xC4) + bytes(64) + ICRC)
    s["reserved-opcode"] = v2(bth(0x15) + bytes(8) + ICRC)
    s["cm-req"] = v2(bth(0x64, qp=1, ack=0) + deth() +
                     cm_mad(0x10, [(0, 4, 0x3EB0BDE5), (32, 3, 0xDC), (44, 3, 97325)]) + ICRC)
    s["cm-rep"] = v2(bth(0x64, qp=1, ack=0) + deth() +
                     cm_mad(0x13, [(0, 4, 1), (4, 4, 2), (12, 3, 0x8D), (20, 3, 14432175)]) + ICRC)
    s["cm-rtu"] = v2(bth(0x64, qp=1, ack=0) + deth() + cm_mad(0x14, [(0, 4, 1), (4, 4, 2)]) + ICRC)
    s["cm-rej"] = v2(bth(0x64, qp=1, ack=0) + deth() + cm_mad(0x12, [(0, 4, 1), (10, 2, 28)]) + ICRC)
    s["cm-dreq"] = v2(bth(0x64, qp=1, ack=0) + deth() + cm_mad(0x15, [(0, 4, 1), (8, 3, 0x123)]) + ICRC)
    ib = bth(0x04) + bytes(32) + ICRC
    s["vlan"] = v2(ib, tags=[(0x8100, 42)])
    s["qinq"] = v2(ib, tags=[(0x88A8, 100), (0x8100, 200)])
    s["ipv4-options"] = eth(ipv4(udp(ib), opts=b"\x01" * 12))
    s["ipv4-ce"] = eth(ipv4(udp(ib), tos=0x03))
    s["ipv6"] = eth(ipv6(udp(ib)), ethertype=0x86DD)
    hbh = bytes([60, 0]) + bytes(6)
    dst = bytes([17, 0]) + bytes(6)
    s["ipv6-ext"] = eth(ipv6(udp(ib), ext=hbh + dst, first_next=0), ethertype=0x86DD)
    s["ipv6-frag"] = eth(ipv6(udp(ib), ext=bytes([17, 0, 0, 1, 0, 0, 0, 7]), first_next=44), ethertype=0x86DD)
    s["sll"] = sll(ipv4(udp(ib)))
    s["sll2-ipv6"] = sll2(ipv6(udp(ib)), ethertype=0x86DD)
    s["raw-ipv4"] = ipv4(udp(ib))
    s["roce-v1"] = eth(grh(ib, tc=3) + ib, ethertype=0x8915)
    s["ib-local"] = lrh(ib + b"\0\0")
    s["ib-global"] = lrh(grh(ib) + ib + b"\0\0", lnh=3)
    s["ib-vl15-ud-mad"] = struct.pack(">BBHHH", 0xF0, 2, 0xFFFF, (8 + 12 + 8 + 256 + 4) // 4, 0xFFFF) + \
        bth(0x64, qp=0, ack=0) + deth(0, 0) + bytes(256) + ICRC + b"\0\0"
    s["ib-rc-write-first"] = lrh(bth(0x06) + reth() + bytes(64) + ICRC + b"\0\0")
    s["ib-rc-ack"] = lrh(bth(0x11, ack=0) + aeth(0x1F, 3) + ICRC + b"\0\0")
    s["ib-cm-req"] = lrh(bth(0x64, qp=1, ack=0) + deth() +
                         cm_mad(0x10, [(0, 4, 0x3EB0BDE5), (32, 3, 0xDC), (44, 3, 97325)]) + ICRC + b"\0\0")
    s["erf-ib-local"] = erf(s["ib-local"], pad_after=bytes(6))
    s["erf-ib-global-ext"] = erf(s["ib-global"], ext=2)
    s["erf-ib-link"] = erf(bytes(6), rtype=25)
    s["erf-eth-v2"] = erf(v2(ib) + bytes(4), rtype=2, pad_before=b"\0\0")
    s["erf-ipv4-v2"] = erf(ipv4(udp(ib)), rtype=22)
    s["erf-short-rlen"] = erf(s["ib-local"])[:10] + struct.pack(">H", 8) + erf(s["ib-local"])[12:]
    s["truncated-reth"] = v2(bth(0x06) + reth() + bytes(256) + ICRC)[:14 + 20 + 8 + 12 + 6]
    s["bad-udp-len"] = eth(ipv4(udp(ib, delta=100)))
    s["bad-tver"] = v2(bth(0x04, tver=1) + bytes(8) + ICRC)
    s["bad-ext"] = eth(ipv4(udp(bth(0x0A) + bytes(4) + ICRC)))
    s["tcp"] = eth(ipv4(bytes(40), proto=6))
    s["ipv4-fragment"] = eth(ipv4(udp(ib), frag=0x2000))
    s["port-4792"] = eth(ipv4(udp(ib, dport=4792)))
    for name, frame in tunnel_frames(ib).items():
        s[name] = frame
    return s


def tunnel_frames(ib):
    """One frame per tunnel a mirror session uses, with the plain frame `ib` inside."""
    inner = v2(ib)
    t = {}
    t["erspan1"] = outer4(gre(inner, 0x88BE))
    t["erspan2"] = outer4(gre(erspan2(inner), 0x88BE, seq=1))
    t["erspan2-vlan-outer-inner"] = outer4(gre(erspan2(v2(ib, tags=[(0x8100, 42)])), 0x88BE, seq=2),
                                           tags=[(0x88A8, 5), (0x8100, 7)])
    t["erspan3"] = outer4(gre(erspan3(inner, gra=1), 0x22EB, seq=3))
    t["erspan3-platform"] = outer4(gre(erspan3(inner, platform_secs=1767225600), 0x22EB, seq=4))
    t["erspan3-ipv6-outer"] = eth(ipv6(gre(erspan3(eth(ipv6(udp(ib)), ethertype=0x86DD)), 0x22EB, seq=5),
                                       first_next=47), ethertype=0x86DD)
    t["gre-teb"] = outer4(gre(inner, 0x6558))
    t["gre-teb-key-csum-seq"] = outer4(gre(inner, 0x6558, seq=6, key=0xC0FFEE, csum=True))
    t["vxlan"] = outer4(udp(vxlan(inner), sport=54321, dport=4789), proto=17)
    t["vxlan-in-erspan2"] = outer4(gre(erspan2(outer4(udp(vxlan(inner), sport=1, dport=4789), proto=17)),
                                       0x88BE, seq=7))
    t["erspan-roce-v1"] = outer4(gre(erspan2(eth(grh(ib) + ib, ethertype=0x8915)), 0x88BE, seq=8))
    t["bad-erspan2-ver"] = outer4(gre(erspan2(inner, ver=2), 0x88BE, seq=9))
    t["bad-vxlan-flags"] = outer4(udp(vxlan(inner, flags=0), dport=4789), proto=17)
    t["gre-pptp"] = outer4(struct.pack(">HH", 0x3001, 0x880B) + bytes(8) + inner)
    return t


# ---- pcapng (draft-ietf-opsawg-pcapng), little-endian ----

def block(btype, body):
    body += bytes((-len(body)) % 4)
    total = 12 + len(body)
    return struct.pack("<II", btype, total) + body + struct.pack("<I", total)


def opt(code, value):
    return struct.pack("<HH", code, len(value)) + value + bytes((-len(value)) % 4)


def shb():
    return block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))


def idb(linktype=1):
    return block(1, struct.pack("<HHI", linktype, 0, 65535) + opt(9, b"\x09") + opt(0, b""))


def epb(frame, ts_ns, drops=None, iface=0):
    body = struct.pack("<IIIII", iface, ts_ns >> 32, ts_ns & 0xFFFFFFFF, len(frame), len(frame))
    body += frame + bytes((-len(frame)) % 4)
    if drops is not None:
        body += opt(4, struct.pack("<Q", drops)) + opt(0, b"")
    return block(6, body)


def isb(ifdrop, iface=0):
    return block(5, struct.pack("<III", iface, 0, 1) + opt(5, struct.pack("<Q", ifdrop)) + opt(0, b""))


def pcapng_seeds(frames):
    s = {}
    names = list(frames)
    ts = 1700000000000000000
    s["ng-basic"] = shb() + idb() + b"".join(epb(frames[n], ts + i) for i, n in enumerate(names[:6]))
    s["ng-drops"] = shb() + idb() + epb(frames["rc-ack"], ts, drops=3) + epb(frames["cnp"], ts + 5, drops=1) + isb(4) + isb(9)
    s["ng-two-sections"] = shb() + idb() + epb(frames["vlan"], ts) + isb(2) + shb() + idb() + epb(frames["qinq"], ts + 9) + isb(1)
    s["ng-two-ifaces"] = shb() + idb() + idb(113) + epb(frames["rc-send-first"], ts) + epb(frames["sll"], ts + 1, iface=1) + isb(1, 1)
    s["ng-raw-ip"] = shb() + idb(101) + epb(frames["raw-ipv4"], ts)
    s["ng-infiniband"] = shb() + idb(247) + epb(frames["ib-local"], ts) + epb(frames["ib-global"], ts + 1)
    s["ng-truncated"] = (shb() + idb() + epb(frames["cm-req"], ts))[:-30]
    s["ng-big-endian"] = block_be_shb()
    s["ng-mixed-linktypes"] = mixed_linktypes(frames, ts)
    # classic pcap with nanosecond magic, for libpcap's other path
    hdr = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)
    rec = b"".join(struct.pack("<IIII", 1, i, len(frames[n]), len(frames[n])) + frames[n]
                   for i, n in enumerate(names[6:12]))
    s["pcap-ns"] = hdr + rec
    return s


def mixed_linktypes(frames, ts):
    """Interfaces of different link types, which libpcap refuses: the trace reader's own pcapng
    reader (if_tsresol 2^-2 with if_tsoffset, EPB, obsolete PB, SPB, a second interface late)."""
    idb_sll = block(1, struct.pack("<HHI", 113, 0, 65535) + opt(9, b"\x82") +
                    opt(14, struct.pack("<q", -5)) + opt(0, b""))
    quarters = ts // 250000000 + 1
    pb = block(2, struct.pack("<HHIIII", 1, 0xFFFF, quarters >> 32, quarters & 0xFFFFFFFF,
                              len(frames["sll"]), len(frames["sll"])) + frames["sll"])
    spb = block(3, struct.pack("<I", len(frames["rc-ack"])) + frames["rc-ack"])
    return (shb() + idb() + epb(frames["rc-send-first"], ts) + idb_sll +
            epb(frames["sll"], ts // 250000000, iface=1) + pb + spb + isb(2, 1))


def block_be_shb():
    body = struct.pack(">IHHq", 0x1A2B3C4D, 1, 0, -1)
    total = 12 + len(body)
    b = struct.pack(">II", 0x0A0D0D0A, total) + body + struct.pack(">I", total)
    idb_body = struct.pack(">HHI", 1, 0, 65535)
    b += struct.pack(">II", 1, 12 + len(idb_body)) + idb_body + struct.pack(">I", 12 + len(idb_body))
    return b


def write(dirname, seeds):
    d = os.path.join(HERE, "corpus", dirname)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, "seed-" + name), "wb") as f:
            f.write(data)


def write_pcap(path, linktype, frames, snaplen=65535):
    """Classic pcap, microsecond magic, one record per frame; frames are (bytes, origlen) pairs."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype))
        for i, (data, orig) in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i, i, len(data), orig) + data)


def expect_line(opcode, syn="", msn="", dmalen="", sport="49152", qp=0x12, psn=100, a=1):
    """The tshark -T fields columns a correct decoder prints for a frame built with these values."""
    return "\t".join(str(x) for x in (opcode, "0x%06x" % qp, psn, a, syn, msn, dmalen, sport))


# Frames where tshark 4.0 is not the reference: (rule, expected, why). The expectation comes
# from the values the frame was built with, not from any decoder.
TSHARK_WRONG = {
    "bad-udp-len": ("malformed", "bad-udp",
                    "UDP length exceeds the IP payload (RFC 768); tshark decodes the BTH anyway"),
    "bad-tver": ("malformed", "bad-bth", "BTH TVer 1 is reserved (IBA 9.2); tshark decodes it anyway"),
    "bad-ext": ("malformed", "bad-ext",
                "RDMA WRITE Only needs a 16-byte RETH (IBA 9.2 table 38) the UDP length has no room for"),
    "bad-erspan2-ver": ("malformed", "bad-encap",
                        "GRE 0x88be with S set carries ERSPAN type II, whose Ver must be 1 "
                        "(draft-foschiano-erspan-03 4.2); this one says 2"),
    "bad-vxlan-flags": ("malformed", "bad-encap",
                        "VXLAN I flag clear: no valid VNI (RFC 7348 section 5)"),
    "rd-ack": ("spec", expect_line(0x51, 31, 7),
               "tshark 4.0 reads an RD Acknowledge's AETH at the RDETH offset (packet-infiniband.c "
               "case RDETH_AETH does not parse the RDETH); IBA 9.3.1: RDETH then AETH"),
    "xrc-write-first": ("spec", expect_line(0xA6, dmalen=4096),
                        "tshark 4.0 does not know the XRCETH (IBA annex A14) and shows the rest as "
                        "vendor data, so it has no RETH"),
}


def crafted_traces(outdir):
    """Traces for tests/golden/test_decode_vs_tshark.sh, with NAME.expect files for the frames
    where tshark is not the reference (frame, rule, expected, why)."""
    s = decode_seeds()
    other_link = {"sll", "sll2-ipv6", "raw-ipv4", "ib-local", "ib-global"}
    ether, expect = [], []
    for name, frame in s.items():
        if name in other_link:
            continue
        ether.append((frame, len(frame)))
        if name in TSHARK_WRONG:
            rule, val, why = TSHARK_WRONG[name]
            expect.append("%d\t%s\t%s\t%s" % (len(ether), rule, val, why))
    full = s["rc-write-first"]
    ether.append((full[:60], len(full)))   # trimmed by a snaplen: origlen tells the truth
    ether.append((full[:70], 70))          # cut with origlen == caplen: the IP header tells the truth
    ib = bth(0x04) + bytes(32) + ICRC
    qinq_v6 = eth(ipv6(udp(bth(0x0A) + reth(length=32) + bytes(32) + ICRC)), ethertype=0x86DD,
                  tags=[(0x88A8, 7), (0x8100, 8)])
    ether.append((qinq_v6, len(qinq_v6)))
    traces = {
        "crafted-ether": (1, ether, expect),
        "crafted-sll": (113, [(s["sll"], len(s["sll"])),
                              (sll(ipv6(udp(ib)), ethertype=0x86DD), len(sll(ipv6(udp(ib)), ethertype=0x86DD)))], []),
        "crafted-sll2": (276, [(s["sll2-ipv6"], len(s["sll2-ipv6"])),
                               (sll2(ipv4(udp(ib))), len(sll2(ipv4(udp(ib)))))], []),
        "crafted-raw": (101, [(s["raw-ipv4"], len(s["raw-ipv4"])), (ipv6(udp(ib)), len(ipv6(udp(ib))))], []),
        "crafted-ib": (247, [(s["ib-local"], len(s["ib-local"])), (s["ib-global"], len(s["ib-global"]))],
                       ["%d\tspec\t%s\ttshark 4.0 cannot read LINKTYPE_INFINIBAND (247) pcap files"
                        % (i, expect_line(0x04, sport="")) for i in (1, 2)]),
        # RoCE v2 from well-known UDP source ports: tshark tries the lower port first (DNS, NTP).
        "crafted-wellknown-sport": (1, [(eth(ipv4(udp(ib, sport=53))), 0), (eth(ipv4(udp(ib, sport=123))), 0),
                                        (eth(ipv4(udp(bth(0x11, ack=0) + aeth() + ICRC, sport=2049))), 0)], []),
    }
    for name, (linktype, frames, exp) in traces.items():
        frames = [(d, o or len(d)) for d, o in frames]
        write_pcap(os.path.join(outdir, name + ".pcap"), linktype, frames)
        with open(os.path.join(outdir, name + ".expect"), "w") as f:
            f.write("".join(line + "\n" for line in exp))


if __name__ == "__main__":
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--traces":
        crafted_traces(sys.argv[2])
        sys.exit(0)
    frames = decode_seeds()
    write("decode", frames)
    write("pcapng", pcapng_seeds(frames))
    print("wrote %d decode seeds and pcapng seeds" % len(frames))
