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

# Block boundaries of the pcapng file, and how many EPBs precede each (python walks the blocks).
python3 - "$TR" >"$T/blocks" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
off, epbs = 0, 0
while off + 12 <= len(data):
    btype, blen = struct.unpack_from('<II', data, off)
    print(off, epbs, btype)
    if btype == 6:
        epbs += 1
    off += blen
print(off, epbs, 0)
PY
nb=$(wc -l <"$T/blocks")

# At every block boundary (sampled to at most 40 places): a valid shorter file, exact counts.
bad=0 checked=0
step=$(( nb > 40 ? nb / 40 : 1 ))
while read -r off epbs btype; do
	checked=$((checked + 1))
	[ $((checked % step)) -eq 0 ] || [ "$off" -le 200 ] || continue
	head -c "$off" "$TR" >"$T/cut.pcapng"
	"$A" "$T/cut.pcapng" --json >"$T/cut.json" 2>"$T/err"
	rc=$?
	got=$(jq '.totals.packets' "$T/cut.json" 2>/dev/null)
	if [ "$epbs" -eq 0 ] && [ "$btype" != 6 ]; then
		# no interface described yet: libpcap cannot read it; a one-line error
		[ "$rc" -ne 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] || { bad=$((bad + 1)); echo "off=$off rc=$rc $(cat "$T/err")"; }
	elif [ "${got:-x}" != "$epbs" ]; then
		# a clean cut between blocks may still be reported: then every packet before it counts
		bad=$((bad + 1))
		echo "boundary $off: expected $epbs packets, got '${got}' rc=$rc $(head -c 200 "$T/err")"
	fi
done <"$T/blocks"
[ $bad -eq 0 ] && pass "faults: cut at block boundaries gives exactly the packets before the cut" ||
	fail "faults: block boundaries" "$bad cuts wrong"

# In the middle of blocks: exit 1, one clear line naming the file, results for what was read.
bad=0
while read -r off epbs btype; do
	[ "$btype" = 6 ] || continue
	mid=$((off + 20))
	head -c "$mid" "$TR" >"$T/mid.pcapng"
	rm -f "$T/mid.db"
	"$A" "$T/mid.pcapng" -o "$T/mid.db" >/dev/null 2>"$T/err"
	rc=$?
	n=$(sqlite3 "$T/mid.db" "select coalesce(sum(packets),0) from qp" 2>/dev/null)
	if [ $rc -ne 1 ] || ! grep -q "mid.pcapng" "$T/err" || [ "${n:-x}" != "$epbs" ]; then
		bad=$((bad + 1))
		[ $bad -le 3 ] && echo "mid-block cut at $mid: rc=$rc packets=${n:-none} (want $epbs): $(cat "$T/err")"
	fi
	[ "$epbs" -gt 60 ] && break
done <"$T/blocks"
[ $bad -eq 0 ] && pass "faults: cut inside a block: exit 1, says where, keeps what was read" ||
	fail "faults: mid-block cuts" "$bad cuts wrong"

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
[ $rc -eq 1 ] && head -n 1 "$T/err" | grep -q "corrupt.pcapng: truncated or corrupt" && [ -s "$T/corrupt.db" ] &&
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

# Every packet seen twice (a mirror that duplicates): the same flows and the same packets
# once more, but no retransmission invented.
python3 - "$TR" "$T/dup.pcapng" <<'PY'
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
"$A" "$TR" --json >"$T/orig.json" 2>/dev/null
"$A" "$T/dup.pcapng" --json >"$T/dup.json" 2>/dev/null
o_retx=$(jq '.totals.retransmitted_packets' "$T/orig.json")
d_retx=$(jq '.totals.retransmitted_packets' "$T/dup.json")
o_flows=$(jq '.totals.flows' "$T/orig.json")
d_flows=$(jq '.totals.flows' "$T/dup.json")
[ "$o_retx" = "$d_retx" ] && [ "$o_flows" = "$d_flows" ] && [ -n "$o_flows" ] &&
	pass "faults: duplicated packets invent no retransmission ($d_retx), same $d_flows flows" ||
	fail "faults: duplicates" "retx $o_retx -> $d_retx, flows $o_flows -> $d_flows"

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
