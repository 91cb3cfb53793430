/* report_data.c: load the summary a report needs from an analysis database (read-only). */
#include "lib/report/report_data.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "lib/util/sanitize.h"
#include "lib/util/util.h"

/* Seconds on the monotonic clock. */
static uint64_t mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/* sqlite3_progress_handler callback: non-zero interrupts the query once the deadline passed. */
static int past_deadline(void *deadline_s)
{
	return mono_s() >= (uint64_t)(uintptr_t)deadline_s;
}

int report_db_open(const char *db_path, unsigned int timeout_s, sqlite3 **out, char *err, size_t errlen)
{
	sqlite3 *db = NULL;

	*out = NULL;
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open database: %s", db_path, db ? sqlite3_errmsg(db) : strerror(ENOMEM));
		sqlite3_close(db);
		return -1;
	}
	/*
	 * The database may come from anyone: a recursive view named qp never ends. Every
	 * statement on this connection is interrupted once the deadline passes (the deadline,
	 * seconds on the monotonic clock, travels in the callback's pointer).
	 */
	if (!timeout_s)
		timeout_s = REPORT_QUERY_TIMEOUT_S;
	sqlite3_progress_handler(db, 10000, past_deadline, (void *)(uintptr_t)(mono_s() + timeout_s));
	*out = db;
	return 0;
}

/* The one-line error for a failed statement: "interrupted" says which limit it hit. */
static void query_error(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	if (sqlite3_errcode(db) == SQLITE_INTERRUPT)
		snprintf(err, errlen, "%s: stopped after the query time limit (--query-timeout): a hostile or"
				      " very large database?", what);
	else
		snprintf(err, errlen, "%s: %s", what, sqlite3_errmsg(db));
}

/*
 * The database is input like any other (someone else may have written it): control
 * characters become '?' so no text can move a terminal's cursor, recolour it or fake a line.
 * keep_lines keeps newlines and tabs (multi-line evidence).
 */
static void neutralize_controls(char *s, bool keep_lines)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			if (!keep_lines || (*s != '\n' && *s != '\t'))
				*s = '?';
}

/* A text column: the one sanitizer shows its controls as escapes (\x1b, \u202e). */
static void copy_text(char *dst, size_t len, const unsigned char *src)
{
	sanitize_text((const char *)src, dst, len);
}

static int table_exists(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int found = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/*
 * Where a result column goes: columns are found by name (an AS alias for an expression),
 * looked up once per statement, so a query's column order is free.
 */
enum col_type {
	COL_INT,	/* an integer field of 1, 2, 4 or 8 bytes */
	COL_DOUBLE,
	COL_TEXT,	/* a char array, control characters neutralized */
	COL_EVIDENCE,	/* a char * the row owns (strdup), newlines and tabs kept */
};

struct column_map {
	const char *name;
	enum col_type type;
	size_t off, size;	/* the field in the row struct */
};

#define COL(type, row_struct, name, field) \
	{ name, type, offsetof(row_struct, field), sizeof(((row_struct *)0)->field) }

/* Result column index of each map entry; -1 with err set when one is missing. */
static int map_columns(sqlite3_stmt *st, const struct column_map *map, size_t n, int *idx, char *err,
		       size_t errlen)
{
	int n_cols = sqlite3_column_count(st);

	for (size_t i = 0; i < n; i++) {
		idx[i] = -1;
		for (int c = 0; c < n_cols && idx[i] < 0; c++)
			if (!strcmp(sqlite3_column_name(st, c), map[i].name))
				idx[i] = c;
		if (idx[i] < 0) {
			snprintf(err, errlen, "database query has no column '%s'", map[i].name);
			return -1;
		}
	}
	return 0;
}

static void store_int(void *field, size_t size, sqlite3_int64 v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (size) {
	case 1:
		memcpy(field, &u8, 1);
		break;
	case 2:
		memcpy(field, &u16, 2);
		break;
	case 4:
		memcpy(field, &u32, 4);
		break;
	default:
		assert(size == 8);
		memcpy(field, &v, 8);
		break;
	}
}

/* Copy one result row into row by the map; -1 on allocation failure. */
static int read_columns(sqlite3_stmt *st, const struct column_map *map, size_t n, const int *idx, void *row)
{
	for (size_t i = 0; i < n; i++) {
		char *field = (char *)row + map[i].off;
		const unsigned char *text;
		double v;
		char *dup;

		switch (map[i].type) {
		case COL_INT:
			store_int(field, map[i].size, sqlite3_column_int64(st, idx[i]));
			break;
		case COL_DOUBLE:
			assert(map[i].size == sizeof(v));
			v = sqlite3_column_double(st, idx[i]);
			memcpy(field, &v, sizeof(v));
			break;
		case COL_TEXT:
			copy_text(field, map[i].size, sqlite3_column_text(st, idx[i]));
			break;
		case COL_EVIDENCE:
			assert(map[i].size == sizeof(dup));
			text = sqlite3_column_text(st, idx[i]);
			dup = strdup(text ? (const char *)text : "");
			memcpy(field, &dup, sizeof(dup));
			if (!dup)
				return -1;
			neutralize_controls(dup, true);
			break;
		}
	}
	return 0;
}

/* Values for a query's ?1, ?2, ...: bound, never formatted into the SQL (an "inf" breaks it). */
struct query_args {
	size_t n;
	struct {
		bool is_int;
		double d;
		sqlite3_int64 i;
	} v[4];
};

/*
 * Run one query; per result row, next_row(ctx) gives the zeroed struct the columns of map go
 * into (NULL: out of memory). args (or NULL) are bound to its parameters. -1 with err set on failure.
 */
static int query_rows_args(sqlite3 *db, const char *sql, const struct query_args *args,
			   const struct column_map *map, size_t n_map, void *(*next_row)(void *ctx), void *ctx,
			   char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int idx[32];
	int rc = -1, step;

	assert(n_map <= ARRAY_SIZE(idx));
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		query_error(db, "database query failed", err, errlen);
		return -1;
	}
	for (size_t i = 0; args && i < args->n; i++) {
		if (args->v[i].is_int)
			sqlite3_bind_int64(st, (int)i + 1, args->v[i].i);
		else
			sqlite3_bind_double(st, (int)i + 1, args->v[i].d);
	}
	if (map_columns(st, map, n_map, idx, err, errlen))
		goto cleanup;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		void *row = next_row(ctx);

		if (!row || read_columns(st, map, n_map, idx, row)) {
			snprintf(err, errlen, "out of memory");
			goto cleanup;
		}
	}
	if (step != SQLITE_DONE) {
		query_error(db, "database read failed", err, errlen);
		goto cleanup;
	}
	rc = 0;
