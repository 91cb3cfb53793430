/* localize_search.c: the matching pursuit over the subjects, and the verdict on each pick. */
#include "lib/localize/localize_internal.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/log.h"
#include "lib/util/robust_stats.h"
#include "lib/util/util.h"

/*
 * Coefficient of one incidence for a signal. Loss and marks are one-way: variant 1 counts
 * only data crossing the subject from a to b, variant 2 only b to a, variant 0 either.
 */
static double coef(const struct ctx *c, const struct incidence *e, enum signal s, int variant)
{
	switch (s) {
	case SIG_LATENCY:
	case SIG_COMPLETION:
		/* Without a topology a host pair is expected to differ from the population
		 * (same leaf or not): only a change over time, loss or marks blame a pair. */
		if (c->vars[e->var].kind == VAR_PATH)
			return 0;
		/* fall through */
	case SIG_SHIFT:
		if (e->ack_only && s != SIG_COMPLETION) {
			/* Each packet stamped where it arrives: an ACK latency holds the
			 * responder's turnaround and the ACKs' way back, not the data's way. */
			return !variant ? e->rev : variant == 1 ? e->rev_ab : e->rev - e->rev_ab;
		}
		if (e->ack_only) {
			/* A message's completion (first data packet in at the responder, last
			 * ACK in at the requester) grows beyond its ACK latency only when its
			 * data arrive spread out: the data's way. */
			return !variant ? e->fwd : variant == 1 ? e->fwd_ab : e->fwd - e->fwd_ab;
		}
		/* A fixed delay slows every round trip that crosses the subject either way; a
		 * slow serializer mostly hurts the big data packets of one direction. */
		if (!variant)
			return e->rtt;
		return variant == 1 ? e->fwd_ab : e->fwd - e->fwd_ab;
	case SIG_LOSS:
		if (e->loss_rev) /* lost on the ACKs' way: NAKed READ requests, re-read responses */
			return variant == 1 ? e->rev_ab : variant == 2 ? e->rev - e->rev_ab : e->rev;
		/* fall through */
	case SIG_ECN:
		return variant == 1 ? e->fwd_ab : variant == 2 ? e->fwd - e->fwd_ab : e->fwd;
	case SIG_TURNAROUND:
		return c->vars[e->var].kind == VAR_HOST ? 1 : 0;
	default:
		return 0;
	}
}

/* Connection k's incidence on subject v (NULL: it does not cross it). */
static const struct incidence *conn_incidence(const struct ctx *c, const struct conn *k,
					      uint32_t v)
{
	for (size_t i = 0; i < k->inc_len; i++) {
		const struct incidence *e = &c->inc[k->inc_start + i];
		if (e->var == v)
			return e;
	}
	return NULL;
}

static double conn_coef(const struct ctx *c, const struct conn *k, uint32_t v, enum signal s,
			int variant)
{
	const struct incidence *e = conn_incidence(c, k, v);

	return e ? coef(c, e, s, variant) : 0;
}

/* ------------------------------------------------------------------ decisions */

double loc_strength(double z, double z_min)
{
	double r = z / z_min;
	return r <= 0 ? 0 : 1 - exp(-r * r);
}

/* Poisson z of observing `events` where `expected` were due. */
double loc_poisson_z(double events, double expected)
{
	return (events - expected) / sqrt(expected + 1);
}

/* "a -> b" when the pursuit preferred one direction of a link (variants 1 and 2). */
static void direction_text(const struct ctx *c, struct candidate *cand)
{
	const struct var *v = &c->vars[cand->var];
	char a[TOPO_NAME_MAX], b[TOPO_NAME_MAX];

	if (!cand->variant || (v->kind != VAR_LINK && v->kind != VAR_HOST_LINK))
		return;
	if (v->kind == VAR_LINK) {
		const struct topo_link *l = &c->topo->links[v->link];
		snprintf(a, sizeof(a), "%s", c->topo->nodes[l->a].name);
		snprintf(b, sizeof(b), "%s", c->topo->nodes[l->b].name);
	} else {
		addr_str(v->a, a, sizeof(a));
		snprintf(b, sizeof(b), "fabric");
	}
	snprintf(cand->direction, sizeof(cand->direction), "%.60s -> %.60s",
		 cand->variant == 1 ? a : b, cand->variant == 1 ? b : a);
}

/* The verdict on a latency pick: its excess against the spread of unaffected flows (the
 * first n_out of c->scratch), and its severity against their baseline. */
/*
 * The hurt flows' median latency against healthy peers: flows of the same class (hop count
 * and latency kind) that do not cross the subject at all. The baseline the fit uses is the
 * class median with the hurt flows in it, which understates a fault that hurts many flows
 * ("1.89x" for flows 12x slower than the rest).
 */
