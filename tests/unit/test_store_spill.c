/* test_store_spill.c: the spill file's varint records (lib/store/store_spill.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/store/store_spill.h"

static const uint64_t edge[] = {
	0, 1, 127, 128, 16383, 16384, UINT32_MAX, (uint64_t)UINT32_MAX + 1, INT64_MAX, (uint64_t)INT64_MAX + 1,
	UINT64_MAX - 1, UINT64_MAX,
};

/* Every edge value back as written, in 1 to 10 bytes; a difference and its zigzag likewise. */
static void test_varint_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		uint8_t buf[16];
		const uint8_t *p = buf;
		uint8_t *end = spill_put(buf, edge[i]);
		uint64_t v = 0;

		assert_true(end - buf >= 1 && end - buf <= 10);
		assert_int_equal(spill_get(&p, end, &v), 0);
		assert_ptr_equal(p, end);
		assert_true(v == edge[i]);
		assert_true(spill_unzigzag(spill_zigzag(edge[i])) == edge[i]);
	}
	/* small differences either way stay small */
	assert_true(spill_zigzag(0) == 0);
	assert_true(spill_zigzag((uint64_t)-1) == 1);
	assert_true(spill_zigzag(1) == 2);
	assert_true(spill_zigzag((uint64_t)-2) == 3);
	assert_true(spill_zigzag((uint64_t)INT64_MIN) == UINT64_MAX);
}

/* A record cut short, or an integer longer than 64 bits, is refused. */
static void test_varint_bad_input(void **state)
{
	uint8_t buf[16];
	uint8_t *end = spill_put(buf, UINT64_MAX);
	const uint8_t *p = buf;
	uint64_t v;

	(void)state;
	assert_int_equal(spill_get(&p, end - 1, &v), -1);
	memset(buf, 0x80, sizeof(buf));
	p = buf;
	assert_int_equal(spill_get(&p, buf + sizeof(buf), &v), -1);
	p = buf;
	assert_int_equal(spill_get(&p, buf, &v), -1);
	/* 10 bytes whose last holds more than bit 63: 2^64, not 0 */
	memset(buf, 0x80, 9);
	buf[9] = 0x02;
	p = buf;
	assert_int_equal(spill_get(&p, buf + 10, &v), -1);
	buf[9] = 0x01; /* 2^63: the last bit that fits */
	p = buf;
	assert_int_equal(spill_get(&p, buf + 10, &v), 0);
	assert_true(v == 1ull << 63);
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A value of 0 to 64 random bits: records of every length. */
static uint64_t rand_value(uint64_t *s)
{
	unsigned bits = (unsigned)(next_rand(s) % 65);

	return bits ? next_rand(s) >> (64 - bits) : 0;
}

/*
 * 200000 records of 1 to 8 integers through the file and back: records straddle every
 * buffer refill, and the file is already gone from the directory.
 */
static void test_file_round_trip(void **state)
{
	char dir[] = "/tmp/test_store_spill.XXXXXX", base[64];
	static struct spill_file f;
	uint64_t s = 42, expect_s, n_read = 0;
	const uint8_t *p, *end;
	DIR *d;
	int err, rc, entries = 0;
	struct dirent *e;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(base, sizeof(base), "%s/x.db", dir);
	assert_int_equal(store_spill_open(&f, base, "-test"), 0);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)))
		entries += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(entries, 0);
	for (int r = 0; r < 200000; r++) {
		uint8_t *q = store_spill_room(&f, &err);
		unsigned n = 1 + (unsigned)(next_rand(&s) % 8);

		assert_int_equal(err, 0);
		q = spill_put(q, n);
		for (unsigned i = 0; i < n; i++)
			q = spill_put(q, rand_value(&s));
		store_spill_done(&f, q);
	}
	assert_int_equal(store_spill_rewind(&f), 0);
	expect_s = 42;
	while ((rc = store_spill_next(&f, &p, &end)) > 0) {
		uint64_t n, v;

		assert_int_equal(spill_get(&p, end, &n), 0);
		assert_int_equal(n, 1 + next_rand(&expect_s) % 8);
		for (unsigned i = 0; i < n; i++) {
			assert_int_equal(spill_get(&p, end, &v), 0);
			assert_true(v == rand_value(&expect_s));
		}
		f.pos = (size_t)(p - f.buf);
		n_read++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n_read, 200000);
	store_spill_close(&f);
	assert_int_equal(rmdir(dir), 0);
}

/* A full disk: the buffered bytes cannot be written, and the caller hears ENOSPC. */
static void test_full_disk(void **state)
{
	static struct spill_file f;
	int err = 0;

	(void)state;
	f.fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	if (f.fd < 0)
		skip();
	f.len = 0;
	while (!err) {
		uint8_t *q = store_spill_room(&f, &err);

		if (!err)
			store_spill_done(&f, spill_put(q, UINT64_MAX));
	}
	assert_int_equal(err, ENOSPC);
	store_spill_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_varint_round_trip),
		cmocka_unit_test(test_varint_bad_input),
		cmocka_unit_test(test_file_round_trip),
		cmocka_unit_test(test_full_disk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
