#!/usr/bin/env bash
# test_report.sh: agentxdp-report's CLI, its HTML in headless Chromium, and its verdicts.
. "$(dirname "$0")/../lib.sh"
R="$BIN/agentxdp-report"
A="$BIN/agentxdp-analyze"
S="$BIN/agentxdp-synth"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

# --- CLI ---------------------------------------------------------------------------
"$R" --help >"$T/help" 2>&1 && grep -q '^Examples:' "$T/help" && grep -q -- '--format' "$T/help" &&
	pass "report --help lists options and examples" || fail "report --help" "$(head -3 "$T/help")"
"$R" --bogus >/dev/null 2>"$T/err"
expect_eq "report: unknown option exits 2" 2 $?
"$R" --top 0 x.db >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && grep -q "invalid --top '0'" "$T/err" && pass "report: bad --top is a usage error" ||
	fail "report: bad --top" "rc=$rc $(cat "$T/err")"
"$R" "$T/missing.db" >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "No such file" "$T/err" &&
	pass "report: missing database, one line, exit 1" || fail "report: missing database" "rc=$rc $(cat "$T/err")"
echo "not a database" >"$T/junk.db"
"$R" "$T/junk.db" >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && pass "report: a non-database file, one line, exit 1" ||
	fail "report: non-database" "rc=$rc $(cat "$T/err")"
sqlite3 "$T/other.db" "create table t(x)"
"$R" "$T/other.db" >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "not an agentxdp analysis database" "$T/err" &&
	pass "report: a foreign SQLite database is named as such" || fail "report: foreign db" "rc=$rc $(cat "$T/err")"

# --- a database with a fault, to exercise every chart ---------------------------------
make_db() { # NAME SYNTH-ARGS...: synthesize, analyze, leave $T/NAME.db
	local name=$1
	shift
	"$S" -o "$T/$name" "$@" >"$T/$name.synth.log" 2>&1 || return 1
	local trace
	trace=$(ls "$T/$name"/trace.pcap* | head -n 1)
	"$A" "$trace" --topology "$T/$name/links.csv" --paths "$T/$name/paths.csv" -o "$T/$name.db" \
		>"$T/$name.analyze.log" 2>&1
}

if [ ! -x "$S" ]; then
	fail "report: agentxdp-synth is needed for the report tests" "bin/agentxdp-synth missing"
	exit 0
fi
if make_db healthy --hosts 4 --leaves 2 --spines 2 --duration 20ms --snaplen 128 --seed 11 &&
	make_db lossy --hosts 4 --leaves 2 --spines 2 --duration 20ms --snaplen 128 --seed 11 \
		--fault "link=leaf0-spine0,kind=loss,size=2%,onset=5ms"; then
	pass "report: synthesized a healthy and a lossy fabric"
else
	fail "report: synthesize and analyze" "$(tail -n 3 "$T"/*.log)"
	exit 0
fi

"$R" "$T/healthy.db" >"$T/healthy.txt" 2>"$T/err"
"$R" "$T/lossy.db" >"$T/lossy.txt" 2>>"$T/err"
grep -q "No slow or lossy link found" "$T/healthy.txt" && pass "report: healthy fabric, no slow link" ||
	fail "report: healthy verdict" "$(sed -n '4,6p' "$T/healthy.txt")"
! grep -q "No slow or lossy link found" "$T/lossy.txt" && grep -A1 '^VERDICT' "$T/lossy.txt" | grep -q "lossy" &&
	pass "report: lossy fabric, a lossy verdict" || fail "report: lossy verdict" "$(sed -n '4,6p' "$T/lossy.txt")"
# Every number in the text traces to the database.
want=$(sqlite3 "$T/lossy.db" "select sum(retransmitted_packets) from qp")
grep -q "; $want retransmitted," "$T/lossy.txt" && pass "report: totals equal the database's sums" ||
	fail "report: totals" "db says $want retransmitted"

# Markdown and HTML on stdout
"$R" "$T/lossy.db" --format markdown >"$T/lossy.md" && grep -q '^## Verdict' "$T/lossy.md" &&
	pass "report: markdown" || fail "report: markdown" "$(head -3 "$T/lossy.md")"

