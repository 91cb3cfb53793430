#!/usr/bin/env bash
# test_quiet_floor_spread.sh: a switch link in a quiet fabric whose flows are CE-marked a few
# times their peers' is a queue (a notice) only when its floor stayed (issue #17, round 21).
# The floor "moved" at 1 us and floor_min_z (4) sigmas over its peers, sigmas made for alike
# host links; four spines' floors spread more. The eval's slowx5-fab-1dir (a 5x serializer
# and +4 us one way on a spine cable, 20% load; tuning seeds 3518, 3521) stood 2.75-4.07 us
# above its peers at 2.8-3.7 sigmas, at 2.4-3.8x their completion or latency, and was a
# notice under a wrong low-confidence alert. A floor up 1 us under a pick 2x its peers or
# more is a fault; the quiet queues stood 0.01-0.29 us at 1.25-1.6x (test_quiet_floor.sh
# keeps a healthy ECMP-skewed host link at 2.2x, floor +0.2 us, a notice).
. "$(dirname "$0")/../lib.sh"
synth_test_start quiet-floor-spread
for case in 3518:leaf1:spine2:2000 3521:leaf0:spine0:0; do
	IFS=: read -r seed leaf spine onset <<<"$case"
	d=$work/$seed
	fault="link=$leaf-$spine,dir=$leaf>$spine,kind=slow"
	synth_analyze quiet-floor-spread "$d" "$work/$seed.json" --hosts 16 --leaves 4 --spines 4 \
		--load 20% --mtu 1024 --duration 10ms --workload write --vantage mirror --snaplen 128 \
		--seed "$seed" --fault "$fault,size=5x,onset=${onset}us" \
		--fault "$fault,size=4us,onset=${onset}us" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
	got=$(jq -c '[.findings[] | select(.level == "alert") | [.kind, .subject]]' "$work/$seed.json")
	expect_eq "quiet-floor-spread $seed: the slowed cable is the one alert" "[[\"slow\",\"$leaf-$spine\"]]" "$got"
	got=$(jq --arg s "$leaf-$spine" '[.findings[] | select(.subject == $s)][0] |
		.evidence.floor_excess_us >= 1 and .evidence.floor_z < 4 and .severity >= 2' "$work/$seed.json")
	expect_eq "quiet-floor-spread $seed: floor up 1 us under 4 sigmas, 2x its peers" true "$got"
done
exit 0
