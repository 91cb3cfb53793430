#!/usr/bin/env bash
# test_timer_slow_notice.sh: a slow pick on the flows of a sender's timer is a notice (issue
# #17, round 10). The eval's nicretx-long shape (tuning seed 1353): 198.18.0.13's NIC times
# out after 2 us from 20 ms on, restarts its messages without any loss (1946 timeouts, no
# NAK), and sender_timer() makes that a `host` finding on its link. Two of its connections
# complete 2.1x slower than their peers (they wait for the resends), and the completion pick
# named leaf1-spine1, which they cross: the build before ranked that `slow` alert first and
# demoted the host finding as "the same fault seen again". Every hurt connection of the slow
# pick is one of the timer host's and restarted on its timer: the host's resends, a notice.
. "$(dirname "$0")/../lib.sh"
synth_test_start timer-slow-notice
d=$work/t
synth_analyze timer-slow-notice "$d" "$work/out.json" --hosts 8 --leaves 4 --spines 2 --load 5% \
	--mtu 1024 --duration 50ms --workload write --snaplen 128 --seed 1353 \
	--host-fault host=198.18.0.13,kind=nic-retransmit,size=2us,onset=20000us -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
got=$(jq -r '[.findings[] | select(.level == "alert")][0] | "\(.kind) \(.subject)"' "$work/out.json")
expect_eq "timer-slow-notice: the first alert is the timer host's link" "host 198.18.0.13-leaf1" "$got"
n=$(jq '[.findings[] | select(.level == "alert" and .kind == "slow")] | length' "$work/out.json")
expect_eq "timer-slow-notice: no slow alert" 0 "$n"
why=$(jq -r '[.findings[] | select(.subject == "leaf1-spine1")][0].evidence.notice_why' "$work/out.json")
expect_eq "timer-slow-notice: leaf1-spine1 is a notice for the timer" \
	"its flows restart on their sender's timer: the host's resends, not the network" "$why"
exit 0
