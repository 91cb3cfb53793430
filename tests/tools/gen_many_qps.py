#!/usr/bin/env python3
"""gen_many_qps.py: a classic pcap with N distinct RoCE v2 flows, one RC SEND Only per QP
(dest QPN i), 198.18.0.1 -> 198.18.0.2; for agentxdp-analyze memory tests.
Usage: gen_many_qps.py OUT.pcap [N]"""
import struct
import sys


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def main():
    out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    eth = bytes.fromhex("02000000000202000000000108 00".replace(" ", ""))
    payload = bytes(16)
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(n):
            qpn = (i + 1) & 0xFFFFFF
            bth = struct.pack("!BBHII", 0x04, 0x40, 0xFFFF, qpn, i & 0xFFFFFF)
            udp_len = 8 + len(bth) + len(payload) + 4
            udp = struct.pack("!HHHH", 49152 + (i % 16384), 4791, udp_len, 0)
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, i & 0xFFFF, 0x4000, 64, 17, 0,
                             bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2]))
            ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
            frame = eth + ip + udp + bth + payload + bytes(4)
            t_us = i  # one packet per microsecond
            f.write(struct.pack("<IIII", t_us // 1000000, t_us % 1000000, len(frame), len(frame)))
            f.write(frame)


if __name__ == "__main__":
    main()
