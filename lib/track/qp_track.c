/* qp_track.c: the per-QP request/ACK state machine and the tracker's entry points (no I/O; see qp_track.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/decode/psn.h"
#include "lib/track/qp_track_int.h"
#include "lib/util/util.h"

/* ---- events ---- */

static void emit_sample(struct qp_tracker *t, struct qp_flow *r, uint8_t kind, uint64_t ts, uint64_t from_ns,
			uint32_t psn)
{
	struct qp_latency_sample s;
	uint64_t ns;

	if (ts < from_ns) {
		r->st.ts_backwards++;
		return;
	}
	ns = ts - from_ns;
	if (!r->lat || r->lat == t->no_samples) {
		r->lat = calloc(QP_SAMPLE_KINDS, sizeof(*r->lat)); /* flows without samples: none */
		for (int k = 0; r->lat && k < QP_SAMPLE_KINDS; k++)
			r->lat[k].mem = &t->mem;
	}
	if (r->lat)
		qp_sample_add(t, &r->lat[kind], ns);
	else
		t->tot.alloc_failures++; /* the sink still gets the sample */
	if (kind == QP_SAMPLE_ACK)
		flow_window_sample(t, r, ts, ns);
	if (t->cfg.sink && t->cfg.sink->latency) {
		s.flow_id = r->st.id;
		s.ts_ns = ts;
		s.latency_ns = ns;
		s.psn = psn;
		s.kind = kind;
		t->cfg.sink->latency(t->cfg.sink->ctx, &s);
	}
}

/* ---- opcode classes ---- */

static inline int op_is_request(uint8_t op)
{
	return op <= ROCE_OP_READ_REQUEST || op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD ||
	       op == ROCE_OP_SEND_LAST_INV || op == ROCE_OP_SEND_ONLY_INV;
}

static inline int op_is_response(uint8_t op)
{
	return op >= ROCE_OP_READ_RESP_FIRST && op <= ROCE_OP_ATOMIC_ACK;
}

static inline int op_starts_message(uint8_t op)
{
	return op == ROCE_OP_SEND_FIRST || op == ROCE_OP_WRITE_FIRST || op == ROCE_OP_SEND_ONLY ||
	       op == ROCE_OP_SEND_ONLY_IMM || op == ROCE_OP_WRITE_ONLY || op == ROCE_OP_WRITE_ONLY_IMM ||
	       op == ROCE_OP_READ_REQUEST || op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD ||
	       op == ROCE_OP_SEND_ONLY_INV;
}

static inline int op_ends_message(uint8_t op)
{
	return op == ROCE_OP_SEND_LAST || op == ROCE_OP_SEND_LAST_IMM || op == ROCE_OP_SEND_ONLY ||
	       op == ROCE_OP_SEND_ONLY_IMM || op == ROCE_OP_WRITE_LAST || op == ROCE_OP_WRITE_LAST_IMM ||
	       op == ROCE_OP_WRITE_ONLY || op == ROCE_OP_WRITE_ONLY_IMM || op == ROCE_OP_READ_REQUEST ||
	       op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD || op == ROCE_OP_SEND_LAST_INV ||
	       op == ROCE_OP_SEND_ONLY_INV;
}

static inline int tr_acked(uint8_t transport)
{
	return transport == ROCE_TR_RC || transport == ROCE_TR_XRC;
}

/* ---- requests ---- */

/*
 * Acknowledge PSNs snd_una..psn at ts (at most the last ring's length of them); a message whose
 * last packet is acknowledged completes. Visits only the outstanding slots in that range: a
 * slot there holding another PSN (a ring's length or more away) leaves the outstanding set.
 */
static void ack_through(struct qp_tracker *t, struct qp_flow *r, uint32_t psn, uint64_t ts)
{
	int32_t d;
	uint32_t n, cap, p, from;

	if (!r->have_req)
		return;
	d = psn_diff(psn, r->snd_una);
	if (d < 0)
		return;
	if (psn_diff(psn, r->snd_nxt) >= 0) {
		/* Beyond what was seen sent: a READ response span, or requests the capture missed. */
		if (d > (int32_t)t->cfg.max_outstanding)
			return;
		r->snd_nxt = psn_add(psn, 1);
	}
	n = (uint32_t)d + 1;
	cap = r->ring_mask ? r->ring_mask + 1 : 0;
	p = r->snd_una;
	if (n > cap) {
		p = psn_add(r->snd_una, n - cap);
		n = cap;
	}
	from = p & r->ring_mask;
	for (uint32_t i = 0; (i += psn_ring_next(r, PSN_SET_OUTSTANDING, (from + i) & r->ring_mask, n - i)) < n;
	     i++) {
		struct psn_slot *s = &r->ring[(from + i) & r->ring_mask];

		t->tot.psn_slots_visited++;
		if (s->psn != psn_add(p, i)) {
			s->flags |= SLOT_LOST;
		} else {
			s->flags |= SLOT_ACKED;
			if (s->flags & SLOT_MSG_LAST)
				emit_sample(t, r, QP_SAMPLE_COMPLETION, ts, psn_slot_u(r, s), s->psn);
		}
		psn_ring_sync(r, s);
	}
	r->snd_una = psn_add(psn, 1);
	r->read_gap_resent = 0;
	if (r->nak_pending && psn_diff(r->nak_psn, psn) <= 0)
		r->nak_pending = 0;
}

static void read_span_fill(struct qp_tracker *t, struct qp_flow *f, uint32_t from, uint32_t to);

/* A READ at psn for len bytes takes one PSN per response packet: mark them sent. */
static void read_span_set(struct qp_tracker *t, struct qp_flow *f, uint32_t psn, uint32_t len)
{
	uint32_t n = f->mtu_bytes ? (len + f->mtu_bytes - 1) / f->mtu_bytes : 1;
	uint32_t end;

	if (n <= 1)
		return;
	if (n > t->cfg.max_outstanding)
		n = t->cfg.max_outstanding;
	end = psn_add(psn, n);
	if (psn_diff(end, f->snd_nxt) > 0)
		f->snd_nxt = end;
	read_span_fill(t, f, psn_add(psn, 1), end);
}

