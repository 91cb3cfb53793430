#!/usr/bin/env bash
# test_random_loss_under_marks.sh: in a busy fabric a lossy cable's link is picked twice, by
# its drops and by its marks (the other queues its flows cross mark them), and the two picks
# merge into one finding whose marks' kind ranked first: a `congested` notice, "the whole
# fabric is queueing", hid drops spread at random (issue #17, round 12; docs/evaluation.md
# "Twelfth round: drops under a marks notice (helper fab12)"):
#   - 1% loss on a spine cable of a busy READ fabric (loss1-fab-read-over's shape, seed
#     1846): a lossy alert on the cable, first;
#   - a healthy busy fabric whose overflowing link is picked by marks and by drops (seed
#     1878 of healthy-over-mixed): its drops are a queue's, no alert.
# TEST_ANALYZE runs another build against the same traces (the build before this rule left
# the cable a `congested` notice).
. "$(dirname "$0")/../lib.sh"
synth_test_start random-loss-under-marks

d=$work/cable
if synth_analyze random-loss-cable "$d" "$d/out.json" --hosts 32 --leaves 4 --spines 2 \
	--load 40% --mtu 4096 --duration 10ms --workload read --vantage mirror --snaplen 128 \
	--seed 1846 --fault link=leaf0-spine0,kind=loss,size=1%,onset=3000us -- \
	--topology "$d/links.csv" --paths "$d/paths.csv"; then
	both=$(jq '[.findings[] | select(.subject == "leaf0-spine0")][0].evidence.also |
		(map(.signal) | index("loss") != null and index("ecn") != null)' "$d/out.json")
	expect_eq "random-loss-cable: the cable picked by its drops and its marks" true "$both"
	got=$(first_alert "$d/out.json")
	expect_eq "random-loss-cable: lossy alert on the cable" "lossy leaf0-spine0" "$got"
fi

d=$work/healthy
if synth_analyze random-loss-healthy "$d" "$d/out.json" --hosts 32 --leaves 4 --spines 2 \
	--load 40% --mtu 4096 --duration 10ms --workload mixed --vantage mirror --snaplen 128 \
	--seed 1878 -- --topology "$d/links.csv" --paths "$d/paths.csv"; then
	both=$(jq '[.findings[] | select(.subject == "leaf0-spine0")][0].evidence.also |
		(map(.signal) | index("loss") != null and index("ecn") != null)' "$d/out.json")
	expect_eq "random-loss-healthy: the hot link picked by its drops and its marks" true "$both"
	expect_eq "random-loss-healthy: no alert" 0 "$(alert_count "$d/out.json")"
fi
exit 0
