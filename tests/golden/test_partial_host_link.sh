#!/usr/bin/env bash
# test_partial_host_link.sh: without a topology, a slow cable further on is not a host's link
# (issue #17, round 34). A slow access link delays every connection across it; a slow spine
# cable only those ECMP gave it, and the host that sent most across it looked slow first.
# ho11-slow30us-fab-1dir, tuning seed 4046 (35 hosts, 7 leaves, 5 spines; +30 us on
# leaf1 -> spine1 from 2.4 ms): 198.18.0.19's link, 2 of its 4 connections slow, was the
# first alert, the right fabric set second. The host link is now a notice and the fabric
# set, most of whose connections cross the cable (truth.json), the first alert.
# Round 42: a host link (kind slow, or its host answering late) ranked above a slow fabric
# alert that holds most of its slow connections and more of other hosts' than it slows is
# that cable too, however many of its own connections it slows; a slow responder whose
# connections make half of a fabric set keeps its alert.
. "$(dirname "$0")/../lib.sh"
synth_test_start partial-host-link
d=$work/4046
synth_analyze partial-host-link "$d" "$work/4046.json" --hosts 35 --leaves 7 --spines 5 \
	--load 16% --mtu 2048 --duration 6ms --workload write --vantage mirror --snaplen 128 \
	--seed 4046 --fault 'link=leaf1-spine1,dir=leaf1>spine1,kind=slow,size=30us,onset=2400us' -- || exit 0
got=$(jq '[.findings[] | select(.subject == "198.18.0.19")][0] | .level == "notice" and
	.flows_hurt < 0.6 * .evidence.flows_crossing and (.evidence.notice_why | test("slow fabric set"))' \
	"$work/4046.json")
expect_eq "partial-host-link 4046: 198.18.0.19 slows 2 of 4 connections, a notice" true "$got"
expect_fabric_alert "partial-host-link 4046" "$work/4046.json" "$d" leaf1-spine1 slow most

# outnumbered NAME CABLE HOST SYNTH-ARGS...: the fabric set is the first alert, HOST's link a
# notice that names the set.
outnumbered() {
	local name=$1 cable=$2 host=$3 d=$work/$1
	shift 3
	synth_analyze partial-host-link "$d" "$d/out.json" "$@" --vantage mirror --snaplen 128 -- || exit 0
	expect_fabric_alert "partial-host-link $name" "$d/out.json" "$d" "$cable" slow most
	expect_eq "partial-host-link $name: $host's link is a notice beside the set" notice \
		"$(jq -r --arg h "$host" '[.findings[] | select(.subject == $h and
			.subject_kind == "host_link")][0].level' "$d/out.json")"
}
# ho10-slowx4-fab, tuning seed 4131: a 4x (+3 us) spine cable; 198.18.0.12's link (4 of 6
# connections slow, all in the set, 7 others there) was the first alert.
outnumbered slowx4-4131 leaf0-spine1 198.18.0.12 --hosts 27 --leaves 9 --spines 3 --load 18% \
	--mtu 2048 --duration 9ms --workload mixed --seed 4131 \
	--fault link=leaf0-spine1,kind=slow,size=4x,onset=1800us \
	--fault link=leaf0-spine1,kind=slow,size=3us,onset=1800us
# ho4-slowx8-fab-1dir, tuning seed 4131: spine3 -> leaf6 8x (+7 us); 198.18.0.46's link read
# as its host answering late (one connection, in the set with 2 others) was the first alert.
outnumbered slowx8-4131 leaf6-spine3 198.18.0.46 --hosts 48 --leaves 8 --spines 4 --load 15% \
	--mtu 4096 --duration 12ms --workload write --seed 4131 \
	--fault 'link=leaf6-spine3,dir=spine3>leaf6,kind=slow,size=8x,onset=4800us' \
	--fault 'link=leaf6-spine3,dir=spine3>leaf6,kind=slow,size=7us,onset=4800us'

# ho19-slowresp45-33, tuning seed 4130: a 45 us slow responder whose 6 slow connections are
# half of a 12-connection fabric set stays the first alert, as its host.
d=$work/slowresp
synth_analyze partial-host-link "$d" "$d/out.json" --hosts 33 --leaves 11 --spines 4 --load 12% \
	--mtu 4096 --duration 6ms --workload write --vantage mirror --snaplen 128 --seed 4130 \
	--host-fault host=198.18.0.11,kind=slow-responder,size=45us,onset=1800us -- || exit 0
expect_eq "partial-host-link slowresp45 4130: the responder is the first alert" \
	"host 198.18.0.11" "$(first_alert "$d/out.json")"
exit 0