static void new_transmission(struct qp_tracker *t, struct qp_flow *f, const struct roce_pkt *pkt, uint8_t op,
			     uint32_t psn, struct flow_window *w)
{
	struct psn_slot *s = psn_ring_slot_new(t, f, psn);
	uint64_t ts = pkt->ts_ns;

	if (op_starts_message(op))
		f->cur_msg_first_ns = ts;
	if (s) {
		s->first_tx_ns = ts;
		s->tx_count = 1;
		s->opcode = pkt->opcode;
		if (op == ROCE_OP_READ_REQUEST) {
			s->flags |= SLOT_READ;
			psn_slot_set_u(f, s, pkt->reth_dma_len);
		} else if (op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD) {
			s->flags |= SLOT_ATOMIC;
		}
		if (op_ends_message(op) && op != ROCE_OP_READ_REQUEST) {
			s->flags |= SLOT_MSG_LAST;
			psn_slot_set_u(f, s, f->cur_msg_first_ns ? f->cur_msg_first_ns : ts);
		}
		psn_ring_sync(f, s);
	}
	f->last_was_read = op == ROCE_OP_READ_REQUEST;
	f->st.first_transmissions++;
	if (op == ROCE_OP_READ_REQUEST && f->mtu_bytes)
		read_span_set(t, f, psn, pkt->reth_dma_len);
	w->goodput_bytes += pkt->payload_len;
	f->st.goodput_bytes += pkt->payload_len;
	f->last_activity_ns = ts;
}

/*
 * Where the capture point sits for requester flow r: 1 nearer the responder (its requests
 * arrive with a lower TTL than packets the other way leave with, e.g. a capture on the
 * responder's host: it does not see what the requester saw), 0 not nearer it, -1 not known
 * yet (nothing seen the other way between the two hosts in this trace).
 */
static int capture_nearer_responder(struct qp_tracker *t, const struct qp_flow *r)
{
	const struct qp_flow *b = peer_of(t, r);
	uint8_t back_ttl = b ? b->ttl : 0;

	for (uint32_t v = *flow_table_hp_slot(t, r->dst_ip, r->src_ip, r->vantage); !back_ttl && v;
	     v = flow_at(t, v - 1)->hp_next)
		back_ttl = flow_at(t, v - 1)->ttl; /* same two hosts: same hop count */
	if (!r->ttl || !back_ttl)
		return -1;
	return r->ttl < back_ttl;
}

static void retransmission(struct qp_tracker *t, struct qp_flow *f, const struct roce_pkt *pkt, uint32_t psn,
			   struct psn_slot *s, struct flow_window *w)
{
	struct qp_retx_event e = { 0 };
	uint64_t ts = pkt->ts_ns;
	uint8_t cause;
	int side = 0;

	e.run_start = 1;
	if (f->nak_pending && psn_diff(psn, f->nak_psn) >= 0) {
		cause = f->nak_kind == QP_NAK_RNR ? QP_RETX_RNR : QP_RETX_NAK;
		e.trigger_ns = f->nak_ns;
		emit_sample(t, f, QP_SAMPLE_NAK_TO_RETX, ts, f->nak_ns, psn);
		f->nak_pending = 0;
	} else if (f->read_gap_pending && psn == f->read_gap_psn) {
		cause = QP_RETX_READ_GAP;
		e.trigger_ns = f->last_activity_ns;
		f->read_gap_pending = 0; /* the next out-of-sequence response re-arms it */
		f->read_gap_resent = 1;
		f->read_gap_resent_psn = psn;
		f->st.read_gaps++;
		w->read_gaps++;
	} else if (f->in_episode && (psn == f->episode_next_psn ||
				      (psn_diff(psn, f->episode_next_psn) > 0 && psn_diff(psn, f->snd_una) <= 0))) {
		/* go-back-N continues (past PSNs an ACK covered meanwhile) */
		cause = f->episode_cause;
		e.run_start = f->in_episode == 2; /* the run began with a PSN never seen before */
	} else if (psn_diff(psn, f->snd_una) <= 0 && (side = capture_nearer_responder(t, f)) == 1) {
		/*
		 * Seen from the responder's side, a restart with no NAK may be the requester's timer
		 * or its answer to a response lost after this capture point: not decidable here.
		 */
		cause = QP_RETX_UNKNOWN;
	} else if (psn_diff(psn, f->snd_una) <= 0) {
		/* Restart at the oldest unacknowledged PSN with no NAK: the requester timed out. */
		cause = QP_RETX_TIMEOUT;
		e.trigger_ns = f->last_activity_ns;
		if (f->last_activity_ns)
			emit_sample(t, f, QP_SAMPLE_TIMEOUT_GAP, ts, f->last_activity_ns, psn);
		f->st.timeouts++;
		w->timeouts++;
		f->read_gap_resent = 0;
		if (side < 0)
			f->timeouts_unsure++; /* snapshots drop it if the capture proves responder-side */
	} else {
		cause = QP_RETX_UNKNOWN;
	}
	f->in_episode = 1;
	f->episode_cause = cause;
	f->episode_next_psn = psn_add(psn, 1);
	if ((pkt->opcode & 0x1f) == ROCE_OP_READ_REQUEST && f->mtu_bytes && pkt->reth_dma_len > f->mtu_bytes)
		f->episode_next_psn = psn_add(psn, (pkt->reth_dma_len + f->mtu_bytes - 1) / f->mtu_bytes);
	f->st.retransmitted_packets++;
	w->retransmitted_packets++;
	f->last_was_read = (pkt->opcode & 0x1f) == ROCE_OP_READ_REQUEST;

	if (!s) {
		/* Never saw its first transmission: remember it so Karn's rule excludes it. */
		s = psn_ring_slot_new(t, f, psn);
		if (s) {
			s->tx_count = 1;
			s->opcode = pkt->opcode;
			if ((pkt->opcode & 0x1f) == ROCE_OP_READ_REQUEST)
				s->flags |= SLOT_READ;
			if (psn_diff(psn, f->snd_una) < 0)
				s->flags |= SLOT_ACKED;
			psn_ring_sync(f, s);
		}
	}
	if (s && (pkt->opcode & 0x1f) == ROCE_OP_READ_REQUEST && (s->flags & SLOT_READ_SPAN)) {
		/* A READ re-issued for the rest of a response: answered like a READ from here. */
		s->flags = (uint8_t)((s->flags & ~(SLOT_READ_SPAN | SLOT_ACKED | SLOT_LOST)) | SLOT_READ);
		psn_slot_set_u(f, s, pkt->reth_dma_len);
		psn_ring_sync(f, s);
	}
	if (s) {
		e.first_tx_ns = s->first_tx_ns;
		e.prev_tx_ns = psn_slot_last_tx_ns(f, s);
		if (s->tx_count < UINT8_MAX)
			s->tx_count++;
		psn_slot_ext(f, s)->last_tx_ns = ts;
		e.tx_count = s->tx_count;
	}
	f->last_activity_ns = ts;
	if (t->cfg.sink && t->cfg.sink->retransmission) {
		e.flow_id = f->st.id;
		e.ts_ns = ts;
		e.psn = psn;
		e.cause = cause;
		e.opcode = pkt->opcode;
		t->cfg.sink->retransmission(t->cfg.sink->ctx, &e);
	}
}

