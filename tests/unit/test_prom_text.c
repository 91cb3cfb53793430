/* test_prom_text.c: the metric model and the Prometheus text writer (escaping, histograms, promtool). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/export/metrics.h"
#include "lib/export/prom_text.h"

static void test_names(void **state)
{
	struct metric_set set;

	assert_true(metric_name_valid("agentxdp_nic_counter_total"));
	assert_true(metric_name_valid("a:b_c9"));
	assert_false(metric_name_valid("9abc"));
	assert_false(metric_name_valid("a-b"));
	assert_false(metric_name_valid(""));
	assert_true(metric_label_name_valid("device"));
	assert_false(metric_label_name_valid("__name__"));
	assert_false(metric_label_name_valid("a:b"));
	assert_false(metric_label_name_valid("1x"));

	metric_set_init(&set, 0, 0);
	/* A counter must end in _total; a name cannot change kind. */
	assert_null(metric_family_get(&set, "x_packets", METRIC_COUNTER, "h", NULL));
	assert_int_equal(errno, EINVAL);
	assert_non_null(metric_family_get(&set, "x_packets_total", METRIC_COUNTER, "h", NULL));
	assert_null(metric_family_get(&set, "x_packets_total", METRIC_GAUGE, "h", NULL));
	assert_null(metric_family_get(&set, "bad name", METRIC_GAUGE, "h", NULL));
	metric_set_free(&set);
}

static void test_label_checks(void **state)
{
	struct metric_set set;
	struct metric_family *g, *h;
	struct metric_label dup[] = { { "a", "1" }, { "a", "2" } };
	struct metric_label le[] = { { "le", "1" } };
	struct metric_label bad[] = { { "__x", "1" } };
	double bounds[] = { 1, 2 };
	uint64_t counts[] = { 1, 2, 3 };

	metric_set_init(&set, 0, 0);
	g = metric_family_get(&set, "g", METRIC_GAUGE, "", NULL);
	assert_int_equal(metric_add_double(g, dup, 2, 1.0, 0), -EINVAL);
	assert_int_equal(metric_add_double(g, bad, 1, 1.0, 0), -EINVAL);
	assert_int_equal(metric_add_double(g, le, 1, 1.0, 0), 0);	/* "le" is fine off histograms */
	h = metric_family_get(&set, "h_seconds", METRIC_HISTOGRAM, "", "s");
	assert_int_equal(metric_add_histogram(h, NULL, 0, counts, 1.0, 0), -EINVAL); /* no bounds */
	assert_int_equal(metric_family_set_bounds(h, (double[]){ 2, 1 }, 2), -EINVAL);
	assert_int_equal(metric_family_set_bounds(h, bounds, 2), 0);
	assert_int_equal(metric_add_histogram(h, le, 1, counts, 1.0, 0), -EINVAL);
	assert_int_equal(metric_add_histogram(h, NULL, 0, counts, 1.0, 0), 0);
	assert_int_equal(metric_add_int(h, NULL, 0, 1, 0), -EINVAL);
	metric_set_free(&set);
}

static void test_escaping(void **state)
{
	struct metric_set set;
	struct metric_family *c;
	struct text_buf out = { 0 };
	struct metric_label l[] = { { "device", "a\\b\"c\nd" } };

	metric_set_init(&set, 0, 0);
	c = metric_family_get(&set, "x_total", METRIC_COUNTER, "help with \\ and\nnewline \"q\"", NULL);
	assert_int_equal(metric_add_int(c, l, 1, 18446744073709551615ull, 0), 0);
	assert_int_equal(prom_text_write(&set, &out), 0);
	assert_string_equal(out.data, "# HELP x_total help with \\\\ and\\nnewline \"q\"\n"
				      "# TYPE x_total counter\n"
				      "x_total{device=\"a\\\\b\\\"c\\nd\"} 18446744073709551615\n");
	text_buf_free(&out);
	metric_set_free(&set);
}