void loc_peer_severity(struct ctx *c, struct candidate *cand, const bool *hurt)
{
	enum signal s = cand->signal;
	bool comp = s == SIG_COMPLETION;
	double *tmp = c->scratch2, ratio[256], hurt_sum = 0, peer_sum = 0;
	size_t n_ratio = 0;

	cand->peer_ratio = 0;
	for (size_t k = 0; k < c->n_conns && n_ratio < ARRAY_SIZE(ratio); k++) {
		const struct conn *cn = &c->conns[k];
		double p50 = comp ? cn->comp_p50_us : cn->lat_p50_us, peer;
		size_t m = 0;

		if (!hurt[k] || !(comp ? cn->has_comp : cn->has_lat) || p50 <= 0)
			continue;
		for (size_t j = 0; j < c->n_conns; j++) {
			const struct conn *o = &c->conns[j];

			if (hurt[j] || conn_coef(c, o, cand->var, s, 0) > 0)
				continue;
			if (comp && o->has_comp && loc_same_comp_class(o, cn) && o->comp_p50_us > 0)
				tmp[m++] = o->comp_p50_us;
			else if (!comp && o->has_lat && o->klass == cn->klass && o->lat_p50_us > 0)
				tmp[m++] = o->lat_p50_us;
		}
		if (!m)
			continue;
		peer = rs_median(tmp, m);
		ratio[n_ratio++] = p50 / peer;
		hurt_sum += p50;
		peer_sum += peer;
	}
	if (!n_ratio)
		return;
	cand->peer_ratio = rs_median(ratio, n_ratio);
	cand->hurt_p50_us = hurt_sum / (double)n_ratio;
	cand->peer_p50_us = peer_sum / (double)n_ratio;
}

/*
 * A step under a busy collective: its connections carry too few ACK samples for a latency
 * signal, and a +20 us step is ~4% of their completion time, under slow_min_ratio. But a
 * step delays every packet, the quickest too: the link's floor (its round trips' lowest
 * window median of ACK latency in the later half of the trace, however few samples) moves
 * by about the completion excess, while a hot spot's queueing raises the completion more
 * than the floor (tuning seeds 1041-1050 of slow20us-fab-coll: the +20 us links 0.93-1.64,
 * other switch links' completion picks 0.45-0.89).
 */
#define STEP_FLOOR_SHARE 0.9

/*
 * A completion pick under slow_min_z still stands on its floor from FLOOR_STEP_MIN_Z on: in
 * a light fabric (5% load, 4 peers a host) a +20 us step from 1-4 ms into a 10 ms trace
 * gave its completion pick z 4.4-4.7 against peers spread by their few samples (sigma
 * 14-15 us over a 34 us baseline), while its lowest floor stood 20 us over the base and
 * every other switch link's at 0 (tuning seeds 3086-3125: slow20us-fab-light 3104, 3105
 * and slowx5-fab-1dir 3115 named, no other run changed). The floor's tests decide as
 * before; this only lets them be asked.
 */
#define FLOOR_STEP_MIN_Z 3

/* How many ends of a links.csv link are hosts (-1: not a links.csv link). 0: a link between
 * switches, whose floor's peers are the other such links; 1: a host's access link. */
static int link_host_ends(const struct ctx *c, uint32_t var)
{
	const struct var *v = &c->vars[var];
	const struct topo_link *l;

	if (v->kind != VAR_LINK || !c->topo)
		return -1;
	l = &c->topo->links[v->link];
	return c->topo->nodes[l->a].is_host + c->topo->nodes[l->b].is_host;
}

/*
 * Each connection's later-half ACK floor over the median of its path length's (-1e9 when
 * unmeasured). Any number of samples: the floor is a minimum, not a mean. Returns 0 or
 * -ENOMEM.
 */
static int conn_step_floors(const struct ctx *c, double *ex)
{
	size_t n = c->n_conns ? c->n_conns : 1;
	double *fl = malloc(n * sizeof(*fl)), *v = malloc(n * sizeof(*v));
	int err = -ENOMEM;

	if (!fl || !v)
		goto cleanup;
	for (size_t k = 0; k < c->n_conns; k++) {
		ex[k] = -1e9;
		fl[k] = c->conns[k].inc_len ? loc_later_floor_us(c->conns[k].req) : -1;
	}
	for (size_t k = 0; k < c->n_conns; k++) {
		size_t m = 0;
		double med;

		if (fl[k] <= 0 || ex[k] > -1e8)
			continue;
		for (size_t j = 0; j < c->n_conns; j++)
			if (fl[j] > 0 && c->conns[j].hops == c->conns[k].hops)
				v[m++] = fl[j];
		med = m >= c->cfg->min_class_flows ? rs_median(v, m) : -1;
		for (size_t j = 0; j < c->n_conns; j++)
			if (fl[j] > 0 && c->conns[j].hops == c->conns[k].hops)
				ex[j] = med > 0 ? fl[j] - med : -2e9;
	}
	for (size_t k = 0; k < c->n_conns; k++)
		if (ex[k] < -1.5e9)
			ex[k] = -1e9;
	err = 0;
cleanup:
	free(fl);
	free(v);
	return err;
}

/*
 * Each subject's mean connection floor excess over the round trips crossing it (-1e9 under
 * two), in the first n_vars doubles, then 2 * n_vars of room for step_floor_stands(), then
 * each subject's lowest floor over the base (loc_lowest_floors()): the judge of each pick
 * allocates nothing, so out of memory is -ENOMEM from the search, not a
 * pick silently rejected. NULL on ENOMEM.
 */