static inline uint64_t abs_diff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* PSNs [from, to) were consumed by the READ before them (one per response packet). */
static void read_span_fill(struct qp_tracker *t, struct qp_flow *f, uint32_t from, uint32_t to)
{
	struct psn_slot *read = psn_ring_find(f, psn_add(from, PSN_MASK));
	uint64_t tx = read ? read->first_tx_ns : 0;
	uint32_t n = (uint32_t)psn_diff(to, from);

	if (n > t->cfg.max_outstanding)
		return;
	for (uint32_t p = from; p != to; p = psn_add(p, 1)) {
		struct psn_slot *s = psn_ring_find(f, p);

		t->tot.psn_slots_visited++;
		if (s)
			continue;
		s = psn_ring_slot_new(t, f, p);
		if (!s)
			return;
		s->flags |= SLOT_READ_SPAN;
		s->first_tx_ns = tx; /* and so msg_first_ns (psn_slot_u) */
		s->tx_count = 1;
		s->opcode = ROCE_OPCODE(ROCE_TR_RC, ROCE_OP_READ_REQUEST);
		if (psn_diff(p, f->snd_una) < 0)
			s->flags |= SLOT_ACKED;
		psn_ring_sync(f, s);
	}
}

static void on_request(struct qp_tracker *t, struct qp_flow *f, const struct roce_pkt *pkt, uint8_t op,
		       struct flow_window *w)
{
	uint32_t psn = pkt->psn & PSN_MASK;
	struct psn_slot *s;
	int32_t d;
	int nak_covers;

	if (!f->have_req) {
		f->have_req = 1;
		f->snd_una = f->snd_nxt = f->seen_lo = psn;
	}
	if (psn_diff(f->snd_nxt, f->seen_lo) > (1 << 22))
		f->seen_lo = psn_add(f->snd_nxt, PSN_MASK + 1 - (1 << 22)); /* stay within psn_diff's range */
	if ((op == ROCE_OP_SEND_FIRST || op == ROCE_OP_SEND_MIDDLE || op == ROCE_OP_WRITE_FIRST ||
	     op == ROCE_OP_WRITE_MIDDLE) && pkt->payload_len > f->mtu_bytes)
		f->mtu_bytes = pkt->payload_len;
	d = psn_diff(psn, f->snd_nxt);
	if (d >= 0 && f->read_gap_pending && psn == f->read_gap_psn) {
		d = -1; /* re-issued READ for the missing responses */
	}
	if (d >= 0) {
		if (d > 0 && f->last_was_read && !f->mtu_bytes)
			read_span_fill(t, f, f->snd_nxt, psn); /* the READ's own span (length unknown) */
		else if (d > 0)
			f->st.psn_gaps += (uint32_t)d;
		f->snd_nxt = psn_add(psn, 1);
		f->in_episode = 0;
		new_transmission(t, f, pkt, op, psn, w);
		return;
	}
	nak_covers = f->nak_pending && psn_diff(psn, f->nak_psn) >= 0;
	s = psn_ring_find(f, psn);
	if (!s && psn_diff(psn, f->snd_una) < 0 && psn_diff(psn, f->seen_lo) >= 0) {
		/* Acknowledged, so this trace saw it (or the capture lost it): its slot was reused. */
		retransmission(t, f, pkt, psn, NULL, w);
		return;
	}
	if (!s) {
		/*
		 * A PSN this trace never saw: for this vantage it is a first transmission (the
		 * original was lost before it, or the capture missed it). When a NAK asked for it,
		 * it still continues that go-back-N episode.
		 */
		if (psn_diff(psn, f->seen_lo) < 0 && psn_diff(f->seen_lo, psn) <= (int32_t)t->cfg.max_outstanding) {
			/* Older than anything seen (it was lost before this capture point the first
			 * time): outstanding from now on, like the PSNs after it. */
			f->seen_lo = psn;
			if (psn_diff(psn, f->snd_una) < 0)
				f->snd_una = psn;
		}
		if (nak_covers || (f->in_episode && psn == f->episode_next_psn)) {
			/* 2: a run whose first resend this capture never saw the original of */
			f->in_episode = nak_covers ? 2 : f->in_episode;
			if (nak_covers) {
				f->episode_cause = f->nak_kind == QP_NAK_RNR ? QP_RETX_RNR : QP_RETX_NAK;
				emit_sample(t, f, QP_SAMPLE_NAK_TO_RETX, pkt->ts_ns, f->nak_ns, psn);
				f->nak_pending = 0;
			}
			f->episode_next_psn = psn_add(psn, 1);
		} else {
			f->st.out_of_order++;
		}
		new_transmission(t, f, pkt, op, psn, w);
		return;
	}
	retransmission(t, f, pkt, psn, s, w);
}

/* ---- responses ---- */

uint64_t rnr_timer_ns(uint8_t syndrome)
{
	/* IBA table 45, microseconds x100 to keep integers. */
	static const uint32_t timer_10us[32] = {
		65536, 1,    2,    3,    4,    6,    8,    12,   16,    24,    32,
		48,    64,   96,   128,  192,  256,  384,  512,  768,   1024,  1536,
		2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
	};
	return (uint64_t)timer_10us[syndrome & 0x1f] * 10000ull;
}

static int first_unanswered_read(struct qp_tracker *t, struct qp_flow *r, uint32_t psn, uint32_t *out);