static void test_doubles(void **state)
{
	struct text_buf out = { 0 };

	prom_format_double(&out, 0.1);
	text_buf_putc(&out, ' ');
	prom_format_double(&out, NAN);
	text_buf_putc(&out, ' ');
	prom_format_double(&out, -INFINITY);
	text_buf_putc(&out, ' ');
	prom_format_double(&out, 1.0 / 3.0);
	assert_string_equal(out.data, "0.1 NaN -Inf 0.33333333333333331");
	assert_true(strtod("0.33333333333333331", NULL) == 1.0 / 3.0);
	text_buf_free(&out);
}

/* Buckets: cumulative, le="+Inf" last and equal to _count; _sum as given. */
static void test_histogram(void **state)
{
	struct metric_set set;
	struct metric_family *h;
	struct text_buf out = { 0 };
	struct metric_label l[] = { { "link", "leaf1-spine1" } };
	double bounds[] = { 0.001, 0.01, 0.1 };
	uint64_t counts[] = { 5, 3, 0, 2 };

	metric_set_init(&set, 0, 0);
	h = metric_family_get(&set, "agentxdp_ack_latency_seconds", METRIC_HISTOGRAM,
			      "ACK latency", "s");
	assert_int_equal(metric_family_set_bounds(h, bounds, 3), 0);
	assert_int_equal(metric_add_histogram(h, l, 1, counts, 0.75, 0), 0);
	assert_int_equal(prom_text_write(&set, &out), 0);
	assert_string_equal(out.data,
		"# HELP agentxdp_ack_latency_seconds ACK latency\n"
		"# TYPE agentxdp_ack_latency_seconds histogram\n"
		"agentxdp_ack_latency_seconds_bucket{link=\"leaf1-spine1\",le=\"0.001\"} 5\n"
		"agentxdp_ack_latency_seconds_bucket{link=\"leaf1-spine1\",le=\"0.01\"} 8\n"
		"agentxdp_ack_latency_seconds_bucket{link=\"leaf1-spine1\",le=\"0.1\"} 8\n"
		"agentxdp_ack_latency_seconds_bucket{link=\"leaf1-spine1\",le=\"+Inf\"} 10\n"
		"agentxdp_ack_latency_seconds_sum{link=\"leaf1-spine1\"} 0.75\n"
		"agentxdp_ack_latency_seconds_count{link=\"leaf1-spine1\"} 10\n");
	text_buf_free(&out);
	metric_set_free(&set);
}

/* The exposition of every kind passes `promtool check metrics` (lint included). */
static void test_promtool(void **state)
{
	struct metric_set set;
	struct metric_family *c, *g, *h;
	struct text_buf out = { 0 };
	struct metric_label l[] = { { "device", "mlx5_0" }, { "port", "1" }, { "netdev", "we\"ird\\\n" } };
	double bounds[] = { 0.5, 1 };
	uint64_t counts[] = { 1, 1, 1 };
	char path[] = "/tmp/agentxdp-prom.XXXXXX", cmd[256];
	FILE *f;
	int fd, rc;

	if (system("command -v promtool >/dev/null 2>&1") != 0)
		skip();
	metric_set_init(&set, 0, 0);
	c = metric_family_get(&set, "agentxdp_test_events_total", METRIC_COUNTER, "Events.", "1");
	g = metric_family_get(&set, "agentxdp_test_rate_per_second", METRIC_GAUGE, "Rate.", NULL);
	h = metric_family_get(&set, "agentxdp_test_latency_seconds", METRIC_HISTOGRAM, "Latency.", "s");
	assert_int_equal(metric_family_set_bounds(h, bounds, 2), 0);
	assert_int_equal(metric_add_int(c, l, 3, 42, 0), 0);
	assert_int_equal(metric_add_double(g, l, 3, NAN, 0), 0);
	assert_int_equal(metric_add_double(g, l, 2, INFINITY, 0), 0);
	assert_int_equal(metric_add_histogram(h, l, 3, counts, 1.25, 0), 0);
	assert_int_equal(prom_text_write(&set, &out), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fwrite(out.data, 1, out.len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	rc = system(cmd);
	unlink(path);
	if (rc != 0)
		fprintf(stderr, "promtool rejected:\n%s", out.data);
	assert_int_equal(rc, 0);
	text_buf_free(&out);
	metric_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_label_checks),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_doubles),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_promtool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
