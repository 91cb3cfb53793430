#!/usr/bin/env bash
# test_host_link_marks.sh: a host link that marks every connection it carries is an ECN
# fault, in a fabric queueing everywhere too (issue #17, round 24). On a 35%-loaded 36/6/3
# fabric (tuning seeds 3906-3925), 25% ECN on a host link was a notice ("the whole fabric is
# queueing"): a busy fabric's hot host links mark too, and marks on host links were read as
# queueing unless the latency said more. The faulty link marked all of its 5-13 connections
# at 21-85 sigmas over its peer links' while carrying less than its peers. Guards: healthy
# fabrics whose host links marked two to four connections at 16-37 sigmas (a burst, not a
# fault) or carried 3.75x their peers' load (incast) stay without an alert.
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
exit 0