static double *step_floors(const struct ctx *c)
{
	size_t nv = c->n_vars ? c->n_vars : 1;
	double *ex = malloc((c->n_conns ? c->n_conns : 1) * sizeof(*ex));
	double *out = calloc(4 * nv, sizeof(*out)), *sum = out + nv;

	if (ex && out)
		loc_lowest_floors(c, out + 3 * nv, ex); /* ex as scratch, before its use */
	if (!ex || !out || conn_step_floors(c, ex)) {
		free(out);
		out = NULL;
		goto cleanup;
	}
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (ex[k] < -1e8)
			continue;
		for (size_t i = 0; i < cn->inc_len; i++) {
			const struct incidence *e = &c->inc[cn->inc_start + i];

			sum[2 * e->var] += e->rtt * ex[k];
			sum[2 * e->var + 1] += e->rtt;
		}
	}
	for (size_t v = 0; v < c->n_vars; v++)
		out[v] = sum[2 * v + 1] >= 2 ? sum[2 * v] / sum[2 * v + 1] : -1e9;
cleanup:
	free(ex);
	return out;
}

/*
 * The switch link's mean connection floor excess against the other switch links': true
 * when it stands STEP_FLOOR_SHARE of the pick's excess above their median, and
 * floor_min_z of their robust sigmas. Without c->step_floor (the evidence's re-judge of a
 * pick) false.
 */
static bool step_floor_stands(const struct ctx *c, struct candidate *cand)
{
	const double *mean = c->step_floor;
	double *vals, *tmp, x, med, sigma;
	size_t n = 0;

	if (!mean || mean[cand->var] < -1e8)
		return false;
	vals = c->step_floor + c->n_vars;
	tmp = vals + c->n_vars;
	for (size_t v = 0; v < c->n_vars; v++)
		if (v != cand->var && mean[v] > -1e8 && link_host_ends(c, (uint32_t)v) == 0)
			vals[n++] = mean[v];
	if (n < 4)
		return false;
	x = mean[cand->var];
	med = rs_median(vals, n);
	sigma = rs_sigma(vals, n, tmp);
	cand->step_floor_us = x - med;
	cand->step_floor_z = sigma > 0 ? (x - med) / sigma : 0;
	return x - med >= STEP_FLOOR_SHARE * cand->effect_us && sigma > 0 &&
	       cand->step_floor_z >= c->cfg->floor_min_z;
}

static bool judge_latency(struct ctx *c, struct candidate *cand, const bool *hurt, size_t n_out)
{
	const struct localize_config *cfg = c->cfg;
	const struct var *v = &c->vars[cand->var];
	double *out = c->scratch, *tmp = c->scratch2;
	enum signal s = cand->signal;

	/* Latency (or turnaround). */
	double base_sum = 0, p99_ratio[256];
	size_t n_base = 0, n_ratio = 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		if (!hurt[k])
			continue;
		cand->own_past |= s == SIG_LATENCY && cn->lat_own_past;
		base_sum += s == SIG_TURNAROUND ? loc_turnaround_base(cn) :
			    s == SIG_SHIFT	 ? cn->shift_before_us :
			    s == SIG_COMPLETION ? cn->comp_baseline_us :
						   cn->baseline_us;
		n_base++;
	}
	cand->baseline_us = n_base ? base_sum / (double)n_base : 0;
	/* us per unit of the signal: the shift is relative to the flows' own past. */
	double unit = s != SIG_SHIFT ? 1 : cand->baseline_us > 0 ? cand->baseline_us : 1;
	cand->sigma_us = n_out >= 3 ? rs_sigma(out, n_out, tmp) : 0;
	if (n_out >= 10) {
		/* Latencies have a peaked core and a long right tail (incast, bursts): the MAD
		 * sees only the core. The 90th percentile's distance from the median is the
		 * spread of a normal one would need to produce that tail; take the larger. */
		memcpy(tmp, out, n_out * sizeof(*tmp));
		rs_sort(tmp, n_out);
		double q50 = rs_median(tmp, n_out);
		double q90 = tmp[(size_t)(0.9 * (double)(n_out - 1))];
		cand->sigma_us = fmax(cand->sigma_us, (q90 - q50) / 1.2816);
	}
	cand->sigma_us = fmax(cand->sigma_us, cfg->noise_floor_frac * cand->baseline_us / unit);
	cand->sigma_us = fmax(cand->sigma_us, 0.01 / unit);
	/* The effect is a least-squares mean over the subject's flows: its standard error
	 * shrinks with the square root of their (coefficient-weighted) number. */
	cand->z = cand->effect / cand->sigma_us * sqrt(fmax(cand->n_eff, 1));
	cand->sigma_us *= unit;
	cand->effect_us = cand->effect * unit;
	cand->kind = s == SIG_TURNAROUND || v->kind == VAR_HOST ? FINDING_HOST : FINDING_SLOW;
	direction_text(c, cand);
	double min_z = s == SIG_SHIFT ? cfg->shift_min_z : cfg->slow_min_z;
	cand->strength = loc_strength(cand->z, min_z);
	/* Severity: each hurt connection's p99 against the median p99 of its class. */
	bool comp = s == SIG_COMPLETION;
	for (size_t k = 0; k < c->n_conns && n_ratio < 256; k++) {
		const struct conn *cn = &c->conns[k];
		double p99 = comp ? cn->comp_p99_us : cn->lat_p99_us;
		size_t m = 0;
		if (!hurt[k] || !(comp ? cn->has_comp : cn->has_lat))
			continue;
		for (size_t j = 0; j < c->n_conns; j++) {
			const struct conn *o = &c->conns[j];
			if (hurt[j])
				continue;
			if (comp && o->has_comp && loc_same_comp_class(o, cn) && o->comp_p99_us > 0)
				tmp[m++] = o->comp_p99_us;
			else if (!comp && o->has_lat && o->klass == cn->klass && o->lat_p99_us > 0)
				tmp[m++] = o->lat_p99_us;
		}
		if (!m || p99 <= 0)
			continue;
		double peer = rs_median(tmp, m);
		p99_ratio[n_ratio++] = p99 / peer;
		cand->hurt_p99_us += p99;
		cand->peer_p99_us += peer;
	}
	if (n_ratio) {
		cand->hurt_p99_us /= (double)n_ratio;
		cand->peer_p99_us /= (double)n_ratio;
		cand->p99_ratio = rs_median(p99_ratio, n_ratio);
	}
	if (s == SIG_LATENCY || s == SIG_COMPLETION)
		loc_peer_severity(c, cand, hurt);
	/* Severity: the typical latency of the hurt flows against their baseline ("slow by
	 * 2x"). Their p99 against their peers' goes into the text and the evidence: a p99 of
	 * ~100 samples in a loaded fabric is too noisy to decide on. */
	double fit_ratio = cand->baseline_us > 0 ? (cand->baseline_us + cand->effect_us) / cand->baseline_us : 0;
	double min_ratio = s == SIG_SHIFT ? cfg->shift_min_ratio : cfg->slow_min_ratio;
	/* Without peers the latency signal too is a flow against its own past: both bars. */
	if (cand->own_past)
		min_ratio = fmax(min_ratio, cfg->shift_min_ratio);
	/* What people read: against healthy peers where there are some, else the fit. */
	cand->severity = cand->peer_ratio > 0 && !cand->own_past ? cand->peer_ratio : fit_ratio;
	if (cand->baseline_us <= 0 || cand->z < (s == SIG_COMPLETION ? FLOOR_STEP_MIN_Z : min_z))
		return false;
	if (cand->z >= min_z && fit_ratio >= min_ratio)
		return true;
	cand->floor_step = s == SIG_COMPLETION && cfg->floor_min_z > 0 && !cand->n_set &&
			   link_host_ends(c, cand->var) == 0 &&
			   (step_floor_stands(c, cand) ||
			    (c->step_floor &&
			     loc_floor_leads(c, cand, c->step_floor + 3 * c->n_vars)));
	return cand->floor_step;
}