cleanup:
	sqlite3_finalize(st);
	return rc;
}

static int query_rows(sqlite3 *db, const char *sql, const struct column_map *map, size_t n_map,
		      void *(*next_row)(void *ctx), void *ctx, char *err, size_t errlen)
{
	return query_rows_args(db, sql, NULL, map, n_map, next_row, ctx, err, errlen);
}

/* Room for one more element of size sz at the end of *arr; the new element is zeroed. */
static void *append_row(void **arr, size_t *n, size_t *cap, size_t sz)
{
	char *row;

	if (util_ensure_mem(arr, cap, sz, *n + 1))
		return NULL;
	row = (char *)*arr + (*n)++ * sz;
	memset(row, 0, sz);
	return row;
}

/* KEY's number in TEXT, a run of "key=value" words; false when absent or not a number. */
static bool clock_field(const char *text, const char *key, double *v)
{
	size_t klen = strlen(key);

	for (const char *p = text; (p = strstr(p, key)); p += klen) {
		char *end;

		if ((p != text && p[-1] != ' ') || p[klen] != '=')
			continue;
		*v = strtod(p + klen + 1, &end);
		return end != p + klen + 1 && (*end == ' ' || !*end);
	}
	return false;
}

/*
 * The analyzer's mirror_clock.capture<id> meta value ("samples=N gra=G absolute=A
 * offset_us=X slope_ppm=Y jitter_us=Z ...") -> its figures; anything missing or not a
 * number leaves samples 0, so the report says nothing rather than a wrong clock.
 */
static void parse_mirror_clock(const char *text, struct report_mirror_clock *c)
{
	double samples, absolute;

	memset(c, 0, sizeof(*c));
	if (!text[0] || !clock_field(text, "samples", &samples) || !clock_field(text, "absolute", &absolute) ||
	    !clock_field(text, "offset_us", &c->offset_us) || !clock_field(text, "slope_ppm", &c->drift_ppm) ||
	    !clock_field(text, "jitter_us", &c->jitter_us) || !(samples >= 1 && samples < 1e19)) {
		memset(c, 0, sizeof(*c));
		return;
	}
	c->samples = (uint64_t)samples;
	c->absolute = absolute != 0;
}

static void *next_capture(void *ctx)
{
	struct report_data *d = ctx;

	return append_row((void **)&d->captures, &d->n_captures, &d->cap_captures, sizeof(*d->captures));
}

