#!/usr/bin/env bash
# test_eval_blind.sh: eval/matrix_eval.py scores a leaf-spine cable fault without a topology
# (mode blind). The analyzer cannot name the cable then; it can say that connections of
# several hosts are hurt together (a `fabric` finding, issue #17 item 4). Such a finding names
# the fault when at least half of the connections it lists cross the cable, in either
# direction (truth.json's path and reverse_path); a fabric finding over other connections, a
# host pair or a host does not. Cells with a cable fault are run blind; healthy cells and
# host faults keep mode hosts.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || { skip eval-blind "python3 is not installed"; exit 0; }

got=$(cd "$(dirname "$0")/../.." && python3 - <<'PY'
import sys
sys.path.insert(0, "eval")
import matrix_eval as m

truth = {"qps": [
    {"requester": "h1", "requester_qpn": 11, "responder": "h5", "responder_qpn": 51,
     "path": ["h1-leaf0", "leaf0-spine1", "leaf1-spine1", "h5-leaf1"],
     "reverse_path": ["h5-leaf1", "leaf1-spine1", "leaf0-spine1", "h1-leaf0"]},
    {"requester": "h2", "requester_qpn": 12, "responder": "h6", "responder_qpn": 62,
     "path": ["h2-leaf0", "leaf0-spine0", "leaf1-spine0", "h6-leaf1"],
     "reverse_path": ["h6-leaf1", "leaf1-spine1", "leaf0-spine1", "h2-leaf0"]},
    {"requester": "h3", "requester_qpn": 13, "responder": "h7", "responder_qpn": 73,
     "path": ["h3-leaf0", "leaf0-spine0", "leaf1-spine0", "h7-leaf1"],
     "reverse_path": ["h7-leaf1", "leaf1-spine0", "leaf0-spine0", "h3-leaf0"]}]}
fault = {"where": "fabric", "kind": "slowx", "subject": "leaf0-spine1"}
m.mark_crossing(fault, truth)

def finding(kind, flows, level="alert"):
    return {"subject_kind": kind, "subject": "fabric (2 host pairs)", "kind": "slow",
            "level": level, "evidence": {"flows": [{"dst": d, "dst_qpn": q} for d, q in flows]}}

out = [
    m.names_fault(finding("fabric", [("h5", 51), ("h2", 12)]), fault, False),  # both cross
    m.names_fault(finding("fabric", [("h5", 51), ("h7", 73)]), fault, False),  # half
    m.names_fault(finding("fabric", [("h7", 73), ("h3", 13), ("h1", 11)]), fault, False),
    m.names_fault(finding("fabric", []), fault, False),                        # lists none
    m.names_fault(finding("path", [("h5", 51)]), fault, False),                # a host pair
    m.names_fault(finding("fabric", [("h5", 51)]), fault, True),               # topo: a link
]
c, _ = m.score([finding("fabric", [("h7", 73)]), finding("fabric", [("h1", 11)], "alert")],
               [dict(fault, seen=1, dirs=[])], False)
out += [c["top1"], c["top3"], c["right"], c["alerts"]]
cell = lambda where: {"faults": [{"where": where}]}
out += [" ".join(m.modes(cell("fabric"))), " ".join(m.modes(cell("host"))),
        " ".join(m.modes({"faults": []}))]
print(" ".join(str(x) for x in out))
PY
)
expect_eq "eval-blind: a fabric finding names a cable when half its connections cross it" \
	"True True False False False False 0 1 1 2 topo blind topo hosts topo hosts" "$got"
exit 0
