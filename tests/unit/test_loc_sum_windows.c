/* test_loc_sum_windows.c: loc_sum_windows() sums per-window points as a stable sort would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/localize/localize_internal.h"

/* The reference: a stable insertion sort by start, then each start's points summed left
 * to right (what the code did before the grid path, glibc's qsort being a merge sort). */
static size_t reference_sum(struct win_point *pts, size_t n)
{
	size_t m = 0;

	for (size_t i = 1; i < n; i++) {
		struct win_point p = pts[i];
		size_t j = i;

		while (j > 0 && pts[j - 1].start_ns > p.start_ns) {
			pts[j] = pts[j - 1];
			j--;
		}
		pts[j] = p;
	}
	for (size_t i = 0; i < n; i++) {
		if (m && pts[m - 1].start_ns == pts[i].start_ns) {
			pts[m - 1].num += pts[i].num;
			pts[m - 1].den += pts[i].den;
		} else {
			pts[m++] = pts[i];
		}
	}
	return m;
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* n points of `flows` flows, each flow's windows in order on a grid of `step` ns from
 * `origin`, values with fractions so that the order of the sums shows in the last bit. */
static void fill(struct win_point *pts, size_t n, uint64_t origin, uint64_t step, size_t span)
{
	for (size_t i = 0; i < n; i++) {
		pts[i].start_ns = origin + step * (rng() % span);
		pts[i].num = (double)(rng() % 1000000) / 7.0;
		pts[i].den = (double)(rng() % 1000) / 3.0;
	}
}

static void check_same(struct win_point *pts, size_t n)
{
	struct win_point *want = malloc(n * sizeof(*want));
	size_t m_want, m_got;

	assert_non_null(want);
	memcpy(want, pts, n * sizeof(*want));
	m_want = reference_sum(want, n);
	m_got = loc_sum_windows(pts, n);
	assert_int_equal(m_got, m_want);
	/* Bit for bit: the verdict must not move with the way the sums are taken. */
	assert_memory_equal(pts, want, m_want * sizeof(*want));
	free(want);
}

static void test_grid_dense(void **state)
{
	struct win_point pts[3000];

	(void)state;
	for (int round = 0; round < 20; round++) {
		fill(pts, 3000, 1700000000000000000ull + 100000ull * round, 100000, 120);
		check_same(pts, 3000);
	}
}

/* Starts far apart for their number: no grid slots, the sort. */
static void test_grid_sparse(void **state)
{
	struct win_point pts[200];

	(void)state;
	for (int round = 0; round < 20; round++) {
		fill(pts, 200, 5, 1000000007ull, 1u << 30);
		check_same(pts, 200);
	}
}

/* Starts not on one grid (a gcd of 1), a single start, one point, none. */
static void test_odd_inputs(void **state)
{
	struct win_point pts[64];

	(void)state;
	for (size_t i = 0; i < 64; i++)
		pts[i] = (struct win_point){ .start_ns = 1000 + (i * 37) % 50, .num = i / 3.0,
					     .den = 1 };
	check_same(pts, 64);
	for (size_t i = 0; i < 64; i++)
		pts[i] = (struct win_point){ .start_ns = 42, .num = i / 7.0, .den = i / 9.0 };
	check_same(pts, 64);
	check_same(pts, 1);
	assert_int_equal(loc_sum_windows(pts, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grid_dense),
		cmocka_unit_test(test_grid_sparse),
		cmocka_unit_test(test_odd_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
