#!/usr/bin/env bash
# test_not_understood.sh: issue #18 item 4, no silent all-clear. A run that decoded no RoCE, or
# whose capture is mostly frames it could not understand (a tunnel it cannot open), exits 1
# with ONE line that says what it found instead (link types, top EtherTypes / IP protocols /
# UDP ports / GRE protocols) and what would help; and the help is right: the option it names
# turns the same trace into an analysis.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip not-understood "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
command -v python3 >/dev/null || { skip not-understood "python3 not installed"; exit 0; }
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# mk OUT KIND [IN.pcap]: a pcap of crafted frames (KIND below), or IN's frames rewritten.
mk() {
	python3 - "$@" <<'PY'
import struct, sys
out, kind = sys.argv[1], sys.argv[2]
def ip4(proto, payload):
    return (struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, 64, proto, 0,
                        bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + payload)
def eth(ethertype, payload):
    return bytes.fromhex("020000000002020000000001") + struct.pack(">H", ethertype) + payload
def udp(dport, payload):
    return struct.pack(">HHHH", 49152, dport, 8 + len(payload), 0) + payload
tcp = ip4(6, bytes(20) + b"x" * 40)
erspan2 = struct.pack(">HHI", 0x1000, 0x88be, 7) + struct.pack(">HHI", 0x1000, 5, 0)
frames = []
def read(path):
    with open(path, "rb") as f:
        data = f.read()
    assert struct.unpack("<I", data[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d), "little-endian pcap expected"
    off, res = 24, []
    while off + 16 <= len(data):
        _, _, cap, _ = struct.unpack("<IIII", data[off:off + 16])
        res.append(data[off + 16:off + 16 + cap])
        off += 16 + cap
    return res
if kind == "arp":
    frames = [eth(0x0806, bytes(28))] * 5
elif kind == "tcp":
    frames = [eth(0x0800, tcp)] * 40 + [eth(0x0806, bytes(28))] * 2
elif kind == "vxlan8472":
    frames = [eth(0x0800, ip4(17, udp(8472, bytes.fromhex("0800000000000100") + eth(0x0800, tcp))))] * 30
elif kind == "erspan-tcp":
    frames = [eth(0x0800, ip4(47, erspan2 + eth(0x0800, tcp)))] * 12
elif kind == "port4792":
    # The RoCE frames of a real trace, to UDP port 4792 (IPv4, untagged: dport at byte 36).
    frames = [f[:36] + struct.pack(">H", 4792) + f[38:] for f in read(sys.argv[3])]
elif kind == "vxlan-to-8472":
    # A VXLAN mirror session's frames (outer IPv4, untagged) moved to Linux's port 8472.
    frames = [f[:36] + struct.pack(">H", 8472) + f[38:] for f in read(sys.argv[3])]
elif kind == "gre-mostly":
    # A trace's RoCE, and three times as many GRE frames of a protocol no mirror sends.
    roce = read(sys.argv[3])
    gre = eth(0x0800, ip4(47, struct.pack(">HH", 0, 0x880b) + bytes(40)))
    frames = roce + [gre] * (3 * len(roce))
with open(out, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, fr in enumerate(frames):
        f.write(struct.pack("<IIII", 1767225600, i, len(fr), len(fr)) + fr)
PY
}

# expect NAME FILE PATTERN...: exit 1, one line on stderr, holding every PATTERN (grep -E).
expect() {
	local name=$1 file=$2 rc
	shift 2
	"$ANALYZE" -q "$file" >"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc -ne 1 ] || [ "$(wc -l <"$work/err")" -ne 1 ]; then
		fail "$name" "exit $rc, $(wc -l <"$work/err") lines: $(head -n 2 "$work/err" | tr '\n' ' ')"
		return
	fi
	for p in "$@"; do
		if ! grep -Eq -- "$p" "$work/err"; then
			fail "$name" "no '$p' in: $(cat "$work/err")"
			return
		fi
	done
	pass "$name"
}

mk "$work/arp.pcap" arp
expect not-understood-arp "$work/arp.pcap" "no RoCE or InfiniBand packet in 5 frames" \
	"found instead: link type EN10MB; EtherType 0x0806 \(5\)" "capture where RoCE flows"
# The summary on standard output is no all-clear either.
if grep -q "no verdict: no RoCE packet to judge" "$work/out" && ! grep -q "stands out" "$work/out"; then
	pass not-understood-summary-no-verdict
else
	fail not-understood-summary-no-verdict "$(tail -n 1 "$work/out")"
fi
# Its database is not an all-clear either: the report has no verdict, and it is not green.
REPORT=$BIN/agentxdp-report
if [ -x "$REPORT" ]; then
	"$ANALYZE" -q "$work/arp.pcap" -o "$work/arp.db" 2>/dev/null
	"$REPORT" "$work/arp.db" -o "$work/arp-report" >"$work/arp-report.txt" 2>&1
	if grep -A1 '^VERDICT' "$work/arp-report.txt" | grep -qi "no verdict" &&
		! grep -q "No slow or lossy" "$work/arp-report.txt" &&
		grep -Eq 'class="verdict (bad|warn)"' "$work/arp-report/index.html"; then
		pass not-understood-report-not-green
	else
		fail not-understood-report-not-green "$(grep -A1 '^VERDICT' "$work/arp-report.txt" | tail -n 1)"
	fi
else
	skip not-understood-report-not-green "bin/agentxdp-report not built"
fi
mk "$work/tcp.pcap" tcp
expect not-understood-tcp "$work/tcp.pcap" "TCP \(40\), EtherType 0x0806 \(2\)"
mk "$work/vxlan.pcap" vxlan8472
expect not-understood-vxlan-port "$work/vxlan.pcap" "UDP port 8472 \(30\)" "--vxlan-port 8472"
mk "$work/erspan.pcap" erspan-tcp
expect not-understood-erspan-no-roce "$work/erspan.pcap" "TCP in erspan2 \(12\)" \
	"mirror session delivers no RoCE"

# RoCE v2 on another UDP port: the line names the port and --port; with it, an analysis.
if "$SYNTH" -q -o "$work/s" --format pcap --workload write --duration 200us --seed 5; then
	mk "$work/p4792.pcap" port4792 "$work/s/trace.pcap"
	n=$("$ANALYZE" -q --json "$work/s/trace.pcap" | jq .totals.packets)
	expect not-understood-other-port "$work/p4792.pcap" "UDP port 4792 \($n\)" "--port 4792"
	expect_eq not-understood-other-port-helps "$n" \
		"$("$ANALYZE" -q --json --port 4792 "$work/p4792.pcap" | jq .totals.packets)"

	# VXLAN on Linux's port: the line names --vxlan-port, and with it the same analysis.
	if "$SYNTH" -q -o "$work/vx" --format pcap --workload write --duration 200us --seed 5 --encap vxlan; then
		mk "$work/vx8472.pcap" vxlan-to-8472 "$work/vx/trace.pcap"
		expect not-understood-vxlan-8472 "$work/vx8472.pcap" "UDP port 8472 \($n\)" "--vxlan-port 8472"
		expect_eq not-understood-vxlan-8472-helps "$n" \
			"$("$ANALYZE" -q --json --vxlan-port 8472 "$work/vx8472.pcap" | jq .totals.packets)"
	else
		fail not-understood-vxlan-8472 "agentxdp-synth --encap vxlan failed"
	fi

	# Some RoCE, but most frames a GRE nobody decodes: not an all-clear either.
	mk "$work/gre.pcap" gre-mostly "$work/s/trace.pcap"
	expect not-understood-mostly-gre "$work/gre.pcap" "$((3 * n)) of $((4 * n)) frames not understood" \
		"$((3 * n)) unknown GRE" "GRE protocol 0x880b \($((3 * n))\)" "mirror session type"
else
	fail not-understood-other-port "agentxdp-synth failed"
fi
exit 0
