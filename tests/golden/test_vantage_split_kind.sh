#!/usr/bin/env bash
# test_vantage_split_kind.sh: a 5x spine cable (slow serializer and +4 us) under write
# traffic, one trace per host, analyzed with its topology (issue #17, round 9). Every packet
# is in two traces: the requester's copy of a connection times each PSN's round trip, the
# responder's copy its turnaround (ACK p50 0 in the synthesizer: no ACK latency to give).
# The build before this round then took the responder copy's *completion* time (first
# data packet in to the last ACK out: the data's arrival spread) as the turnaround and
# subtracted it from the round trip, which took the slow serializer's delay on the data's
# way out of every connection it hurt: seed 1272 put a 1-connection alert on another spine
# cable first, seed 1276 a responder host alert, and both runs listed three or four wrong
# turnaround notices. A round trip less a turnaround must be of one kind. Shape and seeds:
# the cell slowx5-fab-each of eval/matrix.txt, tuning seeds 1272 and 1276. TEST_ANALYZE
# runs another build.
. "$(dirname "$0")/../lib.sh"
synth_test_start vantage-split-kind

# name seed link onset: synthesize the cell's shape with LINK 5x slow, analyze every trace.
run() {
	local name=$1 seed=$2 link=$3 onset=$4 d=$work/$1
	if ! "$SYNTH" -q -o "$d" --hosts 16 --leaves 4 --spines 4 --load 10% --mtu 1024 \
		--duration 10ms --workload write --vantage each-host --snaplen 128 --seed "$seed" \
		--fault "link=$link,kind=slow,size=5x,onset=$onset" \
		--fault "link=$link,kind=slow,size=4us,onset=$onset" 2>"$work/err"; then
		fail "vantage-split-$name" "synth: $(head -n 1 "$work/err")"
		return 1
	fi
	if ! "$ANALYZE" -q "$d"/trace-*.pcapng --json --topology "$d/links.csv" \
		--paths "$d/paths.csv" >"$d.json" 2>"$work/err"; then
		fail "vantage-split-$name" "analyze: $(head -n 1 "$work/err")"
		return 1
	fi
}

alerts='[.findings[] | select(.level == "alert") | "\(.kind) \(.subject)"] | join("; ")'
hosts='[.findings[] | select(.subject_kind == "host")] | length'
for c in "1272 leaf0-spine2 0us" "1276 leaf0-spine0 3000us"; do
	set -- $c
	run "$1" "$1" "$2" "$3" || continue
	got=$(jq -r "$alerts" "$work/$1.json")
	expect_eq "vantage-split-$1: one alert, the slow spine cable" "slow $2" "$got"
	got=$(jq -r "$hosts" "$work/$1.json")
	expect_eq "vantage-split-$1: no responder turnaround finding" 0 "$got"
done
exit 0
