/*
 * localize.c: slow-link localization by greedy sparse tomography over connections.
 *
 * Each connection (a requester flow and its responder peer) is a row; each candidate
 * subject (a link, a host's access link, a host pair, a responder host) is a column whose
 * coefficient is the probability that the connection's packets cross it (1 with a known
 * path, a fraction when spread over ECMP alternatives). Per signal (latency excess over a
 * robust baseline, loss events per packet, CE marks per packet) a non-negative matching
 * pursuit picks the column that explains most of what remains (007's votes and
 * NetBouncer's path-product fit are the two ends of this), then thresholds decide whether
 * the pick is a real fault. docs/localization.md explains every number.
 */
#include "lib/localize/localize.h"
#include "lib/localize/localize_internal.h"
#include "lib/util/robust_stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void localize_config_default(struct localize_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->min_latency_samples = 20;
	cfg->min_packets = 8;
	cfg->min_completion_samples = 10;
	cfg->min_class_flows = 4;
	cfg->baseline_windows = 3;
	cfg->slow_min_ratio = 1.20;
	cfg->shift_min_ratio = 1.05;
	cfg->slow_min_z = 5;
	cfg->shift_min_z = 4.5;
	cfg->noise_floor_frac = 0.01;
	cfg->loss_min_rate = 0.0002;
	cfg->loss_min_events = 3;
	cfg->loss_min_ratio = 5;
	cfg->loss_min_z = 3;
	cfg->ecn_min_rate = 0.005;
	cfg->ecn_min_events = 10;
	cfg->ecn_min_ratio = 4;
	cfg->ecn_min_z = 3;
	cfg->rnr_min_naks = 3;
	cfg->penalty_path = 1.5;
	cfg->penalty_host = 1.2;
	cfg->tie_min_ratio = 0.95;
	cfg->load_notice_ratio = 2;
	cfg->host_alert_min_ratio = 2;
	cfg->host_few_min_ratio = 4;
	cfg->busy_ce_rate = 0.001;
	cfg->queue_marks_z = 3;
	cfg->quiet_marks_ratio = 3;
	cfg->quiet_marks_max = 10;
	cfg->quiet_max_ratio = 2;
	cfg->quiet_fabric_max_ratio = 1.4;
	cfg->outlier_min_ratio = 2;
	cfg->outlier_min_z = 5;
	cfg->outlier_max_load = 0.9;
	cfg->floor_min_z = 4;
	cfg->step_floor_share = 0.75;
	cfg->loss_marks_ratio = 3;
	cfg->loss_random_max = 3;
	cfg->loss_random_min_events = 50;
	cfg->timer_min_timeouts = 10;
	cfg->max_ecmp_paths = 64;
	cfg->max_findings = 5;
	cfg->min_confidence = 0.2;
	cfg->onset_min_shift = 3;
}

static int kind_priority(enum finding_kind k)
{
	/* ECN marks say why a link is slow; loss outranks bare latency (ranking loss first
	 * lowered the right kind on the tuning seeds: 82% -> 79%). The headline names every
	 * kind seen. */
	switch (k) {
	case FINDING_HOST:
		return 4;
	case FINDING_CONGESTED:
		return 3;
	case FINDING_LOSSY:
		return 2;
	default:
		return 1;
	}
}

static int cmp_candidate(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	if (x->level != y->level)
		return x->level == FINDING_NOTICE ? 1 : -1;
	if (x->confidence != y->confidence)
		return x->confidence < y->confidence ? 1 : -1;
	return (x->severity < y->severity) - (x->severity > y->severity);
}

/* A link's tier: one that reaches a host, or one between switches; other subjects: 0. */
static int var_tier(const struct ctx *c, const struct var *v)
{
	const struct topo_link *l;

	if (v->kind != VAR_LINK || !c->topo)
		return 0;
	l = &c->topo->links[v->link];
	return c->topo->nodes[l->a].is_host || c->topo->nodes[l->b].is_host ? 1 : 2;
}

/* Packets through each subject, weighted by how surely: load[3 * var] either way,
 * load[3 * var + 1] from its a to its b, load[3 * var + 2] from b to a (the variants).
 * late: only the packets of the later half of the trace (conn.late_share): a fault
 * starting inside the trace sheds its link's load after its onset (0-40% into the run in
 * the matrix), which the whole trace's load dilutes with the time before it. */
static double *subject_loads(const struct ctx *c, bool late)
{
	double *load = calloc(3 * (c->n_vars ? c->n_vars : 1), sizeof(*load));

	if (!load)
		return NULL;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		double p = late ? cn->packets * cn->late_share : cn->packets;

		for (size_t i = 0; i < cn->inc_len; i++) {
			const struct incidence *e = &c->inc[cn->inc_start + i];
			load[3 * e->var] += p * (e->fwd > 0 ? e->fwd : e->rtt);
			load[3 * e->var + 1] += p * e->fwd_ab;
			load[3 * e->var + 2] += p * (e->fwd - e->fwd_ab);
		}
	}
	return load;
}

/* The subject's load against the median of its peers (subjects of its kind and tier), in
 * the candidate's direction: an incast host's link carries 3x its peers' load inward
 * only, about 2x both ways together. */
static double load_ratio(const struct ctx *c, const double *load, double *scratch,
			 const struct candidate *cand)
{
	double median;
	size_t n_same = 0;
	uint32_t var = cand->var;
	int d = cand->variant > 0 && cand->variant < 3 && load[3 * var + cand->variant] > 0 ?
			cand->variant : 0;

	for (size_t v = 0; v < c->n_vars; v++)
		if (c->vars[v].kind == c->vars[var].kind && load[3 * v + d] > 0 &&
		    var_tier(c, &c->vars[v]) == var_tier(c, &c->vars[var]))
			scratch[n_same++] = load[3 * v + d];
	if (!n_same)
		return 0;
	median = rs_median(scratch, n_same);
	return median > 0 ? load[3 * var + d] / median : 0;
}

/* Does connection cn cross the candidate's subject (or a member of its set)? */
static bool conn_crosses(const struct ctx *c, const struct conn *cn, const struct candidate *cand)
{
	for (size_t i = 0; i < cn->inc_len; i++) {
		const struct incidence *e = &c->inc[cn->inc_start + i];

		if (e->rtt <= 0 && e->fwd <= 0)
			continue;
		if (e->var == cand->var)
			return true;
		for (size_t j = 0; j < cand->n_set; j++)
			if (e->var == cand->set[j])
				return true;
	}
	return false;
}

