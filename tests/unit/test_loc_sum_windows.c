/* test_loc_sum_windows.c: loc_sum_windows() sums per-window points as a stable sort would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/localize/localize_internal.h"

/* The reference, by another road: take the distinct starts from the lowest up, and for each
 * sum its points left to right in input order (what a stable sort followed by the sums
 * gives, as the code did before the grid path, glibc's qsort being a merge sort). */
static size_t reference_sum(struct win_point *pts, size_t n)
{
	struct win_point *out = malloc((n ? n : 1) * sizeof(*out));
	uint64_t prev = 0;
	size_t m = 0;

	assert_non_null(out);
	for (;;) {
		bool found = false;
		uint64_t next = UINT64_MAX;

		for (size_t i = 0; i < n; i++)
			if ((!m || pts[i].start_ns > prev) && pts[i].start_ns <= next) {
				next = pts[i].start_ns;
				found = true;
			}
		if (!found)
			break;
		for (size_t i = 0, first = 1; i < n; i++) {
			if (pts[i].start_ns != next)
				continue;
			if (first) {
				out[m++] = pts[i];
				first = 0;
			} else {
				out[m - 1].num += pts[i].num;
				out[m - 1].den += pts[i].den;
			}
		}
		prev = next;
	}
	memcpy(pts, out, m * sizeof(*out));
	free(out);
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
