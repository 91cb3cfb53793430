#!/usr/bin/env bash
# bench_analyze.sh: agentxdp-analyze on production-shaped traces (issue #20: >= 2,000 RC queue
# pairs, an ACK every second request packet, 1% loss on two host links, 128-byte snaplen, 10M
# packets) made once by agentxdp-synth into build/bench/, two fabrics: the oversubscribed one
# issue #20 measured (its uplinks drop more than they forward) and the same traffic on a
# non-blocking fabric (only the faulty links drop). For each trace, in the same run on that file:
# end to end with the database against a tshark -T fields pass extracting the same per-packet
# fields (wall and CPU), the core alone (decode + track, ns of CPU per packet: build/bench_core),
# the decoder alone (packets/s of CPU), the same analysis without the database (--json), peak
# RSS, the database's size per million packets, and -j 1 against -j 2 (with the database and
# with --json; issue #20 asks >= 1.7x on 2 idle cores: on a shared machine the row says the
# load average it ran under).
# tshark takes about 35 s of CPU per million packets: by default it reads a 1M-packet prefix
# (editcap) and its times are scaled to the trace, which the row says;
# BENCH_ANALYZE_TSHARK_PACKETS=N changes the prefix (N >= the trace: the whole trace).
# Prints markdown rows, the first column naming the fabric:
#   | figure | measured | peer / target | command |
# BENCH_ANALYZE_PACKETS sets the trace size (default 10000000); the traces are cached in
# build/bench/ between runs (same command, same bytes).
set -u
cd "$(dirname "$0")/../.."
A=bin/agentxdp-analyze
S=bin/agentxdp-synth
CORE=build/bench_core
N=${BENCH_ANALYZE_PACKETS:-10000000}
TSHARK_N=${BENCH_ANALYZE_TSHARK_PACKETS:-1000000}
PREFIX=$((N < TSHARK_N ? N : TSHARK_N))

for tool in "$A" "$S" "$CORE"; do
	[ -x "$tool" ] || { echo "bench_analyze: $tool not built (make all)" >&2; exit 1; }
done
for tool in tshark editcap /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench_analyze: $tool not installed" >&2; exit 1; }
done

mkdir -p build/bench
work=$(mktemp -d /tmp/agentxdp-bench-analyze.XXXXXX)
trap 'rm -rf "$work"' EXIT

# measure OUT CMD...: wall seconds, user+sys seconds, peak RSS kB of one run, into OUT.
measure() {
	local out=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/stderr"
	local rc=$?
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$work/time" >"$out"
	return $rc
}

# keep_best VAR: the last measure into ${VAR}_wall, ${VAR}_cpu and ${VAR}_rss when its wall is
# the best.
keep_best() {
	local var=$1 w c r bw
	read -r w c r <"$work/b"
	bw=$(eval echo "\${${var}_wall:-}")
	if [ -z "$bw" ] || awk -v w="$w" -v b="$bw" 'BEGIN { exit !(w < b) }'; then
		printf -v "${var}_wall" %s "$w"
		printf -v "${var}_cpu" %s "$c"
		printf -v "${var}_rss" %s "$r"
	fi
}
speedup() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; }
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' <<<"$2"; }

