#!/usr/bin/env bash
# test_drops_e2e.sh: agentxdp-drops attributes real drops in a veth namespace pair.
# Sender namespace A, receiver namespace B. RoCE v2 packets (UDP dport 4791, a BTH in the
# payload) are dropped by iptables in B, or by a full tbf queue on A's egress; the tool's
# counts are checked against the numbers sent and received and against the counters of
# iptables and tc themselves. kfree_skb is global and other tests run at the same time, so
# every tool run is narrowed with --addr to this test's own addresses.
. "$(dirname "$0")/../lib.sh"
TOOL=$BIN/agentxdp-drops

if ! need_root; then
	skip_or_fail_in_ci drops-e2e "needs root for BPF and network namespaces"
	exit 0
fi
if [ ! -x "$TOOL" ]; then
	fail drops-e2e "$TOOL is not built"
	exit 1
fi
for cmd in ip iptables ip6tables tc jq sqlite3 python3; do
	if ! command -v "$cmd" >/dev/null; then
		skip_or_fail_in_ci drops-e2e "$cmd is missing (scripts/deps.sh installs it)"
		exit 0
	fi
done

id=$(($$ % 100000))
NS_A=axdrp_${id}_a
NS_B=axdrp_${id}_b
VETH_A=axdrp${id}a
VETH_B=axdrp${id}b
# Addresses nobody else picks: a random /30 in 198.18.0.0/15 and a random /112 in fd99::/64.
# kfree_skb sees every namespace, and this very test may run concurrently (each landing runs
# the whole suite), so the addresses carry the isolation: 32k choices.
b2=$((18 + RANDOM % 2))
b3=$((RANDOM % 255 + 1))
b4=$(((RANDOM % 63) * 4))
A4=198.$b2.$b3.$((b4 + 1))
B4=198.$b2.$b3.$((b4 + 2))
v6net=fd99::ad$(printf '%02x' $((b2 - 18))):$(printf '%x' $((b3 << 8 | b4)))
A6=$v6net:1
B6=$v6net:2
OTHER_PORT=$((20000 + RANDOM % 20000)) # a non-RoCE UDP port
TCP_PORT=$((OTHER_PORT + 1))
WORK=$(tmpdir)
PIDS=()

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

