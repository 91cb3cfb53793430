/* test_qp_track.c: per-QP reconstruction over crafted packet sequences (qp_track.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/track/qp_track.h"
#include "test_addr.h"

#define HOST_A 1
#define HOST_B 2
#define QPN_A 0x200 /* A's QP: B's ACKs go to it */
#define QPN_B 0x100 /* B's QP: A's requests go to it */

#define RC(op) ROCE_OPCODE(ROCE_TR_RC, op)
#define SYN_ACK 0x1f
#define SYN_NAK_SEQ 0x60
#define SYN_RNR(timer) (0x20 | (timer))

struct events {
	struct qp_latency_sample samples[256];
	int n_samples;
	struct qp_retx_event retx[64];
	int n_retx;
	struct qp_nak_event naks[16];
	int n_naks;
	struct qp_cnp_event cnps[16];
	int n_cnps;
	int n_windows;
};

static void on_latency(void *ctx, const struct qp_latency_sample *s)
{
	struct events *e = ctx;
	if (e->n_samples < 256)
		e->samples[e->n_samples++] = *s;
}
static void on_retx(void *ctx, const struct qp_retx_event *r)
{
	struct events *e = ctx;
	if (e->n_retx < 64)
		e->retx[e->n_retx++] = *r;
}
static void on_nak(void *ctx, const struct qp_nak_event *n)
{
	struct events *e = ctx;
	if (e->n_naks < 16)
		e->naks[e->n_naks++] = *n;
}
static void on_cnp(void *ctx, const struct qp_cnp_event *c)
{
	struct events *e = ctx;
	if (e->n_cnps < 16)
		e->cnps[e->n_cnps++] = *c;
}
static void on_window(void *ctx, uint64_t id, const struct flow_window *w)
{
	((struct events *)ctx)->n_windows++;
}

static struct events ev;
static struct qp_event_sink sink = {
	.ctx = &ev, .latency = on_latency, .retransmission = on_retx, .nak = on_nak, .cnp = on_cnp,
	.window = on_window,
};

/* A packet from host `src` to host `dst` for QP `qpn`. */
static struct roce_pkt pkt(uint64_t ts, int src, int dst, uint32_t qpn, uint8_t opcode, uint32_t psn)
{
	struct roce_pkt p;

	memset(&p, 0, sizeof(p));
	p.ts_ns = ts;
	p.orig_len = 100;
	p.cap_len = 100;
	test_host_addr(p.src_ip, src);
	test_host_addr(p.dst_ip, dst);
	p.ip_version = 4;
	p.roce_version = 2;
	p.udp_sport = 49152;
	p.udp_dport = 4791;
	p.opcode = opcode;
	p.transport = opcode >> 5;
	p.dest_qp = qpn;
	p.psn = psn;
	p.headers = ROCE_H_BTH;
	p.payload_len = 64;
	return p;
}

/* A -> B request. */
static void req(struct qp_tracker *t, uint64_t ts, uint8_t op, uint32_t psn)
{
	struct roce_pkt p = pkt(ts, HOST_A, HOST_B, QPN_B, RC(op), psn);
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
}

/* B -> A ACK/NAK. */
static void aeth(struct qp_tracker *t, uint64_t ts, uint8_t syndrome, uint32_t psn)
{
	struct roce_pkt p = pkt(ts, HOST_B, HOST_A, QPN_A, RC(ROCE_OP_ACK), psn);
	p.headers |= ROCE_H_AETH;
	p.aeth_syndrome = syndrome;
	p.payload_len = 0;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
}

static void resp(struct qp_tracker *t, uint64_t ts, uint8_t op, uint32_t psn)
{
	struct roce_pkt p = pkt(ts, HOST_B, HOST_A, QPN_A, RC(op), psn);
	p.headers |= ROCE_H_AETH;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
}

static struct qp_tracker *tracker(void)
{
	struct qp_tracker_cfg cfg;

	memset(&ev, 0, sizeof(ev));
	qp_tracker_cfg_default(&cfg);
	cfg.dup_window_ns = 500; /* as --dedup 500ns */
	cfg.sink = &sink;
	return qp_tracker_new(&cfg);
}

/* Snapshot and return the flow A->B (requester) and B->A (responder). */
static void flows(struct qp_tracker *t, const struct flow_stats **r, const struct flow_stats **b)
{
	const struct flow_stats *st;
	long n = qp_tracker_snapshot(t, &st);

	*r = *b = NULL;
	for (long i = 0; i < n; i++) {
		if (st[i].key.dst_qpn == QPN_B && st[i].key.src_ip[15] == HOST_A)
			*r = &st[i];
		if (st[i].key.dst_qpn == QPN_A && st[i].key.src_ip[15] == HOST_B)
			*b = &st[i];
	}
	assert_non_null(*r);
}

static int count_samples(uint8_t kind)
{
	int n = 0;
	for (int i = 0; i < ev.n_samples; i++)
		n += ev.samples[i].kind == kind;
	return n;
}

static const struct qp_latency_sample *sample(uint8_t kind, int nth)
{
	for (int i = 0; i < ev.n_samples; i++)
		if (ev.samples[i].kind == kind && nth-- == 0)
			return &ev.samples[i];
	fail_msg("no sample %d of kind %s", nth, qp_sample_kind_name(kind));
	return NULL;
}

