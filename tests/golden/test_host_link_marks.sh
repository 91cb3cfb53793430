#!/usr/bin/env bash
# test_host_link_marks.sh: a host link that marks every connection it carries is an ECN
# fault, in a fabric queueing everywhere too (issue #17, round 24). On a 35%-loaded 36/6/3
# fabric (tuning seeds 3906-3925), 25% ECN on a host link was a notice ("the whole fabric is
# queueing"): a busy fabric's hot host links mark too, and marks on host links were read as
# queueing unless the latency said more. The faulty link marked all of its 5-13 connections
# at 21-85 sigmas over its peer links' while carrying less than its peers. Guards: healthy
# fabrics whose host links marked two to four connections at 16-37 sigmas (a burst, not a
# fault) or carried 3.75x their peers' load (incast) stay without an alert.
# Round 37: a host link marked both ways whose marks spread over time as a cable's do keeps
# its alert whatever it carries: a 15% ECN host cable on a quiet 55/5/2 fabric
# (ho15-ecn15-host) at 1.2-1.8x its peers' load was a notice. The healthy host link of
# ho7-healthy-ecmp-54 4089, marked both ways at 1.2x, marks in bursts (27.1): a notice.
. "$(dirname "$0")/../lib.sh"
synth_test_start host-link-marks
busy36="--hosts 36 --leaves 6 --spines 3 --load 35% --mtu 1024 --duration 3ms --workload mixed"
link_cases host-link-marks congested kind=ecn,size=25% "$busy36" 3909:198.18.0.39-leaf4:600us \
	3911:198.18.0.34-leaf4:300us 3912:198.18.0.13-leaf0:0us || exit 0

# Without a topology the host's own link is the subject, by the same rule.
got=$(hosts_first_alert host-link-marks "$work/3912")
expect_eq "host-link-marks 3912 without a topology: the host's link is the first alert" \
	'["congested","host_link","198.18.0.13"]' "$got"

for case in 3919:48:6:3:40%:2048:5ms:mixed: 3923:48:6:3:40%:2048:5ms:mixed: \
	3919:20:5:2:25%:2048:10ms:write:198.18.0.14; do
	IFS=: read -r seed hosts leaves spines load mtu dur wl incast <<<"$case"
	d=$work/healthy-$hosts-$seed
	extra=()
	[ -z "$incast" ] || extra=(--incast "$incast" --incast-factor 3)
	synth_analyze host-link-marks "$d" "$d.json" --hosts "$hosts" --leaves "$leaves" \
		--spines "$spines" --load "$load" --mtu "$mtu" --duration "$dur" --workload "$wl" \
		--vantage mirror --snaplen 128 --seed "$seed" "${extra[@]}" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
	expect_eq "host-link-marks healthy $hosts/$leaves/$spines $seed: no alert" 0 \
		"$(alert_count "$d.json")"
done

for case in 4086:198.18.0.38-leaf2:600us 4094:198.18.0.53-leaf3:600us; do
	link_case_run host-link-marks "$case" kind=ecn,size=15% --hosts 55 --leaves 5 --spines 2 \
		--load 8% --mtu 2048 --duration 6ms --workload write || exit 0
	expect_eq "host-link-marks ecn15 $seed: $link, over its peers' load, the first alert" \
		"congested $link true" "$(jq -r '[.findings[] | select(.level == "alert")][0] |
			"\(.kind) \(.subject) \(.evidence.load_ratio > 1)"' "$d/out.json")"
	expect_eq "host-link-marks ecn15 $seed without a topology: ${link%-leaf*} the first alert" \
		"[\"congested\",\"host_link\",\"${link%-leaf*}\"]" \
		"$(hosts_first_alert host-link-marks "$d")"
done
d=$work/ecmp-54-4089
synth_analyze host-link-marks "$d" "$d.json" --hosts 54 --leaves 9 --spines 3 --load 22% \
	--mtu 4096 --duration 8ms --workload mixed --vantage mirror --snaplen 128 --seed 4089 \
	--ecmp-skew 0.5 -- || exit 0
expect_eq "host-link-marks ecmp 4089: no alert" 0 "$(alert_count "$d.json")"
expect_eq "host-link-marks ecmp 4089: 198.18.0.17, marked both ways in bursts, a notice" \
	'["notice",true,true]' "$(jq -c '[.findings[] | select(.subject == "198.18.0.17")][0] |
		[.level, (.evidence.hurt_ce_way_z | min >= 8), .evidence.marks_dispersion >= 10]' \
		"$d.json")"
exit 0
