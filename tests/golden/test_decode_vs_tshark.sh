#!/usr/bin/env bash
# test_decode_vs_tshark.sh: for every RoCE packet of every trace, the decoder's opcode, dest QP,
# PSN, ack-request bit, AETH syndrome and MSN, RETH DMA length and UDP source port must equal
# tshark's (-T fields), and the CM fields of every CM MAD too. Traces: samples/*/*.pcap*,
# ../shared/captures (skipped when absent), agentxdp-synth traces (NAK, RNR, CNP, ECN, IPv6,
# VLAN, snaplen) and crafted traces built by tests/fuzz/gen_seeds.py.
# Where tshark is not the reference (its own bugs, a link type it cannot read, frames the IBA
# calls malformed), the crafted trace's NAME.expect says so and why, and the decoder is checked
# against the values the frame was built with instead.
. "$(dirname "$0")/../lib.sh"

DEC=$TOP/build/decode_fields
if ! command -v tshark >/dev/null 2>&1; then
	skip_or_fail_in_ci decode-vs-tshark "tshark not installed (scripts/deps.sh installs it)"
	exit 0
fi
if [ ! -x "$DEC" ]; then
	fail decode-vs-tshark "$DEC not built (run make all)"
	exit 1
fi
work=$(tmpdir)
trap 'rm -rf "$work"' EXIT

# One tshark pass per trace (tshark starts slowly): the compared fields, then what selects and
# splits rows: UDP destination port, MAD class, CM fields (columns 10-21).
TS_FIELDS=(-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn
	-e infiniband.bth.a -e infiniband.aeth.syndrome -e infiniband.aeth.msn
	-e infiniband.reth.dmalen -e udp.srcport
	-e udp.dstport -e infiniband.mad.mgmtclass -e infiniband.mad.attributeid
	-e infiniband.cm.req.localqpn -e infiniband.cm.rep.localqpn -e infiniband.cm.req.startpsn
	-e infiniband.cm.rep.startpsn -e infiniband.cm.req -e infiniband.cm.rep
	-e infiniband.cm.rtu.localcommid -e infiniband.cm.rej.localcommid
	-e infiniband.cm.dreq.localcommid -e infiniband.lrh.lnh)
# Trap (../shared/captures/README.md): the heuristic rpcordma and nvme-rdma dissectors claim
# RoCE payloads. Disabling them costs nothing: the fields compared here are all InfiniBand's.
TS_BASE=(--disable-protocol rpcordma --disable-protocol nvme-rdma)

# run_tshark FILE OUT [decode-as args]: every frame's fields.
run_tshark() {
	local f=$1 out=$2
	shift 2
	# occurrence=l: in a mirror session's tunnel (VXLAN: two UDP headers) the innermost
	# header is the RoCE packet's.
	tshark "${TS_BASE[@]}" "$@" -r "$f" -T fields -E separator=/t -E occurrence=l "${TS_FIELDS[@]}" \
		>"$out" 2>/dev/null
}

