#!/usr/bin/env bash
# test_finding_roundtrip.sh: every field of every finding reads back from the database as
# --json printed it (a column bound to the wrong parameter once put onset_ns in confidence).
. "$(dirname "$0")/../lib.sh"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
"$BIN/agentxdp-synth" -q -o "$T/s" --hosts 8 --duration 10ms --seed 7 \
	--fault 'link=leaf0-spine1,kind=slow,size=20us,onset=3ms' \
	--fault 'link=198.18.0.12-leaf0,kind=ecn,size=2%' || { fail finding-roundtrip "synth failed"; exit 0; }
A=("$BIN/agentxdp-analyze" "$T/s/trace.pcapng" --topology "$T/s/links.csv" --paths "$T/s/paths.csv" -q)
"${A[@]}" --json >"$T/out.json" && "${A[@]}" -o "$T/out.db" || { fail finding-roundtrip "analyze failed"; exit 0; }
python3 - "$T/out.json" "$T/out.db" <<'PY'
import json, sqlite3, sys
findings = json.load(open(sys.argv[1]))["findings"]
db = sqlite3.connect(sys.argv[2])
db.row_factory = sqlite3.Row
rows = [dict(r) for r in db.execute("SELECT * FROM finding ORDER BY rank")]
if not findings:
    print("FAIL finding-roundtrip: the incident gave no finding to compare")
    sys.exit(0)
bad = []
if len(rows) != len(findings):
    bad.append("%d rows, %d findings" % (len(rows), len(findings)))
for f, r in zip(findings, rows):
    for k in ("rank", "level", "kind", "subject_kind", "subject", "direction", "severity_text",
              "flows_hurt", "onset_ns"):
        if f[k] != r[k]:
            bad.append("rank %s %s: json %r, db %r" % (f["rank"], k, f[k], r[k]))
    for k in ("severity", "confidence"):
        if abs(f[k] - r[k]) > 1e-3 * max(1, abs(f[k])):
            bad.append("rank %s %s: json %r, db %r" % (f["rank"], k, f[k], r[k]))
    if json.loads(r["evidence"]) != f["evidence"]:
        bad.append("rank %s evidence differs" % f["rank"])
levels = sorted(set(r["level"] for r in rows))
print(("FAIL finding-roundtrip: " + "; ".join(bad[:4])) if bad else
      "PASS finding-roundtrip: %d findings (%s) identical in --json and the database" % (len(rows), ",".join(levels)))
PY
