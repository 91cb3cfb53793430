#!/usr/bin/env bash
# test_busy_responder_rtt.sh: a host whose round trips are late where it answers, by under
# 2x its peers' (latency or completion), is a notice: what a busy responder shows, as its
# turnaround under 2x already was; a slow responder is several times slower (issue #17,
# round 40). On tuning seeds 4066-4118 every such host alert under 2x was wrong: hosts of
# healthy incast fabrics at 1.24-1.60x, hosts beside a lossy or slow link. A 40 us slow
# responder stays the first alert.
. "$(dirname "$0")/../lib.sh"
synth_test_start busy-responder-rtt
# healthy_case SEED INCAST-HOST SYNTH-ARGS...: no alert, and the host that looked late is a
# notice that says why.
healthy_case() {
	local seed=$1 incast=$2 d=$work/healthy-$1
	shift 2
	mirror_topo_run busy-responder-rtt "$d" "$seed" "" "$@" --workload write \
		--incast "$incast" --incast-factor 3 || exit 0
	expect_eq "busy-responder-rtt incast $seed: no alert" 0 "$(alert_count "$d/out.json")"
	expect_eq "busy-responder-rtt incast $seed: a host notice says a busy responder" true \
		"$(jq '[.findings[] | select(.level == "notice" and .subject_kind == "host")
			| .evidence.notice_why | test("busy responder")] | any' "$d/out.json")"
}
healthy_case 4116 198.18.0.23 --hosts 34 --leaves 17 --spines 8 --load 20% --mtu 2048 --duration 7ms
healthy_case 4114 198.18.0.26 --hosts 38 --leaves 2 --spines 5 --load 20% --mtu 2048 --duration 6ms
d=$work/slowresp
synth_analyze busy-responder-rtt "$d" "$d/out.json" --hosts 40 --leaves 10 --spines 4 --load 25% \
	--mtu 2048 --duration 8ms --workload read --vantage mirror --snaplen 128 --seed 4118 \
	--host-fault host=198.18.0.43,kind=slow-responder,size=40us,onset=800us -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
expect_eq "busy-responder-rtt slow responder: the first alert is the host" true \
	"$(jq '[.findings[] | select(.level == "alert")][0] | .kind == "host" and
		(.subject | test("^198[.]18[.]0[.]43"))' "$d/out.json")"
exit 0
