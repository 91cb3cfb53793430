#!/usr/bin/env bash
# test_steady_marks.sh: an ECN fault on a switch link of a busy oversubscribed fabric marks
# a fixed share of the packets it carries in every window, quiet ones included, while the
# fabric's queues mark in bursts and drain between them (issue #17, round 7;
# docs/localization.md "Unless it stands out of the queueing", loc_marks_steady()):
#   - a 20% ECN link picked first as the slowed completions of the flows it marks, whose
#     marks are under the peers' spread: a congested alert by its marks floor, not "the
#     whole fabric is queueing";
#   - the same shape picked first by drops that track its marks: a congested alert;
#   - a 30% ECN link beside a +20 us link in a mixed fabric, its marks 0.7 robust sigmas
#     over its peers' over the whole trace: a congested alert.
# Each finding naming a switch link carries marks_floor; no other switch link's reaches
# half the faulty one's. Shapes and seeds are the cells ecn20-fab-over and
# two-ecn-slow-over of eval/matrix.txt on tuning seeds 1121-1160; the faulty link comes
# from truth.json. TEST_ANALYZE runs another build against the same traces (the build
# before this rule lists all three as notices).
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=${TEST_ANALYZE:-$BIN/agentxdp-analyze}
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip steady-marks "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# run NAME SEED FAULT [SYNTH-ARGS...]: synthesize the ecn20-fab-over shape (or the
# arguments given), analyze with the topology; sets $d and $link (the first faulty link).
run() {
	local name=$1 seed=$2 fault=$3
	shift 3
	d=$work/$name
	link=
	[ $# -gt 0 ] || set -- --hosts 64 --leaves 8 --spines 2 --load 40% --mtu 4096 \
		--duration 5ms --workload write
	synth_analyze "steady-marks-$name" "$d" "$d/out.json" "$@" --vantage mirror --snaplen 128 \
		--seed "$seed" --fault "$fault" -- --topology "$d/links.csv" --paths "$d/paths.csv" ||
		return 1
	link=$(jq -r '[.links[] | select(.faulty and (.link | startswith("leaf")) and
		.ce_marked > 0) | .link][0]' "$d/truth.json")
}
findings() {
	jq -c '[.findings[] | [.level, .kind, .subject, .evidence.signal,
		.evidence.marks_floor, .evidence.marks_floor_lead, .evidence.mark_outlier_z,
		.evidence.load_ratio]]' "$d/out.json"
}
# check NAME: the faulty link is a congested alert, every other switch link's marks floor
# under half its own.
check() {
	local name=$1 got apart
	got=$(jq -r --arg l "$link" '[.findings[] | select(.subject == $l)][0] |
		"\(.level) \(.kind)"' "$d/out.json")
	[ "$got" = "alert congested" ] &&
		pass "steady-marks-$name: congested alert on $link (its marks floor)" ||
		fail "steady-marks-$name: congested alert on $link" "$(findings)"
	apart=$(jq --arg l "$link" '([.findings[] | select(.subject == $l)][0].evidence.marks_floor)
		as $x | $x != null and ([.findings[] | select(.subject != $l and
		.evidence.marks_floor != null) | .evidence.marks_floor < $x / 2] | all)' "$d/out.json")
	expect_eq "steady-marks-$name: other switch links' floors under half the link's" true "$apart"
}

if run slow 1121 'link=leaf2-spine0,dir=leaf2>spine0,kind=ecn,size=20%,onset=1500us'; then
	sig=$(jq -r --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence.signal' \
		"$d/out.json")
	expect_eq "steady-marks-slow: the link's pick is its flows' completions" completion "$sig"
	check slow
fi
if run drops 1138 'link=leaf7-spine0,dir=leaf7>spine0,kind=ecn,size=20%,onset=1500us'; then
	sig=$(jq -r --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence.signal' \
		"$d/out.json")
	expect_eq "steady-marks-drops: the link's pick is its loss" loss "$sig"
	check drops
fi
if run mixed 1131 'link=leaf1-spine1,kind=ecn,size=30%,onset=4000us' --hosts 32 --leaves 4 \
	--spines 2 --load 40% --mtu 4096 --duration 10ms --workload mixed \
	--fault 'link=leaf2-spine0,kind=slow,size=20us,onset=3000us'; then
	check mixed
fi
exit 0
