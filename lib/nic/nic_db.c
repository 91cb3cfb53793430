/* nic_db.c: NIC counter rows (table nic_counter) in the SQLite analysis database. */
#include <errno.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/util/log.h"
#include "lib/nic/nic_db.h"

struct nic_db {
	sqlite3 *db;
	sqlite3_stmt *insert;
};

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS nic_counter ("
	" ts_ns INTEGER NOT NULL,"
	" device TEXT NOT NULL,"
	" port INTEGER NOT NULL,"
	" netdev TEXT NOT NULL,"
	" source TEXT NOT NULL,"
	" counter TEXT NOT NULL,"
	" value INTEGER NOT NULL,"
	" rate_per_s REAL);"
	"CREATE INDEX IF NOT EXISTS nic_counter_by_time ON nic_counter(ts_ns);"
	"CREATE INDEX IF NOT EXISTS nic_counter_by_name ON nic_counter(device, port, counter, ts_ns);";

struct nic_db *nic_db_open(const char *path)
{
	struct nic_db *d = calloc(1, sizeof(*d));
	char *msg = NULL;

	if (!d) {
		pr_err("cannot open %s: %s\n", path, "out of memory");
		return NULL;
	}
	/* Appending to FILE is the point (it may be an analysis database); appending through a
	 * link planted where FILE should be is not: SQLITE_OPEN_NOFOLLOW refuses one. */
	if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
			    NULL) != SQLITE_OK) {
		if (sqlite3_extended_errcode(d->db) == SQLITE_CANTOPEN_SYMLINK)
			msg = sqlite3_mprintf("it is a symbolic link (refused: output is never written through a link)");
		goto fail;
	}
	sqlite3_busy_timeout(d->db, 5000);
	if (sqlite3_exec(d->db, schema_sql, NULL, NULL, &msg) != SQLITE_OK)
		goto fail;
	if (sqlite3_prepare_v2(d->db,
			       "INSERT INTO nic_counter (ts_ns, device, port, netdev, source, counter,"
			       " value, rate_per_s) VALUES (?,?,?,?,?,?,?,?)",
			       -1, &d->insert, NULL) != SQLITE_OK)
		goto fail;
	return d;
fail:
	pr_err("cannot use database %s: %s\n", path, msg ? msg : sqlite3_errmsg(d->db));
	sqlite3_free(msg);
	nic_db_close(d);
	return NULL;
}

int nic_db_write(struct nic_db *d, const struct nic_snapshot *snap)
{
	sqlite3_stmt *st = d->insert;
	size_t i, j;

	if (sqlite3_exec(d->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	for (i = 0; i < snap->n_ports; i++) {
		const struct nic_port *p = &snap->ports[i];

		for (j = 0; j < p->n_counters; j++) {
			const struct nic_counter *c = &p->counters[j];

			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, (sqlite3_int64)snap->ts_ns);
			sqlite3_bind_text(st, 2, p->device, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 3, p->port);
			sqlite3_bind_text(st, 4, p->netdev, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 5, nic_source_name(c->source), -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 6, c->name, -1, SQLITE_STATIC);
			/* SQLite's INTEGER is signed: a counter above 2^63-1 saturates, never goes negative. */
			sqlite3_bind_int64(st, 7, c->value > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)c->value);
			if (c->delta_kind == NIC_DELTA_FIRST)
				sqlite3_bind_null(st, 8);
			else
				sqlite3_bind_double(st, 8, c->rate_per_s);
			if (sqlite3_step(st) != SQLITE_DONE)
				goto rollback;
		}
	}
	if (sqlite3_exec(d->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto rollback;
	return 0;
rollback:
	pr_err("database write failed: %s\n", sqlite3_errmsg(d->db));
	sqlite3_exec(d->db, "ROLLBACK", NULL, NULL, NULL);
	return -EIO;
fail:
	pr_err("database write failed: %s\n", sqlite3_errmsg(d->db));
	return -EIO;
}

void nic_db_close(struct nic_db *d)
{
	if (!d)
		return;
	sqlite3_finalize(d->insert);
	sqlite3_close(d->db);
	free(d);
}
