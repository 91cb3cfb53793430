#!/usr/bin/env bash
# test_busy_floor_step.sh: added latency on a cable of a busy fabric is a slow alert, not
# the fabric's queueing (issue #17, round 46). In a fabric marking everywhere the hottest
# link is a notice ("the whole fabric is queueing"), and the peers' floors spread so wide
# that a cable's floor 14-39 us up stands only 2-6 sigmas over them. Its own round trips,
# though, run 3.3-5.5x their healthy peers': a link whose floor stands 10 us up and whose
# latency pick runs 3x is an alert, kind slow. An incast host's queue lifts a cable's
# floor 13 us with no such latency pick, and stays a notice.
. "$(dirname "$0")/../lib.sh"
synth_test_start busy-floor-step

# The finding about SUBJECT in FILE: "LEVEL KIND" and whether its floor stands 10 us up.
about() {
	jq -r --arg s "$2" '[.findings[] | select(.subject == $s)][0] |
		"\(.level) \(.kind) \(if (.evidence.floor_excess_us // 0) >= 10 then "floor-up" else "floor-low" end)"' "$1"
}

# ho8-slow45us-fab 4163: +45 us both ways on a cable of a 30-host fabric at 25% load.
link_cases busy-floor-step slow kind=slow,size=45us \
	"--hosts 30 --leaves 3 --spines 2 --load 25% --mtu 2048 --duration 6ms --workload write" \
	4163:leaf2-spine1:0us || exit 0
expect_eq "busy-floor-step 4163: an alert whose floor stands 10 us up" "alert slow floor-up" \
	"$(about "$d/out.json" leaf2-spine1)"
# ho2-slow40us-fab-1dir 4164 and ho6-slow50us-fab-1dir 4164: one way, other shapes.
link_cases busy-floor-step slow 'dir=spine1>leaf0,kind=slow,size=40us' \
	"--hosts 36 --leaves 6 --spines 3 --load 35% --mtu 1024 --duration 3ms --workload write" \
	4164:leaf0-spine1:1200us || exit 0
link_cases busy-floor-step slow 'dir=spine2>leaf3,kind=slow,size=50us' \
	"--hosts 36 --leaves 4 --spines 3 --load 30% --mtu 2048 --duration 7ms --workload write" \
	4164:leaf3-spine2:700us || exit 0

# ho-healthy-incast-48 4165: a healthy busy fabric with an incast host; a cable's floor
# rises 13 us under that host's queue, its round trips not 3x: no alert.
mirror_topo_run busy-floor-step-incast "$work/incast" 4165 "" --hosts 48 --leaves 6 --spines 3 \
	--load 30% --mtu 2048 --duration 5ms --workload write --incast 198.18.0.57 \
	--incast-factor 3 || exit 0
expect_eq "busy-floor-step incast: no alert on the healthy fabric" 0 "$(alert_count "$work/incast/out.json")"
exit 0
