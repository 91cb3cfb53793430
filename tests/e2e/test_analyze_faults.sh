#!/usr/bin/env bash
# test_analyze_faults.sh: agentxdp-analyze on bad input: truncated and corrupt traces, empty and
# foreign files, timestamps going backwards, duplicated packets, a full filesystem.
. "$(dirname "$0")/../lib.sh"
A="$BIN/agentxdp-analyze"
S="$BIN/agentxdp-synth"
T=$(tmpdir)
cleanup() {
	mountpoint -q "$T/full" 2>/dev/null && umount "$T/full"
	rm -rf "$T"
}
trap cleanup EXIT

"$S" -o "$T/s" --hosts 4 --duration 1ms --seed 5 --snaplen 128 >/dev/null 2>&1 ||
	{ fail "faults: synthesize a small trace" "agentxdp-synth failed"; exit 0; }
TR="$T/s/trace.pcapng"
total=$("$A" "$TR" --json 2>/dev/null | jq '.totals.packets')
[ -n "$total" ] && [ "$total" -gt 100 ] && pass "faults: baseline trace has $total packets" ||
	{ fail "faults: baseline" "got '$total'"; exit 0; }

# Cuts at EVERY block boundary and inside EVERY block (its length field and its trailer), on
# a 40-packet trace and on crafted files with several sections, interfaces and statistics
# blocks. python walks the blocks (either byte order) and prints, per block: offset, length,
# EPBs before it, whether an interface was described before it.
"$S" -o "$T/s40" --hosts 4 --duration 1ms --seed 5 --snaplen 128 --max-packets 40 -q ||
	fail "faults: synthesize a 40-packet trace" "agentxdp-synth failed"
