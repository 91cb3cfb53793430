# capture_lib.sh: netns/veth helpers for the agentxdp-capture end-to-end tests (sourced after lib.sh).
# Names carry the component tag "axcap" and the test's PID; everything goes in cap_cleanup.
CAP_BIN="$TOP/bin/agentxdp-capture"
CAP_GEN="$TOP/build/tests-bpf/gen_roce_pcap"
CAP_BLOCKS="python3 $TOP/tests/e2e/capture_blocks.py"
CAP_NS_TX="axcap-tx-$$"
CAP_NS_RX="axcap-rx-$$"
CAP_TMP=$(mktemp -d /tmp/axcap-test.XXXXXX)
CAP_PIDS=()

# tshark without the heuristic dissectors that steal RoCE payloads (../shared/captures/README.md).
cap_tshark() { tshark --disable-protocol rpcordma --disable-protocol nvme-rdma "$@" 2>/dev/null; }

cap_cleanup() {
	local p
	for p in "${CAP_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	ip netns del "$CAP_NS_TX" 2>/dev/null
	ip netns del "$CAP_NS_RX" 2>/dev/null
	rm -rf "$CAP_TMP"
}
trap cap_cleanup EXIT

# cap_need_env NAME: root, the binaries, tcpreplay and tshark, or SKIP (FAIL under CI) and exit.
cap_need_env() {
	local t
	if ! need_root; then skip_or_fail_in_ci "$1" "needs root (netns, XDP)"; exit 0; fi
	for t in "$CAP_BIN" "$CAP_GEN"; do
		[ -x "$t" ] || { fail "$1" "$t not built (make all)"; exit 0; }
	done
	for t in tcpreplay tshark capinfos python3 ip; do
		command -v $t >/dev/null || { skip_or_fail_in_ci "$1" "$t missing (scripts/deps.sh)"; exit 0; }
	done
}

# cap_add_pair TXDEV RXDEV: a veth pair, TXDEV in the sender namespace, RXDEV in the receiver's.
cap_add_pair() {
	ip netns list | grep -q "^$CAP_NS_TX\b" || ip netns add "$CAP_NS_TX"
	ip netns list | grep -q "^$CAP_NS_RX\b" || ip netns add "$CAP_NS_RX"
	ip link add "$1" netns "$CAP_NS_TX" type veth peer name "$2" netns "$CAP_NS_RX" || return 1
	ip -n "$CAP_NS_TX" link set "$1" up && ip -n "$CAP_NS_RX" link set "$2" up
}

# cap_wait_xdp DEV [SECONDS]: until an XDP program is attached to DEV in the receiver namespace.
cap_wait_xdp() {
	local i
	for i in $(seq 1 $((${2:-10} * 20))); do
		ip -n "$CAP_NS_RX" link show dev "$1" 2>/dev/null | grep -q "prog/xdp" && return 0
		sleep 0.05
	done
	return 1
}

cap_has_xdp() { ip -n "$CAP_NS_RX" link show dev "$1" 2>/dev/null | grep -q "prog/xdp"; }

# cap_start LOG ARGS...: agentxdp-capture in the receiver namespace, in the background.
cap_start() {
	local log=$1
	shift
	ip netns exec "$CAP_NS_RX" "$CAP_BIN" "$@" 2>"$log" &
	CAP_PID=$!
	CAP_PIDS+=("$CAP_PID")
}

# cap_replay DEV FILE [tcpreplay options]: send FILE from the sender namespace onto DEV.
cap_replay() {
	local dev=$1 file=$2
	shift 2
	ip netns exec "$CAP_NS_TX" tcpreplay -q -i "$dev" "$@" "$file" >"$CAP_TMP/replay.log" 2>&1
}

# Header fields compared packet by packet between what was sent and what was captured.
CAP_FIELDS="-e frame.len -e eth.src -e eth.dst -e vlan.id -e ip.src -e ip.dst -e ipv6.src -e ipv6.dst
 -e infiniband.grh.sgid -e infiniband.grh.dgid -e udp.srcport -e udp.dstport -e infiniband.bth.opcode
 -e infiniband.bth.se -e infiniband.bth.padcnt -e infiniband.bth.p_key -e infiniband.bth.destqp
 -e infiniband.bth.a -e infiniband.bth.psn -e infiniband.reth.va -e infiniband.reth.r_key
 -e infiniband.reth.dmalen -e infiniband.aeth.syndrome -e infiniband.aeth.msn -e infiniband.deth.q_key
 -e infiniband.deth.srcqp -e infiniband.immdt -e infiniband.ieth -e infiniband.atomiceth.swapdt
 -e infiniband.atomiceth.cmpdt -e infiniband.atomicacketh.origremdt"
# cap_fields FILE [display filter]: one line of header fields per RoCE packet.
cap_fields() { cap_tshark -r "$1" -Y "${2:-infiniband}" -T fields $CAP_FIELDS; }
