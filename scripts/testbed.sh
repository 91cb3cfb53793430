#!/usr/bin/env bash
# testbed.sh: two RoCE v2 endpoints joined by a veth pair: traffic, impairments, and a verify that proves delivery.
set -u

PROG=testbed.sh
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${AXTB_BIN:-$TOP/bin}
# AXTB_ID (a few letters/digits) names a separate testbed: test suites running at the same
# time each use their own (axtbID-a, axtbID-b, ...).
AXTB_ID=${AXTB_ID:-}
if ! [[ $AXTB_ID =~ ^[a-z0-9]{0,6}$ ]]; then
	echo "$PROG: invalid AXTB_ID '$AXTB_ID' (up to 6 lower-case letters or digits)" >&2
	exit 2
fi
P=axtb$AXTB_ID
STATE=${AXTB_STATE_DIR:-/run/agentxdp-testbed${AXTB_ID:+-$AXTB_ID}}
NS_A=$P-a
NS_B=$P-b
DEV_A=$P-a0
DEV_B=$P-b0
RXE_A=$P-rxe-a
RXE_B=$P-rxe-b
CHAIN=$P-impair
RXE_CHAIN=$P-input
RXE_TABLE_A=47910
RXE_TABLE_B=47911
RXE_RULE_PREF=100          # our source-based rules: before the local table
RXE_LOCAL_PREF=1000        # where the local table lookup moves to
ROCE_PORT=4791

