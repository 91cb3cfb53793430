#!/usr/bin/env bash
# test_flag_letters.sh: one meaning per option letter across the tools (issue #21,
# docs/flags.md). Each tool's --help lists a letter exactly where docs/flags.md's table
# fills its cell; the letters do what the table says; the old meanings (-w the window,
# -d/-t a duration or an interval, -i an interval) exit 2 with one line naming the new
# form; a duration without a unit exits 2 in every tool. capture and drops need root and
# BPF to run: for them only option parsing is checked (exit 2 comes before any BPF work).
. "$(dirname "$0")/../lib.sh"

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
TOOLS=(capture analyze drops nicstat report synth roce-emu) # the table's columns, in order
for t in "${TOOLS[@]}"; do
	[ -x "$BIN/agentxdp-$t" ] || { fail flags-built "$BIN/agentxdp-$t is not built"; exit 1; }
done

# --- The table: the letters each tool's --help lists = the filled cells of its column ---
rows=$(grep -E '^\| `-[A-Za-z]` \|' "$TOP/docs/flags.md")
[ "$(wc -l <<<"$rows")" -ge 20 ] && pass flags-table-found || fail flags-table-found "$(wc -l <<<"$rows") rows"
for i in "${!TOOLS[@]}"; do
	t=${TOOLS[$i]}
	want=$(awk -F'|' -v col=$((i + 3)) '{ l = $2; c = $col; gsub(/[ `]/, "", l); gsub(/ /, "", c);
		if (c != "") print l }' <<<"$rows" | sort | tr '\n' ' ')
	got=$("$BIN/agentxdp-$t" --help | grep -oE '^ +-[A-Za-z]([, ]|$)' | tr -d ' ,' | sort | tr '\n' ' ')
	expect_eq "flags-help-matches-table-$t" "$want" "$got"
done

