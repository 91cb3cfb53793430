#!/usr/bin/env bash
# test_localize_synth.sh: each kind of localization finding on its own synthesized incident.
# The expected subject and kind come from the incident's truth.json (the fault the
# synthesizer was told to inject), not from a previous run.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip localize-synth "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
fabric=(--hosts 16 --leaves 4 --spines 2 --duration 10ms --load 5% --snaplen 128)

# verdict DIR [analyze options...]: "KIND SUBJECT ONSET_MS N" of the top finding ("none - - 0").
# jq rather than python: an interpreter start per call was most of this test's time.
verdict() {
	local dir=$1
	shift
	"$ANALYZE" -q "$dir"/trace*.pcapng --window 1ms --json "$@" >"$dir/out.json" 2>"$dir/err" || {
		echo "analyze-failed: $(head -n 1 "$dir/err")"
		return
	}
	jq -r --slurpfile t "$dir/truth.json" '(.findings // []) as $f |
		if ($f | length) == 0 then "none - - 0" else
		$f[0] as $top |
		"\($top.kind) \($top.subject | gsub(" "; "")) \(if $top.onset_ns > 0
		 then ((($top.onset_ns - $t[0].start_ns) / 1e6) | round) else -1 end) \($f | length)"
		end' "$dir/out.json"
}
# truth DIR: "KIND LINK ONSET_MS" of the injected link fault, kind in finding terms.
truth() {
	jq -r '.start_ns as $s | .faults[0] |
		"\({"slow": "slow", "loss": "lossy", "ecn": "congested"}[.kind] // .kind) \(.link) \(if .onset_ns then (((.onset_ns - $s) / 1e6) | round) else 0 end)"' "$1/truth.json"
}

run_case() { # NAME SEED FAULT [analyze options...]
	local name=$1 seed=$2 fault=$3
	shift 3
	if ! "$SYNTH" -q -o "$work/$name" "${fabric[@]}" --seed "$seed" --fault "$fault" 2>"$work/$name.err"; then
		fail "localize-$name" "synth: $(head -n 1 "$work/$name.err")"
		return 1
	fi
}

# Healthy fabric: no finding, with and without the topology.
if "$SYNTH" -q -o "$work/healthy" "${fabric[@]}" --seed 21; then
	read -r kind subject onset n <<<"$(verdict "$work/healthy" --topology "$work/healthy/links.csv" --paths "$work/healthy/paths.csv")"
	expect_eq localize-healthy-topology "none" "$kind"
	read -r kind subject onset n <<<"$(verdict "$work/healthy")"
	expect_eq localize-healthy-no-topology "none" "$kind"
else
	fail localize-healthy "synth failed"
fi

# One link fault per kind, analyzed with links.csv and paths.csv.
for c in "slow 22 link=leaf1-spine0,kind=slow,size=5x,onset=3ms" \
	"lossy 23 link=leaf2-spine1,kind=loss,size=1%,onset=2ms" \
	"congested 24 link=198.18.0.14-leaf1,kind=ecn,size=20%,onset=4ms"; do
	read -r name seed fault <<<"$c"
	run_case "$name" "$seed" "$fault" || continue
	d=$work/$name
	read -r want_kind want_link want_onset <<<"$(truth "$d")"
	read -r kind subject onset n <<<"$(verdict "$d" --topology "$d/links.csv" --paths "$d/paths.csv")"
	expect_eq "localize-$name-subject" "$want_link" "$subject"
	expect_eq "localize-$name-kind" "$want_kind" "$kind"
	# Onset within one 1 ms window of the injected one.
	if [ "$onset" != - ] && [ $((onset - want_onset)) -le 1 ] && [ $((want_onset - onset)) -le 1 ]; then
		pass "localize-$name-onset"
	else
		fail "localize-$name-onset" "want ${want_onset} ms, got ${onset} ms"
	fi
done

# A host's access link without any topology: the finding names the host.
if run_case hostlink 25 "link=198.18.0.21-leaf2,kind=slow,size=5x,onset=2ms"; then
	read -r want_kind want_link want_onset <<<"$(truth "$work/hostlink")"
	read -r kind subject onset n <<<"$(verdict "$work/hostlink")"
	expect_eq localize-hostlink-no-topology "${want_link%-leaf*}" "$subject"
