/*
 * localize_classify.c: each candidate's kind and level (alert or notice).
 *
 * The search (localize_search.c) picks the subjects; this file measures each pick against
 * its peers carrying comparable load (latency, loss, marks, floors, steps) and says whether
 * the evidence fits a fault (alert) or ordinary congestion explained by load (notice).
 * docs/localization.md, "Alerts and notices", explains every rule.
 */
#include "lib/localize/localize_internal.h"
#include "lib/util/robust_stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A link's tier: one that reaches a host, or one between switches; other subjects: 0. */
static int var_tier(const struct ctx *c, const struct var *v)
{
	const struct topo_link *l;

	if (v->kind != VAR_LINK || !c->topo)
		return 0;
	l = &c->topo->links[v->link];
	return c->topo->nodes[l->a].is_host || c->topo->nodes[l->b].is_host ? 1 : 2;
}

/* Bytes of data through each subject, weighted by how surely: load[3 * var] either way,
 * load[3 * var + 1] from its a to its b, load[3 * var + 2] from b to a (the variants).
 * Bytes, not packets: a queue waits for the bytes ahead of it to serialize, and a mixed
 * fabric's packets run from a 64-byte atomic to a 4 KiB WRITE segment (healthy-over-mixed,
 * tuning seeds 3446-3465: four spine cables carrying 0.73-0.78x their peers' packets but
 * 0.98-1.41x their bytes raised alerts as links queueing while carrying less).
 * late: only the data of the later half of the trace (conn.late_share): a fault
 * starting inside the trace sheds its link's load after its onset (0-40% into the run in
 * the matrix), which the whole trace's load dilutes with the time before it. */
static double *subject_loads(const struct ctx *c, bool late)
{
	double *load = calloc(3 * (c->n_vars ? c->n_vars : 1), sizeof(*load));

	if (!load)
		return NULL;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		double p = late ? cn->bytes * cn->late_share : cn->bytes;

		for (size_t i = 0; i < cn->inc_len; i++) {
			const struct incidence *e = &c->inc[cn->inc_start + i];
			load[3 * e->var] += p * (e->fwd > 0 ? e->fwd : e->rtt);
			load[3 * e->var + 1] += p * e->fwd_ab;
			load[3 * e->var + 2] += p * (e->fwd - e->fwd_ab);
		}
	}
	return load;
}

/* The way load[] is read for the candidate (d as in subject_loads()): its variant's
 * direction when load crossed the subject that way, else both ways together. */
static int load_way(const double *load, const struct candidate *cand)
{
	return cand->variant > 0 && cand->variant < 3 && load[3 * cand->var + cand->variant] > 0 ?
		       cand->variant : 0;
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
	int d = load_way(load, cand);

	for (size_t v = 0; v < c->n_vars; v++)
		if (c->vars[v].kind == c->vars[var].kind && load[3 * v + d] > 0 &&
		    var_tier(c, &c->vars[v]) == var_tier(c, &c->vars[var]))
			scratch[n_same++] = load[3 * v + d];
	if (!n_same)
		return 0;
	median = rs_median(scratch, n_same);
	return median > 0 ? load[3 * var + d] / median : 0;
}

/* Is s measured per packet on the data's way (loss, marks), or per round trip? */
static bool per_packet_signal(enum signal s)
{
	return s == SIG_LOSS || s == SIG_ECN;
}

/* Subject var's value in direction d, or -1 when too little crosses it to tell. */
static double subject_value(const struct ctx *c, enum signal s, const double *sum, size_t var, int d)
{
	double min_w = per_packet_signal(s) ? c->cfg->min_packets : 2;
	const double *v = &sum[6 * var];

	return v[3 + d] >= min_w ? v[d] / v[3 + d] : -1;
}

