#!/usr/bin/env bash
# test_random_marks_first.sh: a switch link direction that marks at random, not by its queue
# (issue #17, round 13; docs/evaluation.md "Thirteenth round: random ECN marking on a busy
# fabric's switch link (helper ecn13)"). In a busy oversubscribed fabric every queue marks,
# so the search left a 20% ECN fault a notice behind other links' (seed 2047 of
# ecn20-fab-over); its marked ACKs are no slower than their neighbours and its marks hold in
# every window, so localize_marks.c makes it a congested alert, first. A collective's hot
# spot also marks ACKs that are not slower (seed 1041 of slow20us-fab-coll, the twelfth
# round's counter-example), but in bursts: its marks floor is 0, and it stays a notice.
# TEST_ANALYZE runs another build against the same traces (the build before this rule left
# the fault a notice).
. "$(dirname "$0")/../lib.sh"
synth_test_start random-marks-first

d=$work/ecn
if synth_analyze random-marks-ecn "$d" "$d/out.json" --hosts 64 --leaves 8 --spines 2 \
	--load 40% --mtu 4096 --duration 5ms --workload write --vantage mirror --snaplen 128 \
	--seed 2047 --fault 'link=leaf0-spine1,dir=spine1>leaf0,kind=ecn,size=20%,onset=1000us' -- \
	--topology "$d/links.csv" --paths "$d/paths.csv"; then
	got=$(jq -r '.findings[0] | "\(.level) \(.kind) \(.subject)"' "$d/out.json")
	expect_eq "random-marks-ecn: congested alert on the marking link, first" \
		"alert congested leaf0-spine1" "$got"
	why=$(jq -r '.findings[0].evidence.kind_why // "none"' "$d/out.json")
	expect_eq "random-marks-ecn: told by its random marks" \
		"its marks are set at random, not by its queue" "$why"
fi

d=$work/coll
if synth_analyze random-marks-coll "$d" "$d/out.json" --hosts 32 --leaves 8 --spines 4 \
	--load 10% --mtu 4096 --duration 10ms --workload collective --vantage mirror \
	--snaplen 128 --seed 1041 --fault link=leaf2-spine3,kind=slow,size=20us,onset=3000us -- \
	--topology "$d/links.csv" --paths "$d/paths.csv"; then
	got=$(jq -r '[.findings[] | select(.subject == "leaf0-spine0")][0].level // "none"' \
		"$d/out.json")
	expect_eq "random-marks-coll: the collective's hot spot is no alert" notice "$got"
	expect_eq "random-marks-coll: the slow link first" "slow leaf2-spine3" \
		"$(first_alert "$d/out.json")"
fi
exit 0