static void test_coalesced_ack(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;

	for (uint32_t i = 0; i < 10; i++)
		req(t, 1000 + i * 100, ROCE_OP_WRITE_ONLY, 100 + i);
	aeth(t, 5000, SYN_ACK, 104); /* covers 100..104, names 104 */
	aeth(t, 6000, SYN_ACK, 109);
	flows(t, &r, &b);
	assert_non_null(b);
	assert_int_equal(r->packets, 10);
	assert_int_equal(b->packets, 2);
	assert_int_equal(r->peer_id, b->id);
	assert_int_equal(b->peer_id, r->id);
	assert_int_equal(r->role, FLOW_ROLE_REQUESTER);
	assert_int_equal(b->role, FLOW_ROLE_RESPONDER);
	assert_int_equal(r->ack_samples, 2);
	assert_int_equal(sample(QP_SAMPLE_ACK, 0)->latency_ns, 5000 - 1400);
	assert_int_equal(sample(QP_SAMPLE_ACK, 1)->latency_ns, 6000 - 1900);
	/* nearest rank over {3600, 4100}: p50 = rank 1, p99 = rank 2 */
	assert_true(r->ack_latency_p50_us == 3.6);
	assert_true(r->ack_latency_p99_us == 4.1);
	assert_true(r->ack_latency_max_us == 4.1);
	/* every WRITE ONLY is a message: ten completions */
	assert_int_equal(r->completion_samples, 10);
	assert_int_equal(sample(QP_SAMPLE_COMPLETION, 0)->latency_ns, 5000 - 1000);
	assert_int_equal(r->retransmitted_packets, 0);
	qp_tracker_free(t);
}

static void test_nak_go_back_n(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;

	for (uint32_t i = 0; i < 10; i++)
		req(t, 1000 + i * 100, ROCE_OP_SEND_MIDDLE, i);
	aeth(t, 3000, SYN_NAK_SEQ, 5); /* 5 was lost: acks 0..4 */
	for (uint32_t i = 5; i < 10; i++)
		req(t, 3500 + i * 100, ROCE_OP_SEND_MIDDLE, i);
	aeth(t, 6000, SYN_ACK, 9);
	flows(t, &r, &b);
	assert_int_equal(r->retransmitted_packets, 5);
	assert_int_equal(r->naks_psn_seq, 1);
	assert_int_equal(b->naks_psn_seq, 0);
	assert_int_equal(r->timeouts, 0);
	assert_int_equal(ev.n_retx, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(ev.retx[i].cause, QP_RETX_NAK);
		assert_int_equal(ev.retx[i].psn, 5 + i);
		assert_int_equal(ev.retx[i].tx_count, 2);
	}
	assert_int_equal(ev.n_naks, 1);
	assert_int_equal(ev.naks[0].flow_id, r->id);
	assert_int_equal(ev.naks[0].kind, QP_NAK_PSN_SEQ);
	/* Karn: the ACK names 9, which was retransmitted: no ACK sample. */
	assert_int_equal(r->ack_samples, 0);
	assert_int_equal(count_samples(QP_SAMPLE_NAK_TO_RETX), 1);
	assert_int_equal(sample(QP_SAMPLE_NAK_TO_RETX, 0)->latency_ns, 4000 - 3000);
	qp_tracker_free(t);
}

static void test_timeout(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;

	for (uint32_t i = 0; i < 4; i++)
		req(t, 1000 + i * 100, ROCE_OP_WRITE_ONLY, 20 + i);
	aeth(t, 2000, SYN_ACK, 21);
	/* silence; the ACK for 22..23 never came: go back to 22 after 1 ms */
	req(t, 1002000, ROCE_OP_WRITE_ONLY, 22);
	req(t, 1002100, ROCE_OP_WRITE_ONLY, 23);
	aeth(t, 1003000, SYN_ACK, 23);
	flows(t, &r, &b);
	assert_int_equal(r->retransmitted_packets, 2);
	assert_int_equal(r->timeouts, 1);
	assert_int_equal(ev.retx[0].cause, QP_RETX_TIMEOUT);
	assert_int_equal(ev.retx[1].cause, QP_RETX_TIMEOUT);
	assert_int_equal(count_samples(QP_SAMPLE_TIMEOUT_GAP), 1);
	assert_int_equal(sample(QP_SAMPLE_TIMEOUT_GAP, 0)->latency_ns, 1002000 - 2000);
	assert_int_equal(r->ack_samples, 1); /* 21 only */
	/* a second timeout of the same PSN is a second episode */
	req(t, 3000000, ROCE_OP_WRITE_ONLY, 24);
	req(t, 5000000, ROCE_OP_WRITE_ONLY, 24);
	flows(t, &r, &b);
	assert_int_equal(r->timeouts, 2);
	assert_int_equal(r->retransmitted_packets, 3);
	qp_tracker_free(t);
}

/* A -> B request / B -> A ACK with an IP TTL: which side of the capture point each was sent. */
static void req_ttl(struct qp_tracker *t, uint64_t ts, uint32_t psn, uint8_t ttl)
{
	struct roce_pkt p = pkt(ts, HOST_A, HOST_B, QPN_B, RC(ROCE_OP_WRITE_ONLY), psn);
	p.ttl = ttl;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
}

