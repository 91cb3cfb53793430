#!/usr/bin/env bash
# test_slow_responder_mixed.sh: a responder's turnaround (timed at its own host) is compared
# with its peers' of the same kind (issue #17, round 10). A READ turnaround holds its
# response message's length (5.5-5.9 us here); a WRITE's ACK turnaround holds only the NIC's
# processing (0 us in the synthesizer, about 1 us in hardware). One median over both kinds
# hid a slow responder on a small mixed each-host fabric (the eval's slowresp-each-mixed
# shape): seed 1358, 198.18.0.13 answers READs 50 us late and was a notice under a wrong
# `slow` alert. Seed 1353: 198.18.0.12 serves only WRITEs and ACKs them 45 us late; READ
# turnarounds alone (a first try) lost it, the ACK ones keep it. And with every other
# responder answering in 1 us, a NIC's time, the build before raised a `host` alert on a
# healthy fabric (seed 1346): a 1 us median is no base to scale an ACK turnaround by, the
# round trip it lengthens is. Seed 1341: 198.18.0.12 serves only WRITEs and its coalesced
# ACKs keep a turnaround p50 of 0 (the wait shows in its own copy's p99, 45 us); a latency
# shift named its host link `slow`: its own copy times the wait, so it is the host. The
# build before fails the reads, coalesced and nic1us checks.
. "$(dirname "$0")/../lib.sh"
synth_test_start slow-responder-mixed
base=(--hosts 8 --leaves 2 --spines 2 --load 10% --mtu 1024 --duration 5ms --workload mixed
	--vantage each-host --snaplen 128)

# name synth-args...: synthesize, analyze every host's trace without a topology.
run() { each_run slow-responder-mixed "$1" "${base[@]}" "${@:2}"; }

if run writes --seed 1353 --host-fault 'host=198.18.0.12,kind=slow-responder,size=50us,onset=0us'; then
	expect_eq "slow-responder-mixed-writes: the slow responder is the first alert" \
		"host 198.18.0.12" "$(first_alert "$work/writes.json")"
fi
if run reads --seed 1358 --host-fault 'host=198.18.0.13,kind=slow-responder,size=50us,onset=1000us'; then
	expect_eq "slow-responder-mixed-reads: the slow responder is the first alert" \
		"host 198.18.0.13" "$(first_alert "$work/reads.json")"
fi
if run coalesced --seed 1341 --host-fault 'host=198.18.0.12,kind=slow-responder,size=50us,onset=1500us'; then
	expect_eq "slow-responder-mixed-coalesced: the slow responder is the first alert" \
		"host 198.18.0.12" "$(first_alert "$work/coalesced.json")"
fi
# Round 16 (docs/evaluation.md "Sixteenth round: a slow responder's own link"): beside
# the host's alert (its turnaround, on 1-2 connections) a latency shift on other
# connections to the same host raised a second alert on its link; the host's own copy
# times that wait too, so it is the host's alert seen again: a notice. Seeds 2946, 2951.
for case in 2946:198.18.0.17:1000us 2951:198.18.0.10:2000us; do
	IFS=: read -r seed host onset <<<"$case"
	run "again$seed" --seed "$seed" --host-fault "host=$host,kind=slow-responder,size=50us,onset=$onset" ||
		continue
	expect_eq "slow-responder-mixed-again$seed: the host is the one alert" \
		"[[\"host\",\"$host\"]]" "$(alert_list "$work/again$seed.json")"
done
nic=()
for i in $(seq 10 17); do
	nic+=(--host-fault "host=198.18.0.$i,kind=slow-responder,size=1us,onset=0us")
done
if run nic1us --seed 1346 "${nic[@]}"; then
	n=$(alert_count "$work/nic1us.json")
	expect_eq "slow-responder-mixed-nic1us: responders answering in 1 us raise no alert" 0 "$n"
fi
exit 0
