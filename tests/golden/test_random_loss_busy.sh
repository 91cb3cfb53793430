#!/usr/bin/env bash
# test_random_loss_busy.sh: a 1% cable in a busy oversubscribed fabric (issue #17, round 21).
# The other links' queues overflow too and raise the loss rate of the connections that do
# not cross the cable, to a fifth of its own or more: the eval's loss1-fab-read-over (tuning
# seeds 3509, 3510) put the right cable at 4.9x and 3.8x the rate elsewhere, under the 5x of
# a loss alert, and the verdict said nothing (3509) or named an overflowing cable (3510).
# Drops spread at random in time, on enough events, are no queue's overflow: they pass at 2x.
# Checked the other way: ecn20-fab-over 3507's overflow drops (54 events, dispersion 2.57,
# 3.3x) stay off the alerts; a first version of the rule, with no bar on events, raised them.
. "$(dirname "$0")/../lib.sh"
synth_test_start random-loss-busy
for case in 3509:leaf1-spine0:2000 3510:leaf2-spine1:1000; do
	IFS=: read -r seed link onset <<<"$case"
	d=$work/$seed
	synth_analyze random-loss-busy "$d" "$work/$seed.json" --hosts 32 --leaves 4 --spines 2 \
		--load 40% --mtu 4096 --duration 10ms --workload read --vantage mirror --snaplen 128 \
		--seed "$seed" --fault "link=$link,kind=loss,size=1%,onset=${onset}us" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
	got=$(jq -c '[.findings[] | select(.level == "alert")][0] | [.kind, .subject]' "$work/$seed.json")
	expect_eq "random-loss-busy $seed: the lossy cable is the first alert" "[\"lossy\",\"$link\"]" "$got"
	low=$(jq '[.findings[] | select(.level == "alert")][0].evidence |
		.rate < 5 * .rate_elsewhere and .loss_dispersion < 3 and .events >= 150' "$work/$seed.json")
	expect_eq "random-loss-busy $seed: under 5x elsewhere, at random, on 150 events or more" true "$low"
done
d=$work/overflow
synth_analyze random-loss-busy "$d" "$work/overflow.json" --hosts 64 --leaves 8 --spines 2 \
	--load 40% --mtu 4096 --duration 5ms --workload write --vantage mirror --snaplen 128 \
	--seed 3507 --fault 'link=leaf6-spine0,dir=leaf6>spine0,kind=ecn,size=20%,onset=500us' -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
got=$(jq -c '[.findings[] | select(.level == "alert") | [.kind, .subject]]' "$work/overflow.json")
expect_eq "random-loss-busy overflow: only the marking cable is an alert" \
	'[["congested","leaf6-spine0"]]' "$got"
exit 0
