/*
 * test_qp_shards.c: the tracker on N threads (qp_shards.h) gives one tracker's event stream,
 * flow ids, statistics and totals. A seeded workload of RC queue pairs between many hosts
 * (requests, coalesced ACKs, losses and go-back-N, NAKs, CNPs, a second vantage, packets out
 * of time order) is tracked by a plain qp_tracker and by qp_shards with 1, 2, 3 and 7
 * threads; every sink call is logged as bytes and the logs must be equal. Built with ASan and
 * UBSan like every unit test, so the rings and the merge are checked for memory errors too.
 * A merge that waits for ever (as when a new flow's event was tagged with the packet before
 * it: a deadlock, seen on the 1M-packet bench trace) is ended by alarm() and fails.
 * Lanes (qp_shards_new_lanes()): 2, 3 and 7 threads each make the whole workload and give it
 * to their lane, with a sink and without; the same logs again.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/track/qp_shards.h"
#include "lib/track/qp_track.h"

#define HOSTS 24
#define QPS 96
#define PACKETS 40000

/* Every sink call, appended as bytes: equal logs mean the same calls in the same order. */
struct log {
	uint8_t *data;
	size_t len, cap;
};

static void log_put(struct log *l, char tag, const void *p, size_t n)
{
	if (l->len + n + 1 > l->cap) {
		l->cap = (l->len + n + 1) * 2;
		l->data = realloc(l->data, l->cap);
		assert_non_null(l->data);
	}
	l->data[l->len++] = (uint8_t)tag;
	memcpy(l->data + l->len, p, n);
	l->len += n;
}

/* Events are copied field by field: padding bytes are not compared. */
static void on_latency(void *ctx, const struct qp_latency_sample *s)
{
	uint64_t v[5] = { s->flow_id, s->ts_ns, s->latency_ns, s->psn, s->kind };

	log_put(ctx, 'L', v, sizeof(v));
}

static void on_retx(void *ctx, const struct qp_retx_event *e)
{
	uint64_t v[9] = { e->flow_id, e->ts_ns, e->first_tx_ns, e->prev_tx_ns, e->trigger_ns,
			  e->psn, e->tx_count, e->cause, e->opcode };

	log_put(ctx, 'R', v, sizeof(v));
}

static void on_nak(void *ctx, const struct qp_nak_event *e)
{
	uint64_t v[8] = { e->flow_id, e->responder_flow_id, e->ts_ns, e->rnr_timer_ns,
			  e->psn, e->msn, e->syndrome, e->kind };

	log_put(ctx, 'N', v, sizeof(v));
}

static void on_cnp(void *ctx, const struct qp_cnp_event *e)
{
	uint64_t v[3] = { e->flow_id, e->cnp_flow_id, e->ts_ns };

	log_put(ctx, 'C', v, sizeof(v));
}

static void on_window(void *ctx, uint64_t id, const struct flow_window *w)
{
	uint64_t v[6] = { id, w->start_ns, w->packets, w->bytes, w->ack_samples, w->ack_latency_p99_ns };

	log_put(ctx, 'W', v, sizeof(v));
}

/* A new flow's id: a caller's sink that listens for them gets them in one tracker's order. */
static void on_flow(void *ctx, uint64_t id)
{
	log_put(ctx, 'F', &id, sizeof(id));
}

static void set_ip(uint8_t a[16], int host)
{
	memset(a, 0, 16);
	a[10] = a[11] = 0xff;
	a[12] = 10;
	a[13] = (uint8_t)(host >> 8);
	a[15] = (uint8_t)host;
}

