/*
 * store_rows.h: binding one row's values and preparing multi-row INSERTs, shared by the
 * store's writers (lib/store only).
 */
#ifndef AGENTXDP_STORE_ROWS_H
#define AGENTXDP_STORE_ROWS_H

#include <sqlite3.h>
#include <stdint.h>

/*
 * A counter: SQLite's INTEGER is signed 64-bit, so a count above 2^63-1 (a corrupt drop
 * counter of 2^64-1) saturates there instead of wrapping to a negative number.
 */
static inline void bind_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	sqlite3_bind_int64(st, i, v > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)v);
}

/* An id, or NULL for 0 (unknown). */
static inline void bind_id(sqlite3_stmt *st, int i, uint64_t id)
{
	if (id)
		bind_u64(st, i, id);
	else
		sqlite3_bind_null(st, i);
}

/* A time, or NULL for 0 (not seen). */
static inline void bind_ns(sqlite3_stmt *st, int i, uint64_t ns)
{
	bind_id(st, i, ns);
}

/* HEAD ("INSERT INTO t (a, b) VALUES ") + ROWS x "(?,?)", prepared to last. */
int store_prepare_rows(sqlite3 *db, const char *head, int cols, int rows, sqlite3_stmt **st);

/* Bind waiting row i to st's parameters o + 1 .. o + cols. */
typedef void store_bind_row_fn(void *ctx, sqlite3_stmt *st, int o, int i);

/*
 * Insert waiting rows 0..n in order: each full BATCH of them in one step of MANY (BATCH
 * rows of COLS parameters, store_prepare_rows), the rest row by row with ONE. Stops at the
 * first step that fails: SQLITE_DONE, or that step's code (the database's message set).
 * Inline, so that each writer's bind function is inlined into its own copy of the loops.
 */
static inline int store_flush_rows(sqlite3_stmt *one, sqlite3_stmt *many, int batch, int cols, int n,
				   store_bind_row_fn *bind, void *ctx)
{
	int r = 0, rc = SQLITE_DONE;

	for (; r + batch <= n && rc == SQLITE_DONE; r += batch) {
		for (int i = 0; i < batch; i++)
			bind(ctx, many, i * cols, r + i);
		rc = sqlite3_step(many);
		sqlite3_reset(many);
	}
	for (; r < n && rc == SQLITE_DONE; r++) {
		bind(ctx, one, 0, r);
		rc = sqlite3_step(one);
		sqlite3_reset(one);
	}
	return rc;
}

#endif
