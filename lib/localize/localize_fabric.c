/*
 * localize_fabric.c: findings without a topology. The subjects are then hosts, host links
 * and host pairs; a cable inside the fabric hurts some of the flows of several hosts (those
 * ECMP put on it) and none of them wholly, which no host subject explains. Flows hurt
 * together that share no host become one `fabric` finding that names them.
 */
#include "lib/localize/localize_internal.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/robust_stats.h"
#include "lib/util/util.h"

/* Each fabric finding its own subject, whatever its host pairs: latency 0, loss 1, marks 2. */
static const uint8_t fabric_key[3][16] = { { 0 }, { [15] = 1 }, { [15] = 2 } };

/*
 * Without a topology the subjects are hosts, host links and host pairs. A slow cable
 * inside the fabric hurts some of the flows of several hosts (those ECMP put on it) and
 * none of them wholly: no host subject explains it. Mark the connections whose latency
 * stands out on their own: an excess of at least FABRIC_FLOW_MIN_Z robust sigmas of all
 * connections and slow_min_ratio of their baseline. Returns how many. (Per connection,
 * not per subject: the finding's own z, over all of them, must still reach slow_min_z.)
 */
#define FABRIC_FLOW_MIN_Z 3
static size_t fabric_flows_hurt(struct ctx *c, bool *hurt)
{
	double *y = c->scratch, sigma;
	size_t n = 0, n_hurt = 0;

	memset(hurt, 0, c->n_conns * sizeof(*hurt));
	for (size_t k = 0; k < c->n_conns; k++)
		if (c->conns[k].valid[SIG_LATENCY])
			y[n++] = c->conns[k].y[SIG_LATENCY];
	if (n < 8)
		return 0;
	sigma = rs_sigma(y, n, c->scratch2);
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		double excess = cn->y[SIG_LATENCY];

		if (!cn->valid[SIG_LATENCY] || cn->baseline_us <= 0 || cn->lat_own_past)
			continue;
		hurt[k] = excess > FABRIC_FLOW_MIN_Z * fmax(sigma, 0.01) &&
			  (cn->baseline_us + excess) / cn->baseline_us >= c->cfg->slow_min_ratio;
		n_hurt += hurt[k];
	}
	return n_hurt;
}

/* Connections of host h (either end) with latency evidence, and how many of them hurt. */
static void host_cover(const struct ctx *c, const uint8_t *h, const bool *hurt, size_t *n_valid,
		       size_t *n_hurt)
{
	*n_valid = *n_hurt = 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (!cn->valid[SIG_LATENCY] || (memcmp(cn->src, h, 16) && memcmp(cn->dst, h, 16)))
			continue;
		(*n_valid)++;
		*n_hurt += hurt[k];
	}
}

/*
 * The connections of a fabric finding, marked in hurt; returns how many. Those that stand
 * out on their own, less the connections of hosts with every connection hurt.
 */
size_t loc_fabric_hurt(struct ctx *c, bool *hurt)
{
	/* A host with all of its connections hurt is its link's or its own story (the host
	 * subjects tell it): its connections leave the fabric's set. A fabric cable takes a
	 * share of a host's connections, half with two spines, all of them only where ECMP
	 * puts every QP of the host on it (then the two cannot be told apart). */
	size_t n_hurt = fabric_flows_hurt(c, hurt);
	bool *host_story = calloc(c->n_conns ? c->n_conns : 1, sizeof(*host_story));

	if (!host_story)
		return 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		const uint8_t *ends[2] = { c->conns[k].src, c->conns[k].dst };

		for (int e = 0; e < 2 && hurt[k]; e++) {
			size_t n_valid, n_host_hurt;

			host_cover(c, ends[e], hurt, &n_valid, &n_host_hurt);
			host_story[k] |= n_host_hurt >= n_valid;
		}
	}
	for (size_t k = 0; k < c->n_conns; k++) {
		n_hurt -= hurt[k] && host_story[k];
		hurt[k] &= !host_story[k];
	}
	free(host_story);
	return n_hurt;
}

