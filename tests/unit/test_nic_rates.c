/* test_nic_rates.c: NIC counter deltas (wrap, reset), appear/disappear, the detector, NIC metrics. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/nic/nic_rates.h"
#include "lib/export/prom_text.h"

static void test_delta(void **state)
{
	uint64_t d;

	assert_int_equal(nic_counter_delta(100, 250, &d), NIC_DELTA_NORMAL);
	assert_int_equal(d, 150);
	assert_int_equal(nic_counter_delta(7, 7, &d), NIC_DELTA_NORMAL);
	assert_int_equal(d, 0);
	/* 32-bit wrap: 4294967000 -> 2^32 is 296 steps, then 200 more. */
	assert_int_equal(nic_counter_delta(4294967000ull, 200, &d), NIC_DELTA_WRAP32);
	assert_int_equal(d, 296 + 200);
	/* 64-bit wrap: 2^64 - 100 -> 2^64 is 100 steps, then 50 more. */
	assert_int_equal(nic_counter_delta(UINT64_MAX - 99, 50, &d), NIC_DELTA_WRAP64);
	assert_int_equal(d, 150);
	/* Reset: counted from zero, never a huge rate. */
	assert_int_equal(nic_counter_delta(5000, 10, &d), NIC_DELTA_RESET);
	assert_int_equal(d, 10);
	assert_int_equal(nic_counter_delta(1ull << 40, 3, &d), NIC_DELTA_RESET);
	assert_int_equal(d, 3);
	/* 3e9 is in the 32-bit upper half but 2e9 is not in the lower half: a reset. */
	assert_int_equal(nic_counter_delta(3000000000ull, 1000, &d), NIC_DELTA_WRAP32);
	assert_int_equal(nic_counter_delta(3000000000ull, 2999999000ull, &d), NIC_DELTA_BACKWARDS);
	assert_int_equal(d, 0);
}

/* A snapshot built by hand: ports "dev/port/netdev", each with the given counters. */
struct spec_counter {
	const char *name;
	enum nic_counter_source source;
	uint64_t value;
};

static void add_port(struct nic_snapshot *s, const char *dev, uint32_t port, const char *netdev,
		     const struct spec_counter *c, size_t n)
{
	struct nic_port *p;
	size_t i;

	s->ports = realloc(s->ports, (s->n_ports + 1) * sizeof(*s->ports));
	assert_non_null(s->ports);
	p = &s->ports[s->n_ports++];
	memset(p, 0, sizeof(*p));
	snprintf(p->device, sizeof(p->device), "%s", dev);
	p->port = port;
	snprintf(p->netdev, sizeof(p->netdev), "%s", netdev);
	p->counters = calloc(n ? n : 1, sizeof(*p->counters));
	for (i = 0; i < n; i++) {
		snprintf(p->counters[i].name, NIC_NAME_MAX, "%s", c[i].name);
		p->counters[i].source = c[i].source;
		p->counters[i].value = c[i].value;
		p->counters[i].signal = nic_counter_signal(c[i].name);
	}
	p->n_counters = n;
}

static const struct nic_counter *counter(const struct nic_snapshot *s, const char *dev,
					 uint32_t port, const char *name)
{
	const struct nic_port *p = nic_snapshot_find_port(s, dev, port);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < p->n_counters; i++)
		if (strcmp(p->counters[i].name, name) == 0)
			return &p->counters[i];
	fail_msg("no counter %s", name);
	return NULL;
}