# --- the HTML report, opened in headless Chromium -------------------------------------
"$R" "$T/lossy.db" -o "$T/rep" -q 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && [ -s "$T/rep/index.html" ] && pass "report: -o writes index.html" ||
	fail "report: -o" "rc=$rc $(cat "$T/err")"
perm=$(stat -c %a "$T/rep/index.html")
[ "$perm" = 640 ] && pass "report: index.html is 0640" || fail "report: file mode" "$perm"
grep -qE '(src|href)="(https?:)?//' "$T/rep/index.html" && fail "report: loads nothing from the network" "found a remote URL" ||
	pass "report: loads nothing from the network"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	skip_or_fail_in_ci "report: headless Chromium" "chromium not installed"
else
	mkdir -p "$T/view"
	cp -r "$T/rep" "$T/view/rep"
	cat >"$T/view/harness.html" <<'HTML'
<!DOCTYPE html><html><body><iframe id="f" src="rep/index.html" width="1200" height="900"></iframe>
<pre id="out">pending</pre>
<script>
document.getElementById('f').onload = function () {
  var doc = this.contentDocument, lines = [];
  if (!doc) { document.getElementById('out').textContent = 'NO-ACCESS'; return; }
  for (var i = 0; i < doc.images.length; i++) {
    var im = doc.images[i];
    lines.push('IMG ' + im.getAttribute('src') + ' ' + im.complete + ' ' + im.naturalWidth + ' ' + im.naturalHeight);
  }
  lines.push('VERDICT ' + (doc.getElementById('verdict') || {textContent: 'missing'}).textContent);
  document.getElementById('out').textContent = '\n' + lines.join('\n') + '\nDONE\n';
};
</script></body></html>
HTML
	flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
		--disable-component-update --disable-sync --virtual-time-budget=15000)
	timeout 240 "$CHROMIUM" "${flags[@]}" --user-data-dir="$T/ud1" --allow-file-access-from-files \
		--dump-dom "file://$T/view/harness.html" >"$T/dom.html" 2>/dev/null
	n_img=$(grep -c '^IMG ' "$T/dom.html")
	bad_img=$(grep '^IMG ' "$T/dom.html" | awk '$3 != "true" || $4 < 200 || $5 < 150' | wc -l)
	[ "$n_img" -ge 5 ] && [ "$bad_img" -eq 0 ] && pass "report: Chromium loads all $n_img charts at a sensible size" ||
		fail "report: charts in Chromium" "$n_img images, $bad_img bad: $(grep -o "IMG.*\|pending\|NO-ACCESS" "$T/dom.html" | head -3)"
	grep -q '^VERDICT .*lossy' "$T/dom.html" && pass "report: Chromium shows the verdict" ||
		fail "report: verdict in Chromium" "$(grep VERDICT "$T/dom.html")"
	timeout 240 "$CHROMIUM" "${flags[@]}" --user-data-dir="$T/ud2" --hide-scrollbars --window-size=1200,2000 \
		--enable-logging=stderr --v=0 --screenshot="$T/shot.png" "file://$T/rep/index.html" 2>"$T/chrome.log" >/dev/null
	[ -s "$T/shot.png" ] && pass "report: screenshot taken" || fail "report: screenshot" "no PNG"
	if grep -E 'CONSOLE|Uncaught|Refused to' "$T/chrome.log" >/dev/null; then
		fail "report: no console error" "$(grep -E 'CONSOLE|Uncaught|Refused to' "$T/chrome.log" | head -2)"
	else
		pass "report: no console error"
	fi
fi

# Untrusted text is escaped: a database whose addresses carry markup.
cp "$T/lossy.db" "$T/evil.db"
sqlite3 "$T/evil.db" "update qp set src_ip = '<script>alert(1)</script>' where id = (select min(id) from qp);
  update finding set subject = '\"><img src=x onerror=alert(1)>' where rank = 1;"
