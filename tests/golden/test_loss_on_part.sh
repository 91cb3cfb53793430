#!/usr/bin/env bash
# test_loss_on_part.sh: without a topology, a lossy host link whose reliable connections
# that lost nothing would have lost 10 loss events or more at its rate is a notice: a lossy
# link drops on every connection it carries, so the loss lies on a cable further on that
# only some of them cross (issue #17 item 4, round 30). Before, such a spine cable's loss
# was blamed on the host link of whichever host sent most across it. A lossy host link
# keeps its alert, on a mirror and with the each-host vantage, and beside a slow cable.
. "$(dirname "$0")/../lib.sh"
synth_test_start loss-on-part
lossy_host_alerts() {
	jq '[.findings[] | select(.level == "alert" and .kind == "lossy" and
		(.subject_kind == "host_link" or .subject_kind == "host"))] | length' "$1"
}
cable_case() {
	local name=$1 d=$work/$1
	shift
	synth_analyze loss-on-part "$d" "$d/out.json" "$@" --vantage mirror --snaplen 128 -- || exit 0
	expect_eq "loss-on-part $name: no host link is blamed for the cable" 0 "$(lossy_host_alerts "$d/out.json")"
	expect_eq "loss-on-part $name: the notice says a link further on drops" true \
		"$(jq '[.findings[] | select(.kind == "lossy") | .evidence.notice_why // ""
			| test("further on")] | any' "$d/out.json")"
}
cable_case loss2 --hosts 20 --leaves 5 --spines 2 --load 25% --mtu 2048 --duration 10ms \
	--workload write --seed 4009 --fault "link=leaf1-spine0,kind=loss,size=2%,onset=0us"
cable_case loss1-read --hosts 16 --leaves 4 --spines 4 --load 20% --mtu 1024 --duration 10ms \
	--workload read --seed 4013 --fault "link=leaf3-spine0,kind=loss,size=1%,onset=1000us"

host_case() {
	local name=$1 vantage=$2 json=$work/$1.json
	shift 2
	if [ "$vantage" = each-host ]; then
		each_run loss-on-part "$name" "$@" --vantage each-host --snaplen 128 || exit 0
	else
		synth_analyze loss-on-part "$work/$name" "$json" "$@" --vantage mirror --snaplen 128 -- ||
			exit 0
	fi
	expect_eq "loss-on-part $name: the lossy host link is the first alert" "lossy host_link" \
		"$(jq -r '[.findings[] | select(.level == "alert")][0] | "\(.kind) \(.subject_kind)"' "$json")"
}
host_case host-loss1 mirror --hosts 16 --leaves 4 --spines 2 --load 10% --mtu 1024 \
	--duration 10ms --workload write --seed 4015 --fault "link=198.18.0.25-leaf3,kind=loss,size=1%"
host_case host-loss1-each each-host --hosts 16 --leaves 4 --spines 2 --load 10% --mtu 1024 \
	--duration 10ms --workload write --seed 4015 --fault "link=198.18.0.25-leaf3,kind=loss,size=1%"
host_case two-faults mirror --hosts 24 --leaves 3 --spines 2 --load 30% --mtu 2048 \
	--duration 10ms --workload mixed --seed 4006 --fault "link=leaf1-spine0,kind=slow,size=3x" \
	--fault "link=leaf1-spine0,kind=slow,size=2us" --fault "link=198.18.0.33-leaf2,kind=loss,size=0.5%"
exit 0
