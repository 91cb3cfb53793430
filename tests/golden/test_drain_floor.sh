#!/usr/bin/env bash
# test_drain_floor.sh: a busy or quiet fabric's hottest queue, whose marks come and go and
# whose floor stands over its peers' on few quick samples only (under 1.7 robust sigmas),
# is a queue draining between bursts: a notice (issue #17, round 18; docs/evaluation.md
# "Eighteenth round: the drain's floor in sigmas"). Tuning seeds of eval/matrix.txt:
# healthy-over60 3127 (leaf6-spine0 +20.2 us at 1.52 sigmas) and healthy-over-mixed 3129
# (leaf1-spine1 +1.95 us at 1.56) were alerts before. Guard: rate2x-fab-over60 3162, a
# rate-halved spine cable whose floor stands +1.42 us at 2.26 sigmas, stays the slow alert.
# TEST_ANALYZE runs another build against the same traces.
. "$(dirname "$0")/../lib.sh"
synth_test_start drain-floor

run() { # TAG SEED SYNTH-ARGS...
	local tag=$1 seed=$2 d=$work/$1
	shift 2
	synth_analyze "$tag" "$d" "$d/out.json" "$@" --vantage mirror --snaplen 128 --seed "$seed" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv"
}

run over60-3127 3127 --hosts 64 --leaves 8 --spines 2 --load 60% --mtu 4096 --duration 5ms \
	--workload write &&
	n=$(alert_count "$work/over60-3127/out.json") &&
	{ [ "$n" = 0 ] && pass "over60-3127: no alert" || fail "over60-3127: no alert" "$n alerts"; }

run mixed-3129 3129 --hosts 32 --leaves 4 --spines 2 --load 40% --mtu 4096 --duration 10ms \
	--workload mixed &&
	n=$(alert_count "$work/mixed-3129/out.json") &&
	{ [ "$n" = 0 ] && pass "mixed-3129: no alert" || fail "mixed-3129: no alert" "$n alerts"; }

run rate2x-3162 3162 --hosts 32 --leaves 4 --spines 2 --load 60% --mtu 4096 --duration 10ms \
	--workload write --fault link=leaf1-spine0,kind=slow,size=2x,onset=1000us &&
	got=$(first_alert "$work/rate2x-3162/out.json") &&
	{ [ "$got" = "slow leaf1-spine0" ] && pass "rate2x-3162: slow leaf1-spine0 is the first alert" ||
		fail "rate2x-3162: first alert slow leaf1-spine0" "$got"; }
exit 0
