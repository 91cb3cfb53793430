#!/usr/bin/env bash
# test_responder_late.sh: a host link late only where its host responds is a slow responder,
# kind host (issue #17, round 27). Every round trip is timed at its requester's NIC and so
# covers the requester's own link both ways: a slow host link delays its host's own requests
# as much as the ones it answers, a slow responder only the ones it answers. A 40 us slow
# responder in a READ fabric seen from a mirror (ho5-slowresp40-read, tuning seeds 3957 and
# 3958) was a `slow` host link in every run, with or without a topology; a serializer slowed
# out of the host and a +15 us host link stay `slow`.
. "$(dirname "$0")/../lib.sh"
synth_test_start responder-late
# responder_checks NAME DIR HOST LEAF WHY: DIR/out.json's first alert is HOST's link, kind
# host, its kind_why matches WHY, and without a topology the host's link is first too.
responder_checks() {
	expect_eq "responder-late $1: the slow responder's link is the first alert, host" \
		"host $3-$4" "$(first_alert "$2/out.json")"
	expect_eq "responder-late $1: the evidence says why" true \
		"$(jq --arg why "$5" '[.findings[] | select(.level == "alert")][0].evidence.kind_why |
			test($why)' "$2/out.json")"
	expect_eq "responder-late $1: without a topology, the host" \
		"[\"host\",\"host_link\",\"$3\"]" "$(hosts_first_alert responder-late "$2")"
}
for case in 3957:198.18.0.42:leaf8:0us 3958:198.18.0.22:leaf3:3200us; do
	IFS=: read -r seed host leaf onset <<<"$case"
	d=$work/read-$seed
	synth_analyze responder-late "$d" "$d/out.json" --hosts 40 --leaves 10 --spines 4 \
		--load 25% --mtu 2048 --duration 8ms --workload read --vantage mirror --snaplen 128 \
		--seed "$seed" --host-fault "host=$host,kind=slow-responder,size=40us,onset=$onset" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
	responder_checks "read $seed" "$d" "$host" "$leaf" "late only where its host responds"
done

# In a fabric marking everywhere (peers 0.57-0.63%), a host's few connections read as its
# paths' queues (few_in_heavy_queueing()); a host late only where it responds is not a
# queue, which delays its requests too (round 36: ho12-slowresp45-40, 40 hosts, 8 leaves,
# 2 spines, 18% READs, seed 4066: a notice on both builds before).
d=$work/busy-4066
synth_analyze responder-late "$d" "$d/out.json" --hosts 40 --leaves 8 --spines 2 \
	--load 18% --mtu 4096 --duration 6ms --workload read --vantage mirror --snaplen 128 \
	--seed 4066 --host-fault "host=198.18.0.47,kind=slow-responder,size=45us,onset=0us" -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "responder-late busy 4066: the slow responder's link is the first alert, host" \
	"host 198.18.0.47-leaf7" "$(first_alert "$d/out.json")"
expect_eq "responder-late busy 4066: without a topology, the host" \
	'["host","host_link","198.18.0.47"]' "$(hosts_first_alert responder-late "$d")"

# ... on every connection it has: a 4x cable toward a leaf (ho8-slowx4-fab-1dir, 38 hosts,
# 2 leaves, 5 spines, 20% mixed, seed 4072) made 198.18.0.32 late where it responds on 2
# of its 4 connections; without a topology that is no host alert.
d=$work/cable-4072
synth_analyze responder-late "$d" "$d/out.json" --hosts 38 --leaves 2 --spines 5 \
	--load 20% --mtu 2048 --duration 6ms --workload mixed --vantage mirror --snaplen 128 \
	--seed 4072 --fault "link=leaf1-spine2,dir=spine2>leaf1,kind=slow,size=4x,onset=0us" \
	--fault "link=leaf1-spine2,dir=spine2>leaf1,kind=slow,size=3us,onset=0us" -- || exit 0
expect_eq "responder-late cable 4072: no host alert on 198.18.0.32" 0 \
	"$(jq '[.findings[] | select(.level == "alert" and .subject == "198.18.0.32")] | length' "$d/out.json")"

# A serializer 4x slower out of the same host delays only what the host sends too, but
# stretches each READ from its first response to its last: it stays a slow link.
# serializer_case NAME SEED LINK DIR ONSET SYNTH-ARGS...: a 4x serializer on LINK's DIR from
# ONSET; its link stays the first alert, slow.
serializer_case() {
	local name=$1 seed=$2 link=$3 dir=$4 onset=$5 d=$work/$1-$2
	shift 5
	synth_analyze responder-late "$d" "$d/out.json" "$@" --vantage mirror --snaplen 128 \
		--seed "$seed" --fault "link=$link,dir=$dir,kind=slow,size=4x,onset=$onset" \
		-- --topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
	expect_eq "responder-late $name $seed: a 4x serializer stays slow" "slow $link" \
		"$(first_alert "$d/out.json")"
}
for seed in 3957 3958; do
	serializer_case read "$seed" 198.18.0.42-leaf8 "198.18.0.42>leaf8" 0us --hosts 40 --leaves 10 \
		--spines 4 --load 25% --mtu 2048 --duration 8ms --workload read
done

# Under WRITEs (round 41): a responder that waits adds the same time to every ACK where it
# answers, and nothing where it requests: its connections' floors rise by as much and
# their spread does not widen. 35-45 us slow responders in WRITE fabrics seen from a mirror
# (ho19-slowresp45-33 seed 4120, ho16-slowresp35-26 seed 4121) were `slow` host links.
for case in 4120:33:11:4:12%:198.18.0.25:leaf5:45us:2400us 4121:26:13:5:18%:198.18.0.30:leaf10:35us:600us; do
	IFS=: read -r seed hosts leaves spines load host leaf size onset <<<"$case"
	d=$work/write-$seed
	synth_analyze responder-late "$d" "$d/out.json" --hosts "$hosts" --leaves "$leaves" \
		--spines "$spines" --load "$load" --mtu 4096 --duration 6ms --workload write \
		--vantage mirror --snaplen 128 --seed "$seed" \
		--host-fault "host=$host,kind=slow-responder,size=$size,onset=$onset" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
	responder_checks "write $seed" "$d" "$host" "$leaf" "every one by about as much"
done

# A serializer 4x slower toward the host delays only what the host answers as well, but a
# message's later packets more than its first: the spread widens, it stays slow
# (ho3-rate4x-host-1dir, seeds 3957 and 3958).
for case in 3957:198.18.0.24 3958:198.18.0.23; do
	IFS=: read -r seed host <<<"$case"
	serializer_case write "$seed" "$host-leaf3" "leaf3>$host" 1500us --hosts 28 --leaves 7 \
		--spines 2 --load 15% --mtu 4096 --duration 15ms --workload write
done

# A +60 us host link both ways from 600 us on (ho13-slow60us-host, 46 hosts on 23 leaves,
# 14% mixed, seed 4123): where its host requests, the connections' medians stayed at their
# baselines on two of three and their later floors rose 119 us: it stays slow.
link_cases responder-late slow kind=slow,size=60us "--hosts 46 --leaves 23 --spines 2 \
	--load 14% --mtu 2048 --duration 6ms --workload mixed" 4123:198.18.0.11-leaf0:600us

# A slow host link delays both ways: it stays slow.
link_cases responder-late slow kind=slow,size=15us "--hosts 36 --leaves 6 --spines 3 \
	--load 35% --mtu 1024 --duration 3ms --workload write" 3956:198.18.0.19-leaf1:900us
exit 0