/* The workload: each QP a requester host, a responder host, its PSN and what is unacked. */
struct wl_qp {
	int req, resp;
	uint32_t qpn_req, qpn_resp, psn, una;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void make_pkt(struct roce_pkt *p, uint64_t ts, int src, int dst, uint32_t qpn, uint8_t op, uint32_t psn)
{
	memset(p, 0, sizeof(*p));
	p->ts_ns = ts;
	p->orig_len = p->cap_len = 128;
	set_ip(p->src_ip, src);
	set_ip(p->dst_ip, dst);
	p->ip_version = 4;
	p->roce_version = 2;
	p->udp_sport = (uint16_t)(49152 + (qpn & 0xff));
	p->udp_dport = 4791;
	p->opcode = ROCE_OPCODE(ROCE_TR_RC, op);
	p->transport = ROCE_TR_RC;
	p->dest_qp = qpn;
	p->psn = psn & 0xffffff;
	p->headers = ROCE_H_BTH;
	p->payload_len = op == ROCE_OP_ACK ? 0 : 64;
}

/* Packet i of the seeded workload, into *p, with its vantage. */
static uint32_t workload_pkt(struct wl_qp *qps, uint64_t *seed, uint64_t i, struct roce_pkt *p)
{
	struct wl_qp *q = &qps[rnd(seed) % QPS];
	uint64_t r = rnd(seed), ts = 1000000 + i * 700 + (r % 5 == 0 ? 0 : r % 300);
	uint32_t vantage = (uint32_t)(r >> 20) % 2;

	if ((r >> 8) % 3) {
		/* A request; one in 50 goes back to the oldest unacked PSN (a resend). */
		uint32_t psn = (r >> 12) % 50 == 0 ? q->una : q->psn++;

		make_pkt(p, ts, q->req, q->resp, q->qpn_resp, ROCE_OP_SEND_ONLY, psn);
		p->ecn = (r >> 30) % 40 == 0 ? 3 : 2;
	} else if ((r >> 16) % 30 == 0) {
		/* A CNP back to the requester. */
		make_pkt(p, ts, q->resp, q->req, q->qpn_req, 0, 0);
		p->opcode = ROCE_OPCODE_CNP;
		p->transport = ROCE_TR_CNP;
	} else {
		/* A coalesced ACK (or a PSN sequence NAK) up to somewhere in the outstanding PSNs. */
		uint32_t out = q->psn - q->una, upto = q->una + (out ? (uint32_t)(r >> 24) % out : 0);

		make_pkt(p, ts, q->resp, q->req, q->qpn_req, ROCE_OP_ACK, upto);
		p->headers |= ROCE_H_AETH;
		p->aeth_syndrome = (r >> 40) % 25 == 0 ? 0x60 : 0x1f;
		if (p->aeth_syndrome == 0x1f)
			q->una = upto + 1;
	}
	return vantage;
}

static void workload_init(struct wl_qp *qps)
{
	for (int i = 0; i < QPS; i++) {
		qps[i].req = 1 + i % HOSTS;
		qps[i].resp = 1 + (i * 7 + 3) % HOSTS;
		if (qps[i].resp == qps[i].req)
			qps[i].resp = 1 + (qps[i].req % HOSTS);
		qps[i].qpn_req = 0x1000 + (uint32_t)i;
		qps[i].qpn_resp = 0x8000 + (uint32_t)i;
		qps[i].psn = qps[i].una = (uint32_t)i * 1000;
	}
}

static void cfg_for(struct qp_tracker_cfg *cfg, struct qp_event_sink *sink, struct log *l)
{
	*sink = (struct qp_event_sink){ .ctx = l, .latency = on_latency, .retransmission = on_retx,
					.nak = on_nak, .cnp = on_cnp, .window = on_window, .flow = on_flow };
	qp_tracker_cfg_default(cfg);
	cfg->window_ns = 2000000; /* many windows: window events while tracking and at finish */
	cfg->dup_window_ns = 100;
	cfg->sink = sink;
}

/* The flows' statistics as bytes (the scalar fields; windows by count). */
static void log_flows(struct log *l, const struct flow_stats *f, long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t v[12] = { f[i].id, f[i].peer_id, f[i].packets, f[i].bytes, f[i].vantage,
				   f[i].retransmitted_packets, f[i].timeouts, f[i].cnps, f[i].ack_samples,
				   f[i].duplicates, f[i].n_windows, f[i].role };
		double d[2] = { f[i].ack_latency_p50_us, f[i].ack_latency_p99_us };

		log_put(l, 'F', v, sizeof(v));
		log_put(l, 'f', d, sizeof(d));
		log_put(l, 'k', &f[i].key, sizeof(f[i].key));
	}
}

static void log_totals(struct log *l, const struct qp_tracker_totals *t)
{
	uint64_t v[15] = { t->packets, t->bytes, t->flows, t->paired_flows, t->retransmitted_packets,
			   t->naks, t->timeouts, t->cnps, t->cnps_unattributed, t->ecn_ce, t->duplicates,
			   t->ts_backwards, t->first_ns, t->last_ns, t->psn_slots_visited };

	log_put(l, 'T', v, sizeof(v));
}

/* The reference: one qp_tracker, one packet at a time. */
static void run_plain(struct log *l)
{
	struct wl_qp qps[QPS];
	struct qp_tracker_cfg cfg;
	struct qp_event_sink sink;
	struct qp_tracker *t;
	const struct flow_stats *f;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	struct roce_pkt p;
	long n;

	workload_init(qps);
	cfg_for(&cfg, &sink, l);
	t = qp_tracker_new(&cfg);
	assert_non_null(t);
	for (uint64_t i = 0; i < PACKETS; i++) {
		uint32_t v = workload_pkt(qps, &seed, i, &p);

		assert_int_equal(qp_tracker_add(t, &p, v), 0);
	}
	qp_tracker_finish(t);
	n = qp_tracker_snapshot(t, &f);
	assert_true(n > QPS);
	log_flows(l, f, n);
	log_totals(l, qp_tracker_totals(t));
	qp_tracker_free(t);
}

