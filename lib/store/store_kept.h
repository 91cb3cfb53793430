/*
 * store_kept.h: the kept rows' database of one table (lib/store only). With
 * STORE_SAMPLES_FINDINGS the kept flows' spilled rows are read back early, on a connection
 * of their own (the store's may be busy on another thread), into a file beside the store,
 * indexed there by SQLite's sorter, and copied into the store's empty table at the commit by
 * one INSERT ... SELECT *, which SQLite runs as a transfer: the rows in rowid order and the
 * index entries in key order, each appended, instead of an index kept up row by row.
 */
#ifndef AGENTXDP_STORE_KEPT_H
#define AGENTXDP_STORE_KEPT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

struct store_kept {
	sqlite3 *db;		/* its own connection, until built */
	const char *schema;	/* its name on the store's connection (ATTACH ... AS) */
	const char *table;	/* its one table, made as the store's table it is copied into */
	const char *what;	/* for messages: "kept latency samples" */
	const char *path;	/* the store's final name, for messages */
	int *failed;		/* the part's first SQLite error code, and its message */
	char *errmsg;
	size_t errlen;
	bool built;		/* filled, indexed and closed: store_kept_copy() copies it */
};

/*
 * The file BASE + SUFFIX, attached to DB as k->schema (so before DB's transaction: ATTACH
 * cannot run in one) and opened on k's own connection, its table made with COLUMNS_SQL;
 * unlinked at once, as the spills are, so that nothing is left behind. k's names and error
 * fields are the caller's. SQLITE_OK, or an SQLite error code (k->db's message if it is open).
 */
int store_kept_open(struct store_kept *k, sqlite3 *db, const char *base, const char *suffix,
		    const char *columns_sql);
/*
 * In one transaction: fill(ctx), which inserts the rows on k->db and finalizes its
 * statements (its errors in *k->failed), then the index on INDEX_COLUMNS_SQL; then the
 * connection closed, so that the store's may read the file. From one thread while no other
 * uses k.
 */
void store_kept_build(struct store_kept *k, const char *index_columns_sql, void (*fill)(void *ctx), void *ctx);
/* Once built: its rows into DB's table DEST, empty until then. 0, or -1 (noted in *k->failed). */
int store_kept_copy(struct store_kept *k, sqlite3 *db, const char *dest);
/* Its connection, if still open (after the caller's statements on it are finalized). */
void store_kept_close(struct store_kept *k);

#endif