static void ack_ttl(struct qp_tracker *t, uint64_t ts, uint32_t psn, uint8_t ttl)
{
	struct roce_pkt p = pkt(ts, HOST_B, HOST_A, QPN_A, RC(ROCE_OP_ACK), psn);
	p.headers |= ROCE_H_AETH;
	p.aeth_syndrome = SYN_ACK;
	p.payload_len = 0;
	p.ttl = ttl;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
}

/*
 * The same restart seen near the requester (requests leave with TTL 64, ACKs arrive with 62)
 * is a timeout; seen near the responder (requests arrive with 62, ACKs leave with 64) its
 * trigger may have been lost after the capture point: cause unknown, no timeout. A timeout
 * counted before anything went the other way is taken back once the side is known.
 */
static void test_capture_side(void **state)
{
	const struct flow_stats *r, *b;
	for (int near_responder = 0; near_responder < 2; near_responder++) {
		struct qp_tracker *t = tracker();
		uint8_t req_t = near_responder ? 62 : 64, ack_t = near_responder ? 64 : 62;

		for (uint32_t i = 0; i < 4; i++)
			req_ttl(t, 1000 + i * 100, 20 + i, req_t);
		ack_ttl(t, 2000, 21, ack_t);
		req_ttl(t, 1002000, 22, req_t);
		req_ttl(t, 1002100, 23, req_t);
		ack_ttl(t, 1003000, 23, ack_t);
		flows(t, &r, &b);
		assert_int_equal(r->retransmitted_packets, 2);
		assert_int_equal(r->timeouts, near_responder ? 0 : 1);
		assert_int_equal(ev.retx[0].cause, near_responder ? QP_RETX_UNKNOWN : QP_RETX_TIMEOUT);
		assert_int_equal(count_samples(QP_SAMPLE_TIMEOUT_GAP), near_responder ? 0 : 1);
		assert_int_equal(r->ttl_min, req_t); /* the TTLs each direction carried */
		assert_int_equal(b->ttl_max, ack_t);
		qp_tracker_free(t);
	}
	/*
	 * Issue #17 item 7: a mirror where both directions carry the same TTL cannot tell the
	 * side; a restart after silence with no NAK is still the requester's timer: a timeout.
	 */
	for (int acks_first = 0; acks_first < 2; acks_first++) {
		struct qp_tracker *t = tracker();

		for (uint32_t i = 0; i < 4; i++)
			req_ttl(t, 1000 + i * 100, 20 + i, 63);
		ack_ttl(t, 2000, 21, 63);
		if (acks_first)
			ack_ttl(t, 2100, 21, 63); /* a duplicate ACK, nothing else */
		req_ttl(t, 1002000, 22, 63);
		req_ttl(t, 1002100, 23, 63);
		ack_ttl(t, 1003000, 23, 63);
		flows(t, &r, &b);
		assert_int_equal(r->retransmitted_packets, 2);
		assert_int_equal(ev.retx[0].cause, QP_RETX_TIMEOUT);
		assert_int_equal(r->timeouts, 1);
		assert_int_equal(count_samples(QP_SAMPLE_TIMEOUT_GAP), 1);
		qp_tracker_free(t);
	}
	/* Side unknown at the restart (no ACK yet), responder-side once the ACK shows. */
	struct qp_tracker *t = tracker();
	req_ttl(t, 1000, 20, 62);
	req_ttl(t, 1001000, 20, 62);
	flows(t, &r, &b);
	assert_int_equal(r->timeouts, 1);
	ack_ttl(t, 1002000, 20, 64);
	flows(t, &r, &b);
	assert_int_equal(r->timeouts, 0);
	assert_int_equal(qp_tracker_totals(t)->timeouts, 0);
	qp_tracker_free(t);
}

/* A READ whose responses are lost after its first: re-issued once; responses of the next READ
 * showing the same gap ask for nothing more, so the resend after the timer is a timeout. */
static void test_read_gap_once(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;
	struct roce_pkt p;

	for (uint32_t i = 0; i < 2; i++) {	/* READs at 100 (4 PSNs) and 104 (4 PSNs), MTU 1024 */
		p = pkt(1000 + i * 10, HOST_A, HOST_B, QPN_B, RC(ROCE_OP_READ_REQUEST), 100 + i * 4);
		p.headers |= ROCE_H_RETH;
		p.reth_dma_len = 4096;
		p.payload_len = 0;
		assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	}
	p = pkt(5000, HOST_B, HOST_A, QPN_A, RC(ROCE_OP_READ_RESP_FIRST), 100);
	p.headers |= ROCE_H_AETH;
	p.payload_len = 1024;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	resp(t, 5100, ROCE_OP_READ_RESP_LAST, 103);	/* 101, 102 lost: a gap */
	p = pkt(6000, HOST_A, HOST_B, QPN_B, RC(ROCE_OP_READ_REQUEST), 101);	/* re-issue */
	p.headers |= ROCE_H_RETH;
	p.reth_dma_len = 3072;
	p.payload_len = 0;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	resp(t, 6100, ROCE_OP_READ_RESP_FIRST, 104);	/* the next READ's: the same gap at 101 */
	resp(t, 6200, ROCE_OP_READ_RESP_LAST, 107);
	p = pkt(1006000, HOST_A, HOST_B, QPN_B, RC(ROCE_OP_READ_REQUEST), 101);	/* the timer */
	p.headers |= ROCE_H_RETH;
	p.reth_dma_len = 3072;
	p.payload_len = 0;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	flows(t, &r, &b);
	assert_int_equal(r->retransmitted_packets, 2);
	assert_int_equal(ev.retx[0].cause, QP_RETX_READ_GAP);
	assert_int_equal(ev.retx[1].cause, QP_RETX_TIMEOUT);
	assert_int_equal(r->timeouts, 1);
	/* One loss event per gap: the next READ's responses showing it again add none, and
	 * the timer's resend is a timeout, not a second re-read (localize's loss count). */
	assert_int_equal(r->read_gaps, 1);
	qp_tracker_free(t);
}