/* Counters are sorted by (source, name) in the specs below, as nic_snapshot_read() sorts. */
static void test_compute_appear_disappear(void **state)
{
	struct nic_snapshot a = { .ts_ns = 1000000000ull }, b = { .ts_ns = 3000000000ull };
	const struct spec_counter a1[] = {
		{ "np_cnp_sent", NIC_SRC_HW_COUNTERS, 100 },
		{ "out_of_sequence", NIC_SRC_HW_COUNTERS, 4294967000ull },
		{ "rx_bytes", NIC_SRC_NETDEV, 1000 },
	};
	const struct spec_counter b1[] = {
		{ "np_cnp_sent", NIC_SRC_HW_COUNTERS, 300 },
		{ "out_of_sequence", NIC_SRC_HW_COUNTERS, 200 },
		{ "rx_bytes", NIC_SRC_NETDEV, 5000 },
		{ "vendor_new_counter", NIC_SRC_HW_COUNTERS, 9 },
	};
	const struct spec_counter gone[] = { { "rcvd_seq_err", NIC_SRC_HW_COUNTERS, 1 } };
	const struct spec_counter fresh[] = { { "rx_cnp_pkt", NIC_SRC_HW_COUNTERS, 77 } };

	add_port(&a, "mlx5_0", 1, "eth2", a1, 3);
	add_port(&a, "rxe0", 1, "veth0", gone, 1);
	/* b: mlx5_0 still there (its netdev rebound to eth3), rxe0 gone, hns_0 new. */
	add_port(&b, "hns_0", 1, "enp1", fresh, 1);
	add_port(&b, "mlx5_0", 1, "eth3", b1, 4);

	assert_int_equal(nic_rates_compute(NULL, &a), 0);
	assert_int_equal(counter(&a, "mlx5_0", 1, "np_cnp_sent")->delta_kind, NIC_DELTA_FIRST);
	assert_int_equal(nic_rates_compute(&a, &b), 1);	/* hns_0 appeared */
	assert_false(nic_snapshot_find_port(&b, "hns_0", 1)->has_rates);
	assert_true(nic_snapshot_find_port(&b, "mlx5_0", 1)->has_rates);
	assert_null(nic_snapshot_find_port(&b, "rxe0", 1));

	assert_int_equal(counter(&b, "mlx5_0", 1, "np_cnp_sent")->delta, 200);
	assert_true(fabs(counter(&b, "mlx5_0", 1, "np_cnp_sent")->rate_per_s - 100.0) < 1e-9);
	assert_int_equal(counter(&b, "mlx5_0", 1, "np_cnp_sent")->series_start_ns, 1000000000ull);
	assert_int_equal(counter(&b, "mlx5_0", 1, "out_of_sequence")->delta_kind, NIC_DELTA_WRAP32);
	assert_int_equal(counter(&b, "mlx5_0", 1, "out_of_sequence")->delta, 496);
	assert_int_equal(counter(&b, "mlx5_0", 1, "out_of_sequence")->series_start_ns, 3000000000ull);
	/* New counter and rebound netdev: no rate yet. */
	assert_int_equal(counter(&b, "mlx5_0", 1, "vendor_new_counter")->delta_kind, NIC_DELTA_FIRST);
	assert_int_equal(counter(&b, "mlx5_0", 1, "rx_bytes")->delta_kind, NIC_DELTA_FIRST);
	assert_int_equal(counter(&b, "hns_0", 1, "rx_cnp_pkt")->delta_kind, NIC_DELTA_FIRST);
	/* Signal rates: congestion = np_cnp_sent's 100/s; sequence errors 496 / 2 s. */
	{
		const struct nic_port *p = nic_snapshot_find_port(&b, "mlx5_0", 1);

		assert_true(p->signal_present[NIC_SIG_CONGESTION]);
		assert_true(fabs(p->signal_rate[NIC_SIG_CONGESTION] - 100.0) < 1e-9);
		assert_true(fabs(p->signal_rate[NIC_SIG_SEQUENCE_ERROR] - 248.0) < 1e-9);
		assert_false(p->signal_present[NIC_SIG_RNR]);
	}
	nic_snapshot_free(&a);
	nic_snapshot_free(&b);
}

/* Four ports; mlx5_2's timeout rate is 100/s, the others 1/s: only mlx5_2 stands out. */
static void make_host(struct nic_snapshot *s, uint64_t ts_ns, const uint64_t timeouts[4])
{
	static const char *const devs[] = { "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3" };
	static const char *const nets[] = { "eth0", "eth1", "eth2", "eth3" };
	size_t i;

	memset(s, 0, sizeof(*s));
	s->ts_ns = ts_ns;
	for (i = 0; i < 4; i++) {
		struct spec_counter c[] = { { "local_ack_timeout_err", NIC_SRC_HW_COUNTERS, timeouts[i] } };

		add_port(s, devs[i], 1, nets[i], c, 1);
	}
}

static void test_detect_peers(void **state)
{
	struct nic_snapshot a, b;
	struct nic_detector d;
	struct finding *f = NULL;
	size_t n = 0;
	const uint64_t t0[4] = { 10, 10, 10, 10 }, t1[4] = { 11, 11, 110, 11 };

	make_host(&a, 1000000000ull, t0);
	make_host(&b, 2000000000ull, t1);
	nic_detector_init(&d, NULL);
	nic_rates_compute(NULL, &a);
	assert_int_equal(nic_detect(&d, &a, &f, &n), 0);	/* no rates yet: nothing judged */
	nic_rates_compute(&a, &b);
	assert_int_equal(nic_detect(&d, &b, &f, &n), 1);
	assert_int_equal(f[0].rank, 1);
	assert_int_equal(f[0].kind, FINDING_LOSSY);
	assert_int_equal(f[0].subject_kind, SUBJECT_HOST_LINK);
	assert_string_equal(f[0].subject, "mlx5_2 port 1 (eth2)");
	assert_true(fabs(f[0].severity - 100.0) < 1e-9);	/* 100/s against a median of 1/s */
	assert_true(f[0].confidence >= 0.8);
	assert_non_null(strstr(f[0].evidence, "\"local_ack_timeout_err\":{\"value\":110,\"delta\":100"));
	assert_non_null(strstr(f[0].evidence, "\"peer_median_rate_per_s\":1,"));
	assert_true(nic_snapshot_find_port(&b, "mlx5_2", 1)->anomaly[NIC_SIG_TIMEOUT] > 0);
	assert_true(nic_snapshot_find_port(&b, "mlx5_0", 1)->anomaly[NIC_SIG_TIMEOUT] == 0);
	nic_findings_free(f, n);
	nic_detector_free(&d);
	nic_snapshot_free(&a);
	nic_snapshot_free(&b);
}

