#!/usr/bin/env bash
# eval/synth_eval.sh: localization accuracy on agentxdp-synth traces through agentxdp-analyze.
#   SEEDS=N (default 100) seeds per row starting at FIRST_SEED (default 1; tune the
#   thresholds on another range, e.g. FIRST_SEED=1001), JOBS=N (default 2) runs at a time,
#   EVAL_DURATION (default 20ms) and EVAL_LOAD (default 10%) per run.
# Rows: each fault kind on one random link direction (random onset 0-4 ms), analyzed with
# links.csv + paths.csv; the same kinds on a random host link analyzed without topology;
# healthy fabrics both ways. The raw lines go to ${EVAL_OUT:-build/eval/synth_eval.txt}.
set -u
cd "$(dirname "$0")/.."
seeds=${SEEDS:-100}
first=${FIRST_SEED:-1}
jobs=${JOBS:-2}
out=${EVAL_OUT:-build/eval/synth_eval.txt}
mkdir -p "$(dirname "$out")"
export TMPDIR=${TMPDIR:-/dev/shm}
[ -d "$TMPDIR" ] && [ -w "$TMPDIR" ] || export TMPDIR=/tmp
kinds="slow2x slow5x slow20x loss0.1 loss1 ecn"
start=$(date +%s)
# Seed-major order, so an interrupted run still has every row (SUMMARY_ONLY=1 re-tabulates).
if [ -z "${SUMMARY_ONLY:-}" ]; then
	for ((s = first; s < first + seeds; s++)); do
		for k in $kinds healthy; do echo "topo $k $s"; echo "hosts $k $s"; done
	done | xargs -P "$jobs" -L 1 bash eval/synth_one.sh >"$out"
fi
end=$(date +%s)

echo "16 hosts, 4 leaves, 2 spines (ECMP), 2 peers x 2 QPs per host, ${EVAL_DURATION:-20ms} at"
echo "${EVAL_LOAD:-10%} load per host, 1 ms windows; one faulty link (both directions) per seed,"
echo "onset 0-4 ms. Top-1: the first finding names the faulty link (with topology) or the"
echo "faulty host link's host (without). Each cell: percent (hits/runs)."
echo
echo "| fault | top-1, links + paths | top-1 host link, no topology | top finding's kind (links + paths) |"
echo "|---|---|---|---|"
awk -v kinds="$kinds" '
	{ set = $1; kind = $2; want = $5; top = $6; tk = $7; n = $8
	  runs[set, kind]++
	  if (n > 0) any[set, kind]++
	  if (top == want) { hit[set, kind]++; if (set == "topo") kc[kind, tk]++ } }
	function pct(a, b) { return b ? sprintf("%.1f%% (%d/%d)", 100 * a / b, a, b) : "-" }
	END {
		split(kinds, ks, " ")
		names["slow2x"] = "slow 2x"; names["slow5x"] = "slow 5x"; names["slow20x"] = "slow 20x"
		names["loss0.1"] = "lossy 0.1%"; names["loss1"] = "lossy 1%"; names["ecn"] = "congested (ECN 20%)"
		for (i = 1; i in ks; i++) {
			k = ks[i]; kinds_txt = ""
			for (t in kc) { split(t, p, SUBSEP); if (p[1] == k) kinds_txt = kinds_txt p[2] " " kc[t] "; " }
			printf "| %s | %s | %s | %s |\n", names[k], pct(hit["topo", k], runs["topo", k]),
				pct(hit["hosts", k], runs["hosts", k]), kinds_txt
		}
		printf "| healthy: no finding | %s | %s | |\n",
			pct(runs["topo", "healthy"] - any["topo", "healthy"], runs["topo", "healthy"]),
			pct(runs["hosts", "healthy"] - any["hosts", "healthy"], runs["hosts", "healthy"])
	}' "$out"
echo
echo "Runs: $(wc -l <"$out"), wall time $((end - start)) s with $jobs jobs. Command: SEEDS=$seeds JOBS=$jobs bash eval/synth_eval.sh"
