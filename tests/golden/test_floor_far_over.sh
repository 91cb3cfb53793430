#!/usr/bin/env bash
# test_floor_far_over.sh: a cable whose floor stands microseconds over its peers' is `slow`,
# whatever its marks or load (issue #17, "right kind"; round 48). A serializer slowed 4-6x
# on a cable queues and marks, and was read `congested` when its marks held steady (as a
# marking fault's do) or it carried more than 0.9x its peers' load; its quickest round
# trips stood 7-156 us over its peers' (tuning seeds 4179-4182), where a marking fault's
# stood 9.5 us at most, at under 2 sigmas. A cable marking a quarter or a third of its
# packets stays `congested`.
. "$(dirname "$0")/../lib.sh"
synth_test_start floor-far-over

# The two fabrics of the matrix cells below (synthesizer words).
FAB15="--hosts 55 --leaves 5 --spines 2 --load 8% --mtu 2048 --duration 7ms --workload mixed"
FAB10="--hosts 27 --leaves 9 --spines 3 --load 18% --mtu 2048 --duration 9ms --workload mixed"

# ho15-slowx6-fab-1dir 4182: 6x and +5 us one way on a cable of a 55-host, 2-spine fabric
# (its floor 156 us up at 7 sigmas, its marks steady).
link_cases floor-far-over slow 'dir=leaf4>spine0,kind=slow,size=6x' \
	"$FAB15 --fault link=leaf4-spine0,dir=leaf4>spine0,kind=slow,size=5us,onset=700us" \
	4182:leaf4-spine0:700us || exit 0
expect_eq "floor-far-over 4182: the kind told by the floor" 1 \
	"$(jq '[.findings[] | select(.level == "alert")][0].evidence.kind_why // "" |
		test("microseconds over its peers") | if . then 1 else 0 end' "$d/out.json")"
# ho10-slowx4-fab 4182: 4x and +3 us both ways on a cable carrying 2.3x its peers' load.
link_cases floor-far-over slow kind=slow,size=4x \
	"$FAB10 --fault link=leaf1-spine0,kind=slow,size=3us,onset=900us" \
	4182:leaf1-spine0:900us || exit 0
# ho14-slowx5-fab-1dir 4182: 5x and +4 us one way on a cable of a two-leaf fabric: the pair
# of cables to that spine, as a set.
link_case_run floor-far-over 4182:leaf1-spine0:2100us 'dir=spine0>leaf1,kind=slow,size=5x' \
	--hosts 36 --leaves 2 --spines 3 --load 9% --mtu 2048 --duration 7ms --workload mixed \
	--fault 'link=leaf1-spine0,dir=spine0>leaf1,kind=slow,size=4us,onset=2100us' || exit 0
expect_eq "floor-far-over two-leaf 4182: a slow set of the spine's two cables" \
	"slow leaf0-spine0 | leaf1-spine0" "$(first_alert "$d/out.json")"

# Marking faults on the same cables: congested, as before.
link_cases floor-far-over congested 'dir=leaf4>spine0,kind=ecn,size=25%' "$FAB15" \
	4182:leaf4-spine0:700us || exit 0
link_cases floor-far-over congested kind=ecn,size=30% "$FAB10" 4182:leaf1-spine0:900us || exit 0
exit 0