static void test_detect_quiet_when_even(void **state)
{
	struct nic_snapshot a, b;
	struct nic_detector d;
	struct finding *f = NULL;
	size_t n = 0;
	const uint64_t t0[4] = { 0, 0, 0, 0 }, t1[4] = { 50, 60, 55, 52 };

	make_host(&a, 1000000000ull, t0);
	make_host(&b, 2000000000ull, t1);
	nic_detector_init(&d, NULL);
	nic_rates_compute(NULL, &a);
	nic_rates_compute(&a, &b);
	assert_int_equal(nic_detect(&d, &b, &f, &n), 0);
	nic_detector_free(&d);
	nic_snapshot_free(&a);
	nic_snapshot_free(&b);
}

/* One port alone: after the warm-up its own baseline is the reference. */
static void test_detect_baseline(void **state)
{
	struct nic_detector_opts o = { .factor = 4, .min_rate_per_s = 1, .warmup = 3 };
	struct nic_snapshot prev = { 0 }, cur;
	struct nic_detector d;
	struct finding *f = NULL;
	size_t n = 0;
	uint64_t value = 0;
	int i, rc;

	nic_detector_init(&d, &o);
	for (i = 0; i < 7; i++) {
		struct spec_counter c[] = { { "np_cnp_sent", NIC_SRC_HW_COUNTERS, 0 } };

		/* 2 CNP/s for 4 intervals, then 40/s for 3 intervals. */
		value += i < 4 ? 2 : 40;
		c[0].value = value;
		memset(&cur, 0, sizeof(cur));
		cur.ts_ns = (uint64_t)(i + 1) * 1000000000ull;
		add_port(&cur, "bnxt_re0", 1, "ens1", c, 1);
		nic_rates_compute(i ? &prev : NULL, &cur);
		rc = nic_detect(&d, &cur, &f, &n);
		if (i < 4)
			assert_int_equal(rc, 0);
		else
			assert_int_equal(rc, 1);	/* keeps firing: abnormal intervals do not teach */
		if (i)
			nic_snapshot_free(&prev);
		prev = cur;
	}
	assert_int_equal(n, 3);
	assert_int_equal(f[0].kind, FINDING_CONGESTED);
	assert_true(fabs(f[2].severity - 20.0) < 1e-9);	/* 40/s vs baseline 2/s */
	assert_non_null(strstr(f[0].severity_text, "baseline"));
	nic_findings_free(f, n);
	nic_snapshot_free(&prev);
	nic_detector_free(&d);
}

static void test_metrics(void **state)
{
	struct nic_snapshot a = { .ts_ns = 1000000000ull }, b = { .ts_ns = 2000000000ull };
	const struct spec_counter c0[] = { { "np_cnp_sent", NIC_SRC_HW_COUNTERS, 5 } };
	const struct spec_counter c1[] = { { "np_cnp_sent", NIC_SRC_HW_COUNTERS, 15 } };
	struct metric_set set;
	struct text_buf out = { 0 };

	add_port(&a, "mlx5_0", 1, "eth\"2", c0, 1);
	add_port(&b, "mlx5_0", 1, "eth\"2", c1, 1);
	nic_rates_compute(NULL, &a);
	nic_rates_compute(&a, &b);
	metric_set_init(&set, 1, b.ts_ns);
	assert_int_equal(nic_metrics_add(&set, &b, 3), 0);
	assert_int_equal(prom_text_write(&set, &out), 0);
	assert_non_null(strstr(out.data, "agentxdp_nic_stat_total{device=\"mlx5_0\",port=\"1\",netdev=\"eth\\\"2\",source=\"hw_counters\",counter=\"np_cnp_sent\"} 15\n"));
	assert_non_null(strstr(out.data, "agentxdp_nic_stat_rate_per_second{device=\"mlx5_0\",port=\"1\",netdev=\"eth\\\"2\",source=\"hw_counters\",counter=\"np_cnp_sent\"} 10\n"));
	assert_non_null(strstr(out.data, "agentxdp_nic_signal_rate_per_second{device=\"mlx5_0\",port=\"1\",netdev=\"eth\\\"2\",signal=\"congestion\"} 10\n"));
	assert_non_null(strstr(out.data, "agentxdp_nic_read_errors_total 3\n"));
	assert_non_null(strstr(out.data, "agentxdp_nic_ports 1\n"));
	text_buf_free(&out);
	metric_set_free(&set);
	nic_snapshot_free(&a);
	nic_snapshot_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_compute_appear_disappear),
		cmocka_unit_test(test_detect_peers),
		cmocka_unit_test(test_detect_quiet_when_even),
		cmocka_unit_test(test_detect_baseline),
		cmocka_unit_test(test_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
