#!/usr/bin/env bash
# bench.sh: run every benchmark (tests/bench/bench_*.sh) and print one table with the machine
# and the command behind each figure; the table is also written to docs/benchmarks.md.
# Each bench script prints table rows: | figure | measured | peer / target | command |
set -u
cd "$(dirname "$0")/.."
out=$(mktemp /tmp/agentxdp-bench.XXXXXX)
{
	echo "# Benchmarks"
	echo
	echo "Measured by \`make bench\` on $(date -u +%Y-%m-%d): $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB,"
	echo "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), kernel $(uname -r)."
	echo
	echo "| figure | measured | peer / target | command |"
	echo "|---|---|---|---|"
} >"$out"
status=0
for b in $(ls tests/bench/bench_*.sh 2>/dev/null | sort); do
	echo "== $b" >&2
	if ! bash "$b" >>"$out"; then
		echo "| $b | FAILED | | bash $b |" >>"$out"
		status=1
	fi
done
cat "$out"
mkdir -p docs && cp "$out" docs/benchmarks.md && rm -f "$out"
exit $status
