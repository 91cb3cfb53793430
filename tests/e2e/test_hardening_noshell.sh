#!/usr/bin/env bash
# test_hardening_noshell.sh: no C source hands text to a shell (system, popen, exec of
# "sh -c"). (Every tool's --help and usage errors: test_hardening_cli.sh.)
. "$(dirname "$0")/../lib.sh"

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT

# shell_calls DIR...: the lines that would run a shell. Comments are not code: drop
# // lines and lines inside /* */ blocks' leading " * ".
shell_calls() {
	grep -rnE --include='*.c' --include='*.h' \
		'(^|[^_[:alnum:]])(system|popen)[[:space:]]*\(|(^|[^_[:alnum:]])exec(l|lp|le|v|vp|vpe)[[:space:]]*\(.*"(/bin/)?(ba)?sh"|"/bin/(ba)?sh"[[:space:]]*,[[:space:]]*"-c"|"-c"[[:space:]]*,.*\b(sh|bash)\b' \
		"$@" 2>/dev/null | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(//|\*|/\*)'
}

# The check must see a real call: plant one in a scratch tree.
mkdir -p "$T/src"
printf 'int f(const char *c)\n{\n\treturn system(c);\n}\n' >"$T/src/a.c"
printf 'void g(void)\n{\n\texeclp("sh", "sh", "-c", "x", (char *)0);\n}\n' >"$T/src/b.c"
printf '/* system(3) is not used here */\nint popen_count;\n' >"$T/src/c.c"
expect_eq noshell-check-detects 2 "$(shell_calls "$T/src" | wc -l)"

dirs=()
for d in analyze capture drops nicstat report samples testbed bpf; do
	[ -d "$TOP/$d" ] && dirs+=("$TOP/$d")
done
hits=$(shell_calls "${dirs[@]}")
if [ -z "$hits" ]; then pass noshell-sources; else
	fail noshell-sources "$(echo "$hits" | head -n 3 | tr '\n' ' ')"; fi

exit "$T_FAILED"