/* Does connection cn cross the candidate's subject (or a member of its set)? */
bool loc_conn_crosses(const struct ctx *c, const struct conn *cn, const struct candidate *cand)
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
 * of the fabric queues. A fabric set of loss or marks crosses its own connections (no
 * incidence names them; the latency set's peers keep its own, as tuned in round 30). */
static double peer_ce_rate(const struct ctx *c, const struct candidate *cand)
{
	bool own = c->vars[cand->var].kind == VAR_FABRIC && cand->signal != SIG_LATENCY;
	double ce = 0, packets = 0;
	size_t h = 0; /* hurt_idx is in ascending order */

	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (own && h < cand->n_hurt_idx && cand->hurt_idx[h] == k) {
			h++;
			continue;
		}
		if (!cn->inc_len || loc_conn_crosses(c, cn, cand))
			continue;
		ce += cn->ce_events;
		packets += cn->packets;
	}
	return packets > 0 ? ce / packets : 0;
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

/* Peers of subject var: subjects of its kind and tier, outside the candidate's set. */
static bool is_peer(const struct ctx *c, const struct candidate *cand, size_t v)
{
	const struct var *cv = &c->vars[cand->var];

	return v != cand->var && !loc_cand_names(cand, (uint32_t)v) && c->vars[v].kind == cv->kind &&
	       var_tier(c, &c->vars[v]) == var_tier(c, cv);
}

#define LOAD_MATCH_SHARE 0.75

/*
 * The subject's CE marks against those of its peers carrying about as much as it does
 * (LOAD_MATCH_SHARE of its load or more, in the candidate's direction): load that queues
 * the subject queues them as well. marks: subject_signal() of SIG_ECN.
 */
static void load_matched_marks(const struct ctx *c, struct candidate *cand, const double *load,
			       const double *marks)
{
	uint32_t var = cand->var;
	int d = load_way(load, cand);
	double x = subject_value(c, SIG_ECN, marks, var, d), top = -1;

	cand->load_peers = 0;
	cand->load_peer_marks = 0;
	if (x <= 0 || cand->signal != SIG_ECN)
		return;
	for (size_t v = 0; v < c->n_vars; v++) {
		double y;

		if (!is_peer(c, cand, v) || load[3 * v + d] < LOAD_MATCH_SHARE * load[3 * var + d])
			continue;
		y = subject_value(c, SIG_ECN, marks, v, d);
		if (y < 0)
			continue;
		cand->load_peers++;
		top = fmax(top, y);
	}
	if (cand->load_peers)
		cand->load_peer_marks = top > 0 ? x / top : 1e9;
}

/*
 * How far the candidate's subject stands out among its peers in signal s: its value over
 * their median, and the distance in robust sigmas. A peer's value is its worse direction
 * (loss, marks); so is the subject's, unless s is the candidate's own signal (then the
 * candidate's direction, or both). sum: subject_signal() of s; vals and scratch n_vars
 * doubles each.
 */
static double subject_outlier(const struct ctx *c, const struct candidate *cand, enum signal s,
			      const double *sum, double *vals, double *scratch, double *ratio,
			      double *z, double *lead)
{
	size_t n = 0;
	int n_dir = per_packet_signal(s) ? 3 : 1;
	double x = -1, med, sigma, top = -1;

	*ratio = *z = *lead = 0;
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

/*
 * The candidate against its peers: in its own signal, in marks, latency and floor. marks:
 * subject_signal() of SIG_ECN, summed once for every candidate; sum: 6 * n_vars doubles
 * for the other signals, vals and scratch n_vars each.
 */
static void peer_outlier(const struct ctx *c, struct candidate *cand, const double *marks,
			 double *sum, double *vals, double *scratch)
{
	double lat_lead;

	cand->outlier_ratio = cand->outlier_z = 0;
	if (cand->signal < N_SIGNALS && cand->signal != SIG_ECN)
		subject_signal(c, cand->signal, sum);
	if (cand->signal < N_SIGNALS)
		subject_outlier(c, cand, cand->signal, cand->signal == SIG_ECN ? marks : sum, vals,
				scratch, &cand->outlier_ratio, &cand->outlier_z, &cand->outlier_lead);
	subject_outlier(c, cand, SIG_ECN, marks, vals, scratch, &cand->mark_ratio, &cand->mark_z,
			&cand->mark_lead);
	if (cand->signal != SIG_LATENCY)
		subject_signal(c, SIG_LATENCY, sum);
	cand->lat_excess_us = subject_outlier(c, cand, SIG_LATENCY, sum, vals, scratch,
					      &cand->lat_ratio, &cand->lat_z, &lat_lead);
	measure_floor(c, cand, sum, vals, scratch);
}

/* A link between switches, named alone (a set's members were not measured one by one). */
static bool switch_link(const struct ctx *c, const struct candidate *cand)
{
	return loc_switch_link(c, cand->var) && !cand->n_set;
}

/* A host's access link: a links.csv link with a host at one end, or a host's own link
 * (no topology). */
static bool host_link(const struct ctx *c, const struct candidate *cand)
{
	const struct var *v = &c->vars[cand->var];

	return var_tier(c, v) == 1 || v->kind == VAR_HOST_LINK;
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
	return loc_switch_link(c, cand->var) && cfg->outlier_min_ratio > 0 &&
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
 * A host link (of the topology, or a host's own without one) whose floor rose as a step:
 * the link's quickest round trips moved by HOST_STEP_MIN_US or more (floor_min_z robust
 * sigmas over its peers'), and so did the floor of each connection it hurts, by about as
 * much (within HOST_STEP_TOLERANCE of the link's excess). Added latency delays every
 * packet, the quickest too, so each connection's floor moves by the link's step; a queue in
 * a fabric queueing everywhere lifts a link's floor over its peers' now and then but leaves
 * its connections' own floors (the lowest window p50 of each half) near their class's.
 * Tuning seeds 3746-3805 of both matrices (docs/evaluation.md, "Twenty-third round"): +30 us
 * host links in a 40%-loaded 48/6/3 fabric were notices ("the whole fabric is queueing",
 * "one connection ...") with the link's floor 58-61 us over its peers' at 41-66 sigmas and
 * their connections' floors 0.97-1.07x that. No healthy run's host link qualified: its
 * connections' floors stayed at 4.5 us or less (17.8 without a topology). The wrong notices
 * whose connections' floors rose (they also crossed a faulty link) stood 1.8-4.5x their
 * link's excess, or on a link whose floor rose 5.2 us.
 */
#define HOST_STEP_MIN_US 10.0
#define HOST_STEP_TOLERANCE 0.5

/*
 * How many of the candidate's hurt connections carry a floor, when the host link's floor
 * rose HOST_STEP_MIN_US or more at floor_min_z sigmas and each of those connections' floors
 * rose by at least (1 - HOST_STEP_TOLERANCE) of the link's rise, and by at most
 * (1 + HOST_STEP_TOLERANCE) of it when bounded; 0 otherwise.
 */
static size_t host_floors_rise(const struct ctx *c, const struct candidate *cand, bool bounded)
{
	double step = cand->floor_excess_us;
	size_t n = 0;

	if (!host_link(c, cand) || c->cfg->floor_min_z <= 0 ||
	    cand->floor_z < c->cfg->floor_min_z || step < HOST_STEP_MIN_US)
		return 0;
	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];

		if (!cn->has_floor)
			continue;
		if (cn->floor_excess_us < (1 - HOST_STEP_TOLERANCE) * step ||
		    (bounded && cn->floor_excess_us > (1 + HOST_STEP_TOLERANCE) * step))
			return 0;
		n++;
	}
	return n;
}

static bool host_link_step(const struct ctx *c, const struct candidate *cand)
{
	return host_floors_rise(c, cand, true) > 0;
}

/*
 * A host link whose floor rose (HOST_STEP_MIN_US or more, floor_min_z sigmas over its
 * peers') and so did every hurt connection's own floor, by at least HOST_STEP_TOLERANCE of
 * the link's rise: a standing queue on the host's link, which every connection crossing it
 * waits in, as behind a slowed serializer; its marks and drops are that queue's. Unlike a
 * step (host_link_step()) a queue delays connections unequally, so there is no upper
 * bound. A marking or lossy wire delays nothing (its connections' floors stay), and a
 * host link whose connections also cross a slow switch link has some connections that
 * do not (their floors stay). Not told apart: a marking host link all of whose connections
 * cross a slow switch link (that link is then an alert of its own). Tuning seeds
 * 3926-3945: 6x host links read `congested` or `lossy` in 9 of 40 runs rose 12.4-17.6 us,
 * every connection 0.67-2.5x that; the ECN host links of ho3-two-slow-ecn (+60 us on a
 * spine cable) rose 6-58 us, most with under 75% of their connections along.
 */
static bool host_link_queue(const struct ctx *c, const struct candidate *cand)
{
	return host_floors_rise(c, cand, false) >= 2;
}

/*
 * A host link's connections CE-marked both ways over it, HOST_WAY_MARKS_Z Poisson sigmas
 * over the peers' rate each way (hurt_ce_way_z): the queue toward a host marks what flows
 * into it, not what the host sends, while a marking cable marks both. Tuning seeds
 * 4086-4097, the healthy and ECN host cells with and without a topology: 50 notices of
 * host_queue_marks() on healthy fabrics, every one marked one way only; a 15% ECN host
 * cable on a quiet 55/5/2 fabric (ho15-ecn15-host) 11.6-50.4 sigmas each way.
 */
#define HOST_WAY_MARKS_Z 8.0

static bool marked_both_ways(const struct candidate *cand)
{
	return fmin(cand->hurt_ce_way_z[0], cand->hurt_ce_way_z[1]) >= HOST_WAY_MARKS_Z;
}

/*
 * An ECN fault on a host's link, in a fabric queueing everywhere: it marks every connection
 * the host has, far beyond the peers' rate, while the link carries less than its peers
 * (DCQCN sheds what it marks). A busy fabric's hot host link marks a few of its connections
 * now and then, or carries more than its peers (incast). The figures: the link's marks
 * HOST_MARKS_MIN_Z robust sigmas over its peer links', carrying under outlier_max_load of
 * their load, with HOST_MARKS_MIN_CONNS connections or more and HOST_MARKS_CONN_SHARE of
 * those crossing it each marked HOST_MARKS_CONN_RATIO times the peers' rate, plus two
 * marks (a short connection's count says little). Tuning seeds 3906-3925 of the matrix
 * (docs/evaluation.md, "Twenty-fourth round"): 25% ECN host links in a 35%-loaded 36/6/3
 * fabric were notices ("the whole fabric is queueing") at 10.7-85 sigmas with 5-13
 * connections, all marked; the healthy and wrong host links of that shape stood 4.8 sigmas
 * at most, while on two to four connections they reached 37: so few connections do not
 * tell a fault from a burst.
 */
#define HOST_MARKS_MIN_Z 7.0
#define HOST_MARKS_MIN_CONNS 5
#define HOST_MARKS_CONN_RATIO 3.0
#define HOST_MARKS_CONN_SHARE 0.75

/*
 * The load bar's exception: a host link marked both ways (marked_both_ways()) whose marks
 * spread over time as its packets do (marks_dispersion under HOST_MARKS_MAX_DISPERSION),
 * as a cable marks, whatever the link carries: an incast host's queue marks only what
 * flows into it, in bursts. A host with more connections than its peers carries more on a
 * quiet fabric, and a 15% mark rate sheds little of it. Tuning seeds 4086-4097, healthy and
 * ECN host cells, with and without a topology: the 15% ECN host cable of ho15-ecn15-host
 * at 1.0-1.8x its peers' load, dispersion 2.1-7.6 (12 runs, notices), an 18% one of
 * ho14-ecn18-host at 1.0x, 0.2 (2 runs); the one healthy host link marked both ways that
 * passed the other bars (ho7-healthy-ecmp-54 4089, 1.2x) at 27.1.
 */
#define HOST_MARKS_MAX_DISPERSION 10.0

static bool marks_cable_like(const struct candidate *cand)
{
	return marked_both_ways(cand) && cand->loss_dispersion >= 0 &&
	       cand->loss_dispersion < HOST_MARKS_MAX_DISPERSION;
}

static bool host_link_marks(const struct ctx *c, const struct candidate *cand)
{
	double ratio, z, lead;
	size_t marked = 0;

	if (cand->signal != SIG_ECN || !host_link(c, cand) ||
	    cand->flows_crossing < HOST_MARKS_MIN_CONNS ||
	    (shed_load(c->cfg, cand) >= c->cfg->outlier_max_load && !marks_cable_like(cand)))
		return false;
	subject_marks(cand, &ratio, &z, &lead);
	if (z < HOST_MARKS_MIN_Z)
		return false;
	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];

		marked += cn->ce_events >= HOST_MARKS_CONN_RATIO * cand->peer_ce_rate * cn->packets + 2;
	}
	return marked >= HOST_MARKS_MIN_CONNS &&
	       (double)marked >= HOST_MARKS_CONN_SHARE * cand->flows_crossing;
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
	loc_hurt_marks_by_way(c, cand);
}

/*
 * Queueing in a fabric that is not busy: the hurt connections are CE-marked several times
 * the peers' rate (beyond counting noise), so a queue delays them, and nothing says a
 * fault: the subject carries its peers' load (a faulty link sheds it), its latency floor
 * did not move (loc_floor_moved(); without a floor, a latency pick under quiet_max_ratio
 * of its peers': tuning seeds 1041-1050, hosts mode: healthy alerts marked 3.3-6.0x their
 * peers at 1.25-1.62x latency) and marks stay under quiet_marks_max times the peers' (an
 * ECN fault marks 35x and more). A fabric set has no load to compare: see
 * loc_small_fabric_set().
 */
static bool quiet_queueing(const struct ctx *c, const struct candidate *cand)
{
	const struct localize_config *cfg = c->cfg;
	double peer = cand->peer_ce_rate;

	if (cfg->quiet_marks_ratio <= 0 || loc_fabric_busy(cand, cfg) || cand->hurt_ce_rate < 0 ||
	    peer <= 0 || cand->hurt_ce_z < cfg->queue_marks_z)
		return false;
	if (cand->hurt_ce_rate < cfg->quiet_marks_ratio * peer ||
	    cand->hurt_ce_rate >= cfg->quiet_marks_max * peer)
		return false;
	if (c->vars[cand->var].kind == VAR_FABRIC || cand->load_ratio < cfg->outlier_max_load)
		return false;
	/* A queue drains in quiet moments: a floor that moved is a fault, whatever the
	 * latency ratio (slowx2-host 1099 and 1109: 1.5-1.6x, floor +3 us), and so is one
	 * that rose under a pick 2x its peers (loc_floor_rose_slow()). With the floor
	 * rules off (floor_min_z 0) no floor moves: the ratio decides. */
	if (cfg->floor_min_z > 0 && loc_floor_known(cand))
		return !loc_floor_moved(c, cand) && !loc_floor_rose_slow(c, cand);
	return cand->signal == SIG_ECN || cand->severity < cfg->quiet_max_ratio;
}

/*
 * A host (or its link) whose round trips run under quiet_max_ratio times its peers', its
 * connections marked no more than theirs, in a fabric queueing everywhere: the queues of
 * the paths its connections hash to, which give some host such an excess in any busy
 * fabric. A fault of the size the targets name doubles a round trip, and a step of added
 * latency keeps its alert whatever the ratio (host_link_step()). Tuning seeds 3906-3945 of
 * the matrix, host latency and completion alerts in busy fabrics with unmarked
 * connections: healthy fabrics 1.20-1.47x, wrong ones beside a fault 1.65-1.90x, every
 * right one 2.10x and up (4x serializers, +15 and +30 us steps).
 */
static bool busy_host_latency(const struct ctx *c, const struct candidate *cand)
{
	return (host_link(c, cand) || c->vars[cand->var].kind == VAR_HOST) &&
	       (cand->signal == SIG_LATENCY || cand->signal == SIG_COMPLETION) &&
	       loc_fabric_busy(cand, c->cfg) && cand->hurt_ce_rate >= 0 &&
	       cand->hurt_ce_z < c->cfg->queue_marks_z && cand->severity < c->cfg->quiet_max_ratio;
}

#define WHY_BUSY_HOST "under 2x its peers' round trips and marked no more, in a fabric queueing " \
		      "everywhere: the queues of its paths"

/*
 * One host pair's connections CE-marked and no other pair's: ECMP hashed them onto a path
 * whose queue marks them, a collision. A link marking for a fault marks every pair that
 * crosses it (a link with a topology, a `fabric` set of pairs without one), and a host
 * link's marks reach every peer of the host, so the pair alone says queue. Tuning seeds
 * 3906-3945 of the matrix: 10 of 10 ECN host-pair alerts were wrong, 8 on healthy fabrics
 * (marked 11-100x their peers, 0.5-1.4% of packets) and 2 beside a host fault.
 */
static bool pair_marks(const struct ctx *c, const struct candidate *cand)
{
	return c->vars[cand->var].kind == VAR_PATH && cand->signal == SIG_ECN;
}

/*
 * Marks that load does not explain: the subject CE-marked many times the most marked of its
 * peers carrying about its load (load_matched_marks()), where load queues every link that
 * carries it. Tuning seeds 4158-4159, every mode: host links carrying 2x their peers' load
 * and more in healthy fabrics marked at most 4.6x their load-matched peers, queues toward
 * one host 1.4x; slowed or marking host links 9.9x and more (LOAD_MATCH_MARKS). Switch
 * links only where a latency floor was measured: healthy READ fabrics' cables (no floor)
 * marked 4.1-61x theirs, ECMP-skewed ones with a floor at most 10.3x; a marking cable 57x
 * and a 5x one 121x (LOAD_MATCH_CABLE_MARKS).
 */
#define LOAD_MATCH_MARKS 8.0
#define LOAD_MATCH_CABLE_MARKS 20.0

static bool marks_beyond_load(const struct ctx *c, const struct candidate *cand)
{
	if (cand->signal != SIG_ECN || !cand->load_peers)
		return false;
	if (host_link(c, cand))
		return cand->load_peer_marks >= LOAD_MATCH_MARKS;
	return switch_link(c, cand) && loc_floor_known(cand) &&
	       cand->load_peer_marks >= LOAD_MATCH_CABLE_MARKS;
}

/*
 * A host link whose connections are CE-marked more than their peers', but by fewer than
 * HOST_QUEUE_MARKS_Z Poisson sigmas and under HOST_QUEUE_MARKS_RATIO times the peers' rate
 * (subject_marks()): the queue toward one host that a few senders meeting there build, in
 * any fabric. A marking fault marks its share of every packet it carries, so its excess
 * grows with its traffic, far past counting noise. Tuning seeds 3946-3955 of the matrix
 * (docs/evaluation.md, "Twenty-sixth round"): 6 ECN host-link alerts on healthy fabrics
 * (ho2-healthy-56-read, ho3-healthy-44-mixed, ho4-healthy-48-read, ho4-healthy-ecmp-48)
 * stood 9.8-36.6 sigmas at 4.5-17.7x their peers; every right one (10-50% marking faults)
 * 50.3 sigmas and up, and those under 20x at 50.3-76. A floor that stepped (host_step:
 * host_link_step()) is added latency whatever the marks say (a +35 us host link, 3949).
 */
#define HOST_QUEUE_MARKS_Z 43.0
#define HOST_QUEUE_MARKS_RATIO 20.0

static bool host_queue_marks(const struct ctx *c, const struct candidate *cand, bool host_step)
{
	double ratio, z, lead;

	if (cand->signal != SIG_ECN || !host_link(c, cand) || cand->hurt_ce_rate < 0 || host_step ||
	    marked_both_ways(cand) || marks_beyond_load(c, cand))
		return false;
	subject_marks(cand, &ratio, &z, &lead);
	return cand->hurt_ce_z < HOST_QUEUE_MARKS_Z && ratio < HOST_QUEUE_MARKS_RATIO;
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

/* Why a link's kind was changed, one text for each reason (link_kind() and the lossy
 * branch of loc_classify_level() give the same ones). */
#define WHY_MARKS_STEADY "its marks: a steady share of its packets in every window, a marking fault"
#define WHY_FLOOR "its floor: a standing queue on a link carrying less than its peers"
#define WHY_HOST_STEP "its floor and each of its connections' floors rose alike: added latency"
#define WHY_STALL "its round trips wait longer than its peers' while it carries less: a slow link"
#define WHY_MARKS_DRAIN "its marks come and go: a queue standing out of its peers', not a marking fault"

/*
 * The story of a link alert told by the link rather than by the pick: a standing queue on
 * a switch link carrying less than its peers, or a host link's step (host_step:
 * host_link_step()), is a slow link, whatever signal saw it first (rate-halved links marked
 * and were read congested); in a busy fabric, marks standing out with the floor unmoved
 * are an ECN fault, even when the slowed completions of its flows were picked first.
 */
static void link_kind(const struct ctx *c, struct candidate *cand, bool host_step)
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
	} else if (cand->kind == FINDING_CONGESTED && host_step) {
		cand->kind = FINDING_SLOW;
		cand->kind_why = WHY_HOST_STEP;
	} else if (cand->kind == FINDING_CONGESTED && switch_link(c, cand) &&
		   loc_marks_drain(cand)) {
		cand->kind = FINDING_SLOW;
		cand->kind_why = WHY_MARKS_DRAIN;
	} else if (cand->kind == FINDING_SLOW && cand->signal != SIG_ECN &&
		   loc_fabric_busy(cand, c->cfg) && busy_outlier(c, cand) && !floor_outlier(c, cand) &&
		   !latency_step(c, cand) && !loc_marks_drain(cand)) {
		cand->kind = FINDING_CONGESTED;
		cand->kind_why = "its marks: far above its peer links' with no standing queue";
	}
}

