#!/usr/bin/env bash
# test_ack_marks.sh: marks on acknowledgements blame the links the acknowledgements cross
# (issue #17; round 49). A queue pair of SENDs or atomics is acknowledged packet by packet,
# so a cable marking one way marks the ACKs of the queue pairs whose data cross it the other
# way; those marks were dropped (only the data's way was read), and an atomic queue pair
# whose responder had sent a CNP was read as a READ (more packets back than out), its marks
# then looked for on its acknowledgements. Tuning seeds 4187-4190: one-way fabric marks
# found nothing at all in 4 runs of 343-961 marked ACKs a queue pair. A cable marking both
# ways, and READs, keep their readings.
. "$(dirname "$0")/../lib.sh"
synth_test_start ack-marks

SMALL="--hosts 16 --leaves 4 --spines 2 --load 15% --mtu 1024 --duration 6ms"

# Atomics and RPCs (SENDs) on a cable marking a quarter of its packets one way.
link_cases ack-marks-atomic congested 'dir=spine0>leaf1,kind=ecn,size=25%' \
	"$SMALL --workload atomic" 7:leaf1-spine0:0us 8:leaf1-spine0:1ms || exit 0
link_cases ack-marks-rpc congested 'dir=leaf1>spine0,kind=ecn,size=25%' \
	"$SMALL --workload rpc" 7:leaf1-spine0:0us || exit 0

# ho16-ecn35-fab-1dir 4189 and ho8-ecn15-fab-1dir 4190: mixed workloads whose marks fell
# mostly on SEND and atomic acknowledgements.
link_cases ack-marks-mixed congested 'dir=spine1>leaf5,kind=ecn,size=35%' \
	"--hosts 26 --leaves 13 --spines 5 --load 18% --mtu 2048 --duration 7ms --workload mixed" \
	4189:leaf5-spine1:2800us || exit 0
link_cases ack-marks-mixed congested 'dir=spine0>leaf9,kind=ecn,size=15%' \
	"--hosts 50 --leaves 10 --spines 5 --load 15% --mtu 4096 --duration 8ms --workload mixed" \
	4190:leaf9-spine0:2400us || exit 0

# Both ways, and READs one way: the cable, and no host link beside it.
for w in write read atomic; do
	link_case_run ack-marks-$w 7:leaf1-spine0:0us kind=ecn,size=25% $SMALL --workload $w ||
		exit 0
	expect_eq "ack-marks $w both ways: the cable alone" '[["congested","leaf1-spine0"]]' \
		"$(alert_list "$d/out.json")"
done
link_case_run ack-marks-read 8:leaf1-spine0:0us 'dir=spine0>leaf1,kind=ecn,size=25%' \
	$SMALL --workload read || exit 0
expect_eq "ack-marks read one way: the cable alone" '[["congested","leaf1-spine0"]]' \
	"$(alert_list "$d/out.json")"

# ho5-two-ecn-loss 4188: a lossy host link beside a cable marking both ways. The marks on
# the ACKs of its connections (crossing the cable) do not make its loss a queue's overflow:
# both stay alerts.
d=$work/two
mirror_topo_run ack-marks-two "$d" 4188 link=leaf2-spine1,kind=ecn,size=25%,onset=0us \
	--hosts 24 --leaves 4 --spines 3 --load 35% --mtu 4096 --duration 6ms --workload mixed \
	--fault link=198.18.0.21-leaf1,kind=loss,size=1.2%,onset=2400us || exit 0
expect_eq "ack-marks two faults: both alerts" \
	'[["congested","leaf2-spine1"],["lossy","198.18.0.21-leaf1"]]' "$(alert_list "$d/out.json")"
exit 0
