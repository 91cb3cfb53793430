#!/usr/bin/env bash
# test_crafted_acks.sh: issue #22 item 2, algorithmic DoS from crafted ACKs. 80,000 packets of
# one QP whose ACKs jump 65,536 PSNs over a 65,536-slot ring (build/gen_crafted_acks) must cost
# the tracker work proportional to its packets, like a normal trace of the same size: the PSN
# slots it visits (qp_tracker_totals.psn_slots_visited, counted, not timed) stay within
# 4 per packet (each visit retires an outstanding slot, or ends one of at most 3 lookups a
# packet makes). Before the fix: 69,620 per packet, 19 s of analysis.
. "$(dirname "$0")/../lib.sh"

GEN=$TOP/build/gen_crafted_acks
QP=$TOP/build/gen_qp_trace
A=$BIN/agentxdp-analyze
for tool in "$GEN" "$QP" "$A"; do
	[ -x "$tool" ] || { fail crafted-acks "$tool not built (make all)"; exit 1; }
done
dir=$(tmpdir)
trap 'rm -rf "$dir"' EXIT
N=80000

# work NAME TRACE: the tracker's work on TRACE within 4 slots per packet.
work() {
	local name=$1 trace=$2 out pkts visited
	out=$("$GEN" --work "$trace") || { fail "crafted-acks $name work" "gen_crafted_acks --work failed"; return; }
	read -r _ pkts _ visited <<<"$out"
	expect_eq "crafted-acks $name packets" "$N" "$pkts"
	if [ "${visited:-x}" -le $((4 * N)) ] 2>/dev/null; then
		pass "crafted-acks $name work bounded ($visited slots for $pkts packets)"
	else
		fail "crafted-acks $name work bounded" "$visited slots visited for $pkts packets (limit $((4 * N)))"
	fi
}

"$GEN" $N "$dir/crafted.pcapng" || { fail crafted-acks "gen_crafted_acks failed"; exit 1; }
"$QP" 1 $((N / 2)) "$dir/normal.pcap" || { fail crafted-acks "gen_qp_trace failed"; exit 1; }
work crafted "$dir/crafted.pcapng"
work normal "$dir/normal.pcap"

# The analyzer reads it through: every packet counted, one QP paired both ways.
json=$("$A" "$dir/crafted.pcapng" --json 2>"$dir/err")
expect_eq "crafted-acks analyze exit status" 0 $?
expect_eq "crafted-acks analyze packets" "$N" "$(jq -r .totals.packets <<<"$json")"
expect_eq "crafted-acks analyze paired flows" 2 "$(jq -r .totals.paired_flows <<<"$json")"
exit $((T_FAILED > 0))
