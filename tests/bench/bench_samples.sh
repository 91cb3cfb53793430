#!/usr/bin/env bash
# bench_samples.sh: what raw latency sample rows cost (issue #20 item 1). agentxdp-analyze -o
# on one production-shaped synth trace (32 hosts, 2985 flows, mixed workload, 0.1% loss on a
# link, 1M packets, 128-byte snaplen) with --samples all (every flow's rows: what every run
# wrote before), findings (the default) and none, in the same run. Best of 3 by CPU time
# (user+sys). Prints markdown rows: | figure | measured | peer / target | command |
# BENCH_SAMPLES_PACKETS sets the trace size (default 1000000; cached in build/bench/).
set -u
cd "$(dirname "$0")/../.."
A=bin/agentxdp-analyze
S=bin/agentxdp-synth
N=${BENCH_SAMPLES_PACKETS:-1000000}

for tool in "$A" "$S" /usr/bin/time sqlite3; do
	[ -x "$tool" ] || command -v "$tool" >/dev/null || { echo "bench_samples: $tool missing" >&2; exit 1; }
done
mkdir -p build/bench
dir=build/bench/samples-$N
synth_cmd="$S -q -o $dir/trace.pcapng --hosts 32 --leaves 4 --peers 8 --qps-per-pair 6 --workload mixed --load 30% --duration 50ms --max-packets $N --snaplen 128 --seed 42 --fault link=leaf0-spine1,kind=loss,size=0.1%"
if [ ! -s "$dir/trace.pcapng" ]; then
	$synth_cmd || { echo "bench_samples: agentxdp-synth failed" >&2; exit 1; }
fi
work=$(mktemp -d /tmp/agentxdp-bench-samples.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat "$dir/trace.pcapng" >/dev/null # page cache

# measure MODE: best-of-3 "cpu wall db_bytes rows" of agentxdp-analyze --samples MODE.
measure() {
	local mode=$1 best= line
	for run in 1 2 3; do
		rm -f "$work/$mode.db"
		/usr/bin/time -f '%e %U %S' -o "$work/time" "$A" -q "$dir/trace.pcapng" --topology "$dir/links.csv" \
			--paths "$dir/paths.csv" --samples "$mode" -o "$work/$mode.db" >/dev/null 2>"$work/err" || {
			echo "bench_samples: agentxdp-analyze --samples $mode failed: $(head -n 1 "$work/err")" >&2
			return 1
		}
		line=$(awk '{ printf "%.2f %.2f", $2 + $3, $1 }' "$work/time")
		if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
			best=$line
		fi
	done
	echo "$best $(stat -c %s "$work/$mode.db") $(sqlite3 "$work/$mode.db" "SELECT count(*) FROM latency_sample")"
}
read -r all_cpu all_wall all_db all_rows < <(measure all) || exit 1
flows=$(sqlite3 "$work/all.db" "SELECT count(*) FROM qp")
pkts=$(sqlite3 "$work/all.db" "SELECT sum(roce_packets) FROM capture")
hist=$(sqlite3 "$work/all.db" "SELECT (SELECT count(*) FROM latency_window) || ' latency_window + ' || (SELECT count(*) FROM latency_hist) || ' latency_hist rows'")
verdict_all=$(sqlite3 "$work/all.db" "SELECT group_concat(kind || ' ' || subject, '; ') FROM finding")
cmd="bin/agentxdp-analyze -q TRACE --topology links.csv --paths paths.csv -o out.db --samples MODE"
peer="--samples all: $all_cpu s CPU, $all_wall s wall, $((all_db / 1048576)) MB, $all_rows sample rows"
for mode in findings none; do
	read -r cpu wall db rows < <(measure "$mode") || exit 1
	same=$([ "$(sqlite3 "$work/$mode.db" "SELECT group_concat(kind || ' ' || subject, '; ') FROM finding")" = "$verdict_all" ] &&
		echo "same findings" || echo "FINDINGS DIFFER")
	echo "| analyze -o --samples $mode, $pkts packets, $flows flows ($hist; $same) | $cpu s CPU ($(awk -v a="$all_cpu" -v b="$cpu" 'BEGIN { printf "%.2f", b / a }')x all), $wall s wall, $((db / 1048576)) MB db ($(awk -v a="$all_db" -v b="$db" 'BEGIN { printf "%.2f", b / a }')x), $rows sample rows; load average $(cut -d' ' -f1 /proc/loadavg) | $peer | \`$cmd\`; trace: \`$synth_cmd\` |"
done
