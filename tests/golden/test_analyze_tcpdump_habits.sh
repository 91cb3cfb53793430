#!/usr/bin/env bash
# test_analyze_tcpdump_habits.sh: issue #21 item 3, agentxdp-analyze with tcpdump's habits:
# -r FILE (repeatable), -c COUNT, a pcap-filter expression that selects what tcpdump selects,
# --qp, and --dump's -t time formats.
. "$(dirname "$0")/../lib.sh"

A=$BIN/agentxdp-analyze
[ -x "$A" ] || { fail analyze-habits "$A not built"; exit 1; }
[ -x "$BIN/agentxdp-synth" ] || { skip analyze-habits "bin/agentxdp-synth not built"; exit 0; }
dir=$(tmpdir)
trap 'rm -rf "$dir"' EXIT
"$BIN/agentxdp-synth" -q -o "$dir/syn" --duration 2ms --seed 5 \
	--fault link=leaf0-spine1,kind=loss,size=2% >/dev/null 2>&1 || { fail analyze-habits "synth failed"; exit 1; }
t=$dir/syn/trace.pcapng
FILTER='host 198.18.0.11 and udp port 4791'
# A dump without its frame numbers (renumbered when tcpdump passes a selection on) and times.
lines() { "$A" --dump -t "$@" 2>/dev/null | cut -d' ' -f2-; }

# -r FILE is the positional TRACE; repeated, several traces; '-r -' is standard input.
"$A" --dump "$t" >"$dir/pos" 2>/dev/null
"$A" --dump -r "$t" >"$dir/r" 2>"$dir/err"
rc=$?
if [ $rc -eq 0 ] && [ -s "$dir/pos" ] && cmp -s "$dir/pos" "$dir/r"; then
	pass "analyze-habits -r FILE ($(wc -l <"$dir/r") lines, as the positional trace)"
else
	fail "analyze-habits -r FILE" "rc=$rc: $(head -n 1 "$dir/err")"
fi
"$A" --dump "$t" "$t" >"$dir/pos2" 2>/dev/null
"$A" --dump -r "$t" --read "$t" >"$dir/r2" 2>/dev/null
"$A" --dump -r - <"$t" >"$dir/rstdin" 2>/dev/null
if cmp -s "$dir/pos2" "$dir/r2" && [ "$(wc -l <"$dir/r2")" -eq $((2 * $(wc -l <"$dir/pos"))) ] &&
	cmp -s "$dir/pos" "$dir/rstdin"; then
	pass "analyze-habits -r repeated and -r -"
else
	fail "analyze-habits -r repeated and -r -" "$(wc -l <"$dir/r2") vs $(wc -l <"$dir/pos2") lines"
fi

if ! command -v tcpdump >/dev/null; then
	skip analyze-habits-tcpdump "no tcpdump to compare the selection with"
else
	# The filter selects exactly the packets tcpdump selects: the same dump lines...
	tcpdump -r "$t" -w - "$FILTER" 2>/dev/null | lines - >"$dir/td"
	lines -r "$t" "$FILTER" >"$dir/ours"
	n=$(wc -l <"$dir/ours")
	if [ "$n" -gt 0 ] && [ "$n" -lt "$(wc -l <"$dir/pos")" ] && cmp -s "$dir/td" "$dir/ours"; then
		pass "analyze-habits filter = tcpdump's selection ($n of $(wc -l <"$dir/pos") packets)"
	else
		fail "analyze-habits filter = tcpdump's selection" "$n lines vs tcpdump's $(wc -l <"$dir/td")"
	fi
	lines --pcap-filter "$FILTER" "$t" >"$dir/pf"
	if [ "$n" -gt 0 ] && cmp -s "$dir/pf" "$dir/ours"; then pass "analyze-habits --pcap-filter"; else
		fail "analyze-habits --pcap-filter" "$(wc -l <"$dir/pf") lines vs $n"; fi
	# ...and the same analysis, also with -c (tcpdump -c: the first N frames selected).
	if command -v jq >/dev/null; then
		sum() { jq -c '[.totals.packets, (.flows | length), ([.flows[].packets] | add)]' "$1"; }
		tcpdump -r "$t" -w - "$FILTER" 2>/dev/null | "$A" -q --window 1ms --json - >"$dir/td.json"
		"$A" -q --window 1ms --json -r "$t" "$FILTER" >"$dir/ours.json"
		tcpdump -r "$t" -c 300 -w - "$FILTER" 2>/dev/null | "$A" -q --window 1ms --json - >"$dir/tdc.json"
		# shellcheck disable=SC2086 # FILTER as separate words, joined as tcpdump joins them
		"$A" -q --window 1ms --json -c 300 -r "$t" $FILTER >"$dir/oursc.json"
		if [ "$(sum "$dir/td.json")" = "$(sum "$dir/ours.json")" ] &&
			[ "$(sum "$dir/tdc.json")" = "$(sum "$dir/oursc.json")" ] &&
			[ "$(jq .totals.packets "$dir/oursc.json")" = 300 ]; then
			pass "analyze-habits analysis of the selection = tcpdump's ($(sum "$dir/ours.json"), -c 300: $(sum "$dir/oursc.json"))"
		else
			fail "analyze-habits analysis of the selection" \
				"$(sum "$dir/ours.json") vs $(sum "$dir/td.json"); -c: $(sum "$dir/oursc.json") vs $(sum "$dir/tdc.json")"
		fi
	fi
	tcpdump -r "$t" -c 7 -w - 2>/dev/null | lines - >"$dir/tdc"
	lines -c 7 "$t" >"$dir/oursc"
	if [ "$(wc -l <"$dir/oursc")" -eq 7 ] && cmp -s "$dir/tdc" "$dir/oursc"; then
		pass "analyze-habits --dump -c 7"
	else
		fail "analyze-habits --dump -c 7" "$(wc -l <"$dir/oursc") lines"
	fi
