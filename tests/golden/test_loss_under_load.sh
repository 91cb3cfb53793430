#!/usr/bin/env bash
# test_loss_under_load.sh: in a quiet fabric, a host link picked by its drops and by its marks
# whose marks are a load notice ("it carries far more than its peers") is a `lossy` alert
# when its drops outrun its marks: a queue marks loss_marks_ratio (3) times before it
# overflows, a lossy wire drops without marking (issue #17, round 25). 3% loss on a host
# link serving 2.6x its peers' READs (ho3-loss3-host-read's shape, tuning seeds 3928, 3935,
# 3938) was a `congested` notice, its 600-odd loss events listed under `also`. Guard: an
# incast host link of a healthy fabric (ho2-healthy-incast-20, seed 3944) overflows, drops
# and marks more than it drops: it stays a notice, and the fabric has no alert.
. "$(dirname "$0")/../lib.sh"
synth_test_start loss-under-load
read18="--hosts 18 --leaves 3 --spines 6 --load 10% --mtu 1024 --duration 15ms --workload read"
cases=(3928:198.18.0.21-leaf1:6000us 3935:198.18.0.21-leaf1:0us 3938:198.18.0.13-leaf0:4500us)
link_cases loss-under-load lossy kind=loss,size=3% "$read18" "${cases[@]}" || exit 0
for case in "${cases[@]}"; do
	IFS=: read -r seed link _ <<<"$case"
	d=$work/$seed
	expect_eq "loss-under-load $seed: its marks are evidence beside the drops" true \
		"$(jq '[.findings[] | select(.level == "alert")][0].evidence.also |
			map(.signal) | index("ecn") != null' "$d/out.json")"
	expect_eq "loss-under-load $seed without a topology: the host's link, lossy" \
		"[\"lossy\",\"host_link\",\"${link%-leaf*}\"]" \
		"$(hosts_first_alert loss-under-load "$d")"
done

d=$work/incast
mirror_topo_run loss-under-load "$d" 3944 "" --hosts 20 --leaves 5 --spines 2 --load 25% \
	--mtu 2048 --duration 10ms --workload write --incast 198.18.0.19 --incast-factor 3 || exit 0
expect_eq "loss-under-load incast 3944: the incast link's drops and marks stay a notice" \
	'"notice"' "$(jq '[.findings[] | select(.subject == "198.18.0.19-leaf2")][0].level' \
		"$d/out.json")"
expect_eq "loss-under-load incast 3944: no alert" 0 "$(alert_count "$d/out.json")"
exit 0