static void on_nak(struct qp_tracker *t, struct qp_flow *b, struct qp_flow *r, const struct roce_pkt *pkt)
{
	uint8_t syn = pkt->aeth_syndrome, kind;
	uint32_t psn = pkt->psn & PSN_MASK;
	struct qp_flow *tg = r ? r : b;
	struct flow_window *w = flow_window_at(t, tg, pkt->ts_ns);
	struct qp_nak_event e = { 0 };

	if (AETH_TYPE(syn) == AETH_RNR_NAK) {
		kind = QP_NAK_RNR;
		e.rnr_timer_ns = rnr_timer_ns(syn);
		tg->st.rnr_naks++;
		tg->st.rnr_wait_ns += e.rnr_timer_ns;
		if (!r) {
			b->pend.rnr_naks++;
			b->pend.rnr_wait_ns += e.rnr_timer_ns;
		}
		t->tot.rnr_naks++;
	} else if ((syn & 0x1f) == NAK_PSN_SEQ_ERROR) {
		kind = QP_NAK_PSN_SEQ;
		tg->st.naks_psn_seq++;
		if (!r)
			b->pend.naks_psn_seq++;
	} else {
		kind = QP_NAK_OTHER;
		tg->st.naks_other++;
		if (!r)
			b->pend.naks_other++;
	}
	t->tot.naks++;
	b->st.naks_total++;
	w->naks++;
	if (r && kind != QP_NAK_OTHER) {
		/*
		 * Both name the PSN to resend and acknowledge everything before it, except a READ
		 * or atomic still unanswered: its responses were lost (they would have come before
		 * the NAK), so the requester resends from there.
		 */
		uint32_t resend = psn;

		first_unanswered_read(t, r, psn, &resend);
		ack_through(t, r, psn_add(resend, PSN_MASK), pkt->ts_ns);
		r->nak_pending = 1;
		r->nak_psn = resend;
		r->nak_ns = pkt->ts_ns;
		r->nak_kind = kind;
		r->in_episode = 0;
	}
	if (r)
		r->last_activity_ns = pkt->ts_ns;
	if (t->cfg.sink && t->cfg.sink->nak) {
		e.flow_id = r ? r->st.id : 0;
		e.responder_flow_id = b->st.id;
		e.ts_ns = pkt->ts_ns;
		e.psn = psn;
		e.msn = pkt->aeth_msn;
		e.syndrome = syn;
		e.kind = kind;
		t->cfg.sink->nak(t->cfg.sink->ctx, &e);
	}
}

/*
 * The first READ (or PSN a READ consumed) or atomic from snd_una up to psn that is still
 * unanswered: they need their own responses, so a response for a later PSN means those were
 * lost and the requester will ask again. Bounded scan.
 */
static int first_unanswered_read(struct qp_tracker *t, struct qp_flow *r, uint32_t psn, uint32_t *out)
{
	uint32_t n = (uint32_t)psn_diff(psn, r->snd_una), from = r->snd_una & r->ring_mask;

	if (n > 4096)
		n = 4096;
	if (n > r->ring_mask + 1u)
		n = r->ring_mask + 1u;
	for (uint32_t i = 0; (i += psn_ring_next(r, PSN_SET_NEEDS_RESPONSE, (from + i) & r->ring_mask, n - i)) < n;
	     i++) {
		struct psn_slot *s = &r->ring[(from + i) & r->ring_mask];

		t->tot.psn_slots_visited++;
		if (s->psn == psn_add(r->snd_una, i)) {
			*out = s->psn;
			return 1;
		}
		s->flags |= SLOT_LOST; /* a ring's length or more from snd_una */
		psn_ring_sync(r, s);
	}
	return 0;
}

/* An out-of-sequence READ response: the requester drops it and re-issues from the gap. */
static void read_gap(struct qp_tracker *t, struct qp_flow *r, uint32_t psn)
{
	uint32_t gap = r->snd_una;

	if (r->read_active && psn_diff(psn, r->read_next) > 0)
		gap = r->read_next;
	else
		first_unanswered_read(t, r, psn, &gap);
	/*
	 * A requester re-issues once per gap: responses still in flight that show the same gap
	 * after the re-issue ask for nothing more; only progress or its timer re-arms it.
	 */
	if (r->read_gap_resent && gap == r->read_gap_resent_psn)
		return;
	r->read_gap_pending = 1;
	r->read_gap_psn = gap;
}

/*
 * A timed ACK's mark against the flow's unmarked round trips on either side of it: a
 * congested queue marks the packets it holds, so its marked ACKs are slower than both; a
 * mark set at random (a faulty ECN marker) is the quickest of the three a third of the time.
 * One marked ACK waits for its next unmarked neighbour at a time; others meanwhile pass.
 */
static void mark_against_queue(struct qp_flow *b, bool marked, uint64_t ts, uint64_t from_ns)
{
	uint64_t ns = ts >= from_ns ? ts - from_ns : 0;
	uint32_t rtt = ns > UINT32_MAX ? UINT32_MAX : ns ? (uint32_t)ns : 1;

	if (!marked) {
		if (b->ce_pending_ns) {
			b->st.ce_acks_timed++;
			b->st.ce_acks_fast += b->ce_pending_ns <= b->clear_ack_ns && b->ce_pending_ns <= rtt;
			b->ce_pending_ns = 0;
		}
		b->clear_ack_ns = rtt;
	} else if (b->clear_ack_ns && !b->ce_pending_ns) {
		b->ce_pending_ns = rtt;
	}
}

/* A READ answered in full: its record for read_queue_fill(), up to READ_MSGS_MAX. */
static void read_msg_add(struct qp_tracker *t, const struct qp_flow *r, uint64_t last_ns)
{
	if (t->n_read_msgs == t->cap_read_msgs) {
		size_t cap = t->cap_read_msgs ? 2 * t->cap_read_msgs : 256;
		struct read_msg *m;

		if (t->cap_read_msgs >= READ_MSGS_MAX)
			return;
		m = realloc(t->read_msgs, cap * sizeof(*m));
		if (!m) {
			t->tot.alloc_failures++;
			return;
		}
		t->read_msgs = m;
		t->cap_read_msgs = cap;
	}
	t->read_msgs[t->n_read_msgs++] = (struct read_msg){ .arr_ns = r->read_tx_ns, .first_ns = r->read_first_ns,
							    .last_ns = last_ns, .flow_id = r->st.id };
}

static void on_response(struct qp_tracker *t, struct qp_flow *b, const struct roce_pkt *pkt, uint8_t op,
			struct flow_window *w)
{
	uint32_t psn = pkt->psn & PSN_MASK;
	uint64_t ts = pkt->ts_ns;
	uint8_t syn = (pkt->headers & ROCE_H_AETH) ? pkt->aeth_syndrome : 0;
	struct qp_flow *r;
	struct psn_slot *s;

	r = peer_of(t, b);
	if (!r)
		r = qp_pair_by_psn(t, b, psn);