fi

# A raw-IP trace (link type 101, the synthesizer's frames without their Ethernet header): the
# filter is compiled for that link type, and one that cannot apply to it is one error, exit 1.
if command -v tcpdump >/dev/null && command -v python3 >/dev/null &&
	"$BIN/agentxdp-synth" -q -o "$dir/synp" --duration 1ms --seed 3 --format pcap >/dev/null 2>&1; then
	python3 - "$dir/synp/trace.pcap" "$dir/raw.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
out = bytearray(d[:20] + struct.pack('<I', 101))
o = 24
while o + 16 <= len(d):
    ts, tf, cl, ol = struct.unpack('<IIII', d[o:o + 16])
    out += struct.pack('<IIII', ts, tf, cl - 14, ol - 14) + d[o + 30:o + 16 + cl]
    o += 16 + cl
open(sys.argv[2], 'wb').write(out)
PY
	tcpdump -r "$dir/raw.pcap" -w - src host 198.18.0.10 2>/dev/null | lines - >"$dir/rawtd"
	lines -r "$dir/raw.pcap" src host 198.18.0.10 >"$dir/rawours"
	n=$(wc -l <"$dir/rawours")
	if [ "$n" -gt 0 ] && [ "$n" -lt "$("$A" --dump "$dir/raw.pcap" 2>/dev/null | wc -l)" ] &&
		cmp -s "$dir/rawtd" "$dir/rawours"; then
		pass "analyze-habits filter over raw IP = tcpdump's selection ($n packets)"
	else
		fail "analyze-habits filter over raw IP" "$n lines vs tcpdump's $(wc -l <"$dir/rawtd")"
	fi
	"$A" -q -r "$dir/raw.pcap" ether host 02:00:00:00:00:01 -o "$dir/raw.db" 2>"$dir/err"
	rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <"$dir/err")" -eq 1 ] && grep -q "cannot apply to link type 12" "$dir/err"; then
		pass "analyze-habits filter not for the link type ($(cut -c1-80 "$dir/err"))"
	else
		fail "analyze-habits filter not for the link type" "rc=$rc: $(head -n 2 "$dir/err")"
	fi
else
	skip analyze-habits-raw-ip "needs tcpdump and python3"
fi

# A filter libpcap cannot compile, a bad -c or --qp, -t without --dump: exit 2, one line saying so.
while IFS='|' read -r args why; do
	args=${args//TRACE/$t}
	# shellcheck disable=SC2086 # the words are the command line
	"$A" $args >/dev/null 2>"$dir/err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$dir/err")" -eq 1 ] && grep -qF -- "$why" "$dir/err"; then
		pass "analyze-habits usage error '${args/$t/TRACE}' ($(cut -c1-70 "$dir/err"))"
	else
		fail "analyze-habits usage error '${args/$t/TRACE}'" "rc=$rc: $(head -n 2 "$dir/err")"
	fi
