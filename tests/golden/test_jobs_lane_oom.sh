#!/usr/bin/env bash
# test_jobs_lane_oom.sh: issue #20. A -j lane that runs out of memory stops early, and its
# tracker's end emits a window event per open flow that, past the merge's slots, waits on the
# merge: the run must still end, exit 1 with one "out of memory" line, not hang. Written by the
# tenth round's review of a shared reader (not kept: docs/benchmarks.md, "One reader feeds the
# lanes"), where the lane also had to leave the reader's feed first or the run hung for good;
# kept as the lanes' out-of-memory test. A pcap of one host pair and 12,000 QPs puts every flow
# in one lane; an LD_PRELOAD shim fails the lane threads' allocations of 64 KiB and more after
# the 5th.
. "$(dirname "$0")/../lib.sh"
ANALYZE=$BIN/agentxdp-analyze
[ -x "$ANALYZE" ] || { skip jobs-lane-oom "bin/agentxdp-analyze not built"; exit 0; }
CC=${CC:-cc}
command -v "$CC" >/dev/null || { skip jobs-lane-oom "no C compiler for the malloc shim"; exit 0; }
command -v python3 >/dev/null || { skip jobs-lane-oom "python3 missing"; exit 0; }
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

cat >"$work/shim.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

static int count;

static int fail(size_t n)
{
	char name[17] = "";
	const char *e = getenv("FAIL_AFTER");

	if (n < 65536)
		return 0;
	prctl(PR_GET_NAME, name);
	if (strcmp(name, "analyze-lane") || __atomic_add_fetch(&count, 1, __ATOMIC_SEQ_CST) <= (e ? atoi(e) : 0))
		return 0;
	errno = ENOMEM;
	return 1;
}

#define REAL(name, ...) static void *(*real)(__VA_ARGS__); if (!real) real = dlsym(RTLD_NEXT, name)
void *malloc(size_t n) { REAL("malloc", size_t); return fail(n) ? NULL : real(n); }
void *realloc(void *p, size_t n) { REAL("realloc", void *, size_t); return fail(n) ? NULL : real(p, n); }
void *aligned_alloc(size_t a, size_t n) { REAL("aligned_alloc", size_t, size_t); return fail(n) ? NULL : real(a, n); }
C
"$CC" -shared -fPIC -O1 -o "$work/shim.so" "$work/shim.c" -ldl 2>"$work/cc.err" ||
	{ skip jobs-lane-oom "cannot build the shim: $(head -n 1 "$work/cc.err")"; exit 0; }

# One host pair, NQP RC QPs, two rounds of SEND_ONLY + ACK, interleaved: every flow stays open.
python3 - "$work/t.pcap" 12000 2 <<'PY' || { fail jobs-lane-oom "crafting the trace failed"; exit 1; }
import struct, sys
out, nqp, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def csum(h):
    s = sum(struct.unpack('!10H', h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def frame(src, dst, sport, opcode, qp, psn, payload):
    l4 = struct.pack('!BBHII', opcode, 0x40, 0xffff, qp, psn) + payload + b'\0' * 4
    udp = struct.pack('!HHHH', sport, 4791, 8 + len(l4), 0)
    ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 2, 28 + len(l4), 0, 0x4000, 64, 17, 0, src, dst))
    struct.pack_into('!H', ip, 10, csum(bytes(ip)))
    return b'\x02\0\0\0\0\x0b\x02\0\0\0\0\x0a\x08\x00' + bytes(ip) + udp + l4
a, b = bytes([198, 18, 0, 10]), bytes([198, 18, 0, 11])
o = bytearray(struct.pack('<IHHiIII', 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
t = 1767225600 * 10**9
for r in range(rounds):
    for q in range(nqp):
        sp = 49152 + q % 16000
        for f in (frame(a, b, sp, 0x04, 0x10000 + q, r, b'\xab' * 64),
                  frame(b, a, sp, 0x11, 0x100 + q, r, struct.pack('!I', 0x1f << 24 | r + 1))):
            t += 700
            o += struct.pack('<IIII', t // 10**9, t % 10**9, len(f), len(f)) + f
open(out, 'wb').write(o)
PY

for j in 2 4; do
	rm -f "$work/x.db"
	FAIL_AFTER=5 LD_PRELOAD=$work/shim.so timeout -s KILL 60 "$ANALYZE" -q -j $j -o "$work/x.db" "$work/t.pcap" \
		>/dev/null 2>"$work/err"
	rc=$?
	if [ $rc -eq 137 ]; then
		fail jobs-lane-oom-j$j "a lane out of memory: the run hung (killed after 60 s)"
	elif [ $rc -eq 1 ] && [ "$(grep -c 'out of memory' "$work/err")" -eq 1 ]; then
		pass jobs-lane-oom-j$j
	else
		fail jobs-lane-oom-j$j "exit $rc: $(head -n 2 "$work/err" | tr '\n' ' ')"
	fi
done
exit $((T_FAILED > 0))