/* Distinct host pairs among the hurt connections. */
static uint32_t hurt_pairs(const struct ctx *c, const bool *hurt)
{
	uint32_t n = 0;

	for (size_t k = 0; k < c->n_conns; k++) {
		bool seen = false;

		if (!hurt[k])
			continue;
		for (size_t j = 0; j < k && !seen; j++)
			seen = hurt[j] && ((!memcmp(c->conns[j].src, c->conns[k].src, 16) &&
					    !memcmp(c->conns[j].dst, c->conns[k].dst, 16)) ||
					   (!memcmp(c->conns[j].src, c->conns[k].dst, 16) &&
					    !memcmp(c->conns[j].dst, c->conns[k].src, 16)));
		n += !seen;
	}
	return n;
}

/* The most hurt connections any one host is an end of. */
static size_t max_host_cover(const struct ctx *c, const bool *hurt)
{
	size_t best = 0;

	for (size_t k = 0; k < c->n_conns; k++) {
		const uint8_t *ends[2] = { c->conns[k].src, c->conns[k].dst };

		for (int e = 0; e < 2 && hurt[k]; e++) {
			size_t n = 0;

			for (size_t j = 0; j < c->n_conns; j++)
				n += hurt[j] && (!memcmp(c->conns[j].src, ends[e], 16) ||
						 !memcmp(c->conns[j].dst, ends[e], 16));
			if (n > best)
				best = n;
		}
	}
	return best;
}

/* Append a fabric finding's candidate, its onset and its connections filled in. */
static int add_fabric(struct ctx *c, struct candidate *cand, const bool *hurt,
		      struct candidate **cands, size_t *n_cands, size_t *cap_cands)
{
	loc_find_onset(c, cand, hurt);
	cand->hurt_idx = loc_hurt_list(c, hurt, &cand->n_hurt_idx);
	if (!cand->hurt_idx || util_ensure_mem((void **)cands, cap_cands, sizeof(**cands), *n_cands + 1)) {
		free(cand->hurt_idx);
		return -ENOMEM;
	}
	(*cands)[(*n_cands)++] = *cand;
	return 0;
}

/*
 * A fabric finding: at least three host pairs hurt, no host on more than half of the hurt
 * connections, and no host with all of its own connections hurt (that is its link's or
 * its own story, which the host subjects tell). Its specificity is the share of the hurt
 * connections the busiest host does not explain.
 */
static int fabric_latency_candidate(struct ctx *c, struct candidate **cands, size_t *n_cands,
				    size_t *cap_cands)
{
	bool *hurt = calloc(c->n_conns ? c->n_conns : 1, sizeof(*hurt));
	size_t n_hurt, max_cover;
	double excess = 0, base = 0, sigma;
	int err = 0;

	if (!hurt)
		return -ENOMEM;
	n_hurt = c->topo ? 0 : loc_fabric_hurt(c, hurt);
	if (n_hurt < 4)
		goto out;
	max_cover = max_host_cover(c, hurt);
	uint32_t pairs = hurt_pairs(c, hurt);
	if (pairs < 3 || 2 * max_cover > n_hurt)
		goto out;
	/* Effect and noise: the hurt connections' excess against the others' spread. */
	size_t n_out = 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		if (!c->conns[k].valid[SIG_LATENCY])
			continue;
		if (hurt[k]) {
			excess += c->conns[k].y[SIG_LATENCY];
			base += c->conns[k].baseline_us;
		} else {
			c->scratch[n_out++] = c->conns[k].y[SIG_LATENCY];
		}
	}
	sigma = n_out >= 3 ? rs_sigma(c->scratch, n_out, c->scratch2) : 0;
	sigma = fmax(sigma, c->cfg->noise_floor_frac * base / (double)n_hurt);
	sigma = fmax(sigma, 0.01);
	long v = loc_add_var(c, VAR_FABRIC, pairs, NULL, fabric_key[0]);
	if (v < 0) {
		err = (int)v;
		goto out;
	}
	struct candidate cand = { .var = (uint32_t)v, .signal = SIG_LATENCY, .kind = FINDING_SLOW };
	cand.effect = cand.effect_us = excess / (double)n_hurt;
	cand.baseline_us = base / (double)n_hurt;
	cand.sigma_us = sigma;
	cand.n_eff = (double)n_hurt;
	cand.z = cand.effect / sigma * sqrt((double)n_hurt);
	cand.strength = loc_strength(cand.z, c->cfg->slow_min_z);
	cand.specificity = 1 - (double)max_cover / (double)n_hurt;
	cand.share = 1;
	cand.confidence = cand.set_confidence = cand.strength * cand.specificity;
	cand.flows_hurt = (uint32_t)n_hurt;
	loc_peer_severity(c, &cand, hurt);
	cand.severity = cand.peer_ratio > 0 ? cand.peer_ratio :
			(cand.baseline_us + cand.effect_us) / cand.baseline_us;
	if (cand.confidence < c->cfg->min_confidence)
		goto out;
	err = add_fabric(c, &cand, hurt, cands, n_cands, cap_cands);
