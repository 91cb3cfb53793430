#!/usr/bin/env bash
# bench_eval.sh: localization accuracy rows (the evaluation of docs/localization.md).
set -u
cd "$(dirname "$0")/../.."
exec build/eval/agentxdp-loc-eval --seeds "${SEEDS:-100}" --bench
