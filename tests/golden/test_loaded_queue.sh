#!/usr/bin/env bash
# test_loaded_queue.sh: a switch link carrying 1.2x its peers' load or more, over the whole
# trace and its later half, whose floor moved under 6 sigmas and that stands out less than a
# fault does (a slow pick under 20 sigmas, marks under 12x its peers') is a notice: the
# busiest cable of a fabric queues more than the others (issue #17, round 29). Healthy
# fabrics of tuning seeds 3996-4005 raised such `slow` or `congested` spine-link alerts in
# 11 of the 50 runs of five cells. A 5x serializer on a cable that also carries 1.32x its
# peers' load stays the first alert, and a loaded 3x cable whose marks alone would be a
# notice keeps its latency alert. Round 33, a host's link without a topology: an incast
# host at 1.75x its peers' load whose floor did not move and that stood at 8 sigmas
# (ho9-healthy-incast-16 4037, an alert before) is a notice; a 3x serializer on a host link
# at 1.3x the load, marked 90x its peers, stays the first alert (ho5-rate3x-host 4028).
. "$(dirname "$0")/../lib.sh"
synth_test_start loaded-queue
healthy_case() {
	local seed=$1 d=$work/healthy-$1
	shift
	mirror_topo_run loaded-queue "$d" "$seed" "" "$@" || exit 0
	expect_eq "loaded-queue healthy $seed: no alert" 0 "$(alert_count "$d/out.json")"
	expect_eq "loaded-queue healthy $seed: a loaded spine link's notice says why" true \
		"$(jq '[.findings[] | select(.level == "notice" and (.subject | test("^leaf")))
			| .evidence.notice_why | test("stands out less than a fault")] | any' "$d/out.json")"
}
for seed in 3998 4004; do
	healthy_case "$seed" --hosts 28 --leaves 7 --spines 2 --load 30% --mtu 2048 --duration 6ms \
		--workload write
done
healthy_case 3996 --hosts 30 --leaves 5 --spines 3 --load 40% --mtu 1024 --duration 5ms \
	--workload write
healthy_case 4003 --hosts 36 --leaves 4 --spines 3 --load 30% --mtu 2048 --duration 7ms \
	--workload mixed

d=$work/slowx5
fault=link=leaf1-spine3,dir=spine3\>leaf1,kind=slow
synth_analyze loaded-queue "$d" "$d/out.json" --hosts 16 --leaves 4 --spines 4 --load 20% \
	--mtu 1024 --duration 10ms --workload write --vantage mirror --snaplen 128 --seed 3996 \
	--fault "$fault,size=5x,onset=2000us" --fault "$fault,size=4us,onset=2000us" -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "loaded-queue slowx5: the 5x cable is the first alert" "slow leaf1-spine3" \
	"$(first_alert "$d/out.json")"

d=$work/slowx3
fault=link=leaf0-spine0,kind=slow
synth_analyze loaded-queue "$d" "$d/out.json" --hosts 42 --leaves 6 --spines 2 --load 8% \
	--mtu 4096 --duration 9ms --workload mixed --vantage mirror --snaplen 128 --seed 4001 \
	--fault "$fault,size=3x,onset=900us" --fault "$fault,size=2us,onset=900us" \
	--fault "link=198.18.0.20-leaf1,kind=loss,size=0.7%,onset=900us" -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "loaded-queue slowx3: the 3x cable is a slow alert" true \
	"$(jq '[.findings[] | select(.level == "alert" and .kind == "slow"
		and .subject == "leaf0-spine0")] | length == 1' "$d/out.json")"

d=$work/incast
synth_analyze loaded-queue "$d" "$d/out.json" --hosts 16 --leaves 2 --spines 2 --load 25% \
	--mtu 2048 --duration 10ms --workload write --vantage mirror --snaplen 128 --seed 4037 \
	--incast 198.18.0.15 --incast-factor 3 -- || exit 0
expect_eq "loaded-queue incast 4037: no alert without a topology" 0 "$(alert_count "$d/out.json")"
expect_eq "loaded-queue incast 4037: the incast host a slow notice, loaded, floor unmoved" true \
	"$(jq '[.findings[] | select(.subject == "198.18.0.15")][0] | .level == "notice" and
		.kind == "slow" and .evidence.load_ratio >= 1.2 and
		.evidence.floor_excess_us < .evidence.load_ratio' "$d/out.json")"
d=$work/rate3x
synth_analyze loaded-queue "$d" "$d/out.json" --hosts 14 --leaves 2 --spines 7 --load 20% \
	--mtu 2048 --duration 15ms --workload write --vantage mirror --snaplen 128 --seed 4028 \
	--fault link=198.18.0.21-leaf1,kind=slow,size=3x,onset=6000us -- || exit 0
expect_eq "loaded-queue rate3x 4028: the 3x host link is the first alert" "slow 198.18.0.21" \
	"$(first_alert "$d/out.json")"
exit 0