out:
	free(hurt);
	return err;
}

/* ------------------------------------------------------------------ levels */

/*
 * A `fabric` set (no topology) under quiet_fabric_max_ratio times its peers' latency, or
 * under fabric_weak_max_ratio at under fabric_weak_max_z sigmas, or under
 * FABRIC_QUEUE_MAX_RATIO with its connections CE-marked over their peers' (hurt_ce_z at
 * queue_marks_z): the queues that ECMP collisions and imbalance build. Healthy sets stood
 * 1.24-1.33x (seeds 1041-1060), under 2x at 7.1-11.1 sigmas (4006-4015), marked at
 * 1.42-1.59x (4016-4035: 9 alerts; 6 right sets were so too, half-speed and 4x-slow cables).
 */
#define FABRIC_QUEUE_MAX_RATIO 1.6

/*
 * ... or under FABRIC_QUEUE_MAX_RATIO in a fabric whose other connections are marked at
 * FABRIC_QUEUE_PEER_MARKS or more, the hurt connections' floors (their quickest windows)
 * raised by under FABRIC_QUEUE_FLOOR_SHARE of the set's excess: a queue comes and goes,
 * a slow cable delays the quickest round trips too. Tuning seeds 4066-4073 and 4120-4121
 * (docs/evaluation.md, "Forty-first round"): the healthy ECMP-skewed fabrics' sets at
 * 1.40-1.59x, peers marked 0.044-0.28%, floors 0.07-0.24 of the excess; right slow sets
 * under 1.6x: floors 0.41-1.06, peers marked under 0.01% but for one 8x cable's (0.16%,
 * floor 1.06). Where no hurt connection has a floor (READs) nothing is told.
 */
#define FABRIC_QUEUE_PEER_MARKS 0.0003
#define FABRIC_QUEUE_FLOOR_SHARE (1.0 / 3)

static bool fabric_queue_floor(const struct ctx *c, const struct candidate *cand)
{
	size_t n = 0;

	if (cand->severity >= FABRIC_QUEUE_MAX_RATIO || cand->peer_ce_rate < FABRIC_QUEUE_PEER_MARKS ||
	    cand->effect_us <= 0 || !loc_latency_pick(cand->signal))
		return false;
	for (size_t i = 0; i < cand->n_hurt_idx; i++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[i]];

		if (cn->has_floor)
			c->scratch2[n++] = cn->floor_excess_us;
	}
	return n >= 2 && rs_median(c->scratch2, n) < FABRIC_QUEUE_FLOOR_SHARE * cand->effect_us;
}

bool loc_small_fabric_set(const struct ctx *c, const struct candidate *cand)
{
	const struct localize_config *cfg = c->cfg;

	return c->vars[cand->var].kind == VAR_FABRIC && cand->signal != SIG_ECN &&
	       (cand->severity < cfg->quiet_fabric_max_ratio ||
		(cand->severity < cfg->fabric_weak_max_ratio && cand->z < cfg->fabric_weak_max_z) ||
		(cand->severity < FABRIC_QUEUE_MAX_RATIO && cand->hurt_ce_rate >= 0 &&
		 cand->hurt_ce_z >= cfg->queue_marks_z) ||
		fabric_queue_floor(c, cand));
}

/*
 * A `fabric` set (no topology) at fabric_step_min_ratio times its peers' latency or more,
 * marked under fabric_step_max_marks times their rate: a queue that deep marks, so it is a
 * slow cable or added latency (seeds 4006-4015: right 3.03-6.36x, healthy 2.65x at most).
 */
