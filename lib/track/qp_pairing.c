/* qp_pairing.c: which flow answers which (CM, DETH, CNP or PSN windows), and moving counts at pairing. */
#include <string.h>

#include "lib/decode/psn.h"
#include "lib/track/qp_track_int.h"

static void pend_move(struct qp_flow *from, struct qp_flow *to)
{
	struct attrib_pending *p = &from->pend;

	from->st.naks_psn_seq -= p->naks_psn_seq;
	from->st.naks_other -= p->naks_other;
	from->st.rnr_naks -= p->rnr_naks;
	from->st.rnr_wait_ns -= p->rnr_wait_ns;
	from->st.cnps -= p->cnps;
	to->st.naks_psn_seq += p->naks_psn_seq;
	to->st.naks_other += p->naks_other;
	to->st.rnr_naks += p->rnr_naks;
	to->st.rnr_wait_ns += p->rnr_wait_ns;
	to->st.cnps += p->cnps;
	memset(p, 0, sizeof(*p));
}

static void unpair(struct qp_tracker *t, struct qp_flow *f)
{
	struct qp_flow *p = peer_of(t, f);

	if (!p)
		return;
	p->peer = 0;
	p->st.peer_id = 0;
	f->peer = 0;
	f->st.peer_id = 0;
	t->tot.paired_flows -= 2;
}

void qp_pair_flows(struct qp_tracker *t, struct qp_flow *a, struct qp_flow *b, int by_cm)
{
	uint32_t ia = flow_table_index(t, a), ib = flow_table_index(t, b);

	if (a->peer == ib + 1) {
		if (by_cm)
			a->st.cm_confirmed = b->st.cm_confirmed = 1;
		return;
	}
	unpair(t, a);
	unpair(t, b);
	a->peer = ib + 1;
	b->peer = ia + 1;
	a->st.peer_id = b->st.id;
	b->st.peer_id = a->st.id;
	a->st.cm_confirmed = b->st.cm_confirmed = by_cm ? 1 : 0;
	t->tot.paired_flows += 2;
	if (by_cm)
		t->tot.cm_pairings += 2;
	/* What each carried for its then-unknown peer now goes to that peer. */
	pend_move(a, b);
	pend_move(b, a);
}

/*
 * Responses on flow b (addressed to QPN b->dst_qpn at b->dst_ip) answer requests of a flow
 * b->dst_ip -> b->src_ip. Without CM or DETH, find the one whose outstanding PSN window
 * holds the response PSN; ambiguity leaves b unpaired until a later response decides.
 */
static struct qp_flow *pair_by_psn_at(struct qp_tracker *t, struct qp_flow *b, uint32_t psn, uint32_t vantage)
{
	uint32_t *hs = flow_table_hp_slot(t, b->dst_ip, b->src_ip, vantage), v;
	struct qp_flow *best = NULL;
	uint32_t best_dist = UINT32_MAX;
	int ties = 0;

	for (v = *hs; v; v = flow_at(t, v - 1)->hp_next) {
		struct qp_flow *r = flow_at(t, v - 1);
		int32_t behind, ahead;
		uint32_t dist;

		if (!r->have_req || r->peer)
			continue;
		if (r->st.src_qpn && r->st.src_qpn != b->dst_qpn)
			continue;
		/* psn within [first seen - 1, snd_nxt + read slack] */
		behind = psn_diff(r->snd_nxt, psn); /* > 0 when psn is before snd_nxt */
		ahead = -behind;
		if (behind > 0) {
			if (psn_diff(psn, r->snd_una) < -1 && !psn_ring_find(r, psn))
				continue;
			dist = (uint32_t)behind;
		} else {
			if (!r->last_was_read || ahead > 65536)
				continue;
			dist = (uint32_t)ahead;
		}
		/*
		 * Both directions of a QP usually share the UDP source port (mlx5, Linux derive it
		 * from the QPN pair): a candidate with the same port wins over a closer window.
		 */
		if (dist > (1u << 30))
			dist = 1u << 30;
		dist += (r->st.udp_sport != b->st.udp_sport) ? (1u << 31) : 0;
		if (dist < best_dist) {
			best = r;
			best_dist = dist;
			ties = 0;
		} else if (dist == best_dist) {
			ties++;
		}
	}
	if (best && !ties) {
		qp_pair_flows(t, best, b, 0);
		return best;
	}
	return NULL;
}

/*
 * The requester flow is looked for at the response's own vantage first; a trace that holds
 * only one direction (an ingress-only capture on each host) pairs with another trace's flow.
 */
struct qp_flow *qp_pair_by_psn(struct qp_tracker *t, struct qp_flow *b, uint32_t psn)
{
	struct qp_flow *r = pair_by_psn_at(t, b, psn, b->vantage);

	if (r)
		return r;
	/*
	 * Requests the other way in b's own trace: its requester is there, just not decidable
	 * from this PSN (a NAK naming a PSN lost before this capture point). Another trace's
	 * flow of the same QP would mix two vantages' timelines.
	 */
	for (uint32_t v = *flow_table_hp_slot(t, b->dst_ip, b->src_ip, b->vantage); v; v = flow_at(t, v - 1)->hp_next)
		if (flow_at(t, v - 1)->have_req)
			return NULL;
	for (uint32_t v = 0; !r && v < t->n_vantages; v++)
		if (v != b->vantage)
			r = pair_by_psn_at(t, b, psn, v);
	return r;
}

