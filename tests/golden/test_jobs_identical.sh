#!/usr/bin/env bash
# test_jobs_identical.sh: issue #20 item 3. agentxdp-analyze -j N tracks on N threads and
# gives the results of one: for every samples/*/ incident and several synthesized ones (loss
# on a fabric of many host pairs, each-host vantages, a mirror that duplicates every frame,
# ERSPAN III mirror sessions in one trace, native InfiniBand, --dedup, a busy 150k-packet
# fabric of 3,072 queue pairs), the `sqlite3 .dump`
# of the -j 1, -j 2 and -j 4 databases (--samples all, so every latency row is compared;
# less the run's clock: meta analysis_seconds and created_ns), the --json and the --prom file
# are byte for byte the same. Several host pairs per incident, so every shard gets packets
# (checked: -j 4 on the fabric incident must not run on one shard only). Bad -j values exit
# 2 with one line and create nothing. A run that hangs (threads waiting on each other) is
# killed after 300 s and fails. Stop paths too: -c, --qp, a pcap filter, a cut trace, a full
# store (root: a small tmpfs) and SIGINT on an open pipe give -j 1's results or its error.
. "$(dirname "$0")/../lib.sh"
SYNTH=$BIN/agentxdp-synth ANALYZE=$BIN/agentxdp-analyze
if [ ! -x "$SYNTH" ] || [ ! -x "$ANALYZE" ]; then
	skip jobs-identical "bin/agentxdp-synth or bin/agentxdp-analyze not built"
	exit 0
fi
command -v sqlite3 >/dev/null || { skip jobs-identical "sqlite3 not installed"; exit 0; }
work=$(tmpdir)
trap 'mountpoint -q "$work/full" 2>/dev/null && umount "$work/full"; rm -rf "$work"' EXIT

# run J NAME ARGS...: -j J into $work/J.{sql,json,prom}; 1 when the analysis failed.
run() {
	local j=$1 name=$2
	shift 2
	rm -f "$work/x.db" "$work/$j.prom"
	if ! timeout 300 "$ANALYZE" -q -j "$j" "$@" --samples all -o "$work/x.db" --prom "$work/$j.prom" \
		>/dev/null 2>"$work/err"; then
		fail "jobs-$name-j$j" "exit $?: $(head -n 1 "$work/err")"
		return 1
	fi
	sqlite3 "$work/x.db" .dump |
		grep -v -E "^INSERT INTO meta VALUES\('(analysis_seconds|created_ns)'," >"$work/$j.sql"
	timeout 300 "$ANALYZE" -q -j "$j" "$@" --json >"$work/$j.json" 2>"$work/err" ||
		{ fail "jobs-$name-j$j-json" "exit $?: $(head -n 1 "$work/err")"; return 1; }
}

# same NAME ARGS...: -j 2 and -j 4 give -j 1's database, JSON and metrics.
same() {
	local name=$1 j f bad=
	shift
	run 1 "$name" "$@" || return
	[ "$(grep -c '^INSERT INTO latency_sample' "$work/1.sql")" -gt 0 ] ||
		[ "$(grep -c '^INSERT INTO qp' "$work/1.sql")" -gt 0 ] ||
		{ fail "jobs-$name" "-j 1 wrote no flow: nothing compared"; return; }
	for j in 2 4; do
		run $j "$name" "$@" || return
		for f in sql json prom; do
			cmp -s "$work/1.$f" "$work/$j.$f" || bad="$bad -j$j.$f"
		done
	done
	if [ -z "$bad" ]; then
		pass "jobs-$name ($(wc -l <"$work/1.sql") dump lines)"
	else
		fail "jobs-$name" "differs from -j 1:$bad; $(diff "$work/1.sql" "$work/4.sql" | head -n 4 | tr '\n' '|')"
	fi
}

