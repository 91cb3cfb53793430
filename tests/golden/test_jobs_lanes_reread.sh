#!/usr/bin/env bash
# test_jobs_lanes_reread.sh: issue #20 review. With -j N on files (lanes) every reader opens
# each trace itself, so a reader other than the run's own can find another file than the one
# the run's reader found: one that shrank, grew or vanished while the run read it. Such a run
# tracked each shard over a different trace: it must exit 1 with one line and write nothing,
# not exit 0 with some shards' packets missing (or a second, wrong "out of memory" line).
# An LD_PRELOAD shim hands every open() of the trace after the ones -j 1 makes (the run's own
# reader's) another file: the same bytes (control: -j 1's results), a copy cut in half, a
# longer one, or none.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip jobs-lanes-reread "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
CC=${CC:-cc}
command -v "$CC" >/dev/null || { skip jobs-lanes-reread "no C compiler for the open() shim"; exit 0; }
command -v sqlite3 >/dev/null || { skip jobs-lanes-reread "sqlite3 not installed"; exit 0; }
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# The shim: open(SHIM_PATH) opens SHIM_ALT instead after the first SHIM_KEEP calls; each call
# appends a line to SHIM_LOG when set.
cat >"$work/shim.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int calls;

static const char *swap(const char *path)
{
	const char *p = getenv("SHIM_PATH"), *alt = getenv("SHIM_ALT"), *log = getenv("SHIM_LOG");
	const char *keep = getenv("SHIM_KEEP");
	int n;
	FILE *f;

	if (!p || strcmp(path, p))
		return path;
	n = __atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
	if (log && (f = fopen(log, "a"))) {
		fprintf(f, "open %d\n", n);
		fclose(f);
	}
	return alt && n > (keep ? atoi(keep) : 1) ? alt : path;
}

#define SHIM_OPEN(name)                                                         \
	int name(const char *path, int flags, ...)                              \
	{                                                                       \
		static int (*real)(const char *, int, ...);                     \
		va_list ap;                                                     \
		int mode;                                                       \
                                                                                \
		va_start(ap, flags);                                            \
		mode = flags & (O_CREAT | O_TMPFILE) ? va_arg(ap, int) : 0;     \
		va_end(ap);                                                     \
		if (!real)                                                      \
			real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, #name); \
		return real(swap(path), flags, mode);                           \
	}
SHIM_OPEN(open)
SHIM_OPEN(open64)
EOF
"$CC" -shared -fPIC -O1 -o "$work/shim.so" "$work/shim.c" -ldl 2>"$work/cc.err" ||
	{ skip jobs-lanes-reread "cannot build the open() shim: $(head -n 1 "$work/cc.err")"; exit 0; }

"$SYNTH" -q -o "$work/s" --host-gbps 10 --fabric-gbps 10 --mtu 256 --msg-size 4k --hosts 16 \
	--leaves 4 --spines 2 --load 3% --duration 2ms --seed 43 --workload mixed --format pcap \
	--fault link=leaf1-spine0,kind=loss,size=3% ||
	{ fail jobs-lanes-reread "agentxdp-synth failed"; exit 1; }
f=$work/s/trace.pcap
cp "$f" "$work/same.pcap"
size=$(stat -c %s "$f")
head -c $((size / 2)) "$f" >"$work/half.pcap"
# How many times -j 1 opens the trace: -j N's own reader opens it as often, before the others.
SHIM_PATH=$f SHIM_LOG=$work/opens LD_PRELOAD=$work/shim.so "$ANALYZE" -q -j 1 "$f" >/dev/null 2>&1
keep=$(wc -l <"$work/opens" 2>/dev/null)
[ "${keep:-0}" -gt 0 ] || { fail jobs-lanes-reread "the shim saw no open() of the trace"; exit 1; }

# run NAME J ALT: -j J with the shim handing out ALT; exit status, stderr, database, --json.
run() {
	local name=$1 j=$2 alt=$3
	rm -f "$work/$name.db"
	SHIM_PATH=$f SHIM_KEEP=$keep SHIM_ALT=$alt LD_PRELOAD=$work/shim.so timeout 300 \
		"$ANALYZE" -q -j "$j" "$f" --samples all -o "$work/$name.db" >/dev/null 2>"$work/$name.err"
	echo $? >"$work/$name.rc"
	SHIM_PATH=$f SHIM_KEEP=$keep SHIM_ALT=$alt LD_PRELOAD=$work/shim.so timeout 300 \
		"$ANALYZE" -q -j "$j" "$f" --json >"$work/$name.json" 2>/dev/null
}
dump() { sqlite3 "$1" .dump | grep -v -E "^INSERT INTO meta VALUES\('(analysis_seconds|created_ns)',"; }

# Control: the other readers get the same bytes: -j 1's database and JSON, exit 0.
run one 1 "$work/half.pcap"
run same 2 "$work/same.pcap"
if [ "$(cat "$work/one.rc")" = 0 ] && [ "$(cat "$work/same.rc")" = 0 ] &&
	[ "$(dump "$work/one.db" | md5sum)" = "$(dump "$work/same.db" | md5sum)" ] &&
	cmp -s "$work/one.json" "$work/same.json"; then
	pass "jobs-lanes-reread-control (the shim leaves -j 1 and an identical copy alone)"
else
	fail jobs-lanes-reread-control "rc $(cat "$work/one.rc")/$(cat "$work/same.rc"): $(head -n 1 "$work/same.err")"
fi

# expect_refused NAME J ALT WHAT: exit 1, one line matching WHAT, no database, no JSON.
expect_refused() {
	local name=$1 j=$2 alt=$3 what=$4 rc lines
	run "$name" "$j" "$alt"
	rc=$(cat "$work/$name.rc")
	lines=$(wc -l <"$work/$name.err")
	if [ "$rc" = 1 ] && [ "$lines" = 1 ] && grep -Eq "$what" "$work/$name.err" &&
		[ ! -e "$work/$name.db" ] && [ ! -s "$work/$name.json" ]; then
		pass "jobs-lanes-reread-$name ($(cat "$work/$name.err"))"
	else
		fail "jobs-lanes-reread-$name" "exit $rc, $lines lines, db $([ -e "$work/$name.db" ] && echo written || echo none),\
 json $(wc -c <"$work/$name.json") bytes: $(head -n 2 "$work/$name.err" | tr '\n' '|')"
	fi
}
# A reader found the trace cut in half (it shrank while read): its shard lost packets.
expect_refused shrank 2 "$work/half.pcap" "changed while read"
expect_refused shrank-j4 4 "$work/half.pcap" "changed while read"
# A reader found it longer (it grew while read): its shard tracked packets the run never saw.
cat "$f" <(tail -c +25 "$f") >"$work/grown.pcap"
expect_refused grew 2 "$work/grown.pcap" "changed while read"
# A reader found it gone: one line saying so, not a second one about memory.
expect_refused gone 2 "$work/none.pcap" "starting reader 1: .*No such file"
exit $((T_FAILED > 0))