static void test_rnr(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;

	req(t, 1000, ROCE_OP_SEND_ONLY, 7);
	aeth(t, 2000, SYN_RNR(14), 7); /* 1.28 ms */
	req(t, 1282000, ROCE_OP_SEND_ONLY, 7);
	aeth(t, 1283000, SYN_ACK, 7);
	flows(t, &r, &b);
	assert_int_equal(r->rnr_naks, 1);
	assert_int_equal(r->rnr_wait_ns, 1280000);
	assert_int_equal(rnr_timer_ns(SYN_RNR(0)), 655360000ull);
	assert_int_equal(rnr_timer_ns(SYN_RNR(1)), 10000ull);
	assert_int_equal(r->naks_psn_seq, 0);
	assert_int_equal(r->retransmitted_packets, 1);
	assert_int_equal(ev.retx[0].cause, QP_RETX_RNR);
	assert_int_equal(ev.naks[0].rnr_timer_ns, 1280000);
	assert_int_equal(r->ack_samples, 0);
	assert_int_equal(sample(QP_SAMPLE_NAK_TO_RETX, 0)->latency_ns, 1280000);
	qp_tracker_free(t);
}

static void test_read_responses(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;

	req(t, 1000, ROCE_OP_READ_REQUEST, 50); /* three MTUs: responses 50..52 */
	req(t, 1100, ROCE_OP_WRITE_ONLY, 53);
	resp(t, 3000, ROCE_OP_READ_RESP_FIRST, 50);
	resp(t, 3100, ROCE_OP_READ_RESP_MIDDLE, 51);
	resp(t, 3200, ROCE_OP_READ_RESP_LAST, 52);
	aeth(t, 4000, SYN_ACK, 53);
	flows(t, &r, &b);
	assert_int_equal(r->peer_id, b->id);
	assert_int_equal(count_samples(QP_SAMPLE_READ_FIRST), 1);
	assert_int_equal(sample(QP_SAMPLE_READ_FIRST, 0)->latency_ns, 2000);
	assert_int_equal(sample(QP_SAMPLE_READ_LAST, 0)->latency_ns, 2200);
	assert_int_equal(r->read_samples, 1);
	assert_true(r->read_latency_p50_us == 2.2);
	assert_int_equal(r->ack_samples, 1);
	assert_int_equal(sample(QP_SAMPLE_ACK, 0)->latency_ns, 2900);
	/* the READ completes at its last response, the WRITE at its ACK */
	assert_int_equal(r->completion_samples, 2);
	assert_int_equal(sample(QP_SAMPLE_COMPLETION, 0)->latency_ns, 2200);
	assert_int_equal(r->retransmitted_packets, 0);
	assert_int_equal(r->out_of_order, 0);
	qp_tracker_free(t);
}

static void req_len(struct qp_tracker *t, uint64_t ts, uint8_t op, uint32_t psn, uint32_t payload, uint32_t dma_len)
{
	struct roce_pkt p = pkt(ts, HOST_A, HOST_B, QPN_B, RC(op), psn);
	p.payload_len = payload;
	p.reth_dma_len = dma_len;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
}

static void test_read_reissue(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;

	req_len(t, 1000, ROCE_OP_WRITE_FIRST, 100, 1024, 2048); /* learns the 1024-byte MTU */
	req_len(t, 1010, ROCE_OP_WRITE_LAST, 101, 1024, 0);
	aeth(t, 2000, SYN_ACK, 101);
	req_len(t, 3000, ROCE_OP_READ_REQUEST, 102, 0, 4096); /* PSNs 102..105 */
	resp(t, 4000, ROCE_OP_READ_RESP_FIRST, 102);
	resp(t, 4100, ROCE_OP_READ_RESP_MIDDLE, 103);
	resp(t, 4300, ROCE_OP_READ_RESP_LAST, 105); /* 104 never arrived */
	req_len(t, 4400, ROCE_OP_READ_REQUEST, 104, 0, 2048); /* re-issued for the rest */
	resp(t, 5000, ROCE_OP_READ_RESP_FIRST, 104);
	resp(t, 5100, ROCE_OP_READ_RESP_LAST, 105);
	flows(t, &r, &b);
	assert_int_equal(r->retransmitted_packets, 1);
	assert_int_equal(ev.retx[0].cause, QP_RETX_READ_GAP);
	assert_int_equal(r->timeouts, 0);
	assert_int_equal(r->read_samples, 0); /* Karn: the READ was re-issued */
	assert_int_equal(count_samples(QP_SAMPLE_READ_FIRST), 1);
	/* the READ message completes at its last response, timed from the first request */
	assert_int_equal(sample(QP_SAMPLE_COMPLETION, 1)->latency_ns, 5100 - 3000);
	/* tail loss: the last response never comes, the timer re-issues from it */
	req_len(t, 6000, ROCE_OP_READ_REQUEST, 106, 0, 2048); /* 106..107 */
	resp(t, 7000, ROCE_OP_READ_RESP_FIRST, 106);
	req_len(t, 900000, ROCE_OP_READ_REQUEST, 107, 0, 1024);
	resp(t, 901000, ROCE_OP_READ_RESP_ONLY, 107);
	req_len(t, 902000, ROCE_OP_WRITE_ONLY, 108, 10, 10);
	aeth(t, 903000, SYN_ACK, 108);
	flows(t, &r, &b);
	assert_int_equal(r->retransmitted_packets, 2);
	assert_int_equal(ev.retx[1].cause, QP_RETX_TIMEOUT);
	assert_int_equal(r->timeouts, 1);
	assert_int_equal(r->ack_samples, 2);
	assert_int_equal(sample(QP_SAMPLE_ACK, 1)->latency_ns, 1000);
	assert_int_equal(r->out_of_order, 0);
	qp_tracker_free(t);
}

