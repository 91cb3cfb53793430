#!/usr/bin/env bash
# test_latency_coverage.sh: an all-clear says what it could not judge (round 46). A 1 ms
# collective of 16 hosts gives every one of its 480 requester flows under 20 ACK samples, so
# no latency is judged there: the text verdict, the JSON (latency_coverage) and the report's
# verdict say so instead of a plain "no link stands out". A 10 ms WRITE trace is judged on
# every flow and keeps the plain all-clear.
. "$(dirname "$0")/../lib.sh"
synth_test_start latency-coverage
REPORT=$BIN/agentxdp-report

"$SYNTH" -q -o "$work/coll" --hosts 16 --leaves 4 --spines 2 --workload collective --load 10% \
	--duration 1ms --seed 7 || { fail latency-coverage "synth failed"; exit 0; }
"$ANALYZE" -q "$work/coll/trace.pcapng" --json >"$work/coll.json" 2>"$work/coll.err" ||
	{ fail latency-coverage "analyze: $(head -n 1 "$work/coll.err")"; exit 0; }
expect_eq "latency-coverage: JSON says 0 of 480 flows judged, bar 20" "480 0 20" \
	"$(jq -r '.latency_coverage | "\(.flows) \(.judged) \(.min_samples)"' "$work/coll.json" 2>/dev/null)"
"$ANALYZE" "$work/coll/trace.pcapng" -o "$work/coll.db" >/dev/null 2>&1
"$ANALYZE" "$work/coll/trace.pcapng" >"$work/coll.txt" 2>/dev/null
grep -q "none: no link, path or host stands out in what could be judged" "$work/coll.txt" &&
	grep -q "latency judged on 0 of 480 requester flows only: the others carry fewer than 20" "$work/coll.txt" &&
	pass "latency-coverage: the text all-clear says latency was not judged" ||
	fail "latency-coverage: the text all-clear says latency was not judged" "$(sed -n '/Findings/,$p' "$work/coll.txt" | head -3 | tr '\n' ' ')"
if [ -x "$REPORT" ]; then
	"$REPORT" "$work/coll.db" >"$work/coll.report" 2>&1
	grep -q "No slow or lossy link found in what could be judged.*ACK latency on only 0 of 480 requester flows" \
		"$work/coll.report" && pass "latency-coverage: the report's verdict says so too" ||
		fail "latency-coverage: the report's verdict says so too" "$(grep -A1 VERDICT "$work/coll.report" | tail -1)"
fi

"$SYNTH" -q -o "$work/write" --hosts 8 --leaves 2 --spines 2 --load 10% --duration 10ms --seed 7 ||
	{ fail latency-coverage "synth failed"; exit 0; }
"$ANALYZE" "$work/write/trace.pcapng" -o "$work/write.db" >/dev/null 2>&1
"$ANALYZE" "$work/write/trace.pcapng" --json >"$work/write.json" 2>/dev/null
"$ANALYZE" "$work/write/trace.pcapng" >"$work/write.txt" 2>/dev/null
expect_eq "latency-coverage: a 10 ms WRITE trace is judged on every flow at 20 samples" "yes 20" \
	"$(jq -r '.latency_coverage | "\(if .judged == .flows and .flows > 0 then "yes" else "no \(.judged)/\(.flows)" end) \(.min_samples)"' "$work/write.json" 2>/dev/null)"
if grep -q "none: no link, path or host stands out$" "$work/write.txt" && ! grep -q "latency judged on" "$work/write.txt"; then
	pass "latency-coverage: its all-clear is the plain one"
else
	fail "latency-coverage: its all-clear is the plain one" "$(sed -n '/Findings/,$p' "$work/write.txt" | head -3 | tr '\n' ' ')"
fi
if [ -x "$REPORT" ]; then
	"$REPORT" "$work/write.db" >"$work/write.report" 2>&1
	grep -q "No slow or lossy link found. Checked" "$work/write.report" &&
		pass "latency-coverage: and the report's too" ||
		fail "latency-coverage: and the report's too" "$(grep -A1 VERDICT "$work/write.report" | tail -1)"
fi

# Flows of 12-14 ACK samples (ho23-slowx4-host-1dir 4163, a one-way 4x host link from
# 1.2 ms): none reaches 20, and no fault is named; the all-clear says why.
"$SYNTH" -q -o "$work/coll2" --hosts 30 --leaves 15 --spines 4 --workload collective --load 15% \
	--mtu 2048 --duration 6ms --seed 4163 \
	--fault 'link=198.18.0.29-leaf9,dir=198.18.0.29>leaf9,kind=slow,size=4x,onset=1200us' \
	--fault 'link=198.18.0.29-leaf9,dir=198.18.0.29>leaf9,kind=slow,size=3us,onset=1200us' ||
	{ fail latency-coverage "synth failed"; exit 0; }
"$ANALYZE" "$work/coll2/trace.pcapng" >"$work/coll2.txt" 2>/dev/null
grep -q "latency judged on 0 of 1740 requester flows only: the others carry fewer than 20" "$work/coll2.txt" &&
	pass "latency-coverage: 12-14 samples a flow: the all-clear says latency was not judged" ||
	fail "latency-coverage: 12-14 samples a flow: the all-clear says latency was not judged" \
		"$(sed -n '/Findings/,$p' "$work/coll2.txt" | head -3 | tr '\n' ' ')"
exit 0
