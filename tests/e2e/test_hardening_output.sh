#!/usr/bin/env bash
# test_hardening_output.sh: issue #22, the output side. Links planted in an output folder are
# never written through (report folder, charts, gnuplot's own output, predictable temporary
# names, CSV files, --prom). Runs as any user; no network namespace.
. "$(dirname "$0")/../lib.sh"

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
S="$TOP/samples/lossy-link"
AN=$BIN/agentxdp-analyze
REP=$BIN/agentxdp-report
VICTIM_TEXT="victim: must stay as it is"

"$AN" -q "$S/trace.pcapng" --topology "$S/links.csv" --paths "$S/paths.csv" -o "$T/a.db" 2>"$T/err" ||
	fail "output: analyze the sample" "$(head -n 1 "$T/err")"

# victim NAME: a fresh file outside the output folder that a planted link points at.
victim() {
	printf '%s\n' "$VICTIM_TEXT" >"$T/$1"
	echo "$T/$1"
}
# untouched NAME TEST: PASS when the victim still holds exactly its text.
untouched() {
	if [ "$(cat "$T/$1")" = "$VICTIM_TEXT" ]; then pass "$2"; else
		fail "$2" "the victim was written through the link: $(head -c 60 "$T/$1" | tr '\n' ' ')"
	fi
}

# --- the report folder: a link planted where a chart script, a chart image, gnuplot's log
# or the page's temporary goes is replaced or refused, never followed ---
if command -v gnuplot >/dev/null; then
	mkdir -p "$T/rep/charts"
	ln -s "$(victim v-gp)" "$T/rep/charts/latency_cdf.gp"
	ln -s "$(victim v-dat)" "$T/rep/charts/windows.dat"
	ln -s "$(victim v-svg)" "$T/rep/charts/latency_cdf.svg"
	ln -s "$(victim v-log)" "$T/rep/charts/gnuplot.log"
	"$REP" -q "$T/a.db" -o "$T/rep" 2>"$T/rep.err"
	rc=$?
	untouched v-gp output-symlink-chart-script
	untouched v-dat output-symlink-chart-data
	untouched v-svg output-symlink-chart-image
	untouched v-log output-symlink-gnuplot-log
	# The report itself is still made: the links are replaced by the real files.
	if [ $rc -eq 0 ] && [ -f "$T/rep/charts/latency_cdf.gp" ] && [ ! -L "$T/rep/charts/latency_cdf.gp" ] &&
		[ -f "$T/rep/charts/latency_cdf.svg" ] && [ ! -L "$T/rep/charts/latency_cdf.svg" ] &&
		grep -q '<svg' "$T/rep/charts/latency_cdf.svg"; then
		pass output-symlink-charts-still-drawn
	else
		fail output-symlink-charts-still-drawn "exit $rc: $(ls -l "$T/rep/charts" | tr '\n' ' ' | head -c 300)"
	fi
	if ls -a "$T/rep/charts" | grep -q '^\.render'; then
		fail output-charts-no-work-folder-left "$(ls -a "$T/rep/charts" | tr '\n' ' ')"
	else
		pass output-charts-no-work-folder-left
	fi
else
	skip_or_fail_in_ci output-symlink-charts "gnuplot not installed"
fi

# The page's temporary name: the PID is known before the report runs (exec keeps it).
mkdir -p "$T/rep2"
V=$(victim v-html-tmp)
bash -c 'ln -s "$1" "$2/index.html.tmp.$$"; exec "$3" -q "$4" -o "$2"' _ "$V" "$T/rep2" "$REP" "$T/a.db" \
	2>"$T/rep2.err"
rc=$?
untouched v-html-tmp output-symlink-index-tmp-predictable
[ $rc -eq 0 ] && [ -f "$T/rep2/index.html" ] && [ ! -L "$T/rep2/index.html" ] &&
	pass output-symlink-index-tmp-report-made || fail output-symlink-index-tmp-report-made "exit $rc: $(head -n 1 "$T/rep2.err")"

