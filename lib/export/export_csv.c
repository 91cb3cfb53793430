/* export_csv.c: --csv DIR, every table of the analysis database as TABLE.csv through libcsv. */
#include <csv.h>
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/export/export.h"
#include "lib/export/export_file.h"

static const char *const csv_tables[] = {
	"capture", "endpoint", "qp", "qp_window", "retransmission", "retransmission_burst", "nak", "cnp",
	"malformed", "finding", "latency_sample_v", "latency_window", "latency_hist",
};

/* Write one query's rows; text through csv_fwrite (quoting), numbers as they are. */
static int write_table(sqlite3 *db, const char *table, FILE *out)
{
	char sql[128];
	sqlite3_stmt *st;
	int cols, rc;

	snprintf(sql, sizeof(sql), "SELECT * FROM %s", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	cols = sqlite3_column_count(st);
	for (int c = 0; c < cols; c++) {
		const char *name = sqlite3_column_name(st, c);

		if (c)
			fputc(',', out);
		csv_fwrite(out, name, strlen(name));
	}
	fputc('\n', out);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < cols; c++) {
			if (c)
				fputc(',', out);
			switch (sqlite3_column_type(st, c)) {
			case SQLITE_NULL:
				break;
			case SQLITE_INTEGER:
				fprintf(out, "%lld", (long long)sqlite3_column_int64(st, c));
				break;
			case SQLITE_FLOAT:
				fprintf(out, "%.17g", sqlite3_column_double(st, c));
				break;
			default: {
				const unsigned char *text = sqlite3_column_text(st, c);
				csv_fwrite(out, text, (size_t)sqlite3_column_bytes(st, c));
			}
			}
		}
		fputc('\n', out);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int export_csv(const char *db_path, const char *dir, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int rc = -1;

	if (mkdir(dir, 0750) && errno != EEXIST) {
		snprintf(err, errlen, "--csv %s: %s", dir, strerror(errno));
		return -1;
	}
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", db_path, db ? sqlite3_errmsg(db) : "cannot open");
		goto out;
	}
	for (size_t i = 0; i < sizeof(csv_tables) / sizeof(csv_tables[0]); i++) {
		char path[4096];
		const char *name = strcmp(csv_tables[i], "latency_sample_v") ? csv_tables[i] : "latency_sample";
		FILE *out;

		snprintf(path, sizeof(path), "%s/%s.csv", dir, name);
		out = fopen_output(path);
		if (!out) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (write_table(db, csv_tables[i], out)) {
			snprintf(err, errlen, "%s: reading table %s: %s", db_path, csv_tables[i], sqlite3_errmsg(db));
			fclose(out);
			goto out;
		}
		if (fclose(out)) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	sqlite3_close(db);
	return rc;
}
