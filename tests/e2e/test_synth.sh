#!/usr/bin/env bash
# test_synth.sh: agentxdp-synth end to end: CLI, samples checked against tshark and an
# independent ICRC, `make samples` byte for byte, determinism, formats, vantage points.
. "$(dirname "$0")/../lib.sh"
SYNTH="$BIN/agentxdp-synth"
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

if [ ! -x "$SYNTH" ]; then
	fail synth-built "$SYNTH missing: run make"
	exit 1
fi

# --help: man-page grade, with examples; --version.
out=$("$SYNTH" --help)
rc=$?
if [ $rc -eq 0 ] && grep -q '^EXAMPLES' <<<"$out" && grep -q -- '--fault link=' <<<"$out"; then
	pass synth-help
else
	fail synth-help "exit $rc or no EXAMPLES block"
fi
check synth-version bash -c "'$SYNTH' --version | grep -q '^agentxdp-synth '"

# Bad input: one clear line (plus the --help hint), non-zero exit, no crash.
bad_input() {
	local name=$1 want_rc=$2
	shift 2
	local err rc
	err=$("$SYNTH" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq "$want_rc" ] && [ -n "$err" ] && [ "$(grep -c 'agentxdp-synth:' <<<"$err")" -eq 1 ]; then
		pass "$name"
	else
		fail "$name" "exit $rc (want $want_rc), stderr: $err"
	fi
}
bad_input synth-no-output 2 --hosts 4
bad_input synth-bad-hosts 2 -o "$T/x" --hosts 1
bad_input synth-bad-number 2 -o "$T/x" --hosts 4abc
bad_input synth-bad-duration 2 -o "$T/x" --duration 5parsecs
bad_input synth-bad-fault-kind 2 -o "$T/x" --fault link=leaf0-spine0,kind=melt,size=1%
bad_input synth-bad-fault-size 2 -o "$T/x" --fault link=leaf0-spine0,kind=loss,size=lots
bad_input synth-fault-end-before-onset 2 -o "$T/x" --fault link=leaf0-spine0,kind=loss,size=1%,onset=2ms,end=1ms
bad_input synth-unknown-link 1 -o "$T/x" --fault link=leaf9-spine0,kind=loss,size=1%
bad_input synth-bad-dir 1 -o "$T/x" --fault 'link=leaf0-spine0,dir=leaf1>spine0,kind=loss,size=1%'
bad_input synth-unknown-host 1 -o "$T/x" --host-fault host=198.18.9.9,kind=rnr
bad_input synth-bad-vantage 2 -o "$T/x" --vantage somewhere
bad_input synth-format-mismatch 2 -o "$T/x.pcap" --format pcapng
bad_input synth-unwritable-dir 1 -o /proc/agentxdp-synth-test/x --duration 100us

# Determinism: the same seed gives the same bytes; another seed does not.
small=(--hosts 4 --host-gbps 10 --fabric-gbps 10 --load 2% --mtu 256 --duration 500us)
"$SYNTH" -q -o "$T/a" --seed 5 "${small[@]}" && "$SYNTH" -q -o "$T/b" --seed 5 "${small[@]}" &&
	"$SYNTH" -q -o "$T/c" --seed 6 "${small[@]}"
# (truth.json differs only in the command line it records: -o names another directory.)
if cmp -s "$T/a/trace.pcapng" "$T/b/trace.pcapng" &&
	cmp -s <(grep -v '"command"' "$T/a/truth.json") <(grep -v '"command"' "$T/b/truth.json") &&
	cmp -s "$T/a/paths.csv" "$T/b/paths.csv"; then
	pass synth-same-seed-same-bytes
else
	fail synth-same-seed-same-bytes "two runs with --seed 5 differ"
fi
if ! cmp -s "$T/a/trace.pcapng" "$T/c/trace.pcapng"; then pass synth-other-seed-differs; else
	fail synth-other-seed-differs "--seed 6 wrote the same trace as --seed 5"
fi
perm=$(stat -c %a "$T/a/trace.pcapng")
expect_eq synth-trace-mode-0640 640 "$perm"