	if (op == ROCE_OP_ACK || op == ROCE_OP_ATOMIC_ACK) {
		if ((pkt->headers & ROCE_H_AETH) &&
		    (AETH_TYPE(syn) == AETH_NAK || AETH_TYPE(syn) == AETH_RNR_NAK)) {
			on_nak(t, b, r, pkt);
			return;
		}
		if (!r)
			return;
		r->last_activity_ns = ts;
		s = psn_ring_find(r, psn);
		if (s && !(s->flags & SLOT_NAMED)) {
			/* The first ACK naming a PSN sent exactly once gives a sample (Karn). */
			if (s->tx_count == 1 && !(s->flags & SLOT_READ_SPAN)) {
				emit_sample(t, r, QP_SAMPLE_ACK, ts, s->first_tx_ns, psn);
				mark_against_queue(b, pkt->ecn == 3, ts, s->first_tx_ns);
				if (op == ROCE_OP_ATOMIC_ACK)
					emit_sample(t, r, QP_SAMPLE_ATOMIC, ts, s->first_tx_ns, psn);
			}
			s->flags |= SLOT_NAMED;
		}
		if (psn_diff(psn, r->snd_una) < 0) {
			r->st.dup_acks++;
			return;
		}
		{
			uint32_t gap;

			if (first_unanswered_read(t, r, psn, &gap)) {
				read_gap(t, r, psn); /* a READ or atomic response before it is missing */
				return;
			}
		}
		ack_through(t, r, psn, ts);
		return;
	}
	/* READ responses: one PSN each, from the request's PSN on, in order. */
	if (!r) {
		w->goodput_bytes += pkt->payload_len;
		b->st.goodput_bytes += pkt->payload_len;
		return;
	}
	r->last_activity_ns = ts;
	if (psn_diff(psn, r->snd_una) < 0)
		return; /* a repeated response for a PSN already answered */
	if (op == ROCE_OP_READ_RESP_FIRST || op == ROCE_OP_READ_RESP_ONLY) {
		uint32_t expect;

		s = psn_ring_find(r, psn);
		if (!s || !(s->flags & SLOT_READ) || (s->flags & SLOT_ACKED) ||
		    (r->read_active && psn != r->read_next) || first_unanswered_read(t, r, psn, &expect)) {
			read_gap(t, r, psn);
			return;
		}
		r->read_active = 1;
		r->read_psn = psn;
		r->read_next = psn;
		r->read_gap_pending = 0;
		r->read_tx_ns = s->first_tx_ns;
		r->read_first_ns = ts;
		r->read_msg_first_ns = (s->flags & SLOT_READ_SPAN) ? psn_slot_u(r, s) : s->first_tx_ns;
		r->read_karn_ok = s->tx_count == 1 && !(s->flags & SLOT_READ_SPAN);
		if (r->read_karn_ok)
			emit_sample(t, r, QP_SAMPLE_READ_FIRST, ts, s->first_tx_ns, psn);
		if (op == ROCE_OP_READ_RESP_FIRST) {
			/* The PSNs this READ consumed, also when it was sent before the MTU was known. */
			if (pkt->payload_len > r->mtu_bytes)
				r->mtu_bytes = pkt->payload_len;
			read_span_set(t, r, psn, (uint32_t)psn_slot_u(r, s)); /* existing slots kept */
		}
	} else if (!r->read_active || psn != r->read_next) {
		read_gap(t, r, psn);
		return;
	}
	w->goodput_bytes += pkt->payload_len;
	b->st.goodput_bytes += pkt->payload_len;
	r->read_next = psn_add(psn, 1);
	if (!psn_ring_find(r, psn))
		read_span_fill(t, r, psn, psn_add(psn, 1));
	if (op == ROCE_OP_READ_RESP_LAST || op == ROCE_OP_READ_RESP_ONLY) {
		struct psn_slot *rs = psn_ring_find(r, r->read_psn);

		if (r->read_karn_ok) {
			emit_sample(t, r, QP_SAMPLE_READ_LAST, ts, r->read_tx_ns, r->read_psn);
			read_msg_add(t, r, ts);
		}
		if (rs)
			rs->flags &= (uint8_t)~SLOT_MSG_LAST; /* completed here, not by ack_through */
		emit_sample(t, r, QP_SAMPLE_COMPLETION, ts, r->read_msg_first_ns, r->read_psn);
		r->read_active = 0;
	}
	ack_through(t, r, psn, ts);
}

/* ---- CNPs, CM, datagrams ---- */

static void on_cnp(struct qp_tracker *t, struct qp_flow *c, const struct roce_pkt *pkt)
{
	struct qp_flow *r = peer_of(t, c);
	struct qp_cnp_event e;

	if (!r) {
		/*
		 * Unpaired: the flow slowed goes the other way at this vantage. A flow whose source
		 * QPN (DETH, CM) is the CNP's destination QPN is it exactly; otherwise the only
		 * candidate, or the only one with the same UDP source port (both directions of a
		 * QP share it).
		 */
		uint32_t *hs = flow_table_hp_slot(t, c->dst_ip, c->src_ip, c->vantage);
		struct qp_flow *any = NULL, *same_port = NULL, *exact = NULL;
		int n_any = 0, n_port = 0;

		for (uint32_t v = *hs; v; v = flow_at(t, v - 1)->hp_next) {
			struct qp_flow *x = flow_at(t, v - 1);

			if (x->st.src_qpn == c->dst_qpn && (!x->peer || x->peer == flow_table_index(t, c) + 1)) {
				exact = x;
				break;
			}
			if (x->peer || (x->st.src_qpn && x->st.src_qpn != c->dst_qpn))
				continue;
			any = x;
			n_any++;
			if (x->st.udp_sport == c->st.udp_sport) {
				same_port = x;
				n_port++;
			}
		}
		r = exact ? exact : n_any == 1 ? any : n_port == 1 ? same_port : NULL;
		if (r)
			qp_pair_flows(t, r, c, 0);
	}
	if (r) {
		r->st.cnps++;
		flow_window_at(t, r, pkt->ts_ns)->cnps++;
		if (!r->st.first_cnp_ns)
			r->st.first_cnp_ns = pkt->ts_ns;
		r->st.last_cnp_ns = pkt->ts_ns;
	} else {
		c->st.cnps++;
		c->pend.cnps++;
		flow_window_at(t, c, pkt->ts_ns)->cnps++;
	}
	t->tot.cnps++;
	if (t->cfg.sink && t->cfg.sink->cnp) {
		e.flow_id = r ? r->st.id : 0;
		e.cnp_flow_id = c->st.id;
		e.ts_ns = pkt->ts_ns;
		t->cfg.sink->cnp(t->cfg.sink->ctx, &e);
	}
}