/*
 * A few connections (FEW_FLOWS_MAX at most) slower than their peers, CE-marked no more than
 * them (under queue_marks_z), in a fabric whose other connections are marked at
 * HEAVY_CE_RATE or more: a loaded fabric's queues sit on some paths for a while and not on
 * others. A faulty link in such a fabric hurts the many connections it carries. Tuning seeds
 * 2746-2845 (docs/evaluation.md, "Fifteenth round: a few connections in a fabric marking
 * everywhere"): the wrong alerts of this shape (healthy-over60, ecn20-fab-over: 3-4
 * connections, latency, peers marked 1.95-2.37%, hurt z 0.8-2.8) against every right
 * latency or completion alert on 4 connections or fewer (all cells, 2746-2755): peers marked
 * 0.03% at most, or the hurt connections marked beyond queue_marks_z (an ECN fault's, z 16).
 * A host whose READs are late only where it responds (responder_late()) on every connection
 * it has keeps its alert: a path's queue delays a host's requests as much as its answers,
 * and some of its connections only (ho12-slowresp45-40, tuning seeds 4066-4075: 45 us slow
 * responders, +38 to +44 us on all 4 of their connections, 2.7-4.2x, in a READ fabric whose
 * peers were marked 0.57-0.63%; a 4x cable toward a leaf made one of its hosts late on 2 of 4).
 */
