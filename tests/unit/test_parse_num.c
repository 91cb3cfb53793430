/* test_parse_num.c: the checked number parser rejects what it must and scales units. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/util/parse_num.h"

static void test_u64(void **state)
{
	uint64_t v;
	assert_int_equal(parse_u64("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_u64("0x10", 0, 100, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(parse_u64("101", 0, 100, &v), -ERANGE);
	/* A leading zero is decimal, not octal. */
	assert_int_equal(parse_u64("010", 0, 100, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(parse_u64("09", 0, 100, &v), 0);
	assert_int_equal(v, 9);
	assert_int_equal(parse_u64("0x", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("-1", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("12abc", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_u64(" 1", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
}

static void test_duration(void **state)
{
	uint64_t ns;
	assert_int_equal(parse_duration_ns("1.5ms", 1000000000, 0, UINT64_MAX, &ns), 0);
	assert_int_equal(ns, 1500000);
	assert_int_equal(parse_duration_ns("2", 1000000000, 0, UINT64_MAX, &ns), 0);
	assert_int_equal(ns, 2000000000ull);
	assert_int_equal(parse_duration_ns("250us", 1, 0, UINT64_MAX, &ns), 0);
	assert_int_equal(ns, 250000);
	assert_int_equal(parse_duration_ns("5parsecs", 1, 0, UINT64_MAX, &ns), -EINVAL);
	assert_int_equal(parse_duration_ns("0s", 1, 1, UINT64_MAX, &ns), -ERANGE);
	assert_int_equal(parse_duration_ns("-1s", 1, 0, UINT64_MAX, &ns), -EINVAL);
}

static void test_size_and_fraction(void **state)
{
	uint64_t b;
	double f;
	assert_int_equal(parse_size_bytes("64k", 0, UINT64_MAX, &b), 0);
	assert_int_equal(b, 65536);
	assert_int_equal(parse_size_bytes("1.5", 0, UINT64_MAX, &b), -EINVAL);
	assert_int_equal(parse_size_bytes("10M", 0, 1024, &b), -ERANGE);
	assert_int_equal(parse_fraction("1%", &f), 0);
	assert_true(f > 0.0099 && f < 0.0101);
	assert_int_equal(parse_fraction("0.001", &f), 0);
	assert_true(f > 0.00099 && f < 0.00101);
	assert_int_equal(parse_fraction("150%", &f), -ERANGE);
	assert_int_equal(parse_fraction("2", &f), -ERANGE);
	assert_int_equal(parse_fraction("%", &f), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_size_and_fraction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