SEEDS="$TOP/tests/fuzz/corpus/pcapng"
walk_blocks() {
	python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
off, epbs, idb, end = 0, 0, 0, '<'
while off + 12 <= len(data):
    if data[off:off + 4] == b'\x0a\x0d\x0d\x0a':
        end = '<' if data[off + 8:off + 12] == b'\x4d\x3c\x2b\x1a' else '>'
    btype, blen = struct.unpack_from(end + 'II', data, off)
    print(off, blen, epbs, idb)
    if btype == 1:
        idb = 1
    if btype in (3, 6):
        epbs += 1
    off += blen
print(off, 0, epbs, idb)
PY
}
# cut_case FILE OFFSET KIND WANT_PACKETS DESCRIBED: analyze the first OFFSET bytes with -q.
# KIND boundary: a valid shorter file, exit 0, no message, exactly WANT packets.
# KIND inside: exit 1, one line naming the file, results for the WANT packets before the block.
# Before any interface is described (DESCRIBED 0) there is nothing to read: one line, exit != 0.
cut_bad=0 cut_n=0
cut_case() {
	local f=$1 off=$2 kind=$3 want=$4 described=$5 rc got lines
	head -c "$off" "$f" >"$T/cut.pcapng"
	"$A" -q "$T/cut.pcapng" --json >"$T/cut.json" 2>"$T/err"
	rc=$?
	got=$(jq '.totals.packets' "$T/cut.json" 2>/dev/null)
	lines=$(wc -l <"$T/err")
	cut_n=$((cut_n + 1))
	if [ "$described" -eq 0 ] && [ "$want" -eq 0 ]; then
		[ $rc -ne 0 ] && [ "$lines" -eq 1 ] && grep -q "cut.pcapng" "$T/err" && return
	elif [ "$kind" = boundary ]; then
		[ $rc -eq 0 ] && [ "$lines" -eq 0 ] && [ "${got:-x}" = "$want" ] && return
	else
		[ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -q "cut.pcapng: truncated or corrupt" "$T/err" &&
			[ "${got:-x}" = "$want" ] && return
	fi
	cut_bad=$((cut_bad + 1))
	[ $cut_bad -le 5 ] && echo "$(basename "$f") $kind cut at $off: rc=$rc packets=${got:-none} (want $want): $(head -n 2 "$T/err" | tr '\n' ' ')"
}
for f in "$T/s40/trace.pcapng" "$SEEDS/seed-ng-two-sections" "$SEEDS/seed-ng-drops"; do
	[ -s "$f" ] || { fail "faults: cut input $(basename "$f")" "missing"; continue; }
	walk_blocks "$f" >"$T/blocks"
	while read -r off blen epbs described; do
		# Offset 0 is the empty file (tested below); a cut after the SHB alone is "no interface".
		[ "$off" -gt 0 ] && cut_case "$f" "$off" boundary "$epbs" "$described"
		[ "$blen" -gt 8 ] || continue
		cut_case "$f" $((off + 6)) inside "$epbs" "$described"
		cut_case "$f" $((off + blen - 2)) inside "$epbs" "$described"
	done <"$T/blocks"
done
[ $cut_bad -eq 0 ] && [ $cut_n -gt 150 ] &&
	pass "faults: $cut_n cuts (every block boundary, inside every block): exact packets, clear errors" ||
	fail "faults: truncated traces" "$cut_bad of $cut_n cuts wrong"

# Cut inside a packet block, with a database: exit 1, and the database holds what was read.
walk_blocks "$T/s40/trace.pcapng" | awk '$3 == 20 { print $1 + 40; exit }' >"$T/mid"
head -c "$(cat "$T/mid")" "$T/s40/trace.pcapng" >"$T/mid.pcapng"
"$A" "$T/mid.pcapng" -o "$T/mid.db" >/dev/null 2>"$T/err"
rc=$?
n=$(sqlite3 "$T/mid.db" "select coalesce(sum(packets),0) from qp" 2>/dev/null)
[ $rc -eq 1 ] && grep -q "mid.pcapng" "$T/err" && [ "${n:-x}" = 20 ] &&
	pass "faults: cut inside a block: exit 1, the database keeps the 20 packets read" ||
	fail "faults: mid-block cut with -o" "rc=$rc packets=${n:-none}: $(head -n 1 "$T/err")"

# A corrupt block length (the second EPB claims 2^31 bytes).
python3 - "$TR" "$T/corrupt.pcapng" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
off, seen = 0, 0
while off + 12 <= len(data):
    btype, blen = struct.unpack_from('<II', data, off)
    if btype == 6:
        seen += 1
        if seen == 2:
            struct.pack_into('<I', data, off + 4, 0x80000000)
            break
    off += blen
open(sys.argv[2], 'wb').write(data)
PY
"$A" "$T/corrupt.pcapng" -o "$T/corrupt.db" >/dev/null 2>"$T/err"
rc=$?
# (the default window's choice is an information line of its own before any error)
[ $rc -eq 1 ] && grep -v '^agentxdp-analyze: window ' "$T/err" | head -n 1 | grep -q "corrupt.pcapng: truncated or corrupt" &&
	[ -s "$T/corrupt.db" ] &&
	pass "faults: corrupt block length: exit 1, clear error, database of what was read" ||
	fail "faults: corrupt block length" "rc=$rc $(cat "$T/err")"

# Empty file, foreign file, missing file, directory.
: >"$T/empty.pcap"
for f in "$T/empty.pcap" /etc/hostname "$T/nope.pcap" "$T"; do
	"$A" "$f" -o "$T/x.db" >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && ! [ -e "$T/x.db" ]; then
		pass "faults: $(basename "$f"): one line, non-zero exit, no database"
	else
		fail "faults: $(basename "$f")" "rc=$rc lines=$(wc -l <"$T/err") db=$([ -e "$T/x.db" ] && echo left)"
	fi
	rm -f "$T/x.db"
done

# Every packet seen twice (a mirror that duplicates), on traces with retransmissions, NAKs,
# CNPs, ECN marks and UC/UD datagrams: every copy is counted as a duplicate, packets and bytes
# double (wherever a flow or a finding's evidence shows them), and nothing else changes: no
# other flow statistic, no finding (jq compares them all).
dup_every_packet() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
out, off = bytearray(), 0
while off + 12 <= len(data):
    btype, blen = struct.unpack_from('<II', data, off)
    block = data[off:off + blen]
    out += block
    if btype == 6:
        out += block
    off += blen
open(sys.argv[2], 'wb').write(out)
PY
}
for src in "$TR" "$TOP/samples/lossy-link/trace.pcapng" "$TOP/samples/congested-cnp/trace.pcapng"; do
	name=$(basename "$(dirname "$src")")
	dup_every_packet "$src" "$T/dup.pcapng"
	"$A" -q "$src" --json >"$T/orig.json" 2>/dev/null
	"$A" -q "$T/dup.pcapng" --json >"$T/dup.json" 2>/dev/null
	want=$(jq -S '(.totals | .duplicates = .packets | .packets *= 2 | .bytes *= 2) as $totals |
		{flows: (.flows | walk(if type == "object" then
			(if has("packets") then .packets *= 2 else . end | if has("bytes") then .bytes *= 2 else . end)
		else . end)), findings} | .totals = $totals' "$T/orig.json")
	got=$(jq -S '{flows, findings, totals}' "$T/dup.json")
	n=$(jq '.totals.packets' "$T/orig.json")
	if [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$want" = "$got" ]; then
		pass "faults: every packet twice ($name): $n duplicates, the same flows and findings"
	else
		fail "faults: every packet twice ($name)" "$(diff <(echo "$want") <(echo "$got") | head -n 6 | tr '\n' ' ')"
	fi
done

# (The findings, evidence included, are unchanged: rates count each packet once.)

# Timestamps going backwards: swap the timestamps of two EPBs; no crash, it is counted.
python3 - "$TR" "$T/back.pcapng" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
off, epb = 0, []
while off + 12 <= len(data):
    btype, blen = struct.unpack_from('<II', data, off)
    if btype == 6:
        epb.append(off)
    off += blen
a, b = epb[10], epb[50]
ta, tb = data[a + 12:a + 20], data[b + 12:b + 20]
data[a + 12:a + 20], data[b + 12:b + 20] = tb, ta
open(sys.argv[2], 'wb').write(data)
PY
"$A" "$T/back.pcapng" -o "$T/back.db" >/dev/null 2>"$T/err"
rc=$?
back=$(sqlite3 "$T/back.db" "select sum(ts_backwards) from capture" 2>/dev/null)
[ $rc -le 1 ] && [ "${back:-0}" -ge 1 ] && pass "faults: timestamps going backwards are counted ($back)" ||
	fail "faults: timestamps backwards" "rc=$rc ts_backwards=${back:-none} $(cat "$T/err")"

# The database on a full filesystem: a clear error and no half database under the name.
if need_root && mkdir -p "$T/full" && mount -t tmpfs -o size=64k tmpfs "$T/full" 2>/dev/null; then
	"$A" "$TR" -o "$T/full/out.db" >/dev/null 2>"$T/err"
	rc=$?
	left=$(ls -A "$T/full")
	[ $rc -ne 0 ] && [ "$(wc -l <"$T/err")" -le 2 ] && grep -Eqi "space|full" "$T/err" && [ -z "$left" ] &&
		pass "faults: full filesystem: clear error, nothing left behind" ||
		fail "faults: full filesystem" "rc=$rc left='$left' $(cat "$T/err")"
else
	skip_or_fail_in_ci "faults: full filesystem" "cannot mount a tmpfs (not root?)"
fi