usage() {
	cat <<'EOF'
Usage: scripts/testbed.sh COMMAND [OPTIONS]

Two RoCE v2 endpoints, "a" and "b", joined by a veth pair, for trying AgentXDP's tools
on real packets: run traffic, impair one direction of the link, and verify that RDMA
operations are delivered, not only that packets arrive. Needs root.

Backends (chosen by `up`; `--backend` forces one):
  rxe  Soft-RoCE (rdma_rxe) with perftest, both endpoints in the initial namespace on
       veth axtb-a0 / axtb-b0 (source-based policy routing sends each address out of
       its own veth; accept_local lets each side take packets from a local source).
  emu  agentxdp-roce-emu, a RoCE v2 RC traffic emulator over UDP 4791, in network
       namespaces axtb-a and axtb-b joined by veth axtb-a0 / axtb-b0. Used where the
       kernel has no rdma_rxe (and by CI).

Commands:
  up [--backend auto|emu|rxe] [--addr-a ADDR/LEN] [--addr-b ADDR/LEN] [--mtu BYTES]
        Create the testbed (idempotent). Defaults: 198.18.0.1/30 and 198.18.0.2/30
        (IPv6 works too: --addr-a fd99::1/64 --addr-b fd99::2/64), veth MTU 1500.
        Refuses addresses that overlap the host's own (ip -br addr).
  down  Remove everything `up` and `impair` created; put routing rules, sysctls and
        firewall rules back exactly as they were (idempotent).
  status
        What is up: backend, addresses, impairments, qdiscs, firewall rules.
  traffic bw|lat [-D SECONDS] [-q QPS] [-s SIZE] [-t write|read|send] [--bidir] [-w DIR]
          [--line-rate RATE] [--ack-timeout DURATION]
        Run a test from a to b (--bidir: both ways) and print perftest's tables:
        #bytes, #iterations, BW peak/average, MsgRate; t_min, t_typical, t_avg,
        t_max, t99. Defaults: -D 3, -q 1, -s 65536 (bw) or 64 (lat), -t write.
        --line-rate caps each QP's sending rate (emu backend; e.g. 200mbit);
        --ack-timeout sets the requesters' local ACK timeout (emu; default 67ms),
        e.g. 2s so that a stall of a busy machine is not taken for a loss.
        -w DIR also captures the test into DIR: b.pcapng (b's veth, ingress) and
        a.pcapng (a's veth) with agentxdp-capture (analyze both: two vantages),
        merged into both.pcapng for Wireshark; or b.pcap with tcpdump when
        agentxdp-capture is not built.
  impair LINK --rate RATE | --loss P | --delay DELAY | --ce P | --firewall
        Impair one direction of the link. LINK is a-b (packets from a to b) or b-a.
          --rate RATE   token bucket (tc tbf) on the sending veth, e.g. 50mbit
          --loss P      drop a fraction P of RoCE packets on the sending side
                        (iptables statistic random DROP), e.g. 0.01 or 1%
          --delay D     add delay with netem, where the kernel has it (e.g. 5ms)
          --ce P        mark a fraction P of RoCE packets ECN CE (iptables ECN
                        target, IPv4), as a congested switch would: CNPs follow
          --firewall    the classic trap: the receiving host's firewall rejects
                        RoCE (iptables INPUT REJECT udp dport 4791,
                        --reject-with icmp-host-prohibited). Packets still arrive
                        on the wire; RDMA operations never complete.
        Several impairments may be combined; a new --rate or --delay replaces the
        previous qdisc of that direction.
  impair --clear [LINK]
        Remove every impairment (of LINK only, when given).
  mirror a|b [--off]
        A monitoring port (SPAN) for one endpoint: every frame its veth receives or
        sends is copied (tc clsact, u32, mirred) to a veth pair in that endpoint's
        namespace, axtb-ma0 -> axtb-ma1 (a) or axtb-mb0 -> axtb-mb1 (b). Prints the
        interface to capture on (axtb-ma1 / axtb-mb1): XDP sees a device's ingress
        only, the mirror shows both directions from one vantage, as a switch's SPAN
        port does. --off removes it (so does down). Copies of packets a --rate
        impairment queues on that veth are taken before the queue.
  verify [-D SECONDS]
        Pass only if (1) RoCE packets from a arrive on b's veth (agentxdp-capture
        there, tcpdump when it is not built), (2) RDMA operations completed (the
        emulator's or perftest's count is above zero), and (3) agentxdp-analyze pairs
        request and ACK flows (qp.peer_qp_id set). On failure it names the check that
        failed and shows what agentxdp-drops (skb:kfree_skb) saw dropping the packets.
        Exit status 0 when all three pass, 1 otherwise.

Environment: AXTB_ID (up to 6 letters/digits: a separate testbed named axtbID-a,
axtbID-b, ..., state in /run/agentxdp-testbed-ID), AXTB_STATE_DIR (default
/run/agentxdp-testbed; nothing is kept anywhere else), AXTB_BIN (the tools, default bin/
of this tree).

Exit status: 0 on success, 1 on failure, 2 on a usage error.

Examples:
  scripts/testbed.sh up
  scripts/testbed.sh traffic bw -D 5 -q 2 -s 4096
  scripts/testbed.sh traffic lat -s 64
  scripts/testbed.sh traffic bw --bidir -D 2 -s 4096 -w /tmp/tb && agentxdp-analyze /tmp/tb/a.pcapng /tmp/tb/b.pcapng -o tb.db
  scripts/testbed.sh impair a-b --loss 1%
  scripts/testbed.sh impair b-a --rate 50mbit
  scripts/testbed.sh impair a-b --firewall && scripts/testbed.sh verify
  scripts/testbed.sh impair --clear
  scripts/testbed.sh mirror b   # then: ip netns exec axtb-b agentxdp-capture -i axtb-mb1 --analyze
  scripts/testbed.sh status
  scripts/testbed.sh down
EOF
}

die() {
	echo "$PROG: $*" >&2
	exit 1
}
usage_die() {
	echo "$PROG: $*" >&2
	echo "Try 'scripts/testbed.sh --help' for more information." >&2
	exit 2
}
note() { echo "$PROG: $*" >&2; }
need_root() { [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, tc, iptables)"; }

# ---- state (/run/agentxdp-testbed) ----

state_get() { # KEY -> value from $STATE/state
	[ -f "$STATE/state" ] && sed -n "s/^$1=//p" "$STATE/state" | tail -n 1
}
# The testbed is up once $STATE/up exists: written last, by rename, when everything is in
# place. A state file without it is what an interrupted 'up' left: half built.
is_up() { [ -f "$STATE/up" ]; }
half_built() { [ -f "$STATE/state" ] && ! is_up; }
load_state() {
	BACKEND=$(state_get backend)
	ADDR_A=$(state_get addr_a)
	ADDR_B=$(state_get addr_b)
	IP_A=${ADDR_A%/*}
	IP_B=${ADDR_B%/*}
	FAMILY=$(state_get family)
}

# Run a command on endpoint a or b (in its namespace for emu, in the initial one for rxe).
on() {
	local side=$1
	shift
	if [ "${BACKEND:-emu}" = emu ]; then
		if [ "$side" = a ]; then ip netns exec "$NS_A" "$@"; else ip netns exec "$NS_B" "$@"; fi
	else
		"$@"
	fi
}
# Same, for a command started in the background (cmd &): the job's pid is the command's own,
# so it can be stopped by that pid (a function in a subshell would leave the command orphaned).
on_exec() {
	local side=$1
	shift
	if [ "${BACKEND:-emu}" = emu ]; then
		if [ "$side" = a ]; then exec ip netns exec "$NS_A" "$@"; else exec ip netns exec "$NS_B" "$@"; fi
	else
		exec "$@"
	fi
}
ipt() { # iptables or ip6tables for the testbed's family
	if [ "${FAMILY:-4}" = 6 ]; then ip6tables -w "$@"; else iptables -w "$@"; fi
}

# ---- address checks ----

# Prints an error and fails when ADDR/LEN is not valid or overlaps an address of the host.
check_addresses() {
	python3 - "$1" "$2" <<'EOF'
import ipaddress, subprocess, sys
try:
    a = ipaddress.ip_interface(sys.argv[1]); b = ipaddress.ip_interface(sys.argv[2])
except ValueError as e:
    print(f"invalid address: {e}"); sys.exit(1)
if a.version != b.version:
    print("--addr-a and --addr-b are not the same IP version"); sys.exit(1)
if a.ip == b.ip:
    print("--addr-a and --addr-b are the same address"); sys.exit(1)
if b.ip not in a.network or a.ip not in b.network:
    print(f"{a} and {b} are not in one subnet"); sys.exit(1)
out = subprocess.run(["ip", "-br", "addr"], capture_output=True, text=True).stdout
for line in out.splitlines():
    f = line.split()
    if not f or f[0].startswith("axtb"):
        continue
    for text in f[2:]:
        try:
            h = ipaddress.ip_interface(text)
        except ValueError:
            continue
        if h.version != a.version or h.is_link_local or h.ip.is_loopback:
            continue
        for mine in (a, b):
            if h.ip == mine.ip or h.network.overlaps(mine.network):
                print(f"{mine} collides with {h} on {f[0]} (ip -br addr): choose other addresses")
                sys.exit(1)
EOF
}

# ---- backends ----

have_rxe() {
	[ -d /sys/module/rdma_rxe ] || modprobe rdma_rxe 2>/dev/null
}

rxe_missing_tools() {
	local t missing=()
	for t in rdma ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	echo "${missing[*]}"
}

up_emu() {
	local mtu=$1 fam=$2
	ip netns add "$NS_A" || return 1
	ip netns add "$NS_B" || return 1
	ip link add "$DEV_A" netns "$NS_A" mtu "$mtu" type veth peer name "$DEV_B" netns "$NS_B" mtu "$mtu" || return 1
	ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up || return 1
	if [ "$fam" = 6 ]; then
		ip -n "$NS_A" addr add "$ADDR_A" dev "$DEV_A" nodad || return 1
		ip -n "$NS_B" addr add "$ADDR_B" dev "$DEV_B" nodad || return 1
	else
		ip -n "$NS_A" addr add "$ADDR_A" dev "$DEV_A" || return 1
		ip -n "$NS_B" addr add "$ADDR_B" dev "$DEV_B" || return 1
	fi
	ip -n "$NS_A" link set "$DEV_A" up && ip -n "$NS_B" link set "$DEV_B" up || return 1
}

# Save the exact values of every sysctl the rxe backend touches.
RXE_SYSCTLS() {
	echo net.ipv4.conf.all.accept_local net.ipv4.conf.all.rp_filter \
		net.ipv4.conf.$DEV_A.accept_local net.ipv4.conf.$DEV_B.accept_local \
		net.ipv4.conf.$DEV_A.rp_filter net.ipv4.conf.$DEV_B.rp_filter
}

up_rxe() {
	local mtu=$1 fam=$2 k
	[ "$fam" = 4 ] || { note "the rxe backend supports IPv4 only here"; return 1; }
	mkdir -p "$STATE/saved"
	ip -4 rule show >"$STATE/saved/ip-rule"
	iptables-save >"$STATE/saved/iptables" 2>/dev/null
	: >"$STATE/saved/sysctl"
	for k in net.ipv4.conf.all.accept_local net.ipv4.conf.all.rp_filter; do
		echo "$k=$(sysctl -n "$k")" >>"$STATE/saved/sysctl"
	done
	ip link add "$DEV_A" mtu "$mtu" type veth peer name "$DEV_B" mtu "$mtu" || return 1
	echo created_veth=1 >>"$STATE/state"
	ip addr add "$ADDR_A" dev "$DEV_A" && ip addr add "$ADDR_B" dev "$DEV_B" || return 1
	ip link set "$DEV_A" up && ip link set "$DEV_B" up || return 1
	# Each address's packets to the other leave by its own veth, not through lo. Only for
	# locally generated packets (iif lo); the local table moves below these rules, added
	# at its new place before the old rule goes, so no remote session ever loses it.
	ip route add "$IP_B/32" dev "$DEV_A" src "$IP_A" table $RXE_TABLE_A || return 1
	ip route add "$IP_A/32" dev "$DEV_B" src "$IP_B" table $RXE_TABLE_B || return 1
	ip rule add pref $RXE_RULE_PREF iif lo from "$IP_A" to "$IP_B" lookup $RXE_TABLE_A || return 1
	ip rule add pref $RXE_RULE_PREF iif lo from "$IP_B" to "$IP_A" lookup $RXE_TABLE_B || return 1
	if ip -4 rule show | grep -q '^0:[[:space:]]*from all lookup local'; then
		ip rule add pref $RXE_LOCAL_PREF lookup local || return 1
		ip rule del pref 0 lookup local || return 1
		echo moved_local=1 >>"$STATE/state"
	fi
	# A packet whose source is one of our own addresses is accepted (accept_local), and
	# reverse-path filtering does not drop it.
	sysctl -qw net.ipv4.conf.all.accept_local=1 net.ipv4.conf.$DEV_A.accept_local=1 \
		net.ipv4.conf.$DEV_B.accept_local=1 net.ipv4.conf.$DEV_A.rp_filter=0 \
		net.ipv4.conf.$DEV_B.rp_filter=0 net.ipv4.conf.all.rp_filter=0 >/dev/null || return 1
	# Firewall: let RoCE in on the test interfaces only, before whatever the image ships.
	iptables -w -N $RXE_CHAIN || return 1
	iptables -w -A $RXE_CHAIN -p udp --dport $ROCE_PORT -j ACCEPT
	iptables -w -A $RXE_CHAIN -p tcp --dport 18515 -j ACCEPT
	iptables -w -I INPUT 1 -i "$P-+" -j $RXE_CHAIN
	rdma link add $RXE_A type rxe netdev "$DEV_A" || return 1
	rdma link add $RXE_B type rxe netdev "$DEV_B" || return 1
}

down_rxe() {
	local line
	rdma link del $RXE_A 2>/dev/null
	rdma link del $RXE_B 2>/dev/null
	while iptables -w -D INPUT -i "$P-+" -j $RXE_CHAIN 2>/dev/null; do :; done
	iptables -w -F $RXE_CHAIN 2>/dev/null && iptables -w -X $RXE_CHAIN 2>/dev/null
	clear_impairments ""
	# The local table back at 0 first, then our rules go.
	if [ "$(state_get moved_local)" = 1 ]; then
		ip rule add pref 0 lookup local 2>/dev/null
		ip rule del pref $RXE_LOCAL_PREF lookup local 2>/dev/null
	fi
	while ip rule del pref $RXE_RULE_PREF 2>/dev/null; do :; done
	ip route flush table $RXE_TABLE_A 2>/dev/null
	ip route flush table $RXE_TABLE_B 2>/dev/null
	if [ -f "$STATE/saved/sysctl" ]; then
		while IFS= read -r line; do
			sysctl -qw "$line" >/dev/null
		done <"$STATE/saved/sysctl"
	fi
	ip link del "$P-ma0" 2>/dev/null
	ip link del "$P-mb0" 2>/dev/null
	ip link del "$DEV_A" 2>/dev/null
	if [ -f "$STATE/saved/ip-rule" ] && ! diff -q "$STATE/saved/ip-rule" <(ip -4 rule show) >/dev/null; then
		note "warning: ip rule differs from before 'up':"
		diff "$STATE/saved/ip-rule" <(ip -4 rule show) >&2
	fi
}

cmd_up() {
	local backend=auto addr_a=198.18.0.1/30 addr_b=198.18.0.2/30 mtu=1500 fam why msg
	while [ $# -gt 0 ]; do
		case $1 in
		--backend) backend=${2:-}; shift 2 || usage_die "--backend needs auto, emu or rxe" ;;
		--addr-a) addr_a=${2:-}; shift 2 || usage_die "--addr-a needs ADDR/LEN" ;;
		--addr-b) addr_b=${2:-}; shift 2 || usage_die "--addr-b needs ADDR/LEN" ;;
		--mtu) mtu=${2:-}; shift 2 || usage_die "--mtu needs a number" ;;
		*) usage_die "up: unknown option '$1'" ;;
		esac
	done
	case $backend in auto | emu | rxe) ;; *) usage_die "invalid --backend '$backend' (auto, emu or rxe)" ;; esac
	[[ $mtu =~ ^[0-9]+$ ]] && [ "$mtu" -ge 1280 ] && [ "$mtu" -le 9000 ] || usage_die "invalid --mtu '$mtu' (1280 to 9000)"
	[[ $addr_a == */* ]] || addr_a=$addr_a/$([[ $addr_a == *:* ]] && echo 64 || echo 30)
	[[ $addr_b == */* ]] || addr_b=$addr_b/$([[ $addr_b == *:* ]] && echo 64 || echo 30)
	need_root
	if is_up; then
		load_state
		if [ "$ADDR_A" = "$addr_a" ] && [ "$ADDR_B" = "$addr_b" ] &&
			{ [ "$backend" = auto ] || [ "$backend" = "$BACKEND" ]; }; then
			echo "testbed already up: backend $BACKEND, a=$ADDR_A b=$ADDR_B"
			return 0
		fi
		die "testbed is up with backend $BACKEND, a=$ADDR_A b=$ADDR_B; run 'down' first"
	fi
	if half_built; then
		note "clearing a testbed left half built by an interrupted 'up'"
		teardown
	fi
	msg=$(check_addresses "$addr_a" "$addr_b") || die "$msg"
	[[ $addr_a == *:* ]] && fam=6 || fam=4
	if [ "$backend" = auto ]; then
		if have_rxe && [ -z "$(rxe_missing_tools)" ]; then
			backend=rxe
			why="the kernel has rdma_rxe"
		else
			backend=emu
			if have_rxe; then why="perftest/rdma missing: $(rxe_missing_tools)"; else why="this kernel has no rdma_rxe (modprobe rdma_rxe failed)"; fi
			[ "$fam" = 6 ] || true
		fi
	elif [ "$backend" = rxe ]; then
		have_rxe || die "--backend rxe: this kernel has no rdma_rxe (modprobe rdma_rxe failed); use --backend emu"
		[ -z "$(rxe_missing_tools)" ] || die "--backend rxe: missing $(rxe_missing_tools) (apt-get install perftest rdma-core iproute2)"
		why="forced by --backend"
	else
		why=${why:-forced by --backend}
	fi
	if [ "$backend" = emu ] && [ ! -x "$BIN/agentxdp-roce-emu" ]; then
		die "$BIN/agentxdp-roce-emu is not built (run make)"
	fi
	# Leftovers of a testbed whose state was lost (e.g. /run wiped): clear them first.
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	ip link del "$DEV_A" 2>/dev/null
	mkdir -p "$STATE" || die "cannot create $STATE"
	printf 'backend=%s\naddr_a=%s\naddr_b=%s\nfamily=%s\nmtu=%s\n' "$backend" "$addr_a" "$addr_b" "$fam" "$mtu" >"$STATE/state"
	: >"$STATE/impairments"
	# Tests stop here with SIGKILL to play an 'up' killed at the worst moment.
	[ "${AXTB_TEST_KILL_AFTER_STATE:-}" = 1 ] && kill -9 $$
	BACKEND=$backend ADDR_A=$addr_a ADDR_B=$addr_b IP_A=${addr_a%/*} IP_B=${addr_b%/*} FAMILY=$fam
	if [ "$backend" = emu ]; then
		up_emu "$mtu" "$fam" || { cmd_down >/dev/null 2>&1; die "up failed (see above); nothing left behind"; }
	else
		up_rxe "$mtu" "$fam" || { cmd_down >/dev/null 2>&1; die "up failed (see above); everything put back"; }
	fi
	# The image may ship firewall rules or sysctls nobody wrote: prove RoCE crosses now.
	if [ "$backend" = emu ] && ! probe_emu; then
		note "warning: 10 RDMA WRITEs from a to b did not complete; check 'scripts/testbed.sh status' and 'verify'"
	fi
	: >"$STATE/up.tmp" && mv -f "$STATE/up.tmp" "$STATE/up" || die "cannot write $STATE/up"
	echo "testbed up: backend $backend ($why)"
	if [ "$backend" = emu ]; then
		echo "  a: $ADDR_A on $DEV_A in netns $NS_A"
		echo "  b: $ADDR_B on $DEV_B in netns $NS_B"
	else
		echo "  a: $ADDR_A on $DEV_A (rxe $RXE_A), b: $ADDR_B on $DEV_B (rxe $RXE_B), initial namespace"
	fi
}

# Ten one-packet RDMA WRITEs from a to b, both ways of the control connection: 0 when they complete.
probe_emu() {
	local spid rc
	on_exec b "$BIN/agentxdp-roce-emu" --server --once -b "$IP_B" --quiet >/dev/null 2>&1 &
	spid=$!
	on a "$BIN/agentxdp-roce-emu" -b "$IP_A" -c "$IP_B" -m lat -s 64 -n 10 --quiet >"$STATE/probe.out" 2>&1
	rc=$?
	for _ in $(seq 30); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	[ $rc -eq 0 ] && grep -q ' ops_completed=10 ' "$STATE/probe.out"
}

cmd_down() {
	need_root
	if ! is_up && ! half_built; then
		# Idempotent, and it still clears leftovers of a lost state.
		ip netns del "$NS_A" 2>/dev/null
		ip netns del "$NS_B" 2>/dev/null
		echo "testbed is not up"
		return 0
	fi
	teardown
	echo "testbed down"
}

# Undo everything the state file records, whether 'up' finished or not.
teardown() {
	load_state
	stop_bg
	if [ "$BACKEND" = emu ]; then
		ip netns del "$NS_A" 2>/dev/null
		ip netns del "$NS_B" 2>/dev/null
	else
		down_rxe
	fi
	rm -rf "$STATE"
}

# Background processes we started (pid files in $STATE/pids): stop them by their own pid.
stop_bg() {
	local f pid
	for f in "$STATE"/pids/*; do
		[ -f "$f" ] || continue
		for pid in $(cat "$f"); do
			kill "$pid" 2>/dev/null
		done
		rm -f "$f"
	done
}

# ---- impairments ----

# LINK -> sender side, receiver side, sending device, receiving device.
parse_link() {
	case $1 in
	a-b) SRC=a DST=b SRC_DEV=$DEV_A DST_DEV=$DEV_B ;;
	b-a) SRC=b DST=a SRC_DEV=$DEV_B DST_DEV=$DEV_A ;;
	*) usage_die "invalid link '$1' (a-b: packets from a to b; b-a: from b to a)" ;;
	esac
}

# Make sure chain $CHAIN exists in TABLE on SIDE, jumped to from HOOK.
ensure_chain() {
	local side=$1 table=$2 hook=$3
	on "$side" "$(ipt_cmd)" -w -t "$table" -N "$CHAIN" 2>/dev/null
	on "$side" "$(ipt_cmd)" -w -t "$table" -C "$hook" -j "$CHAIN" 2>/dev/null ||
		on "$side" "$(ipt_cmd)" -w -t "$table" -I "$hook" 1 -j "$CHAIN"
}
ipt_cmd() { if [ "${FAMILY:-4}" = 6 ]; then echo ip6tables; else echo iptables; fi; }

has_netem() {
	on a tc qdisc add dev lo root netem delay 1ms 2>/dev/null || return 1
	on a tc qdisc del dev lo root 2>/dev/null
	return 0
}

cmd_impair() {
	local link="" rate="" loss="" delay="" ce="" firewall=0 clear=0 ipt_bin prob
	while [ $# -gt 0 ]; do
		case $1 in
		--clear) clear=1; shift ;;
		--rate) rate=${2:-}; shift 2 || usage_die "--rate needs a rate, e.g. 50mbit" ;;
		--loss) loss=${2:-}; shift 2 || usage_die "--loss needs a fraction, e.g. 0.01 or 1%" ;;
		--delay) delay=${2:-}; shift 2 || usage_die "--delay needs a duration, e.g. 5ms" ;;
		--ce) ce=${2:-}; shift 2 || usage_die "--ce needs a fraction, e.g. 0.05" ;;
		--firewall) firewall=1; shift ;;
		-*) usage_die "impair: unknown option '$1'" ;;
		*) [ -z "$link" ] || usage_die "impair: one LINK only"; link=$1; shift ;;
		esac
	done
	[ -z "$link" ] || parse_link "$link" # usage errors first
	need_root
	is_up || die "testbed is not up (run 'scripts/testbed.sh up')"
	load_state
	if [ $clear = 1 ]; then
		[ -z "$link" ] || parse_link "$link"
		clear_impairments "$link"
		echo "impairments cleared${link:+ on $link}"
		return 0
	fi
	[ -n "$link" ] || usage_die "impair: which LINK? a-b or b-a"
	parse_link "$link"
	[ -n "$rate$loss$delay$ce" ] || [ $firewall = 1 ] || usage_die "impair: give --rate, --loss, --delay, --ce or --firewall"
	ipt_bin=$(ipt_cmd)
	if [ -n "$delay" ]; then
		[[ $delay =~ ^[0-9.]+(us|ms|s)$ ]] || usage_die "invalid --delay '$delay' (e.g. 5ms, 500us)"
		if ! has_netem; then
			die "--delay: this kernel has no netem qdisc (sch_netem; 'tc qdisc add ... netem' fails), so delay cannot be emulated here. Use --rate (a token bucket builds a queue, which delays packets) instead."
		fi
		if [ -n "$rate" ]; then
			on "$SRC" tc qdisc replace dev "$SRC_DEV" root netem delay "$delay" rate "$rate" || die "tc netem failed"
			rate=""
		else
			on "$SRC" tc qdisc replace dev "$SRC_DEV" root netem delay "$delay" || die "tc netem failed"
		fi
		echo "$link delay $delay" >>"$STATE/impairments"
	fi
	if [ -n "$rate" ]; then
		[[ $rate =~ ^[0-9.]+(bit|kbit|mbit|gbit)$ ]] || usage_die "invalid --rate '$rate' (e.g. 50mbit, 1gbit)"
		# Burst: a few MTUs. A deep queue (400 ms at that rate): the senders' socket buffers fill
		# first and push back, so the link queues and delays (as with PFC) rather than drops.
		on "$SRC" tc qdisc replace dev "$SRC_DEV" root tbf rate "$rate" burst 16kb latency 400ms ||
			die "tc tbf failed on $SRC_DEV"
		echo "$link rate $rate" >>"$STATE/impairments"
	fi
	if [ -n "$loss" ]; then
		prob=$(fraction "$loss") || usage_die "invalid --loss '$loss' (a fraction 0..1 or a percentage, e.g. 0.01 or 1%)"
		ensure_chain "$SRC" filter OUTPUT
		on "$SRC" "$ipt_bin" -w -A "$CHAIN" -o "$SRC_DEV" -p udp --dport $ROCE_PORT \
			-m statistic --mode random --probability "$prob" -j DROP || die "iptables loss rule failed"
		echo "$link loss $prob" >>"$STATE/impairments"
	fi
	if [ -n "$ce" ]; then
		[ "$FAMILY" = 4 ] || die "--ce: the iptables ECN target marks IPv4 only"
		prob=$(fraction "$ce") || usage_die "invalid --ce '$ce' (a fraction 0..1 or a percentage)"
		ensure_chain "$SRC" mangle POSTROUTING
		on "$SRC" iptables -w -t mangle -A "$CHAIN" -o "$SRC_DEV" -p udp --dport $ROCE_PORT \
			-m statistic --mode random --probability "$prob" -j ECN --ecn-ip-ect 3 || die "iptables ECN rule failed"
		echo "$link ce $prob" >>"$STATE/impairments"
	fi
	if [ $firewall = 1 ]; then
		ensure_chain "$DST" filter INPUT
		if [ "$FAMILY" = 6 ]; then
			on "$DST" ip6tables -w -A "$CHAIN" -i "$DST_DEV" -p udp --dport $ROCE_PORT -j REJECT --reject-with icmp6-adm-prohibited || die "ip6tables REJECT failed"
		else
			on "$DST" iptables -w -A "$CHAIN" -i "$DST_DEV" -p udp --dport $ROCE_PORT -j REJECT --reject-with icmp-host-prohibited || die "iptables REJECT failed"
		fi
		echo "$link firewall reject-udp-$ROCE_PORT" >>"$STATE/impairments"
	fi
	echo "impaired $link:$(grep "^$link " "$STATE/impairments" | cut -d' ' -f2- | tr '\n' ';' | sed 's/;$//; s/;/,/g; s/^/ /')"
}

# "1%" -> 0.01, "0.02" -> 0.02; fails outside (0, 1].
fraction() {
	python3 - "$1" <<'EOF'
import sys
t = sys.argv[1]
try:
    v = float(t[:-1]) / 100 if t.endswith('%') else float(t)
except ValueError:
    sys.exit(1)
if not (0 < v <= 1):
    sys.exit(1)
print(f"{v:.6g}")
EOF
}

# Remove impairments of LINK ("" = all).
clear_impairments() {
	local link=$1 side dev ipt_bin table hook
	ipt_bin=$(ipt_cmd)
	for side in a b; do
		[ "$side" = a ] && dev=$DEV_A || dev=$DEV_B
		if [ -z "$link" ] || [ "$link" = "$side-$([ $side = a ] && echo b || echo a)" ]; then
			on "$side" tc qdisc del dev "$dev" root 2>/dev/null
		fi
		for table in filter mangle; do
			on "$side" "$ipt_bin" -w -t "$table" -S "$CHAIN" >/dev/null 2>&1 || continue
			if [ -z "$link" ]; then
				on "$side" "$ipt_bin" -w -t "$table" -F "$CHAIN"
			else
				# Only the rules of this direction: its sending device (-o) or receiving one (-i).
				parse_link "$link"
				on "$side" "$ipt_bin" -w -t "$table" -S "$CHAIN" | grep -E -- "-A $CHAIN .*(-o $SRC_DEV|-i $DST_DEV) " |
					sed "s/^-A /-D /" | while read -r rule; do
						# shellcheck disable=SC2086
						on "$side" "$ipt_bin" -w -t "$table" $rule
					done
			fi
			if [ -z "$(on "$side" "$ipt_bin" -w -t "$table" -S "$CHAIN" | grep -v -- "^-N ")" ]; then
				for hook in INPUT OUTPUT POSTROUTING; do
					while on "$side" "$ipt_bin" -w -t "$table" -D "$hook" -j "$CHAIN" 2>/dev/null; do :; done
				done
				on "$side" "$ipt_bin" -w -t "$table" -X "$CHAIN" 2>/dev/null
			fi
		done
	done
	if [ -f "$STATE/impairments" ]; then
		if [ -z "$link" ]; then : >"$STATE/impairments"; else
			grep -v "^$link " "$STATE/impairments" >"$STATE/impairments.new"
			mv "$STATE/impairments.new" "$STATE/impairments"
		fi
	fi
}

# ---- status ----

cmd_status() {
	local side
	if half_built; then
		echo "testbed: half built by an interrupted 'up' (run 'up' or 'down' to clear it)"
		return 1
	fi
	if ! is_up; then
		echo "testbed: down"
		return 0
	fi
	load_state
	echo "testbed: up, backend $BACKEND"
	echo "  a: $ADDR_A  b: $ADDR_B  (link a-b: packets from a to b)"
	if [ "$BACKEND" = emu ]; then
		for side in a b; do
			echo "  $side: $(on $side ip -br addr show dev "$P-${side}0" 2>&1 | tr -s ' ')  (netns $P-$side)"
		done
	else
		ip -br addr show dev "$DEV_A" 2>&1 | sed 's/^/  /'
		ip -br addr show dev "$DEV_B" 2>&1 | sed 's/^/  /'
		rdma link show 2>/dev/null | grep axtb | sed 's/^/  /'
	fi
	if [ -s "$STATE/impairments" ]; then
		echo "  impairments:"
		sed 's/^/    /' "$STATE/impairments"
	else
		echo "  impairments: none"
	fi
	for side in a b; do
		on $side tc qdisc show dev "$P-${side}0" 2>/dev/null | grep -v -E 'noqueue|pfifo_fast' | sed "s/^/  $side qdisc: /"
		on $side "$(ipt_cmd)" -w -S "$CHAIN" 2>/dev/null | grep -- '^-A' | sed "s/^/  $side filter: /"
		on $side "$(ipt_cmd)" -w -t mangle -S "$CHAIN" 2>/dev/null | grep -- '^-A' | sed "s/^/  $side mangle: /"
	done
	[ -f "$STATE/last-traffic" ] && echo "  last traffic: $(head -n 1 "$STATE/last-traffic")"
	return 0
}

# ---- traffic ----

# Run a test; client output on stdout, the client's and server's STATS saved in $STATE.
# Args: MODE OP SECONDS QPS SIZE BIDIR
run_traffic() {
	local mode=$1 op=$2 secs=$3 qps=$4 size=$5 bidir=$6
	if [ "$BACKEND" = emu ]; then run_traffic_emu "$@"; else run_traffic_rxe "$@"; fi
}

run_traffic_emu() {
	local mode=$1 op=$2 secs=$3 qps=$4 size=$5 bidir=$6 spid rc srv_rc extra=()
	[ "$bidir" = 1 ] && extra+=(--bidir)
	[ "$mode" = bw ] && extra+=(--tx-depth 32)
	[ -n "${T_LINE_RATE:-}" ] && extra+=(--line-rate "$T_LINE_RATE")
	[ -n "${T_ACK_TIMEOUT:-}" ] && extra+=(--timeout "$T_ACK_TIMEOUT")
	mkdir -p "$STATE/pids"
	on_exec b "$BIN/agentxdp-roce-emu" --server --once -b "$IP_B" --quiet >"$STATE/server.out" 2>"$STATE/server.err" &
	spid=$!
	echo "$spid" >"$STATE/pids/server"
	# In the background and waited for, so SIGINT/SIGTERM stop it at once (stop_bg, by pid):
	# bash runs a trap only after the foreground command ends.
	on_exec a "$BIN/agentxdp-roce-emu" -b "$IP_A" -c "$IP_B" -m "$mode" -t "$op" -D "${secs}s" -q "$qps" -s "$size" \
		"${extra[@]}" --quiet >"$STATE/client.out" 2>"$STATE/client.err" &
	echo "$!" >"$STATE/pids/client"
	wait "$!"
	rc=$?
	rm -f "$STATE/pids/client"
	# The server ends with the client (FIN); if the client never reached it, stop it.
	for _ in $(seq 50); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	srv_rc=$?
	rm -f "$STATE/pids/server"
	grep -v '^STATS ' "$STATE/client.out"
	cat "$STATE/client.err" >&2
	[ "$bidir" = 1 ] && grep -v '^STATS ' "$STATE/server.out" | sed 's/^/[b] /'
	grep '^STATS ' "$STATE/client.out" >"$STATE/last-traffic"
	grep '^STATS ' "$STATE/server.out" >>"$STATE/last-traffic"
	[ $srv_rc -ne 0 ] && [ -s "$STATE/server.err" ] && sed 's/^/[b] /' "$STATE/server.err" >&2
	return $rc
}

# perftest over Soft-RoCE: both ends in the initial namespace, bound to their rxe device.
rxe_gid_index() { # DEV IP -> the RoCE v2 GID index holding ::ffff:IP
	local dev=$1 ip=$2 f idx gid
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		idx=${f##*/}
		gid=$(cat "$f" 2>/dev/null) || continue
		[ "$(cat /sys/class/infiniband/"$dev"/ports/1/gid_attrs/types/"$idx" 2>/dev/null)" = "RoCE v2" ] || continue
		case $gid in *"$(printf '%02x%02x:%02x%02x' ${ip//./ })") echo "$idx"; return 0 ;; esac
	done
	return 1
}

run_traffic_rxe() {
	local mode=$1 op=$2 secs=$3 qps=$4 size=$5 bidir=$6 tool gid_a gid_b spid rc extra=()
	tool=ib_${op}_${mode}
	gid_a=$(rxe_gid_index $RXE_A "$IP_A") || die "no RoCE v2 GID for $IP_A on $RXE_A"
	gid_b=$(rxe_gid_index $RXE_B "$IP_B") || die "no RoCE v2 GID for $IP_B on $RXE_B"
	[ "$mode" = bw ] && extra+=(-q "$qps" --report_gbits)
	[ "$bidir" = 1 ] && [ "$mode" = bw ] && extra+=(-b)
	mkdir -p "$STATE/pids"
	"$tool" -d $RXE_B -x "$gid_b" -D "$secs" -s "$size" -F "${extra[@]}" >"$STATE/server.out" 2>&1 &
	spid=$!
	echo "$spid" >"$STATE/pids/server"
	sleep 1
	"$tool" -d $RXE_A -x "$gid_a" -D "$secs" -s "$size" -F "${extra[@]}" "$IP_B" >"$STATE/client.out" 2>&1
	rc=$?
	wait "$spid" 2>/dev/null
	rm -f "$STATE/pids/server"
	cat "$STATE/client.out"
	# perftest's result row: "#bytes #iterations ...": the iteration count is operations completed.
	awk -v m="$mode" '/^ *#bytes/ {getline; printf "STATS side=client tool=perftest ops_completed=%s\n", $2}' \
		"$STATE/client.out" >"$STATE/last-traffic"
	return $rc
}

parse_traffic_opts() { # sets T_MODE T_OP T_SECS T_QPS T_SIZE T_BIDIR
	T_SECS=3 T_QPS=1 T_SIZE="" T_OP=write T_BIDIR=0 T_CAPTURE="" T_LINE_RATE="" T_ACK_TIMEOUT=""
	while [ $# -gt 0 ]; do
		case $1 in
		-D | --duration) T_SECS=${2:-}; shift 2 || usage_die "-D needs seconds" ;;
		-q | --qps) T_QPS=${2:-}; shift 2 || usage_die "-q needs a number" ;;
		-s | --size) T_SIZE=${2:-}; shift 2 || usage_die "-s needs a size" ;;
		-t | --op) T_OP=${2:-}; shift 2 || usage_die "-t needs write, read or send" ;;
		--bidir) T_BIDIR=1; shift ;;
		-w | --write) T_CAPTURE=${2:-}; shift 2 || usage_die "-w needs a directory" ;;
		--line-rate) T_LINE_RATE=${2:-}; shift 2 || usage_die "--line-rate needs a rate, e.g. 200mbit" ;;
		--ack-timeout) T_ACK_TIMEOUT=${2:-}; shift 2 || usage_die "--ack-timeout needs a duration, e.g. 2s" ;;
		*) usage_die "traffic: unknown option '$1'" ;;
		esac
	done
	[[ $T_SECS =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_die "invalid -D '$T_SECS' (seconds)"
	[[ $T_QPS =~ ^[0-9]+$ ]] && [ "$T_QPS" -ge 1 ] && [ "$T_QPS" -le 32 ] || usage_die "invalid -q '$T_QPS' (1 to 32)"
	case $T_OP in write | read | send) ;; *) usage_die "invalid -t '$T_OP' (write, read or send)" ;; esac
	[ -z "$T_LINE_RATE" ] || [[ $T_LINE_RATE =~ ^[0-9.]+(bit|kbit|mbit|gbit)$ ]] ||
		usage_die "invalid --line-rate '$T_LINE_RATE' (e.g. 200mbit, 10gbit)"
	[ -z "$T_ACK_TIMEOUT" ] || [[ $T_ACK_TIMEOUT =~ ^[0-9.]+(us|ms|s)$ ]] ||
		usage_die "invalid --ack-timeout '$T_ACK_TIMEOUT' (e.g. 500ms, 2s)"
	[ -n "$T_SIZE" ] || { [ "$T_MODE" = lat ] && T_SIZE=64 || T_SIZE=65536; }
}

