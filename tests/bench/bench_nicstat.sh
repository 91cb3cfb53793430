#!/usr/bin/env bash
# bench_nicstat.sh: CPU cost of one agentxdp-nicstat interval on a 16-port mlx5 fixture
# (read every counter file, rates, detector, Prometheus + OTLP JSON built), against the
# floor of reading the same files with cat in the same run.
set -u
cd "$(dirname "$0")/../.."
. tests/nicstat/fixture.sh
T=$(mktemp -d /tmp/agentxdp-bench-nic.XXXXXX)
trap 'rm -rf "$T"' EXIT
SYS=$T/sys
fx_root "$SYS"
for d in 0 1 2 3 4 5 6 7; do
	fx_mlx5 "$SYS" mlx5_$d eth$((d * 2)) 1
	fx_mlx5 "$SYS" mlx5_$d eth$((d * 2 + 1)) 2
done
files=$(fx_count_files "$SYS")
READS=50
cpu_ms() { # CMD...: user+sys CPU milliseconds of CMD (bash's time keyword)
	local TIMEFORMAT='%U %S' t
	t=$({ time "$@" >/dev/null 2>&1; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d", (a[1] + a[2]) * 1000 }'
}
nic_ms=$(cpu_ms bin/agentxdp-nicstat --sysfs "$SYS" -c $READS --interval 10ms --prom "$T/out.prom" -q)
cat_once() { find "$SYS/class/infiniband" "$SYS/class/net" -type f -path '*counters/*' -o -type f -path '*statistics/*' | xargs cat; }
CAT_READS=5
cat_loop() { local i; for ((i = 0; i < CAT_READS; i++)); do cat_once; done; }
cat_ms=$(cpu_ms cat_loop)
awk -v n="$nic_ms" -v c="$cat_ms" -v r=$READS -v cr=$CAT_READS -v f="$files" 'BEGIN {
	printf "| agentxdp-nicstat CPU per interval, 16 mlx5 ports, %d counters (read, rates, detector, Prometheus text) | %.1f ms | a shell script (find, xargs cat) reading the same files: %.1f ms | bench_nicstat.sh: agentxdp-nicstat -c %d --interval 10ms --prom F |\n", f, n / r, c / cr, r
}'
samples=$(grep -c '^agentxdp_nic_stat_total{' "$T/out.prom")
echo "| Prometheus samples per interval (16 ports) | $samples raw + $(grep -c '^agentxdp_nic_stat_rate_per_second{' "$T/out.prom") rates | one per counter file: $files | bench_nicstat.sh |"