/* CE marks per packet of the connections that do not cross the subject: how much the rest
 * of the fabric queues. */
static double peer_ce_rate(const struct ctx *c, const struct candidate *cand)
{
	double ce = 0, packets = 0;

	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (!cn->inc_len || conn_crosses(c, cn, cand))
			continue;
		ce += cn->ce_events;
		packets += cn->packets;
	}
	return packets > 0 ? ce / packets : 0;
}

static bool cand_names(const struct candidate *x, uint32_t var)
{
	if (x->var == var)
		return true;
	for (size_t i = 0; i < x->n_set; i++)
		if (x->set[i] == var)
			return true;
	return false;
}

/* Is s measured per packet on the data's way (loss, marks), or per round trip? */
static bool per_packet_signal(enum signal s)
{
	return s == SIG_LOSS || s == SIG_ECN;
}

/* Each subject's signal s per unit crossing it: sum[6 * var + d] the weighted values and
 * sum[6 * var + 3 + d] the weights, d as in subject_loads() (latency: d = 0 only). */
static void subject_signal(const struct ctx *c, enum signal s, double *sum)
{
	memset(sum, 0, 6 * (c->n_vars ? c->n_vars : 1) * sizeof(*sum));
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (s >= N_SIGNALS || !cn->valid[s])
			continue;
		for (size_t i = 0; i < cn->inc_len; i++) {
			const struct incidence *e = &c->inc[cn->inc_start + i];
			double *v = &sum[6 * e->var];
			double w = cn->w[s];

			if (!per_packet_signal(s)) {
				v[0] += w * e->rtt * cn->y[s];
				v[3] += w * e->rtt;
				continue;
			}
			v[0] += w * e->fwd * cn->y[s];
			v[3] += w * e->fwd;
			v[1] += w * e->fwd_ab * cn->y[s];
			v[4] += w * e->fwd_ab;
			v[2] += w * (e->fwd - e->fwd_ab) * cn->y[s];
			v[5] += w * (e->fwd - e->fwd_ab);
		}
	}
}

/* Subject var's value in direction d, or -1 when too little crosses it to tell. */
static double subject_value(const struct ctx *c, enum signal s, const double *sum, size_t var, int d)
{
	double min_w = per_packet_signal(s) ? c->cfg->min_packets : 2;
	const double *v = &sum[6 * var];

	return v[3 + d] >= min_w ? v[d] / v[3 + d] : -1;
}

/* Peers of subject var: subjects of its kind and tier, outside the candidate's set. */
static bool is_peer(const struct ctx *c, const struct candidate *cand, size_t v)
{
	const struct var *cv = &c->vars[cand->var];

	return v != cand->var && !cand_names(cand, (uint32_t)v) && c->vars[v].kind == cv->kind &&
	       var_tier(c, &c->vars[v]) == var_tier(c, cv);
}

/*
 * How far the candidate's subject stands out among its peers in signal s: its value over
 * their median, and the distance in robust sigmas. A peer's value is its worse direction
 * (loss, marks); so is the subject's, unless s is the candidate's own signal (then the
 * candidate's direction, or both). sum: 6 * n_vars doubles, vals and scratch n_vars each.
 */
static double subject_outlier(const struct ctx *c, const struct candidate *cand, enum signal s,
			      double *sum, double *vals, double *scratch, double *ratio, double *z,
			      double *lead)
{
	size_t n = 0;
	int n_dir = per_packet_signal(s) ? 3 : 1;
	double x = -1, med, sigma, top = -1;

	*ratio = *z = *lead = 0;
	subject_signal(c, s, sum);
	if (s == cand->signal)
		x = subject_value(c, s, sum, cand->var,
				  n_dir > 1 && cand->variant > 0 && cand->variant < 3 ? cand->variant : 0);
	else
		for (int k = 0; k < n_dir; k++)
			x = fmax(x, subject_value(c, s, sum, cand->var, k));
	if (x <= 0)
		return x;
	for (size_t v = 0; v < c->n_vars; v++) {
		double best = -1;

		if (!is_peer(c, cand, v))
			continue;
		for (int k = 0; k < n_dir; k++)
			best = fmax(best, subject_value(c, s, sum, v, k));
		if (best >= 0)
			vals[n++] = best;
		top = fmax(top, best);
	}
	if (n < 4)
		return x;
	med = rs_median(vals, n);
	sigma = rs_sigma(vals, n, scratch);
	*ratio = med > 0 ? x / med : 1e9;
	*lead = top > 0 ? x / top : 1e9;
	*z = sigma > 0 ? (x - med) / sigma : x > med ? 1e9 : 0;
	return x;
}

/* Each subject's mean latency floor excess (us) of the round trips crossing it, or -1e9. */
static double subject_floor(const struct ctx *c, size_t var, double *sum)
{
	return sum[2 * var + 1] >= 2 ? sum[2 * var] / sum[2 * var + 1] : -1e9;
}

/*
 * The candidate's subject's latency floor against its peers': how much its round trips'
 * quickest moments are slower than theirs, in us and in robust sigmas. sum: at least
 * 2 * n_vars doubles, vals and scratch n_vars each.
 */
static void measure_floor(const struct ctx *c, struct candidate *cand, double *sum, double *vals,
			  double *scratch)
{
	size_t n = 0;
	double x, med, sigma;

	cand->floor_excess_us = cand->floor_z = 0;
	cand->floor_known = false;
	memset(sum, 0, 2 * (c->n_vars ? c->n_vars : 1) * sizeof(*sum));
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (!cn->has_floor)
			continue;
		for (size_t i = 0; i < cn->inc_len; i++) {
			const struct incidence *e = &c->inc[cn->inc_start + i];

			sum[2 * e->var] += e->rtt * cn->floor_excess_us;
			sum[2 * e->var + 1] += e->rtt;
		}
	}
	x = subject_floor(c, cand->var, sum);
	if (x < -1e8)
		return;
	for (size_t v = 0; v < c->n_vars; v++)
		if (is_peer(c, cand, v) && subject_floor(c, v, sum) > -1e8)
			vals[n++] = subject_floor(c, v, sum);
	if (n < 4)
		return;
	med = rs_median(vals, n);
	sigma = rs_sigma(vals, n, scratch);
	cand->floor_excess_us = x - med;
	/* Peers all alike (quantized medians): only a floor above theirs stands out. */
	cand->floor_z = sigma > 0 ? (x - med) / sigma : x > med ? 1e9 : 0;
	cand->floor_known = true;
}

