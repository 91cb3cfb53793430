/* store_latency.c: latency_sample, latency_window and latency_hist rows (docs/schema.md). */
#include <errno.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/store/store_kept.h"
#include "lib/store/store_latency.h"
#include "lib/store/store_rows.h"
#include "lib/store/store_spill.h"
#include "lib/track/latency_hist.h"
#include "lib/track/track_mem.h"
#include "lib/util/util.h"

_Static_assert(QP_SAMPLE_KINDS <= LAT_HIST_KINDS, "every sample kind has its histogram");

/* Rows go in BATCH_ROWS at a time: one statement step per batch, not per row; PEND_ROWS
 * wait and go in together, while SQLite's code and pages are in the CPU's cache. */
#define BATCH_ROWS 64
#define PEND_ROWS 1024
#define MAX_COLS 9

struct row_batch {
	sqlite3 *db;
	sqlite3_stmt *one, *many;
	const char *what;
	int cols, n;
	int64_t v[PEND_ROWS * MAX_COLS];
};

/*
 * One flow: the window its thinning and histogram count in, and the histogram. On two lines
 * of its own, both fetched before its samples are counted: at 104 bytes unaligned, half the
 * flows spread over three lines, and the middle one, with the histogram's fields, was not.
 */
struct lat_flow {
	alignas(UTIL_LINE_BYTES) uint64_t win_start;
	uint32_t kept[QP_SAMPLE_KINDS];
	struct lat_flow_hist h;
};
_Static_assert(sizeof(struct lat_flow) <= 2 * UTIL_LINE_BYTES, "drain_samples() fetches two lines");

/* A kept raw row, read back from the spill. */
struct lat_row {
	uint64_t flow_id, ts_ns, latency_ns;
	uint32_t psn, kind;
};

/* Samples wait here and are counted LAT_PEND at a time, their memory prefetched first:
 * each flow's histogram is its own table, so counting one sample was mostly a cache miss. */
#define LAT_PEND 64

/* B_KEPT: kept_sample in the kept rows' database. */
enum { B_SAMPLE, B_WINDOW, B_HIST, B_KEPT, B_N };

/* The fields every sample and frame reads first, in one cache line; the buffers after. */
struct store_lat {
	sqlite3 *db;
	int failed;		/* the first SQLite error code (store_failed() reads it per frame) */
	int n_pend;
	bool closed;		/* store_lat_close() done */
	struct store_opts opts;
	uint64_t window_ns;
	struct lat_flow *flows;	/* by flow id - 1 */
	size_t n_flows;
	uint64_t rows;
	uint64_t spill_ts;	/* the last spilled row's ts_ns */
	const char *path;	/* the database's final name, for messages */
	uint8_t *keep;		/* keep[id]: the flows whose raw rows are kept (findings mode) */
	size_t n_keep;
	bool picked;		/* keep chosen early (store_lat_read_kept()) */
	struct store_kept kept;	/* STORE_SAMPLES_FINDINGS: the kept rows' database */
	uint64_t kept_rows;
	struct qp_latency_sample pend[LAT_PEND];
	struct row_batch b[B_N];
	struct spill_file spill;	/* STORE_SAMPLES_FINDINGS: every raw row, until the end */
	struct track_mem mem;		/* the histograms' tables */
	char errmsg[256];
};

void store_note_sqlite_error(int *failed, char *msg, size_t msglen, const char *path, sqlite3 *db,
			     int rc, const char *what)
{
	if (*failed)
		return;
	*failed = rc ? rc : SQLITE_ERROR;
	if (rc == SQLITE_FULL)
		snprintf(msg, msglen, "%s: disk full while writing %s", path, what);
	else
		snprintf(msg, msglen, "%s: writing %s: %s", path, what, sqlite3_errmsg(db));
}

static void note(struct store_lat *l, int rc, const char *what)
{
	store_note_sqlite_error(&l->failed, l->errmsg, sizeof(l->errmsg), l->path, l->db, rc, what);
}

