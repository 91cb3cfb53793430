/*
 * store_latency.h: the latency tables of the store (lib/store only; schema: docs/schema.md).
 *
 * Every sample goes into its flow's log-bucket histogram (latency_window rows as windows
 * close, latency_hist rows at the end). Raw latency_sample rows (after --sample-rows
 * thinning) go straight in with STORE_SAMPLES_ALL; with STORE_SAMPLES_FINDINGS they are
 * spilled to an unlinked file beside the database and only the rows of the flows the
 * findings and the report need are inserted at the end, once those are known.
 */
#ifndef AGENTXDP_STORE_LATENCY_H
#define AGENTXDP_STORE_LATENCY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/store/store_sqlite.h"

struct store_lat;

/*
 * latency_sample's columns and its index's, for the store's schema and for the kept rows'
 * own database (store_lat_read_kept()), whose table must match it for SQLite to copy it
 * over page by page.
 */
#define LATENCY_SAMPLE_COLUMNS_SQL                                                                   \
	"(qp_id INTEGER NOT NULL, kind INTEGER NOT NULL, ts_ns INTEGER NOT NULL, psn INTEGER,"        \
	" latency_ns INTEGER NOT NULL)"
#define LATENCY_SAMPLE_INDEX_SQL "(qp_id, kind, latency_ns)"

/*
 * SPILL_BASE: a path whose "-samples" and "-kept" siblings may be created (then unlinked at
 * once). With STORE_SAMPLES_FINDINGS the "-kept" one is ATTACHed to DB as "kept", so this
 * comes before DB's transaction begins.
 */
int store_lat_open(struct store_lat **out, sqlite3 *db, const char *db_path, const char *spill_base,
		   const struct store_opts *opts, char *err, size_t errlen);
void store_lat_set_window(struct store_lat *l, uint64_t window_ns);
void store_lat_sample(struct store_lat *l, const struct qp_latency_sample *x);
/* After the last sample: close the windows and write the buckets, which need no finding
 * (once; store_lat_finish() does it when not done). */
int store_lat_close(struct store_lat *l);
/* After the qp and finding rows: pick the raw rows and write them. */
int store_lat_finish(struct store_lat *l);
/*
 * keep[id] = 1 for the flows whose raw rows are kept, picked by SQL over DB's qp and finding
 * tables (the store's, or a copy of them); *n the array's length. NULL with *rc an SQLite
 * error code, or (no flow picked) SQLITE_OK.
 */
uint8_t *store_lat_pick_flows(sqlite3 *db, size_t *n, int *rc);
/*
 * After store_lat_close(), before store_lat_finish(), from any one thread while no other
 * uses l (DB may be busy on another thread: this uses a connection of its own): the flows
 * picked early (keep is l's now), their spilled rows read back into a database of their own
 * and its index built there, so that store_lat_finish() only copies them in.
 */
void store_lat_read_kept(struct store_lat *l, uint8_t *keep, size_t n_keep);
/* The first SQLite error code (0 none); its message in *msg. */
int store_lat_failed(const struct store_lat *l, const char **msg);
uint64_t store_lat_rows(const struct store_lat *l);
/* After store_lat_finish() in STORE_SAMPLES_FINDINGS mode: keep[id] != 0 for the flows whose
 * raw rows are kept (ids below *n); NULL otherwise. Valid until store_lat_free(). */
const uint8_t *store_lat_kept(const struct store_lat *l, size_t *n);
void store_lat_free(struct store_lat *l);

/* Keep the first SQLite error of a store: its code in *failed, its one-line message in msg
 * ("PATH: disk full while writing WHAT" or "PATH: writing WHAT: sqlite's message"). */
void store_note_sqlite_error(int *failed, char *msg, size_t msglen, const char *path, sqlite3 *db,
			     int rc, const char *what);

#endif
