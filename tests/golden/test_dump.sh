#!/usr/bin/env bash
# test_dump.sh: agentxdp-analyze --dump as a user meets it: lines, counts, errors, exit status,
# standard input, several traces merged, --port.
. "$(dirname "$0")/../lib.sh"

AN=$BIN/agentxdp-analyze
if [ ! -x "$AN" ]; then
	fail dump "$AN not built (run make all)"
	exit 1
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
python3 "$TOP/tests/fuzz/gen_seeds.py" --traces "$work" >/dev/null || {
	fail dump "tests/fuzz/gen_seeds.py --traces failed"
	exit 1
}
ether=$work/crafted-ether.pcap

# Counts on stderr: malformed by reason, as the generator's .expect file says the frames were built.
"$AN" --dump "$ether" >"$work/out" 2>"$work/err"
rc=$?
expect_eq dump-exit-clean 0 "$rc"
want=$(awk -F'\t' '$2 == "malformed" { n[$3]++ } END {
	split("bad-link bad-ip bad-udp bad-bth bad-ext bad-grh bad-encap", order, " ")
	for (i = 1; i <= 7; i++) if (order[i] in n) { s = s (s ? ", " : "") order[i] " " n[order[i]]; t += n[order[i]] }
	printf "%d malformed (%s)", t, s }' "$work/crafted-ether.expect")
if grep -q "RoCE packets, [0-9]* other packets, $want\$" "$work/err"; then
	pass "dump-malformed-counts: $want"
else
	fail dump-malformed-counts "wanted '$want' in: $(cat "$work/err")"
fi
roce=$(sed -n 's/.*: \([0-9]*\) RoCE packets.*/\1/p' "$work/err")
expect_eq dump-one-line-per-roce-packet "$roce" "$(wc -l <"$work/out")"

# Standard input gives the same lines.
"$AN" --dump - <"$ether" >"$work/out-stdin" 2>/dev/null
check dump-stdin cmp "$work/out" "$work/out-stdin"

# --port: the frame sent to 4792 becomes RoCE (one more packet, one fewer other).
"$AN" --dump --port 4792 "$ether" >"$work/out-port" 2>/dev/null
expect_eq dump-port "$(($(wc -l <"$work/out") + 1))" "$(wc -l <"$work/out-port")"

# Errors: one line on stderr, exit 1, nothing on stdout.
error_case() {
	local name=$1 what=$2
	shift 2
	"$AN" --dump "$@" >"$work/eo" 2>"$work/ee"
	local rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <"$work/ee")" -eq 1 ] && grep -q -- "$what" "$work/ee" &&
		[ ! -s "$work/eo" ]; then
		pass "$name"
	else
		fail "$name" "exit $rc, stderr: $(tr '\n' '|' <"$work/ee")"
	fi
}
: >"$work/empty.pcap"
echo "not a capture" >"$work/text.pcap"
error_case dump-missing-file "nosuch.pcap: No such file or directory" "$work/nosuch.pcap"
error_case dump-empty-file "empty file" "$work/empty.pcap"
error_case dump-not-a-capture "text.pcap: not a pcap or pcapng file" "$work/text.pcap"
error_case dump-empty-stdin "standard input: empty input" - </dev/null

# A truncated trace: what was read is printed, the reason is said, exit 1.
size=$(stat -c %s "$ether")
head -c $((size - 30)) "$ether" >"$work/cut.pcap"
"$AN" --dump "$work/cut.pcap" >"$work/cut-out" 2>"$work/cut-err"
rc=$?
expect_eq dump-truncated-exit 1 "$rc"
if grep -q "cut.pcap: truncated or corrupt after" "$work/cut-err" &&
	[ "$(wc -l <"$work/cut-out")" -ge $(($(wc -l <"$work/out") - 1)) ]; then
	pass "dump-truncated-keeps-what-was-read: $(wc -l <"$work/cut-out") lines"
else
	fail dump-truncated-keeps-what-was-read "$(wc -l <"$work/cut-out") lines; $(tr '\n' '|' <"$work/cut-err")"
fi

# Two traces: lines say which trace, in time order.
"$AN" --dump "$work/crafted-sll.pcap" "$work/crafted-raw.pcap" >"$work/two" 2>/dev/null
if awk '{ split($1, a, ":"); if (!(a[1] == 0 || a[1] == 1)) exit 1; if ($2 + 0 < last) exit 1; last = $2 + 0; seen[a[1]] = 1 }
	END { exit !(0 in seen && 1 in seen) }' "$work/two"; then
	pass "dump-two-traces-merged"
