#!/usr/bin/env bash
# test_hardening_security.sh: text the tools did not write themselves cannot inject anything
# (a database whose every text column is hostile: terminal escapes, markup, markdown, gnuplot
# commands and shell backquotes), the metrics endpoint listens on loopback unless told
# otherwise, and missing privileges stop capture and drops before any output is created.
. "$(dirname "$0")/../lib.sh"

T=$(tmpdir)
NS=hd-sec-$$
cleanup() {
	[ -n "${CAP_PID:-}" ] && kill "$CAP_PID" 2>/dev/null && wait "$CAP_PID" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
S="$TOP/samples/lossy-link"

# --- the report escapes everything it did not write itself ---
"$BIN/agentxdp-analyze" -q "$S/trace.pcapng" --topology "$S/links.csv" --paths "$S/paths.csv" \
	-o "$T/evil.db" 2>"$T/err" || fail "security: analyze the sample" "$(head -n 1 "$T/err")"
# Every TEXT column of every table gets the hostile string (plus the row id: some are unique).
n_cols=$(cd "$T" && python3 - evil.db <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
evil = ("<script>alert(1)</script><img src=x onerror=alert(2)>\"'&\x1b[2J\x1b]0;title\x07\r"
        "\nsystem('touch pwned-system')\n`touch pwned-backquote`|*_[x](javascript:alert(3))#")
n = 0
for (t,) in db.execute("select name from sqlite_master where type = 'table'").fetchall():
    for _cid, name, typ, *_ in db.execute(f'pragma table_info("{t}")').fetchall():
        if 'TEXT' in (typ or '').upper():
            db.execute(f'update "{t}" set "{name}" = ? || rowid', (evil,))
            n += 1
db.commit()
print(n)
PY
)
[ "${n_cols:-0}" -ge 10 ] && pass "security: $n_cols text columns made hostile" ||
	fail "security: hostile database" "only '${n_cols:-}' text columns"

cd "$T" || exit 1
"$BIN/agentxdp-report" evil.db -o rep >rep.txt 2>rep.err
expect_eq security-report-html-exit 0 $?
"$BIN/agentxdp-report" evil.db -f markdown >rep.md 2>>rep.err
expect_eq security-report-markdown-exit 0 $?
"$BIN/agentxdp-report" evil.db -f html >rep-stdout.html 2>>rep.err
expect_eq security-report-html-stdout-exit 0 $?

# no_controls NAME FILE...: no byte below 0x20 but newline/tab, no DEL (no ESC, no CR, no BEL).
no_controls() {
	local name=$1
	shift
	if LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]' "$@"; then
		fail "$name" "control characters in $(LC_ALL=C grep -lP '[\x00-\x08\x0b-\x1f\x7f]' "$@" | head -n 3 | tr '\n' ' ')"
	else
		pass "$name"
	fi
}
no_controls security-report-text-no-controls rep.txt rep.md rep.err
no_controls security-report-html-no-controls rep/index.html rep-stdout.html
grep -q 'script' rep.txt && pass security-report-text-shows-the-text ||
	fail security-report-text-shows-the-text "the hostile text vanished instead of being neutralized"
# HTML: no element or attribute from the database, and the text is there, escaped.
if grep -qiE '<script>alert|<img src=x|javascript:alert\(3\)\)\]' rep/index.html rep-stdout.html; then
	fail security-report-html-escaped "$(grep -oiE '.{20}(<script>alert|<img src=x).{10}' rep/index.html | head -n 1)"
else
	grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' rep/index.html && pass security-report-html-escaped ||
		fail security-report-html-escaped "escaped text not found"
fi
# Markdown: every markup character from the database is backslash-escaped, so no raw HTML,
# link or extra table cell comes through.
if LC_ALL=C grep -qP '(?<!\\)<script|(?<!\\)\[x\]\(javascript' rep.md; then
	fail security-report-markdown-escaped "$(LC_ALL=C grep -oP '.{10}(?<!\\)<script.{10}' rep.md | head -n 1)"
