#!/usr/bin/env bash
# test_precision_rules.sh: the rules of issue #17's fifth round (docs/localization.md,
# "Alerts and notices"), each on an agentxdp-synth incident of the tuning seeds where
# the analyzer without the rule gave a second, wrong alert or the wrong kind:
#   rnr       an RNR host and the latency on its link are one finding (kind host)
#   queue     a 5x serializer link that marks and slows round trips is `slow`, not
#             `congested`
#   crossing  loss on one or two connections that also cross a stronger lossy alert's
#             link is a notice (a flapping link's READ requests)
#   follower  a 1.3x `fabric` latency finding beside a lossy host is a notice
# The faulty link or host comes from truth.json, not from a previous run.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip precision-rules "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# synth NAME ARGS...: an incident into $work/NAME; analyze NAME [topo]: its JSON to stdout.
synth() {
	local name=$1
	shift
	"$SYNTH" -q -o "$work/$name" --snaplen 128 --mtu 1024 --duration 10ms "$@" 2>"$work/err" ||
		{ fail "$name" "synth: $(head -n 1 "$work/err")"; return 1; }
}
analyze() {
	local d=$work/$1 args=()
	[ "${2:-}" = topo ] && args=(--topology "$d/links.csv" --paths "$d/paths.csv")
	# shellcheck disable=SC2046
	"$ANALYZE" -q $(ls "$d"/trace*.pcapng) --json "${args[@]}" 2>"$work/err" ||
		{ fail "$1" "analyze: $(head -n 1 "$work/err")"; return 1; }
}

# rnr: rnr-rpc, seed 1046. Without the rule: `host 198.18.0.25` and a second alert, `slow`
# on 198.18.0.25-leaf3 (80x healthy peers' completion time).
if synth rnr --hosts 16 --leaves 4 --spines 2 --load 10% --workload rpc --seed 1046 \
	--host-fault host=198.18.0.25,kind=rnr,size=100us,onset=0us &&
	analyze rnr topo >"$work/rnr.json"; then
	h=$(jq -r '.host_faults[0].host' "$work/rnr/truth.json")
	expect_eq "rnr: one alert, the RNR host" "[[\"host\",\"$h\"]]" "$(alert_list "$work/rnr.json")"
	also=$(jq -r '[.findings[0].evidence.also[].signal] | join(",")' "$work/rnr.json")
	case ",$also," in
	*,rnr,*completion,* | *completion,*rnr,*) pass "rnr: its completion time is in evidence.also" ;;
	*) fail "rnr: its completion time is in evidence.also" "also: $also" ;;
	esac
fi

# queue: slowx5-fab-1dir, seed 1041. Without the rule: `congested leaf2-spine3`.
if synth queue --hosts 16 --leaves 4 --spines 4 --load 20% --workload write --seed 1041 \
	--fault link=leaf2-spine3,dir=spine3\>leaf2,kind=slow,size=5x,onset=1000us \
	--fault link=leaf2-spine3,dir=spine3\>leaf2,kind=slow,size=4us,onset=1000us &&
	analyze queue topo >"$work/queue.json"; then
	l=$(jq -r '.faults[0].link' "$work/queue/truth.json")
	expect_eq "queue: one alert, slow on the 5x link" "[[\"slow\",\"$l\"]]" "$(alert_list "$work/queue.json")"
	expect_eq "queue: its marks are in evidence.also" true \
		"$(jq '[.findings[0].evidence.also[].signal] | index("ecn") != null' "$work/queue.json")"
	expect_eq "queue: the marks' direction is kept" "spine3 -> leaf2" \
		"$(jq -r '.findings[0].direction' "$work/queue.json")"
fi

# crossing: flap-fab-read, seed 1042 (2 leaves, 8 spines: a spine's two links are crossed
# together, a set). Without the rule: a second alert, `lossy leaf0-spine6 | leaf1-spine6`,
# on one connection.
if synth crossing --hosts 16 --leaves 2 --spines 8 --load 20% --mtu 4096 --workload read \
	--seed 1042 --fault link=leaf0-spine4,dir=leaf0\>spine4,kind=flap,size=100us,period=1ms,onset=2000us &&
	analyze crossing topo >"$work/crossing.json"; then
	expect_eq "crossing: one alert, lossy on the flapping link's set" \
		'[["lossy","leaf0-spine4 | leaf1-spine4"]]' "$(alert_list "$work/crossing.json")"
	# Since NAKed READ loss lies on the requests' way (round 7) that connection's loss
	# joins the alert; a one-connection lossy notice, if any, says why it is one.
	why=$(jq -r '[.findings[] | select(.level == "notice" and .kind == "lossy" and
		.flows_hurt <= 2)][0].evidence.notice_why // "none"' "$work/crossing.json")
	case $why in
	none | *"also cross a stronger alert"*)
		pass "crossing: no one-connection loss alert ($why)" ;;
	*) fail "crossing: the one-connection loss is a notice" "notice_why: $why" ;;
	esac
fi

# follower: loss1-host-each-read, seed 1047, no topology. Without the rule: a second alert,
# `slow fabric (9 host pairs)` at 1.27x, beside `lossy 198.18.0.25`.
if synth follower --hosts 16 --leaves 4 --spines 4 --load 10% --workload read \
	--vantage each-host --seed 1047 --fault link=198.18.0.25-leaf3,kind=loss,size=1%,onset=3000us &&
	analyze follower >"$work/follower.json"; then
	expect_eq "follower: one alert, the lossy host" '[["lossy","198.18.0.25"]]' \
		"$(alert_list "$work/follower.json")"
	got=$(jq -r '[.findings[] | select(.subject_kind == "fabric")][0] |
		"\(.level) \(.severity < 1.5)"' "$work/follower.json")
	expect_eq "follower: the 1.3x fabric finding is a notice" "notice true" "$got"
fi
exit 0
