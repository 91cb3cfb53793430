#!/usr/bin/env bash
# test_pair_marks.sh: one host pair's CE-marked connections are a queue on the path ECMP gave
# them, a notice, not an alert (issue #17, round 25). Without a topology, healthy 44/4/4 and
# 56/7/4 fabrics (tuning seeds 3926-3945) raised `congested A -> B` alerts: two or three
# connections of one pair marked 11-100x their peers. A faulty link marks every pair that
# crosses it, and a host link's fault every peer of the host: an ECN host link fault
# (each-host vantage) stays the first alert, and the pair it also marks stays a notice.
. "$(dirname "$0")/../lib.sh"
synth_test_start pair-marks
for case in 3932:44:4:4:25%:4096:8ms:mixed 3936:44:4:4:25%:4096:8ms:mixed \
	3943:44:4:4:25%:4096:8ms:mixed 3945:56:7:4:20%:4096:10ms:read; do
	IFS=: read -r seed hosts leaves spines load mtu dur wl <<<"$case"
	d=$work/healthy-$hosts-$seed
	synth_analyze pair-marks "$d" "$d.json" --hosts "$hosts" --leaves "$leaves" \
		--spines "$spines" --load "$load" --mtu "$mtu" --duration "$dur" --workload "$wl" \
		--vantage mirror --snaplen 128 --seed "$seed" -- || exit 0
	expect_eq "pair-marks healthy $hosts/$leaves/$spines $seed: no alert" 0 \
		"$(alert_count "$d.json")"
	expect_eq "pair-marks healthy $hosts/$leaves/$spines $seed: a host pair's marks listed as a notice" \
		'"notice"' "$(jq -c '[.findings[] | select(.subject_kind == "path" and
			.evidence.signal == "ecn")][0].level' "$d.json")"
done

# An ECN fault on a host link: the host is the first alert; the pair is a notice.
each_run pair-marks ecn12 --hosts 18 --leaves 3 --spines 6 --load 10% --mtu 1024 \
	--duration 15ms --workload mixed --vantage each-host --snaplen 128 --seed 3938 \
	--fault link=198.18.0.11-leaf0,kind=ecn,size=12%,onset=3000us || exit 0
expect_eq "pair-marks ecn12 3938: the marking host's link is the first alert" \
	'["congested","host_link","198.18.0.11"]' \
	"$(jq -c '[.findings[] | select(.level == "alert")][0] | [.kind, .subject_kind, .subject]' \
		"$work/ecn12.json")"
expect_eq "pair-marks ecn12 3938: no other alert" 1 "$(alert_count "$work/ecn12.json")"
exit 0
