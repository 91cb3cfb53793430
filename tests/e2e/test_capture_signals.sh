#!/usr/bin/env bash
# test_capture_signals.sh: kill -9 leaves no XDP program behind, nor packets only in memory
# for more than a second (-U: none); SIGINT/SIGTERM leave complete pcapng; an interface
# with someone else's XDP program is refused and keeps it; clear errors.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/capture_lib.sh"
cap_need_env capture-signals
cap_add_pair axcap-a axcap-b || { fail capture-signals "cannot create the veth pair"; exit 0; }
"$CAP_GEN" "$CAP_TMP/mix.pcap" 10000 || { fail capture-signals "gen_roce_pcap failed"; exit 0; }

# rx_pkts DEV: packets DEV has received (the veth counts what XDP passed up).
rx_pkts() { ip -n "$CAP_NS_RX" -s link show dev "$1" | awk '/RX:/ { getline; print $2; exit }'; }
# wait_traffic DEV: until 200 more packets arrived, so a signal lands during traffic, even under load.
wait_traffic() {
	local start
	start=$(rx_pkts "$1")
	for _ in $(seq 1 200); do
		[ $(($(rx_pkts "$1") - start)) -ge 200 ] && return 0
		sleep 0.05
	done
	return 1
}

xdp_id() { ip -n "$CAP_NS_RX" -d link show dev "$1" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -n 1; }

# kill -9 in the middle of traffic: the bpf_link dies with the process.
cap_start "$CAP_TMP/kill9.log" -i axcap-b -w "$CAP_TMP/kill9.pcapng"
if cap_wait_xdp axcap-b; then
	pass capture-attached-while-running
	cap_replay axcap-a "$CAP_TMP/mix.pcap" --pps 20000 &
	replay=$!
	wait_traffic axcap-b
	kill -9 "$CAP_PID"
	wait "$CAP_PID" 2>/dev/null
	wait "$replay"
	for _ in $(seq 1 200); do cap_has_xdp axcap-b || break; sleep 0.05; done
	if cap_has_xdp axcap-b; then
		fail capture-kill9-leaves-no-xdp "$(ip -n "$CAP_NS_RX" link show dev axcap-b | grep xdp)"
	else
		pass capture-kill9-leaves-no-xdp
	fi
	if ip netns exec "$CAP_NS_RX" bpftool net show dev axcap-b 2>/dev/null | grep -q "roce_capture"; then
		fail capture-kill9-bpftool-net "bpftool net still lists roce_capture"
	else
		pass capture-kill9-bpftool-net
	fi
else
	fail capture-attached-while-running "$(tail -n 2 "$CAP_TMP/kill9.log")"
fi

# A quiet link (20 packets/s) still reaches the file within a second: kill -9 after the
# traffic has stopped for 1.5 s loses nothing (the file used to stay at its headers until
# 256 KiB were buffered). With -U each packet is written at once.
n_first() { cap_tshark -r "$CAP_TMP/mix.pcap" -c "$1" -Y infiniband | wc -l; }
for mode in timer U; do
	out="$CAP_TMP/quiet-$mode.pcapng"
	if [ $mode = U ]; then
		cap_start "$CAP_TMP/quiet-$mode.log" -i axcap-b -w "$out" -U
		limit=40 pps=200 settle=0.5
	else
		cap_start "$CAP_TMP/quiet-$mode.log" -i axcap-b -w "$out"
		limit=40 pps=20 settle=1.5
	fi
	if ! cap_wait_xdp axcap-b; then
		fail "capture-flush-$mode" "did not attach: $(tail -n 1 "$CAP_TMP/quiet-$mode.log")"
		continue
	fi
	cap_replay axcap-a "$CAP_TMP/mix.pcap" --pps $pps --limit=$limit
	sleep $settle
	running=$($CAP_BLOCKS "$out" | wc -l)
	kill -9 "$CAP_PID"
	wait "$CAP_PID" 2>/dev/null
	after=$($CAP_BLOCKS "$out" | wc -l)
	sent=$(n_first $limit)
	expect_eq "capture-flush-$mode: file holds every packet while running, and after kill -9" \
		"$sent $sent" "$running $after"
	for _ in $(seq 1 100); do cap_has_xdp axcap-b || break; sleep 0.05; done
