#!/usr/bin/env bash
# test_fail_fast.sh: bad command-line input stops agentxdp-analyze before any work, with one
# line and exit status 2, and writes nothing (#21 item 4: "--topology missing.csv" used to
# analyze the whole trace and exit 1 with "none").
. "$(dirname "$0")/../lib.sh"
A="$BIN/agentxdp-analyze"
S="$TOP/samples/healthy"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

# refused NAME ARGS...: exit 2, one stderr line, no database written.
refused() {
	local name=$1
	shift
	"$A" "$@" -o "$T/out.db" >/dev/null 2>"$T/err"
	local rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -e "$T/out.db" ]; then
		pass "fail-fast: $name ($(cat "$T/err"))"
	else
		fail "fail-fast: $name" "exit $rc, $(wc -l <"$T/err") lines, db $([ -e "$T/out.db" ] && echo written || echo absent): $(head -n 2 "$T/err" | tr '\n' ' ')"
	fi
	rm -f "$T/out.db"
}

refused "a missing links.csv" "$S/trace.pcapng" --topology "$T/missing.csv"
printf 'link,a,b\nl1,h1\n' >"$T/bad-links.csv"
refused "a links.csv row with two fields" "$S/trace.pcapng" --topology "$T/bad-links.csv"
printf 'src,dst,udp_sport,links\n198.18.0.10,198.18.0.11,5,no-such-link\n' >"$T/bad-paths.csv"
refused "a paths.csv naming an unknown link" "$S/trace.pcapng" --topology "$S/links.csv" --paths "$T/bad-paths.csv"
refused "--paths without --topology" "$S/trace.pcapng" --paths "$S/paths.csv"
for opt in --csv --report --prom --topology --paths; do
	refused "an empty $opt value" "$S/trace.pcapng" "$opt" ""
done

# A good run still works with the same files (the refusals are not a blanket no).
"$A" -q "$S/trace.pcapng" --topology "$S/links.csv" --paths "$S/paths.csv" -o "$T/ok.db"
expect_eq "fail-fast: the sample's own topology is accepted" 0 $?
