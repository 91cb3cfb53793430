#!/usr/bin/env bash
# test_ib_synth.sh: a synthesized native InfiniBand incident (agentxdp-synth --link ib: LRH +
# BTH frames, hosts LID 1, 2, ...) is analyzed with ground truth: every flow's counters equal
# truth.json, flows are keyed by LIDs, and localization names the same subject and kind as for
# its RoCE v2 twin (same seed, same fault; host 198.18.0.N is LID N-9); the file's link type is
# LINKTYPE_INFINIBAND. The expectation is the
# twin's verdict and the synthesizer's truth, never a stored answer.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
DIFF=$TOP/tests/golden/analyze_truth_diff.sh
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip ib-synth "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
for tool in jq sqlite3; do
	command -v $tool >/dev/null || { skip ib-synth "$tool not installed"; exit 0; }
done
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# name|synth options; the host fault names its host as the link type does (@HOST@).
incidents=(
	"lossy|--workload mixed --duration 3ms --seed 11 --fault link=leaf0-spine0,kind=loss,size=2%"
	"rnr|--workload rpc --duration 3ms --seed 12 --host-fault host=@HOST@,kind=rnr,onset=1ms"
)

# verdicts DIR: "subject_kind<TAB>subject<TAB>kind" of every finding, in order.
verdicts() {
	jq -r '.findings[] | [.subject_kind, .subject, .kind] | @tsv' "$1/out.json"
}

for inc in "${incidents[@]}"; do
	name=${inc%%|*}
	for link in eth ib; do
		host=198.18.0.12
		[ $link = ib ] && host=LID:3
		dir=$work/$name-$link
		opts=${inc#*|}
		read -r -a args <<<"${opts//@HOST@/$host}"
		synth_analyze "ib-synth-$name-$link" "$dir" "$dir/out.json" --link $link "${args[@]}" -- \
			--window 1ms --topology "$dir/links.csv" --paths "$dir/paths.csv" -o "$dir/a.db" ||
			continue 2
	done
	eth=$work/$name-eth ib=$work/$name-ib

	# The file is native InfiniBand (the first IDB's link type, after the SHB), not Ethernet.
	expect_eq "ib-synth-$name-linktype" 247 "$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(4096)
shb = struct.unpack_from("<I", b, 4)[0]
print(struct.unpack_from("<H", b, shb + 8)[0])' "$ib/trace.pcapng")"
	# Per-flow counters equal to the truth, flows keyed by LIDs.
	if out=$(bash "$DIFF" "$ib" "$ib/a.db"); then
		pass "ib-synth-$name-truth: $(echo "$out" | tail -n 1)"
	else
		fail "ib-synth-$name-truth" "$(echo "$out" | head -n 3 | tr '\n' ' ')"
	fi
	n=$(jq '.flows | length' "$ib/out.json")
	bad=$(jq '[.flows[] | select((.src | test("^LID [0-9]+$") | not) or (.dst | test("^LID [0-9]+$") | not))] | length' "$ib/out.json")
	if [ "$n" -gt 10 ] && [ "$bad" -eq 0 ]; then pass "ib-synth-$name-lid-keys: $n flows"; else
		fail "ib-synth-$name-lid-keys" "$n flows, $bad not keyed by LIDs"
	fi
	# Localization: the twin's verdict (its first finding) with its hosts renamed to LIDs.
	# Later findings may differ: IB routes a host pair on one path, RoCE per QP (ECMP).
	verdicts "$eth" | head -n 1 | awk '{ while (match($0, /198\.18\.0\.[0-9]+/)) {
		n = substr($0, RSTART + 9, RLENGTH - 9) - 9
		$0 = substr($0, 1, RSTART - 1) "LID " n substr($0, RSTART + RLENGTH) } print }' >"$work/want"
	verdicts "$ib" | head -n 1 >"$work/got"
	if [ ! -s "$work/want" ]; then
		fail "ib-synth-$name-verdict" "the RoCE twin has no finding to compare with"
	elif cmp -s "$work/want" "$work/got"; then
		pass "ib-synth-$name-verdict: $(head -n 1 "$work/got" | tr '\t' ' ')"
	else
		fail "ib-synth-$name-verdict" "RoCE twin: $(tr '\t\n' '  ' <"$work/want"); IB: $(tr '\t\n' '  ' <"$work/got")"
	fi
done
[ "$T_FAILED" -eq 0 ]
