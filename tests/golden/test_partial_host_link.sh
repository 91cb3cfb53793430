#!/usr/bin/env bash
# test_partial_host_link.sh: without a topology, a slow cable further on is not a host's link
# (issue #17, round 34). A slow access link delays every connection across it; a slow spine
# cable only those ECMP gave it, and the host that sent most across it looked slow first.
# ho11-slow30us-fab-1dir, tuning seed 4046 (35 hosts, 7 leaves, 5 spines; +30 us on
# leaf1 -> spine1 from 2.4 ms): 198.18.0.19's link, 2 of its 4 connections slow, was the
# first alert, the right fabric set second. The host link is now a notice and the fabric
# set, most of whose connections cross the cable (truth.json), the first alert.
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
exit 0
