#!/usr/bin/env bash
# test_eval_fault_seen.sh: eval/matrix_eval.py counts a host fault as seen only through the
# reliable connections it can act on. A slow responder delays ACKs and READ responses; a
# host that only serves UC and UD requests answers none, so its fault leaves no trace and is
# not a miss (slowresp-each-mixed 3112: two UC connections to the slow host, 3,072 packets,
# scored a miss before). RNR acts on SENDs only: a host that serves WRITEs never sends an RNR
# NAK (ho6-rnr150-36, write workload, was scored 4 hits of 18 runs with no RNR NAK in the
# traces). A NIC's early timer acts only on connections whose timer expired: a host whose
# answers all came in time shows nothing (ho22-nicrt15-36, mixed workload: 0 timeouts in 3
# of 12 runs). Link faults count every packet crossing the link, as before.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || { skip eval-fault-seen "python3 is not installed"; exit 0; }

got=$(cd "$(dirname "$0")/../.." && python3 - <<'PY'
import sys
sys.path.insert(0, "eval")
import matrix_eval as m

def qp(transport, req, resp, n, ops="write", timeouts=0):
    return {"transport": transport, "requester": req, "responder": resp, "request_packets": n,
            "ops": ops, "timeouts": timeouts}

truth = {"qps": [qp("UC", "h1", "h9", 1536), qp("UD", "h2", "h9", 100), qp("RC", "h9", "h3", 7, timeouts=2),
                 qp("RC", "h4", "h8", 40), qp("UC", "h5", "h8", 1000),
                 qp("RC", "h6", "h7", 25, "send"), qp("UC", "h5", "h7", 30, "send"),
                 qp("RC", "h10", "h3", 12)],
         "links": [{"link": "leaf0-spine0", "dir": "a>b", "packets": 11},
                   {"link": "leaf0-spine0", "dir": "b>a", "packets": 5}]}
node = lambda kind, host: {"where": "node", "kind": kind, "subject": host}
print(m.fault_seen(node("slow-responder", "h9"), truth),   # UC/UD only: 0
      m.fault_seen(node("slow-responder", "h8"), truth),   # its RC connection: 40
      m.fault_seen(node("rnr", "h8"), truth),              # WRITEs only: 0
      m.fault_seen(node("rnr", "h7"), truth),              # its RC SENDs: 25
      m.fault_seen(node("nic-retransmit", "h9"), truth),   # as a requester, RC, timed out: 7
      m.fault_seen(node("nic-retransmit", "h10"), truth),  # its timer never expired: 0
      m.fault_seen({"where": "link", "subject": "leaf0-spine0", "dirs": ["a>b", "b>a"]}, truth))
PY
)
expect_eq "eval-fault-seen: host faults seen through the RC connections they act on" "0 40 0 25 7 0 16" "$got"
exit 0
