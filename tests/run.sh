#!/usr/bin/env bash
# tests/run.sh: run every test and end with one line "N passed, N failed[, N skipped]".
#   unit:   build/tests/test_* (cmocka, ASan+UBSan)
#   fuzz:   build/fuzz-replay/fuzz_* over tests/fuzz/corpus/NAME (and regressions)
#   shell:  tests/{golden,e2e,...}/test_*.sh, each printing PASS/FAIL/SKIP lines
# TESTS=pattern limits the run to files whose name contains the pattern.
set -u
cd "$(dirname "$0")/.."
pattern=${TESTS:-}
passed=0 failed=0 skipped=0
log=$(mktemp /tmp/agentxdp-run.XXXXXX)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

selected() { [ -z "$pattern" ] || [[ "$1" == *"$pattern"* ]]; }

for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	selected "$t" || continue
	echo "== $t"
	"$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
	if [ -z "$p" ] && [ -z "$f" ]; then
		echo "FAIL $t: exited $rc without a cmocka summary (crash?)"
		failed=$((failed + 1))
		continue
	fi
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ $rc -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		echo "FAIL $t: exit status $rc (sanitizer report?)"
		failed=$((failed + 1))
	fi
done

for r in build/fuzz-replay/fuzz_*; do
	[ -x "$r" ] || continue
	selected "$r" || continue
	name=${r##*/fuzz_}
	dirs=()
	for d in tests/fuzz/corpus/$name tests/fuzz/regressions/$name; do [ -d "$d" ] && dirs+=("$d"); done
	if [ ${#dirs[@]} -eq 0 ]; then
		echo "FAIL fuzz-replay $name: no corpus in tests/fuzz/corpus/$name"
		failed=$((failed + 1))
		continue
	fi
	if "$r" "${dirs[@]}" >"$log" 2>&1; then
		echo "PASS fuzz-replay $name: $(tail -n 1 "$log")"
		passed=$((passed + 1))
	else
		cat "$log"
		echo "FAIL fuzz-replay $name"
		failed=$((failed + 1))
	fi
done

for s in $(ls tests/*/test_*.sh 2>/dev/null | sort); do
	selected "$s" || continue
	echo "== $s"
	bash "$s" >"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(grep -c '^PASS ' "$log")
	f=$(grep -c '^FAIL ' "$log")
	k=$(grep -c '^SKIP ' "$log")
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + k))
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $s: exit status $rc with no FAIL line"
		failed=$((failed + 1))
	fi
	if [ $((p + f + k)) -eq 0 ]; then
		echo "FAIL $s: printed no PASS/FAIL/SKIP line"
		failed=$((failed + 1))
	fi
	# A tool that renames a temporary file over its output once replaced /dev/null with a
	# regular file, and every later test read junk from it: name the script, repair it.
	if [ ! -c /dev/null ]; then
		echo "FAIL $s: /dev/null is no longer a character device (restored)"
		failed=$((failed + 1))
		[ "$(id -u)" -eq 0 ] && rm -f /dev/null && mknod -m 666 /dev/null c 1 3
	fi
	if [ ! -L /dev/stdout ]; then
		echo "FAIL $s: /dev/stdout is no longer a symbolic link (restored)"
		failed=$((failed + 1))
		[ "$(id -u)" -eq 0 ] && rm -f /dev/stdout && ln -s /proc/self/fd/1 /dev/stdout
	fi
done
rm -f "$log"

[ "$skipped" -gt 0 ] && echo "note: $skipped checks skipped; see the SKIP lines above for why"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
