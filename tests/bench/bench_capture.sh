#!/usr/bin/env bash
# bench_capture.sh: agentxdp-capture's cost. Rows: | figure | measured | peer / target | command |
#  1. the XDP program per packet through BPF_PROG_TEST_RUN (repeat), RoCE and other traffic;
#  2. the same program on live veth traffic (kernel bpf_stats: run_time_ns / run_cnt);
#  3. packets per second captured and lost, and user-space CPU per packet, against
#     tcpdump -s 128 -w on the same tcpreplay --topspeed traffic in the same run: the
#     process's CPU (user + system, /proc/PID/task/*/schedstat, in ns) while the traffic
#     flows, and apart from it what each tool spends to start (load and attach / open).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/e2e/capture_lib.sh"
N=${CAPTURE_BENCH_PACKETS:-200000}
need_root || { echo "| capture | needs root | | bash tests/bench/bench_capture.sh |"; exit 1; }

# The XDP program alone: BPF_PROG_TEST_RUN, 1e6 packets per round, median (and min) of 5
# rounds; a consumer drains the ring between batches of at most half the ring, so no
# record is lost (lost must be 0). The ring size decides whether the records' memory
# is cache-hot: -B 8192 (the default) and -B 256, split over the CPUs as agentxdp-capture does.
XDP_REPEAT=${CAPTURE_BENCH_XDP_REPEAT:-1000000}
for ring_kib in 8192 256; do
	cmd="nice -n 10 build/tests-bpf/test_xdp_prog --bench $XDP_REPEAT $ring_kib 5"
	out=$(nice -n 10 "$TOP/build/tests-bpf/test_xdp_prog" --bench "$XDP_REPEAT" $ring_kib 5) ||
		{ echo "| capture: XDP program | FAILED | | $cmd |"; exit 1; }
	lost=$(echo "$out" | sed -n 's/^lost //p')
	[ "$lost" = 0 ] || { echo "| capture: XDP program | INVALID: $lost records lost (ring full) | | $cmd |"; exit 1; }
	region_kib=$(($(echo "$out" | sed -n 's/^ring_region_bytes //p') / 1024))
	echo "$out" | while read -r tag kind median min; do
		[ "$tag" = ns_per_pkt ] || continue
		echo "| capture: XDP program per packet, $kind, -B $ring_kib ($region_kib KiB ring per CPU) (BPF_PROG_TEST_RUN, median of 5 x $XDP_REPEAT) | $median ns (min $min) | target < 50 ns | $cmd |"
	done
done
cmd="nice -n 10 build/tests-bpf/test_xdp_prog --bench-empty build/tests-bpf/xdp_dummy.bpf.o $XDP_REPEAT 5"
out=$(nice -n 10 "$TOP/build/tests-bpf/test_xdp_prog" --bench-empty "$TOP/build/tests-bpf/xdp_dummy.bpf.o" "$XDP_REPEAT" 5) ||
	{ echo "| capture: empty XDP program | FAILED | | $cmd |"; exit 1; }
echo "$out" | while read -r tag kind median min; do
	echo "| capture: peer for non-RoCE frames: an XDP program that only returns XDP_PASS (same harness) | $median ns (min $min) | | $cmd |"
done
echo "| capture: machine load while measuring (1-minute load average, $(nproc) CPUs) | $(cut -d' ' -f1 /proc/loadavg) | | cat /proc/loadavg |"

cap_add_pair axcap-a axcap-b >/dev/null 2>&1 || { echo "| capture: veth | FAILED | | |"; exit 1; }
"$CAP_GEN" "$CAP_TMP/bench.pcap" "$N" 64 0 || exit 1

# CPU time of every thread of a process in ns (the scheduler's sum_exec_runtime: exact,
# where utime+stime from /proc/PID/stat come in 10 ms ticks).
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ t += $1 } END { printf "%d", t }'; }
sent_pps() { sed -n 's/.*Rated: [0-9.]* Bps, [0-9.]* Mbps, \([0-9.]*\) pps.*/\1/p' "$CAP_TMP/replay.log" | head -n 1; }

# agentxdp-capture, with the kernel's BPF run-time statistics on for the live per-packet cost.
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 >/proc/sys/kernel/bpf_stats_enabled
cap_start "$CAP_TMP/cap.log" -q -i axcap-b -w "$CAP_TMP/cap.pcapng"
cap_wait_xdp axcap-b || { echo "| capture: attach | FAILED | | |"; exit 1; }
sleep 0.3
cap_cpu0=$(cpu_ns "$CAP_PID")
cap_replay axcap-a "$CAP_TMP/bench.pcap" --topspeed
cap_pps=$(sent_pps)
sleep 1.2 # past the reader's next drain and the writer's flush
prog_id=$(ip -n "$CAP_NS_RX" -d link show dev axcap-b | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -n 1)
read -r run_ns run_cnt < <(bpftool prog show id "$prog_id" -j | python3 -c 'import json,sys; p=json.load(sys.stdin); print(p.get("run_time_ns", 0), p.get("run_cnt", 0))')
cap_cpu=$(cpu_ns "$CAP_PID")
kill -INT "$CAP_PID"
wait "$CAP_PID"
echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled
cap_pkts=$($CAP_BLOCKS "$CAP_TMP/cap.pcapng" | wc -l)
cap_lost=$($CAP_BLOCKS --blocks "$CAP_TMP/cap.pcapng" | sed -n 's/^isb 0 .*drop=\([0-9]*\).*/\1/p' | tail -n 1)

