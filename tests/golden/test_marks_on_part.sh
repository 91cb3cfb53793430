#!/usr/bin/env bash
# test_marks_on_part.sh: without a topology, a marking cable is not a host's link (issue
# #17, round 35). A marking link marks every connection it carries at its rate; a cable
# further on only those ECMP gave it. ho13-ecn35-fab, tuning seed 4056 (46 hosts, 23
# leaves, 2 spines; leaf17-spine0 marks 35% from 0.6 ms): 198.18.0.45's link, marked on 8
# of its 12 connections where the other 4 would have drawn 120 marks at its rate, was the
# only alert. It is now a notice, and its connections marked twice or more, all across the
# cable (truth.json), the fabric's congested finding.
. "$(dirname "$0")/../lib.sh"
synth_test_start marks-on-part
d=$work/4056
synth_analyze marks-on-part "$d" "$work/4056.json" --hosts 46 --leaves 23 --spines 2 \
	--load 14% --mtu 2048 --duration 6ms --workload write --vantage mirror --snaplen 128 \
	--seed 4056 --fault link=leaf17-spine0,kind=ecn,size=35%,onset=600us -- || exit 0
got=$(jq '[.findings[] | select(.subject == "198.18.0.45")] | length == 0 or (.[0] |
	.level == "notice" and .evidence.clean_expected_events >= 10)' "$work/4056.json")
expect_eq "marks-on-part 4056: 198.18.0.45 is no alert" true "$got"
expect_fabric_alert "marks-on-part 4056" "$work/4056.json" "$d" leaf17-spine0 congested all
exit 0
