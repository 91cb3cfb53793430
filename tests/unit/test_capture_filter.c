/* test_capture_filter.c: agentxdp-capture's --filter grammar accepts what it documents, rejects the rest. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/capture/capture_filter.h"

static void test_host_and_qpn(void **state)
{
	struct capture_filter f = { 0 };
	char err[256], text[256];
	static const uint8_t want[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };

	assert_int_equal(capture_filter_parse("host 198.18.0.1 and qpn 0x12", &f, err, sizeof(err)), 0);
	assert_int_equal(f.n_hosts, 1);
	assert_memory_equal(f.hosts[0].addr, want, 16);
	assert_int_equal(f.hosts[0].ipv4, 1);
	assert_int_equal(f.hosts[0].dir, ROCE_CAP_DIR_ANY);
	assert_true(f.has_qpn);
	assert_int_equal(f.qpn, 0x12);
	capture_filter_format(&f, text, sizeof(text));
	assert_string_equal(text, "host 198.18.0.1 and qpn 0x12");
}

static void test_directions_and_ipv6(void **state)
{
	struct capture_filter f = { 0 };
	char err[256], text[256];

	assert_int_equal(capture_filter_parse("src host fd99::1", &f, err, sizeof(err)), 0);
	/* A second --filter adds to the first. */
	assert_int_equal(capture_filter_parse("dst host ::ffff:198.18.0.2", &f, err, sizeof(err)), 0);
	assert_int_equal(f.n_hosts, 2);
	assert_int_equal(f.hosts[0].dir, ROCE_CAP_DIR_SRC);
	assert_int_equal(f.hosts[0].ipv4, 0);
	assert_int_equal(f.hosts[0].addr[0], 0xfd);
	assert_int_equal(f.hosts[0].addr[15], 1);
	assert_int_equal(f.hosts[1].dir, ROCE_CAP_DIR_DST);
	assert_int_equal(f.hosts[1].ipv4, 1); /* v4-mapped given as IPv6 still matches IPv4 */
	capture_filter_format(&f, text, sizeof(text));
	assert_string_equal(text, "src host fd99::1 and dst host 198.18.0.2");
}

static void expect_error(const char *text, const char *needle)
{
	struct capture_filter f = { 0 };
	char err[256] = "";

	assert_int_equal(capture_filter_parse(text, &f, err, sizeof(err)), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("filter '%s': error '%s' lacks '%s'", text, err, needle);
}

static void test_errors(void **state)
{
	expect_error("", "empty filter");
	expect_error("   ", "empty filter");
	expect_error("host", "needs an address");
	expect_error("host 300.1.1.1", "bad address '300.1.1.1'");
	expect_error("qpn 0x1000000", "bad QPN");
	expect_error("qpn twelve", "bad QPN 'twelve'");
	expect_error("qpn 1 and qpn 2", "at most one 'qpn'");
	expect_error("host 198.18.0.1 or host 198.18.0.2", "expected 'and' before 'or'");
	expect_error("host 198.18.0.1 and", "nothing after 'and'");
	expect_error("port 4791", "unexpected 'port'");
	expect_error("src 198.18.0.1", "unexpected '198.18.0.1'");
	expect_error("host 198.18.0.1 and host 198.18.0.2 and host 198.18.0.3", "at most two");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_and_qpn),
		cmocka_unit_test(test_directions_and_ipv6),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
