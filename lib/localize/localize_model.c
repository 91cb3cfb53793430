/* localize_model.c: the subjects (links, host links, host pairs, hosts), the connections
 * built from flows, and the probability that each connection crosses each subject. */
#include "lib/localize/localize_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/localize/hop_groups.h"
#include "lib/util/robust_stats.h"
#include "lib/util/util.h"

/* ------------------------------------------------------------------ helpers */

void loc_var_subject(const struct ctx *c, const struct var *v, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	switch (v->kind) {
	case VAR_LINK:
		snprintf(buf, len, "%s", c->topo->links[v->link].name);
		break;
	case VAR_HOST_LINK:
	case VAR_HOST:
		addr_str(v->a, buf, len);
		break;
	case VAR_PATH:
		addr_str(v->a, a, sizeof(a));
		addr_str(v->b, b, sizeof(b));
		snprintf(buf, len, "%.60s -> %.60s", a, b);
		break;
	case VAR_FABRIC:
		snprintf(buf, len, "fabric (%u host pair%s)", v->link, v->link == 1 ? "" : "s");
		break;
	}
}

enum finding_subject_kind loc_var_subject_kind(const struct var *v)
{
	switch (v->kind) {
	case VAR_LINK:
		return SUBJECT_LINK;
	case VAR_HOST_LINK:
		return SUBJECT_HOST_LINK;
	case VAR_PATH:
		return SUBJECT_PATH;
	case VAR_FABRIC:
		return SUBJECT_FABRIC;
	default:
		return SUBJECT_HOST;
	}
}

/* Is var src's own link: its access link (no topology) or a links.csv link ending at it? */
static bool var_is_host_link(const struct ctx *c, uint32_t var, const uint8_t *src)
{
	const struct var *v = &c->vars[var];
	const struct topo_link *l;

	if (v->kind == VAR_HOST_LINK)
		return !memcmp(v->a, src, 16);
	if (v->kind != VAR_LINK || !c->topo)
		return false;
	l = &c->topo->links[v->link];
	return (c->topo->nodes[l->a].is_host && !memcmp(c->topo->nodes[l->a].addr, src, 16)) ||
	       (c->topo->nodes[l->b].is_host && !memcmp(c->topo->nodes[l->b].addr, src, 16));
}

/*
 * A loss pick that only the sender's timer saw (localize.c's sender_timer()) and that
 * ties links: RC's responder NAKs every gap in the PSNs it receives, so timeouts with no
 * NAK say no request went missing on any wire of the set; what restarts is the sender.
 * The set becomes the sender's own link when it holds it (nicretx-long, topology, seed
 * 1227: "198.18.0.10-leaf0 | leaf3-spine0", every QP of the host over one spine).
 */
void loc_sender_subject(const struct ctx *c, struct candidate *cand, const uint8_t *src)
{
	for (size_t i = 0; i < cand->n_set; i++) {
		if (!var_is_host_link(c, cand->set[i], src))
			continue;
		cand->var = cand->set[i];
		cand->n_set = 0;
		return;
	}
}

