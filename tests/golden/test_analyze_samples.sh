#!/usr/bin/env bash
# test_analyze_samples.sh: latency samples that cost what they are worth (issue #20 item 1).
# --samples all writes every sample row (checked against the flows' exact counts and
# percentiles); latency_window and latency_hist count every sample (exact counts, sums, min
# and max; bucketed p50/p99 within 1%); the default keeps the rows of the flows the findings
# name, exactly as `all` writes them, and nothing else changes; none keeps no row.
. "$(dirname "$0")/../lib.sh"
A="$BIN/agentxdp-analyze"
S="$BIN/agentxdp-synth"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

"$S" -q -o "$T/s" --hosts 16 --peers 4 --qps-per-pair 2 --workload mixed --load 30% --duration 2ms \
	--snaplen 128 --seed 3 --fault link=leaf0-spine1,kind=loss,size=1% ||
	{ fail analyze-samples "synth failed"; exit 0; }
run() { # DB OPTIONS...
	local db=$1
	shift
	"$A" -q "$T/s/trace.pcapng" --topology "$T/s/links.csv" --paths "$T/s/paths.csv" -o "$T/$db" "$@"
}
run all.db --samples all --sample-rows 0 && run findings.db --sample-rows 0 && run none.db --samples none &&
	run all1000.db --samples all && run findings1000.db ||
	{ fail analyze-samples "analysis failed"; exit 0; }
q() { sqlite3 "$T/$1" "$2"; }

expect_eq "samples: meta records the mode" "all findings none" \
	"$(for d in all findings none; do q $d.db "SELECT value FROM meta WHERE key = 'samples'"; done | xargs)"

# --samples all --sample-rows 0: one row per sample the flows count.
expect_eq "samples: all: rows per flow and kind = the flows' sample counts" 0 "$(q all.db "
	WITH r AS (SELECT qp_id, kind, count(*) AS n FROM latency_sample GROUP BY qp_id, kind)
	SELECT count(*) FROM qp LEFT JOIN r a ON a.qp_id = qp.id AND a.kind = 0
	 LEFT JOIN r c ON c.qp_id = qp.id AND c.kind = 4 LEFT JOIN r d ON d.qp_id = qp.id AND d.kind = 2
	 WHERE qp.ack_samples <> coalesce(a.n, 0) OR qp.completion_samples <> coalesce(c.n, 0)
	 OR qp.read_samples <> coalesce(d.n, 0)")"
n_ack=$(q all.db "SELECT count(*) FROM qp WHERE ack_samples > 0")
[ "${n_ack:-0}" -ge 50 ] && pass "samples: $n_ack flows with ACK samples" ||
	fail "samples: flows with ACK samples" "only ${n_ack:-0}"
# Exact nearest-rank p50 and p99 of each flow's rows are the qp table's (under 65536 samples).
expect_eq "samples: all: rows give the qp percentiles exactly" 0 "$(q all.db "
	WITH s AS (SELECT qp_id, latency_ns, row_number() OVER (PARTITION BY qp_id ORDER BY latency_ns) AS k,
	           count(*) OVER (PARTITION BY qp_id) AS n FROM latency_sample WHERE kind = 0),
	 p AS (SELECT qp_id, max(CASE WHEN k = (50 * n + 99) / 100 THEN latency_ns END) AS p50,
	       max(CASE WHEN k = (99 * n + 99) / 100 THEN latency_ns END) AS p99, max(latency_ns) AS mx
	       FROM s GROUP BY qp_id)
	SELECT count(*) FROM p JOIN qp ON qp.id = p.qp_id WHERE abs(p.p50 - qp.ack_latency_p50_us * 1000) > 0.5
	 OR abs(p.p99 - qp.ack_latency_p99_us * 1000) > 0.5 OR abs(p.mx - qp.ack_latency_max_us * 1000) > 0.5")"

# latency_hist: every sample once, in the bucket that holds it.
expect_eq "samples: latency_hist counts every sample" 0 "$(q all.db "
	WITH h AS (SELECT qp_id, kind, sum(count) AS n FROM latency_hist GROUP BY qp_id, kind),
	 r AS (SELECT qp_id, kind, count(*) AS n FROM latency_sample GROUP BY qp_id, kind)
	SELECT count(*) FROM h FULL JOIN r USING (qp_id, kind) WHERE h.n IS NOT r.n")"
expect_eq "samples: every row falls in a bucket of its flow" 0 "$(q all.db "
	SELECT count(*) FROM latency_sample s WHERE NOT EXISTS (SELECT 1 FROM latency_hist h
	 WHERE h.qp_id = s.qp_id AND h.kind = s.kind AND h.lo_ns <= s.latency_ns AND s.latency_ns < h.hi_ns)")"
