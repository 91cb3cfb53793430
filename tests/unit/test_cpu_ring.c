/*
 * test_cpu_ring.c: the per-CPU ring reader over plain memory, written the way
 * roce_capture.bpf.c writes it: merge order, a callback that stops, corrupt records,
 * many busy CPUs, records running into the slack, and the layout rules.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/capture/cpu_ring.h"
#include "bpf/roce_capture.h"

#define TEST_REGION 4096u
#define TEST_DATA_CAP ROCE_CAP_HDR_SNAPLEN

struct rings_fixture {
	struct cpu_ring r;
	uint8_t *mem;
	uint32_t value_size;
};

static void fixture_init(struct rings_fixture *f, int n_cpus)
{
	uint64_t region;

	assert_int_equal(cpu_ring_layout((uint64_t)TEST_REGION * (uint64_t)n_cpus, n_cpus, TEST_DATA_CAP,
					 &region, &f->value_size), 0);
	assert_int_equal(region, TEST_REGION);
	f->mem = calloc((size_t)n_cpus, (f->value_size + 7) & ~7u);
	assert_non_null(f->mem);
	assert_int_equal(cpu_ring_init(&f->r, f->mem, n_cpus, region, f->value_size, TEST_DATA_CAP), 0);
}

static void fixture_free(struct rings_fixture *f)
{
	cpu_ring_unmap(&f->r);
	free(f->mem);
}

/* What the program does: write at prod within the region (into the slack past its end). */
static void put_record(struct rings_fixture *f, int cpu, uint16_t cap_len, uint64_t ts, uint8_t tag)
{
	struct roce_cap_ring_head *h = cpu_ring_head(&f->r, cpu);
	size_t size = roce_cap_rec_size(cap_len, TEST_DATA_CAP);
	struct roce_cap_rec *rec = cpu_ring_record(&f->r, cpu, h->prod);

	assert_true(h->prod + size - h->cons <= f->r.region);
	memset(rec, 0, size);
	rec->version = ROCE_CAP_REC_VERSION;
	rec->cap_len = cap_len;
	rec->ts_ns = ts;
	memset(rec->data, tag, cap_len);
	h->prod += size;
}

struct seen {
	int n, stop_after;
	uint64_t ts[512];
	uint8_t tag[512];
	int intact;
};

static int collect(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;
	const struct roce_cap_rec *rec = data;
	int whole = 1;

	if (s->stop_after && s->n == s->stop_after)
		return -1;
	assert_int_equal(size, roce_cap_rec_size(rec->cap_len, TEST_DATA_CAP));
	for (unsigned i = 0; i < rec->cap_len; i++)
		whole &= rec->data[i] == rec->data[0];
	s->intact += whole;
	s->ts[s->n] = rec->ts_ns;
	s->tag[s->n] = rec->data[0];
	s->n++;
	return 0;
}

