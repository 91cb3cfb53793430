#!/usr/bin/env bash
# eval/matrix_eval.sh: localization accuracy over the matrix of eval/matrix.txt, with the
# analyzer's default options (docs/evaluation.md). The runs and the table: eval/matrix_eval.py.
#   SEEDS=N (default 20) seeds per cell from FIRST_SEED (default 1: the reporting range
#   1-999 and 100001 up; thresholds are tuned on 1001-99999), JOBS=N (default 2) runs at a time,
#   CELLS=REGEX a subset of cells. Everything runs under nice -n 10.
#   SUMMARY_ONLY=1 prints the table of the raw lines of an earlier (or interrupted) run
#   from ${EVAL_OUT:-build/eval/matrix_runs.txt} without running anything.
set -u
cd "$(dirname "$0")/.."
out=${EVAL_OUT:-build/eval/matrix_runs.txt}
if [ -n "${SUMMARY_ONLY:-}" ]; then
	exec python3 eval/matrix_eval.py table "$out"
fi
export TMPDIR=${TMPDIR:-/dev/shm}
[ -d "$TMPDIR" ] && [ -w "$TMPDIR" ] || export TMPDIR=/tmp
for tool in agentxdp-synth agentxdp-analyze; do
	[ -x "${EVAL_BIN:-bin}/$tool" ] || { echo "matrix_eval.sh: ${EVAL_BIN:-bin}/$tool is not built (make)" >&2; exit 1; }
done
EVAL_OUT=$out exec nice -n 10 python3 eval/matrix_eval.py run
