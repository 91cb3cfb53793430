#!/usr/bin/env bash
# test_fabric_marks.sh: without a topology, a leaf-spine cable that ECN-marks what crosses
# it is a `fabric` finding of kind congested, listing the marked connections (issue #17
# item 4, round 31). Before, nothing named such a cable: the marked connections' hosts
# were notices ("the whole fabric is queueing") and the trace read healthy. A healthy
# fabric whose ECMP crowds one spine marks many host pairs too, but in bursts, as a queue
# marks while it is full; a marking cable marks each packet with the same chance. The
# per-window dispersion of the set's marks tells them apart (0.65 for the cable's set
# below, 310 for the crowded spine's): a set marked in bursts is a notice.
. "$(dirname "$0")/../lib.sh"
synth_test_start fabric-marks
fabric_case fabric-marks congested ecn12 leaf3-spine0 --hosts 42 --leaves 6 --spines 4 --load 20% --mtu 2048 \
	--duration 8ms --workload mixed --seed 4017 \
	--fault "link=leaf3-spine0,kind=ecn,size=12%,onset=800us"
# Round 32: the same cable in a fabric queueing everywhere (45% load on 2 leaves): the set
# was a notice ("the whole fabric is queueing"). Its marks come as evenly as a constant
# chance gives them (dispersion under 1) at 13x the other connections' rate: an alert.
fabric_case fabric-marks congested busy leaf1-spine1 --hosts 32 --leaves 2 --spines 4 --load 45% --mtu 1024 \
	--duration 5ms --workload write --seed 4026 \
	--fault "link=leaf1-spine1,kind=ecn,size=12%,onset=1000us"

d=$work/ecmp
synth_analyze fabric-marks "$d" "$d/out.json" --hosts 60 --leaves 12 --spines 3 --load 12% \
	--mtu 4096 --duration 6ms --workload mixed --vantage mirror --snaplen 128 --seed 4017 \
	--ecmp-skew 0.5 -- || exit 0
expect_eq "fabric-marks ecmp: no alert" 0 "$(alert_count "$d/out.json")"

d=$work/crowded
synth_analyze fabric-marks "$d" "$d/out.json" --hosts 32 --leaves 2 --spines 4 --load 45% \
	--mtu 1024 --duration 5ms --workload mixed --vantage mirror --snaplen 128 --seed 4016 \
	--ecmp-skew 0.5 -- || exit 0
expect_eq "fabric-marks crowded: no marked fabric alert" 0 \
	"$(jq '[.findings[] | select(.level == "alert" and .subject_kind == "fabric"
				and .kind == "congested")] | length' "$d/out.json")"
expect_eq "fabric-marks crowded: no alert" 0 "$(alert_count "$d/out.json")"
exit 0
