#!/usr/bin/env bash
# test_headline.sh: severity against healthy peers, and every kind of evidence in one
# headline (#17 item 5): a host link 40x slower and 1% lossy says so in one line.
. "$(dirname "$0")/../lib.sh"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
"$BIN/agentxdp-synth" -q -o "$T/s" --hosts 8 --duration 10ms --load 5% --seed 4 \
	--fault 'link=198.18.0.13-leaf0,kind=slow,size=40x' \
	--fault 'link=198.18.0.13-leaf0,kind=loss,size=1%' || { fail headline "synth failed"; exit 0; }
"$BIN/agentxdp-analyze" -q "$T/s/trace.pcapng" --json >"$T/out.json" || { fail headline "analyze failed"; exit 0; }
python3 - "$T/out.json" <<'PY'
import json, re, sys
f = json.load(open(sys.argv[1]))["findings"]
top = f[0] if f else {}
text = top.get("severity_text", "")
name = "headline: a slow and lossy host link in one line"
if top.get("subject") != "198.18.0.13":
    print("FAIL %s: first finding names %r" % (name, top.get("subject")))
elif not re.match(r"slow, lossy and congested: |slow and lossy: ", text):
    print("FAIL %s: %r" % (name, text))
else:
    print("PASS %s: %s %s: %s" % (name, top["kind"], top["subject"], text))
# 40x slower serialization: the hurt flows' median is many times their healthy peers'.
m = re.search(r"([0-9.]+)x healthy peers' latency", text)
name = "headline: latency against healthy peers"
if m and float(m.group(1)) >= 10:
    print("PASS %s (%sx)" % (name, m.group(1)))
else:
    print("FAIL %s: %r" % (name, text))
PY
