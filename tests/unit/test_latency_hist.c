/* test_latency_hist.c: log buckets bound every value; window p50/p99 within 1% of exact. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/track/latency_hist.h"
#include "lib/track/track_mem.h"
#include "test_rng.h"

/* Every value falls in its bucket's [lo, hi); buckets tile the line with no gap. */
static void test_bucket_bounds(void **state)
{
	(void)state;
	for (int i = 0; i < 200000; i++) {
		uint64_t v = rng64() >> (rng64() % 64);
		uint32_t b = latency_hist_bucket(v);

		assert_true(b < LAT_HIST_MAX_BUCKETS);
		assert_true(latency_hist_lo(b) <= v);
		assert_true(v < latency_hist_hi(b) || latency_hist_hi(b) == UINT64_MAX);
		/* Width at most 1/64 of the lower bound: the midpoint is within 0.8%. */
		if (v >= LAT_HIST_SUB && latency_hist_hi(b) != UINT64_MAX)
			assert_true((latency_hist_hi(b) - latency_hist_lo(b)) * 64 <= latency_hist_lo(b));
	}
	for (uint32_t b = 0; b + 1 < LAT_HIST_MAX_BUCKETS; b++) {
		assert_int_equal(latency_hist_hi(b), latency_hist_lo(b + 1));
		assert_int_equal(latency_hist_bucket(latency_hist_lo(b)), b);
	}
	assert_int_equal(latency_hist_bucket(UINT64_MAX), LAT_HIST_MAX_BUCKETS - 1);
	assert_int_equal(latency_hist_bucket(UINT32_MAX), LAT_HIST_BUCKETS(32) - 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t exact_rank(const uint64_t *sorted, size_t n, uint32_t q10k)
{
	size_t rank = ((uint64_t)q10k * n + 9999) / 10000;
	return sorted[(rank < 1 ? 1 : rank) - 1];
}

struct got {
	struct lat_window_summary w[LAT_HIST_KINDS];
	int n;
};

static void on_window(void *ctx, const struct lat_window_summary *w)
{
	struct got *g = ctx;

	assert_true(g->n < LAT_HIST_KINDS);
	g->w[g->n++] = *w;
}

static void assert_within_1pct(uint64_t got, uint64_t want)
{
	double err = fabs((double)got - (double)want) / (double)want;

	if (err > 0.01)
		fail_msg("%llu is %.3f%% from the exact %llu", (unsigned long long)got, err * 100,
			 (unsigned long long)want);
}

/* Random latencies (log-uniform 1 us .. 10 ms, some kinds heavy-tailed), several windows. */
static void test_window_percentiles(void **state)
{
	struct lat_flow_hist h = { 0 };
	struct track_mem m = { 0 };
	enum { N = 20000 };
	uint64_t *v[3];

	(void)state;
	for (int k = 0; k < 3; k++)
		v[k] = malloc(N * sizeof(*v[k]));
	for (int win = 0; win < 5; win++) {
		struct got g = { 0 };
		size_t n[3] = { 0 };

		for (int i = 0; i < N * (win + 1) / 5; i++) {
			uint32_t kind = (uint32_t)(rng64() % 3) * 2; /* kinds 0, 2, 4 */
			double x = (double)(rng64() >> 11) / (double)(1ull << 53);
			uint64_t ns = (uint64_t)(1000.0 * pow(10000.0, kind == 4 ? x * x * x : x));

			v[kind / 2][n[kind / 2]++] = ns;
			assert_int_equal(lat_flow_hist_add(&h, &m, kind, ns), 0);
		}
		assert_int_equal(lat_flow_hist_close_window(&h, &m, on_window, &g), 0);
		assert_int_equal(g.n, 3);
		for (int k = 0; k < 3; k++) {
			const struct lat_window_summary *w = &g.w[k];
			uint64_t sum = 0;

			qsort(v[k], n[k], sizeof(*v[k]), cmp_u64);
			for (size_t i = 0; i < n[k]; i++)
				sum += v[k][i];
			assert_int_equal(w->kind, (uint32_t)k * 2);
			assert_int_equal(w->samples, n[k]);
			assert_int_equal(w->sum_ns, sum);
			assert_int_equal(w->min_ns, v[k][0]);
			assert_int_equal(w->max_ns, v[k][n[k] - 1]); /* exact */
			assert_within_1pct(w->p50_ns, exact_rank(v[k], n[k], 5000));
			assert_within_1pct(w->p99_ns, exact_rank(v[k], n[k], 9900));
		}
	}
	for (int k = 0; k < 3; k++)
		free(v[k]);
	lat_flow_hist_free(&h, &m);
	track_mem_release(&m);
}

struct bucket_walk {
	uint64_t count[LAT_HIST_KINDS];
	uint32_t last_kind, last_bucket;
	int rows;
};

static void on_bucket(void *ctx, uint32_t kind, uint32_t bucket, uint64_t count)
{
	struct bucket_walk *b = ctx;

	/* Sorted by kind then bucket, every count non-zero. */
	assert_true(!b->rows || kind > b->last_kind || (kind == b->last_kind && bucket > b->last_bucket));
	assert_true(count > 0);
	b->count[kind] += count;
	b->last_kind = kind;
	b->last_bucket = bucket;
	b->rows++;
}

/* The whole trace's buckets survive window closes and hold the open window's; a single sample is
 * exact in its window. */
static void test_whole_trace_buckets(void **state)
{
	struct lat_flow_hist h = { 0 };
	struct track_mem m = { 0 };
	struct bucket_walk b = { 0 };
	struct got g = { 0 };

	(void)state;
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(lat_flow_hist_add(&h, &m, 0, 5000 + (uint64_t)i * 37), 0);
		if (i % 100 == 99)
			assert_int_equal(lat_flow_hist_close_window(&h, &m, on_window, &g), 0), g.n = 0;
	}
	assert_int_equal(lat_flow_hist_add(&h, &m, 7, 6ull << 40), 0);
	assert_int_equal(lat_flow_hist_close_window(&h, &m, on_window, &g), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.w[0].kind, 7);
	assert_int_equal(g.w[0].p50_ns, 6ull << 40);
	assert_int_equal(g.w[0].p99_ns, 6ull << 40);
	/* Nothing in the window: no summary. */
	g.n = 0;
	assert_int_equal(lat_flow_hist_close_window(&h, &m, on_window, &g), 0);
	assert_int_equal(g.n, 0);
	assert_int_equal(lat_flow_hist_buckets(&h, on_bucket, &b), 0);
	assert_int_equal(b.count[0], 1000);
	assert_int_equal(b.count[7], 1);
	/* The open window's samples count too, in buckets closed windows have or not. */
	assert_int_equal(lat_flow_hist_add(&h, &m, 0, 5000), 0);
	assert_int_equal(lat_flow_hist_add(&h, &m, 3, 42), 0);
	memset(&b, 0, sizeof(b));
	assert_int_equal(lat_flow_hist_buckets(&h, on_bucket, &b), 0);
	assert_int_equal(b.count[0], 1001);
	assert_int_equal(b.count[3], 1);
	assert_int_equal(b.count[7], 1);
	assert_int_equal(lat_flow_hist_add(&h, &m, LAT_HIST_KINDS, 1), -EINVAL);
	lat_flow_hist_free(&h, &m);
	track_mem_release(&m);
}

/* The window's p50/p99 are the nearest-rank sample's bucket midpoint, clamped to the window's
 * min and max, for any mix of kinds and spreads (up to the last bucket, ending at 2^64). The
 * tables in track_mem's pool, as in a run, not malloc as under ASan by default. */
static void test_window_nearest_rank_bucket(void **state)
{
	enum { MAX_N = 3000 };
	static uint64_t vals[LAT_HIST_KINDS][MAX_N], buckets[MAX_N];
	struct lat_flow_hist h = { 0 };
	struct track_mem m = { .pool_under_asan = 1 };

	(void)state;
	for (int round = 0; round < 300; round++) {
		size_t n[LAT_HIST_KINDS] = { 0 };
		uint32_t kinds = (uint32_t)(rng64() % 255) + 1, shift = (uint32_t)(rng64() % 64);
		int total = 1 + (int)(rng64() % MAX_N);
		struct got g = { 0 };

		for (int i = 0; i < total; i++) {
			uint32_t kind = (uint32_t)(rng64() % LAT_HIST_KINDS);
			uint64_t v = rng64() >> shift >> (rng64() % 4);

			if (!(kinds & 1u << kind))
				continue;
			vals[kind][n[kind]++] = v;
			assert_int_equal(lat_flow_hist_add(&h, &m, kind, v), 0);
		}
		assert_int_equal(lat_flow_hist_close_window(&h, &m, on_window, &g), 0);
		for (int k = 0, gi = 0; k < LAT_HIST_KINDS; k++) {
			uint64_t lo = UINT64_MAX, hi = 0, p50, p99;

			if (!n[k])
				continue;
			assert_true(gi < g.n);
			assert_int_equal(g.w[gi].kind, k);
			for (size_t i = 0; i < n[k]; i++) {
				buckets[i] = latency_hist_bucket(vals[k][i]);
				lo = vals[k][i] < lo ? vals[k][i] : lo;
				hi = vals[k][i] > hi ? vals[k][i] : hi;
			}
			qsort(buckets, n[k], sizeof(*buckets), cmp_u64);
			p50 = latency_hist_mid((uint32_t)exact_rank(buckets, n[k], 5000));
			p99 = latency_hist_mid((uint32_t)exact_rank(buckets, n[k], 9900));
			assert_int_equal(g.w[gi].p50_ns, p50 < lo ? lo : p50 > hi ? hi : p50);
			assert_int_equal(g.w[gi].p99_ns, p99 < lo ? lo : p99 > hi ? hi : p99);
			gi++;
		}
	}
	lat_flow_hist_free(&h, &m);
	track_mem_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_bounds),
		cmocka_unit_test(test_window_percentiles),
		cmocka_unit_test(test_whole_trace_buckets),
		cmocka_unit_test(test_window_nearest_rank_bucket),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
