#!/usr/bin/env bash
# test_hardening_report_sql.sh: issue #22 item 10: the report's SQL takes stored values as
# bound parameters (a stored inf broke a query built with %f) and every query stops at a
# time limit (a recursive view used to hang the report forever).
. "$(dirname "$0")/../lib.sh"

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
S="$TOP/samples/lossy-link"
REP=$BIN/agentxdp-report

"$BIN/agentxdp-analyze" -q "$S/trace.pcapng" -o "$T/a.db" 2>"$T/err" ||
	fail "report-sql: analyze the sample" "$(head -n 1 "$T/err")"
sql() { python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.executescript(sys.argv[2]); db.commit()' "$@"; }

# Every flow's p99 is inf: the population median is inf, which %f wrote as "inf" into the SQL.
cp "$T/a.db" "$T/inf.db"
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("update qp set ack_latency_p99_us = ? where ack_samples > 0", (float("inf"),)); db.commit()' "$T/inf.db"
"$REP" "$T/inf.db" >"$T/inf.txt" 2>"$T/inf.err"
rc=$?
[ $rc -eq 0 ] && grep -q . "$T/inf.txt" && pass report-sql-inf-p99-bound ||
	fail report-sql-inf-p99-bound "exit $rc: $(head -n 1 "$T/inf.err")"

# qp replaced by a view that never ends: one line naming the limit, exit 1, within the limit.
cp "$T/a.db" "$T/loop.db"
sql "$T/loop.db" 'ALTER TABLE qp RENAME TO qp_rows;
	CREATE VIEW qp AS WITH RECURSIVE forever(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM forever)
	SELECT q.* FROM forever, qp_rows q;'
start=$(date +%s)
timeout 30 "$REP" --query-timeout 2s "$T/loop.db" >/dev/null 2>"$T/loop.err"
rc=$?
took=$(($(date +%s) - start))
if [ $rc -eq 1 ] && [ $took -le 10 ] && [ "$(wc -l <"$T/loop.err")" -eq 1 ] && grep -q 'time limit' "$T/loop.err"; then
	pass report-sql-recursive-view-time-limit
else
	fail report-sql-recursive-view-time-limit "exit $rc after ${took}s: $(head -n 1 "$T/loop.err")"
fi
# The same through -o (the charts open the database again) and through analyze --report.
timeout 30 "$REP" -q --query-timeout 2s "$T/loop.db" -o "$T/rep" >/dev/null 2>"$T/loop2.err"
rc=$?
[ $rc -eq 1 ] && pass report-sql-recursive-view-report-folder ||
	fail report-sql-recursive-view-report-folder "exit $rc: $(head -n 1 "$T/loop2.err")"
"$REP" --query-timeout 0s "$T/a.db" >/dev/null 2>"$T/err"
expect_eq report-sql-query-timeout-zero-is-usage-error 2 $?
exit "$T_FAILED"