# usage NAME WANT TOOL ARGS...: exit 2, one stderr line containing WANT, nothing on stdout,
# and no file created in the working directory.
usage() {
	local name=$1 want=$2 tool=$3 rc
	shift 3
	rm -rf "$T/cwd" && mkdir "$T/cwd"
	(cd "$T/cwd" && "$BIN/agentxdp-$tool" "$@" >"$T/out" 2>"$T/err" </dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF -- "$want" "$T/err" &&
		[ ! -s "$T/out" ] && [ -z "$(ls -A "$T/cwd")" ]; then
		pass "$name"
	else
		fail "$name" "exit $rc: $(head -n 2 "$T/err" | tr '\n' '|') files: $(ls -A "$T/cwd" | tr '\n' ' ')"
	fi
}

# --- Old meanings: refused, naming the new form ---
usage flags-old-capture-d "use --duration 30s" capture -i lo -w x.pcapng -d 30s
usage flags-old-analyze-w-duration "use --window 1ms" analyze -w 1ms x.pcapng
usage flags-old-analyze-w-bare "use --window 10s" analyze -w 10 x.pcapng
usage flags-old-drops-t "use --duration 3s" drops -t 3s
usage flags-old-drops-d "use --interval 1s" drops -d 1s
usage flags-old-drops-j "use --json" drops -j
usage flags-old-nicstat-i "use --interval 1s" nicstat -i 1s
usage flags-analyze-w-and-o "one database at a time" analyze -w a.db -o b.db x.pcapng
usage flags-analyze-w-not-a-trace "not a trace" analyze -r x.pcapng -w out.pcapng

# --- A bare number is not a duration, in every tool ---
usage flags-unit-capture-duration "needs a unit" capture -i lo -w x.pcapng --duration 30
usage flags-unit-capture-interval "needs a unit" capture -i lo --analyze --interval 5
usage flags-unit-capture-forget "needs a unit" capture -i lo --analyze --forget 600
usage flags-unit-analyze-window "needs a unit" analyze --window 10 x.pcapng
usage flags-unit-analyze-dedup "needs a unit" analyze --dedup 500 x.pcapng
usage flags-unit-drops-duration "needs a unit" drops --duration 3
usage flags-unit-drops-interval "needs a unit" drops --interval 1
usage flags-unit-nicstat-interval "needs a unit" nicstat --interval 1
usage flags-unit-report-query-timeout "needs a unit" report --query-timeout 30 x.db
usage flags-unit-synth-duration "needs a unit" synth -o out --duration 5
usage flags-unit-synth-ack-timeout "needs a unit" synth -o out --ack-timeout 1
usage flags-unit-synth-fault-size "size='20'" synth -o out --fault link=leaf0-spine0,kind=slow,size=20
usage flags-unit-synth-fault-onset "needs a unit" synth -o out --fault link=leaf0-spine0,kind=loss,size=1%,onset=1
usage flags-unit-synth-host-fault-size "size='100'" synth -o out --host-fault host=198.18.0.10,kind=rnr,size=100
usage flags-unit-roce-emu-D "with a unit" roce-emu -b 198.18.0.1 -c 198.18.0.2 -D 5
usage flags-unit-roce-emu-timeout "with a unit" roce-emu -b 198.18.0.1 -c 198.18.0.2 --timeout 16

# --- The new forms parse: an extra word after them is the first (and only) complaint ---
usage flags-new-capture-duration "unexpected argument 'extra'" capture -i lo -w x.pcapng --duration 30s extra
usage flags-new-capture-G-seconds "unexpected argument 'extra'" capture -i lo -w x.pcapng -G 60 extra
usage flags-new-capture-agent-durations "unexpected argument 'extra'" \
	capture -i lo --analyze --interval 5s --forget 10m extra
usage flags-new-drops "unexpected argument 'extra'" drops --duration 3s --interval 500ms extra
usage flags-new-nicstat "unexpected argument 'extra'" nicstat --interval 1s extra
usage flags-new-roce-emu "unexpected argument 'extra'" roce-emu -b 198.18.0.1 -c 198.18.0.2 -D 5s --timeout 16ms extra
# -i is an interface, -w a file, in capture (what each refusal names shows how it was read).
usage flags-capture-i-is-interface "interface lo given twice" capture -i lo -i lo -w x.pcapng
usage flags-capture-w-is-file "need a file name, not '-'" capture -i lo -w - -C 1
grep -q "perftest's letters" <("$BIN/agentxdp-roce-emu" --help) && pass flags-roce-emu-help-says-perftest ||
	fail flags-roce-emu-help-says-perftest "no \"perftest's letters\" in --help"

# --- What the letters do, on a trace: analyze -w writes the database, -t is a time format,
# --window sets the window; report -v says more ---
trace=$TOP/samples/slow-link/trace.pcapng
[ -f "$trace" ] || { fail flags-sample "no $trace"; exit 1; }
"$BIN/agentxdp-analyze" -q -w "$T/w.db" --window 250us "$trace" >/dev/null 2>"$T/err"
expect_eq flags-analyze-w-exit 0 $?
if [ -s "$T/w.db" ] && [ "$(head -c 15 "$T/w.db")" = "SQLite format 3" ]; then
	pass flags-analyze-w-writes-database
else
	fail flags-analyze-w-writes-database "$(ls -l "$T/w.db" 2>&1) $(head -n 1 "$T/err")"
fi
expect_eq flags-analyze-window-250us 250000 \
	"$(sqlite3 "$T/w.db" "SELECT value FROM meta WHERE key = 'window_ns'" 2>/dev/null)"
"$BIN/agentxdp-analyze" -q -o "$T/o.db" --window 250us "$trace" >/dev/null 2>&1
# The same report but for the line naming the database.
expect_eq flags-analyze-w-same-as-o "$("$BIN/agentxdp-report" "$T/o.db" | grep -v '^database:' | md5sum)" \
	"$("$BIN/agentxdp-report" "$T/w.db" | grep -v '^database:' | md5sum)"
epoch=$("$BIN/agentxdp-analyze" --dump -tt -c 1 "$trace" 2>/dev/null | awk '{print $2}')
if [[ $epoch =~ ^1[0-9]{9}\.[0-9]+$ ]]; then pass flags-analyze-tt-epoch; else
	fail flags-analyze-tt-epoch "time column '$epoch'"
fi
"$BIN/agentxdp-report" "$T/w.db" >/dev/null 2>"$T/quiet.err"
"$BIN/agentxdp-report" -v "$T/w.db" >/dev/null 2>"$T/verbose.err"
expect_eq flags-report-v-exit 0 $?
if [ ! -s "$T/quiet.err" ] && grep -q "flows" "$T/verbose.err"; then pass flags-report-v-says-more; else
	fail flags-report-v-says-more "without -v: $(head -c 200 "$T/quiet.err"); with: $(head -c 200 "$T/verbose.err")"
fi
"$BIN/agentxdp-report" --query-timeout 1500ms "$T/w.db" >/dev/null 2>"$T/err"
expect_eq flags-report-query-timeout-duration 0 $?
exit "$T_FAILED"