bool loc_fabric_step(const struct ctx *c, const struct candidate *cand)
{
	const struct localize_config *cfg = c->cfg;

	return c->vars[cand->var].kind == VAR_FABRIC && cand->signal == SIG_LATENCY &&
	       cfg->fabric_step_min_ratio > 0 && cand->severity >= cfg->fabric_step_min_ratio &&
	       cand->peer_ce_rate > 0 && cand->hurt_ce_rate >= 0 &&
	       cand->hurt_ce_rate < cfg->fabric_step_max_marks * cand->peer_ce_rate;
}

/* ------------------------------------------------------------------ loss and marks */

/*
 * A connection whose count of signal s is evidence. Loss: requests and their responses
 * both seen; RC resends what a link drops and the responder NAKs the gap, an unreliable
 * transport's loss leaves no trace, so its zero says nothing (as loc_loss_on_part()
 * counts them). Marks: any connection with enough packets (a CE mark or a CNP shows on
 * every transport).
 */
static bool rate_evidence(const struct conn *cn, enum signal s)
{
	if (s == SIG_ECN)
		return cn->valid[SIG_ECN];
	return loc_conn_reliable(cn);
}

static double rate_events(const struct conn *cn, enum signal s)
{
	return s == SIG_ECN ? cn->ce_events : cn->loss_events;
}

/*
 * Was host h hurt on all of its connections? Then it is its link's or its own story. So it
 * is when h was hurt on every connection whose data it sends (or receives): a link that
 * drops or marks one way does so to the data going that way on every connection, while
 * the ACKs coming back the other way hardly show (the next ACK covers a lost one). A
 * leaf-spine cable takes all of one way's only where ECMP put them all on it, and never a
 * connection to a host of h's own leaf: the one-way test needs such a connection among
 * them (fewest hops, near_hops), or FABRIC_WAY_MIN_CONNS of them. (With two or more,
 * tuning seeds 4016-4025 lost 17 right sets in 2-spine fabrics: 17 worse, 18 better.)
 */
#define FABRIC_WAY_MIN_CONNS 4
static bool whole_host(const struct ctx *c, const uint8_t *h, const bool *hurt, enum signal s,
		       int near_hops)
{
	size_t n[3] = { 0 }, lost[3] = { 0 }; /* all, data out of h, data into h */
	bool near[3] = { false };

	for (size_t j = 0; j < c->n_conns; j++) {
		const struct conn *o = &c->conns[j];
		bool src = !memcmp(o->src, h, 16);

		if (!rate_evidence(o, s) || (!src && memcmp(o->dst, h, 16)))
			continue;
		int way = src != o->data_rev ? 1 : 2;
		n[0]++;
		lost[0] += hurt[j];
		n[way]++;
		lost[way] += hurt[j];
		near[way] |= o->hops > 0 && o->hops <= near_hops;
	}
	if (lost[0] >= n[0])
		return true;
	for (int way = 1; way <= 2; way++)
		if (n[way] >= 2 && lost[way] >= n[way] && (near[way] || n[way] >= FABRIC_WAY_MIN_CONNS))
			return true;
	return false;
}

/* The fewest hops any connection's TTLs show (0: none shows any). */
static int fewest_hops(const struct ctx *c)
{
	int best = 0;

	for (size_t k = 0; k < c->n_conns; k++)
		if (c->conns[k].hops > 0 && (!best || c->conns[k].hops < best))
			best = c->conns[k].hops;
	return best;
}

/*
 * What a connection's own count is weighed against, events per packet. Loss: the pooled
 * rate of the connections with fewer than FABRIC_LOSS_FLOW_MIN_EVENTS (a healthy fabric
 * loses nothing, or a few packets here and there). Marks: the median connection's rate (a
 * busy fabric marks everywhere; a cable carries well under half the connections).
 */
#define FABRIC_LOSS_FLOW_MIN_EVENTS 2
#define FABRIC_ECN_FLOW_MIN_EVENTS 3
#define FABRIC_ECN_FLOW_MIN_RATIO 4
static double background_rate(const struct ctx *c, enum signal s)
{
	double events = 0, packets = 0;
	size_t n = 0;

	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (!rate_evidence(cn, s))
			continue;
		if (s == SIG_ECN) {
			c->scratch[n++] = cn->ce_events / cn->packets;
		} else if (cn->loss_events < FABRIC_LOSS_FLOW_MIN_EVENTS) {
			events += cn->loss_events;
			packets += cn->packets;
		}
	}
	if (s == SIG_ECN)
		return n ? rs_median(c->scratch, n) : 0;
	return packets > 0 ? events / packets : 0;
}