static void note_errno(struct store_lat *l, int err, const char *what)
{
	if (l->failed)
		return;
	l->failed = err == ENOSPC ? SQLITE_FULL : SQLITE_IOERR;
	snprintf(l->errmsg, sizeof(l->errmsg), "%s: %s: %s", l->path, what, strerror(err));
}

static int64_t sat(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

int store_prepare_rows(sqlite3 *db, const char *head, int cols, int rows, sqlite3_stmt **st)
{
	size_t len = strlen(head) + (size_t)rows * ((size_t)cols * 2 + 2) + 1, off;
	char *sql = malloc(len);
	int rc;

	if (!sql)
		return SQLITE_NOMEM;
	off = (size_t)snprintf(sql, len, "%s", head);
	for (int r = 0; r < rows; r++) {
		sql[off++] = r ? ',' : '(';
		if (r)
			sql[off++] = '(';
		for (int c = 0; c < cols; c++) {
			sql[off++] = '?';
			sql[off++] = c + 1 < cols ? ',' : ')';
		}
	}
	sql[off] = 0;
	rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
	free(sql);
	return rc;
}

static int batch_open(sqlite3 *db, struct row_batch *b, const char *head, int cols, const char *what)
{
	int rc = store_prepare_rows(db, head, cols, 1, &b->one);

	if (rc == SQLITE_OK)
		rc = store_prepare_rows(db, head, cols, BATCH_ROWS, &b->many);
	b->db = db;
	b->cols = cols;
	b->what = what;
	return rc;
}

static void bind_ints(void *ctx, sqlite3_stmt *st, int o, int i)
{
	const struct row_batch *b = ctx;
	const int64_t *v = &b->v[i * b->cols];

	for (int c = 0; c < b->cols; c++)
		sqlite3_bind_int64(st, o + c + 1, v[c]);
}

/* Insert the rows waiting in the batch, in order. */
static void batch_flush(struct store_lat *l, struct row_batch *b)
{
	int n = b->n, rc;

	b->n = 0;
	if (l->failed || !n)
		return;
	rc = store_flush_rows(b->one, b->many, BATCH_ROWS, b->cols, n, bind_ints, b);
	if (rc != SQLITE_DONE)
		store_note_sqlite_error(&l->failed, l->errmsg, sizeof(l->errmsg), l->path, b->db, rc, b->what);
}

static int64_t *batch_row(struct store_lat *l, struct row_batch *b)
{
	if (b->n == PEND_ROWS)
		batch_flush(l, b);
	return &b->v[b->n++ * b->cols];
}

/* A latency_sample row into batch B (latency_sample's own, or kept_sample's), counted in *N. */
static void sample_row(struct store_lat *l, struct row_batch *b, uint64_t *n, uint64_t flow_id, uint32_t kind,
		       uint64_t ts_ns, uint32_t psn, uint64_t latency_ns)
{
	int64_t *r = batch_row(l, b);

	r[0] = sat(flow_id);
	r[1] = kind;
	r[2] = sat(ts_ns);
	r[3] = psn;
	r[4] = sat(latency_ns);
	(*n)++;
}

struct window_ctx {
	struct store_lat *l;
	uint64_t flow_id, start_ns;
};

static void window_row(void *ctx, const struct lat_window_summary *w)
{
	struct window_ctx *c = ctx;
	int64_t *r = batch_row(c->l, &c->l->b[B_WINDOW]);

	r[0] = sat(c->flow_id);
	r[1] = w->kind;
	r[2] = sat(c->start_ns);
	r[3] = sat(w->samples);
	r[4] = sat(w->sum_ns);
	r[5] = sat(w->min_ns);
	r[6] = sat(w->p50_ns);
	r[7] = sat(w->p99_ns);
	r[8] = sat(w->max_ns);
}

static void close_window(struct store_lat *l, uint64_t flow_id, struct lat_flow *f)
{
	struct window_ctx c = { .l = l, .flow_id = flow_id, .start_ns = f->win_start };

	if (lat_flow_hist_close_window(&f->h, &l->mem, window_row, &c))
		note_errno(l, ENOMEM, "latency windows");
}

static void hist_row(void *ctx, uint32_t kind, uint32_t bucket, uint64_t count)
{
	struct window_ctx *c = ctx;
	int64_t *r = batch_row(c->l, &c->l->b[B_HIST]);

	r[0] = sat(c->flow_id);
	r[1] = kind;
	r[2] = sat(latency_hist_lo(bucket));
	r[3] = sat(latency_hist_hi(bucket));
	r[4] = sat(count);
}

/* One raw row into the spill file: flow, ts - the previous row's (zigzag), latency, psn and kind. */
static void spill_row(struct store_lat *l, const struct qp_latency_sample *x)
{
	int err;
	uint8_t *p = store_spill_room(&l->spill, &err);

	if (err) {
		note_errno(l, err, "writing the latency sample spill file");
		return;
	}
	p = spill_put(p, x->flow_id);
	p = spill_put(p, spill_zigzag(x->ts_ns - l->spill_ts));
	p = spill_put(p, x->latency_ns);
	p = spill_put(p, (uint64_t)x->psn << 8 | x->kind);
	store_spill_done(&l->spill, p);
	l->spill_ts = x->ts_ns;
}

/* The flow's state, grown to hold its id; NULL without memory (or id 0). */
static struct lat_flow *flow_of(struct store_lat *l, uint64_t id)
{
	if (!id)
		return NULL;
	if (id > l->n_flows) {
		size_t n = id < l->n_flows * 2 ? l->n_flows * 2 : id < 16 ? 16 : id;
		/* on cache lines as its type is (realloc's 16 bytes would undo it), zeroed */
		struct lat_flow *nf = util_line_calloc(n, sizeof(*nf));

		if (!nf)
			return NULL;
		if (l->n_flows)
			memcpy(nf, l->flows, l->n_flows * sizeof(*nf));
		free(l->flows);
		l->flows = nf;
		l->n_flows = n;
	}
	return &l->flows[id - 1];
}

/* One sample, in the order they came. */
static void count_sample(struct store_lat *l, const struct qp_latency_sample *x)
{
	struct lat_flow *f = flow_of(l, x->flow_id);

	if (l->failed)
		return;
	if (f) {
		if (x->ts_ns >= f->win_start + l->window_ns) {
			close_window(l, x->flow_id, f);
			f->win_start = x->ts_ns - x->ts_ns % l->window_ns;
			memset(f->kept, 0, sizeof(f->kept));
		}
		/* Late samples count in the current window, as the tracker's windows do. */
		if (lat_flow_hist_add(&f->h, &l->mem, x->kind, x->latency_ns))
			note_errno(l, ENOMEM, "latency histograms");
		/* --sample-rows: the first rows of each flow, kind and window. */
		if (l->opts.max_samples_per_window) {
			if (f->kept[x->kind] >= l->opts.max_samples_per_window)
				return;
			f->kept[x->kind]++;
		}
	}
	if (l->opts.samples == STORE_SAMPLES_ALL) {
		sample_row(l, &l->b[B_SAMPLE], &l->rows, x->flow_id, x->kind, x->ts_ns, x->psn, x->latency_ns);
	} else if (l->opts.samples == STORE_SAMPLES_FINDINGS) {
		spill_row(l, x);
	}
}

/* Count the waiting samples: their flows' states, then their table slots, are fetched ahead. */
static void drain_samples(struct store_lat *l)
{
	int n = l->n_pend;
	uint64_t max_id = 0;

	l->n_pend = 0;
	for (int i = 0; i < n; i++)
		if (l->pend[i].flow_id > max_id)
			max_id = l->pend[i].flow_id;
	flow_of(l, max_id); /* grown once, so the pointers below stay put */
	for (int i = 0; i < n; i++)
		if (l->pend[i].flow_id && l->pend[i].flow_id <= l->n_flows) {
			const struct lat_flow *f = &l->flows[l->pend[i].flow_id - 1];

			__builtin_prefetch(f);
			__builtin_prefetch((const char *)(f + 1) - 1);
		}
	for (int i = 0; i < n; i++) {
		const struct qp_latency_sample *x = &l->pend[i];

		if (x->flow_id && x->flow_id <= l->n_flows) {
			const struct lat_flow *f = &l->flows[x->flow_id - 1];

			lat_flow_hist_prefetch(&f->h, x->kind, x->latency_ns);
			/* this sample closes the flow's window: count_sample() reads all of it */
			if (x->ts_ns >= f->win_start + l->window_ns)
				lat_flow_hist_prefetch_close(&f->h);
		}
	}
	for (int i = 0; i < n; i++)
		count_sample(l, &l->pend[i]);
}

void store_lat_sample(struct store_lat *l, const struct qp_latency_sample *x)
{
	if (l->failed)
		return;
	l->pend[l->n_pend++] = *x;
	if (l->n_pend == LAT_PEND)
		drain_samples(l);
}

/*
 * STORE_SAMPLES_FINDINGS keeps the raw rows of: the flows the findings' evidence lists, the
 * other direction of each, the report's healthy comparison (the 8 flows nearest the median
 * p50 that no finding lists), the 8 flows with the highest p99 ACK latency, the 8 with the
 * most loss events and the report's 10 worst flows (its default table and PSN charts).
 * Everything else is in latency_window and latency_hist.
 */
static const char keep_sql[] =
	"CREATE TEMP TABLE keep_flow (id INTEGER PRIMARY KEY);\n"
	"INSERT OR IGNORE INTO keep_flow SELECT json_extract(e.value, '$.id') FROM finding f,"
	" json_each(f.evidence, '$.flows') e WHERE json_valid(f.evidence)"
	" AND json_type(f.evidence, '$.flows') = 'array' AND e.type = 'object'"
	" AND json_type(e.value, '$.id') = 'integer';\n"
	"INSERT OR IGNORE INTO keep_flow SELECT qp.id FROM qp,"
	" (SELECT ack_latency_p50_us AS m FROM qp WHERE ack_samples > 0 ORDER BY ack_latency_p50_us"
	"  LIMIT 1 OFFSET (SELECT count(*) FROM qp WHERE ack_samples > 0) / 2) med"
	" WHERE qp.ack_samples > 0 AND qp.id NOT IN (SELECT id FROM keep_flow)"
	" ORDER BY abs(qp.ack_latency_p50_us - med.m), qp.id LIMIT 8;\n"
	"INSERT OR IGNORE INTO keep_flow SELECT peer_qp_id FROM qp WHERE peer_qp_id IS NOT NULL"
	" AND id IN (SELECT id FROM keep_flow);\n"
	"INSERT OR IGNORE INTO keep_flow SELECT id FROM qp WHERE ack_samples > 0"
	" ORDER BY ack_latency_p99_us DESC, id LIMIT 8;\n"
	"INSERT OR IGNORE INTO keep_flow SELECT id FROM qp"
	" WHERE retransmitted_packets + naks_psn_seq + naks_other + rnr_naks + timeouts > 0"
	" ORDER BY retransmitted_packets + naks_psn_seq + naks_other + rnr_naks + timeouts DESC, id LIMIT 8;\n"
	/* agentxdp-report's flow ranking (its PSN charts): p99 over the median p99 + loss per 1000 */
	"INSERT OR IGNORE INTO keep_flow SELECT id FROM qp,"
	" (SELECT ack_latency_p99_us AS m FROM qp WHERE ack_samples > 0 ORDER BY ack_latency_p99_us"
	"  LIMIT 1 OFFSET (SELECT count(*) FROM qp WHERE ack_samples > 0) / 2) med"
	" ORDER BY (CASE WHEN ack_samples > 0 AND med.m > 0 THEN ack_latency_p99_us / med.m ELSE 0 END)"
	" + 1000.0 * (retransmitted_packets + naks_psn_seq + naks_other + rnr_naks + timeouts + cnps)"
	" / max(packets, 1) DESC, id LIMIT 10;\n";

uint8_t *store_lat_pick_flows(sqlite3 *db, size_t *n, int *rcp)
{
	sqlite3_stmt *st = NULL;
	uint8_t *keep = NULL;
	int rc;

	*n = 0;
	rc = sqlite3_exec(db, keep_sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT id FROM keep_flow WHERE id > 0 ORDER BY id", -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		size_t len = *n;

		if ((uint64_t)id >= SIZE_MAX / 2)
			break; /* no flow has that id */
		if (util_ensure_mem((void **)&keep, &len, 1, (size_t)id + 1)) {
			rc = SQLITE_NOMEM;
			break;
		}
		memset(keep + *n, 0, len - *n);
		*n = len;
		keep[id] = 1;
		rc = SQLITE_OK;
	}
	*rcp = rc == SQLITE_DONE ? SQLITE_OK : rc;
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE || rc == SQLITE_OK)
		sqlite3_exec(db, "DROP TABLE temp.keep_flow", NULL, NULL, NULL);
	else {
		free(keep);
		keep = NULL;
		*n = 0;
	}
	return keep;
}

