#!/usr/bin/env bash
# test_hardening_db.sh: issue #22 item 3 and issue #21: agentxdp-analyze -o replaces only an
# AgentXDP analysis database holding nothing but its own tables. A capture, another tool's
# tables, a user's table: exit 2, one line, the file unchanged byte for byte.
. "$(dirname "$0")/../lib.sh"

T=$(tmpdir)
trap 'rm -rf "$T"' EXIT
S="$TOP/samples/lossy-link"
AN=$BIN/agentxdp-analyze
TRACE=$S/trace.pcapng

"$AN" -q "$TRACE" -o "$T/base.db" 2>"$T/err" || fail "db: analyze the sample" "$(head -n 1 "$T/err")"

# refused NAME FILE [ANALYZE OPTIONS...]: analyze -o FILE exits 2 with one line, FILE unchanged.
refused() {
	local name=$1 file=$2
	shift 2
	cp -p "$file" "$T/before"
	"$AN" -q "$TRACE" -o "$file" "$@" >/dev/null 2>"$T/err"
	local rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q 'refusing to replace' "$T/err" &&
		cmp -s "$T/before" "$file" && [ -z "$(ls "$file".tmp-* 2>/dev/null)" ]; then
		pass "$name"
	else
		fail "$name" "exit $rc, $(cmp -s "$T/before" "$file" && echo unchanged || echo CHANGED): $(tr '\n' '|' <"$T/err")"
	fi
}
# with_sql NAME SQL: a copy of the analysis database with SQL applied.
with_sql() {
	cp "$T/base.db" "$T/$1"
	python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.executescript(sys.argv[2]); db.commit()' \
		"$T/$1" "$2"
	echo "$T/$1"
}

# Issue #21: -o naming an existing capture used to replace it with a database.
cp "$TRACE" "$T/existing.pcapng"
refused db-ownership-existing-capture "$T/existing.pcapng"
# agentxdp-nicstat --db and agentxdp-drops --db add their tables to an analysis database.
refused db-ownership-nicstat-table "$(with_sql nic.db 'CREATE TABLE nic_counter (ts_ns INTEGER NOT NULL,
	device TEXT NOT NULL, port INTEGER NOT NULL, netdev TEXT NOT NULL, source TEXT NOT NULL,
	counter TEXT NOT NULL, value INTEGER NOT NULL, rate_per_s REAL);
	INSERT INTO nic_counter VALUES (1, "mlx5_0", 1, "eth0", "hw", "out_of_sequence", 7, NULL);')"
refused db-ownership-drops-table "$(with_sql drops.db 'CREATE TABLE kernel_drop_run (id INTEGER PRIMARY KEY);
	CREATE TABLE kernel_drop (run_id INTEGER, reason TEXT); INSERT INTO kernel_drop VALUES (1, "x");')"
refused db-ownership-user-view "$(with_sql view.db 'CREATE VIEW my_view AS SELECT * FROM qp;')"
refused db-ownership-user-trigger "$(with_sql trig.db 'CREATE TABLE audit (x); CREATE TRIGGER t AFTER INSERT ON qp BEGIN INSERT INTO audit VALUES (1); END;')"
# Another program's database, and a text file.
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("create table users (name text)"); db.execute("insert into users values (\"alice\")"); db.commit()' "$T/other.db"
refused db-ownership-other-database "$T/other.db"
echo "notes, not a database" >"$T/notes.txt"
refused db-ownership-text-file "$T/notes.txt"
# The same rule for the database --report DIR keeps.
mkdir -p "$T/rep"
cp "$T/other.db" "$T/rep/analysis.db"
cp -p "$T/rep/analysis.db" "$T/before"
"$AN" -q "$TRACE" --report "$T/rep" >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && cmp -s "$T/before" "$T/rep/analysis.db" && pass db-ownership-report-folder ||
	fail db-ownership-report-folder "exit $rc: $(tr '\n' '|' <"$T/err")"

# What stays allowed: replacing an analysis database of ours, and an empty file.
cp "$T/base.db" "$T/again.db"
"$AN" -q "$TRACE" --window 100ms -o "$T/again.db" 2>"$T/err"
rc=$?
win=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select value from meta where key = \"window_ns\"").fetchone()[0])' "$T/again.db" 2>/dev/null)
[ $rc -eq 0 ] && [ "$win" = 100000000 ] && pass db-ownership-own-database-replaced ||
	fail db-ownership-own-database-replaced "exit $rc, window_ns '$win': $(head -n 1 "$T/err")"
: >"$T/empty.db"
"$AN" -q "$TRACE" -o "$T/empty.db" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && [ -s "$T/empty.db" ] && pass db-ownership-empty-file-used ||
	fail db-ownership-empty-file-used "exit $rc: $(head -n 1 "$T/err")"
# A version-2 database (latency_hist with rowids and the index latency_hist_qp) is ours too.
v2=$(with_sql v2.db 'DROP TABLE latency_hist; CREATE TABLE latency_hist (qp_id INTEGER NOT NULL,
	kind INTEGER NOT NULL, lo_ns INTEGER NOT NULL, hi_ns INTEGER NOT NULL, count INTEGER NOT NULL);
	CREATE INDEX latency_hist_qp ON latency_hist (qp_id, kind, lo_ns); PRAGMA user_version = 2;')
"$AN" -q "$TRACE" -o "$v2" 2>"$T/err"
rc=$?
ver=$(python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); print(db.execute("pragma user_version").fetchone()[0], db.execute("select count(*) from sqlite_master where name = \"latency_hist_qp\"").fetchone()[0])' "$v2" 2>/dev/null)
cur=$(sed -n 's/^#define STORE_SCHEMA_VERSION \([0-9]*\)$/\1/p' "$TOP/lib/store/store_sqlite.h")
[ $rc -eq 0 ] && [ "$ver" = "${cur:-?} 0" ] && pass db-ownership-version-2-database-replaced ||
	fail db-ownership-version-2-database-replaced "exit $rc, version and old index '$ver': $(head -n 1 "$T/err")"
exit "$T_FAILED"
