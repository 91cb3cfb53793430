/* store_sqlite.c: write the analysis into SQLite (schema: docs/schema.md). */
#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/util/log.h"
#include "lib/util/text_buf.h"
#include "lib/store/store_latency.h"
#include "lib/store/store_retx.h"
#include "lib/store/store_rows.h"
#include "lib/store/store_sqlite.h"
#include "lib/util/util.h"
#include "lib/store/store_links.h"
#include "lib/store/store_owner.h"

/* Tables before qp. */
static const char schema_sql[] =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);\n"
	"CREATE TABLE capture (id INTEGER PRIMARY KEY, path TEXT NOT NULL, frames INTEGER,"
	" bytes INTEGER, roce_packets INTEGER, other_packets INTEGER, malformed_packets INTEGER,"
	" first_ns INTEGER, last_ns INTEGER, capture_dropped INTEGER, has_drop_counters INTEGER,"
	" ts_backwards INTEGER, truncated INTEGER, stop_reason TEXT, flows INTEGER,"
	" unpaired_flows INTEGER, one_direction INTEGER);\n"
	"CREATE TABLE endpoint (ip TEXT NOT NULL, capture_id INTEGER NOT NULL, ip_version INTEGER,"
	" flows_out INTEGER, flows_in INTEGER, packets_out INTEGER, packets_in INTEGER,"
	" bytes_out INTEGER, bytes_in INTEGER, PRIMARY KEY (ip, capture_id));\n"
	"";

/* Also in the private database that picks the kept flows early (store_findings_known()). */
#define FINDING_TABLE_SQL                                                                        \
	"CREATE TABLE finding (rank INTEGER PRIMARY KEY, level TEXT NOT NULL, kind TEXT NOT NULL,"  \
	" subject_kind TEXT, subject TEXT NOT NULL, direction TEXT, severity REAL,"                 \
	" severity_text TEXT, confidence REAL, onset_ns INTEGER, flows_hurt INTEGER,"               \
	" evidence TEXT);\n"

/* The qp table is built from qp_columns[] (below); these come after it. */
static const char schema_tail_sql[] =
	"CREATE TABLE sample_kind (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n"
	"CREATE TABLE latency_sample " LATENCY_SAMPLE_COLUMNS_SQL ";\n"
	"CREATE TABLE retransmission (qp_id INTEGER NOT NULL, ts_ns INTEGER NOT NULL,"
	" psn INTEGER, opcode INTEGER, cause TEXT, tx_count INTEGER, first_tx_ns INTEGER,"
	" prev_tx_ns INTEGER, trigger_ns INTEGER);\n"
	"CREATE TABLE retransmission_burst (qp_id INTEGER NOT NULL, cause TEXT, psn_first INTEGER,"
	" psn_last INTEGER, packets INTEGER NOT NULL, ts_first_ns INTEGER NOT NULL,"
	" ts_last_ns INTEGER NOT NULL, opcode INTEGER, tx_count_max INTEGER, first_tx_ns INTEGER,"
	" prev_tx_ns INTEGER, trigger_ns INTEGER);\n"
	"CREATE TABLE nak (qp_id INTEGER, responder_qp_id INTEGER, ts_ns INTEGER NOT NULL,"
	" psn INTEGER, msn INTEGER, syndrome INTEGER, kind TEXT, rnr_timer_ns INTEGER);\n"
	"CREATE TABLE cnp (qp_id INTEGER, cnp_qp_id INTEGER, ts_ns INTEGER NOT NULL);\n"
	"CREATE TABLE qp_window (qp_id INTEGER NOT NULL, start_ns INTEGER NOT NULL,"
	" packets INTEGER, bytes INTEGER, goodput_bytes INTEGER, retransmitted_packets INTEGER,"
	" naks INTEGER, timeouts INTEGER, cnps INTEGER, ecn_ce INTEGER, ack_samples INTEGER,"
	" ack_latency_mean_us REAL, ack_latency_p50_us REAL, ack_latency_p99_us REAL,"
	" ack_latency_max_us REAL);\n"
	"CREATE TABLE malformed (capture_id INTEGER NOT NULL, reason TEXT NOT NULL,"
	" packets INTEGER NOT NULL);\n"
	FINDING_TABLE_SQL
	"CREATE TABLE link (name TEXT PRIMARY KEY, a TEXT NOT NULL, b TEXT NOT NULL, kind TEXT NOT NULL,"
	" a_tier INTEGER, b_tier INTEGER);\n"
	"CREATE TABLE flow_link (qp_id INTEGER NOT NULL, link TEXT NOT NULL, share REAL NOT NULL,"
	" a_to_b INTEGER);\n"
	"CREATE TABLE latency_window (qp_id INTEGER NOT NULL, kind INTEGER NOT NULL,"
	" start_ns INTEGER NOT NULL, samples INTEGER, sum_ns INTEGER, min_ns INTEGER, p50_ns INTEGER,"
	" p99_ns INTEGER, max_ns INTEGER);\n"
	/* Keyed by its one lookup path, with no index to build: the rows come in key order. */
	"CREATE TABLE latency_hist (qp_id INTEGER NOT NULL, kind INTEGER NOT NULL, lo_ns INTEGER NOT NULL,"
	" hi_ns INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (qp_id, kind, lo_ns)) WITHOUT ROWID;\n"
	"CREATE VIEW latency_sample_v AS SELECT s.qp_id, k.name AS kind, s.ts_ns, s.psn,"
	" s.latency_ns, s.latency_ns / 1000.0 AS latency_us FROM latency_sample s"
	" JOIN sample_kind k ON k.id = s.kind;\n";

/*
 * Built after the load: cheaper than maintaining them row by row. Once the reading ends,
 * they are built beside the snapshot and localization (store_reading_done()): by then the
 * event tables have all their rows; qp and, with --samples findings, latency_sample and
 * retransmission get theirs after (a few thousand rows, and the kept flows' resends), which
 * then maintain these indexes row by row. In this order, so the schema reads as before.
 */
