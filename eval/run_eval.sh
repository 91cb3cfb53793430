#!/usr/bin/env bash
# eval/run_eval.sh: localization accuracy table (make eval). SEEDS=N changes the seeds per row.
#   1. Flow-level fabric model (eval/fabric_sim.c): always.
#   2. Synthesized traces through the whole pipeline, when bin/agentxdp-synth exists
#      (eval/synth_eval.sh).
set -u
cd "$(dirname "$0")/.."
seeds=${SEEDS:-100}
echo "## Localization on the packet-sampled fabric model"
echo
build/eval/agentxdp-loc-eval --seeds "$seeds" || exit 1
if [ -x bin/agentxdp-synth ] && [ -x eval/synth_eval.sh ]; then
	echo
	echo "## Localization on agentxdp-synth traces (synth -> decode -> qp_track -> localize)"
	echo
	bash eval/synth_eval.sh || exit 1
fi