done

# SIGINT and SIGTERM during traffic: exit 0, the whole file reads back.
for sig in INT TERM; do
	out="$CAP_TMP/sig$sig.pcapng"
	cap_start "$CAP_TMP/sig$sig.log" -i axcap-b -w "$out"
	cap_wait_xdp axcap-b || { fail "capture-sig$sig" "did not attach"; continue; }
	cap_replay axcap-a "$CAP_TMP/mix.pcap" --pps 20000 &
	replay=$!
	wait_traffic axcap-b
	kill -$sig "$CAP_PID"
	wait "$CAP_PID"
	rc=$?
	wait "$replay"
	expect_eq "capture-sig$sig-exit-0" 0 "$rc"
	n=$($CAP_BLOCKS "$out" | wc -l)
	if $CAP_BLOCKS --blocks "$out" >"$CAP_TMP/sig.blocks" && [ "$n" -gt 0 ] && grep -q "^isb 0" "$CAP_TMP/sig.blocks"; then
		pass "capture-sig$sig-file-whole ($n packets, ends with statistics)"
	else
		fail "capture-sig$sig-file-whole" "$n packets; blocks: $(tail -n 1 "$CAP_TMP/sig.blocks")"
	fi
	nt=$(tshark -r "$out" 2>"$CAP_TMP/tshark.err" | wc -l)
	if [ "$nt" = "$n" ] && ! grep -qi "cut short\|error" "$CAP_TMP/tshark.err"; then
		pass "capture-sig$sig-tshark-reads-all"
	else
		fail "capture-sig$sig-tshark-reads-all" "tshark read $nt of $n: $(head -n 1 "$CAP_TMP/tshark.err")"
	fi
	cap_has_xdp axcap-b && fail "capture-sig$sig-detached" "XDP still attached" || pass "capture-sig$sig-detached"
done

