#!/usr/bin/env bash
# test_loaded_marking_set.sh: a set of switch links always crossed together (a two-leaf
# fabric's cables to one spine) that marks while carrying 1.3x its peers' load or more in
# both halves, over 8 connections or more, its floor up under 2 us, is a notice: the spine
# ECMP loads most (issue #17, rounds 39 and 40; round 40 lowered the bar from 1.5x after
# the same fabric's healthy sets alerted at 1.41-1.42x on seeds 4116 and 4118). On tuning seeds 4110-4113 with a topology, healthy
# two-leaf fabrics raised `congested` set alerts at 1.54-1.81x: ho7-healthy-26 (26 hosts, 2
# leaves, 3 spines, 40% mixed) and ho6-healthy-ecmp-32 (32 hosts, 2 leaves, 4 spines, 45%,
# half the cross-leaf flows on spine0). A 12% ECN cable on the same 32/2/4 fabric sheds its
# load (0.71-0.82x) and stays the first alert.
. "$(dirname "$0")/../lib.sh"
synth_test_start loaded-marking-set
# healthy_case NAME SEED SYNTH-ARGS...: no alert, and a congested set notice that says why.
healthy_case() {
	local name=$1 seed=$2 d=$work/$1-$2
	shift 2
	mirror_topo_run loaded-marking-set "$d" "$seed" "" "$@" --workload mixed || exit 0
	expect_eq "loaded-marking-set $name $seed: no alert" 0 "$(alert_count "$d/out.json")"
	expect_eq "loaded-marking-set $name $seed: the loaded spine's set is a congested notice" true \
		"$(jq '[.findings[] | select(.level == "notice" and .kind == "congested" and
			(.subject | test("^leaf.* [|] ")))
			| .evidence.notice_why | test("always crossed together")] | any' "$d/out.json")"
}
for seed in 4110 4111 4113 4116 4118; do
	healthy_case two-leaf "$seed" --hosts 26 --leaves 2 --spines 3 --load 40% --mtu 2048 \
		--duration 6ms
done
for seed in 4111 4112; do
	healthy_case ecmp "$seed" --hosts 32 --leaves 2 --spines 4 --load 45% --mtu 1024 \
		--duration 5ms --ecmp-skew 0.5
done
for case in 4110:leaf0-spine1:0us 4112:leaf0-spine0:2000us; do
	IFS=: read -r seed link onset <<<"$case"
	d=$work/ecn-$seed
	mirror_topo_run loaded-marking-set "$d" "$seed" "link=$link,kind=ecn,size=12%,onset=$onset" \
		--hosts 32 --leaves 2 --spines 4 --load 45% --mtu 1024 --duration 5ms --workload write ||
		exit 0
	expect_eq "loaded-marking-set ecn $seed: the marking spine's set is the first alert" true \
		"$(jq --arg l "$link" '[.findings[] | select(.level == "alert")][0] |
			.kind == "congested" and (.subject | split(" | ") | index($l) != null)' "$d/out.json")"
done
exit 0
