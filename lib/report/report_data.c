/* report_data.c: load the summary a report needs from an analysis database (read-only). */
#include "lib/report/report_data.h"

#include <errno.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void copy_text(char *dst, size_t len, const unsigned char *src)
{
	snprintf(dst, len, "%s", src ? (const char *)src : "");
	neutralize_controls(dst, false);
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

/* Run one query, calling row() per result row; -1 with err set on SQL failure. */
static int query_rows(sqlite3 *db, const char *sql, int (*row)(sqlite3_stmt *, void *), void *ctx,
		      char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "database query failed: %s", sqlite3_errmsg(db));
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (row(st, ctx)) {
			snprintf(err, errlen, "out of memory");
			sqlite3_finalize(st);
			return -1;
		}
	}
	if (rc != SQLITE_DONE) {
		snprintf(err, errlen, "database read failed: %s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

/* A growable array in report_data: grow *arr (elements of size sz) to hold *n + 1. */
static void *grow(void *arr, size_t n, size_t sz)
{
	if (n & (n - 1) && n)
		return arr; /* capacity is the next power of two above n */
	size_t cap = n ? n * 2 : 8;
	return realloc(arr, cap * sz);
}

static int capture_row(sqlite3_stmt *st, void *ctx)
{
	struct report_data *d = ctx;
	struct report_capture *c, *arr = grow(d->captures, d->n_captures, sizeof(*c));

	if (!arr)
		return -1;
	d->captures = arr;
	c = &arr[d->n_captures++];
	memset(c, 0, sizeof(*c));
	copy_text(c->path, sizeof(c->path), sqlite3_column_text(st, 0));
	c->frames = sqlite3_column_int64(st, 1);
	c->bytes = sqlite3_column_int64(st, 2);
	c->roce_packets = sqlite3_column_int64(st, 3);
	c->malformed = sqlite3_column_int64(st, 4);
	c->first_ns = sqlite3_column_int64(st, 5);
	c->last_ns = sqlite3_column_int64(st, 6);
	c->capture_dropped = sqlite3_column_int64(st, 7);
	c->has_drop_counters = sqlite3_column_int(st, 8);
	c->truncated = sqlite3_column_int(st, 9);
	copy_text(c->stop_reason, sizeof(c->stop_reason), sqlite3_column_text(st, 10));
	return 0;
}

static int finding_row(sqlite3_stmt *st, void *ctx)
{
	struct report_data *d = ctx;
	struct report_finding *f, *arr = grow(d->findings, d->n_findings, sizeof(*f));

	if (!arr)
		return -1;
	d->findings = arr;
	f = &arr[d->n_findings++];
	memset(f, 0, sizeof(*f));
	f->rank = sqlite3_column_int(st, 0);
	copy_text(f->kind, sizeof(f->kind), sqlite3_column_text(st, 1));
	copy_text(f->subject, sizeof(f->subject), sqlite3_column_text(st, 2));
	copy_text(f->direction, sizeof(f->direction), sqlite3_column_text(st, 3));
	f->severity = sqlite3_column_double(st, 4);
	copy_text(f->severity_text, sizeof(f->severity_text), sqlite3_column_text(st, 5));
	f->confidence = sqlite3_column_double(st, 6);
	f->onset_ns = sqlite3_column_int64(st, 7);
	f->flows_hurt = sqlite3_column_int(st, 8);
	const unsigned char *ev = sqlite3_column_text(st, 9);
	f->evidence = strdup(ev ? (const char *)ev : "");
	if (!f->evidence)
		return -1;
	neutralize_controls(f->evidence, true);
	return 0;
}

#define FLOW_COLUMNS                                                                       \
	"id, src_ip, dst_ip, dst_qpn, udp_sport, transport, peer_qp_id, packets, bytes,"  \
	" first_ns, last_ns, retransmitted_packets, naks_psn_seq, naks_other, rnr_naks,"  \
	" timeouts, cnps, ecn_ce, ack_samples, ack_latency_p50_us, ack_latency_p99_us,"   \
	" ack_latency_max_us"

static int flow_row(sqlite3_stmt *st, void *ctx)
{
	struct report_data *d = ctx;
	struct report_flow *f, *arr = grow(d->flows, d->n_flows, sizeof(*f));

	if (!arr)
		return -1;
	d->flows = arr;
	f = &arr[d->n_flows++];
	memset(f, 0, sizeof(*f));
	f->id = sqlite3_column_int64(st, 0);
	copy_text(f->src, sizeof(f->src), sqlite3_column_text(st, 1));
	copy_text(f->dst, sizeof(f->dst), sqlite3_column_text(st, 2));
	f->dst_qpn = (uint32_t)sqlite3_column_int64(st, 3);
	f->udp_sport = (uint16_t)sqlite3_column_int(st, 4);
	copy_text(f->transport, sizeof(f->transport), sqlite3_column_text(st, 5));
	f->peer_id = sqlite3_column_int64(st, 6);
	f->packets = sqlite3_column_int64(st, 7);
	f->bytes = sqlite3_column_int64(st, 8);
	f->first_ns = sqlite3_column_int64(st, 9);
	f->last_ns = sqlite3_column_int64(st, 10);
	f->retransmitted = sqlite3_column_int64(st, 11);
	f->naks_psn_seq = sqlite3_column_int64(st, 12);
	f->naks_other = sqlite3_column_int64(st, 13);
	f->rnr_naks = sqlite3_column_int64(st, 14);
	f->timeouts = sqlite3_column_int64(st, 15);
	f->cnps = sqlite3_column_int64(st, 16);
	f->ecn_ce = sqlite3_column_int64(st, 17);
	f->ack_samples = sqlite3_column_int64(st, 18);
	f->p50_us = sqlite3_column_double(st, 19);
	f->p99_us = sqlite3_column_double(st, 20);
	f->max_us = sqlite3_column_double(st, 21);
	f->badness = sqlite3_column_double(st, 22);
	return 0;
}

static int pair_row(sqlite3_stmt *st, void *ctx)
{
	struct report_data *d = ctx;
	struct report_pair *p, *arr = grow(d->pairs, d->n_pairs, sizeof(*p));

	if (!arr)
		return -1;
	d->pairs = arr;
	p = &arr[d->n_pairs++];
	memset(p, 0, sizeof(*p));
	copy_text(p->src, sizeof(p->src), sqlite3_column_text(st, 0));
	copy_text(p->dst, sizeof(p->dst), sqlite3_column_text(st, 1));
	p->flows = (uint32_t)sqlite3_column_int(st, 2);
	p->packets = sqlite3_column_int64(st, 3);
	p->retransmitted = sqlite3_column_int64(st, 4);
	p->naks = sqlite3_column_int64(st, 5);
	p->cnps = sqlite3_column_int64(st, 6);
	p->ecn_ce = sqlite3_column_int64(st, 7);
	p->ack_samples = sqlite3_column_int64(st, 8);
	p->p50_us = sqlite3_column_double(st, 9);
	p->p99_us = sqlite3_column_double(st, 10);
	return 0;
}

static int totals_row(sqlite3_stmt *st, void *ctx)
{
	struct report_data *d = ctx;

	d->total_flows = sqlite3_column_int64(st, 0);
	d->total_packets = sqlite3_column_int64(st, 1);
	d->total_bytes = sqlite3_column_int64(st, 2);
	d->total_retransmitted = sqlite3_column_int64(st, 3);
	d->total_naks = sqlite3_column_int64(st, 4);
	d->total_rnr = sqlite3_column_int64(st, 5);
	d->total_timeouts = sqlite3_column_int64(st, 6);
	d->total_cnps = sqlite3_column_int64(st, 7);
	d->total_ecn_ce = sqlite3_column_int64(st, 8);
	d->first_ns = sqlite3_column_int64(st, 9);
	d->last_ns = sqlite3_column_int64(st, 10);
	return 0;
}

static int meta_row(sqlite3_stmt *st, void *ctx)
{
	struct report_data *d = ctx;
	const unsigned char *k = sqlite3_column_text(st, 0);

	if (k && !strcmp((const char *)k, "analyzer_version"))
		copy_text(d->analyzer_version, sizeof(d->analyzer_version), sqlite3_column_text(st, 1));
	return 0;
}

static int median_row(sqlite3_stmt *st, void *ctx)
{
	*(double *)ctx = sqlite3_column_double(st, 0);
	return 0;
}

int report_data_load(const char *db_path, size_t top_n, struct report_data *d, char *err,
		     size_t errlen)
{
	static const char *const required[] = { "qp", "capture", "finding" };
	sqlite3 *db = NULL;
	char sql[2048];
	double median = 0;
	int rc = -1;

	memset(d, 0, sizeof(*d));
	copy_text(d->db_path, sizeof(d->db_path), (const unsigned char *)db_path);
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot open database: %s", db_path,
			 db ? sqlite3_errmsg(db) : strerror(ENOMEM));
		goto cleanup;
	}
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (!table_exists(db, required[i])) {
			snprintf(err, errlen,
				 "%s: not an agentxdp analysis database (no table '%s'; make one with agentxdp-analyze TRACE -o %s)",
				 db_path, required[i], db_path);
			goto cleanup;
		}
	}
	{
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW)
				d->schema_version = sqlite3_column_int(st, 0);
			sqlite3_finalize(st);
		}
	}
	if (table_exists(db, "meta") &&
	    query_rows(db, "SELECT key, value FROM meta", meta_row, d, err, errlen))
		goto cleanup;
	if (query_rows(db,
		       "SELECT path, frames, bytes, roce_packets, malformed_packets, first_ns, last_ns,"
		       " capture_dropped, has_drop_counters, truncated, stop_reason FROM capture ORDER BY id",
		       capture_row, d, err, errlen))
		goto cleanup;
	for (size_t i = 0; i < d->n_captures; i++)
		d->total_malformed += d->captures[i].malformed;
	if (query_rows(db,
		       "SELECT rank, kind, subject, direction, severity, severity_text, confidence,"
		       " onset_ns, flows_hurt, evidence FROM finding ORDER BY rank",
		       finding_row, d, err, errlen))
		goto cleanup;
	if (query_rows(db,
		       "SELECT count(*), total(packets), total(bytes), total(retransmitted_packets),"
		       " total(naks_psn_seq) + total(naks_other), total(rnr_naks), total(timeouts),"
		       " total(cnps), total(ecn_ce), min(first_ns), max(last_ns) FROM qp",
		       totals_row, d, err, errlen))
		goto cleanup;
	/* The population's typical p99: the median of flow p99s, for "N x healthy" contrasts. */
	if (query_rows(db,
		       "SELECT ack_latency_p99_us FROM qp WHERE ack_samples > 0 ORDER BY ack_latency_p99_us"
		       " LIMIT 1 OFFSET (SELECT count(*) FROM qp WHERE ack_samples > 0) / 2",
		       median_row, &median, err, errlen))
		goto cleanup;
	d->healthy_median_p99_us_x1000 = (uint64_t)(median * 1000);
	/*
	 * Badness: loss events per 1000 packets weigh like one multiple of the typical p99, so a
	 * lossy flow and a slow flow rank on one scale. Documented in docs/agentxdp-report.8.
	 */
	snprintf(sql, sizeof(sql),
		 "SELECT " FLOW_COLUMNS ", (CASE WHEN ack_samples > 0 AND %f > 0 THEN ack_latency_p99_us / %f ELSE 0 END)"
		 " + 1000.0 * (retransmitted_packets + naks_psn_seq + naks_other + rnr_naks + timeouts + cnps)"
		 " / max(packets, 1) AS badness FROM qp ORDER BY badness DESC, id LIMIT %zu",
		 median, median, top_n);
	if (query_rows(db, sql, flow_row, d, err, errlen))
		goto cleanup;
	snprintf(sql, sizeof(sql),
		 "SELECT src_ip, dst_ip, count(*), total(packets), total(retransmitted_packets),"
		 " total(naks_psn_seq + naks_other + rnr_naks), total(cnps), total(ecn_ce), total(ack_samples),"
		 " max(CASE WHEN ack_samples > 0 THEN ack_latency_p50_us END),"
		 " max(CASE WHEN ack_samples > 0 THEN ack_latency_p99_us END) AS p99"
		 " FROM qp GROUP BY src_ip, dst_ip ORDER BY p99 DESC NULLS LAST, src_ip, dst_ip LIMIT %zu",
		 top_n);
	if (query_rows(db, sql, pair_row, d, err, errlen))
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
	d->findings = NULL;
	d->captures = NULL;
	d->flows = NULL;
	d->pairs = NULL;
	d->n_findings = d->n_captures = d->n_flows = d->n_pairs = 0;
}
