/* store_owner.c: which files -o may replace (docs/schema.md, "Ownership"). */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/store/store_owner.h"
#include "lib/util/text_buf.h"
#include "lib/util/util.h"

/*
 * The database-ownership rule (issue #22): -o replaces only a file that is an AgentXDP
 * analysis database holding nothing but what agentxdp-analyze creates. Anything else (a
 * capture, another tool's database, an analysis database to which agentxdp-nicstat,
 * agentxdp-drops or a user added tables, views, indexes or triggers) is refused and left
 * byte for byte as it was: the analysis never drops a table it did not create.
 */
static const struct {
	const char *type, *name;
} own_objects[] = {
	{ "table", "meta" },	      { "table", "capture" },	      { "table", "endpoint" },
	{ "table", "qp" },	      { "table", "sample_kind" },     { "table", "latency_sample" },
	{ "table", "retransmission" }, { "table", "retransmission_burst" }, { "table", "nak" },	      { "table", "cnp" },
	{ "table", "qp_window" },     { "table", "malformed" },       { "table", "finding" },
	{ "table", "latency_window" }, { "table", "latency_hist" },
	{ "index", "latency_window_qp" }, { "index", "latency_hist_qp" }, /* version 2 */
	{ "view", "latency_sample_v" }, { "index", "qp_key" },	      { "index", "latency_sample_qp" },
	{ "index", "retransmission_qp" }, { "index", "retransmission_burst_qp" }, { "index", "nak_qp" },      { "index", "cnp_qp" },
	{ "index", "qp_window_qp" }, { "table", "link" },	      { "table", "flow_link" },
	{ "index", "flow_link_link" },
};

static int own_object(const char *type, const char *name)
{
	/* SQLite's own indexes for PRIMARY KEY/UNIQUE on our tables. */
	if (!strcmp(type, "index") && !strncmp(name, "sqlite_autoindex_", 17))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(own_objects); i++)
		if (!strcmp(type, own_objects[i].type) && !strcmp(name, own_objects[i].name))
			return 1;
	return 0;
}

/* Names of what in DB agentxdp-analyze did not create, into b (empty: nothing). -1 when unreadable. */
static int foreign_objects(sqlite3 *db, struct text_buf *b)
{
	sqlite3_stmt *st;
	int n = 0, rc;

	if (sqlite3_prepare_v2(db, "SELECT type, name FROM sqlite_master ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);

		if (!type || !name || own_object(type, name))
			continue;
		if (n++ < 4)
			text_buf_printf(b, "%s%s %s", n > 1 ? ", " : "", type, name);
	}
	sqlite3_finalize(st);
	if (n > 4)
		text_buf_printf(b, " and %d more", n - 4);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* meta says agentxdp-analyze wrote it. meta is known to be a table here (no view can loop). */
static int analysis_meta(sqlite3 *db)
{
	sqlite3_stmt *st;
	int ok = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM meta WHERE key = 'schema' AND value LIKE 'agentxdp-analyze/%'",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	ok = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return ok;
}

/*
 * May PATH be replaced by a new analysis? 0: yes (missing, empty, or ours alone); -2 with
 * one line in err: no. Only the header is read from a file that is not SQLite.
 */
int store_may_replace(const char *path, char *err, size_t errlen)
{
	static const char sqlite_magic[16] = "SQLite format 3";
	unsigned char head[100];
	struct text_buf foreign = { 0 };
	sqlite3 *db = NULL;
	struct stat st;
	ssize_t n;
	int fd, rc = -2;

	if (stat(path, &st))
		return 0; /* a new name (or one we cannot see: creating it will say why) */
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file (the database must be a file)", path);
		return -2;
	}
	if (st.st_size == 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -2;
	}
	n = read(fd, head, sizeof(head));
	close(fd);
	/* Ours are never in WAL mode (bytes 18-19 are 1 for a rollback journal). */
	if (n != (ssize_t)sizeof(head) || memcmp(head, sqlite_magic, sizeof(sqlite_magic)) || head[18] != 1 ||
	    head[19] != 1) {
		snprintf(err, errlen,
			 "%s: exists and is not an AgentXDP analysis database; refusing to replace it"
			 " (choose another -o, or remove it first)",
			 path);
		return -2;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    foreign_objects(db, &foreign)) {
		snprintf(err, errlen, "%s: exists and cannot be read as a database (%s); refusing to replace it", path,
			 db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	if (foreign.len) {
		snprintf(err, errlen,
			 "%s: holds what agentxdp-analyze did not create (%s); refusing to replace it"
			 " (choose another -o, or remove it first)",
			 path, foreign.data);
		goto out;
	}
	if (!analysis_meta(db)) {
		snprintf(err, errlen,
			 "%s: exists and is not an AgentXDP analysis database; refusing to replace it"
			 " (choose another -o, or remove it first)",
			 path);
		goto out;
	}
	rc = 0;
out:
	sqlite3_close(db);
	text_buf_free(&foreign);
	return rc;
}