/* The candidate against its peers: in its own signal, in marks, latency and floor. */
static void peer_outlier(const struct ctx *c, struct candidate *cand, double *sum, double *vals,
			 double *scratch)
{
	double lat_lead;

	cand->outlier_ratio = cand->outlier_z = 0;
	if (cand->signal < N_SIGNALS)
		subject_outlier(c, cand, cand->signal, sum, vals, scratch, &cand->outlier_ratio,
				&cand->outlier_z, &cand->outlier_lead);
	subject_outlier(c, cand, SIG_ECN, sum, vals, scratch, &cand->mark_ratio, &cand->mark_z,
			&cand->mark_lead);
	cand->lat_excess_us = subject_outlier(c, cand, SIG_LATENCY, sum, vals, scratch,
					      &cand->lat_ratio, &cand->lat_z, &lat_lead);
	measure_floor(c, cand, sum, vals, scratch);
}

/* A link between switches, named alone (a set's members were not measured one by one). */
static bool switch_link(const struct ctx *c, const struct candidate *cand)
{
	return var_tier(c, &c->vars[cand->var]) == 2 && !cand->n_set;
}

/* The subject's marks against its peers' (ratio to their median, robust z, ratio to the
 * highest): its own signal's figures when marks picked it. */
static void subject_marks(const struct candidate *cand, double *ratio, double *z, double *lead)
{
	bool ecn = cand->signal == SIG_ECN;

	*ratio = ecn ? cand->outlier_ratio : cand->mark_ratio;
	*z = ecn ? cand->outlier_z : cand->mark_z;
	*lead = ecn ? cand->outlier_lead : cand->mark_lead;
}

/*
 * The load a faulty link sheds, against its peers': the whole trace's, or the later
 * half's when its marks stand at outlier_min_ratio times its peers' and lead every peer
 * link (loc_marks_lead()): a fault starting late in the trace carried its share before
 * its onset. Only then: DCQCN makes any hot link shed some load as the trace goes on
 * (healthy-over60's hottest links: 0.92-1.18x over the whole trace, 0.76-0.86x in the
 * later half, marking 1.5-2.3x their peers).
 */
static double shed_load(const struct localize_config *cfg, const struct candidate *cand)
{
	double ratio, z, lead;

	subject_marks(cand, &ratio, &z, &lead);
	if (cand->late_load_ratio > 0 && ratio >= cfg->outlier_min_ratio && loc_marks_lead(z, lead))
		return fmin(cand->load_ratio, cand->late_load_ratio);
	return cand->load_ratio;
}

/*
 * A link between switches marked far more than its peers of the same tier, in a busy
 * fabric: a fault standing out of the queueing, not its top. Only marks on switch links:
 * on the tuning seeds healthy busy host links reached 4.7 sigmas. And only a link carrying
 * less than its peers: a marking or slowed link sheds load (DCQCN), a collective's hot spot
 * carries more. A congested pick is measured in its own direction; any other pick on the
 * link by the link's worse direction (an ECN fault seen first as the slowed completions
 * of the flows it marks).
 */
static bool busy_outlier(const struct ctx *c, const struct candidate *cand)
{
	const struct localize_config *cfg = c->cfg;
	double ratio, z, lead;

	subject_marks(cand, &ratio, &z, &lead);
	/* Closer to the peers' spread, marks that lead every peer link (loc_marks_lead());
	 * far out of it, marks at least the highest peer's: two links marking alike at
	 * the top are the fabric's queueing, not one fault. */
	return var_tier(c, &c->vars[cand->var]) == 2 && cfg->outlier_min_ratio > 0 &&
	       ratio >= cfg->outlier_min_ratio &&
	       ((z >= cfg->outlier_min_z && lead >= 1) || loc_marks_lead(z, lead)) &&
	       shed_load(cfg, cand) < cfg->outlier_max_load;
}

/*
 * A switch link whose round trips' quickest moments are slower than its peer links', while
 * it carries less than they do: a slowed serializer (or any fault) that queues for real.
 * A queue marks in proportion to its length (RED between Kmin and Kmax) and drains in
 * quiet moments; a link that cannot carry its share keeps a standing queue, so its floor
 * rises. An ECN fault marks packets it does not delay: the floor stays (tuning seeds
 * 1041-1060: rate-halved links 0.9-21 sigmas, ECN faults at most 3.1 but one).
 */
static bool floor_outlier(const struct ctx *c, const struct candidate *cand)
{
	const struct localize_config *cfg = c->cfg;

	return switch_link(c, cand) && cfg->floor_min_z > 0 && cand->floor_z >= cfg->floor_min_z &&
	       shed_load(cfg, cand) < cfg->outlier_max_load;
}

/*
 * A step of added latency: the link's floor moved (robust sigmas over its peers) by about
 * as much as the pick's median excess. A step delays every packet, the quickest too;
 * queueing raises the median far more than the floor (tuning seeds 1041-1060: other
 * switch links of busy fabrics at most 0.69 of the median excess, +20 us links 0.79-1.01
 * in a collective). Any load: a step does not shed it.
 */
static bool latency_step(const struct ctx *c, const struct candidate *cand)
{
	const struct localize_config *cfg = c->cfg;

	if (cand->floor_step) /* measured by the search: step_floor_stands() */
		return true;
	return switch_link(c, cand) && cand->signal == SIG_LATENCY && cfg->floor_min_z > 0 &&
	       cand->floor_z >= cfg->floor_min_z && cand->effect_us > 0 &&
	       cand->floor_excess_us >= cfg->step_floor_share * cand->effect_us;
}

/*
 * The same delay on every hurt connection: a fixed step (a slow link's added latency), not
 * a queue. A queue's wait depends on when each connection's packets arrive and what else
 * is queued, so the connections it delays differ; a step adds one constant to all of them.
 * Their median excess spreads under CONSTANT_STEP_CV of its mean (its standard deviation
 * over the mean; tuning seeds 1561-1600: a +20 us link 0.0005 over 9 connections; the 18
 * load notices of healthy-ecmp-skew, healthy-incast and healthy-over-mixed on 1561-1580
 * 0.156-1.06, those on host links of slowx5-fab-1dir 0.20 and 0.76).
 */
#define CONSTANT_STEP_CV 0.05

