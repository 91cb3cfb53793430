#!/usr/bin/env bash
# test_host_queue_marks.sh: a host's connections CE-marked a few times their peers', within
# counting noise of a marking fault, are the queue toward that host: a notice (issue #17,
# round 26). Healthy 44/4/4, 48/8/4 and 56/7/4 fabrics (tuning seeds 3946-3955, analyzed
# without a topology) raised `congested` host alerts at 9.8-36.6 sigmas and 4.5-17.7x their
# peers. So did an incast host whose link carried 4.7x its peers' load: its marks and the
# floor the same load lifted are a queue, and the floor rule no longer makes it an alert
# (it still does for a link that reads slow: a +35 us host link carrying more than its peers).
# A 25% ECN host link marking 18.8x its peers at 50 sigmas stays the first alert.
# Round 33: a host that receives one connection, whose path ECMP put on a busy spine, is
# marked in bursts (dispersion 10.2; ho9-healthy-ecmp-60 4037, an alert before): a notice.
# A 16% ECN link toward a host of two connections marks at random (0.39): an alert.
# Round 37: a 15% ECN host cable on a 55/5/2 fabric at 8% (ho15-ecn15-host) marks the
# host's connections both ways, 11.6-25.4 sigmas each; every healthy notice of this rule was
# marked one way (the queue toward a host marks what flows into it): an alert, with and
# without a topology.
. "$(dirname "$0")/../lib.sh"
synth_test_start host-queue-marks
for case in 3952:48:8:4:15%:4096:12ms:mixed:--ecmp-skew=0.5 3955:48:8:4:15%:4096:12ms:read: \
	3952:56:7:4:20%:4096:10ms:read: 3954:44:4:4:25%:4096:8ms:mixed:; do
	IFS=: read -r seed hosts leaves spines load mtu dur wl extra <<<"$case"
	d=$work/healthy-$hosts-$wl-$seed
	# shellcheck disable=SC2086 # extra is one synthesizer option or none
	synth_analyze host-queue-marks "$d" "$d.json" --hosts "$hosts" --leaves "$leaves" \
		--spines "$spines" --load "$load" --mtu "$mtu" --duration "$dur" --workload "$wl" \
		--vantage mirror --snaplen 128 --seed "$seed" ${extra/=/ } -- || exit 0
	expect_eq "host-queue-marks healthy $hosts/$leaves/$spines $wl $seed: no alert" 0 \
		"$(alert_count "$d.json")"
	expect_eq "host-queue-marks healthy $hosts/$leaves/$spines $wl $seed: a host's marks listed" \
		'"notice"' "$(jq -c '[.findings[] | select(.subject_kind == "host_link" and
			.evidence.signal == "ecn")][0].level' "$d.json")"
done

# Incast: the receiving host's link, 4.7x its peers' load, marked, floor up 10.8 us.
d=$work/incast
mirror_topo_run host-queue-marks "$d" 3954 "" --hosts 44 --leaves 4 --spines 4 --load 20% \
	--mtu 2048 --duration 4ms --workload write --incast 198.18.0.28 --incast-factor 3 || exit 0
expect_eq "host-queue-marks incast 3954: no alert" 0 "$(alert_count "$d/out.json")"
expect_eq "host-queue-marks incast 3954: the incast host's link is a congested notice" \
	'["notice","congested"]' "$(jq -c '[.findings[] | select(.subject ==
		"198.18.0.28-leaf1")][0] | [.level, .kind]' "$d/out.json")"

# A +35 us host link carrying more than its peers, picked by its marks, reads slow by its
# floors: the floor rule still makes it an alert. A marking fault at the sigma bar's edge
# keeps its alert.
link_cases host-queue-marks slow kind=slow,size=35us "--hosts 30 --leaves 5 --spines 3 \
	--load 40% --mtu 1024 --duration 5ms --workload write" 3949:198.18.0.25-leaf2:1500us ||
	exit 0
link_cases host-queue-marks congested kind=ecn,size=25% "--hosts 36 --leaves 6 --spines 3 \
	--load 35% --mtu 1024 --duration 3ms --workload mixed" 3950:198.18.0.22-leaf2:600us

d=$work/ecmp-4037
synth_analyze host-queue-marks "$d" "$d.json" --hosts 60 --leaves 12 --spines 3 --load 12% \
	--mtu 4096 --duration 6ms --workload mixed --vantage mirror --snaplen 128 --seed 4037 \
	--ecmp-skew 0.5 -- || exit 0
expect_eq "host-queue-marks ecmp 4037: no alert" 0 "$(alert_count "$d.json")"
expect_eq "host-queue-marks ecmp 4037: 198.18.0.57's bursts of marks, a notice" '["notice",true]' \
	"$(jq -c '[.findings[] | select(.subject == "198.18.0.57")][0] |
		[.level, .evidence.marks_dispersion >= 3]' "$d.json")"
d=$work/ecn16-4044
synth_analyze host-queue-marks "$d" "$d.json" --hosts 44 --leaves 11 --spines 4 --load 14% \
	--mtu 2048 --duration 6ms --workload write --vantage mirror --snaplen 128 --seed 4044 \
	--fault 'link=198.18.0.38-leaf7,dir=leaf7>198.18.0.38,kind=ecn,size=16%,onset=1800us' -- ||
	exit 0
expect_eq "host-queue-marks ecn16 4044: the marking host link, even marks, the first alert" \
	'["198.18.0.38","congested",true]' "$(jq -c '[.findings[] | select(.level == "alert")][0] |
		[.subject, .kind, .evidence.marks_dispersion < 1]' "$d.json")"

for case in 4087:198.18.0.12-leaf0:0us 4090:198.18.0.45-leaf3:1800us; do
	link_case_run host-queue-marks "$case" kind=ecn,size=15% --hosts 55 --leaves 5 --spines 2 \
		--load 8% --mtu 2048 --duration 6ms --workload write || exit 0
	host=${link%-leaf*}
	expect_eq "host-queue-marks ecn15 $seed: $link, marked both ways, the first alert" \
		"congested $link true" "$(jq -r '[.findings[] | select(.level == "alert")][0] |
			"\(.kind) \(.subject) \(.evidence.hurt_ce_way_z | min >= 8)"' "$d/out.json")"
	expect_eq "host-queue-marks ecn15 $seed without a topology: $host the first alert" \
		"[\"congested\",\"host_link\",\"$host\"]" "$(hosts_first_alert host-queue-marks "$d")"
done
exit 0
