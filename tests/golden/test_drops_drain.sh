#!/usr/bin/env bash
# test_drops_drain.sh: overflow drops that track the marks of a switch link whose marks come
# and go over an unmoved round-trip floor are a busy fabric's queue draining between
# bursts, as its marks are (issue #17, round 9; docs/localization.md "Loss that tracks
# marks", loc_queue_drains()). A rate-halved link picked by the same drops keeps a
# standing queue, so its floor rises: it stays an alert.
#   - healthy-over-mixed seed 1279: no alert (the build before this rule raised a `slow`
#     alert on leaf3-spine1 picked by its drops, marks floor 0, floor 1.4 us under its
#     peers');
#   - rate2x-fab-over60 seed 1275: the half-rate link leaf1-spine1, picked by its drops
#     that track marks coming and going (marks floor 0), its floor 2.7 sigmas and 2.0 us
#     above its peers', stays a `slow` alert.
# Shapes and seeds are the cells of eval/matrix.txt, tuning seeds 1261-1340. TEST_ANALYZE
# runs another build against the same traces.
. "$(dirname "$0")/../lib.sh"
synth_test_start drops-drain

d=$work/healthy
if synth_analyze drops-drain-healthy "$d" "$d/out.json" --hosts 32 --leaves 4 --spines 2 \
	--load 40% --mtu 4096 --duration 10ms --workload mixed --vantage mirror --snaplen 128 \
	--seed 1279 -- --topology "$d/links.csv" --paths "$d/paths.csv"; then
	shape=$(jq '[.findings[] | select(.subject == "leaf3-spine1" and .evidence.signal ==
		"loss")][0].evidence | .peer_ce_rate >= 0.001 and .mark_outlier_ratio >= 2 and
		.marks_floor < 0.007 and .floor_excess_us < 1' "$d/out.json")
	expect_eq "drops-drain-healthy: leaf3-spine1 drops over marks that come and go" true \
		"$shape"
	alerts=$(alert_list "$d/out.json")
	expect_eq "drops-drain-healthy: no alert" '[]' "$alerts"
fi

d=$work/rate2x
if synth_analyze drops-drain-rate2x "$d" "$d/out.json" --hosts 32 --leaves 4 --spines 2 \
	--load 60% --mtu 4096 --duration 10ms --workload write --vantage mirror --snaplen 128 \
	--seed 1275 --fault link=leaf1-spine1,kind=slow,size=2x,onset=1000us \
	-- --topology "$d/links.csv" --paths "$d/paths.csv"; then
	got=$(jq -r '.findings[0] | "\(.level) \(.kind) \(.subject) \(.evidence.signal)
		\(.evidence.marks_floor) \(.evidence.floor_excess_us >= 1)"' "$d/out.json" |
		tr -s ' \t\n' ' ')
	expect_eq "drops-drain-rate2x: slow alert on leaf1-spine1 by its drops, its floor moved" \
		"alert slow leaf1-spine1 loss 0 true " "$got"
fi
exit 0
