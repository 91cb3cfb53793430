#!/usr/bin/env bash
# make-samples.sh: rebuild every sample incident listed in samples/scenarios.txt.
# Usage: samples/make-samples.sh [OUT_ROOT]   (default: the repository root; samples land in
# OUT_ROOT/samples/NAME). Each one is `agentxdp-synth -o samples/NAME OPTIONS`, run from
# OUT_ROOT so the command recorded in truth.json is the same wherever it is rebuilt.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
synth="$top/bin/agentxdp-synth"
out_root=${1:-$top}
[ -x "$synth" ] || { echo "make-samples.sh: $synth missing: run make first" >&2; exit 1; }
mkdir -p "$out_root/samples"
cd "$out_root"
while read -r name opts; do
	case "$name" in '' | '#'*) continue ;; esac
	rm -rf "samples/$name"
	# shellcheck disable=SC2086 # options are words on purpose
	"$synth" -q -o "samples/$name" $opts
done <"$top/samples/scenarios.txt"
