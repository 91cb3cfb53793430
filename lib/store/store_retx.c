/* store_retx.c: retransmission_burst and retransmission rows (docs/schema.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/store/store_latency.h"
#include "lib/store/store_retx.h"
#include "lib/store/store_rows.h"
#include "lib/store/store_spill.h"
#include "lib/util/util.h"

/* Rows go in BATCH_ROWS at a time: one statement step per batch, not per row. */
#define BATCH_ROWS 64
/* Rows waiting to go in together, while SQLite's code and pages are in the CPU's cache. */
#define PEND_ROWS 1024
/* Events wait here and are handled RETX_PEND at a time, their runs prefetched first. */
#define RETX_PEND 32

/* One go-back-N run of one flow: a retransmission_burst row. */
struct retx_burst {
	uint64_t flow_id;
	uint64_t ts_first_ns, ts_last_ns;	/* its first and last resent packet */
	uint64_t first_tx_ns, prev_tx_ns;	/* psn_first's first and previous transmission, 0 */
	uint64_t trigger_ns;			/* the first resend's: NAK time or silence start, 0 */
	uint64_t packets;			/* resent packets; 0: no run open */
	uint32_t psn_first, psn_last;		/* of the first and last resent packet */
	uint32_t tx_count_max;			/* the most transmissions of one of its PSNs */
	uint8_t cause, opcode;			/* enum qp_retx_cause; the first packet's opcode */
};

enum { R_BURST, R_PACKET, R_N };

struct retx_batch {
	sqlite3_stmt *one, *many;
	int cols, n;
};

/* The fields every event and frame reads first, in one cache line; the buffers after. */
struct store_retx {
	sqlite3 *db;
	int failed;		/* the first SQLite error code (store_failed() reads it per frame) */
	uint8_t samples;	/* enum store_samples */
	bool closed;		/* store_retx_close() done */
	uint32_t *open_of;	/* by flow id: index + 1 in open[], 0 none */
	size_t n_open_of;
	struct retx_burst *open; /* each retransmitting flow's current run */
	size_t n_open, cap_open;
	uint64_t spill_ts;	/* the last spilled row's ts_ns */
	const char *path;	/* the database's final name, for messages */
	int n_pend;
	struct qp_retx_event pend[RETX_PEND];
	struct retx_batch b[R_N];
	struct retx_burst bursts[PEND_ROWS];
	struct qp_retx_event packets[PEND_ROWS];
	struct spill_file spill; /* STORE_SAMPLES_FINDINGS: every packet row, until the end */
	bool read_early;	/* store_retx_read_kept() done */
	uint64_t replay_ts;	/* the spill's time where it stopped */
	struct qp_retx_event *pre; /* the kept rows it read, in order */
	size_t n_pre, cap_pre;
	char errmsg[256];
};

/* Kept rows held in memory at most (the commit reads the rest of the spill itself). */
#define PRE_ROWS_MAX (1u << 17)

static const char *const heads[R_N] = {
	[R_BURST] = "INSERT INTO retransmission_burst (qp_id, cause, psn_first, psn_last, packets, ts_first_ns,"
		    " ts_last_ns, opcode, tx_count_max, first_tx_ns, prev_tx_ns, trigger_ns) VALUES ",
	[R_PACKET] = "INSERT INTO retransmission (qp_id, ts_ns, psn, opcode, cause, tx_count, first_tx_ns,"
		     " prev_tx_ns, trigger_ns) VALUES ",
};
static const int cols[R_N] = { 12, 9 };
static const char *const what[R_N] = { "retransmission bursts", "retransmissions" };

static void note(struct store_retx *r, int rc, const char *w)
{
	store_note_sqlite_error(&r->failed, r->errmsg, sizeof(r->errmsg), r->path, r->db, rc, w);
}

static void note_errno(struct store_retx *r, int err, const char *w)
{
	if (r->failed)
		return;
	r->failed = err == ENOSPC ? SQLITE_FULL : err == ENOMEM ? SQLITE_NOMEM : SQLITE_IOERR;
	snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s: %s", r->path, w, strerror(err));
}

static void bind_burst(sqlite3_stmt *st, int o, const struct retx_burst *b)
{
	bind_u64(st, o + 1, b->flow_id);
	sqlite3_bind_text(st, o + 2, qp_retx_cause_name(b->cause), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, o + 3, b->psn_first);
	sqlite3_bind_int64(st, o + 4, b->psn_last);
	bind_u64(st, o + 5, b->packets);
	bind_u64(st, o + 6, b->ts_first_ns);
	bind_u64(st, o + 7, b->ts_last_ns);
	sqlite3_bind_int(st, o + 8, b->opcode);
	sqlite3_bind_int64(st, o + 9, b->tx_count_max);
	bind_ns(st, o + 10, b->first_tx_ns);
	bind_ns(st, o + 11, b->prev_tx_ns);
	bind_ns(st, o + 12, b->trigger_ns);
}

