/* test_trace_filter.c: pcap-filter expressions over frames of several link types (issue #21). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "lib/trace/trace_filter.h"

/* 10.0.0.4 -> 10.0.0.9, UDP 49152 -> 4791: an IPv4 header and a UDP header, no payload. */
static const uint8_t ip_udp[28] = {
	0x45, 0, 0, 28, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 4, 10, 0, 0, 9,
	0xc0, 0x00, 0x12, 0xb7, 0, 8, 0, 0,
};

/* The same packet after an Ethernet header (DLT_EN10MB) or bare (DLT_RAW). */
static size_t frame(int linktype, uint8_t *buf)
{
	static const uint8_t eth[14] = { 2, 0, 0, 0, 0, 9, 2, 0, 0, 0, 0, 4, 0x08, 0x00 };
	size_t off = linktype == DLT_EN10MB ? sizeof(eth) : 0;

	memcpy(buf, eth, off);
	memcpy(buf + off, ip_udp, sizeof(ip_udp));
	return off + sizeof(ip_udp);
}

static int match(struct trace_filter *f, int linktype)
{
	uint8_t buf[64];
	size_t n = frame(linktype, buf);

	return trace_filter_match(f, linktype, buf, (uint32_t)n, (uint32_t)n);
}

/* The program is compiled per link type: raw IP frames match as Ethernet ones do. */
static void test_filter_each_link_type(void **state)
{
	static const struct {
		const char *expr;
		int want;
	} cases[] = {
		{ "host 10.0.0.4 and udp port 4791", 1 },
		{ "src host 10.0.0.9", 0 },
		{ "udp dst port 4791", 1 },
		{ "tcp", 0 },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trace_filter *f;

		assert_int_equal(trace_filter_new(&f, cases[i].expr, err, sizeof(err)), 0);
		assert_string_equal(trace_filter_expr(f), cases[i].expr);
		for (int round = 0; round < 2; round++) { /* the second round uses the cached programs */
			assert_int_equal(match(f, DLT_EN10MB), cases[i].want);
			assert_int_equal(match(f, DLT_RAW), cases[i].want);
		}
		trace_filter_free(f);
	}
}

/* A syntax error is caught before any frame, with pcap's reason. */
static void test_filter_syntax_error(void **state)
{
	struct trace_filter *f = (struct trace_filter *)&f;
	char err[256];

	(void)state;
	assert_int_equal(trace_filter_new(&f, "hots 10.0.0.4", err, sizeof(err)), -1);
	assert_null(f);
	print_message("  %s\n", err);
	assert_non_null(strstr(err, "filter 'hots 10.0.0.4': "));
	assert_non_null(strstr(err, "syntax error"));
}

/* "ether host" has no meaning over raw IP: one error for that link type, then silence. */
static void test_filter_not_for_link_type(void **state)
{
	struct trace_filter *f;
	char err[256];

	(void)state;
	assert_int_equal(trace_filter_new(&f, "ether host 02:00:00:00:00:04", err, sizeof(err)), 0);
	assert_int_equal(match(f, DLT_EN10MB), 1);
	assert_int_equal(match(f, DLT_RAW), -1);
	print_message("  %s\n", trace_filter_error(f));
	assert_non_null(strstr(trace_filter_error(f), "cannot apply to link type"));
	assert_int_equal(match(f, DLT_RAW), 0);
	assert_int_equal(match(f, DLT_EN10MB), 1);
	trace_filter_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_each_link_type),
		cmocka_unit_test(test_filter_syntax_error),
		cmocka_unit_test(test_filter_not_for_link_type),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
