#!/usr/bin/env bash
# bench_drops.sh: what agentxdp-drops costs the kernel per kfree_skb event, and whether its
# count of a known number of drops is exact. Run time comes from the kernel's own BPF run
# statistics (BPF_ENABLE_STATS, held only while measuring), over every kfree_skb event of
# the host during the run; the peer of each filter is the other filter, measured alike.
set -u
cd "$(dirname "$0")/../.."
TOOL=bin/agentxdp-drops
N=${DROPS_BENCH_PKTS:-20000}
if [ "$(id -u)" -ne 0 ] || [ ! -x "$TOOL" ]; then
	echo "| agentxdp-drops BPF cost | not measured: needs root and bin/agentxdp-drops | | bash tests/bench/bench_drops.sh |"
	exit 0
fi
id=$(($$ % 100000))
NS_A=axdrp_${id}_ba
NS_B=axdrp_${id}_bb
VA=axdrp${id}x
VB=axdrp${id}y
b3=$((RANDOM % 255 + 1))
A4=198.19.$b3.253
B4=198.19.$b3.254
WORK=$(mktemp -d /tmp/agentxdp-bench.XXXXXX)
cleanup() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$NS_A" && ip netns add "$NS_B" &&
	ip link add "$VA" netns "$NS_A" type veth peer name "$VB" netns "$NS_B" &&
	ip -n "$NS_A" addr add "$A4/30" dev "$VA" && ip -n "$NS_B" addr add "$B4/30" dev "$VB" &&
	ip -n "$NS_A" link set "$VA" up && ip -n "$NS_B" link set "$VB" up &&
	ip netns exec "$NS_B" iptables -A INPUT -p udp --dport 4791 -j DROP || exit 1
mac_b=$(ip -n "$NS_B" -o link show "$VB" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
ip -n "$NS_A" neigh replace "$B4" lladdr "$mac_b" dev "$VA" nud permanent

# measure ARGS...: runs the tool with ARGS while N RoCE datagrams are dropped by iptables;
# prints "ns_per_event events counted".
measure() {
	python3 - "$TOOL" "$NS_A" "$B4" "$N" "$WORK" "$@" <<'PY'
import ctypes, json, os, re, signal, socket, struct, subprocess, sys, time
tool, ns_a, dst, n, work, args = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6:]
libc = ctypes.CDLL(None, use_errno=True)
attr = struct.pack("I", 0) + bytes(124)          # union bpf_attr: enable_stats.type = BPF_STATS_RUN_TIME
buf = ctypes.create_string_buffer(attr, len(attr))
stats_fd = libc.syscall(321, 32, buf, len(attr))  # bpf(BPF_ENABLE_STATS): on while the fd is open
if stats_fd < 0:
    print("nan 0 0"); sys.exit(0)
err = open(work + "/err", "w")
p = subprocess.Popen([tool, "-v", "--json"] + args, stdout=subprocess.PIPE, stderr=err, text=True)
prog_id = None
for _ in range(400):
    text = open(work + "/err").read()
    m = re.search(r"BPF program id (\d+)", text)
    if m and "counting kfree_skb" in text:
        prog_id = m.group(1)
        break
    time.sleep(0.05)
if not prog_id:
    print("nan 0 0"); sys.exit(0)
def prog_stats():
    j = json.loads(subprocess.check_output(["bpftool", "prog", "show", "id", prog_id, "--json"]))
    return j.get("run_time_ns", 0), j.get("run_cnt", 0)
t0, c0 = prog_stats()
subprocess.check_call(["ip", "netns", "exec", ns_a, "python3", "-c",
    "import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
    "for i in range(%d): s.sendto(bytes(256), ('%s', 4791))" % (n, dst)])
time.sleep(0.3)
t1, c1 = prog_stats()
p.send_signal(signal.SIGINT)
out, _ = p.communicate()
counted = sum(json.loads(l)["count"] for l in out.splitlines() if l.strip() and json.loads(l)["final"])
events = c1 - c0
print("%.0f %d %d" % ((t1 - t0) / events if events else float("nan"), events, counted))
PY
}
read -r ns_roce ev_roce counted_roce < <(measure --addr "$B4")
read -r ns_all ev_all counted_all < <(measure --all)
cmd="bash tests/bench/bench_drops.sh"
echo "| agentxdp-drops BPF time per kfree_skb event, RoCE filter (--addr) | ${ns_roce} ns over ${ev_roce} events | ${ns_all} ns with --all | $cmd |"
echo "| agentxdp-drops BPF time per kfree_skb event, --all | ${ns_all} ns over ${ev_all} events | ${ns_roce} ns with the RoCE filter | $cmd |"
echo "| agentxdp-drops count of $N iptables-dropped RoCE datagrams | ${counted_roce} | $N sent (exact expected) | $cmd |"
