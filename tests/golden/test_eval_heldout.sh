#!/usr/bin/env bash
# test_eval_heldout.sh: eval/matrix_heldout.txt stays held out (issue #17, round 23). Its
# cells parse like the matrix's, no name is shared with eval/matrix.txt (a cell's name salts
# its fault draws, so a shared name would rerun a tuned cell), and no held-out fabric
# (hosts/leaves/spines) is one the matrix has: a fabric tuned on is not held out.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || { skip eval-heldout "python3 is not installed"; exit 0; }
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(cd "$root" && python3 - <<'PY'
import sys
sys.path.insert(0, "eval")
import matrix_eval as m
tuned = m.parse_matrix("eval/matrix.txt")
held = m.parse_matrix("eval/matrix_heldout.txt")
fabric = lambda c: (c["hosts"], c["leaves"], c["spines"])
print("enough", len(held) >= 8 and sum(not c["faults"] for c in held) >= 3)
print("targets", all(c["target"] == "yes" for c in held))
print("shared names", sorted({c["name"] for c in held} & {c["name"] for c in tuned}))
print("tuned fabrics", sorted({fabric(c) for c in held} & {fabric(c) for c in tuned}))
PY
) || { fail eval-heldout "matrix_eval.py could not read the matrices"; exit 0; }
expect_eq "eval-heldout: 8 cells or more, 3 of them healthy" "enough True" \
	"$(grep '^enough' <<<"$out")"
expect_eq "eval-heldout: every cell held to the targets" "targets True" \
	"$(grep '^targets' <<<"$out")"
expect_eq "eval-heldout: no name shared with the matrix" "shared names []" \
	"$(grep '^shared' <<<"$out")"
expect_eq "eval-heldout: no fabric the matrix has" "tuned fabrics []" \
	"$(grep '^tuned' <<<"$out")"
# The seed guard: a run may not mix tuning seeds (1001-99999) with either reporting range.
for range in "999 2" "99999 2"; do
	set -- $range
	msg=$(cd "$root" && FIRST_SEED=$1 SEEDS=$2 EVAL_OUT=/dev/null python3 eval/matrix_eval.py run 2>&1)
	rc=$?
	expect_eq "eval-heldout: seeds $1 and up refused as straddling" "1 straddle" \
		"$([ $rc -ne 0 ] && echo 1 || echo 0) $(grep -o straddle <<<"$msg" | head -1)"
done
exit 0
