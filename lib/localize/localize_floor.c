/*
 * localize_floor.c: the lowest round trip through a switch link, over the propagation
 * base of its path length. A step of added latency delays every packet crossing it, the
 * quickest too; a queue that drains leaves some round trips at the base. In a collective
 * the destinations' downlinks absorb much of a step in the median (docs/evaluation.md,
 * "Twelfth round: the per-phase signal of a +20 us fabric step"), but not in the minimum.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "lib/localize/localize_internal.h"
#include "lib/track/flow.h"
#include "lib/util/log.h"

/* Path lengths with a base of their own; longer ones are not measured. */
#define FLOOR_MAX_HOPS 16

/*
 * How far the link's lowest floor must lead every other switch link's (times the highest
 * of them) and how much of the pick's completion excess it must be. Tuning seeds
 * 2146-2165 of slow20us-fab-coll (docs/evaluation.md, "Thirteenth round: the lowest floor
 * of a +20 us step"): the faulty link 19.3-20.0 us, 6.2-19.6x the highest other in 19 of
 * 20 (a hot link at 20.9 us leads in the other); 0.55-2.5 of its completion excess.
 */
#define FLOOR_LEAD_RATIO 1.5
#define FLOOR_LEAD_SHARE 0.5
/* Other switch links measured, at least: a lead over two or three links says little. */
#define FLOOR_LEAD_MIN_PEERS 4

/* Lowest window median of a flow's ACK latency in the later half of its windows, or -1.
 * With one ACK per window (a collective's message per phase) it is the lowest sample. */
double loc_later_floor_us(const struct flow_stats *f)
{
	double lo = -1;
	uint64_t mid;

	if (!f || !f->n_windows)
		return -1;
	mid = f->windows[0].start_ns / 2 + f->windows[f->n_windows - 1].start_ns / 2;
	for (size_t i = 0; i < f->n_windows; i++) {
		double p50 = f->windows[i].ack_latency_p50_ns / 1000.0;

		if (f->windows[i].start_ns > mid && f->windows[i].ack_samples > 0 &&
		    (lo < 0 || p50 < lo))
			lo = p50;
	}
	return lo;
}

/*
 * Each subject's lowest later-half floor among the connections whose round trip may cross
 * it, over the lowest floor of their path length (the propagation base), in out[n_vars]
 * (-1e9: none crosses it measured). fl is n_conns doubles of scratch.
 */
void loc_lowest_floors(const struct ctx *c, double *out, double *fl)
{
	double base[FLOOR_MAX_HOPS];

	for (size_t h = 0; h < FLOOR_MAX_HOPS; h++)
		base[h] = -1;
	for (size_t v = 0; v < c->n_vars; v++)
		out[v] = -1e9;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		fl[k] = -1;
		if (!cn->inc_len || cn->hops <= 0 || cn->hops >= FLOOR_MAX_HOPS)
			continue;
		fl[k] = loc_later_floor_us(cn->req);
		if (fl[k] > 0 && (base[cn->hops] < 0 || fl[k] < base[cn->hops]))
			base[cn->hops] = fl[k];
	}
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		double x;

		if (fl[k] <= 0)
			continue;
		x = fl[k] - base[cn->hops];
		for (size_t i = 0; i < cn->inc_len; i++) {
			const struct incidence *e = &c->inc[cn->inc_start + i];

			if (e->rtt > 0 && (out[e->var] < -1e8 || x < out[e->var]))
				out[e->var] = x;
		}
	}
}

/*
 * A switch link's lowest floor (loc_lowest_floors()) stands alone: FLOOR_LEAD_SHARE of the
 * pick's completion excess, and FLOOR_LEAD_RATIO times every other switch link's. A hot
 * link whose queue never drains also keeps its lowest floor up, but then it is not alone
 * with a step elsewhere, and a healthy collective's links all drain (seeds in the doc).
 * Fills step_floor_us (the lowest floor, us) and step_floor_z (its lead: the ratio to the
 * highest other switch link's).
 */
bool loc_floor_leads(const struct ctx *c, struct candidate *cand, const double *low)
{
	double x = low[cand->var], second = 0;
	size_t n = 0;

	if (x < -1e8 || !loc_switch_link(c, cand->var))
		return false;
	for (size_t v = 0; v < c->n_vars; v++) {
		if (v == cand->var || low[v] < -1e8 || !loc_switch_link(c, v))
			continue;
		n++;
		if (low[v] > second)
			second = low[v];
	}
	if (n < FLOOR_LEAD_MIN_PEERS)
		return false;
	cand->step_floor_us = x;
	cand->step_floor_z = second > 0 ? x / second : 0;
	if (agentxdp_log_level >= LOG_DEBUG) {
		char subj[128];

		loc_var_subject(c, &c->vars[cand->var], subj, sizeof(subj));
		pr_debug("localize: lowest floor %s %.2f us, highest other %.2f us (%zu), "
			 "excess %.2f us\n",
			 subj, x, second, n, cand->effect_us);
	}
	return cand->effect_us > 0 && x >= FLOOR_LEAD_SHARE * cand->effect_us &&
	       x >= FLOOR_LEAD_RATIO * second;
}

