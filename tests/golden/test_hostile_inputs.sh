#!/usr/bin/env bash
# test_hostile_inputs.sh: issue #22, the input side. Each check is named after an attack
# from the issue: what agentxdp-analyze must do with an input crafted to mislead it.
. "$(dirname "$0")/../lib.sh"
ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$ANALYZE" ]; then
	skip hostile-inputs "bin/agentxdp-analyze not built"
	exit 0
fi
for tool in python3 sqlite3; do
	command -v $tool >/dev/null || { skip hostile-inputs "$tool not installed"; exit 0; }
done
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
SAMPLE=$TOP/samples/lossy-link

# -o '': a usage error (exit 2, one line naming the option), not a failed rename (exit 1).
"$ANALYZE" "$SAMPLE/trace.pcapng" -o '' >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q -- "--output" "$work/err" &&
	[ ! -s "$work/out" ]; then
	pass hostile-empty-output-name
else
	fail hostile-empty-output-name "exit $rc: $(head -n 2 "$work/err" | tr '\n' ' ')"
fi

# pcap FILE LINKTYPE COUNT [FRAME_HEX] [SECONDS]: a classic pcap (microseconds) of COUNT copies.
pcap() {
	python3 - "$@" <<'PY'
import struct, sys
path, linktype, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
frame = bytes.fromhex(sys.argv[4]) if len(sys.argv) > 4 else bytes(range(60))
sec = int(sys.argv[5]) if len(sys.argv) > 5 else 1700000000
with open(path, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, linktype))
    for i in range(count):
        f.write(struct.pack("<IIII", sec, i, len(frame), len(frame)) + frame)
PY
}

# An unknown link type: not "17 malformed packets", exit 0, but one line naming it, exit 1.
pcap "$work/wifi.pcap" 105 17
"$ANALYZE" "$work/wifi.pcap" --json >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "link type 105 (IEEE802_11)" "$work/err" &&
	grep -q "17 of 17 frames" "$work/err"; then
	pass hostile-unknown-link-type
else
	fail hostile-unknown-link-type "exit $rc: $(head -n 2 "$work/err" | tr '\n' ' ')"
fi

# Ethernet frames that are not RoCE (ARP here): nothing to analyze is not an all-clear.
arp=ffffffffffff020000000001080600010800060400010200000000010a0000010000000000000a000002
pcap "$work/arp.pcap" 1 5 "$arp"
"$ANALYZE" "$work/arp.pcap" >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$work/err")" -eq 1 ] &&
	grep -q "no RoCE or InfiniBand packet in 5 frames (5 other traffic" "$work/err"; then
	pass hostile-no-roce-at-all
else
	fail hostile-no-roce-at-all "exit $rc: $(head -n 2 "$work/err" | tr '\n' ' ')"
fi

# Timestamps past 2^31 s (2038): were 1.6e19 ns in JSON and negative in the database.
pcap "$work/y2038.pcap" 1 3 "$arp" 3000000000
"$ANALYZE" "$work/y2038.pcap" --json -o "$work/y2038.db" >"$work/out" 2>"$work/err"
json_ns=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["captures"][0]["first_ns"])' \
	"$work/out" 2>/dev/null)
db_ns=$(sqlite3 "$work/y2038.db" "SELECT first_ns FROM capture" 2>/dev/null)
if [ "$json_ns" = 3000000000000000000 ] && [ "$db_ns" = 3000000000000000000 ]; then
	pass hostile-timestamp-past-2038
else
	fail hostile-timestamp-past-2038 "JSON '$json_ns', database '$db_ns', want 3000000000000000000"
fi

[ $T_FAILED -eq 0 ]