cmd_traffic() {
	T_MODE=${1:-}
	case $T_MODE in bw | lat) shift ;; *) usage_die "traffic: bw or lat?" ;; esac
	parse_traffic_opts "$@"
	need_root
	is_up || die "testbed is not up (run 'scripts/testbed.sh up')"
	load_state
	if [ -n "$T_CAPTURE" ]; then
		capture_start "$T_CAPTURE" 3600
		echo "capture: $CAP_TOOL -> ${CAP_FILES[*]}"
	fi
	run_traffic "$T_MODE" "$T_OP" "$T_SECS" "$T_QPS" "$T_SIZE" "$T_BIDIR"
	local rc=$?
	[ -n "$T_CAPTURE" ] && capture_stop
	return $rc
}

# ---- capture ----

# capture_start DIR SECONDS: capture RoCE where the requests land (b's veth) and where the
# answers land (a's veth): XDP sees a veth's ingress only. tcpdump on b's veth sees both
# ways. Sets CAP_TOOL, CAP_FILES and CAP_PIDS.
capture_start() {
	local dir=$1 secs=$2
	CAP_PIDS=()
	CAP_DIR=$dir
	mkdir -p "$dir" "$STATE/pids"
	if [ -x "$BIN/agentxdp-capture" ]; then
		CAP_TOOL=agentxdp-capture
		on_exec b "$BIN/agentxdp-capture" -q -i "$DEV_B" -w "$dir/b.pcapng" --duration "${secs}s" 2>"$dir/capture-b.err" &
		CAP_PIDS+=($!)
		on_exec a "$BIN/agentxdp-capture" -q -i "$DEV_A" -w "$dir/a.pcapng" --duration "${secs}s" 2>"$dir/capture-a.err" &
		CAP_PIDS+=($!)
		CAP_FILES=("$dir/b.pcapng" "$dir/a.pcapng")
	else
		CAP_TOOL=tcpdump
		on_exec b tcpdump -q -i "$DEV_B" -s 128 -w "$dir/b.pcap" udp port $ROCE_PORT 2>"$dir/capture-b.err" &
		CAP_PIDS+=($!)
		CAP_FILES=("$dir/b.pcap")
	fi
	printf '%s\n' "${CAP_PIDS[@]}" >"$STATE/pids/capture"
	# Wait until the capture is attached (XDP link / tcpdump listening), at most 3 s.
	for _ in $(seq 30); do
		if [ "$CAP_TOOL" = tcpdump ]; then grep -q listening "$dir/capture-b.err" 2>/dev/null && break
		else on b ip link show dev "$DEV_B" 2>/dev/null | grep -q xdp && on a ip link show dev "$DEV_A" 2>/dev/null | grep -q xdp && break; fi
		sleep 0.1
	done
}

