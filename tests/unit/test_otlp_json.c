/* test_otlp_json.c: OTLP/HTTP JSON field names and values against the OTLP specification. */
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
#include "lib/export/otlp_json.h"

static const struct metric_label resource_attrs[] = {
	{ "service.name", "agentxdp-test" },
	{ "host.name", "h1" },
};
static const struct otlp_resource resource = {
	.attrs = resource_attrs, .n_attrs = 2, .scope_name = "agentxdp", .scope_version = "0.1.0",
};

/* One sample of each kind; the expected text is written from the spec's JSON mapping. */
static void test_exact_encoding(void **state)
{
	struct metric_set set;
	struct metric_family *c, *g, *h;
	struct text_buf out = { 0 };
	struct metric_label l[] = { { "device", "mlx5_0" } };
	double bounds[] = { 0.5 };
	uint64_t counts[] = { 2, 1 };

	metric_set_init(&set, 1000, 2000);
	c = metric_family_get(&set, "agentxdp_x_total", METRIC_COUNTER, "X.", "{packet}");
	g = metric_family_get(&set, "agentxdp_y", METRIC_GAUGE, "Y.", "1");
	h = metric_family_get(&set, "agentxdp_z_seconds", METRIC_HISTOGRAM, "Z.", "s");
	metric_family_set_bounds(h, bounds, 1);
	assert_int_equal(metric_add_int(c, l, 1, 5, 1500), 0);
	assert_int_equal(metric_add_double(g, NULL, 0, 0.25, 0), 0);
	assert_int_equal(metric_add_histogram(h, l, 1, counts, 1.5, 0), 0);
	assert_int_equal(otlp_json_write(&set, &resource, &out), 0);
	assert_string_equal(out.data,
		"{\"resourceMetrics\":[{\"resource\":{\"attributes\":["
		"{\"key\":\"service.name\",\"value\":{\"stringValue\":\"agentxdp-test\"}},"
		"{\"key\":\"host.name\",\"value\":{\"stringValue\":\"h1\"}}]},"
		"\"scopeMetrics\":[{\"scope\":{\"name\":\"agentxdp\",\"version\":\"0.1.0\"},\"metrics\":["
		"{\"name\":\"agentxdp_x\",\"description\":\"X.\",\"unit\":\"{packet}\","
		"\"sum\":{\"aggregationTemporality\":2,\"isMonotonic\":true,\"dataPoints\":["
		"{\"attributes\":[{\"key\":\"device\",\"value\":{\"stringValue\":\"mlx5_0\"}}],"
		"\"startTimeUnixNano\":\"1500\",\"timeUnixNano\":\"2000\",\"asInt\":\"5\"}]}},"
		"{\"name\":\"agentxdp_y\",\"description\":\"Y.\",\"unit\":\"1\",\"gauge\":{\"dataPoints\":["
		"{\"attributes\":[],\"timeUnixNano\":\"2000\",\"asDouble\":0.25}]}},"
		"{\"name\":\"agentxdp_z_seconds\",\"description\":\"Z.\",\"unit\":\"s\","
		"\"histogram\":{\"aggregationTemporality\":2,\"dataPoints\":["
		"{\"attributes\":[{\"key\":\"device\",\"value\":{\"stringValue\":\"mlx5_0\"}}],"
		"\"startTimeUnixNano\":\"1000\",\"timeUnixNano\":\"2000\",\"count\":\"3\",\"sum\":1.5,"
		"\"bucketCounts\":[\"2\",\"1\"],\"explicitBounds\":[0.5]}]}}]}]}]}");
	text_buf_free(&out);
	metric_set_free(&set);
}

/* Awkward values stay valid JSON: escapes, bad UTF-8, NaN, >INT64_MAX counters. */
static void test_valid_json(void **state)
{
	struct metric_set set;
	struct metric_family *c, *g;
	struct text_buf out = { 0 };
	struct metric_label l[] = { { "netdev", "q\"b\\s\n\x01 \xff\xc3\xa9" } };
	char path[] = "/tmp/agentxdp-otlp.XXXXXX", cmd[512];
	FILE *f;
	int fd;

	metric_set_init(&set, 1, 2);
	c = metric_family_get(&set, "big_total", METRIC_COUNTER, "", NULL);
	g = metric_family_get(&set, "g", METRIC_GAUGE, "", NULL);
	assert_int_equal(metric_add_int(c, l, 1, UINT64_MAX, 0), 0);
	assert_int_equal(metric_add_double(g, l, 1, NAN, 0), 0);
	assert_int_equal(metric_add_double(g, NULL, 0, -INFINITY, 0), 0);
	assert_int_equal(otlp_json_write(&set, NULL, &out), 0);
	assert_non_null(strstr(out.data, "\"stringValue\":\"q\\\"b\\\\s\\n\\u0001 \xef\xbf\xbd\xc3\xa9\""));
	assert_non_null(strstr(out.data, "\"asDouble\":\"NaN\""));
	assert_non_null(strstr(out.data, "\"asDouble\":\"-Infinity\""));
	assert_non_null(strstr(out.data, "\"asDouble\":1.8446744073709552e+19"));
	if (system("command -v python3 >/dev/null 2>&1") != 0)
		skip();
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fwrite(out.data, 1, out.len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1], encoding=\"utf-8\"));"
		 " assert d[\"resourceMetrics\"][0][\"scopeMetrics\"][0][\"metrics\"][0][\"name\"]==\"big\"'"
		 " %s", path);
	assert_int_equal(system(cmd), 0);
	unlink(path);
	text_buf_free(&out);
	metric_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_encoding),
		cmocka_unit_test(test_valid_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
