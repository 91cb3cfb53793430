#!/usr/bin/env bash
# test_sender_timer_link.sh: a host whose NIC times out early, analyzed with its topology
# (issue #17, round 8). All its QPs go over one spine, so its access link and that spine
# cable carry the same connections and the loss fit ties them; the build before this rule
# named the set "H-leaf0 | leaf3-spine0", which names no host (the same trace without a
# topology names the host). The responder NAKs every PSN gap it receives: timeouts with
# no NAK mean no request went missing on any wire, and the finding is the sender's, on
# its own link. Shape and seed: the cell nicretx-long of eval/matrix.txt on tuning seed
# 1227. TEST_ANALYZE runs another build.
. "$(dirname "$0")/../lib.sh"
synth_test_start sender-timer-link

d=$work/1227
host=198.18.0.10
synth_analyze sender-timer-1227 "$d" "$d/out.json" --hosts 8 --leaves 4 --spines 2 --load 5% \
	--mtu 1024 --duration 50ms --workload write --vantage mirror --snaplen 128 --seed 1227 \
	--host-fault "host=$host,kind=nic-retransmit,size=2us,onset=10000us" -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
got=$(jq -r '.findings[0] | "\(.level) \(.kind) \(.subject_kind) \(.subject)"' "$d/out.json")
expect_eq "sender-timer-1227: the sender's own link" "alert host link $host-leaf0" "$got"
check "sender-timer-1227: the sender's timer, no set" \
	jq -e '.findings[0] | (.severity_text | test("retransmit timer")) and
		(.evidence.subjects == null)' "$d/out.json"
# The tie was real: the spine cable stays the runner-up in the evidence, not a finding.
n=$(alert_count "$d/out.json")
expect_eq "sender-timer-1227: one alert" 1 "$n"
exit 0
