#!/usr/bin/env bash
# test_testbed_impair.sh: loss, rate limit, CE marks and the firewall trap, each seen where it was applied.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/testbed_lib.sh"

tb_preflight testbed-impair || exit 0
OUT=$(tmpdir)
trap '"$TB" down >/dev/null 2>&1; rm -rf "$OUT"' EXIT
"$TB" down >/dev/null 2>&1
tb_snapshot >"$OUT/before"
if ! "$TB" up --backend emu "${TB_UP_ARGS[@]}" >"$OUT/up" 2>&1; then
	fail testbed-impair-up "$(tr '\n' ' ' <"$OUT/up")"
	exit 1
fi
ANALYZER=0
tb_analyzer_ready && ANALYZER=1

# Analyze a traffic capture DIR into DIR/out.db; 0 when the database was written.
# The captures to analyse: each host's ingress capture (two vantages), or tcpdump's.
caps_of() {
	if [ -f "$1/a.pcapng" ] && [ -f "$1/b.pcapng" ]; then CAPS=("$1/a.pcapng" "$1/b.pcapng"); else CAPS=("$1/b.pcap"); fi
}
analyze_dir() {
	caps_of "$1"
	"$BIN/agentxdp-analyze" -q "${CAPS[@]}" -o "$1/out.db" >"$1/analyze.out" 2>&1
	[ -s "$1/out.db" ]
}
# Retransmitted packets of requester flows from SRC: sum over the qp table.
retx_from() {
	sqlite3 "$1/out.db" "SELECT coalesce(sum(retransmitted_packets),0) FROM qp WHERE src_ip = '$2' AND role LIKE 'req%'"
}

# --- baseline (both ways, 4 KiB WRITEs), for the rate comparison ---
"$TB" traffic bw --bidir -D 2 -s 4096 -w "$OUT/base" >"$OUT/base.txt" 2>&1
base_p50=$(tb_stat t_p50_us)
base_retx=$(tb_stat retransmitted_pkts)
base_ops=$(tb_stat ops_completed)
[ "${base_ops:-0}" -gt 0 ] && pass "testbed-baseline ($base_ops ops, $base_retx retransmitted packets)" ||
	fail testbed-baseline "no operation completed"

# --- loss on a->b: retransmissions on a's requests; b's requests (b->a) barely touched ---
"$TB" impair a-b --loss 3% >"$OUT/impair-loss" 2>&1 || fail testbed-impair-loss "$(cat "$OUT/impair-loss")"
"$TB" traffic bw --bidir -D 2 -s 4096 -w "$OUT/loss" >"$OUT/loss.txt" 2>&1
a_retx=$(tb_stat retransmitted_pkts client)
b_retx=$(tb_stat retransmitted_pkts server)
drops=$(tb_stat local_drops client)
# The emulator's own counts: a retransmits; b only after an ACK lost at the very end of a
# window (a timeout), so far less.
# A loaded host can lose a few packets in socket buffers even unimpaired (the baseline's
# count): the impairment must dominate it.
if [ "${a_retx:-0}" -gt $((5 * ${base_retx:-0})) ] && [ "${drops:-0}" -gt 0 ] && [ "${b_retx:-0}" -lt $((a_retx / 5 + 1)) ]; then
	pass "testbed-loss-emulator-counts (a->b retransmitted $a_retx, b->a $b_retx, lost $drops)"
else
	fail testbed-loss-emulator-counts "a retransmitted ${a_retx:-?} (baseline ${base_retx:-?}), b ${b_retx:-?}, lost ${drops:-?}"
fi
if [ $ANALYZER = 1 ]; then
	if analyze_dir "$OUT/loss"; then
		ra=$(retx_from "$OUT/loss" $IP_A)
		rb=$(retx_from "$OUT/loss" $IP_B)
		if [ "${ra:-0}" -gt 0 ] && [ "${rb:-0}" -lt $((ra / 5 + 1)) ]; then
			pass "testbed-loss-analyze-direction (analyze: a->b flows $ra retransmissions, b->a $rb)"
		else
			fail testbed-loss-analyze-direction "analyze: a->b ${ra:-?}, b->a ${rb:-?} retransmissions"
		fi
	else
		fail testbed-loss-analyze-direction "agentxdp-analyze failed: $(head -n 2 "$OUT/loss/analyze.out")"
	fi
