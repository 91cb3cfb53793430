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

# Terminal escapes in names (issue #22 item 10): a links.csv link name holding ESC[31m, a C1
# CSI (U+009B), a right-to-left override (U+202E) and a lone 0x9b byte, and trace files named
# with ESC sequences. The analyzer's summary and the report's text and markdown must show them
# as escapes (\x1b, \u009b, \u202e, \x9b), never as the raw bytes a terminal would obey.
ESC_DIR=$work/esc
if "$BIN/agentxdp-synth" -q -o "$ESC_DIR" --hosts 8 --duration 10ms --seed 7 \
	--fault 'link=leaf0-spine1,kind=slow,size=20us,onset=3ms' 2>"$work/err"; then
	python3 - "$ESC_DIR" <<'PY'
import os, shutil, struct, sys
d = sys.argv[1].encode()
bad = b"\x1b[31mevil\xc2\x9bspine\xe2\x80\xaeraw\x9bx"
for f in (b"links.csv", b"paths.csv"):
    text = open(d + b"/" + f, "rb").read().replace(b"leaf0-spine1", bad)
    open(d + b"/esc-" + f, "wb").write(text)
shutil.move(d + b"/trace.pcapng", d + b"/\x1b]0;pwned\x07trace.pcapng")
# One frame to RoCE's UDP port with a cut BTH: a malformed packet, so the summary names the file.
frame = bytes.fromhex("0200000000020200000000010800450000200000000040110000c612000ac612000bc35012b7000c000000010203")
with open(d + b"/\x1b[31mbad.pcap", "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    f.write(struct.pack("<IIII", 1767225600, 0, len(frame), len(frame)) + frame)
PY
	esc_args=("$ESC_DIR"/*trace.pcapng "$ESC_DIR"/*bad.pcap --topology "$ESC_DIR/esc-links.csv"
		--paths "$ESC_DIR/esc-paths.csv" -q)
	"$ANALYZE" "${esc_args[@]}" >"$work/esc-summary.txt" 2>"$work/err"
	rc_summary=$?
	"$ANALYZE" "${esc_args[@]}" -o "$work/esc.db" 2>>"$work/err"
	rc_db=$?
	"$BIN/agentxdp-report" "$work/esc.db" --format text >"$work/esc-report.txt" 2>>"$work/err"
	rc_text=$?
	"$BIN/agentxdp-report" "$work/esc.db" --format markdown >"$work/esc-report.md" 2>>"$work/err"
	rc_md=$?
	for out in summary.txt report.txt report.md; do
		name=hostile-terminal-escapes-${out%.*}-${out#*.}
		msg=$(python3 - "$work/esc-$out" <<'PY'
import re, sys
path = sys.argv[1]
raw = open(path, "rb").read()
bad = [n for n, b in (("ESC", b"\x1b"), ("BEL", b"\x07"), ("0x9b (C1 CSI or lone byte)", b"\x9b"),
                      ("U+202E", b"\xe2\x80\xae")) if b in raw]
text = raw.decode("utf-8", "replace")
if path.endswith(".md"):
    text = re.sub(r"\\(.)", r"\1", text)  # undo the markdown escaping, which runs after
want = [r"\x1b[31mevil\u009bspine\u202eraw\x9bx", "leaf1-spine1",
        r"\x1b]0;pwned\x07trace.pcapng" if "report" in path else r"\x1b[31mbad.pcap"]
missing = [w for w in want if w not in text]
print("raw " + ", ".join(bad) if bad else "missing " + ", ".join(missing) if missing else "")
PY
)
		if [ $rc_summary -eq 0 ] && [ $rc_db -eq 0 ] && [ $rc_text -eq 0 ] && [ $rc_md -eq 0 ] && [ -z "$msg" ]; then
			pass "$name"
		else
			fail "$name" "exits $rc_summary $rc_db $rc_text $rc_md; $msg: $(head -n 1 "$work/err" | cat -v)"
		fi
	done
	# What -o prints on stderr (the count, the alerts, the report command, file warnings).
	"$ANALYZE" "${esc_args[@]:0:${#esc_args[@]}-1}" -o "$work/esc2.db" 2>"$work/esc-stderr.txt" >/dev/null
	raw=$(python3 -c '
import sys
raw = open(sys.argv[1], "rb").read()
print(" ".join(n for n, b in (("ESC", b"\x1b"), ("BEL", b"\x07"), ("0x9b", b"\x9b"), ("U+202E", b"\xe2\x80\xae")) if b in raw))' "$work/esc-stderr.txt")
	if [ -z "$raw" ] && grep -q 'alert: .*\\x1b\[31mevil' "$work/esc-stderr.txt"; then
		pass hostile-terminal-escapes-analyze-stderr
	else
		fail hostile-terminal-escapes-analyze-stderr "raw: ${raw:-none}; $(grep -c alert "$work/esc-stderr.txt") alert lines"
	fi
else
	fail hostile-terminal-escapes "agentxdp-synth failed: $(tail -n 1 "$work/err")"
fi

[ $T_FAILED -eq 0 ]