#define FEW_FLOWS_MAX 4
#define HEAVY_CE_RATE 0.005

static bool few_in_heavy_queueing(const struct ctx *c, const struct candidate *cand)
{
	return cand->kind == FINDING_SLOW && cand->flows_hurt <= FEW_FLOWS_MAX &&
	       (cand->signal == SIG_LATENCY || cand->signal == SIG_COMPLETION) &&
	       cand->peer_ce_rate >= HEAVY_CE_RATE && cand->hurt_ce_rate >= 0 &&
	       cand->hurt_ce_z < c->cfg->queue_marks_z;
}

/* A host link late only where its host responds (loc_responder_late()): why, or NULL. */
static const char *responder_late(const struct ctx *c, const struct candidate *cand)
{
	return host_link(c, cand) ? loc_responder_late(c, cand) : NULL;
}

/*
 * A switch link carrying NO_FLOOR_LOAD_RATIO times its peers' load, over the whole trace and
 * its later half, whose floor nobody measured (READs: no ACK round trip times the path's
 * quickest moments): its queue is the load's, and nothing says the link itself is slow. A
 * faulty link sheds load as its flows slow down. Tuning seeds 3956-3985: the healthy
 * alerts of a 2:1 oversubscribed READ fabric (ho5-healthy-24-read, 8 of 30 runs) stood at
 * 1.49-1.98x their peers' load in both; every right alert on such a link 1.30x or less in
 * the later half (an 18% ECN cable, its flows backing off). A set of switch links always
 * crossed together (a two-leaf fabric's cables to one spine) is judged by its first link's
 * load as one link is: ho14-healthy-36-read (36 hosts on 2 leaves, 3 spines, READs; tuning
 * seeds 4066-4085) raised 6 `congested` set alerts in 20 runs at 1.37-1.98x, marks 1.6-2.7%.
 */
