# tests/lib.sh: helpers sourced by every shell test. Each check prints one line:
#   PASS name | FAIL name: why | SKIP name: why
# tests/run.sh counts these lines. Source from a test with: . "$(dirname "$0")/../lib.sh"
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="$TOP/bin"
SHARED_CAPTURES=${SHARED_CAPTURES:-$TOP/../shared/captures}
T_FAILED=0

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: ${2:-}"; T_FAILED=$((T_FAILED + 1)); }
# A skip must say why, loudly. Under CI, a skip for a missing kernel feature is a failure.
skip() { echo "SKIP $1: ${2:-}"; }
skip_or_fail_in_ci() {
	if [ "${CI:-}" = true ]; then fail "$1" "CI must run this: ${2:-}"; else skip "$1" "${2:-}"; fi
}
# check NAME CMD...: PASS when CMD succeeds.
check() {
	local name=$1
	shift
	if "$@" >/tmp/agentxdp-check.$$ 2>&1; then pass "$name"; else
		fail "$name" "$(tail -n 3 /tmp/agentxdp-check.$$ | tr '\n' ' ')"
	fi
	rm -f /tmp/agentxdp-check.$$
}
# expect_eq NAME EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "expected '$2', got '$3'"; fi
}
have_shared() { [ -d "$SHARED_CAPTURES" ] && ls "$SHARED_CAPTURES"/*.pcap >/dev/null 2>&1; }
need_root() { [ "$(id -u)" -eq 0 ]; }
tmpdir() { mktemp -d /tmp/agentxdp-test.XXXXXX; }
# tshark with the traps of ../shared/captures/README.md disabled.
tshark_roce() { tshark --disable-protocol rpcordma --disable-protocol nvme-rdma "$@" 2>/dev/null; }
