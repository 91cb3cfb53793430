#!/usr/bin/env bash
# test_host_link_step.sh: a host link whose floor rose as a step is a fault, in a fabric
# queueing everywhere too (issue #17, round 23). On fabrics no matrix cell had (48 hosts on
# 6 leaves and 3 spines, 40% load, MTU 2048; tuning seeds 3746-3805), a +30 us host link was
# a notice ("the whole fabric is queueing", "one connection in a fabric queueing
# everywhere"): the fabric marks everywhere and the link's connections are marked too. Its
# floor stood 58-61 us over its peers' and every connection it hurt had moved its own floor
# by as much: a queue does not hold every connection's floor up. Guards: a healthy
# overloaded fabric whose host link's floor rose 34 us over its peers' while its
# connections' floors stayed within 3.3 us (healthy-over60 3769), and a host link whose
# connections also cross a 3x-slowed spine cable (their floors 3.7x the link's excess,
# ho-slowx3-fab 3769).
. "$(dirname "$0")/../lib.sh"
synth_test_start host-link-step
busy48="--hosts 48 --leaves 6 --spines 3 --load 40% --mtu 2048 --duration 5ms --workload mixed"
for case in 3746:198.18.0.46-leaf4:500us 3752:198.18.0.18-leaf1:1500us \
	3755:198.18.0.28-leaf2:500us; do
	# shellcheck disable=SC2086 # the shape's words
	link_case_run host-link-step "$case" kind=slow,size=30us $busy48 || exit 0
	expect_eq "host-link-step $seed: the +30 us link is the first alert, slow" "slow $link" \
		"$(first_alert "$d/out.json")"
	got=$(jq --arg s "$link" '[.findings[] | select(.subject == $s)][0].evidence |
		.floor_excess_us >= 50 and .floor_excess_us <= 70 and .notice_why == null' "$d/out.json")
	expect_eq "host-link-step $seed: its floor rose 50-70 us, no notice" true "$got"
done

# Without a topology the host's own link is the subject, by the same rule.
got=$(hosts_first_alert host-link-step "$work/3752")
expect_eq "host-link-step 3752 without a topology: the host's link is the first alert" \
	'["slow","host_link","198.18.0.18"]' "$got"

d=$work/over60
synth_analyze host-link-step "$d" "$d.json" --hosts 64 --leaves 8 --spines 2 --load 60% \
	--mtu 4096 --duration 5ms --workload write --vantage mirror --snaplen 128 --seed 3769 -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "host-link-step over60 3769: no alert on a healthy fabric" 0 "$(alert_count "$d.json")"

d=$work/slowx3
mirror_topo_run host-link-step "$d" 3769 link=leaf2-spine1,kind=slow,size=3x --hosts 24 \
	--leaves 3 --spines 2 --load 30% --mtu 2048 --duration 10ms --workload write \
	--fault link=leaf2-spine1,kind=slow,size=2us || exit 0
expect_eq "host-link-step slowx3 3769: the slowed spine cable is the first alert" \
	"slow leaf2-spine1" "$(first_alert "$d/out.json")"
got=$(jq '[.findings[] | select(.subject == "198.18.0.33-leaf2" and .level == "alert")] | length' \
	"$d/out.json")
expect_eq "host-link-step slowx3 3769: a host link behind it is no alert" 0 "$got"
exit 0