if ! command -v tshark >/dev/null || ! command -v capinfos >/dev/null || ! command -v python3 >/dev/null; then
	skip synth-samples "tshark, capinfos or python3 missing (scripts/deps.sh installs them)"
	exit 0
fi

# Classic pcap with nanosecond timestamps, and snaplen trimming.
"$SYNTH" -q -o "$T/p/t.pcap" --snaplen 96 "${small[@]}"
info=$(capinfos -t "$T/p/t.pcap" 2>/dev/null)
if grep -q 'nanosecond pcap' <<<"$info"; then
	pass synth-format-pcap
else
	fail synth-format-pcap "$(tr '\n' ' ' <<<"$info")"
fi
maxcap=$(tshark -r "$T/p/t.pcap" -T fields -e frame.cap_len 2>/dev/null | sort -n | tail -1)
maxlen=$(tshark -r "$T/p/t.pcap" -T fields -e frame.len 2>/dev/null | sort -n | tail -1)
if [ "$maxcap" = 96 ] && [ "$maxlen" -gt 96 ]; then pass synth-snaplen; else
	fail synth-snaplen "max caplen $maxcap, max len $maxlen"
fi
check synth-pcap-truth python3 "$TOP/tests/e2e/synth_check.py" "$T/p"

# Host vantage: both directions of one host port, EPB direction flags set.
"$SYNTH" -q -o "$T/h" --vantage host=198.18.0.11 "${small[@]}"
check synth-vantage-host python3 "$TOP/tests/e2e/synth_check.py" "$T/h"
dirs=$(tshark -r "$T/h/trace.pcapng" -T fields -e frame.packet_flags_direction 2>/dev/null | sort -u | tr '\n' ' ')
expect_eq synth-vantage-host-directions "0x00000001 0x00000002 " "$dirs"

# Features the samples do not cover: collective phases over a flapping link with a NIC that
# retransmits early; mixed traffic through a queue-like slow link to a slow responder.
"$SYNTH" -q -o "$T/g1" "${small[@]}" --msg-size 4k --workload collective --ack-timeout 300us \
	--fault 'link=leaf0-spine0,kind=flap,size=100us,period=500us' \
	--host-fault host=198.18.0.12,kind=nic-retransmit,size=2us,onset=100us,end=300us
check synth-collective-flap-nic-retransmit python3 "$TOP/tests/e2e/synth_check.py" "$T/g1"
"$SYNTH" -q -o "$T/g2" "${small[@]}" --workload mixed \
	--host-fault host=198.18.0.13,kind=slow-responder,size=30us \
	--fault 'link=leaf1-spine1,kind=slow,size=10us,shape=queue'
check synth-mixed-slow-responder-queue python3 "$TOP/tests/e2e/synth_check.py" "$T/g2"
rtx=$(python3 -c "import json; t=json.load(open('$T/g1/truth.json')); print(sum(f['retransmitted_packets'] for f in t['vantages'][0]['flows']) > 0 and sum(q['dropped_in_fabric'] for q in t['qps']) > 0)")
expect_eq synth-flap-drops-and-retransmits True "$rtx"

