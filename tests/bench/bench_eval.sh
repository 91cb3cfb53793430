#!/usr/bin/env bash
# bench_eval.sh: localization accuracy rows (the evaluations of docs/localization.md):
# agentxdp-synth traces through agentxdp-analyze, and the packet-sampled fabric model.
# SEEDS=N seeds per row (default 100).
set -u
cd "$(dirname "$0")/../.."
SEEDS=${SEEDS:-100} BENCH=1 nice -n 10 bash eval/synth_eval.sh || exit 1
exec nice -n 10 build/eval/agentxdp-loc-eval --seeds "${SEEDS:-100}" --bench
