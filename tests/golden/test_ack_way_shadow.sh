#!/usr/bin/env bash
# test_ack_way_shadow.sh: a one-way slow cable's pick explains the round trips whose ACKs
# take its slow way (issue #17, round 43). The pick is fit on the data crossing that way;
# the ACKs crossing it wait in the same delay, and left in the residual they made a second
# `slow` alert of a sibling uplink of the same leaf, crossed the other way.
. "$(dirname "$0")/../lib.sh"
synth_test_start ack-way-shadow

# one_way_case NAME SEED FROM>TO SIZE ONSET SHAPE...: +SIZE on cable FROM-TO one way, a
# write workload seen from a mirror, analyzed with the topology and paths: the slow cable
# must be the only alert.
one_way_case() {
	local name=$1 seed=$2 way=$3 size=$4 onset=$5 d=$work/$1 link
	shift 5
	link=${way/>/-}
	synth_analyze ack-way-shadow "$d" "$d/out.json" "$@" --workload write --vantage mirror \
		--snaplen 128 --seed "$seed" \
		--fault "link=$link,dir=$way,kind=slow,size=$size,onset=$onset" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv" || return 1
	expect_eq "ack-way-shadow $name $seed: the slow cable is the only alert" "slow $link" \
		"$(jq -r '[.findings[] | select(.level == "alert") | "\(.kind) \(.subject)"] |
			join(", ")' "$d/out.json")"
}

# ho2-slow40us-fab-1dir, tuning seed 4139: spine1 -> leaf4 was a second alert (its
# connections' ACKs left leaf4 by spine0).
one_way_case slow40 4139 'leaf4>spine0' 40us 1200us --hosts 36 --leaves 6 --spines 3 \
	--load 35% --mtu 1024 --duration 3ms || exit 0
# ho9-slow55us-fab-1dir, tuning seed 4139: spine0 -> leaf2 was a second alert.
one_way_case slow55 4139 'leaf2>spine2' 55us 2400us --hosts 42 --leaves 6 --spines 4 \
	--load 20% --mtu 2048 --duration 8ms || exit 0
exit 0