/*
 * A tie of links (collect_ties()) whose one member's lowest floor leads every other switch
 * link's FLOOR_LEAD_RATIO times, the set's other members' too: a step delays every round
 * trip through its link, a tied link shares only some of them. The pick becomes that member
 * and the others are free to be picked again. True when the set was broken. The member is
 * judged over both directions: a round trip's floor does not tell which direction delays
 * it, and the pick's variant names a direction of another link (rate2x-fab-over60 2549:
 * leaf2-spine1's spine1 -> leaf2 became leaf0-spine1's spine1 -> leaf0, a half effect).
 */
bool loc_floor_breaks_tie(const struct ctx *c, struct candidate *cand, const double *low,
			  bool *picked)
{
	long lead = -1;

	for (size_t i = 0; i < cand->n_set; i++) {
		uint32_t m = cand->set[i];
		bool leads = low[m] > 0 && loc_switch_link(c, m);

		for (size_t v = 0; leads && v < c->n_vars; v++)
			if (v != m && low[v] > -1e8 && loc_switch_link(c, v) &&
			    low[m] < FLOOR_LEAD_RATIO * low[v])
				leads = false;
		if (leads)
			lead = m;
	}
	if (lead < 0)
		return false;
	if (agentxdp_log_level >= LOG_DEBUG) {
		char was[128], now[128];

		loc_var_subject(c, &c->vars[cand->var], was, sizeof(was));
		loc_var_subject(c, &c->vars[lead], now, sizeof(now));
		pr_debug("localize: tie of %zu broken: %s -> %s, lowest floor %.2f us, "
			 "excess %.2f us\n",
			 cand->n_set, was, now, low[lead], cand->effect);
	}
	for (size_t i = 0; i < cand->n_set; i++)
		picked[cand->set[i]] = cand->set[i] == (uint32_t)lead;
	if (cand->var != (uint32_t)lead)
		cand->variant = 0;
	cand->var = (uint32_t)lead;
	cand->n_set = 0;
	return true;
}

/*
 * A step's story over the marks': a switch link picked both by its marks (congested, which
 * outranks slow when best_per_subject() merges them) and by a completion pick that its
 * lowest floor keeps (loc_floor_leads()) is told by the completion pick. A queue marks and
 * drains, leaving some round trips at the base; a link whose every round trip stays 20 us
 * over it, alone of all switch links, is slow, and its marks are what a step's longer
 * queue gives (tuning seeds in the doc: the faulty link's ECN pick headed a "whole fabric
 * is queueing" notice). Returns 0 or -ENOMEM.
 */
static int floor_step_story(const struct ctx *c, struct candidate *best, size_t n_best,
			    const struct candidate *cands, size_t n_cands)
{
	double *low = NULL, *fl = NULL;
	int err = -ENOMEM;

	if (!c->topo || !c->cfg->floor_min_z || !n_best)
		return 0;
	low = malloc((c->n_vars ? c->n_vars : 1) * sizeof(*low));
	fl = malloc((c->n_conns ? c->n_conns : 1) * sizeof(*fl));
	if (!low || !fl)
		goto cleanup;
	loc_lowest_floors(c, low, fl);
	for (size_t j = 0; j < n_best; j++) {
		if (best[j].kind != FINDING_CONGESTED)
			continue;
		for (size_t i = 0; i < n_cands; i++) {
			struct candidate step = cands[i];

			if (step.signal != SIG_COMPLETION || !step.floor_step ||
			    step.kind != FINDING_SLOW || !loc_same_subject(&step, &best[j]) ||
			    !loc_floor_leads(c, &step, low))
				continue;
			step.confidence = fmax(step.confidence, best[j].confidence);
			best[j] = step;
			break;
		}
	}
	err = 0;
cleanup:
	free(low);
	free(fl);
	return err;
}

/* Each subject's level (loc_classify_levels()), once the step's story is told. */
int loc_classify_with_floor(struct ctx *c, struct candidate *best, size_t n_best,
			    const struct candidate *cands, size_t n_cands)
{
	int err = floor_step_story(c, best, n_best, cands, n_cands);

	return err ? err : loc_classify_levels(c, best, n_best);
}

/*
 * A switch link (or a set of them) whose floor, its quickest round trips, stands
 * FLOOR_FAR_US or more over its peers' at floor_min_z robust sigmas holds its packets back,
 * whatever its marks or load say. Tuning seeds 4179-4182, the first `congested` alerts on
 * switch links: 3-8x serializers on a cable 7.0-155.9 us up (4.4-111 sigmas; 8 of 19 such
 * runs, at 0.73-2.29x their peers' load, kept from the floor rule of localize_classify.c by
 * their load or their steady marks), ECN faults (130 runs) at most 9.5 us at 1.8 sigmas
 * and 1.1 us at 13.1, healthy and wrong ones at most 1.4 us.
 */
#define FLOOR_FAR_US 5.0
static bool floor_far_over(const struct ctx *c, const struct candidate *cand)
{
	/* A set of switch links too: a two-leaf fabric's two cables to one spine. */
	return loc_switch_links_only(c, cand) && c->cfg->floor_min_z > 0 &&
	       cand->floor_z >= c->cfg->floor_min_z && cand->floor_excess_us >= FLOOR_FAR_US;
}

/* After slow_queue(): a marks alert its latency did not already make `slow`. */
void loc_floor_far_slow(const struct ctx *c, struct candidate *best, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct candidate *b = &best[i];

		if (b->kind != FINDING_CONGESTED || b->level != FINDING_ALERT || !floor_far_over(c, b))
			continue;
		b->kind = FINDING_SLOW;
		b->kind_why = "its floor: microseconds over its peers', a standing queue no marking "
			      "fault builds";
	}
}
