#!/usr/bin/env bash
# test_collective_step.sh: a +20 us step on a switch link under a busy collective (issue
# #17, round 5, "a step under a collective"). Its connections carry too few ACK samples
# for a latency pick, and +20 us is ~4% of a message's completion time, under
# slow_min_ratio: the build before this rule rejected the completion pick and listed only
# the collective's hot spots as congested notices. The link's floor (its round trips'
# quickest window medians, however few samples) moves by about the completion excess, a
# hot spot's does not: a slow alert on the faulty link, from its completion pick. Shapes
# and seeds are the cell slow20us-fab-coll of eval/matrix.txt on the tuning seeds
# (1041-1060); the faulty link comes from truth.json. TEST_ANALYZE runs another build.
. "$(dirname "$0")/../lib.sh"
synth_test_start collective-step

for case in 1041:leaf2-spine3:3000us 1049:leaf1-spine2:3000us; do
	IFS=: read -r seed fault onset <<<"$case"
	d=$work/$seed
	coll_step_run "coll-step-$seed" "$d" "$seed" "$fault" "$onset" || continue
	link=$(jq -r '[.links[] | select(.faulty) | .link][0]' "$d/truth.json")
	got=$(jq -r '.findings[0] | "\(.level) \(.kind) \(.subject) \(.evidence.signal)"' "$d/out.json")
	[ "$got" = "alert slow $link completion" ] &&
		pass "coll-step-$seed: slow alert on $link by its completion and floor" ||
		fail "coll-step-$seed: slow alert on $link" \
			"$(jq -c '[.findings[] | [.level, .kind, .subject, .evidence.signal]]' "$d/out.json")"
	# The evidence says what the pick stood by: the floor's excess and sigmas.
	z=$(jq -r '.findings[0].evidence.step_floor_z // "none"' "$d/out.json")
	awk -v z="$z" 'BEGIN { exit !(z + 0 >= 4) }' &&
		pass "coll-step-$seed: evidence step_floor_z $z" ||
		fail "coll-step-$seed: evidence step_floor_z >= 4" "got $z"
	# The collective's hot spots stay notices: no second alert.
	n=$(alert_count "$d/out.json")
	expect_eq "coll-step-$seed: one alert" 1 "$n"
done
exit 0