setup() {
	ip netns add "$NS_A" && ip netns add "$NS_B" &&
		ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B" &&
		ip -n "$NS_A" addr add "$A4/30" dev "$VETH_A" &&
		ip -n "$NS_B" addr add "$B4/30" dev "$VETH_B" &&
		ip -n "$NS_A" addr add "$A6/112" dev "$VETH_A" nodad &&
		ip -n "$NS_B" addr add "$B6/112" dev "$VETH_B" nodad &&
		ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up &&
		ip -n "$NS_A" link set "$VETH_A" up && ip -n "$NS_B" link set "$VETH_B" up || return 1
	# Static neighbours: no ARP/ND queueing, so no NEIGH_* drops of our own making.
	local mac_a mac_b
	mac_a=$(ip -n "$NS_A" -o link show "$VETH_A" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	mac_b=$(ip -n "$NS_B" -o link show "$VETH_B" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	ip -n "$NS_A" neigh replace "$B4" lladdr "$mac_b" dev "$VETH_A" nud permanent &&
		ip -n "$NS_A" neigh replace "$B6" lladdr "$mac_b" dev "$VETH_A" nud permanent &&
		ip -n "$NS_B" neigh replace "$A4" lladdr "$mac_a" dev "$VETH_B" nud permanent &&
		ip -n "$NS_B" neigh replace "$A6" lladdr "$mac_a" dev "$VETH_B" nud permanent
}

# send [--wait FILE] "JOB; JOB...": sends from A, in one python3 (started ahead with --wait,
# it sends the moment FILE appears). Jobs: "udp DST PORT COUNT SIZE" (RoCE v2 SEND ONLY
# datagrams: BTH opcode 0x04, dest QP 0x11, PSN i, padded to SIZE bytes), "icmp DST COUNT"
# (echo requests through a raw socket: there is no ping here), "tcp DST PORT" (one
# connection attempt given up after 1.2 s: a SYN and one retransmission). Prints the
# number sent by each udp job.
SENDER_PY='
import os, socket, struct, sys, time
def udp(dst, port, count, size):
    s = socket.socket(socket.AF_INET6 if ":" in dst else socket.AF_INET, socket.SOCK_DGRAM)
    sent = 0
    for psn in range(count):
        bth = struct.pack("!BBHII", 0x04, 0x40, 0xffff, 0x11, psn & 0xffffff)
        s.sendto(bth + bytes(max(0, size - len(bth))), (dst, port))
        sent += 1
    return sent
def csum(b):
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    t = (t >> 16) + (t & 0xffff)
    return ~(t + (t >> 16)) & 0xffff
def icmp(dst, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    for seq in range(count):
        body = struct.pack("!BBHHH", 8, 0, 0, 0x4242, seq) + b"axdrp-ping!!"
        s.sendto(body[:2] + struct.pack("!H", csum(body)) + body[4:], (dst, 0))
def tcp(dst, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(1.2)
    try:
        s.connect((dst, port))
    except OSError:
        pass
    s.close()
args = sys.argv[1:]
if args[0] == "--wait":
    deadline = time.time() + 120
    while not os.path.exists(args[1]) and time.time() < deadline:
        time.sleep(0.01)
    args = args[2:]
out = []
for job in " ".join(args).split(";"):
    w = job.split()
    if not w:
        continue
    if w[0] == "udp":
        out.append(str(udp(w[1], int(w[2]), int(w[3]), int(w[4]))))
    elif w[0] == "icmp":
        icmp(w[1], int(w[2]))
    elif w[0] == "tcp":
        tcp(w[1], int(w[2]))
print(" ".join(out))
'
send() {
	ip netns exec "$NS_A" python3 -c "$SENDER_PY" "$@"
}

# start_receiver PORT FILE: count datagrams on PORT in B until 1.5 s pass with none after
# the first (which it awaits up to 20 s); writes "ready" then the count to FILE.
start_receiver() {
	ip netns exec "$NS_B" python3 - "$1" "$2" <<'EOF' &
import socket, sys
port, path = int(sys.argv[1]), sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
s.bind(('0.0.0.0', port))
open(path, 'w').write('ready\n')
s.settimeout(20)
n = 0
try:
    s.recv(4096)
    n += 1
    s.settimeout(1.5)
    while True:
        s.recv(4096)
        n += 1
except socket.timeout:
    pass
open(path, 'w').write('%d\n' % n)
EOF
	RECEIVER_PID=$!
	PIDS+=("$RECEIVER_PID")
	for _ in $(seq 100); do grep -q ready "$2" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# start_drops NAME ARGS...: run the tool in the background, wait until it is counting.
start_drops() {
	local name=$1
	shift
	"$TOOL" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	local pid=$!
	PIDS+=("$pid")
	eval "PID_$name=$pid"
	for _ in $(seq 200); do
		grep -q 'counting kfree_skb drops' "$WORK/$name.err" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "agentxdp-drops $* did not start: $(cat "$WORK/$name.err")" >&2
	return 1
}

# stop_drops NAME [SIGNAL]: SIGINT or SIGNAL (the tool prints its final table), then its
# exit status.
stop_drops() {
	local pid
	eval "pid=\$PID_$1"
	kill -"${2:-INT}" "$pid" 2>/dev/null
	wait "$pid"
}

# final_count NAME REASON_REGEX: packets of the final JSON objects whose reason matches.
final_count() {
	jq -s --arg re "$2" '[.[] | select(.final and (.reason | test($re))) | .count] | add // 0' \
		"$WORK/$1.out"
}

# rule_pkts NS CMD CHAIN PORT: packets the DROP rule for PORT in CHAIN has counted.
rule_pkts() {
	ip netns exec "$1" "$2" -L "$3" -v -n -x | awk -v p="dpt:$4" '$3 == "DROP" && $0 ~ p { print $1 }'
}

if ! setup 2>"$WORK/setup.err"; then
	fail drops-e2e-setup "$(tr '\n' ' ' <"$WORK/setup.err")"
	exit 1
fi

# --- netfilter: RoCE over IPv4 and IPv6, and a non-RoCE port, rejected in B -----------
N4=40 N6=25 M=15
ip netns exec "$NS_B" iptables -A INPUT -p udp --dport 4791 -j DROP
ip netns exec "$NS_B" iptables -A INPUT -p udp --dport "$OTHER_PORT" -j DROP
ip netns exec "$NS_B" ip6tables -A INPUT -p udp --dport 4791 -j DROP
ip netns exec "$NS_B" iptables -A INPUT -p tcp --dport "$TCP_PORT" -j DROP
ip netns exec "$NS_B" iptables -A INPUT -p icmp --icmp-type echo-request -j DROP
ok=1
send --wait "$WORK/go" "udp $B4 4791 $N4 256; udp $B6 4791 $N6 256; udp $B4 $OTHER_PORT $M 256;
	icmp $B4 3; tcp $B4 $TCP_PORT" >"$WORK/sent" &
SENDER_PID=$!
PIDS+=("$SENDER_PID")
start_drops v4 --addr "$B4" --json --interval 300ms &&
	start_drops v6 --addr "$B6" --json &&
	start_drops all --all --addr "$B4" --json &&
	start_drops tcp --proto tcp --addr "$B4" --json &&
	start_drops icmp --proto icmp --addr "$B4" --json &&
	start_drops db --proto udp --port "$OTHER_PORT" --addr "$B4" --db "$WORK/drops.db" &&
	start_drops oneshot --addr "$B4" --duration 5s || ok=0
touch "$WORK/go" # the sender was waiting for this; it sends at once
wait "$SENDER_PID" || ok=0
read -r sent4 sent6 sent_other <"$WORK/sent"
if [ $ok = 1 ]; then
	sleep 0.3
	stop_drops v4 && stop_drops v6 TERM && stop_drops all && stop_drops db &&
		stop_drops tcp && stop_drops icmp || ok=0
	wait "$PID_oneshot" || ok=0 # --duration ends it by itself
fi
if [ $ok = 0 ]; then
	fail drops-netfilter "a tool run failed: $(cat "$WORK"/*.err | tr '\n' ' ')"
else
	nf4=$(rule_pkts "$NS_B" iptables INPUT 4791)
	nf6=$(rule_pkts "$NS_B" ip6tables INPUT 4791)
	nf_other=$(rule_pkts "$NS_B" iptables INPUT "$OTHER_PORT")
	nf_tcp=$(rule_pkts "$NS_B" iptables INPUT "$TCP_PORT")
	nf_icmp=$(ip netns exec "$NS_B" iptables -L INPUT -v -n -x | awk '$3 == "DROP" && /icmptype 8/ { print $1 }')
	# The rules' own counters are the independent truth; they must also match what we sent.
	expect_eq drops-sent-equals-iptables-v4 "$sent4" "$nf4"
	expect_eq drops-sent-equals-iptables-v6 "$sent6" "$nf6"
	expect_eq drops-netfilter-v4-count "$nf4" "$(final_count v4 '^NETFILTER_DROP$')"
	expect_eq drops-netfilter-v6-count "$nf6" "$(final_count v6 '^NETFILTER_DROP$')"
	expect_eq drops-netfilter-v4-nothing-else "$nf4" "$(final_count v4 .)"
	expect_eq drops-netfilter-v4-function-named "true" \
		"$(jq -s '[.[] | select(.final)] | all(.function != null and (.symbol | test("\\+0x")))' "$WORK/v4.out")"
	expect_eq drops-netfilter-v4-flows "udp/4791" \
		"$(jq -rs '[.[] | select(.final) | .flows[] | "\(.proto)/\(.dport)"] | unique | join(",")' "$WORK/v4.out")"
	expect_eq drops-interval-counts-grow "true" \
		"$(jq -s '[.[] | .count] as $c | ($c | length) > 0 and ($c == ($c | sort))' "$WORK/v4.out")"
	# Non-RoCE drops stay out by default, and are counted with --all.
	expect_eq drops-all-includes-other-port "$nf_other" \
		"$(jq -s --argjson p "$OTHER_PORT" '[.[] | select(.final and .reason == "NETFILTER_DROP") | .flows[] | select(.dport == $p) | .count] | add // 0' "$WORK/all.out")"
	expect_eq drops-all-includes-roce "$nf4" \
		"$(jq -s '[.[] | select(.final and .reason == "NETFILTER_DROP") | .flows[] | select(.dport == 4791) | .count] | add // 0' "$WORK/all.out")"
	# Protocol filters: each sees its own drops and nothing of the others'.
	expect_eq drops-tcp-count "$nf_tcp" "$(final_count tcp '^NETFILTER_DROP$')"
	expect_eq drops-tcp-nothing-else "$nf_tcp" "$(final_count tcp .)"
	expect_eq drops-icmp-count "$nf_icmp" "$(final_count icmp '^NETFILTER_DROP$')"
	expect_eq drops-icmp-nothing-else "$nf_icmp" "$(final_count icmp .)"
	expect_eq drops-icmp-flows "icmp/0" \
		"$(jq -rs '[.[] | select(.final) | .flows[] | "\(.proto)/\(.dport)"] | unique | join(",")' "$WORK/icmp.out")"
	if [ "${nf_tcp:-0}" -gt 0 ] && [ "${nf_icmp:-0}" -eq 3 ]; then pass drops-tcp-icmp-sent; else
		fail drops-tcp-icmp-sent "iptables saw $nf_tcp TCP SYNs and $nf_icmp echo requests (3 sent)"
	fi
	# The one-shot table: a NETFILTER_DROP row with the count.
	oneshot=$(awk '$2 == "NETFILTER_DROP" { print $1 }' "$WORK/oneshot.out")
	expect_eq drops-oneshot-table "$nf4" "$oneshot"
	[ "$oneshot" = "$nf4" ] || cat "$WORK/oneshot.out"
	check drops-oneshot-header grep -q "filter: udp dport 4791 addr $B4, .*(final)" "$WORK/oneshot.out"
	# The database: per-interval rows summing to the count, and the run's evidence row.
	expect_eq drops-db-rows "$nf_other|NETFILTER_DROP|udp|$OTHER_PORT" \
		"$(sqlite3 "$WORK/drops.db" 'SELECT SUM(count), reason, protocol, dport FROM kernel_drop GROUP BY reason, protocol, dport')"
	expect_eq drops-db-run "1|$nf_other|udp dport $OTHER_PORT addr $B4" \
		"$(sqlite3 "$WORK/drops.db" 'SELECT COUNT(*), MAX(drops_counted), MAX(filter) FROM kernel_drop_run WHERE end_ns >= start_ns')"
fi
ip netns exec "$NS_B" iptables -F INPUT
ip netns exec "$NS_B" ip6tables -F INPUT

# --- no drop: RoCE packets all delivered, nothing reported -------------------------------
if start_drops clean --addr "$B4" --json && start_receiver 4791 "$WORK/clean.count"; then
	sent=$(send "udp $B4 4791 30 256")
	wait "$RECEIVER_PID"
	received=$(cat "$WORK/clean.count")
	stop_drops clean
	expect_eq drops-clean-all-received "$sent" "$received"
	expect_eq drops-clean-nothing-reported "0" "$(wc -l <"$WORK/clean.out" | tr -d ' ')"
else
	fail drops-clean "could not start: $(cat "$WORK/clean.err" 2>/dev/null)"
fi

# --- socket: a receiver that does not read, with a small buffer, overflows ---------------
# The kernel drops what does not fit (SOCKET_RCVBUFF) and, from 6.12, names the socket.
ip netns exec "$NS_B" python3 - "$WORK/sock" <<'EOF' &
import os, socket, sys, time
path = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.bind(('0.0.0.0', 4791))
open(path + '.count', 'w').write('ready\n')
deadline = time.time() + 60
while not os.path.exists(path + '.drain') and time.time() < deadline:
    time.sleep(0.01)
s.settimeout(0.5)
n = 0
try:
    while True:
        s.recv(4096)
        n += 1
except socket.timeout:
    pass
open(path + '.count', 'w').write('%d\n' % n)
EOF
HOLDER_PID=$!
PIDS+=("$HOLDER_PID")
for _ in $(seq 100); do grep -q ready "$WORK/sock.count" 2>/dev/null && break; sleep 0.05; done
rcvbuf_errors() {
	ip netns exec "$NS_B" awk '$1 == "Udp:" && !h { for (i = 2; i <= NF; i++) col[$i] = i; h = 1; next }
		$1 == "Udp:" { print $col["RcvbufErrors"] }' /proc/net/snmp
}
errors_before=$(rcvbuf_errors)
if start_drops sock --addr "$B4" --json; then
	sent=$(send "udp $B4 4791 100 1000")
	touch "$WORK/sock.drain"
	wait "$HOLDER_PID"
	received=$(cat "$WORK/sock.count")
	stop_drops sock
	lost=$((sent - received))
	snmp_lost=$(($(rcvbuf_errors) - errors_before))
	if [ "$lost" -gt 0 ]; then pass drops-socket-some-lost; else
		fail drops-socket-some-lost "sent $sent, received $received: the buffer held everything"
	fi
	expect_eq drops-socket-snmp-agrees "$lost" "$snmp_lost"
	expect_eq drops-socket-count "$lost" "$(final_count sock '^SOCKET_RCVBUFF$')"
	expect_eq drops-socket-nothing-else "$lost" "$(final_count sock .)"
	# socket_count: the tracepoint's rx_sk argument (6.12+), seen in the kernel's own BTF.
	socket_count=$(jq -s '[.[] | select(.final) | .socket_count] | if any(. == null) then "null" else add end' "$WORK/sock.out")
	if bpftool btf dump file /sys/kernel/btf/vmlinux format c | grep -q 'btf_trace_kfree_skb)(.*struct sock \*)'; then
		expect_eq drops-socket-rx-sk "$lost" "$socket_count"
	else
		expect_eq drops-socket-rx-sk '"null"' "$socket_count"
	fi
else
	fail drops-socket "could not start: $(cat "$WORK/sock.err" 2>/dev/null)"
fi

# --- qdisc: a tbf on A's egress with a tiny queue drops most of a burst ------------------
ip netns exec "$NS_A" tc qdisc add dev "$VETH_A" root tbf rate 200kbit burst 1600 limit 3000
if start_drops qdisc --addr "$B4" --json && start_receiver 4791 "$WORK/qdisc.count"; then
	sent=$(send "udp $B4 4791 200 500")
	wait "$RECEIVER_PID" # returns after the queue drained and 1.5 s passed idle
	received=$(cat "$WORK/qdisc.count")
	stop_drops qdisc
	tc_dropped=$(ip netns exec "$NS_A" tc -s qdisc show dev "$VETH_A" | sed -n 's/.*(dropped \([0-9]*\),.*/\1/p')
	lost=$((sent - received))
	if [ "$lost" -gt 0 ]; then pass drops-qdisc-some-lost; else
		fail drops-qdisc-some-lost "sent $sent, received $received: tbf dropped nothing"
	fi
	expect_eq drops-qdisc-tc-agrees "$lost" "$tc_dropped"
	expect_eq drops-qdisc-count "$lost" "$(final_count qdisc '^QDISC_')"
	expect_eq drops-qdisc-nothing-else "$lost" "$(final_count qdisc .)"
else
	fail drops-qdisc "could not start: $(cat "$WORK/qdisc.err" 2>/dev/null)"
fi

[ "$T_FAILED" -eq 0 ]
