#!/usr/bin/env bash
# test_faint_slow.sh: a `slow` alert under 1.25x its healthy peers on under 10 sigmas of
# evidence is a notice (issue #17, round 45): the spread of ordinary queues. A slow link
# stands out in its effect or in its evidence: a 2x cable at 1.12x on 70 sigmas stays.
. "$(dirname "$0")/../lib.sh"
synth_test_start faint-slow

# each_topo NAME SYNTH-ARGS...: an each-host incident analyzed without a topology into
# $work/NAME.json (each_run) and with it (and paths) into $work/NAME-topo.json.
each_topo() {
	local name=$1 d=$work/$1
	shift
	each_run faint-slow "$name" "$@" --vantage each-host --snaplen 128 || return 1
	"$ANALYZE" -q "$d"/trace-*.pcapng --topology "$d/links.csv" --paths "$d/paths.csv" \
		--json >"$d-topo.json" || { fail "faint-slow-$name" "analyze failed"; return 1; }
}

# The notice's reason for SUBJECT in FILE ("" when no notice names it).
notice_why() {
	jq -r --arg s "$2" '[.findings[] | select(.level == "notice" and .subject == $s) |
		.evidence.notice_why][0] // ""' "$1"
}

# ho14-healthy-30-each, tuning seed 4158: 198.18.0.13's link, 1.17x on 4 connections at
# 7.1 sigmas, was a `slow` alert in both modes.
each_topo ho14 --hosts 30 --leaves 6 --spines 6 --load 13% --mtu 1024 --duration 5ms \
	--workload write --seed 4158 || exit 0
expect_eq "faint-slow ho14 4158: no alert with a topology" 0 "$(alert_count "$work/ho14-topo.json")"
expect_eq "faint-slow ho14 4158: no alert without one" 0 "$(alert_count "$work/ho14.json")"
check "faint-slow ho14 4158: 198.18.0.13-leaf0 a faint notice" \
	grep -q '^under 1.25x its healthy peers, and faint' \
	<<<"$(notice_why "$work/ho14-topo.json" 198.18.0.13-leaf0)"

# ho8-healthy-30, tuning seed 4160: leaf0-spine1, 1.18x on 13 connections at 4.4 sigmas.
d=$work/ho8
synth_analyze faint-slow-ho8 "$d" "$d/out.json" --hosts 30 --leaves 3 --spines 2 --load 25% \
	--mtu 2048 --duration 6ms --workload mixed --vantage mirror --snaplen 128 --seed 4160 -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "faint-slow ho8 4160: no alert with a topology" 0 "$(alert_count "$d/out.json")"

# ho3-slowx2-fab-each, tuning seed 4162: a 2x cable (and 1 us), 1.12x its healthy peers on
# 11 connections at 70 sigmas, stays the first alert.
each_topo x2 --hosts 18 --leaves 3 --spines 6 --load 10% --mtu 1024 --duration 15ms \
	--workload write --seed 4162 --fault link=leaf0-spine3,kind=slow,size=2x,onset=3000us \
	--fault link=leaf0-spine3,kind=slow,size=1us,onset=3000us || exit 0
expect_eq "faint-slow slowx2 4162: the 2x cable is the first alert" "slow leaf0-spine3" \
	"$(first_alert "$work/x2-topo.json")"
exit 0