/* Whether TABLE has COLUMN (a database of an earlier version may lack it). */
static bool has_column(sqlite3 *db, const char *table, const char *column)
{
	sqlite3_stmt *st = NULL;
	bool found = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

static void *next_finding(void *ctx)
{
	struct report_data *d = ctx;

	return append_row((void **)&d->findings, &d->n_findings, &d->cap_findings, sizeof(*d->findings));
}

static void *next_flow(void *ctx)
{
	struct report_data *d = ctx;

	return append_row((void **)&d->flows, &d->n_flows, &d->cap_flows, sizeof(*d->flows));
}

static void *next_pair(void *ctx)
{
	struct report_data *d = ctx;

	return append_row((void **)&d->pairs, &d->n_pairs, &d->cap_pairs, sizeof(*d->pairs));
}

static void *next_host(void *ctx)
{
	struct report_data *d = ctx;

	return append_row((void **)&d->hosts, &d->n_hosts, &d->cap_hosts, sizeof(*d->hosts));
}

static void *next_evidence(void *ctx)
{
	struct report_data *d = ctx;

	return append_row((void **)&d->evidence, &d->n_evidence, &d->cap_evidence, sizeof(*d->evidence));
}

/* Single-row queries: every row lands in ctx itself. */
static void *same_row(void *ctx)
{
	return ctx;
}

static const struct column_map capture_columns[] = {
	COL(COL_TEXT, struct report_capture, "path", path),
	COL(COL_INT, struct report_capture, "frames", frames),
	COL(COL_INT, struct report_capture, "bytes", bytes),
	COL(COL_INT, struct report_capture, "roce_packets", roce_packets),
	COL(COL_INT, struct report_capture, "other_packets", other_packets),
	COL(COL_INT, struct report_capture, "malformed_packets", malformed),
	COL(COL_INT, struct report_capture, "first_ns", first_ns),
	COL(COL_INT, struct report_capture, "last_ns", last_ns),
	COL(COL_INT, struct report_capture, "capture_dropped", capture_dropped),
	COL(COL_INT, struct report_capture, "has_drop_counters", has_drop_counters),
	COL(COL_INT, struct report_capture, "truncated", truncated),
	COL(COL_TEXT, struct report_capture, "stop_reason", stop_reason),
	COL(COL_TEXT, struct report_capture, "mirror_clock", mirror_clock),
};

static const struct column_map finding_columns[] = {
	COL(COL_INT, struct report_finding, "rank", rank),
	COL(COL_TEXT, struct report_finding, "level", level),
	COL(COL_TEXT, struct report_finding, "kind", kind),
	COL(COL_TEXT, struct report_finding, "subject", subject),
	COL(COL_TEXT, struct report_finding, "direction", direction),
	COL(COL_DOUBLE, struct report_finding, "severity", severity),
	COL(COL_TEXT, struct report_finding, "severity_text", severity_text),
	COL(COL_DOUBLE, struct report_finding, "confidence", confidence),
	COL(COL_INT, struct report_finding, "onset_ns", onset_ns),
	COL(COL_INT, struct report_finding, "flows_hurt", flows_hurt),
	COL(COL_EVIDENCE, struct report_finding, "evidence", evidence),
};

#define FLOW_COLUMNS                                                                       \
	"id, src_ip, dst_ip, dst_qpn, udp_sport, transport, peer_qp_id, packets, bytes,"  \
	" first_ns, last_ns, retransmitted_packets, naks_psn_seq, naks_other, rnr_naks,"  \
	" timeouts, cnps, ecn_ce, ack_samples, ack_latency_p50_us, ack_latency_p99_us,"   \
	" ack_latency_max_us"

static const struct column_map flow_columns[] = {
	COL(COL_INT, struct report_flow, "id", id),
	COL(COL_TEXT, struct report_flow, "src_ip", src),
	COL(COL_TEXT, struct report_flow, "dst_ip", dst),
	COL(COL_INT, struct report_flow, "dst_qpn", dst_qpn),
	COL(COL_INT, struct report_flow, "udp_sport", udp_sport),
	COL(COL_TEXT, struct report_flow, "transport", transport),
	COL(COL_INT, struct report_flow, "peer_qp_id", peer_id),
	COL(COL_INT, struct report_flow, "packets", packets),
	COL(COL_INT, struct report_flow, "bytes", bytes),
	COL(COL_INT, struct report_flow, "first_ns", first_ns),
	COL(COL_INT, struct report_flow, "last_ns", last_ns),
	COL(COL_INT, struct report_flow, "retransmitted_packets", retransmitted),
	COL(COL_INT, struct report_flow, "naks_psn_seq", naks_psn_seq),
	COL(COL_INT, struct report_flow, "naks_other", naks_other),
	COL(COL_INT, struct report_flow, "rnr_naks", rnr_naks),
	COL(COL_INT, struct report_flow, "timeouts", timeouts),
	COL(COL_INT, struct report_flow, "cnps", cnps),
	COL(COL_INT, struct report_flow, "ecn_ce", ecn_ce),
	COL(COL_INT, struct report_flow, "ack_samples", ack_samples),
	COL(COL_DOUBLE, struct report_flow, "ack_latency_p50_us", p50_us),
	COL(COL_DOUBLE, struct report_flow, "ack_latency_p99_us", p99_us),
	COL(COL_DOUBLE, struct report_flow, "ack_latency_max_us", max_us),
	COL(COL_DOUBLE, struct report_flow, "badness", badness),
};

static const struct column_map pair_columns[] = {
	COL(COL_TEXT, struct report_pair, "src_ip", src),
	COL(COL_TEXT, struct report_pair, "dst_ip", dst),
	COL(COL_INT, struct report_pair, "flows", flows),
	COL(COL_INT, struct report_pair, "packets", packets),
	COL(COL_INT, struct report_pair, "retransmitted", retransmitted),
	COL(COL_INT, struct report_pair, "naks", naks),
	COL(COL_INT, struct report_pair, "cnps", cnps),
	COL(COL_INT, struct report_pair, "ecn_ce", ecn_ce),
	COL(COL_INT, struct report_pair, "ack_samples", ack_samples),
	COL(COL_DOUBLE, struct report_pair, "p50_us", p50_us),
	COL(COL_DOUBLE, struct report_pair, "p99_us", p99_us),
};

static const struct column_map host_columns[] = {
	COL(COL_TEXT, struct report_host, "host", host),
	COL(COL_INT, struct report_host, "flows", flows),
	COL(COL_INT, struct report_host, "sent_packets", sent_packets),
	COL(COL_INT, struct report_host, "received_packets", received_packets),
	COL(COL_INT, struct report_host, "retransmitted", retransmitted),
	COL(COL_INT, struct report_host, "naks", naks),
	COL(COL_INT, struct report_host, "cnps", cnps),
	COL(COL_INT, struct report_host, "ecn_ce", ecn_ce),
	COL(COL_INT, struct report_host, "ack_samples", ack_samples),
	COL(COL_DOUBLE, struct report_host, "p50_us", p50_us),
	COL(COL_DOUBLE, struct report_host, "p99_us", p99_us),
};

static const struct column_map evidence_columns[] = {
	COL(COL_INT, struct report_evidence_item, "rank", rank),
	COL(COL_INT, struct report_evidence_item, "flow", flow),
	COL(COL_TEXT, struct report_evidence_item, "key", key),
	COL(COL_TEXT, struct report_evidence_item, "value", value),
};

static const struct column_map totals_columns[] = {
	COL(COL_INT, struct report_data, "flows", total_flows),
	COL(COL_INT, struct report_data, "packets", total_packets),
	COL(COL_INT, struct report_data, "bytes", total_bytes),
	COL(COL_INT, struct report_data, "retransmitted", total_retransmitted),
	COL(COL_INT, struct report_data, "naks", total_naks),
	COL(COL_INT, struct report_data, "rnr_naks", total_rnr),
	COL(COL_INT, struct report_data, "timeouts", total_timeouts),
	COL(COL_INT, struct report_data, "cnps", total_cnps),
	COL(COL_INT, struct report_data, "ecn_ce", total_ecn_ce),
	COL(COL_INT, struct report_data, "first_ns", first_ns),
	COL(COL_INT, struct report_data, "last_ns", last_ns),
};

static const struct column_map meta_columns[] = {
	COL(COL_TEXT, struct report_data, "analyzer_version", analyzer_version),
};

static const struct column_map window_columns[] = {
	COL(COL_INT, struct report_data, "window_ns", window_ns),
};

static const struct column_map coverage_columns[] = {
	COL(COL_INT, struct report_data, "latency_flows", latency_flows),
	COL(COL_INT, struct report_data, "latency_flows_judged", latency_judged),
	COL(COL_INT, struct report_data, "latency_min_samples", latency_min_samples),
};

static const struct column_map link_columns[] = {
	COL(COL_TEXT, struct report_link, "name", name),
	COL(COL_TEXT, struct report_link, "a", a),
	COL(COL_TEXT, struct report_link, "b", b),
	COL(COL_TEXT, struct report_link, "kind", kind),
	COL(COL_INT, struct report_link, "a_tier", a_tier),
	COL(COL_INT, struct report_link, "b_tier", b_tier),
	COL(COL_INT, struct report_link, "flows", flows),
	COL(COL_DOUBLE, struct report_link, "packets", packets),
	COL(COL_DOUBLE, struct report_link, "loss", loss),
	COL(COL_DOUBLE, struct report_link, "marks", marks),
	COL(COL_DOUBLE, struct report_link, "p50_us", p50_us),
	COL(COL_DOUBLE, struct report_link, "p99_us", p99_us),
};

static const struct column_map version_columns[] = {
	COL(COL_INT, struct report_data, "user_version", schema_version),
};

static const struct column_map median_columns[] = {
	{ "ack_latency_p99_us", COL_DOUBLE, 0, sizeof(double) },
};

/* The most hosts a report loads: a table and a median, not an inventory. */
#define REPORT_MAX_HOSTS 100000

static bool is_addr_char(char c)
{
	return c && (isxdigit((unsigned char)c) || c == '.' || c == ':');
}

bool report_names_host(const char *text, const char *host)
{
	size_t len = strlen(host);

	if (!len)
		return false;
	for (const char *p = strstr(text, host); p; p = strstr(p + 1, host))
		if ((p == text || !is_addr_char(p[-1])) && !is_addr_char(p[len]))
			return true;
	return false;
}

static int double_order(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of sorted[0..n) without one element equal to v (v is in it). */
static double median_without(const double *sorted, size_t n, double v)
{
	size_t j = 0, m = n - 1;

	while (j < n && sorted[j] != v)
		j++;
	if (!m)
		return 0;
#define AT(i) sorted[(i) < j ? (i) : (i) + 1]
	return m % 2 ? AT(m / 2) : (AT(m / 2 - 1) + AT(m / 2)) / 2;
#undef AT
}

static int host_order(const void *a, const void *b)
{
	const struct report_host *x = a, *y = b;

	if (x->findings != y->findings)
		return x->findings > y->findings ? -1 : 1;
	if (x->p99_us != y->p99_us)
		return x->p99_us > y->p99_us ? -1 : 1;
	return strcmp(x->host, y->host);
}

/*
 * Per host: packets sent and received, its flows' loss and congestion counts and ACK latency,
 * its p50 against the median of the other hosts', the findings naming it.
 */
static int load_hosts(sqlite3 *db, struct report_data *d, char *err, size_t errlen)
{
	struct query_args args = { .n = 1 };
	double *p50s;
	size_t n_p50 = 0;

	args.v[0].is_int = true;
	args.v[0].i = REPORT_MAX_HOSTS;
	if (query_rows_args(db,
		 "SELECT host, count(*) AS flows, total(sent) AS sent_packets, total(received) AS received_packets,"
		 " total(retransmitted_packets) AS retransmitted, total(naks_psn_seq + naks_other + rnr_naks) AS naks,"
		 " total(cnps) AS cnps, total(ecn_ce) AS ecn_ce, total(ack_samples) AS ack_samples,"
		 " coalesce(total(CASE WHEN ack_samples > 0 THEN ack_latency_p50_us * ack_samples END)"
		 "  / nullif(total(ack_samples), 0), 0) AS p50_us,"
		 " coalesce(max(CASE WHEN ack_samples > 0 THEN ack_latency_p99_us END), 0) AS p99_us"
		 " FROM (SELECT src_ip AS host, packets AS sent, 0 AS received, * FROM qp"
		 "  UNION ALL SELECT dst_ip AS host, 0 AS sent, packets AS received, * FROM qp)"
		 " GROUP BY host ORDER BY host LIMIT ?1",
		 &args, host_columns, ARRAY_SIZE(host_columns), next_host, d, err, errlen))
		return -1;
	p50s = calloc(d->n_hosts ? d->n_hosts : 1, sizeof(*p50s));
	if (!p50s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < d->n_hosts; i++) {
		struct report_host *h = &d->hosts[i];

		for (size_t k = 0; k < d->n_findings; k++)
			h->findings += report_names_host(d->findings[k].subject, h->host) ||
				       report_names_host(d->findings[k].direction, h->host);
		if (h->ack_samples && h->p50_us > 0 && h->p50_us < 1e12)
			p50s[n_p50++] = h->p50_us;
	}
	/* Against the others: the median of every other host's p50, its own left out. */
	qsort(p50s, n_p50, sizeof(*p50s), double_order);
	for (size_t i = 0; i < d->n_hosts; i++) {
		struct report_host *h = &d->hosts[i];
		double med;

		if (!h->ack_samples || !(h->p50_us > 0 && h->p50_us < 1e12))
			continue;
		med = median_without(p50s, n_p50, h->p50_us);
		if (med > 0)
			h->p50_vs_others = h->p50_us / med;
	}
	free(p50s);
	qsort(d->hosts, d->n_hosts, sizeof(*d->hosts), host_order);
	return 0;
}

static void *next_link(void *ctx)
{
	struct report_data *d = ctx;

	return append_row((void **)&d->links, &d->n_links, &d->cap_links, sizeof(*d->links));
}

bool report_names_link(const char *subject, const char *link)
{
	size_t len = strlen(link);

	/* A set is "a | b | c": a member is delimited by the start, the end or " | ". */
	for (const char *p = len ? strstr(subject, link) : NULL; p; p = strstr(p + 1, link))
		if ((p == subject || (p - subject >= 3 && !strncmp(p - 3, " | ", 3))) &&
		    (!p[len] || !strncmp(p + len, " | ", 3)))
			return true;
	return false;
}

struct kind_p50 {
	const char *kind;
	double p50;
};

static int kind_p50_order(const void *a, const void *b)
{
	const struct kind_p50 *x = a, *y = b;
	int c = strcmp(x->kind, y->kind);

	return c ? c : double_order(&x->p50, &y->p50);
}

/* The most links a report loads. */
#define REPORT_MAX_LINKS 100000

/*
 * Per link: its flows weighted by their share of it (flow_link), latency as the share- and
 * sample-weighted mean of the flows' p50 and p99, each p50 against the median of the other
 * links of its kind, and the findings naming it. Databases without the tables have no links.
 */
static int load_links(sqlite3 *db, struct report_data *d, char *err, size_t errlen)
{
	struct query_args args = { .n = 1 };
	struct kind_p50 *peers;
	double *vals;
	size_t n = 0;

	if (!table_exists(db, "link") || !table_exists(db, "flow_link"))
		return 0;
	args.v[0].is_int = true;
	args.v[0].i = REPORT_MAX_LINKS;
	if (query_rows_args(db,
		 "SELECT l.name AS name, l.a AS a, l.b AS b, l.kind AS kind, l.a_tier AS a_tier, l.b_tier AS b_tier,"
		 " count(q.id) AS flows, total(fl.share * q.packets) AS packets,"
		 " total(fl.share * q.retransmitted_packets) AS loss, total(fl.share * (q.ecn_ce + q.cnps)) AS marks,"
		 " coalesce(total(CASE WHEN q.ack_samples > 0 THEN fl.share * q.ack_samples * q.ack_latency_p50_us END)"
		 "  / nullif(total(CASE WHEN q.ack_samples > 0 THEN fl.share * q.ack_samples END), 0), 0) AS p50_us,"
		 " coalesce(total(CASE WHEN q.ack_samples > 0 THEN fl.share * q.ack_samples * q.ack_latency_p99_us END)"
		 "  / nullif(total(CASE WHEN q.ack_samples > 0 THEN fl.share * q.ack_samples END), 0), 0) AS p99_us"
		 " FROM link l LEFT JOIN flow_link fl ON fl.link = l.name LEFT JOIN qp q ON q.id = fl.qp_id"
		 " GROUP BY l.rowid ORDER BY l.rowid LIMIT ?1",
		 &args, link_columns, ARRAY_SIZE(link_columns), next_link, d, err, errlen))
		return -1;
	peers = calloc(d->n_links ? d->n_links : 1, sizeof(*peers));
	vals = calloc(d->n_links ? d->n_links : 1, sizeof(*vals));
	if (!peers || !vals) {
		free(peers);
		free(vals);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* Every valid p50 sorted by (kind, p50): a link's peers are one run of it. */
	for (size_t i = 0; i < d->n_links; i++) {
		struct report_link *l = &d->links[i];

		for (size_t k = 0; k < d->n_findings; k++)
			if (report_names_link(d->findings[k].subject, l->name))
				*(d->findings[k].level[0] == 'a' ? &l->alerts : &l->notices) += 1;
		if (l->p50_us > 0 && l->p50_us < 1e12)
			peers[n++] = (struct kind_p50){ l->kind, l->p50_us };
	}
	qsort(peers, n, sizeof(*peers), kind_p50_order);
	for (size_t i = 0; i < n; i++)
		vals[i] = peers[i].p50;
	for (size_t i = 0; i < d->n_links; i++) {
		struct report_link *l = &d->links[i];
		size_t lo = 0, hi = n, end;
		double med;

		if (!(l->p50_us > 0 && l->p50_us < 1e12))
			continue;
		while (lo < hi) { /* the first entry of its kind */
			size_t mid = (lo + hi) / 2;

			if (strcmp(peers[mid].kind, l->kind) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (end = lo; end < n && !strcmp(peers[end].kind, l->kind);)
			end++;
		med = median_without(vals + lo, end - lo, l->p50_us);
		if (med > 0)
			l->p50_vs_peers = l->p50_us / med;
	}
	free(peers);
	free(vals);
	return 0;
}

const char *report_decode_problem(const struct report_data *d, char *buf, size_t len)
{
	uint64_t frames = 0, roce = 0, other = 0, bad = 0;

	for (size_t i = 0; i < d->n_captures; i++) {
		frames += d->captures[i].frames;
		roce += d->captures[i].roce_packets;
		other += d->captures[i].other_packets;
		bad += d->captures[i].malformed;
	}
	if (roce && roce >= other + bad)
		return NULL;
	if (!frames)
		snprintf(buf, len, "The traces hold no frames: nothing was analyzed.");
	else
		snprintf(buf, len,
			 "%s of the %" PRIu64 " frames read were understood as RoCE (%" PRIu64 " RoCE, %" PRIu64
			 " malformed, %" PRIu64 " other traffic): %s",
			 roce ? "Only a minority" : "None", frames, roce, bad, other,
			 roce ? "the verdict covers only what was decoded." : "nothing was analyzed, so no verdict.");
	return buf;
}

/* The most evidence numbers a report loads over all findings shown. */
#define REPORT_MAX_EVIDENCE 20000

/*
 * The evidence of the first TOP_N findings as key/value rows: scalars (nested objects
 * flattened, "runner_up.subject"), then each entry of "flows". Evidence that is not valid
 * JSON gives no rows (the page still shows it raw).
 */
static int load_evidence(sqlite3 *db, struct report_data *d, size_t top_n, char *err, size_t errlen)
{
	struct query_args args = { .n = 2 };

	args.v[0].is_int = args.v[1].is_int = true;
	args.v[0].i = (sqlite3_int64)top_n;
	args.v[1].i = REPORT_MAX_EVIDENCE;
	return query_rows_args(db,
		"WITH f AS (SELECT rank, evidence FROM finding WHERE json_valid(evidence)"
		"  AND json_type(evidence) = 'object' ORDER BY rank LIMIT ?1)"
		" SELECT rank, flow, key, value FROM ("
		"  SELECT f.rank AS rank, -1 AS flow, replace(substr(t.fullkey, 3), '\"', '') AS key,"
		"   CAST(t.atom AS TEXT) AS value, 0 AS ord, t.id AS sub FROM f, json_tree(f.evidence) t"
		"   WHERE t.atom IS NOT NULL AND t.fullkey NOT LIKE '$.flows[%'"
		"  UNION ALL"
		"  SELECT f.rank, CAST(e.key AS INTEGER), c.key, CAST(c.atom AS TEXT), 1 + e.key, c.id"
		"   FROM f, json_each(f.evidence, '$.flows') e, json_each(e.value) c"
		"   WHERE json_type(f.evidence, '$.flows') = 'array' AND e.type = 'object' AND c.atom IS NOT NULL)"
		" ORDER BY rank, ord, sub LIMIT ?2",
		&args, evidence_columns, ARRAY_SIZE(evidence_columns), next_evidence, d, err, errlen);
}

/* The run's meta values the report reads (a database without them keeps zeros). */
static int load_meta(sqlite3 *db, struct report_data *d, char *err, size_t errlen)
{
	if (query_rows(db, "SELECT value AS analyzer_version FROM meta WHERE key = 'analyzer_version'",
		       meta_columns, ARRAY_SIZE(meta_columns), same_row, d, err, errlen) ||
	    query_rows(db, "SELECT CAST(value AS INTEGER) AS window_ns FROM meta WHERE key = 'window_ns'",
		       window_columns, ARRAY_SIZE(window_columns), same_row, d, err, errlen))
		return -1;
	return query_rows(db,
			  "SELECT (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'latency_flows') AS latency_flows,"
			  " (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'latency_flows_judged')"
			  " AS latency_flows_judged,"
			  " (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'latency_min_samples')"
			  " AS latency_min_samples",
			  coverage_columns, ARRAY_SIZE(coverage_columns), same_row, d, err, errlen);
}

int report_data_load(const char *db_path, size_t top_n, unsigned int timeout_s, struct report_data *d,
		     char *err, size_t errlen)
{
	static const char *const required[] = { "qp", "capture", "finding" };
	struct query_args args;
	sqlite3 *db = NULL;
	double median = 0;
	int rc = -1;

	memset(d, 0, sizeof(*d));
	copy_text(d->db_path, sizeof(d->db_path), (const unsigned char *)db_path);
	d->query_timeout_s = timeout_s;
	if (report_db_open(db_path, timeout_s, &db, err, errlen))
		goto cleanup;
	for (size_t i = 0; i < ARRAY_SIZE(required); i++) {
		if (!table_exists(db, required[i])) {
			snprintf(err, errlen,
				 "%s: not an agentxdp analysis database (no table '%s'; make one with agentxdp-analyze TRACE -o %s)",
				 db_path, required[i], db_path);
			goto cleanup;
		}
	}
	/* A database too old to say its version reads as 0. */
	query_rows(db, "PRAGMA user_version", version_columns, ARRAY_SIZE(version_columns), same_row, d, err,
		   errlen);
	if (table_exists(db, "meta") && load_meta(db, d, err, errlen))
		goto cleanup;
	if (query_rows(db,
		       table_exists(db, "meta") ?
			       "SELECT path, frames, bytes, roce_packets, other_packets, malformed_packets, first_ns,"
			       " last_ns, capture_dropped, has_drop_counters, truncated, stop_reason,"
			       " (SELECT value FROM meta WHERE key = 'mirror_clock.capture' || capture.id)"
			       " AS mirror_clock FROM capture ORDER BY id" :
			       "SELECT path, frames, bytes, roce_packets, other_packets, malformed_packets, first_ns,"
			       " last_ns, capture_dropped, has_drop_counters, truncated, stop_reason,"
			       " '' AS mirror_clock FROM capture ORDER BY id",
		       capture_columns, ARRAY_SIZE(capture_columns), next_capture, d, err, errlen))
		goto cleanup;
	for (size_t i = 0; i < d->n_captures; i++) {
		d->total_malformed += d->captures[i].malformed;
		parse_mirror_clock(d->captures[i].mirror_clock, &d->captures[i].clock);
	}
	/* Databases written before findings had levels hold only what are alerts now. */
	if (query_rows(db,
		       has_column(db, "finding", "level") ?
			       "SELECT rank, level, kind, subject, direction, severity, severity_text, confidence,"
			       " onset_ns, flows_hurt, evidence FROM finding ORDER BY rank" :
			       "SELECT rank, 'alert' AS level, kind, subject, direction, severity, severity_text,"
			       " confidence, onset_ns, flows_hurt, evidence FROM finding ORDER BY rank",
		       finding_columns, ARRAY_SIZE(finding_columns), next_finding, d, err, errlen))
		goto cleanup;
	for (size_t i = 0; i < d->n_findings; i++) {
		/* Only the two words the analyzer writes reach a report. */
		struct report_finding *f = &d->findings[i];

		snprintf(f->level, sizeof(f->level), "%s", strcmp(f->level, "notice") ? "alert" : "notice");
		d->n_alerts += f->level[0] == 'a';
	}
	if (query_rows(db,
		       "SELECT count(*) AS flows, total(packets) AS packets, total(bytes) AS bytes,"
		       " total(retransmitted_packets) AS retransmitted,"
		       " total(naks_psn_seq) + total(naks_other) AS naks, total(rnr_naks) AS rnr_naks,"
		       " total(timeouts) AS timeouts, total(cnps) AS cnps, total(ecn_ce) AS ecn_ce,"
		       " min(first_ns) AS first_ns, max(last_ns) AS last_ns FROM qp",
		       totals_columns, ARRAY_SIZE(totals_columns), same_row, d, err, errlen))
		goto cleanup;
	/* The population's typical p99: the median of flow p99s, for "N x healthy" contrasts. */
	if (query_rows(db,
		       "SELECT ack_latency_p99_us FROM qp WHERE ack_samples > 0 ORDER BY ack_latency_p99_us"
		       " LIMIT 1 OFFSET (SELECT count(*) FROM qp WHERE ack_samples > 0) / 2",
		       median_columns, ARRAY_SIZE(median_columns), same_row, &median, err, errlen))
		goto cleanup;
	/* A stored inf, NaN or negative p99 is no typical p99 (and no valid cast). */
	if (!(median > 0 && median < 1e12))
		median = 0;
	d->healthy_median_p99_us_x1000 = (uint64_t)(median * 1000);
	/*
	 * Badness: loss events per 1000 packets weigh like one multiple of the typical p99, so a
	 * lossy flow and a slow flow rank on one scale. Documented in docs/agentxdp-report.8.
	 */
	args = (struct query_args){ .n = 2 };
	args.v[0].d = median;
	args.v[1].is_int = true;
	args.v[1].i = (sqlite3_int64)top_n;
	if (query_rows_args(db,
			    "SELECT " FLOW_COLUMNS ", (CASE WHEN ack_samples > 0 AND ?1 > 0 THEN ack_latency_p99_us / ?1"
			    " ELSE 0 END)"
			    " + 1000.0 * (retransmitted_packets + naks_psn_seq + naks_other + rnr_naks + timeouts + cnps)"
			    " / max(packets, 1) AS badness FROM qp ORDER BY badness DESC, id LIMIT ?2",
			    &args, flow_columns, ARRAY_SIZE(flow_columns), next_flow, d, err, errlen))
		goto cleanup;
	args = (struct query_args){ .n = 1 };
	args.v[0].is_int = true;
	args.v[0].i = (sqlite3_int64)top_n;
	if (query_rows_args(db,
		 "SELECT src_ip, dst_ip, count(*) AS flows, total(packets) AS packets,"
		 " total(retransmitted_packets) AS retransmitted,"
		 " total(naks_psn_seq + naks_other + rnr_naks) AS naks, total(cnps) AS cnps,"
		 " total(ecn_ce) AS ecn_ce, total(ack_samples) AS ack_samples,"
		 " max(CASE WHEN ack_samples > 0 THEN ack_latency_p50_us END) AS p50_us,"
		 " max(CASE WHEN ack_samples > 0 THEN ack_latency_p99_us END) AS p99_us"
		 " FROM qp GROUP BY src_ip, dst_ip ORDER BY p99_us DESC NULLS LAST, src_ip, dst_ip LIMIT ?1",
		 &args, pair_columns, ARRAY_SIZE(pair_columns), next_pair, d, err, errlen))
		goto cleanup;
	if (load_hosts(db, d, err, errlen) || load_links(db, d, err, errlen) ||
	    load_evidence(db, d, top_n, err, errlen))
		goto cleanup;
	rc = 0;
cleanup:
	sqlite3_close(db);
	if (rc)
		report_data_free(d);
	return rc;
}

void report_data_free(struct report_data *d)
{
	for (size_t i = 0; i < d->n_findings; i++)
		free(d->findings[i].evidence);
	free(d->findings);
	free(d->captures);
	free(d->flows);
	free(d->pairs);
	free(d->hosts);
	free(d->links);
	d->links = NULL;
	d->n_links = d->cap_links = 0;
	free(d->evidence);
	d->evidence = NULL;
	d->n_evidence = d->cap_evidence = 0;
	d->hosts = NULL;
	d->n_hosts = d->cap_hosts = 0;
	d->findings = NULL;
	d->captures = NULL;
	d->flows = NULL;
	d->pairs = NULL;
	d->n_findings = d->n_captures = d->n_flows = d->n_pairs = 0;
	d->cap_findings = d->cap_captures = d->cap_flows = d->cap_pairs = 0;
}
