#!/usr/bin/env bash
# test_quiet_queueing.sh: in a fabric that is not busy (flows elsewhere CE-marked under
# busy_ce_rate), a host link or a `fabric` set of host pairs whose flows are CE-marked a
# few times their peers' rate, at their load and under 2x their latency, is a queue: a
# notice, not an alert (issue #17: a healthy fabric has no alert). Without a topology,
# healthy ECMP-skewed and incast fabrics of the tuning seeds raised one each. So is a
# `fabric` set of host pairs under 1.4x their peers' latency (ECMP collisions): a plain
# healthy fabric and one beside a lossy host link raised one. A slowed host link or spine
# cable whose flows are marked too (2x and 5x serializers) stays an alert.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip quiet-queueing "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
base=(--hosts 16 --leaves 4 --mtu 1024 --duration 10ms --workload write
	--vantage mirror --snaplen 128)

# name seed synth-args...: synthesize, analyze without a topology into $work/name.json.
run() {
	local name=$1 seed=$2
	shift 2
	synth_analyze "quiet-$name" "$work/$name" "$work/$name.json" "${base[@]}" --seed "$seed" "$@"
}

# Healthy 20%-load fabrics (tuning seeds; eval cells healthy-ecmp-skew, healthy-incast):
# each had one alert, a slow or congested host link.
for c in "ecmp 1041 --ecmp-skew 0.5" "ecmp2 1042 --ecmp-skew 0.5" \
	"incast 1043 --incast 198.18.0.11 --incast-factor 3"; do
	set -- $c
	name=$1 seed=$2
	shift 2
	run "$name" "$seed" --spines 2 --load 20% "$@" || continue
	alerts=$(alert_count "$work/$name.json")
	expect_eq "quiet-$name: a healthy fabric, no alert" 0 "$alerts"
	# The notice says why, with marks between 3x and 10x the peers' in a quiet fabric.
	got=$(jq -r '[.findings[] | select(.evidence.notice_why // "" | test("a queue, not a fault")) |
		.evidence | (.hurt_ce_rate / .peer_ce_rate >= 3 and .hurt_ce_rate / .peer_ce_rate < 10
		and .peer_ce_rate < 0.001)] | "\(length) \(all)"' "$work/$name.json")
	case $got in
	"0 "*) fail "quiet-$name: a queueing notice" "$(jq -c '[.findings[] |
		[.level, .kind, .subject, .evidence.notice_why]]' "$work/$name.json")" ;;
	*" true") pass "quiet-$name: a queueing notice, marks 3-10x a quiet fabric's" ;;
	*) fail "quiet-$name: marks 3-10x a quiet fabric's" "$got" ;;
	esac
done

# 10% load, healthy (healthy-base seed 1044) and with 1% loss on a host link (loss1-host
# seed 1044): each had a `fabric` set at 1.24-1.28x its peers' latency as an alert.
for c in "base 1044" "loss1 1044 --fault link=198.18.0.23-leaf3,kind=loss,size=1%,onset=3000us"; do
	set -- $c
	name=$1 seed=$2
	shift 2
	run "$name" "$seed" --spines 2 --load 10% "$@" || continue
	got=$(jq -r '[.findings[] | select(.level == "alert")] | map("\(.kind) \(.subject)") | join(",")' \
		"$work/$name.json")
	want=""
	[ "$name" = loss1 ] && want="lossy 198.18.0.23"
	expect_eq "quiet-$name: no fabric alert" "$want" "$got"
	got=$(jq -r '[.findings[] | select(.subject_kind == "fabric") |
		select(.evidence.notice_why // "" | test("ECMP collisions")) | .severity < 1.4] |
		"\(length) \(all)"' "$work/$name.json")
	case $got in
	"0 "*) fail "quiet-$name: a fabric set notice" "$(jq -c '[.findings[] |
		[.level, .kind, .subject, .severity, .evidence.notice_why]]' "$work/$name.json")" ;;
	*" true") pass "quiet-$name: a fabric set under 1.4x is a notice" ;;
	*) fail "quiet-$name: a fabric set under 1.4x" "$got" ;;
	esac
done

# A 2x serializer on a host link at 10% load (slowx2-host, seed 1048): its flows are
# marked 8x their peers', but it runs over 2x its peers' completion time: an alert.
if run slowx2 1048 --spines 2 --load 10% --fault link=198.18.0.22-leaf3,kind=slow,size=2x,onset=0us \
	--fault link=198.18.0.22-leaf3,kind=slow,size=1us,onset=0us; then
	got=$(first_alert "$work/slowx2.json")
	expect_eq "quiet-slowx2: the slowed host link is the first alert" "slow 198.18.0.22" "$got"
fi
# A 5x serializer on a spine cable, one direction, from 3 ms (slowx5-fab-1dir, seed
# 1046): without a topology a `fabric` set at 1.55x its peers' latency, marked 9.9x. It was
# an alert until round 32; a set under 1.6x and marked is a queue's now (healthy ECMP
# imbalance looks the same without a topology), listed as a notice.
if run slowx5 1046 --spines 4 --load 20% \
	--fault link=leaf3-spine0,dir='spine0>leaf3',kind=slow,size=5x,onset=3000us \
	--fault link=leaf3-spine0,dir='spine0>leaf3',kind=slow,size=4us,onset=3000us; then
	got=$(jq -r '[.findings[] | select(.subject_kind == "fabric" and .kind == "slow")][0].level' \
		"$work/slowx5.json")
	expect_eq "quiet-slowx5: the spine cable's fabric set is a notice" "notice" "$got"
fi
exit 0
