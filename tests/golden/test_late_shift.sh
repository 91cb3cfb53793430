#!/usr/bin/env bash
# test_late_shift.sh: a latency shift the hurt flows hold only for the last few windows of
# a trace is a burst, not a step, and no finding: a healthy 200 ms trace (tuning seed
# 1108 of healthy-small-long, issue #17) had +0.6 us (1.08x) on 3 connections of a host
# link from its 99th window of 100 as an alert. A +5 us step on a host link from 30%
# into the same kind of trace is still found, and so is a 10x step in its last 4 windows.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip late-shift "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
base=(--hosts 8 --leaves 2 --spines 2 --load 5% --mtu 4096 --duration 200ms --workload write
	--vantage mirror --snaplen 128)

# name seed synth-args...: synthesize, analyze without a topology into $work/name.json.
run() {
	local name=$1 seed=$2
	shift 2
	synth_analyze "late-shift-$name" "$work/$name" "$work/$name.json" "${base[@]}" --seed "$seed" "$@"
}

if run healthy 1108; then
	got=$(jq -r '[.findings[] | select(.level == "alert") | "\(.kind) \(.subject) \(.evidence.signal)"] |
		join(",")' "$work/healthy.json")
	expect_eq "late-shift-healthy: a healthy fabric, no alert" "" "$got"
fi
if run step 1108 --fault link=198.18.0.13-leaf0,kind=slow,size=5us,onset=60ms; then
	got=$(first_alert "$work/step.json")
	expect_eq "late-shift-step: a +5 us step from 60 ms is the first alert" \
		"slow 198.18.0.13" "$got"
fi
# A step far bigger than a burst (10x) that starts 8 ms before the end (4 windows of 2 ms)
# is a fault that began just before the capture ended, not queueing: the first alert.
if run late10x 1108 --fault link=198.18.0.13-leaf0,kind=slow,size=10x,onset=192ms; then
	got=$(first_alert "$work/late10x.json")
	expect_eq "late-shift-late10x: a 10x step in the last 4 windows is the first alert" \
		"slow 198.18.0.13" "$got"
fi
exit 0