# Every committed sample: tshark decodes every packet cleanly, ICRC verifies, truth matches.
for d in "$TOP"/samples/*/; do
	[ -f "$d/truth.json" ] || continue
	n=$(basename "$d")
	if python3 "$TOP/tests/e2e/synth_check.py" "$d" >"$T/check.log" 2>&1; then
		pass "synth-sample-$n ($(grep -c '^PASS' "$T/check.log") checks)"
	else
		fail "synth-sample-$n" "$(grep -v '^PASS' "$T/check.log" | head -n 3 | tr '\n' ' ')"
	fi
done

# The samples say what they claim.
wrap=$(tshark -r "$TOP/samples/read-psn-wrap/trace.pcapng" -T fields -e infiniband.bth.psn 2>/dev/null |
	awk '{ p = $1 + 0; if (p >= 16773120) hi++; if (p < 4096) lo++ } END { print (hi > 0 && lo > 0) }')
if [ "$wrap" = 1 ]; then
	pass synth-sample-psn-wraps
else
	fail synth-sample-psn-wraps "no PSNs on both sides of 2^24"
fi
cnps=$(tshark -r "$TOP/samples/congested-cnp/trace.pcapng" -Y 'infiniband.bth.opcode == 0x81' 2>/dev/null | wc -l)
if [ "$cnps" -gt 0 ]; then pass "synth-sample-cnps ($cnps)"; else fail synth-sample-cnps "no CNP"; fi
v6=$(tshark -r "$TOP/samples/ipv6-vlan/trace.pcapng" -Y 'ipv6 && vlan.id == 100' 2>/dev/null | wc -l)
total=$(capinfos -c -M "$TOP/samples/ipv6-vlan/trace.pcapng" 2>/dev/null | awk '/Number of packets/ {print $NF}')
expect_eq synth-sample-ipv6-vlan "$total" "$v6"

# The slow link is slow: flows through leaf0>spine1 see their ACK latency jump by about the
# fault's 20 us after its onset; other flows do not.
python3 - "$TOP/samples/slow-link" >"$T/slow.log" 2>&1 <<'EOF'
import json, subprocess, sys, statistics
d = sys.argv[1]
t = json.load(open(d + "/truth.json"))
onset = t["faults"][0]["onset_ns"]
out = subprocess.run(["tshark", "-r", d + "/trace.pcapng", "-T", "fields", "-e", "frame.time_epoch",
                      "-e", "ip.src", "-e", "ip.dst", "-e", "infiniband.bth.destqp", "-e",
                      "infiniband.bth.opcode", "-e", "infiniband.bth.psn", "-e",
                      "infiniband.aeth.syndrome"], capture_output=True, text=True).stdout
from decimal import Decimal
sent, lat = {}, {}
req = {(q["requester"], q["responder"], q["responder_qpn"]): q for q in t["qps"]}
resp = {(q["responder"], q["requester"], q["requester_qpn"]): q for q in t["qps"]}
for line in out.splitlines():
    ts, s, dd, qp, op, psn, syn = line.split("\t")
    ts = int(Decimal(ts) * 10**9); k = (s, dd, int(qp, 0)); op = int(op, 0); psn = int(psn, 0)
    if k in req and op <= 12:
        sent.setdefault((req[k]["id"], psn), ts)
    elif k in resp and op == 17 and syn and int(syn, 0) >> 5 == 0:
        q = resp[k]
        t0 = sent.get((q["id"], psn))
        if t0 is not None:
            lat.setdefault((q["id"], t0 >= onset), []).append(ts - t0)
slow = [q["id"] for q in t["qps"] if "leaf0-spine1" in q["path"] and q["path"][0].endswith("-leaf0")]
fast = [q["id"] for q in t["qps"] if q["id"] not in slow]
def jump(ids):
    b = [x for i in ids for x in lat.get((i, False), [])]
    a = [x for i in ids for x in lat.get((i, True), [])]
    return statistics.median(a) - statistics.median(b) if a and b else None
js, jf = jump(slow), jump(fast)
print("slow-path jump", js, "other jump", jf)
sys.exit(0 if js is not None and jf is not None and js > 15000 and abs(jf) < 5000 else 1)
EOF
if [ $? -eq 0 ]; then pass "synth-sample-slow-link-is-slow ($(cat "$T/slow.log"))"; else
	fail synth-sample-slow-link-is-slow "$(cat "$T/slow.log")"
fi

# `make samples` rebuilds the committed samples byte for byte.
if bash "$TOP/samples/make-samples.sh" "$T/rebuild" >"$T/rebuild.log" 2>&1 &&
	diff -r "$TOP/samples" "$T/rebuild/samples" -x '*.c' -x '*.h' -x '*.mk' -x '*.sh' -x '*.txt' -x '*.md' >"$T/diff.log" 2>&1; then
	pass synth-make-samples-byte-for-byte
else
	fail synth-make-samples-byte-for-byte "$(head -n 3 "$T/rebuild.log" "$T/diff.log" | tr '\n' ' ')"
fi
exit 0
