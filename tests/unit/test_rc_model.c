/* test_rc_model.c: the RC requester/responder state machines over a two-QP wire with chosen drops. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/decode/psn.h"
#include "lib/model/rc_model.h"
#include "lib/model/roce_frame.h"

/* A wire between QP a and QP b: fixed one-way delay, one packet per side per step. */
#define STEP_NS 100
#define DELAY_NS 1000
#define MAX_LOG 4096

struct wire_pkt {
	uint64_t arrive_ns;
	int to;			/* 0 = a, 1 = b */
	struct roce_pkt pkt;
	struct rc_tx_info info;
};

struct harness {
	struct rc_qp qp[2];
	struct wire_pkt inflight[256];
	int n_inflight;
	/* every packet put on the wire, by the side that sent it */
	struct wire_pkt log[MAX_LOG];
	int n_log;
	uint64_t now;
	/* drop rule: drop the nth (0-based) transmission from `drop_from` matching opcode/psn */
	int drop_from;
	int drop_opcode;	/* -1 any */
	uint32_t drop_psn;
	int drop_times;		/* how many matching packets to drop */
	bool drop_all_from_a;
	bool mark_ce_to_b;
};

static struct harness *h;

static int setup(void **state)
{
	h = calloc(1, sizeof(*h));
	h->drop_from = -1;
	h->drop_opcode = -1;
	return h ? 0 : -1;
}

static int teardown(void **state)
{
	free(h);
	return 0;
}

static void config(struct rc_qp_config *c, int side, enum rc_service svc, uint32_t sq_psn,
		   uint32_t rq_psn)
{
	rc_qp_config_default(c);
	c->service = svc;
	c->local_qpn = side == 0 ? 0x100 : 0x200;
	c->remote_qpn = side == 0 ? 0x200 : 0x100;
	c->sq_psn = sq_psn;
	c->rq_psn = rq_psn;
	c->ack_timeout_ns = 100000;
}

static void start(enum rc_service svc, uint32_t a_psn, uint32_t b_psn)
{
	struct rc_qp_config ca, cb;
	config(&ca, 0, svc, a_psn, b_psn);
	config(&cb, 1, svc, b_psn, a_psn);
	assert_int_equal(rc_qp_init(&h->qp[0], &ca), 0);
	assert_int_equal(rc_qp_init(&h->qp[1], &cb), 0);
}

static bool should_drop(int from, const struct roce_pkt *p)
{
	if (from == 0 && h->drop_all_from_a)
		return true;
	if (h->drop_times <= 0 || from != h->drop_from)
		return false;
	if (h->drop_opcode >= 0 && p->opcode != h->drop_opcode)
		return false;
	if (p->psn != h->drop_psn)
		return false;
	h->drop_times--;
	return true;
}

/* Run until both sides are idle or `until_ns`. */
static void run(uint64_t until_ns)
{
	for (; h->now < until_ns; h->now += STEP_NS) {
		for (int i = 0; i < h->n_inflight;) {
			struct wire_pkt *w = &h->inflight[i];
			if (w->arrive_ns <= h->now) {
				assert_int_equal(rc_receive(&h->qp[w->to], h->now, &w->pkt), 0);
				h->inflight[i] = h->inflight[--h->n_inflight];
			} else {
				i++;
			}
		}
		for (int side = 0; side < 2; side++) {
			struct wire_pkt w = {0};
			if (rc_next_packet(&h->qp[side], h->now, &w.pkt, &w.info) != 1)
				continue;
			/* Round-trip through bytes: what the model emits must parse back the same. */
			uint8_t buf[ROCE_FRAME_MAX];
			struct roce_pkt back;
			size_t n = roce_frame_build_transport(buf, sizeof(buf), &w.pkt, NULL);
			assert_true(n >= 16);
			assert_int_equal(roce_frame_parse_transport(buf, n, &back), 0);
			assert_int_equal(back.psn, w.pkt.psn);
			assert_int_equal(back.opcode, w.pkt.opcode);
			assert_int_equal(back.payload_len, w.pkt.payload_len);
			assert_int_equal(back.aeth_syndrome, w.pkt.aeth_syndrome);
			assert_int_equal(back.flags & ROCE_F_ACK_REQ, w.pkt.flags & ROCE_F_ACK_REQ);
			if (h->n_log < MAX_LOG) {
				w.to = side;	/* in the log: the sender */
				w.arrive_ns = h->now;
				h->log[h->n_log++] = w;
			}
			if (should_drop(side, &w.pkt))
				continue;
			assert_true(h->n_inflight < 256);
			back.ecn = side == 0 && h->mark_ce_to_b ? 3 : 2;
			h->inflight[h->n_inflight++] = (struct wire_pkt){
				.arrive_ns = h->now + DELAY_NS, .to = 1 - side, .pkt = back};
		}
		if (h->n_inflight == 0 && rc_next_event_ns(&h->qp[0]) == UINT64_MAX &&
		    rc_next_event_ns(&h->qp[1]) == UINT64_MAX)
			break;
	}
}