static const char closed_index_sql[] =
	"CREATE INDEX qp_key ON qp (src_ip, dst_ip, dst_qpn);\n"
	"CREATE INDEX latency_sample_qp ON latency_sample " LATENCY_SAMPLE_INDEX_SQL ";\n"
	"CREATE INDEX latency_window_qp ON latency_window (qp_id, kind, start_ns);\n"
	"CREATE INDEX retransmission_qp ON retransmission (qp_id, ts_ns);\n"
	"CREATE INDEX retransmission_burst_qp ON retransmission_burst (qp_id, ts_first_ns);\n"
	"CREATE INDEX nak_qp ON nak (qp_id, ts_ns);\n"
	"CREATE INDEX cnp_qp ON cnp (qp_id, ts_ns);\n"
	"CREATE INDEX qp_window_qp ON qp_window (qp_id, start_ns);\n";
/* flow_link's rows come with the flows, at the end. */
static const char index_sql[] = "CREATE INDEX flow_link_link ON flow_link (link, qp_id);\n";

enum stmt_id {
	ST_NAK,
	ST_CNP,
	ST_WINDOW,
	ST_N,
};

/* Each statement's head, for store_prepare_rows(). */
static const char *const stmt_sql[ST_N] = {
	[ST_NAK] = "INSERT INTO nak (qp_id, responder_qp_id, ts_ns, psn, msn, syndrome, kind, rnr_timer_ns) VALUES ",
	[ST_CNP] = "INSERT INTO cnp (qp_id, cnp_qp_id, ts_ns) VALUES ",
	[ST_WINDOW] = "INSERT INTO qp_window (qp_id, start_ns, packets, bytes, goodput_bytes, retransmitted_packets,"
		      " naks, timeouts, cnps, ecn_ce, ack_samples, ack_latency_mean_us, ack_latency_p50_us,"
		      " ack_latency_p99_us, ack_latency_max_us) VALUES ",
};

/* Columns of each, for its EV_BATCH-row statement. */
static const int stmt_cols[ST_N] = { [ST_NAK] = 8, [ST_CNP] = 3, [ST_WINDOW] = 15 };

/*
 * Event rows wait here and go in EV_BATCH at a time: one statement step per batch instead of
 * one per row (qp_window alone can have millions). The rows keep their order. EV_PEND rows
 * (EV_PEND / EV_BATCH steps) go in together: SQLite's code and pages are cold after the
 * tracker's packets, and a 64-row step between them cost 5x a step among others.
 */
#define EV_BATCH 64
#define EV_PEND 1024

struct window_row {
	uint64_t flow_id;
	struct flow_window w;
};

union ev_row {
	struct qp_nak_event nak;
	struct qp_cnp_event cnp;
	struct window_row window;
};

/* The fields every event and frame reads first, in one cache line; the row buffers after. */
struct store {
	sqlite3 *db;
	int failed;		/* first SQLite error code (store_failed() reads it per frame) */
	struct store_lat *lat;	/* latency_sample, latency_window, latency_hist */
	struct store_retx *retx; /* retransmission_burst, retransmission */
	int n_pend[ST_N];
	bool closing, closed;	/* close_tables() running on `closer`; done */
	bool parts_closed;	/* its latency and retransmission parts closed (under lock) */
	pthread_t closer;
	pthread_mutex_t lock;
	pthread_cond_t parts_done;
	struct qp_event_sink sink;
	struct store_opts opts;
	char *path;		/* final name */
	char *tmp_path;		/* where it is built */
	sqlite3_stmt *st[ST_N];	/* one row */
	sqlite3_stmt *many[ST_N]; /* EV_BATCH rows */
	union ev_row pend[ST_N][EV_PEND];
	char errmsg[256];
};

static void note_error(struct store *s, int rc, const char *what)
{
	store_note_sqlite_error(&s->failed, s->errmsg, sizeof(s->errmsg), s->path, s->db, rc, what);
}

static int exec(struct store *s, const char *sql, const char *what)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK) {
		note_error(s, rc, what);
		return -1;
	}
	return 0;
}

static void step(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE)
		note_error(s, rc, what);
	sqlite3_reset(st);
}

static void bind_us(sqlite3_stmt *st, int i, uint64_t samples, double us)
{
	if (samples)
		sqlite3_bind_double(st, i, us);
	else
		sqlite3_bind_null(st, i);
}

/*
 * The qp table: one row per column gives its name, its SQL type and where its value comes
 * from in struct flow_stats. The CREATE TABLE, the INSERT's column list and the binding are
 * all generated from it, so a new column is one line here.
 */
enum qp_col_kind {
	QC_INT,		/* an unsigned integer field (1, 2, 4 or 8 bytes) */
	QC_ID,		/* the same, NULL when 0 (unknown) */
	QC_US,		/* a double field, NULL when its sample count is 0 */
	QC_CAPTURE,	/* vantage + 1 (the capture table's id) */
	QC_SRC_IP,
	QC_DST_IP,
	QC_TRANSPORT,
	QC_ROLE,
};

struct qp_column {
	const char *name;
	const char *type;	/* SQL type and constraints */
	enum qp_col_kind kind;
	size_t off, size;	/* the field in struct flow_stats */
	size_t samples_off;	/* QC_US: its uint64_t sample count */
};

#define FS_FIELD(field) offsetof(struct flow_stats, field), sizeof(((struct flow_stats *)0)->field)
#define QP_INT(name, type, field) { name, type, QC_INT, FS_FIELD(field), 0 }
#define QP_ID(name, field) { name, "INTEGER", QC_ID, FS_FIELD(field), 0 }
#define QP_US(name, field, samples) { name, "REAL", QC_US, FS_FIELD(field), offsetof(struct flow_stats, samples) }
#define QP_SPECIAL(name, type, kind) { name, type, kind, 0, 0, 0 }

