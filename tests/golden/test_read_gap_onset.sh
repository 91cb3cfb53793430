#!/usr/bin/env bash
# test_read_gap_onset.sh: a READ's re-reads count in the per-window loss that dates a lossy
# finding (issue #17, round 10). 8 hosts reading over a mirror, 198.18.0.12's link drops 3%
# both ways from 5 ms of 10 ms. A lost response is re-read with no NAK; the connection
# counts one loss event per re-read (flow_stats.read_gaps), and now each window does too
# (flow_window.read_gaps), counted like the connection: NAKs, timeouts and re-reads, the
# larger of the two directions. The build before summed both directions' windows and, with
# no NAK or timeout in a window, counted every resent packet (a re-read resends the READ
# and its responses): the bursts of resends put a change point at 6.4 ms. The onset must
# be the fault's: 4.9-5.2 ms.
. "$(dirname "$0")/../lib.sh"
synth_test_start read-gap-onset
d=$work/t
synth_analyze read-gap-onset "$d" "$work/out.json" --hosts 8 --duration 10ms --workload read \
	--seed 1 --fault 'link=198.18.0.12-leaf0,kind=loss,size=3%,onset=5ms' -- \
	--topology "$d/links.csv" --paths "$d/paths.csv" || exit 0
start=$(jq -r '.start_ns' "$d/truth.json")
got=$(jq -r '[.findings[] | select(.level == "alert" and .kind == "lossy")][0] | "\(.subject)"' \
	"$work/out.json")
expect_eq "read-gap-onset: the lossy alert names the host's link" "198.18.0.12-leaf0" "$got"
on=$(jq -r --argjson s "$start" '[.findings[] | select(.level == "alert" and .kind == "lossy")][0] |
	if .onset_ns == null then "none" else ((.onset_ns - $s) / 1000 | floor | tostring) end' \
	"$work/out.json")
# The trace's first packet comes just after a window boundary: the window holding 5 ms
# starts up to 0.1 ms before it.
if [[ "$on" =~ ^[0-9]+$ ]] && [ "$on" -ge 4900 ] && [ "$on" -le 5200 ]; then
	pass "read-gap-onset: the onset is the fault's"
else
	fail "read-gap-onset: the onset is the fault's" "$on us from the start, want 4900-5200"
fi
exit 0