/*
 * The loss events (marks, for SIG_ECN) the pick's rate would have drawn on the connections
 * crossing it that lost (were marked) none: a lossy or marking link drops or marks on every
 * connection it carries, so a large figure says the loss lies on some of them only (a cable
 * further on that they share). Loss: only clean reliable connections count
 * (loc_conn_clean()); marks: connections whose marks were counted.
 */
static double clean_expected(const struct ctx *c, const struct candidate *cand)
{
	double packets = 0;

	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (cand->signal == SIG_ECN ? !cn->valid[SIG_ECN] || cn->ce_events > 0 :
					      !loc_conn_clean(cn))
			continue;
		packets += conn_coef(c, cn, cand->var, cand->signal, cand->variant) * cn->packets;
	}
	return cand->in_rate * packets;
}

/*
 * Judge a pick against the raw data: is the subject's excess large and significant next
 * to connections that do not cross it? Fills the candidate; returns true to report it.
 */
bool loc_judge(struct ctx *c, struct candidate *cand, const double *resid, bool *hurt)
{
	const struct localize_config *cfg = c->cfg;
	const struct var *v = &c->vars[cand->var];
	size_t n_out = 0, n_hurt = 0;
	double *out = c->scratch;
	double ab_events = 0, ab_pk = 0, ba_events = 0, ba_pk = 0;
	enum signal s = cand->signal;

	memset(hurt, 0, c->n_conns * sizeof(*hurt));
	cand->in_events = cand->in_packets = 0;
	double out_events = 0, out_pk = 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		double a;
		if (!cn->valid[s])
			continue;
		a = conn_coef(c, cn, cand->var, s, cand->variant);
		if (s == SIG_LOSS || s == SIG_ECN) {
			/* Only what earlier picks left unexplained counts as evidence. */
			double ev = fmax(resid[k], 0) * cn->packets;
			if (a > 0) {
				cand->in_events += a * ev;
				cand->in_packets += a * cn->packets;
				hurt[k] = ev > 0;
				/* Direction: where the data crossed the subject. */
				for (size_t i = 0; i < cn->inc_len; i++) {
					const struct incidence *e = &c->inc[cn->inc_start + i];
					double ab, ba;

					if (e->var != cand->var)
						continue;
					ab = coef(c, e, s, 1);
					ba = coef(c, e, s, 2);
					ab_events += ab * ev;
					ab_pk += ab * cn->packets;
					ba_events += ba * ev;
					ba_pk += ba * cn->packets;
				}
			} else {
				out_events += ev;
				out_pk += cn->packets;
			}
		} else {
			if (a > 0)
				hurt[k] = resid[k] > cand->effect / 2;
			else
				out[n_out++] = resid[k];
		}
	}
	size_t n_touch = 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		n_hurt += hurt[k];
		n_touch += c->conns[k].valid[s] && conn_coef(c, &c->conns[k], cand->var, s,
							     cand->variant) >= 1;
	}
	cand->flows_hurt = (uint32_t)n_hurt;
	cand->flows_crossing = (uint32_t)n_touch;
	if (!n_hurt || cand->effect <= 0)
		return false;
	/* A slow host link or host slows most of what crosses it; one slow flow among many
	 * is that flow's own story (its peer, its path), not the host's. A links.csv link
	 * with a host at one end is that host's link (every path to the host crosses it). */
	if ((s == SIG_LATENCY || s == SIG_SHIFT || s == SIG_COMPLETION) &&
	    (v->kind == VAR_HOST_LINK || v->kind == VAR_HOST || link_host_ends(c, cand->var) > 0) &&
	    2 * n_hurt < n_touch)
		return false;
	/* Likewise a host pair: a fault between two hosts slows most of their QPs. */
	if ((s == SIG_LATENCY || s == SIG_SHIFT || s == SIG_COMPLETION) && v->kind == VAR_PATH &&
	    n_touch > 1 && 2 * n_hurt <= n_touch)
		return false;

	if (s == SIG_LOSS || s == SIG_ECN) {
		double min_rate = s == SIG_LOSS ? cfg->loss_min_rate : cfg->ecn_min_rate;
		double min_events = s == SIG_LOSS ? cfg->loss_min_events : cfg->ecn_min_events;
		double min_ratio = s == SIG_LOSS ? cfg->loss_min_ratio : cfg->ecn_min_ratio;
		double min_z = s == SIG_LOSS ? cfg->loss_min_z : cfg->ecn_min_z;
		cand->in_rate = cand->in_packets > 0 ? cand->in_events / cand->in_packets : 0;
		cand->out_rate = out_pk > 0 ? out_events / out_pk : 0;
		/* Read only for a host or its link without a topology (loc_loss_on_part(),
		 * loc_marks_on_part()). */
		cand->loss_clean_expected = !c->topo &&
			(v->kind == VAR_HOST_LINK || v->kind == VAR_HOST) ? clean_expected(c, cand) : -1;
		cand->z = loc_poisson_z(cand->in_events, cand->out_rate * cand->in_packets);
		cand->severity = fmin(cand->effect, 1);
		cand->kind = s == SIG_LOSS ? FINDING_LOSSY : FINDING_CONGESTED;
		cand->strength = loc_strength(cand->z, min_z);
		direction_text(c, cand);
		return (cand->in_events >= min_events && cand->in_rate >= min_rate &&
			cand->in_rate >= min_ratio * cand->out_rate && cand->z >= min_z) ||
		       loc_loss_random_short_ratio(c, cand, hurt);
	}

	return judge_latency(c, cand, hurt, n_out);
}