"$R" "$T/evil.db" -o "$T/evil" -q --top 1000
if grep -q '<script>alert' "$T/evil/index.html" || grep -q '<img src=x' "$T/evil/index.html"; then
	fail "report: escapes trace text in HTML" "raw markup found"
else
	grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$T/evil/index.html" &&
		pass "report: escapes trace text in HTML" || fail "report: escape" "escaped text not found"
fi

# --- issue #21: the tables an SRE reads -------------------------------------------------
# per_host_table: one row per host of the database, in text, markdown and HTML, with the
# host a finding names counted (and 198.18.0.1 would not count for 198.18.0.10).
n_hosts=$(sqlite3 "$T/lossy.db" "select count(*) from (select src_ip from qp union select dst_ip from qp)")
rows=$(sed -n '/^HOSTS/,/^$/p' "$T/lossy.txt" | grep -cE '^  [0-9a-f.:]+ ')
[ "$n_hosts" -gt 1 ] && [ "$rows" -eq "$n_hosts" ] && pass "report: per_host_table in text ($rows hosts)" ||
	fail "report: per_host_table in text" "db has $n_hosts hosts, text shows $rows"
grep -q '^## Hosts' "$T/lossy.md" && pass "report: per_host_table in markdown" || fail "report: per_host_table in markdown" "no ## Hosts"
rows=$(sed -n '/<table id="hosts">/,/<\/table>/p' "$T/rep/index.html" | grep -c '^<tr')
[ "$rows" -eq "$n_hosts" ] && pass "report: per_host_table in HTML" || fail "report: per_host_table in HTML" "$rows rows for $n_hosts hosts"
host=$(sqlite3 "$T/lossy.db" "select src_ip from qp order by src_ip limit 1")
cp "$T/lossy.db" "$T/named.db"
sqlite3 "$T/named.db" "update finding set subject = '$host-leaf0', direction = '' where rank = 1"
"$R" "$T/named.db" >"$T/named.txt"
named=$(sed -n '/^HOSTS/,/^$/p' "$T/named.txt" | awk -v h="$host" '$1 == h {print $NF}')
others=$(sed -n '/^HOSTS/,/^$/p' "$T/named.txt" | awk -v h="$host" '$1 ~ /^[0-9]/ && $1 != h {s += $NF} END {print s + 0}')
[ "$named" = 1 ] && [ "$others" = 0 ] && pass "report: per_host_table counts the findings naming a host" ||
	fail "report: per_host_table findings" "$host: '$named', others: $others"

# evidence_table: each finding's evidence as tables (its numbers, then its flows, linked to
# the flow table), the stored JSON kept in a <details>.
ev_flows=$(sqlite3 "$T/lossy.db" "select json_array_length(evidence, '\$.flows') from finding where rank = 1")
ev_rate=$(sqlite3 "$T/lossy.db" "select json_extract(evidence, '\$.events') from finding where rank = 1")
rows=$(sed -n '/<table class="evidence-flows" id="evidence-1-flows">/,/<\/table>/p' "$T/rep/index.html" | grep -c '^<tr><td')
[ "${ev_flows:-0}" -gt 0 ] && [ "$rows" -eq "$ev_flows" ] && pass "report: evidence_table lists the finding's $rows flows" ||
	fail "report: evidence_table flows" "$rows rows, the evidence lists ${ev_flows:-none}"
sed -n '/id="evidence-1-numbers"/,/<\/table>/p' "$T/rep/index.html" | grep -q "<td class=\"l\">events</td><td class=\"l\">$ev_rate</td>" &&
	pass "report: evidence_table shows the finding's numbers" || fail "report: evidence_table numbers" "no events = $ev_rate row"
links=$(grep -o 'href="#qp-[0-9]*"' "$T/rep/index.html" | sed 's/href="#//; s/"//' | sort -u)
dangling=0
for l in $links; do grep -q "id=\"$l\"" "$T/rep/index.html" || dangling=$((dangling + 1)); done
[ -n "$links" ] && [ $dangling -eq 0 ] && pass "report: evidence_table links reach the flow table" ||
	fail "report: evidence_table links" "links: $(echo $links | wc -w), dangling $dangling"