static bool constant_step(const struct ctx *c, const struct candidate *cand)
{
	double sum = 0, sum2 = 0, mean;
	size_t n = 0;

	if (cand->signal != SIG_LATENCY && cand->signal != SIG_COMPLETION)
		return false;
	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];
		double x = cn->lat_p50_us - cn->baseline_us;

		if (!cn->has_lat || cn->baseline_us <= 0)
			continue;
		sum += x;
		sum2 += x * x;
		n++;
	}
	if (n < 3)
		return false;
	mean = sum / (double)n;
	return mean > 0 && sqrt(fmax(sum2 / (double)n - mean * mean, 0)) < CONSTANT_STEP_CV * mean;
}

/*
 * The candidate's hurt connections' CE marks against what their packets would carry at
 * the peers' rate: the rate (-1 when none are tracked) and a Poisson z, the count test of
 * a congested finding (localize_search.c).
 */
static void hurt_marks(const struct ctx *c, struct candidate *cand)
{
	double ce = 0, packets = 0, expected;

	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];

		ce += cn->ce_events;
		packets += cn->packets;
	}
	expected = cand->peer_ce_rate * packets;
	cand->hurt_ce_rate = packets > 0 ? ce / packets : -1;
	cand->hurt_ce_z = packets > 0 ? (ce - expected) / sqrt(expected + 1) : 0;
}

/* Busy: the connections that do not cross the candidate are CE-marked at busy_ce_rate. */
static bool fabric_busy(const struct candidate *cand, const struct localize_config *cfg)
{
	return cfg->busy_ce_rate > 0 && cand->peer_ce_rate >= cfg->busy_ce_rate;
}

/*
 * A latency excess that the fabric's queueing explains: the fabric is busy and the hurt
 * connections are marked more than their peers, beyond counting noise. A queue delays and
 * marks together; a slow cable or a step of added latency delays without a mark, so its
 * flows are marked like everyone else's (a 5%-load fabric marks about 0.1% with no fault).
 */
static bool latency_is_queueing(const struct candidate *cand, const struct localize_config *cfg)
{
	if (!fabric_busy(cand, cfg))
		return false;
	if (cfg->queue_marks_z <= 0 || cand->hurt_ce_rate < 0)
		return true;
	return cand->hurt_ce_z >= cfg->queue_marks_z;
}

/*
 * Queueing in a fabric that is not busy: the hurt connections are CE-marked several times
 * the peers' rate (beyond counting noise), so a queue delays them, and nothing says a
 * fault: the subject carries its peers' load (a faulty link sheds it), its latency floor
 * did not move (loc_floor_moved(); without a floor, a latency pick under quiet_max_ratio
 * of its peers': tuning seeds 1041-1050, hosts mode: healthy alerts marked 3.3-6.0x their
 * peers at 1.25-1.62x latency) and marks stay under quiet_marks_max times the peers' (an
 * ECN fault marks 35x and more). A fabric set has no load to compare: see
 * small_fabric_set().
 */
static bool quiet_queueing(const struct ctx *c, const struct candidate *cand)
{
	const struct localize_config *cfg = c->cfg;
	double peer = cand->peer_ce_rate;

	if (cfg->quiet_marks_ratio <= 0 || fabric_busy(cand, cfg) || cand->hurt_ce_rate < 0 ||
	    peer <= 0 || cand->hurt_ce_z < cfg->queue_marks_z)
		return false;
	if (cand->hurt_ce_rate < cfg->quiet_marks_ratio * peer ||
	    cand->hurt_ce_rate >= cfg->quiet_marks_max * peer)
		return false;
	if (c->vars[cand->var].kind == VAR_FABRIC || cand->load_ratio < cfg->outlier_max_load)
		return false;
	/* A queue drains in quiet moments: a floor that moved is a fault, whatever the
	 * latency ratio (slowx2-host 1099 and 1109: 1.5-1.6x, floor +3 us). With the
	 * floor rules off (floor_min_z 0) no floor moves: the ratio decides. */
	if (cfg->floor_min_z > 0 && loc_floor_known(cand))
		return !loc_floor_moved(c, cand);
	return cand->signal == SIG_ECN || cand->severity < cfg->quiet_max_ratio;
}

/*
 * A `fabric` set (no topology) of host pairs whose round trips run under
 * quiet_fabric_max_ratio times their peers': a queue of a few packets on the hashed
 * paths, which ordinary ECMP collisions build. Tuning seeds 1041-1060 without a topology:
 * such sets on healthy fabrics and beside host faults stood 1.24-1.33x (+2.0-3.5 us),
 * marked or not; 5x spine cables and +20 us steps 1.47x and up.
 */
static bool small_fabric_set(const struct ctx *c, const struct candidate *cand)
{
	return c->vars[cand->var].kind == VAR_FABRIC && cand->signal != SIG_ECN &&
	       cand->severity < c->cfg->quiet_fabric_max_ratio;
}

/*
 * Loss that tracks marks: the hurt connections CE-marked at least loss_marks_ratio times
 * as often as they lose packets. A queue that overflows marks first; a lossy cable or a
 * flapping link drops without marking (on the tuning seeds 1011-1020: injected loss and
 * flaps at most 1.1 marks per loss event, overflow drops of busy fabrics 5.5-110).
 */
static bool loss_tracks_marks(const struct ctx *c, const struct candidate *cand)
{
	double ce = 0, lost = 0;

	if (c->cfg->loss_marks_ratio <= 0 || !cand->n_hurt_idx)
		return false;
	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];

		ce += cn->ce_events;
		lost += cn->loss_events;
	}
	return lost > 0 && ce >= c->cfg->loss_marks_ratio * lost;
}

/*
 * Loss spread at random in time (loc_loss_dispersion()) on a switch link: a switch link's
 * queue, fed by the flows ECMP hashes there, overflows in bursts, while it is full, and its
 * drops cluster in those windows; a lossy cable drops whatever the queues do. Tuning seeds
 * 1601-1612, lossy picks in busy fabrics: 1% injected loss 1.0-2.2 (268-433 events),
 * overflow drops of busy healthy and faulty fabrics 3.9-8.5 (24-127); checked on
 * 1641-1645: injected 1.6-2.6, overflow 5.3-9.2. Few events tell nothing. Not a host's
 * access link: the queue toward a host that many senders feed can stay full, and a full
 * queue drops steadily (reporting seeds 141-160: three such overflows at 1.08-1.51).
 */
static bool loss_at_random(const struct ctx *c, const struct candidate *cand)
{
	const struct localize_config *cfg = c->cfg;

	return cfg->loss_random_max > 0 && switch_link(c, cand) &&
	       cand->in_events >= cfg->loss_random_min_events &&
	       cand->loss_dispersion >= 0 && cand->loss_dispersion < cfg->loss_random_max;
}

