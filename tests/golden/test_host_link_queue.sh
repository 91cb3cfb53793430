#!/usr/bin/env bash
# test_host_link_queue.sh: a host link whose floor rose, every connection's floor with it (by
# at least half the link's rise, unequally: a queue), is a slow link whose marks and drops
# are its queue's (issue #17, round 25). A 6x serializer on a host link of a 30%-loaded
# 28/7/2 fabric (ho3-slowx6-host, tuning seeds 3926-3945) was read `congested` by its marks
# or `lossy` by its overflow drops in 9 of 40 runs; its floor rose 12-18 us and every
# connection's 0.7-2.5x that. Guard: an ECN host link beside a +60 us spine cable
# (ho3-two-slow-ecn, seed 3929), whose floor rose through the cable for some of its
# connections only, stays `congested`.
. "$(dirname "$0")/../lib.sh"
synth_test_start host-link-queue
busy28="--hosts 28 --leaves 7 --spines 2 --load 30% --mtu 2048 --duration 6ms --workload mixed"
for case in 3927:198.18.0.36-leaf6:1800us 3928:198.18.0.36-leaf6:1800us \
	3931:198.18.0.34-leaf6:600us; do
	IFS=: read -r seed link onset <<<"$case"
	d=$work/$seed
	# shellcheck disable=SC2086 # the shape's words
	synth_analyze host-link-queue "$d" "$d/out.json" $busy28 --vantage mirror --snaplen 128 \
		--seed "$seed" --fault "link=$link,kind=slow,size=6x,onset=$onset" \
		--fault "link=$link,kind=slow,size=5us,onset=$onset" -- \
		--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
	expect_eq "host-link-queue $seed: the 6x host link is the first alert, slow" \
		"slow $link" "$(first_alert "$d/out.json")"
	expect_eq "host-link-queue $seed without a topology: the host's link, slow" \
		"[\"slow\",\"host_link\",\"${link%-leaf*}\"]" "$(hosts_first_alert host-link-queue "$d")"
done

d=$work/two
# shellcheck disable=SC2086 # the shape's words
synth_analyze host-link-queue "$d" "$d/out.json" $busy28 --vantage mirror --snaplen 128 \
	--seed 3929 --fault link=leaf4-spine0,kind=slow,size=60us,onset=1800us \
	--fault link=198.18.0.29-leaf4,kind=ecn,size=20%,onset=1200us -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "host-link-queue two faults 3929: the ECN host link stays congested" \
	'[["congested","198.18.0.29-leaf4"],["slow","leaf4-spine0"]]' "$(alert_list "$d/out.json")"
exit 0