/* ------------------------------------------------------------------ pursuit */

/* Tie-break order of a (variable, variant) slot: a host link's "H -> fabric" first. */
static int egress_rank(const struct ctx *c, size_t slot)
{
	return c->vars[slot / 3].kind == VAR_HOST_LINK && slot % 3 == 1;
}

/*
 * One connection's weight on one subject's variant for the pursuit's signal: the parts of
 * the least-squares sums that do not change from pick to pick, taken once per signal.
 */
struct pursuit_term {
	uint32_t conn;	/* index into c->conns */
	uint32_t slot;	/* subject * 3 + variant */
	double wa;	/* the connection's weight times its coefficient */
};

struct pursuit_terms {
	struct pursuit_term *t;
	size_t n;
	double *den; /* per slot: the sum of wa * coefficient, the same for every pick */
};

/* The terms of signal s, in the order the sums were always taken (connection, incidence,
 * variant), so that every sum comes out the same bit for bit. */
static int pursuit_terms_build(const struct ctx *c, enum signal s, struct pursuit_terms *pt)
{
	int n_variants = s == SIG_TURNAROUND ? 1 : 3;
	size_t cap = 0;

	pt->t = NULL;
	pt->n = 0;
	pt->den = calloc(3 * (c->n_vars ? c->n_vars : 1), sizeof(*pt->den));
	if (!pt->den)
		return -ENOMEM;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (!cn->valid[s])
			continue;
		for (size_t i = 0; i < cn->inc_len; i++) {
			const struct incidence *e = &c->inc[cn->inc_start + i];

			for (int var = 0; var < n_variants; var++) {
				double a = coef(c, e, s, var), wa = cn->w[s] * a;
				uint32_t slot = e->var * 3 + (uint32_t)var;

				if (a <= 0)
					continue;
				if (util_ensure_mem((void **)&pt->t, &cap, sizeof(*pt->t), pt->n + 1))
					return -ENOMEM;
				pt->t[pt->n++] = (struct pursuit_term){ (uint32_t)k, slot, wa };
				pt->den[slot] += wa * a;
			}
		}
	}
	return 0;
}

static void pursuit_terms_free(struct pursuit_terms *pt)
{
	free(pt->t);
	free(pt->den);
}

/*
 * Score every (subject, variant) slot not picked yet by how much of the residual it
 * explains (fit gain / penalty). Returns the best slot (-1 when none explains any); the
 * runner-up subject and its score, for the specificity, in *second and *second_score.
 */
