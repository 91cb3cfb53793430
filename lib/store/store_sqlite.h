/*
 * store_sqlite.h: agentxdp-analyze's SQLite output (schema in docs/schema.md).
 *
 * The database is built in a temporary file beside the final name (journal off, one
 * transaction, prepared statements), indexed at the end, then renamed into place: a crash
 * or a full disk never leaves a half-written database under the final name. Mode 0640.
 *
 *	store_open() -> rows stream in through store_sink() while packets are tracked ->
 *	store_captures()/store_flows()/store_findings()/store_malformed()/store_meta() ->
 *	store_commit() (or store_abort() on any error).
 */
#ifndef AGENTXDP_STORE_SQLITE_H
#define AGENTXDP_STORE_SQLITE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/localize/finding.h"
#include "lib/track/flow.h"
#include "lib/track/qp_track.h"
#include "lib/trace/trace_reader.h"

#define STORE_SCHEMA_VERSION 4

struct store;

/* What the capture table holds beyond trace_health. */
/*
 * An ERSPAN III session's switch clock against the collector's (samples > 0 when measured):
 * arrival - switch time = offset + slope * (switch time - first) + jitter. The offset holds
 * the clocks' difference and the mirror path's delay; a counter clock (100 us, 100 ns
 * granularity) has no epoch: its offset is 0 by construction (absolute = 0).
 */
struct capture_clock {
	uint64_t samples;		/* packets with a usable switch timestamp */
	int absolute;			/* IEEE 1588 time */
	uint8_t gra;			/* enum erspan_gra */
	double offset_us;		/* at the first packet, us */
	double slope_ppm;		/* collector clock's drift against the switch's, ppm */
	double jitter_us;		/* 1.4826 * MAD of arrival - switch time around the fit, us */
	double delay_median_us;		/* median arrival - switch time, us */
};

struct store_capture {
	const char *path;
	const struct trace_health *health;
	uint64_t roce_packets;
	uint64_t other_packets;
	uint64_t malformed_packets;
	uint64_t flows;
	uint64_t unpaired_flows;	/* RC/XRC flows with no flow found for the other direction */
	int one_direction;		/* only one direction of its RC traffic is in this trace */
	struct capture_clock clock;	/* a mirror session's switch clock (ERSPAN III) */
};

/* Which flows keep raw latency_sample rows (every flow keeps its histogram). */
enum store_samples {
	STORE_SAMPLES_FINDINGS = 0,	/* the flows the findings and the report's charts use */
	STORE_SAMPLES_ALL = 1,
	STORE_SAMPLES_NONE = 2,
};

/* Latency sample rows kept: all, or per flow, kind and window at most `max_per_window`. */
struct store_opts {
	uint32_t max_samples_per_window; /* 0 = every sample */
	uint8_t samples;		/* enum store_samples */
};

/*
 * Returns 0, or -1 with one line in err, or -2 (one line in err, exit status 2) when PATH
 * exists and is not ours to replace: anything but an empty file or an AgentXDP analysis
 * database holding only agentxdp-analyze's tables, views and indexes (docs/schema.md,
 * "Ownership"). A refused file is not modified.
 */
int store_open(struct store **out, const char *path, const struct store_opts *opts, char *err,
	       size_t errlen);
/* The time window (--window) the sample thinning counts in. */
void store_set_window(struct store *s, uint64_t window_ns);
/* The event sink writing the latency, retransmission, nak, cnp and qp_window rows. */
const struct qp_event_sink *store_sink(struct store *s);
/*
 * After the sink's last event: the tables nothing adds to later get their last rows and
 * their indexes on a thread of their own, beside the caller's snapshot and localization.
 * Every other store call waits for it.
 */
void store_reading_done(struct store *s);
/* Non-zero once any write failed (the sink cannot return errors): stop early. */
int store_failed(const struct store *s);

int store_meta(struct store *s, const char *key, const char *value);
int store_captures(struct store *s, const struct store_capture *caps, size_t n);
int store_flows(struct store *s, const struct flow_stats *flows, size_t n);
int store_findings(struct store *s, const struct finding *f, size_t n);
/*
 * Optional, once the flows and findings are final, before store_flows() and
 * store_findings() with the same ones: while the store's thread still builds the indexes,
 * the flows whose raw rows --samples findings keeps are picked on a private copy of the qp
 * and finding rows, and the first of their rows read back from the spill files, so that
 * store_commit() only inserts them. Touches no table.
 */
void store_findings_known(struct store *s, const struct flow_stats *flows, size_t n, const struct finding *f,
			  size_t n_f);
/* The link and flow_link tables from --topology (and --paths): see store_links.h. */
struct topology;
int store_links(struct store *s, const struct topology *t, const struct flow_stats *flows, size_t n);
int store_malformed(struct store *s, int capture_index, const char *reason, uint64_t packets);

/*
 * Index, commit, close and rename into place. 0, or -1 with one line in err (nothing left),
 * or -2 when the file at the final name is no longer ours to replace (checked again).
 */
int store_commit(struct store *s, char *err, size_t errlen);
/* Discard everything (the temporary file is removed). */
void store_abort(struct store *s);
/* The temporary file the database is built in until store_commit() renames it, or NULL. */
const char *store_temp_path(const struct store *s);
/* Rows written to latency_sample (after any thinning). */
uint64_t store_sample_rows(const struct store *s);

const char *store_transport_name(uint8_t transport);
/* "findings", "all", "none"; NULL for another value. */
const char *store_samples_name(uint8_t samples); /* "RC", "UC", "UD", "XRC", "RD", "CNP" */

#endif