static const struct qp_column qp_columns[] = {
	QP_INT("id", "INTEGER PRIMARY KEY", id),
	QP_SPECIAL("capture_id", "INTEGER NOT NULL", QC_CAPTURE),
	QP_SPECIAL("src_ip", "TEXT NOT NULL", QC_SRC_IP),
	QP_SPECIAL("dst_ip", "TEXT NOT NULL", QC_DST_IP),
	QP_INT("dst_qpn", "INTEGER NOT NULL", key.dst_qpn),
	QP_ID("src_qpn", src_qpn),
	QP_INT("udp_sport", "INTEGER", udp_sport),
	QP_INT("ip_version", "INTEGER", ip_version),
	QP_ID("ttl_min", ttl_min),
	QP_ID("ttl_max", ttl_max),
	QP_SPECIAL("transport", "TEXT", QC_TRANSPORT),
	QP_SPECIAL("role", "TEXT", QC_ROLE),
	QP_ID("peer_qp_id", peer_id),
	QP_INT("cm_confirmed", "INTEGER", cm_confirmed),
	QP_INT("packets", "INTEGER", packets),
	QP_INT("bytes", "INTEGER", bytes),
	QP_INT("goodput_bytes", "INTEGER", goodput_bytes),
	QP_INT("first_ns", "INTEGER", first_ns),
	QP_INT("last_ns", "INTEGER", last_ns),
	QP_INT("first_transmissions", "INTEGER", first_transmissions),
	QP_INT("retransmitted_packets", "INTEGER", retransmitted_packets),
	QP_INT("naks_psn_seq", "INTEGER", naks_psn_seq),
	QP_INT("naks_other", "INTEGER", naks_other),
	QP_INT("rnr_naks", "INTEGER", rnr_naks),
	QP_INT("rnr_wait_ns", "INTEGER", rnr_wait_ns),
	QP_INT("timeouts", "INTEGER", timeouts),
	QP_INT("cnps", "INTEGER", cnps),
	QP_INT("ecn_ce", "INTEGER", ecn_ce),
	QP_INT("dup_acks", "INTEGER", dup_acks),
	QP_INT("out_of_order", "INTEGER", out_of_order),
	QP_INT("duplicates", "INTEGER", duplicates),
	QP_INT("psn_gaps", "INTEGER", psn_gaps),
	QP_INT("ts_backwards", "INTEGER", ts_backwards),
	QP_INT("naks_carried", "INTEGER", naks_total),
	QP_INT("ack_samples", "INTEGER", ack_samples),
	QP_US("ack_latency_p50_us", ack_latency_p50_us, ack_samples),
	QP_US("ack_latency_p99_us", ack_latency_p99_us, ack_samples),
	QP_US("ack_latency_max_us", ack_latency_max_us, ack_samples),
	QP_US("ack_latency_mad_us", ack_latency_mad_us, ack_samples),
	QP_INT("read_samples", "INTEGER", read_samples),
	QP_US("read_latency_p50_us", read_latency_p50_us, read_samples),
	QP_US("read_latency_p99_us", read_latency_p99_us, read_samples),
	QP_US("read_latency_max_us", read_latency_max_us, read_samples),
	QP_US("read_first_p50_us", read_first_p50_us, read_first_samples),
	QP_US("read_first_p99_us", read_first_p99_us, read_first_samples),
	QP_INT("atomic_samples", "INTEGER", atomic_samples),
	QP_US("atomic_latency_p50_us", atomic_latency_p50_us, atomic_samples),
	QP_US("atomic_latency_p99_us", atomic_latency_p99_us, atomic_samples),
	QP_INT("completion_samples", "INTEGER", completion_samples),
	QP_US("completion_p50_us", completion_p50_us, completion_samples),
	QP_US("completion_p99_us", completion_p99_us, completion_samples),
	QP_US("completion_max_us", completion_max_us, completion_samples),
	QP_ID("first_ce_ns", first_ce_ns),
	QP_ID("last_ce_ns", last_ce_ns),
	QP_ID("first_cnp_ns", first_cnp_ns),
	QP_ID("last_cnp_ns", last_cnp_ns),
	QP_INT("read_rereads", "INTEGER", read_gaps),
};

