#!/usr/bin/env bash
# test_incast_notice.sh: a healthy fabric with incast (one host receives about 3x the
# traffic of the others, agentxdp-synth --incast) is ordinary load: the analyzer lists it
# as a notice naming that host, with the load ratio in the evidence, and raises no alert
# (issue #17, item 2). The incast host comes from truth.json, not from a previous run.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip incast-notice "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
d=$work/incast
if ! "$SYNTH" -q -o "$d" --hosts 16 --leaves 4 --spines 2 --load 20% --duration 10ms \
	--snaplen 128 --seed 1001 --incast 198.18.0.15 2>"$work/err"; then
	fail incast-notice "synth: $(head -n 1 "$work/err")"
	exit 0
fi
victim=$(jq -r '.incast.host' "$d/truth.json")
expect_eq "incast: truth.json names the incast host" 198.18.0.15 "$victim"
# The incast host really receives several times an average host's packets.
ratio=$(jq -r --arg v "$victim" '[.qps[] | {r: .responder, p: .request_packets}] |
	(map(select(.r == $v) | .p) | add) / ((map(.p) | add) / 16) | floor' "$d/truth.json")
[ "${ratio:-0}" -ge 2 ] && pass "incast: $victim receives ${ratio}x the mean" ||
	fail "incast: $victim receives more" "only ${ratio:-?}x the mean"

for mode in topology hosts; do
	args=()
	[ $mode = topology ] && args=(--topology "$d/links.csv" --paths "$d/paths.csv")
	if ! "$ANALYZE" -q "$d/trace.pcapng" --json "${args[@]}" >"$d/$mode.json" 2>"$work/err"; then
		fail "incast-$mode" "analyze: $(head -n 1 "$work/err")"
		continue
	fi
	alerts=$(alert_count "$d/$mode.json")
	expect_eq "incast-$mode: no alert" 0 "$alerts"
	# The notice names the incast host (its link, or the host without a topology).
	got=$(jq -r --arg v "$victim" '[.findings[] | select(.level == "notice") |
		select(.subject | startswith($v))][0] | "\(.kind) \(.evidence.load_ratio >= 2)"' "$d/$mode.json")
	case $got in
	"slow true" | "congested true") pass "incast-$mode: a notice on $victim, load ratio >= 2" ;;
	*) fail "incast-$mode: a notice on $victim with its load ratio" "$(jq -c '[.findings[] |
		[.level, .kind, .subject, .evidence.load_ratio]]' "$d/$mode.json")" ;;
	esac
done
exit 0
