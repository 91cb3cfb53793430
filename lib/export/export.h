/* export.h: agentxdp-analyze's summaries: JSON on stdout, CSV files from the database, terminal text. */
#ifndef AGENTXDP_EXPORT_H
#define AGENTXDP_EXPORT_H

#include <stdio.h>

#include "lib/localize/finding.h"
#include "lib/localize/localize.h"
#include "lib/track/flow.h"
#include "lib/track/qp_track.h"
#include "lib/store/store_sqlite.h"

/* Everything a summary shows. */
struct analysis_summary {
	const struct store_capture *captures;
	size_t n_captures;
	const struct flow_stats *flows;
	size_t n_flows;
	const struct qp_tracker_totals *totals;
	const struct finding *findings;
	size_t n_findings;
	uint64_t window_ns;
	const struct localize_coverage *coverage; /* NULL: not known */
	const char *db_path;		/* NULL when no database was written */
};

/* JSON summary (flows, totals, findings). Returns 0, or -1 (errno from the stream). */
int export_json(FILE *out, const struct analysis_summary *sum);
/* Human summary: totals, top flows by p99 ACK latency, findings. */
int export_text(FILE *out, const struct analysis_summary *sum, size_t top_n);
/*
 * Every table of the database at db_path as DIR/TABLE.csv (header row, RFC 4180 quoting
 * through libcsv). DIR is created if missing. 0, or -1 with one line in err.
 */
int export_csv(const char *db_path, const char *dir, char *err, size_t errlen);

#endif
