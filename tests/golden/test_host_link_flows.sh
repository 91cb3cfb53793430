#!/usr/bin/env bash
# test_host_link_flows.sh: a slow host link slows most of the connections crossing it; one
# slow flow among many is that flow's own story. Without a topology a host link's latency
# pick was held to that; with --topology the same access link, a links.csv link, was not,
# and one connection made an alert on healthy fabrics (tuning seeds 1081-1120, issue #17):
# a +0.7 us shift on one of a host's connections (healthy-small-long 1083).
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip host-link-flows "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# name seed synth-args...: synthesize, analyze with links.csv and paths.csv into $work/name.json.
run() {
	local name=$1 seed=$2
	shift 2
	synth_analyze "host-link-flows-$name" "$work/$name" "$work/$name.json" --snaplen 128 \
		--seed "$seed" "$@" -- --topology "$work/$name/links.csv" --paths "$work/$name/paths.csv"
}

# Healthy, 8 hosts at 5% load, 200 ms (healthy-small-long, seed 1083).
if run small 1083 --hosts 8 --leaves 2 --spines 2 --load 5% --mtu 4096 --duration 200ms \
	--workload write --vantage mirror; then
	got=$(jq -r '[.findings[] | select(.level == "alert") | "\(.kind) \(.subject) \(.flows_hurt)"] |
		join(",")' "$work/small.json")
	expect_eq "host-link-flows-small: a healthy fabric, no alert" "" "$got"
fi

# A 2x serializer on a host link (slowx2-host, seed 1081) slows every connection through
# it: still the first alert, with the topology.
if run slowx2 1081 --hosts 16 --leaves 4 --spines 2 --load 10% --mtu 1024 --duration 10ms \
	--workload write --vantage mirror \
	--fault link=198.18.0.21-leaf2,kind=slow,size=2x,onset=4000us \
	--fault link=198.18.0.21-leaf2,kind=slow,size=1us,onset=4000us; then
	got=$(first_alert "$work/slowx2.json")
	expect_eq "host-link-flows-slowx2: the slowed host link is the first alert" \
		"slow 198.18.0.21-leaf2" "$got"
fi
exit 0
