#!/usr/bin/env bash
# compare_analyze_db.sh: the same database from two agentxdp-analyze builds (a store change
# must not change a row). For every samples/*/ trace (with its links.csv and paths.csv), in
# --samples findings (the default) and all, and for every extra TRACE given: `sqlite3 .dump`
# of both, equal except meta analysis_seconds and created_ns (the run's clock).
# COMPARE_DB_IGNORE=ERE drops the dump lines it matches on both sides (a schema change's
# expected difference), e.g. COMPARE_DB_IGNORE='retransmission|^INSERT INTO meta VALUES..schema'
# Usage: tests/bench/compare_analyze_db.sh OLD_ANALYZE NEW_ANALYZE [TRACE...]
# e.g. cp bin/agentxdp-analyze /tmp/old; (change, make); compare_analyze_db.sh /tmp/old bin/agentxdp-analyze
# Prints one line per database and exits 1 on the first difference.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OLD_ANALYZE NEW_ANALYZE [TRACE...]" >&2; exit 2; }
old=$1 new=$2
shift 2
cd "$(dirname "$0")/../.."
command -v sqlite3 >/dev/null || { echo "compare_analyze_db: sqlite3 not installed" >&2; exit 2; }
work=$(mktemp -d /tmp/agentxdp-compare-db.XXXXXX)
trap 'rm -rf "$work"' EXIT

# dump BIN OUT ARGS...: the database's dump without the run's own time.
dump() {
	local bin=$1 out=$2
	shift 2
	rm -f "$work/x.db"
	"$bin" -q "$@" -o "$work/x.db" >/dev/null 2>"$work/err" ||
		{ echo "compare_analyze_db: $bin $*: $(head -n 1 "$work/err")" >&2; return 1; }
	sqlite3 "$work/x.db" .dump | grep -v -E "^INSERT INTO meta VALUES\('(analysis_seconds|created_ns)'," |
		if [ -n "${COMPARE_DB_IGNORE:-}" ]; then grep -v -E "$COMPARE_DB_IGNORE"; else cat; fi >"$out"
}

# same NAME ARGS...: both builds on ARGS, dumps compared.
same() {
	local name=$1
	shift
	dump "$old" "$work/old.sql" "$@" && dump "$new" "$work/new.sql" "$@" || exit 1
	if cmp -s "$work/old.sql" "$work/new.sql"; then
		echo "same: $name ($(wc -l <"$work/new.sql") dump lines)"
	else
		echo "DIFFERENT: $name" >&2
		diff "$work/old.sql" "$work/new.sql" | head -n 20 >&2
		exit 1
	fi
}

for d in samples/*/; do
	[ -s "$d/trace.pcapng" ] || continue
	args=("$d/trace.pcapng")
	[ -s "$d/links.csv" ] && args+=(--topology "$d/links.csv")
	[ -s "$d/paths.csv" ] && args+=(--paths "$d/paths.csv")
	same "$d (findings)" "${args[@]}"
	same "$d (all)" "${args[@]}" --samples all
done
for t in "$@"; do
	same "$t (findings)" "$t"
done
echo "compare_analyze_db: all the same"
