#!/usr/bin/env bash
# deps.sh: install every Debian/Ubuntu package AgentXDP needs to build, test and run.
# Idempotent and quiet: a no-op when everything is present.
set -euo pipefail

PACKAGES=(
	# build
	build-essential clang llvm lld libbpf-dev bpftool libelf-dev zlib1g-dev
	libpcap-dev libsqlite3-dev libcsv-dev libcmocka-dev libmicrohttpd-dev
	libcurl4-openssl-dev pkg-config
	# run and test
	sqlite3 gnuplot-nox tshark tcpdump tcpreplay iproute2 iptables
	ethtool procps kmod jq python3 curl prometheus chromium
	libclang-rt-14-dev valgrind
)

missing=()
for pkg in "${PACKAGES[@]}"; do
	# bpftool lives in linux-tools on Ubuntu; accept either.
	if [ "$pkg" = bpftool ] && command -v bpftool >/dev/null 2>&1 && bpftool version >/dev/null 2>&1; then
		continue
	fi
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$pkg")
done

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root (sudo make deps) or install them with apt-get" >&2
	exit 1
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq >/dev/null
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/agentxdp-deps.log 2>&1; then
	# Ubuntu ships bpftool inside linux-tools.
	if printf '%s\n' "${missing[@]}" | grep -qx bpftool; then
		rest=()
		for p in "${missing[@]}"; do [ "$p" = bpftool ] || rest+=("$p"); done
		apt-get install -y -qq --no-install-recommends "${rest[@]}" "linux-tools-$(uname -r)" linux-tools-common \
			>>/tmp/agentxdp-deps.log 2>&1 || { echo "deps.sh: apt-get install failed, see /tmp/agentxdp-deps.log" >&2; exit 1; }
	else
		echo "deps.sh: apt-get install failed, see /tmp/agentxdp-deps.log" >&2
		exit 1
	fi
fi