else
	skip_or_fail_in_ci testbed-loss-analyze-direction "agentxdp-analyze's analysis is not implemented in this tree"
fi
"$TB" impair --clear >/dev/null 2>&1

# --- rate limit on a->b: a queue on a's veth; the link is named, or at least latency grows ---
"$TB" impair a-b --rate 20mbit >"$OUT/impair-rate" 2>&1 || fail testbed-impair-rate "$(cat "$OUT/impair-rate")"
"$TB" traffic bw --bidir -D 2 -s 4096 >"$OUT/rate.txt" 2>&1
rate_mbs=$(sed -n '/BW peak/{n;p}' "$OUT/rate.txt" | head -n 1 | awk '{print $4}')
rate_p50=$(tb_stat t_p50_us)
# 20 mbit/s is 2.38 MB/s (2^20): a's average must not exceed it (a's ACKs share the link too).
if awk -v bw="$rate_mbs" 'BEGIN{exit !(bw > 0 && bw <= 20e6/8/1048576*1.05)}'; then
	pass "testbed-rate-limits (a->b $rate_mbs MB/s under a 20mbit bucket)"
else
	fail testbed-rate-limits "a->b ran at ${rate_mbs:-?} MB/s under a 20mbit bucket"
fi
# 32 WRITEs of 4 KiB in flight queue ~128 KiB behind the bucket: ~50 ms at 20 mbit/s, far
# above the unimpaired completion time even on a loaded host.
if awk -v b="$base_p50" -v r="$rate_p50" 'BEGIN{exit !(r > 2 * b && r > 20000)}'; then
	pass "testbed-rate-latency-increase (a's completion p50 $base_p50 -> $rate_p50 us)"
else
	fail testbed-rate-latency-increase "a's completion p50 $base_p50 -> $rate_p50 us"
fi
"$TB" impair --clear >/dev/null 2>&1

# Localization needs a before and an after: one capture, healthy for 2 s, then the bucket
# goes on a->b for 2 s more (a gray failure with an onset), analysed in 250 ms windows.
if [ $ANALYZER = 1 ]; then
	"$TB" traffic bw --bidir -D 4 -s 4096 -w "$OUT/onset" >"$OUT/onset.txt" 2>&1 &
	tpid=$!
	sleep 3 # set-up (~1 s) + 2 s of healthy traffic
	"$TB" impair a-b --rate 20mbit >/dev/null 2>&1
	wait $tpid
	"$TB" impair --clear >/dev/null 2>&1
	caps_of "$OUT/onset"
	"$BIN/agentxdp-analyze" -q --window 250ms "${CAPS[@]}" -o "$OUT/onset/out.db" >"$OUT/onset/analyze.out" 2>&1
	arc=$?
	nf=$(sqlite3 "$OUT/onset/out.db" "SELECT count(*) FROM finding" 2>/dev/null)
	if [ $arc -ge 128 ]; then
		# A crash is the analyzer's bug, not the testbed's; red under CI, reported here.
		mkdir -p /tmp/axtb-onset-crash && cp "${CAPS[@]}" /tmp/axtb-onset-crash/ 2>/dev/null
		skip_or_fail_in_ci testbed-rate-localized "agentxdp-analyze crashed (exit $arc: $(head -n 1 "$OUT/onset/analyze.out")) on the captures (copied to /tmp/axtb-onset-crash/); checked the latency increase instead"
	elif [ "${nf:-0}" -gt 0 ]; then
		sqlite3 -separator ' | ' "$OUT/onset/out.db" "SELECT rank, kind, subject_kind, subject, direction, severity_text FROM finding ORDER BY rank LIMIT 3" >"$OUT/onset/findings"
		# The impaired direction: a's host link, or a path or direction from a to b, or (one
		# host pair only: its two ends fit alike, issue #17 item 3) both hosts, on a's way out.
		top=$(sqlite3 -separator $'\t' "$OUT/onset/out.db" "SELECT subject_kind, subject, direction FROM finding ORDER BY rank LIMIT 1")
		if echo "$top" | awk -F'\t' -v a="$IP_A" -v b="$IP_B" '
			{ set = $1 == "set" && ($2 == a " | " b || $2 == b " | " a) && index($3, a " -> ") == 1
			  ok = ($2 == a) || ($2 == a " -> " b) || (index($3, a " -> " b) == 1) || set } END { exit !ok }'; then
			pass "testbed-rate-localized ($(head -n 1 "$OUT/onset/findings"))"
		else
			fail testbed-rate-localized "top finding does not name a->b: $(head -n 3 "$OUT/onset/findings" | tr '\n' ';')"
		fi
	else
		skip_or_fail_in_ci testbed-rate-localized "agentxdp-analyze wrote no finding for a 20mbit bucket switched on mid-capture; checked the latency increase instead"
	fi
