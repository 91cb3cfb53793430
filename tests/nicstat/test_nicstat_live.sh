#!/usr/bin/env bash
# test_nicstat_live.sh: agentxdp-nicstat while the fixture changes between reads, as a
# live host's counters do: rates, 32-bit and 64-bit wraps, a device reset (no huge rate),
# a device that disappears and one that appears, and the port that stands out named as a
# finding with its numbers. The expected deltas are the fixture's own arithmetic.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/fixture.sh"
NICSTAT=$BIN/agentxdp-nicstat
T=$(tmpdir)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$T"' EXIT

# wait_reads FILE K: until the JSON output holds K read summaries (a read is complete).
wait_reads() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$(grep -c '"type":"read"' "$1" 2>/dev/null)" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

SYS=$T/sys
fx_root "$SYS"
for i in 0 1 2 3; do fx_mlx5 "$SYS" mlx5_$i eth$i; done
fx_rxe "$SYS" rxe0 veth-axnic0
fx_set "$SYS" mlx5_0 1 hw_counters np_cnp_sent 1000
fx_set "$SYS" mlx5_0 1 counters port_xmit_data 4294967000
fx_set "$SYS" mlx5_1 1 hw_counters out_of_sequence 5000
fx_set "$SYS" mlx5_1 1 hw_counters roce_adp_retrans 18446744073709551000
for i in 0 1 2 3; do fx_set "$SYS" mlx5_$i 1 hw_counters local_ack_timeout_err 10; done

# Three reads, 1 s apart; the fixture changes right after reads 1 and 2.
"$NICSTAT" --sysfs "$SYS" -c 3 --interval 1s --json >"$T/out.json" 2>"$T/err.txt" &
pid=$!
if ! wait_reads "$T/out.json" 1; then
	fail live-first-read "no read summary within 10 s: $(head -2 "$T/err.txt")"
	exit 1
fi
fx_set "$SYS" mlx5_0 1 hw_counters np_cnp_sent 1500                   # +500
fx_set "$SYS" mlx5_0 1 counters port_xmit_data 200                     # 32-bit wrap: +496
fx_set "$SYS" mlx5_1 1 hw_counters out_of_sequence 10                  # device reset
fx_set "$SYS" mlx5_1 1 hw_counters roce_adp_retrans 100                # 64-bit wrap: +716
fx_set "$SYS" mlx5_0 1 hw_counters local_ack_timeout_err 11            # +1
fx_set "$SYS" mlx5_1 1 hw_counters local_ack_timeout_err 11            # +1
fx_set "$SYS" mlx5_2 1 hw_counters local_ack_timeout_err 410           # +400: stands out
fx_set "$SYS" mlx5_3 1 hw_counters local_ack_timeout_err 12            # +2
rm -rf "$SYS/class/infiniband/rxe0"                                    # rxe0 goes away
if ! wait_reads "$T/out.json" 2; then
	fail live-second-read "no second read: $(head -2 "$T/err.txt")"
	exit 1
fi
fx_hns "$SYS" hns_0 enp125s0f0                                          # hns_0 appears
wait $pid
expect_eq live-exit-0 0 $?
pid=

# ts_ns from the raw lines: jq would round these 19-digit integers to doubles.
read_ts() { grep '"type":"read"' "$T/out.json" | sed -n "$1p" | sed 's/^{"ts_ns":\([0-9]*\),.*/\1/'; }
second=$(read_ts 2)
row() { # DEV COUNTER FIELD: in the second read
	grep "\"ts_ns\":$second,\"type\":\"counter\",\"device\":\"$1\"," "$T/out.json" |
		grep "\"counter\":\"$2\"," | jq -r ".$3"
}
in_range() { # NAME RATE DELTA: the rate is the delta over the ~1 s interval
	if awk -v r="$2" -v d="$3" 'BEGIN { exit !(r >= d / 1.5 && r <= d / 0.7) }'; then
		pass "$1"
	else
		fail "$1" "rate $2 for a delta of $3 in about 1 s"
	fi
}
expect_eq rate-delta 500 "$(row mlx5_0 np_cnp_sent delta)"
expect_eq rate-kind normal "$(row mlx5_0 np_cnp_sent delta_kind)"
in_range rate-per-second "$(row mlx5_0 np_cnp_sent rate_per_s)" 500
expect_eq wrap32-delta 496 "$(row mlx5_0 port_xmit_data delta)"
expect_eq wrap32-kind wrap32 "$(row mlx5_0 port_xmit_data delta_kind)"
in_range wrap32-rate "$(row mlx5_0 port_xmit_data rate_per_s)" 496
expect_eq wrap64-delta 716 "$(row mlx5_1 roce_adp_retrans delta)"
expect_eq wrap64-kind wrap64 "$(row mlx5_1 roce_adp_retrans delta_kind)"
expect_eq reset-kind reset "$(row mlx5_1 out_of_sequence delta_kind)"
expect_eq reset-counts-from-zero 10 "$(row mlx5_1 out_of_sequence delta)"
in_range reset-no-huge-rate "$(row mlx5_1 out_of_sequence rate_per_s)" 10
expect_eq unchanged-zero-delta 0 "$(row mlx5_3 np_cnp_sent delta)"

expect_eq disappeared-event "rxe0 1" \
	"$(jq -r 'select(.type=="port_disappeared") | "\(.device) \(.port)"' "$T/out.json")"
check disappeared-warned grep -q 'warning: rxe0 port 1 disappeared' "$T/err.txt"
expect_eq appeared-event "hns_0 1" "$(jq -r 'select(.type=="port_appeared") | "\(.device) \(.port)"' "$T/out.json")"
third=$(read_ts 3)
expect_eq appeared-first-read-no-rate first \
	"$(grep "\"ts_ns\":$third,\"type\":\"counter\",\"device\":\"hns_0\"," "$T/out.json" | head -1 | jq -r .delta_kind)"
expect_eq reads-port-counts "5 4 5" "$(jq -r 'select(.type=="read") | .ports' "$T/out.json" | tr '\n' ' ' | sed 's/ $//')"

# The one port whose timeout rate stands out among the host's ports, with its numbers.
expect_eq finding-subject "lossy mlx5_2 port 1 (eth2)" \
	"$(jq -r 'select(.type=="finding" and (.evidence.signal=="timeout")) | "\(.kind) \(.subject)"' "$T/out.json")"
expect_eq finding-evidence-delta 400 \
	"$(jq -r 'select(.type=="finding" and .evidence.signal=="timeout") | .evidence.counters.local_ack_timeout_err.delta' "$T/out.json")"
expect_eq finding-evidence-peers 3 \
	"$(jq -r 'select(.type=="finding" and .evidence.signal=="timeout") | .evidence.peer_ports' "$T/out.json")"
# mlx5_0's congestion (500 CNP/s against 0 on the others) stands out too; nothing else does.
expect_eq findings-only-these "mlx5_0 port 1 (eth0) congestion
mlx5_2 port 1 (eth2) timeout" \
	"$(jq -r 'select(.type=="finding") | "\(.subject) \(.evidence.signal)"' "$T/out.json" | sort | grep -v sequence_error | grep -v retransmission)"
# The reset (10 sequence errors) and the wrap (716 retransmissions) are real events on
# mlx5_1 and may stand out against 0 elsewhere; they must not show as huge numbers.
big=$(jq -r 'select(.type=="finding") | .evidence.rate_per_s' "$T/out.json" | awk '$1 > 10000' | wc -l)
expect_eq no-huge-rate-findings 0 "$big"

exit $((T_FAILED > 0))
