#!/usr/bin/env bash
# test_busy_link_faults.sh: faults on a switch link of a busy fabric (one that CE-marks
# everywhere) stand out of the ordinary queueing, each by its own physics (issue #17,
# round 5; docs/localization.md "Alerts and notices"):
#   - a rate-halved link keeps a standing queue while it carries less than its peers:
#     its floor (quickest round trips) rises; a slow alert, not a congested notice, and
#     not a lossy notice when its overflow drops track its marks;
#   - a +20 us step moves the floor as much as the median, on a collective whose hurt
#     flows are marked more than the rest: a slow alert, not "the fabric is queueing";
#   - a 20% ECN fault marks far more than its peer links with no standing queue, though
#     the slowed completions of its flows are picked first: a congested alert.
# Shapes and seeds are cells of eval/matrix.txt on the tuning seeds (1041-1060); the
# faulty link comes from truth.json. TEST_ANALYZE runs another build against the same
# traces (the build before these rules lists all three as notices).
. "$(dirname "$0")/../lib.sh"
synth_test_start busy-link-faults

# run NAME SYNTH-ARGS...: synthesize, analyze with the topology; sets $d and $link.
run() {
	local name=$1
	shift
	d=$work/$name
	link=
	synth_analyze "busy-$name" "$d" "$d/out.json" --vantage mirror --snaplen 128 "$@" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv" || return 1
	link=$(jq -r '[.links[] | select(.faulty) | .link][0]' "$d/truth.json")
}

# top NAME: "level kind subject" of the first finding, and the fabric's marking.
top() {
	jq -r '.findings[0] | "\(.level) \(.kind) \(.subject)"' "$d/out.json"
}
findings() {
	jq -c '[.findings[] | [.level, .kind, .subject, .evidence.peer_ce_rate,
		.evidence.floor_z, .evidence.mark_outlier_ratio, .evidence.load_ratio]]' "$d/out.json"
}

if run rate --hosts 32 --leaves 4 --spines 2 --load 60% --mtu 4096 --duration 10ms \
	--workload write --seed 1044 --fault link=leaf2-spine1,kind=slow,size=2x,onset=3000us; then
	busy=$(jq '.findings[0].evidence.peer_ce_rate >= 0.001' "$d/out.json")
	expect_eq "busy-rate: the fabric marks 0.1% or more elsewhere" true "$busy"
	got=$(top)
	[ "$got" = "alert slow $link" ] && pass "busy-rate: slow alert on $link (its floor)" ||
		fail "busy-rate: slow alert on $link" "$(findings)"
fi

if run overflow --hosts 32 --leaves 4 --spines 2 --load 60% --mtu 4096 --duration 10ms \
	--workload write --seed 1060 --fault link=leaf2-spine0,kind=slow,size=2x,onset=3000us; then
	# The link's strongest evidence is loss that tracks marks (a queue's overflow).
	lossy=$(jq --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence.signal' \
		"$d/out.json")
	expect_eq "busy-overflow: the link's pick is its loss" '"loss"' "$lossy"
	got=$(top)
	[ "$got" = "alert slow $link" ] && pass "busy-overflow: slow alert on $link (its floor)" ||
		fail "busy-overflow: slow alert on $link" "$(findings)"
fi

if run step --hosts 32 --leaves 8 --spines 4 --load 10% --mtu 4096 --duration 10ms \
	--workload collective --seed 1051 --fault link=leaf3-spine1,kind=slow,size=20us,onset=2000us; then
	# Its hurt flows are marked more than the peers' rate gives them: without the step
	# test the busy fabric's queueing would explain the latency.
	marked=$(jq --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence |
		.peer_ce_rate >= 0.001 and .hurt_ce_z >= 3' "$d/out.json")
	expect_eq "busy-step: hurt flows marked beyond the peers' rate" true "$marked"
	got=$(top)
	[ "$got" = "alert slow $link" ] && pass "busy-step: slow alert on $link (a latency step)" ||
		fail "busy-step: slow alert on $link" "$(findings)"
fi

if run ecn --hosts 64 --leaves 8 --spines 2 --load 40% --mtu 4096 --duration 5ms \
	--workload write --seed 1044 \
	--fault 'link=leaf0-spine0,dir=leaf0>spine0,kind=ecn,size=20%,onset=500us'; then
	got=$(top)
	[ "$got" = "alert congested $link" ] &&
		pass "busy-ecn: congested alert on $link (its marks)" ||
		fail "busy-ecn: congested alert on $link" "$(findings)"
	n=$(alert_count "$d/out.json")
	expect_eq "busy-ecn: one alert" 1 "$n"
fi
exit 0
