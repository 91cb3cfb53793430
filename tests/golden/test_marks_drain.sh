#!/usr/bin/env bash
# test_marks_drain.sh: a switch link at half rate in a loaded, oversubscribed fabric keeps
# a queue that stands out of its peer links' while it carries less than they do; its marks
# are that queue's, which drains between bursts, so a quarter of its windows or more carry
# no mark (issue #17, round 7; docs/localization.md "Unless it stands out of the queueing",
# loc_marks_drain()): the alert is `slow`, not `congested` (an ECN-marking fault marks in
# every window: tests/golden/test_steady_marks.sh).
#   - picked by its marks (rate2x-fab-over60 seed 1122);
#   - picked by its flows' latency and read by its marks (seed 1125, onset 3 ms).
# The shape is the cell rate2x-fab-over60 of eval/matrix.txt, tuning seeds 1121-1160.
# TEST_ANALYZE runs another build against the same traces (the build before this rule
# calls both `congested`).
. "$(dirname "$0")/../lib.sh"
synth_test_start marks-drain

# run NAME SEED LINK ONSET: the rate2x-fab-over60 shape, LINK at half rate from ONSET.
run() {
	local name=$1 seed=$2 link=$3 onset=$4 got
	d=$work/$name
	synth_analyze "marks-drain-$name" "$d" "$d/out.json" --hosts 32 --leaves 4 --spines 2 \
		--load 60% --mtu 4096 --duration 10ms --workload write --vantage mirror \
		--snaplen 128 --seed "$seed" --fault "link=$link,kind=slow,size=2x,onset=$onset" \
		-- --topology "$d/links.csv" --paths "$d/paths.csv" || return 0
	got=$(jq -r '.findings[0] | "\(.level) \(.kind) \(.subject) \(.evidence.marks_floor)"' \
		"$d/out.json")
	[ "$got" = "alert slow $link 0" ] &&
		pass "marks-drain-$name: slow alert on $link (its marks floor 0)" ||
		fail "marks-drain-$name: slow alert on $link" "$got"
}

run marks 1122 leaf2-spine1 0us
run latency 1125 leaf3-spine1 3000us
exit 0
