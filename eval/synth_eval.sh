#!/usr/bin/env bash
# eval/synth_eval.sh: localization accuracy on agentxdp-synth traces through agentxdp-analyze.
#   SEEDS=N (default 100) seeds per row starting at FIRST_SEED (default 1; the thresholds
#   were tuned on FIRST_SEED=1001), JOBS=N (default 2) runs at a time; EVAL_DURATION
#   (default 10ms), EVAL_LOAD (default 10%) and EVAL_MTU (default 1024) per run.
#   BENCH=1 prints make-bench rows instead of the table; SUMMARY_ONLY=1 re-tabulates the
#   raw lines of an earlier (or interrupted) run from ${EVAL_OUT:-build/eval/synth_eval.txt}.
# Rows: each fault kind on one random link (both directions, random onset 0-4 ms), analyzed
# with links.csv + paths.csv; the same kinds on a random host link analyzed without
# topology; healthy fabrics both ways. The runs themselves: eval/synth_eval.py.
set -u
cd "$(dirname "$0")/.."
seeds=${SEEDS:-100}
first=${FIRST_SEED:-1}
jobs=${JOBS:-2}
out=${EVAL_OUT:-build/eval/synth_eval.txt}
mkdir -p "$(dirname "$out")"
export TMPDIR=${TMPDIR:-/dev/shm}
[ -d "$TMPDIR" ] && [ -w "$TMPDIR" ] || export TMPDIR=/tmp
for tool in bin/agentxdp-synth bin/agentxdp-analyze; do
	[ -x "${EVAL_BIN:-bin}/${tool#bin/}" ] || { echo "synth_eval.sh: ${EVAL_BIN:-bin}/${tool#bin/} is not built (make)" >&2; exit 1; }
done
command="SEEDS=$seeds JOBS=$jobs bash eval/synth_eval.sh"
[ "$first" = 1 ] || command="FIRST_SEED=$first $command"
start=$(date +%s)
if [ -z "${SUMMARY_ONLY:-}" ]; then
	SEEDS=$seeds FIRST_SEED=$first JOBS=$jobs python3 eval/synth_eval.py >"$out" || exit 1
fi
wall=$(($(date +%s) - start))

if [ -z "${BENCH:-}" ]; then
	echo "16 hosts, 4 leaves, 2 spines (ECMP), 2 peers x 2 QPs per host, ${EVAL_DURATION:-10ms} at"
	echo "${EVAL_LOAD:-10%} load per host, MTU ${EVAL_MTU:-1024}, 1 ms windows; one faulty link (both"
	echo "directions) per seed, onset 0-4 ms; seeds $first-$((first + seeds - 1)). Top-1: the first finding"
	echo "names the faulty link (with topology) or the faulty host link's host (without)."
	echo "Each cell: percent (hits/runs)."
	echo
	echo "| fault | top-1, links + paths | top-1 host link, no topology | top finding's kind (links + paths) |"
	echo "|---|---|---|---|"
fi
awk -v bench="${BENCH:-}" -v cmd="$command" '
	{ set = $1; kind = $2; want = $5; top = $6; tk = $7; n = $8
	  runs[set, kind]++
	  if (n > 0) any[set, kind]++
	  if (top == want) { hit[set, kind]++; if (set == "topo") kc[kind, tk]++ } }
	function pct(a, b) { return b ? sprintf("%.1f%% (%d/%d)", 100 * a / b, a, b) : "-" }
	END {
		nk = split("slow2x slow5x slow20x loss0.1 loss1 ecn", ks, " ")
		names["slow2x"] = "slow 2x"; names["slow5x"] = "slow 5x"; names["slow20x"] = "slow 20x"
		names["loss0.1"] = "lossy 0.1%"; names["loss1"] = "lossy 1%"; names["ecn"] = "congested (ECN 20%)"
		for (i = 1; i <= nk; i++) {
			k = ks[i]
			if (bench) {
				printf "| localization top-1 (synth traces), %s, links + paths | %s | target >= 95%% | %s |\n", names[k], pct(hit["topo", k], runs["topo", k]), cmd
				printf "| localization top-1 (synth traces), %s, host link without topology | %s | target >= 95%% | %s |\n", names[k], pct(hit["hosts", k], runs["hosts", k]), cmd
				continue
			}
			kinds_txt = ""
			for (t in kc) { split(t, p, SUBSEP); if (p[1] == k) kinds_txt = kinds_txt p[2] " " kc[t] "; " }
			printf "| %s | %s | %s | %s |\n", names[k], pct(hit["topo", k], runs["topo", k]),
				pct(hit["hosts", k], runs["hosts", k]), kinds_txt
		}
		ht = runs["topo", "healthy"] - any["topo", "healthy"]
		hh = runs["hosts", "healthy"] - any["hosts", "healthy"]
		if (bench) {
			printf "| localization (synth traces), healthy fabric without finding, links + paths | %s | target >= 99%% | %s |\n", pct(ht, runs["topo", "healthy"]), cmd
			printf "| localization (synth traces), healthy fabric without finding, no topology | %s | target >= 99%% | %s |\n", pct(hh, runs["hosts", "healthy"]), cmd
		} else {
			printf "| healthy: no finding | %s | %s | |\n", pct(ht, runs["topo", "healthy"]), pct(hh, runs["hosts", "healthy"])
		}
	}' "$out"
if [ -z "${BENCH:-}" ]; then
	echo
	echo "Runs: $(wc -l <"$out"), wall time $wall s with $jobs jobs. Command: $command"
fi