/* Why a switch link's kind was changed, one text for each reason (link_kind() and the
 * lossy branch of loc_classify_level() give the same ones). */
#define WHY_MARKS_STEADY "its marks: a steady share of its packets in every window, a marking fault"
#define WHY_FLOOR "its floor: a standing queue on a link carrying less than its peers"
#define WHY_STALL "its round trips wait longer than its peers' while it carries less: a slow link"
#define WHY_MARKS_DRAIN "its marks come and go: a queue standing out of its peers', not a marking fault"

/*
 * The story of a switch link alert told by the link rather than by the pick: a standing
 * queue on a link carrying less than its peers is a slow link, whatever signal saw it
 * first (rate-halved links marked and were read congested); in a busy fabric, marks
 * standing out with the floor unmoved are an ECN fault, even when the slowed completions
 * of its flows were picked first.
 */
static void link_kind(const struct ctx *c, struct candidate *cand)
{
	/* Marks that hold decide over the floor: a rate-halved link's marks never held (its
	 * floor 0 on all 40 tuning runs), ECN links that also raised the floor did. */
	if (loc_marks_steady(cand)) {
		if (cand->kind == FINDING_SLOW && !latency_step(c, cand)) {
			cand->kind = FINDING_CONGESTED;
			cand->kind_why = WHY_MARKS_STEADY;
		}
	} else if (cand->kind == FINDING_CONGESTED && loc_link_stalls(cand)) {
		cand->kind = FINDING_SLOW;
		cand->kind_why = WHY_STALL;
	} else if (cand->kind == FINDING_CONGESTED && floor_outlier(c, cand)) {
		cand->kind = FINDING_SLOW;
		cand->kind_why = WHY_FLOOR;
	} else if (cand->kind == FINDING_CONGESTED && switch_link(c, cand) &&
		   loc_marks_drain(cand)) {
		cand->kind = FINDING_SLOW;
		cand->kind_why = WHY_MARKS_DRAIN;
	} else if (cand->kind == FINDING_SLOW && cand->signal != SIG_ECN &&
		   fabric_busy(cand, c->cfg) && busy_outlier(c, cand) && !floor_outlier(c, cand) &&
		   !latency_step(c, cand) && !loc_marks_drain(cand)) {
		cand->kind = FINDING_CONGESTED;
		cand->kind_why = "its marks: far above its peer links' with no standing queue";
	}
}

/*
 * Alert or notice: an alert is what ordinary traffic does not explain. A slow or congested
 * subject carrying at least load_notice_ratio times its peers' load queues because of it,
 * and a responder's turnaround under 2x its peers' is a busy host; loss, RNR and the rest
 * stay alerts. load and late_load hold subject_loads() of the whole trace and of its later
 * half; scratch has room for n_vars values.
 */
void loc_classify_level(struct ctx *c, struct candidate *cand, const double *load,
			const double *late_load, double *scratch)
{
	const struct localize_config *cfg = c->cfg;

	cand->level = FINDING_ALERT;
	cand->notice_why = NULL;
	cand->kind_why = NULL;
	cand->load_ratio = load_ratio(c, load, scratch, cand);
	cand->late_load_ratio = 0;
	cand->marks_floor_known = false;
	if (switch_link(c, cand) && cand->load_ratio >= cfg->outlier_max_load &&
	    cand->load_ratio < cfg->load_notice_ratio)
		cand->late_load_ratio = load_ratio(c, late_load, scratch, cand);
	cand->peer_ce_rate = peer_ce_rate(c, cand);
	hurt_marks(c, cand);
	cand->stall_known = false;
	if (switch_link(c, cand) && fabric_busy(cand, cfg)) {
		loc_marks_floor(c, cand);
		loc_link_stall(c, cand);
	}
	cand->loss_dispersion = cand->signal == SIG_LOSS ? loc_loss_dispersion(c, cand) : -1;
	switch (cand->kind) {
	case FINDING_CONGESTED:
	case FINDING_SLOW:
		if (cand->load_ratio >= cfg->load_notice_ratio && !constant_step(c, cand))
			cand->notice_why = "it carries far more than its peers: load explains the queueing";
		/* A fabric that marks everywhere is queueing everywhere: the hottest queue
		 * is ordinary congestion (loaded, oversubscribed healthy fabrics raised an
		 * alert in every run), unless the link stands out of it. */
		else if ((cand->signal == SIG_ECN ? fabric_busy(cand, cfg)
						  : latency_is_queueing(cand, cfg)) &&
			 !(busy_outlier(c, cand) && !loc_queue_drains(cand)) &&
			 !floor_outlier(c, cand) && !latency_step(c, cand) && !loc_link_stalls(cand))
			cand->notice_why = "the whole fabric is queueing: flows elsewhere are CE-marked as well";
		else if (quiet_queueing(c, cand))
			cand->notice_why = "its flows are CE-marked a few times their peers': a queue, not a fault";
		else if (small_fabric_set(c, cand))
			cand->notice_why = "host pairs a little slower than their peers: ECMP collisions, not a fault";
		else if (switch_link(c, cand) && loc_quiet_queue_drains(c, cand))
			cand->notice_why = "its marks come and go over an unmoved floor: a queue draining between bursts";
		else
			link_kind(c, cand);
		break;
	case FINDING_HOST:
		if (cand->signal == SIG_TURNAROUND && cand->severity < cfg->host_alert_min_ratio)
			cand->notice_why = "a turnaround excess within what a busy responder shows";
		/* Data spread out by a slow link stretch a responder's wait by up to the
		 * link's slowdown; on one or two connections that is not told apart from
		 * a slow responder (slowx5-fab-each: 2.3-3.1x on 1-2, a slow responder 10x). */
		else if (cand->signal == SIG_TURNAROUND && cand->flows_hurt <= 2 &&
			 cand->severity < cfg->host_few_min_ratio)
			cand->notice_why = "a turnaround excess on one or two connections: the network may explain it";
		/* A host's round trips slower than its peers', in a fabric queueing
		 * everywhere: the same queues (no RNR, no turnaround from a second vantage). */
		else if ((cand->signal == SIG_LATENCY || cand->signal == SIG_COMPLETION) &&
			 latency_is_queueing(cand, cfg))
			cand->notice_why = "the whole fabric is queueing: flows elsewhere are CE-marked as well";
		break;
	case FINDING_LOSSY:
		/* Overflow drops of a fabric queueing everywhere: healthy loaded fabrics
		 * lose 0.06-1% on links marked several times as often. */
		if (cand->signal == SIG_LOSS && fabric_busy(cand, cfg) && loss_tracks_marks(c, cand) &&
		    !loss_at_random(c, cand)) {
			/* ... unless the queue stands on a link that carries less than its
			 * peers: its overflow is the link's own (a slowed serializer), or the
			 * link marks alone, ahead of every peer (an ECN fault's flows), with
			 * marks that hold or a floor that rose: marks that come and go over
			 * an unmoved floor are a queue draining between bursts, its drops
			 * too (loc_queue_drains(), as for its marks above). */
			if (floor_outlier(c, cand) && loc_marks_steady(cand)) {
				cand->kind = FINDING_CONGESTED;
				cand->kind_why = WHY_MARKS_STEADY;
			} else if (floor_outlier(c, cand)) {
				cand->kind = FINDING_SLOW;
				cand->kind_why = WHY_FLOOR;
			} else if (switch_link(c, cand) && busy_outlier(c, cand) &&
				   loc_marks_lead(cand->mark_z, cand->mark_lead) &&
				   !loc_queue_drains(cand)) {
				bool drain = loc_marks_drain(cand);

				cand->kind = drain ? FINDING_SLOW : FINDING_CONGESTED;
				cand->kind_why = drain ? WHY_MARKS_DRAIN :
						   "its marks: far above every peer link's with no standing queue";
			} else if (loc_link_stalls(cand)) {
				cand->kind = FINDING_SLOW;
				cand->kind_why = WHY_STALL;
			} else {
				cand->notice_why = "drops of a queue that marks them as well, in a fabric queueing everywhere";
			}
		}
		break;
	default:
		break;
	}
	/* A faulty link or host hurts every connection crossing it; in a fabric queueing
	 * everywhere, one connection's excess or few drops are what the queues give some
	 * connection (tuning seeds 1261-1340: 16 of 16 such alerts in busy fabrics were
	 * wrong, the right one-connection alerts all came from quiet fabrics). */
	if (!cand->notice_why && cand->kind != FINDING_HOST && cand->flows_hurt == 1 &&
	    fabric_busy(cand, cfg))
		cand->notice_why = "one connection in a fabric queueing everywhere: what its queues give some connection";
	loc_turnaround_idle(c, cand);
	if (cand->notice_why)
		cand->level = FINDING_NOTICE;
}

