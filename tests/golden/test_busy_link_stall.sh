#!/usr/bin/env bash
# test_busy_link_stall.sh: a switch link at half rate on a busy oversubscribed fabric (60%
# load: the whole fabric queues and marks) queues and does not carry: its round trips wait
# longer than its peers' while it carries about half their payload, both ways (issue #17,
# round 11; loc_link_stall()). Queueing delay is backlog over service rate, so the figure
# (latency ratio over payload ratio) grows as the square of the slowdown; hot healthy links
# queue because they carry more, idle ones carry little and do not queue.
#   - seed 1513: the link picked by its marks, read "the whole fabric is queueing": a slow alert;
#   - seed 1524: picked by its drops, read "drops of a queue that marks them as well": a slow alert.
# The shape is the cell rate2x-fab-over60 of eval/matrix.txt on tuning seeds 1501-1540; the
# faulty link comes from truth.json. TEST_ANALYZE runs another build against the same traces
# (the build before this rule lists both as notices).
. "$(dirname "$0")/../lib.sh"
synth_test_start busy-link-stall

# run NAME SEED FAULT: synthesize rate2x-fab-over60's shape, analyze with the topology; sets
# $d and $link.
run() {
	local name=$1 seed=$2 fault=$3
	d=$work/$name
	link=
	mirror_topo_run "stall-$name" "$d" "$seed" "$fault" --hosts 32 --leaves 4 --spines 2 \
		--load 60% --mtu 4096 --duration 10ms --workload write || return 1
	link=$(jq -r '[.links[] | select(.faulty) | .link][0]' "$d/truth.json")
}
top() {
	jq -r '.findings[0] | "\(.level) \(.kind) \(.subject)"' "$d/out.json"
}
findings() {
	jq -c '[.findings[] | [.level, .kind, .subject, .evidence.signal, .evidence.peer_ce_rate,
		.evidence.stall, .evidence.stall_lead]]' "$d/out.json"
}

if run marks 1513 'link=leaf0-spine0,kind=slow,size=2x,onset=4000us'; then
	busy=$(jq '.findings[0].evidence.peer_ce_rate >= 0.001' "$d/out.json")
	expect_eq "stall-marks: the fabric marks everywhere" true "$busy"
	got=$(top)
	[ "$got" = "alert slow $link" ] &&
		pass "stall-marks: slow alert on $link (it queues and does not carry)" ||
		fail "stall-marks: slow alert on $link" "$(findings)"
fi
if run drops 1524 'link=leaf2-spine1,kind=slow,size=2x,onset=2000us'; then
	sig=$(jq -r --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence.signal' \
		"$d/out.json")
	expect_eq "stall-drops: the link's pick is its loss" loss "$sig"
	got=$(top)
	[ "$got" = "alert slow $link" ] &&
		pass "stall-drops: slow alert on $link (it queues and does not carry)" ||
		fail "stall-drops: slow alert on $link" "$(findings)"
fi
exit 0
