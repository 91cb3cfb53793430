/*
 * localize_each.c: a host finding whose hurt connections all join the same two hosts names
 * both of them: one host pair's round trips cross both hosts alike, so picking one end is
 * a coin flip (docs/localization.md, "What it cannot tell apart"). And a responder whose
 * turnaround grew after its first response is busy, not slow.
 */
#include <stdio.h>
#include <string.h>

#include "lib/localize/localize_internal.h"
#include "lib/util/robust_stats.h"
#include "lib/util/util.h"

/*
 * Tuning seeds 1121-1160, each-host and two-host cells without a topology: 13 host alerts
 * had every hurt connection (1 or 2) between one pair of hosts; 7 named the faulty end
 * and 6 the other one, the runner-up scored 0.42-1.0 of the pick (1.0, an exact tie, in
 * 3 of the 6 wrong ones). Where the runner-up was the other end, 2 picks were right
 * (0.50-0.52) and 5 wrong (0.55-1.0): no margin to cut at, so both ends are named and the
 * confidence shared. Where the runner-up was another subject of the pick's own host (3
 * right of 3), the other end scored lower than both: the pick stays alone.
 */

/* The one host every hurt connection of cand joins its subject's host to, or NULL. */
static const uint8_t *pair_partner(const struct ctx *c, const struct candidate *cand)
{
	const uint8_t *h = c->vars[cand->var].a, *partner = NULL;

	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];
		const uint8_t *other;

		if (!memcmp(cn->src, h, 16))
			other = cn->dst;
		else if (!memcmp(cn->dst, h, 16))
			other = cn->src;
		else
			return NULL;
		if (!memcmp(other, h, 16) || (partner && memcmp(other, partner, 16)))
			return NULL;
		partner = other;
	}
	return partner;
}

/* The subject of the same kind on host a (-1: the model has none). */
static long host_var(const struct ctx *c, enum var_kind kind, const uint8_t *a)
{
	for (size_t v = 0; v < c->n_vars; v++)
		if (c->vars[v].kind == kind && !memcmp(c->vars[v].a, a, 16))
			return (long)v;
	return -1;
}

/*
 * The way the hurt data go between the two hosts: a pick "H -> fabric" (data leaving H) or
 * "fabric -> H" (entering H) fits the other end's link the other way round, so the set's
 * direction is the pair's, "H -> P" or "P -> H", never one end's. No direction stays none.
 */
static void pair_direction(const struct ctx *c, struct candidate *x, const uint8_t *partner)
{
	char h[64], p[64];

	if (!x->direction[0] || c->vars[x->var].kind != VAR_HOST_LINK)
		return;
	addr_str(c->vars[x->var].a, h, sizeof(h));
	addr_str(partner, p, sizeof(p));
	snprintf(x->direction, sizeof(x->direction), "%.60s -> %.60s", x->variant == 1 ? h : p,
		 x->variant == 1 ? p : h);
}

void loc_pair_sets(const struct ctx *c, struct candidate *best, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct candidate *x = &best[i];
		enum var_kind kind = c->vars[x->var].kind;
		const uint8_t *partner;
		char name[sizeof(x->alt_subject)];
		long other;

		if ((kind != VAR_HOST && kind != VAR_HOST_LINK) || x->n_set || !x->n_hurt_idx)
			continue;
		/* A turnaround is timed at the responder alone (request in, response out), and
		 * a runner-up that scored nothing fits nothing: neither is a coin flip. */
		if (x->signal == SIG_TURNAROUND || !(x->alt_score_ratio > 0))
			continue;
		partner = pair_partner(c, x);
		other = partner ? host_var(c, kind, partner) : -1;
		if (other < 0)
			continue;
		/* The search's runner-up is the other end (any subject of that host). */
		loc_var_subject(c, &c->vars[other], name, sizeof(name));
		if (strcmp(name, x->alt_subject))
			continue;
		x->set[0] = x->var;
		x->set[1] = (uint32_t)other;
		x->n_set = 2;
		x->set_confidence = x->confidence;
		x->confidence /= 2;
		pair_direction(c, x, partner);
	}
}

/*
 * A responder's turnaround at its own host (request in, last response out) holds the
 * time before its first response and the response message's length on its link. A slow
 * responder waits before it answers; a busy one answers at once and shares its link among
 * the responses of all its reads, so each message lasts longer. Tuning seeds 1261-1280
 * (healthy-each-read, slowresp-each-read): the 2 healthy turnaround alerts (2.0-2.1x, on
 * the responders serving the most reads, 12 and 14) held 0.5-0.6% of their excess before
 * the first response, the 18 slow responders 100%. A turnaround alert with under half its
 * excess there is the busy responder's link, a notice. Only READs time a first response;
 * the rule needs it on at least half of the connections on either side.
 */
#define TURN_START_MIN_SHARE 0.5

/* The medians of the turnaround and of its first-response part over the connections whose
 * hurt flag is want; false when fewer than half of them time a first response. */
static bool turn_medians(const struct ctx *c, const bool *hurt, bool want, double *turn, double *first)
{
	size_t m = 0, all = 0;

	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];

		if (hurt[k] != want || !cn->valid[SIG_TURNAROUND] || cn->turnaround_kind != LAT_READ)
			continue;
		all++;
		if (cn->turnaround_first_us < 0)
			continue;
		c->scratch[m] = cn->turnaround_us;
		c->scratch2[m++] = cn->turnaround_first_us;
	}
	if (!m || 2 * m < all)
		return false;
	*turn = rs_median(c->scratch, m);
	*first = rs_median(c->scratch2, m);
	return true;
}

void loc_turnaround_start(const struct ctx *c, struct candidate *best, size_t n, bool *mark)
{
	for (size_t i = 0; i < n; i++) {
		struct candidate *x = &best[i];
		double turn, first, peer_turn, peer_first;
		bool ok;

		if (x->level != FINDING_ALERT || x->kind != FINDING_HOST || x->signal != SIG_TURNAROUND ||
		    !x->n_hurt_idx)
			continue;
		for (size_t k = 0; k < x->n_hurt_idx; k++)
			mark[x->hurt_idx[k]] = true;
		ok = turn_medians(c, mark, true, &turn, &first) &&
		     turn_medians(c, mark, false, &peer_turn, &peer_first);
		for (size_t k = 0; k < x->n_hurt_idx; k++)
			mark[x->hurt_idx[k]] = false;
		if (!ok || turn <= peer_turn ||
		    first - peer_first >= TURN_START_MIN_SHARE * (turn - peer_turn))
			continue;
		x->level = FINDING_NOTICE;
		x->notice_why = "its responses start on time and last longer: a responder's link shared by many reads";
	}
}
