#!/usr/bin/env bash
# test_incast_turnaround_notice.sh: a READ incast target's turnaround is the queue of its own
# responses, a notice; a slow responder's is not, an alert (issue #17, round 12). The eval's
# healthy-incast-each shape, tuning seed 1652: 198.18.0.14 serves about 3x the READs of a
# host, answers them in arrival order on its one link, and a request that arrives behind
# others waits for their responses: the build before raised a `host` alert on it (its
# responses start late, so the first-response rule kept it). The tracker joins every READ of
# a responder across its connections and times the other READs' responses on its link during
# each wait: busy through all of it here (share 1.0), where the slow responder of
# slowresp-each-read (seed 1649, 198.18.0.13 answering 50 us late) waits with its link idle
# (0.02). Connections of one responder fall in different shards: -j 1 and -j 2 agree.
. "$(dirname "$0")/../lib.sh"
synth_test_start incast-turnaround-notice
base=(--hosts 16 --leaves 4 --spines 4 --mtu 1024 --duration 10ms --workload read
	--vantage each-host --snaplen 128)

if each_run incast-turnaround-notice incast "${base[@]}" --load 20% --seed 1652 \
	--incast 198.18.0.14 --incast-factor 3; then
	expect_eq "incast-turnaround-notice: no alert" 0 "$(alert_count "$work/incast.json")"
	got=$(jq -r '[.findings[] | select(.subject == "198.18.0.14")][0] |
		"\(.level) \(.evidence.wait_queue_share >= 0.9)"' "$work/incast.json")
	expect_eq "incast-turnaround-notice: the incast target is a notice, its link busy in its waits" \
		"notice true" "$got"
	why=$(jq -r '[.findings[] | select(.subject == "198.18.0.14")][0].evidence.notice_why' "$work/incast.json")
	case $why in
	"its wait is the queue of its own responses (incast)"*) pass "incast-turnaround-notice: why" ;;
	*) fail "incast-turnaround-notice: why" "got '$why'" ;;
	esac
	if "$ANALYZE" -q -j 1 "$work/incast"/trace*.pcapng --json >"$work/j1.json" 2>"$work/err"; then
		expect_eq "incast-turnaround-notice: -j 1 finds the same" \
			"$(jq -c .findings "$work/incast.json")" "$(jq -c .findings "$work/j1.json")"
	else
		fail "incast-turnaround-notice-j1" "analyze: $(head -n 1 "$work/err")"
	fi
fi
if each_run incast-turnaround-notice slow "${base[@]}" --load 10% --seed 1649 \
	--host-fault 'host=198.18.0.13,kind=slow-responder,size=50us,onset=2000us'; then
	got=$(jq -r '[.findings[] | select(.level == "alert")][0] |
		"\(.kind) \(.subject) \(.evidence.wait_queue_share < 0.5)"' "$work/slow.json")
	expect_eq "incast-turnaround-notice: a slow responder stays the first alert, its link idle" \
		"host 198.18.0.13 true" "$got"
fi
exit 0