static void bind_packet(sqlite3_stmt *st, int o, const struct qp_retx_event *e)
{
	bind_u64(st, o + 1, e->flow_id);
	bind_u64(st, o + 2, e->ts_ns);
	sqlite3_bind_int64(st, o + 3, e->psn);
	sqlite3_bind_int(st, o + 4, e->opcode);
	sqlite3_bind_text(st, o + 5, qp_retx_cause_name(e->cause), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, o + 6, (int)e->tx_count);
	bind_ns(st, o + 7, e->first_tx_ns);
	bind_ns(st, o + 8, e->prev_tx_ns);
	bind_ns(st, o + 9, e->trigger_ns);
}

static void bind_burst_at(void *ctx, sqlite3_stmt *st, int o, int i)
{
	bind_burst(st, o, &((struct store_retx *)ctx)->bursts[i]);
}

static void bind_packet_at(void *ctx, sqlite3_stmt *st, int o, int i)
{
	bind_packet(st, o, &((struct store_retx *)ctx)->packets[i]);
}

/* Insert the rows waiting in batch k, in order. */
static void flush(struct store_retx *r, int k)
{
	struct retx_batch *b = &r->b[k];
	int n = b->n, rc;

	b->n = 0;
	if (r->failed)
		return;
	if (k == R_BURST)
		rc = store_flush_rows(b->one, b->many, BATCH_ROWS, b->cols, n, bind_burst_at, r);
	else
		rc = store_flush_rows(b->one, b->many, BATCH_ROWS, b->cols, n, bind_packet_at, r);
	if (rc != SQLITE_DONE)
		note(r, rc, what[k]);
}

static void burst_row(struct store_retx *r, const struct retx_burst *x)
{
	if (r->b[R_BURST].n == PEND_ROWS)
		flush(r, R_BURST);
	r->bursts[r->b[R_BURST].n++] = *x;
}

static void packet_row(struct store_retx *r, const struct qp_retx_event *e)
{
	if (r->b[R_PACKET].n == PEND_ROWS)
		flush(r, R_PACKET);
	r->packets[r->b[R_PACKET].n++] = *e;
}

/* Which of a spilled row's times are there (0 is "not seen": NULL in the row). */
enum { SP_FIRST_TX = 1, SP_PREV_TX = 2, SP_TRIGGER = 4, SP_RUN_START = 8 };

/*
 * One packet row into the spill file: flow, ts - the previous row's, which times follow,
 * each as ts - it (zigzag), psn with cause and opcode, tx_count.
 */
static void spill_row(struct store_retx *r, const struct qp_retx_event *e)
{
	int err;
	uint8_t *p = store_spill_room(&r->spill, &err);
	unsigned flags = (e->first_tx_ns ? SP_FIRST_TX : 0) | (e->prev_tx_ns ? SP_PREV_TX : 0) |
			 (e->trigger_ns ? SP_TRIGGER : 0) | (e->run_start ? SP_RUN_START : 0);

	if (err) {
		note_errno(r, err, "writing the retransmission spill file");
		return;
	}
	p = spill_put(p, e->flow_id);
	p = spill_put(p, spill_zigzag(e->ts_ns - r->spill_ts));
	p = spill_put(p, flags);
	if (e->first_tx_ns)
		p = spill_put(p, spill_zigzag(e->ts_ns - e->first_tx_ns));
	if (e->prev_tx_ns)
		p = spill_put(p, spill_zigzag(e->ts_ns - e->prev_tx_ns));
	if (e->trigger_ns)
		p = spill_put(p, spill_zigzag(e->ts_ns - e->trigger_ns));
	p = spill_put(p, (uint64_t)e->psn << 16 | (uint64_t)e->cause << 8 | e->opcode);
	p = spill_put(p, e->tx_count);
	store_spill_done(&r->spill, p);
	r->spill_ts = e->ts_ns;
}

/* The next spilled row from [*p, end), ts the previous row's: 0, or -1 when cut short. */
static int spill_read_row(const uint8_t **p, const uint8_t *end, uint64_t ts, struct qp_retx_event *e)
{
	uint64_t v[3] = { 0 }, flow_id, dts, flags, psn_cause, tx_count;
	uint64_t *out[3] = { &e->first_tx_ns, &e->prev_tx_ns, &e->trigger_ns };

	if (spill_get(p, end, &flow_id) || spill_get(p, end, &dts) || spill_get(p, end, &flags))
		return -1;
	memset(e, 0, sizeof(*e));
	e->flow_id = flow_id;
	e->ts_ns = ts + spill_unzigzag(dts);
	for (int i = 0; i < 3; i++) {
		if (!(flags & (1u << i)))
			continue;
		if (spill_get(p, end, &v[i]))
			return -1;
		*out[i] = e->ts_ns - spill_unzigzag(v[i]);
	}
	if (spill_get(p, end, &psn_cause) || spill_get(p, end, &tx_count))
		return -1;
	e->psn = (uint32_t)(psn_cause >> 16);
	e->cause = (uint8_t)(psn_cause >> 8);
	e->opcode = (uint8_t)psn_cause;
	e->tx_count = (uint32_t)tx_count;
	e->run_start = !!(flags & SP_RUN_START);
	return 0;
}

