#!/usr/bin/env bash
# test_analyze_cli.sh: agentxdp-analyze's command line, outputs and failure modes: --help,
# bad options, unreadable and non-capture files, a truncated trace (what was read is kept,
# exit 1), the database written whole or not at all (0640, no temporary left, full disk),
# --json and --csv.
. "$(dirname "$0")/../lib.sh"

A=$BIN/agentxdp-analyze
[ -x "$A" ] || { fail analyze-cli "$A not built"; exit 1; }
dir=$(tmpdir)
cleanup() {
	mountpoint -q "$dir/full" 2>/dev/null && umount "$dir/full"
	rm -rf "$dir"
}
trap cleanup EXIT

# A trace to work on: the synthesizer's when built, else a public capture.
trace=""
if [ -x "$BIN/agentxdp-synth" ] && "$BIN/agentxdp-synth" -q -o "$dir/syn" --duration 2ms --seed 5 \
	--fault link=leaf0-spine1,kind=loss,size=2% >/dev/null 2>&1; then
	trace="$dir/syn/trace.pcapng"
elif have_shared; then
	trace="$SHARED_CAPTURES/magnate3__linux-riscv-dev__rocev2_test.pcap"
fi

# --help: usage, options and examples on stdout, exit 0.
out=$("$A" --help)
rc=$?
if [ $rc -eq 0 ] && grep -q '^Examples:' <<<"$out" && grep -q -- '--output FILE' <<<"$out"; then
	pass "analyze-cli --help"
else
	fail "analyze-cli --help" "rc=$rc or no Examples block"
fi

# A bad option and a bad value: exit 2, a one-line reason and the hint.
"$A" --bogus x.pcap >/dev/null 2>"$dir/err"
expect_eq "analyze-cli bad option exit status" 2 $?
"$A" --window 5parsecs x.pcap >/dev/null 2>"$dir/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "invalid --window '5parsecs'" "$dir/err"; then
	pass "analyze-cli bad --window"
else
	fail "analyze-cli bad --window" "rc=$rc: $(head -n 1 "$dir/err")"
fi
"$A" >/dev/null 2>"$dir/err"
expect_eq "analyze-cli no trace exit status" 2 $?

# Issue #21: a duration without a unit is an error ("-w 10", now --window 10, was taken as 10 seconds although
# the help says durations need a unit); a bare 0 is the same in every unit.
for arg in "--window 10" "--window 0.5" "--dedup 500"; do
	# shellcheck disable=SC2086 # the option and its value are two words
	"$A" $arg x.pcap >/dev/null 2>"$dir/err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$dir/err")" -eq 1 ] && grep -q "needs a unit" "$dir/err"; then
		pass "analyze-cli unit-less duration '$arg'"
	else
		fail "analyze-cli unit-less duration '$arg'" "rc=$rc: $(head -n 1 "$dir/err")"
	fi
done
"$A" --dedup 0 "$dir/missing.pcap" >/dev/null 2>"$dir/err"
expect_eq "analyze-cli --dedup 0 needs no unit (exit 1: the missing trace)" 1 $?

# Unreadable and non-capture files: exit 1, one line naming the file.
"$A" "$dir/missing.pcap" -o "$dir/m.db" >/dev/null 2>"$dir/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$dir/err")" -eq 1 ] && grep -q "missing.pcap" "$dir/err" && [ ! -e "$dir/m.db" ]; then
	pass "analyze-cli missing file"
else
	fail "analyze-cli missing file" "rc=$rc: $(cat "$dir/err")"
fi
echo "not a capture at all" >"$dir/text.pcap"
"$A" "$dir/text.pcap" >/dev/null 2>"$dir/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$dir/err")" -eq 1 ] && grep -q "text.pcap" "$dir/err"; then
	pass "analyze-cli non-capture file"
else
	fail "analyze-cli non-capture file" "rc=$rc: $(cat "$dir/err")"
fi

if [ -z "$trace" ]; then
	skip analyze-cli-outputs "no trace: neither bin/agentxdp-synth nor ../shared/captures"
	exit 0
fi

# A whole run: 0640, no temporary file left beside it, schema version set.
"$A" -q "$trace" -o "$dir/out.db" 2>"$dir/err"
rc=$?
mode=$(stat -c %a "$dir/out.db" 2>/dev/null)
left=$(ls "$dir" | grep -c 'out.db.tmp' || true)
ver=$(sqlite3 "$dir/out.db" "PRAGMA user_version" 2>/dev/null)
flows=$(sqlite3 "$dir/out.db" "SELECT count(*) FROM qp" 2>/dev/null)
cur=$(sed -n 's/^#define STORE_SCHEMA_VERSION \([0-9]*\)$/\1/p' "$TOP/lib/store/store_sqlite.h")
if [ $rc -eq 0 ] && [ "$mode" = 640 ] && [ "$left" = 0 ] && [ "$ver" = "${cur:-?}" ] && [ "${flows:-0}" -gt 0 ]; then
	pass "analyze-cli database (mode $mode, schema $ver, $flows flows)"
