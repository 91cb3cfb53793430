#!/usr/bin/env bash
# test_random_marks_added.sh: the random-marks rule on a link the search never picked alone
# (issue #17, round 13; docs/evaluation.md "Thirteenth round: the random-marks rule when the
# search missed the link (helper ecn13b)"). Seed 2064 of ecn20-fab-over: a 20% ECN fault on
# leaf5 -> spine0 in a busy oversubscribed fabric; the search names other links (notices)
# and nothing on leaf5-spine0, so the rule had nothing to promote. Its marks are set at
# random (0.055 at 10x the next switch link, floor 0.034): localize_marks.c adds a congested
# alert on it, first, with the rule's figures (effect: the level; runner_up: the next link).
# TEST_ANALYZE runs another build against the same trace (the build before this rule gave
# no alert at all).
. "$(dirname "$0")/../lib.sh"
synth_test_start random-marks-added

d=$work/ecn
if synth_analyze random-marks-added "$d" "$d/out.json" --hosts 64 --leaves 8 --spines 2 \
	--load 40% --mtu 4096 --duration 5ms --workload write --vantage mirror --snaplen 128 \
	--seed 2064 --fault 'link=leaf5-spine0,dir=leaf5>spine0,kind=ecn,size=20%,onset=500us' \
	-- --topology "$d/links.csv" --paths "$d/paths.csv"; then
	got=$(jq -r '.findings[0] | "\(.level) \(.kind) \(.subject)"' "$d/out.json")
	expect_eq "random-marks-added: congested alert on the marking link, first" \
		"alert congested leaf5-spine0" "$got"
	why=$(jq -r '.findings[0].evidence.kind_why // "none"' "$d/out.json")
	expect_eq "random-marks-added: told by its random marks" \
		"its marks are set at random, not by its queue" "$why"
	floor=$(jq -r '.findings[0].evidence.marks_floor // 0 | . >= 0.007' "$d/out.json")
	expect_eq "random-marks-added: its marks floor in the evidence" true "$floor"
	alerts=$(jq '[.findings[] | select(.level == "alert")] | length' "$d/out.json")
	expect_eq "random-marks-added: no other alert" 1 "$alerts"
fi
exit 0
