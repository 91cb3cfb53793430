#!/usr/bin/env bash
# bench_decode.sh: decoder throughput (packets/s, trace in the page cache) against tshark -T fields
# over the same trace in the same run. Prints markdown rows: | figure | measured | peer | command |
# The trace is agentxdp-synth's (mixed workload, 128-byte snaplen) when it is built, else the
# biggest trace in samples/ or ../shared/captures. BENCH_DECODE_RUNS sets the runs (best kept).
set -u
cd "$(dirname "$0")/../.."
DEC=build/decode_fields
ANALYZE=bin/agentxdp-analyze
RUNS=${BENCH_DECODE_RUNS:-3}
TS_FIELDS=(-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn
	-e infiniband.bth.a -e infiniband.aeth.syndrome -e infiniband.aeth.msn
	-e infiniband.reth.dmalen -e udp.srcport)

for tool in "$DEC" "$ANALYZE"; do
	[ -x "$tool" ] || { echo "bench_decode: $tool not built (make all)" >&2; exit 1; }
done
command -v tshark >/dev/null || { echo "bench_decode: tshark not installed" >&2; exit 1; }
work=$(mktemp -d /tmp/agentxdp-bench-decode.XXXXXX)
trap 'rm -rf "$work"' EXIT

if [ -x bin/agentxdp-synth ]; then
	trace_cmd="bin/agentxdp-synth -q -o TRACE --workload mixed --duration 5ms --snaplen 128 --seed 7"
	bin/agentxdp-synth -q -o "$work/synth/bench.pcapng" --workload mixed --duration 5ms \
		--snaplen 128 --seed 7 || exit 1
	trace=$work/synth/bench.pcapng
else
	trace=$(ls -S samples/*.pcap* ../shared/captures/*.pcap 2>/dev/null | head -n 1)
	[ -n "$trace" ] || { echo "bench_decode: no trace to measure" >&2; exit 1; }
	trace_cmd=$trace
fi
pkts=$(capinfos -c -M "$trace" 2>/dev/null | awk '/Number of packets/ { print $NF }')
[ -n "$pkts" ] && [ "$pkts" -gt 0 ] || { echo "bench_decode: cannot count packets of $trace" >&2; exit 1; }
cat "$trace" >/dev/null # into the page cache

# best_of CMD...: "wall_s cpu_s" of the fastest of RUNS runs (cpu = user + sys).
best_of() {
	local i t best=""
	for ((i = 0; i < RUNS; i++)); do
		t=$({ TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>&1; } 2>&1 | tail -n 1)
		best=$(printf '%s\n%s\n' "$best" "$t" | awk 'NF == 3 { w = $1; c = $2 + $3
			if (!seen || w < bw) { bw = w; bc = c; seen = 1 } } END { printf "%.3f %.3f", bw, bc }')
	done
	echo "$best"
}

read -r dec_wall dec_cpu <<<"$(best_of "$DEC" "$trace")"
read -r cnt_wall cnt_cpu <<<"$(best_of "$DEC" --count "$trace")"
read -r dump_wall dump_cpu <<<"$(best_of "$ANALYZE" --dump -q "$trace")"
read -r ts_wall ts_cpu <<<"$(best_of tshark --disable-protocol rpcordma --disable-protocol nvme-rdma \
	-r "$trace" -T fields -E separator=/t "${TS_FIELDS[@]}")"

rate() { awk -v n="$pkts" -v s="$1" 'BEGIN { if (s > 0) printf "%.0f", n / s; else print "inf" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.1f", b / a; else print "inf" }'; }
desc="$pkts-packet trace ($trace_cmd), best of $RUNS, page cache"
echo "| decode throughput, wall clock: decode_fields (9 fields per packet, to /dev/null) | $(rate "$dec_wall") pkts/s | tshark -T fields (same 9 fields): $(rate "$ts_wall") pkts/s; ratio $(ratio "$dec_wall" "$ts_wall")x | $DEC TRACE; $desc |"
echo "| decode throughput, CPU time (user+sys): decode_fields | $(rate "$dec_cpu") pkts/s | tshark -T fields: $(rate "$ts_cpu") pkts/s; ratio $(ratio "$dec_cpu" "$ts_cpu")x | same runs |"
echo "| read + decode only (decode_fields --count), wall clock | $(rate "$cnt_wall") pkts/s | tshark -T fields: ratio $(ratio "$cnt_wall" "$ts_wall")x | $DEC --count TRACE |"
echo "| agentxdp-analyze --dump (one summary line per packet), wall clock | $(rate "$dump_wall") pkts/s | tshark -T fields: ratio $(ratio "$dump_wall" "$ts_wall")x | $ANALYZE --dump TRACE |"
