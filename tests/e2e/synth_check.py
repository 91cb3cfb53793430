#!/usr/bin/env python3
"""synth_check.py: check agentxdp-synth's truth.json against counts taken independently from its
traces (tshark fields; ICRC recomputed here with zlib over frames exported by editcap).

Usage: synth_check.py DIR        (DIR holds truth.json and the trace files it names)
Prints one PASS/FAIL line per check; exit status 0 when all pass.
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import zlib
from decimal import Decimal

TSHARK = ["tshark", "--disable-protocol", "rpcordma", "--disable-protocol", "nvme-rdma"]
FIELDS = ["frame.time_epoch", "frame.len", "frame.cap_len", "ip.src", "ip.dst", "ipv6.src",
          "ipv6.dst", "ip.dsfield.ecn", "ipv6.tclass.ecn", "infiniband.bth.opcode",
          "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.aeth.syndrome",
          "infiniband.reth.dmalen", "_ws.malformed", "_ws.expert.severity"]
REQUEST_OPS = set(range(0x00, 0x0d)) | {0x13, 0x14, 0x16, 0x17}

failures = 0


def report(ok, name, why=""):
    global failures
    if ok:
        print("PASS %s" % name)
    else:
        failures += 1
        print("FAIL %s: %s" % (name, why))


def tshark_rows(path):
    cmd = TSHARK + ["-r", path, "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        v = dict(zip(FIELDS, line.split("\t")))
        rows.append(v)
    return rows


def num(s):
    return int(s, 0) if s else None


def frames_of(path):
    """Raw frames (caplen, origlen, bytes) via editcap -> classic pcap, parsed here."""
    with tempfile.NamedTemporaryFile(suffix=".pcap") as tmp:
        subprocess.run(["editcap", "-F", "pcap", path, tmp.name], check=True,
                       capture_output=True)
        data = open(tmp.name, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    off = 24
    while off + 16 <= len(data):
        _, _, incl, orig = struct.unpack(endian + "IIII", data[off:off + 16])
        yield incl, orig, data[off + 16:off + 16 + incl]
        off += 16 + incl


def icrc_ok(frame):
    """RoCE v2 ICRC (IBA annex A17), computed independently of lib/model/roce_frame.c."""
    off = 12
    etype = struct.unpack(">H", frame[off:off + 2])[0]
    if etype == 0x8100:
        off += 4
        etype = struct.unpack(">H", frame[off:off + 2])[0]
    ip = bytearray(frame[off + 2:])
    if etype == 0x0800:
        ihl = (ip[0] & 15) * 4
        ip[1] = 0xff
        ip[8] = 0xff
        ip[10:12] = b"\xff\xff"
    elif etype == 0x86dd:
        ihl = 40
        ip[0] |= 0x0f
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xff
    else:
        return None
    ip[ihl + 6:ihl + 8] = b"\xff\xff"
    ip[ihl + 8 + 4] = 0xff
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip[:-4]))
    return crc == struct.unpack("<I", bytes(ip[-4:]))[0]


def nearest_rank(sorted_vals, q):
    return sorted_vals[math.ceil(q * len(sorted_vals)) - 1]


def check_vantage(d, truth, vant):
    name = "%s/%s" % (os.path.basename(d.rstrip("/")), vant["trace"])
    path = os.path.join(d, vant["trace"])
    rows = tshark_rows(path)
    mtu = truth["mtu"]
    report(len(rows) == vant["packets"], name + " frame count",
           "tshark %d, truth %d" % (len(rows), vant["packets"]))
    bad = [i + 1 for i, r in enumerate(rows) if r["_ws.malformed"] or r["_ws.expert.severity"]]
    report(not bad, name + " no malformed or expert", "frames %s" % bad[:5])
    notroce = [i + 1 for i, r in enumerate(rows) if not r["infiniband.bth.opcode"]]
    report(not notroce, name + " every frame is RoCE", "frames %s" % notroce[:5])

    # ICRC on every untrimmed frame.
    checked = badcrc = 0
    for incl, orig, frame in frames_of(path):
        if incl != orig:
            continue
        r = icrc_ok(frame)
        if r is None:
            continue
        checked += 1
        badcrc += 0 if r else 1
    if truth["snaplen"] == 0:
        report(checked == len(rows) and badcrc == 0, name + " ICRC",
               "%d checked, %d bad, %d frames" % (checked, badcrc, len(rows)))
    else:
        report(badcrc == 0, name + " ICRC (untrimmed frames)", "%d of %d bad" % (badcrc, checked))

    # QP pairing from truth.qps: flow key -> (qp, side).
    qp_of = {}
    for q in truth["qps"]:
        qp_of[(q["requester"], q["responder"], q["responder_qpn"])] = (q, 0)
        qp_of[(q["responder"], q["requester"], q["requester_qpn"])] = (q, 1)

    def key_of(q, side):
        if side == 0:
            return (q["requester"], q["responder"], q["responder_qpn"])
        return (q["responder"], q["requester"], q["requester_qpn"])

    flows = {}

    def flow(k):
        return flows.setdefault(k, {"packets": 0, "bytes": 0, "first_transmissions": 0,
                                    "retransmitted_packets": 0, "naks_psn_seq": 0,
                                    "naks_other": 0, "rnr_naks": 0, "cnps": 0, "ecn_ce": 0,
                                    "lat": [], "psn": {}})

    for r in rows:
        src = r["ip.src"] or r["ipv6.src"]
        dst = r["ip.dst"] or r["ipv6.dst"]
        k = (src, dst, num(r["infiniband.bth.destqp"]))
        f = flow(k)
        ts = int(Decimal(r["frame.time_epoch"]) * 1000000000)
        f["packets"] += 1
        f["bytes"] += int(r["frame.len"])
        ecn = r["ip.dsfield.ecn"] or r["ipv6.tclass.ecn"]
        if ecn and int(ecn, 0) == 3:
            f["ecn_ce"] += 1
        opcode = num(r["infiniband.bth.opcode"])
        q, side = qp_of.get(k, (None, None))
        if q is None:
            report(False, name + " flow known", "%s not in truth qps" % (k,))
            continue
        if opcode == 0x81:
            flow(key_of(q, 1 - side))["cnps"] += 1
            continue
        if q["transport"] != "RC":
            if side == 0:
                f["first_transmissions"] += 1
            continue
        op = opcode & 0x1f
        psn = num(r["infiniband.bth.psn"])
        if side == 0 and op in REQUEST_OPS:
            n = 1
            if op == 0x0c:
                dma = num(r["infiniband.reth.dmalen"]) or 0
                n = max(1, -(-dma // mtu))
            if psn in f["psn"]:
                f["retransmitted_packets"] += 1
            else:
                f["first_transmissions"] += 1
            for i in range(n):
                p = (psn + i) & 0xffffff
                if p in f["psn"]:
                    f["psn"][p][1] += 1
                else:
                    f["psn"][p] = [ts, 1, False]
        elif side == 1 and op in (0x11, 0x12):
            syn = num(r["infiniband.aeth.syndrome"])
            req = flow(key_of(q, 0))
            kind = syn >> 5
            if kind == 0:
                s = req["psn"].get(psn)
                if s and not s[2]:
                    s[2] = True
                    if s[1] == 1:
                        req["lat"].append(ts - s[0])
            elif kind == 1:
                req["rnr_naks"] += 1
            elif kind == 3:
                if syn & 0x1f == 0:
                    req["naks_psn_seq"] += 1
                else:
                    req["naks_other"] += 1

    truth_flows = {(f["src"], f["dst"], f["dst_qpn"]): f for f in vant["flows"]}
    listed = {k for k, f in flows.items()
              if f["packets"] or any(f[c] for c in ("naks_psn_seq", "naks_other", "rnr_naks",
                                                      "cnps", "retransmitted_packets"))}
    report(listed <= set(truth_flows), name + " every trace flow is in truth",
           "missing %s" % sorted(listed - set(truth_flows))[:3])
    mism = []
    counters = ["packets", "bytes", "first_transmissions", "retransmitted_packets",
                "naks_psn_seq", "naks_other", "rnr_naks", "cnps", "ecn_ce"]
    for k, tf in truth_flows.items():
        f = flow(k)
        for c in counters:
            if f[c] != tf[c]:
                mism.append("%s %s: trace %d truth %d" % (k, c, f[c], tf[c]))
        lat = sorted(f["lat"])
        if len(lat) != tf["ack_samples"]:
            mism.append("%s ack_samples: trace %d truth %d" % (k, len(lat), tf["ack_samples"]))
        elif lat:
            got = (nearest_rank(lat, 0.5), nearest_rank(lat, 0.99), lat[-1])
            want = (tf["ack_latency_p50_ns"], tf["ack_latency_p99_ns"], tf["ack_latency_max_ns"])
            if got != want:
                mism.append("%s ack latency p50/p99/max: trace %s truth %s" % (k, got, want))
    report(not mism, name + " truth matches the trace (%d flows)" % len(truth_flows),
           "; ".join(mism[:4]))
    return flows


def main():
    d = sys.argv[1]
    truth = json.load(open(os.path.join(d, "truth.json")))
    report(truth.get("schema") == "agentxdp-synth-truth/1", os.path.basename(d) + " schema")
    for vant in truth["vantages"]:
        check_vantage(d, truth, vant)
    # links.csv / paths.csv agree with truth.
    links = [l.rstrip("\n").split(",") for l in open(os.path.join(d, "links.csv"))]
    names = {l[0]: (l[1], l[2]) for l in links[1:]}
    ok = links[0] == ["link", "a", "b"] and all(n == "%s-%s" % ab for n, ab in names.items())
    report(ok, os.path.basename(d) + " links.csv names are A-B")
    paths = [l.rstrip("\n").split(",") for l in open(os.path.join(d, "paths.csv"))]
    ok = paths[0] == ["src", "dst", "udp_sport", "links..."]
    bad = []
    for p in paths[1:]:
        at = p[0]
        for ln in p[3:]:
            a, b = names.get(ln, (None, None))
            if at == a:
                at = b
            elif at == b:
                at = a
            else:
                bad.append(p)
                break
        if at != p[1]:
            bad.append(p)
    rows = {tuple(p[:3]): p[3:] for p in paths[1:]}
    qps = {q["id"]: q for q in truth["qps"]}
    for vant in truth["vantages"]:
        for f in vant["flows"]:
            if not f["packets"]:
                continue
            q = qps[f["qp_id"]]
            want = q["path"] if f["src"] == q["requester"] else q["reverse_path"]
            if rows.get((f["src"], f["dst"], str(f["udp_sport"]))) != want:
                bad.append([f["src"], f["dst"], f["udp_sport"]])
    report(ok and not bad, os.path.basename(d) + " paths.csv chains from src to dst",
           "%s" % bad[:2])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
