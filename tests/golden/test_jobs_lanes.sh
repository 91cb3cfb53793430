#!/usr/bin/env bash
# test_jobs_lanes.sh: issue #20 item 3. With -j N on files each of N threads reads every
# frame, and a plain RoCE v2 frame (Ethernet, IPv4 or IPv6, UDP 4791) of another thread's
# shard is skipped undecoded, taken for a RoCE packet at its frame's time. Here some such
# frames are malformed (UDP length past the packet) and stamped earlier than the frame
# before them, so that taking them for RoCE packets would count timestamps going back that
# -j 1 does not see; others only go back in time. -j 2 and -j 4 must give -j 1's --json
# (totals.ts_backwards, the malformed counts) and database dump byte for byte, over IPv4
# and IPv6 (VLAN) traces, and -c cutting the run between them.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip jobs-lanes "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
command -v python3 >/dev/null || { skip jobs-lanes "python3 not installed"; exit 0; }
command -v sqlite3 >/dev/null || { skip jobs-lanes "sqlite3 not installed"; exit 0; }
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# mangle.py IN OUT: every 40th plain RoCE v2 frame malformed and 1 ms early, every 40th
# (another) 1 ms early but intact. Prints how many of each.
cat >"$work/mangle.py" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
magic = struct.unpack("<I", data[:4])[0]
assert magic in (0xa1b2c3d4, 0xa1b23c4d), "little-endian classic pcap expected"
unit = 1000000 if magic == 0xa1b2c3d4 else 1000000000
out, off, i, bad, early = bytearray(data[:24]), 24, 0, 0, 0
while off + 16 <= len(data):
    sec, frac, cap, orig = struct.unpack("<IIII", data[off:off + 16])
    frame = bytearray(data[off + 16:off + 16 + cap])
    off += 16 + cap
    l3, et = 14, struct.unpack(">H", frame[12:14])[0]
    if et == 0x8100:
        l3, et = 18, struct.unpack(">H", frame[16:18])[0]
    udp = l3 + 20 if et == 0x0800 else l3 + 40 if et == 0x86DD else None
    if udp is not None and len(frame) >= udp + 8 and struct.unpack(">H", frame[udp + 2:udp + 4])[0] == 4791:
        i += 1
        if i % 40 in (7, 27):
            t = sec * unit + frac - unit // 1000
            sec, frac = divmod(t, unit)
            if i % 40 == 7:
                frame[udp + 4:udp + 6] = b"\xff\xff"
                bad += 1
            else:
                early += 1
    out += struct.pack("<IIII", sec, frac, cap, orig) + frame
open(sys.argv[2], "wb").write(out)
print(bad, early)
EOF

# same NAME ARGS...: -j 2 and -j 4 give -j 1's --json and database dump.
same() {
	local name=$1 j bad=
	shift
	for j in 1 2 4; do
		rm -f "$work/x.db"
		if ! timeout 300 "$ANALYZE" -q -j $j "$@" --json --samples all -o "$work/x.db" >"$work/$j.json" 2>"$work/err"; then
			# malformed frames make the run exit 1 on purpose only when most are not understood
			[ -s "$work/$j.json" ] || { fail "jobs-lanes-$name-j$j" "$(head -n 1 "$work/err")"; return; }
		fi
		sqlite3 "$work/x.db" .dump |
			grep -v -E "^INSERT INTO meta VALUES\('(analysis_seconds|created_ns)'," >"$work/$j.sql"
	done
	grep -q '"ts_backwards":[1-9]' "$work/1.json" ||
		{ fail "jobs-lanes-$name" "-j 1 counted no timestamp going back: nothing compared"; return; }
	grep -q "^INSERT INTO malformed" "$work/1.sql" ||
		{ fail "jobs-lanes-$name" "-j 1 counted no malformed frame: nothing compared"; return; }
	for j in 2 4; do
		cmp -s "$work/1.json" "$work/$j.json" || bad="$bad -j$j.json"
		cmp -s "$work/1.sql" "$work/$j.sql" || bad="$bad -j$j.sql"
	done
	if [ -z "$bad" ]; then
		pass "jobs-lanes-$name ($(grep -o '"ts_backwards":[0-9]*' "$work/1.json"))"
	else
		fail "jobs-lanes-$name" "differs from -j 1:$bad; $(diff "$work/1.json" "$work/4.json" | head -c 300 | tr '\n' '|')"
	fi
}

run_case() {
	local name=$1 counts
	shift
	if ! "$SYNTH" -q -o "$work/$name" --host-gbps 10 --fabric-gbps 10 --mtu 256 --msg-size 4k \
		--hosts 16 --leaves 4 --spines 2 --load 3% --duration 2ms --seed 43 --workload mixed \
		--format pcap "$@"; then
		fail "jobs-lanes-$name" "agentxdp-synth failed"
		return
	fi
	counts=$(python3 "$work/mangle.py" "$work/$name/trace.pcap" "$work/$name.pcap") ||
		{ fail "jobs-lanes-$name" "mangle.py failed"; return; }
	[ "${counts% *}" -gt 0 ] || { fail "jobs-lanes-$name" "no frame mangled ($counts)"; return; }
	same "$name" "$work/$name.pcap"
	same "$name-c" "$work/$name.pcap" -c 3000
}
run_case ipv4 --fault link=leaf1-spine0,kind=loss,size=3%
run_case ipv6-vlan --ipv6 --vlan 7 --fault link=leaf1-spine0,kind=loss,size=3%
exit $((T_FAILED > 0))
