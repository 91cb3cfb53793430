#!/usr/bin/env bash
# test_drops_cli.sh: agentxdp-drops' command line: help and its examples, usage errors,
# missing privileges, reason names from BTF agreeing with the tracepoint's own format.
. "$(dirname "$0")/../lib.sh"
TOOL=$BIN/agentxdp-drops
WORK=$(tmpdir)
TRACEFS=
cleanup() {
	[ -n "$TRACEFS" ] && umount "$TRACEFS" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

if [ ! -x "$TOOL" ]; then
	fail drops-cli "$TOOL is not built"
	exit 1
fi

# usage_error NAME ARGS...: exit status 2, one message line naming the problem and --help.
usage_error() {
	local name=$1 rc
	shift
	"$TOOL" "$@" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q '^agentxdp-drops: .*see --help' "$WORK/err" &&
		[ ! -s "$WORK/out" ]; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr: $(tr '\n' ' ' <"$WORK/err")"
	fi
}

"$TOOL" --help >"$WORK/help" 2>&1
expect_eq drops-help-exit 0 $?
check drops-help-examples grep -q '^Examples:' "$WORK/help"
check drops-help-oneshot grep -q -- '--duration TIME .*one-shot' "$WORK/help"
"$TOOL" --version | grep -q '^agentxdp-drops [0-9]'
expect_eq drops-version 0 $?

usage_error drops-usage-port "--port" 70000
usage_error drops-usage-port-zero --port 0
usage_error drops-usage-proto --proto sctp
usage_error drops-usage-addr --addr 198.18.0.300
usage_error drops-usage-duration --duration 3parsecs
usage_error drops-usage-interval --interval 1ms
usage_error drops-usage-icmp-port --proto icmp --port 1
usage_error drops-usage-extra-arg --duration 1s eth0
usage_error drops-usage-unknown --bogus

if ! need_root; then
	skip_or_fail_in_ci drops-cli-root "needs root to load BPF"
	[ "$T_FAILED" -eq 0 ]
	exit
fi

# Every example of --help runs and exits 0 (those without --duration stop on SIGINT).
n=0
while read -r line; do
	n=$((n + 1))
	read -r -a argv <<<"${line#agentxdp-drops }"
	(cd "$WORK" && timeout --preserve-status -s INT 2 "$TOOL" "${argv[@]}" >"$WORK/ex.out" 2>"$WORK/ex.err")
	rc=$?
	if [ $rc -eq 0 ] && [ -s "$WORK/ex.out" -o "${line/--json/}" != "$line" ]; then
		pass "drops-help-example-$n"
	else
		fail "drops-help-example-$n" "'$line' exited $rc: $(tr '\n' ' ' <"$WORK/ex.err")"
	fi
done < <(sed -n '/^Examples:/,$p' "$WORK/help" | sed -n 's/^  \(agentxdp-drops .*\)/\1/p')
[ $n -ge 3 ] && pass drops-help-examples-found || fail drops-help-examples-found "only $n"

# Without privileges: one clear line, exit 1, before touching the kernel.
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$TOOL" --duration 1s \
	>"$WORK/out" 2>"$WORK/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] && grep -q 'CAP_BPF' "$WORK/err"; then
	pass drops-no-privileges
else
	fail drops-no-privileges "exit $rc, stderr: $(tr '\n' ' ' <"$WORK/err")"
fi

# A database that cannot be opened: one line, exit 1.
"$TOOL" --duration 1s --db "$WORK/no/such/dir/x.db" >"$WORK/out" 2>"$WORK/err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'database .*x.db' "$WORK/err" && [ "$(grep -vc 'counting kfree_skb' "$WORK/err")" -eq 1 ]; then
	pass drops-db-unwritable
else
	fail drops-db-unwritable "exit $rc, stderr: $(tr '\n' ' ' <"$WORK/err")"
fi

# Reason names: the kernel's BTF enum and the tracepoint's print format are two
# independent sources; the tool must read the same names from both.
"$TOOL" --list-reasons >"$WORK/btf.txt" 2>"$WORK/btf.err"
check drops-list-reasons-btf grep -qx '[0-9]* NETFILTER_DROP' "$WORK/btf.txt"
TRACEFS=$WORK/tracefs
mkdir -p "$TRACEFS"
if mount -t tracefs nodev "$TRACEFS" 2>"$WORK/mount.err"; then
	AGENTXDP_DROPS_NO_BTF_NAMES=1 AGENTXDP_DROPS_TRACEFS=$TRACEFS "$TOOL" --list-reasons \
		>"$WORK/tracefs.txt" 2>"$WORK/tracefs.err"
	check drops-list-reasons-tracefs-source grep -q 'named by tracefs' "$WORK/tracefs.err"
	# BTF also names the two values that are not drops, and the subsystems.
	grep -v -e " NOT_DROPPED_YET$" -e " CONSUMED$" -e "^subsys " "$WORK/btf.txt" >"$WORK/btf.cmp"
	grep -v "^subsys " "$WORK/tracefs.txt" >"$WORK/tracefs.cmp"
	if [ -s "$WORK/tracefs.cmp" ] && diff -u "$WORK/btf.cmp" "$WORK/tracefs.cmp" >"$WORK/diff"; then
		pass drops-list-reasons-btf-equals-tracefs
	else
		fail drops-list-reasons-btf-equals-tracefs "$(head -5 "$WORK/diff" | tr '\n' ' ')"
	fi
	umount "$TRACEFS" && TRACEFS=
else
	skip_or_fail_in_ci drops-list-reasons-tracefs "cannot mount tracefs: $(cat "$WORK/mount.err")"
fi

[ "$T_FAILED" -eq 0 ]
