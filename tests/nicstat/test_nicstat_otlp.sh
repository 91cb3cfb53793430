#!/usr/bin/env bash
# test_nicstat_otlp.sh: agentxdp-nicstat --otlp against a tiny OTLP/HTTP receiver on
# 127.0.0.1 that answers 503 first: the POST is retried with the same body, and the JSON
# has the OTLP field names and values (checked by check_otlp_body.py).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/fixture.sh"
NICSTAT=$BIN/agentxdp-nicstat
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(tmpdir)
rpid=
trap '[ -n "$rpid" ] && kill "$rpid" 2>/dev/null; rm -rf "$T"' EXIT

if ! command -v python3 >/dev/null; then
	skip otlp-receiver "python3 missing"
	exit 0
fi
SYS=$T/sys
fx_root "$SYS"
fx_mlx5 "$SYS" mlx5_0 eth2
fx_set "$SYS" mlx5_0 1 hw_counters np_cnp_sent 123456
fx_set "$SYS" mlx5_0 1 counters port_xmit_data 9223372036854775000

start_receiver() { # FAIL_FIRST STATUS
	rm -f "$T/port" "$T/log"
	python3 "$HERE/otlp_receiver.py" "$T/port" "$T/log" "$@" &
	rpid=$!
	for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
	[ -s "$T/port" ]
}
stop_receiver() { kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null; rpid=; }

if ! start_receiver 1 503; then
	fail otlp-receiver-start "python receiver did not start"
	exit 1
fi
"$NICSTAT" --sysfs "$SYS" -c 2 --interval 300ms --otlp "http://127.0.0.1:$(cat "$T/port")" >/dev/null 2>"$T/err"
expect_eq otlp-exit-0 0 $?
stop_receiver
python3 "$HERE/check_otlp_body.py" "$T/log"

# A collector that refuses (400) is not retried; the tool still ends cleanly and says so.
start_receiver 100 400
"$NICSTAT" --sysfs "$SYS" -c 2 --interval 100ms --otlp "http://127.0.0.1:$(cat "$T/port")/v1/metrics" >/dev/null 2>"$T/err"
expect_eq otlp-refused-exit-0 0 $?
expect_eq otlp-refused-not-retried 2 "$(wc -l <"$T/log")"
check otlp-refused-warned grep -q 'answered HTTP 400' "$T/err"
expect_eq otlp-refused-warned-once 1 "$(grep -c 'answered HTTP 400' "$T/err")"
stop_receiver

# No collector at all: reads go on, the exit is clean, failures are reported.
"$NICSTAT" --sysfs "$SYS" -c 2 --interval 100ms --json --otlp http://127.0.0.1:9 >"$T/out" 2>"$T/err"
expect_eq otlp-unreachable-exit-0 0 $?
expect_eq otlp-unreachable-reads-go-on 2 "$(grep -c '"type":"read"' "$T/out")"
check otlp-unreachable-warned grep -q 'unreachable' "$T/err"
exit $((T_FAILED > 0))
