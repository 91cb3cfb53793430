#!/usr/bin/env bash
# eval/loc_cost.sh: what localize() costs per trace, one build against another
# (docs/evaluation.md, "Cost per trace"). Needs root (uprobes) and perf.
#
#   bash eval/loc_cost.sh BASE_BIN NEW_BIN
#
# Synthesizes one trace per cell of eval/matrix.txt (seed SEED, default 2999: outside the
# reporting range), runs each build's agentxdp-analyze on it with the matrix's options
# (--topology --paths where the cell has a fabric fault), and times every call of
# localize() with a uprobe on its entry and return. ROUNDS (default 3) rounds alternate
# the builds; a trace's figure is its fastest round. Also the whole run's CPU time (user +
# system, no probes), fastest of ROUNDS. Prints one line per cell and the totals; the JSON
# of the two builds is compared byte for byte on the way.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: $0 BASE_BIN NEW_BIN" >&2; exit 2; }
base=$(realpath "$1")
new=$(realpath "$2")
seed=${SEED:-2999}
rounds=${ROUNDS:-3}
command -v perf >/dev/null || { echo "loc_cost.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "loc_cost.sh: uprobes need root" >&2; exit 1; }
for b in "$base" "$new"; do
	[ -x "$b/agentxdp-analyze" ] || { echo "loc_cost.sh: $b/agentxdp-analyze is not built" >&2; exit 1; }
done
work=$(mktemp -d /tmp/agentxdp-loccost.XXXXXX)
cleanup() {
	perf probe -q -d 'lcbase:*' -d 'lcnew:*' 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# One trace per cell, and the analyzer's arguments for it, with the matrix's own code.
EVAL_BIN=$new python3 - "$work" "$seed" <<'EOF'
import os, subprocess, sys
sys.path.insert(0, "eval")
import matrix_eval as m
work, seed = sys.argv[1], int(sys.argv[2])
for cell in m.parse_matrix("eval/matrix.txt"):
    d = os.path.join(work, cell["name"])
    os.makedirs(d)
    r = subprocess.run(m.synth_command(cell, seed, d, m.place_faults(cell, seed)),
                       stderr=subprocess.PIPE, text=True)
    if r.returncode:
        # A full disk or a bad cell: say which, not a silent exit status.
        lines = r.stderr.strip().splitlines() or ["exit status %d" % r.returncode]
        sys.exit("loc_cost.sh: synthesizing %s: %s" % (cell["name"], lines[-1]))
    topo = "topo" in m.modes(cell)
    traces = sorted(f for f in os.listdir(d) if f.endswith(".pcapng"))
    args = [os.path.join(d, t) for t in traces] + ["--json"]
    if topo:
        args += ["--topology", os.path.join(d, "links.csv"), "--paths", os.path.join(d, "paths.csv")]
    with open(os.path.join(d, "args"), "w") as f:
        f.write("\n".join(args) + "\n")
EOF

perf probe -q -d 'lcbase:*' -d 'lcnew:*' 2>/dev/null || true
for g in base new; do
	b=$base; [ $g = new ] && b=$new
	perf probe -q -x "$b/agentxdp-analyze" -a "lc$g:${g}_in=localize" -a "lc$g:${g}_out=localize%return"
done

# localize() seconds of one run: the sum over its calls of return minus entry.
time_one() {
	local g=$1 bin=$2 dir=$3
	mapfile -t args <"$dir/args"
	perf record -q -o "$dir/perf.$g" -e "lc$g:*" -- "$bin/agentxdp-analyze" -q "${args[@]}" \
		>"$dir/json.$g" 2>/dev/null || true
	perf script -i "$dir/perf.$g" -F time,event 2>/dev/null | awk '
		/_in:/ { t = $1 + 0 } /_out/ { s += ($1 + 0) - t } END { printf "%.6f\n", s }'
}

# The whole run's CPU seconds (user + system, every thread), without probes.
run_cpu() {
	local bin=$1 dir=$2 TIMEFORMAT='%U %S'
	mapfile -t args <"$dir/args"
	{ time "$bin/agentxdp-analyze" -q "${args[@]}" >/dev/null 2>&1; } 2>&1 | awk '{ print $1 + $2 }'
}

min() { awk -v a="$1" -v b="${2:-$1}" 'BEGIN { print (a < b ? a : b) }'; }

for dir in "$work"/*/; do
	cell=$(basename "$dir")
	best_b=; best_n=; run_b=; run_n=
	for _ in $(seq "$rounds"); do
		best_b=$(min "$(time_one base "$base" "$dir")" "$best_b")
		best_n=$(min "$(time_one new "$new" "$dir")" "$best_n")
		run_b=$(min "$(run_cpu "$base" "$dir")" "$run_b")
		run_n=$(min "$(run_cpu "$new" "$dir")" "$run_n")
	done
	same=differs; cmp -s "$dir/json.base" "$dir/json.new" && same=same
	echo "$cell $best_b $best_n $same $run_b $run_n"
done >"$work/times"
printf '%-28s %10s %10s %6s %8s %12s %12s %6s\n' cell base_ms new_ms ratio json base_run_ms new_run_ms ratio
awk '{ printf "%-28s %10.2f %10.2f %6.2f %8s %12.1f %12.1f %6.2f\n", $1, $2 * 1e3, $3 * 1e3,
	($2 > 0 ? $3 / $2 : 0), $4, $5 * 1e3, $6 * 1e3, ($5 > 0 ? $6 / $5 : 0) }' "$work/times"
median_of() {
	awk -v a="$1" -v b="$2" '$a > 0 { print $b / $a }' "$work/times" | sort -g |
		awk '{ r[NR] = $1 } END { print (NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2) }'
}
awk -v median="$(median_of 2 3)" -v run_median="$(median_of 5 6)" '
	{ tb += $2; tn += $3; rb += $5; rn += $6; if ($4 != "same") d++ }
	END { printf "localize(), total over %d traces: base %.1f ms, new %.1f ms, ratio %.2f; median per-trace ratio %.2f; JSON differs on %d\n",
	             NR, tb * 1e3, tn * 1e3, tn / tb, median, d + 0
	      printf "whole run, CPU (user + system): base %.0f ms, new %.0f ms, ratio %.2f; median per-trace ratio %.2f\n",
	             rb * 1e3, rn * 1e3, rn / rb, run_median }' "$work/times"
echo "command: ROUNDS=$rounds SEED=$seed bash eval/loc_cost.sh $1 $2"