/* The same subject: the same var, or a set holding the other's var (a second signal may
 * pick another member of the same tie first). */
bool loc_same_subject(const struct candidate *x, const struct candidate *y)
{
	return cand_names(x, y->var) || cand_names(y, x->var);
}

/* Every candidate's level, from the loads summed once; out of memory is an error, not "no load". */
int loc_classify_levels(struct ctx *c, struct candidate *cands, size_t n)
{
	size_t nv = c->n_vars ? c->n_vars : 1;
	double *load = subject_loads(c, false);
	double *late_load = subject_loads(c, true);
	double *scratch = malloc(nv * sizeof(*scratch));
	double *vals = malloc(nv * sizeof(*vals));
	double *sum = malloc(6 * nv * sizeof(*sum));
	int err = load && late_load && scratch && vals && sum ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < n; i++) {
		peer_outlier(c, &cands[i], sum, vals, scratch);
		loc_classify_level(c, &cands[i], load, late_load, scratch);
	}
	free(load);
	free(late_load);
	free(scratch);
	free(vals);
	free(sum);
	return err;
}

/* Network subjects explain a responder's turnaround: data spread out by a slow link make
 * the responder wait for a message's last packet. */
static bool explains_kind(const struct ctx *c, const struct candidate *by, const struct candidate *x)
{
	return x->signal == SIG_TURNAROUND && by->kind != FINDING_HOST &&
	       (c->vars[by->var].kind == VAR_LINK || c->vars[by->var].kind == VAR_HOST_LINK);
}

/* The host a subject is about: a host, its access link, or a links.csv link with a host at
 * one end; NULL for switch links, host pairs and fabric findings. Also localize_each.c's. */
const uint8_t *loc_subject_host(const struct ctx *c, uint32_t var)
{
	const struct var *v = &c->vars[var];
	const struct topo_link *l;

	if (v->kind == VAR_HOST || v->kind == VAR_HOST_LINK)
		return v->a;
	if (v->kind != VAR_LINK || !c->topo)
		return NULL;
	l = &c->topo->links[v->link];
	if (c->topo->nodes[l->a].is_host)
		return c->topo->nodes[l->a].addr;
	return c->topo->nodes[l->b].is_host ? c->topo->nodes[l->b].addr : NULL;
}

static bool same_host(const struct ctx *c, uint32_t x, uint32_t y)
{
	const uint8_t *a = loc_subject_host(c, x), *b = loc_subject_host(c, y);

	return a && b && !memcmp(a, b, 16);
}

/* How many of x's hurt connections are marked, and how many cross by's subject. */
static void hurt_overlap(const struct ctx *c, const struct candidate *by, const struct candidate *x,
			 const bool *mark, size_t *shared, size_t *crossing)
{
	*shared = *crossing = 0;
	for (size_t k = 0; k < x->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[x->hurt_idx[k]];

		*shared += mark[x->hurt_idx[k]];
		*crossing += mark[x->hurt_idx[k]] || conn_crosses(c, cn, by);
	}
}

/*
 * Evidence on one or two connections beside a stronger alert needs more connections of its
 * own to be a fault of its own: often it crosses the stronger alert's subject (a READ
 * request lost on a flapping link shows as loss on its data's way back, a host pair's loss
 * is its lossy host's), else it is one flow's own story. On the tuning seeds 1041-1060
 * every alert ranked after another one with at most 3 hurt connections was wrong (32 of
 * 32), the right second alerts had 4 or more (12 of them exactly 4).
 */
#define WEAK_MAX_CONNS 2

/*
 * A later alert whose hurt connections are mostly an earlier alert's is that fault seen
 * again through its own flows (the sibling link of the same leaf, the responder behind a
 * slow link): with those flows removed its excess is gone. It becomes a notice. So does a
 * later alert on one or two connections, and a turnaround whose connections cross a slow
 * link. best[] is sorted; mark has room for
 * n_conns flags and is left cleared.
 */
