#!/usr/bin/env bash
# test_xdp_prog.sh: roce_capture.bpf.c on crafted frames through BPF_PROG_TEST_RUN (needs root).
. "$(dirname "$0")/../lib.sh"
prog="$TOP/build/tests-bpf/test_xdp_prog"
if [ ! -x "$prog" ]; then
	fail xdp-prog "$prog not built (make all)"
elif ! need_root; then
	skip_or_fail_in_ci xdp-prog "needs root for BPF_PROG_TEST_RUN"
else
	"$prog"
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 1 ] || fail xdp-prog "test_xdp_prog exited $rc"
fi
exit 0