#define NO_FLOOR_LOAD_RATIO 1.4
/* ... resting on this many connections across it: a load ratio of a few is where ECMP
 * happened to put them (a 2-spine fabric of 4 hosts, samples/congested-cnp: a 30% ECN cable
 * at 1.55x over 4 connections; 3x cables over 5 and 6, tuning seeds 4066-4075; every
 * healthy notice of the rule on those seeds rested on 10 or more). */
#define NO_FLOOR_MIN_CONNS 8

/* A switch link (or a set of them) at ratio times its peers' load or more over the whole trace
 * and its later half. */
static bool loaded_both_halves(const struct ctx *c, const struct candidate *cand, double ratio)
{
	return loc_switch_links_only(c, cand) && cand->late_load_ratio > 0 &&
	       fmin(cand->load_ratio, cand->late_load_ratio) >= ratio;
}

static bool loaded_without_floor(const struct ctx *c, const struct candidate *cand)
{
	return !loc_floor_known(cand) && loaded_both_halves(c, cand, NO_FLOOR_LOAD_RATIO) &&
	       (!cand->flows_crossing || cand->flows_crossing >= NO_FLOOR_MIN_CONNS);
}

/*
 * A switch link carrying LOADED_QUEUE_RATIO times its peers' load or more, over the whole
 * trace and its later half, whose floor moved under LOADED_QUEUE_FLOOR_Z sigmas, and that
 * stands out less than a fault does: a slow pick under LOADED_QUEUE_MAX_Z sigmas, a
 * marking pick under LOADED_QUEUE_MARKS times its peers' marks. The busiest cable of a
 * fabric queues and marks more than the others, and no fault shows. Tuning seeds
 * 3996-4005, every switch-link alert with a topology:
 * - slow: 11 in 10 healthy runs (ho3-healthy-28, ho3-healthy-44-mixed, ho4-healthy-30,
 *   ho6-healthy-36, ho2-healthy-20-each) stood at 1.24-1.96x their peers' load in both
 *   halves, floor 1.4-5.2 sigmas, excess 5.1-18.3 sigmas. The six right ones at 1.2x or
 *   more with a floor under 6 sigmas stood at 21-246 sigmas (5x and 2x serializers plus a
 *   few us). Close: a 5x cable at 1.18x, 5.3 and 18.1 sigmas (two-slowx5-loss1).
 * - marking: once those are notices, the loaded cables of ho3-healthy-28 (1.87-1.97x)
 *   and ho6-healthy-36 (1.46x) stay `congested` alerts at 3.4-9.4x their peers' marks;
 *   every right one at 1.2x load or more was marked 16-296x (ECN 30-40% cables, 2x-7x
 *   serializers dropping).
 */