for d in "$TOP"/samples/*/; do
	traces=("$d"trace*.pcap*)
	[ -s "${traces[0]}" ] || continue
	args=("${traces[@]}")
	[ -s "$d/links.csv" ] && args+=(--topology "$d/links.csv")
	[ -s "$d/paths.csv" ] && args+=(--paths "$d/paths.csv")
	same "sample-$(basename "$d")" "${args[@]}"
done

# synth NAME OPTIONS...: an incident in $work/NAME (trace files, links.csv, paths.csv).
synth() {
	local name=$1
	shift
	"$SYNTH" -q -o "$work/$name" --host-gbps 10 --fabric-gbps 10 --mtu 256 --msg-size 4k "$@" ||
		{ fail "jobs-synth-$name" "agentxdp-synth $* failed"; return 1; }
}
topo() { echo --topology "$work/$1/links.csv" --paths "$work/$1/paths.csv"; }

if synth fabric --hosts 16 --leaves 4 --spines 2 --load 3% --duration 2ms --seed 41 \
	--workload mixed --ack-timeout 3000us --fault link=leaf1-spine0,kind=loss,size=3%; then
	# shellcheck disable=SC2046
	same synth-fabric-loss "$work/fabric/trace.pcapng" $(topo fabric)
	# Every shard holds host pairs: a test that ran on one shard would prove nothing.
	shards=$("$ANALYZE" -q -j 4 "$work/fabric/trace.pcapng" --json | jq -r '.flows | length' 2>/dev/null)
	[ "${shards:-0}" -ge 32 ] && pass "jobs-fabric-many-flows ($shards flows)" ||
		fail jobs-fabric-many-flows "only ${shards:-0} flows: too few host pairs to spread"
	# A mirror that sends every frame twice (same time stamps): duplicates, not retransmissions.
	if command -v mergecap >/dev/null; then
		mergecap -w "$work/dup.pcapng" "$work/fabric/trace.pcapng" "$work/fabric/trace.pcapng" &&
			same synth-mirror-duplicates "$work/dup.pcapng" --dedup 1us
	else
		skip jobs-synth-mirror-duplicates "mergecap not installed"
	fi
fi
# Busy enough that rings fill, shards wait on each other and output slots overflow: 48 hosts,
# 3,072 queue pairs, an ACK every second packet, 128-byte snaplen, loss on a host link.
if synth busy --hosts 48 --leaves 4 --spines 2 --peers 16 --qps-per-pair 4 --workload mixed \
	--load 60% --duration 1s --max-packets 150000 --snaplen 128 --ack-every 2 --seed 45 \
	--fault link=198.18.0.10-leaf0,kind=loss,size=1%; then
	# shellcheck disable=SC2046
	same synth-busy-fabric "$work/busy/trace.pcapng" $(topo busy)
fi
if synth eachhost --hosts 6 --leaves 2 --spines 2 --load 2% --duration 2ms --seed 42 \
	--workload rpc --vantage each-host --host-fault host=198.18.0.11,kind=rnr,size=100us,onset=500us,end=1500us; then
	# shellcheck disable=SC2046
	same synth-each-host "$work"/eachhost/trace*.pcapng $(topo eachhost)
fi
if synth erspan --hosts 6 --leaves 2 --spines 2 --load 2% --duration 2ms --seed 43 \
	--vantage each-host --encap erspan3 --mirror-sessions --fault link=leaf0-spine1,kind=slow,size=20us; then
	# shellcheck disable=SC2046
	same synth-erspan3-sessions "$work"/erspan/trace*.pcapng $(topo erspan)
fi
if synth ib --hosts 8 --leaves 2 --spines 2 --load 2% --duration 2ms --seed 44 --link ib \
	--fault link=leaf0-spine0,kind=loss,size=2%; then
	same synth-infiniband "$work"/ib/trace*.pcap*
fi

# --- Stop paths (issue #20 review): -c, --qp, a pcap filter, a trace cut inside a block and a
# store on a full device stop or select the same packets at every -j, with the same exit
# status and first error line; none hangs (timeout 300 kills it and fails). ---
# same_exit NAME ARGS...: like same, but an analysis that fails must fail alike.
same_exit() {
	local name=$1 j f bad= rc
	shift
	for j in 1 2 4; do
		rm -f "$work/x.db" "$work/$j.prom"
		timeout 300 "$ANALYZE" -q -j "$j" "$@" --samples all -o "$work/x.db" --prom "$work/$j.prom" \
			>/dev/null 2>"$work/$j.err"
		rc=$?
		{ echo "exit $rc"; head -n 1 "$work/$j.err"; } >"$work/$j.rc"
		[ $rc -eq 124 ] && { fail "jobs-$name-j$j" "hung: killed after 300 s"; return; }
		sqlite3 "$work/x.db" .dump 2>/dev/null |
			grep -v -E "^INSERT INTO meta VALUES\('(analysis_seconds|created_ns)'," >"$work/$j.sql"
		timeout 300 "$ANALYZE" -q -j "$j" "$@" --json >"$work/$j.json" 2>/dev/null
		echo "json exit $?" >>"$work/$j.rc"
	done
	[ -s "$work/1.json" ] || { fail "jobs-$name" "-j 1 gave no JSON: $(cat "$work/1.rc")"; return; }
	for j in 2 4; do
		for f in rc sql json prom; do
			cmp -s "$work/1.$f" "$work/$j.$f" || bad="$bad -j$j.$f"
		done
	done
	if [ -z "$bad" ]; then
		pass "jobs-$name ($(head -n 1 "$work/1.rc"), $(jq '.totals.packets' "$work/1.json") packets)"
	else
		fail "jobs-$name" "differs from -j 1:$bad; $(tr '\n' '|' <"$work/1.rc") vs $(tr '\n' '|' <"$work/4.rc")"
	fi
}
if [ -s "$work/fabric/trace.pcapng" ]; then
	f=$work/fabric/trace.pcapng
	# -c mid-batch: the shards hold part-filled input slots when reading stops.
	same_exit count-1000 "$f" -c 1000
	same_exit count-1 "$f" -c 1
	qp=$("$ANALYZE" -q "$f" --json | jq -r '.flows[3].dst_qpn // empty' 2>/dev/null)
	if [ -n "$qp" ]; then
		same_exit qp-filter "$f" --qp "$qp"
	else
		fail jobs-qp-filter "no dest_qp in the fabric's --json"
	fi
	same_exit pcap-filter "$f" --pcap-filter "host 198.18.0.10 or host 198.18.0.12"
	# Cut inside a block: exit 1 and one line, the packets before it analyzed alike.
	size=$(stat -c %s "$f")
	head -c $((size * 2 / 3 + 7)) "$f" >"$work/cut.pcapng"
	same_exit truncated "$work/cut.pcapng"
fi
# The store failing mid-run (a tmpfs too small for the database), when we may mount.
if [ "$(id -u)" -eq 0 ] && [ -s "$work/busy/trace.pcapng" ] && mkdir -p "$work/full" &&
	mount -t tmpfs -o size=4m tmpfs "$work/full" 2>/dev/null; then
	for j in 1 2 4; do
		timeout 300 "$ANALYZE" -q -j "$j" "$work/busy/trace.pcapng" --samples all \
			-o "$work/full/out.db" >/dev/null 2>"$work/full.err"
		rc=$?
		left=$(ls -A "$work/full")
		if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(wc -l <"$work/full.err")" -le 2 ] &&
			grep -Eqi "space|full" "$work/full.err" && [ -z "$left" ]; then
			pass "jobs-full-disk-j$j (exit $rc: $(head -n 1 "$work/full.err"))"
		else
			fail "jobs-full-disk-j$j" "rc=$rc left='$left' $(head -n 2 "$work/full.err" | tr '\n' '|')"
		fi
		rm -f "$work/full/"*
	done
	umount "$work/full"
else
	skip jobs-full-disk "not root, or cannot mount a small tmpfs"
fi

# SIGINT while reading a pipe that stays open (tcpdump -w - | agentxdp-analyze -): the rings
# hold part-filled slots when the signal comes; the interrupted database has -j 1's flows,
# samples and windows, and the run ends by the signal (exit 130).
cat >"$work/writer.py" <<'PY'
import struct, sys, time
data = open(sys.argv[1], 'rb').read()
off = 24
for _ in range(int(sys.argv[2])):
    off += 16 + struct.unpack_from('<I', data, off + 8)[0]
sys.stdout.buffer.write(data[:off])
sys.stdout.buffer.flush()
open(sys.argv[3], 'w').close()
time.sleep(3600)
PY
sigint_rows() {
	local j=$1 wp ap rc
	rm -f "$work/fifo" "$work/sent" "$work/int.db"
	mkfifo "$work/fifo"
	python3 "$work/writer.py" "$work/pcap/trace.pcap" 5000 "$work/sent" >"$work/fifo" &
	wp=$!
	"$ANALYZE" -q -j "$j" - --samples all -o "$work/int.db" <"$work/fifo" 2>"$work/int.err" &
	ap=$!
	for _ in $(seq 1 100); do [ -e "$work/sent" ] && break; sleep 0.05; done
	sleep 1 # the pipe holds all 5000: let the analyzer read them and block
	kill -INT $ap
	( sleep 60; kill -9 $ap 2>/dev/null ) >/dev/null 2>&1 &
	wait $ap
	rc=$?
	kill $! $wp 2>/dev/null
	wait $wp 2>/dev/null
	echo "exit $rc"
	sqlite3 "$work/int.db" "SELECT value FROM meta WHERE key = 'interrupted';
		SELECT * FROM qp ORDER BY id; SELECT count(*) FROM latency_sample;
		SELECT * FROM qp_window ORDER BY 1, 2; SELECT count(*) FROM retransmission" 2>&1
}
if command -v python3 >/dev/null && synth pcap --hosts 16 --leaves 4 --spines 2 --load 3% \
	--duration 2ms --seed 41 --workload mixed --format pcap; then
	sigint_rows 1 >"$work/int1"
	sigint_rows 2 >"$work/int2"
	if [ "$(head -n 2 "$work/int1" | tr '\n' ' ')" != "exit 130 SIGINT " ] || [ "$(wc -l <"$work/int1")" -lt 5 ]; then
		fail jobs-sigint "-j 1 reference: $(head -n 3 "$work/int1" | tr '\n' '|')"
	elif cmp -s "$work/int1" "$work/int2"; then
		pass "jobs-sigint ($(wc -l <"$work/int1") rows alike)"
	else
		fail jobs-sigint "-j 2 differs: $(diff "$work/int1" "$work/int2" | head -n 3 | tr '\n' '|')"
	fi
fi

# --- Bad -j values: exit 2, one line, nothing on stdout, no file ---
for bad in 0 -1 1000 x ""; do
	rm -f "$work/bad.db"
	"$ANALYZE" -j "$bad" "$TOP/samples/healthy/trace.pcapng" -o "$work/bad.db" >"$work/out" 2>"$work/err"
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q -- "--jobs" "$work/err" &&
		[ ! -s "$work/out" ] && [ ! -e "$work/bad.db" ]; then
		pass "jobs-bad-value '$bad'"
	else
		fail "jobs-bad-value '$bad'" "exit $rc: $(head -n 2 "$work/err" | tr '\n' '|')"
	fi
done
"$ANALYZE" --help | grep -q -- "-j, --jobs N" && pass jobs-in-help || fail jobs-in-help "--help has no -j"
exit $((T_FAILED > 0))
