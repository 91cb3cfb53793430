/* rc_model.c: RC/UC/UD queue-pair requester and responder state machines (IBA ch. 9), DCQCN, no I/O. */
#include "lib/model/rc_model.h"

#include <errno.h>
#include <string.h>

#include "lib/decode/psn.h"

/* Response kinds in the responder's queue. */
enum { RESP_ACK = 1, RESP_NAK, RESP_READ, RESP_ATOMIC };

#define AETH_ACK_CREDITS 0x1f		/* ACK syndrome with "credits not given" */
#define AETH_SYN_RNR(t) (0x20 | ((t) & 0x1f))
#define AETH_SYN_NAK_SEQ 0x60
#define DCQCN_G (1.0 / 256.0)
#define DCQCN_PERIOD_NS 55000ull	/* alpha decay and rate increase timer */
#define DCQCN_FAST_RECOVERY_STAGES 5
/* Bytes on the wire around a payload: Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4,
 * with preamble and inter-frame gap 20: what pacing charges per packet. */
#define WIRE_OVERHEAD_BYTES 82

static const uint64_t rnr_timer_table_ns[32] = {
	655360000, 10000, 20000, 30000, 40000, 60000, 80000, 120000,
	160000, 240000, 320000, 480000, 640000, 960000, 1280000, 1920000,
	2560000, 3840000, 5120000, 7680000, 10240000, 15360000, 20480000, 30720000,
	40960000, 61440000, 81920000, 122880000, 163840000, 245760000, 327680000, 491520000,
};

uint64_t rc_rnr_timer_ns(uint8_t code)
{
	return rnr_timer_table_ns[code & 0x1f];
}

void rc_qp_config_default(struct rc_qp_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->service = RC_SVC_RC;
	cfg->mtu_bytes = 1024;
	cfg->pkey = 0xffff;
	cfg->qkey = 0x11111111;
	cfg->line_rate_bps = 100000000000ull;
	cfg->ack_timeout_ns = 4096ull << 14;	/* timeout code 14: 67 ms */
	cfg->retry_cnt = 7;
	cfg->rnr_retry = 7;
	cfg->min_rnr_timer = 0x0e;		/* 1.28 ms */
	cfg->max_inflight_pkts = 256;
	cfg->max_rd_atomic = 16;
	cfg->ackreq_every_pkts = 16;
	cfg->ack_every_pkts = 16;
	cfg->unlimited_recvs = true;
	cfg->send_cnps = true;
	cfg->cnp_interval_ns = 50000;
	cfg->dcqcn = true;
	cfg->min_rate_bps = 100000000ull;	/* 100 Mb/s */
}

static bool is_rc(const struct rc_qp *qp)
{
	return qp->cfg.service == RC_SVC_RC;
}

static uint8_t transport_bits(const struct rc_qp *qp)
{
	switch (qp->cfg.service) {
	case RC_SVC_UC:
		return ROCE_TR_UC;
	case RC_SVC_UD:
		return ROCE_TR_UD;
	default:
		return ROCE_TR_RC;
	}
}

static uint32_t pkts_for_bytes(const struct rc_qp *qp, uint32_t bytes)
{
	return bytes == 0 ? 1 : (bytes + qp->cfg.mtu_bytes - 1) / qp->cfg.mtu_bytes;
}

int rc_qp_init(struct rc_qp *qp, const struct rc_qp_config *cfg)
{
	uint32_t mtu = cfg->mtu_bytes;

	if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
		return -EINVAL;
	if (cfg->max_inflight_pkts == 0 || cfg->max_inflight_pkts > 512 || cfg->line_rate_bps == 0 ||
	    cfg->max_rd_atomic == 0 || cfg->retry_cnt > 7 || cfg->rnr_retry > 7 ||
	    cfg->local_qpn > PSN_MASK || cfg->remote_qpn > PSN_MASK)
		return -EINVAL;
	memset(qp, 0, sizeof(*qp));
	qp->cfg = *cfg;
	qp->cfg.sq_psn &= PSN_MASK;
	qp->cfg.rq_psn &= PSN_MASK;
	if (!qp->cfg.ackreq_every_pkts)
		qp->cfg.ackreq_every_pkts = 1;
	if (!qp->cfg.ack_every_pkts)
		qp->cfg.ack_every_pkts = 1;
	qp->next_psn = qp->una_psn = qp->max_psn_sent = qp->post_psn = qp->cfg.sq_psn;
	qp->retry_left = cfg->retry_cnt;
	qp->rnr_retry_left = cfg->rnr_retry;
	qp->rate_bps = qp->target_rate_bps = (double)cfg->line_rate_bps;
	qp->alpha = 1.0;
	qp->epsn = qp->cfg.rq_psn;
	return 0;
}

