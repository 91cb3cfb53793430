#!/usr/bin/env bash
# test_loss_at_random.sh: in a busy fabric (every queue marks), drops that track marks were
# read as a queue's overflow and left a notice; a lossy cable there drops at random in time,
# an overflow in bursts while the queue is full (issue #17, round 11; docs/evaluation.md
# "Eleventh round: loss at random in a busy fabric"):
#   - 1% loss on a spine cable of a busy READ fabric: a lossy alert on that cable, its loss
#     events spread at random (evidence.loss_dispersion under 3);
#   - a healthy busy fabric's overflow drops: clustered (3 and over), no alert.
# Shapes and seeds from the tuning runs (seeds 1601-1612). TEST_ANALYZE runs another build
# against the same traces (the build before this rule left the cable a notice).
. "$(dirname "$0")/../lib.sh"
synth_test_start loss-at-random

d=$work/read
if synth_analyze loss-random-read "$d" "$d/out.json" --hosts 32 --leaves 4 --spines 2 \
	--load 40% --mtu 4096 --duration 10ms --workload read --vantage mirror --snaplen 128 \
	--seed 1601 --fault link=leaf1-spine1,kind=loss,size=1%,onset=4000us -- \
	--topology "$d/links.csv" --paths "$d/paths.csv"; then
	busy=$(jq '[.findings[] | select(.subject == "leaf1-spine1")][0].evidence |
		.peer_ce_rate >= 0.001 and .loss_dispersion != null and .loss_dispersion < 3' "$d/out.json")
	expect_eq "loss-random-read: a busy fabric, the cable's drops at random" true "$busy"
	got=$(first_alert "$d/out.json")
	expect_eq "loss-random-read: lossy alert on the cable" "lossy leaf1-spine1" "$got"
fi

d=$work/healthy
if synth_analyze loss-random-healthy "$d" "$d/out.json" --hosts 32 --leaves 4 --spines 2 \
	--load 60% --mtu 4096 --duration 10ms --workload write --vantage mirror --snaplen 128 \
	--seed 1603 -- --topology "$d/links.csv" --paths "$d/paths.csv"; then
	clustered=$(jq '[.findings[] | select(.evidence.signal == "loss" and
		.evidence.loss_dispersion != null)] | length > 0 and
		all(.evidence.loss_dispersion >= 3)' "$d/out.json")
	expect_eq "loss-random-healthy: overflow drops come in bursts" true "$clustered"
	expect_eq "loss-random-healthy: no alert" 0 "$(alert_count "$d/out.json")"
fi
exit 0
