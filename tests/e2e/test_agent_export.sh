#!/usr/bin/env bash
# test_agent_export.sh: agent mode's exports, checked by the engines that consume them: a real
# Prometheus server scrapes /metrics and answers PromQL; an OTLP receiver checks the JSON.
# The agent is driven by build/agent_replay (the live agent fed from a trace, no XDP needed);
# the XDP-fed agent is tested in test_agent_live.sh.
. "$(dirname "$0")/../lib.sh"
cd "$TOP"
R="$TOP/build/agent_replay"
S=samples/lossy-link
T=$(tmpdir)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

[ -x "$R" ] || { fail "agent: build/agent_replay missing" "run make"; exit 0; }
want_pk=$("$BIN/agentxdp-analyze" "$S/trace.pcapng" --json 2>/dev/null | jq '.totals.packets')

# OTLP receiver
python3 tests/nicstat/otlp_receiver.py "$T/otlp.port" "$T/otlp.log" &
pids+=($!)
for _ in $(seq 50); do [ -s "$T/otlp.port" ] && break; sleep 0.1; done
otlp_port=$(cat "$T/otlp.port")
mport=$(free_port)
"$R" "$S/trace.pcapng" --metrics "127.0.0.1:$mport" --otlp "http://127.0.0.1:$otlp_port" --serve 40 >"$T/agent.out" 2>"$T/agent.err" &
pids+=($!)
agent_pid=$!

ok=0
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$mport/metrics" -o "$T/scrape.txt" && grep -q '^agentxdp_findings' "$T/scrape.txt" && { ok=1; break; }; sleep 0.1; done
[ $ok = 1 ] && pass "agent: /metrics answers on loopback" || fail "agent: /metrics" "$(cat "$T/agent.err")"
got_pk=$(awk '/^agentxdp_packets_total/ {s += $NF} END {print s + 0}' "$T/scrape.txt")
expect_eq "agent: scraped packets equal agentxdp-analyze's count" "$want_pk" "$got_pk"
promtool check metrics <"$T/scrape.txt" >"$T/lint" 2>&1 && pass "agent: exposition passes promtool check metrics" ||
	fail "agent: promtool check metrics" "$(head -3 "$T/lint")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/nothing")
expect_eq "agent: other paths are 404" 404 "$code"
ss -ltn "sport = :$mport" | grep -q "127.0.0.1:$mport" && pass "agent: the endpoint binds loopback only" ||
	fail "agent: bind address" "$(ss -ltn "sport = :$mport")"

# A real Prometheus server scrapes it, and PromQL answers.
if ! command -v prometheus >/dev/null; then
	skip_or_fail_in_ci "agent: Prometheus scrape" "prometheus not installed"
else
	pport=$(free_port)
	cat >"$T/prom.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: agentxdp
    static_configs:
      - targets: ['127.0.0.1:$mport']
YML
	prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$pport" \
		>"$T/prometheus.log" 2>&1 &
	pids+=($!)
	val=""
	for _ in $(seq 60); do
		val=$(curl -sf "http://127.0.0.1:$pport/api/v1/query" --data-urlencode 'query=sum(agentxdp_packets_total{job="agentxdp"})' |
			jq -r '.data.result[0].value[1] // empty' 2>/dev/null)
		[ -n "$val" ] && break
		sleep 0.5
	done
	expect_eq "agent: Prometheus scraped it; PromQL sum(agentxdp_packets_total) = trace packets" "$want_pk" "$val"
	n=$(curl -sf "http://127.0.0.1:$pport/api/v1/query" --data-urlencode \
		'query=count(histogram_quantile(0.99, sum by (src, dst, le) (rate(agentxdp_ack_latency_seconds_bucket[1m]))) >= 0 or vector(0))' |
		jq -r '.data.result[0].value[1] // empty')
	[ -n "$n" ] && pass "agent: histogram_quantile over the latency histograms evaluates" || fail "agent: histogram PromQL" "no answer"
fi

# OTLP: field names and values against the specification (proto3 JSON mapping).
# The replay's last tick ("findings N" on stdout) is the last body; its exposition stays served.
for _ in $(seq 50); do grep -q '^findings' "$T/agent.out" && break; sleep 0.1; done
n_bodies=-1
for _ in $(seq 30); do
	n=$(wc -l <"$T/otlp.log" 2>/dev/null || echo 0)
	[ "$n" -gt 0 ] && [ "$n" = "$n_bodies" ] && break
	n_bodies=$n
	sleep 0.3
