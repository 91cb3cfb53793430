#!/usr/bin/env bash
# bench_synth.sh: agentxdp-synth generation rate on one core: packets written per second of
# CPU time (user+sys, what one core spends) and of wall time, for a trace of N packets.
# BENCH_SYNTH_PACKETS (default 10000000) sets N (whole frames: N/10). Prints markdown rows.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
synth="$top/bin/agentxdp-synth"
n=${BENCH_SYNTH_PACKETS:-10000000}
out=$(mktemp -d /tmp/agentxdp-bench-synth.XXXXXX)
trap 'rm -rf "$out"' EXIT
[ -x "$synth" ] || { echo "| synth generation rate | not built | | make |"; exit 1; }

run() {	# label, packets, then synth options; prints one row
	local label=$1 n=$2
	shift 2
	local cmd="agentxdp-synth -o DIR --hosts 16 --leaves 4 --spines 2 --load 80% --duration 60s --max-packets $n $*"
	local t0 t1 cpu
	t0=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$out/time" "$synth" -q -o "$out/run" --hosts 16 --leaves 4 --spines 2 \
		--load 80% --duration 60s --max-packets "$n" "$@" || return 1
	t1=$(date +%s.%N)
	cpu=$(awk '{ print $1 + $2 }' "$out/time")
	local got
	got=$(python3 -c "import json; print(json.load(open('$out/run/truth.json'))['vantages'][0]['packets'])")
	local size
	size=$(du -m "$out/run/trace.pcapng" | cut -f1)
	awk -v l="$label" -v n="$got" -v c="$cpu" -v w="$(echo "$t1 - $t0" | bc)" -v s="$size" -v cmd="$cmd" 'BEGIN {
		printf "| synth generation rate, %s (%d packets, %d MB trace) | %.2f M packets/s of CPU (%.1f s); %.2f M packets/s wall (%.1f s) | target >= 1 M packets/s on one core | `%s` |\n",
			l, n, s, n / c / 1e6, c, n / w / 1e6, w, cmd }'
	rm -rf "$out/run"
}
run "snaplen 128" "$n" --snaplen 128
# Whole frames are ~1 KB each: a tenth as many packets keeps the file near 1 GB.
run "whole frames with ICRC" $((n / 10))