static void demote_explained(struct ctx *c, struct candidate *best, size_t n, bool *mark)
{
	for (size_t j = 0; j < n; j++) {
		struct candidate *by = &best[j];

		if (by->level != FINDING_ALERT || !by->n_hurt_idx)
			continue;
		loc_mark_hurt(by, mark, true);
		for (size_t i = 0; i < n; i++) {
			struct candidate *x = &best[i];
			bool behind = explains_kind(c, by, x);
			size_t shared, crossing;

			if (i == j || x->level != FINDING_ALERT || !x->n_hurt_idx || (i < j && !behind))
				continue;
			/* A host's own link explains nothing about the host's own wait. */
			behind &= !same_host(c, by->var, x->var);
			hurt_overlap(c, by, x, mark, &shared, &crossing);
			if (2 * shared >= x->n_hurt_idx) {
				x->level = FINDING_NOTICE;
				x->notice_why = "its hurt flows are mostly those of a stronger alert: the same fault seen again";
			} else if (behind && 2 * crossing >= x->n_hurt_idx &&
				   c->vars[by->var].kind != VAR_FABRIC) {
				x->level = FINDING_NOTICE;
				x->notice_why = "a responder waiting for data that cross a slow link";
			} else if (i > j && x->n_hurt_idx <= WEAK_MAX_CONNS) {
				x->level = FINDING_NOTICE;
				x->notice_why = 2 * crossing >= x->n_hurt_idx ?
					"on one or two connections that also cross a stronger alert's subject" :
					"on one or two connections only, beside a stronger alert";
			}
		}
		loc_mark_hurt(by, mark, false);
	}
}

static bool latency_signal(enum signal s)
{
	return s == SIG_LATENCY || s == SIG_SHIFT || s == SIG_COMPLETION || s == SIG_TURNAROUND;
}

/*
 * A second latency alert needs a larger effect than the first (unless its subject marks as
 * well, slow_queue(): two kinds of evidence): beside a fault, ordinary
 * variation of a few connections reaches 1.2-1.35x (fabric findings of each-host READ
 * traces behind a lossy or slow host, tuning seeds 1041-1050: 13 of 13 such second
 * alerts wrong), while a second fault slowed its flows 1.75x or more (two-slow10us-hosts,
 * two-slowx5-loss1, two-ecn-slow-over). Below FOLLOWER_MIN_RATIO it is a notice.
 */
#define FOLLOWER_MIN_RATIO 1.5
static void demote_small_followers(struct candidate *best, size_t n)
{
	bool alert_before = false;

	for (size_t i = 0; i < n; i++) {
		struct candidate *x = &best[i];

		if (x->level != FINDING_ALERT)
			continue;
		/* Only a latency pick: a marks or loss pick read slow by its floor
		 * (link_kind()) has a rate for severity, always under 1.5. */
		if (alert_before && x->kind == FINDING_SLOW && latency_signal(x->signal) &&
		    !x->queue_marked && x->severity < FOLLOWER_MIN_RATIO) {
			x->level = FINDING_NOTICE;
			x->notice_why = "a small latency excess beside a stronger alert";
			continue;
		}
		alert_before = true;
	}
}

/*
 * Loss that only the sender's timer saw: its hurt connections restart after silence
 * (timeouts) many times, the responder never reports a missing packet (no PSN sequence
 * NAK), and they all leave one host. A link dropping data makes the responder NAK the gap
 * of every loss but a message's last packets (loss cells of the tuning seeds: 8-460 NAKs,
 * 0-11 timeouts); a NIC that times out early resends what arrived (nic-retransmit: 34-3518
 * timeouts, no NAK). The kind becomes host: the sender, not the wire.
 */
static void sender_timer(const struct ctx *c, struct candidate *cand)
{
	double naks = 0, timeouts = 0;

	if (cand->kind != FINDING_LOSSY || cand->signal != SIG_LOSS || !cand->n_hurt_idx ||
	    !c->cfg->timer_min_timeouts)
		return;
	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];

		if (memcmp(cn->src, c->conns[cand->hurt_idx[0]].src, 16))
			return;
		naks += cn->naks + cn->read_gaps; /* a re-read: a later response showed one lost */
		timeouts += cn->timeouts;
	}
	if (naks == 0 && timeouts >= c->cfg->timer_min_timeouts) {
		cand->kind = FINDING_HOST;
		loc_sender_subject(c, cand, c->conns[cand->hurt_idx[0]].src);
	}
}

/*
 * One finding, not two: the same subject, or a host that refused messages (RNR NAKs) and
 * latency on that host or its link. Each RNR NAK holds the requester back for the RNR
 * timer, so the host's messages complete late (rnr-rpc: 80x healthy peers' completion
 * time on the responder's link, the same host).
 */
static bool same_finding(const struct ctx *c, const struct candidate *x, const struct candidate *y)
{
	if (loc_same_subject(x, y))
		return true;
	if (x->signal == N_SIGNALS && latency_signal(y->signal))
		return same_host(c, x->var, y->var);
	if (y->signal == N_SIGNALS && latency_signal(x->signal))
		return same_host(c, x->var, y->var);
	return false;
}

/* One finding per subject: the most telling kind, with the others as evidence. Sorts
 * cands; returns the picks (NULL when out of memory), *n_best of them. */
static struct candidate *best_per_subject(const struct ctx *c, struct candidate *cands,
					  size_t n_cands, size_t *n_best)
{
	struct candidate *best = calloc(n_cands ? n_cands : 1, sizeof(*best));

	*n_best = 0;
	if (!best)
		return NULL;
	if (n_cands)
		qsort(cands, n_cands, sizeof(*cands), cmp_candidate);
	for (size_t i = 0; i < n_cands; i++) {
		size_t j;
		for (j = 0; j < *n_best; j++)
			if (same_finding(c, &best[j], &cands[i]))
				break;
		if (j == *n_best) {
			best[(*n_best)++] = cands[i];
			continue;
		}
		const struct candidate *other = &cands[i];
		struct candidate was = best[j];

		if (kind_priority(cands[i].kind) > kind_priority(best[j].kind)) {
			best[j] = cands[i];
			best[j].confidence = fmax(was.confidence, cands[i].confidence);
			other = &was;
		}
		/* An RNR host has no hurt set of its own: the latency it absorbs tells which
		 * connections it explains (demote_explained()). The pointers stay owned by
		 * cands[]. */
		if (!best[j].n_hurt_idx) {
			best[j].hurt_idx = other->hurt_idx;
			best[j].n_hurt_idx = other->n_hurt_idx;
		}
	}
	return best;
}

