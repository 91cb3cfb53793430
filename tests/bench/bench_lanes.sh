#!/usr/bin/env bash
# bench_lanes.sh: -j 1 against -j 2 on one trace, and whether the two lanes of -j 2 slow each
# other down. Each round runs, alternating: -j 1; -j 2 (both lanes at once); -j 2 on one CPU
# (taskset: the same lanes one after the other). Prints each run's wall and each reader's
# CPU (-vv), then the medians: -j 1 wall / -j 2 wall (the speed-up), and the slower lane's
# CPU at once / apart (about 1.0: the lanes share nothing that costs; more: they contend,
# as when they shared cache lines, docs/benchmarks.md). On idle cores, or with
# BENCH_LANES_RT=1 (chrt -f 1: each run preempts everything else; runs last seconds).
# Usage: tests/bench/bench_lanes.sh [TRACE [ROUNDS]] (default: bench_analyze.sh's
# non-blocking 10M-packet trace, which make bench builds first, and 3 rounds; --json, or
# BENCH_LANES_ARGS; BENCH_LANES_BIN: another build's agentxdp-analyze). The last line is a
# markdown row for scripts/bench.sh's table.
set -u
default_trace=$(dirname "$0")/../../build/bench/nonblocking/prod-10000000.pcapng
trace=$(realpath -- "${1:-$default_trace}" 2>/dev/null) || trace=${1:-$default_trace}
rounds=${2:-3}
[ -n "${BENCH_LANES_BIN:-}" ] && BENCH_LANES_BIN=$(realpath -- "$BENCH_LANES_BIN" 2>/dev/null)
cd "$(dirname "$0")/../.."
ANALYZE=${BENCH_LANES_BIN:-bin/agentxdp-analyze}
[ -r "$trace" ] || { echo "bench_lanes: $trace: not readable" >&2; exit 1; }
[ -x "$ANALYZE" ] || { echo "bench_lanes: $ANALYZE not built (make)" >&2; exit 1; }
case $rounds in '' | *[!0-9]* | 0) echo "bench_lanes: ROUNDS must be a positive number" >&2; exit 2 ;; esac
command -v taskset >/dev/null || { echo "bench_lanes: taskset not installed" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "bench_lanes: fewer than 2 CPUs" >&2; exit 1; }
read -r -a args <<<"${BENCH_LANES_ARGS:---json}"
prefix=()
[ "${BENCH_LANES_RT:-0}" = 1 ] && prefix=(chrt -f 1)
work=$(mktemp -d /tmp/agentxdp-bench-lanes.XXXXXX)
trap 'rm -rf "$work"' EXIT

# run NAME CMD...: one run; "NAME wall cpu0 cpu1 ..." to $work/runs, and the line shown.
run() {
	local name=$1 t0 t1 cpus
	shift
	rm -f "$work/x.db"
	t0=$(date +%s.%N)
	(cd "$work" && "$@" >/dev/null 2>"$work/err") ||
		{ echo "bench_lanes: $*: $(grep -v ': -j' "$work/err" | head -n 1)" >&2; exit 1; }
	t1=$(date +%s.%N)
	cpus=$(sed -n 's/.*reader \([0-9]*\): .*, \([0-9.]*\) s CPU$/\2/p' "$work/err" | tr '\n' ' ')
	echo "$name $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $cpus" | tee -a "$work/runs"
}

abs=$(realpath "$ANALYZE") tr_abs=$(realpath "$trace")
echo "# $ANALYZE -vv -j J ${args[*]} $trace, $rounds rounds${prefix:+ under ${prefix[*]}} (name wall reader CPU...)"
for ((i = 0; i < rounds; i++)); do
	run j1 "${prefix[@]}" "$abs" -vv -j 1 "${args[@]}" "$tr_abs" || exit 1
	run j2 "${prefix[@]}" "$abs" -vv -j 2 "${args[@]}" "$tr_abs" || exit 1
	run j2-one-cpu "${prefix[@]}" taskset -c 0 "$abs" -vv -j 2 "${args[@]}" "$tr_abs" || exit 1
done

# median NAME FIELD: the median of one field (2: wall; "max": the slower reader) over the runs.
median() {
	awk -v n="$1" -v f="$2" '$1 == n { v = $2; if (f == "max") { v = $3; for (i = 4; i <= NF; i++) if ($i > v) v = $i }
		print v }' "$work/runs" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
w1=$(median j1 2) w2=$(median j2 2) l2=$(median j2 max) l1=$(median j2-one-cpu max) r1=$(median j1 max)
echo "medians: -j 1 wall $w1 s (reader $r1 s), -j 2 wall $w2 s (slower lane $l2 s at once, $l1 s apart)"
awk -v a="$w1" -v b="$w2" -v c="$l2" -v d="$l1" -v r="$r1" -v n="$rounds" \
	-v l="$(cut -d' ' -f1 /proc/loadavg)" -v cmd="bash tests/bench/bench_lanes.sh $trace $rounds" \
	-v args="${args[*]}" 'BEGIN {
	printf "-j 2 against -j 1: %.2fx by the wall clock; slower lane / -j 1 reader: %.2f; lane at once / apart: %.2f\n",
		a / b, c / r, c / d
	printf "| -j 2 against -j 1, %s, medians of %d rounds (bench_lanes.sh; load average %s) | %.2fx wall (%.2f -> %.2f s); slower lane at once / apart: %.2f | target >= 1.7x on 2 idle cores | `%s` |\n",
		args, n, l, a / b, a, b, c / d, cmd }'
