#!/usr/bin/env bash
# test_constant_step_load.sh: a link that carries more than its peers is still alerted on when
# every connection it delays is delayed by the same amount (issue #17, round 11). The eval's
# slow20us-fab-light shape (tuning seed 1566): +20 us on leaf1-spine0 from 1 ms, 2 spines,
# and the link carries 2.9x its peers' load. Its 9 hurt connections' median ACK latency is
# 20.00 +- 0.01 us over their class: a fixed step, not a queue (a queue delays each
# connection by its own amount). The build before made it a notice, "load explains the
# queueing", and reported no alert. Round 34: a queue its own load keeps full delays every
# connection alike too, but over a floor that did not rise (ho6-healthy-ecmp-32, tuning seed
# 4054: a host link at 2.8x its peers' load, +152 us on 6 connections, floor 0.05 us up, was
# an alert); it is the load notice again.
. "$(dirname "$0")/../lib.sh"
synth_test_start constant-step-load
d=$work/t
synth_analyze constant-step-load "$d" "$work/out.json" --hosts 16 --leaves 4 --spines 2 \
	--load 5% --mtu 1024 --duration 10ms --workload write --vantage mirror --snaplen 128 \
	--seed 1566 --peers 4 --fault link=leaf1-spine0,kind=slow,size=20us,onset=1000us -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "constant-step-load: the first alert is the slow link" "slow leaf1-spine0" \
	"$(first_alert "$work/out.json")"
expect_eq "constant-step-load: one alert" 1 "$(alert_count "$work/out.json")"

d=$work/4054
synth_analyze constant-step-load "$d" "$work/4054.json" --hosts 32 --leaves 2 --spines 4 \
	--load 45% --mtu 1024 --duration 5ms --workload mixed --vantage mirror --snaplen 128 \
	--seed 4054 --ecmp-skew 0.5 -- || exit 0
expect_eq "constant-step-load 4054: no alert on a healthy fabric" 0 "$(alert_count "$work/4054.json")"
got=$(jq '[.findings[] | select(.subject == "198.18.0.19")][0] | .level == "notice" and
	.evidence.load_ratio >= 2.5 and .evidence.floor_excess_us < 1 and
	(.evidence.notice_why | test("load explains"))' "$work/4054.json")
expect_eq "constant-step-load 4054: 198.18.0.19 at 2.8x the load, floor unmoved, a load notice" true "$got"
exit 0