static long pick_best(const struct ctx *c, const struct pursuit_terms *pt, const double *resid,
		      double *num, const bool *picked, double *best_score, long *second,
		      double *second_score)
{
	const double *den = pt->den;
	size_t nv = c->n_vars;
	long best = -1;

	*best_score = *second_score = 0;
	*second = -1;
	memset(num, 0, 3 * nv * sizeof(*num));
	for (size_t i = 0; i < pt->n; i++)
		num[pt->t[i].slot] += pt->t[i].wa * resid[pt->t[i].conn];
	for (size_t v = 0; v < 3 * nv; v++) {
		double score;
		if (den[v] <= 0 || num[v] <= 0 || picked[v / 3])
			continue;
		score = num[v] * num[v] / den[v] / c->vars[v / 3].penalty;
		/* An exact tie (the same connections, e.g. the egress of one host and
		 * the ingress of its only peer) goes to a host's egress: where its own
		 * traffic queues (NIC, shaper, pause frames). */
		if (score > *best_score * (1 + 1e-9) ||
		    (score >= *best_score * (1 - 1e-9) && best >= 0 &&
		     egress_rank(c, v) > egress_rank(c, (size_t)best))) {
			best = (long)v;
			*best_score = score;
		}
	}
	/* The runner-up is the best other subject, for the specificity. */
	for (size_t v = 0; v < 3 * nv; v++) {
		double score;
		if (den[v] <= 0 || num[v] <= 0 || picked[v / 3] || v / 3 == (size_t)best / 3)
			continue;
		score = num[v] * num[v] / den[v] / c->vars[v / 3].penalty;
		if (score > *second_score) {
			*second = (long)(v / 3);
			*second_score = score;
		}
	}
	return best;
}

/* A subject's best score over its variants (0 when it explains none of the residual). */
static double var_score(const struct ctx *c, const double *num, const double *den, size_t v)
{
	double best = 0;

	for (size_t i = v * 3; i < v * 3 + 3; i++)
		if (den[i] > 0 && num[i] > 0)
			best = fmax(best, num[i] * num[i] / den[i] / c->vars[v].penalty);
	return best;
}

/*
 * Links that explain the residual about as well as the picked link (ECMP spread without
 * paths.csv, two links always crossed together): naming one of them would be a coin flip.
 * They join the pick as a set and are not picked again; the runner-up becomes the best
 * subject outside the set. Only links: a host link's egress against its only peer's
 * ingress keeps its documented tie-break (docs/localization.md).
 */
static void collect_ties(struct ctx *c, struct candidate *cand, const double *num,
			 const double *den, bool *picked, double best_score, long *second,
			 double *second_score)
{
	size_t nv = c->n_vars;

	cand->n_set = 0;
	if (c->vars[cand->var].kind != VAR_LINK)
		return;
	cand->set[cand->n_set++] = cand->var;
	*second = -1;
	*second_score = 0;
	for (size_t v = 0; v < nv; v++) {
		double score;

		if (v == cand->var || picked[v])
			continue;
		score = var_score(c, num, den, v);
		if (c->vars[v].kind == VAR_LINK && score >= c->cfg->tie_min_ratio * best_score &&
		    cand->n_set < ARRAY_SIZE(cand->set)) {
			cand->set[cand->n_set++] = (uint32_t)v;
			picked[v] = true;
		} else if (score > *second_score) {
			*second = (long)v;
			*second_score = score;
		}
	}
	if (cand->n_set < 2)
		cand->n_set = 0;
}

/* The connections a pick hurts, as indices (NULL when none, or out of memory). */
uint32_t *loc_hurt_list(const struct ctx *c, const bool *hurt, size_t *n)
{
	uint32_t *idx;

	*n = 0;
	for (size_t k = 0; k < c->n_conns; k++)
		*n += hurt[k];
	idx = *n ? malloc(*n * sizeof(*idx)) : NULL;
	if (!idx)
		return NULL;
	*n = 0;
	for (size_t k = 0; k < c->n_conns; k++)
		if (hurt[k])
			idx[(*n)++] = (uint32_t)k;
	return idx;
}

/*
 * A step of latency lasts: a shift the hurt flows show only in the last windows of the
 * trace (the default window is a hundredth of it) is not told from a burst of queueing.
 * Tuning seeds 1081-1120: healthy-small-long 1108, +0.6 us (1.08x) on 3 connections of a
 * host link from the 99th window of 100, was an alert in both modes.
 */
#define SHIFT_MIN_AFTER 5

/*
 * ... unless it is far bigger than a burst: queueing adds a fraction, a fault that starts
 * just before the capture ends can multiply the latency (the testbed's 20 Mbit/s bucket
 * switched on 5-6 windows before the end: 1000x).
 */
#define SHIFT_LATE_MAX_RATIO 2.0

/* Held for too few of the last windows: under SHIFT_MIN_AFTER, and under a quarter of the
 * series (a trace of few windows, --window set long, has no 5 last windows to spare). */
static bool shift_too_late(const struct candidate *cand)
{
	size_t need = cand->onset_windows / 4;

	if (need > SHIFT_MIN_AFTER)
		need = SHIFT_MIN_AFTER;
	return cand->onset_after < need && cand->onset_ratio < SHIFT_LATE_MAX_RATIO;
}