#define LOADED_QUEUE_RATIO 1.2
#define LOADED_QUEUE_FLOOR_Z 6.0
#define LOADED_QUEUE_MAX_Z 20.0
#define LOADED_QUEUE_MARKS 12.0

const char loc_why_loaded_queue[] = "it carries more than its peers, its floor barely moved and it "
				    "stands out less than a fault does: load explains the queueing";

static bool loaded_queue(const struct ctx *c, const struct candidate *cand)
{
	bool modest = cand->kind == FINDING_SLOW ? cand->z < LOADED_QUEUE_MAX_Z :
		      cand->signal == SIG_ECN && cand->mark_ratio > 0 &&
			      cand->mark_ratio < LOADED_QUEUE_MARKS;

	return modest && loc_floor_known(cand) && cand->floor_z < LOADED_QUEUE_FLOOR_Z &&
	       loaded_both_halves(c, cand, LOADED_QUEUE_RATIO);
}

/*
 * A host's link at LOADED_QUEUE_RATIO times its peers' load or more, its floor risen less
 * than that load lifts it (loc_floor_under_load()), under LOADED_QUEUE_MAX_Z sigmas and
 * marked under HOST_LOADED_MAX_MARKS times its peers' rate: its own load's queue. Tuning
 * seeds 4026-4045 without a topology: 12 such slow alerts in healthy runs (incast, ECMP
 * imbalance; 1.5-4.9x the load, marked 1.7-20x), 6 wrong ones in faulty runs; the right
 * ones, 3x serializers at 1.3-1.6x, marked 90-160x (a slowed serializer's standing queue).
 * With no floor measured (READs time no ACK), NO_FLOOR_LOAD_RATIO of the load stands in for
 * the floor's test, as for a switch link: tuning seed 4088, healthy READ fabrics
 * (healthy-each-read, ho5-healthy-24-read), host links at 1.96-1.99x, 6.0-15.8 sigmas, were
 * `slow` alerts; every right host-link alert with no floor on seeds 4086-4089 carried 1.25x
 * or less.
 */
#define HOST_LOADED_MAX_MARKS 40.0

static bool loaded_host_link(const struct ctx *c, const struct candidate *cand)
{
	return host_link(c, cand) && cand->kind == FINDING_SLOW &&
	       cand->load_ratio >= LOADED_QUEUE_RATIO && cand->z < LOADED_QUEUE_MAX_Z &&
	       (loc_floor_known(cand) ? loc_floor_under_load(cand) :
					cand->load_ratio >= NO_FLOOR_LOAD_RATIO) &&
	       (cand->hurt_ce_rate < 0 ||
		cand->hurt_ce_rate < HOST_LOADED_MAX_MARKS * cand->peer_ce_rate);
}

/*
 * A set of switch links always crossed together (a two-leaf fabric's cables to one spine)
 * marking at LOADED_SET_RATIO times its peers' load or more in both halves, over
 * NO_FLOOR_MIN_CONNS connections or more, its floor up under LOADED_SET_FLOOR_US: the
 * spine ECMP loads most, whose queue marks; a marking spine sheds load (DCQCN) and a slowed
 * one lifts its floor. With a topology, wrong `congested` set alerts of ho7-healthy-26,
 * ho6-healthy-ecmp-32, ho14-healthy-36-read and ho7-rate2x-host-1dir stood at 1.54-1.81x
 * (seeds 4098-4115) and 1.35-1.43x (4116-4118), floors up 1.2 us at most or unmeasured.
 * Right ECN sets of seeds 4066-4118 stood at 1.25x or less; the one right set over 1.3x
 * with its floor under 2 us, a flapping pair at 1.41x, was a notice by its load already.
 * Single links are left alone: right ECN, flap and loss cables stood at 1.45-1.8x there.
 */