/* "CREATE TABLE qp (id INTEGER PRIMARY KEY, ...)" or "INSERT INTO qp (id, ...) VALUES (?, ...)". */
static char *qp_sql(int insert)
{
	struct text_buf b = { 0 };

	text_buf_printf(&b, insert ? "INSERT INTO qp (" : "CREATE TABLE qp (");
	for (size_t i = 0; i < ARRAY_SIZE(qp_columns); i++)
		text_buf_printf(&b, "%s%s%s%s", i ? ", " : "", qp_columns[i].name, insert ? "" : " ",
				insert ? "" : qp_columns[i].type);
	if (insert)
		for (size_t i = 0; i < ARRAY_SIZE(qp_columns); i++)
			text_buf_printf(&b, "%s", i ? ", ?" : ") VALUES (?");
	text_buf_printf(&b, ")");
	if (b.failed) {
		text_buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* The unsigned integer of 1, 2, 4 or 8 bytes at p. */
static uint64_t field_uint(const void *p, size_t size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return u16;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	default:
		assert(size == 8);
		memcpy(&u64, p, 8);
		return u64;
	}
}

static void bind_qp_column(sqlite3_stmt *st, int i, const struct qp_column *c, const struct flow_stats *f)
{
	const char *base = (const char *)f;
	char addr[ADDR_STR_LEN];
	uint64_t samples;
	double us;

	switch (c->kind) {
	case QC_INT:
		bind_u64(st, i, field_uint(base + c->off, c->size));
		break;
	case QC_ID:
		bind_id(st, i, field_uint(base + c->off, c->size));
		break;
	case QC_US:
		memcpy(&samples, base + c->samples_off, sizeof(samples));
		memcpy(&us, base + c->off, sizeof(us));
		bind_us(st, i, samples, us);
		break;
	case QC_CAPTURE:
		sqlite3_bind_int64(st, i, (sqlite3_int64)f->vantage + 1);
		break;
	case QC_SRC_IP:
	case QC_DST_IP:
		addr_str(c->kind == QC_SRC_IP ? f->key.src_ip : f->key.dst_ip, addr, sizeof(addr));
		sqlite3_bind_text(st, i, addr, -1, SQLITE_TRANSIENT);
		break;
	case QC_TRANSPORT:
		sqlite3_bind_text(st, i, store_transport_name(f->transport), -1, SQLITE_STATIC);
		break;
	case QC_ROLE:
		sqlite3_bind_text(st, i, flow_role_name(f->role), -1, SQLITE_STATIC);
		break;
	}
}

static int store_create_qp(struct store *s)
{
	char *sql = qp_sql(0);
	int rc;

	if (!sql) {
		note_error(s, SQLITE_NOMEM, "the schema");
		return -1;
	}
	rc = exec(s, sql, "the schema");
	free(sql);
	return rc;
}

/* ---- the sink ---- */

static void sink_latency(void *ctx, const struct qp_latency_sample *x)
{
	struct store *s = ctx;

	if (!s->failed)
		store_lat_sample(s->lat, x);
}

/* Each bind_*() binds one row at parameters o + 1 ... (o: the row's offset in its statement). */
static void bind_nak(sqlite3_stmt *st, int o, const struct qp_nak_event *e)
{
	bind_id(st, o + 1, e->flow_id);
	bind_id(st, o + 2, e->responder_flow_id);
	bind_u64(st, o + 3, e->ts_ns);
	sqlite3_bind_int64(st, o + 4, e->psn);
	sqlite3_bind_int64(st, o + 5, e->msn);
	sqlite3_bind_int(st, o + 6, e->syndrome);
	sqlite3_bind_text(st, o + 7, qp_nak_kind_name(e->kind), -1, SQLITE_STATIC);
	if (e->kind == QP_NAK_RNR)
		bind_u64(st, o + 8, e->rnr_timer_ns);
	else
		sqlite3_bind_null(st, o + 8);
}

static void bind_cnp(sqlite3_stmt *st, int o, const struct qp_cnp_event *e)
{
	bind_id(st, o + 1, e->flow_id);
	bind_id(st, o + 2, e->cnp_flow_id);
	bind_u64(st, o + 3, e->ts_ns);
}

static void bind_window(sqlite3_stmt *st, int o, const struct window_row *r)
{
	const struct flow_window *w = &r->w;

	bind_u64(st, o + 1, r->flow_id);
	bind_u64(st, o + 2, w->start_ns);
	bind_u64(st, o + 3, w->packets);
	bind_u64(st, o + 4, w->bytes);
	bind_u64(st, o + 5, w->goodput_bytes);
	bind_u64(st, o + 6, w->retransmitted_packets);
	bind_u64(st, o + 7, w->naks);
	bind_u64(st, o + 8, w->timeouts);
	bind_u64(st, o + 9, w->cnps);
	bind_u64(st, o + 10, w->ecn_ce);
	bind_u64(st, o + 11, w->ack_samples);
	if (w->ack_samples) {
		sqlite3_bind_double(st, o + 12, (double)w->ack_latency_sum_ns / (double)w->ack_samples / 1000.0);
		sqlite3_bind_double(st, o + 13, w->ack_latency_p50_ns / 1000.0);
		sqlite3_bind_double(st, o + 14, w->ack_latency_p99_ns / 1000.0);
		sqlite3_bind_double(st, o + 15, w->ack_latency_max_ns / 1000.0);
	} else {
		for (int i = 12; i <= 15; i++)
			sqlite3_bind_null(st, o + i);
	}
}

static void bind_nak_at(void *ctx, sqlite3_stmt *st, int o, int i)
{
	bind_nak(st, o, &((const union ev_row *)ctx)[i].nak);
}

static void bind_cnp_at(void *ctx, sqlite3_stmt *st, int o, int i)
{
	bind_cnp(st, o, &((const union ev_row *)ctx)[i].cnp);
}

static void bind_window_at(void *ctx, sqlite3_stmt *st, int o, int i)
{
	bind_window(st, o, &((const union ev_row *)ctx)[i].window);
}

static const char *const stmt_what[ST_N] = {
	[ST_NAK] = "NAKs",
	[ST_CNP] = "CNPs",
	[ST_WINDOW] = "time windows",
};

/* Insert the rows waiting for statement id, in order. */
static void flush_rows(struct store *s, enum stmt_id id)
{
	int n = s->n_pend[id], rc = SQLITE_DONE;
	sqlite3_stmt *one = s->st[id], *many = s->many[id];
	union ev_row *rows = s->pend[id];

	s->n_pend[id] = 0;
	if (s->failed)
		return;
	/* one call per statement: each inlines its own bind function */
	if (id == ST_NAK)
		rc = store_flush_rows(one, many, EV_BATCH, stmt_cols[id], n, bind_nak_at, rows);
	else if (id == ST_CNP)
		rc = store_flush_rows(one, many, EV_BATCH, stmt_cols[id], n, bind_cnp_at, rows);
	else if (id == ST_WINDOW)
		rc = store_flush_rows(one, many, EV_BATCH, stmt_cols[id], n, bind_window_at, rows);
	if (rc != SQLITE_DONE)
		note_error(s, rc, stmt_what[id]);
}

/* The next free row for statement id (the waiting rows are inserted first when full). */
static union ev_row *pend_row(struct store *s, enum stmt_id id)
{
	if (s->n_pend[id] == EV_PEND)
		flush_rows(s, id);
	return &s->pend[id][s->n_pend[id]++];
}

static void sink_retx(void *ctx, const struct qp_retx_event *e)
{
	struct store *s = ctx;

	if (!s->failed)
		store_retx_event(s->retx, e);
}

static void sink_nak(void *ctx, const struct qp_nak_event *e)
{
	struct store *s = ctx;

	if (!s->failed)
		pend_row(s, ST_NAK)->nak = *e;
}

static void sink_cnp(void *ctx, const struct qp_cnp_event *e)
{
	struct store *s = ctx;

	if (!s->failed)
		pend_row(s, ST_CNP)->cnp = *e;
}

static void sink_window(void *ctx, uint64_t flow_id, const struct flow_window *w)
{
	struct store *s = ctx;

	if (!s->failed)
		pend_row(s, ST_WINDOW)->window = (struct window_row){ flow_id, *w };
}

/* Both statements of each event table. */
static int prepare_events(struct store *s)
{
	for (int i = 0; i < ST_N; i++)
		if (store_prepare_rows(s->db, stmt_sql[i], stmt_cols[i], 1, &s->st[i]) != SQLITE_OK ||
		    store_prepare_rows(s->db, stmt_sql[i], stmt_cols[i], EV_BATCH, &s->many[i]) != SQLITE_OK)
			return -1;
	return 0;
}

/*
 * A part's first error (lat, retx) as the store's. Its message by address: the arguments'
 * order is unspecified, so a `msg` read beside the call that sets it may not be set yet.
 */
static void part_failed(struct store *s, int failed, const char *const *msg)
{
	if (failed && !s->failed) {
		s->failed = SQLITE_ERROR;
		snprintf(s->errmsg, sizeof(s->errmsg), "%s", *msg);
	}
}

/* The rows and indexes of every table nothing adds to after the reading (no finding needed). */
static void close_tables(struct store *s)
{
	const char *msg;

	if (!s->failed && store_lat_close(s->lat))
		part_failed(s, store_lat_failed(s->lat, &msg), &msg);
	if (!s->failed && store_retx_close(s->retx))
		part_failed(s, store_retx_failed(s->retx, &msg), &msg);
	/* The parts are left alone from here: store_findings_known() may read their spills. */
	pthread_mutex_lock(&s->lock);
	s->parts_closed = true;
	pthread_cond_signal(&s->parts_done);
	pthread_mutex_unlock(&s->lock);
	for (int i = 0; i < ST_N; i++)
		flush_rows(s, (enum stmt_id)i);
	if (!s->failed)
		exec(s, closed_index_sql, "indexes");
	s->closed = true;
	if (!s->failed) {
		/* Most of the file is written now: the disk starts on it, the final fsync waits less. */
		int fd = open(s->tmp_path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
			close(fd);
		}
	}
}

static void *closer_main(void *arg)
{
	double t0 = util_thread_cpu_s();

	close_tables(arg);
	pr_debug("store: the closed tables' rows and indexes: %.3f s CPU\n", util_thread_cpu_s() - t0);
	return NULL;
}

void store_reading_done(struct store *s)
{
	/* Without a thread, store_commit() does it. */
	if (!s->closed && !s->closing)
		s->closing = !pthread_create(&s->closer, NULL, closer_main, s);
}

/* The closing thread ended: every entry that touches the database starts here. */
static void store_wait(struct store *s)
{
	if (s->closing)
		pthread_join(s->closer, NULL);
	s->closing = false;
}

/* ---- open / commit ---- */

void store_abort(struct store *s)
{
	if (!s)
		return;
	store_wait(s);
	for (int i = 0; i < ST_N; i++) {
		sqlite3_finalize(s->st[i]);
		sqlite3_finalize(s->many[i]);
	}
	store_lat_free(s->lat);
	store_retx_free(s->retx);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->parts_done);
	if (s->db)
		sqlite3_close(s->db);
	if (s->tmp_path) {
		unlink(s->tmp_path);
		free(s->tmp_path);
	}
	free(s->path);
	free(s);
}

