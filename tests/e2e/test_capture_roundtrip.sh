#!/usr/bin/env bash
# test_capture_roundtrip.sh: RoCE traffic replayed over veth into a namespace comes out of
# agentxdp-capture (XDP on the receiving veth) as sent: header fields per packet, order, count,
# original lengths, captured bytes; nothing lost; pcapng blocks as documented.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/capture_lib.sh"
cap_need_env capture-roundtrip
cap_add_pair axcap-a axcap-b || { fail capture-roundtrip "cannot create the veth pair"; exit 0; }

# roundtrip NAME PCAP [capture options]: replay PCAP, capture, compare.
roundtrip() {
	local name=$1 pcap=$2 out="$CAP_TMP/$1.pcapng" log="$CAP_TMP/$1.log" rc n_sent n_got
	shift 2
	cap_start "$log" -i axcap-b -w "$out" "$@"
	if ! cap_wait_xdp axcap-b; then
		fail "$name" "capture did not attach: $(tail -n 2 "$log" | tr '\n' ' ')"
		return
	fi
	cap_replay axcap-a "$pcap" --topspeed || { fail "$name" "tcpreplay: $(tail -n 2 "$CAP_TMP/replay.log")"; return; }
	sleep 0.5
	kill -INT "$CAP_PID"
	wait "$CAP_PID"
	rc=$?
	expect_eq "$name-exit-status" 0 "$rc"

	# What went on the wire: tcpreplay sends the captured bytes, so the sent length is frame.cap_len.
	# Column 1 is the frame number (sent side: to pick the frames for the byte check).
	cap_tshark -r "$pcap" -Y infiniband -T fields -e frame.number -e frame.cap_len \
		$(echo "$CAP_FIELDS" | sed 's/-e frame.len//') >"$CAP_TMP/$name.sent-all"
	cap_tshark -r "$out" -Y infiniband -T fields -e frame.number $CAP_FIELDS >"$CAP_TMP/$name.got-all"
	cut -f 2- "$CAP_TMP/$name.sent-all" >"$CAP_TMP/$name.sent"
	cut -f 2- "$CAP_TMP/$name.got-all" >"$CAP_TMP/$name.got"
	cut -f 1 "$CAP_TMP/$name.sent-all" >"$CAP_TMP/$name.numbers"
	n_sent=$(wc -l <"$CAP_TMP/$name.sent")
	n_got=$(capinfos -Mc "$out" 2>/dev/null | sed -n 's/^Number of packets: *//p')
	if [ "$n_sent" -gt 0 ] && [ "$n_sent" = "$n_got" ]; then
		pass "$name-count ($n_sent RoCE packets)"
	else
		fail "$name-count" "sent $n_sent RoCE packets, capinfos counts $n_got captured"
	fi
	if cmp -s "$CAP_TMP/$name.sent" "$CAP_TMP/$name.got"; then
		pass "$name-headers-in-order"
	else
		fail "$name-headers-in-order" "$(diff "$CAP_TMP/$name.sent" "$CAP_TMP/$name.got" | head -n 3 | tr '\t\n' ' ')"
	fi

	# Bytes: each captured frame is the start of the sent frame, with its length as origlen.
	$CAP_BLOCKS "$pcap" | awk 'NR == FNR { want[$1] = 1; next } want[FNR] { print $3, $NF }' \
		"$CAP_TMP/$name.numbers" - >"$CAP_TMP/$name.sent-bytes"
	$CAP_BLOCKS "$out" >"$CAP_TMP/$name.got-blocks" || fail "$name-blocks" "file ends inside a block"
	if awk '{ print $4, $NF }' "$CAP_TMP/$name.got-blocks" | paste -d' ' - "$CAP_TMP/$name.sent-bytes" |
		awk '$1 != $3 || index($4, $2) != 1 { bad++ } END { exit bad > 0 || NR == 0 }'; then
		pass "$name-bytes-are-frame-prefixes"
	else
		fail "$name-bytes-are-frame-prefixes" "a captured frame is not the start of the sent one, or its origlen differs"
	fi
	# EPB options: inbound flag, RX queue 0 (veth has one queue), no drop count.
	if awk '$5 != 1 || $6 != 0 || $7 != "-" { exit 1 }' "$CAP_TMP/$name.got-blocks"; then
		pass "$name-epb-inbound-queue"
	else
		fail "$name-epb-inbound-queue" "$(awk '$5 != 1 || $6 != 0 || $7 != "-"' "$CAP_TMP/$name.got-blocks" | head -n 1 | cut -c1-60)"
	fi
	grep -q " 0 lost in the rings" "$log" && pass "$name-nothing-lost" ||
		fail "$name-nothing-lost" "$(grep lost "$log" | head -n 1)"
	CAP_LAST_OUT=$out
	CAP_LAST_NSENT=$n_sent
	CAP_LAST_LOG=$log
}

"$CAP_GEN" "$CAP_TMP/mix.pcap" 3000 || { fail capture-roundtrip "gen_roce_pcap failed"; exit 0; }
roundtrip capture-mix-headers "$CAP_TMP/mix.pcap"

