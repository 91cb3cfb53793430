#!/usr/bin/env bash
# test_turnaround_start.sh: a responder's turnaround (request in, last response out, timed at
# its own host) holds the wait before its first response and the response message's length
# on its link (issue #17, round 9). A busy responder answers at once and shares its link
# among the responses of all its reads; a slow responder waits before it answers. Each-host
# captures of the eval's healthy-each-read shape (tuning seed 1277): 198.18.0.13 serves 14
# reads, its turnaround is 2.1x its peers' and the build before raised a `host` alert on a
# healthy fabric; 0.6% of that excess lies before the first response, so it is a notice
# now. A slow responder (the slowresp-each-read shape, seed 1277: 198.18.0.18 answers 50 us
# late from 1 ms) has all of its excess there and stays the first alert.
. "$(dirname "$0")/../lib.sh"
synth_test_start turnaround-start
base=(--hosts 16 --leaves 4 --spines 4 --mtu 1024 --duration 10ms --workload read
	--vantage each-host --snaplen 128 --seed 1277)

# name synth-args...: synthesize, analyze every host's trace without a topology.
run() { each_run turnaround-start "$1" "${base[@]}" "${@:2}"; }

if run busy --load 20%; then
	n=$(alert_count "$work/busy.json")
	expect_eq "turnaround-start-busy: a busy responder raises no alert" 0 "$n"
	got=$(jq -r '[.findings[] | select(.subject == "198.18.0.13" and .kind == "host")][0].level' \
		"$work/busy.json")
	expect_eq "turnaround-start-busy: the busy responder is a notice" notice "$got"
fi
if run slow --load 10% --host-fault 'host=198.18.0.18,kind=slow-responder,size=50us,onset=1000us'; then
	got=$(first_alert "$work/slow.json")
	expect_eq "turnaround-start-slow: the slow responder is the first alert" "host 198.18.0.18" "$got"
fi
exit 0
