#!/usr/bin/env bash
# test_loaded_no_floor.sh: a switch link carrying 1.4x its peers' load or more, over the whole
# trace and its later half, with no floor measured (READs time no ACK) is a notice: its queue
# is the load's (issue #17, round 27). A healthy 2:1 oversubscribed READ fabric (24 hosts,
# 4 leaves, 3 spines, 35% load: ho5-healthy-24-read, tuning seeds 3956-3985) raised a `slow`
# or `congested` spine link alert in 8 of 30 runs, at 1.49-1.98x its peers' load. An 18% ECN
# cable in a READ fabric, 1.74-1.76x over the trace but 1.27-1.30x after its onset (its flows
# back off), stays an alert. Round 36: the same for a set of switch links always crossed
# together, a two-leaf fabric's cables to one spine (ho14-healthy-36-read: 36 hosts, 2
# leaves, 3 spines, 6:1, tuning seeds 4066-4085: 6 `congested` set alerts at 1.37-1.98x).
# Round 38: a host's own link too, without a topology. In healthy READ fabrics (tuning seed
# 4088: healthy-each-read, 16/4/4 from every host; ho5-healthy-24-read) a host link at
# 1.96-1.99x its peers' load with no floor measured was a `slow` alert (6.0 and 15.8 sigmas);
# every right host-link alert with no floor on tuning seeds 4086-4089 carried 1.25x or less.
. "$(dirname "$0")/../lib.sh"
synth_test_start loaded-no-floor
# healthy_case NAME SEED WHAT SUBJECT-RE SYNTH-ARGS...: a healthy READ fabric has no alert, and
# a notice on a spine link (or set: SUBJECT-RE) that says no floor was measured.
healthy_case() {
	local name=$1 seed=$2 what=$3 subject=$4 d=$work/${1// /-}-$2
	shift 4
	mirror_topo_run loaded-no-floor "$d" "$seed" "" "$@" --mtu 4096 --duration 6ms \
		--workload read || exit 0
	expect_eq "loaded-no-floor $name $seed: no alert" 0 "$(alert_count "$d/out.json")"
	expect_eq "loaded-no-floor $name $seed: a loaded spine $what's notice says why" true \
		"$(jq --arg re "$subject" '[.findings[] | select(.level == "notice" and (.subject | test($re)))
			| .evidence.notice_why | test("no floor was measured")] | any' "$d/out.json")"
}
for seed in 3956 3962 3965; do
	healthy_case healthy "$seed" link '^leaf' --hosts 24 --leaves 4 --spines 3 --load 35%
done
for seed in 4079 4081; do
	healthy_case "two leaves" "$seed" set '^leaf.* [|] ' --hosts 36 --leaves 2 --spines 3 --load 9%
done
# Over a few connections the load ratio is where ECMP put them: a 3x cable of a READ fabric
# (ho8-rate3x-fab: 21 hosts, 7 leaves, 3 spines; tuning seed 4075) carried 5 and was a
# notice (the report's congested-cnp sample, 4 connections, is report-golden's).
d=$work/few-4075
mirror_topo_run loaded-no-floor "$d" 4075 "link=leaf1-spine1,kind=slow,size=3x,onset=1000us" \
	--hosts 21 --leaves 7 --spines 3 --load 12% --mtu 1024 --duration 10ms --workload read || exit 0
expect_eq "loaded-no-floor few 4075: the 3x cable on 5 connections is the first alert" \
	"slow leaf1-spine1" "$(first_alert "$d/out.json")"
for case in 3959:leaf4-spine1:spine1\>leaf4 3960:leaf1-spine1:leaf1\>spine1; do
	IFS=: read -r seed link dir <<<"$case"
	d=$work/ecn-$seed
	mirror_topo_run loaded-no-floor "$d" "$seed" "link=$link,dir=$dir,kind=ecn,size=18%,onset=4800us" \
		--hosts 48 --leaves 8 --spines 4 --load 15% --mtu 4096 --duration 12ms --workload read ||
		exit 0
	expect_eq "loaded-no-floor ecn $seed: the marking cable is the first alert" "$link" \
		"$(jq -r '[.findings[] | select(.level == "alert")][0].subject' "$d/out.json")"
done
# A host link, no topology: each_run analyzes every host's trace of the each-host vantage.
each_run loaded-no-floor each-read-4088 --hosts 16 --leaves 4 --spines 4 --load 20% --mtu 1024 \
	--duration 10ms --workload read --vantage each-host --snaplen 128 --seed 4088 || exit 0
d=$work/read24-4088
synth_analyze loaded-no-floor "$d" "$d.json" --hosts 24 --leaves 4 --spines 3 --load 35% \
	--mtu 4096 --duration 6ms --workload read --vantage mirror --snaplen 128 --seed 4088 -- ||
	exit 0
for case in each-read-4088:198.18.0.14 read24-4088:198.18.0.25; do
	IFS=: read -r name host <<<"$case"
	expect_eq "loaded-no-floor $name without a topology: no alert" 0 \
		"$(alert_count "$work/$name.json")"
	expect_eq "loaded-no-floor $name: $host's loaded link a slow notice, over 1.4x its peers' load" \
		'["notice","slow",true]' "$(jq -c --arg h "$host" '[.findings[] |
			select(.subject_kind == "host_link" and .subject == $h)][0] |
			[.level, .kind, .evidence.load_ratio >= 1.4]' "$work/$name.json")"
done
exit 0
