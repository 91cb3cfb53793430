#!/usr/bin/env bash
# test_analyze_shared.sh: agentxdp-analyze on the public captures in ../shared/captures against
# independent counts from tshark fields: packets per flow (source, destination, destination QPN)
# and, for RC flows that carry responses, which request flow they answer (the one whose request
# PSNs hold the response PSNs, worked out here from tshark's fields alone).
. "$(dirname "$0")/../lib.sh"

ANALYZE=$BIN/agentxdp-analyze

if ! have_shared; then
	skip analyze-shared "../shared/captures is absent"
	exit 0
fi
for tool in tshark sqlite3 python3; do
	command -v $tool >/dev/null || { skip analyze-shared "$tool not installed"; exit 0; }
done
[ -x "$ANALYZE" ] || { fail analyze-shared "$ANALYZE not built"; exit 1; }

dir=$(tmpdir)
trap 'rm -rf "$dir"' EXIT

# tshark with the README's traps disabled (heuristic RPC-over-RDMA / NVMe dissectors).
tshark_fields() {
	tshark -r "$1" --disable-protocol rpcordma --disable-protocol nvme-rdma -Y infiniband -T fields \
		-E occurrence=f -e ip.src -e ip.dst -e ipv6.src -e ipv6.dst -e infiniband.grh.sgid \
		-e infiniband.grh.dgid -e infiniband.bth.destqp -e infiniband.bth.opcode \
		-e infiniband.bth.psn 2>/dev/null
}

for cap in "$SHARED_CAPTURES"/*.pcap "$SHARED_CAPTURES"/*.dump; do
	[ -f "$cap" ] || continue
	name=$(basename "$cap")
	db="$dir/$name.db"
	if ! "$ANALYZE" -q "$cap" -o "$db" 2>"$dir/err"; then
		fail "analyze-shared $name" "agentxdp-analyze failed: $(head -n 1 "$dir/err")"
		continue
	fi
	tshark_fields "$cap" >"$dir/fields.tsv"
	sqlite3 -separator $'\t' "$db" "SELECT q.id, q.src_ip, q.dst_ip, q.dst_qpn, q.packets,
		IFNULL(p.src_ip || '|' || p.dst_ip || '|' || p.dst_qpn, '') FROM qp q LEFT JOIN qp p ON p.id = q.peer_qp_id" \
		>"$dir/qp.tsv"
	if out=$(python3 - "$dir/fields.tsv" "$dir/qp.tsv" <<'EOF'
import sys
from collections import defaultdict

def addr(a):
    a = a.strip()
    return a[7:] if a.startswith('::ffff:') and '.' in a else a

packets = defaultdict(int)
req_psns = defaultdict(set)    # flow -> request PSNs (opcode low bits 0..0x0c, 0x13, 0x14, 0x16, 0x17)
resp_psns = defaultdict(set)   # flow -> PSNs of ACK / READ responses / atomic ACKs
for line in open(sys.argv[1]):
    f = line.rstrip('\n').split('\t')
    if len(f) < 9 or not f[6]:
        continue
    src = f[0] or f[2] or addr(f[4])
    dst = f[1] or f[3] or addr(f[5])
    key = (addr(src), addr(dst), int(f[6], 16))
    packets[key] += 1
    op, psn = int(f[7]), int(f[8])
    tr, low = op >> 5, op & 0x1f
    if tr in (0, 5):  # RC, XRC
        if low <= 0x0c or low in (0x13, 0x14, 0x16, 0x17):
            req_psns[key].add(psn)
        elif 0x0d <= low <= 0x12:
            resp_psns[key].add(psn)

analyzed = {}
peer = {}
for line in open(sys.argv[2]):
    i, s, d, q, n, p = line.rstrip('\n').split('\t')
    analyzed[(s, d, int(q))] = int(n)
    peer[(s, d, int(q))] = p

bad = []
for k in set(packets) | set(analyzed):
    if packets.get(k, 0) != analyzed.get(k, 0):
        bad.append('%s packets tshark=%d analyzed=%d' % (k, packets.get(k, 0), analyzed.get(k, 0)))

# Pairing: the request flow in the other direction whose PSN range holds most response PSNs.
checked = 0
for k, psns in resp_psns.items():
    best, best_hits = None, 0
    for r, rp in req_psns.items():
        if r[0] != k[1] or r[1] != k[0]:
            continue
        lo, hi = min(rp), max(rp)
        hits = sum(1 for p in psns if lo - 1 <= p <= hi + 4096)
        if hits > best_hits:
            best, best_hits = r, hits
    if best is None:
        continue
    checked += 1
    want = '%s|%s|%d' % best
    if peer.get(k, '') != want:
        bad.append('%s pairs with %s by PSNs, analyzer says %r' % (k, want, peer.get(k, '')))
    # and the other way: the request flow names this response flow as its peer
    back = '%s|%s|%d' % k
    if peer.get(best, '') != back:
        bad.append('%s answered by %s by PSNs, analyzer says %r' % (best, back, peer.get(best, '')))
print('%d flows, %d response flows paired' % (len(packets), checked))
for b in bad[:5]:
    print(b)
sys.exit(1 if bad or not packets else 0)
EOF
	); then
		pass "analyze-shared $name ($out)"
	else
		fail "analyze-shared $name" "$(echo "$out" | tr '\n' ';')"
	fi
done
exit 0
