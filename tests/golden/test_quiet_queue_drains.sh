#!/usr/bin/env bash
# test_quiet_queue_drains.sh: a loaded healthy fabric whose peer connections mark just under
# the busy bar (0.1%) is read as quiet, and its hottest switch link raised a `congested`
# alert: it marks 3.6-10x its peer links, its marks come and go (marks floor under 0.007)
# and its round trips' floor stays within 1 us of its peers'. That is a queue draining
# between bursts: a notice (issue #17, round 11; loc_quiet_queue_drains()). An ECN fault in
# a quiet fabric marks its share whatever the load, 23x its peer links and more, even when
# its marks floor is low: it stays a `congested` alert.
#   - healthy-over-mixed seeds 1428 and 1479: no alert (the build before raised a
#     `congested` alert on leaf0-spine0 and leaf3-spine0);
#   - ecn30-fab-1dir seed 1422: leaf1-spine0 (30% marking leaf1 -> spine0, marks floor
#     0.0066, 97x its peer links) stays a `congested` alert.
# Shapes and seeds are the cells of eval/matrix.txt, tuning seeds 1421-1480. TEST_ANALYZE
# runs another build against the same traces.
. "$(dirname "$0")/../lib.sh"
synth_test_start quiet-queue-drains

# healthy SEED LINK: the healthy-over-mixed shape; LINK is a notice that drains, no alert.
healthy() {
	local seed=$1 link=$2 d=$work/healthy-$1 shape alerts
	synth_analyze "quiet-queue-drains-healthy-$seed" "$d" "$d/out.json" --hosts 32 \
		--leaves 4 --spines 2 --load 40% --mtu 4096 --duration 10ms --workload mixed \
		--vantage mirror --snaplen 128 --seed "$seed" \
		-- --topology "$d/links.csv" --paths "$d/paths.csv" || return 0
	shape=$(jq --arg l "$link" '[.findings[] | select(.subject == $l)][0] |
		.kind == "congested" and .evidence.peer_ce_rate < 0.001 and
		.evidence.mark_outlier_ratio < 15' "$d/out.json")
	expect_eq "quiet-queue-drains-healthy-$seed: $link congested, fabric quiet" true "$shape"
	alerts=$(alert_list "$d/out.json")
	expect_eq "quiet-queue-drains-healthy-$seed: no alert" '[]' "$alerts"
}

healthy 1428 leaf0-spine0
healthy 1479 leaf3-spine0

d=$work/ecn30
if synth_analyze quiet-queue-drains-ecn30 "$d" "$d/out.json" --hosts 16 --leaves 4 --spines 2 \
	--load 10% --mtu 1024 --duration 10ms --workload write --vantage mirror --snaplen 128 \
	--seed 1422 --fault 'link=leaf1-spine0,dir=leaf1>spine0,kind=ecn,size=30%,onset=0us' \
	-- --topology "$d/links.csv" --paths "$d/paths.csv"; then
	got=$(jq -r '.findings[0] | "\(.level) \(.kind) \(.subject)"' "$d/out.json")
	expect_eq "quiet-queue-drains-ecn30: congested alert on leaf1-spine0" \
		"alert congested leaf1-spine0" "$got"
fi
exit 0
