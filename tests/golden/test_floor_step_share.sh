#!/usr/bin/env bash
# test_floor_step_share.sh: a +20 us step whose lowest floor leads every other switch link's
# is an alert even when queues picked before it explain more of the completion excess
# (issue #17, round 16; docs/evaluation.md "Sixteenth round: a step's floor against its
# share"). Cell slow20us-fab-coll of eval/matrix.txt on tuning seeds: 2953 (leaf3-spine3)
# and 2959 (leaf0-spine3) found the step by its floor, then dropped it for its share of the
# excess (confidence 0.18 under 0.2) and named no fault. Guard, 2977: links sharing a spine
# with the step (floor high only on average) stay under it, the step first.
# TEST_ANALYZE runs another build against the same traces.
. "$(dirname "$0")/../lib.sh"
synth_test_start floor-step-share

for case in 2953:leaf3-spine3:3000us 2959:leaf0-spine3:4000us 2977:leaf0-spine0:3000us; do
	IFS=: read -r seed fault onset <<<"$case"
	d=$work/$seed
	coll_step_run "floor-share-$seed" "$d" "$seed" "$fault" "$onset" || continue
	got=$(jq -r '[.findings[] | select(.level == "alert") | "\(.kind) \(.subject)"] | join("; ")' \
		"$d/out.json")
	[ "$got" = "slow $fault" ] &&
		pass "floor-share-$seed: the one alert is slow $fault" ||
		fail "floor-share-$seed: one alert, slow $fault" "$got"
done
exit 0
