#!/usr/bin/env bash
# test_report_fabric.sh: issue #21's report with a topology: the link and flow_link tables,
# the per-link table, the fabric picture (checked in the HTML and in a headless Chromium
# screenshot: the verdict's links in the alert colour, none on a healthy fabric), the heat
# map, charts that fit a 20 ms trace, and a verdict that is not green when nothing decoded.
. "$(dirname "$0")/../lib.sh"
R="$BIN/agentxdp-report"
A="$BIN/agentxdp-analyze"
S="$BIN/agentxdp-synth"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
ALERT=d62728 # FABRIC_ALERT_COLOUR in lib/report/report_fabric.h

if [ ! -x "$S" ] || [ ! -x "$A" ] || [ ! -x "$R" ]; then
	fail "report-fabric: the tools are needed" "bin/agentxdp-synth, -analyze or -report missing"
	exit 0
fi
make_db() { # NAME SYNTH-ARGS...: synthesize, analyze with the topology, leave $T/NAME.db
	local name=$1
	shift
	"$S" -o "$T/$name" "$@" >"$T/$name.synth.log" 2>&1 || return 1
	"$A" "$(ls "$T/$name"/trace.pcap* | head -n 1)" --topology "$T/$name/links.csv" \
		--paths "$T/$name/paths.csv" -o "$T/$name.db" >"$T/$name.analyze.log" 2>&1
	[ -s "$T/$name.db" ]
}
args=(--hosts 4 --leaves 2 --spines 2 --duration 20ms --snaplen 128 --seed 11)
if ! make_db healthy "${args[@]}" || ! make_db lossy "${args[@]}" --fault "link=leaf0-spine0,kind=loss,size=2%,onset=5ms"; then
	fail "report-fabric: synthesize and analyze" "$(tail -n 3 "$T"/*.log)"
	exit 0
fi

# --- the store: link and flow_link ---------------------------------------------------
n_links=$(grep -vc '^link,' "$T/lossy/links.csv")
got=$(sqlite3 "$T/lossy.db" "select count(*) from link")
expect_eq "report-fabric: one link row per links.csv link" "$n_links" "$got"
kinds=$(sqlite3 "$T/lossy.db" "select kind || ':' || count(*) from link group by kind order by kind" | tr '\n' ' ')
expect_eq "report-fabric: link kinds from the tiers" "host:4 leaf-spine:4 " "$kinds"
# Recorded paths: every flow between the leaves crosses two leaf-spine links, share 1 each.
bad=$(sqlite3 "$T/lossy.db" "select count(*) from (select fl.qp_id, total(fl.share) s, count(*) n from flow_link fl
  join link l on l.name = fl.link where l.kind = 'leaf-spine' group by fl.qp_id) where s <> 2 or n <> 2")