void rc_post_recv(struct rc_qp *qp, uint32_t n)
{
	uint64_t c = (uint64_t)qp->recv_credits + n;
	qp->recv_credits = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

void rc_set_unlimited_recvs(struct rc_qp *qp, bool unlimited)
{
	qp->cfg.unlimited_recvs = unlimited;
}

void rc_set_responder_delay(struct rc_qp *qp, uint64_t delay_ns)
{
	qp->cfg.responder_delay_ns = delay_ns;
}

void rc_set_ack_timeout(struct rc_qp *qp, uint64_t timeout_ns)
{
	qp->cfg.ack_timeout_ns = timeout_ns;
	if (qp->timer_deadline_ns && qp->current_time_ns + timeout_ns < qp->timer_deadline_ns)
		qp->timer_deadline_ns = qp->current_time_ns + timeout_ns;
}

uint32_t rc_sq_pending(const struct rc_qp *qp)
{
	return qp->sq_tail - qp->sq_head;
}

const struct rc_qp_stats *rc_qp_get_stats(const struct rc_qp *qp)
{
	return &qp->stats;
}

double rc_qp_rate_bps(const struct rc_qp *qp)
{
	return qp->rate_bps;
}

static struct rc_wqe *wqe_at(struct rc_qp *qp, uint32_t idx)
{
	return &qp->sq[idx % RC_SQ_DEPTH];
}

static void cq_push(struct rc_qp *qp, const struct rc_completion *wc)
{
	if (qp->cq_tail - qp->cq_head >= RC_CQ_DEPTH)
		qp->cq_head++;	/* overwrite the oldest: the caller is not polling */
	qp->cq[qp->cq_tail++ % RC_CQ_DEPTH] = *wc;
}

int rc_poll_completion(struct rc_qp *qp, struct rc_completion *out)
{
	if (qp->cq_head == qp->cq_tail)
		return 0;
	*out = qp->cq[qp->cq_head++ % RC_CQ_DEPTH];
	return 1;
}

static void complete_head(struct rc_qp *qp, enum rc_wc_status status)
{
	struct rc_wqe *w = wqe_at(qp, qp->sq_head);
	struct rc_completion wc = {
		.wr_id = w->wr.wr_id,
		.status = status,
		.opcode = w->wr.opcode,
		.length_bytes = w->wr.length_bytes,
		.posted_ns = w->posted_ns,
		.completed_ns = qp->current_time_ns,
	};
	cq_push(qp, &wc);
	qp->sq_head++;
	if (qp->tx_wqe < qp->sq_head) {
		qp->tx_wqe = qp->sq_head;
		qp->tx_off = 0;
	}
	if (status == RC_WC_SUCCESS)
		qp->stats.completions++;
}

/* The QP fails: the head completes with `status`, the rest flush, nothing more is sent. */
static void enter_error(struct rc_qp *qp, enum rc_wc_status status)
{
	if (qp->sq_head != qp->sq_tail)
		complete_head(qp, status);
	while (qp->sq_head != qp->sq_tail)
		complete_head(qp, RC_WC_FLUSHED);
	qp->error = true;
	qp->timer_deadline_ns = 0;
	qp->resp_head = qp->resp_tail;
	qp->cnp_pending = false;
	if (status == RC_WC_RETRY_EXCEEDED || status == RC_WC_RNR_RETRY_EXCEEDED)
		qp->stats.retry_exceeded = true;
}

int rc_post_send(struct rc_qp *qp, uint64_t now_ns, const struct rc_wr *wr)
{
	struct rc_wqe *w;

	if (qp->error)
		return -EIO;
	switch (wr->opcode) {
	case RC_WR_SEND:
	case RC_WR_SEND_IMM:
		if (qp->cfg.service == RC_SVC_UD && wr->length_bytes > qp->cfg.mtu_bytes)
			return -EINVAL;
		break;
	case RC_WR_WRITE:
	case RC_WR_WRITE_IMM:
		if (qp->cfg.service == RC_SVC_UD)
			return -EINVAL;
		break;
	case RC_WR_READ:
		if (!is_rc(qp) || wr->length_bytes > RC_MAX_READ_BYTES)
			return -EINVAL;
		break;
	case RC_WR_CMP_SWAP:
	case RC_WR_FETCH_ADD:
		if (!is_rc(qp))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (qp->sq_tail - qp->sq_head >= RC_SQ_DEPTH)
		return -ENOSPC;
	w = wqe_at(qp, qp->sq_tail);
	memset(w, 0, sizeof(*w));
	w->wr = *wr;
	if (wr->opcode == RC_WR_CMP_SWAP || wr->opcode == RC_WR_FETCH_ADD)
		w->wr.length_bytes = 8;
	w->first_psn = qp->post_psn;
	w->n_psns = (wr->opcode == RC_WR_CMP_SWAP || wr->opcode == RC_WR_FETCH_ADD)
			    ? 1 : pkts_for_bytes(qp, w->wr.length_bytes);
	w->posted_ns = now_ns;
	qp->post_psn = psn_add(qp->post_psn, w->n_psns);
	qp->sq_tail++;
	if (qp->current_time_ns < now_ns)
		qp->current_time_ns = now_ns;
	return 0;
}

/* Point transmission at `psn` (go-back-N, RNR, READ re-issue) or past it after an ACK. */
static void set_tx_psn(struct rc_qp *qp, uint32_t psn)
{
	for (uint32_t i = qp->sq_head; i != qp->sq_tail; i++) {
		struct rc_wqe *w = wqe_at(qp, i);
		if (psn_in_range(psn, w->first_psn, psn_add(w->first_psn, w->n_psns - 1))) {
			qp->tx_wqe = i;
			qp->tx_off = (uint32_t)psn_diff(psn, w->first_psn);
			qp->next_psn = psn;
			return;
		}
	}
	qp->tx_wqe = qp->sq_tail;
	qp->tx_off = 0;
	qp->next_psn = qp->post_psn;
}

static bool outstanding(const struct rc_qp *qp)
{
	return psn_before(qp->una_psn, qp->max_psn_sent);
}

static void restart_timer(struct rc_qp *qp)
{
	qp->timer_deadline_ns = outstanding(qp) ? qp->current_time_ns + qp->cfg.ack_timeout_ns : 0;
}

static bool is_read_or_atomic(const struct rc_wqe *w)
{
	return w->wr.opcode == RC_WR_READ || w->wr.opcode == RC_WR_CMP_SWAP ||
	       w->wr.opcode == RC_WR_FETCH_ADD;
}

/*
 * A READ or atomic at `psn` got no (complete) response while a later one did: go back to it
 * (go-back-N), once per gap. Every later response and ACK still in flight shows the same gap;
 * re-issuing for each of them would resend the whole window again and again (each copy
 * answered in full by the responder: a storm). A lost re-issue is recovered by the timer.
 */
static void reissue_from(struct rc_qp *qp, uint32_t psn)
{
	if (qp->read_reissued && qp->read_reissue_psn == psn)
		return;
	qp->read_reissued = true;
	qp->read_reissue_psn = psn;
	set_tx_psn(qp, psn);
}

/*
 * Everything up to and including `psn` is acknowledged. READ and atomic requests need their
 * own responses: an ACK beyond one that got none means its responses were lost, so the
 * requester goes back to it (IBA 9.7.5.1.x, implicit NAK). Returns true on forward progress.
 */
static bool ack_through(struct rc_qp *qp, uint32_t psn)
{
	bool progress = false, gap = false;
	uint32_t gap_psn = 0;

	if (!psn_in_range(psn, qp->una_psn, psn_add(qp->max_psn_sent, PSN_MASK)))
		return false;	/* stale, or names a PSN not sent yet */
	while (qp->sq_head != qp->sq_tail) {
		struct rc_wqe *w = wqe_at(qp, qp->sq_head);
		uint32_t last = psn_add(w->first_psn, w->n_psns - 1);
		if (psn_after(w->first_psn, psn))
			break;
		if (is_read_or_atomic(w)) {
			/* Its responses should have come first: go back and ask again. */
			if (w->acked_psns < w->n_psns) {
				gap = true;
				gap_psn = psn_add(w->first_psn, w->acked_psns);
				break;
			}
		}
		if (psn_before(psn, last)) {
			uint32_t acked = (uint32_t)psn_diff(psn, w->first_psn) + 1;
			if (acked > w->acked_psns) {
				w->acked_psns = acked;
				progress = true;
			}
			qp->una_psn = psn_add(psn, 1);
			break;
		}
		w->acked_psns = w->n_psns;
		qp->una_psn = psn_add(last, 1);
		progress = true;
		complete_head(qp, RC_WC_SUCCESS);
	}
	if (psn_before(qp->next_psn, qp->una_psn))
		set_tx_psn(qp, qp->una_psn);
	if (progress) {
		qp->retry_left = qp->cfg.retry_cnt;
		qp->rnr_retry_left = qp->cfg.rnr_retry;
		qp->read_reissued = false;
	}
	if (gap)
		reissue_from(qp, gap_psn);
	restart_timer(qp);
	return progress;
}

/* IBA DCQCN reaction point, updated lazily up to `now`. */
static void dcqcn_update(struct rc_qp *qp, uint64_t now)
{
	double line = (double)qp->cfg.line_rate_bps;

	if (!qp->cfg.dcqcn || qp->rate_bps >= line)
		return;
	if (now > qp->last_alpha_update_ns + DCQCN_PERIOD_NS) {
		uint64_t n = (now - qp->last_alpha_update_ns) / DCQCN_PERIOD_NS;
		for (uint64_t i = 0; i < n && i < 4096 && qp->alpha > 1e-6; i++)
			qp->alpha *= 1.0 - DCQCN_G;
		qp->last_alpha_update_ns += n * DCQCN_PERIOD_NS;
	}
	if (now > qp->last_rate_update_ns + DCQCN_PERIOD_NS) {
		uint64_t n = (now - qp->last_rate_update_ns) / DCQCN_PERIOD_NS;
		for (uint64_t i = 0; i < n; i++) {
			if (qp->rate_bps >= line || i >= 512) {
				qp->rate_bps = qp->target_rate_bps = line;
				break;
			}
			if (qp->rate_increase_stage >= DCQCN_FAST_RECOVERY_STAGES)
				qp->target_rate_bps += line / 100.0;	/* additive increase */
			if (qp->target_rate_bps > line)
				qp->target_rate_bps = line;
			qp->rate_bps = (qp->rate_bps + qp->target_rate_bps) / 2.0;
			if (line - qp->rate_bps < line * 1e-4)
				qp->rate_bps = line;
			qp->rate_increase_stage++;
		}
		qp->last_rate_update_ns += n * DCQCN_PERIOD_NS;
	}
}

static void dcqcn_on_cnp(struct rc_qp *qp, uint64_t now)
{
	double line = (double)qp->cfg.line_rate_bps;

	if (!qp->cfg.dcqcn)
		return;
	dcqcn_update(qp, now);
	if (qp->rate_bps >= line)
		qp->alpha = qp->alpha > 0 ? qp->alpha : 1.0;
	qp->target_rate_bps = qp->rate_bps;
	qp->rate_bps *= 1.0 - qp->alpha / 2.0;
	if (qp->rate_bps < (double)qp->cfg.min_rate_bps)
		qp->rate_bps = (double)qp->cfg.min_rate_bps;
	qp->alpha = (1.0 - DCQCN_G) * qp->alpha + DCQCN_G;
	qp->rate_increase_stage = 0;
	qp->last_cnp_rx_ns = now;
	qp->last_rate_update_ns = now;
	qp->last_alpha_update_ns = now;
}

static void pace(struct rc_qp *qp, uint64_t now, uint32_t payload_bytes)
{
	double bits = (double)(payload_bytes + WIRE_OVERHEAD_BYTES) * 8.0;
	qp->next_tx_ns = now + (uint64_t)(bits * 1e9 / qp->rate_bps);
}

/* ---- responder ---- */

static struct rc_resp *resp_push(struct rc_qp *qp)
{
	if (qp->resp_tail - qp->resp_head >= RC_RESP_DEPTH)
		return NULL;	/* full: the request is dropped; the requester will retry */
	struct rc_resp *r = &qp->resp[qp->resp_tail++ % RC_RESP_DEPTH];
	memset(r, 0, sizeof(*r));
	r->not_before_ns = qp->current_time_ns + qp->cfg.responder_delay_ns;
	return r;
}

static void queue_ack(struct rc_qp *qp, uint32_t psn)
{
	/* Coalesce with an ACK still waiting to leave: everything queued is unsent. */
	if (qp->resp_tail != qp->resp_head) {
		struct rc_resp *t = &qp->resp[(qp->resp_tail - 1) % RC_RESP_DEPTH];
		if (t->kind == RESP_ACK) {
			t->psn = psn;
			t->msn = qp->msn;
			return;
		}
	}
	struct rc_resp *r = resp_push(qp);
	if (!r)
		return;
	r->kind = RESP_ACK;
	r->syndrome = AETH_ACK_CREDITS;
	r->psn = psn;
	r->msn = qp->msn;
}

static void queue_nak(struct rc_qp *qp, uint8_t syndrome, uint32_t psn)
{
	struct rc_resp *r = resp_push(qp);
	if (!r)
		return;
	r->kind = RESP_NAK;
	r->syndrome = syndrome;
	r->psn = psn;
	r->msn = qp->msn;
}

static void queue_read(struct rc_qp *qp, uint32_t psn, uint32_t dma_len)
{
	struct rc_resp *r = resp_push(qp);
	if (!r)
		return;
	uint32_t n = pkts_for_bytes(qp, dma_len);
	r->kind = RESP_READ;
	r->syndrome = AETH_ACK_CREDITS;
	r->psn = psn;
	r->msn = qp->msn;
	r->total = r->remaining = n;
	r->last_len = dma_len - (n - 1) * qp->cfg.mtu_bytes;
	if (dma_len == 0)
		r->last_len = 0;
}

static void queue_atomic_ack(struct rc_qp *qp, uint32_t psn, uint64_t orig)
{
	struct rc_resp *r = resp_push(qp);
	if (!r)
		return;
	r->kind = RESP_ATOMIC;
	r->syndrome = AETH_ACK_CREDITS;
	r->psn = psn;
	r->msn = qp->msn;
	r->atomic_orig = orig;
}

static void recv_completion(struct rc_qp *qp, enum rc_wr_opcode op, uint32_t len)
{
	struct rc_completion wc = {.is_recv = true, .opcode = op, .length_bytes = len,
				   .completed_ns = qp->current_time_ns};
	cq_push(qp, &wc);
	qp->stats.recv_completions++;
}

static bool op_starts_message(uint8_t op)
{
	return op == ROCE_OP_SEND_FIRST || op == ROCE_OP_SEND_ONLY || op == ROCE_OP_SEND_ONLY_IMM ||
	       op == ROCE_OP_SEND_ONLY_INV || op == ROCE_OP_WRITE_FIRST || op == ROCE_OP_WRITE_ONLY ||
	       op == ROCE_OP_WRITE_ONLY_IMM;
}

static bool op_ends_message(uint8_t op)
{
	return op == ROCE_OP_SEND_LAST || op == ROCE_OP_SEND_LAST_IMM || op == ROCE_OP_SEND_ONLY ||
	       op == ROCE_OP_SEND_ONLY_IMM || op == ROCE_OP_SEND_LAST_INV ||
	       op == ROCE_OP_SEND_ONLY_INV || op == ROCE_OP_WRITE_LAST ||
	       op == ROCE_OP_WRITE_LAST_IMM || op == ROCE_OP_WRITE_ONLY ||
	       op == ROCE_OP_WRITE_ONLY_IMM;
}

static bool op_is_send(uint8_t op)
{
	return op <= ROCE_OP_SEND_ONLY_IMM || op == ROCE_OP_SEND_LAST_INV ||
	       op == ROCE_OP_SEND_ONLY_INV;
}

static bool op_needs_recv(uint8_t op)
{
	/* A SEND takes its receive at its first packet; WRITE with immediate at its last. */
	return op == ROCE_OP_SEND_FIRST || op == ROCE_OP_SEND_ONLY || op == ROCE_OP_SEND_ONLY_IMM ||
	       op == ROCE_OP_SEND_ONLY_INV || op == ROCE_OP_WRITE_LAST_IMM ||
	       op == ROCE_OP_WRITE_ONLY_IMM;
}

static enum rc_wr_opcode wr_opcode_of(uint8_t op)
{
	switch (op) {
	case ROCE_OP_SEND_LAST_IMM:
	case ROCE_OP_SEND_ONLY_IMM:
		return RC_WR_SEND_IMM;
	case ROCE_OP_WRITE_LAST_IMM:
	case ROCE_OP_WRITE_ONLY_IMM:
		return RC_WR_WRITE_IMM;
	default:
		return op_is_send(op) ? RC_WR_SEND : RC_WR_WRITE;
	}
}

/* Execute an in-sequence RC request (PSN == ePSN). */
static void responder_execute(struct rc_qp *qp, const struct roce_pkt *pkt, uint8_t op)
{
	if (op == ROCE_OP_READ_REQUEST) {
		uint32_t n = pkts_for_bytes(qp, pkt->reth_dma_len);
		qp->epsn = psn_add(qp->epsn, n);
		qp->msn = (qp->msn + 1) & PSN_MASK;
		queue_read(qp, pkt->psn, pkt->reth_dma_len);
		qp->unacked_pkts = 0;
		return;
	}
	if (op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD) {
		uint64_t orig = qp->atomic_value;
		if (op == ROCE_OP_FETCH_ADD)
			qp->atomic_value += pkt->atomic_swap_add;
		else if (orig == pkt->atomic_compare)
			qp->atomic_value = pkt->atomic_swap_add;
		qp->last_atomic_orig = orig;
		qp->last_atomic_psn = pkt->psn;
		qp->atomic_saved[qp->atomic_saved_next++ % RC_ATOMIC_HISTORY] =
			(struct rc_atomic_saved){.psn = pkt->psn, .valid = true, .orig = orig};
		qp->epsn = psn_add(qp->epsn, 1);
		qp->msn = (qp->msn + 1) & PSN_MASK;
		queue_atomic_ack(qp, pkt->psn, orig);
		qp->unacked_pkts = 0;
		return;
	}
	if (op_needs_recv(op) && !qp->cfg.unlimited_recvs) {
		if (qp->recv_credits == 0) {
			queue_nak(qp, AETH_SYN_RNR(qp->cfg.min_rnr_timer), pkt->psn);
			qp->stats.rnr_naks_sent++;
			return;
		}
		qp->recv_credits--;
	}
	qp->epsn = psn_add(qp->epsn, 1);
	qp->in_message = !op_ends_message(op);
	if (op_ends_message(op)) {
		qp->msn = (qp->msn + 1) & PSN_MASK;
		if (op_is_send(op) || op == ROCE_OP_WRITE_LAST_IMM || op == ROCE_OP_WRITE_ONLY_IMM)
			recv_completion(qp, wr_opcode_of(op), pkt->payload_len);
	}
	qp->unacked_pkts++;
	if ((pkt->flags & ROCE_F_ACK_REQ) || qp->unacked_pkts >= qp->cfg.ack_every_pkts) {
		queue_ack(qp, pkt->psn);
		qp->unacked_pkts = 0;
	}
}

static void responder_rc(struct rc_qp *qp, const struct roce_pkt *pkt, uint8_t op)
{
	int32_t d = psn_diff(pkt->psn, qp->epsn);

	if (d == 0) {
		qp->nak_outstanding = false;
		responder_execute(qp, pkt, op);
		return;
	}
	if (d < 0) {
		qp->stats.duplicates_received++;
		if (op == ROCE_OP_READ_REQUEST) {
			queue_read(qp, pkt->psn, pkt->reth_dma_len);	/* executed again */
		} else if (op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD) {
			/* Replay the saved result, never execute twice. Keeping only the last one
			 * left every earlier duplicate unanswered when several atomics were in flight
			 * and one ACK was lost: the requester retried until it gave up. */
			for (uint32_t i = 0; i < RC_ATOMIC_HISTORY; i++) {
				const struct rc_atomic_saved *a = &qp->atomic_saved[i];
				if (a->valid && a->psn == pkt->psn) {
					queue_atomic_ack(qp, pkt->psn, a->orig);
					break;
				}
			}
		} else if (pkt->flags & ROCE_F_ACK_REQ) {
			queue_ack(qp, psn_add(qp->epsn, PSN_MASK));	/* the latest PSN received */
		}
		return;
	}
	qp->stats.out_of_sequence_received++;
	if (!qp->nak_outstanding) {
		queue_nak(qp, AETH_SYN_NAK_SEQ, qp->epsn);
		qp->stats.naks_seq_sent++;
		qp->nak_outstanding = true;
	}
}

static void responder_uc(struct rc_qp *qp, const struct roce_pkt *pkt, uint8_t op)
{
	if (pkt->psn != qp->epsn) {
		if (qp->in_message && !qp->uc_dropping)
			qp->stats.dropped_uc_messages++;
		qp->in_message = false;
		qp->uc_dropping = !op_starts_message(op);
		if (qp->uc_dropping) {
			qp->epsn = psn_add(pkt->psn, 1);
			return;
		}
	} else if (qp->uc_dropping) {
		if (!op_starts_message(op)) {
			qp->epsn = psn_add(pkt->psn, 1);
			return;
		}
		qp->uc_dropping = false;
	}
	qp->epsn = psn_add(pkt->psn, 1);
	qp->in_message = !op_ends_message(op);
	if (op_ends_message(op)) {
		qp->msn = (qp->msn + 1) & PSN_MASK;
		if (op_is_send(op) || op == ROCE_OP_WRITE_LAST_IMM || op == ROCE_OP_WRITE_ONLY_IMM)
			recv_completion(qp, wr_opcode_of(op), pkt->payload_len);
	}
}

/* ---- requester: responses coming back ---- */

static void requester_on_aeth(struct rc_qp *qp, const struct roce_pkt *pkt)
{
	uint8_t syn = pkt->aeth_syndrome;
	uint32_t prev = psn_add(pkt->psn, PSN_MASK);

	switch (AETH_TYPE(syn)) {
	case AETH_ACK:
		qp->stats.acks_received++;
		ack_through(qp, pkt->psn);
		return;
	case AETH_RNR_NAK:
		if (psn_before(pkt->psn, qp->una_psn) || !psn_before(pkt->psn, qp->max_psn_sent))
			return;
		qp->stats.rnr_naks_received++;
		if (pkt->psn != qp->una_psn)
			ack_through(qp, prev);
		if (qp->cfg.rnr_retry != 7) {
			if (qp->rnr_retry_left == 0) {
				enter_error(qp, RC_WC_RNR_RETRY_EXCEEDED);
				return;
			}
			qp->rnr_retry_left--;
		}
		qp->timeout_retx_pending = false;	/* the resend answers the RNR NAK now */
		qp->rnr_wait_until_ns = qp->current_time_ns + rc_rnr_timer_ns(syn & 0x1f);
		set_tx_psn(qp, qp->una_psn);	/* pkt->psn, or a READ/atomic before it unanswered */
		qp->timer_deadline_ns = 0;
		return;
	case AETH_NAK:
		if (psn_before(pkt->psn, qp->una_psn) || !psn_before(pkt->psn, qp->max_psn_sent))
			return;
		if ((syn & 0x1f) != NAK_PSN_SEQ_ERROR) {
			qp->stats.naks_other_received++;
			enter_error(qp, RC_WC_REMOTE_ERROR);
			return;
		}
		qp->stats.naks_seq_received++;
		if (pkt->psn != qp->una_psn)
			ack_through(qp, prev);
		if (qp->retry_left == 0) {
			enter_error(qp, RC_WC_RETRY_EXCEEDED);
			return;
		}
		qp->retry_left--;
		qp->timeout_retx_pending = false;	/* the resend answers the NAK now */
		/* Resend from the NAK's PSN, or from an earlier READ/atomic whose responses were
		 * lost (the NAK cannot acknowledge those: ack_through stopped una there). */
		set_tx_psn(qp, qp->una_psn);
		restart_timer(qp);
		return;
	default:
		return;
	}
}

static void requester_on_read_response(struct rc_qp *qp, const struct roce_pkt *pkt, uint8_t op)
{
	if (psn_before(pkt->psn, qp->una_psn) || !psn_before(pkt->psn, qp->max_psn_sent))
		return;	/* duplicate or unexpected */
	/* A response implicitly acknowledges every request before it. */
	if (pkt->psn != qp->una_psn) {
		struct rc_wqe *head = wqe_at(qp, qp->sq_head);
		bool inside_head_read = qp->sq_head != qp->sq_tail && head->wr.opcode == RC_WR_READ &&
					psn_in_range(pkt->psn, head->first_psn,
						     psn_add(head->first_psn, head->n_psns - 1));
		if (!inside_head_read)
			ack_through(qp, psn_add(pkt->psn, PSN_MASK));
	}
	if (qp->sq_head == qp->sq_tail)
		return;
	struct rc_wqe *w = wqe_at(qp, qp->sq_head);
	if (w->wr.opcode != RC_WR_READ)
		return;
	if (pkt->psn != qp->una_psn) {
		/* A gap in the responses: re-issue the READ for the missing part, once per gap. */
		reissue_from(qp, qp->una_psn);
		return;
	}
	(void)op;
	w->acked_psns++;
	qp->una_psn = psn_add(qp->una_psn, 1);
	qp->retry_left = qp->cfg.retry_cnt;
	qp->read_reissued = false;
	if (psn_before(qp->next_psn, qp->una_psn))
		set_tx_psn(qp, qp->una_psn);
	if (w->acked_psns == w->n_psns)
		complete_head(qp, RC_WC_SUCCESS);
	restart_timer(qp);
}

static void requester_on_atomic_ack(struct rc_qp *qp, const struct roce_pkt *pkt)
{
	if (psn_before(pkt->psn, qp->una_psn) || !psn_before(pkt->psn, qp->max_psn_sent))
		return;
	if (pkt->psn != qp->una_psn)
		ack_through(qp, psn_add(pkt->psn, PSN_MASK));
	if (qp->sq_head == qp->sq_tail || pkt->psn != qp->una_psn)
		return;
	struct rc_wqe *w = wqe_at(qp, qp->sq_head);
	if (w->wr.opcode != RC_WR_CMP_SWAP && w->wr.opcode != RC_WR_FETCH_ADD)
		return;
	qp->stats.acks_received++;
	w->acked_psns = 1;
	qp->una_psn = psn_add(qp->una_psn, 1);
	qp->retry_left = qp->cfg.retry_cnt;
	if (psn_before(qp->next_psn, qp->una_psn))
		set_tx_psn(qp, qp->una_psn);
	complete_head(qp, RC_WC_SUCCESS);
	restart_timer(qp);
}

int rc_receive(struct rc_qp *qp, uint64_t now_ns, const struct roce_pkt *pkt)
{
	uint8_t opcode = pkt->opcode;
	uint8_t op = opcode & 0x1f;

	if ((pkt->dest_qp & PSN_MASK) != qp->cfg.local_qpn)
		return -EINVAL;
	if (now_ns > qp->current_time_ns)
		qp->current_time_ns = now_ns;
	if (qp->error)
		return 0;
	if (opcode == ROCE_OPCODE_CNP) {
		qp->stats.cnps_received++;
		dcqcn_on_cnp(qp, qp->current_time_ns);
		return 0;
	}
	if ((opcode >> 5) != transport_bits(qp))
		return -EINVAL;
	/* Notification point: a CE mark asks the sender to slow down. */
	if (pkt->ecn == 3 && qp->cfg.send_cnps && qp->current_time_ns >= qp->cnp_next_allowed_ns) {
		qp->cnp_pending = true;
		qp->cnp_dest_qpn = qp->cfg.service == RC_SVC_UD ? pkt->deth_src_qp
								 : qp->cfg.remote_qpn;
		qp->cnp_next_allowed_ns = qp->current_time_ns + qp->cfg.cnp_interval_ns;
	}
	if (qp->cfg.service == RC_SVC_UD) {
		if (op == ROCE_OP_SEND_ONLY || op == ROCE_OP_SEND_ONLY_IMM)
			recv_completion(qp, wr_opcode_of(op), pkt->payload_len);
		return 0;
	}
	if (qp->cfg.service == RC_SVC_UC) {
		if (op <= ROCE_OP_WRITE_ONLY_IMM)
			responder_uc(qp, pkt, op);
		return 0;
	}
	switch (op) {
	case ROCE_OP_ACK:
		requester_on_aeth(qp, pkt);
		break;
	case ROCE_OP_ATOMIC_ACK:
		if (AETH_TYPE(pkt->aeth_syndrome) == AETH_ACK)
			requester_on_atomic_ack(qp, pkt);
		else
			requester_on_aeth(qp, pkt);
		break;
	case ROCE_OP_READ_RESP_FIRST:
	case ROCE_OP_READ_RESP_MIDDLE:
	case ROCE_OP_READ_RESP_LAST:
	case ROCE_OP_READ_RESP_ONLY:
		requester_on_read_response(qp, pkt, op);
		break;
	default:
		if (op <= ROCE_OP_FETCH_ADD || op == ROCE_OP_SEND_LAST_INV ||
		    op == ROCE_OP_SEND_ONLY_INV)
			responder_rc(qp, pkt, op);
		break;
	}
	return 0;
}

/* ---- transmit ---- */

static void fire_timers(struct rc_qp *qp, uint64_t now)
{
	if (qp->timer_deadline_ns && now >= qp->timer_deadline_ns && is_rc(qp) && !qp->error) {
		qp->timer_deadline_ns = 0;
		if (!outstanding(qp))
			return;
		qp->stats.timeouts++;
		if (qp->retry_left == 0) {
			enter_error(qp, RC_WC_RETRY_EXCEEDED);
			return;
		}
		qp->retry_left--;
		qp->read_reissued = false;
		qp->timeout_retx_pending = true;
		set_tx_psn(qp, qp->una_psn);
	}
}

static void pkt_init(const struct rc_qp *qp, struct roce_pkt *out, uint8_t op)
{
	memset(out, 0, sizeof(*out));
	out->opcode = ROCE_OPCODE(transport_bits(qp), op);
	out->transport = transport_bits(qp);
	out->roce_version = 2;
	out->udp_dport = ROCE_V2_UDP_PORT;
	out->pkey = qp->cfg.pkey;
	out->dest_qp = qp->cfg.remote_qpn;
	out->headers = ROCE_H_BTH;
}

/* May the requester send a packet now? Sets *when to the earliest time it could (or UINT64_MAX). */
static bool request_ready(const struct rc_qp *qp, uint64_t now, uint64_t *when)
{
	*when = UINT64_MAX;
	if (qp->error || qp->tx_wqe == qp->sq_tail)
		return false;
	if (is_rc(qp)) {
		if (psn_diff(qp->next_psn, qp->una_psn) >= (int32_t)qp->cfg.max_inflight_pkts)
			return false;	/* window full: an ACK or the timer moves it */
		const struct rc_wqe *w = &qp->sq[qp->tx_wqe % RC_SQ_DEPTH];
		if (is_read_or_atomic(w) && qp->tx_off == 0) {
			uint32_t n = 0;
			for (uint32_t i = qp->sq_head; i != qp->tx_wqe; i++)
				n += is_read_or_atomic(&qp->sq[i % RC_SQ_DEPTH]);
			if (n >= qp->cfg.max_rd_atomic)
				return false;
		}
	}
	uint64_t t = qp->next_tx_ns;
	if (qp->rnr_wait_until_ns > t)
		t = qp->rnr_wait_until_ns;
	*when = t;
	return now >= t;
}

static bool response_ready(const struct rc_qp *qp, uint64_t now, uint64_t *when)
{
	*when = UINT64_MAX;
	if (qp->error || qp->resp_head == qp->resp_tail)
		return false;
	const struct rc_resp *r = &qp->resp[qp->resp_head % RC_RESP_DEPTH];
	uint64_t t = r->not_before_ns;
	if (r->kind == RESP_READ && qp->next_tx_ns > t)
		t = qp->next_tx_ns;	/* READ responses are data: DCQCN paces them too */
	*when = t;
	return now >= t;
}

static void emit_response(struct rc_qp *qp, uint64_t now, struct roce_pkt *out,
			  struct rc_tx_info *info)
{
	struct rc_resp *r = &qp->resp[qp->resp_head % RC_RESP_DEPTH];
	bool pop = true;

	switch (r->kind) {
	case RESP_ACK:
	case RESP_NAK:
		pkt_init(qp, out, ROCE_OP_ACK);
		out->psn = r->psn;
		out->aeth_syndrome = r->syndrome;
		out->aeth_msn = r->msn;
		out->headers |= ROCE_H_AETH;
		if (r->kind == RESP_ACK)
			qp->stats.acks_sent++;
		break;
	case RESP_ATOMIC:
		pkt_init(qp, out, ROCE_OP_ATOMIC_ACK);
		out->psn = r->psn;
		out->aeth_syndrome = r->syndrome;
		out->aeth_msn = r->msn;
		out->atomic_orig = r->atomic_orig;
		out->headers |= ROCE_H_AETH | ROCE_H_ATOMICACKETH;
		break;
	case RESP_READ: {
		uint32_t i = r->total - r->remaining;
		uint8_t op = r->total == 1	    ? ROCE_OP_READ_RESP_ONLY
			     : i == 0		    ? ROCE_OP_READ_RESP_FIRST
			     : i == r->total - 1 ? ROCE_OP_READ_RESP_LAST
						    : ROCE_OP_READ_RESP_MIDDLE;
		pkt_init(qp, out, op);
		out->psn = psn_add(r->psn, i);
		out->payload_len = i == r->total - 1 ? r->last_len : qp->cfg.mtu_bytes;
		if (op != ROCE_OP_READ_RESP_MIDDLE) {
			out->aeth_syndrome = r->syndrome;
			out->aeth_msn = r->msn;
			out->headers |= ROCE_H_AETH;
		}
		pop = --r->remaining == 0;
		pace(qp, now, out->payload_len);
		break;
	}
	default:
		break;
	}
	if (pop)
		qp->resp_head++;
	qp->stats.resp_packets++;
	if (info) {
		info->kind = RC_TX_RESPONSE;
		info->wire_payload_bytes = out->payload_len;
	}
}

static void emit_request(struct rc_qp *qp, uint64_t now, struct roce_pkt *out,
			 struct rc_tx_info *info)
{
	struct rc_wqe *w = wqe_at(qp, qp->tx_wqe);
	uint32_t mtu = qp->cfg.mtu_bytes;
	uint32_t psn = psn_add(w->first_psn, qp->tx_off);
	uint32_t n_psns_sent = 1;
	bool last = qp->tx_off + 1 == w->n_psns;
	bool first = qp->tx_off == 0;
	uint8_t op;

	switch (w->wr.opcode) {
	case RC_WR_READ:
		pkt_init(qp, out, ROCE_OP_READ_REQUEST);
		out->reth_va = w->wr.remote_va + (uint64_t)qp->tx_off * mtu;
		out->reth_rkey = w->wr.rkey;
		out->reth_dma_len = w->wr.length_bytes - qp->tx_off * mtu;
		if (w->wr.length_bytes == 0)
			out->reth_dma_len = 0;
		out->headers |= ROCE_H_RETH;
		n_psns_sent = w->n_psns - qp->tx_off;
		last = true;
		break;
	case RC_WR_CMP_SWAP:
	case RC_WR_FETCH_ADD:
		pkt_init(qp, out, w->wr.opcode == RC_WR_CMP_SWAP ? ROCE_OP_CMP_SWAP : ROCE_OP_FETCH_ADD);
		out->atomic_va = w->wr.remote_va;
		out->atomic_rkey = w->wr.rkey;
		out->atomic_swap_add = w->wr.opcode == RC_WR_CMP_SWAP ? w->wr.swap : w->wr.compare_add;
		out->atomic_compare = w->wr.opcode == RC_WR_CMP_SWAP ? w->wr.compare_add : 0;
		out->headers |= ROCE_H_ATOMICETH;
		break;
	default: {
		bool is_send = w->wr.opcode == RC_WR_SEND || w->wr.opcode == RC_WR_SEND_IMM;
		bool imm = w->wr.opcode == RC_WR_SEND_IMM || w->wr.opcode == RC_WR_WRITE_IMM;
		if (first && last)
			op = is_send ? (imm ? ROCE_OP_SEND_ONLY_IMM : ROCE_OP_SEND_ONLY)
				     : (imm ? ROCE_OP_WRITE_ONLY_IMM : ROCE_OP_WRITE_ONLY);
		else if (first)
			op = is_send ? ROCE_OP_SEND_FIRST : ROCE_OP_WRITE_FIRST;
		else if (last)
			op = is_send ? (imm ? ROCE_OP_SEND_LAST_IMM : ROCE_OP_SEND_LAST)
				     : (imm ? ROCE_OP_WRITE_LAST_IMM : ROCE_OP_WRITE_LAST);
		else
			op = is_send ? ROCE_OP_SEND_MIDDLE : ROCE_OP_WRITE_MIDDLE;
		pkt_init(qp, out, op);
		out->payload_len = last ? w->wr.length_bytes - qp->tx_off * mtu : mtu;
		if (w->wr.length_bytes == 0)
			out->payload_len = 0;
		if (!is_send && first) {
			out->reth_va = w->wr.remote_va;
			out->reth_rkey = w->wr.rkey;
			out->reth_dma_len = w->wr.length_bytes;
			out->headers |= ROCE_H_RETH;
		}
		if (imm && last) {
			out->imm_data = w->wr.imm_data;
			out->headers |= ROCE_H_IMMDT;
		}
		if (is_send && last)
			out->flags |= ROCE_F_SOLICITED;
		break;
	}
	}
	out->psn = psn;
	if (qp->cfg.service == RC_SVC_UD) {
		out->dest_qp = w->wr.ud_dest_qpn ? w->wr.ud_dest_qpn : qp->cfg.remote_qpn;
		out->deth_qkey = qp->cfg.qkey;
		out->deth_src_qp = qp->cfg.local_qpn;
		out->headers |= ROCE_H_DETH;
	}
	bool retx = is_rc(qp) && psn_before(psn, qp->max_psn_sent);
	if (is_rc(qp)) {
		qp->pkts_since_ackreq++;
		if (last || qp->pkts_since_ackreq >= qp->cfg.ackreq_every_pkts) {
			out->flags |= ROCE_F_ACK_REQ;
			qp->pkts_since_ackreq = 0;
		}
	}
	uint32_t end = psn_add(psn, n_psns_sent);
	if (psn_after(end, qp->max_psn_sent) || !is_rc(qp))
		qp->max_psn_sent = end;
	qp->next_psn = end;
	qp->tx_off += n_psns_sent;
	if (qp->tx_off >= w->n_psns) {
		qp->tx_wqe++;
		qp->tx_off = 0;
	}
	qp->stats.req_packets++;
	qp->stats.req_bytes += out->payload_len;
	if (retx)
		qp->stats.retransmitted_packets++;
	bool after_timeout = retx && qp->timeout_retx_pending;
	qp->timeout_retx_pending = false;
	if (is_rc(qp)) {
		if (!qp->timer_deadline_ns)
			qp->timer_deadline_ns = now + qp->cfg.ack_timeout_ns;
	} else if (last) {
		/* UC/UD complete once the last packet is on the wire. */
		qp->una_psn = end;
		complete_head(qp, RC_WC_SUCCESS);
	}
	pace(qp, now, out->payload_len);
	if (info) {
		info->kind = retx ? RC_TX_RETRANSMISSION : RC_TX_REQUEST;
		info->wire_payload_bytes = out->payload_len;
		info->after_timeout = after_timeout;
	}
}

int rc_next_packet(struct rc_qp *qp, uint64_t now_ns, struct roce_pkt *out,
		   struct rc_tx_info *info)
{
	uint64_t when;

	if (now_ns > qp->current_time_ns)
		qp->current_time_ns = now_ns;
	now_ns = qp->current_time_ns;
	/* Fast path for an idle QP end: nothing queued in either role and no timer due. */
	if (!qp->cnp_pending && qp->resp_head == qp->resp_tail && qp->tx_wqe == qp->sq_tail &&
	    (!qp->timer_deadline_ns || now_ns < qp->timer_deadline_ns))
		return 0;
	fire_timers(qp, now_ns);
	if (qp->error)
		return 0;
	if (info)
		memset(info, 0, sizeof(*info));
	dcqcn_update(qp, now_ns);
	if (qp->cnp_pending) {
		qp->cnp_pending = false;
		memset(out, 0, sizeof(*out));
		out->opcode = ROCE_OPCODE_CNP;
		out->transport = ROCE_TR_CNP;
		out->roce_version = 2;
		out->udp_dport = ROCE_V2_UDP_PORT;
		out->pkey = qp->cfg.pkey;
		out->becn = 1;
		out->dest_qp = qp->cnp_dest_qpn;
		out->headers = ROCE_H_BTH;
		qp->stats.cnps_sent++;
		if (info) {
			info->kind = RC_TX_CNP;
			info->wire_payload_bytes = 0;
		}
		return 1;
	}
	if (response_ready(qp, now_ns, &when)) {
		emit_response(qp, now_ns, out, info);
		return 1;
	}
	if (request_ready(qp, now_ns, &when)) {
		emit_request(qp, now_ns, out, info);
		return 1;
	}
	return 0;
}

uint64_t rc_next_event_ns(const struct rc_qp *qp)
{
	uint64_t t = UINT64_MAX, w;

	if (qp->error)
		return UINT64_MAX;
	if (qp->cnp_pending)
		return qp->current_time_ns;
	response_ready(qp, 0, &w);
	if (w < t)
		t = w;
	request_ready(qp, 0, &w);
	if (w < t)
		t = w;
	if (qp->timer_deadline_ns && qp->timer_deadline_ns < t)
		t = qp->timer_deadline_ns;
	return t;
}
