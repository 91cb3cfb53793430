#!/usr/bin/env bash
# test_analyze_summary.sh: agentxdp-analyze --summary prints what agentxdp-report's text
# says (#21 item 2), with or without -o, and leaves no temporary database behind.
. "$(dirname "$0")/../lib.sh"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
S="$TOP/samples/slow-link"
args=("$S/trace.pcapng" --topology "$S/links.csv" --paths "$S/paths.csv")
before=$(ls -d /tmp/agentxdp-summary-* 2>/dev/null | wc -l)
"$BIN/agentxdp-analyze" -q "${args[@]}" --summary >"$T/summary.txt" 2>"$T/err"
rc=$?
"$BIN/agentxdp-analyze" -q "${args[@]}" -o "$T/x.db" && "$BIN/agentxdp-report" "$T/x.db" >"$T/report.txt"
after=$(ls -d /tmp/agentxdp-summary-* 2>/dev/null | wc -l)
# The same sections and rows; only the database line differs.
if [ $rc -eq 0 ] && diff <(grep -v '^database:' "$T/summary.txt") <(grep -v '^database:' "$T/report.txt") >"$T/diff"; then
	pass "analyze-summary: --summary equals agentxdp-report's text ($(wc -l <"$T/summary.txt") lines)"
else
	fail "analyze-summary: --summary equals the report's text" "rc=$rc $(head -n 4 "$T/diff" | tr '\n' ' ') $(cat "$T/err")"
fi
grep -q '^VERDICT' "$T/summary.txt" && pass "analyze-summary: has the verdict" || fail "analyze-summary: verdict" "none"
expect_eq "analyze-summary: no temporary folder left" "$before" "$after"
"$BIN/agentxdp-analyze" -q "${args[@]}" --summary -o "$T/kept.db" >"$T/kept.txt" && [ -s "$T/kept.db" ] &&
	grep -q "^database: $T/kept.db" "$T/kept.txt" && pass "analyze-summary: with -o the database is kept and named" ||
	fail "analyze-summary: with -o" "$(head -n 2 "$T/kept.txt")"