/*
 * Mark the connections hurt on their own: enough events (FABRIC_LOSS_FLOW_MIN_EVENTS lost,
 * FABRIC_ECN_FLOW_MIN_EVENTS marks at FABRIC_ECN_FLOW_MIN_RATIO times the median rate),
 * FABRIC_FLOW_MIN_Z Poisson sigmas over what background_rate() gives their packets. Then,
 * as for latency, the connections of a host whose story it is (whole_host()) leave the
 * set. Returns how many are marked.
 */
static size_t fabric_rate_hurt(const struct ctx *c, enum signal s, bool *hurt)
{
	double rate = background_rate(c, s);
	size_t n_hurt = 0;

	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		double ev = rate_events(cn, s);

		hurt[k] = rate_evidence(cn, s) &&
			  loc_poisson_z(ev, rate * cn->packets) >= FABRIC_FLOW_MIN_Z &&
			  (s == SIG_ECN ? ev >= FABRIC_ECN_FLOW_MIN_EVENTS &&
					  ev >= FABRIC_ECN_FLOW_MIN_RATIO * rate * cn->packets :
					  ev >= FABRIC_LOSS_FLOW_MIN_EVENTS);
	}
	int near_hops = fewest_hops(c);

	for (size_t k = 0; k < c->n_conns; k++)
		c->scratch[k] = hurt[k] && (whole_host(c, c->conns[k].src, hurt, s, near_hops) ||
					    whole_host(c, c->conns[k].dst, hurt, s, near_hops));
	for (size_t k = 0; k < c->n_conns; k++) {
		hurt[k] &= c->scratch[k] == 0;
		n_hurt += hurt[k];
	}
	return n_hurt;
}

/*
 * A host on more than half of a lossy set is its link's story, unless its connections
 * outside the set lost nothing where the set's rate would have drawn loss_part_min_events
 * (as loc_loss_on_part() reads a host): then the loss lies further on, on a cable some of
 * its connections cross. A leaf of two hosts, or two spines, puts one host on most of a
 * cable's connections. True when every such host is clean elsewhere.
 */
static bool busy_hosts_clean_elsewhere(const struct ctx *c, const bool *hurt, size_t n_hurt,
				       double rate)
{
	if (c->cfg->loss_part_min_events <= 0)
		return false;
	for (size_t k = 0; k < c->n_conns; k++) {
		const uint8_t *ends[2] = { c->conns[k].src, c->conns[k].dst };

		for (int e = 0; e < 2 && hurt[k]; e++) {
			size_t cover = 0;
			double packets = 0;

			for (size_t j = 0; j < c->n_conns; j++) {
				const struct conn *cn = &c->conns[j];

				if (memcmp(cn->src, ends[e], 16) && memcmp(cn->dst, ends[e], 16))
					continue;
				cover += hurt[j];
				if (!hurt[j] && loc_conn_clean(cn))
					packets += cn->packets;
			}
			if (2 * cover > n_hurt && rate * packets < c->cfg->loss_part_min_events)
				return false;
		}
	}
	return true;
}

/*
 * Loss (or marks) on connections that share no host: a cable inside the fabric that drops
 * (or marks). The same shape as the latency set (three host pairs or more, no host on more
 * than half of them), its rate against the connections outside the set, as a lossy (or
 * congested) subject's is judged.
 */
static int fabric_rate_candidate(struct ctx *c, enum signal s, bool *hurt,
				 struct candidate **cands, size_t *n_cands, size_t *cap_cands)
{
	const struct localize_config *cfg = c->cfg;
	bool ecn = s == SIG_ECN;
	struct candidate cand = { .signal = s, .kind = ecn ? FINDING_CONGESTED : FINDING_LOSSY };
	double out_events = 0, out_packets = 0, specificity;
	size_t n_hurt, max_cover;
	uint32_t pairs;

