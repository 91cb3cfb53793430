#!/usr/bin/env bash
# test_host_link_not_host.sh: a host link slow both ways delays what its host asks and what
# it answers, so it is one fault, the link (issue #17, round 20). The eval's
# slow20us-host-light shape (tuning seed 3433): 198.18.0.20-leaf2 gains 20 us each way from
# 2 ms on. The build before named the link first and the host itself second, both alerts
# (the host's answers wait, "latency 3.18x its own past"). A host's turnaround delays only
# what it answers: with the link also slowing the connections the host starts, and every
# connection of the host alert crossing that link, the host alert is a notice. Since round
# 43 the link's one-way pick also explains the round trips whose ACKs take its slow way
# (the host's answers leave by it), so nothing is left to name the host at all.
. "$(dirname "$0")/../lib.sh"
synth_test_start host-link-not-host
d=$work/t
synth_analyze host-link-not-host "$d" "$work/out.json" --hosts 16 --leaves 4 --spines 2 \
	--load 5% --mtu 1024 --duration 10ms --workload write --vantage mirror --snaplen 128 \
	--seed 3433 --peers 4 --fault link=198.18.0.20-leaf2,kind=slow,size=20us,onset=2000us -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
got=$(jq -c '[.findings[] | select(.level == "alert") | [.kind, .subject]]' "$work/out.json")
expect_eq "host-link-not-host: one alert, the slow host link" '[["slow","198.18.0.20-leaf2"]]' "$got"
expect_eq "host-link-not-host: no finding names the host apart from its link" 0 \
	"$(jq '[.findings[] | select(.subject == "198.18.0.20")] | length' "$work/out.json")"
exit 0
