#!/usr/bin/env bash
# test_pooled_host_slow.sh: a slow host link under a collective too short for any flow to be
# judged alone is `slow`, told by its host's round trips pooled over its connections (issue
# #17, "right kind"; round 48). Each queue pair of these collectives holds 8-14 ACK samples,
# under the 20 latency evidence needs, so the link was read by what was left: the timeouts
# its own queue brings (`host`, a sender's early timer) for its uplink, its queue's marks
# (`congested`) for its downlink. A NIC that resends early, a link marking at random and a
# healthy collective keep their readings: their hosts' round trips stand with their peers'.
. "$(dirname "$0")/../lib.sh"
synth_test_start pooled-host-slow

COLL="--hosts 42 --leaves 14 --spines 4 --load 12% --mtu 2048 --duration 5ms --workload collective"

# NAME SEED [--shape SHAPE] FAULT-ARGS...: the collective (or SHAPE) into $work/NAME,
# analyzed with a topology (out.json) and without one (hosts.json).
coll_case() {
	local name=$1 seed=$2 d=$work/$1 shape=$COLL
	shift 2
	if [ "${1:-}" = --shape ]; then
		shape=$2
		shift 2
	fi
	# shellcheck disable=SC2086 # the shape's words
	synth_analyze "pooled-host-slow $name" "$d" "$d/out.json" $shape --vantage mirror \
		--snaplen 128 --seed "$seed" "$@" -- --topology "$d/links.csv" \
		--paths "$d/paths.csv" || return 1
	"$ANALYZE" -q --json "$d/trace.pcapng" >"$d/hosts.json" ||
		fail "pooled-host-slow $name" "analyze without a topology failed"
}

pooled_flows() {
	jq -r '[.findings[] | select(.level == "alert")][0].evidence.pooled_latency.flows // "none"' "$1"
}

# NAME WHAT LINK HOST SIDE PATTERN: NAME's first alert is slow on LINK (HOST without a
# topology), read from the connections the host SIDE (answered, started), and its headline
# keeps the evidence it was picked by (PATTERN).
slow_checks() {
	local d=$work/$1 tag="pooled-host-slow $2"
	expect_eq "$tag: slow on the host link" "slow $3" "$(first_alert "$d/out.json")"
	expect_eq "$tag: told by the connections it $5" "$5" "$(pooled_flows "$d/out.json")"
	expect_eq "$tag: the headline keeps '$6'" 1 \
		"$(jq --arg p "$6" '[.findings[] | select(.level == "alert")][0].severity_text |
			test($p) | if . then 1 else 0 end' "$d/out.json")"
	expect_eq "$tag, no topology: slow on the host" "slow $4" "$(first_alert "$d/hosts.json")"
	expect_eq "$tag, no topology: told by the connections it $5" "$5" \
		"$(pooled_flows "$d/hosts.json")"
}

# ho26-rate5x-host-1dir 4181: the uplink of 198.18.0.33 at a fifth of its rate. Its own
# requests time out (no packet missing) and the ACKs it sends wait: its answers 4.8x.
coll_case up 4181 --fault 'link=198.18.0.33-leaf7,dir=198.18.0.33>leaf7,kind=slow,size=5x,onset=0us' ||
	exit 0
slow_checks up uplink 198.18.0.33-leaf7 198.18.0.33 answered "timeouts with no packet missing"

# ho23-slowx4-host-1dir 4181: the downlink of 198.18.0.18, 4x and +3 us; its own
# connections' ACKs queue behind everyone's data for it (23x), and the queue marks.
coll_case down 4181 --shape "--hosts 30 --leaves 15 --spines 4 --load 15% --mtu 2048 --duration 6ms --workload collective" \
	--fault 'link=198.18.0.18-leaf4,dir=leaf4>198.18.0.18,kind=slow,size=4x,onset=0us' \
	--fault 'link=198.18.0.18-leaf4,dir=leaf4>198.18.0.18,kind=slow,size=3us,onset=0us' || exit 0
slow_checks down downlink 198.18.0.18-leaf4 198.18.0.18 started "ECN-marked"

# The same collective with a NIC that resends after 14 us: timeouts, no packet missing,
# and its answers on time: still the host's timer.
coll_case nicrt 4181 --host-fault host=198.18.0.33,kind=nic-retransmit,size=14us,onset=0us || exit 0
expect_eq "pooled-host-slow NIC retransmit: still the host" "host 198.18.0.33-leaf7" \
	"$(first_alert "$work/nicrt/out.json")"
expect_eq "pooled-host-slow NIC retransmit: no finding read by pooled round trips" 0 \
	"$(jq '[.findings[] | select(.evidence.pooled_latency)] | length' "$work/nicrt/out.json")"
# A downlink marking a quarter of its packets at random: marks, round trips on time.
coll_case ecn 4181 --fault 'link=198.18.0.33-leaf7,dir=leaf7>198.18.0.33,kind=ecn,size=25%,onset=0us' ||
	exit 0
expect_eq "pooled-host-slow random marks: still congested" "congested 198.18.0.33-leaf7" \
	"$(first_alert "$work/ecn/out.json")"
coll_case healthy 4181 || exit 0
expect_eq "pooled-host-slow healthy collective: no alert" 0 \
	"$(jq '[.findings[] | select(.level == "alert")] | length' "$work/healthy/out.json")"
expect_eq "pooled-host-slow healthy collective, no topology: no alert" 0 \
	"$(jq '[.findings[] | select(.level == "alert")] | length' "$work/healthy/hosts.json")"
exit 0
