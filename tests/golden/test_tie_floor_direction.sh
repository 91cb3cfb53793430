#!/usr/bin/env bash
# test_tie_floor_direction.sh: a tie broken by the lowest floor names the leading link over
# both directions (issue #17, round 14; docs/evaluation.md "Fourteenth round: ... (helper
# coll14)"). The tied pick's variant is a direction of the pick's own link; carried over to
# another member it judged half of that member's round trips. Cell slow20us-fab-coll of
# eval/matrix.txt on tuning seeds (2546-2645), +20 us on both directions:
#   - 2567: the faulty link led a tie with the pick's spine1 -> leaf3; judged spine1 -> leaf5
#     it was rejected and no fault was named (five congested notices);
#   - 2555: the slow alert on the faulty link named one direction (spine1 -> leaf3).
# TEST_ANALYZE runs another build against the same traces.
. "$(dirname "$0")/../lib.sh"
synth_test_start tie-floor-direction

for case in 2567:leaf5-spine1:1000us 2555:leaf3-spine1:4000us; do
	IFS=: read -r seed fault onset <<<"$case"
	d=$work/$seed
	coll_step_run "tie-floor-$seed" "$d" "$seed" "$fault" "$onset" || continue
	got=$(jq -r '[.findings[] | select(.level == "alert")][0] |
		"\(.kind) \(.subject) \(if (.direction // "") == "" then "both" else .direction end)"' "$d/out.json")
	[ "$got" = "slow $fault both" ] &&
		pass "tie-floor-$seed: the first alert is slow on $fault, both directions" ||
		fail "tie-floor-$seed: slow alert on $fault, both directions" \
			"$(jq -c '[.findings[] | [.level, .kind, .subject, .direction]]' "$d/out.json")"
done
exit 0
