#!/usr/bin/env bash
# test_report_golden.sh: agentxdp-report's text summary of each sample incident, compared line
# by line with tests/golden/report/SAMPLE.txt. Regenerate after an intended change with
#   UPDATE_GOLDEN=1 bash tests/golden/test_report_golden.sh   (then read the diff before committing)
. "$(dirname "$0")/../lib.sh"
cd "$TOP"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
for s in healthy lossy-link congested-cnp; do
	d=samples/$s
	"$BIN/agentxdp-analyze" "$d/trace.pcapng" --topology "$d/links.csv" --paths "$d/paths.csv" -o "$T/$s.db" 2>/dev/null
	# The database path is the only line that depends on where the test runs.
	"$BIN/agentxdp-report" "$T/$s.db" | sed "s|$T/||" >"$T/$s.txt"
	golden=tests/golden/report/$s.txt
	if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$T/$s.txt" "$golden"
		skip "report-golden $s" "golden file rewritten"
		continue
	fi
	if diff -u "$golden" "$T/$s.txt" >"$T/$s.diff"; then
		pass "report-golden $s"
	else
		fail "report-golden $s" "$(head -n 12 "$T/$s.diff" | tr '\n' ' ')"
	fi
done
