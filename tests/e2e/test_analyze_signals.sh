#!/usr/bin/env bash
# test_analyze_signals.sh: agentxdp-analyze reading a pipe that never ends (tcpdump -w - | ...)
# and stopped by SIGINT, SIGTERM or SIGHUP writes the database of what it read, marked
# interrupted, and leaves no temporary file; a second signal removes the unfinished database.
. "$(dirname "$0")/../lib.sh"
A="$BIN/agentxdp-analyze"
S="$BIN/agentxdp-synth"
T=$(tmpdir)
WRITER_PIDS=()
cleanup() {
	local p
	for p in "${WRITER_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
command -v sqlite3 >/dev/null || { skip analyze-signals "sqlite3 missing (scripts/deps.sh)"; exit 0; }

"$S" -o "$T/s/trace.pcap" --format pcap --hosts 4 --duration 1ms --seed 7 --snaplen 128 -q ||
	{ fail "analyze-signals: synthesize a trace" "agentxdp-synth failed"; exit 0; }

# slow_writer N [hold]: the pcap header and the first N records on stdout, then (with hold)
# a touch of $T/sent and a pipe held open forever, as tcpdump -w - on a quiet link.
cat >"$T/writer.py" <<'PY'
import os, struct, sys, time
data = open(sys.argv[1], 'rb').read()
n, hold = int(sys.argv[2]), len(sys.argv) > 3
off = 24
for _ in range(n):
    off += 16 + struct.unpack_from('<I', data, off + 8)[0]
sys.stdout.buffer.write(data[:off])
sys.stdout.buffer.flush()
if hold:
    open(os.path.join(os.path.dirname(sys.argv[1]), '..', 'sent'), 'w').close()
    while True:
        time.sleep(3600)
PY
N=150
python3 "$T/writer.py" "$T/s/trace.pcap" $N >"$T/prefix.pcap"
"$A" "$T/prefix.pcap" -o "$T/ref.db" -q || { fail "analyze-signals: reference analysis" "exit $?"; exit 0; }
ref_flows=$(sqlite3 "$T/ref.db" 'SELECT count(*) FROM qp')
ref_pkts=$(sqlite3 "$T/ref.db" 'SELECT sum(packets) FROM qp')
[ "$ref_flows" -gt 0 ] && pass "analyze-signals: reference $N frames, $ref_flows flows" ||
	{ fail "analyze-signals: reference" "no flows"; exit 0; }

# start_pipe DB: the writer into a FIFO that agentxdp-analyze - -o DB reads as its standard
# input; ANALYZE_PID, WRITER_PID; returns once the analyzer has had time to read the prefix.
start_pipe() {
	rm -f "$T/sent" "$T/fifo"
	mkfifo "$T/fifo"
	python3 "$T/writer.py" "$T/s/trace.pcap" $N hold >"$T/fifo" &
	WRITER_PID=$!
	WRITER_PIDS+=("$WRITER_PID")
	"$A" - -o "$1" <"$T/fifo" 2>"$T/err" &
	ANALYZE_PID=$!
	for _ in $(seq 1 100); do [ -e "$T/sent" ] && break; sleep 0.05; done
	sleep 0.5 # the pipe holds the whole prefix: let the analyzer read it and block
}
# stop_writer: the writer holds the pipe open forever; end it once the analyzer is done.
stop_writer() {
	kill "$WRITER_PID" 2>/dev/null
	wait "$WRITER_PID" 2>/dev/null
}

declare -A SIGNO=([INT]=2 [TERM]=15 [HUP]=1)
for sig in INT TERM HUP; do
	db="$T/live-$sig.db"
	start_pipe "$db"
	ls "$db".tmp-* >/dev/null 2>&1 || fail "analyze-signals-$sig: database being built" "no $db.tmp-*"
	kill -$sig "$ANALYZE_PID"
	( sleep 10; kill -9 "$ANALYZE_PID" 2>/dev/null ) &
	watchdog=$!
	wait "$ANALYZE_PID"
	rc=$?
	kill "$watchdog" 2>/dev/null
	stop_writer
	expect_eq "analyze-signals-$sig: exit status 128+$sig" $((128 + SIGNO[$sig])) "$rc"
	if [ -s "$db" ] && [ "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok ]; then
		pass "analyze-signals-$sig: database written and readable"
	else
		fail "analyze-signals-$sig: database written" "$(ls "$T" | tr '\n' ' '); $(cat "$T/err")"
		continue
	fi
	expect_eq "analyze-signals-$sig: flows read are stored" "$ref_flows|$ref_pkts" \
		"$(sqlite3 "$db" 'SELECT count(*), sum(packets) FROM qp')"
	expect_eq "analyze-signals-$sig: meta says interrupted" "SIG$sig" \
		"$(sqlite3 "$db" "SELECT value FROM meta WHERE key = 'interrupted'")"
	expect_eq "analyze-signals-$sig: capture stop_reason" "interrupted|0|$N" \
		"$(sqlite3 "$db" 'SELECT stop_reason, truncated, frames FROM capture')"
	if grep -q "interrupted by SIG$sig after" "$T/err"; then pass "analyze-signals-$sig: says so on stderr"; else
		fail "analyze-signals-$sig: says so on stderr" "$(cat "$T/err")"
	fi
	if ls "$db".tmp-* >/dev/null 2>&1; then
		fail "analyze-signals-$sig: no temporary file left" "$(ls "$db".tmp-*)"
	else
		pass "analyze-signals-$sig: no temporary file left"
	fi
done

# A second signal while the first is handled: the unfinished database is removed and the
# process ends by that signal. Both are made pending while the analyzer is stopped.
db="$T/twice.db"
start_pipe "$db"
if ls "$db".tmp-* >/dev/null 2>&1; then
	kill -STOP "$ANALYZE_PID"
	kill -INT "$ANALYZE_PID"
	kill -TERM "$ANALYZE_PID"
	kill -CONT "$ANALYZE_PID"
	wait "$ANALYZE_PID"
	rc=$?
	stop_writer
	# The kernel may run either handler first: the process ends by the other signal.
	case $rc in
	130 | 143) pass "analyze-signals-twice: ended by the second signal ($rc)" ;;
	*) fail "analyze-signals-twice: ended by the second signal" "exit $rc: $(cat "$T/err")" ;;
	esac
	expect_eq "analyze-signals-twice: nothing left behind" "" "$(ls "$db" "$db".tmp-* 2>/dev/null)"
else
	fail "analyze-signals-twice: database being built" "no $db.tmp-*"
	kill -9 "$ANALYZE_PID"
fi
exit 0