static void test_atomics(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;

	req(t, 1000, ROCE_OP_FETCH_ADD, 7);
	req(t, 1050, ROCE_OP_CMP_SWAP, 8);
	resp(t, 2500, ROCE_OP_ATOMIC_ACK, 7);
	resp(t, 2600, ROCE_OP_ATOMIC_ACK, 8);
	flows(t, &r, &b);
	assert_int_equal(count_samples(QP_SAMPLE_ATOMIC), 2);
	assert_int_equal(sample(QP_SAMPLE_ATOMIC, 0)->latency_ns, 1500);
	assert_int_equal(sample(QP_SAMPLE_ATOMIC, 1)->latency_ns, 1550);
	assert_int_equal(r->atomic_samples, 2);
	assert_true(r->atomic_latency_p99_us == 1.55);
	/* an ATOMIC ACKNOWLEDGE is an ACK too (agentxdp-synth's ground truth counts it) */
	assert_int_equal(r->ack_samples, 2);
	qp_tracker_free(t);
}

static void test_psn_wrap(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;

	req(t, 1000, ROCE_OP_WRITE_ONLY, 0xfffffe);
	req(t, 1100, ROCE_OP_WRITE_ONLY, 0xffffff);
	req(t, 1200, ROCE_OP_WRITE_ONLY, 0);
	req(t, 1300, ROCE_OP_WRITE_ONLY, 1);
	aeth(t, 2000, SYN_ACK, 0xffffff);
	aeth(t, 2500, SYN_ACK, 1);
	aeth(t, 2600, SYN_ACK, 0); /* stale: already covered, but the first ACK naming 0 */
	aeth(t, 3700, SYN_ACK, 0); /* not the first naming 0: no sample */
	flows(t, &r, &b);
	assert_int_equal(r->retransmitted_packets, 0);
	assert_int_equal(r->ack_samples, 3);
	assert_int_equal(r->completion_samples, 4);
	assert_int_equal(r->dup_acks, 2);
	assert_int_equal(r->peer_id, b->id);
	assert_int_equal(sample(QP_SAMPLE_ACK, 1)->latency_ns, 1200);
	/* a retransmission across the wrap is still one */
	req(t, 3000, ROCE_OP_WRITE_ONLY, 2);
	req(t, 3100, ROCE_OP_WRITE_ONLY, 3);
	aeth(t, 3200, SYN_NAK_SEQ, 2);
	req(t, 3300, ROCE_OP_WRITE_ONLY, 2);
	flows(t, &r, &b);
	assert_int_equal(r->retransmitted_packets, 1);
	assert_int_equal(r->naks_psn_seq, 1);
	qp_tracker_free(t);
}

static void test_mirror_duplicates(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;

	req(t, 1000, ROCE_OP_WRITE_ONLY, 5);
	req(t, 1100, ROCE_OP_WRITE_ONLY, 5); /* the mirror's copy */
	aeth(t, 3000, SYN_ACK, 5);
	aeth(t, 3050, SYN_ACK, 5);
	flows(t, &r, &b);
	assert_int_equal(r->packets, 2); /* frames are counted as captured */
	assert_int_equal(b->packets, 2);
	assert_int_equal(r->retransmitted_packets, 0);
	assert_int_equal(r->dup_acks, 0);
	assert_int_equal(r->ack_samples, 1);
	assert_int_equal(qp_tracker_totals(t)->duplicates, 2);
	/* the same PSN much later, after silence: a real (timeout) retransmission */
	req(t, 5000, ROCE_OP_WRITE_ONLY, 6);
	req(t, 900000, ROCE_OP_WRITE_ONLY, 6);
	flows(t, &r, &b);
	assert_int_equal(r->retransmitted_packets, 1);
	assert_int_equal(r->timeouts, 1);
	qp_tracker_free(t);
}