# The report folder itself a link: refused with one line, nothing written there.
mkdir "$T/elsewhere"
ln -s "$T/elsewhere" "$T/rep-link"
"$REP" -q "$T/a.db" -o "$T/rep-link" >/dev/null 2>"$T/link.err"
rc=$?
if [ $rc -ne 0 ] && [ "$(wc -l <"$T/link.err")" -eq 1 ] && grep -q 'symbolic link' "$T/link.err" &&
	[ -z "$(ls -A "$T/elsewhere")" ]; then
	pass output-symlink-report-folder-refused
else
	fail output-symlink-report-folder-refused "exit $rc, $(ls -A "$T/elsewhere" | wc -l) files: $(tr '\n' '|' <"$T/link.err")"
fi
# charts/ a link to another folder: refused (charts skipped with a warning), nothing written there.
mkdir -p "$T/rep3" "$T/elsewhere2"
ln -s "$T/elsewhere2" "$T/rep3/charts"
"$REP" -q "$T/a.db" -o "$T/rep3" >/dev/null 2>"$T/rep3.err"
if [ -z "$(ls -A "$T/elsewhere2")" ] && [ -f "$T/rep3/index.html" ]; then
	pass output-symlink-charts-folder-refused
else
	fail output-symlink-charts-folder-refused "$(ls -A "$T/elsewhere2" | head -n 3 | tr '\n' ' ')"
fi

# --- --csv DIR: a link planted for a table's file is refused, never followed ---
mkdir -p "$T/csv"
ln -s "$(victim v-csv)" "$T/csv/qp.csv"
"$AN" -q "$S/trace.pcapng" --csv "$T/csv" >/dev/null 2>"$T/csv.err"
rc=$?
untouched v-csv output-symlink-csv-file
[ $rc -ne 0 ] && [ "$(wc -l <"$T/csv.err")" -eq 1 ] && pass output-symlink-csv-one-line-error ||
	fail output-symlink-csv-one-line-error "exit $rc: $(tr '\n' '|' <"$T/csv.err")"

# --- --prom FILE: its temporary had a predictable name (FILE.tmp.PID) and no O_EXCL ---
V=$(victim v-prom-tmp)
bash -c 'ln -s "$1" "$2.tmp.$$"; exec "$3" -q "$4" --prom "$2"' _ "$V" "$T/m.prom" "$AN" "$S/trace.pcapng" \
	2>"$T/prom.err"
rc=$?
untouched v-prom-tmp output-symlink-prom-tmp-predictable
[ $rc -eq 0 ] && grep -q '^agentxdp_' "$T/m.prom" && [ ! -L "$T/m.prom" ] &&
	pass output-symlink-prom-written || fail output-symlink-prom-written "exit $rc: $(head -n 1 "$T/prom.err")"
# --prom FILE where FILE is a link to a regular file: the link is replaced, the target kept.
ln -s "$(victim v-prom)" "$T/m2.prom"
"$AN" -q "$S/trace.pcapng" --prom "$T/m2.prom" 2>/dev/null
untouched v-prom output-symlink-prom-file-replaced-not-followed

# --- agentxdp-nicstat --db FILE appends; through a link planted at FILE it must not ---
mkdir -p "$T/sys/class"
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("create table users (name text)"); db.commit()' "$T/v-nic.db"
cp -p "$T/v-nic.db" "$T/v-nic.before"
ln -s "$T/v-nic.db" "$T/nic-link.db"
"$BIN/agentxdp-nicstat" --sysfs "$T/sys" -c 1 --interval 10ms --db "$T/nic-link.db" >/dev/null 2>"$T/nic.err"
rc=$?
if [ $rc -ne 0 ] && cmp -s "$T/v-nic.db" "$T/v-nic.before" && grep -q 'symbolic link' "$T/nic.err"; then
	pass output-symlink-nicstat-db
else
	fail output-symlink-nicstat-db "exit $rc, $(cmp -s "$T/v-nic.db" "$T/v-nic.before" && echo unchanged || echo CHANGED): $(tr '\n' '|' <"$T/nic.err")"
fi

exit "$T_FAILED"