# The file's blocks: SHB, one IDB (name, snaplen 328, ns timestamps), packets, ISB at close.
$CAP_BLOCKS --blocks "$CAP_LAST_OUT" >"$CAP_TMP/blocks"
grep -q "^shb hardware=.* os=Linux .* app=agentxdp-capture " "$CAP_TMP/blocks" && pass capture-shb ||
	fail capture-shb "$(head -n 1 "$CAP_TMP/blocks")"
expect_eq capture-idb "idb axcap-b linktype=1 snaplen=328 tsresol=9" "$(grep ^idb "$CAP_TMP/blocks")"
# The ISB counts every frame the program saw: the 3000 replayed plus what the kernel sent itself.
isb=$(grep "^isb 0" "$CAP_TMP/blocks" | tail -n 1)
recv=$(echo "$isb" | sed -n 's/.*recv=\([0-9]*\).*/\1/p')
if [ -n "$recv" ] && [ "$recv" -ge 3000 ] && echo "$isb" | grep -q "drop=0"; then
	pass "capture-isb-at-close ($isb)"
else
	fail capture-isb-at-close "last ISB '$isb', want recv >= 3000 and drop=0"
fi
# Timestamps: wall clock, within the test's run.
first=$(cap_tshark -r "$CAP_LAST_OUT" -c 1 -T fields -e frame.time_epoch | cut -d. -f1)
now=$(date +%s)
if [ -n "$first" ] && [ $((now - first)) -ge 0 ] && [ $((now - first)) -lt 120 ]; then
	pass capture-wall-clock-timestamps
else
	fail capture-wall-clock-timestamps "first packet at $first, now $now"
fi
grep -q "axcap-b (native): $CAP_LAST_NSENT captured, 0 lost" "$CAP_LAST_LOG" && pass capture-summary-per-interface ||
	fail capture-summary-per-interface "$(grep axcap-b "$CAP_LAST_LOG" | tail -n 1)"

# Whole frames with -s 0, large payloads, generic mode (replayed at top speed, as all here).
# A -s 0 record takes its frame's length (1,128 bytes here; until round 47 it reserved 9,216
# and the default 4 MiB ring per CPU held 453 of them, under the 480-frame burst). -B 16384
# keeps room for the whole burst on machines with up to 16 CPUs (1 MiB each).
"$CAP_GEN" "$CAP_TMP/big.pcap" 600 1024 || fail capture-roundtrip "gen_roce_pcap failed"
roundtrip capture-whole-frames-generic "$CAP_TMP/big.pcap" -s 0 --mode generic -B 16384
if $CAP_BLOCKS "$CAP_LAST_OUT" | awk '$3 != $4 { exit 1 }'; then
	pass capture-s0-keeps-whole-frames
else
	fail capture-s0-keeps-whole-frames "a packet's caplen differs from its origlen under -s 0"
fi

# A mirror session as a switch delivers it (#18): ERSPAN II around a synthesized incident,
# replayed over the veth. The program keeps every tunnelled RoCE frame, and the capture
# analyzes to the same flows as the plain trace of the same seed.
S_ARGS=(--format pcap --hosts 4 --leaves 2 --spines 2 --duration 2ms --snaplen 160 --seed 9)
if "$TOP/bin/agentxdp-synth" -q -o "$CAP_TMP/plain/trace.pcap" "${S_ARGS[@]}" &&
	"$TOP/bin/agentxdp-synth" -q -o "$CAP_TMP/erspan/trace.pcap" "${S_ARGS[@]}" --encap erspan2; then
	roundtrip capture-erspan2 "$CAP_TMP/erspan/trace.pcap"
	flows() { "$TOP/bin/agentxdp-analyze" -q "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
for f in sorted(d["flows"], key=lambda f: (f["src"], f["dst"], f["dst_qpn"])):
    print(f["src"], f["dst"], f["dst_qpn"], f["packets"])'; }
	flows "$CAP_TMP/plain/trace.pcap" >"$CAP_TMP/plain.flows"
	flows "$CAP_LAST_OUT" >"$CAP_TMP/erspan.flows"
	if [ -s "$CAP_TMP/plain.flows" ] && cmp -s "$CAP_TMP/plain.flows" "$CAP_TMP/erspan.flows"; then
		pass "capture-erspan2-same-flows ($(wc -l <"$CAP_TMP/plain.flows") flows as the plain trace)"
	else
		fail capture-erspan2-same-flows "$(diff "$CAP_TMP/plain.flows" "$CAP_TMP/erspan.flows" | head -n 3 | tr '\n' ' ')"
	fi
else
	fail capture-erspan2 "agentxdp-synth --encap erspan2 failed"
fi

# The synthesizer's samples, then public captures, when present.
for s in "$TOP"/samples/*.pcapng; do
	[ -f "$s" ] || continue
	roundtrip "capture-sample-$(basename "$s" .pcapng)" "$s"
done
if have_shared; then
	for s in rocev2_test.pcap rocev1_test.pcap; do
		f="$SHARED_CAPTURES/magnate3__linux-riscv-dev__$s"
		[ -f "$f" ] && roundtrip "capture-shared-${s%.pcap}" "$f" --mode native
	done
else
	skip capture-shared "../shared/captures absent"
fi
exit 0