static void post(int side, enum rc_wr_opcode op, uint32_t len, uint64_t wr_id)
{
	struct rc_wr wr = {.wr_id = wr_id, .opcode = op, .length_bytes = len,
			   .remote_va = 0x10000, .rkey = 0x77, .imm_data = 0xabcd,
			   .compare_add = 5};
	assert_int_equal(rc_post_send(&h->qp[side], h->now, &wr), 0);
}

static int count_log(int from, int opcode, int kind)
{
	int n = 0;
	for (int i = 0; i < h->n_log; i++)
		if (h->log[i].to == from && (opcode < 0 || h->log[i].pkt.opcode == opcode) &&
		    (kind < 0 || (int)h->log[i].info.kind == kind))
			n++;
	return n;
}

static void expect_completion(int side, uint64_t wr_id, enum rc_wc_status st)
{
	struct rc_completion wc;
	while (rc_poll_completion(&h->qp[side], &wc) == 1) {
		if (!wc.is_recv && wc.wr_id == wr_id) {
			assert_int_equal(wc.status, st);
			return;
		}
	}
	fail_msg("no completion for wr_id %llu", (unsigned long long)wr_id);
}

#define RC_ACK ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_ACK)

static void test_write_clean_and_opcodes(void **state)
{
	start(RC_SVC_RC, 1000, 5000);
	post(0, RC_WR_WRITE, 3 * 1024 + 100, 1);
	run(1000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	assert_int_equal(h->n_log, 5);	/* 4 request packets, 1 ACK (AckReq only on the last) */
	assert_int_equal(h->log[0].pkt.opcode, ROCE_OPCODE(0, ROCE_OP_WRITE_FIRST));
	assert_int_equal(h->log[0].pkt.reth_dma_len, 3 * 1024 + 100);
	assert_int_equal(h->log[1].pkt.opcode, ROCE_OPCODE(0, ROCE_OP_WRITE_MIDDLE));
	assert_int_equal(h->log[3].pkt.opcode, ROCE_OPCODE(0, ROCE_OP_WRITE_LAST));
	assert_int_equal(h->log[3].pkt.payload_len, 100);
	assert_true(h->log[3].pkt.flags & ROCE_F_ACK_REQ);
	assert_int_equal(h->log[4].pkt.opcode, RC_ACK);
	assert_int_equal(h->log[4].pkt.psn, 1003);
	assert_int_equal(h->log[4].pkt.aeth_msn, 1);
	assert_int_equal(h->qp[1].epsn, 1004);
	assert_int_equal(rc_qp_get_stats(&h->qp[0])->retransmitted_packets, 0);
}

static void test_ack_coalescing(void **state)
{
	start(RC_SVC_RC, 10, 20);
	/* 40 packets: AckReq every 16 and on the last. Without delay: 3 ACKs (16, 32, 40). */
	post(0, RC_WR_WRITE, 40 * 1024, 1);
	run(1000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	assert_int_equal(count_log(1, RC_ACK, -1), 3);

	/* A slow responder holds its ACKs: a newer ACK replaces the queued one. */
	memset(h, 0, sizeof(*h));
	h->drop_from = -1;
	start(RC_SVC_RC, 10, 20);
	rc_set_responder_delay(&h->qp[1], 20000);
	post(0, RC_WR_WRITE, 40 * 1024, 1);
	run(1000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	assert_int_equal(count_log(1, RC_ACK, -1), 1);
	int i = h->n_log - 1;
	assert_int_equal(h->log[i].pkt.psn, 49);
}

static void test_go_back_n_after_nak(void **state)
{
	start(RC_SVC_RC, 100, 200);
	h->drop_from = 0;
	h->drop_psn = 103;
	h->drop_times = 1;
	post(0, RC_WR_WRITE, 8 * 1024, 1);
	run(1000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	const struct rc_qp_stats *a = rc_qp_get_stats(&h->qp[0]);
	const struct rc_qp_stats *b = rc_qp_get_stats(&h->qp[1]);
	assert_int_equal(b->naks_seq_sent, 1);	/* one NAK per sequence error */
	assert_int_equal(a->naks_seq_received, 1);
	assert_int_equal(a->timeouts, 0);
	/* Go-back-N: 103..107 were all sent twice. */
	assert_int_equal(a->retransmitted_packets, 5);
	int nak_at = -1;
	for (int i = 0; i < h->n_log; i++)
		if (h->log[i].to == 1 && h->log[i].pkt.aeth_syndrome == 0x60)
			nak_at = i;
	assert_true(nak_at > 0);
	assert_int_equal(h->log[nak_at].pkt.psn, 103);
	/* The first request after the NAK is PSN 103, a retransmission. */
	for (int i = nak_at + 1; i < h->n_log; i++) {
		if (h->log[i].to == 0) {
			assert_int_equal(h->log[i].pkt.psn, 103);
			assert_int_equal(h->log[i].info.kind, RC_TX_RETRANSMISSION);
			break;
		}
	}
	assert_int_equal(h->qp[1].epsn, 108);
}

static void test_timeout_retry(void **state)
{
	start(RC_SVC_RC, 7, 9);
	h->drop_from = 0;
	h->drop_psn = 10;	/* the last packet: nothing after it to reveal the gap */
	h->drop_times = 2;
	post(0, RC_WR_WRITE, 4 * 1024, 1);
	run(2000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	const struct rc_qp_stats *a = rc_qp_get_stats(&h->qp[0]);
	assert_int_equal(a->timeouts, 2);
	/* No ACK came for 7..9 either (AckReq rides on the last packet): each timeout resends 4. */
	assert_int_equal(a->retransmitted_packets, 8);
	assert_int_equal(a->naks_seq_received, 0);
	/* Each retransmission waited a whole timeout after the previous send. */
	uint64_t prev = 0;
	int seen = 0;
	for (int i = 0; i < h->n_log; i++) {
		if (h->log[i].to == 0 && h->log[i].pkt.psn == 10) {
			if (seen++)
				assert_true(h->log[i].arrive_ns - prev >= 100000);
			prev = h->log[i].arrive_ns;
		}
	}
	assert_int_equal(seen, 3);
}

static void test_retry_exceeded(void **state)
{
	start(RC_SVC_RC, 7, 9);
	h->drop_all_from_a = true;
	post(0, RC_WR_WRITE, 1024, 1);
	post(0, RC_WR_WRITE, 1024, 2);
	run(5000000);
	expect_completion(0, 1, RC_WC_RETRY_EXCEEDED);
	expect_completion(0, 2, RC_WC_FLUSHED);
	const struct rc_qp_stats *a = rc_qp_get_stats(&h->qp[0]);
	assert_true(a->retry_exceeded);
	assert_int_equal(a->timeouts, 8);	/* retry_cnt 7: 7 retries, the 8th expiry fails */
	assert_int_equal(rc_post_send(&h->qp[0], h->now, &(struct rc_wr){.opcode = RC_WR_WRITE}),
			 -EIO);
}

static void test_rnr(void **state)
{
	start(RC_SVC_RC, 50, 60);
	rc_set_unlimited_recvs(&h->qp[1], false);
	h->qp[1].cfg.min_rnr_timer = 1;	/* 10 us */
	post(0, RC_WR_SEND, 2000, 1);
	run(30000);	/* the SEND meets an empty receive queue */
	const struct rc_qp_stats *a = rc_qp_get_stats(&h->qp[0]);
	assert_true(a->rnr_naks_received >= 1);
	assert_int_equal(rc_qp_get_stats(&h->qp[1])->rnr_naks_sent, a->rnr_naks_received);
	rc_post_recv(&h->qp[1], 1);
	run(1000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	struct rc_completion wc;
	assert_int_equal(rc_poll_completion(&h->qp[1], &wc), 1);
	assert_true(wc.is_recv);
	assert_int_equal(wc.length_bytes, 2000 - 1024);	/* payload of the last packet */
	/* RNR NAK names the SEND's first PSN; the resend waits the 10 us timer. */
	int rnr_at = -1;
	for (int i = 0; i < h->n_log; i++)
		if (h->log[i].to == 1 && AETH_TYPE(h->log[i].pkt.aeth_syndrome) == AETH_RNR_NAK) {
			rnr_at = i;
			assert_int_equal(h->log[i].pkt.psn, 50);
			assert_int_equal(h->log[i].pkt.aeth_syndrome, 0x21);
			break;
		}
	assert_true(rnr_at >= 0);
	for (int i = rnr_at + 1; i < h->n_log; i++)
		if (h->log[i].to == 0) {
			assert_int_equal(h->log[i].pkt.psn, 50);
			assert_true(h->log[i].arrive_ns >= h->log[rnr_at].arrive_ns + DELAY_NS + 10000);
			break;
		}
}

static void test_psn_wrap(void **state)
{
	uint32_t start_psn = 0xfffffa;
	start(RC_SVC_RC, start_psn, 0xfffff0);
	h->drop_from = 0;
	h->drop_psn = 1;	/* after the wrap */
	h->drop_times = 1;
	post(0, RC_WR_WRITE, 16 * 1024, 1);
	run(1000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	assert_int_equal(h->qp[1].epsn, psn_add(start_psn, 16));
	assert_int_equal(h->qp[0].una_psn, psn_add(start_psn, 16));
	const struct rc_qp_stats *a = rc_qp_get_stats(&h->qp[0]);
	assert_int_equal(a->naks_seq_received, 1);
	/* Go-back-N from PSN 1 to the end (PSN 9): 9 packets. */
	assert_int_equal(a->retransmitted_packets, 9);
	for (int i = 0; i < h->n_log; i++)
		assert_true(h->log[i].pkt.psn <= PSN_MASK);
}

static void test_read_gap_reissue(void **state)
{
	start(RC_SVC_RC, 300, 400);
	h->drop_from = 1;
	h->drop_psn = 302;
	h->drop_times = 1;
	post(0, RC_WR_READ, 8 * 1024, 1);
	run(1000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	int reads = 0;
	for (int i = 0; i < h->n_log; i++) {
		if (h->log[i].to == 0 &&
		    h->log[i].pkt.opcode == ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_READ_REQUEST)) {
			if (reads++ == 1) {
				assert_int_equal(h->log[i].pkt.psn, 302);
				assert_int_equal(h->log[i].pkt.reth_va, 0x10000 + 2 * 1024);
				assert_int_equal(h->log[i].pkt.reth_dma_len, 6 * 1024);
				assert_int_equal(h->log[i].info.kind, RC_TX_RETRANSMISSION);
			}
		}
	}
	assert_int_equal(reads, 2);
	assert_int_equal(h->qp[1].epsn, 308);
}

static void test_atomic_replay(void **state)
{
	start(RC_SVC_RC, 1, 2);
	h->drop_from = 1;
	h->drop_opcode = ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_ATOMIC_ACK);
	h->drop_psn = 1;
	h->drop_times = 1;
	h->qp[1].atomic_value = 40;
	post(0, RC_WR_FETCH_ADD, 8, 1);
	run(1000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	assert_int_equal(h->qp[1].atomic_value, 45);	/* executed once */
	assert_int_equal(rc_qp_get_stats(&h->qp[0])->timeouts, 1);
	int acks = 0;
	for (int i = 0; i < h->n_log; i++)
		if (h->log[i].to == 1 && h->log[i].pkt.opcode == ROCE_OPCODE(0, ROCE_OP_ATOMIC_ACK)) {
			assert_int_equal(h->log[i].pkt.atomic_orig, 40);	/* the saved result */
			acks++;
		}
	assert_int_equal(acks, 2);
}

/* A lost response of the first of three READs: every later response shows the same gap, yet
 * the requester re-issues once (no storm), and a NAK does not stand in for READ responses. */
static void test_read_gap_reissue_once(void **state)
{
	start(RC_SVC_RC, 300, 400);
	h->drop_from = 1;
	h->drop_psn = 302;	/* a MIDDLE response of the first READ (300..307) */
	h->drop_times = 1;
	post(0, RC_WR_READ, 8 * 1024, 1);
	post(0, RC_WR_READ, 8 * 1024, 2);
	post(0, RC_WR_READ, 8 * 1024, 3);
	run(1000000);
	expect_completion(0, 3, RC_WC_SUCCESS);
	const struct rc_qp_stats *a = rc_qp_get_stats(&h->qp[0]);
	/* The re-issue of 302.. plus go-back-N of the two READs after it: 3 requests, once. */
	assert_int_equal(a->retransmitted_packets, 3);
	assert_int_equal(a->timeouts, 0);
	assert_int_equal(count_log(0, ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_READ_REQUEST), -1), 6);
}

/* Three atomics in flight, the first one's ACK lost: the later ACKs send the requester back,
 * the responder answers each duplicate from its saved results, nothing runs twice. */
static void test_atomic_replay_history(void **state)
{
	start(RC_SVC_RC, 1, 2);
	h->drop_from = 1;
	h->drop_opcode = ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_ATOMIC_ACK);
	h->drop_psn = 1;
	h->drop_times = 1;
	h->qp[1].atomic_value = 100;
	post(0, RC_WR_FETCH_ADD, 8, 1);	/* compare_add 5 each */
	post(0, RC_WR_FETCH_ADD, 8, 2);
	post(0, RC_WR_FETCH_ADD, 8, 3);
	run(1000000);
	expect_completion(0, 3, RC_WC_SUCCESS);
	assert_int_equal(h->qp[1].atomic_value, 115);	/* each executed once */
	const struct rc_qp_stats *a = rc_qp_get_stats(&h->qp[0]);
	assert_false(a->retry_exceeded);
	assert_int_equal(a->timeouts, 0);
	assert_int_equal(a->completions, 3);
	uint64_t orig_of_psn1 = 0;
	int acks_psn1 = 0;
	for (int i = 0; i < h->n_log; i++)
		if (h->log[i].to == 1 && h->log[i].pkt.opcode == ROCE_OPCODE(0, ROCE_OP_ATOMIC_ACK) &&
		    h->log[i].pkt.psn == 1) {
			orig_of_psn1 = h->log[i].pkt.atomic_orig;
			acks_psn1++;
		}
	assert_int_equal(acks_psn1, 2);	/* the lost one and the replay */
	assert_int_equal(orig_of_psn1, 100);
}

/* A timeout's retransmission is marked (the synthesizer's ground truth counts it there). */
static void test_timeout_marks_retransmission(void **state)
{
	start(RC_SVC_RC, 7, 9);
	h->drop_from = 0;
	h->drop_psn = 10;
	h->drop_times = 1;
	post(0, RC_WR_WRITE, 4 * 1024, 1);
	run(2000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	int marked = 0, first_retx = -1;
	for (int i = 0; i < h->n_log; i++) {
		if (h->log[i].info.after_timeout) {
			marked++;
			assert_int_equal(h->log[i].info.kind, RC_TX_RETRANSMISSION);
			assert_int_equal(h->log[i].pkt.psn, 7);	/* back to the oldest unacknowledged */
		}
		if (first_retx < 0 && h->log[i].info.kind == RC_TX_RETRANSMISSION)
			first_retx = i;
	}
	assert_int_equal(marked, 1);
	assert_true(h->log[first_retx].info.after_timeout);
	/* After a NAK, no mark. */
	memset(h, 0, sizeof(*h));
	h->drop_from = 0;
	h->drop_psn = 103;
	h->drop_times = 1;
	h->drop_opcode = -1;
	start(RC_SVC_RC, 100, 200);
	post(0, RC_WR_WRITE, 8 * 1024, 1);
	run(1000000);
	assert_int_equal(count_log(0, -1, RC_TX_RETRANSMISSION), 5);
	for (int i = 0; i < h->n_log; i++)
		assert_false(h->log[i].info.after_timeout);
}

static void test_uc_gap_drops_message(void **state)
{
	start(RC_SVC_UC, 500, 600);
	h->drop_from = 0;
	h->drop_psn = 501;
	h->drop_times = 1;
	post(0, RC_WR_SEND, 3 * 1024, 1);
	post(0, RC_WR_SEND, 1024, 2);
	run(1000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	assert_int_equal(rc_qp_get_stats(&h->qp[1])->dropped_uc_messages, 1);
	assert_int_equal(rc_qp_get_stats(&h->qp[1])->recv_completions, 1);
	assert_int_equal(count_log(1, -1, -1), 0);	/* UC sends no ACKs */
	assert_int_equal(rc_qp_get_stats(&h->qp[0])->retransmitted_packets, 0);
}

static void test_ud(void **state)
{
	start(RC_SVC_UD, 0, 0);
	post(0, RC_WR_SEND_IMM, 512, 1);
	assert_int_equal(rc_post_send(&h->qp[0], 0, &(struct rc_wr){.opcode = RC_WR_SEND,
								   .length_bytes = 5000}),
			 -EINVAL);
	run(100000);
	assert_int_equal(h->log[0].pkt.opcode, ROCE_OPCODE(ROCE_TR_UD, ROCE_OP_SEND_ONLY_IMM));
	assert_int_equal(h->log[0].pkt.deth_src_qp, 0x100);
	assert_int_equal(rc_qp_get_stats(&h->qp[1])->recv_completions, 1);
}

static void test_cnp_dcqcn(void **state)
{
	start(RC_SVC_RC, 1, 2);
	h->mark_ce_to_b = true;
	post(0, RC_WR_WRITE, 64 * 1024, 1);
	run(200000);
	assert_true(rc_qp_get_stats(&h->qp[1])->cnps_sent >= 1);
	assert_true(rc_qp_get_stats(&h->qp[0])->cnps_received >= 1);
	assert_true(rc_qp_rate_bps(&h->qp[0]) < 100e9);
	int cnp = 0;
	for (int i = 0; i < h->n_log; i++)
		if (h->log[i].pkt.opcode == ROCE_OPCODE_CNP) {
			assert_int_equal(h->log[i].to, 1);
			assert_int_equal(h->log[i].pkt.dest_qp, 0x100);
			cnp++;
		}
	assert_int_equal(cnp, (int)rc_qp_get_stats(&h->qp[1])->cnps_sent);
	/* Without marks the rate recovers to line rate. */
	h->mark_ce_to_b = false;
	run(h->now + 50000000);
	expect_completion(0, 1, RC_WC_SUCCESS);
	h->now += 50000000;	/* idle time: run() stops early when nothing is pending */
	post(0, RC_WR_WRITE, 1024, 2);
	run(h->now + 1000000);
	assert_true(rc_qp_rate_bps(&h->qp[0]) >= 100e9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_clean_and_opcodes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ack_coalescing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_go_back_n_after_nak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_exceeded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rnr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_psn_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_gap_reissue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_replay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_gap_reissue_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_replay_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_marks_retransmission, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uc_gap_drops_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ud, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cnp_dcqcn, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
