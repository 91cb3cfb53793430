#!/usr/bin/env bash
# test_ib_vs_tshark.sh: agentxdp-analyze --dump of native InfiniBand traces (ERF records of type
# InfiniBand, LINKTYPE_INFINIBAND), field by field against tshark: frame number, epoch time (an
# ERF record's nanoseconds), wire length, the addresses the flows are keyed by (GIDs with a
# GRH, "LID n" without), LRH SLID, DLID, SL, VL, BTH dest QP, PSN, AckReq, DETH Q_Key and
# source QP, AETH syndrome and MSN, RETH DMA length. Traces: ../shared/captures/ib (skipped
# when absent) and agentxdp-synth --link ib (rewritten as ERF records for tshark).
. "$(dirname "$0")/../lib.sh"

ANALYZE=$BIN/agentxdp-analyze
if ! command -v tshark >/dev/null 2>&1; then
	skip_or_fail_in_ci ib-vs-tshark "tshark not installed (scripts/deps.sh installs it)"
	exit 0
fi
if [ ! -x "$ANALYZE" ]; then
	fail ib-vs-tshark "$ANALYZE not built (run make all)"
	exit 1
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

TS_FIELDS=(-e frame.number -e frame.time_epoch -e frame.len -e infiniband.lrh.slid
	-e infiniband.lrh.dlid -e infiniband.lrh.sl -e infiniband.lrh.vl -e infiniband.grh.sgid
	-e infiniband.grh.dgid -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.a
	-e infiniband.deth.q_key -e infiniband.deth.srcqp -e infiniband.aeth.syndrome
	-e infiniband.aeth.msn -e infiniband.reth.dmalen -e infiniband.bth.opcode)

# Both sides as one tab-separated row per packet, numbers in decimal, times in ns.
NORM='
function hex(s,   i, c, v) {
	if (s !~ /^0x/) return s
	v = 0
	for (i = 3; i <= length(s); i++) {
		c = index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
		v = v * 16 + c
	}
	return sprintf("%.0f", v)
}
function ns(t,   p, frac) {
	p = index(t, ".")
	if (!p) return t "000000000"
	frac = substr(substr(t, p + 1) "000000000", 1, 9)
	return substr(t, 1, p - 1) frac
}'

# tshark_rows FILE: the IB packets (an LRH and a BTH opcode) tshark decodes.
tshark_rows() {
	tshark_roce -r "$1" -T fields -E separator=/t -E occurrence=f "${TS_FIELDS[@]}" |
		awk -F'\t' -v OFS='\t' "$NORM"'
		$4 != "" && $18 != "" {
			src = $8 != "" ? $8 : "LID " $4
			dst = $9 != "" ? $9 : "LID " $5
			print $1, ns($2), $3, $4, $5, $6, hex($7), src, dst, hex($10), $11, $12,
				hex($13), hex($14), $15, $16, $17
		}'
}

# dump_rows FILE: the same fields from agentxdp-analyze --dump -tt.
dump_rows() {
	"$ANALYZE" --dump -tt -q "$1" 2>/dev/null | awk -v OFS='\t' "$NORM"'
		function kv(s, key,   n) {
			n = length(key) + 2
			if (match(s, " " key "=[^ ]+")) return substr(s, RSTART + n, RLENGTH - n)
			return ""
		}
		/ IB slid=/ {
			head = length($1) + length($2) + 3
			arrow = index($0, " -> ")
			ib = index($0, " IB slid=")
			src = substr($0, head, arrow - head)
			dst = substr($0, arrow + 4, ib - arrow - 4)
			ack = match($0, / PSN=[0-9]+ A( |$)/) ? 1 : 0
			print $1, ns($2), kv($0, "len"), kv($0, "slid"), kv($0, "dlid"), kv($0, "sl"),
				kv($0, "vl"), src, dst, hex(kv($0, "QP")), kv($0, "PSN"), ack,
				hex(kv($0, "qkey")), hex(kv($0, "srcqp")), hex(kv($0, "syndrome")),
				kv($0, "msn"), kv($0, "dmalen")
		}'
}