/*
 * The spilled rows of the picked flows, in the order they came, from where the spill file
 * is: each kept one to row(), until it returns non-zero (then *stopped). 0, or an errno.
 */
static int read_spill(struct store_lat *l, uint64_t *ts, int (*row)(struct store_lat *, const struct lat_row *),
		      bool *stopped)
{
	const uint8_t *p, *end;
	int rc;

	*stopped = false;
	while ((rc = store_spill_next(&l->spill, &p, &end)) > 0) {
		uint64_t flow_id, dts, latency_ns, psn_kind, row_ts;

		if (spill_get(&p, end, &flow_id) || spill_get(&p, end, &dts) || spill_get(&p, end, &latency_ns) ||
		    spill_get(&p, end, &psn_kind))
			return EIO;
		row_ts = *ts + spill_unzigzag(dts);
		if (flow_id < l->n_keep && l->keep[flow_id]) {
			struct lat_row x = { flow_id, row_ts, latency_ns, (uint32_t)(psn_kind >> 8),
					     (uint32_t)(psn_kind & 0xff) };

			if (row(l, &x)) {
				*stopped = true; /* the next read starts at this row */
				return 0;
			}
		}
		l->spill.pos = (size_t)(p - l->spill.buf);
		*ts = row_ts;
	}
	return rc < 0 ? -rc : 0;
}

