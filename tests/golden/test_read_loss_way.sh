#!/usr/bin/env bash
# test_read_loss_way.sh: a queue pair that carries WRITEs and READs (mixed workload) sends
# more requests than it gets responses, yet the READ responses it re-reads were lost on the
# responses' way: such a loss blames the links the responses crossed (issue #17, round 28).
# A 0.9% lossy spine-to-leaf direction in a 42-host, 6-leaf, 2-spine mixed fabric
# (ho6-loss0.9-fab-1dir, tuning seeds 3992 and 3995) was put on the requesters' way, and a
# host link was the first lossy alert (in 3995 the link of a host behind that leaf, whose two
# such QPs re-read 47 responses).
. "$(dirname "$0")/../lib.sh"
synth_test_start read-loss-way
shape="--hosts 42 --leaves 6 --spines 2 --load 8% --mtu 4096 --duration 9ms --workload mixed"
for case in 3992:leaf4-spine1:spine1\>leaf4:900us:198.18.0.50-leaf5 \
	    3995:leaf3-spine1:spine1\>leaf3:3600us:198.18.0.33-leaf3; do
	IFS=: read -r seed link dir onset host_link <<<"$case"
	d=$work/$seed
	# shellcheck disable=SC2086 # the shape's words
	mirror_topo_run read-loss-way "$d" "$seed" "link=$link,dir=$dir,kind=loss,size=0.9%,onset=$onset" \
		$shape || exit 0
	expect_eq "read-loss-way $seed: a lossy finding names $link" true \
		"$(jq --arg l "$link" '[.findings[] | select(.kind == "lossy")
			| .subject | split(" | ") | any(. == $l)] | any' "$d/out.json")"
	expect_eq "read-loss-way $seed: no lossy alert names $host_link alone" false \
		"$(jq --arg h "$host_link" '[.findings[] | select(.kind == "lossy" and .level == "alert"
			and .subject == $h)] | any' "$d/out.json")"
done
exit 0
