#!/usr/bin/env bash
# test_hardening_cli.sh: every tool in bin/ answers a bad command line the same way: exactly
# one line on stderr ("agentxdp-X: ... (see --help)"), nothing on stdout, exit 2; for an
# unknown option (long and short), an option missing its value, and a value that is not a
# number. --help exits 0 and has an EXAMPLES section.
. "$(dirname "$0")/../lib.sh"

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

# Per tool: an option that takes a number. A new tool must be added here (checked below).
declare -A NUM_OPT=(
	[agentxdp-analyze]=--port
	[agentxdp-capture]=--count
	[agentxdp-drops]=--port
	[agentxdp-nicstat]=--count
	[agentxdp-report]=--top
	[agentxdp-roce-emu]=--port
	[agentxdp-synth]=--hosts
)

# one_line_usage NAME TOOL WANT ARGS...: exit 2, empty stdout, one stderr line that starts
# with the tool's name, contains WANT, and points to --help.
one_line_usage() {
	local name=$1 tool=$2 want=$3 rc lines prog
	shift 3
	prog=$(basename "$tool")
	"$tool" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	lines=$(wc -l <"$T/err")
	if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && [ ! -s "$T/out" ] &&
		grep -q "^$prog: .*see --help" "$T/err" && grep -qF -- "$want" "$T/err"; then
		pass "$name"
	else
		fail "$name" "exit $rc, $lines stderr lines: $(head -n 3 "$T/err" | tr '\n' '|')"
	fi
}

n=0
for tool in "$BIN"/agentxdp-*; do
	[ -x "$tool" ] || continue
	n=$((n + 1))
	name=$(basename "$tool")

	"$tool" --help >"$T/help" 2>"$T/help.err"
	rc=$?
	if [ "$rc" -eq 0 ] && grep -Eiq '^EXAMPLES:?$' "$T/help" &&
		grep -A1 -Ei '^EXAMPLES:?$' "$T/help" | tail -n 1 | grep -q "$name"; then
		pass "cli-help-examples-$name"
	else
		fail "cli-help-examples-$name" "exit $rc; no EXAMPLES section followed by a $name command"
	fi

	one_line_usage "cli-unknown-long-$name" "$tool" "'--no-such-option-xyz'" --no-such-option-xyz
	one_line_usage "cli-unknown-short-$name" "$tool" "'-Z'" -Z
	# A bad letter after a good one in one cluster (-vZ): the message names the bad letter.
	flag=$(grep -oE '^ +-[vq], --(verbose|quiet)' "$T/help" | head -n 1 | cut -d, -f1 | tr -dc 'vq')
	if [ -n "$flag" ]; then
		one_line_usage "cli-unknown-short-cluster-$name" "$tool" "'-Z'" "-${flag}Z"
	fi
	one_line_usage "cli-no-value-for-flag-$name" "$tool" "'--help' takes no value" --help=yes

	opt=${NUM_OPT[$name]:-}
	if [ -z "$opt" ]; then
		fail "cli-known-$name" "no number option listed for $name in $(basename "$0")"
		continue
	fi
	one_line_usage "cli-missing-value-$name" "$tool" "'$opt' needs a value" "$opt"
	one_line_usage "cli-bad-number-$name" "$tool" "'12abc'" "$opt" 12abc
	one_line_usage "cli-bad-number-eq-$name" "$tool" "'-1'" "$opt=-1"
done
[ "$n" -ge 7 ] && pass cli-tools-found || fail cli-tools-found "only $n tools in $BIN"

# Agent mode's bounds: bad values, and options that mean nothing without --analyze.
cap="$BIN/agentxdp-capture"
one_line_usage cli-capture-forget-bad "$cap" "invalid --forget '5x'" -i lo --analyze --forget 5x
one_line_usage cli-capture-forget-too-short "$cap" "invalid --forget '500ms'" -i lo --analyze --forget 500ms
one_line_usage cli-capture-max-flows-too-small "$cap" "invalid --max-flows '10'" -i lo --analyze --max-flows 10
one_line_usage cli-capture-top-qps-zero "$cap" "invalid --top-qps '0'" -i lo --analyze --top-qps 0
one_line_usage cli-capture-max-pairs-needs-analyze "$cap" "need --analyze" -i lo -w x.pcapng --max-pairs 5
exit "$T_FAILED"
