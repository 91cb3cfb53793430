#!/usr/bin/env bash
# test_reader_fastpath.sh: the trace reader parses a regular file's pcap/pcapng records itself
# (libpcap opens and validates it, and takes over on anything unusual); standard input is read
# by libpcap alone. Every sample, every ../shared/captures trace and crafted edge cases
# (us/ns/big-endian pcap, records over the snaplen, truncated pcap and pcapng, a snaplen-60
# pcapng) must give the same --dump -tt lines, stderr and exit status from the file as from
# standard input. (A pcapng of two link types cannot be read from a pipe: test_hostile_inputs.)
. "$(dirname "$0")/../lib.sh"

AN=$BIN/agentxdp-analyze
if [ ! -x "$AN" ]; then
	fail reader-fastpath "$AN not built (run make all)"
	exit 1
fi
command -v editcap >/dev/null || { skip reader-fastpath "editcap not installed"; exit 0; }
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT
ng=$TOP/samples/lossy-link/trace.pcapng

editcap -F pcap "$ng" "$work/us.pcap" >/dev/null 2>&1 &&
	editcap -F nsecpcap "$ng" "$work/ns.pcap" >/dev/null 2>&1 &&
	editcap -s 60 "$ng" "$work/snap60.pcapng" >/dev/null 2>&1 || {
	fail reader-fastpath "editcap could not convert $ng"
	exit 1
}
head -c 300000 "$ng" >"$work/cut.pcapng"
head -c 250007 "$work/us.pcap" >"$work/cut.pcap"
python3 - "$work" <<'PY' || { fail reader-fastpath "crafting the edge cases failed"; exit 1; }
import struct, sys
w = sys.argv[1]
d = open(w + '/us.pcap', 'rb').read()
# The same records big-endian.
m, ma, mi, tz, sf, sn, lt = struct.unpack('<IHHiIII', d[:24])
out, p = bytearray(struct.pack('>IHHiIII', m, ma, mi, tz, sf, sn, lt)), 24
while p + 16 <= len(d):
    s, u, c, o = struct.unpack('<IIII', d[p:p + 16])
    out += struct.pack('>IIII', s, u, c, o) + d[p + 16:p + 16 + c]
    p += 16 + c
open(w + '/be.pcap', 'wb').write(out)
# A header snaplen of 64 under records of more: libpcap cuts them.
out = bytearray(d)
struct.pack_into('<I', out, 16, 64)
open(w + '/snap64.pcap', 'wb').write(out)
PY

inputs=("$work"/*.pcap "$work"/*.pcapng)
for d in "$TOP"/samples/*/; do
	inputs+=("$(ls "$d"*.pcap* | head -n 1)")
done
if have_shared; then
	inputs+=("$SHARED_CAPTURES"/*.pcap)
	for f in "$SHARED_CAPTURES"/ib/*.pcap*; do
		[ -f "$f" ] && inputs+=("$f") # native InfiniBand (DLT_INFINIBAND)
	done
else
	skip reader-fastpath-shared "no $SHARED_CAPTURES"
fi

n=0 bad=0
for f in "${inputs[@]}"; do
	"$AN" --dump -tt "$f" >"$work/file.out" 2>"$work/file.err"
	rc_file=$?
	"$AN" --dump -tt - <"$f" >"$work/pipe.out" 2>"$work/pipe.err"
	rc_pipe=$?
	# The messages name the input: the path, or "-".
	sed -i "s|$f|INPUT|g" "$work/file.err"
	sed -i "s|^agentxdp-analyze: -:|agentxdp-analyze: INPUT:|; s|standard input|INPUT|g" "$work/pipe.err"
	n=$((n + 1))
	if [ "$rc_file" != "$rc_pipe" ] || ! cmp -s "$work/file.out" "$work/pipe.out" ||
		! cmp -s "$work/file.err" "$work/pipe.err"; then
		bad=$((bad + 1))
		fail "reader-fastpath $(basename "$f")" "exit $rc_file vs $rc_pipe; $(diff "$work/file.err" "$work/pipe.err" | head -n 3 | tr '\n' ' ')$(cmp "$work/file.out" "$work/pipe.out" 2>&1 | head -n 1)"
	fi
done
[ "$bad" -eq 0 ] && pass "reader-fastpath: $n traces read the same from the file and from a pipe"
[ "$T_FAILED" -eq 0 ]