/* The pick's lowest floor leads every other switch link's (loc_floor_leads()). */
static bool floor_leads_alone(const struct ctx *c, const struct candidate *cand)
{
	struct candidate probe = *cand;

	return c->step_floor && loc_floor_leads(c, &probe, c->step_floor + 3 * c->n_vars);
}

/*
 * The share of a round trip crossing the pick's subject (incidence e) that its effect
 * explains on the ACKs' way, beyond coef(). A one-way latency pick is fit on the data that
 * cross its slow way, but the ACKs that cross that way wait in the same queue or delay. Left
 * in the residual, they made a second pick of the link beside it, crossed the other way
 * (tuning seeds 4136-4139 with a topology: 5 wrong `slow` alerts after a right one-way pick,
 * each a sibling uplink of the same leaf crossed the other way).
 */
static double ack_way_coef(const struct ctx *c, const struct incidence *e,
			   const struct candidate *cand)
{
	if (!cand->variant || !loc_latency_pick(cand->signal) || e->ack_only ||
	    coef(c, e, cand->signal, 0) <= 0)
		return 0;
	return cand->variant == 1 ? e->rev_ab : e->rev - e->rev_ab;
}

/*
 * Take what the pick explains out of each connection's residual. What it explains on the
 * ACKs' way is taken only down to zero: a slowed serializer delays ACKs less than the data
 * it was fit on, and a residual pushed below zero would make the connections left look
 * faster than they are, and a later pick stand out against them (a 2-flow host link alert
 * on a healthy ECMP-skewed fabric, test_loaded_marking_set.sh 4111).
 */
static void remove_explained(const struct ctx *c, const struct candidate *cand, double *resid)
{
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct incidence *e = conn_incidence(c, &c->conns[k], cand->var);
		double ack;

		if (!e || !c->conns[k].valid[cand->signal])
			continue;
		resid[k] -= cand->effect * coef(c, e, cand->signal, cand->variant);
		ack = cand->effect * ack_way_coef(c, e, cand);
		if (ack > 0 && resid[k] > 0)
			resid[k] -= fmin(ack, resid[k]);
	}
}

int loc_pursue(struct ctx *c, enum signal s, struct candidate **cands, size_t *n_cands,
	       size_t *cap_cands)
{
	size_t nv = c->n_vars;
	double *resid = malloc((c->n_conns ? c->n_conns : 1) * sizeof(*resid));
	double *num = calloc(3 * (nv ? nv : 1), sizeof(*num));
	double first_score = 0;
	bool *hurt = calloc(c->n_conns ? c->n_conns : 1, sizeof(*hurt));
	bool *picked = calloc(nv ? nv : 1, sizeof(*picked));
	struct pursuit_terms terms = { 0 };
	const double *den = NULL;
	int err = -ENOMEM;

	if (!resid || !num || !hurt || !picked || pursuit_terms_build(c, s, &terms))
		goto cleanup;
	den = terms.den; /* the same for every pick */
	if (s == SIG_COMPLETION && c->topo && c->cfg->floor_min_z > 0) {
		c->step_floor = step_floors(c);
		if (!c->step_floor)
			goto cleanup;
	}
	for (size_t k = 0; k < c->n_conns; k++)
		resid[k] = c->conns[k].valid[s] ? c->conns[k].y[s] : 0;
	for (uint32_t iter = 0; iter < c->cfg->max_findings + 2; iter++) {
		double best_score, second_score;
		long second, best = pick_best(c, &terms, resid, num, picked, &best_score, &second,
					      &second_score);

		if (best < 0 || best_score <= 0)
			break;
		picked[best / 3] = true;
		if (first_score <= 0)
			first_score = best_score;
		struct candidate cand = { .var = (uint32_t)(best / 3), .signal = s,
					  .variant = (int)(best % 3) };
		cand.effect = num[best] / den[best];
		cand.n_eff = den[best];
		collect_ties(c, &cand, num, den, picked, best_score, &second, &second_score);
		if (c->step_floor && cand.n_set &&
		    loc_floor_breaks_tie(c, &cand, c->step_floor + 3 * nv, picked) &&
		    den[3 * cand.var + (uint32_t)cand.variant] > 0) {
			best = 3 * (long)cand.var + cand.variant;
			cand.effect = num[best] / den[best];
			cand.n_eff = den[best];
		}
		cand.specificity = best_score / (best_score + second_score);
		if (second >= 0) {
			loc_var_subject(c, &c->vars[second], cand.alt_subject,
					sizeof(cand.alt_subject));
			cand.alt_score_ratio = second_score / best_score;
		}
		bool report = loc_judge(c, &cand, resid, hurt);
		if (agentxdp_log_level >= LOG_DEBUG) {
			char subj[128];
			loc_var_subject(c, &c->vars[cand.var], subj, sizeof(subj));
			pr_debug("localize: %s pick %u: %s variant %d effect %.4g z %.3g baseline %.4g "
				 "sigma %.3g n_eff %.3g hurt %u spec %.2f rate %.3g/%.3g floor %.3g us %.3g sd "
				 "set %u -> %s\n",
				 loc_signal_name(s), iter, subj, cand.variant, cand.effect, cand.z,
				 cand.baseline_us, cand.sigma_us, cand.n_eff, cand.flows_hurt,
				 cand.specificity, cand.in_rate, cand.out_rate, cand.step_floor_us,
				 cand.step_floor_z, (unsigned)cand.n_set, report ? "reported" : "rejected");
		}
		if (report) {
			cand.resid = malloc(c->n_conns * sizeof(*cand.resid));
			if (!cand.resid)
				goto cleanup;
			memcpy(cand.resid, resid, c->n_conns * sizeof(*cand.resid));
		}
		/* Remove what this subject explains before looking for the next one. */
		remove_explained(c, &cand, resid);
		if (!report)
			continue;
		/* What a later pick explains is a remainder: weigh it by its share. */
		cand.share = best_score / first_score;
		/* A step whose lowest floor leads every other switch link's stands on it, not
		 * on the excess the queues picked before it left: they hide a step in the
		 * median, not in the minimum. A floor that only stands out on average may be
		 * the step's seen through links its connections share (slow20us-fab-coll
		 * 2977): that keeps its share. */
		if (cand.floor_step && floor_leads_alone(c, &cand))
			cand.share = 1;
		cand.confidence = cand.strength * cand.specificity * sqrt(cand.share);
		/* A set: the evidence says one of them, not which; each gets its share. */
		cand.set_confidence = cand.confidence;
		if (cand.n_set)
			cand.confidence /= (double)cand.n_set;
		if (cand.set_confidence < c->cfg->min_confidence) {
			pr_debug("localize: %s pick %u: confidence %.3f (share %.3f) under %.2f: "
				 "dropped\n", loc_signal_name(s), iter, cand.set_confidence,
				 cand.share, c->cfg->min_confidence);
			free(cand.resid);
			continue;
		}
		loc_find_onset(c, &cand, hurt);
		/* A shift whose flows show no change point together is a transient, not a
		 * fault; so is one they hold for only the last few windows of the trace. */
		if (s == SIG_SHIFT && (!cand.onset_change_point || shift_too_late(&cand))) {
			free(cand.resid);
			continue;
		}
		cand.hurt_idx = loc_hurt_list(c, hurt, &cand.n_hurt_idx);
		if ((cand.n_hurt_idx && !cand.hurt_idx) ||
		    util_ensure_mem((void **)cands, cap_cands, sizeof(**cands), *n_cands + 1)) {
			free(cand.resid);
			free(cand.hurt_idx);
			goto cleanup;
		}
		(*cands)[(*n_cands)++] = cand;
	}
	err = 0;
cleanup:
	free(c->step_floor);
	c->step_floor = NULL;
	pursuit_terms_free(&terms);
	free(resid);
	free(num);
	free(hurt);
	free(picked);
	return err;
}

