#!/usr/bin/env bash
# test_flap_cable_hosts.sh: without a topology, a cable that goes down is not a host's link
# (issue #17, round 35). An access link that goes down takes every connection across it
# down with it; a cable further on only those ECMP gave it, each of which loses a packet or
# two per outage. ho12-flap500-fab, tuning seed 4056 (48 hosts, 16 leaves, 3 spines;
# leaf0-spine2 down 500 us in every 5 ms): 198.18.0.12's link, 2 losses on each of 2 of
# its 4 connections, none on the others, was the only alert. The host link is now a notice,
# and its losing connections, which cross the flapping cable, the fabric's lossy finding.
. "$(dirname "$0")/../lib.sh"
synth_test_start flap-cable-hosts
d=$work/4056
synth_analyze flap-cable-hosts "$d" "$work/4056.json" --hosts 48 --leaves 16 --spines 3 \
	--load 12% --mtu 2048 --duration 6ms --workload write --vantage mirror --snaplen 128 \
	--seed 4056 --fault link=leaf0-spine2,kind=flap,size=500us,onset=0us -- || exit 0
expect_eq "flap-cable-hosts 4056: no lossy host or host-link alert" 0 \
	"$(jq '[.findings[] | select(.level == "alert" and .kind == "lossy" and
		(.subject_kind == "host" or .subject_kind == "host_link"))] | length' "$work/4056.json")"
expect_fabric_alert "flap-cable-hosts 4056" "$work/4056.json" "$d" leaf0-spine2 lossy all
exit 0
