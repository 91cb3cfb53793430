/*
 * test_store_full.c: the database's disk fills while the latency or retransmission rows are
 * written, on the closing thread (store_reading_done()) or in store_commit(): one readable
 * line naming the full disk, a failed commit, nothing left in the directory. A VFS shim over
 * SQLite's own fails every write to the main database once armed, as a full disk does.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "lib/store/store_sqlite.h"
#include "lib/track/qp_track.h"

/* ---- the shim: SQLite's default VFS, its main-database writes failing once armed ---- */

struct shim_file {
	sqlite3_file base;	/* pMethods = &shim_io */
	sqlite3_file *real;	/* the default VFS's file, right after this struct */
	bool main_db;
};

static sqlite3_vfs *real_vfs;
static sqlite3_vfs shim_vfs;
static bool disk_full;

static sqlite3_file *real_of(sqlite3_file *f)
{
	return ((struct shim_file *)f)->real;
}

static int shim_close(sqlite3_file *f)
{
	return real_of(f)->pMethods->xClose(real_of(f));
}

static int shim_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off)
{
	return real_of(f)->pMethods->xRead(real_of(f), p, n, off);
}

static int shim_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
	if (disk_full && ((struct shim_file *)f)->main_db)
		return SQLITE_FULL;
	return real_of(f)->pMethods->xWrite(real_of(f), p, n, off);
}

static int shim_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return real_of(f)->pMethods->xTruncate(real_of(f), size);
}

static int shim_sync(sqlite3_file *f, int flags)
{
	return real_of(f)->pMethods->xSync(real_of(f), flags);
}

static int shim_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return real_of(f)->pMethods->xFileSize(real_of(f), size);
}

static int shim_lock(sqlite3_file *f, int lock)
{
	return real_of(f)->pMethods->xLock(real_of(f), lock);
}

static int shim_unlock(sqlite3_file *f, int lock)
{
	return real_of(f)->pMethods->xUnlock(real_of(f), lock);
}

static int shim_check_lock(sqlite3_file *f, int *out)
{
	return real_of(f)->pMethods->xCheckReservedLock(real_of(f), out);
}

static int shim_file_control(sqlite3_file *f, int op, void *arg)
{
	return real_of(f)->pMethods->xFileControl(real_of(f), op, arg);
}

static int shim_sector_size(sqlite3_file *f)
{
	return real_of(f)->pMethods->xSectorSize(real_of(f));
}

static int shim_device(sqlite3_file *f)
{
	return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f));
}

/* Version 1: no shared memory or mmap (the store runs without a journal, exclusive). */
static const sqlite3_io_methods shim_io = {
	.iVersion = 1,
	.xClose = shim_close,
	.xRead = shim_read,
	.xWrite = shim_write,
	.xTruncate = shim_truncate,
	.xSync = shim_sync,
	.xFileSize = shim_file_size,
	.xLock = shim_lock,
	.xUnlock = shim_unlock,
	.xCheckReservedLock = shim_check_lock,
	.xFileControl = shim_file_control,
	.xSectorSize = shim_sector_size,
	.xDeviceCharacteristics = shim_device,
};

static int shim_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
	struct shim_file *s = (struct shim_file *)f;
	int rc;

	(void)vfs;
	s->real = (sqlite3_file *)(s + 1);
	s->main_db = flags & SQLITE_OPEN_MAIN_DB;
	rc = real_vfs->xOpen(real_vfs, name, s->real, flags, out_flags);
	s->base.pMethods = s->real->pMethods ? &shim_io : NULL;
	return rc;
}

static int setup_shim(void **state)
{
	(void)state;
	real_vfs = sqlite3_vfs_find(NULL);
	if (!real_vfs)
		return -1;
	shim_vfs = *real_vfs;
	shim_vfs.zName = "agentxdp-test-full";
	shim_vfs.szOsFile = (int)sizeof(struct shim_file) + real_vfs->szOsFile;
	shim_vfs.xOpen = shim_open;
	return sqlite3_vfs_register(&shim_vfs, 1) == SQLITE_OK ? 0 : -1;
}