else
	grep -qF '\<script\>alert(1)\</script\>' rep.md && pass security-report-markdown-escaped ||
		fail security-report-markdown-escaped "escaped text not found"
fi
# Table rows keep their cell count: '|' from the database cannot add a column.
bad_rows=$(awk '/^\|---/ { r = $0; want = gsub(/\|/, "", r); rows++; next }
	/^\|/ && want { r = $0; gsub(/\\\|/, "", r); if (gsub(/\|/, "", r) != want) bad++; rows++ }
	/^$/ { want = 0 } END { print (rows ? bad + 0 : "no table") }' rep.md)
expect_eq security-report-markdown-cells 0 "$bad_rows"
# gnuplot ran on the chart scripts: nothing the database said was executed.
ls rep/charts/*.gp >/dev/null 2>&1 && pass security-report-charts-written ||
	fail security-report-charts-written "no gnuplot scripts in rep/charts"
if find "$T" -name 'pwned-*' | grep -q .; then
	fail security-report-nothing-executed "$(find "$T" -name 'pwned-*' | head -n 2 | tr '\n' ' ')"
else
	pass security-report-nothing-executed
fi
cd "$TOP" || exit 1

# --- privileges are checked up front: nothing created, one line ---
if ! need_root || ! command -v setpriv >/dev/null; then
	skip_or_fail_in_ci security-privileges "needs root and setpriv"
	exit "$T_FAILED"
fi
mkdir -m 0777 "$T/unpriv"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$BIN/agentxdp-capture" -i lo -w "$T/unpriv/c.pcapng" >/dev/null 2>"$T/cap.err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$T/cap.err")" -eq 1 ] && grep -q 'CAP_BPF' "$T/cap.err" &&
	[ ! -e "$T/unpriv/c.pcapng" ]; then
	pass security-capture-privileges-first
else
	fail security-capture-privileges-first "exit $rc, file $([ -e "$T/unpriv/c.pcapng" ] && echo created || echo absent): $(head -n 2 "$T/cap.err" | tr '\n' ' ')"
fi
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$BIN/agentxdp-drops" --duration 1s --db "$T/unpriv/d.db" >/dev/null 2>"$T/drops.err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$T/drops.err")" -eq 1 ] && [ ! -e "$T/unpriv/d.db" ]; then
	pass security-drops-privileges-first
else
	fail security-drops-privileges-first "exit $rc, db $([ -e "$T/unpriv/d.db" ] && echo created || echo absent): $(head -n 2 "$T/drops.err" | tr '\n' ' ')"
fi

# --- the metrics endpoint: loopback unless told otherwise ---
if ! ip netns add "$NS" 2>/dev/null; then
	skip_or_fail_in_ci security-metrics-bind "cannot create a network namespace"
	exit "$T_FAILED"
fi
ip -n "$NS" link set lo up
# listening ARGS...: the TCP listeners of agentxdp-capture --analyze ARGS in our namespace.
listening() {
	ip netns exec "$NS" "$BIN/agentxdp-capture" -q -i lo --analyze --duration 3s "$@" >/dev/null 2>"$T/m.err" &
	CAP_PID=$!
	local out=""
	for _ in $(seq 1 50); do
		out=$(ip netns exec "$NS" ss -ltnH | awk '{ print $4 }' | sort | tr '\n' ' ')
		[ -n "$out" ] && break
		sleep 0.1
	done
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
	CAP_PID=
	echo "${out% }"
}
expect_eq security-metrics-default-loopback "127.0.0.1:9476" "$(listening)"
expect_eq security-metrics-port-only-loopback "127.0.0.1:9477" "$(listening --metrics :9477)"
expect_eq security-metrics-told-otherwise "0.0.0.0:9478" "$(listening --metrics 0.0.0.0:9478)"
expect_eq security-metrics-ipv6-loopback "[::1]:9479" "$(listening --metrics '[::1]:9479')"
exit "$T_FAILED"
