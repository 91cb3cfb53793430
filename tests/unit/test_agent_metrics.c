/* test_agent_metrics.c: flows -> metric families: histograms, bounded cardinality, findings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/export/agent_metrics.h"
#include "lib/export/prom_text.h"
#include "lib/util/text_buf.h"
#include "test_addr.h"

static const struct metric_family *find(const struct metric_set *set, const char *name)
{
	for (size_t i = 0; i < set->n_families; i++)
		if (!strcmp(set->families[i]->name, name))
			return set->families[i];
	return NULL;
}

static uint64_t sum_int(const struct metric_family *f)
{
	uint64_t s = 0;
	for (size_t i = 0; i < f->n_samples; i++)
		s += f->samples[i].int_value;
	return s;
}

static void test_pairs_bounded_and_totals_kept(void **state)
{
	struct flow_stats flows[6];
	struct agent_latency al;
	struct metric_set set;

	memset(flows, 0, sizeof(flows));
	agent_latency_init(&al);
	/* Five host pairs, one of them with two flows. */
	for (int i = 0; i < 6; i++) {
		flows[i].id = (uint64_t)i + 1;
		test_host_addr(flows[i].key.src_ip, 10);
		test_host_addr(flows[i].key.dst_ip, 20 + (i < 5 ? i : 0));
		flows[i].key.dst_qpn = 0x100 + (uint32_t)i;
		flows[i].packets = 100 + (uint64_t)i;
		flows[i].retransmitted_packets = (uint64_t)i;
		flows[i].read_gaps = 2 * (uint64_t)i;
		flows[i].ack_samples = 10;
		flows[i].ack_latency_p99_us = 5.0 * (i + 1);
		for (int k = 0; k < 10; k++)
			assert_int_equal(agent_latency_observe(&al, flows[i].id, 3000u * (unsigned)(i + 1)), 0);
	}
	struct finding f = { .rank = 1, .kind = FINDING_SLOW, .subject_kind = SUBJECT_LINK, .severity = 5.1,
			     .confidence = 0.9 };
	strcpy(f.subject, "leaf0-spine1");
	struct agent_metrics_input in = {
		.flows = flows, .n_flows = 6, .findings = &f, .n_findings = 1, .latency = &al,
		.max_pairs = 2, .top_qps = 3,
	};
	metric_set_init(&set, 1, 2);
	assert_int_equal(agent_metrics_build(&set, &in), 0);

	const struct metric_family *pk = find(&set, "agentxdp_packets_total");
	assert_non_null(pk);
	assert_int_equal(pk->n_samples, 3); /* two pairs + "other" */
	assert_int_equal(sum_int(pk), 100 + 101 + 102 + 103 + 104 + 105);
	assert_int_equal(sum_int(find(&set, "agentxdp_retransmitted_packets_total")), 0 + 1 + 2 + 3 + 4 + 5);
	assert_int_equal(sum_int(find(&set, "agentxdp_read_rereads_total")), 2 * (0 + 1 + 2 + 3 + 4 + 5));

	const struct metric_family *h = find(&set, "agentxdp_ack_latency_seconds");
	assert_non_null(h);
	assert_int_equal(h->n_samples, 3);
	uint64_t count = 0;
	for (size_t i = 0; i < h->n_samples; i++)
		count += h->samples[i].count;
	assert_int_equal(count, 60);

	const struct metric_family *qp = find(&set, "agentxdp_qp_ack_latency_p99_seconds");
	assert_int_equal(qp->n_samples, 3);
	assert_true(qp->samples[0].value > 29e-6 && qp->samples[0].value < 31e-6); /* worst first */

	const struct metric_family *sev = find(&set, "agentxdp_finding_severity");
	assert_int_equal(sev->n_samples, 1);
	assert_true(sev->samples[0].value > 5.0);

	struct text_buf out = { 0 };
	assert_int_equal(prom_text_write(&set, &out), 0);
	assert_non_null(strstr(out.data, "link=\"leaf0-spine1\""));
	assert_non_null(strstr(out.data, "src=\"other\""));
	text_buf_free(&out);
	metric_set_free(&set);
	agent_latency_free(&al);
}

/* The defaults bound a large fabric: 300 host pairs of 2 QPs each -> 200 pairs + "other"
 * (every packet still counted), and only the 20 worst QPs get their own p99 series. */
static void test_default_bounds(void **state)
{
	enum { PAIRS = 300, QPS = 2 * PAIRS };
	struct flow_stats *flows = calloc(QPS, sizeof(*flows));
	struct metric_set set;
	uint64_t want_packets = 0;

	assert_non_null(flows);
	for (int i = 0; i < QPS; i++) {
		int pair = i / 2;
		flows[i].id = (uint64_t)i + 1;
		test_host_addr(flows[i].key.src_ip, 1 + pair % 250);
		test_host_addr(flows[i].key.dst_ip, 1 + pair / 250);
		flows[i].key.dst_ip[13] = 19; /* another /16 than the sources: no pair repeats */
		flows[i].key.dst_qpn = 0x1000 + (uint32_t)i;
		flows[i].packets = 10 + (uint64_t)i;
		flows[i].ack_samples = 30;
		flows[i].ack_latency_p99_us = 1.0 + i;
		want_packets += flows[i].packets;
	}
	struct agent_metrics_input in = { .flows = flows, .n_flows = QPS }; /* 0 = defaults */
	metric_set_init(&set, 1, 2);
	assert_int_equal(agent_metrics_build(&set, &in), 0);
	const struct metric_family *pk = find(&set, "agentxdp_packets_total");
	assert_int_equal(pk->n_samples, 201);
	assert_int_equal(sum_int(pk), want_packets);
	assert_string_equal(pk->samples[200].labels[0].value, "other");
	const struct metric_family *qp = find(&set, "agentxdp_qp_ack_latency_p99_seconds");
	assert_int_equal(qp->n_samples, 20);
	/* The worst QP (highest p99) first, the 20th worst last. */
	assert_true(qp->samples[0].value > (QPS - 0.5) * 1e-6);
	assert_true(qp->samples[19].value > (QPS - 20.5) * 1e-6 && qp->samples[19].value < (QPS - 18.5) * 1e-6);
	metric_set_free(&set);
	free(flows);
}

static void test_bucket_edges(void **state)
{
	struct agent_latency al;

	agent_latency_init(&al);
	assert_int_equal(agent_latency_observe(&al, 3, 1000), 0);	/* exactly 1 us: first bucket */
	assert_int_equal(agent_latency_observe(&al, 3, 1001), 0);	/* just above: second */
	assert_int_equal(agent_latency_observe(&al, 3, 5000000000ull), 0); /* 5 s: +Inf */
	assert_int_equal(al.counts[3][0], 1);
	assert_int_equal(al.counts[3][1], 1);
	assert_int_equal(al.counts[3][AGENT_LATENCY_BUCKETS], 1);
	agent_latency_free(&al);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_bounded_and_totals_kept),
		cmocka_unit_test(test_default_bounds),
		cmocka_unit_test(test_bucket_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
