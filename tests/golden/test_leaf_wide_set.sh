#!/usr/bin/env bash
# test_leaf_wide_set.sh: a set of links that mark alike holding every link between one leaf
# and the spines is the leaf's own traffic queueing, a notice (issue #17, round 25): each
# connection of the leaf crosses one of them, and one faulty cable marks alone. A healthy
# 24/3/2 fabric at 30% (8 hosts per leaf on 2 spines, ho-healthy-24, tuning seeds 3931 and
# 3943) raised `congested leaf1-spine0 | leaf1-spine1` alerts. Guard: in a 2-leaf fabric
# both links of a spine are crossed by every connection through it, so a 5% ECN cable is
# a set of one spine's links (ecn5-fab, seed 3935), and it stays the first alert.
. "$(dirname "$0")/../lib.sh"
synth_test_start leaf-wide-set
for seed in 3931 3943; do
	d=$work/healthy-$seed
	synth_analyze leaf-wide-set "$d" "$d/out.json" --hosts 24 --leaves 3 --spines 2 \
		--load 30% --mtu 2048 --duration 10ms --workload write --vantage mirror \
		--snaplen 128 --seed "$seed" -- --topology "$d/links.csv" --paths "$d/paths.csv" ||
		exit 0
	expect_eq "leaf-wide-set healthy 24/3/2 $seed: no alert" 0 "$(alert_count "$d/out.json")"
	expect_eq "leaf-wide-set healthy 24/3/2 $seed: leaf1's links listed as one notice" \
		'"notice"' "$(jq '[.findings[] | select(.subject == "leaf1-spine0 | leaf1-spine1")][0].level' \
			"$d/out.json")"
done

link_case_run leaf-wide-set 3935:leaf1-spine0:6000us kind=ecn,size=5% --hosts 8 --leaves 2 \
	--spines 2 --load 10% --mtu 1024 --duration 20ms --workload write || exit 0
expect_eq "leaf-wide-set ecn5 3935: the spine's links are the first alert" \
	'["congested","leaf0-spine0 | leaf1-spine0"]' \
	"$(jq -c '[.findings[] | select(.level == "alert")][0] | [.kind, .subject]' "$d/out.json")"
exit 0