static void test_timestamps_backwards(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;

	req(t, 5000, ROCE_OP_WRITE_ONLY, 1);
	req(t, 5100, ROCE_OP_WRITE_ONLY, 2);
	aeth(t, 4000, SYN_ACK, 1); /* another vantage's clock: earlier than the request */
	aeth(t, 6000, SYN_ACK, 2);
	flows(t, &r, &b);
	assert_int_equal(r->ack_samples, 1);
	assert_int_equal(sample(QP_SAMPLE_ACK, 0)->latency_ns, 900);
	assert_int_equal(qp_tracker_totals(t)->ts_backwards, 1);
	assert_int_equal(r->first_ns, 5000);
	assert_int_equal(b->first_ns, 4000);
	assert_int_equal(b->last_ns, 6000);
	qp_tracker_free(t);
}

static void test_cnp_attribution(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *r, *b;
	struct roce_pkt p;

	/* Two QPs from A to B with the same UDP port: a CNP to A cannot say which one it slows. */
	req(t, 1000, ROCE_OP_WRITE_ONLY, 1);
	p = pkt(1100, HOST_A, HOST_B, 0x999, RC(ROCE_OP_WRITE_ONLY), 4000);
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	p = pkt(1500, HOST_B, HOST_A, QPN_A, ROCE_OPCODE_CNP, 0);
	p.transport = ROCE_TR_CNP;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	/* CE-marked request: counted on the flow that carried it */
	p = pkt(1800, HOST_A, HOST_B, QPN_B, RC(ROCE_OP_WRITE_ONLY), 2);
	p.ecn = 3;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	flows(t, &r, &b);
	assert_non_null(b);
	assert_int_equal(r->ecn_ce, 1);
	assert_int_equal(b->ecn_ce, 0);
	assert_int_equal(ev.cnps[0].flow_id, 0);
	assert_int_equal(r->cnps, 0);
	assert_int_equal(b->cnps, 1); /* held on its carrier until pairing says better */
	assert_int_equal(b->transport, ROCE_TR_CNP);
	assert_int_equal(qp_tracker_totals(t)->cnps_unattributed, 1);
	/* the ACK pairs B->A with A->B by PSN: the CNP moves to the requester */
	aeth(t, 2000, SYN_ACK, 2);
	flows(t, &r, &b);
	assert_int_equal(r->peer_id, b->id);
	assert_int_equal(r->cnps, 1);
	assert_int_equal(b->cnps, 0);
	assert_int_equal(b->packets, 2);
	assert_int_equal(b->transport, ROCE_TR_RC);
	assert_int_equal(b->role, FLOW_ROLE_RESPONDER);
	assert_int_equal(qp_tracker_totals(t)->cnps_unattributed, 0);
	/* after pairing, straight to the requester */
	p = pkt(2100, HOST_B, HOST_A, QPN_A, ROCE_OPCODE_CNP, 0);
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	flows(t, &r, &b);
	assert_int_equal(r->cnps, 2);
	assert_int_equal(ev.cnps[1].flow_id, r->id);
	/* a different UDP source port tells the QPs apart: C's CNP goes to its own flow */
	p = pkt(3000, 3, HOST_B, 0x77, RC(ROCE_OP_WRITE_ONLY), 10);
	p.udp_sport = 50000;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	p = pkt(3000, 3, HOST_B, 0x78, RC(ROCE_OP_WRITE_ONLY), 20);
	p.udp_sport = 50001;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	p = pkt(3100, HOST_B, 3, 0x1234, ROCE_OPCODE_CNP, 0);
	p.udp_sport = 50001;
	assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	{
		const struct flow_stats *st;
		long n = qp_tracker_snapshot(t, &st);
		int found = 0;

		for (long i = 0; i < n; i++)
			if (st[i].key.dst_qpn == 0x78) {
				assert_int_equal(st[i].cnps, 1);
				assert_int_equal(ev.cnps[2].flow_id, st[i].id);
				found = 1;
			} else if (st[i].key.dst_qpn == 0x77) {
				assert_int_equal(st[i].cnps, 0);
			}
		assert_true(found);
	}
	qp_tracker_free(t);
}

