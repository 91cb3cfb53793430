/*
 * store_retx.h: the retransmission tables of the store (lib/store only; docs/schema.md).
 *
 * Every flow's resent packets become retransmission_burst rows, one per go-back-N run (one
 * cause, PSNs onward: qp_retx_event.run_start starts one). The per-packet retransmission
 * rows follow --samples as latency_sample does: every flow's with STORE_SAMPLES_ALL; with
 * STORE_SAMPLES_FINDINGS they wait in an unlinked file beside the database and only the
 * kept flows' are inserted at the end; none with STORE_SAMPLES_NONE.
 */
#ifndef AGENTXDP_STORE_RETX_H
#define AGENTXDP_STORE_RETX_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/store/store_sqlite.h"

struct store_retx;

/* SPILL_BASE: a path whose "-retx" sibling may be created (then unlinked at once). */
int store_retx_open(struct store_retx **out, sqlite3 *db, const char *db_path, const char *spill_base,
		    const struct store_opts *opts, char *err, size_t errlen);
void store_retx_event(struct store_retx *r, const struct qp_retx_event *e);
/* The open runs' rows, then the kept flows' packet rows (keep[id] != 0, ids below n_keep). */
int store_retx_finish(struct store_retx *r, const uint8_t *keep, size_t n_keep);
/* After the last event: the runs still open, as rows (once; store_retx_finish() does it when
 * not done). */
int store_retx_close(struct store_retx *r);
/*
 * After store_retx_close(), before store_retx_finish() with the same keep, from any one
 * thread while no other uses r: the first of the kept flows' spilled rows read back into
 * memory, so that store_retx_finish() only inserts them.
 */
void store_retx_read_kept(struct store_retx *r, const uint8_t *keep, size_t n_keep);
/* The first SQLite error code (0 none); its message in *msg. */
int store_retx_failed(const struct store_retx *r, const char **msg);
void store_retx_free(struct store_retx *r);

#endif
