#!/usr/bin/env bash
# test_fabric_queue_floor.sh: without a topology, a `fabric` set under 1.6x its peers'
# latency, in a fabric whose other connections are marked at 0.03% or more, whose hurt
# connections' floors rose by under a third of its excess is a notice: a queue comes and
# goes, a slow cable delays the quickest round trips too (issue #17, round 41). On tuning
# seeds 4066-4073 and 4120-4121 the healthy ECMP-skewed fabrics' sets stood at 1.40-1.59x,
# floors 0.07-0.24 of the excess; an 8x cable's set at 1.59x in a fabric marking 0.16%
# raised its floors by the whole excess (1.06) and keeps its alert.
. "$(dirname "$0")/../lib.sh"
synth_test_start fabric-queue-floor
fabric_level() {
	jq -r '[.findings[] | select(.subject_kind == "fabric") | .level] | join(",")' "$1"
}
for case in ecmp49:49:7:6:12%:4120 ecmp63:63:9:3:10%:4121; do
	IFS=: read -r name hosts leaves spines load seed <<<"$case"
	d=$work/$name
	synth_analyze fabric-queue-floor "$d" "$d/out.json" --hosts "$hosts" --leaves "$leaves" \
		--spines "$spines" --load "$load" --mtu 2048 --duration 6ms --workload mixed \
		--vantage mirror --snaplen 128 --seed "$seed" --ecmp-skew 0.5 -- || exit 0
	expect_eq "fabric-queue-floor $name $seed: no alert" 0 "$(alert_count "$d/out.json")"
	expect_eq "fabric-queue-floor $name $seed: the fabric set is a notice" notice \
		"$(fabric_level "$d/out.json" | cut -d, -f1)"
done

# A one-way 8x (+7 us) spine cable from 4.8 ms on (ho4-slowx8-fab-1dir, seed 4066).
d=$work/slowx8
f=link=leaf3-spine3,dir=spine3\>leaf3,kind=slow,onset=4800us
synth_analyze fabric-queue-floor "$d" "$d/out.json" --hosts 48 --leaves 8 --spines 4 --load 15% \
	--mtu 4096 --duration 12ms --workload write --vantage mirror --snaplen 128 --seed 4066 \
	--fault "$f,size=8x" --fault "$f,size=7us" -- || exit 0
expect_eq "fabric-queue-floor slowx8 4066: the fabric set is the first alert" "slow fabric" \
	"$(jq -r '[.findings[] | select(.level == "alert")][0] | "\(.kind) \(.subject_kind)"' "$d/out.json")"
exit 0
