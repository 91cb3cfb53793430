#!/usr/bin/env bash
# test_encap_mirror.sh: a synthesized incident delivered by a remote mirror session (ERSPAN II,
# ERSPAN III, GRE-TEB, VXLAN: agentxdp-synth --encap) analyzes exactly as the plain trace does:
# same per-flow counts and totals (agentxdp-analyze --json), same findings, same --dump lines,
# and tshark finds the same RoCE packets inside. The expectation is the plain trace of the same
# seed, never a stored answer. ERSPAN III copies reach the collector late, with jitter, by a
# drifting clock (agentxdp-synth --collector-*): the analysis is still the plain trace's because
# it runs on the switch's timestamps; only --dump's time column (the file's, as tshark shows it)
# differs.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip encap-mirror "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
command -v jq >/dev/null || { skip encap-mirror "jq not installed"; exit 0; }
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# A lossy link and a slow responder host on one fabric; the second incident adds IPv6, an inner
# VLAN and a collector snaplen that trims the outer frame.
incidents=(
	"v4|--workload mixed --duration 3ms --seed 11 --fault link=leaf0-spine0,kind=loss,size=2% --host-fault host=198.18.0.12,kind=slow-responder,size=50us,onset=1ms"
	"v6|--workload write --duration 2ms --seed 12 --ipv6 --vlan 100 --snaplen 160 --fault link=leaf1-spine1,kind=loss,size=3%"
)

# analyze NAME DIR: the JSON summary without the per-capture file facts (path, bytes differ).
analyze() {
	"$ANALYZE" -q --json --window 1ms --topology "$2/links.csv" --paths "$2/paths.csv" \
		"$2/trace.pcapng" >"$2/out.json" 2>"$2/err" || { echo "analyze failed: $(head -n 1 "$2/err")"; return 1; }
	jq -S '{totals, flows, findings, roce: [.captures[] | .roce_packets, .malformed_packets]}' \
		"$2/out.json" >"$2/summary.json"
	# The session each line ends with (" via erspan2 sid 1 from 10.255.0.1") is the copy's
	# only addition: kept aside, so that the rest must be the plain trace's lines.
	"$ANALYZE" -q --dump "$2/trace.pcapng" 2>/dev/null | sed 's/ via [a-z0-9]*\( [a-z]* [0-9]*\)\? from [0-9a-f.:]*$//' >"$2/dump.txt"
	"$ANALYZE" -q --dump "$2/trace.pcapng" 2>/dev/null | grep -c ' via ' >"$2/dump.via"
	return 0
}

for inc in "${incidents[@]}"; do
	name=${inc%%|*}
	read -r -a args <<<"${inc#*|}"
	plain=$work/$name-plain
	if ! "$SYNTH" -q -o "$plain" "${args[@]}" || ! analyze "$name" "$plain"; then
		fail "encap-$name-plain" "synth or analyze failed on the plain trace"
		continue
	fi
	n_findings=$(jq '.findings | length' "$plain/out.json")
	n_roce=$(jq '.totals.packets' "$plain/out.json")
	# The comparison means something only when the plain trace has findings and packets.
	if [ "$n_findings" -gt 0 ] && [ "$n_roce" -gt 1000 ]; then pass "encap-$name-plain-has-findings"; else
		fail "encap-$name-plain-has-findings" "$n_findings findings, $n_roce packets"
	fi
	plain_ts=""
	command -v tshark >/dev/null && plain_ts=$(tshark_roce -r "$plain/trace.pcapng" -Y infiniband | wc -l)

	for encap in erspan2 erspan3 gre vxlan; do
		dir=$work/$name-$encap
		if ! "$SYNTH" -q -o "$dir" "${args[@]}" --encap "$encap"; then
			fail "encap-$name-$encap" "agentxdp-synth --encap $encap failed"
			continue
		fi
		expect_eq "encap-$name-$encap-truth" "$encap" "$(jq -r .encap "$dir/truth.json")"
		if ! analyze "$name" "$dir" >"$dir/why"; then
			fail "encap-$name-$encap" "$(cat "$dir/why")"
			continue
		fi
		if cmp -s "$plain/summary.json" "$dir/summary.json"; then
			pass "encap-$name-$encap-same-analysis"
		else
			fail "encap-$name-$encap-same-analysis" \
				"$(diff "$plain/summary.json" "$dir/summary.json" | head -n 4 | tr '\n' ' ')"
		fi
		# Every packet of the copy names its session; the plain trace's none.
		expect_eq "encap-$name-$encap-dump-session" "$(wc -l <"$dir/dump.txt") 0" \
			"$(cat "$dir/dump.via") $(cat "$plain/dump.via")"
		if [ "$encap" = erspan3 ]; then
			for d in "$plain" "$dir"; do awk '{ $2 = ""; print }' "$d/dump.txt" >"$d/dump.notime"; done
			if cmp -s "$plain/dump.notime" "$dir/dump.notime"; then pass "encap-$name-$encap-same-dump"; else
				fail "encap-$name-$encap-same-dump" "$(diff "$plain/dump.notime" "$dir/dump.notime" | head -n 2 | tr '\n' ' ')"
			fi
		elif cmp -s "$plain/dump.txt" "$dir/dump.txt"; then pass "encap-$name-$encap-same-dump"; else
			fail "encap-$name-$encap-same-dump" "$(diff "$plain/dump.txt" "$dir/dump.txt" | head -n 2 | tr '\n' ' ')"
		fi
		if [ -z "$plain_ts" ]; then
			skip "encap-$name-$encap-tshark" "tshark not installed"
		else
			expect_eq "encap-$name-$encap-tshark" "$plain_ts" \
				"$(tshark_roce -r "$dir/trace.pcapng" -Y infiniband | wc -l)"
		fi
		# ERSPAN III: the switch timestamps (1588: seconds in platform sub-header 3, ns in the
		# header) are the plain trace's times, and the collector's are not.
		if [ "$encap" = erspan3 ] && [ -n "$plain_ts" ]; then
			tshark -r "$plain/trace.pcapng" -T fields -e frame.time_epoch 2>/dev/null >"$dir/plain.t"
			tshark -r "$dir/trace.pcapng" -T fields -e frame.time_epoch -e erspan.pid3.timestamp \
				-e erspan.timestamp -e erspan.gra 2>/dev/null |
				awk -F'\t' '{ t = sprintf("%s.%09d", $2, $3); print t >"'"$dir/switch.t"'"
					if (t == $1 || $4 != 2) n++ } END { print n + 0 }' >"$dir/same"
			if cmp -s "$dir/plain.t" "$dir/switch.t" && [ "$(cat "$dir/same")" = 0 ]; then
				pass "encap-$name-erspan3-switch-time"
			else
				fail "encap-$name-erspan3-switch-time" \
					"switch times not the plain trace's, or the collector's ($(cat "$dir/same"))"
			fi
		fi
	done
done
exit 0
