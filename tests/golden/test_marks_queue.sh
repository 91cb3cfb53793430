#!/usr/bin/env bash
# test_marks_queue.sh: CE-marked ACKs against the queue (issue #17, round 11). A queue marks
# the packets it holds (RED between Kmin and Kmax), so on a busy healthy fabric a marked ACK
# is slower than the flow's unmarked ones on either side; a faulty marker marks at random,
# so its marked ACK is the quickest of the three a third of the time. The tracker counts,
# per responder flow, the timed marked ACKs (ce_acks_timed) and those no slower than either
# unmarked neighbour (ce_acks_fast). Tuning seeds 1421-1424: a 30% ECN fault on a light
# fabric (eval's ecn30-fab-1dir) 31-40% fast; the healthy 60%-loaded oversubscribed fabric
# (healthy-over60) 0.9-1.9%.
. "$(dirname "$0")/../lib.sh"
synth_test_start marks-queue
share() {
	jq -r '[.flows[] | select(.role == "responder")] |
		((map(.ce_acks_fast // 0) | add) * 100 / ((map(.ce_acks_timed // 0) | add) + 0.001) | floor)' "$1"
}
synth_analyze marks-queue-fault "$work/f" "$work/f.json" --hosts 16 --leaves 4 --spines 2 \
	--load 10% --mtu 1024 --duration 10ms --workload write --vantage mirror --snaplen 128 \
	--seed 1421 --fault 'link=leaf3-spine1,dir=spine1>leaf3,kind=ecn,size=30%,onset=1000us' -- || exit 0
pct=$(share "$work/f.json")
if [ "$pct" -ge 20 ] && [ "$pct" -le 50 ]; then
	pass "marks-queue: a random marker's marked ACKs are the quickest a third of the time ($pct%)"
else
	fail "marks-queue: a random marker's marked ACKs are the quickest a third of the time" "got $pct%"
fi
synth_analyze marks-queue-busy "$work/h" "$work/h.json" --hosts 64 --leaves 8 --spines 2 \
	--load 60% --mtu 4096 --duration 5ms --workload write --vantage mirror --snaplen 128 \
	--seed 1421 -- || exit 0
pct=$(share "$work/h.json")
n=$(jq '[.flows[] | .ce_acks_timed // 0] | add' "$work/h.json")
if [ "$n" -ge 100 ] && [ "$pct" -le 10 ]; then
	pass "marks-queue: a busy fabric's queues mark slow ACKs ($pct% fast of $n)"
else
	fail "marks-queue: a busy fabric's queues mark slow ACKs" "got $pct% fast of $n"
fi
exit 0
