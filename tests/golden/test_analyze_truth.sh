#!/usr/bin/env bash
# test_analyze_truth.sh: agentxdp-analyze against agentxdp-synth's ground truth (truth.json).
# Per flow and per vantage trace: packets, bytes, first transmissions, retransmitted packets,
# NAKs, RNR NAKs, timeouts, CNPs, ECN CE and ACK sample counts exactly; ACK latency p50/p99/max
# within 2% (tests/golden/analyze_truth_diff.sh does the comparison with jq + sqlite3).
. "$(dirname "$0")/../lib.sh"

ANALYZE=$BIN/agentxdp-analyze
SYNTH=$BIN/agentxdp-synth
DIFF=$TOP/tests/golden/analyze_truth_diff.sh

for tool in jq sqlite3; do
	if ! command -v $tool >/dev/null; then
		skip analyze-truth "$tool not installed (scripts/deps.sh installs it)"
		exit 0
	fi
done
[ -x "$ANALYZE" ] || { fail analyze-truth "$ANALYZE not built"; exit 1; }

dir=$(tmpdir)
trap 'rm -rf "$dir"' EXIT

# compare NAME DIR: analyze every trace of a synthesizer output directory, compare with truth.
compare() {
	local name=$1 out=$2 rc msg
	if ! "$ANALYZE" -q "$out"/*.pcap* -o "$dir/$name.db" 2>"$dir/$name.err"; then
		fail "analyze-truth $name" "agentxdp-analyze failed: $(head -n 2 "$dir/$name.err" | tr '\n' ' ')"
		return
	fi
	bash "$DIFF" "$out" "$dir/$name.db" >"$dir/$name.diff" 2>&1
	rc=$?
	msg=$(tail -n 1 "$dir/$name.diff")
	case "$msg" in flows=0*) rc=1 ;; esac # an empty comparison proves nothing
	if [ $rc -eq 0 ]; then
		pass "analyze-truth $name ($msg)"
	else
		fail "analyze-truth $name" "$msg; first: $(head -n 3 "$dir/$name.diff" | tr '\n' ';')"
	fi
}

# The bundled samples (samples/*/truth.json), when the synthesizer has landed them.
n_samples=0
for truth in "$TOP"/samples/*/truth.json; do
	[ -f "$truth" ] || continue
	n_samples=$((n_samples + 1))
	compare "sample-$(basename "$(dirname "$truth")")" "$(dirname "$truth")"
done
[ $n_samples -gt 0 ] || skip analyze-truth-samples "no samples/*/truth.json yet"

if [ ! -x "$SYNTH" ]; then
	skip analyze-truth-synth "bin/agentxdp-synth not built"
	exit 0
fi

# Scenarios generated here: every fault kind, READ/atomic/RPC/collective workloads, host
# vantages, PSN wrap, IPv6 + VLAN + snap length. Short runs keep the whole test under a minute.
run() {
	local name=$1
	shift
	if ! "$SYNTH" -q -o "$dir/$name" --duration 4ms "$@" >"$dir/$name.synth" 2>&1; then
		fail "analyze-truth $name" "agentxdp-synth $* failed: $(tail -n 1 "$dir/$name.synth")"
		return
	fi
	compare "$name" "$dir/$name"
}

run healthy --seed 11
run loss --seed 12 --fault link=leaf0-spine1,kind=loss,size=1%
run rnr --seed 13 --workload rpc --host-fault host=198.18.0.12,kind=rnr
run read-loss --seed 14 --workload read --fault link=leaf1-spine0,kind=loss,size=1%
run mixed-loss --seed 15 --workload mixed --fault link=leaf0-spine1,kind=loss,size=2%
run collective --seed 16 --workload collective
run slow-responder --seed 17 --host-fault host=198.18.0.11,kind=slow-responder
run slow-link --seed 18 --fault link=leaf0-spine1,kind=slow,size=20us
run flap --seed 19 --fault link=leaf0-spine1,kind=flap,size=200us
run psn-wrap --seed 20 --psn-wrap --fault link=leaf0-spine1,kind=loss,size=1%
run ipv6-vlan-snaplen --seed 21 --ipv6 --vlan 5 --snaplen 96 --workload mixed
run host-vantage-ecn --seed 22 --vantage host=198.18.0.10 --fault link=leaf0-spine1,kind=ecn,size=30%
exit 0