else
	fail "analyze-cli database" "rc=$rc mode=$mode leftovers=$left version=$ver flows=$flows: $(head -n 1 "$dir/err")"
fi

# --json: valid JSON whose flow count and packet total agree with the database.
if command -v jq >/dev/null; then
	"$A" -q "$trace" --json >"$dir/s.json" 2>"$dir/err"
	jflows=$(jq '.flows | length' "$dir/s.json" 2>/dev/null)
	jpk=$(jq '[.flows[].packets] | add' "$dir/s.json" 2>/dev/null)
	dpk=$(sqlite3 "$dir/out.db" "SELECT sum(packets) FROM qp")
	if [ "$jflows" = "$flows" ] && [ "$jpk" = "$dpk" ]; then
		pass "analyze-cli --json ($jflows flows, $jpk packets)"
	else
		fail "analyze-cli --json" "flows $jflows vs $flows, packets $jpk vs $dpk"
	fi
fi

# --csv: one file per table, the qp file with a header and one row per flow.
"$A" -q "$trace" --csv "$dir/csv" 2>"$dir/err"
rows=$(($(wc -l <"$dir/csv/qp.csv" 2>/dev/null || echo 0) - 1))
if [ "$rows" = "$flows" ] && head -n 1 "$dir/csv/qp.csv" | grep -q '"src_ip"' &&
	[ -f "$dir/csv/finding.csv" ] && [ -f "$dir/csv/retransmission.csv" ] && ! ls -a "$dir/csv" | grep -q '\.db'; then
	pass "analyze-cli --csv ($rows qp rows)"
else
	fail "analyze-cli --csv" "rows=$rows flows=$flows: $(head -n 1 "$dir/err")"
fi

# Terminal summary without -o.
"$A" -q "$trace" >"$dir/summary.txt" 2>"$dir/err"
if grep -q 'RoCE packets' "$dir/summary.txt" && grep -q '^Findings:' "$dir/summary.txt"; then
	pass "analyze-cli terminal summary"
else
	fail "analyze-cli terminal summary" "$(head -n 2 "$dir/summary.txt")"
fi

# A truncated trace: what was read is analysed and written, the error says where, exit 1.
size=$(stat -c %s "$trace")
head -c $((size * 2 / 3)) "$trace" >"$dir/cut.pcapng"
"$A" -q "$dir/cut.pcapng" -o "$dir/cut.db" 2>"$dir/err"
rc=$?
cut_pk=$(sqlite3 "$dir/cut.db" "SELECT sum(packets) FROM qp" 2>/dev/null)
stop=$(sqlite3 "$dir/cut.db" "SELECT truncated || ' ' || IFNULL(stop_reason, '') FROM capture" 2>/dev/null)
if [ $rc -eq 1 ] && [ "${cut_pk:-0}" -gt 0 ] && [ "${cut_pk:-0}" -lt "$dpk" ] && [ -s "$dir/err" ] &&
	[ "${stop%% *}" = 1 ]; then
	pass "analyze-cli truncated trace ($cut_pk of $dpk packets kept; $(head -n 1 "$dir/err" | cut -c1-80))"
else
	fail "analyze-cli truncated trace" "rc=$rc packets=$cut_pk capture='$stop' err=$(head -n 1 "$dir/err")"
fi

# An output directory that cannot be written: one line, exit 1.
"$A" -q "$trace" -o "$dir/no/such/dir/x.db" 2>"$dir/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$dir/err")" -eq 1 ]; then
	pass "analyze-cli unwritable output"
else
	fail "analyze-cli unwritable output" "rc=$rc: $(cat "$dir/err")"
fi

# A full disk: a clear line, exit 1, no database and no temporary file left.
mkdir -p "$dir/full"
if need_root && mount -t tmpfs -o size=640k tmpfs "$dir/full" 2>/dev/null; then
	"$A" -q "$trace" -o "$dir/full/x.db" 2>"$dir/err"
	rc=$?
	if [ $rc -eq 1 ] && grep -qi 'full' "$dir/err" && [ "$(wc -l <"$dir/err")" -eq 1 ] &&
		[ -z "$(ls -A "$dir/full")" ]; then
		pass "analyze-cli full disk ($(cut -c1-90 "$dir/err"))"
	else
		fail "analyze-cli full disk" "rc=$rc left=$(ls -A "$dir/full" | tr '\n' ' ') err=$(cat "$dir/err")"
	fi
	umount "$dir/full"
else
	skip analyze-cli-full-disk "cannot mount a small tmpfs here (needs root)"
fi
exit 0