fi

# A lossy spine-link direction that only one host pair's QPs cross, analyzed without
# topology: the pair's link in the fabric is blamed, as the pair's hosts' other flows are
# fine: a one-pair lossy fabric finding whose connections are that pair's (round 34; a
# host pair names neither host's link). The pair is read from truth.json (the QPs whose
# data path crosses leaf0 -> spine0).
if "$SYNTH" -q -o "$work/path" --hosts 16 --leaves 4 --spines 2 --peers 2 --qps-per-pair 1 \
	--duration 10ms --load 10% --snaplen 128 --seed 44 \
	--fault 'link=leaf0-spine0,dir=leaf0>spine0,kind=loss,size=1%,onset=2ms' 2>"$work/path.err"; then
	pairs=$(jq -r '[.qps[] | . as $q | .path as $p | range(0; ($p | length) - 1) as $i |
		select($p[$i] == "leaf0-spine0" and ($p[$i + 1] | test("spine0"))) |
		[$q.requester, $q.responder] | sort | "\(.[0])->\(.[1])"] | unique | join(" ")' "$work/path/truth.json")
	read -r kind subject onset n <<<"$(verdict "$work/path")"
	if [ "$(wc -w <<<"$pairs")" -ne 1 ]; then
		fail localize-path-no-topology "seed 44 no longer puts one pair on leaf0>spine0: $pairs"
	else
		expect_eq localize-path-no-topology "lossy fabric(1hostpair)" "$kind $subject"
		got=$(jq -r '[.findings[0].evidence.flows[] | [.src, .dst] | sort | "\(.[0])->\(.[1])"] |
			unique | join(" ")' "$work/path/out.json")
		expect_eq localize-path-no-topology-pair "$pairs" "$got"
	fi
else
	fail localize-path-no-topology "synth: $(head -n 1 "$work/path.err")"
fi

# Direction from ingress-only captures (XDP on each host; each packet stamped where it
# arrives): a host's egress delayed by 4 us. The ACK latency then holds only the ACKs'
# way back, so the connections towards the host are the ones that slow down; the finding
# must name the host's egress ("H -> fabric"), not its ingress (issue #5).
if "$SYNTH" -q -o "$work/ingress" "${fabric[@]}" --load 10% --seed 7 --vantage each-host \
	--fault 'link=198.18.0.14-leaf1,dir=198.18.0.14>leaf1,kind=slow,size=4us,onset=3ms' 2>"$work/ingress.err" &&
	python3 "$TOP/eval/pcapng_inbound.py" "$work"/ingress/trace-*.pcapng 2>>"$work/ingress.err"; then
	d=$work/ingress
	read -r from to <<<"$(jq -r '.faults[0] | "\(.from) \(.to)"' "$d/truth.json")"
	mkdir -p "$d/in" && mv "$d"/trace-*.in.pcapng "$d/in/"
	"$ANALYZE" -q "$d"/in/*.pcapng --window 1ms --json >"$d/out.json" 2>"$d/err"
	got=$(jq -r '.findings[0] | "\(.kind) \(.subject) \(.direction)"' "$d/out.json" 2>/dev/null)
	expect_eq localize-ingress-direction-no-topology "slow $from $from -> fabric" "$got"
	"$ANALYZE" -q "$d"/in/*.pcapng --window 1ms --topology "$d/links.csv" --paths "$d/paths.csv" \
		--json >"$d/out-topo.json" 2>"$d/err"
	got=$(jq -r '.findings[0] | "\(.kind) \(.subject) \(.direction)"' "$d/out-topo.json" 2>/dev/null)
	expect_eq localize-ingress-direction-topology "slow $from-$to $from -> $to" "$got"
else
	fail localize-ingress-direction "synth or pcapng_inbound.py: $(head -n 1 "$work/ingress.err")"
fi

# A slow spine cable analyzed with links.csv but no paths.csv (issue #17, item 3): every
# flow of leaf0 to another leaf is spread over both spine cables of leaf0, which fit the
# slow flows exactly as well. The finding names the set (sorted, " | "), not one of them
# by a coin flip, and says what would split them. The set: the leaf's spine cables.
if run_case tie 31 "link=leaf0-spine1,kind=slow,size=20x,onset=3ms"; then
	d=$work/tie
	leaf=$(jq -r '.faults[0].link | split("-")[0]' "$d/truth.json")
	want=$(awk -F, -v l="$leaf" 'NR > 1 && $2 == l && $3 ~ /^spine/ { print $1 }' "$d/links.csv" |
		sort | paste -sd '|' | sed 's/|/ | /g')
	"$ANALYZE" -q "$d/trace.pcapng" --topology "$d/links.csv" --json >"$d/out.json" 2>"$d/err"
	got=$(jq -r '.findings[0] | "\(.subject_kind):\(.subject)"' "$d/out.json" 2>/dev/null)
	expect_eq localize-tie-set-no-paths "set:$want" "$got"
	if jq -e '.findings[0] | (.severity_text | test("--paths")) and
		(.evidence.subjects | length == 2)' "$d/out.json" >/dev/null 2>&1; then
		pass localize-tie-set-says-split
	else
		fail localize-tie-set-says-split "$(jq -c '.findings[0] | [.severity_text, .evidence.subjects]' "$d/out.json" 2>&1)"
	fi
fi

# The same slow spine cable (+19 us: 20x its 1 us) with no topology at all (issue #17,
# item 4): the hurt flows share no host, so no host subject explains them. The first
# finding is a `fabric` alert whose host pairs all cross the faulty cable (truth.json's
# QP paths), at least three of them, and whose text says a topology would name the link.
if run_case fabric 31 "link=leaf0-spine1,kind=slow,size=19us,onset=3ms"; then
	d=$work/fabric
	"$ANALYZE" -q "$d/trace.pcapng" --json >"$d/out.json" 2>"$d/err"
	got=$(jq -r '.findings[0] | "\(.subject_kind) \(.level)"' "$d/out.json" 2>/dev/null)
	expect_eq localize-fabric-no-topology "fabric alert" "$got"
	bad=$(jq -r --slurpfile t "$d/truth.json" '($t[0].faults[0].link) as $l |
		[$t[0].qps[] | select((.path + .reverse_path) | index($l)) |
		 "\(.requester) -> \(.responder)"] as $crossing |
		.findings[0].evidence.host_pairs // [] |
		if length < 3 then "only \(length) host pairs" else
		map(select(. as $p | $crossing | index($p) | not)) | join(", ") end' "$d/out.json")
	expect_eq localize-fabric-host-pairs-cross-the-link "" "$bad"
	if jq -e '.findings[0].severity_text | test("topology")' "$d/out.json" >/dev/null 2>&1; then
		pass localize-fabric-says-topology
	else
		fail localize-fabric-says-topology "$(jq -r '.findings[0].severity_text' "$d/out.json" 2>&1)"
	fi
fi

# RNR NAKs (the committed sample, one trace per host): a host finding on the responder.
rnr=$TOP/samples/rnr-each-host
if [ -f "$rnr/truth.json" ]; then
	want=$(jq -r '.host_faults[0].host' "$rnr/truth.json")
	mkdir -p "$work/rnr" && cp "$rnr"/* "$work/rnr/"
	read -r kind subject onset n <<<"$(verdict "$work/rnr" --topology "$rnr/links.csv" --paths "$rnr/paths.csv")"
	expect_eq localize-rnr-host "host $want" "$kind $subject"
else
	skip localize-rnr-host "samples/rnr-each-host is not there"
fi

# A bad links.csv: exit status 1, one line naming the file and line.
printf 'link,a,b\nl1,h1\n' >"$work/bad.csv"
if [ -d "$work/slow" ]; then
	"$ANALYZE" -q "$work/slow/trace.pcapng" --topology "$work/bad.csv" >/dev/null 2>"$work/bad.err"
	rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l <"$work/bad.err")" -eq 1 ] && grep -q "bad.csv:2: 2 fields" "$work/bad.err"; then
		pass localize-bad-topology-error
	else
		fail localize-bad-topology-error "rc $rc: $(head -n 2 "$work/bad.err" | tr '\n' ' ')"
	fi
fi
exit 0