static int insert_row(struct store_lat *l, const struct lat_row *x)
{
	sample_row(l, &l->b[B_SAMPLE], &l->rows, x->flow_id, x->kind, x->ts_ns, x->psn, x->latency_ns);
	return l->failed;
}

static int kept_row(struct store_lat *l, const struct lat_row *x)
{
	sample_row(l, &l->b[B_KEPT], &l->kept_rows, x->flow_id, x->kind, x->ts_ns, x->psn, x->latency_ns);
	return l->failed;
}

/* The kept rows into kept_sample, in the order they came (store_kept_build()'s fill). */
static void fill_kept(void *ctx)
{
	struct store_lat *l = ctx;
	uint64_t ts = 0;
	bool stopped;
	int rc = store_spill_rewind(&l->spill);

	if (!rc)
		rc = read_spill(l, &ts, kept_row, &stopped);
	if (rc)
		note_errno(l, rc, "reading the latency sample spill file");
	batch_flush(l, &l->b[B_KEPT]);
	sqlite3_finalize(l->b[B_KEPT].one);
	sqlite3_finalize(l->b[B_KEPT].many);
	l->b[B_KEPT].one = l->b[B_KEPT].many = NULL;
}

void store_lat_read_kept(struct store_lat *l, uint8_t *keep, size_t n_keep)
{
	l->keep = keep;
	l->n_keep = n_keep;
	l->picked = true;
	if (l->opts.samples == STORE_SAMPLES_FINDINGS && !l->failed && l->kept.db)
		store_kept_build(&l->kept, LATENCY_SAMPLE_INDEX_SQL, fill_kept, l);
}

