#!/usr/bin/env bash
# test_agent_live.sh: agent mode on real packets: agentxdp-capture --analyze on a veth in a
# namespace, RoCE traffic replayed into it, /metrics read on the namespace's loopback, findings
# the same as agentxdp-analyze makes of the same trace.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/capture_lib.sh"
cap_need_env agent-live
cd "$TOP"
S=samples/lossy-link
cap_add_pair axcap-ag0 axcap-ag1 || { fail agent-live "cannot create the veth pair"; exit 0; }
ip -n "$CAP_NS_RX" link set lo up

want=$("$BIN/agentxdp-analyze" "$S/trace.pcapng" --json 2>/dev/null)
want_pk=$(jq '.totals.packets' <<<"$want")
want_retx=$(jq '.totals.retransmitted_packets' <<<"$want")

"$CAP_BIN" -i lo --metrics 127.0.0.1:9 -w /dev/null >/dev/null 2>"$CAP_TMP/err"
[ $? -eq 2 ] && grep -q "need --analyze" "$CAP_TMP/err" && pass "agent-live: --metrics without --analyze is a usage error" ||
	fail "agent-live: usage" "$(cat "$CAP_TMP/err")"

cap_start "$CAP_TMP/agent.log" -i axcap-ag1 --analyze --metrics 127.0.0.1:9476 --interval 200ms
cap_wait_xdp axcap-ag1 || { fail agent-live "no XDP program attached: $(cat "$CAP_TMP/agent.log")"; exit 0; }
cap_replay axcap-ag0 "$S/trace.pcapng" --topspeed || { fail agent-live "tcpreplay: $(tail -n 2 "$CAP_TMP/replay.log")"; exit 0; }

got=""
for _ in $(seq 60); do
	ip netns exec "$CAP_NS_RX" curl -sf http://127.0.0.1:9476/metrics -o "$CAP_TMP/m.txt" &&
		got=$(awk '/^agentxdp_packets_total/ {s += $NF} END {print s + 0}' "$CAP_TMP/m.txt")
	[ "$got" = "$want_pk" ] && break
	sleep 0.25
done
expect_eq "agent-live: /metrics counts every replayed packet" "$want_pk" "$got"
got_retx=$(awk '/^agentxdp_retransmitted_packets_total/ {s += $NF} END {print s + 0}' "$CAP_TMP/m.txt")
expect_eq "agent-live: retransmissions as agentxdp-analyze counts them offline" "$want_retx" "$got_retx"
lost=$(awk '/^agentxdp_capture_lost_total/ {s += $NF} END {print s + 0}' "$CAP_TMP/m.txt")
expect_eq "agent-live: the capture lost nothing at this rate" 0 "$lost"
promtool check metrics <"$CAP_TMP/m.txt" >"$CAP_TMP/lint" 2>&1 && pass "agent-live: exposition passes promtool" ||
	fail "agent-live: promtool" "$(head -3 "$CAP_TMP/lint")"
kill -INT "$CAP_PID"
wait "$CAP_PID" 2>/dev/null
rc=$?
[ $rc -eq 0 ] && pass "agent-live: SIGINT stops the agent cleanly" || fail "agent-live: exit" "rc=$rc $(tail -3 "$CAP_TMP/agent.log")"
cap_has_xdp axcap-ag1 && fail "agent-live: XDP detached at exit" "still attached" || pass "agent-live: XDP detached at exit"
