#!/usr/bin/env bash
# test_few_flows_heavy_marks.sh: a few connections slower than their peers, marked no more
# than them, in a fabric marking everywhere are a notice, not an alert (issue #17, round 15;
# docs/evaluation.md "Fifteenth round: a few connections in a fabric marking everywhere").
# Cell healthy-over60 of eval/matrix.txt (64 hosts, 60% load, oversubscribed 4:1, no fault)
# on tuning seeds: 2812 raised `slow 198.18.0.23-leaf1` (3 connections, peers marked 1.95%)
# with a topology and `slow 198.18.0.23` without; 2772 `slow 198.18.0.23` without. The
# guard: slow2us-host 2748 (a +2 us host link in a quiet fabric, 4 connections) stays an alert.
# TEST_ANALYZE runs another build against the same traces.
. "$(dirname "$0")/../lib.sh"
synth_test_start few-flows-heavy-marks

over60=(--hosts 64 --leaves 8 --spines 2 --load 60% --mtu 4096 --duration 5ms --workload write
	--vantage mirror --snaplen 128)
for seed in 2812 2772; do
	d=$work/$seed
	synth_analyze "few-flows-$seed" "$d" "$d/hosts.json" "${over60[@]}" --seed "$seed" || continue
	runs=(hosts)
	if [ "$seed" = 2812 ]; then
		"$ANALYZE" -q "$d/trace.pcapng" --json --topology "$d/links.csv" --paths "$d/paths.csv" \
			>"$d/topo.json" 2>/dev/null && runs+=(topo) || fail "few-flows-$seed topo" "analyze failed"
	fi
	for mode in "${runs[@]}"; do
		alerts=$(alert_list "$d/$mode.json")
		[ "$alerts" = "[]" ] && pass "few-flows-$seed ($mode): a healthy busy fabric, no alert" ||
			fail "few-flows-$seed ($mode): no alert" "$alerts"
		why=$(jq -r '[.findings[] | select(.subject | startswith("198.18.0.23")) |
			.evidence.notice_why][0] // "none"' "$d/$mode.json")
		case $why in
		"a few connections slower than their peers and marked no more"*)
			pass "few-flows-$seed ($mode): 198.18.0.23 is a notice, a few connections marked no more than their peers" ;;
		*) fail "few-flows-$seed ($mode): 198.18.0.23's notice" "$why" ;;
		esac
	done
done

d=$work/guard
if synth_analyze few-flows-guard "$d" "$d/hosts.json" --hosts 16 --leaves 4 --spines 2 --load 10% \
	--mtu 1024 --duration 10ms --workload write --vantage mirror --snaplen 128 --seed 2748 \
	--fault link=198.18.0.13-leaf0,kind=slow,size=2us,onset=1000us; then
	got=$(jq -r '[.findings[] | select(.level == "alert")][0] | "\(.kind) \(.subject) \(.flows_hurt)"' "$d/hosts.json")
	case $got in
	"slow 198.18.0.13 "[1-4]) pass "few-flows-guard: a +2 us host link on a quiet fabric stays an alert ($got connections)" ;;
	*) fail "few-flows-guard: slow 198.18.0.13 alert on 4 connections or fewer" "$got" ;;
	esac
fi
exit 0
