/* report_write.h: write a whole report folder from a database (agentxdp-report -o, analyze --report). */
#ifndef AGENTXDP_REPORT_WRITE_H
#define AGENTXDP_REPORT_WRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/report/report_data.h"

struct report_write_opts {
	bool png;		/* PNG charts instead of SVG */
	size_t top_n;		/* rows per table, flows per chart */
	unsigned int query_timeout_s;	/* per database connection; 0: REPORT_QUERY_TIMEOUT_S */
};

/*
 * Write DIR/index.html and DIR/charts/ from loaded data. Files 0640, folders 0750.
 * Returns 0, or -1 after printing a one-line error (pr_err).
 */
int report_write_dir(const struct report_data *d, const char *dir, const struct report_write_opts *o);

/* Load DB_PATH and write the folder: what `agentxdp-analyze --report DIR` calls. */
int report_write_from_db(const char *db_path, const char *dir, const struct report_write_opts *o);

#endif