/* open_of[] grown to hold id: 0, or -1 without memory. */
static int grow_open_of(struct store_retx *r, uint64_t id)
{
	size_t n = r->n_open_of;

	if (id < r->n_open_of)
		return 0;
	if (id >= SIZE_MAX / 2 || util_ensure_mem((void **)&r->open_of, &n, sizeof(*r->open_of), id + 1))
		return -1;
	memset(r->open_of + r->n_open_of, 0, (n - r->n_open_of) * sizeof(*r->open_of));
	r->n_open_of = n;
	return 0;
}

/* The flow's run (packets 0: none open), made on its first resend; NULL without memory. */
static struct retx_burst *run_of(struct store_retx *r, uint64_t id)
{
	struct retx_burst *b;

	if (grow_open_of(r, id))
		return NULL;
	if (r->open_of[id])
		return &r->open[r->open_of[id] - 1];
	if (r->n_open >= UINT32_MAX ||
	    util_ensure_mem((void **)&r->open, &r->cap_open, sizeof(*r->open), r->n_open + 1))
		return NULL;
	b = &r->open[r->n_open++];
	memset(b, 0, sizeof(*b));
	r->open_of[id] = (uint32_t)r->n_open;
	return b;
}

/* One event, in the order they came: its row (or spill record), and its flow's run. */
static void retx_one(struct store_retx *r, const struct qp_retx_event *e)
{
	struct retx_burst *b;

	if (r->failed)
		return;
	if (r->samples == STORE_SAMPLES_ALL) {
		packet_row(r, e);
	} else if (r->samples == STORE_SAMPLES_FINDINGS) {
		spill_row(r, e);
	}
	b = run_of(r, e->flow_id);
	if (!b) {
		note_errno(r, ENOMEM, "retransmission bursts");
		return;
	}
	/* The tracker says where a run starts; a change of cause never continues one. */
	if (b->packets && (e->run_start || e->cause != b->cause)) {
		burst_row(r, b);
		b->packets = 0;
	}
	if (!b->packets) {
		*b = (struct retx_burst){
			.flow_id = e->flow_id, .ts_first_ns = e->ts_ns, .first_tx_ns = e->first_tx_ns,
			.prev_tx_ns = e->prev_tx_ns, .trigger_ns = e->trigger_ns, .psn_first = e->psn,
			.cause = e->cause, .opcode = e->opcode,
		};
	}
	b->packets++;
	b->ts_last_ns = e->ts_ns;
	b->psn_last = e->psn;
	if (e->tx_count > b->tx_count_max)
		b->tx_count_max = e->tx_count;
}

/* Handle the waiting events: their flows' run indexes, then their runs, are fetched ahead. */
static void drain_events(struct store_retx *r)
{
	int n = r->n_pend;
	uint64_t max_id = 0;

	r->n_pend = 0;
	for (int i = 0; i < n; i++)
		if (r->pend[i].flow_id > max_id)
			max_id = r->pend[i].flow_id;
	if (n && !grow_open_of(r, max_id)) {
		for (int i = 0; i < n; i++)
			__builtin_prefetch(&r->open_of[r->pend[i].flow_id]);
		for (int i = 0; i < n; i++) {
			uint32_t k = r->open_of[r->pend[i].flow_id];

			if (k)
				__builtin_prefetch(&r->open[k - 1], 1);
		}
	}
	for (int i = 0; i < n; i++)
		retx_one(r, &r->pend[i]);
}

void store_retx_event(struct store_retx *r, const struct qp_retx_event *e)
{
	if (r->failed)
		return;
	r->pend[r->n_pend++] = *e;
	if (r->n_pend == RETX_PEND)
		drain_events(r);
}

/*
 * The spilled packet rows of the kept flows, in the order they came, from where the spill
 * file is: each kept one to packet_row(), or (hold) into pre[] until it is full. 0, or an
 * errno.
 */