expect_eq "report-fabric: flow_link follows paths.csv (share 1)" 0 "$bad"
# Without paths.csv: spread over the 2 ECMP paths, share 0.5 on each spine's links.
"$A" "$(ls "$T/lossy"/trace.pcap* | head -n 1)" --topology "$T/lossy/links.csv" -o "$T/ecmp.db" >/dev/null 2>&1
shares=$(sqlite3 "$T/ecmp.db" "select distinct fl.share from flow_link fl join link l on l.name = fl.link
  where l.kind = 'leaf-spine'" | tr '\n' ' ')
expect_eq "report-fabric: flow_link spreads over ECMP paths (1/npaths)" "0.5 " "$shares"
"$A" "$(ls "$T/lossy"/trace.pcap* | head -n 1)" -o "$T/notopo.db" >/dev/null 2>&1
expect_eq "report-fabric: no topology, no links" 0 "$(sqlite3 "$T/notopo.db" 'select count(*) from link')"

# --- the report: per-link table and the fabric picture --------------------------------
"$R" "$T/lossy.db" -o "$T/rep" >"$T/lossy.txt" 2>"$T/err" && "$R" "$T/healthy.db" -o "$T/hrep" -q 2>>"$T/err" &&
	"$R" "$T/notopo.db" -o "$T/nrep" -q 2>>"$T/err" || fail "report-fabric: report -o" "$(cat "$T/err")"
rows=$(sed -n '/<table id="links">/,/<\/table>/p' "$T/rep/index.html" | grep -c '^<tr')
expect_eq "report-fabric: per_link_table in HTML, one row per link" "$n_links" "$rows"
rows=$(sed -n '/^LINKS/,/^$/p' "$T/lossy.txt" | grep -cE '^  [^ ]+ +(host|leaf-spine) ')
expect_eq "report-fabric: per_link_table in text" "$n_links" "$rows"
subject=$(sqlite3 "$T/lossy.db" "select subject from finding where level = 'alert' order by rank limit 1")
if [ -z "$subject" ]; then
	fail "report-fabric: the lossy fabric has an alert" "$(tail -n 3 "$T/lossy.analyze.log")"
else
	lines=$(grep -c '<line class="link"' "$T/rep/index.html")
	expect_eq "report-fabric: fabric_svg draws every link" "$n_links" "$lines"
	missing=""
	for l in ${subject//|/ }; do
		grep -q "<line class=\"link\" data-link=\"$l\" data-state=\"alert\"[^>]*stroke=\"#$ALERT\"" "$T/rep/index.html" ||
			missing="$missing $l"
	done
	[ -z "$missing" ] && pass "report-fabric: fabric_svg draws the verdict's links ($subject) in #$ALERT" ||
		fail "report-fabric: fabric_svg alert links" "not in the alert colour:$missing"
	n_alert=$(grep -c 'data-state="alert"' "$T/rep/index.html")
	n_members=$(echo "${subject//|/ }" | wc -w)
	expect_eq "report-fabric: fabric_svg, only the verdict's links in the alert colour" "$n_members" "$n_alert"
	grep -q "class=\"alert-label\"[^>]*>.*$(echo "$subject" | cut -d' ' -f1)" "$T/rep/index.html" &&
		pass "report-fabric: fabric_svg labels the verdict's link" || fail "report-fabric: alert label" "no label"
fi
# A host the verdict names is outlined in the alert colour (198.18.0.1 must not match .11).
cp "$T/lossy.db" "$T/host.db"
sqlite3 "$T/host.db" "update finding set subject = '198.18.0.11', subject_kind = 'host', kind = 'host' where rank = 1"
"$R" "$T/host.db" -f html >"$T/host.html" 2>/dev/null
outlined=$(grep -o '<rect class="node alert"[^>]*/><text[^>]*>[^<]*' "$T/host.html" | sed 's/.*>//' | tr '\n' ' ')
expect_eq "report-fabric: fabric_svg outlines the host the verdict names" "198.18.0.11 " "$outlined"
grep -q '<svg id="fabric"' "$T/hrep/index.html" && ! grep -q 'data-state="alert"' "$T/hrep/index.html" &&
	pass "report-fabric: healthy fabric drawn, no link in the alert colour" || fail "report-fabric: healthy fabric" "alert link or no picture"
grep -q 'id="fabric-none"' "$T/nrep/index.html" && ! grep -q '<table id="links">' "$T/nrep/index.html" &&
	pass "report-fabric: without topology, a sentence instead of the picture" || fail "report-fabric: no topology" "picture or link table"

# --- charts fit the trace: 20 ms in ms, throughput over the stored window --------------
win_ns=$(sqlite3 "$T/lossy.db" "select value from meta where key = 'window_ns'")
w=$(sed -n 's/^w = //p' "$T/rep/charts/throughput.gp")
awk -v w="$w" -v n="$win_ns" 'BEGIN {exit !(w > 0 && (w * 1e9 - n) ^ 2 < 1)}' &&
	pass "report-fabric: throughput divides by the stored window ($win_ns ns)" || fail "report-fabric: throughput window" "w=$w window_ns=$win_ns"
grep -q "set xlabel 'time since start of trace (ms)'" "$T/rep/charts/events_time.gp" &&
	pass "report-fabric: a 20 ms trace's time axis in ms" || fail "report-fabric: time unit" "$(grep xlabel "$T/rep/charts/events_time.gp")"
[ -s "$T/rep/charts/suspect_time_1.svg" ] && grep -q 'onset' "$T/rep/charts/suspect_time_1.gp" &&
	grep -q 'filledcurves' "$T/rep/charts/suspect_time_1.gp" &&
	pass "report-fabric: suspect over time with its peers' band and the onset" || fail "report-fabric: suspect chart" "missing"
# no_empty_chart: every chart the page shows exists, and every data file it plots has data.
empty=""
for img in $(grep -o '<img src="charts/[^"]*"' "$T/rep/index.html" | sed 's/.*src="//; s/"//'); do
	[ -s "$T/rep/$img" ] || empty="$empty $img"
	gp="$T/rep/${img%.*}.gp"
	for f in $(grep '^plot' "$gp" | grep -o "'[a-z_0-9]*\.dat'" | tr -d "'"); do
		[ "$(grep -cv '^#' "$T/rep/charts/$f")" -gt 0 ] || empty="$empty $f"
	done
done
n_img=$(grep -c '<img src="charts/' "$T/rep/index.html")
[ -z "$empty" ] && [ "$n_img" -ge 7 ] && pass "report-fabric: no_empty_chart ($n_img charts)" ||
	fail "report-fabric: no_empty_chart" "$n_img charts, empty:$empty"

# --- heat map: every pair, sorted by leaf, no samples distinct from healthy -------------
n_hosts=$(sqlite3 "$T/lossy.db" "select count(*) from (select src_ip from qp union select dst_ip from qp)")
n_rows=$(tail -n +2 "$T/rep/charts/heatmap.dat" | wc -l)
no_samples=$(sqlite3 "$T/lossy.db" "select $n_hosts * $n_hosts - count(*) from (select 1 from qp where ack_samples > 0
  group by src_ip, dst_ip)")
nan=$(tail -n +2 "$T/rep/charts/heatmap.dat" | tr ' ' '\n' | grep -c '^NaN$')
hatched=$(wc -l <"$T/rep/charts/heatmap_none.dat")
[ "$n_rows" -eq "$n_hosts" ] && [ "$nan" -eq "$no_samples" ] && [ "$hatched" -eq "$no_samples" ] &&
	pass "report-fabric: heat map, every host pair; $no_samples without samples hatched" ||
	fail "report-fabric: heat map pairs" "rows $n_rows/$n_hosts, NaN $nan, hatched $hatched, want $no_samples"
order=$(tail -n +2 "$T/rep/charts/heatmap.dat" | cut -d' ' -f1)
[ "$order" = "$(echo "$order" | sort)" ] && echo "$order" | grep -q '^leaf0/' &&
	pass "report-fabric: heat map rows sorted by leaf" || fail "report-fabric: heat map order" "$(echo $order)"
grep -q 'with image pixels' "$T/rep/charts/heatmap.gp" && grep -q 'set cbtics (' "$T/rep/charts/heatmap.gp" &&
	pass "report-fabric: heat map sharp cells, labelled scale" || fail "report-fabric: heat map style" "$(tail -n 3 "$T/rep/charts/heatmap.gp")"

# --- nothing decoded: the verdict is not green -------------------------------------------
python3 - "$T/dns.pcap" <<'PY'
import struct, sys
# 20 UDP frames to port 53: a capture of something that is not RoCE
out = open(sys.argv[1], 'wb')
out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
for i in range(20):
    payload = b'x' * 20
    udp = struct.pack('>HHHH', 40000 + i, 53, 8 + len(payload), 0) + payload
    ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), i, 0, 64, 17, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + udp
    frame = b'\x02' * 6 + b'\x04' * 6 + b'\x08\x00' + ip
    out.write(struct.pack('<IIII', 1700000000, i * 1000, len(frame), len(frame)) + frame)
PY
"$A" "$T/dns.pcap" -o "$T/dns.db" >/dev/null 2>&1
"$R" "$T/dns.db" >"$T/dns.txt" 2>&1 && "$R" "$T/dns.db" -f html >"$T/dns.html" 2>&1
grep -q 'class="verdict warn"' "$T/dns.html" && grep -A1 '^VERDICT' "$T/dns.txt" | grep -q 'None of the 20 frames' &&
	pass "report-fabric: nothing decoded, the verdict says so and is not green" ||
	fail "report-fabric: nothing decoded" "$(grep -o 'class="verdict [a-z]*"' "$T/dns.html") $(sed -n 5p "$T/dns.txt")"
grep -q 'class="verdict ok"' "$T/hrep/index.html" && pass "report-fabric: a decoded healthy fabric stays green" ||
	fail "report-fabric: healthy verdict colour" "$(grep -o 'class="verdict [a-z]*"' "$T/hrep/index.html")"

# --- headless Chromium: the picture is there and the bad link is drawn in the alert colour ---
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	skip_or_fail_in_ci "report-fabric: headless Chromium screenshot" "chromium not installed"
	exit 0
fi
shoot() { # DIR PNG: the top of DIR/index.html, where the verdict and the fabric are
	timeout 240 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --hide-scrollbars --window-size=1200,1100 \
		--user-data-dir="$T/ud-$(basename "$2")" --screenshot="$2" "file://$1/index.html" >/dev/null 2>&1
}
shoot "$T/rep" "$T/lossy.png"
shoot "$T/hrep" "$T/healthy.png"
if [ ! -s "$T/lossy.png" ] || [ ! -s "$T/healthy.png" ]; then
	fail "report-fabric: screenshot" "no PNG"
	exit 0
fi
read -r bad_px bad_colours < <(python3 "$(dirname "$0")/png_colour_count.py" "$T/lossy.png" "$ALERT")
read -r ok_px ok_colours < <(python3 "$(dirname "$0")/png_colour_count.py" "$T/healthy.png" "$ALERT")
[ "${bad_colours:-0}" -gt 20 ] && [ "${ok_colours:-0}" -gt 20 ] && pass "report-fabric: screenshots are not blank" ||
	fail "report-fabric: screenshots blank" "$bad_colours / $ok_colours colours"
# Both pages show the legend's alert swatch (26 x 6 px); the lossy one adds two thick links of
# ~150 px each: hundreds of pixels more.
[ "${bad_px:-0}" -gt $((${ok_px:-100000} + 500)) ] && [ "${ok_px:-100000}" -lt 400 ] &&
	pass "report-fabric: screenshot shows the bad link in the alert colour ($bad_px px; healthy $ok_px)" ||
	fail "report-fabric: screenshot alert colour" "lossy $bad_px px, healthy $ok_px px of #$ALERT"