done
curl -sf "http://127.0.0.1:$mport/metrics" -o "$T/final.txt"
kill "$agent_pid" 2>/dev/null
wait "$agent_pid" 2>/dev/null
python3 - "$T/otlp.log" "$want_pk" >"$T/otlp.check" 2>&1 <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
want = int(sys.argv[2])
errors = []
last = lines[-1]
if last["path"] != "/v1/metrics": errors.append("path " + last["path"])
if not last["content_type"].startswith("application/json"): errors.append("content type " + last["content_type"])
body = json.loads(last["body"])
rm = body["resourceMetrics"][0]
attrs = {a["key"]: a["value"] for a in rm["resource"]["attributes"]}
if attrs.get("service.name") != {"stringValue": "agentxdp-agent"}: errors.append("service.name %r" % attrs.get("service.name"))
if "host.name" not in attrs: errors.append("no host.name")
sm = rm["scopeMetrics"][0]
if sm["scope"]["name"] != "agentxdp": errors.append("scope " + sm["scope"]["name"])
metrics = {m["name"]: m for m in sm["metrics"]}
pk = metrics.get("agentxdp_packets")
if not pk: errors.append("no agentxdp_packets (counter without _total)")
else:
    s = pk["sum"]
    if s.get("isMonotonic") is not True or s.get("aggregationTemporality") != 2: errors.append("sum flags %r" % s)
    total = 0
    for dp in s["dataPoints"]:
        if not isinstance(dp["asInt"], str): errors.append("asInt not a string")
        if not isinstance(dp["timeUnixNano"], str) or not isinstance(dp["startTimeUnixNano"], str): errors.append("time not a string")
        total += int(dp["asInt"])
    if total != want: errors.append("packets %d != %d" % (total, want))
h = metrics.get("agentxdp_ack_latency_seconds")
if not h or "histogram" not in h: errors.append("no histogram")
else:
    for dp in h["histogram"]["dataPoints"]:
        if len(dp["bucketCounts"]) != len(dp["explicitBounds"]) + 1: errors.append("bucket count length")
        if sum(int(c) for c in dp["bucketCounts"]) != int(dp["count"]): errors.append("buckets do not add up")
    if h["histogram"]["aggregationTemporality"] != 2: errors.append("histogram temporality")
g = metrics.get("agentxdp_findings")
if not g or "gauge" not in g: errors.append("findings not a gauge")
print("\n".join(errors) if errors else "OK")
PY
grep -qx OK "$T/otlp.check" && pass "agent: OTLP JSON: path, content type, resource, packets = the trace's" ||
	fail "agent: OTLP JSON" "$(head -3 "$T/otlp.check")"
# The whole body against the specification's JSON encoding, and every value against the
# Prometheus exposition of the same interval (the last tick: the scrape after the replay).
jq -r '.body' <<<"$(tail -n 1 "$T/otlp.log")" >"$T/otlp-body.json"
python3 tests/e2e/otlp_spec_check.py "$T/otlp-body.json" "$T/final.txt" >"$T/spec.check" 2>&1 &&
	pass "agent: OTLP body follows the OTLP JSON encoding (field names, 64-bit strings, temporality, buckets) and equals the exposition" ||
	fail "agent: OTLP spec check" "$(head -n 3 "$T/spec.check" | tr '\n' ' ')"
# The checker itself must catch what it claims to: numbers where the encoding wants strings,
# a snake_case field name, a bucket too few.
jq '(.resourceMetrics[0].scopeMetrics[0].metrics[] | select(.sum) | .sum.dataPoints[0].asInt) |= tonumber' \
	"$T/otlp-body.json" >"$T/bad1.json"
jq '(.resourceMetrics[0].scopeMetrics[0].metrics[] | select(.histogram) | .histogram.dataPoints[0].bucketCounts) |= .[1:]' \
	"$T/otlp-body.json" >"$T/bad2.json"
sed 's/"timeUnixNano"/"time_unix_nano"/' "$T/otlp-body.json" >"$T/bad3.json"
caught=0
for b in bad1 bad2 bad3; do
	python3 tests/e2e/otlp_spec_check.py "$T/$b.json" >/dev/null 2>&1 || caught=$((caught + 1))
done
expect_eq "agent: the OTLP checker rejects integer asInt, a missing bucket, snake_case names" 3 "$caught"