	n_hurt = fabric_rate_hurt(c, s, hurt);
	if (n_hurt < 4)
		return 0;
	max_cover = max_host_cover(c, hurt);
	pairs = hurt_pairs(c, hurt);
	if (pairs < 3)
		return 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (!rate_evidence(cn, s))
			continue;
		if (hurt[k]) {
			cand.in_events += rate_events(cn, s);
			cand.in_packets += cn->packets;
		} else {
			out_events += rate_events(cn, s);
			out_packets += cn->packets;
		}
	}
	cand.in_rate = cand.in_events / cand.in_packets;
	cand.out_rate = out_packets > 0 ? out_events / out_packets : 0;
	specificity = 1 - (double)max_cover / (double)n_hurt;
	if (2 * max_cover > n_hurt) {
		if (s != SIG_LOSS || !busy_hosts_clean_elsewhere(c, hurt, n_hurt, cand.in_rate))
			return 0;
		specificity = 0.5;
	}
	if (cand.in_rate < (ecn ? cfg->ecn_min_rate : cfg->loss_min_rate) ||
	    cand.in_events < (ecn ? cfg->ecn_min_events : cfg->loss_min_events) ||
	    cand.in_rate < (ecn ? cfg->ecn_min_ratio : cfg->loss_min_ratio) * cand.out_rate)
		return 0;
	cand.z = loc_poisson_z(cand.in_events, cand.out_rate * cand.in_packets);
	cand.strength = loc_strength(cand.z, ecn ? cfg->ecn_min_z : cfg->loss_min_z);
	cand.specificity = specificity;
	cand.confidence = cand.set_confidence = cand.strength * cand.specificity;
	if (cand.confidence < cfg->min_confidence)
		return 0;
	long v = loc_add_var(c, VAR_FABRIC, pairs, NULL, fabric_key[ecn ? 2 : 1]);
	if (v < 0)
		return (int)v;
	cand.var = (uint32_t)v;
	cand.effect = cand.in_rate - cand.out_rate;
	cand.severity = cand.in_rate;
	cand.n_eff = (double)n_hurt;
	cand.share = 1;
	cand.flows_hurt = (uint32_t)n_hurt;
	return add_fabric(c, &cand, hurt, cands, n_cands, cap_cands);
}

/* The fabric sets (no topology): latency, loss, marks, in that order. */
int loc_fabric_candidates(struct ctx *c, struct candidate **cands, size_t *n_cands,
			  size_t *cap_cands)
{
	bool *hurt;
	int err = fabric_latency_candidate(c, cands, n_cands, cap_cands);

	if (err || c->topo || c->n_conns > c->scratch_len)
		return err;
	hurt = calloc(c->n_conns ? c->n_conns : 1, sizeof(*hurt));
	if (!hurt)
		return -ENOMEM;
	err = fabric_rate_candidate(c, SIG_LOSS, hurt, cands, n_cands, cap_cands);
	if (!err)
		err = fabric_rate_candidate(c, SIG_ECN, hurt, cands, n_cands, cap_cands);
	free(hurt);
	return err;
}

/* A host notice whose loss (marks, for SIG_ECN) lies on a link further on. */
static bool further_on(const struct candidate *x, enum signal s)
{
	if (s == SIG_ECN)
		return x->notice_why == loc_why_marks_on_part;
	return x->notice_why == loc_why_loss_on_part || x->notice_why == loc_why_loss_down_on_part;
}

/*
 * Without a topology and with no lossy fabric set: the strongest host whose loss lies on a
 * link further on (loc_loss_on_part(): its connections that lost nothing would have lost
 * loss_part_min_events at its rate; or loc_loss_down_on_part(): a loss or two on each of
 * some of its connections, none on the others) becomes the fabric's lossy finding, its connections
 * that lost at least FABRIC_LOSS_FLOW_MIN_EVENTS each. A cable shared by few host pairs
 * (two hosts per leaf, few flows) leaves fewer than three pairs losing on their own, and
 * the host that sent most across it is not the subject: the link is in the fabric.
 * With no such host, the strongest lossy host pair alert does so, its connections that
 * lost at least that many (one is enough), unless a lossy host or host link alert stands
 * above it (its loss seen through one peer): a pair names neither host's link (round 34,
 * tuning seeds 4046-4055: lossy pairs ranked first in cable-fault runs without a
 * topology). The candidate gives way to a fresh one (its figures were the host's or the
 * pair's); its hurt list is reordered, the lossy connections first (the list is shared
 * with cands[], whose set it leaves unchanged). Marks alike (round 35), with no marked
 * fabric set: the strongest host whose marks lie further on (loc_marks_on_part()) gives
 * its connections marked twice or more to the fabric's congested finding (no pair step).
 */