int store_open(struct store **out, const char *path, const struct store_opts *opts, char *err,
	       size_t errlen)
{
	struct store *s;
	size_t n = strlen(path) + 32;
	int fd, rc;

	*out = NULL;
	/* The database is renamed into place at the end: that would replace a device node
	 * (/dev/null), a FIFO, a capture or another tool's tables; only a new name, an empty
	 * file or an analysis database of ours will do. */
	rc = store_may_replace(path, err, errlen);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -1;
	}
	if (opts)
		s->opts = *opts;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->parts_done, NULL);
	s->path = strdup(path);
	s->tmp_path = malloc(n);
	if (!s->path || !s->tmp_path) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		goto fail;
	}
	/* Same directory as the final name, so the rename is atomic. */
	snprintf(s->tmp_path, n, "%s.tmp-XXXXXX", path);
	fd = mkstemp(s->tmp_path);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot create a file there: %s", path, strerror(errno));
		free(s->tmp_path);
		s->tmp_path = NULL;
		goto fail;
	}
	if (fchmod(fd, 0640))
		pr_warn("%s: chmod 0640: %s\n", s->tmp_path, strerror(errno));
	close(fd);
	rc = sqlite3_open_v2(s->tmp_path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: sqlite: %s", path, s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		goto fail;
	}
	/*
	 * A throwaway file until renamed: no journal, no fsync until the end. A 2 MB page cache:
	 * the tables are appended to, so their last pages are all the load touches again (a
	 * 16 MB cache was 4096 pages malloc'ed and faulted in, 2% of a run, and 15 MB of peak
	 * RSS), and the index sorter sorts runs of the cache's size in memory, in the CPU's
	 * cache (2 MB sorted 2.4M retransmission rows in 0.6x the CPU of 16 MB). Only main
	 * is locked: the kept rows' database (store_lat_open()) has a writer of its own.
	 */
	if (exec(s, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA main.locking_mode=EXCLUSIVE;"
		    " PRAGMA temp_store=FILE; PRAGMA cache_size=-2048; PRAGMA page_size=4096;",
		 "settings") ||
	    exec(s, schema_sql, "the schema") || store_create_qp(s) || exec(s, schema_tail_sql, "the schema")) {
		snprintf(err, errlen, "%s", s->errmsg);
		goto fail;
	}
	/* Before the transaction: ATTACH cannot run inside one. */
	if (store_lat_open(&s->lat, s->db, s->path, s->tmp_path, opts, err, errlen) ||
	    store_retx_open(&s->retx, s->db, s->path, s->tmp_path, opts, err, errlen))
		goto fail;
	{
		char sql[128];
		snprintf(sql, sizeof(sql), "BEGIN; PRAGMA user_version=%d", STORE_SCHEMA_VERSION);
		if (exec(s, sql, "the schema")) {
			snprintf(err, errlen, "%s", s->errmsg);
			goto fail;
		}
	}
	if (prepare_events(s)) {
		snprintf(err, errlen, "%s: sqlite: %s", path, sqlite3_errmsg(s->db));
		goto fail;
	}
	for (int k = 0; k < QP_SAMPLE_KINDS; k++) {
		char sql[160];
		snprintf(sql, sizeof(sql), "INSERT INTO sample_kind (id, name) VALUES (%d, '%s')", k,
			 qp_sample_kind_name((uint8_t)k));
		if (exec(s, sql, "the schema")) {
			snprintf(err, errlen, "%s", s->errmsg);
			goto fail;
		}
	}
	s->sink.ctx = s;
	s->sink.latency = sink_latency;
	s->sink.retransmission = sink_retx;
	s->sink.nak = sink_nak;
	s->sink.cnp = sink_cnp;
	s->sink.window = sink_window;
	*out = s;
	return 0;