/* CM REQ/REP name both QPNs: pair the two directions exactly. */
static int on_cm(struct qp_tracker *t, const struct roce_pkt *pkt, uint32_t vantage)
{
	struct qp_flow *f1, *f2;
	struct cm_req *q = NULL;

	if (pkt->cm_attr_id == CM_ATTR_REQ) {
		q = &t->cm_reqs[t->cm_next++ % CM_REQS];
		memcpy(q->src_ip, pkt->src_ip, 16);
		memcpy(q->dst_ip, pkt->dst_ip, 16);
		q->vantage = vantage;
		q->comm_id = pkt->cm_local_comm_id;
		q->qpn = pkt->cm_local_qpn & PSN_MASK;
		q->start_psn = pkt->cm_start_psn & PSN_MASK;
		q->used = 1;
		return 0;
	}
	if (pkt->cm_attr_id != CM_ATTR_REP)
		return 0;
	for (uint32_t i = 0; i < CM_REQS; i++) {
		struct cm_req *c = &t->cm_reqs[i];

		if (c->used && c->vantage == vantage && c->comm_id == pkt->cm_remote_comm_id &&
		    !memcmp(c->src_ip, pkt->dst_ip, 16) && !memcmp(c->dst_ip, pkt->src_ip, 16)) {
			q = c;
			break;
		}
	}
	if (!q)
		return 0;
	f1 = flow_table_get(t, q->src_ip, q->dst_ip, pkt->cm_local_qpn & PSN_MASK, vantage, 1);
	f2 = f1 ? flow_table_get(t, pkt->src_ip, pkt->dst_ip, q->qpn, vantage, 1) : NULL;
	if (!f1 || !f2)
		return -ENOMEM;
	f1->st.src_qpn = q->qpn;
	f1->start_psn = q->start_psn;
	f1->have_start_psn = 1;
	f2->st.src_qpn = pkt->cm_local_qpn & PSN_MASK;
	f2->start_psn = pkt->cm_start_psn & PSN_MASK;
	f2->have_start_psn = 1;
	qp_pair_flows(t, f1, f2, 1);
	q->used = 0;
	return 0;
}

/*
 * A mirror's copy: identical to the flow's previous packet (PSN, opcode, AETH syndrome, length)
 * and within dup_window_ns of it. A real resend of the same PSN back to back within that time
 * would need a NAK or timer faster than any NIC's.
 */
static int is_mirror_copy(struct qp_tracker *t, struct qp_flow *f, const struct roce_pkt *pkt, uint64_t prev_ts)
{
	uint8_t syn = (pkt->headers & ROCE_H_AETH) ? pkt->aeth_syndrome : 0;
	int copy = f->have_prev && f->prev_psn == (pkt->psn & PSN_MASK) && f->prev_opcode == pkt->opcode &&
		   f->prev_syndrome == syn && f->prev_len == pkt->orig_len &&
		   abs_diff(pkt->ts_ns, prev_ts) <= t->cfg.dup_window_ns;

	f->have_prev = 1;
	f->prev_psn = pkt->psn & PSN_MASK;
	f->prev_opcode = pkt->opcode;
	f->prev_syndrome = syn;
	f->prev_len = pkt->orig_len;
	return copy;
}

/* ---- the entry points ---- */

void qp_tracker_cfg_default(struct qp_tracker_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->window_ns = 1000000000ull;
	cfg->dup_window_ns = 0;
	cfg->max_outstanding = 65536;
	cfg->exact_samples = 65536;
	cfg->max_windows = 86400;
	cfg->split_vantage = true;
}