#define LOADED_SET_RATIO 1.3
#define LOADED_SET_FLOOR_US 2.0
static bool loaded_marking_set(const struct ctx *c, const struct candidate *cand)
{
	return cand->n_set && cand->signal == SIG_ECN && loaded_both_halves(c, cand, LOADED_SET_RATIO) &&
	       cand->flows_crossing >= NO_FLOOR_MIN_CONNS &&
	       (!loc_floor_known(cand) || cand->floor_excess_us < LOADED_SET_FLOOR_US);
}

const char loc_why_far_more[] = "it carries far more than its peers: load explains the queueing";
const char loc_why_fabric_queueing[] = "the whole fabric is queueing: flows elsewhere are CE-marked as well";

/* Why load explains a slow or congested subject's excess (NULL: not, or a fixed step). */
static const char *load_notice_why(const struct ctx *c, const struct candidate *cand)
{
	const char *why = NULL;

	if (cand->load_ratio >= c->cfg->load_notice_ratio) {
		if (!cand->beyond_load)
			why = loc_why_far_more;
	} else if (loaded_without_floor(c, cand))
		why = "it carries well over its peers' load and no floor was measured to show a slow "
		      "link: load explains the queueing";
	else if (loaded_queue(c, cand))
		why = loc_why_loaded_queue;
	else if (loaded_marking_set(c, cand))
		why = "links always crossed together, carrying well over their peers' load with their floor "
		      "unmoved: the spine ECMP loads most, its queue marking";
	else if (loaded_host_link(c, cand))
		why = "its link carries more than its peers', its floor rose less than that load lifts "
		      "it and it stands out less than a fault does: a queue";
	return why && !loc_fixed_step(c, cand) ? why : NULL;
}

/*
 * The notices of a fabric queueing everywhere that any kind may get once its own story is
 * told, unless the floor stepped (host_step). A faulty link or host hurts every connection
 * crossing it; there, one connection's excess or few drops are what the queues give some
 * connection (tuning seeds 1261-1340: 16 of 16 such alerts in busy fabrics were wrong, the
 * right one-connection alerts all came from quiet fabrics); so are a few connections
 * marked no more than their peers (few_in_heavy_queueing()) and a host's small excess
 * (busy_host_latency()).
 */
static void busy_fabric_notices(const struct ctx *c, struct candidate *cand, bool host_step)
{
	if (cand->notice_why || host_step)
		return;
	if (cand->kind != FINDING_HOST && cand->flows_hurt == 1 && loc_fabric_busy(cand, c->cfg))
		cand->notice_why = "one connection in a fabric queueing everywhere: what its queues give some connection";
	else if (few_in_heavy_queueing(c, cand) &&
		 !(cand->flows_hurt >= cand->flows_crossing && responder_late(c, cand)))
		cand->notice_why = "a few connections slower than their peers and marked no more, in a fabric "
				   "marking everywhere: what its queues give some connections";
	else if (busy_host_latency(c, cand))
		cand->notice_why = WHY_BUSY_HOST;
}

/*
 * A host link's kind once its level is told: a standing queue makes it slow
 * (host_link_queue()); a slow one late only where its host answers is the host
 * (responder_late()), judged first as the link it looks like.
 */
static void host_link_kind(const struct ctx *c, struct candidate *cand)
{
	if ((cand->kind == FINDING_CONGESTED || cand->kind == FINDING_LOSSY) &&
	    host_link_queue(c, cand)) {
		cand->kind = FINDING_SLOW;
		cand->kind_why = "its floor and every connection's floor rose: a standing queue on the host's "
				 "link, a slow link";
	}
	if (cand->kind == FINDING_SLOW) {
		const char *why = responder_late(c, cand);

		if (why) {
			cand->kind = FINDING_HOST;
			cand->kind_why = why;
		}
	}
}

/* Why a host finding (RNR, turnaround, late round trips) is a notice; NULL: an alert. */
static const char *host_notice_why(const struct localize_config *cfg, const struct candidate *cand)
{
	if (cand->signal == SIG_TURNAROUND && cand->severity < cfg->host_alert_min_ratio)
		return "a turnaround excess within what a busy responder shows";
	/* Data spread out by a slow link stretch a responder's wait by up to the
	 * link's slowdown; on one or two connections that is not told apart from
	 * a slow responder (slowx5-fab-each: 2.3-3.1x on 1-2, a slow responder 10x). */
	if (cand->signal == SIG_TURNAROUND && cand->flows_hurt <= 2 &&
	    cand->severity < cfg->host_few_min_ratio)
		return "a turnaround excess on one or two connections: the network may explain it";
	/* A host's round trips slower than its peers', in a fabric queueing
	 * everywhere: the same queues (no RNR, no turnaround from a second vantage). */
	if ((cand->signal == SIG_LATENCY || cand->signal == SIG_COMPLETION) &&
	    loc_latency_is_queueing(cand, cfg))
		return loc_why_fabric_queueing;
	/* Round trips late where the host answers, under 2x its peers': a busy responder,
	 * as for its turnaround above. Tuning seeds 4066-4118, every mode: 25 of 26 such
	 * alerts were wrong (healthy incast fabrics' hosts at 1.24-1.60x, hosts beside a
	 * lossy or slow link), one a host link's fault read as its host (blind, 1.39x);
	 * right ones (slow responders) stood at 2.8x or more. */
	if ((cand->signal == SIG_LATENCY || cand->signal == SIG_COMPLETION) &&
	    cand->severity < cfg->host_alert_min_ratio)
		return "round trips under 2x its peers' where it answers: within what a busy "
		       "responder shows (a slow one is several times slower)";
	return NULL;
}

/*
 * Alert or notice: an alert is what ordinary traffic does not explain. A slow or congested
 * subject carrying at least load_notice_ratio times its peers' load queues because of it,
 * and a responder's turnaround under 2x its peers' is a busy host; loss, RNR and the rest
 * stay alerts. load and late_load hold subject_loads() of the whole trace and of its later
 * half; scratch has room for n_vars values.
 */
