#!/usr/bin/env bash
# test_analyze_sanitized.sh: the golden samples through agentxdp-analyze built with ASan+UBSan
# (build/san-bin, make all builds it): no sanitizer report, no leak, and the same answer
# as the normal build (--json byte for byte; the database's tables row for row; --dump).
. "$(dirname "$0")/../lib.sh"
SAN="$TOP/build/san-bin/agentxdp-analyze"
A="$BIN/agentxdp-analyze"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
[ -x "$SAN" ] || { fail analyze-sanitized "$SAN is not built (make all)"; exit 1; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=86
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# sanitizer_clean NAME RC ERRFILE: exit status and stderr free of any sanitizer report.
sanitizer_clean() {
	if [ "$2" -ne 86 ] && ! grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer' "$3"; then
		return 0
	fi
	fail "$1" "exit $2: $(grep -Em 2 'Sanitizer|runtime error' "$3" | tr '\n' ' ')"
	return 1
}

n=0
for dir in "$TOP"/samples/*/; do
	tr="$dir/trace.pcapng"
	[ -f "$tr" ] || continue
	name=$(basename "$dir")
	n=$((n + 1))
	topo=()
	[ -f "$dir/links.csv" ] && topo=(--topology "$dir/links.csv" --paths "$dir/paths.csv")
	"$A" -q "$tr" "${topo[@]}" --json >"$T/want.json" 2>/dev/null
	want_rc=$?
	"$SAN" -q "$tr" "${topo[@]}" --json >"$T/got.json" 2>"$T/err"
	rc=$?
	sanitizer_clean "sanitized-json-$name" $rc "$T/err" || continue
	if [ $rc -eq $want_rc ] && [ -s "$T/got.json" ] && cmp -s "$T/want.json" "$T/got.json"; then
		pass "sanitized-json-$name"
	else
		fail "sanitized-json-$name" "exit $rc (normal build $want_rc), outputs $(cmp "$T/want.json" "$T/got.json" 2>&1 | head -n 1)"
	fi
done
[ $n -ge 3 ] && pass "sanitized: $n samples" || fail sanitized-samples "only $n samples found"

# The database, CSV and Prometheus writers, and the per-packet dump, on one sample.
S="$TOP/samples/lossy-link"
"$SAN" -q "$S/trace.pcapng" -o "$T/san.db" --csv "$T/csv" --prom "$T/san.prom" >/dev/null 2>"$T/err"
rc=$?
"$A" -q "$S/trace.pcapng" -o "$T/norm.db" >/dev/null 2>/dev/null
if sanitizer_clean sanitized-writers $rc "$T/err"; then
	same=1
	for t in qp qp_window retransmission nak finding; do
		[ "$(sqlite3 "$T/san.db" "select * from $t order by 1" | md5sum)" = \
			"$(sqlite3 "$T/norm.db" "select * from $t order by 1" | md5sum)" ] || same=0
	done
	[ $rc -eq 0 ] && [ $same -eq 1 ] && [ -s "$T/san.prom" ] && ls "$T"/csv/*.csv >/dev/null 2>&1 &&
		pass sanitized-writers || fail sanitized-writers "exit $rc, same tables: $same"
fi
"$SAN" -q "$S/trace.pcapng" --dump >"$T/san.dump" 2>"$T/err"
rc=$?
if sanitizer_clean sanitized-dump $rc "$T/err"; then
	"$A" -q "$S/trace.pcapng" --dump >"$T/norm.dump" 2>/dev/null
	cmp -s "$T/san.dump" "$T/norm.dump" && [ -s "$T/san.dump" ] && pass sanitized-dump ||
		fail sanitized-dump "exit $rc, dumps differ"
fi
exit "$T_FAILED"