# latency_window: exact count, sum, min, max; p50/p99 within 1% of the window's exact values.
win=$(q all.db "SELECT value FROM meta WHERE key = 'window_ns'")
expect_eq "samples: latency_window exact columns and bucketed percentiles" 0 "$(q all.db "
	WITH s AS (SELECT qp_id, kind, ts_ns - ts_ns % $win AS w, latency_ns,
	           row_number() OVER (PARTITION BY qp_id, kind, ts_ns - ts_ns % $win ORDER BY latency_ns) AS k,
	           count(*) OVER (PARTITION BY qp_id, kind, ts_ns - ts_ns % $win) AS n FROM latency_sample),
	 e AS (SELECT qp_id, kind, w, count(*) AS n, sum(latency_ns) AS sm, min(latency_ns) AS mn,
	       max(latency_ns) AS mx, max(CASE WHEN k = (50 * n + 99) / 100 THEN latency_ns END) AS p50,
	       max(CASE WHEN k = (99 * n + 99) / 100 THEN latency_ns END) AS p99 FROM s GROUP BY qp_id, kind, w)
	SELECT count(*) FROM e FULL JOIN latency_window l ON l.qp_id = e.qp_id AND l.kind = e.kind
	 AND l.start_ns = e.w WHERE l.samples IS NOT e.n OR l.sum_ns IS NOT e.sm OR l.min_ns IS NOT e.mn
	 OR l.max_ns IS NOT e.mx OR abs(l.p50_ns - e.p50) > 0.01 * e.p50 OR abs(l.p99_ns - e.p99) > 0.01 * e.p99")"

# The default: the findings' flows (and their other direction) keep exactly all's rows.
expect_eq "samples: findings: the named flows keep all their rows" 0 "$(q findings.db "
	ATTACH '$T/all.db' AS a;
	WITH named AS (SELECT json_extract(e.value, '$.id') AS id FROM finding f, json_each(f.evidence, '$.flows') e
	               WHERE e.type = 'object'),
	 k AS (SELECT id FROM named UNION SELECT peer_qp_id FROM qp WHERE id IN (SELECT id FROM named))
	SELECT count(*) FROM (SELECT * FROM a.latency_sample WHERE qp_id IN (SELECT id FROM k)
	 EXCEPT SELECT * FROM main.latency_sample)")"
