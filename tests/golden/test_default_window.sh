#!/usr/bin/env bash
# test_default_window.sh: without --window the analyzer picks about a hundredth of the
# traces' span (100us to 1s, on a 1-2-5 scale), says so, and stores it (#17, #21).
. "$(dirname "$0")/../lib.sh"
A="$BIN/agentxdp-analyze"
S="$BIN/agentxdp-synth"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

window_of() { sqlite3 "$1" "SELECT value FROM meta WHERE key = 'window_ns'"; }

"$S" -q -o "$T/short" --hosts 4 --duration 20ms --seed 5 || { fail default-window "synth failed"; exit 0; }
"$A" "$T/short/trace.pcapng" -o "$T/short.db" 2>"$T/short.err"
expect_eq "default-window: a 20 ms trace gets 200us windows" 200000 "$(window_of "$T/short.db")"
grep -q 'window 200us (about a hundredth of the traces.* 20 ms' "$T/short.err" &&
	pass "default-window: the choice is printed" || fail "default-window: the choice is printed" "$(cat "$T/short.err")"
n=$(sqlite3 "$T/short.db" "SELECT count(DISTINCT start_ns) FROM qp_window")
[ "${n:-0}" -ge 50 ] && pass "default-window: a 20 ms trace has $n windows" ||
	fail "default-window: windows of a 20 ms trace" "only ${n:-0} distinct windows"

"$A" "$T/short/trace.pcapng" --window 500us -o "$T/given.db" 2>/dev/null
expect_eq "default-window: --window overrides" 500000 "$(window_of "$T/given.db")"
"$A" - -o "$T/stdin.db" <"$T/short/trace.pcapng" 2>"$T/stdin.err"
expect_eq "default-window: standard input gets 1s" 1000000000 "$(window_of "$T/stdin.db")"
grep -q 'standard input cannot be read twice' "$T/stdin.err" && pass "default-window: stdin says why" ||
	fail "default-window: stdin says why" "$(cat "$T/stdin.err")"

# A pcap (walked record by record) and a pcapng (walked from both ends) of one trace agree.
"$S" -q -o "$T/long.pcap" --format pcap --hosts 4 --load 1% --duration 200ms --seed 5 ||
	{ fail default-window "synth failed"; exit 0; }
"$A" "$T/long.pcap" -o "$T/long.db" 2>/dev/null
expect_eq "default-window: a 200 ms pcap gets 2ms windows" 2000000 "$(window_of "$T/long.db")"
"$A" --window 10us "$T/short/trace.pcapng" >/dev/null 2>"$T/bad.err"
rc=$?
[ $rc -eq 2 ] && grep -q "100us to 1h" "$T/bad.err" && pass "default-window: --window below 100us is a usage error" ||
	fail "default-window: --window below 100us" "exit $rc: $(cat "$T/bad.err")"
