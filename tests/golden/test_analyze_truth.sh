#!/usr/bin/env bash
# test_analyze_truth.sh: agentxdp-analyze against agentxdp-synth's ground truth (truth.json).
# Per flow and per vantage trace: packets, bytes, first transmissions, retransmitted packets,
# NAKs (PSN sequence error and other), RNR NAKs, timeouts, CNPs, ECN CE and ACK sample counts
# exactly; ACK latency p50/p99/max within 2% (tests/golden/analyze_truth_diff.sh compares with
# jq + sqlite3). Every scenario of the matrix below must match with no exemption, and the
# matrix as a whole must exercise every counter (a matrix of zeros would prove nothing).
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
truths=()

# compare NAME DIR: analyze every trace of a synthesizer output directory, compare with truth.
compare() {
	local name=$1 out=$2 rc msg
	truths+=("$out/truth.json")
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
	rm -f "$dir/$name.db" "$dir/$name.db".*.tsv
}

# The bundled samples (samples/*/truth.json).
n_samples=0
for truth in "$TOP"/samples/*/truth.json; do
	[ -f "$truth" ] || continue
	n_samples=$((n_samples + 1))
	compare "sample-$(basename "$(dirname "$truth")")" "$(dirname "$truth")"
done
[ $n_samples -gt 0 ] || skip analyze-truth-samples "no samples/*/truth.json yet"

if [ ! -x "$SYNTH" ]; then
	fail analyze-truth-synth "bin/agentxdp-synth not built"
	exit 1
fi