# check_ib NAME FILE: PASS when every row is equal and there is at least one.
check_ib() {
	local name=$1 f=$2 n diffs
	tshark_rows "$f" >"$work/ts"
	dump_rows "$f" >"$work/dump"
	n=$(wc -l <"$work/ts")
	if [ "$n" -eq 0 ]; then
		fail "$name" "tshark found no InfiniBand packet"
		return
	fi
	if diffs=$(diff "$work/ts" "$work/dump"); then
		pass "$name: $n packets, every field equal to tshark's"
	else
		fail "$name" "$(echo "$diffs" | grep -c '^[<>]') rows differ (< tshark, > dump): $(echo "$diffs" | head -n 4 | tr '\n' ' ')"
	fi
}

if [ -d "$SHARED_CAPTURES/ib" ]; then
	for f in "$SHARED_CAPTURES"/ib/*.pcap "$SHARED_CAPTURES"/ib/*.pcapng "$SHARED_CAPTURES"/ib/*.erf; do
		[ -f "$f" ] || continue
		check_ib "ib-vs-tshark $(basename "$f")" "$f"
	done
else
	skip ib-vs-tshark-shared "no ../shared/captures/ib here"
fi

# to_erf IN OUT: a LINKTYPE_INFINIBAND pcap (ns) rewritten as ibdump writes its files: pcap of
# link type ERF (197), each packet an ERF record of type 21 (INFINIBAND) with its time as ERF
# fixed point. Wireshark 4.0 has no mapping for link type 247; it reads ERF.
to_erf() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
src = open(sys.argv[1], "rb").read()
magic, = struct.unpack_from("<I", src, 0)
assert magic == 0xa1b23c4d and struct.unpack_from("<I", src, 20)[0] == 247, "not an ns IB pcap"
out = [struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 197)]
off = 24
while off + 16 <= len(src):
	sec, nsec, cap, orig = struct.unpack_from("<IIII", src, off)
	data = src[off + 16:off + 16 + cap]
	off += 16 + cap
	frac = ((nsec << 32) + 500000000) // 1000000000
	erf = struct.pack("<Q", (sec << 32) + frac) + struct.pack(">BBHHH", 21, 0x04, 16 + cap, 0, orig)
	out.append(struct.pack("<IIII", sec, nsec // 1000, 16 + cap, 16 + orig) + erf + data)
open(sys.argv[2], "wb").write(b"".join(out))
PY
}

SYNTH=$BIN/agentxdp-synth
if [ -x "$SYNTH" ] && "$SYNTH" --help 2>&1 | grep -q -- '--link KIND'; then
	mkdir -p "$work/synth"
	if "$SYNTH" -q -o "$work/synth/ib.pcap" --link ib --duration 100us --workload mixed \
		--fault link=leaf1-spine0,kind=loss,size=3% && to_erf "$work/synth/ib.pcap" "$work/synth/erf.pcap"; then
		check_ib "ib-vs-tshark synth --link ib (as ERF)" "$work/synth/erf.pcap"
		# The same packets read from LINKTYPE_INFINIBAND and from their ERF copy: one dump.
		"$ANALYZE" --dump -tt -q "$work/synth/ib.pcap" >"$work/synth/ib.dump" 2>/dev/null
		"$ANALYZE" --dump -tt -q "$work/synth/erf.pcap" >"$work/synth/erf.dump" 2>/dev/null
		if [ -s "$work/synth/ib.dump" ] && cmp -s "$work/synth/ib.dump" "$work/synth/erf.dump"; then
			pass "ib-vs-tshark synth: LINKTYPE_INFINIBAND and ERF dumps equal ($(wc -l <"$work/synth/ib.dump") packets)"
		else
			fail "ib-vs-tshark synth-247-vs-erf" "$(diff "$work/synth/ib.dump" "$work/synth/erf.dump" | head -n 2 | tr '\n' ' ')"
		fi
	else
		fail "ib-vs-tshark synth" "agentxdp-synth --link ib or the ERF rewrite failed"
	fi
else
	skip ib-vs-tshark-synth "bin/agentxdp-synth without --link ib"
fi
[ "$T_FAILED" -eq 0 ]
