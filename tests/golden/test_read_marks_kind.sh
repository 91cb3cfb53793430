#!/usr/bin/env bash
# test_read_marks_kind.sh: a marked subject whose latency pick slows READs only stays
# `congested` (issue #17, round 42). slow_queue() lets a latency pick take a marked
# subject's headline: a slowed serializer queues and marks, injected marks delay no packet.
# A READ's round trip holds the response's transfer, which the marked responder's backoff
# stretches as a slow link would, so a READ-only pick is no evidence of a slow link: on
# tuning seeds 4130-4133, 11 of the 12 marked subjects (per run and mode) that took one
# were ECN faults.
. "$(dirname "$0")/../lib.sh"
synth_test_start read-marks-kind
first_kind() {
	jq -r '[.findings[] | select(.level == "alert")][0] | "\(.kind) \(.subject)"' "$1"
}

# ho20-ecn28-host, tuning seed 4131: 28% marks both ways on 198.18.0.20's link, READs,
# read as `slow` at 1.3x without a topology.
d=$work/ecn28
synth_analyze read-marks-kind "$d" "$d/out.json" --hosts 30 --leaves 10 --spines 5 --load 20% \
	--mtu 2048 --duration 6ms --workload read --vantage mirror --snaplen 128 --seed 4131 \
	--fault link=198.18.0.20-leaf3,kind=ecn,size=28%,onset=1800us -- || exit 0
expect_eq "read-marks-kind ecn28 4131: the marked host link is congested" \
	"congested 198.18.0.20" "$(first_kind "$d/out.json")"

# ho4-ecn18-fab-1dir, tuning seed 4132: 18% marks on leaf2 -> spine3, READs, read as
# `slow` at 1.6x with the topology and paths.
d=$work/ecn18
synth_analyze read-marks-kind "$d" "$d/out.json" --hosts 48 --leaves 8 --spines 4 --load 15% \
	--mtu 4096 --duration 12ms --workload read --vantage mirror --snaplen 128 --seed 4132 \
	--fault 'link=leaf2-spine3,dir=leaf2>spine3,kind=ecn,size=18%,onset=2400us' -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "read-marks-kind ecn18 4132: the marked cable is congested" \
	"congested leaf2-spine3" "$(first_kind "$d/out.json")"
exit 0
