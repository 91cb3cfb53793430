#!/usr/bin/env bash
# eval/run_eval.sh: localization accuracy tables (make eval). SEEDS=N changes the seeds per row.
#   1. agentxdp-synth traces through agentxdp-analyze (eval/synth_eval.sh): the acceptance
#      evaluation (synthesized fabrics, the real pipeline).
#   2. The packet-sampled flow-level fabric model (eval/fabric_sim.c): localize() alone.
#   3. The matrix (eval/matrix.txt), then the held-out fabrics (eval/matrix_heldout.txt, never
#      tuned on), both with the analyzer's default options.
set -u
cd "$(dirname "$0")/.."
seeds=${SEEDS:-100}
echo "## Localization on agentxdp-synth traces (synth -> decode -> qp_track -> localize)"
echo
SEEDS=$seeds nice -n 10 bash eval/synth_eval.sh || exit 1
echo
echo "## Localization on the packet-sampled fabric model"
echo
nice -n 10 build/eval/agentxdp-loc-eval --seeds "$seeds" || exit 1
printf '\n## Localization over the matrix, default options (docs/evaluation.md)\n\n'; SEEDS=${MATRIX_SEEDS:-20} bash eval/matrix_eval.sh || exit 1
printf '\n## Localization on held-out fabrics, never tuned on (eval/matrix_heldout.txt)\n\n'
MATRIX=eval/matrix_heldout.txt EVAL_OUT=build/eval/matrix_heldout_runs.txt \
	SEEDS=${MATRIX_SEEDS:-20} bash eval/matrix_eval.sh || exit 1
