#!/usr/bin/env bash
# test_queue_drains.sh: in a loaded, oversubscribed healthy fabric the hottest switch link
# can mark far more than its peers while it carries less than they do; its marks come and
# go (marks floor 0) and its round trips' floor stays where its peers' is: a queue that
# drains between bursts, not a fault (issue #17, round 8; docs/localization.md "Unless it
# stands out of the queueing", loc_queue_drains()). A rate-halved link marks the same way
# but keeps a standing queue, so its floor rises: it stays an alert.
#   - healthy-over-mixed seeds 1223 and 1236: no alert (the build before this rule raised
#     a `slow` alert on leaf2-spine0 and leaf3-spine1, "its marks come and go"). They carried
#     less than their peers counted in packets; counted in bytes (load since round 20) they
#     carry 1.08-1.19x, so the floor and stall exceptions, which ask a link carrying less,
#     no longer apply to them either;
#   - rate2x-fab-over60 seed 1236: the half-rate link leaf3-spine1, alerting by its marks
#     that come and go with its floor 2.7 sigmas and 1.8 us above its peers', stays a
#     `slow` alert.
# Shapes and seeds are the cells of eval/matrix.txt, tuning seeds 1221-1260. TEST_ANALYZE
# runs another build against the same traces.
. "$(dirname "$0")/../lib.sh"
synth_test_start queue-drains

# healthy SEED LINK: the healthy-over-mixed shape; LINK marks ahead of its peers with its
# marks floor 0 and its floor unmoved, and no finding is an alert.
healthy() {
	local seed=$1 link=$2 d=$work/healthy-$1 shape alerts
	synth_analyze "queue-drains-healthy-$seed" "$d" "$d/out.json" --hosts 32 --leaves 4 \
		--spines 2 --load 40% --mtu 4096 --duration 10ms --workload mixed \
		--vantage mirror --snaplen 128 --seed "$seed" \
		-- --topology "$d/links.csv" --paths "$d/paths.csv" || return 0
	shape=$(jq --arg l "$link" '[.findings[] | select(.subject == $l)][0].evidence |
		.peer_ce_rate >= 0.001 and .mark_outlier_ratio >= 2 and
		.marks_floor < 0.007 and .floor_excess_us < 1' "$d/out.json")
	expect_eq "queue-drains-healthy-$seed: $link marks ahead, floor unmoved" true "$shape"
	alerts=$(alert_list "$d/out.json")
	expect_eq "queue-drains-healthy-$seed: no alert" '[]' "$alerts"
}

healthy 1223 leaf2-spine0
healthy 1236 leaf3-spine1

d=$work/rate2x
if synth_analyze queue-drains-rate2x "$d" "$d/out.json" --hosts 32 --leaves 4 --spines 2 \
	--load 60% --mtu 4096 --duration 10ms --workload write --vantage mirror --snaplen 128 \
	--seed 1236 --fault link=leaf3-spine1,kind=slow,size=2x,onset=0us \
	-- --topology "$d/links.csv" --paths "$d/paths.csv"; then
	got=$(jq -r '.findings[0] | "\(.level) \(.kind) \(.subject) \(.evidence.marks_floor)
		\(.evidence.floor_excess_us >= 1)"' "$d/out.json" | tr -s ' \t\n' ' ')
	expect_eq "queue-drains-rate2x: slow alert on leaf3-spine1, its floor moved" \
		"alert slow leaf3-spine1 0 true " "$got"
fi
exit 0