static void run_shards(struct log *l, unsigned jobs)
{
	struct wl_qp qps[QPS];
	struct qp_tracker_cfg cfg;
	struct qp_event_sink sink;
	struct qp_shards *s;
	const struct flow_stats *f;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	long n;

	workload_init(qps);
	cfg_for(&cfg, &sink, l);
	s = qp_shards_new(&cfg, jobs);
	assert_non_null(s);
	assert_int_equal(qp_shards_count(s), jobs);
	for (uint64_t i = 0; i < PACKETS; i++) {
		uint32_t v = workload_pkt(qps, &seed, i, qp_shards_slot(s));

		assert_int_equal(qp_shards_push(s, v), 0);
	}
	assert_int_equal(qp_shards_packets(s), PACKETS);
	assert_int_equal(qp_shards_finish(s), 0);
	n = qp_shards_snapshot(s, &f);
	assert_true(n > QPS);
	log_flows(l, f, n);
	log_totals(l, qp_shards_totals(s));
	qp_shards_free(s);
}

/* A lane's thread: the whole workload, as every lane must see it. */
struct lane_feed {
	struct qp_shards *s;
	unsigned lane;
	uint64_t seed, packets;
	int rc;
	pthread_t thread;
};

static void *lane_feed(void *arg)
{
	struct lane_feed *a = arg;
	struct wl_qp qps[QPS];
	uint64_t seed = a->seed;

	workload_init(qps);
	for (uint64_t i = 0; i < a->packets && !a->rc; i++) {
		struct roce_pkt *p = qp_lane_slot(a->s, a->lane);
		uint32_t v = workload_pkt(qps, &seed, i, p);

		/* Odd lanes pass the others' packets by their time, as agentxdp-analyze does with
		 * a frame it keys without decoding; even lanes give every packet to qp_lane_push(). */
		if (a->lane % 2 && qp_shard_of(p, qp_shards_count(a->s)) != a->lane)
			qp_lane_pass(a->s, a->lane, i + 1, &p->ts_ns);
		else
			a->rc = qp_lane_push(a->s, a->lane, v, i + 1);
	}
	qp_lane_end(a->s, a->lane);
	return NULL;
}

static void run_lanes(struct log *l, const struct qp_tracker_cfg *cfg, unsigned jobs, uint64_t seed,
		      uint64_t packets)
{
	struct lane_feed feed[8];
	struct qp_shards *s;
	const struct flow_stats *f;
	long n;

	assert_true(jobs <= 8);
	s = qp_shards_new_lanes(cfg, jobs);
	assert_non_null(s);
	assert_int_equal(qp_shards_count(s), jobs);
	for (unsigned j = 0; j < jobs; j++) {
		feed[j] = (struct lane_feed){ .s = s, .lane = j, .seed = seed, .packets = packets };
		if (j)
			assert_int_equal(pthread_create(&feed[j].thread, NULL, lane_feed, &feed[j]), 0);
	}
	lane_feed(&feed[0]); /* lane 0 on this thread, as agentxdp-analyze runs it */
	for (unsigned j = 1; j < jobs; j++)
		assert_int_equal(pthread_join(feed[j].thread, NULL), 0);
	for (unsigned j = 0; j < jobs; j++)
		assert_int_equal(feed[j].rc, 0);
	assert_int_equal(qp_shards_finish(s), 0);
	assert_int_equal(qp_shards_packets(s), packets);
	n = qp_shards_snapshot(s, &f);
	assert_true(n > QPS);
	log_flows(l, f, n);
	log_totals(l, qp_shards_totals(s));
	qp_shards_free(s);
}

static void test_same_as_one_tracker(void **state)
{
	static const unsigned jobs[] = { 1, 2, 3, 7 };
	struct log ref = { 0 };

	(void)state;
	run_plain(&ref);
	assert_true(ref.len > 100000); /* events of every kind, not an empty comparison */
	assert_non_null(memchr(ref.data, 'R', ref.len));
	assert_non_null(memchr(ref.data, 'N', ref.len));
	assert_non_null(memchr(ref.data, 'C', ref.len));
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		struct log got = { 0 };

		run_shards(&got, jobs[i]);
		assert_int_equal(got.len, ref.len);
		assert_memory_equal(got.data, ref.data, ref.len);
		free(got.data);
	}
	free(ref.data);
}

