#!/usr/bin/env bash
# test_layout.sh: the tree keeps the layout docs/lib.md describes (one library, thin tools).
#   - every library source is declared in lib/build.mk, and only there;
#   - each lib/ part includes only the parts docs/lib.md lets it call;
#   - no tool folder includes another tool folder, and lib/ includes none;
#   - no test includes a .c file;
#   - the version is defined once (the Makefile);
#   - each tool folder can be deleted and every other tool still builds.
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || exit 1
TOOL_DIRS="analyze capture report drops nicstat samples testbed eval"

# Declared sources: exactly the .c files under lib/, all in lib/build.mk.
declared=$(grep -o 'lib/[a-z_]*/[a-z_0-9]*\.c' lib/build.mk | sort)
present=$(git ls-files 'lib/*.c' 2>/dev/null | sort)
[ -n "$present" ] || present=$(find lib -name '*.c' | sort)
expect_eq "layout: lib/build.mk declares every lib/ source" "$present" "$declared"
others=$(grep -l 'lib/[a-z_]*/[a-z_0-9]*\.c' -- */build.mk Makefile | grep -v '^lib/build.mk$' | tr '\n' ' ')
expect_eq "layout: no other build file declares lib/ sources" "" "$others"

# The "may call" table of docs/lib.md against the includes.
bad=""
while IFS='|' read -r _ part _ calls _; do
	part=$(echo "$part" | tr -d ' ')
	[ -d "lib/$part" ] || continue
	allowed=" $part $(echo "$calls" | xargs) "
	for dep in $(grep -ho '#include "lib/[a-z_]*/' lib/"$part"/*.[ch] | sed 's#.*"lib/##; s#/##' | sort -u); do
		[[ "$allowed" == *" $dep "* ]] || bad="$bad $part->$dep"
	done
done < <(grep '^| [a-z]* |' docs/lib.md)
expect_eq "layout: lib/ parts include only what docs/lib.md allows" "" "$bad"
undoc=""
for d in lib/*/; do
	d=${d#lib/}; d=${d%/}
	grep -q "^| $d |" docs/lib.md || undoc="$undoc $d"
done
expect_eq "layout: docs/lib.md describes every lib/ part" "" "$undoc"

cross=""
for d in $TOOL_DIRS; do
	for o in $TOOL_DIRS; do
		[ "$o" = "$d" ] && continue
		grep -l "#include \"$o/" "$d"/*.[ch] 2>/dev/null | sed "s#\$# includes $o/#" | tr '\n' ' ' |
			while read -r line; do [ -n "$line" ] && echo "$line"; done
	done
done | tr '\n' ' ' | sed 's/ *$//' >/tmp/agentxdp-layout.$$
cross=$(cat /tmp/agentxdp-layout.$$)
rm -f /tmp/agentxdp-layout.$$
expect_eq "layout: no tool folder includes another" "" "$cross"
libtool=$(grep -lE "#include \"($(echo $TOOL_DIRS | tr ' ' '|'))/" lib/*/*.[ch] | tr '\n' ' ')
expect_eq "layout: lib/ includes no tool folder" "" "$libtool"
cinc=$(grep -lE '#include "[^"]*\.c"' tests/*/*.c | tr '\n' ' ')
expect_eq "layout: no test includes a .c file" "" "$cinc"
ver=$(grep -rlE '#define AGENTXDP_VERSION' --include=*.c --include=*.h . | tr '\n' ' ')
expect_eq "layout: the version is defined only by the Makefile" "" "$ver"

# Size: no source file over 1,200 lines, no function over 120 (outside tests). A function
# is a body from "{" in column 0 to "}" in column 0, the kernel style every file uses.
big=$(git ls-files '*.c' '*.h' | grep -v '^tests/' | xargs wc -l | awk '$2 != "total" && $1 > 1200 {print $2 "(" $1 ")"}' | tr '\n' ' ')
expect_eq "layout: no source file over 1,200 lines" "" "$big"
long=$(for f in $(git ls-files '*.c' | grep -v '^tests/'); do
	awk -v F="$f" '/^[A-Za-z_].*\(/ { sig = $0 } /^\{/ { start = NR } \
		/^\}/ { if (start && NR - start + 1 > 120) printf "%s:%d(%d) ", F, start, NR - start + 1; start = 0 }' "$f"
done)
expect_eq "layout: no function over 120 lines" "" "$long"

# Hide each tool folder in turn: every other tool, the unit tests and the test helpers build.
# The copy starts from this tree's build (timestamps kept) with bin/ and the hidden folder's
# objects removed, so every tool is linked again against the library archives.
if [ ! -x bin/agentxdp-analyze ]; then
	fail "layout: tool folders" "build first (make all)"
	exit 0
fi
T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
for d in $TOOL_DIRS; do
	w="$T/$d"
	mkdir -p "$w"
	git ls-files -z | grep -zv "^$d/" | grep -zv '^samples/.*\.pcap' | xargs -0 cp -a --parents -t "$w" 2>/dev/null
	cp -a build "$w/build"
	rm -rf "$w/build/obj/$d" "$w/build/san/$d" "$w/bin"
	if make -C "$w" -j2 all >"$T/$d.log" 2>&1; then
		missing=""
		own=" $(sed -n 's#^TOOLS *+= *\$(BIN)/\(.*\)#bin/\1#p' "$d/build.mk" | tr '\n' ' ') "
		for tool in bin/agentxdp-*; do
			[[ "$own" == *" $tool "* ]] && continue
			[ -x "$w/$tool" ] || missing="$missing $tool"
		done
		expect_eq "layout: builds without $d/" "" "$missing"
	else
		fail "layout: builds without $d/" "$(grep -m1 -E 'error|No rule' "$T/$d.log")"
	fi
	rm -rf "$w"
done
