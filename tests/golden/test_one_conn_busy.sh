#!/usr/bin/env bash
# test_one_conn_busy.sh: in a fabric queueing everywhere (the connections that do not cross
# a subject CE-marked at busy_ce_rate or more), an alert resting on one connection is a
# notice: a faulty link or host hurts every connection crossing it, and one connection's
# excess is what the busy fabric's queues give some connection (issue #17, round 9;
# docs/localization.md "Alerts and notices"). In a quiet fabric one connection still
# alerts.
#   - ecn20-fab-over seed 1297: a `slow` host link on one connection (peer marks 2.1% of
#     packets) ranked above the 20%-marking fault; now a notice, the fault the one alert;
#   - slowx5-fab-1dir seed 1263: the 5x link on one connection of a quiet fabric (peer
#     marks 0.024%) stays an alert.
# Shapes and seeds are the cells of eval/matrix.txt, tuning seeds 1261-1340. TEST_ANALYZE
# runs another build against the same traces.
. "$(dirname "$0")/../lib.sh"
synth_test_start one-conn-busy

d=$work/busy
if synth_analyze one-conn-busy "$d" "$d/out.json" --hosts 64 --leaves 8 --spines 2 \
	--load 40% --mtu 4096 --duration 5ms --workload write --vantage mirror --snaplen 128 \
	--seed 1297 --fault 'link=leaf4-spine0,dir=leaf4>spine0,kind=ecn,size=20%,onset=0us' \
	-- --topology "$d/links.csv" --paths "$d/paths.csv"; then
	one=$(jq -c '[.findings[] | select(.subject == "198.18.0.51-leaf5") |
		[.level, .flows_hurt, .evidence.peer_ce_rate >= 0.001]]' "$d/out.json")
	expect_eq "one-conn-busy: the one-connection host link is a notice" \
		'[["notice",1,true]]' "$one"
	alerts=$(alert_list "$d/out.json")
	expect_eq "one-conn-busy: the marking link is the one alert" \
		'[["congested","leaf4-spine0"]]' "$alerts"
fi

d=$work/quiet
if synth_analyze one-conn-quiet "$d" "$d/out.json" --hosts 16 --leaves 4 --spines 4 \
	--load 20% --mtu 1024 --duration 10ms --workload write --vantage mirror --snaplen 128 \
	--seed 1263 \
	--fault 'link=leaf2-spine2,dir=leaf2>spine2,kind=slow,size=5x,onset=4000us' \
	--fault 'link=leaf2-spine2,dir=leaf2>spine2,kind=slow,size=4us,onset=4000us' \
	-- --topology "$d/links.csv" --paths "$d/paths.csv"; then
	got=$(jq -c '[.findings[0] | .level, .flows_hurt, .evidence.peer_ce_rate < 0.001,
		(.subject | contains("leaf2-spine2"))]' "$d/out.json")
	expect_eq "one-conn-quiet: one connection in a quiet fabric still alerts" \
		'["alert",1,true,true]' "$got"
fi
exit 0
