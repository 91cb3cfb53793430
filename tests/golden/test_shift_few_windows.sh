#!/usr/bin/env bash
# test_shift_few_windows.sh: a latency step over the last 40% of a trace cut into 8 windows
# (--window 25ms on 200 ms) is a step, not a burst at the trace's end: the rule that drops a
# shift held for fewer than 5 last windows (test_late_shift.sh) must not drop every shift of a
# trace with few windows. The same trace with its default 2 ms windows finds it too.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip shift-few-windows "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

if ! "$SYNTH" -q -o "$work/step" --hosts 8 --leaves 2 --spines 2 --load 5% --mtu 4096 --duration 200ms \
	--workload write --vantage mirror --snaplen 128 --seed 1108 \
	--fault link=198.18.0.13-leaf0,kind=slow,size=5us,onset=120ms 2>"$work/err"; then
	fail shift-few-windows "synth: $(head -n 1 "$work/err")"
	exit 0
fi
for w in default 25ms; do
	args=()
	[ "$w" = default ] || args=(--window "$w")
	if ! "$ANALYZE" -q "$work/step/trace.pcapng" "${args[@]}" --json >"$work/$w.json" 2>"$work/err"; then
		fail "shift-few-windows-$w" "analyze: $(head -n 1 "$work/err")"
		continue
	fi
	got=$(first_alert "$work/$w.json")
	expect_eq "shift-few-windows-$w: a +5 us step from 120 ms of 200 ms, window $w" \
		"slow 198.18.0.13" "$got"
done
exit 0
