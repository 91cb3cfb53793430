# tests/e2e/testbed_lib.sh: helpers the testbed tests share (sourced after tests/lib.sh).
TB="$TOP/scripts/testbed.sh"
# Other suites may run these tests at the same time: a testbed and a /30 of our own.
export AXTB_ID=t$(printf '%04x' $((RANDOM % 65536)))
TB_STATE=/run/agentxdp-testbed-$AXTB_ID
TB_NET=$((RANDOM % 256)).$(((RANDOM % 64) * 4))
IP_A=198.19.${TB_NET%.*}.$((${TB_NET#*.} + 1))
IP_B=198.19.${TB_NET%.*}.$((${TB_NET#*.} + 2))
TB_UP_ARGS=(--addr-a "$IP_A/30" --addr-b "$IP_B/30")

# Everything `down` must put back: rules, routes, the sysctls either backend touches, firewall.
tb_snapshot() {
	local k
	ip -4 rule show
	ip -6 rule show
	ip -4 route show table all
	ip -6 route show table all | grep -v -E '^(local|multicast|anycast) .* dev axtb-' 
	for k in net.ipv4.conf.all.accept_local net.ipv4.conf.all.rp_filter net.ipv4.conf.default.rp_filter \
		net.ipv4.ip_forward net.core.devconf_inherit_init_net; do
		echo "$k=$(sysctl -n "$k" 2>/dev/null)"
	done
	# Packet counters move with unrelated traffic; the rules themselves must not.
	iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'
	ip6tables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'
	ip netns list | grep "axtb$AXTB_ID-" || true
}

# STATS value of the last traffic run: tb_stat KEY [client|server]
tb_stat() {
	sed -n "s/^STATS side=${2:-client} .*\b$1=\([^ ]*\).*/\1/p" "$TB_STATE/last-traffic" 2>/dev/null | head -n 1
}

# Is agentxdp-analyze's analysis (not only --dump) implemented in this tree?
tb_analyzer_ready() {
	[ -x "$BIN/agentxdp-analyze" ] || return 1
	local d
	d=$(mktemp -d /tmp/axtb-anl.XXXXXX)
	printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x01\x00\x00\x00' >"$d/empty.pcap"
	"$BIN/agentxdp-analyze" -q "$d/empty.pcap" -o "$d/x.db" >"$d/out" 2>&1
	if grep -q "not implemented" "$d/out"; then rm -rf "$d"; return 1; fi
	rm -rf "$d"
	return 0
}

tb_preflight() { # NAME: fails/skips and returns 1 when the testbed cannot run here
	if ! need_root; then
		skip_or_fail_in_ci "$1" "needs root (network namespaces)"
		return 1
	fi
	if [ ! -x "$BIN/agentxdp-roce-emu" ]; then
		fail "$1" "bin/agentxdp-roce-emu is not built"
		return 1
	fi
	for t in ip tc iptables tcpdump sqlite3 python3; do
		if ! command -v $t >/dev/null 2>&1; then
			skip_or_fail_in_ci "$1" "$t is not installed (bash scripts/deps.sh)"
			return 1
		fi
	done
	return 0
}
