#!/usr/bin/env bash
# test_fabric_pair_loss.sh: without a topology, a host pair's loss is a lossy link between
# them, a fabric finding (issue #17, round 34). A host pair names neither host's link; when
# no host and no fabric set holds the loss, the strongest lossy host pair alert becomes the
# fabric's lossy finding on that pair ("fabric (1 host pair)"), as a host's loss further on
# already did (round 32). ho7-flap300-fab, tuning seed 4046 (45 hosts, 5 leaves, 8 spines;
# leaf1-spine4 down 300 us in every 3 ms): the one lossy connection crossed the flapping
# cable and was headlined "lossy 198.18.0.21 -> 198.18.0.35", a subject no fault has.
. "$(dirname "$0")/../lib.sh"
synth_test_start fabric-pair-loss
d=$work/4046
synth_analyze fabric-pair-loss "$d" "$work/4046.json" --hosts 45 --leaves 5 --spines 8 \
	--load 15% --mtu 2048 --duration 10ms --workload write --vantage mirror --snaplen 128 \
	--seed 4046 --fault link=leaf1-spine4,kind=flap,size=300us,onset=0us -- || exit 0
expect_fabric_alert "fabric-pair-loss 4046" "$work/4046.json" "$d" leaf1-spine4 lossy all
expect_eq "fabric-pair-loss 4046: the first alert is on one host pair" "fabric (1 host pair)" \
	"$(jq -r '[.findings[] | select(.level == "alert")][0].subject' "$work/4046.json")"
expect_eq "fabric-pair-loss 4046: no host pair alert" 0 \
	"$(jq '[.findings[] | select(.level == "alert" and .subject_kind == "path")] | length' "$work/4046.json")"
exit 0