fail:
	store_abort(s);
	return -1;
}

void store_set_window(struct store *s, uint64_t window_ns)
{
	store_lat_set_window(s->lat, window_ns);
}

const struct qp_event_sink *store_sink(struct store *s)
{
	return &s->sink;
}

int store_failed(const struct store *s)
{
	const char *msg;

	if (s->failed)
		return s->failed;
	if (s->lat && store_lat_failed(s->lat, &msg))
		return store_lat_failed(s->lat, &msg);
	return s->retx ? store_retx_failed(s->retx, &msg) : 0;
}

uint64_t store_sample_rows(const struct store *s)
{
	return s->lat ? store_lat_rows(s->lat) : 0;
}

const char *store_samples_name(uint8_t samples)
{
	static const char *const names[] = {
		[STORE_SAMPLES_FINDINGS] = "findings",
		[STORE_SAMPLES_ALL] = "all",
		[STORE_SAMPLES_NONE] = "none",
	};

	return samples < ARRAY_SIZE(names) ? names[samples] : NULL;
}

static sqlite3_stmt *prepare(struct store *s, const char *sql, const char *what)
{
	sqlite3_stmt *st = NULL;

	if (s->failed)
		return NULL;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		note_error(s, sqlite3_errcode(s->db), what);
		return NULL;
	}
	return st;
}

int store_meta(struct store *s, const char *key, const char *value)
{
	sqlite3_stmt *st;

	store_wait(s);
	st = prepare(s, "INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)", "meta");

	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	step(s, st, "meta");
	sqlite3_finalize(st);
	return s->failed ? -1 : 0;
}

int store_captures(struct store *s, const struct store_capture *caps, size_t n)
{
	sqlite3_stmt *st;

	store_wait(s);
	st = prepare(s, "INSERT INTO capture (id, path, frames, bytes, roce_packets, other_packets,"
				      " malformed_packets, first_ns, last_ns, capture_dropped, has_drop_counters,"
				      " ts_backwards, truncated, stop_reason, flows, unpaired_flows, one_direction)"
				      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
				   "captures");

	if (!st)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct trace_health *h = caps[i].health;

		sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_text(st, 2, caps[i].path, -1, SQLITE_TRANSIENT);
		bind_u64(st, 3, h->frames);
		bind_u64(st, 4, h->bytes);
		bind_u64(st, 5, caps[i].roce_packets);
		bind_u64(st, 6, caps[i].other_packets);
		bind_u64(st, 7, caps[i].malformed_packets);
		bind_ns(st, 8, h->first_ns);
		bind_ns(st, 9, h->last_ns);
		if (h->has_drop_counters)
			bind_u64(st, 10, h->capture_dropped);
		else
			sqlite3_bind_null(st, 10);
		sqlite3_bind_int(st, 11, h->has_drop_counters);
		bind_u64(st, 12, h->ts_backwards);
		sqlite3_bind_int(st, 13, h->truncated);
		if (h->stop_reason[0])
			sqlite3_bind_text(st, 14, h->stop_reason, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 14);
		bind_u64(st, 15, caps[i].flows);
		bind_u64(st, 16, caps[i].unpaired_flows);
		sqlite3_bind_int(st, 17, caps[i].one_direction);
		step(s, st, "captures");
	}
	sqlite3_finalize(st);
	return s->failed ? -1 : 0;
}

const char *store_transport_name(uint8_t transport)
{
	static const char *const names[8] = { "RC", "UC", "RD", "UD", "CNP", "XRC", "DC", "vendor" };
	return names[transport & 7];
}

struct endpoint_acc {
	uint8_t ip[16];
	uint32_t capture;
	uint8_t ip_version;
	uint64_t flows_out, flows_in, packets_out, packets_in, bytes_out, bytes_in;
};

/* Count flow f at both of its ends (per capture) in eps. */
static int endpoints_add(struct endpoint_acc **eps, size_t *n_eps, size_t *cap_eps, const struct flow_stats *f)
{
	for (int side = 0; side < 2; side++) {
		const uint8_t *ip = side ? f->key.dst_ip : f->key.src_ip;
		struct endpoint_acc *e = NULL;

		for (size_t j = 0; j < *n_eps; j++)
			if ((*eps)[j].capture == f->vantage && !memcmp((*eps)[j].ip, ip, 16)) {
				e = &(*eps)[j];
				break;
			}
		if (!e) {
			if (util_ensure_mem((void **)eps, cap_eps, sizeof(**eps), *n_eps + 1))
				return -ENOMEM;
			e = &(*eps)[(*n_eps)++];
			memset(e, 0, sizeof(*e));
			memcpy(e->ip, ip, 16);
			e->capture = f->vantage;
			e->ip_version = f->ip_version;
		}
		if (side == 0) {
			e->flows_out++;
			e->packets_out += f->packets;
			e->bytes_out += f->bytes;
		} else {
			e->flows_in++;
			e->packets_in += f->packets;
			e->bytes_in += f->bytes;
		}
	}
	return 0;
}