static void test_merges_cpus_by_time(void **state)
{
	struct rings_fixture f;
	struct seen s = { 0 };

	(void)state;
	fixture_init(&f, 3);
	/* Interleaved in time, of every size class. */
	put_record(&f, 0, 58, 10, 1);
	put_record(&f, 0, 90, 40, 4);
	put_record(&f, 1, 120, 20, 2);
	put_record(&f, 1, 192, 50, 5);
	put_record(&f, 2, 60, 30, 3);
	assert_int_equal(cpu_ring_pending(&f.r), 2 * 88 + 120 + 152 + 216);
	assert_int_equal(cpu_ring_drain(&f.r, collect, &s), 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(s.tag[i], i + 1);
	assert_int_equal(s.intact, 5);
	/* The space is given back: nothing pending, each cons at its prod. */
	assert_int_equal(cpu_ring_pending(&f.r), 0);
	for (int c = 0; c < 3; c++)
		assert_int_equal(cpu_ring_head(&f.r, c)->cons, cpu_ring_head(&f.r, c)->prod);
	fixture_free(&f);
}

static void test_callback_stop_keeps_the_rest(void **state)
{
	struct rings_fixture f;
	struct seen s = { 0 };

	(void)state;
	fixture_init(&f, 2);
	for (int i = 0; i < 10; i++)
		put_record(&f, i % 2, 58, 100 + (uint64_t)i, (uint8_t)i);
	s.stop_after = 4;
	assert_int_equal(cpu_ring_drain(&f.r, collect, &s), -1);
	assert_int_equal(s.n, 4);
	/* The next drain starts at the record the callback refused: none lost, none twice. */
	s.stop_after = 0;
	assert_int_equal(cpu_ring_drain(&f.r, collect, &s), 6);
	assert_int_equal(s.n, 10);
	for (int i = 0; i < 10; i++)
		assert_int_equal(s.tag[i], i);
	fixture_free(&f);
}

static void test_corrupt_record_skips_that_cpu_only(void **state)
{
	struct rings_fixture f;
	struct seen s = { 0 };
	struct roce_cap_rec *bad;

	(void)state;
	fixture_init(&f, 2);
	put_record(&f, 0, 58, 1, 7);
	put_record(&f, 1, 58, 2, 8);
	bad = cpu_ring_record(&f.r, 1, 0);
	bad->version = ROCE_CAP_REC_VERSION + 1;
	put_record(&f, 1, 58, 3, 9);
	assert_int_equal(cpu_ring_drain(&f.r, collect, &s), 1);
	assert_int_equal(s.tag[0], 7);
	assert_int_equal(f.r.corrupt, 1);
	assert_int_equal(cpu_ring_pending(&f.r), 0);
	/* A cap_len over the capacity, or a size past prod, is not a record either. */
	put_record(&f, 0, 58, 4, 10);
	cpu_ring_record(&f.r, 0, cpu_ring_head(&f.r, 0)->cons)->cap_len = TEST_DATA_CAP + 8;
	assert_int_equal(cpu_ring_drain(&f.r, collect, &s), 0);
	put_record(&f, 0, 58, 5, 11);
	cpu_ring_head(&f.r, 0)->prod -= 8;
	assert_int_equal(cpu_ring_drain(&f.r, collect, &s), 0);
	assert_int_equal(f.r.corrupt, 3);
	fixture_free(&f);
}

static void test_many_busy_cpus(void **state)
{
	enum { N_CPUS = 100, PER_CPU = 3 };
	struct rings_fixture f;
	struct seen s = { 0 };

	(void)state;
	fixture_init(&f, N_CPUS);
	/* Record k of CPU c has time k * N_CPUS + (N_CPUS - 1 - c): the merge must interleave. */
	for (int c = 0; c < N_CPUS; c++)
		for (int k = 0; k < PER_CPU; k++)
			put_record(&f, c, 58, (uint64_t)(k * N_CPUS + (N_CPUS - 1 - c)), (uint8_t)c);
	assert_int_equal(cpu_ring_drain(&f.r, collect, &s), N_CPUS * PER_CPU);
	for (int i = 0; i < N_CPUS * PER_CPU; i++)
		assert_int_equal(s.ts[i], (uint64_t)i);
	fixture_free(&f);
}

static void test_record_runs_into_slack(void **state)
{
	struct rings_fixture f;
	struct seen s = { 0 };
	struct roce_cap_ring_head *h;
	int rounds = 0;

	(void)state;
	fixture_init(&f, 1);
	h = cpu_ring_head(&f.r, 0);
	/* 216-byte records (cap_len 192) lap the 4096-byte region many times at every offset. */
	for (uint64_t ts = 0; ts < 200; ts++) {
		put_record(&f, 0, 192, ts, (uint8_t)ts);
		if (h->prod % TEST_REGION < 216 && h->prod > TEST_REGION)
			rounds++;
		if (h->prod - h->cons > TEST_REGION / 2)
			cpu_ring_drain(&f.r, collect, &s);
	}
	cpu_ring_drain(&f.r, collect, &s);
	assert_true(rounds >= 5);
	assert_int_equal(s.n, 200);
	assert_int_equal(s.intact, 200);
	for (int i = 0; i < 200; i++)
		assert_int_equal(s.tag[i], (uint8_t)i);
	fixture_free(&f);
}

static void test_layout(void **state)
{
	uint64_t region;
	uint32_t value_size;

	(void)state;
	/* 8 MiB over 2 CPUs: 4 MiB each, plus the head and one largest record of slack. */
	assert_int_equal(cpu_ring_layout(8 << 20, 2, 192, &region, &value_size), 0);
	assert_int_equal(region, 4 << 20);
	assert_int_equal(value_size, ROCE_CAP_RING_HEAD_BYTES + (4 << 20) + 216);
	/* Not a power of two per CPU: rounded down. */
	assert_int_equal(cpu_ring_layout(8 << 20, 3, 192, &region, &value_size), 0);
	assert_int_equal(region, 2 << 20);
	/* Small -s: the slack still holds the 128-byte class the program may write. */
	assert_int_equal(cpu_ring_layout(1 << 20, 1, 40, &region, &value_size), 0);
	assert_int_equal(value_size, ROCE_CAP_RING_HEAD_BYTES + (1 << 20) + 24 + 128);
	/* Jumbo -s: four records must fit in each CPU's ring. */
	assert_int_equal(cpu_ring_layout(64 << 10, 2, 9216, &region, &value_size), -EINVAL);
	assert_int_equal(cpu_ring_layout(128 << 10, 2, 9216, &region, &value_size), 0);
	assert_int_equal(cpu_ring_layout(4096, 2, 192, &region, &value_size), -EINVAL);
	assert_int_equal(cpu_ring_layout(4096, 0, 192, &region, &value_size), -EINVAL);
	/* The largest -B on one CPU stays under the verifier's offset limit. */
	assert_int_equal(cpu_ring_layout(1ull << 30, 1, 192, &region, &value_size), 0);
	assert_int_equal(region, CPU_RING_MAX_REGION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merges_cpus_by_time),
		cmocka_unit_test(test_callback_stop_keeps_the_rest),
		cmocka_unit_test(test_corrupt_record_skips_that_cpu_only),
		cmocka_unit_test(test_many_busy_cpus),
		cmocka_unit_test(test_record_runs_into_slack),
		cmocka_unit_test(test_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
