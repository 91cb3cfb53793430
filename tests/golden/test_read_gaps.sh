#!/usr/bin/env bash
# test_read_gaps.sh: a READ response lost on a host link counts as a loss event (issue #17,
# round 9). Each-host captures of the eval's loss1-host-each-read shape (tuning seed 1271:
# 198.18.0.14's link drops 1% both ways from 4 ms). The responder NAKs a lost read request,
# but a lost response is re-read with no NAK: the requester sees a later response, and
# the tracker counts one re-read per gap (flow_stats.read_gaps). The build before counted
# a READ connection's NAKs and timeouts only, 1-2 events where 16-56 responses were lost,
# and named 198.18.0.10 (lossy, with and without a topology). With the re-reads counted,
# the first alert is the lossy host (its link with a topology) and no other host alerts.
. "$(dirname "$0")/../lib.sh"
synth_test_start read-gaps
d=$work/t
if ! "$SYNTH" -q -o "$d" --hosts 16 --leaves 4 --spines 4 --load 10% --mtu 1024 --duration 10ms \
	--workload read --vantage each-host --snaplen 128 --seed 1271 \
	--fault 'link=198.18.0.14-leaf1,kind=loss,size=1%,onset=4000us' 2>"$work/err"; then
	fail "read-gaps" "synth: $(head -n 1 "$work/err")"
	exit 0
fi
for mode in hosts topo; do
	args=()
	[ "$mode" = topo ] && args=(--topology "$d/links.csv" --paths "$d/paths.csv")
	if ! "$ANALYZE" -q "$d"/trace-*.pcapng --json "${args[@]}" >"$work/$mode.json" 2>"$work/err"; then
		fail "read-gaps-$mode" "analyze: $(head -n 1 "$work/err")"
		continue
	fi
	want="lossy host_link 198.18.0.14"
	[ "$mode" = topo ] && want="lossy link 198.18.0.14-leaf1"
	got=$(jq -r '[.findings[] | select(.level == "alert")][0] | "\(.kind) \(.subject_kind) \(.subject)"' \
		"$work/$mode.json")
	expect_eq "read-gaps-$mode: the first alert is the lossy host's link" "$want" "$got"
	n=$(jq '[.findings[] | select(.level == "alert") | select(.subject | contains("198.18.0.14") | not)] |
		length' "$work/$mode.json")
	expect_eq "read-gaps-$mode: no alert elsewhere" 0 "$n"
done
# The re-reads are stored: the database's qp.read_rereads, the JSON's flows and totals, and the
# text summary agree, and there are some (responses were lost; no NAK names them).
if "$ANALYZE" -q "$d"/trace-*.pcapng -o "$work/out.db" 2>"$work/err" &&
	"$ANALYZE" "$d"/trace-*.pcapng >"$work/out.txt" 2>"$work/err"; then
	db=$(sqlite3 "$work/out.db" "SELECT sum(read_rereads) FROM qp WHERE role = 'requester'")
	flows=$(jq '[.flows[].read_rereads] | add' "$work/hosts.json")
	total=$(jq '.totals.read_rereads' "$work/hosts.json")
	text=$(sed -n 's/^READ responses re-read after a loss \([0-9]*\)$/\1/p' "$work/out.txt")
	if [ "${db:-0}" -gt 0 ] && [ "$db" = "$flows" ] && [ "$db" = "$total" ] && [ "$db" = "$text" ]; then
		pass "read-gaps: $db re-reads in the database, the JSON and the summary"
	else
		fail "read-gaps: stored re-reads" "database ${db:-none}, JSON flows $flows, totals $total, text ${text:-none}"
	fi
else
	fail "read-gaps: database" "analyze: $(head -n 1 "$work/err")"
fi
exit 0