capture_stop() {
	sleep 0.3 # the last ACKs
	kill -INT "${CAP_PIDS[@]}" 2>/dev/null
	wait "${CAP_PIDS[@]}" 2>/dev/null
	rm -f "$STATE/pids/capture"
	# agentxdp-analyze reads the per-host captures as two vantages: it pairs flows across
	# them, and knowing that each packet was stamped where it arrived tells it which
	# direction a latency crossed (a merged file looks like one mirror seeing both ways,
	# and a's slow egress could not be told from b's). both.pcapng is for people.
	CAP_ANALYZE=("${CAP_FILES[@]}")
	if [ "$CAP_TOOL" = agentxdp-capture ] && command -v mergecap >/dev/null 2>&1; then
		mergecap -w "$CAP_DIR/both.pcapng" "${CAP_FILES[@]}" 2>/dev/null || true
	fi
}

# ---- mirror (SPAN port) ----

cmd_mirror() {
	local side="" off=0 dev mon peer mtu dir
	while [ $# -gt 0 ]; do
		case $1 in
		--off) off=1; shift ;;
		a | b) [ -z "$side" ] || usage_die "mirror: one side only"; side=$1; shift ;;
		*) usage_die "mirror: unknown argument '$1' (a or b, and --off)" ;;
		esac
	done
	[ -n "$side" ] || usage_die "mirror: which side? a or b"
	need_root
	is_up || die "testbed is not up (run 'scripts/testbed.sh up')"
	load_state
	[ "$side" = a ] && dev=$DEV_A || dev=$DEV_B
	mon=$P-m${side}0
	peer=$P-m${side}1
	if [ $off = 1 ]; then
		on "$side" tc qdisc del dev "$dev" clsact 2>/dev/null
		on "$side" ip link del "$mon" 2>/dev/null
		echo "mirror of $dev removed"
		return 0
	fi
	mtu=$(state_get mtu)
	if ! on "$side" ip link show dev "$peer" >/dev/null 2>&1; then
		on "$side" ip link add "$mon" mtu "${mtu:-1500}" type veth peer name "$peer" mtu "${mtu:-1500}" ||
			die "cannot create the mirror veth pair $mon/$peer"
		on "$side" ip link set "$mon" up && on "$side" ip link set "$peer" up || die "cannot bring up $mon/$peer"
	fi
	# Both directions of the endpoint's veth, every frame (u32 match-all), copied out of $mon.
	on "$side" tc qdisc del dev "$dev" clsact 2>/dev/null
	on "$side" tc qdisc add dev "$dev" clsact || die "tc clsact failed on $dev"
	for dir in ingress egress; do
		on "$side" tc filter add dev "$dev" "$dir" pref 1 protocol all u32 match u32 0 0 \
			action mirred egress mirror dev "$mon" >/dev/null ||
			die "tc mirred ($dir) failed on $dev: does the kernel have act_mirred and cls_u32?"
	done
	echo "$peer"
}