/* RNR NAKs: the responder could not take the message. Always the host's doing. */
int loc_rnr_candidates(struct ctx *c, struct candidate **cands, size_t *n_cands,
		       size_t *cap_cands)
{
	double total = 0;

	for (size_t k = 0; k < c->n_conns; k++)
		total += c->conns[k].rnr_naks;
	if (total < c->cfg->rnr_min_naks)
		return 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		double naks = 0, packets = 0;
		uint32_t flows = 0;
		bool seen = false;
		if (cn->rnr_naks <= 0)
			continue;
		for (size_t j = 0; j < k; j++)
			seen |= c->conns[j].rnr_naks > 0 && !memcmp(c->conns[j].dst, cn->dst, 16);
		if (seen)
			continue;
		for (size_t j = k; j < c->n_conns; j++)
			if (!memcmp(c->conns[j].dst, cn->dst, 16)) {
				naks += c->conns[j].rnr_naks;
				packets += c->conns[j].packets;
				flows += c->conns[j].rnr_naks > 0;
			}
		if (naks < c->cfg->rnr_min_naks)
			continue;
		long v = loc_add_var(c, VAR_HOST, 0, cn->dst, NULL);
		if (v < 0)
			return (int)v;
		struct candidate cand = { .var = (uint32_t)v, .signal = N_SIGNALS };
		cand.kind = FINDING_HOST;
		cand.in_events = naks;
		cand.in_packets = packets;
		cand.in_rate = packets > 0 ? naks / packets : 0;
		cand.severity = cand.in_rate;
		cand.flows_hurt = flows;
		cand.z = naks;
		cand.strength = 1 - exp(-naks / c->cfg->rnr_min_naks);
		cand.specificity = naks / total;
		cand.confidence = cand.strength * cand.specificity;
		if (cand.confidence < c->cfg->min_confidence)
			continue;
		/* Onset: the first window that carried a NAK to this responder. */
		for (size_t j = 0; j < c->n_conns; j++) {
			const struct conn *o = &c->conns[j];
			const struct flow_stats *fs[2] = { o->req, o->resp };
			if (memcmp(o->dst, cn->dst, 16))
				continue;
			for (int f = 0; f < 2; f++)
				for (size_t w = 0; fs[f] && w < fs[f]->n_windows; w++)
					if (fs[f]->windows[w].naks &&
					    (!cand.onset_ns ||
					     fs[f]->windows[w].start_ns < cand.onset_ns)) {
						cand.onset_ns = fs[f]->windows[w].start_ns;
						break;
					}
		}
		if (util_ensure_mem((void **)cands, cap_cands, sizeof(**cands), *n_cands + 1))
			return -ENOMEM;
		(*cands)[(*n_cands)++] = cand;
	}
	return 0;
}
