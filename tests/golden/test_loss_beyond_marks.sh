#!/usr/bin/env bash
# test_loss_beyond_marks.sh: a link that loses more packets than it marks is `lossy`, not
# `congested` (issue #17, round 16; docs/evaluation.md "Sixteenth round: loss beyond the
# marks"). A queue marks long before it overflows; drops beyond the marks are the wire's.
# Cell loss5-fab-coll of eval/matrix.txt (64 hosts, 16 leaves, 8 spines, a collective, 5%
# loss on one leaf-spine cable) on tuning seeds 2996 and 3020: the cable's resends queue and
# mark 0.6-1.2% of its packets beside 4.7-4.9% lost, and were headlined `congested`. The
# guard: two-ecn-slow-over 2949 (30% marks injected, 0.03% lost on the same link) stays
# `congested`. TEST_ANALYZE runs another build against the same traces.
. "$(dirname "$0")/../lib.sh"
synth_test_start loss-beyond-marks

coll=(--hosts 64 --leaves 16 --spines 8 --load 10% --mtu 4096 --duration 5ms --workload collective)
for run in 2996:leaf15-spine4 3020:leaf9-spine5; do
	seed=${run%%:*} link=${run#*:} d=$work/${run%%:*}
	mirror_topo_run "loss-beyond-marks-$seed" "$d" "$seed" "link=$link,kind=loss,size=5%,onset=0us" \
		"${coll[@]}" || continue
	got=$(first_alert "$d/out.json")
	[ "$got" = "lossy $link" ] && pass "loss-beyond-marks-$seed: the 5% lossy cable is lossy $link" ||
		fail "loss-beyond-marks-$seed: first alert lossy $link" "$got"
	# The marks stay in the headline and the evidence: one line says both.
	text=$(jq -r '.findings[0].severity_text' "$d/out.json")
	case $text in
	"lossy and congested: "*"% of packets lost"*"% of packets ECN-marked"*)
		pass "loss-beyond-marks-$seed: the headline says lossy and congested" ;;
	*) fail "loss-beyond-marks-$seed: headline lossy and congested" "$text" ;;
	esac
done

d=$work/guard
if synth_analyze loss-beyond-marks-guard "$d" "$d/out.json" --hosts 32 --leaves 4 --spines 2 \
	--load 40% --mtu 4096 --duration 10ms --workload mixed --vantage mirror --snaplen 128 \
	--seed 2949 --fault link=leaf0-spine1,kind=ecn,size=30%,onset=2000us \
	--fault link=leaf1-spine0,kind=slow,size=20us,onset=1000us -- \
	--topology "$d/links.csv" --paths "$d/paths.csv"; then
	got=$(jq -r '[.findings[] | select(.subject == "leaf0-spine1")][0] |
		"\(.level) \(.kind) \(.severity_text | startswith("lossy and congested"))"' "$d/out.json")
	[ "$got" = "alert congested true" ] &&
		pass "loss-beyond-marks-guard: 30% marks beside a little loss stay congested" ||
		fail "loss-beyond-marks-guard: leaf0-spine1 alert congested, lossy and congested" "$got"
fi
exit 0
