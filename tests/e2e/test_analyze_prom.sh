#!/usr/bin/env bash
# test_analyze_prom.sh: agentxdp-analyze --prom (Prometheus text from a trace) and --report.
. "$(dirname "$0")/../lib.sh"
A="$BIN/agentxdp-analyze"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
S=samples/lossy-link
cd "$TOP"

"$A" "$S/trace.pcapng" --topology "$S/links.csv" --paths "$S/paths.csv" --prom "$T/m.prom" -o "$T/m.db" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && [ -s "$T/m.prom" ] && pass "prom: --prom writes a file" || fail "prom: --prom" "rc=$rc $(cat "$T/err")"
[ "$(stat -c %a "$T/m.prom")" = 640 ] && pass "prom: file mode 0640" || fail "prom: mode" "$(stat -c %a "$T/m.prom")"
if command -v promtool >/dev/null; then
	promtool check metrics <"$T/m.prom" >"$T/lint" 2>&1 && pass "prom: promtool check metrics passes" ||
		fail "prom: promtool check metrics" "$(head -3 "$T/lint")"
else
	skip_or_fail_in_ci "prom: promtool" "promtool not installed (Debian package prometheus)"
fi
# The same numbers as the database, independently summed.
db_retx=$(sqlite3 "$T/m.db" "select sum(retransmitted_packets) from qp")
prom_retx=$(awk '/^agentxdp_retransmitted_packets_total/ {s += $NF} END {print s + 0}' "$T/m.prom")
expect_eq "prom: retransmissions equal the database's" "$db_retx" "$prom_retx"
db_pk=$(sqlite3 "$T/m.db" "select sum(packets) from qp")
prom_pk=$(awk '/^agentxdp_packets_total/ {s += $NF} END {print s + 0}' "$T/m.prom")
expect_eq "prom: packets equal the database's" "$db_pk" "$prom_pk"
db_samples=$(sqlite3 "$T/m.db" "select sum(ack_samples) from qp")
prom_samples=$(awk '/^agentxdp_ack_latency_seconds_count/ {s += $NF} END {print s + 0}' "$T/m.prom")
expect_eq "prom: histogram counts equal ACK samples" "$db_samples" "$prom_samples"
n_find=$(sqlite3 "$T/m.db" "select count(*) from finding")
prom_find=$(awk '/^agentxdp_findings / {print $NF}' "$T/m.prom")
expect_eq "prom: findings gauge equals the finding table" "$n_find" "$prom_find"
# The coverage of that all-clear: the database's meta, and 0 of 13 on this 2 ms sample.
db_cov=$(sqlite3 "$T/m.db" "select group_concat(value, ' ') from (select value from meta where key in ('latency_flows', 'latency_flows_judged') order by key)")
prom_cov=$(awk '/^agentxdp_latency_flows / {f = $NF} /^agentxdp_latency_flows_judged / {j = $NF} END {print f, j}' "$T/m.prom")
expect_eq "prom: latency coverage gauges equal the database's meta (13 flows, 0 judged)" "13 0 | 13 0" "$db_cov | $prom_cov"

# An unwritable target: one clear line, non-zero.
"$A" "$S/trace.pcapng" --prom /nonexistent-dir/m.prom 2>"$T/err" >/dev/null
rc=$?
[ $rc -ne 0 ] && grep -q "nonexistent-dir" "$T/err" && pass "prom: unwritable path is an error" ||
	fail "prom: unwritable" "rc=$rc $(cat "$T/err")"

# --report without -o keeps its database in the report folder.
"$A" "$S/trace.pcapng" --report "$T/rep" 2>"$T/err" >/dev/null
rc=$?
[ $rc -eq 0 ] && [ -s "$T/rep/index.html" ] && [ -s "$T/rep/analysis.db" ] &&
	pass "report: analyze --report writes the report and its database" || fail "analyze --report" "rc=$rc $(cat "$T/err")"
