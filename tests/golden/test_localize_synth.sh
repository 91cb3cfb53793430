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
verdict() {
	local dir=$1
	shift
	"$ANALYZE" -q "$dir"/trace*.pcapng --window 1ms --json "$@" >"$dir/out.json" 2>"$dir/err" || {
		echo "analyze-failed: $(head -n 1 "$dir/err")"
		return
	}
	python3 - "$dir/out.json" "$dir/truth.json" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
start = json.load(open(sys.argv[2]))["start_ns"]
f = out.get("findings") or []
if not f:
    print("none - - 0")
else:
    onset = (f[0]["onset_ns"] - start) / 1e6 if f[0]["onset_ns"] else -1
    print(f[0]["kind"], f[0]["subject"].replace(" ", ""), "%.0f" % onset, len(f))
PY
}
# truth DIR: "KIND LINK ONSET_MS" of the injected link fault, kind in finding terms.
truth() {
	python3 - "$1/truth.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
names = {"slow": "slow", "loss": "lossy", "ecn": "congested"}
f = t["faults"][0]
onset = (f["onset_ns"] - t["start_ns"]) / 1e6 if f.get("onset_ns") else 0
print(names.get(f["kind"], f["kind"]), f["link"], "%.0f" % onset)
PY
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

# RNR NAKs (the committed sample, one trace per host): a host finding on the responder.
rnr=$TOP/samples/rnr-each-host
if [ -f "$rnr/truth.json" ]; then
	want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["host_faults"][0]["host"])' "$rnr/truth.json")
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