grep -q '<details><summary>Evidence for finding 1 as stored (JSON)' "$T/rep/index.html" &&
	pass "report: evidence_table keeps the raw JSON" || fail "report: evidence_table raw JSON" "no <details>"
# Hostile evidence: markup in a key and a value is escaped; evidence that is not JSON still
# gives a page (raw, in the <details>).
cp "$T/lossy.db" "$T/evil_ev.db"
sqlite3 "$T/evil_ev.db" "update finding set evidence = '{\"<b>k</b>\":\"<script>x</script>\",\"flows\":[{\"id\":\"1<i>\"}]}' where rank = 1;
  insert into finding (rank, level, kind, subject_kind, subject, direction, severity, severity_text, confidence, flows_hurt, evidence)
  values (99, 'notice', 'slow', 'link', 'x', '', 1, 'x', 0.1, 0, '{not json');"
"$R" "$T/evil_ev.db" -o "$T/evil_ev" -q --top 1000 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] || grep -qE '<script>x|<b>k|1<i>' "$T/evil_ev/index.html"; then
	fail "report: evidence_table escapes hostile evidence" "rc=$rc $(cat "$T/err")"
else
	grep -q '&lt;b&gt;k&lt;/b&gt;' "$T/evil_ev/index.html" && grep -q '{not json' "$T/evil_ev/index.html" &&
		pass "report: evidence_table escapes hostile evidence" || fail "report: evidence_table hostile" "escaped key or raw text missing"
fi

# cdf_healthy_peers: the CDF's contrast is healthy flows (nearest the median p50, in no
# finding), so its median sits near the population's median flow p50.
med_p50=$(sqlite3 "$T/lossy.db" "select ack_latency_p50_us from qp where ack_samples > 0 order by ack_latency_p50_us
  limit 1 offset (select count(*) from qp where ack_samples > 0) / 2")
if [ -s "$T/rep/charts/cdf_healthy.dat" ] && grep -q "'cdf_healthy.dat'.*title 'healthy" "$T/rep/charts/latency_cdf.gp"; then
	h_med=$(awk '$2 >= 0.5 {print $1; exit}' "$T/rep/charts/cdf_healthy.dat")
	awk -v h="$h_med" -v m="$med_p50" 'BEGIN {exit !(h >= m / 2 && h <= m * 2)}' &&
		pass "report: cdf_healthy_peers median $h_med us near the flows' median p50 $med_p50 us" ||
		fail "report: cdf_healthy_peers" "healthy median $h_med us, flows' median p50 $med_p50 us"
else
	fail "report: cdf_healthy_peers" "no healthy series in latency_cdf.gp"
fi
# charts_not_empty: every data file a chart plots has data.
empty=""
for gp in "$T"/rep/charts/*.gp; do
	for f in $(grep '^plot' "$gp" | grep -o "'[a-z_0-9]*\.dat'" | tr -d "'"); do
		[ -s "$T/rep/charts/$f" ] || empty="$empty $(basename "$gp"):$f"
	done
done
[ -z "$empty" ] && pass "report: charts_not_empty" || fail "report: charts_not_empty" "empty:$empty"

# analyze_o_verdict (issue #21 item 2): after -o, analyze names the verdict, not only a count.
subj=$(sqlite3 "$T/lossy.db" "select kind || ' ' || subject from finding where level = 'alert' order by rank limit 1")
grep -qF "alert: $subj:" "$T/lossy.analyze.log" && grep -qF "details: agentxdp-report $T/lossy.db" "$T/lossy.analyze.log" &&
	pass "report: analyze_o_verdict names the alert ($subj)" || fail "report: analyze_o_verdict" "$(tail -n 3 "$T/lossy.analyze.log")"
n_alerts=$(sqlite3 "$T/healthy.db" "select count(*) from finding where level = 'alert'")
if [ "$n_alerts" -eq 0 ]; then
	grep -q "no slow or lossy link found" "$T/healthy.analyze.log" && pass "report: analyze_o_verdict, healthy" ||
		fail "report: analyze_o_verdict, healthy" "$(tail -n 3 "$T/healthy.analyze.log")"
fi
