#!/usr/bin/env bash
# test_hardening_modes.sh: every output file the tools create is 0640 or stricter (and
# every folder 0750 or stricter) even when the caller's umask is the usual 022: analyze's
# db, CSV, Prometheus file and report; synth's outputs; nicstat's; report's; capture's
# pcapng with its rotation files and its textfile-collector output; drops' database.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/nicstat/fixture.sh"

T=$(tmpdir)
NS=hd-modes-$$
cleanup() {
	ip netns del "$NS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
umask 022
S="$TOP/samples/healthy"

# mode_ok NAME PATH [file|dir]: no group write, nothing for others (0640/0600, 0750/0700).
mode_ok() {
	local name=$1 path=$2 mode
	if [ ! -e "$path" ]; then
		fail "$name" "$path was not created"
		return
	fi
	mode=$(stat -c %a "$path")
	# Octal digits: group may only read (+exec for folders), others nothing.
	if (((8#$mode & 8#027) == 0)); then pass "$name"; else fail "$name" "$path is $mode"; fi
}

# Sanity of the check itself: a file made under umask 022 is 644 and must be refused.
touch "$T/loose"
if (((8#$(stat -c %a "$T/loose") & 8#027) != 0)); then pass modes-check-detects-644; else
	fail modes-check-detects-644 "umask 022 did not give a loose file"; fi

# agentxdp-analyze: -o db, --csv DIR (folder + files), --prom FILE
"$BIN/agentxdp-analyze" -q "$S/trace.pcapng" --topology "$S/links.csv" --paths "$S/paths.csv" \
	-o "$T/a.db" --csv "$T/csv" --prom "$T/a.prom" >/dev/null 2>"$T/analyze.err"
expect_eq modes-analyze-exit 0 $?
mode_ok modes-analyze-db "$T/a.db"
mode_ok modes-analyze-prom "$T/a.prom"
mode_ok modes-analyze-csv-dir "$T/csv"
n=0
for f in "$T"/csv/*.csv; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	mode_ok "modes-analyze-csv-$(basename "$f" .csv)" "$f"
done
[ "$n" -gt 0 ] && pass modes-analyze-csv-files || fail modes-analyze-csv-files "no CSV written"

# agentxdp-analyze --report DIR: the page, the chart folder and its files
"$BIN/agentxdp-analyze" -q "$S/trace.pcapng" --report "$T/arep" >/dev/null 2>"$T/arep.err"
expect_eq modes-analyze-report-exit 0 $?
mode_ok modes-analyze-report-dir "$T/arep"
n=0
while IFS= read -r f; do
	n=$((n + 1))
	mode_ok "modes-analyze-report-${f#"$T"/arep/}" "$f"
done < <(find "$T/arep" -mindepth 1 | head -n 40)
[ "$n" -ge 2 ] && pass modes-analyze-report-files || fail modes-analyze-report-files "only $n entries"

# agentxdp-analyze --json to stdout must not change anything: nothing to check there.

# agentxdp-synth -o DIR: the folder and each file in it
"$BIN/agentxdp-synth" -q -o "$T/synth" --hosts 4 --leaves 2 --spines 2 --duration 1ms --seed 3 \
	>/dev/null 2>"$T/synth.err"
expect_eq modes-synth-exit 0 $?
mode_ok modes-synth-dir "$T/synth"
n=0
for f in "$T"/synth/*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	mode_ok "modes-synth-$(basename "$f")" "$f"
done
[ "$n" -ge 3 ] && pass modes-synth-files || fail modes-synth-files "only $n files in $T/synth"

# agentxdp-nicstat on a fixture sysfs: --textfile DIR, --prom FILE, --db FILE
SYS="$T/sys"
fx_root "$SYS"
fx_mlx5 "$SYS" mlx5_0 eth2
mkdir "$T/tf"
"$BIN/agentxdp-nicstat" --sysfs "$SYS" -c 2 --interval 20ms --textfile "$T/tf" --prom "$T/nic.prom" \
	--db "$T/nic.db" -q >/dev/null 2>"$T/nic.err"
expect_eq modes-nicstat-exit 0 $?
mode_ok modes-nicstat-textfile "$T/tf/agentxdp_nicstat.prom"
mode_ok modes-nicstat-prom "$T/nic.prom"
mode_ok modes-nicstat-db "$T/nic.db"

# agentxdp-report on the analyze db: the page and the charts
if [ -x "$BIN/agentxdp-report" ] && [ -e "$T/a.db" ]; then
	"$BIN/agentxdp-report" "$T/a.db" -o "$T/rep" >/dev/null 2>"$T/rep.err"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		mode_ok modes-report-dir "$T/rep"
		while IFS= read -r f; do
			mode_ok "modes-report-${f#"$T"/rep/}" "$f"
		done < <(find "$T/rep" -type f | head -n 20)
	else
		fail modes-report-exit "exit $rc: $(head -n 2 "$T/rep.err" | tr '\n' ' ')"
	fi
fi
# Root only: agentxdp-capture's pcapng with its rotation files and its --textfile output (on
# the loopback of a namespace of our own), agentxdp-drops --db.
if ! need_root || ! ip netns add "$NS" 2>/dev/null; then
	skip_or_fail_in_ci modes-capture "needs root and network namespaces"
	exit "$T_FAILED"
fi
ip -n "$NS" link set lo up
ip netns exec "$NS" "$BIN/agentxdp-capture" -q -i lo -w "$T/rot.pcapng" -G 1 --duration 2500ms >/dev/null 2>"$T/cap.err"
expect_eq modes-capture-exit 0 $?
mode_ok modes-capture-file "$T/rot.pcapng"
mode_ok modes-capture-rotation-file "$T/rot.pcapng1"
mkdir "$T/ctf"
ip netns exec "$NS" "$BIN/agentxdp-capture" -q -i lo --analyze --metrics off --textfile "$T/ctf" \
	--duration 600ms --interval 200ms >/dev/null 2>"$T/ctf.err"
expect_eq modes-capture-textfile-exit 0 $?
mode_ok modes-capture-textfile "$T/ctf/agentxdp.prom"
"$BIN/agentxdp-drops" -q --duration 300ms --db "$T/drops.db" >/dev/null 2>"$T/drops.err"
expect_eq modes-drops-exit 0 $?
mode_ok modes-drops-db "$T/drops.db"
exit "$T_FAILED"
