#!/usr/bin/env bash
# test_loaded_floor_stands.sh: a switch link carrying twice its peers' load or more is a
# notice ("it carries far more than its peers"), unless its floor rose 10 us and 20 robust
# sigmas over its peers', in a busy fabric too: then it is a slow alert (issue #17, round
# 39). 6x and 7x one-way cables (serializer slowed, a few us added) drew 2.0-2.4x their
# peers' load with the resends of the flows they delay, their floors 10.9-190 us up at
# 32-340 sigmas (tuning seeds 4110-4113), and were read as congested notices. The loaded
# spine links of healthy ECMP-skewed fabrics stood at most 9.2 sigmas (18.7 us at 9.0).
. "$(dirname "$0")/../lib.sh"
synth_test_start loaded-floor-stands
# slow_case SEED LINK DIR SIZE EXTRA-US ONSET SHAPE...: the cable is the first alert, slow.
slow_case() {
	local seed=$1 link=$2 dir=$3 size=$4 us=$5 onset=$6 d=$work/slow-$4-$1
	shift 6
	local f="link=$link,dir=$dir,kind=slow"
	mirror_topo_run loaded-floor-stands "$d" "$seed" "$f,size=$size,onset=$onset" "$@" \
		--fault "$f,size=$us,onset=$onset" || exit 0
	expect_eq "loaded-floor-stands $size $seed: the cable is the first alert, slow" "slow $link" \
		"$(first_alert "$d/out.json")"
}
for case in 4112:leaf2-spine1:leaf2\>spine1 4113:leaf0-spine1:spine1\>leaf0; do
	IFS=: read -r seed link dir <<<"$case"
	slow_case "$seed" "$link" "$dir" 7x 6us 1400us --hosts 39 --leaves 3 --spines 7 --load 10% \
		--mtu 2048 --duration 7ms --workload mixed
done
slow_case 4112 leaf5-spine2 spine2\>leaf5 6x 5us 2800us --hosts 44 --leaves 11 --spines 4 --load 14% \
	--mtu 4096 --duration 7ms --workload mixed
# A healthy ECMP-skewed fabric: its spine links carry 2-4x and stay notices.
d=$work/ecmp-4113
mirror_topo_run loaded-floor-stands "$d" 4113 "" --hosts 56 --leaves 7 --spines 4 --load 20% \
	--mtu 4096 --duration 10ms --workload write --ecmp-skew 0.5 || exit 0
expect_eq "loaded-floor-stands ecmp 4113: no alert" 0 "$(alert_count "$d/out.json")"
expect_eq "loaded-floor-stands ecmp 4113: a spine link carrying far more is a notice" true \
	"$(jq '[.findings[] | select(.level == "notice" and (.subject | test("^leaf[0-9]+-spine")))
		| .evidence.notice_why | test("far more than its peers")] | any' "$d/out.json")"
exit 0