static int read_spill(struct store_retx *r, const uint8_t *keep, size_t n_keep, bool hold)
{
	const uint8_t *p, *end;
	struct qp_retx_event e;
	int rc = 0;

	while (!r->failed && (rc = store_spill_next(&r->spill, &p, &end)) > 0) {
		if (spill_read_row(&p, end, r->replay_ts, &e))
			return EIO;
		if (!(e.flow_id < n_keep && keep[e.flow_id])) {
			r->spill.pos = (size_t)(p - r->spill.buf);
			r->replay_ts = e.ts_ns;
		} else if (!hold) {
			r->spill.pos = (size_t)(p - r->spill.buf);
			r->replay_ts = e.ts_ns;
			packet_row(r, &e);
		} else if (r->n_pre < PRE_ROWS_MAX &&
			   !util_ensure_mem((void **)&r->pre, &r->cap_pre, sizeof(*r->pre), r->n_pre + 1)) {
			r->spill.pos = (size_t)(p - r->spill.buf);
			r->replay_ts = e.ts_ns;
			r->pre[r->n_pre++] = e;
		} else {
			return 0; /* full: the commit reads on from this row */
		}
	}
	return rc < 0 ? -rc : 0;
}

void store_retx_read_kept(struct store_retx *r, const uint8_t *keep, size_t n_keep)
{
	int rc;

	if (r->samples != STORE_SAMPLES_FINDINGS || r->failed)
		return;
	r->read_early = true;
	r->replay_ts = 0;
	rc = store_spill_rewind(&r->spill);
	if (!rc)
		rc = read_spill(r, keep, n_keep, true);
	if (rc)
		note_errno(r, rc, "reading the retransmission spill file");
}

/* The spilled packet rows of the kept flows, in the order they came: those already read,
 * then the rest of the file. */
static void replay_spill(struct store_retx *r, const uint8_t *keep, size_t n_keep)
{
	int rc = 0;

	if (!r->read_early) {
		r->replay_ts = 0;
		if (!r->failed && (rc = store_spill_rewind(&r->spill)))
			note_errno(r, rc, "reading the retransmission spill file");
	}
	for (size_t i = 0; i < r->n_pre && !r->failed; i++)
		packet_row(r, &r->pre[i]);
	free(r->pre);
	r->pre = NULL;
	r->n_pre = 0;
	if (!r->failed && (rc = read_spill(r, keep, n_keep, false)))
		note_errno(r, rc, "reading the retransmission spill file");
}

int store_retx_close(struct store_retx *r)
{
	if (r->closed)
		return r->failed ? -1 : 0;
	r->closed = true;
	drain_events(r);
	/* The runs still open, in flow id order. */
	for (size_t id = 0; id < r->n_open_of && !r->failed; id++) {
		struct retx_burst *b = r->open_of[id] ? &r->open[r->open_of[id] - 1] : NULL;

		if (b && b->packets) {
			burst_row(r, b);
			b->packets = 0;
		}
	}
	flush(r, R_BURST);
	flush(r, R_PACKET);
	return r->failed ? -1 : 0;
}

int store_retx_finish(struct store_retx *r, const uint8_t *keep, size_t n_keep)
{
	store_retx_close(r);
	if (r->samples == STORE_SAMPLES_FINDINGS && !r->failed)
		replay_spill(r, keep, keep ? n_keep : 0);
	flush(r, R_PACKET);
	return r->failed ? -1 : 0;
}

int store_retx_open(struct store_retx **out, sqlite3 *db, const char *db_path, const char *spill_base,
		    const struct store_opts *opts, char *err, size_t errlen)
{
	struct store_retx *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (!r) {
		snprintf(err, errlen, "%s: %s", db_path, strerror(ENOMEM));
		return -1;
	}
	r->db = db;
	r->path = db_path;
	r->spill.fd = -1;
	r->samples = opts ? opts->samples : STORE_SAMPLES_FINDINGS;
	for (int k = 0; k < R_N; k++) {
		r->b[k].cols = cols[k];
		if (store_prepare_rows(db, heads[k], cols[k], 1, &r->b[k].one) != SQLITE_OK ||
		    store_prepare_rows(db, heads[k], cols[k], BATCH_ROWS, &r->b[k].many) != SQLITE_OK) {
			snprintf(err, errlen, "%s: sqlite: %s", db_path, sqlite3_errmsg(db));
			goto fail;
		}
	}
	if (r->samples == STORE_SAMPLES_FINDINGS) {
		rc = store_spill_open(&r->spill, spill_base, "-retx");
		if (rc) {
			snprintf(err, errlen, "%s: cannot create a file beside it: %s", db_path, strerror(rc));
			goto fail;
		}
	}
	*out = r;
	return 0;
fail:
	store_retx_free(r);
	return -1;
}

int store_retx_failed(const struct store_retx *r, const char **msg)
{
	*msg = r->errmsg;
	return r->failed;
}

void store_retx_free(struct store_retx *r)
{
	if (!r)
		return;
	for (int k = 0; k < R_N; k++) {
		sqlite3_finalize(r->b[k].one);
		sqlite3_finalize(r->b[k].many);
	}
	store_spill_close(&r->spill);
	free(r->pre);
	free(r->open_of);
	free(r->open);
	free(r);
}
