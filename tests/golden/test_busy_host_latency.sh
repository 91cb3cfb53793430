#!/usr/bin/env bash
# test_busy_host_latency.sh: in a fabric queueing everywhere, a host whose round trips run
# under 2x its peers' with its connections marked no more than theirs is a notice: the
# queues of its paths (issue #17, round 25). Tuning seeds 3906-3945: such alerts on healthy
# fabrics stood 1.20-1.47x, every right one 2.10x and up. Guards: a 4x serializer on one
# direction of a host link (2.10x its peers' completions, the smallest right one) and a
# +15 us host link in a 35%-loaded fabric stay the first alert.
. "$(dirname "$0")/../lib.sh"
synth_test_start busy-host-latency
busy36="--hosts 36 --leaves 6 --spines 3 --load 35% --mtu 1024 --duration 3ms --workload write"
for seed in 3936 3945; do
	d=$work/healthy36-$seed
	# shellcheck disable=SC2086 # the shape's words
	synth_analyze busy-host-latency "$d" "$d.json" $busy36 --vantage mirror --snaplen 128 \
		--seed "$seed" -- || exit 0
	expect_eq "busy-host-latency healthy 36/6/3 $seed without a topology: no alert" 0 \
		"$(alert_count "$d.json")"
	# Read from -vv's ranking, which lists every subject's level past the cap of five
	# findings too (the fabric sets of round 31 rank above it: notices of their own).
	expect_eq "busy-host-latency healthy 36/6/3 $seed: the host ranked as a notice" \
		"notice slow 198.18.0.33" "$("$ANALYZE" -vv --json "$d/trace.pcapng" 2>&1 >/dev/null |
			sed -n 's/.*localize: ranked [0-9]*: \(notice\|alert\) \([a-z]*\) 198\.18\.0\.33 (.*/\1 \2 198.18.0.33/p' |
			head -n 1)"
done

d=$work/incast44
mirror_topo_run busy-host-latency "$d" 3928 "" --hosts 44 --leaves 4 --spines 4 --load 20% \
	--mtu 2048 --duration 4ms --workload write --incast 198.18.0.12 --incast-factor 3 || exit 0
expect_eq "busy-host-latency incast 44/4/4 3928 with a topology: no alert" 0 \
	"$(alert_count "$d/out.json")"

link_case_run busy-host-latency 3927:198.18.0.14-leaf1:0us \
	"kind=slow,size=4x,dir=198.18.0.14>leaf1" --hosts 28 --leaves 7 --spines 2 --load 15% \
	--mtu 4096 --duration 15ms --workload write || exit 0
expect_eq "busy-host-latency 4x one way 3927: the host's link is the first alert" \
	'["slow","host_link","198.18.0.14"]' "$(hosts_first_alert busy-host-latency "$d")"

# shellcheck disable=SC2086 # the shape's words
link_case_run busy-host-latency 3910:198.18.0.31-leaf3:300us kind=slow,size=15us $busy36 ||
	exit 0
expect_eq "busy-host-latency +15 us 3910: the host's link is the first alert" \
	"slow 198.18.0.31-leaf3" "$(first_alert "$d/out.json")"
exit 0