void loc_classify_level(struct ctx *c, struct candidate *cand, const double *load,
			const double *late_load, const double *marks, double *scratch)
{
	const struct localize_config *cfg = c->cfg;
	bool host_step; /* host_link_step(), once its inputs are set */

	cand->level = FINDING_ALERT;
	cand->notice_why = NULL;
	cand->kind_why = NULL;
	cand->load_ratio = load_ratio(c, load, scratch, cand);
	load_matched_marks(c, cand, load, marks);
	cand->beyond_load = cand->load_ratio >= cfg->load_notice_ratio && marks_beyond_load(c, cand);
	cand->late_load_ratio = 0;
	cand->marks_floor_known = false;
	if (loc_switch_links_only(c, cand) && cand->load_ratio >= cfg->outlier_max_load &&
	    cand->load_ratio < cfg->load_notice_ratio)
		cand->late_load_ratio = load_ratio(c, late_load, scratch, cand);
	cand->peer_ce_rate = peer_ce_rate(c, cand);
	hurt_marks(c, cand);
	cand->stall_known = false;
	if (switch_link(c, cand) && loc_fabric_busy(cand, cfg)) {
		loc_marks_floor(c, cand);
		loc_link_stall(c, cand);
	}
	cand->loss_dispersion = cand->signal == SIG_LOSS || (cand->signal == SIG_ECN &&
			!loc_switch_link(c, cand->var)) ? loc_loss_dispersion(c, cand) : -1;
	host_step = host_link_step(c, cand);
	switch (cand->kind) {
	case FINDING_CONGESTED:
	case FINDING_SLOW:
		cand->notice_why = load_notice_why(c, cand);
		if (cand->notice_why)
			break;
		/* A fabric that marks everywhere is queueing everywhere: the hottest queue
		 * is ordinary congestion (loaded, oversubscribed healthy fabrics raised an
		 * alert in every run), unless the link stands out of it. */
		if ((cand->signal == SIG_ECN ? loc_fabric_busy(cand, cfg)
					     : loc_latency_is_queueing(cand, cfg)) &&
		    !(busy_outlier(c, cand) && !loc_queue_drains(cand)) &&
		    !floor_outlier(c, cand) && !latency_step(c, cand) && !loc_link_stalls(cand) &&
		    !host_step && !host_link_marks(c, cand) && !loc_fabric_step(c, cand) &&
		    !loc_fabric_marks_stand(c, cand))
			cand->notice_why = loc_why_fabric_queueing;
		else if (quiet_queueing(c, cand))
			cand->notice_why = "its flows are CE-marked a few times their peers': a queue, not a fault";
		else if (loc_leaf_wide_set(c, cand))
			cand->notice_why = "every link between one leaf and the spines, alike: the leaf's own traffic "
					   "queues (one faulty cable stands alone)";
		else if (pair_marks(c, cand))
			cand->notice_why = "one host pair's connections CE-marked: a queue on the path ECMP gave them, "
					   "not a fault (a faulty link marks every pair crossing it)";
		else if (host_queue_marks(c, cand, host_step))
			cand->notice_why = "its connections CE-marked a few times their peers', as a queue toward one "
					   "host marks them: a marking fault marks far beyond counting noise";
		else if (loc_fabric_marks_queue(c, cand))
			cand->notice_why = loc_why_fabric_marks_queue;
		else if (loc_host_marks_burst(c, cand))
			cand->notice_why = loc_why_host_marks_burst;
		else if (loc_small_fabric_set(c, cand))
			cand->notice_why = "host pairs a little slower than their peers: ECMP collisions, not a fault";
		else if (switch_link(c, cand) && loc_quiet_queue_drains(c, cand))
			cand->notice_why = "its marks come and go over an unmoved floor: a queue draining between bursts";
		else
			link_kind(c, cand, host_step);
		break;
	case FINDING_HOST:
		cand->notice_why = host_notice_why(cfg, cand);
		break;
	case FINDING_LOSSY:
		/* Overflow drops of a busy fabric (healthy ones lose 0.06-1%, marked more). */
		if (cand->signal == SIG_LOSS && loc_fabric_busy(cand, cfg) && loc_loss_tracks_marks(c, cand) &&
		    !loss_at_random(c, cand)) {
			/* ... unless the queue stands on a link that carries less than its
			 * peers: its own overflow (a slowed serializer), or the link marks
			 * alone, ahead of every peer (an ECN fault's flows), marks that hold
			 * or a floor that rose: marks that come and go over an unmoved floor
			 * are a queue draining between bursts, its drops too. */
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
		if (!cand->notice_why)
			cand->notice_why = loc_loss_part_why(c, cand);
		break;
	default:
		break;
	}
	if (!cand->notice_why && loc_marks_on_part(c, cand))
		cand->notice_why = loc_why_marks_on_part;
	busy_fabric_notices(c, cand, host_step);
	host_link_kind(c, cand);
	loc_turnaround_idle(c, cand);
	if (cand->notice_why)
		cand->level = FINDING_NOTICE;
}

/* The same subject: the same var, or a set holding the other's var (a second signal may
 * pick another member of the same tie first). */
bool loc_same_subject(const struct candidate *x, const struct candidate *y)
{
	return loc_cand_names(x, y->var) || loc_cand_names(y, x->var);
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
	double *marks = malloc(6 * nv * sizeof(*marks));
	int err = load && late_load && scratch && vals && sum && marks ? 0 : -ENOMEM;

	if (!err)
		subject_signal(c, SIG_ECN, marks);
	for (size_t i = 0; !err && i < n; i++) {
		peer_outlier(c, &cands[i], marks, sum, vals, scratch);
		loc_classify_level(c, &cands[i], load, late_load, marks, scratch);
	}
	free(load);
	free(late_load);
	free(scratch);
	free(vals);
	free(sum);
	free(marks);
	return err;
}