struct qp_tracker *qp_tracker_new(const struct qp_tracker_cfg *cfg)
{
	struct qp_tracker *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cfg = *cfg;
	if (!t->cfg.window_ns)
		t->cfg.window_ns = 1000000000ull;
	if (t->cfg.max_outstanding < 16)
		t->cfg.max_outstanding = 16;
	/* round max_outstanding down to a power of two */
	while (t->cfg.max_outstanding & (t->cfg.max_outstanding - 1))
		t->cfg.max_outstanding &= t->cfg.max_outstanding - 1;
	if (!t->cfg.exact_samples)
		t->cfg.exact_samples = 1;
	t->flow_slots = calloc(1024, sizeof(*t->flow_slots));
	t->hp_slots = calloc(1024, sizeof(*t->hp_slots));
	t->tmp = malloc(WIN_SAMPLES_CAP * sizeof(*t->tmp));
	if (!t->flow_slots || !t->hp_slots || !t->tmp) {
		qp_tracker_free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->flow_slots_mask = 1023;
	t->hp_slots_mask = 1023;
	return t;
}

/* One packet whose flow is f (found or created by the caller). */
static int tracker_add(struct qp_tracker *t, struct qp_flow *f, const struct roce_pkt *pkt, uint32_t vantage)
{
	uint32_t v = t->cfg.split_vantage ? vantage : 0, qpn = pkt->dest_qp & PSN_MASK;
	uint8_t tr = pkt->opcode >> 5, op = pkt->opcode & 0x1f;
	uint64_t ts = pkt->ts_ns, prev_ts;
	struct flow_window *w;

	if (!f)
		return -ENOMEM;
	if (v >= t->n_vantages)
		t->n_vantages = v + 1;
	if (!f->st.id) {
		uint32_t idx = flow_table_index(t, f);

		if (flow_table_assign_id(t, f, idx))
			return -ENOMEM;
		f->st.ip_version = pkt->ip_version;
		f->st.transport = pkt->transport;
		f->st.udp_sport = pkt->udp_sport;
		f->st.vantage = vantage;
		f->st.first_ns = ts;
		f->st.opcode_first = pkt->opcode;
		if (t->cfg.sink && t->cfg.sink->flow)
			t->cfg.sink->flow(t->cfg.sink->ctx, f->st.id);
	}
	if (t->tot.packets && ts < t->last_ts_ns)
		t->tot.ts_backwards++;
	prev_ts = f->st.packets ? f->last_ts_ns : 0;
	if (f->st.packets && ts < f->last_ts_ns)
		f->st.ts_backwards++;
	t->last_ts_ns = ts;
	f->last_ts_ns = ts;
	if (!t->tot.packets || ts < t->tot.first_ns)
		t->tot.first_ns = ts;
	if (ts > t->tot.last_ns)
		t->tot.last_ns = ts;
	t->tot.packets++;
	t->tot.bytes += pkt->orig_len;

	f->st.packets++;
	f->st.bytes += pkt->orig_len;
	if (ts < f->st.first_ns)
		f->st.first_ns = ts;
	if (ts > f->st.last_ns)
		f->st.last_ns = ts;
	w = flow_window_at(t, f, ts);
	w->packets++;
	w->bytes += pkt->orig_len;
	if (pkt->ttl && (!f->st.ttl_min || pkt->ttl < f->st.ttl_min))
		f->st.ttl_min = pkt->ttl;
	if (pkt->ttl > f->st.ttl_max)
		f->st.ttl_max = pkt->ttl;
	if (is_mirror_copy(t, f, pkt, prev_ts)) {
		/*
		 * The same packet seen twice (a duplicating mirror, a capture seeing both copies):
		 * counted as seen, but it marks, notifies or transmits nothing a second time
		 * (ECN, CNPs, datagrams, CM included).
		 */
		f->st.duplicates++;
		t->tot.duplicates++;
		return 0;
	}
	if (pkt->ecn == 3) {
		f->st.ecn_ce++;
		w->ecn_ce++;
		t->tot.ecn_ce++;
		if (!f->st.first_ce_ns)
			f->st.first_ce_ns = ts;
		f->st.last_ce_ns = ts;
	}
	if (pkt->flags & ROCE_F_CM)
		if (on_cm(t, pkt, v))
			return -ENOMEM;
	if (pkt->opcode == ROCE_OPCODE_CNP) {
		on_cnp(t, f, pkt);
		return 0;
	}
	if (pkt->transport != ROCE_TR_CNP && f->st.transport == ROCE_TR_CNP)
		f->st.transport = pkt->transport; /* CNPs do not say what the QP is */
	if ((pkt->headers & ROCE_H_DETH) && !f->peer) {
		/* UD: DETH names the source QP, so the reverse flow is known exactly. */
		struct qp_flow *g;

		if (!f->st.src_qpn)
			f->st.src_qpn = pkt->deth_src_qp & PSN_MASK;
		g = flow_table_get(t, pkt->dst_ip, pkt->src_ip, f->st.src_qpn, v, 0);
		if (g && !g->peer && (!g->st.src_qpn || g->st.src_qpn == qpn))
			qp_pair_flows(t, f, g, 0);
	}
	if (!tr_acked(tr)) {
		f->datagram = 1;
		f->st.first_transmissions++;
		w->goodput_bytes += pkt->payload_len;
		f->st.goodput_bytes += pkt->payload_len;
		return 0;
	}
	f->ttl = pkt->ttl;
	if (op_is_request(op)) {
		f->has_requests = 1;
		on_request(t, f, pkt, op, w);
	} else if (op_is_response(op)) {
		f->has_responses = 1;
		on_response(t, f, pkt, op, w);
	}
	return 0;
}

int qp_tracker_add(struct qp_tracker *t, const struct roce_pkt *pkt, uint32_t vantage)
{
	uint32_t v = t->cfg.split_vantage ? vantage : 0;

	return tracker_add(t, flow_table_get(t, pkt->src_ip, pkt->dst_ip, pkt->dest_qp & PSN_MASK, v, 1), pkt,
			   vantage);
}

/*
 * The batch is a software pipeline over the cache misses a big trace costs per packet (the
 * flow's hash slot, the flow, its ring slot): the slots of the whole batch are prefetched
 * first, a flow PF_FLOW packets ahead, its ring slot (or its peer's flow, then ring slot) after,
 * so the misses overlap instead of following one another. Packets are tracked in order, as by
 * qp_tracker_add(), so the results are the same.
 */
#define PF_FLOW 8
#define PF_NEXT 4
#define PF_RING 2

/* A response's requester flow: its PSNs, ring, sets and window (struct qp_flow's layout). */
static void prefetch_flow_lines(const struct qp_flow *f)
{
	__builtin_prefetch(&f->snd_una);
	__builtin_prefetch(&f->ring);
	__builtin_prefetch(&f->set_bits);
	__builtin_prefetch(&f->win_samples);
}

/*
 * PF_NEXT packets ahead, the flow is in cache: a request's ring slot (its own ring), or for a
 * response the requester's flow (its peer), whose ring slot follows PF_RING packets ahead.
 */
static void prefetch_next(const struct qp_tracker *t, const struct qp_flow *f, const struct roce_pkt *pkt)
{
	uint8_t op = pkt->opcode & 0x1f;
	const struct qp_flow *r;

	if (op_is_request(op)) {
		if (f->ring_mask)
			__builtin_prefetch(&f->ring[pkt->psn & f->ring_mask]);
	} else if (op_is_response(op) && (r = peer_of(t, f))) {
		prefetch_flow_lines(r);
	}
}

static void prefetch_peer_ring(const struct qp_tracker *t, const struct qp_flow *f, const struct roce_pkt *pkt)
{
	const struct qp_flow *r;

	if (op_is_response(pkt->opcode & 0x1f) && (r = peer_of(t, f)) && r->ring_mask)
		__builtin_prefetch(&r->ring[pkt->psn & r->ring_mask]);
}

int qp_tracker_add_batch(struct qp_tracker *t, const struct roce_pkt *pkts, const uint32_t *vantages, size_t n)
{
	uint64_t h[QP_BATCH_MAX];
	struct qp_flow *guess[QP_BATCH_MAX];
	int rc = 0;

	if (n > QP_BATCH_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		uint32_t v = t->cfg.split_vantage ? vantages[i] : 0;

		h[i] = flow_table_hash(pkts[i].src_ip, pkts[i].dst_ip, pkts[i].dest_qp & PSN_MASK, v);
		flow_table_prefetch_slot(t, h[i]);
		guess[i] = NULL;
	}
	t->defer_samples = true;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct roce_pkt *p = &pkts[i];
		uint32_t v = t->cfg.split_vantage ? vantages[i] : 0;

		if (i + PF_FLOW < n)
			guess[i + PF_FLOW] = flow_table_prefetch_flow(t, h[i + PF_FLOW]);
		if (i + PF_NEXT < n && guess[i + PF_NEXT])
			prefetch_next(t, guess[i + PF_NEXT], &pkts[i + PF_NEXT]);
		if (i + PF_RING < n && guess[i + PF_RING])
			prefetch_peer_ring(t, guess[i + PF_RING], &pkts[i + PF_RING]);
		rc = tracker_add(t, flow_table_get_hashed(t, h[i], p->src_ip, p->dst_ip, p->dest_qp & PSN_MASK, v, 1),
				 p, vantages[i]);
	}
	qp_pending_flush(t);
	t->defer_samples = false;
	return rc;
}

void qp_tracker_finish(struct qp_tracker *t)
{
	for (uint64_t i = 0; i < t->n_ids; i++) {
		struct qp_flow *f = flow_at(t, t->id_to_index[i]);

		if (f->have_win)
			flow_window_close(t, f);
	}
}

static double ns_to_us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