static void test_lanes_same_as_one_tracker(void **state)
{
	static const unsigned jobs[] = { 2, 3, 7 };
	struct qp_tracker_cfg cfg;
	struct qp_event_sink sink;
	struct log ref = { 0 };

	(void)state;
	run_plain(&ref);
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		struct log got = { 0 };

		cfg_for(&cfg, &sink, &got);
		run_lanes(&got, &cfg, jobs[i], 0x9e3779b97f4a7c15ull, PACKETS);
		assert_int_equal(got.len, ref.len);
		assert_memory_equal(got.data, ref.data, ref.len);
		free(got.data);
	}
	free(ref.data);
}

/* An IPv4 pair's shard from its 4-byte addresses is its ::ffff:a.b.c.d shard. */
static void test_shard_of_v4(void **state)
{
	uint64_t seed = 11;

	(void)state;
	for (int i = 0; i < 10000; i++) {
		uint8_t a[16] = { [10] = 0xff, [11] = 0xff }, b[16] = { [10] = 0xff, [11] = 0xff };
		uint64_t r = rnd(&seed);

		memcpy(a + 12, &r, 4);
		memcpy(b + 12, (uint8_t *)&r + 4, 4);
		for (unsigned n = 1; n < 9; n++)
			assert_int_equal(qp_shard_of_v4(a + 12, b + 12, n), qp_shard_of_addrs(a, b, n));
	}
}

/* Both directions and every vantage of a host pair go to one shard. */
static void test_shard_key_unordered(void **state)
{
	struct roce_pkt a, b;

	(void)state;
	for (int h = 1; h < 200; h++) {
		make_pkt(&a, 0, h, h + 7, 0x11, ROCE_OP_SEND_ONLY, 0);
		make_pkt(&b, 0, h + 7, h, 0x22, ROCE_OP_ACK, 0);
		for (unsigned n = 1; n < 9; n++) {
			assert_true(qp_shard_of(&a, n) < n);
			assert_int_equal(qp_shard_of(&a, n), qp_shard_of(&b, n));
		}
	}
}

static void test_bad_count(void **state)
{
	struct qp_tracker_cfg cfg;

	(void)state;
	qp_tracker_cfg_default(&cfg);
	assert_null(qp_shards_new(&cfg, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(qp_shards_new(&cfg, QP_SHARDS_MAX + 1));
}

/* No sink at all (--json without a database): the same flows, ids and totals. */
static void test_no_sink(void **state)
{
	struct log ref = { 0 }, got = { 0 };
	struct qp_tracker_cfg cfg;
	struct wl_qp qps[QPS];
	uint64_t seed = 7;
	struct roce_pkt p;
	struct qp_tracker *t;
	struct qp_shards *s;
	const struct flow_stats *f;
	long n;

	(void)state;
	qp_tracker_cfg_default(&cfg);
	workload_init(qps);
	t = qp_tracker_new(&cfg);
	assert_non_null(t);
	for (uint64_t i = 0; i < 5000; i++) {
		uint32_t v = workload_pkt(qps, &seed, i, &p);

		assert_int_equal(qp_tracker_add(t, &p, v), 0);
	}
	qp_tracker_finish(t);
	n = qp_tracker_snapshot(t, &f);
	log_flows(&ref, f, n);
	log_totals(&ref, qp_tracker_totals(t));
	qp_tracker_free(t);

	workload_init(qps);
	seed = 7;
	s = qp_shards_new(&cfg, 4);
	assert_non_null(s);
	for (uint64_t i = 0; i < 5000; i++) {
		uint32_t v = workload_pkt(qps, &seed, i, qp_shards_slot(s));

		assert_int_equal(qp_shards_push(s, v), 0);
	}
	assert_int_equal(qp_shards_finish(s), 0);
	n = qp_shards_snapshot(s, &f);
	log_flows(&got, f, n);
	log_totals(&got, qp_shards_totals(s));
	qp_shards_free(s);
	assert_int_equal(got.len, ref.len);
	assert_memory_equal(got.data, ref.data, ref.len);
	free(got.data);

	/* Lanes without a sink: no merge thread, the flows numbered at finish. */
	got = (struct log){ 0 };
	run_lanes(&got, &cfg, 3, 7, 5000);
	assert_int_equal(got.len, ref.len);
	assert_memory_equal(got.data, ref.data, ref.len);
	free(ref.data);
	free(got.data);
}

int main(void)
{
	alarm(300); /* threads that wait on each other for ever fail the test, not hang the suite */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_one_tracker),
		cmocka_unit_test(test_lanes_same_as_one_tracker),
		cmocka_unit_test(test_shard_key_unordered),
		cmocka_unit_test(test_shard_of_v4),
		cmocka_unit_test(test_bad_count),
		cmocka_unit_test(test_no_sink),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