done <<'CASES'
-r TRACE hots 10.0.0.4|filter 'hots 10.0.0.4': can't parse filter expression
-c 0 TRACE|invalid --count '0'
-c many TRACE|invalid --count 'many'
-t TRACE|-t sets --dump's time column
--qp 0x1000000 TRACE|invalid --qp '0x1000000'
-r TRACE --pcap-filter tcp udp|a FILTER after the options and --pcap-filter
CASES

# --qp: only the packets to that destination QP, as many as the whole dump shows.
qp=$(sed -n '1s/.* QP=\(0x[0-9a-f]*\) .*/\1/p' "$dir/pos")
"$A" --dump --qp "$qp" "$t" >"$dir/qp" 2>/dev/null
nqp=$(wc -l <"$dir/qp")
if [ "$nqp" -gt 0 ] && [ "$nqp" = "$(grep -c " QP=$qp " "$dir/pos")" ] && ! grep -qv " QP=$qp " "$dir/qp" &&
	grep -F -f "$dir/qp" -x -c "$dir/pos" | grep -qx "$nqp"; then
	pass "analyze-habits --qp $qp ($nqp packets)"
else
	fail "analyze-habits --qp $qp" "$nqp lines, $(grep -c " QP=$qp " "$dir/pos") in the whole dump"
fi
if command -v jq >/dev/null; then
	"$A" -q --window 1ms --json --qp "$qp" "$t" >"$dir/qp.json" 2>/dev/null
	want=$((16#${qp#0x}))
	if [ "$(jq "[.flows[] | select(.dst_qpn != $want)] | length" "$dir/qp.json")" = 0 ] &&
		[ "$(jq '.flows | length' "$dir/qp.json")" -gt 0 ]; then
		pass "analyze-habits --qp analysis holds only QP $qp"
	else
		fail "analyze-habits --qp analysis" "$(jq -c '[.flows[].dst_qpn]' "$dir/qp.json" | cut -c1-80)"
	fi
fi

# Time formats: -tt seconds since the epoch, the default since the first packet, -ttt since the
# previous line, -tttt the date (TZ=UTC here), -t none. Compared in integer nanoseconds.
ns() { local s=${1%.*} f=${1#*.}; [[ $1 =~ ^[0-9]+\.[0-9]{9}$ ]] && echo $((s * 1000000000 + 10#$f)) || echo -1; }
"$A" --dump -c 50 "$t" 2>/dev/null | cut -d' ' -f2 >"$dir/rel"
"$A" --dump -tt -c 50 "$t" 2>/dev/null | cut -d' ' -f2 >"$dir/epoch"
"$A" --dump -ttt -c 50 "$t" 2>/dev/null | cut -d' ' -f2 >"$dir/delta"
"$A" --dump -ttttt -c 50 "$t" 2>/dev/null | cut -d' ' -f2 >"$dir/rel5"
TZ=UTC "$A" --dump -tttt -c 50 "$t" 2>/dev/null | cut -d' ' -f2,3 >"$dir/date"
bad=""
first=$(ns "$(head -n 1 "$dir/epoch")")
prev=$first
i=0
while read -r e && read -r r <&3 && read -r d <&4 && read -r dt <&5; do
	i=$((i + 1))
	e=$(ns "$e")
	[ $((e - first)) -eq "$(ns "$r")" ] || bad="$bad rel@$i"
	want_d=$((e - prev)); [ $want_d -lt 0 ] && want_d=0
	[ "$want_d" -eq "$(ns "$d")" ] || bad="$bad delta@$i"
	[ "$dt" = "$(date -u -d "@$((e / 1000000000))" '+%Y-%m-%d %H:%M:%S').$(printf %09d $((e % 1000000000)))" ] ||
		bad="$bad date@$i"
	prev=$e
done <"$dir/epoch" 3<"$dir/rel" 4<"$dir/delta" 5<"$dir/date"
if [ "$i" -eq 50 ] && [ -z "$bad" ] && [ "$first" -gt 1000000000000000000 ] && cmp -s "$dir/rel" "$dir/rel5"; then
	pass "analyze-habits --dump -tt/-ttt/-tttt/-ttttt (50 lines)"
else
	fail "analyze-habits --dump time formats" "$i lines, first $first, wrong:$(cut -c1-80 <<<"$bad")"
fi
if "$A" --dump -t -c 1 "$t" 2>/dev/null | grep -qE '^1 198\.18\.[0-9.]+ -> '; then
	pass "analyze-habits --dump -t (no time column)"
else
	fail "analyze-habits --dump -t" "$("$A" --dump -t -c 1 "$t" 2>/dev/null)"
fi
exit 0