static void store_endpoints(struct store *s, const struct endpoint_acc *eps, size_t n_eps)
{
	sqlite3_stmt *st = prepare(s, "INSERT INTO endpoint (ip, capture_id, ip_version, flows_out, flows_in,"
				      " packets_out, packets_in, bytes_out, bytes_in) VALUES (?,?,?,?,?,?,?,?,?)",
				   "endpoints");
	char addr[ADDR_STR_LEN];

	for (size_t j = 0; st && j < n_eps && !s->failed; j++) {
		sqlite3_bind_text(st, 1, addr_str(eps[j].ip, addr, sizeof(addr)), -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)eps[j].capture + 1);
		sqlite3_bind_int(st, 3, eps[j].ip_version);
		bind_u64(st, 4, eps[j].flows_out);
		bind_u64(st, 5, eps[j].flows_in);
		bind_u64(st, 6, eps[j].packets_out);
		bind_u64(st, 7, eps[j].packets_in);
		bind_u64(st, 8, eps[j].bytes_out);
		bind_u64(st, 9, eps[j].bytes_in);
		step(s, st, "endpoints");
	}
	sqlite3_finalize(st);
}

int store_flows(struct store *s, const struct flow_stats *flows, size_t n)
{
	char *sql = qp_sql(1);
	sqlite3_stmt *st = NULL;
	struct endpoint_acc *eps = NULL;
	size_t n_eps = 0, cap_eps = 0;

	store_wait(s);
	if (!sql) {
		note_error(s, SQLITE_NOMEM, "flows");
		return -1;
	}
	st = prepare(s, sql, "flows");
	if (!st)
		goto cleanup;
	for (size_t i = 0; i < n && !s->failed; i++) {
		for (size_t c = 0; c < ARRAY_SIZE(qp_columns); c++)
			bind_qp_column(st, (int)c + 1, &qp_columns[c], &flows[i]);
		step(s, st, "flows");
		if (endpoints_add(&eps, &n_eps, &cap_eps, &flows[i]))
			note_error(s, SQLITE_NOMEM, "endpoints");
	}
	sqlite3_finalize(st);
	store_endpoints(s, eps, n_eps);
cleanup:
	free(eps);
	free(sql);
	return s->failed ? -1 : 0;
}

/* Bind by name: the statement's own ":column" parameters, so order cannot drift. */
#define BIND_IDX(st, name) sqlite3_bind_parameter_index((st), ":" name)

static const char finding_insert_sql[] =
	"INSERT INTO finding (rank, level, kind, subject_kind, subject, direction, severity,"
	" severity_text, confidence, onset_ns, flows_hurt, evidence) VALUES (:rank, :level, :kind,"
	" :subject_kind, :subject, :direction, :severity, :severity_text, :confidence, :onset_ns,"
	" :flows_hurt, :evidence)";