/*
 * A marked subject whose round trips are slow too is a slow subject that queues: a slowed
 * serializer delays every packet behind it and marks as its queue builds (slowx links of
 * the tuning seeds: a round-trip latency pick on the link at 0.9-1.1 times the marks'
 * confidence). Marks that are injected or come from elsewhere delay no packet: the marked
 * senders back off, which stretches message completion but not the round trip (ECN faults
 * of the tuning seeds: a completion pick at most, no round-trip one). The latency pick
 * takes the headline when it is an alert of its own (not queueing of a busy fabric).
 */
#define SLOW_QUEUE_MIN_SHARE 0.5

/* Does y name x's subject and every member of x's set (x names nothing y does not)? */
bool loc_names_within(const struct candidate *x, const struct candidate *y)
{
	if (!cand_names(y, x->var))
		return false;
	for (size_t i = 0; i < x->n_set; i++)
		if (!cand_names(y, x->set[i]))
			return false;
	return true;
}

static int slow_queue(struct ctx *c, struct candidate *best, size_t n_best,
		      const struct candidate *cands, size_t n_cands)
{
	for (size_t i = 0; i < n_best; i++) {
		struct candidate *b = &best[i], lat;
		const struct candidate *pick = NULL;
		int err;

		if (b->kind != FINDING_CONGESTED || b->level != FINDING_ALERT)
			continue;
		for (size_t j = 0; j < n_cands; j++)
			if (cands[j].signal == SIG_LATENCY && cands[j].kind == FINDING_SLOW &&
			    loc_names_within(&cands[j], b) &&
			    cands[j].confidence >= SLOW_QUEUE_MIN_SHARE * b->confidence &&
			    (!pick || cands[j].confidence > pick->confidence))
				pick = &cands[j];
		/* A queue delays the flows it marks: most of them, not one or two. */
		if (!pick || 2 * pick->n_hurt_idx < b->n_hurt_idx)
			continue;
		lat = *pick;
		err = loc_classify_levels(c, &lat, 1);
		if (err)
			return err;
		if (lat.level != FINDING_ALERT)
			continue;
		lat.confidence = fmax(lat.confidence, b->confidence);
		lat.queue_marked = true;
		/* The marks are one-way evidence: keep their direction when the latency has none. */
		if (!lat.direction[0])
			memcpy(lat.direction, b->direction, sizeof(lat.direction));
		*b = lat;
	}
	return 0;
}

int localize(const struct flow_stats *flows, size_t n_flows, const struct topology *topo,
	     const struct localize_config *cfg, struct finding **out, size_t *n_out)
{
	struct localize_config defaults;
	struct ctx c = { 0 };
	struct candidate *cands = NULL, *best = NULL;
	size_t n_cands = 0, cap_cands = 0, n_best = 0;
	struct finding *findings = NULL;
	size_t n_findings = 0;
	bool *mark = NULL;
	int err;

	if (!out || !n_out || (n_flows && !flows))
		return -EINVAL;
	*out = NULL;
	*n_out = 0;
	if (!cfg) {
		localize_config_default(&defaults);
		cfg = &defaults;
	}
	c.cfg = cfg;
	c.topo = topo && topo->n_links ? topo : NULL;
	c.flows = flows;
	c.n_flows = n_flows;
	err = -ENOMEM;
	c.scratch_len = n_flows ? n_flows : 1;
	for (size_t i = 0; i < n_flows; i++)
		if (flows[i].n_windows > c.scratch_len)
			c.scratch_len = flows[i].n_windows;
	c.scratch = malloc(c.scratch_len * sizeof(double));
	c.scratch2 = malloc(c.scratch_len * sizeof(double));
	if (!c.scratch || !c.scratch2)
		goto cleanup;
	err = loc_build_conns(&c);
	if (!err)
		err = loc_build_incidence(&c);
	if (err)
		goto cleanup;
	loc_build_signals(&c);
	for (int s = 0; s < N_SIGNALS && !err; s++)
		err = loc_pursue(&c, (enum signal)s, &cands, &n_cands, &cap_cands);
	if (!err)
		err = loc_rnr_candidates(&c, &cands, &n_cands, &cap_cands);
	if (!err)
		err = loc_fabric_candidate(&c, &cands, &n_cands, &cap_cands);
	if (err)
		goto cleanup;

	for (size_t i = 0; i < n_cands; i++)
		sender_timer(&c, &cands[i]);
	best = best_per_subject(&c, cands, n_cands, &n_best);
	if (!best) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = loc_classify_with_floor(&c, best, n_best, cands, n_cands);
	if (!err)
		err = slow_queue(&c, best, n_best, cands, n_cands);
	if (!err)
		err = loc_busy_marks(&c, &best, &n_best, cands, n_cands);
	if (err)
		goto cleanup;
	loc_floor_over_load(&c, best, n_best);
	loc_pair_sets(&c, best, n_best);
	if (n_best)
		qsort(best, n_best, sizeof(*best), cmp_candidate);
	mark = calloc(c.n_conns ? c.n_conns : 1, sizeof(*mark));
	if (!mark) {
		err = -ENOMEM;
		goto cleanup;
	}
	loc_turnaround_start(&c, best, n_best, mark);
	loc_responder_waits(&c, best, n_best, mark);
	loc_timer_explains(&c, best, n_best, mark);
	demote_explained(&c, best, n_best, mark);
	demote_small_followers(best, n_best);
	if (n_best)
		qsort(best, n_best, sizeof(*best), cmp_candidate);
	if (n_best > cfg->max_findings)
		n_best = cfg->max_findings;
	findings = calloc(n_best ? n_best : 1, sizeof(*findings));
	if (!findings) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n_best; i++) {
		struct candidate merged[8];
		size_t n_merged = 0;
		for (size_t j = 0; j < n_cands && n_merged < 8; j++)
			if (same_finding(&c, &cands[j], &best[i]))
				merged[n_merged++] = cands[j];
		err = loc_make_finding(&c, &best[i], merged, n_merged, &findings[n_findings]);
		if (err)
			goto cleanup;
		findings[n_findings].rank = (int)n_findings + 1;
		n_findings++;
	}
	*out = findings;
	*n_out = n_findings;
	findings = NULL;
	err = 0;
cleanup:
	findings_free(findings, n_findings);
	for (size_t i = 0; i < n_cands; i++) {
		free(cands[i].resid);
		free(cands[i].hurt_idx);
	}
	free(cands);
	free(best);
	free(mark);
	for (size_t i = 0; i < c.n_ecmp; i++)
		free(c.ecmp[i].hops);
	free(c.ecmp);
	loc_busy_free(&c);
	free(c.conns);
	free(c.vars);
	free(c.var_slots);
	free(c.inc);
	free(c.scratch);
	free(c.scratch2);
	return err;
}