/*
 * The kept rows into the empty latency_sample by a transfer (store_kept_copy()): 151,318
 * rows on the bench's non-blocking trace were 0.19 s of inserts with latency_sample_qp kept
 * row by row, against 0.05 s for the transfer, in the sqlite3 shell.
 */
static void copy_kept(struct store_lat *l)
{
	if (!store_kept_copy(&l->kept, l->db, "latency_sample"))
		l->rows += l->kept_rows;
}

/* The spilled rows of the picked flows, in the order they came: copied in if read early,
 * else read from the spill file now. */
static void replay_spill(struct store_lat *l)
{
	uint64_t ts = 0;
	bool stopped;
	int rc = 0;

	if (l->kept.built) {
		copy_kept(l);
		return;
	}
	if (!l->picked) {
		l->keep = store_lat_pick_flows(l->db, &l->n_keep, &rc);
		if (rc != SQLITE_OK)
			note(l, rc, "the choice of latency sample rows");
	}
	if (!l->failed && (rc = store_spill_rewind(&l->spill)))
		note_errno(l, rc, "reading the latency sample spill file");
	if (!l->failed && (rc = read_spill(l, &ts, insert_row, &stopped)))
		note_errno(l, rc, "reading the latency sample spill file");
}

int store_lat_close(struct store_lat *l)
{
	if (l->closed)
		return l->failed ? -1 : 0;
	l->closed = true;
	drain_samples(l);
	for (size_t i = 0; i < l->n_flows && !l->failed; i++) {
		struct lat_flow *f = &l->flows[i];
		struct window_ctx c = { .l = l, .flow_id = i + 1 };

		close_window(l, i + 1, f);
		if (lat_flow_hist_buckets(&f->h, hist_row, &c))
			note_errno(l, ENOMEM, "latency histograms");
		lat_flow_hist_free(&f->h, &l->mem);
	}
	for (int i = 0; i < B_N; i++)
		batch_flush(l, &l->b[i]);
	return l->failed ? -1 : 0;
}

