#!/usr/bin/env bash
# test_slow_responder_idle.sh: a responder whose READs wait with its link idle is slow, even
# on one or two connections or under 2x its peers' turnaround (issue #17, round 13). The
# eval's slowresp-each-mixed shape (a small mixed each-host fabric), tuning seeds: 2328,
# 198.18.0.15 answers READs 50 us late on one connection and the build before left it a
# notice, "the network may explain it", with no alert at all; 2273, 198.18.0.12 on two
# connections under host_alert_min_ratio, a notice under a wrong-kind `slow` alert on its
# link. A READ's request is one packet stamped as it arrives at the responder's port, so no
# slow link spreads it out: the wait less the time its link sent other responses is the
# responder's own (33 and 38 us per READ here, the peers' medians 0.00-0.01 us). A healthy
# READ fabric, 2246, keeps no alert. The build before fails the idle2328 and idle2273 checks.
. "$(dirname "$0")/../lib.sh"
synth_test_start slow-responder-idle
base=(--hosts 8 --leaves 2 --spines 2 --load 10% --mtu 1024 --duration 5ms --workload mixed
	--vantage each-host --snaplen 128)

run() { each_run slow-responder-idle "$1" "${base[@]}" "${@:2}"; }

if run idle2328 --seed 2328 --host-fault 'host=198.18.0.15,kind=slow-responder,size=50us,onset=1500us'; then
	expect_eq "slow-responder-idle-2328: the slow responder is the first alert" \
		"host 198.18.0.15" "$(first_alert "$work/idle2328.json")"
fi
if run idle2273 --seed 2273 --host-fault 'host=198.18.0.12,kind=slow-responder,size=50us,onset=1000us'; then
	got=$(jq -r '[.findings[] | select(.subject == "198.18.0.12" and .kind == "host")][0].level' \
		"$work/idle2273.json")
	expect_eq "slow-responder-idle-2273: the slow responder is an alert" "alert" "$got"
fi
if each_run slow-responder-idle healthy "${base[@]/mixed/read}" --seed 2246; then
	expect_eq "slow-responder-idle-healthy: no alert" 0 "$(alert_count "$work/healthy.json")"
fi
exit 0
