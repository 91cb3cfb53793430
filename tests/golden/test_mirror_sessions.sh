#!/usr/bin/env bash
# test_mirror_sessions.sh: issue #18. Every mirror session in a trace is a vantage point, and
# an ERSPAN III session's clock is measured against the collector's.
#  1. An incident captured at each host port (agentxdp-synth --vantage each-host) written once
#     as per-host trace files and once as ONE trace where each host port is an ERSPAN II (and
#     a VXLAN) session of its own (--mirror-sessions): the one trace is analyzed as one vantage
#     per session, each with the per-host file's packets and flows, and gives the same
#     findings, totals and per-flow figures as the per-host files.
#  2. ERSPAN III copies stamped late by the collector (--collector-delay/-jitter/-drift): the
#     capture health (JSON, text, database meta) gives the injected delay, drift and jitter.
# The expectations come from the synthesizer's options and the per-host run, never stored.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip mirror-sessions "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
command -v jq >/dev/null || { skip mirror-sessions "jq not installed"; exit 0; }
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

args=(--workload mixed --duration 3ms --seed 11 --vantage each-host
	--fault link=leaf0-spine0,kind=loss,size=2%
	--host-fault host=198.18.0.12,kind=slow-responder,size=50us,onset=1ms)

# norm DIR: the flows with each capture named by its host (from truth.json), without the ids
# (the order flows are met in differs between 8 merged files and one), sorted.
norm() {
	jq -S --slurpfile t "$1/truth.json" '
		($t[0].vantages | map({key: .trace, value: .name}) | from_entries) as $by_file
		| [.captures[] | .path | if test(" session [0-9]+ from ")
			then $t[0].vantages[(capture(" session (?<k>[0-9]+) ").k | tonumber) - 1].name
			else $by_file[split("/")[-1]] end] as $host
		| {findings, totals,
		   captures: [.captures[] | {host: $host[.id - 1], roce_packets, flows, unpaired_flows,
					     one_direction}] | sort_by(.host),
		   flows: [.flows[] | .capture = $host[.capture - 1] | del(.id, .peer_qp_id)] | sort}' \
		"$1/out.json"
}

hosts=$work/hosts
if ! "$SYNTH" -q -o "$hosts" "${args[@]}" ||
	! "$ANALYZE" -q --json --window 1ms --topology "$hosts/links.csv" --paths "$hosts/paths.csv" \
		"$hosts"/trace-*.pcapng >"$hosts/out.json" 2>"$hosts/err"; then
	fail mirror-sessions-per-host "synth or analyze failed: $(head -n 1 "$hosts/err" 2>/dev/null)"
	exit 0
fi
norm "$hosts" >"$hosts/norm.json"
n_flows=$(jq '.flows | length' "$hosts/norm.json" 2>/dev/null)
n_hosts=$(jq '.vantages | length' "$hosts/truth.json")
n_alerts=$(jq '[.findings[] | select(.level == "alert")] | length' "$hosts/out.json")
# The comparison means something only when the per-host run finds the incident.
if [ "$n_hosts" -ge 2 ] && [ "$n_alerts" -gt 0 ] && [ "${n_flows:-0}" -gt 0 ]; then pass mirror-sessions-per-host-has-alerts; else
	fail mirror-sessions-per-host-has-alerts "$n_hosts hosts, $n_alerts alerts, ${n_flows:-no} flows"
fi

for encap in erspan2 vxlan; do
	dir=$work/$encap
	if ! "$SYNTH" -q -o "$dir" "${args[@]}" --encap "$encap" --mirror-sessions ||
		! "$ANALYZE" -q --json --window 1ms --topology "$dir/links.csv" --paths "$dir/paths.csv" \
			"$dir/trace.pcapng" >"$dir/out.json" 2>"$dir/err"; then
		fail "mirror-sessions-$encap" "synth or analyze failed: $(head -n 1 "$dir/err" 2>/dev/null)"
		continue
	fi
	expect_eq "mirror-sessions-$encap-one-trace" 1 "$(find "$dir" -name '*.pcapng' | wc -l)"
	expect_eq "mirror-sessions-$encap-vantages" "$n_hosts" "$(jq '.captures | length' "$dir/out.json")"
	expect_eq "mirror-sessions-$encap-flows-split" "$n_hosts" \
		"$(jq '[.flows[].capture] | unique | length' "$dir/out.json")"
	norm "$dir" >"$dir/norm.json"
	if cmp -s "$hosts/norm.json" "$dir/norm.json"; then pass "mirror-sessions-$encap-same-as-per-host"; else
		fail "mirror-sessions-$encap-same-as-per-host" \
			"$(diff "$hosts/norm.json" "$dir/norm.json" | head -n 4 | tr '\n' ' ')"
	fi
done

# ERSPAN III: the collector stamps each copy 30 us late, with 0.5 us normal jitter, by a clock
# 100 ppm fast. Tolerances: the fit over ~10^5 packets in 5 ms (slope error ~ 0.5us /
# (5ms * sqrt(n/12)) ~ 1 ppm; 10 ppm allowed), the jitter within 10%.
e3=$work/erspan3
if ! "$SYNTH" -q -o "$e3" --workload write --duration 5ms --seed 3 --encap erspan3 \
	--collector-delay 30us --collector-jitter 500ns --collector-drift 100ppm ||
	! "$ANALYZE" -q --json -o "$e3/a.db" "$e3/trace.pcapng" >"$e3/out.json" 2>"$e3/err"; then
	fail mirror-clock "synth or analyze failed: $(head -n 1 "$e3/err" 2>/dev/null)"
	exit 0
fi
expect_eq mirror-clock-truth '30000 500 100' "$(jq -r '.collector | "\(.delay_ns) \(.jitter_ns) \(.drift_ppm)"' "$e3/truth.json")"
verdict=$(jq -r '.captures[0].mirror_clock | if . == null then "none" else
	[(if (.offset_us - 30 | fabs) < 0.2 then "offset-ok" else "offset=\(.offset_us)" end),
	 (if (.slope_ppm - 100 | fabs) < 10 then "drift-ok" else "drift=\(.slope_ppm)" end),
	 (if (.jitter_us - 0.5 | fabs) < 0.05 then "jitter-ok" else "jitter=\(.jitter_us)" end),
	 (if .absolute then "absolute" else "relative" end)] | join(" ") end' "$e3/out.json")
expect_eq mirror-clock-json "offset-ok drift-ok jitter-ok absolute" "$verdict"
"$ANALYZE" -q "$e3/trace.pcapng" >"$e3/text" 2>&1
check mirror-clock-text grep -Eq "mirror clock: collector - switch (29|30)\.[0-9]+ us, drift" "$e3/text"
if command -v sqlite3 >/dev/null; then
	check mirror-clock-db grep -q "slope_ppm=" <<<"$(sqlite3 "$e3/a.db" \
		"SELECT value FROM meta WHERE key = 'mirror_clock.capture1'")"
else
	skip mirror-clock-db "sqlite3 not installed"
fi
# A plain trace has no mirror clock at all.
"$SYNTH" -q -o "$work/plain" --workload write --duration 1ms --seed 3 &&
	expect_eq mirror-clock-plain-none null \
		"$("$ANALYZE" -q --json "$work/plain/trace.pcapng" | jq -c '.captures[0].mirror_clock')"
exit 0
