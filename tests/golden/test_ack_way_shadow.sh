#!/usr/bin/env bash
# test_ack_way_shadow.sh: a one-way slow cable's pick explains the round trips whose ACKs
# take its slow way (issue #17, round 43). The pick is fit on the data crossing that way;
# the ACKs crossing it wait in the same delay, and left in the residual they made a second
# `slow` alert of a sibling uplink of the same leaf, crossed the other way.
. "$(dirname "$0")/../lib.sh"
synth_test_start ack-way-shadow
alerts() {
	jq -r '[.findings[] | select(.level == "alert") | "\(.kind) \(.subject)"] | join(", ")' "$1"
}

# ho2-slow40us-fab-1dir, tuning seed 4139: +40 us on leaf4 -> spine0; spine1 -> leaf4 was
# a second alert (its connections' ACKs left leaf4 by spine0).
d=$work/slow40
synth_analyze ack-way-shadow "$d" "$d/out.json" --hosts 36 --leaves 6 --spines 3 --load 35% \
	--mtu 1024 --duration 3ms --workload write --vantage mirror --snaplen 128 --seed 4139 \
	--fault 'link=leaf4-spine0,dir=leaf4>spine0,kind=slow,size=40us,onset=1200us' -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "ack-way-shadow slow40 4139: the slow cable is the only alert" \
	"slow leaf4-spine0" "$(alerts "$d/out.json")"

# ho9-slow55us-fab-1dir, tuning seed 4139: +55 us on leaf2 -> spine2; leaf2-spine0 was a
# second alert.
d=$work/slow55
synth_analyze ack-way-shadow "$d" "$d/out.json" --hosts 42 --leaves 6 --spines 4 --load 20% \
	--mtu 2048 --duration 8ms --workload write --vantage mirror --snaplen 128 --seed 4139 \
	--fault 'link=leaf2-spine2,dir=leaf2>spine2,kind=slow,size=55us,onset=2400us' -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "ack-way-shadow slow55 4139: the slow cable is the only alert" \
	"slow leaf2-spine2" "$(alerts "$d/out.json")"
exit 0