# The peer for the live figure: an XDP_PASS-only program, attached in native mode as
# agentxdp-capture is on veth, on the same traffic, measured by the same bpf_stats (whose
# own two clock reads per run are in both figures).
echo 1 >/proc/sys/kernel/bpf_stats_enabled
ip -n "$CAP_NS_RX" link set dev axcap-b xdpdrv obj "$TOP/build/tests-bpf/xdp_dummy.bpf.o" sec xdp ||
	{ echo "| capture: empty XDP program on veth | FAILED to attach | | |"; exit 1; }
cap_replay axcap-a "$CAP_TMP/bench.pcap" --topspeed
dummy_id=$(ip -n "$CAP_NS_RX" -d link show dev axcap-b | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -n 1)
read -r dummy_ns dummy_cnt < <(bpftool prog show id "$dummy_id" -j | python3 -c 'import json,sys; p=json.load(sys.stdin); print(p.get("run_time_ns", 0), p.get("run_cnt", 0))')
ip -n "$CAP_NS_RX" link set dev axcap-b xdpdrv off
echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled

# tcpdump on the same traffic.
ip netns exec "$CAP_NS_RX" tcpdump -i axcap-b -s 128 -w "$CAP_TMP/tcpdump.pcap" 2>"$CAP_TMP/tcpdump.log" &
td=$!
CAP_PIDS+=("$td")
for _ in $(seq 1 100); do grep -q "listening on" "$CAP_TMP/tcpdump.log" && break; sleep 0.05; done
sleep 0.3
td_cpu0=$(cpu_ns "$td")
cap_replay axcap-a "$CAP_TMP/bench.pcap" --topspeed
td_pps=$(sent_pps)
sleep 1.2
td_cpu=$(cpu_ns "$td")
kill -INT "$td"
wait "$td"
td_pkts=$(capinfos -Mc "$CAP_TMP/tcpdump.pcap" 2>/dev/null | sed -n 's/^Number of packets: *//p')
td_drop=$(sed -n 's/^\([0-9]*\) packets dropped by kernel/\1/p' "$CAP_TMP/tcpdump.log")

echo "| capture: XDP program per RoCE packet on live veth traffic (bpf_stats run_time_ns/run_cnt) | $(awk -v t="$run_ns" -v c="$run_cnt" 'BEGIN { printf "%.1f ns (%d runs)", c ? t / c : 0, c }') | an XDP_PASS-only program, same traffic: $(awk -v t="$dummy_ns" -v c="$dummy_cnt" 'BEGIN { printf "%.1f ns (%d runs)", c ? t / c : 0, c }') | bash tests/bench/bench_capture.sh |"
echo "| capture: $N RoCE frames, tcpreplay --topspeed over veth: captured / lost, at the sender's rate | $cap_pkts / ${cap_lost:-?} lost at $cap_pps pps | tcpdump -s 128 -w: $td_pkts / ${td_drop:-?} dropped at $td_pps pps | bash tests/bench/bench_capture.sh |"
per_pkt() { awk -v t="$1" -v n="$2" 'BEGIN { printf "%.0f", n ? t / n : 0 }'; }
cap_run=$(per_pkt $((cap_cpu - cap_cpu0)) "$cap_pkts")
td_run=$(per_pkt $((td_cpu - td_cpu0)) "$td_pkts")
echo "| capture: user-space CPU per captured packet while the traffic flows (process user+system, schedstat) | $cap_run ns | tcpdump -s 128 -w: $td_run ns; ratio $(awk -v a="$cap_run" -v b="$td_run" 'BEGIN { printf "%.2fx", b ? a / b : 0 }') (target <= 0.5x) | bash tests/bench/bench_capture.sh |"
echo "| capture: user-space CPU to start, once (agentxdp-capture: load, verify, attach; tcpdump: open the socket) | $(awk -v t="$cap_cpu0" 'BEGIN { printf "%.1f ms", t / 1e6 }') | tcpdump -s 128 -w: $(awk -v t="$td_cpu0" 'BEGIN { printf "%.1f ms", t / 1e6 }') | bash tests/bench/bench_capture.sh |"
echo "| capture: user-space CPU per captured packet, whole process (start included, $N packets) | $(per_pkt "$cap_cpu" "$cap_pkts") ns | tcpdump -s 128 -w: $(per_pkt "$td_cpu" "$td_pkts") ns | bash tests/bench/bench_capture.sh |"