static int teardown_shim(void **state)
{
	(void)state;
	sqlite3_vfs_unregister(&shim_vfs);
	return 0;
}

/* ---- the runs ---- */

struct run {
	struct store *s;
	char dir[64], path[128];
};

static void start(struct run *r, uint8_t samples)
{
	struct store_opts opts = { .samples = samples };
	char err[512];

	disk_full = false;
	snprintf(r->dir, sizeof(r->dir), "/tmp/agentxdp-test-full.XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(r->path, sizeof(r->path), "%s/a.db", r->dir);
	assert_int_equal(store_open(&r->s, r->path, &opts, err, sizeof(err)), 0);
	disk_full = true; /* from the first row the page cache cannot hold */
}

/* More rows than the 2 MB page cache holds: 100000 flows with a sample each, one window
 * and one histogram row per flow at the close. */
static void feed_samples(struct run *r)
{
	const struct qp_event_sink *k = store_sink(r->s);

	for (uint64_t id = 1; id <= 100000; id++) {
		struct qp_latency_sample x = {
			.flow_id = id, .ts_ns = 1000 + id, .latency_ns = 2000 + id % 977, .psn = (uint32_t)id,
		};

		k->latency(k->ctx, &x);
	}
}

/* One go-back-N run per event: a burst row each, and a packet row each with --samples all. */
static void feed_resends(struct run *r)
{
	const struct qp_event_sink *k = store_sink(r->s);

	for (uint64_t i = 1; i <= 100000; i++) {
		struct qp_retx_event e = {
			.flow_id = 1 + i % 1000, .ts_ns = 1000 + i, .first_tx_ns = 500 + i, .prev_tx_ns = 500 + i,
			.trigger_ns = 900 + i, .psn = (uint32_t)i, .tx_count = 2, .cause = QP_RETX_NAK,
			.run_start = 1,
		};

		k->retransmission(k->ctx, &e);
	}
}

/* The commit fails with one printable line saying the disk is full; nothing is left. */
static void expect_full(struct run *r, bool closing_thread)
{
	char err[512], want[200];
	struct dirent *d;
	DIR *dir;
	int left = 0;

	if (closing_thread)
		store_reading_done(r->s);
	memset(err, 0, sizeof(err));
	assert_int_not_equal(store_commit(r->s, err, sizeof(err)), 0);
	disk_full = false;
	snprintf(want, sizeof(want), "%s: disk full while writing ", r->path);
	if (strncmp(err, want, strlen(want)))
		fail_msg("the error line: \"%.80s\"", err);
	for (const char *c = err; *c; c++)
		assert_true(*c >= ' ' && *c < 127);
	assert_true(strstr(err, "; nothing written") != NULL);
	assert_int_equal(access(r->path, F_OK), -1);
	dir = opendir(r->dir);
	assert_non_null(dir);
	while ((d = readdir(dir)))
		left += strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
	closedir(dir);
	assert_int_equal(left, 0);
	rmdir(r->dir);
}

/* The latency part fails: its histogram and window rows, on the closing thread. */
static void test_full_latency_closing_thread(void **state)
{
	struct run r;

	(void)state;
	start(&r, STORE_SAMPLES_ALL);
	feed_samples(&r);
	expect_full(&r, true);
}

/* The same with no closing thread: store_commit() closes the tables itself. */
static void test_full_latency_commit(void **state)
{
	struct run r;

	(void)state;
	start(&r, STORE_SAMPLES_FINDINGS);
	feed_samples(&r);
	expect_full(&r, false);
}

/* The retransmission part fails: its burst and packet rows. */
static void test_full_retx_closing_thread(void **state)
{
	struct run r;

	(void)state;
	start(&r, STORE_SAMPLES_ALL);
	feed_resends(&r);
	expect_full(&r, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_latency_closing_thread),
		cmocka_unit_test(test_full_latency_commit),
		cmocka_unit_test(test_full_retx_closing_thread),
	};

	return cmocka_run_group_tests(tests, setup_shim, teardown_shim);
}