static void bind_finding(sqlite3_stmt *st, const struct finding *f)
{
	sqlite3_bind_int(st, BIND_IDX(st, "rank"), f->rank);
	sqlite3_bind_text(st, BIND_IDX(st, "level"), finding_level_name(f->level), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, BIND_IDX(st, "kind"), finding_kind_name(f->kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, BIND_IDX(st, "subject_kind"), finding_subject_kind_name(f->subject_kind),
			  -1, SQLITE_STATIC);
	sqlite3_bind_text(st, BIND_IDX(st, "subject"), f->subject, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, BIND_IDX(st, "direction"), f->direction, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, BIND_IDX(st, "severity"), f->severity);
	sqlite3_bind_text(st, BIND_IDX(st, "severity_text"), f->severity_text, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, BIND_IDX(st, "confidence"), f->confidence);
	bind_ns(st, BIND_IDX(st, "onset_ns"), f->onset_ns);
	sqlite3_bind_int64(st, BIND_IDX(st, "flows_hurt"), f->flows_hurt);
	if (f->evidence)
		sqlite3_bind_text(st, BIND_IDX(st, "evidence"), f->evidence, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, BIND_IDX(st, "evidence"));
}

int store_findings(struct store *s, const struct finding *f, size_t n)
{
	sqlite3_stmt *st;

	store_wait(s);
	st = prepare(s, finding_insert_sql, "findings");

	if (!st)
		return -1;
	for (size_t i = 0; i < n; i++) {
		bind_finding(st, &f[i]);
		step(s, st, "findings");
	}
	sqlite3_finalize(st);
	return s->failed ? -1 : 0;
}

/* The qp and finding rows in db (a private copy): SQLITE_OK, or the first error. */
static int copy_for_pick(sqlite3 *db, const struct flow_stats *flows, size_t n, const struct finding *f,
			 size_t n_f)
{
	char *create = qp_sql(0), *insert = qp_sql(1);
	sqlite3_stmt *qp = NULL, *fi = NULL;
	int rc = create && insert ? SQLITE_OK : SQLITE_NOMEM;

	if (rc == SQLITE_OK && (rc = sqlite3_exec(db, create, NULL, NULL, NULL)) == SQLITE_OK)
		rc = sqlite3_exec(db, FINDING_TABLE_SQL "BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_prepare_v2(db, insert, -1, &qp, NULL)) == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, finding_insert_sql, -1, &fi, NULL);
	for (size_t i = 0; i < n && rc == SQLITE_OK; i++) {
		for (size_t c = 0; c < ARRAY_SIZE(qp_columns); c++)
			bind_qp_column(qp, (int)c + 1, &qp_columns[c], &flows[i]);
		rc = sqlite3_step(qp) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
		sqlite3_reset(qp);
	}
	for (size_t i = 0; i < n_f && rc == SQLITE_OK; i++) {
		bind_finding(fi, &f[i]);
		rc = sqlite3_step(fi) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
		sqlite3_reset(fi);
	}
	sqlite3_finalize(qp);
	sqlite3_finalize(fi);
	free(create);
	free(insert);
	return rc;
}

void store_findings_known(struct store *s, const struct flow_stats *flows, size_t n, const struct finding *f,
			  size_t n_f)
{
	const char *msg;
	sqlite3 *db = NULL;
	uint8_t *keep = NULL;
	size_t n_keep = 0;
	double t0 = util_thread_cpu_s();
	int rc;

	if (!s->closing || s->opts.samples != STORE_SAMPLES_FINDINGS)
		return;
	pthread_mutex_lock(&s->lock);
	while (!s->parts_closed)
		pthread_cond_wait(&s->parts_done, &s->lock);
	pthread_mutex_unlock(&s->lock);
	if (store_lat_failed(s->lat, &msg) || store_retx_failed(s->retx, &msg))
		return;
	/* The same SQL over the same rows as the commit's pick, on a connection of its own. */
	rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		rc = copy_for_pick(db, flows, n, f, n_f);
	if (rc == SQLITE_OK)
		keep = store_lat_pick_flows(db, &n_keep, &rc);
	sqlite3_close(db);
	if (rc != SQLITE_OK) {
		free(keep);
		return; /* the commit picks them itself, and says what failed */
	}
	store_lat_read_kept(s->lat, keep, n_keep);
	store_retx_read_kept(s->retx, keep, n_keep);
	pr_debug("store: the kept rows read early: %.3f s CPU\n", util_thread_cpu_s() - t0);
}

int store_malformed(struct store *s, int capture_index, const char *reason, uint64_t packets)
{
	sqlite3_stmt *st;

	store_wait(s);
	st = prepare(s, "INSERT INTO malformed (capture_id, reason, packets) VALUES (?,?,?)",
				   "malformed counts");

	if (!st)
		return -1;
	sqlite3_bind_int(st, 1, capture_index + 1);
	sqlite3_bind_text(st, 2, reason, -1, SQLITE_TRANSIENT);
	bind_u64(st, 3, packets);
	step(s, st, "malformed counts");
	sqlite3_finalize(st);
	return s->failed ? -1 : 0;
}

const char *store_temp_path(const struct store *s)
{
	return s ? s->tmp_path : NULL;
}

int store_commit(struct store *s, char *err, size_t errlen)
{
	double t0 = util_thread_cpu_s(), t1;
	const char *msg;
	int rc = -1;

	store_wait(s);
	if (!s->closed)
		close_tables(s);
	if (!s->failed && (store_lat_finish(s->lat) || store_lat_failed(s->lat, &msg)))
		part_failed(s, store_lat_failed(s->lat, &msg), &msg);
	if (!s->failed) {
		size_t n_keep;
		const uint8_t *keep = store_lat_kept(s->lat, &n_keep);

		if (store_retx_finish(s->retx, keep, n_keep) || store_retx_failed(s->retx, &msg))
			part_failed(s, store_retx_failed(s->retx, &msg), &msg);
	}
	/* their statements, before the database closes */
	store_lat_free(s->lat);
	s->lat = NULL;
	store_retx_free(s->retx);
	s->retx = NULL;
	for (int i = 0; i < ST_N; i++)
		flush_rows(s, (enum stmt_id)i);
	t1 = util_thread_cpu_s();
	if (!s->failed)
		exec(s, index_sql, "indexes");
	if (!s->failed)
		exec(s, "COMMIT", "the database");
	pr_debug("store: commit: %.3f s CPU (rows %.3f s, the last indexes %.3f s)\n", util_thread_cpu_s() - t0,
		 t1 - t0, util_thread_cpu_s() - t1);
	for (int i = 0; i < ST_N; i++) {
		sqlite3_finalize(s->st[i]);
		sqlite3_finalize(s->many[i]);
		s->st[i] = NULL;
		s->many[i] = NULL;
	}
	if (s->failed) {
		snprintf(err, errlen, "%s; nothing written", s->errmsg);
		goto out;
	}
	if (sqlite3_close(s->db) != SQLITE_OK) {
		snprintf(err, errlen, "%s: closing the database: %s", s->path, sqlite3_errmsg(s->db));
		goto out;
	}
	s->db = NULL;
	{
		/* Data on disk before the name points at it. */
		int fd = open(s->tmp_path, O_RDONLY);

		if (fd < 0 || fsync(fd)) {
			snprintf(err, errlen, "%s: %s; nothing written", s->path, strerror(errno));
			if (fd >= 0)
				close(fd);
			goto out;
		}
		close(fd);
	}
	/* Checked again: the file may have changed hands during the analysis. */
	if (store_may_replace(s->path, err, errlen)) {
		rc = -2;
		goto out;
	}
	if (rename(s->tmp_path, s->path)) {
		snprintf(err, errlen, "%s: cannot rename %s into place: %s", s->path, s->tmp_path, strerror(errno));
		goto out;
	}
	free(s->tmp_path);
	s->tmp_path = NULL;
	rc = 0;
out:
	store_abort(s);
	return rc;
}

/* ------------------------------------------------------------ links (--topology) */

struct link_rows {
	struct store *s;
	sqlite3_stmt *link, *flow_link;
};

static void link_row(void *ctx, const char *name, const char *a, const char *b, const char *kind, int a_tier,
		     int b_tier)
{
	struct link_rows *r = ctx;

	sqlite3_bind_text(r->link, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(r->link, 2, a, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(r->link, 3, b, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(r->link, 4, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int(r->link, 5, a_tier);
	sqlite3_bind_int(r->link, 6, b_tier);
	step(r->s, r->link, "links");
}

static void flow_link_row(void *ctx, uint64_t qp_id, const char *link, double share, bool a_to_b)
{
	struct link_rows *r = ctx;

	bind_u64(r->flow_link, 1, qp_id);
	sqlite3_bind_text(r->flow_link, 2, link, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(r->flow_link, 3, share);
	sqlite3_bind_int(r->flow_link, 4, a_to_b);
	step(r->s, r->flow_link, "flow links");
}

int store_links(struct store *s, const struct topology *t, const struct flow_stats *flows, size_t n)
{
	struct link_rows r = { .s = s };
	struct store_links_cb cb = { .link = link_row, .flow_link = flow_link_row, .ctx = &r };

	store_wait(s);
	r.link = prepare(s, "INSERT INTO link (name, a, b, kind, a_tier, b_tier) VALUES (?,?,?,?,?,?)", "links");
	r.flow_link = prepare(s, "INSERT INTO flow_link (qp_id, link, share, a_to_b) VALUES (?,?,?,?)", "flow links");
	if (r.link && r.flow_link && store_links_walk(t, flows, n, &cb))
		note_error(s, SQLITE_NOMEM, "links");
	sqlite3_finalize(r.link);
	sqlite3_finalize(r.flow_link);
	return s->failed ? -1 : 0;
}