int store_lat_finish(struct store_lat *l)
{
	store_lat_close(l);
	if (l->opts.samples == STORE_SAMPLES_FINDINGS && !l->failed)
		replay_spill(l);
	for (int i = 0; i < B_N; i++)
		batch_flush(l, &l->b[i]);
	if (!l->failed) {
		sqlite3_stmt *st;
		int rc = sqlite3_prepare_v2(l->db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('samples', ?)",
					    -1, &st, NULL);

		if (rc == SQLITE_OK) {
			sqlite3_bind_text(st, 1, store_samples_name(l->opts.samples), -1, SQLITE_STATIC);
			rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(l->db);
			sqlite3_finalize(st);
		}
		if (rc != SQLITE_OK)
			note(l, rc, "run metadata");
	}
	return l->failed ? -1 : 0;
}

/* The kept rows' database (STORE_SAMPLES_FINDINGS), attached as "kept": 0, or an SQLite error code. */
static int kept_open(struct store_lat *l, const char *base)
{
	int rc;

	l->kept = (struct store_kept){ .schema = "kept", .table = "kept_sample", .what = "kept latency samples",
				       .path = l->path, .failed = &l->failed, .errmsg = l->errmsg,
				       .errlen = sizeof(l->errmsg) };
	rc = store_kept_open(&l->kept, l->db, base, "-kept", LATENCY_SAMPLE_COLUMNS_SQL);
	if (rc == SQLITE_OK)
		rc = batch_open(l->kept.db, &l->b[B_KEPT],
				"INSERT INTO kept_sample (qp_id, kind, ts_ns, psn, latency_ns) VALUES ", 5,
				"kept latency samples");
	return rc;
}