static void test_pairing_by_psn_and_cm(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *st;
	struct roce_pkt p;
	long n;

	/* Two QPs from A to B with different PSN spaces; ACKs to two QPNs on A. */
	for (uint32_t i = 0; i < 4; i++) {
		p = pkt(1000 + i, HOST_A, HOST_B, 0x11, RC(ROCE_OP_WRITE_ONLY), 1000 + i);
		qp_tracker_add(t, &p, 0);
		p = pkt(1000 + i, HOST_A, HOST_B, 0x22, RC(ROCE_OP_WRITE_ONLY), 900000 + i);
		qp_tracker_add(t, &p, 0);
	}
	p = pkt(2000, HOST_B, HOST_A, 0xaa, RC(ROCE_OP_ACK), 900003);
	p.headers |= ROCE_H_AETH;
	qp_tracker_add(t, &p, 0);
	p = pkt(2001, HOST_B, HOST_A, 0xbb, RC(ROCE_OP_ACK), 1003);
	p.headers |= ROCE_H_AETH;
	qp_tracker_add(t, &p, 0);
	/* CM: host 3 REQ (QPN 0x33, PSN 77) -> host 4, REP (QPN 0x44) */
	p = pkt(3000, 3, 4, 1, ROCE_OPCODE(ROCE_TR_UD, ROCE_OP_SEND_ONLY), 0);
	p.flags |= ROCE_F_CM;
	p.headers |= ROCE_H_DETH | ROCE_H_MAD;
	p.deth_src_qp = 1;
	p.cm_attr_id = CM_ATTR_REQ;
	p.cm_local_comm_id = 0xabc;
	p.cm_local_qpn = 0x33;
	p.cm_start_psn = 77;
	qp_tracker_add(t, &p, 0);
	p = pkt(3100, 4, 3, 1, ROCE_OPCODE(ROCE_TR_UD, ROCE_OP_SEND_ONLY), 0);
	p.flags |= ROCE_F_CM;
	p.headers |= ROCE_H_DETH | ROCE_H_MAD;
	p.deth_src_qp = 1;
	p.cm_attr_id = CM_ATTR_REP;
	p.cm_local_comm_id = 0xdef;
	p.cm_remote_comm_id = 0xabc;
	p.cm_local_qpn = 0x44;
	p.cm_start_psn = 5000;
	qp_tracker_add(t, &p, 0);
	p = pkt(3200, 3, 4, 0x44, RC(ROCE_OP_SEND_ONLY), 77);
	qp_tracker_add(t, &p, 0);
	p = pkt(3300, 4, 3, 0x33, RC(ROCE_OP_SEND_ONLY), 5000);
	qp_tracker_add(t, &p, 0);

	n = qp_tracker_snapshot(t, &st);
	assert_int_equal(n, 8);
	/* ids follow first packets: 1=0x11, 2=0x22, 3=ack 0xaa, 4=ack 0xbb, 5,6=QP1, 7,8=CM'd */
	assert_int_equal(st[0].key.dst_qpn, 0x11);
	assert_int_equal(st[0].peer_id, 4);
	assert_int_equal(st[1].peer_id, 3);
	assert_int_equal(st[2].peer_id, 2);
	assert_int_equal(st[4].peer_id, 6); /* QP1 both ways, by DETH source QPN */
	assert_int_equal(st[6].key.dst_qpn, 0x44);
	assert_int_equal(st[6].peer_id, 8);
	assert_true(st[6].cm_confirmed);
	assert_int_equal(st[6].src_qpn, 0x33);
	assert_false(st[0].cm_confirmed);
	assert_int_equal(qp_tracker_totals(t)->paired_flows, 8);
	assert_int_equal(st[4].role, FLOW_ROLE_DATAGRAM);
	qp_tracker_free(t);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void test_percentiles_and_histogram(void **state)
{
	uint32_t v[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct qp_tracker_cfg cfg;
	struct qp_tracker *t;
	const struct flow_stats *r, *b;
	uint32_t *all;
	const uint32_t n = 20000;

	assert_int_equal(percentile_nearest_rank_u32(v, 10, 5000), 5);
	assert_int_equal(percentile_nearest_rank_u32(v, 10, 9900), 10);
	assert_int_equal(percentile_nearest_rank_u32(v, 1, 9900), 1);
	assert_int_equal(percentile_nearest_rank_u32(v, 3, 5000), 2);
	assert_int_equal(percentile_nearest_rank_u32(v, 0, 5000), 0);

	/* Past the exact cap, percentiles come from the histogram: within 1% of exact. */
	memset(&ev, 0, sizeof(ev));
	qp_tracker_cfg_default(&cfg);
	cfg.exact_samples = 64;
	t = qp_tracker_new(&cfg);
	all = malloc(n * sizeof(*all));
	for (uint32_t i = 0; i < n; i++) {
		uint64_t ts = 1000000ull * i;
		uint32_t lat = 2000 + (uint32_t)((i * 7919ull) % 50000); /* 2..52 us, scrambled */

		all[i] = lat;
		req(t, ts, ROCE_OP_WRITE_ONLY, i);
		aeth(t, ts + lat, SYN_ACK, i);
	}
	flows(t, &r, &b);
	assert_int_equal(r->ack_samples, n);
	/* exact nearest-rank of the same samples, sorted here independently */
	qsort(all, n, sizeof(*all), cmp_u32);
	{
		double want50 = all[(n * 50 + 99) / 100 - 1], want99 = all[(n * 99 + 99) / 100 - 1];

		assert_true(r->ack_latency_p50_us * 1000 > want50 * 0.99 && r->ack_latency_p50_us * 1000 < want50 * 1.01);
		assert_true(r->ack_latency_p99_us * 1000 > want99 * 0.99 && r->ack_latency_p99_us * 1000 < want99 * 1.01);
	}
	free(all);
	assert_int_equal(ev.n_windows > 0, 0); /* no sink in this tracker */
	qp_tracker_free(t);
}

static void test_windows_and_many_flows(void **state)
{
	struct qp_tracker *t = tracker();
	const struct flow_stats *st;
	struct roce_pkt p;
	long n;

	req(t, 100, ROCE_OP_WRITE_ONLY, 1);
	req(t, 1000000100ull, ROCE_OP_WRITE_ONLY, 2);
	req(t, 3000000100ull, ROCE_OP_WRITE_ONLY, 3);
	for (uint32_t q = 0; q < 50000; q++) {
		p = pkt(3000000200ull + q, HOST_A, 7, q, ROCE_OPCODE(ROCE_TR_UD, ROCE_OP_SEND_ONLY), q);
		assert_int_equal(qp_tracker_add(t, &p, 0), 0);
	}
	qp_tracker_finish(t);
	n = qp_tracker_snapshot(t, &st);
	assert_int_equal(n, 50001);
	assert_int_equal(st[0].n_windows, 3);
	assert_int_equal(st[0].windows[1].start_ns, 1000000000ull);
	assert_int_equal(st[0].windows[2].packets, 1);
	for (long i = 0; i < n; i++)
		assert_int_equal(st[i].id, (uint64_t)i + 1);
	assert_int_equal(st[50000].key.dst_qpn, 49999);
	assert_int_equal(st[50000].packets, 1);
	assert_int_equal(ev.n_windows, 3 + 50000);
	qp_tracker_free(t);
}

/*
 * qp_tracker_add_batch() against one qp_tracker_add() per packet: 300 RC queue pairs between
 * 20 hosts, interleaved, with lost requests (go-back-N resends) and ACKs every second packet,
 * fed in batches of every size from 1 to QP_BATCH_MAX: every flow's statistics are the same.
 */
static void test_batch_same_as_single(void **state)
{
	enum { QPS = 300, PKTS = 40000 };
	struct qp_tracker_cfg cfg;
	struct qp_tracker *one, *batch;
	struct roce_pkt *p = calloc(PKTS, sizeof(*p));
	uint32_t *vant = calloc(PKTS, sizeof(*vant)), next_psn[QPS] = { 0 }, unacked[QPS] = { 0 };
	const struct flow_stats *a, *b;
	uint64_t x = 88172645463325252ull, ts = 1000;
	long na, nb;
	size_t i = 0, k;

	assert_non_null(p);
	assert_non_null(vant);
	while (i < PKTS) {
		uint32_t q, src, dst;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		q = (uint32_t)(x % QPS);
		src = 1 + q % 20;
		dst = 1 + (q / 20 + src) % 20;
		if (dst == src)
			dst = 1 + dst % 20;
		ts += 100 + (x >> 40) % 500;
		if ((x >> 20) % 100 == 0)
			next_psn[q]++; /* this request is lost before the capture */
		p[i] = pkt(ts, (int)src, (int)dst, 0x1000 + q, RC(ROCE_OP_WRITE_ONLY), next_psn[q]++);
		vant[i] = (uint32_t)(x >> 50) % 2;
		i++;
		if (++unacked[q] == 2 && i < PKTS) {
			p[i] = pkt(ts + 50, (int)dst, (int)src, 0x8000 + q, RC(ROCE_OP_ACK), next_psn[q] - 1);
			p[i].headers |= ROCE_H_AETH;
			p[i].aeth_syndrome = SYN_ACK;
			vant[i] = vant[i - 1];
			unacked[q] = 0;
			i++;
		}
	}
	qp_tracker_cfg_default(&cfg);
	one = qp_tracker_new(&cfg);
	batch = qp_tracker_new(&cfg);
	assert_non_null(one);
	assert_non_null(batch);
	for (i = 0; i < PKTS; i++)
		assert_int_equal(qp_tracker_add(one, &p[i], vant[i]), 0);
	for (i = 0, k = 1; i < PKTS; i += k, k = k % QP_BATCH_MAX + 1)
		assert_int_equal(qp_tracker_add_batch(batch, &p[i], &vant[i], i + k <= PKTS ? k : PKTS - i), 0);
	assert_int_equal(qp_tracker_add_batch(batch, p, vant, QP_BATCH_MAX + 1), -EINVAL);
	qp_tracker_finish(one);
	qp_tracker_finish(batch);
	na = qp_tracker_snapshot(one, &a);
	nb = qp_tracker_snapshot(batch, &b);
	assert_true(na > 2 * QPS);
	assert_int_equal(na, nb);
	for (long f = 0; f < na; f++) {
		assert_memory_equal(&a[f].key, &b[f].key, sizeof(a[f].key));
		assert_int_equal(a[f].packets, b[f].packets);
		assert_int_equal(a[f].bytes, b[f].bytes);
		assert_int_equal(a[f].retransmitted_packets, b[f].retransmitted_packets);
		assert_int_equal(a[f].psn_gaps, b[f].psn_gaps);
		assert_int_equal(a[f].dup_acks, b[f].dup_acks);
		assert_int_equal(a[f].ack_samples, b[f].ack_samples);
		assert_true(a[f].ack_latency_p99_us == b[f].ack_latency_p99_us);
		assert_int_equal(a[f].n_windows, b[f].n_windows);
	}
	assert_memory_equal(qp_tracker_totals(one), qp_tracker_totals(batch), sizeof(struct qp_tracker_totals));
	qp_tracker_free(one);
	qp_tracker_free(batch);
	free(p);
	free(vant);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coalesced_ack),
		cmocka_unit_test(test_nak_go_back_n),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_rnr),
		cmocka_unit_test(test_read_responses),
		cmocka_unit_test(test_read_reissue),
		cmocka_unit_test(test_capture_side),
		cmocka_unit_test(test_read_gap_once),
		cmocka_unit_test(test_atomics),
		cmocka_unit_test(test_psn_wrap),
		cmocka_unit_test(test_mirror_duplicates),
		cmocka_unit_test(test_timestamps_backwards),
		cmocka_unit_test(test_cnp_attribution),
		cmocka_unit_test(test_pairing_by_psn_and_cm),
		cmocka_unit_test(test_percentiles_and_histogram),
		cmocka_unit_test(test_windows_and_many_flows),
		cmocka_unit_test(test_batch_same_as_single),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
