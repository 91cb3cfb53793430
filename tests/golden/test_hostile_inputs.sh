#!/usr/bin/env bash
# test_hostile_inputs.sh: issue #22, the input side. Each check is named after an attack
# from the issue: what agentxdp-analyze must do with an input crafted to mislead it.
. "$(dirname "$0")/../lib.sh"
ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$ANALYZE" ]; then
	skip hostile-inputs "bin/agentxdp-analyze not built"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
SAMPLE=$TOP/samples/lossy-link

# -o '': a usage error (exit 2, one line naming the option), not a failed rename (exit 1).
"$ANALYZE" "$SAMPLE/trace.pcapng" -o '' >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q -- "--output" "$work/err" &&
	[ ! -s "$work/out" ]; then
	pass hostile-empty-output-name
else
	fail hostile-empty-output-name "exit $rc: $(head -n 2 "$work/err" | tr '\n' ' ')"
fi

[ $T_FAILED -eq 0 ]