int store_lat_open(struct store_lat **out, sqlite3 *db, const char *db_path, const char *spill_base,
		   const struct store_opts *opts, char *err, size_t errlen)
{
	static const char *const heads[B_N] = {
		[B_SAMPLE] = "INSERT INTO latency_sample (qp_id, kind, ts_ns, psn, latency_ns) VALUES ",
		[B_WINDOW] = "INSERT INTO latency_window (qp_id, kind, start_ns, samples, sum_ns, min_ns, p50_ns,"
			     " p99_ns, max_ns) VALUES ",
		[B_HIST] = "INSERT INTO latency_hist (qp_id, kind, lo_ns, hi_ns, count) VALUES ",
	};
	static const int cols[B_N] = { 5, 9, 5 };
	static const char *const what[B_N] = { "latency samples", "latency windows", "latency histograms" };
	struct store_lat *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l) {
		snprintf(err, errlen, "%s: %s", db_path, strerror(ENOMEM));
		return -1;
	}
	l->db = db;
	l->path = db_path;
	l->spill.fd = -1;
	l->window_ns = 1000000000ull;
	if (opts)
		l->opts = *opts;
	if (!store_samples_name(l->opts.samples)) {
		snprintf(err, errlen, "%s: unknown latency sample mode %u", db_path, l->opts.samples);
		goto fail;
	}
	for (int i = 0; i < B_KEPT; i++) {
		if (batch_open(db, &l->b[i], heads[i], cols[i], what[i]) != SQLITE_OK) {
			snprintf(err, errlen, "%s: sqlite: %s", db_path, sqlite3_errmsg(db));
			goto fail;
		}
	}
	if (l->opts.samples == STORE_SAMPLES_FINDINGS) {
		int rc = store_spill_open(&l->spill, spill_base, "-samples");

		if (rc) {
			snprintf(err, errlen, "%s: cannot create a file beside it: %s", db_path, strerror(rc));
			goto fail;
		}
		rc = kept_open(l, spill_base);
		if (rc != SQLITE_OK) {
			snprintf(err, errlen, "%s: the kept samples' database beside it: %s", db_path,
				 l->kept.db ? sqlite3_errmsg(l->kept.db) : sqlite3_errstr(rc));
			goto fail;
		}
	}
	*out = l;
	return 0;
fail:
	store_lat_free(l);
	return -1;
}

void store_lat_set_window(struct store_lat *l, uint64_t window_ns)
{
	if (window_ns)
		l->window_ns = window_ns;
}

int store_lat_failed(const struct store_lat *l, const char **msg)
{
	*msg = l->errmsg;
	return l->failed;
}

uint64_t store_lat_rows(const struct store_lat *l)
{
	return l->rows;
}

const uint8_t *store_lat_kept(const struct store_lat *l, size_t *n)
{
	*n = l->n_keep;
	return l->keep;
}

void store_lat_free(struct store_lat *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_flows; i++)
		lat_flow_hist_free(&l->flows[i].h, &l->mem);
	free(l->flows);
	track_mem_release(&l->mem);
	free(l->keep);
	for (int i = 0; i < B_N; i++) {
		sqlite3_finalize(l->b[i].one);
		sqlite3_finalize(l->b[i].many);
	}
	store_kept_close(&l->kept);
	store_spill_close(&l->spill);
	free(l);
}
