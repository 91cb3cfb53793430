#!/usr/bin/env bash
# test_read_request_loss.sh: a link flapping in one direction under a READ workload (issue
# #17, round 7, "flapping links on READs"). On a 2-leaf fabric the read requests of some
# connections cross the flapping direction while their responses come back through
# another spine. The requests are dropped; the responder NAKs the gap. The build before
# this rule laid every READ loss on the responses' way and named the other spine (seeds
# 1121 and 1129 of the cell flap-fab-read of eval/matrix.txt, tuning seeds): a wrong
# lossy alert, the flapping link a notice or nothing. NAKed READ loss is the requests':
# the first alert names the flapping link (its spine's pair of links, a set: with two
# leaves every cross-leaf path crosses both), lossy, and no alert names another spine.
# The faulty link comes from truth.json. TEST_ANALYZE runs another build.
. "$(dirname "$0")/../lib.sh"
synth_test_start read-request-loss

for case in 1121:leaf1-spine7:spine7\>leaf1:3000us 1129:leaf1-spine2:leaf1\>spine2:3000us; do
	IFS=: read -r seed fault dir onset <<<"$case"
	d=$work/$seed
	synth_analyze "read-loss-$seed" "$d" "$d/out.json" --hosts 16 --leaves 2 --spines 8 \
		--load 20% --mtu 4096 --duration 10ms --workload read --vantage mirror \
		--snaplen 128 --seed "$seed" \
		--fault "link=$fault,dir=$dir,kind=flap,size=100us,period=1ms,onset=$onset" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv" || continue
	link=$(jq -r '[.links[] | select(.faulty) | .link][0]' "$d/truth.json")
	spine=${link#*-}
	got=$(jq -r '.findings[0] | "\(.level) \(.kind) \(
		[.evidence.subjects // [.subject] | .[] | select(. == "'"$link"'")] | length)"' \
		"$d/out.json")
	[ "$got" = "alert lossy 1" ] &&
		pass "read-loss-$seed: first alert lossy on $link" ||
		fail "read-loss-$seed: first alert lossy on $link" \
			"$(jq -c '[.findings[] | [.level, .kind, .subject]]' "$d/out.json")"
	# No alert on the links of another spine (the responses' way).
	n=$(jq --arg s "$spine" '[.findings[] | select(.level == "alert" and .subject_kind != "host_link") |
		select(.subject | test("spine[0-9]+") ) | select(.subject | contains($s) | not)] | length' \
		"$d/out.json")
	expect_eq "read-loss-$seed: no alert on another spine" 0 "$n"
done
exit 0