# ---- verify ----

stat_of() { # KEY [SIDE] -> value from the last traffic's STATS line
	sed -n "s/^STATS side=${2:-client} .*\b$1=\([^ ]*\).*/\1/p" "$STATE/last-traffic" 2>/dev/null | head -n 1
}

cmd_verify() {
	local secs=2 dir cap_tool ok_arrive=0 ok_ops=0 ok_pair=0 arrived ops paired files=() drops_pid=""
	while [ $# -gt 0 ]; do
		case $1 in
		-D | --duration) secs=${2:-}; shift 2 || usage_die "-D needs seconds" ;;
		*) usage_die "verify: unknown option '$1'" ;;
		esac
	done
	[[ $secs =~ ^[0-9]+$ ]] && [ "$secs" -ge 1 ] && [ "$secs" -le 60 ] || usage_die "invalid -D '$secs' (1 to 60 seconds)"
	need_root
	is_up || die "testbed is not up (run 'scripts/testbed.sh up')"
	load_state
	dir=$STATE/verify
	rm -rf "$dir"
	mkdir -p "$dir" "$STATE/pids"
	if [ -x "$BIN/agentxdp-drops" ]; then
		# Runs until SIGINT after the test (then prints its table); attached once it says so.
		"$BIN/agentxdp-drops" --addr "$IP_A" --duration 300s >"$dir/drops.txt" 2>"$dir/drops.err" &
		drops_pid=$!
		echo "$drops_pid" >"$STATE/pids/drops"
		for _ in $(seq 50); do
			grep -q counting "$dir/drops.err" 2>/dev/null && break
			kill -0 "$drops_pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	capture_start "$dir" $((secs + 30))
	[ "$CAP_TOOL" = tcpdump ] && echo "capture: tcpdump on $DEV_B (bin/agentxdp-capture is not built)"
	files=("${CAP_FILES[@]}")
	cap_tool=$CAP_TOOL
	run_traffic bw write "$secs" 1 4096 0 >"$dir/traffic.txt" 2>&1
	capture_stop
	if [ -n "$drops_pid" ]; then
		kill -INT "$drops_pid" 2>/dev/null
		wait "$drops_pid" 2>/dev/null
		rm -f "$STATE/pids/drops"
	fi

	# (1) arrival: RoCE packets from a seen on b's veth.
	arrived=$(tcpdump -nr "${files[0]}" "udp dst port $ROCE_PORT and src host $IP_A" 2>/dev/null | wc -l)
	[ "${arrived:-0}" -gt 0 ] && ok_arrive=1
	# (2) delivery: operations completed.
	ops=$(stat_of ops_completed)
	[ "${ops:-0}" -gt 0 ] 2>/dev/null && ok_ops=1
	# (3) the analyzer pairs request and ACK flows.
	paired=""
	if [ -x "$BIN/agentxdp-analyze" ]; then
		if "$BIN/agentxdp-analyze" -q "${CAP_ANALYZE[@]}" -o "$dir/verify.db" >"$dir/analyze.out" 2>&1 || [ -f "$dir/verify.db" ]; then
			paired=$(sqlite3 "$dir/verify.db" "SELECT count(*) FROM qp WHERE peer_qp_id IS NOT NULL AND peer_qp_id != 0" 2>"$dir/sqlite.err")
		fi
		[ "${paired:-0}" -gt 0 ] 2>/dev/null && ok_pair=1
	fi
	echo "verify ($BACKEND backend, ${secs}s of RDMA WRITE from a to b, capture: $cap_tool)"
	if [ $ok_arrive = 1 ]; then echo "  PASS arrival:   $arrived RoCE packets from $IP_A captured on $DEV_B"; else
		echo "  FAIL arrival:   no RoCE packet from $IP_A reached $DEV_B"; fi
	if [ $ok_ops = 1 ]; then echo "  PASS delivery:  $ops RDMA operations completed"; else
		echo "  FAIL delivery:  ${ops:-no} RDMA operations completed$(grep -h 'Completion with error' "$STATE/client.out" 2>/dev/null | head -n 1 | sed 's/^ */ (/; s/$/)/')"; fi
	if [ ! -x "$BIN/agentxdp-analyze" ]; then
		echo "  FAIL pairing:   cannot check: $BIN/agentxdp-analyze is not built (run make)"
	elif [ $ok_pair = 1 ]; then echo "  PASS pairing:   agentxdp-analyze paired $paired request/ACK flows (qp.peer_qp_id)"; else
		echo "  FAIL pairing:   agentxdp-analyze paired no request/ACK flows${paired:+ ($paired)}$([ -s "$dir/sqlite.err" ] && echo ": $(head -n 1 "$dir/sqlite.err")")"; fi
	if [ $ok_arrive = 1 ] && [ $ok_ops = 1 ] && [ $ok_pair = 1 ]; then
		echo "verify: PASS (files in $dir)"
		return 0
	fi
	if [ $ok_arrive = 1 ] && [ $ok_ops = 0 ]; then
		echo "  packets arrive but operations do not complete: something on host b drops them"
	fi
	if [ -n "$drops_pid" ]; then
		echo "  agentxdp-drops (skb:kfree_skb, RoCE to/from $IP_A, during the test):"
		if grep -q . "$dir/drops.txt"; then
			sed 's/^/    /' "$dir/drops.txt"
			if grep -q NETFILTER_DROP "$dir/drops.txt"; then
				echo "  diagnosis: a firewall rule drops RoCE (NETFILTER_DROP): see iptables-save / nft list ruleset on the receiving host$([ "$BACKEND" = emu ] && echo " (ip netns exec $NS_B iptables-save)")"
			fi
		else
			echo "    no RoCE packet dropped in the kernel$([ -s "$dir/drops.err" ] && echo " ($(head -n 1 "$dir/drops.err"))")"; fi
	else
		echo "  who dropped them: unknown, $BIN/agentxdp-drops is not built (run make)"
	fi
	echo "verify: FAIL (files in $dir)"
	return 1
}

# ---- main ----

[ $# -gt 0 ] || { usage >&2; exit 2; }
cmd=$1
shift
# Interrupted during traffic or verify: stop what we started, by pid.
trap 'stop_bg; exit 130' INT TERM
case $cmd in
-h | --help | help) usage ;;
up) cmd_up "$@" ;;
down) cmd_down "$@" ;;
status) cmd_status "$@" ;;
traffic) cmd_traffic "$@" ;;
impair) cmd_impair "$@" ;;
mirror) cmd_mirror "$@" ;;
verify) cmd_verify "$@" ;;
*) usage_die "unknown command '$cmd'" ;;
esac