# compare NAME TSHARK_OUT DECODER_OUT EXPECT_FILE: one PASS or FAIL line for NAME.
compare() {
	local name=$1 ts=$2 dec=$3 exp=$4 res
	res=$(awk -F'\t' -v OFS='\t' '
		FILENAME == ARGV[1] { ts[$1] = $0; frames[$1] = 1; next }
		FILENAME == ARGV[2] { dec[$1] = $0; frames[$1] = 1; next }
		FILENAME == ARGV[3] {
			rule[$1] = $2
			if ($2 == "spec") {
				w = $1; for (i = 3; i <= 10; i++) w = w "\t" $i
				want[$1] = w; why[$1] = $11
			} else {
				want[$1] = $1 "\t!" $3; why[$1] = $4
			}
			next
		}
		END {
			for (f in frames) {
				n++
				if (f in rule) {
					spec++
					if (dec[f] != want[f]) {
						bad++
						if (bad <= 5) msg = msg " | frame " f " (" why[f] "): decoder \"" dec[f] "\" expected \"" want[f] "\""
					} else reasons[why[f]] = 1
					continue
				}
				if (ts[f] != dec[f]) {
					bad++
					if (bad <= 5) msg = msg " | frame " f ": tshark \"" ts[f] "\" decoder \"" dec[f] "\""
				}
			}
			for (f in rule) if (!(f in frames)) { bad++; msg = msg " | frame " f " expected but absent" }
			printf "%d %d %d%s\n", n, spec, bad, msg
		}' "$ts" "$dec" "$exp")
	local n spec bad
	read -r n spec bad _ <<<"$res"
	if [ "$bad" -ne 0 ]; then
		fail "$name" "$bad of $n packets differ:${res#* * * }"
	elif [ "$spec" -gt 0 ]; then
		pass "$name: $n packets equal ($((n - spec)) to tshark, $spec to the spec where tshark is wrong)"
	else
		pass "$name: $n packets, every field equal to tshark's"
	fi
}

# check_trace FILE [EXPECT_FILE] [--need-roce]
check_trace() {
	local f=$1 exp=${2:-/dev/null} need=${3:-} base ports p das=()
	base=$(basename "$f")
	run_tshark "$f" "$work/all"
	# Trap: tshark's UDP dissector tries the lower port first, so RoCE v2 sent from a
	# well-known source port (53, 123, ...) is shown as DNS, NTP, ... Decode those ports as
	# InfiniBand and read again.
	ports=$(awk -F'\t' '$10 == 4791 && $2 == "" && $9 < 4791 { print $9 }' "$work/all" | sort -un)
	if [ -n "$ports" ]; then
		for p in $ports; do das+=(-d "udp.port==$p,infiniband"); done
		echo "note: $base: RoCE from well-known source ports, tshark told: ${das[*]}"
		run_tshark "$f" "$work/all" "${das[@]}"
	fi
	# RoCE rows only: an opcode, and either no UDP (RoCE v1, native IB) or the RoCE port (not
	# other traffic a decode-as above turned into "InfiniBand"). Native IB (an LRH, column 22)
	# counts whatever it carries: UDP in IPoIB is payload, not the packet's port.
	awk -F'\t' -v OFS='\t' '$2 != "" && ($10 == "" || $10 == 4791 || $22 != "") {
		if ($22 != "") $9 = ""
		print $1, $2, $3, $4, $5, $6, $7, $8, $9 >"'"$work/ts"'"
		if ($11 == "0x07")
			print $1, $12, $13 $14, $15 $16, $17 $18 $19 $20 $21 >"'"$work/ts-cm"'"
	}' "$work/all"
	touch "$work/ts" "$work/ts-cm"
	"$DEC" "$f" 2>/dev/null | cut -f1-9 >"$work/dec"
	"$DEC" --cm "$f" 2>/dev/null >"$work/dec-cm"
	if [ -n "$need" ] && [ ! -s "$work/ts" ]; then
		fail "decode-vs-tshark $base" "tshark found no RoCE packet in a trace that has some"
		rm -f "$work/ts" "$work/ts-cm"
		return
	fi
	compare "decode-vs-tshark $base" "$work/ts" "$work/dec" "$exp"
	# CM on QP1: attribute, local QPN and starting PSN (REQ/REP), local communication ID.
	if [ -s "$work/ts-cm" ] || [ -s "$work/dec-cm" ]; then
		compare "decode-vs-tshark-cm $base" "$work/ts-cm" "$work/dec-cm" /dev/null
	fi
	rm -f "$work/ts" "$work/ts-cm"
}

found=0
for f in "$TOP"/samples/*/*.pcap "$TOP"/samples/*/*.pcapng; do
	[ -f "$f" ] || continue
	found=1
	check_trace "$f"
done
[ $found -eq 1 ] || echo "note: no samples/*/*.pcap* yet; the shared and crafted traces still run"

if have_shared; then
	for f in "$SHARED_CAPTURES"/*.pcap "$SHARED_CAPTURES"/*.dump "$SHARED_CAPTURES"/ib/*.pcap*; do
		[ -f "$f" ] || continue
		check_trace "$f" /dev/null --need-roce
	done
else
	skip decode-vs-tshark-shared "no ../shared/captures here"
fi

# The synthesizer's traces carry what the public captures lack: NAKs, RNR NAKs, CNPs, ECN-CE,
# atomics, IPv6, VLAN tags, snaplen-trimmed frames.
SYNTH=$BIN/agentxdp-synth
if [ -x "$SYNTH" ]; then
	synth() {
		local name=$1
		shift
		mkdir -p "$work/synth/$name"
		"$SYNTH" -q -o "$work/synth/$name/$name" --duration 100us "$@" ||
			fail "decode-vs-tshark-synth $name" "agentxdp-synth $* failed"
	}
	synth lossy-mixed.pcapng --workload mixed --fault link=leaf1-spine0,kind=loss,size=3%
	synth ecn-cnp.pcapng --load 60% --fault 'link=leaf0-spine0,dir=spine0>leaf0,kind=ecn,size=30%'
	synth v6-vlan-snaplen.pcap --ipv6 --vlan 100 --snaplen 128 --format pcap --workload mixed
	synth rnr-rpc.pcapng --workload rpc --host-fault host=198.18.0.12,kind=rnr
	for f in "$work"/synth/*/*.pcap*; do
		check_trace "$f" /dev/null --need-roce
	done
else
	skip decode-vs-tshark-synth "bin/agentxdp-synth not built"
fi

if python3 "$TOP/tests/fuzz/gen_seeds.py" --traces "$work" >/dev/null; then
	for f in "$work"/crafted-*.pcap; do
		check_trace "$f" "${f%.pcap}.expect"
	done
else
	fail decode-vs-tshark-crafted "tests/fuzz/gen_seeds.py --traces failed"
fi
[ "$T_FAILED" -eq 0 ]
