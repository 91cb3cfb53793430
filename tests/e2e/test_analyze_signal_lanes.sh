#!/usr/bin/env bash
# test_analyze_signal_lanes.sh: a SIGINT that comes before the -j lanes' readers open the trace
# (their first read then fails with EINTR) stops the run as it stops -j 1's: exit 130 and a
# database marked interrupted, not "starting reader 1: ... Interrupted system call" and exit 1
# with nothing written (seen with the default -j on 2 cores). strace injects the signal at
# the Nth open of the trace, so the moment is the same in every run. And a SIGINT in the
# middle of the reading stops the lanes at different frames: the capture row then says the
# run read as far as its farthest reader, never fewer frames than the RoCE packets it holds
# (before, 73,829 frames and 74,455 RoCE packets: reader 0's frames, every lane's packets).
. "$(dirname "$0")/../lib.sh"
A=${TEST_ANALYZE:-$BIN/agentxdp-analyze}
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
command -v strace >/dev/null || { skip analyze-signal-lanes "strace missing"; exit 0; }
command -v sqlite3 >/dev/null || { skip analyze-signal-lanes "sqlite3 missing"; exit 0; }
cp "$TOP/samples/lossy-link/trace.pcapng" "$T/t.pcapng"
strace -o /dev/null true 2>/dev/null || { skip analyze-signal-lanes "ptrace not allowed"; exit 0; }

# 1: the span's walk, 2: the run's reader, 3: the first lane's: each gets SIGINT after its open.
for when in 2 3; do
	for j in 1 2 4; do
		rm -f "$T/x.db"
		strace -f -o /dev/null -P "$T/t.pcapng" -e trace=openat \
			-e inject=openat:signal=SIGINT:when=$when \
			"$A" -j $j -o "$T/x.db" "$T/t.pcapng" >/dev/null 2>"$T/err"
		rc=$?
		why=$(sqlite3 "$T/x.db" 'SELECT stop_reason FROM capture' 2>/dev/null)
		if [ $rc -eq 130 ] && [ "$why" = interrupted ]; then
			pass "analyze-signal-lanes open $when -j $j: exit 130, database interrupted"
		else
			fail "analyze-signal-lanes open $when -j $j" "exit $rc, stop_reason '$why': $(head -n 1 "$T/err")"
		fi
	done
done

# SIGINT at the Nth read of the trace (each thread counts its own), mid-way through a
# 200,000-packet synthesized trace.
SYNTH="$BIN/agentxdp-synth"
if [ ! -x "$SYNTH" ]; then
	skip analyze-signal-lanes-mid "bin/agentxdp-synth not built"
	exit 0
fi
"$SYNTH" -q -o "$T/s" --hosts 16 --leaves 4 --spines 2 --duration 50ms --load 30% \
	--max-packets 200000 --snaplen 128 --seed 1121 || { fail analyze-signal-lanes-mid "synth failed"; exit 0; }
for when in 40 60 80; do
	for j in 2 4; do
		rm -f "$T/x.db"
		strace -f -o /dev/null -P "$T/s/trace.pcapng" -e trace=read \
			-e inject=read:signal=SIGINT:when=$when \
			"$A" -j $j -o "$T/x.db" "$T/s/trace.pcapng" >/dev/null 2>"$T/err"
		rc=$?
		got=$(sqlite3 -separator ' ' "$T/x.db" 'SELECT frames, roce_packets, stop_reason FROM capture' 2>/dev/null)
		read -r frames roce why <<<"$got"
		if [ $rc -eq 130 ] && [ "$why" = interrupted ] && [ "${frames:-0}" -ge "${roce:-1}" ]; then
			pass "analyze-signal-lanes read $when -j $j: $frames frames >= $roce RoCE packets"
		else
			fail "analyze-signal-lanes read $when -j $j" "exit $rc, capture '$got': $(head -n 1 "$T/err")"
		fi
	done
done
