#!/usr/bin/env bash
# test_quiet_floor.sh: in a fabric that is not busy, a host link whose flows are CE-marked
# a few times their peers' rate is a queue (a notice) only when its latency floor stayed
# where its peers' is: a queue drains in quiet moments, a slowed serializer delays every
# packet, the quickest too. The latency ratio used to decide (under 2x: a queue), and
# missed both ways on the tuning seeds 1081-1120 (issue #17): a 2x serializer host link
# at 1.6x, floor +3.4 us, was a notice; a healthy ECMP-skewed fabric's host link at
# 2.2x, floor +0.2 us, was an alert. Likewise a host link carrying twice its peers' load
# is a queue explained by its load only while its floor stays.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip quiet-floor "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
base=(--hosts 16 --leaves 4 --spines 2 --mtu 1024 --duration 10ms --workload write
	--vantage mirror --snaplen 128)

# name seed synth-args...: synthesize, analyze without a topology into $work/name.json.
run() {
	local name=$1 seed=$2
	shift 2
	synth_analyze "quiet-floor-$name" "$work/$name" "$work/$name.json" "${base[@]}" --seed "$seed" "$@"
}

# A 2x serializer and 1 us each way on a host link at 10% load (slowx2-host, seed 1099):
# its flows are marked 7x their peers', it runs 1.6x their completion time, and its
# round trips' floor stands 3.4 us above the other host links'.
if run slowx2 1099 --load 10% --fault link=198.18.0.18-leaf2,kind=slow,size=2x,onset=3000us \
	--fault link=198.18.0.18-leaf2,kind=slow,size=1us,onset=3000us; then
	got=$(first_alert "$work/slowx2.json")
	expect_eq "quiet-floor-slowx2: the slowed host link is the first alert" "slow 198.18.0.18" "$got"
	got=$(jq -r '[.findings[] | select(.subject == "198.18.0.18")][0].evidence |
		(.floor_excess_us >= 1 and .hurt_ce_rate >= 3 * .peer_ce_rate)' "$work/slowx2.json")
	expect_eq "quiet-floor-slowx2: marked 3x its peers, floor moved 1 us or more" true "$got"
fi

# The same fault on a host link that happened to carry 2.3x its peers' load (seed 1095):
# in a fabric that is not busy, a queue from load alone drains (incast host links at
# 2.5-4x kept their floor within 0.3 us); this one's floor stands 2.8 us above.
if run slowx2b 1095 --load 10% --fault link=198.18.0.21-leaf2,kind=slow,size=2x,onset=1000us \
	--fault link=198.18.0.21-leaf2,kind=slow,size=1us,onset=1000us; then
	got=$(jq -r '[.findings[] | select(.level == "alert")][0] |
		"\(.kind) \(.subject) \(.evidence.load_ratio >= 2)"' "$work/slowx2b.json")
	expect_eq "quiet-floor-load: a loaded host link whose floor moved is an alert" \
		"slow 198.18.0.21 true" "$got"
fi

# A healthy fabric at 20% load with half the cross-leaf flows on spine0 (healthy-ecmp-skew,
# seed 1094): a host link at 2.2x its peers' completion time, marked 7x, floor +0.2 us.
if run ecmp 1094 --load 20% --ecmp-skew 0.5; then
	alerts=$(alert_count "$work/ecmp.json")
	expect_eq "quiet-floor-ecmp: a healthy fabric, no alert" 0 "$alerts"
	got=$(jq -r '[.findings[] | select(.subject == "198.18.0.11")][0] |
		"\(.level) \(.evidence.notice_why // "" | test("a queue, not a fault")) \(.evidence.floor_excess_us < 1)"' \
		"$work/ecmp.json")
	expect_eq "quiet-floor-ecmp: the host link is a queue, its floor unmoved" "notice true true" "$got"
fi
exit 0
