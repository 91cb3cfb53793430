#!/usr/bin/env bash
# test_one_connection_queue.sh: a `slow` pick resting on one connection that stands under
# 1 us per round trip above its class's median is a notice (issue #17, round 44): what a
# queue on its path gives some connection. A slow link adds a microsecond or more to every
# round trip across it, so a 2x cable seen on one connection stays an alert.
. "$(dirname "$0")/../lib.sh"
synth_test_start one-connection-queue

# each_topo NAME SYNTH-ARGS...: an each-host incident analyzed without a topology into
# $work/NAME.json (each_run) and with it (and paths) into $work/NAME-topo.json.
each_topo() {
	local name=$1 d=$work/$1
	shift
	each_run one-connection-queue "$name" "$@" --vantage each-host --snaplen 128 || return 1
	"$ANALYZE" -q "$d"/trace-*.pcapng --topology "$d/links.csv" --paths "$d/paths.csv" \
		--json >"$d-topo.json" || { fail "one-connection-queue-$name" "analyze failed"; return 1; }
}

# The notice's reason for SUBJECT in FILE ("" when no notice names it).
notice_why() {
	jq -r --arg s "$2" '[.findings[] | select(.level == "notice" and .subject == $s) |
		.evidence.notice_why][0] // ""' "$1"
}

# ho22-healthy-50-each, tuning seed 4146: leaf4-spine2, crossed by one connection 0.79 us
# over its class, was a `slow` alert on a healthy fabric.
each_topo ho22 --hosts 50 --leaves 25 --spines 3 --load 12% --mtu 1024 --duration 6ms \
	--workload mixed --seed 4146 || exit 0
expect_eq "one-connection-queue ho22 4146: no alert with a topology" 0 \
	"$(alert_count "$work/ho22-topo.json")"
check "one-connection-queue ho22 4146: leaf4-spine2 a notice, one connection under 1 us" \
	grep -q '^one connection, under 1 us' <<<"$(notice_why "$work/ho22-topo.json" leaf4-spine2)"
expect_eq "one-connection-queue ho22 4146: no alert without a topology" 0 \
	"$(alert_count "$work/ho22.json")"

# ho18-healthy-36-each, tuning seed 4146: 198.18.0.20's link (one connection, 0.57 us) with
# a topology, the pair 198.18.0.20 | 198.18.0.38 without.
each_topo ho18 --hosts 36 --leaves 9 --spines 5 --load 15% --mtu 1024 --duration 5ms \
	--workload mixed --seed 4146 || exit 0
expect_eq "one-connection-queue ho18 4146: no alert with a topology" 0 \
	"$(alert_count "$work/ho18-topo.json")"
expect_eq "one-connection-queue ho18 4146: no alert without a topology" 0 \
	"$(alert_count "$work/ho18.json")"

# ho3-slowx2-fab-each, tuning seed 4146: a 2x cable (and 1 us) seen on one connection,
# 1.33 us over its class, stays the first alert.
each_topo x2 --hosts 18 --leaves 3 --spines 6 --load 10% --mtu 1024 --duration 15ms \
	--workload write --seed 4146 --fault link=leaf1-spine3,kind=slow,size=2x,onset=3000us \
	--fault link=leaf1-spine3,kind=slow,size=1us,onset=3000us || exit 0
expect_eq "one-connection-queue slowx2 4146: the 2x cable is the first alert" \
	"slow leaf1-spine3" "$(first_alert "$work/x2-topo.json")"
exit 0
