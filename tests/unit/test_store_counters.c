/* test_store_counters.c: 64-bit counters in the database: a count above 2^63-1 (a drop counter of 2^64-1) is never stored negative. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "lib/nic/nic_db.h"
#include "lib/store/store_sqlite.h"

static sqlite3_int64 read_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	sqlite3_int64 v;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_type(st, 0), SQLITE_INTEGER);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void test_drop_count_2_64_minus_1_not_negative(void **state)
{
	char dir[] = "/tmp/agentxdp-test-store.XXXXXX", path[128], err[512];
	struct trace_health h = { .frames = 10, .bytes = UINT64_MAX, .capture_dropped = UINT64_MAX,
				  .has_drop_counters = 1, .ts_backwards = (uint64_t)INT64_MAX + 1 };
	struct store_capture cap = { .path = "x.pcapng", .health = &h, .roce_packets = 3 };
	struct flow_stats f;
	struct store *s;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a.db", dir);
	memset(&f, 0, sizeof(f));
	f.id = 1;
	f.packets = UINT64_MAX;
	f.bytes = (uint64_t)INT64_MAX;
	assert_int_equal(store_open(&s, path, NULL, err, sizeof(err)), 0);
	assert_int_equal(store_captures(s, &cap, 1), 0);
	assert_int_equal(store_flows(s, &f, 1), 0);
	assert_int_equal(store_commit(s, err, sizeof(err)), 0);
	/* Saturated at 2^63-1, the largest SQLite INTEGER: huge, never -1. */
	assert_true(read_int(path, "SELECT capture_dropped FROM capture") == INT64_MAX);
	assert_true(read_int(path, "SELECT bytes FROM capture") == INT64_MAX);
	assert_true(read_int(path, "SELECT ts_backwards FROM capture") == INT64_MAX);
	assert_true(read_int(path, "SELECT packets FROM qp") == INT64_MAX);
	assert_true(read_int(path, "SELECT bytes FROM qp") == INT64_MAX);
	assert_true(read_int(path, "SELECT frames FROM capture") == 10);
	unlink(path);
	rmdir(dir);
}

/* agentxdp-nicstat --db: a counter read as 2^64-1 is not stored as -1 either. */
static void test_nic_counter_2_64_minus_1_not_negative(void **state)
{
	char dir[] = "/tmp/agentxdp-test-nicdb.XXXXXX", path[128];
	struct nic_counter c = { .name = "out_of_sequence", .source = NIC_SRC_HW_COUNTERS, .value = UINT64_MAX,
				 .delta_kind = NIC_DELTA_FIRST };
	struct nic_port p = { .device = "mlx5_0", .port = 1, .netdev = "eth0", .counters = &c, .n_counters = 1 };
	struct nic_snapshot snap = { .ts_ns = 1, .ports = &p, .n_ports = 1, .n_devices = 1 };
	struct nic_db *d;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/n.db", dir);
	d = nic_db_open(path);
	assert_non_null(d);
	assert_int_equal(nic_db_write(d, &snap), 0);
	nic_db_close(d);
	assert_true(read_int(path, "SELECT value FROM nic_counter") == INT64_MAX);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_count_2_64_minus_1_not_negative),
		cmocka_unit_test(test_nic_counter_2_64_minus_1_not_negative),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