# bench_trace SHAPE TRACE SYNTH_ARGS...: every row for one trace, made once by agentxdp-synth.
bench_trace() {
	local shape=$1 trace=$2
	unset a_wall j_wall db1_wall db2_wall json1_wall json2_wall
	shift 2
	local synth_cmd="$S -q -o $trace $*"
	if [ ! -s "$trace" ]; then
		mkdir -p "$(dirname "$trace")"
		$synth_cmd || { echo "bench_analyze: agentxdp-synth failed" >&2; exit 1; }
	fi
	cat "$trace" >/dev/null # page cache

	# The analyzer takes seconds: the best wall clock of 3 runs (tshark, minutes, runs once).
	for run in 1 2 3; do
		rm -f "$work/out.db"
		measure "$work/b" "$A" -q "$trace" -o "$work/out.db" || {
			echo "bench_analyze: agentxdp-analyze failed: $(head -n 1 "$work/stderr")" >&2
			exit 1
		}
		keep_best a
	done
	# The same analysis without the database (--json on stdout), best of 3: what SQLite costs.
	for run in 1 2 3; do
		measure "$work/b" "$A" -q --json "$trace" || { echo "bench_analyze: agentxdp-analyze --json failed" >&2; exit 1; }
		keep_best j
	done
	# -j 1 against -j 2, runs alternating so both see the same machine, best wall of 3 each.
	load_before=$(cut -d' ' -f1 /proc/loadavg)
	for mode in db json; do
		if [ $mode = db ]; then out=(-o "$work/j.db"); else out=(--json); fi
		for run in 1 2 3; do
			for j in 1 2; do
				rm -f "$work/j.db"
				measure "$work/b" "$A" -q -j $j "$trace" "${out[@]}" ||
					{ echo "bench_analyze: -j $j failed: $(head -n 1 "$work/stderr")" >&2; exit 1; }
				keep_best "$mode$j"
			done
		done
	done
	load_after=$(cut -d' ' -f1 /proc/loadavg)

	pkts=$(sqlite3 "$work/out.db" "SELECT sum(roce_packets) FROM capture")
	rows=$(sqlite3 "$work/out.db" "SELECT (SELECT count(*) FROM latency_sample) || ' sample rows, '
		|| (SELECT count(*) FROM retransmission_burst) || ' retransmission runs of '
		|| (SELECT sum(packets) FROM retransmission_burst) || ' packets, ' || (SELECT count(*) FROM qp) || ' flows'")
	db_bytes=$(stat -c %s "$work/out.db")
	db_mb=$((db_bytes / 1048576))
	rc_qps=$(sqlite3 "$work/out.db" "SELECT count(*) FROM qp WHERE transport = 'RC' AND role = 'requester'" 2>/dev/null)

	# The core alone, best (least CPU) of 3: decode, and decode + track, over frames in memory.
	# The peer in the same run: the same packets tracked one qp_tracker_add() at a time.
	core_ns= single_ns= dec_mpps=
	for run in 1 2 3; do
		line=$("$CORE" "$trace") || { echo "bench_analyze: $CORE failed" >&2; exit 1; }
		c=$(field core_ns "$line") d=$(field decode_mpps "$line")
		if [ -z "$core_ns" ] || awk -v a="$c" -v b="$core_ns" 'BEGIN { exit !(a < b) }'; then
			core_ns=$c single_ns=$(field single_ns "$line")
		fi
		if [ -z "$dec_mpps" ] || awk -v a="$d" -v b="$dec_mpps" 'BEGIN { exit !(a > b) }'; then dec_mpps=$d; fi
	done

	# tshark: the same per-packet fields the analyzer reads, on the first PREFIX packets.
	rm -f "$work/prefix.pcapng"
	if [ "$PREFIX" -ge "$N" ]; then
		ln -s "$PWD/$trace" "$work/prefix.pcapng"
	else
		editcap -r "$trace" "$work/prefix.pcapng" 1-$PREFIX >/dev/null 2>&1
	fi
	measure "$work/t" tshark -r "$work/prefix.pcapng" --disable-protocol rpcordma --disable-protocol nvme-rdma \
		-T fields -e frame.time_epoch -e ip.src -e ip.dst -e udp.srcport -e ip.dsfield.ecn \
		-e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn \
		-e infiniband.aeth.syndrome -e infiniband.aeth.msn -e infiniband.reth.dmalen
	read -r t_wall t_cpu t_rss <"$work/t"
	scale=$(awk -v n="$pkts" -v p="$PREFIX" 'BEGIN { printf "%.3f", n / p }')
	t_scaled=$(awk -v w="$t_wall" -v s="$scale" 'BEGIN { printf "%.1f", w * s }')
	t_cpu_scaled=$(awk -v c="$t_cpu" -v s="$scale" 'BEGIN { printf "%.1f", c * s }')

	pps=$(awk -v n="$pkts" -v w="$a_wall" 'BEGIN { printf "%.2fM", n / w / 1e6 }')
	pps_cpu=$(awk -v n="$pkts" -v c="$a_cpu" 'BEGIN { printf "%.2fM", n / c / 1e6 }')
	ratio=$(awk -v t="$t_scaled" -v a="$a_wall" 'BEGIN { printf "%.0fx", t / a }')
	ratio_cpu=$(awk -v t="$t_cpu_scaled" -v a="$a_cpu" 'BEGIN { printf "%.0fx", t / a }')
	cmd="$A -q $trace -o out.db"
	echo "| $shape: agentxdp-analyze end to end, $pkts packets ($rows, ${db_mb} MB db), best of 3 | ${a_wall} s wall, ${a_cpu} s CPU | tshark -T fields same fields: ${t_wall} s for $PREFIX packets, scaled x$scale = ${t_scaled} s | \`$cmd\` |"
	echo "| $shape: agentxdp-analyze vs tshark | $ratio faster (wall), $ratio_cpu (CPU: tshark ${t_cpu} s x$scale) | target >= 100x (issue #20) | trace: \`$synth_cmd\` |"
	echo "| $shape: agentxdp-analyze packets/s end to end (SQLite, default -j: the cores available, at most 2) | $pps/s wall, $pps_cpu/s CPU | target >= 3M/s | \`$cmd\` |"
	echo "| $shape: agentxdp-analyze without the database (--json, no -o), best of 3 | ${j_wall} s wall, ${j_cpu} s CPU | with it: ${a_wall} s wall, ${a_cpu} s CPU ($(awk -v a="$a_cpu" -v j="$j_cpu" 'BEGIN { printf "%.0f%%", (a > 0 ? 100 * (a - j) / a : 0) }') of the CPU is the database) | \`$A -q --json $trace\` |"
	echo "| $shape: agentxdp-analyze peak RSS, $pkts packets ($(($(stat -L -c %s "$trace") / 1048576)) MB trace) | $((a_rss / 1024)) MB | tshark on $PREFIX packets: $((t_rss / 1024)) MB | /usr/bin/time -f %M |"
	echo "| $shape: agentxdp-analyze core only: decode + track, CPU per packet ($pkts packets, frames in memory, best of 3) | ${core_ns} ns | one packet at a time (qp_tracker_add), same run: ${single_ns} ns; target <= 150 ns | \`$CORE $trace\` |"
	echo "| $shape: decoder only (roce_decode_frame over frames in memory), packets/s of CPU, best of 3 | ${dec_mpps}M/s | target >= 20M/s | \`$CORE $trace\` |"
	echo "| $shape: agentxdp-analyze database size per million packets ($pkts packets, ${rc_qps:-?} RC queue pairs) | $(awk -v b="$db_bytes" -v n="$pkts" 'BEGIN { printf "%.1f MB", b / 1048576 / (n / 1e6) }') | | \`$cmd\` |"
	echo "| $shape: agentxdp-analyze -j 2 against -j 1, with the database, best wall of 3 each (load average $load_before -> $load_after on $(nproc) cores) | $(speedup "$db1_wall" "$db2_wall") wall: -j 1 ${db1_wall} s wall, ${db1_cpu} s CPU; -j 2 ${db2_wall} s wall, ${db2_cpu} s CPU | target >= 1.7x on 2 idle cores | \`$A -q -j 2 $trace -o out.db\` |"
	echo "| $shape: agentxdp-analyze -j 2 against -j 1, --json (no database), best wall of 3 each | $(speedup "$json1_wall" "$json2_wall") wall: -j 1 ${json1_wall} s wall, ${json1_cpu} s CPU; -j 2 ${json2_wall} s wall, ${json2_cpu} s CPU | target >= 1.7x on 2 idle cores | \`$A -q -j 2 --json $trace\` |"
}

# 48 hosts x 16 peers x 4 QPs = 3,072 queue pairs, about 80% of them RC (the mixed workload).
# The shape issue #20 measured: 12 hosts a leaf at 60% load over 2 100G uplinks, oversubscribed
# 2.7:1, so the uplinks drop more than they forward (the synthesizer's truth.json: 2.9M drops,
# 2.4M of the 10M packets resent) and few messages complete, which makes it cheap to analyze.
bench_trace "oversubscribed fabric (2.7:1, uplinks dropping)" build/bench/prod-$N.pcapng \
	--hosts 48 --leaves 4 --spines 2 --peers 16 --qps-per-pair 4 --workload mixed --load 60% \
	--duration 10s --max-packets $N --snaplen 128 --ack-every 2 --seed 42 \
	--fault link=198.18.0.10-leaf0,kind=loss,size=1% --fault link=198.18.0.25-leaf1,kind=loss,size=1%
# The same hosts, load and faults on a non-blocking fabric (4 spines at 400G: 1.6T up for 1.2T
# down a leaf), as GPU fabrics are built: only the faulty links drop, messages complete, and
# every completion is a latency sample to count.
bench_trace "non-blocking fabric" build/bench/nonblocking/prod-$N.pcapng \
	--hosts 48 --leaves 4 --spines 4 --fabric-gbps 400 --peers 16 --qps-per-pair 4 --workload mixed \
	--load 60% --duration 10s --max-packets $N --snaplen 128 --ack-every 2 --seed 42 \
	--fault link=198.18.0.10-leaf0,kind=loss,size=1% --fault link=198.18.0.25-leaf1,kind=loss,size=1%
