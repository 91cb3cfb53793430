#!/usr/bin/env bash
# test_busy_marks_lead.sh: a 20% ECN fault on a switch link of a busy oversubscribed fabric
# marks alone, ahead of every peer link, while the fabric's ordinary queueing builds on
# several links at once (issue #17, round 6; docs/localization.md "Unless it stands out
# of the queueing", loc_marks_lead()):
#   - marks 4-5 robust sigmas above the peers' median that lead the highest peer link by
#     1.25x or more: a congested alert, not "the whole fabric is queueing";
#   - the same link picked first by drops that track its marks: a congested alert read
#     by its marks, not "drops of a queue that marks them as well";
#   - a 30% ECN link whose fault starts 40% into the trace carries its peers' load over
#     the whole trace, less in its later half: with marks that lead, the later half's load
#     counts (two-ecn-slow-over's shape, seed 1099: 0.98x its peers' bytes over the
#     trace, 0.69x in its later half; seed 1091 had that shape while load counted packets,
#     and carries 0.90x over the whole trace counted in bytes).
# Shapes and seeds are the cells ecn20-fab-over and two-ecn-slow-over of eval/matrix.txt
# on tuning seeds 1081-1100; the faulty link comes from truth.json. TEST_ANALYZE runs another build
# against the same traces (the build before this rule lists both as notices).
. "$(dirname "$0")/../lib.sh"
synth_test_start busy-marks-lead

# run NAME SEED FAULT [SYNTH-ARGS...]: synthesize the ecn20-fab-over shape (or the
# arguments given), analyze with the topology; sets $d and $link (the first faulty link).
run() {
	local name=$1 seed=$2 fault=$3
	shift 3
	d=$work/$name
	link=
	mirror_topo_run "marks-lead-$name" "$d" "$seed" "$fault" "$@" || return 1
	link=$(jq -r '[.links[] | select(.faulty) | .link][0]' "$d/truth.json")
}
top() {
	jq -r '.findings[0] | "\(.level) \(.kind) \(.subject)"' "$d/out.json"
}
findings() {
	jq -c '[.findings[] | [.level, .kind, .subject, .evidence.signal,
		.evidence.mark_outlier_ratio, .evidence.mark_outlier_z, .evidence.mark_lead,
		.evidence.load_ratio]]' "$d/out.json"
}

if run lead 1091 'link=leaf7-spine1,dir=spine1>leaf7,kind=ecn,size=20%,onset=1000us'; then
	# The fabric marks everywhere, and the link's marks stand under the 5-sigma bar:
	# only their lead over every peer link tells the fault.
	under=$(jq --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence |
		.peer_ce_rate >= 0.001 and .peer_outlier_z < 5 and .peer_outlier_lead >= 1.25' \
		"$d/out.json")
	expect_eq "marks-lead-lead: busy fabric, under 5 sigmas, ahead of every peer" true "$under"
	got=$(top)
	[ "$got" = "alert congested $link" ] &&
		pass "marks-lead-lead: congested alert on $link (its marks lead)" ||
		fail "marks-lead-lead: congested alert on $link" "$(findings)"
fi

if run drops 1094 'link=leaf4-spine1,dir=spine1>leaf4,kind=ecn,size=20%,onset=0us'; then
	sig=$(jq -r --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence.signal' \
		"$d/out.json")
	expect_eq "marks-lead-drops: the link's pick is its loss" loss "$sig"
	got=$(top)
	[ "$got" = "alert congested $link" ] &&
		pass "marks-lead-drops: congested alert on $link (its marks lead)" ||
		fail "marks-lead-drops: congested alert on $link" "$(findings)"
fi
if run late 1099 'link=leaf2-spine0,kind=ecn,size=30%,onset=4000us' --hosts 32 --leaves 4 \
	--spines 2 --load 40% --mtu 4096 --duration 10ms --workload mixed; then
	shed=$(jq --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence |
		.load_ratio >= 0.9 and .late_load_ratio != null and .late_load_ratio < 0.9' "$d/out.json")
	expect_eq "marks-lead-late: its peers' load overall, less in the later half" true "$shed"
	got=$(top)
	[ "$got" = "alert congested $link" ] &&
		pass "marks-lead-late: congested alert on $link (its marks lead)" ||
		fail "marks-lead-late: congested alert on $link" "$(findings)"
fi
exit 0