else
	fail dump-two-traces-merged "$(head -n 4 "$work/two" | tr '\n' '|')"
fi

# Against tshark on a real capture: every line's QP and PSN.
if have_shared && command -v tshark >/dev/null; then
	f=$SHARED_CAPTURES/magnate3__linux-riscv-dev__rocev1_test.pcap
	tshark -r "$f" -Y infiniband -T fields -E separator=' ' -e frame.number -e infiniband.bth.destqp \
		-e infiniband.bth.psn 2>/dev/null >"$work/ts-qp"
	"$AN" --dump "$f" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) { if ($i ~ /^QP=/) q = substr($i, 4); if ($i ~ /^PSN=/) p = substr($i, 5) } print $1, q, p }' >"$work/dump-qp"
	if [ -s "$work/ts-qp" ] && cmp -s "$work/ts-qp" "$work/dump-qp"; then
		pass "dump-vs-tshark-qp-psn: $(wc -l <"$work/ts-qp") packets of rocev1_test.pcap"
	else
		fail dump-vs-tshark-qp-psn "$(diff "$work/ts-qp" "$work/dump-qp" | head -n 3 | tr '\n' '|')"
	fi
else
	skip dump-vs-tshark-qp-psn "no ../shared/captures or no tshark"
fi

# The mirror session of each tunnelled packet, last on its line, against tshark's reading of the
# outer headers (ERSPAN span ID or VXLAN VNI, and the first IP source: the switch). Two hosts,
# each its own session (agentxdp-synth --mirror-sessions).
session_rows() {
	awk '{ for (i = 1; i <= NF; i++) if ($i == "via") { print $1, $(i + 1), $(i + 3), $(i + 5); break } }' "$1"
}
if [ -x "$BIN/agentxdp-synth" ] && command -v tshark >/dev/null; then
	for encap in erspan2:erspan.spanid vxlan:vxlan.vni; do
		d=$work/${encap%%:*}
		if ! "$BIN/agentxdp-synth" -q -o "$d" --hosts 2 --leaves 1 --spines 1 --peers 1 --workload write \
			--duration 1ms --seed 3 --vantage each-host --encap "${encap%%:*}" --mirror-sessions; then
			fail "dump-session-${encap%%:*}" "agentxdp-synth failed"
			continue
		fi
		"$AN" --dump "$d/trace.pcapng" >"$d/dump" 2>/dev/null
		tshark_roce -r "$d/trace.pcapng" -Y infiniband -T fields -E occurrence=f -E separator=' ' \
			-e frame.number -e "${encap#*:}" -e ip.src |
			awk -v e="${encap%%:*}" '{ print $1, e, $2, $3 }' >"$d/ts"
		n_sessions=$(awk '{ print $3, $4 }' "$d/ts" | sort -u | wc -l)
		if [ "$n_sessions" -eq 2 ] && [ "$(wc -l <"$d/dump")" -eq "$(wc -l <"$d/ts")" ] &&
			cmp -s "$d/ts" <(session_rows "$d/dump"); then
			pass "dump-session-${encap%%:*}-vs-tshark: $(wc -l <"$d/ts") packets, $n_sessions sessions"
		else
			fail "dump-session-${encap%%:*}-vs-tshark" "$n_sessions sessions; $(diff "$d/ts" <(session_rows "$d/dump") | head -n 3 | tr '\n' '|')"
		fi
	done
else
	skip dump-session "agentxdp-synth not built or no tshark"
fi

# The count line names what was read: InfiniBand for ibdump's ERF records, RoCE for Ethernet.
ib=$SHARED_CAPTURES/ib/srinivaskoritala__rdma-softroce-demo__infiniband.pcap
if [ -f "$ib" ] && command -v tshark >/dev/null; then
	n_ib=$(tshark_roce -r "$ib" -Y infiniband | wc -l)
	"$AN" --dump "$ib" >"$work/ib-out" 2>"$work/ib-err"
	check dump-count-infiniband grep -q ": $n_ib InfiniBand packets, 0 other packets" "$work/ib-err"
	# Both kinds at once: each counted under its name.
	"$AN" --dump "$ib" "$ether" >/dev/null 2>"$work/mix-err"
	check dump-count-infiniband-and-roce grep -q ": $n_ib InfiniBand packets, $roce RoCE packets," "$work/mix-err"
else
	skip dump-count-infiniband "no ../shared/captures/ib or no tshark"
fi
[ "$T_FAILED" -eq 0 ]
