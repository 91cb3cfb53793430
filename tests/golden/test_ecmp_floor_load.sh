#!/usr/bin/env bash
# test_ecmp_floor_load.sh: a switch link carrying several times its peers' load keeps a
# standing queue of its own (issue #17, round 22). Such a link is a notice (its load explains
# its queue) unless its floor moved; a quiet fabric's floor "moved" at 1 us. On
# healthy-ecmp-skew (half the cross-leaf flows on spine0, 20% load; tuning seeds 3643, 3686)
# spine0's links carried 3.0-4.1x their peers' load and stood 1.24-1.35 us above them:
# wrong alerts. A switch link's floor must now rise 1 us per multiple of its peers' load.
# The 5x serializers of slowx5-fab-each at 2.5-2.8x stood 5.4-7.3 us above (still alerts:
# test_quiet_floor_spread.sh and the eval), a host link keeps 1 us (test_quiet_floor.sh).
. "$(dirname "$0")/../lib.sh"
synth_test_start ecmp-floor-load
for case in 3643:leaf1-spine0 3686:leaf1-spine0; do
	IFS=: read -r seed link <<<"$case"
	d=$work/$seed
	synth_analyze ecmp-floor-load "$d" "$work/$seed.json" --hosts 16 --leaves 4 --spines 2 \
		--load 20% --mtu 1024 --duration 10ms --workload write --vantage mirror --snaplen 128 \
		--seed "$seed" --ecmp-skew 0.5 -- \
		--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
	got=$(jq -c '[.findings[] | select(.level == "alert")] | length' "$work/$seed.json")
	expect_eq "ecmp-floor-load $seed: no alert on a healthy fabric" 0 "$got"
	got=$(jq --arg s "$link" '[.findings[] | select(.subject == $s)][0] | .level == "notice" and
		.evidence.load_ratio >= 3 and .evidence.floor_excess_us >= 1 and
		.evidence.floor_excess_us < .evidence.load_ratio' "$work/$seed.json")
	expect_eq "ecmp-floor-load $seed: $link a notice, 3x the load, floor up 1 us" true "$got"
done
exit 0