long qp_tracker_snapshot(struct qp_tracker *t, const struct flow_stats **out)
{
	size_t n = (size_t)t->n_ids;
	uint64_t paired = 0, unattributed = 0;

	if (track_mem_ensure_big((void **)&t->snap, &t->snap_cap, sizeof(*t->snap), n ? n : 1))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct qp_flow *f = flow_at(t, t->id_to_index[i]);
		struct qp_flow *p = peer_of(t, f);
		struct flow_stats *st = &t->snap[i];
		uint64_t mad_ns;

		*st = f->st;
		if (f->timeouts_unsure && capture_nearer_responder(t, f) == 1)
			st->timeouts -= f->timeouts_unsure; /* seen from the responder's side after all */
		st->carries_requests = f->has_requests;
		st->carries_responses = f->has_responses;
		st->peer_id = p ? p->st.id : 0;
		if (st->peer_id)
			paired++;
		unattributed += f->pend.cnps;
		if (st->transport == ROCE_TR_CNP && p && p->st.transport != ROCE_TR_CNP)
			st->transport = p->st.transport; /* a CNP-only flow is its QP's other direction */
		st->role = f->has_requests ? FLOW_ROLE_REQUESTER
			   : f->has_responses ? FLOW_ROLE_RESPONDER
			   : f->datagram ? FLOW_ROLE_DATAGRAM
			   : tr_acked(st->transport) ? FLOW_ROLE_RESPONDER
			   : st->transport == ROCE_TR_CNP || st->transport == ROCE_TR_UC || st->transport == ROCE_TR_UD
				   ? FLOW_ROLE_DATAGRAM
				   : FLOW_ROLE_UNKNOWN;
		if (!f->lat)
			f->lat = t->no_samples; /* read only: every count is 0 */
		st->ack_samples = f->lat[QP_SAMPLE_ACK].count;
		st->ack_latency_p50_us = ns_to_us(latency_set_percentile(&f->lat[QP_SAMPLE_ACK], 5000));
		st->ack_latency_p99_us = ns_to_us(latency_set_percentile(&f->lat[QP_SAMPLE_ACK], 9900));
		st->ack_latency_max_us = ns_to_us(f->lat[QP_SAMPLE_ACK].max_ns);
		if (latency_set_mad(&f->lat[QP_SAMPLE_ACK], &mad_ns))
			t->tot.alloc_failures++;
		st->ack_latency_mad_us = ns_to_us(mad_ns);
		st->read_samples = f->lat[QP_SAMPLE_READ_LAST].count;
		st->read_latency_p50_us = ns_to_us(latency_set_percentile(&f->lat[QP_SAMPLE_READ_LAST], 5000));
		st->read_latency_p99_us = ns_to_us(latency_set_percentile(&f->lat[QP_SAMPLE_READ_LAST], 9900));
		st->completion_samples = f->lat[QP_SAMPLE_COMPLETION].count;
		st->completion_p50_us = ns_to_us(latency_set_percentile(&f->lat[QP_SAMPLE_COMPLETION], 5000));
		st->completion_p99_us = ns_to_us(latency_set_percentile(&f->lat[QP_SAMPLE_COMPLETION], 9900));
		st->completion_max_us = ns_to_us(f->lat[QP_SAMPLE_COMPLETION].max_ns);
		st->read_latency_max_us = ns_to_us(f->lat[QP_SAMPLE_READ_LAST].max_ns);
		st->atomic_samples = f->lat[QP_SAMPLE_ATOMIC].count;
		st->atomic_latency_p50_us = ns_to_us(latency_set_percentile(&f->lat[QP_SAMPLE_ATOMIC], 5000));
		st->atomic_latency_p99_us = ns_to_us(latency_set_percentile(&f->lat[QP_SAMPLE_ATOMIC], 9900));
		st->read_first_samples = f->lat[QP_SAMPLE_READ_FIRST].count;
		st->read_first_p50_us = ns_to_us(latency_set_percentile(&f->lat[QP_SAMPLE_READ_FIRST], 5000));
		st->read_first_p99_us = ns_to_us(latency_set_percentile(&f->lat[QP_SAMPLE_READ_FIRST], 9900));
		st->windows = f->wins;
		st->n_windows = f->n_wins;
	}
	t->tot.paired_flows = paired;
	t->tot.cnps_unattributed = unattributed;
	uint64_t retx = 0, to = 0;
	for (size_t i = 0; i < n; i++) {
		retx += t->snap[i].retransmitted_packets;
		to += t->snap[i].timeouts;
	}
	t->tot.retransmitted_packets = retx;
	t->tot.timeouts = to;
	if (qp_tracker_read_items_fill(t))
		t->tot.alloc_failures++;
	*out = t->snap;
	return (long)n;
}

const struct qp_tracker_totals *qp_tracker_totals(const struct qp_tracker *t)
{
	return &t->tot;
}

void qp_tracker_snapshot_release(struct qp_tracker *t)
{
	free(t->snap);
	t->snap = NULL;
	t->snap_cap = 0;
}

void qp_tracker_free(struct qp_tracker *t)
{
	if (!t)
		return;
	free(t->read_msgs);
	for (uint32_t c = 0; c < t->n_chunks; c++) {
		for (uint32_t i = 0; i < FLOW_CHUNK && c * FLOW_CHUNK + i < t->n_flows; i++) {
			struct qp_flow *f = &t->chunks[c][i];

			psn_ring_free(t, f);
			track_mem_free(&t->mem, f->win_samples, f->win_cap * sizeof(*f->win_samples));
			track_mem_free(&t->mem, f->wins, flow_wins_bytes(f->cap_wins));
			for (int k = 0; f->lat && f->lat != t->no_samples && k < QP_SAMPLE_KINDS; k++)
				latency_set_free(&f->lat[k]);
			if (f->lat != t->no_samples)
				free(f->lat);
		}
		free(t->chunks[c]);
	}
	track_mem_release(&t->mem);
	free(t->chunks);
	free(t->flow_slots);
	free(t->hp_slots);
	free(t->id_to_index);
	free(t->snap);
	free(t->tmp);
	free(t);
}

const char *qp_sample_kind_name(uint8_t kind)
{
	static const char *const names[QP_SAMPLE_KINDS] = {
		"ack", "read_first", "read_last", "atomic", "completion", "nak_to_retx", "timeout_gap",
	};
	return kind < QP_SAMPLE_KINDS ? names[kind] : "unknown";
}

const char *qp_retx_cause_name(uint8_t cause)
{
	static const char *const names[] = { "nak", "rnr", "timeout", "unknown", "response_gap" };
	return cause < 5 ? names[cause] : "unknown";
}

const char *qp_nak_kind_name(uint8_t kind)
{
	static const char *const names[] = { "psn_seq", "rnr", "other" };
	return kind < 3 ? names[kind] : "other";
}

const char *flow_role_name(uint8_t role)
{
	static const char *const names[] = { "unknown", "requester", "responder", "datagram" };
	return role < 4 ? names[role] : "unknown";
}

