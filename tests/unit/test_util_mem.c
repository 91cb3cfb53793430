/* test_util_mem.c: util_line_calloc() gives zeroed objects on cache lines of their own
 * (the -j lanes rely on it: what one lane writes shares no line with another's reads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "lib/util/util.h"

static void test_line_calloc_aligned_zeroed(void **state)
{
	(void)state;
	for (size_t n = 0; n < 5; n++) {
		unsigned char *p = util_line_calloc(n, 24);
		size_t lines = (n * 24 + UTIL_LINE_BYTES - 1) / UTIL_LINE_BYTES;

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % UTIL_LINE_BYTES, 0);
		/* Rounded up to whole lines, all of them zeroed. */
		for (size_t i = 0; i < lines * UTIL_LINE_BYTES; i++)
			assert_int_equal(p[i], 0);
		free(p);
	}
}

static void test_line_calloc_overflow(void **state)
{
	(void)state;
	assert_null(util_line_calloc(SIZE_MAX / 8, 16));
	assert_null(util_line_calloc(2, SIZE_MAX - 8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_calloc_aligned_zeroed),
		cmocka_unit_test(test_line_calloc_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
