#!/usr/bin/env bash
# test_hostile_inputs.sh: issue #22, the input side. Each check is named after an attack
# from the issue: what agentxdp-analyze must do with an input crafted to mislead it.
. "$(dirname "$0")/../lib.sh"
ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$ANALYZE" ]; then
	skip hostile-inputs "bin/agentxdp-analyze not built"
	exit 0
fi
for tool in python3 sqlite3 capinfos; do
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

# mixed FILE [LATE]: samples/healthy's frames in a pcapng with two interfaces, Ethernet
# (LINKTYPE 1) and Linux cooked (LINKTYPE_LINUX_SLL 113): every second frame is rewritten with
# a cooked header on the second interface (as mergecap writes it). LATE: the second interface
# is described only after the first 10 frames. Big-endian sections, SPB and PB are in
# tests/unit/test_trace_reader.c.
mixed() {
	python3 - "$TOP/samples/healthy/trace.pcapng" "$@" <<'PY'
import struct, sys
src, dst, late = sys.argv[1], sys.argv[2], len(sys.argv) > 3
b = open(src, "rb").read()
off, frames = 0, []
while off < len(b):
    t, n = struct.unpack_from("<II", b, off)
    if t == 6:
        _, hi, lo, cap, orig = struct.unpack_from("<IIIII", b, off + 8)
        frames.append((hi, lo, b[off + 28:off + 28 + cap], orig))
    off += n
def block(t, body):
    body += b"\0" * (-len(body) % 4)
    return struct.pack("<II", t, len(body) + 12) + body + struct.pack("<I", len(body) + 12)
ns = struct.pack("<HHB3x", 9, 1, 9)  # if_tsresol 10^-9
sll_idb = block(1, struct.pack("<HHI", 113, 0, 262144) + ns)
out = block(0x0a0d0d0a, struct.pack("<IHHq", 0x1a2b3c4d, 1, 0, -1))
out += block(1, struct.pack("<HHI", 1, 0, 262144) + ns) + (b"" if late else sll_idb)
for i, (hi, lo, data, orig) in enumerate(frames):
    if late and i == 10:
        out += sll_idb
    sll = i % 2 == 1 and (not late or i > 10)
    if sll:  # packet type, ARPHRD_ETHER, address length, address, protocol
        data = struct.pack(">HHH8sH", 0, 1, 6, data[6:12] + b"\0\0", struct.unpack(">H", data[12:14])[0]) + data[14:]
        orig += 2
    out += block(6, struct.pack("<IIIII", 1 if sll else 0, hi, lo, len(data), orig) + data)
open(dst, "wb").write(out)
PY
}

# Two link types in one pcapng: libpcap refuses it ("truncated or corrupt after 0 frames");
# every frame must be read, each decoded as its interface's link type.
plain_roce=$("$ANALYZE" "$TOP/samples/healthy/trace.pcapng" --json 2>/dev/null |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["captures"][0]["roce_packets"])')
for variant in "" late; do
	name=hostile-mixed-link-types${variant:+-$variant-interface}
	mixed "$work/mixed.pcapng" $variant
	want=$(capinfos -c -M "$work/mixed.pcapng" 2>/dev/null | awk '/Number of packets/ {print $NF}')
	"$ANALYZE" "$work/mixed.pcapng" --json >"$work/out" 2>"$work/err"
	rc=$?
	got=$(python3 -c 'import json,sys; c = json.load(open(sys.argv[1]))["captures"][0]
print(c["frames"], c["roce_packets"], c["malformed_packets"], c["truncated"])' "$work/out" 2>/dev/null)
	if [ $rc -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want $plain_roce 0 False" ]; then
		pass "$name ($want frames, $plain_roce RoCE)"
	else
		fail "$name" "exit $rc, frames/roce/malformed/truncated '$got', want '$want $plain_roce 0 False': $(head -n 2 "$work/err" | tr '\n' ' ')"
	fi
done
# The same on standard input: a file can be read again, a pipe cannot (one clear line, exit 1).
"$ANALYZE" - --json <"$work/mixed.pcapng" >"$work/out" 2>"$work/err"
rc=$?
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["captures"][0]["roce_packets"])' "$work/out" 2>/dev/null)
expect_eq hostile-mixed-link-types-stdin-file "0 $plain_roce" "$rc $got"
cat "$work/mixed.pcapng" | "$ANALYZE" - >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "different link types.*cannot be read twice" "$work/err" &&
	[ "$(grep -c 'different link types' "$work/err")" -eq 1 ]; then
	pass hostile-mixed-link-types-pipe-clear-error
else
	fail hostile-mixed-link-types-pipe-clear-error "exit $rc: $(head -n 3 "$work/err" | tr '\n' ' ')"
fi

[ $T_FAILED -eq 0 ]
