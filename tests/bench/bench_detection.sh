#!/usr/bin/env bash
# bench_detection.sh: detection time of agent mode. Testbed (emu) traffic both ways, the agent
# (agentxdp-capture --analyze) on b's veth; after a healthy baseline, a->b is rate-limited, and
# we time the gap between the impairment and the first finding in /metrics. Goal: under 10 s.
# Prints one table row (measured, or FAILED with the reason). Needs root.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
TB=scripts/testbed.sh
T=$(mktemp -d /tmp/axtb-bench.XXXXXX)
cmd="bash tests/bench/bench_detection.sh"
cleanup() {
	[ -n "${AGENT_PID:-}" ] && kill -INT "$AGENT_PID" 2>/dev/null
	[ -n "${TRAFFIC_PID:-}" ] && kill "$TRAFFIC_PID" 2>/dev/null
	wait 2>/dev/null
	$TB down >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
row() { echo "| agent detection time (impairment -> finding in /metrics) | $1 | goal < 10 s | \`$cmd\` |"; }

$TB up --backend emu >"$T/up" 2>&1 || { row "FAILED: testbed up: $(tail -n 1 "$T/up")"; exit 1; }
ip netns exec axtb-b "$TOP/bin/agentxdp-capture" -i axtb-b0 --analyze --metrics 127.0.0.1:9476 --interval 250ms -q \
	>"$T/agent.out" 2>"$T/agent.err" &
AGENT_PID=$!
sleep 1
$TB traffic bw --bidir -D 40 -s 4096 >"$T/traffic" 2>&1 &
TRAFFIC_PID=$!
sleep 8 # healthy baseline
findings() { ip netns exec axtb-b curl -sf http://127.0.0.1:9476/metrics | awk '/^agentxdp_findings / {print $NF}'; }
before=$(findings)
[ "${before:-x}" = 0 ] || { row "FAILED: baseline already has ${before:-no} findings: $(ip netns exec axtb-b curl -sf http://127.0.0.1:9476/metrics | grep "^agentxdp_finding_severity" | head -n 1 | sed "s/|/\//g")"; exit 1; }
start=$(date +%s.%N)
$TB impair a-b --rate 20mbit >"$T/impair" 2>&1 || { row "FAILED: impair: $(tail -n 1 "$T/impair")"; exit 1; }
detected=""
while :; do
	now=$(date +%s.%N)
	n=$(findings)
	if [ "${n:-0}" -gt 0 ] 2>/dev/null; then detected=$now; break; fi
	awk -v s="$start" -v n="$now" 'BEGIN{exit !(n - s > 30)}' && break
	sleep 0.1
done
if [ -z "$detected" ]; then
	row "FAILED: no finding within 30 s"
	exit 1
fi
secs=$(awk -v s="$start" -v d="$detected" 'BEGIN{printf "%.1f s", d - s}')
what=$(ip netns exec axtb-b curl -sf http://127.0.0.1:9476/metrics | grep '^agentxdp_finding_severity' | head -n 1 | sed 's/|/\//g')
row "$secs ($what)"
