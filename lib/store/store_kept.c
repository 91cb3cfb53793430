/* store_kept.c: the kept rows' database of one table (store_kept.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/store/store_kept.h"
#include "lib/store/store_latency.h"
#include "lib/store/store_spill.h"

static void note(struct store_kept *k, sqlite3 *db, int rc)
{
	store_note_sqlite_error(k->failed, k->errmsg, k->errlen, k->path, db, rc, k->what);
}

int store_kept_open(struct store_kept *k, sqlite3 *db, const char *base, const char *suffix,
		    const char *columns_sql)
{
	char *path, *attach = NULL, *create = NULL;
	int fd = store_sibling_create(base, suffix, &path), rc = SQLITE_NOMEM;

	if (fd < 0)
		return errno == ENOMEM ? SQLITE_NOMEM : SQLITE_CANTOPEN;
	close(fd);
	attach = sqlite3_mprintf("ATTACH %Q AS %s", path, k->schema);
	/* No journal and no sync: a throwaway file, as the store is until renamed. */
	create = sqlite3_mprintf("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
				 " PRAGMA temp_store=FILE; PRAGMA cache_size=-2048; CREATE TABLE %s %s;",
				 k->table, columns_sql);
	if (attach && create)
		rc = sqlite3_exec(db, attach, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_open_v2(path, &k->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(k->db, create, NULL, NULL, NULL);
	unlink(path);
	sqlite3_free(attach);
	sqlite3_free(create);
	free(path);
	return rc;
}

void store_kept_build(struct store_kept *k, const char *index_columns_sql, void (*fill)(void *ctx), void *ctx)
{
	char *index = sqlite3_mprintf("CREATE INDEX %s_qp ON %s %s;\nCOMMIT", k->table, k->table,
				      index_columns_sql);
	int rc = index ? sqlite3_exec(k->db, "BEGIN", NULL, NULL, NULL) : SQLITE_NOMEM;

	if (rc == SQLITE_OK) {
		fill(ctx);
		if (!*k->failed)
			rc = sqlite3_exec(k->db, index, NULL, NULL, NULL);
	}
	if (rc != SQLITE_OK)
		note(k, k->db, rc);
	sqlite3_free(index);
	store_kept_close(k);
	k->built = !*k->failed;
}

/*
 * In this form, with no column lists, SQLite transfers the rows (its xfer optimization) with
 * their rowids: the kept table's are 1.. in the spill's order, as the store's table's would
 * be, so the same rows in the same order; if the transfer did not apply, SQLite's ordinary
 * insert gives the same rows.
 */
int store_kept_copy(struct store_kept *k, sqlite3 *db, const char *dest)
{
	char *sql = sqlite3_mprintf("INSERT INTO main.%s SELECT * FROM %s.%s", dest, k->schema, k->table);
	int rc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;

	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		note(k, db, rc);
		return -1;
	}
	return 0;
}

/* close_v2: a statement the caller has not finalized yet (a failed build) closes it later. */
void store_kept_close(struct store_kept *k)
{
	sqlite3_close_v2(k->db);
	k->db = NULL;
}
