#!/usr/bin/env bash
# eval/run_eval.sh: localization accuracy (placeholder until agentxdp-synth and the analyzer land).
set -u
cd "$(dirname "$0")/.."
if [ ! -x bin/agentxdp-synth ]; then
	echo "eval: bin/agentxdp-synth is not built yet; nothing to evaluate" >&2
	exit 1
fi
