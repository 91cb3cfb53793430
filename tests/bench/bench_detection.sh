#!/usr/bin/env bash
# bench_detection.sh: detection time of agent mode, from the start of an impairment on the
# testbed to the finding in /metrics. Testbed (emu) RDMA WRITEs from a to b; the agent
# (agentxdp-capture --analyze) on a mirror of a's veth (both directions, one vantage). Each
# repetition starts a fresh agent and traffic, waits for a healthy baseline, rate-limits
# a->b (tc tbf 20mbit), and polls /metrics every 100 ms until agentxdp_findings > 0.
# Prints markdown rows (median and max over the repetitions, per --interval). Needs root.
# Usage: nice -n 10 bash tests/bench/bench_detection.sh [REPS] (default 4)
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
REPS=${1:-4}
TB=scripts/testbed.sh
BIN=$TOP/bin
cmd="nice -n 10 bash tests/bench/bench_detection.sh"
export AXTB_ID=bd$(printf '%04x' $((RANDOM % 65536)))
NS_A=axtb$AXTB_ID-a
net=$((RANDOM % 256)).$(((RANDOM % 64) * 4))
IP_A=198.19.${net%.*}.$((${net#*.} + 1))
IP_B=198.19.${net%.*}.$((${net#*.} + 2))
T=$(mktemp -d /tmp/axtb-bench.XXXXXX)
AGENT_PID="" TRAFFIC_PID=""
BASELINE_S=${BENCH_DETECTION_BASELINE_S:-20} # healthy traffic before the impairment, s (drift shows after ~10 s)
TIMEOUT_S=30     # give up on one repetition after this long
stop_run() {
	[ -n "$TRAFFIC_PID" ] && kill "$TRAFFIC_PID" 2>/dev/null && wait "$TRAFFIC_PID" 2>/dev/null
	[ -n "$AGENT_PID" ] && kill -INT "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
	TRAFFIC_PID="" AGENT_PID=""
	$TB impair --clear >/dev/null 2>&1
}
cleanup() {
	stop_run
	$TB down >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
row() { echo "| $1 | $2 | $3 | \`$cmd\` |"; }
fail_row() {
	row "agent detection time (impairment -> finding in /metrics)" "FAILED: $1" "goal < 10 s"
	exit 1
}
[ "$(id -u)" = 0 ] || fail_row "needs root (network namespaces, XDP)"
[ -x "$BIN/agentxdp-capture" ] && [ -x "$BIN/agentxdp-roce-emu" ] || fail_row "run make first"

$TB up --backend emu --addr-a "$IP_A/30" --addr-b "$IP_B/30" >"$T/up" 2>&1 || fail_row "testbed up: $(tail -n 1 "$T/up")"
MON=$($TB mirror a 2>"$T/mirror") || fail_row "testbed mirror: $(head -n 1 "$T/mirror")"
metrics() { ip netns exec "$NS_A" curl -sf --max-time 1 http://127.0.0.1:9476/metrics; }
findings() { metrics | awk '/^agentxdp_findings / {print $NF}'; }
now() { date +%s.%N; }

# One repetition with agent interval $1: the detection time in seconds, or a reason, in $T/result.
one_run() {
	local interval=$1 start n t_det before
	ip netns exec "$NS_A" "$BIN/agentxdp-capture" -i "$MON" --analyze --metrics 127.0.0.1:9476 \
		--interval "$interval" >"$T/agent.out" 2>"$T/agent.err" &
	AGENT_PID=$!
	# Ready once the first interval has been published (the endpoint serves nothing before).
	for _ in $(seq 100); do [ -n "$(findings)" ] && break; sleep 0.1; done
	# A 2 s local ACK timeout: the emulator is a user-space NIC on a shared machine; a stall
	# of its process must not turn into go-back-N "losses" (the impairment is a rate limit).
	$TB traffic bw -D $((BASELINE_S + TIMEOUT_S + 5)) -q 2 -s 4096 --line-rate 200mbit --ack-timeout 2s \
		>"$T/traffic" 2>&1 &
	TRAFFIC_PID=$!
	# Healthy baseline, polled every 0.5 s: a finding now is a false alarm (counted). Impair
	# only once none is shown, so the time measured is the impairment's, not the noise's.
	local polls=$((BASELINE_S * 2)) clear_polls=0
	for _ in $(seq $polls); do
		n=$(findings)
		if [ -z "$n" ]; then
			BASE_FAILED=$((BASE_FAILED + 1)) # a scrape that failed is no finding: counted apart
		else
			BASE_POLLS=$((BASE_POLLS + 1))
			[ "$n" = 0 ] || { BASE_ALARMS=$((BASE_ALARMS + 1)); metrics | grep '^agentxdp_finding_severity' | head -n 1 >>"$T/false-alarms"; }
		fi
		sleep 0.5
	done
	while [ "$(findings)" != 0 ]; do
		clear_polls=$((clear_polls + 1))
		if [ $clear_polls -gt 40 ]; then
			echo "baseline: a finding did not clear within 20 s: $(metrics | grep '^agentxdp_finding_severity' | head -n 1)" >"$T/result"
			stop_run
			return 1
		fi
		sleep 0.5
	done
	start=$(now)
	$TB impair a-b --rate 20mbit >"$T/impair" 2>&1 || { echo "impair: $(tail -n 1 "$T/impair")" >"$T/result"; stop_run; return 1; }
	t_det=""
	while :; do
		metrics >"$T/poll" 2>/dev/null
		n=$(awk '/^agentxdp_findings / {print $NF}' "$T/poll")
		if [ "${n:-0}" -gt 0 ] 2>/dev/null; then
			t_det=$(now)
			grep '^agentxdp_finding_severity' "$T/poll" | head -n 1 >"$T/what"
			break
		fi
		awk -v s="$start" -v n="$(now)" -v m=$TIMEOUT_S 'BEGIN { exit !(n - s > m) }' && break
		sleep 0.1
	done
	stop_run
	[ -n "$t_det" ] || { echo "no finding within $TIMEOUT_S s" >"$T/result"; return 1; }
	awk -v s="$start" -v d="$t_det" 'BEGIN { printf "%.2f\n", d - s }' >"$T/result"
}

for interval in 1s 250ms; do
	times=() what="" BASE_POLLS=0 BASE_ALARMS=0 BASE_FAILED=0
	for r in $(seq "$REPS"); do
		one_run "$interval"
		rc=$?
		out=$(cat "$T/result")
		if [ $rc = 0 ]; then
			times+=("$out")
			what=$(sed 's/^agentxdp_finding_severity{//; s/} .*//; s/|/\//g' "$T/what")
		else
			echo "bench_detection: --interval $interval run $r: $out" >&2
		fi
	done
	if [ ${#times[@]} -eq 0 ]; then
		row "agent detection time, --interval $interval" "FAILED: no repetition detected the impairment" "goal < 10 s"
		continue
	fi
	stats=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ v[NR] = $1 } END {
		med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "median %.1f s, max %.1f s (%d runs)", med, v[NR], NR }')
	row "agent detection time (tbf 20mbit on a->b -> agentxdp_findings > 0 in /metrics, polled every 100 ms), --interval $interval" \
		"$stats; finding: $what" "goal < 10 s"
	row "healthy baseline polls showing a finding (false alarms), --interval $interval" \
		"$BASE_ALARMS of $BASE_POLLS polls (${BASELINE_S} s per run, every 0.5 s; $BASE_FAILED more scrapes failed; load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs)" "0"
done
[ -s "$T/false-alarms" ] && { echo "bench_detection: false alarms seen:" >&2; sort "$T/false-alarms" | uniq -c | head -n 5 >&2; }
exit 0