# Someone else's program (attached with ip link): refused, named, kept.
dummy="$TOP/build/tests-bpf/xdp_dummy.bpf.o"
if ip -n "$CAP_NS_RX" link set dev axcap-b xdpgeneric obj "$dummy" sec xdp 2>"$CAP_TMP/ip.err"; then
	id=$(xdp_id axcap-b)
	ip netns exec "$CAP_NS_RX" "$CAP_BIN" -i axcap-b -w "$CAP_TMP/refused.pcapng" --duration 1s 2>"$CAP_TMP/refused.log"
	rc=$?
	expect_eq capture-refuses-foreign-xdp-exit-1 1 "$rc"
	if grep -q "axcap-b already runs XDP program id $id 'xdp_dummy' (generic mode); not replacing it" "$CAP_TMP/refused.log" &&
		[ "$(wc -l <"$CAP_TMP/refused.log")" -eq 1 ]; then
		pass capture-refuses-foreign-xdp-message
	else
		fail capture-refuses-foreign-xdp-message "$(cat "$CAP_TMP/refused.log")"
	fi
	expect_eq capture-foreign-xdp-kept "$id" "$(xdp_id axcap-b)"
	# The hint works: its command removes the program ("xdp off" would not touch a generic one on veth).
	hint=$(sed -n 's/.*remove it first, e.g. \(ip link set dev axcap-b [a-z]* off\))$/\1/p' "$CAP_TMP/refused.log")
	if [ -n "$hint" ] && ip -n "$CAP_NS_RX" ${hint#ip } && ! cap_has_xdp axcap-b; then
		pass "capture-foreign-xdp-hint-works ($hint)"
	else
		fail capture-foreign-xdp-hint-works "hint '$hint': $(cat "$CAP_TMP/refused.log")"
	fi
	ip -n "$CAP_NS_RX" link set dev axcap-b xdpgeneric off 2>/dev/null
else
	fail capture-refuses-foreign-xdp "cannot attach the dummy program: $(head -n 1 "$CAP_TMP/ip.err")"
fi

# A second capture on an interface the first one holds (through its bpf_link).
cap_start "$CAP_TMP/first.log" -i axcap-b -w "$CAP_TMP/first.pcapng"
first=$CAP_PID
if cap_wait_xdp axcap-b; then
	id=$(xdp_id axcap-b)
	ip netns exec "$CAP_NS_RX" "$CAP_BIN" -i axcap-b -w "$CAP_TMP/second.pcapng" --duration 1s 2>"$CAP_TMP/second.log"
	expect_eq capture-second-refused-exit-1 1 "$?"
	grep -q "already runs XDP program id $id 'roce_capture'" "$CAP_TMP/second.log" &&
		pass capture-second-refused-message || fail capture-second-refused-message "$(cat "$CAP_TMP/second.log")"
	expect_eq capture-first-still-attached "$id" "$(xdp_id axcap-b)"
	cap_replay axcap-a "$CAP_TMP/mix.pcap" --topspeed --limit=100
	sleep 0.3
	kill -INT "$first"
	wait "$first"
	n=$($CAP_BLOCKS "$CAP_TMP/first.pcapng" | wc -l)
	[ "$n" -gt 0 ] && pass "capture-first-kept-capturing ($n packets)" || fail capture-first-kept-capturing "no packets"
else
	fail capture-second-refused "first capture did not attach"
fi

# The hint for a program held by a bpf_link (ip link cannot remove it): bpftool detaches it.
cap_start "$CAP_TMP/held.log" -i axcap-b -w "$CAP_TMP/held.pcapng"
held=$CAP_PID
if cap_wait_xdp axcap-b; then
	ip netns exec "$CAP_NS_RX" "$CAP_BIN" -i axcap-b -w "$CAP_TMP/second2.pcapng" --duration 1s 2>"$CAP_TMP/second2.log"
	link=$(sed -n "s/.*it is held by bpf_link id \([0-9]*\): stop the process that owns it ('bpftool link show id \1' names it) or run 'bpftool link detach id \1')$/\1/p" \
		"$CAP_TMP/second2.log")
	if [ -z "$link" ]; then
		fail capture-bpf-link-hint "$(cat "$CAP_TMP/second2.log")"
	elif ip -n "$CAP_NS_RX" link set dev axcap-b xdp off 2>/dev/null && ! cap_has_xdp axcap-b; then
		fail capture-bpf-link-hint "ip link removed a bpf_link's program: the hint is not needed"
	elif bpftool link detach id "$link" && ! cap_has_xdp axcap-b; then
		pass "capture-bpf-link-hint-works (bpftool link detach id $link)"
	else
		fail capture-bpf-link-hint-works "still attached after bpftool link detach id $link"
	fi
	kill -INT "$held"
	wait "$held"
else
	fail capture-bpf-link-hint "capture did not attach"
fi

# One-line errors and exit codes.
ip netns exec "$CAP_NS_RX" "$CAP_BIN" -i axcap-nope -w "$CAP_TMP/x.pcapng" 2>"$CAP_TMP/err"
rc=$?
expect_eq capture-no-such-interface "1 agentxdp-capture: no such interface: axcap-nope" "$rc $(cat "$CAP_TMP/err")"
if command -v setpriv >/dev/null; then
	ip netns exec "$CAP_NS_RX" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$CAP_BIN" -i axcap-b -w /tmp/axcap-never.pcapng 2>"$CAP_TMP/err"
	rc=$?
	expect_eq capture-no-privileges "1 agentxdp-capture: needs CAP_BPF and CAP_NET_ADMIN to load and attach XDP programs (run as root)" \
		"$rc $(cat "$CAP_TMP/err")"
else
	skip capture-no-privileges "setpriv missing"
fi
usage() {
	"$CAP_BIN" "${@:2}" >/dev/null 2>"$CAP_TMP/err"
	local rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$1" "$CAP_TMP/err"; then pass "capture-usage: $1"; else
		fail "capture-usage: $1" "exit $rc: $(head -n 1 "$CAP_TMP/err")"
	fi
}
usage "no interface given" -w x.pcapng
usage "no output file given" -i lo
usage "invalid -c 'ten'" -i lo -w x -c ten
usage "invalid -s '9217'" -i lo -w x -s 9217
usage "invalid --mode 'fast'" -i lo -w x --mode fast
usage "filter: unexpected 'port'" -i lo -w x --filter 'port 4791'
usage "interface lo given twice" -i lo -i lo -w x
usage "-C and -G need a file name" -i lo -w - -C 1
exit 0
