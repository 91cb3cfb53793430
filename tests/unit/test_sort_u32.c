/* test_sort_u32.c: the radix sort gives what qsort gives, at every size and value range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/sort_u32.h"
#include "test_rng.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void check(size_t n, uint32_t mask, uint32_t base)
{
	uint32_t *a = malloc((n ? n : 1) * sizeof(*a)), *b = malloc((n ? n : 1) * sizeof(*b));

	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		a[i] = base + (rng32() & mask);
	memcpy(b, a, n * sizeof(*a));
	sort_u32(a, n);
	qsort(b, n, sizeof(*b), cmp_u32);
	assert_memory_equal(a, b, n * sizeof(*a));
	free(a);
	free(b);
}

static void test_sizes_and_ranges(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 63, 64, 65, 1000, 1024, 1025, 4096, 100000 };
	static const uint32_t masks[] = { 0, 1, 0xff, 0xffff, 0xffffff, 0xffffffff };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
			check(sizes[i], masks[m], 0);
			check(sizes[i], masks[m] >> 1, 0x80000000u); /* high byte constant, not 0 */
		}
}

static void test_presorted_and_reversed(void **state)
{
	size_t n = 5000;
	uint32_t *a = malloc(n * sizeof(*a));

	assert_non_null(a);
	for (size_t i = 0; i < n; i++)
		a[i] = (uint32_t)(n - i) * 1000u;
	sort_u32(a, n);
	for (size_t i = 1; i < n; i++)
		assert_true(a[i - 1] <= a[i]);
	sort_u32(a, n);
	assert_int_equal(a[0], 1000);
	assert_int_equal(a[n - 1], n * 1000);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_and_ranges),
		cmocka_unit_test(test_presorted_and_reversed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
