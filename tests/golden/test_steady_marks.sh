#!/usr/bin/env bash
# test_steady_marks.sh: an ECN fault on a switch link of a busy oversubscribed fabric marks
# a fixed share of the packets it carries in every window, quiet ones included, while a
# queue marks in bursts and drains between them (issue #17, round 7; docs/localization.md
# "Unless it stands out of the queueing", loc_marks_steady()). An ECN link alert whose
# round trips' floor also rose (its marked flows back off and queue) is still `congested`:
#   - picked by its marks, floor 5.7 sigmas over its peers' (ecn20-fab-over seed 1142);
#   - picked as the slowed completions of the flows it marks, floor 7.4 sigmas (1155).
# Each finding naming a switch link carries marks_floor; no other switch link's reaches
# half the faulty one's. The shape is the cell ecn20-fab-over of eval/matrix.txt on tuning
# seeds 1121-1160; the faulty link comes from truth.json. TEST_ANALYZE runs another build
# against the same traces (the build before this rule calls both `slow` by their floor).
. "$(dirname "$0")/../lib.sh"
synth_test_start steady-marks

# run NAME SEED FAULT [SYNTH-ARGS...]: synthesize the ecn20-fab-over shape (or the
# arguments given), analyze with the topology; sets $d and $link (the first faulty link).
run() {
	local name=$1 seed=$2 fault=$3
	shift 3
	d=$work/$name
	link=
	mirror_topo_run "steady-marks-$name" "$d" "$seed" "$fault" "$@" || return 1
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

if run floor 1142 'link=leaf5-spine1,dir=spine1>leaf5,kind=ecn,size=20%,onset=0us'; then
	fz=$(jq --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence.floor_z >= 4' \
		"$d/out.json")
	expect_eq "steady-marks-floor: the link's floor stands 4 sigmas out" true "$fz"
	check floor
fi
if run completion 1155 'link=leaf3-spine1,dir=spine1>leaf3,kind=ecn,size=20%,onset=1000us'; then
	sig=$(jq -r --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence.signal' \
		"$d/out.json")
	expect_eq "steady-marks-completion: the link's pick is its flows' completions" completion "$sig"
	check completion
fi
exit 0
