#!/usr/bin/env bash
# test_valgrind.sh: agentxdp-analyze on every sample trace (-o db, --json) and
# agentxdp-report on one database, under valgrind memcheck: no memory errors, no
# definite or indirect leaks.
. "$(dirname "$0")/../lib.sh"

if ! command -v valgrind >/dev/null 2>&1; then
	skip_or_fail_in_ci valgrind "valgrind not installed (scripts/deps.sh installs it)"
	exit 0
fi
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
VG=(valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99
	--track-fds=no)

# vg NAME CMD...: run CMD under memcheck; PASS when exit is not 99 and 0 errors.
vg() {
	local name=$1 log="$T/$1.vg"
	shift
	"${VG[@]}" --log-file="$log" "$@" >"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	if [ "$rc" -eq 99 ] || ! grep -q "ERROR SUMMARY: 0 errors" "$log"; then
		fail "$name" "exit $rc: $(grep -m 4 -E 'Invalid|uninitialised|definitely|indirectly|ERROR SUMMARY' "$log" | tr '\n' ' ')"
		sed -n '1,40p' "$log"
	elif [ "$rc" -ne 0 ]; then
		fail "$name" "exit $rc (not a valgrind error): $(head -n 2 "$T/$name.err" | tr '\n' ' ')"
	else
		pass "$name"
	fi
}

# The check must catch a real leak: a program that loses a block must fail it.
if command -v cc >/dev/null 2>&1; then
	printf '#include <stdlib.h>\n#include <string.h>\nint main(void)\n{\n\tchar *p = malloc(64);\n\tmemset(p, 1, 64);\n\tp = NULL;\n\treturn p != NULL;\n}\n' >"$T/leak.c"
	cc -O0 -g "$T/leak.c" -o "$T/leak"
	"${VG[@]}" --log-file="$T/leak.vg" "$T/leak" >/dev/null 2>&1
	expect_eq valgrind-check-detects-leak 99 $?
fi

first_db=
for tr in "$TOP"/samples/*/trace*.pcapng; do
	d=$(dirname "$tr")
	s=$(basename "$d")-$(basename "$tr" .pcapng)
	args=()
	[ -f "$d/links.csv" ] && args+=(--topology "$d/links.csv")
	[ -f "$d/paths.csv" ] && args+=(--paths "$d/paths.csv")
	vg "valgrind-analyze-db-$s" "$BIN/agentxdp-analyze" -q "$tr" "${args[@]}" -o "$T/$s.db"
	vg "valgrind-analyze-json-$s" "$BIN/agentxdp-analyze" -q "$tr" "${args[@]}" --json
	[ -z "$first_db" ] && [ -s "$T/$s.db" ] && [ -n "$(ls "$d"/links.csv 2>/dev/null)" ] && first_db="$T/$s.db"
done

if [ -n "$first_db" ]; then
	vg valgrind-report-markdown "$BIN/agentxdp-report" "$first_db" --format markdown
	vg valgrind-report-dir "$BIN/agentxdp-report" "$first_db" -o "$T/report"
else
	fail valgrind-report "no database was written by the analyze runs above"
fi
exit "$T_FAILED"
