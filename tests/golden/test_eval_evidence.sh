#!/usr/bin/env bash
# test_eval_evidence.sh: `eval/matrix_eval.py evidence DIR` lists every finding of the JSON
# that EVAL_JSON_DIR keeps, marked as the table scores it (right, wrong, healthy), with the
# evidence figures the alert-or-notice rules read: how the rounds of docs/evaluation.md read
# their alerts. The JSON here is written by hand around the matrix's own fault placement.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || { skip eval-evidence "python3 is not installed"; exit 0; }
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/agentxdp-eval-evidence.XXXXXX)
trap 'rm -rf "$dir"' EXIT

(cd "$root" && python3 - "$dir" <<'PY'
import json, os, sys
sys.path.insert(0, "eval")
import matrix_eval as m
cell = [c for c in m.parse_matrix("eval/matrix.txt") if c["name"] == "loss1-host"][0]
link = m.place_faults(cell, 1001)[0]["subject"]
def finding(level, kind, subject, **ev):
    return {"level": level, "kind": kind, "subject_kind": "link", "subject": subject,
            "evidence": dict(signal="loss", **ev)}
with open(os.path.join(sys.argv[1], "loss1-host-1001-topo.json"), "w") as f:
    json.dump({"findings": [finding("alert", "lossy", link, load_ratio=0.9),
                            finding("notice", "congested", "leaf0-spine1", stall=2.5)]}, f)
with open(os.path.join(sys.argv[1], "healthy-base-1001-topo.json"), "w") as f:
    json.dump({"findings": [finding("alert", "slow", "leaf1-spine0", load_ratio=1.2)]}, f)
with open(os.path.join(sys.argv[1], "healthy-base-1002-topo.json"), "w") as f:
    f.write("{ not json")
with open(os.path.join(sys.argv[1], "healthy-base-1003-topo.json"), "w") as f:
    f.write("[]")
with open(os.path.join(sys.argv[1], "notes.json"), "w") as f:
    f.write("{}")
PY
) || fail "eval-evidence: JSON written" "python3 failed"

out=$(cd "$root" && python3 eval/matrix_eval.py evidence "$dir" '' load_ratio,stall)
expect_eq "eval-evidence: a line per finding and per unreadable file" 5 "$(wc -l <<<"$out")"
expect_eq "eval-evidence: the fault's link is right" \
	"right alert lossy load_ratio=0.9 stall=-" \
	"$(awk '$2 == "loss1-host" && $5 == "#1" { print $1, $6, $7, $10, $11 }' <<<"$out")"
expect_eq "eval-evidence: another link of a faulty run is wrong" "wrong notice stall=2.5" \
	"$(awk '$5 == "#2" { print $1, $6, $11 }' <<<"$out")"
expect_eq "eval-evidence: an alert of a healthy run is healthy" "healthy alert slow leaf1-spine0" \
	"$(awk '$3 == "1001" && $2 == "healthy-base" { print $1, $6, $7, $8 }' <<<"$out")"
expect_eq "eval-evidence: broken files are said, not skipped" \
	"healthy-base 1002 topo unreadable,healthy-base 1003 topo unreadable" \
	"$(grep unreadable <<<"$out" | paste -sd,)"
(cd "$root" && python3 eval/matrix_eval.py evidence "$dir/none" >/dev/null 2>&1)
expect_eq "eval-evidence: a missing directory is an error" 1 "$?"
expect_eq "eval-evidence: CELLS selects cells" 1 \
	"$(cd "$root" && python3 eval/matrix_eval.py evidence "$dir" '^healthy' | grep -c alert)"
exit 0
