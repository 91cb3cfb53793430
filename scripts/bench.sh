#!/usr/bin/env bash
# bench.sh: run every benchmark (tests/bench/bench_*.sh) and print one table with the machine
# and the command behind each figure; the full table is also written to docs/benchmarks.md.
# Each bench script prints table rows: | figure | measured | peer / target | command |
#   BENCH=substring   run only the bench scripts whose name contains it (docs/ is not touched)
# Every figure issue #12 asks for must come out of some script: a figure no script produced
# (or produced as FAILED) is reported as "MISSING: <figure>" and the exit status is 1.
set -u
cd "$(dirname "$0")/.."
only=${BENCH:-}

# figure | script that measures it | extended regex its row's first column matches (any case)
EXPECTED='decode rate|bench_decode|^ *decode throughput
analyze rate end to end|bench_analyze|analyze packets/s end to end
analyze ratio to tshark|bench_analyze|analyze vs tshark
analyze peak RSS on the 10M-packet trace|bench_analyze|peak RSS
analyze core ns per packet|bench_analyze|core only
decoder-only packets/s|bench_analyze|decoder only
analyze database size per million packets|bench_analyze|database size per million
synthesizer rate|bench_synth|synth generation rate
capture zero-loss rate against tcpdump|bench_capture|captured / lost
capture CPU per packet against tcpdump|bench_capture|CPU per captured packet
XDP ns per packet|bench_capture|XDP program per
localization accuracy|bench_eval|localization top-1
localization false-positive rate|bench_eval|localization.*healthy.*(no|without) finding
detection time|bench_detection|detection time'

rows=$(mktemp /tmp/agentxdp-bench.XXXXXX)
out=$(mktemp /tmp/agentxdp-bench.XXXXXX)
trap 'rm -f "$rows" "$out"' EXIT
status=0 ran=""
for b in $(ls tests/bench/bench_*.sh 2>/dev/null | sort); do
	[ -z "$only" ] || [[ "$b" == *"$only"* ]] || continue
	ran="$ran $(basename "$b" .sh)"
	echo "== $b" >&2
	# BENCH is ours; the scripts (and what they run) must not see it.
	if ! env -u BENCH bash "$b" >>"$rows"; then
		echo "| $b | FAILED | | bash $b |" >>"$rows"
		status=1
	fi
done
[ -n "$ran" ] || { echo "bench.sh: no bench script matches BENCH=$only" >&2; exit 2; }

{
	echo "# Benchmarks"
	echo
	echo "Measured by \`make bench\` on $(date -u +%Y-%m-%d): $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB,"
	echo "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), kernel $(uname -r),"
	echo "load average $(cut -d' ' -f1-3 /proc/loadavg) when the table was printed."
	echo
	echo "| figure | measured | peer / target | command |"
	echo "|---|---|---|---|"
	grep '^|' "$rows" | grep -v '^|---' | grep -Eiv '^\| *(figure|fault|healthy: no finding) *\|'
	# What people wrote about the figures, below this marker, is kept from the last table.
	sed -n '/^<!-- notes: kept by scripts\/bench.sh -->$/,$p' docs/benchmarks.md 2>/dev/null | sed '1s/^/\n/'
} >"$out"

# Every expected figure, from the scripts that ran: a row whose measurement is real.
# With BENCH=, only the figures of the scripts that ran.
missing=""
while IFS='|' read -r figure script pattern; do
	[ -z "$only" ] || [[ " $ran " == *" $script "* ]] || continue
	got=$(awk -F'|' -v pat="$pattern" 'BEGIN { pat = tolower(pat) }
		tolower($2) ~ pat && $3 !~ /^ *(not built|\?|-)? *$/ && $3 !~ /FAILED/ { n++ } END { print n + 0 }' "$out")
	[ "$got" -gt 0 ] ||
		missing="${missing}MISSING: $figure (no measured row from $script.sh matching /$pattern/)"$'\n'
done <<<"$EXPECTED"
if [ -n "$missing" ]; then
	printf '\n%s' "$missing" >>"$out"
	printf '%s' "$missing" >&2
	status=1
fi

cat "$out"
if [ -z "$only" ]; then
	mkdir -p docs && cp "$out" docs/benchmarks.md
else
	echo "bench.sh: BENCH=$only ran$ran; docs/benchmarks.md keeps the last full run" >&2
fi
exit $status
