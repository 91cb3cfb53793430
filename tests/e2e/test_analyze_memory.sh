#!/usr/bin/env bash
# test_analyze_memory.sh: agentxdp-analyze's peak RSS grows with queue pairs, within the
# documented bound per QP (docs/agentxdp-analyze.8, MEMORY), and not with trace length.
# Traces come from build/gen_qp_trace (N RC QPs x R rounds of RDMA WRITE + ACK).
# AXMEM_QPS sets the big run's QPs: by default a million (issue #12's fault test, ~4.3 GB and
# ~50 s of CPU), or 100000 where less than 8 GB of memory is available (said in a note).
. "$(dirname "$0")/../lib.sh"
A="$BIN/agentxdp-analyze"
G="$TOP/build/gen_qp_trace"
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
if [ -n "${AXMEM_QPS:-}" ]; then
	QPS=$AXMEM_QPS
elif [ "${avail_kb:-0}" -ge $((8 * 1024 * 1024)) ]; then
	QPS=1000000
else
	QPS=100000
	echo "note: only $((avail_kb / 1024)) MB available: 100000 QPs instead of a million (AXMEM_QPS=1000000 forces it)"
fi
PER_QP_BOUND_KB=6	# docs/agentxdp-analyze.8 MEMORY: at most 6 KB per QP (two flows)

for tool in "$A" "$G" /usr/bin/time; do
	[ -x "$tool" ] || { fail analyze-memory "$tool missing (make all; apt install time)"; exit 0; }
done
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# rss_kb TRACE [OPTIONS...]: peak RSS (kB) of one analysis into a database.
rss_kb() {
	local trace=$1
	shift
	/usr/bin/time -f %M -o "$work/rss" "$A" -q "$@" "$trace" -o "$work/out.db" >/dev/null 2>"$work/err" ||
		{ echo "analyze failed: $(head -n 1 "$work/err")" >&2; return 1; }
	cat "$work/rss"
}

# (a) RSS per QP: many QPs with one round each, against a 1000-QP run (same code, same libraries).
"$G" 1000 1 "$work/small.pcap" && "$G" "$QPS" 1 "$work/big.pcap" || { fail analyze-memory-gen "gen_qp_trace failed"; exit 0; }
small=$(rss_kb "$work/small.pcap") && big=$(rss_kb "$work/big.pcap") || { fail analyze-memory-per-qp "analysis failed"; exit 0; }
flows=$(sqlite3 "$work/out.db" "SELECT count(*) FROM qp")
expect_eq analyze-memory-flows "$((2 * QPS))" "$flows"
per_qp_bytes=$(((big - small) * 1024 / (QPS - 1000)))
echo "note: $QPS QPs: peak RSS $((big / 1024)) MB, 1000 QPs: $((small / 1024)) MB; $per_qp_bytes bytes per QP"
if [ "$per_qp_bytes" -le $((PER_QP_BOUND_KB * 1024)) ]; then
	pass "analyze-memory-per-qp ($per_qp_bytes bytes per QP <= $PER_QP_BOUND_KB KB)"
else
	fail analyze-memory-per-qp "$per_qp_bytes bytes per QP > $PER_QP_BOUND_KB KB ($QPS QPs: $big kB, 1000 QPs: $small kB)"
fi
rm -f "$work/big.pcap"

# (b) Same 1000 QPs, 10x the packets (100 -> 1000 rounds, an 18 MB -> 184 MB file): RSS may
# grow only by the latency samples kept exactly (two kinds per QP, 4 bytes each, arrays that
# double: at most 8 bytes a sample) plus 8 MB; reading the file into memory, or any state per
# packet, would not fit. --sample-rows 10 keeps the database's own rows (SQLite's sorter) fixed.
"$G" 1000 100 "$work/short.pcap" && "$G" 1000 1000 "$work/long.pcap" || { fail analyze-memory-gen "gen_qp_trace failed"; exit 0; }
# The window is fixed (--window 1s): the default follows the span (about 100 windows a
# flow), and what is checked here is that per-flow state does not grow with packets.
# Each -j: a lane's own reader and trackers are a constant (peak RSS at 100 rounds 14.2 MB
# at -j 1, 16.2 at -j 2, 20.9 at -j 4), so the growth must be flat at every -j. Measured
# 2026-12-02, three rounds: +20.4-20.6 MB at -j 1, +20.6-20.7 at -j 2, +18.3-18.7 at -j 4
# (the 22.3-22.5 MB at -j 2 seen on 2026-12-01, docs/benchmarks.md, did not reproduce).
allowed_kb=$(((1000 * 2 * 900 * 8) / 1024 + 8192))
for j in 1 2 4; do
	short=$(rss_kb "$work/short.pcap" -j $j --sample-rows 10 --window 1s) &&
		long=$(rss_kb "$work/long.pcap" -j $j --sample-rows 10 --window 1s) ||
		{ fail analyze-memory-length-j$j "analysis failed"; continue; }
	echo "note: -j $j, 1000 QPs: 100 rounds $((short / 1024)) MB, 1000 rounds $((long / 1024)) MB peak RSS (allowed growth $((allowed_kb / 1024)) MB)"
	if [ $((long - short)) -le "$allowed_kb" ]; then
		pass "analyze-memory-length-j$j (10x packets: +$(((long - short) / 1024)) MB)"
	else
		fail analyze-memory-length-j$j "10x packets grew RSS by $(((long - short) / 1024)) MB > $((allowed_kb / 1024)) MB ($short -> $long kB)"
	fi
done
exit 0
