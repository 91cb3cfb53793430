#!/usr/bin/env bash
# test_fabric_loss.sh: without a topology, a leaf-spine cable that drops packets is a
# `fabric` finding of kind lossy, listing the connections that lost on it (issue #17 item
# 4, round 31). The subjects are then hosts, host links and host pairs: before, such a
# cable was laid on a host link or a host pair of the connections it happened to hurt most
# (ho3-loss0.7-fab, seed 4016: "lossy path 198.18.0.14 -> 198.18.0.39" first, an alert),
# and no finding ever named the cable's connections.
. "$(dirname "$0")/../lib.sh"
synth_test_start fabric-loss
loss_case() {
	fabric_case fabric-loss lossy "$@"
	expect_eq "fabric-loss $1: no other alert" 1 "$(alert_count "$work/$1/out.json")"
}
loss_case spine0.7 leaf2-spine3 --hosts 44 --leaves 4 --spines 4 --load 25% --mtu 4096 \
	--duration 8ms --workload write --seed 4016 \
	--fault "link=leaf2-spine3,kind=loss,size=0.7%,onset=3200us"
# Four hosts per leaf, READs: 198.18.0.23 was on 3 of the 5 connections that lost on
# their own, more than half, so the set was dropped as that host's story, though its
# other connections lost nothing where the set's rate would have drawn 10 events or more.
# A host pair was the alert (loss1-fab-read, seed 4027).
loss_case readhost leaf3-spine0 --hosts 16 --leaves 4 --spines 4 --load 20% --mtu 1024 \
	--duration 10ms --workload read --seed 4027 \
	--fault "link=leaf3-spine0,kind=loss,size=1%,onset=3000us"

# Two hosts per leaf: the cable's drops showed on two connections into one host
# (198.18.0.21), whose other connections lost nothing where its rate would have drawn 10
# events or more. Fewer than three host pairs lost on their own, so no set formed: the
# host was a notice and the cable had no alert at all (ho4-loss1.5-fab, seed 4016).
loss_case twohosts leaf5-spine1 --hosts 16 --leaves 8 --spines 2 --load 20% --mtu 2048 \
	--duration 20ms --workload mixed --seed 4016 \
	--fault "link=leaf5-spine1,kind=loss,size=1.5%,onset=8000us"

# A healthy fabric whose ECMP sends half the cross-leaf flows to one spine overflows that
# spine's queues: the drops spread over many host pairs, and the queue marks the same
# connections. The set is listed, as a notice; no alert.
d=$work/ecmp
synth_analyze fabric-loss "$d" "$d/out.json" --hosts 40 --leaves 5 --spines 5 --load 25% \
	--mtu 2048 --duration 8ms --workload write --vantage mirror --snaplen 128 --seed 4016 \
	--ecmp-skew 0.5 -- || exit 0
expect_eq "fabric-loss ecmp: the overflow drops are a lossy fabric notice" "notice" \
	"$(jq -r '[.findings[] | select(.subject_kind == "fabric" and .kind == "lossy")][0].level' "$d/out.json")"
expect_eq "fabric-loss ecmp: no alert" 0 "$(alert_count "$d/out.json")"
# A host link that drops one way (198.18.0.20 -> leaf1): the host's connections whose data
# it sends all lose, those whose ACKs it sends hardly show. They are the host's story, not
# a fabric set's: before, they joined a set with a few overflow drops elsewhere and made a
# second, wrong alert.
d=$work/host1dir
synth_analyze fabric-loss "$d" "$d/out.json" --hosts 30 --leaves 3 --spines 2 --load 25% \
	--mtu 2048 --duration 6ms --workload write --vantage mirror --snaplen 128 --seed 4017 \
	--fault "link=198.18.0.20-leaf1,dir=198.18.0.20>leaf1,kind=loss,size=1.2%,onset=1800us" -- || exit 0
expect_eq "fabric-loss host1dir: the lossy host is the first alert" "lossy 198.18.0.20" "$(first_alert "$d/out.json")"
expect_eq "fabric-loss host1dir: no lossy fabric alert" 0 \
	"$(jq '[.findings[] | select(.level == "alert" and .subject_kind == "fabric")] | length' "$d/out.json")"
exit 0
