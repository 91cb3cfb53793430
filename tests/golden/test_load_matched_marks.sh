#!/usr/bin/env bash
# test_load_matched_marks.sh: load explains the queue of a subject carrying 2x its peers'
# load only when the peers carrying about as much are marked about as much (issue #17,
# round 45: "an alert is a link or host worse than peers carrying comparable load"). A host
# link marked 8x and more the most marked of its load-matched peers, or a switch link with
# a measured floor 20x and more, stays an alert; healthy skewed fabrics stay notices.
. "$(dirname "$0")/../lib.sh"
synth_test_start load-matched-marks

# mirror_both NAME SEED FAULT SHAPE...: mirror_topo_run one incident into $work/NAME
# (out.json, with its topology and paths), and hosts_first_alert it without them into
# $work/NAME-hosts.json.
mirror_both() {
	local name=$1
	shift
	mirror_topo_run "load-matched-marks-$name" "$work/$name" "$@" || return 1
	hosts_first_alert "load-matched-marks-$name" "$work/$name" >/dev/null
}

# The finding about SUBJECT in FILE, as "LEVEL load_peers load_peer_marks".
about() {
	jq -r --arg s "$2" '[.findings[] | select(.subject == $s)][0] |
		"\(.level) \(.evidence.load_peers // 0) \(.evidence.load_peer_marks // 0)"' "$1"
}

# ho13-rate3x-host, tuning seed 4159: a host link at a third of its rate, carrying 2.6x its
# peers' load, marked 10x the most marked of four peers carrying about as much.
mirror_both rate3x 4159 link=198.18.0.28-leaf1,kind=slow,size=3x,onset=0us --hosts 42 \
	--leaves 3 --spines 4 --load 10% --mtu 2048 --duration 6ms --workload write || exit 0
expect_eq "load-matched-marks rate3x: the host link is the first alert with a topology" \
	"slow 198.18.0.28-leaf1" "$(first_alert "$work/rate3x/out.json")"
expect_eq "load-matched-marks rate3x: its host is the first alert without one" \
	"slow 198.18.0.28" "$(first_alert "$work/rate3x-hosts.json")"

# ho13-rate3x-host, tuning seed 4158: the same fault on a host carrying 3x its peers' load,
# its marks 9.9x those of the one peer carrying about as much: the first alert, and the
# evidence says so.
mirror_both rate3x-4158 4158 link=198.18.0.43-leaf2,kind=slow,size=3x,onset=600us --hosts 42 \
	--leaves 3 --spines 4 --load 10% --mtu 2048 --duration 6ms --workload write || exit 0
expect_eq "load-matched-marks rate3x 4158: the host link is the first alert" 198.18.0.43-leaf2 \
	"$(first_alert "$work/rate3x-4158/out.json" | cut -d' ' -f2)"
read -r level peers ratio <<<"$(about "$work/rate3x-4158/out.json" 198.18.0.43-leaf2)"
check "load-matched-marks rate3x 4158: an alert, load-matched peers marked 8x less or more" \
	awk -v l="$level" -v p="$peers" -v r="$ratio" \
	'BEGIN { exit !(l == "alert" && p >= 1 && r >= 8) }'

# ho7-ecn40-fab-1dir, tuning seed 4159: a cable marking 40% one way, carrying 2.4x its
# peers' load, 57x the marks of its load-matched peers.
mirror_both ecn40 4159 'link=leaf1-spine1,dir=spine1>leaf1,kind=ecn,size=40%,onset=3600us' \
	--hosts 22 --leaves 11 --spines 2 --load 10% --mtu 1024 --duration 12ms --workload write ||
	exit 0
expect_eq "load-matched-marks ecn40: the marking cable is the first alert" \
	"congested leaf1-spine1" "$(first_alert "$work/ecn40/out.json")"

# ho16-slowx7-fab-1dir, fresh seed 4160: a 7x cable (and 6 us) one way at 2.1x its peers'
# load, its floor 51 us up: its marks make it an alert, and its floor makes it slow.
mirror_both slowx7 4160 'link=leaf1-spine0,dir=leaf1>spine0,kind=slow,size=7x,onset=2100us' \
	--fault 'link=leaf1-spine0,dir=leaf1>spine0,kind=slow,size=6us,onset=2100us' --hosts 39 \
	--leaves 3 --spines 7 --load 10% --mtu 2048 --duration 7ms --workload mixed || exit 0
expect_eq "load-matched-marks slowx7: the cable is the first alert, slow" "slow leaf1-spine0" \
	"$(first_alert "$work/slowx7/out.json")"

# ho5-healthy-ecmp-24, tuning seed 4158: half the cross-leaf flows hash to spine0; its
# cable from leaf1 carries 2.8x its peers' load, marked 10.3x its load-matched peers': a
# notice (a cable needs 20x).
mirror_both ecmp24 4158 "" --hosts 24 --leaves 4 --spines 3 --load 35% --mtu 4096 \
	--duration 6ms --workload mixed --ecmp-skew 0.5 || exit 0
expect_eq "load-matched-marks ecmp24: no alert with a topology" 0 \
	"$(alert_count "$work/ecmp24/out.json")"
expect_eq "load-matched-marks ecmp24: leaf1-spine0 a notice" notice \
	"$(about "$work/ecmp24/out.json" leaf1-spine0 | cut -d' ' -f1)"

# ho9-healthy-ecmp-60, tuning seed 4158: 198.18.0.12's link carries 2.1x its peers' load,
# marked 4.6x its load-matched peers': a notice.
mirror_both ecmp60 4158 "" --hosts 60 --leaves 12 --spines 3 --load 12% --mtu 4096 \
	--duration 6ms --workload mixed --ecmp-skew 0.5 || exit 0
expect_eq "load-matched-marks ecmp60: no alert with a topology" 0 \
	"$(alert_count "$work/ecmp60/out.json")"
expect_eq "load-matched-marks ecmp60: no alert without one" 0 \
	"$(alert_count "$work/ecmp60-hosts.json")"
exit 0