named=$(q findings.db "SELECT count(DISTINCT json_extract(e.value, '$.id')) FROM finding f,
	json_each(f.evidence, '$.flows') e WHERE e.type = 'object'")
[ "${named:-0}" -ge 1 ] && pass "samples: findings name $named flows" || fail "samples: findings name flows" "none"
expect_eq "samples: findings: every row kept is one of all's" 0 "$(q findings.db "ATTACH '$T/all.db' AS a;
	SELECT count(*) FROM (SELECT * FROM main.latency_sample EXCEPT SELECT * FROM a.latency_sample)")"
expect_eq "samples: findings: a flow's rows are all or none" 0 "$(q findings.db "ATTACH '$T/all.db' AS a;
	SELECT count(*) FROM (SELECT qp_id, count(*) AS n FROM main.latency_sample GROUP BY qp_id) m
	 JOIN (SELECT qp_id, count(*) AS n FROM a.latency_sample GROUP BY qp_id) x USING (qp_id) WHERE m.n <> x.n")"
rows_all=$(q all.db "SELECT count(*) FROM latency_sample")
rows_def=$(q findings.db "SELECT count(*) FROM latency_sample")
[ "${rows_def:-0}" -gt 0 ] && [ "$rows_def" -lt $((rows_all / 2)) ] &&
	pass "samples: findings keeps $rows_def of $rows_all rows" ||
	fail "samples: findings keeps fewer rows" "$rows_def of $rows_all"
# With the default --sample-rows the kept rows are all's thinned rows for those flows too.
expect_eq "samples: findings with --sample-rows 1000: a subset of all's rows" 0 "$(q findings1000.db "
	ATTACH '$T/all1000.db' AS a;
	SELECT count(*) FROM (SELECT * FROM main.latency_sample EXCEPT SELECT * FROM a.latency_sample)")"
expect_eq "samples: none keeps no row" 0 "$(q none.db "SELECT count(*) FROM latency_sample")"

# The per-packet retransmission rows follow --samples as latency_sample does; the bursts
# (one row per go-back-N run) are every flow's in every mode and count every resent packet.
expect_eq "samples: findings: retransmission rows are all's for the kept flows" 0 "$(q findings.db "
	ATTACH '$T/all.db' AS a;
	SELECT count(*) FROM (SELECT * FROM main.retransmission EXCEPT SELECT * FROM a.retransmission)
	UNION ALL SELECT count(*) FROM (SELECT * FROM a.retransmission WHERE qp_id IN
	 (SELECT DISTINCT qp_id FROM main.latency_sample UNION SELECT DISTINCT qp_id FROM main.retransmission)
	 EXCEPT SELECT * FROM main.retransmission)" | sort -u)"
expect_eq "samples: none keeps no retransmission row" 0 "$(q none.db "SELECT count(*) FROM retransmission")"
for d in all findings none; do
	expect_eq "samples: $d: bursts count every retransmitted packet of every flow" 0 "$(q $d.db "
		WITH b AS (SELECT qp_id, sum(packets) AS n FROM retransmission_burst GROUP BY qp_id)
		SELECT count(*) FROM qp LEFT JOIN b ON b.qp_id = qp.id
		 WHERE qp.retransmitted_packets <> coalesce(b.n, 0)")"
done
n_retx=$(q all.db "SELECT count(*) FROM retransmission")
[ "${n_retx:-0}" -gt 0 ] && pass "samples: all: $n_retx retransmission rows" ||
	fail "samples: the trace has retransmissions" "none"

# Nothing else moves: flows, windows, histograms and the verdict are the same in every mode.
same=1
for t in qp qp_window latency_window latency_hist finding retransmission_burst; do
	a=$(q all.db "SELECT * FROM $t" | md5sum)
	for d in findings none; do
		[ "$a" = "$(q $d.db "SELECT * FROM $t" | md5sum)" ] || { fail "samples: $t same with --samples $d"; same=0; }
	done
done
[ $same = 1 ] && pass "samples: qp, windows, histograms, findings identical across modes"

# The report's ACK latency CDFs: from latency_hist where a flow has no rows, within 1%.
if command -v gnuplot >/dev/null; then
	"$BIN/agentxdp-report" -q -o "$T/rep-all" "$T/all.db" && "$BIN/agentxdp-report" -q -o "$T/rep-none" "$T/none.db" ||
		fail "samples: report failed"
	cdf_q() { awk -v q="$2" '$2 >= q { print $1; exit }' "$1"; }
	ok=1 n=0
	for f in "$T"/rep-all/charts/cdf_*.dat; do
		g="$T/rep-none/charts/$(basename "$f")"
		n=$((n + 1))
		for qq in 0.5 0.99; do
			a=$(cdf_q "$f" $qq) b=$(cdf_q "$g" $qq)
			awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b > 0 && (a - b) ^ 2 <= (0.01 * a) ^ 2) }' ||
				{ fail "samples: $(basename "$f") q$qq: $a us with rows, '$b' from the histograms"; ok=0; }
		done
	done
	[ $ok = 1 ] && [ $n -ge 2 ] && pass "samples: $n report CDFs from histograms within 1% (p50, p99)"
	# PSN charts: without per-packet rows, each run's first and last resend (never more points,
	# the same first time; PSNs count from the flow's first one shown, so they may differ).
	ok=1 n=0
	for f in "$T"/rep-all/charts/psn_time_*_1.dat; do
		[ -s "$f" ] || continue
		g="$T/rep-none/charts/$(basename "$f")"
		n=$((n + 1))
		[ -s "$g" ] && [ "$(wc -l <"$g")" -le "$(wc -l <"$f")" ] && [ "$(head -n 1 "$g" | cut -d' ' -f1)" = "$(head -n 1 "$f" | cut -d' ' -f1)" ] ||
			{ fail "samples: $(basename "$f"): $(wc -l <"$f") retransmissions with rows, none from the runs"; ok=0; }
	done
	[ $ok = 1 ] && [ $n -ge 1 ] && pass "samples: $n report PSN charts draw retransmissions from the runs"
else
	skip "samples: report CDFs" "gnuplot not installed"
fi

# A bad mode: one line, exit 2, no database.
"$A" -q "$T/s/trace.pcapng" --samples some -o "$T/bad.db" 2>"$T/bad.err"
rc=$?
expect_eq "samples: --samples some exits 2" 2 "$rc"
expect_eq "samples: --samples some: one line" 1 "$(wc -l <"$T/bad.err")"
[ ! -e "$T/bad.db" ] && pass "samples: no database on a usage error" || fail "samples: no database on a usage error"
exit 0