static uint64_t var_hash(enum var_kind kind, uint32_t link, const uint8_t *a, const uint8_t *b)
{
	static const uint8_t zero[16];
	uint64_t h = ((uint64_t)kind << 32 | link) * 0x9e3779b97f4a7c15ull, w;

	a = a ? a : zero;
	b = b ? b : zero;
	for (int i = 0; i < 16; i += 8) {
		memcpy(&w, a + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* Index vars[0..n_vars) in a table twice their number or more. */
static int var_slots_grow(struct ctx *c)
{
	size_t cap = c->var_slots ? (c->var_slots_mask + 1) * 2 : 256;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_vars; i++) {
		const struct var *v = &c->vars[i];
		size_t j = var_hash(v->kind, v->link, v->a, v->b) & (cap - 1);

		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(c->var_slots);
	c->var_slots = slots;
	c->var_slots_mask = cap - 1;
	return 0;
}

/*
 * The var for (kind, link, a, b), added when new. Each kind always names the same parts (LINK
 * neither, HOST and HOST_LINK a, PATH a and b) and absent parts stay zero, so the hash of the
 * parts finds the one var that matches.
 */
long loc_add_var(struct ctx *c, enum var_kind kind, uint32_t link, const uint8_t *a,
		 const uint8_t *b)
{
	struct var *v;
	size_t j;

	if ((c->n_vars + 1) * 2 > (c->var_slots ? c->var_slots_mask + 1 : 0) && var_slots_grow(c))
		return -ENOMEM;
	j = var_hash(kind, link, a, b) & c->var_slots_mask;
	for (; c->var_slots[j]; j = (j + 1) & c->var_slots_mask) {
		v = &c->vars[c->var_slots[j] - 1];
		if (v->kind == kind && v->link == link && (!a || !memcmp(v->a, a, 16)) &&
		    (!b || !memcmp(v->b, b, 16)))
			return (long)(c->var_slots[j] - 1);
	}
	if (util_ensure_mem((void **)&c->vars, &c->cap_vars, sizeof(*c->vars), c->n_vars + 1))
		return -ENOMEM;
	v = &c->vars[c->n_vars];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->link = link;
	if (a)
		memcpy(v->a, a, 16);
	if (b)
		memcpy(v->b, b, 16);
	v->penalty = kind == VAR_PATH ? c->cfg->penalty_path :
		     kind == VAR_HOST ? c->cfg->penalty_host : 1.0;
	c->var_slots[j] = (uint32_t)c->n_vars + 1;
	return (long)c->n_vars++;
}

static int add_inc(struct ctx *c, const struct conn *k, long var, double rtt, double fwd,
		   double fwd_ab, double rev, double rev_ab)
{
	bool directed;

	if (var < 0)
		return (int)var;
	directed = !k->ack_only && c->vars[var].kind != VAR_HOST;
	if (util_ensure_mem((void **)&c->inc, &c->cap_inc, sizeof(*c->inc), c->n_inc + 1))
		return -ENOMEM;
	if (directed && k->data_rev) {
		/* The data go responder -> requester: their way is the ACKs' way. */
		double t = fwd, t_ab = fwd_ab;

		fwd = rev;
		fwd_ab = rev_ab;
		rev = t;
		rev_ab = t_ab;
	}
	c->inc[c->n_inc++] = (struct incidence){ .var = (uint32_t)var,
						 .rtt = (float)rtt,
						 .fwd = (float)fwd,
						 .fwd_ab = (float)fwd_ab,
						 .rev = (float)rev,
						 .rev_ab = (float)rev_ab,
						 .ack_only = k->ack_only,
						 .loss_rev = directed && k->loss_against_data };
	return 0;
}

/* ------------------------------------------------------------------ connections */

static int cmp_key(const struct flow_stats *x, const struct flow_stats *y)
{
	int r = memcmp(x->key.src_ip, y->key.src_ip, 16);
	if (r)
		return r;
	r = memcmp(x->key.dst_ip, y->key.dst_ip, 16);
	if (r)
		return r;
	return (x->key.dst_qpn > y->key.dst_qpn) - (x->key.dst_qpn < y->key.dst_qpn);
}

static int cmp_flow_idx(const void *a, const void *b, void *arg)
{
	const struct flow_stats *flows = arg;
	const struct flow_stats *x = &flows[*(const size_t *)a];
	const struct flow_stats *y = &flows[*(const size_t *)b];
	int r = cmp_key(x, y);
	if (r)
		return r;
	return (x->vantage > y->vantage) - (x->vantage < y->vantage);
}

static const struct flow_stats *flow_by_id(const struct ctx *c, uint64_t id)
{
	if (!id)
		return NULL;
	/* A tracker snapshot holds ids 1..n in order: O(1), not a scan per flow (1M flows). */
	if (id <= c->n_flows && c->flows[id - 1].id == id)
		return &c->flows[id - 1];
	for (size_t i = 0; i < c->n_flows; i++)
		if (c->flows[i].id == id)
			return &c->flows[i];
	return NULL;
}

/* A flow's latency of one kind, p50 and p99 in us; false when it has too few samples of
 * that kind (or only zeros). */
static bool kind_latency(const struct localize_config *cfg, const struct flow_stats *f,
			 enum lat_kind kind, double *p50, double *p99)
{
	uint64_t n = kind == LAT_ACK ? f->ack_samples :
		     kind == LAT_READ ? f->read_samples : f->completion_samples;

	*p50 = kind == LAT_ACK ? f->ack_latency_p50_us :
	       kind == LAT_READ ? f->read_latency_p50_us : f->completion_p50_us;
	*p99 = kind == LAT_ACK ? f->ack_latency_p99_us :
	       kind == LAT_READ ? f->read_latency_p99_us : f->completion_p99_us;
	return n >= cfg->min_latency_samples && *p50 > 0;
}

/* The latency a flow offers: ACK, else READ, else completion; p50 and p99 in us. */
static bool flow_latency(const struct localize_config *cfg, const struct flow_stats *f,
			 enum lat_kind *kind, double *p50, double *p99)
{
	double k50, k99;

	for (enum lat_kind k = LAT_ACK; k <= LAT_COMPLETION; k++) {
		if (kind_latency(cfg, f, k, &k50, &k99)) {
			*kind = k;
			*p50 = k50;
			*p99 = k99;
			return true;
		}
	}
	return false;
}

void localize_coverage(const struct flow_stats *flows, size_t n_flows,
		       const struct localize_config *cfg, struct localize_coverage *out)
{
	struct localize_config defaults;
	enum lat_kind kind;
	double p50, p99;

	if (!cfg) {
		localize_config_default(&defaults);
		cfg = &defaults;
	}
	memset(out, 0, sizeof(*out));
	out->min_samples = cfg->min_latency_samples;
	for (size_t i = 0; i < n_flows; i++) {
		/* Datagrams (UD, UC) are never acknowledged: no latency to judge there. */
		if (flows[i].role == FLOW_ROLE_RESPONDER || flows[i].role == FLOW_ROLE_DATAGRAM ||
		    !flows[i].packets)
			continue;
		out->flows++;
		out->judged += flow_latency(cfg, &flows[i], &kind, &p50, &p99);
	}
}

bool localize_coverage_partial(const struct localize_coverage *cov)
{
	return cov && cov->flows && 2 * cov->judged < cov->flows;
}

/* A copy's latency of one kind for the vantage split, p50 in us (-1: none of that kind). */
static double copy_latency(const struct localize_config *cfg, const struct flow_stats *f,
			   enum lat_kind kind)
{
	double p50, p99;

	return kind_latency(cfg, f, kind, &p50, &p99) ? p50 : -1;
}

/* Packets without the duplicate copies a mirror delivers twice: rates per packet must not
 * halve because a switch mirrored both ports a packet crossed. */
static double flow_packets_once(const struct flow_stats *f)
{
	return (double)(f->packets - (f->duplicates < f->packets ? f->duplicates : f->packets));
}

/* Its bytes on the wire, the duplicate copies' share left out as flow_packets_once() does. */
static double flow_bytes_once(const struct flow_stats *f)
{
	return f->packets ? (double)f->bytes * flow_packets_once(f) / (double)f->packets : 0;
}

static void fill_conn_counts(struct conn *k)
{
	const struct flow_stats *q = k->req, *r = k->resp;
	double naks = 0, timeouts = 0, retx = 0, ce = 0, cnps = 0, rnr = 0, gaps = 0;

	/* The analyzer may count a NAK on the flow that carries it or on the one it answers:
	 * take the larger side rather than the sum so nothing is counted twice. */
	if (q) {
		naks = (double)q->naks_psn_seq;
		timeouts = (double)q->timeouts;
		retx = (double)q->retransmitted_packets;
		ce = (double)q->ecn_ce;
		cnps = (double)q->cnps;
		rnr = (double)q->rnr_naks;
		gaps = (double)q->read_gaps;
	}
	if (r) {
		naks = max2(naks, (double)r->naks_psn_seq);
		timeouts = max2(timeouts, (double)r->timeouts);
		retx += (double)r->retransmitted_packets;
		ce += (double)r->ecn_ce;
		cnps = max2(cnps, (double)r->cnps);
		rnr = max2(rnr, (double)r->rnr_naks);
		gaps = max2(gaps, (double)r->read_gaps);
	}
	/* Each RNR NAK makes the requester resend, and the packets it had in flight arrive
	 * out of sequence (one PSN sequence NAK per RNR NAK on rnr-rpc): a responder not
	 * ready, not a lossy link. */
	naks = max2(naks - rnr, 0);
	/* A READ response lost is re-read without a NAK, once per gap a later response shows
	 * (resends beyond that are the rest of the READ): one loss event each. */
	k->loss_events = naks + timeouts + gaps > 0 ? naks + timeouts + gaps : rnr > 0 ? 0 : retx;
	k->read_gaps = gaps;
	k->naks = naks;
	k->timeouts = timeouts;
	/* A sender-side capture sees no CE marks, only the CNPs that answer them. */
	k->ce_events = max2(ce, cnps);
	k->rnr_naks = rnr;
	k->packets = flow_packets_once(q ? q : r);
	/* READ: the data are the responses. Loss and marks are per data packet, on the
	 * data's way (a mark per read request made 5-packet requests look 100% marked). */
	k->data_rev = q && r && r->packets > q->packets;
	if (k->data_rev)
		k->packets = flow_packets_once(r);
	k->bytes = flow_bytes_once(k->data_rev ? r : q ? q : r);
	/* A READ's responder NAKs a gap in the requests it received; a lost response is
	 * re-read without a NAK. NAKs that outnumber the timeouts and re-reads put the loss on the
	 * requests' way (a one-way fault on it drops read requests, not responses).
	 * A queue pair of WRITEs and READs sends more requests than it gets responses, yet
	 * the responses it re-reads were lost on their own way back: when re-reads outnumber
	 * NAKs and timeouts, its loss blames the links the responses crossed. */
	k->loss_against_data = k->data_rev ? naks > timeouts + gaps
					   : q && r && gaps > naks + timeouts;
	/* Marks are laid on the data's way: marks on the other direction (ACKs crossing a
	 * marking link on their way back) would blame the links the data crossed, e.g. the
	 * sibling spine link of the same leaf. */
	if (q && r) {
		const struct flow_stats *data = k->data_rev ? r : q;
		k->ce_events = max2((double)data->ecn_ce, (double)data->cnps);
	}
}

/* A copy's measured latency of one kind, zero included (-1: too few samples of it). */
static double copy_measured(const struct localize_config *cfg, const struct flow_stats *f,
			    enum lat_kind kind)
{
	double p50, p99;

	kind_latency(cfg, f, kind, &p50, &p99);
	return (kind == LAT_ACK ? f->ack_samples :
		kind == LAT_READ ? f->read_samples : f->completion_samples) >= cfg->min_latency_samples ?
		       p50 : -1;
}

/* The split of one key's copies order[i..j): the primary copy's index, its turnaround
 * and first-response part (-1: none), their kind, and the turnaround a peer measures. */
struct key_split {
	size_t best;
	double turn, first, peer, peer_p99;
	double wait, busy;	/* READ: waits for the first response summed, the link busy in them */
	double waits;		/* READ: how many waits those are */
	enum lat_kind kind;
};

/*
 * The same key seen from several vantages: the copy with the longest ACK latency saw
 * the whole round trip (requester side); the shortest saw only the responder's
 * turnaround (request in, ACK out). Their difference is the network's share. Both
 * of one kind: the requester's round trip of a PSN less the responder's completion
 * of its message (first packet in to last ACK out) took the data's arrival spread,
 * the whole delay of a slow serializer on the data's way, out of the round trip.
 */
static void split_key(const struct ctx *c, const size_t *order, size_t i, size_t j,
		      struct key_split *out)
{
	const struct flow_stats *flows = c->flows;
	double lo = INFINITY, hi = -1, lo_first = -1, lo0 = INFINITY, lo0_p99 = -1, lo_wait = 0, lo_busy = 0, lo_waits = 0;
	int with_lat = 0, measured = 0;
	enum lat_kind kind = LAT_COMPLETION, k_kind;
	double p50, p99;

	out->best = order[i];
	for (size_t k = i; k < j; k++)
		if (flow_latency(c->cfg, &flows[order[k]], &k_kind, &p50, &p99) && k_kind < kind)
			kind = k_kind;
	for (size_t k = i; k < j; k++) {
		const struct flow_stats *f = &flows[order[k]];
		double m = copy_measured(c->cfg, f, kind);

		if (m >= 0) {
			measured++;
			if (m < lo0) {
				double m50;

				lo0 = m;
				kind_latency(c->cfg, f, kind, &m50, &lo0_p99);
			}
		}
		p50 = copy_latency(c->cfg, f, kind);
		if (p50 >= 0) {
			with_lat++;
			if (p50 > hi) {
				hi = p50;
				out->best = order[k];
			}
			if (p50 < lo) {
				lo = p50;
				/* READ: to the first response, the rest is the message's length */
				lo_first = kind == LAT_READ && f->read_first_samples >= c->cfg->min_latency_samples ?
					   f->read_first_p50_us : -1;
				lo_wait = f->read_wait_us;
				lo_busy = f->read_wait_busy_us;
				lo_waits = (double)f->read_waits;
			}
		} else if (with_lat == 0 && f->packets > flows[out->best].packets) {
			out->best = order[k];
		}
	}
	out->kind = kind;
	out->turn = out->first = out->peer = out->peer_p99 = -1;
	out->wait = out->busy = out->waits = 0;
	if (with_lat >= 2 && lo < hi) {
		out->turn = lo;
		out->first = lo_first;
		out->wait = lo_wait;
		out->busy = lo_busy;
		out->waits = lo_waits;
	}
	/* A responder that answers as the last packet lands measures a turnaround of 0:
	 * a peer's value for the median of its kind (a NIC acknowledges in about 1 us). */
	if (with_lat >= 1 && measured >= 2 && lo0 < hi) {
		out->peer = lo0;
		out->peer_p99 = lo0_p99;
	}
}

/*
 * A message's completion holds its length: a 64-packet WRITE's data arrive over 64
 * serializations, a SEND or an atomic in one packet (a mixed each-host fabric, tuning seed
 * 3429: 64-packet WRITEs completing in 9.9 us beside one-packet SENDs in 4.1 us, and the
 * host whose connections wrote read as a slow host link). So completions are compared among
 * messages of about the same length: data packets sent once per completed message, to the
 * nearest power of 2, READs apart (their data come back after a turnaround). Counted per
 * connection, not per message: a connection mixing lengths is classed by its mean.
 */
static int comp_shape(const struct conn *k)
{
	const struct flow_stats *data = k->data_rev ? k->resp : k->req;
	double msgs = (double)k->req->completion_samples, sent, per;
	int bucket;

	/* Packets sent once: resends (a timer's, an RNR's) do not make a message longer.
	 * A responder's READ responses are not counted as first transmissions. */
	if (data->first_transmissions)
		sent = (double)data->first_transmissions;
	else
		sent = fmax(k->packets - (double)data->retransmitted_packets, 0);
	per = msgs > 0 ? sent / msgs : 1;
	bucket = per > 1 ? (int)lround(log2(per)) : 0;

	return (k->data_rev ? 64 : 0) + bucket;
}

int loc_build_conns(struct ctx *c)
{
	const struct flow_stats *flows = c->flows;
	size_t n = c->n_flows, *order = NULL, i = 0;
	bool *primary = NULL;
	struct key_split *split = NULL;
	int err = -ENOMEM;

	order = malloc((n ? n : 1) * sizeof(*order));
	primary = calloc(n ? n : 1, sizeof(*primary));
	split = calloc(n ? n : 1, sizeof(*split));
	c->conns = calloc(n ? n : 1, sizeof(*c->conns));
	if (!order || !primary || !split || !c->conns)
		goto cleanup;
	for (i = 0; i < n; i++) {
		order[i] = i;
		split[i].turn = split[i].first = split[i].peer = split[i].peer_p99 = -1;
	}
	qsort_r(order, n, sizeof(*order), cmp_flow_idx, (void *)flows);
	for (i = 0; i < n;) {
		size_t j = i;
		struct key_split ks;

		while (j < n && !cmp_key(&flows[order[i]], &flows[order[j]]))
			j++;
		split_key(c, order, i, j, &ks);
		primary[ks.best] = true;
		split[ks.best] = ks;
		i = j;
	}
	for (i = 0; i < n; i++) {
		const struct flow_stats *f = &flows[i], *peer;
		struct conn *k;
		if (!primary[i])
			continue;
		peer = flow_by_id(c, f->peer_id);
		if (f->role == FLOW_ROLE_RESPONDER && peer)
			continue; /* joins its requester's connection */
		k = &c->conns[c->n_conns++];
		memset(k, 0, sizeof(*k));
		k->turnaround_us = split[i].turn;
		k->turnaround_first_us = split[i].first;
		k->turnaround_wait_us = split[i].wait;
		k->turnaround_busy_us = split[i].busy;
		k->turnaround_waits = split[i].waits;
		k->turnaround_kind = split[i].kind;
		k->turnaround_peer_us = split[i].peer;
		k->turnaround_p99_us = split[i].peer_p99;
		if (f->role == FLOW_ROLE_RESPONDER) {
			k->resp = f;
			memcpy(k->src, f->key.dst_ip, 16);
			memcpy(k->dst, f->key.src_ip, 16);
			k->sport_rev = f->udp_sport;
		} else {
			k->req = f;
			k->resp = peer;
			memcpy(k->src, f->key.src_ip, 16);
			memcpy(k->dst, f->key.dst_ip, 16);
			k->sport_fwd = f->udp_sport;
			k->sport_rev = peer ? peer->udp_sport : 0;
		}
		k->ack_only = k->req && k->resp && k->req->vantage != k->resp->vantage &&
			      k->turnaround_us < 0;
		if (k->req && flow_latency(c->cfg, k->req, &k->lat_kind, &k->lat_p50_us,
					   &k->lat_p99_us)) {
			k->has_lat = true;
			if (k->turnaround_us >= 0)
				k->lat_p50_us -= k->turnaround_us;
		}
		if (k->req && k->req->completion_samples >= c->cfg->min_completion_samples &&
		    k->req->completion_p50_us > 0 && k->turnaround_us < 0) {
			k->has_comp = true;
			k->comp_p50_us = k->req->completion_p50_us;
			k->comp_p99_us = k->req->completion_p99_us;
			/* Stamped at arrival, completion beyond the ACK latency is the spread of
			 * the data's arrival: keep only that, the latency signal has the rest. */
			if (k->ack_only && k->has_lat) {
				k->comp_p50_us = fmax(k->comp_p50_us - k->lat_p50_us, 0);
				k->comp_p99_us = fmax(k->comp_p99_us - k->lat_p50_us, 0);
			}
		}
		fill_conn_counts(k);
		k->comp_shape = k->has_comp ? comp_shape(k) : 0;
	}
	err = 0;
cleanup:
	free(order);
	free(primary);
	free(split);
	return err;
}

/*
 * RC answers every READ request with its own responses, and a READ turnaround holds its
 * response message's length; an ACK is cumulative and holds no message: the two kinds
 * time unlike things. One median over both compared a WRITE's ACK turnaround (0-0.3 us)
 * with READ ones (5.5-5.9 us) and hid a slow responder (a mixed each-host fabric, tuning
 * seed 1358: its READ turnarounds 55.6 us, its WRITE ones 0.06-0.16 us, read as 5.6 us
 * under its peers). So each kind has its own median, over every connection that measures
 * one, a responder that ACKs as the last packet lands (0 us) included.
 */
void loc_turnaround_medians(const struct ctx *c, double med[LAT_COMPLETION + 1])
{
	for (int kind = LAT_ACK; kind <= LAT_COMPLETION; kind++) {
		size_t m = 0;

		for (size_t k = 0; k < c->n_conns; k++) {
			const struct conn *cn = &c->conns[k];

			if (cn->turnaround_peer_us >= 0 && cn->inc_len && (int)cn->turnaround_kind == kind)
				c->scratch[m++] = cn->turnaround_peer_us;
		}
		med[kind] = m >= c->cfg->min_class_flows ? rs_median(c->scratch, m) : -1;
	}
}

/*
 * A READ turnaround holds its response message's length, a time of its own: its excess is
 * weighed against its kind's median (a busy responder's 2x, docs/evaluation.md). An ACK
 * turnaround holds only the NIC's processing, 0 us in the synthesizer and about 1 us in
 * hardware, no base to scale by (45 us over 0 or over 1 us): its excess is weighed
 * against the round trip it lengthens, the median turnaround and the network's share.
 */
double loc_turnaround_base(const struct conn *cn)
{
	double base = cn->turnaround_us - cn->y[SIG_TURNAROUND];

	if (cn->turnaround_kind != LAT_READ && cn->has_lat)
		base += cn->lat_p50_us;
	return base;
}

/* ------------------------------------------------------------------ incidence */

static struct ecmp_entry *ecmp_paths(struct ctx *c, uint32_t s, uint32_t d)
{
	struct ecmp_entry *e;

	for (size_t i = 0; i < c->n_ecmp; i++)
		if (c->ecmp[i].s == s && c->ecmp[i].d == d)
			return &c->ecmp[i];
	if (util_ensure_mem((void **)&c->ecmp, &c->cap_ecmp, sizeof(*c->ecmp), c->n_ecmp + 1))
		return NULL;
	e = &c->ecmp[c->n_ecmp++];
	memset(e, 0, sizeof(*e));
	e->s = s;
	e->d = d;
	e->err = topology_shortest_paths(c->topo, s, d, c->cfg->max_ecmp_paths, &e->hops,
					 &e->n_paths, &e->len);
	return e;
}

/*
 * Accumulate into p[link] the probability that traffic from s to d with this UDP source
 * port crosses each link (and into ab[link] that it crosses from a to b). Returns 1 when
 * the path was recorded in paths.csv, 0 when spread over ECMP, -ENOENT when unknown.
 */
static int path_probs(struct ctx *c, const uint8_t s_addr[16], const uint8_t d_addr[16],
		      uint16_t sport, bool have_sport, double *p, double *ab, int *hops)
{
	const struct topo_path *path = NULL;
	long s = topology_host(c->topo, s_addr), d = topology_host(c->topo, d_addr);
	struct ecmp_entry *e;

	if (have_sport)
		path = topology_find_path(c->topo, s_addr, d_addr, sport);
	if (path) {
		for (size_t i = 0; i < path->n_hops; i++) {
			p[path->hops[i].link] += 1;
			if (path->hops[i].a_to_b)
				ab[path->hops[i].link] += 1;
		}
		*hops = (int)path->n_hops;
		return 1;
	}
	if (s < 0 || d < 0)
		return -ENOENT;
	e = ecmp_paths(c, (uint32_t)s, (uint32_t)d);
	if (!e)
		return -ENOMEM;
	if (e->err || !e->n_paths)
		return -ENOENT;
	for (size_t k = 0; k < e->n_paths; k++)
		for (size_t i = 0; i < e->len; i++) {
			const struct topo_hop *h = &e->hops[k * e->len + i];
			p[h->link] += 1.0 / (double)e->n_paths;
			if (h->a_to_b)
				ab[h->link] += 1.0 / (double)e->n_paths;
		}
	*hops = (int)e->len;
	return 0;
}

static int build_incidence_topology(struct ctx *c, struct conn *k, double *pf, double *pr,
				    double *ab, double *scratch_ab)
{
	size_t nl = c->topo->n_links;
	int hops = 0, rev_hops = 0, fwd_kind, rev_kind = -ENOENT, err;

	memset(pf, 0, nl * sizeof(*pf));
	memset(pr, 0, nl * sizeof(*pr));
	memset(ab, 0, nl * sizeof(*ab));
	fwd_kind = path_probs(c, k->src, k->dst, k->sport_fwd, k->req != NULL, pf, ab, &hops);
	if (fwd_kind == -ENOMEM)
		return -ENOMEM;
	if (fwd_kind < 0)
		return 0; /* hosts not in links.csv: this connection gives no evidence */
	if (k->resp) {
		memset(scratch_ab, 0, nl * sizeof(*scratch_ab));
		rev_kind = path_probs(c, k->dst, k->src, k->sport_rev, true, pr, scratch_ab,
				      &rev_hops);
		if (rev_kind == -ENOMEM)
			return -ENOMEM;
		/* ACKs of a pinned path whose reverse is not recorded: assume symmetry. */
		if (rev_kind == 0 && fwd_kind == 1) {
			memset(pr, 0, nl * sizeof(*pr));
			rev_kind = -ENOENT;
		}
	}
	for (size_t l = 0; rev_kind < 0 && l < nl; l++) {
		pr[l] = pf[l]; /* the ACKs take the data's path back */
		scratch_ab[l] = pf[l] - ab[l];
	}
	for (size_t l = 0; l < nl; l++) {
		double rtt = 1 - (1 - fmin(pf[l], 1)) * (1 - fmin(pr[l], 1));
		if (rtt <= 0)
			continue;
		err = add_inc(c, k, (long)l, rtt, pf[l], ab[l], pr[l], scratch_ab[l]);
		if (err)
			return err;
	}
	k->klass = hops * 4 + (int)k->lat_kind;
	k->hops = hops;
	/* The responder's turnaround is in the round trip unless a second vantage split it. */
	double t = k->turnaround_us < 0 ? 1 : 0;
	return add_inc(c, k, loc_add_var(c, VAR_HOST, 0, k->dst, NULL), t, 0, 0, t, 0);
}

/*
 * Without a topology, the path length the packets show: the most hops the TTL / hop limit
 * of either direction shows (a mirror at the requester's port sees the data as sent and
 * the ACKs at the end of their way), 0 when none is carried. A flow over the spines is
 * compared with flows over the spines (8 hosts on 2 leaves: cross-leaf flows about 2x the
 * round trip of same-leaf ones, with no fault).
 */
static int conn_ttl_hops(const struct conn *k)
{
	uint32_t a = k->req ? hop_count(k->req->ttl_min) : 0;
	uint32_t b = k->resp ? hop_count(k->resp->ttl_min) : 0;

	return (int)(a > b ? a : b);
}

static int build_incidence_hosts(struct ctx *c, struct conn *k)
{
	const uint8_t *lo = memcmp(k->src, k->dst, 16) <= 0 ? k->src : k->dst;
	const uint8_t *hi = lo == k->src ? k->dst : k->src;
	int err;

	double t = k->turnaround_us < 0 ? 1 : 0;
	/* Host link vars: a = the host; "a -> b" means leaving the host. The data leaves the
	 * requester and enters the responder; the ACKs the other way round. */
	err = add_inc(c, k, loc_add_var(c, VAR_HOST_LINK, 0, k->src, NULL), 1, 1, 1, 1, 0);
	if (!err)
		err = add_inc(c, k, loc_add_var(c, VAR_HOST_LINK, 0, k->dst, NULL), 1, 1, 0, 1, 1);
	if (!err)
		err = add_inc(c, k, loc_add_var(c, VAR_PATH, 0, lo, hi), 1, 1, lo == k->src ? 1 : 0,
			      1, lo == k->src ? 0 : 1);
	if (!err)
		err = add_inc(c, k, loc_add_var(c, VAR_HOST, 0, k->dst, NULL), t, 0, 0, t, 0);
	k->hops = conn_ttl_hops(k);
	k->klass = k->hops * 4 + (int)k->lat_kind;
	return err;
}

int loc_build_incidence(struct ctx *c)
{
	size_t nl = c->topo ? c->topo->n_links : 0;
	double *buf = NULL;
	int err = 0;

	if (c->topo) {
		/* Links are the first variables, index == link index. */
		for (size_t l = 0; l < nl; l++)
			if (loc_add_var(c, VAR_LINK, (uint32_t)l, NULL, NULL) < 0)
				return -ENOMEM;
		buf = calloc(4 * (nl ? nl : 1), sizeof(*buf));
		if (!buf)
			return -ENOMEM;
	}
	for (size_t i = 0; i < c->n_conns && !err; i++) {
		struct conn *k = &c->conns[i];
		k->inc_start = c->n_inc;
		if (c->topo)
			err = build_incidence_topology(c, k, buf, buf + nl, buf + 2 * nl,
						       buf + 3 * nl);
		else
			err = build_incidence_hosts(c, k);
		k->inc_len = c->n_inc - k->inc_start;
	}
	free(buf);
	return err;
}

/* Is var a link between two switches? */
bool loc_switch_link(const struct ctx *c, size_t var)
{
	const struct var *v = &c->vars[var];
	const struct topo_link *l;

	if (v->kind != VAR_LINK || !c->topo)
		return false;
	l = &c->topo->links[v->link];
	return !c->topo->nodes[l->a].is_host && !c->topo->nodes[l->b].is_host;
}

/* A switch link, or a set of them (links always crossed together: a two-leaf fabric's
 * cables to one spine, ECMP without paths). */
bool loc_switch_links_only(const struct ctx *c, const struct candidate *cand)
{
	if (!loc_switch_link(c, cand->var))
		return false;
	for (size_t j = 0; j < cand->n_set; j++)
		if (!loc_switch_link(c, cand->set[j]))
			return false;
	return true;
}