static void fabric_from_hosts(struct ctx *c, struct candidate *best, size_t n, enum signal s)
{
	struct candidate f = { .signal = s, .kind = s == SIG_ECN ? FINDING_CONGESTED : FINDING_LOSSY,
				.level = FINDING_ALERT };
	struct candidate *p = NULL, *pair = NULL;
	double out_events = 0, out_packets = 0, host_loss = 0;
	bool *hurt;
	size_t m = 0;
	long v;

	for (size_t i = 0; i < n; i++) {
		const struct candidate *x = &best[i];

		if (c->vars[x->var].kind == VAR_FABRIC && x->signal == s)
			return;
		if (x->level == FINDING_NOTICE && further_on(x, s) && x->hurt_idx &&
		    (!p || x->confidence > p->confidence))
			p = &best[i];
		if (s != SIG_LOSS || x->level != FINDING_ALERT || x->signal != SIG_LOSS ||
		    x->kind != FINDING_LOSSY)
			continue;
		if (c->vars[x->var].kind == VAR_PATH && x->hurt_idx &&
		    (!pair || x->confidence > pair->confidence))
			pair = &best[i];
		else if (c->vars[x->var].kind == VAR_HOST || c->vars[x->var].kind == VAR_HOST_LINK)
			host_loss = fmax(host_loss, x->confidence);
	}
	if (!p && pair && pair->confidence > host_loss)
		p = pair;
	if (!p)
		return;
	for (size_t k = 0; k < p->n_hurt_idx; k++) {
		if (rate_events(&c->conns[p->hurt_idx[k]], s) < FABRIC_LOSS_FLOW_MIN_EVENTS)
			continue;
		uint32_t t = p->hurt_idx[m];

		p->hurt_idx[m++] = p->hurt_idx[k];
		p->hurt_idx[k] = t;
	}
	hurt = calloc(c->n_conns ? c->n_conns : 1, sizeof(*hurt));
	if (!hurt || m < (p == pair ? 1 : 2))
		goto out;
	for (size_t k = 0; k < m; k++)
		hurt[p->hurt_idx[k]] = true;
	v = loc_add_var(c, VAR_FABRIC, hurt_pairs(c, hurt), NULL, fabric_key[1]);
	if (v < 0)
		goto out;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (!rate_evidence(cn, s))
			continue;
		if (hurt[k]) {
			f.in_events += rate_events(cn, s);
			f.in_packets += cn->packets;
		} else {
			out_events += rate_events(cn, s);
			out_packets += cn->packets;
		}
	}
	if (f.in_packets <= 0)
		goto out;
	f.var = (uint32_t)v;
	f.strength = p->strength;
	f.specificity = p->specificity;
	f.confidence = f.set_confidence = p->confidence;
	f.hurt_idx = p->hurt_idx;
	f.n_hurt_idx = m;
	f.flows_hurt = (uint32_t)m;
	f.n_eff = (double)m;
	f.share = 1;
	f.in_rate = f.severity = f.in_events / f.in_packets;
	f.out_rate = out_packets > 0 ? out_events / out_packets : 0;
	f.effect = f.in_rate - f.out_rate;
	f.z = loc_poisson_z(f.in_events, f.out_rate * f.in_packets);
	f.hurt_ce_rate = s == SIG_ECN ? f.in_rate : -1;
	f.loss_clean_expected = -1;
	f.loss_dispersion = loc_loss_dispersion(c, &f);
	loc_find_onset(c, &f, hurt);
	*p = f;
out:
	free(hurt);
}

void loc_fabric_from_hosts(struct ctx *c, struct candidate *best, size_t n)
{
	if (c->topo)
		return;
	fabric_from_hosts(c, best, n, SIG_LOSS);
	fabric_from_hosts(c, best, n, SIG_ECN);
}