# The matrix: every link fault (slow, slow Nx, queue-shaped slow, loss, ECN, flap), every host
# fault (RNR, slow responder, NIC retransmitting), every workload (WRITE, READ, SEND RPC,
# atomics, collective, mixed RC/UC/UD), PSN wrap, IPv6, VLAN, snap length, pcap, and the
# mirror, one host (requester or responder side) and each-host vantages, over several seeds.
# 8 hosts, 2 leaves, 2 spines, 3 ms each: the whole test stays well under a minute.
# loss-read, flap-read, loss-mixed, each-*, host-resp-v6 and each-wrap-flap once disagreed
# (a READ re-issue storm, timeouts counted past the end of the trace or at the responder's
# host, a cross-trace pairing, a READ span): their seeds are kept as regressions.
while read -r name opts; do
	case "$name" in '' | '#'*) continue ;; esac
	# shellcheck disable=SC2086 # options are words on purpose
	if ! "$SYNTH" -q -o "$dir/$name" --duration 3ms $opts >"$dir/$name.synth" 2>&1; then
		fail "analyze-truth $name" "agentxdp-synth $opts failed: $(tail -n 1 "$dir/$name.synth")"
		continue
	fi
	compare "$name" "$dir/$name"
	rm -f "$dir/$name"/*.pcap*
done <<'MATRIX'
healthy           --seed 11
loss-write        --seed 12 --fault link=leaf0-spine1,kind=loss,size=2%
loss-read         --seed 1 --workload read --fault link=leaf0-spine1,kind=loss,size=2%
loss-mixed        --seed 2 --workload mixed --fault link=leaf0-spine1,kind=loss,size=2%
loss-mixed-heavy  --seed 3 --workload mixed --load 50% --fault link=leaf0-spine1,kind=loss,size=5%
loss-collective   --seed 16 --workload collective --fault link=leaf1-spine0,kind=loss,size=2%
flap-write        --seed 19 --fault link=leaf0-spine1,kind=flap,size=200us
flap-read         --seed 2 --workload read --fault link=leaf0-spine1,kind=flap,size=200us
flap-mixed        --seed 1 --workload mixed --fault link=leaf0-spine1,kind=flap,size=200us
ecn-write         --seed 22 --fault link=leaf0-spine1,kind=ecn,size=30%
ecn-read          --seed 23 --workload read --fault link=leaf0-spine0,dir=spine0>leaf0,kind=ecn,size=30%
slow-write        --seed 18 --fault link=leaf0-spine1,dir=leaf0>spine1,kind=slow,size=20us,onset=1ms
slow-queue-mixed  --seed 1 --workload mixed --fault link=leaf0-spine1,kind=slow,size=20us,shape=queue
slow-4x-write     --seed 2 --load 60% --fault link=leaf0-spine1,kind=slow,size=4x
rnr-rpc           --seed 13 --workload rpc --host-fault host=198.18.0.12,kind=rnr
rnr-mixed         --seed 2 --workload mixed --host-fault host=198.18.0.12,kind=rnr
slow-responder    --seed 17 --workload read --host-fault host=198.18.0.11,kind=slow-responder
nic-write         --seed 1 --host-fault host=198.18.0.10,kind=nic-retransmit
nic-rpc           --seed 2 --workload rpc --host-fault host=198.18.0.10,kind=nic-retransmit,size=5us
atomic-loss       --seed 3 --workload atomic --load 2% --fault link=leaf0-spine1,kind=loss,size=3%
atomic-nic        --seed 4 --workload atomic --load 2% --host-fault host=198.18.0.10,kind=nic-retransmit
psn-wrap-read     --seed 20 --workload read --psn-wrap --fault link=leaf0-spine1,kind=loss,size=2%
psn-wrap-mixed    --seed 2 --workload mixed --psn-wrap --fault link=leaf0-spine1,kind=loss,size=2%
ipv6-vlan-snap    --seed 21 --workload mixed --ipv6 --vlan 5 --snaplen 96 --fault link=leaf0-spine1,kind=loss,size=2%
pcap-host-req     --seed 2 --workload mixed --format pcap --vantage host=198.18.0.10 --fault link=leaf0-spine1,kind=loss,size=2%
host-resp-v6      --seed 3 --workload read --ipv6 --vantage host=fd99::17 --fault link=leaf0-spine1,kind=loss,size=3%
each-loss-mixed   --seed 2 --workload mixed --vantage each-host --fault link=leaf0-spine1,kind=loss,size=2%
each-loss-read    --seed 1 --workload read --vantage each-host --fault link=leaf0-spine1,kind=loss,size=2%
each-rnr-loss-rpc --seed 3 --workload rpc --vantage each-host --host-fault host=198.18.0.12,kind=rnr --fault link=leaf0-spine1,kind=loss,size=2%
each-nic-mixed    --seed 1 --workload mixed --vantage each-host --host-fault host=198.18.0.10,kind=nic-retransmit
each-atomic-flap  --seed 4 --workload atomic --load 2% --vantage each-host --fault link=leaf0-spine1,kind=flap,size=200us
each-wrap-flap    --seed 3 --workload mixed --psn-wrap --vantage each-host --fault link=leaf0-spine0,kind=flap,size=200us
each-ecn-read     --seed 1 --workload read --vantage each-host --fault link=leaf0-spine1,kind=ecn,size=30%
MATRIX

# Coverage: the matrix must exercise every counter it compares, at mirror and host vantages.
cov=$(jq -s -r '
	[.[] | .vantages[] | (.name != "mirror") as $host | .flows[] | . + {host: $host}] as $f |
	def total(k): [$f[] | .[k]] | add;
	[ "retransmitted_packets=\(total("retransmitted_packets"))", "naks_psn_seq=\(total("naks_psn_seq"))",
	  "rnr_naks=\(total("rnr_naks"))", "timeouts=\(total("timeouts"))", "cnps=\(total("cnps"))",
	  "ecn_ce=\(total("ecn_ce"))", "ack_samples=\(total("ack_samples"))",
	  "host_timeouts=\([$f[] | select(.host) | .timeouts] | add)",
	  "host_retransmitted=\([$f[] | select(.host) | .retransmitted_packets] | add)",
	  "uc_ud_flows=\([$f[] | select(.transport != "RC")] | length)" ] | join(" ")' "${truths[@]}")
missing=$(tr ' ' '\n' <<<"$cov" | grep -E '=(0|null)$' | tr '\n' ' ')
if [ -z "$missing" ]; then
	pass "analyze-truth matrix coverage ($cov)"
else
	fail "analyze-truth matrix coverage" "nothing exercised: $missing"
fi
exit 0