else
	skip_or_fail_in_ci testbed-rate-localized "agentxdp-analyze's analysis is not implemented in this tree; checked the latency increase instead"
fi

# --- CE marks on b->a: a's responder sees CE on b's requests and sends CNPs to b ---
"$TB" impair b-a --ce 0.05 >/dev/null 2>&1
"$TB" traffic bw --bidir -D 1 -s 4096 >"$OUT/ce.txt" 2>&1
ce_at_a=$(tb_stat ce_received client)
cnps_at_b=$(tb_stat cnps_received server)
ce_at_b=$(tb_stat ce_received server)
if [ "${ce_at_a:-0}" -gt 0 ] && [ "${cnps_at_b:-0}" -gt 0 ] && [ "${ce_at_b:-1}" = 0 ]; then
	pass "testbed-ce-cnp (a saw $ce_at_a CE marks, b got $cnps_at_b CNPs, b saw no CE)"
else
	fail testbed-ce-cnp "CE at a ${ce_at_a:-?}, CNPs at b ${cnps_at_b:-?}, CE at b ${ce_at_b:-?}"
fi
"$TB" impair --clear >/dev/null 2>&1

# --- delay: netem where the kernel has it, a clear refusal otherwise ---
if "$TB" impair a-b --delay 5ms >"$OUT/delay" 2>&1; then
	"$TB" traffic lat -D 1 >"$OUT/delay.txt" 2>&1
	d50=$(tb_stat t_p50_us)
	awk -v d="$d50" 'BEGIN{exit !(d >= 5000)}' && pass "testbed-delay (p50 $d50 us with 5ms netem)" || fail testbed-delay "p50 $d50 us with 5 ms of delay"
	"$TB" impair --clear >/dev/null 2>&1
elif grep -q 'no netem' "$OUT/delay" && grep -q -- '--rate' "$OUT/delay"; then
	pass "testbed-delay-without-netem-says-so"
else
	fail testbed-delay "$(cat "$OUT/delay")"
fi

# --- the firewall trap: packets arrive, operations do not complete; verify says so ---
"$TB" impair a-b --firewall >/dev/null 2>&1
"$TB" verify -D 1 >"$OUT/verify" 2>&1
vrc=$?
cat "$OUT/verify"
if [ $vrc -ne 0 ] && grep -q 'PASS arrival' "$OUT/verify" && grep -q 'FAIL delivery' "$OUT/verify"; then
	pass testbed-firewall-verify-fails-on-delivery
else
	fail testbed-firewall-verify-fails-on-delivery "exit $vrc: $(grep -E 'PASS|FAIL' "$OUT/verify" | tr '\n' ' ')"
fi
if [ -x "$BIN/agentxdp-drops" ]; then
	grep -q -i 'netfilter' "$OUT/verify" && pass testbed-firewall-names-netfilter ||
		fail testbed-firewall-names-netfilter "verify's agentxdp-drops output does not name netfilter"
else
	grep -q 'agentxdp-drops is not built' "$OUT/verify" && pass testbed-firewall-says-drops-missing ||
		fail testbed-firewall-says-drops-missing "verify did not say agentxdp-drops is missing"
	skip_or_fail_in_ci testbed-firewall-names-netfilter "bin/agentxdp-drops is not built in this tree"
fi
"$TB" impair --clear >/dev/null 2>&1

"$TB" down >/dev/null 2>&1
tb_snapshot >"$OUT/after"
diff "$OUT/before" "$OUT/after" >"$OUT/diff" && pass testbed-impair-down-restores ||
	fail testbed-impair-down-restores "$(head -n 5 "$OUT/diff" | tr '\n' ' ')"
[ "$T_FAILED" -eq 0 ]
