/*
 * localize_each.c: a host finding whose hurt connections all join the same two hosts names
 * both of them: one host pair's round trips cross both hosts alike, so picking one end is
 * a coin flip (docs/localization.md, "What it cannot tell apart"). And a responder whose
 * turnaround grew after its first response is busy, not slow.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/localize/localize_internal.h"
#include "lib/util/log.h"
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

/*
 * Loss on one host pair's connections, with a topology: every link of that pair's path
 * dropped it alike, and with two hosts on a leaf or one connection hashed onto a cable
 * too few other pairs cross them to clear one. Tuning seeds 4171-4178 with a topology,
 * loss picks whose hurt connections all joined one pair: with the runner-up (another link
 * of that path) at 0.6 of the pick's score or more, 2 picks named the faulty link (0.603,
 * 0.604) and 7 did not (0.603-0.92), the runner-up being the fault in 5 of them; from 0.5
 * to 0.6, 9 were right and 1 wrong (0.516). At 0.6 both links are named, confidence
 * shared; under it the pick stays alone (round 47 first cut at 0.5: 11 right alerts became
 * sets with a wrong member for 6 wrong ones fixed).
 */
#define PAIR_LOSS_SET_MIN_RATIO 0.6

/* Do all of cand's hurt connections join the same two hosts (either way)? */
static bool one_host_pair(const struct ctx *c, const struct candidate *cand)
{
	const struct conn *first;

	if (!cand->n_hurt_idx)
		return false;
	first = &c->conns[cand->hurt_idx[0]];
	for (size_t k = 1; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];
		bool same = !memcmp(cn->src, first->src, 16) && !memcmp(cn->dst, first->dst, 16);
		bool swapped = !memcmp(cn->src, first->dst, 16) && !memcmp(cn->dst, first->src, 16);

		if (!same && !swapped)
			return false;
	}
	return true;
}

/*
 * The link named runner_up, if every connection cand hurts crosses it (-1: none). Links are
 * the first variables, index == link index (loc_build_incidence()).
 */
static long runner_up_on_path(const struct ctx *c, const struct candidate *cand)
{
	long v = topology_link_by_name(c->topo, cand->alt_subject);
	struct candidate other = { .var = (uint32_t)v };

	if (v < 0 || (uint32_t)v == cand->var)
		return -1;
	for (size_t k = 0; k < cand->n_hurt_idx; k++)
		if (!loc_conn_crosses(c, &c->conns[cand->hurt_idx[k]], &other))
			return -1;
	return v;
}

/* Is host h (16 bytes) topology node `node`, or one link away from it? */
static bool host_at(const struct topology *t, const uint8_t *h, uint32_t node)
{
	long hn = topology_host(t, h);

	if (hn < 0)
		return false;
	if ((uint32_t)hn == node)
		return true;
	for (size_t i = 0; i < t->n_links; i++)
		if ((t->links[i].a == (uint32_t)hn && t->links[i].b == node) ||
		    (t->links[i].b == (uint32_t)hn && t->links[i].a == node))
			return true;
	return false;
}

/*
 * The way a one-pair set's lost packets go, "P -> Q" between the pair's hosts: a member's
 * own direction ("leaf9 -> 198.18.0.37") would read as naming that member. The pick's way
 * runs toward the host at (or under) its far end, else away from the host at its near end;
 * neither (both hosts under one switch): no direction.
 */
static void one_pair_direction(const struct ctx *c, struct candidate *x)
{
	const struct topo_link *l = &c->topo->links[c->vars[x->var].link];
	const struct conn *cn = &c->conns[x->hurt_idx[0]];
	uint32_t from = x->variant == 1 ? l->a : l->b, to = x->variant == 1 ? l->b : l->a;
	bool to_src = host_at(c->topo, cn->src, to), to_dst = host_at(c->topo, cn->dst, to);
	bool from_src = host_at(c->topo, cn->src, from), from_dst = host_at(c->topo, cn->dst, from);
	const uint8_t *p = NULL, *q = NULL;
	char ps[64], qs[64];

	x->direction[0] = 0;
	if (!x->variant)
		return;
	if (to_src != to_dst) {
		p = to_src ? cn->dst : cn->src;
		q = to_src ? cn->src : cn->dst;
	} else if (from_src != from_dst) {
		p = from_src ? cn->src : cn->dst;
		q = from_src ? cn->dst : cn->src;
	} else {
		return;
	}
	addr_str(p, ps, sizeof(ps));
	addr_str(q, qs, sizeof(qs));
	snprintf(x->direction, sizeof(x->direction), "%.60s -> %.60s", ps, qs);
}

/*
 * A link's lossy pick on one host pair, its runner-up on the pair's path and named by no
 * finding: the two as a set. After the ranking, so the set ranks where its pick did: halved
 * first, a one-connection pick beside it could outrank it and demote it as its follower.
 * Only `lossy` picks: loss read as a sender's timer or a queue's drops is not the wire's.
 */
void loc_link_pair_sets(const struct ctx *c, struct candidate *best, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct candidate *x = &best[i];
		long other;
		bool reported = false;

		if (c->vars[x->var].kind != VAR_LINK || x->signal != SIG_LOSS ||
		    x->kind != FINDING_LOSSY || x->n_set ||
		    !(x->alt_score_ratio >= PAIR_LOSS_SET_MIN_RATIO) || !one_host_pair(c, x))
			continue;
		other = runner_up_on_path(c, x);
		if (other < 0)
			continue;
		for (size_t j = 0; j < n; j++)
			reported |= loc_cand_names(&best[j], (uint32_t)other);
		if (reported)
			continue;
		x->set[0] = x->var;
		x->set[1] = (uint32_t)other;
		x->n_set = 2;
		x->one_pair_set = true;
		x->set_confidence = x->confidence;
		x->confidence /= 2;
		one_pair_direction(c, x);
	}
}

void loc_pair_sets(const struct ctx *c, struct candidate *best, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct candidate *x = &best[i];
		enum var_kind kind = c->vars[x->var].kind;
		const uint8_t *partner;
		char name[sizeof(x->alt_subject)];
		long other;

		/* A pick read by its host's round trips with every peer is not one pair's. */
		if ((kind != VAR_HOST && kind != VAR_HOST_LINK) || x->n_set || !x->n_hurt_idx ||
		    x->pooled_ratio > 0)
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

/*
 * A responder sends its READ responses on one link, in turn: a request that arrives behind
 * others waits while their responses go out, so an incast target's wait is the queue of its
 * own responses and its link is busy through it (a responder that idles while a READ waits
 * is holding it). The tracker joins every READ of a responder (at its own capture, over all
 * its connections) and times, within each READ's wait for its first response, the other
 * READs' response messages on the link (lib/track/read_queue.h). Tuning seeds 1646-1725
 * (docs/evaluation.md, twelfth round): the incast targets' turnaround alerts (12: 2 of the
 * matrix's shape, 10 at --incast-factor 5) busy 1.00 of their waits; 50 us slow responders
 * 0.00-0.15. A slow responder that is also a 3x incast target spans 0.17-1.00 (its queue
 * hides the 50 us when it drains later): 4 of 16 at 0.95-1.00, which the rule names notices.
 * The bar leaves a tenth for gaps between messages, 1.1x under the incast targets.
 */
#define WAIT_QUEUE_MIN_SHARE 0.9

/* Of the READ waits of the connections x hurts (their turnaround copies), the share that
 * their responder's link was busy with other READs' responses; -1 when none waited. */
static double wait_queue_share(const struct ctx *c, const struct candidate *x)
{
	double wait = 0, busy = 0;

	for (size_t k = 0; k < x->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[x->hurt_idx[k]];

		if (cn->turnaround_kind != LAT_READ || !cn->valid[SIG_TURNAROUND])
			continue;
		wait += cn->turnaround_wait_us;
		busy += cn->turnaround_busy_us;
	}
	return wait > 0 ? busy / wait : -1;
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
		loc_mark_hurt(x, mark, true);
		ok = turn_medians(c, mark, true, &turn, &first) &&
		     turn_medians(c, mark, false, &peer_turn, &peer_first);
		loc_mark_hurt(x, mark, false);
		if (!ok || turn <= peer_turn ||
		    first - peer_first >= TURN_START_MIN_SHARE * (turn - peer_turn)) {
			double share = wait_queue_share(c, x);

			pr_debug("localize: turnaround wait: its link busy %.3g of it\n", share);
			if (share < 0)
				continue;
			x->queue_share = share;
			x->queue_share_known = true;
			if (share < WAIT_QUEUE_MIN_SHARE)
				continue;
			x->level = FINDING_NOTICE;
			x->notice_why = "its wait is the queue of its own responses (incast): its link sends other reads' responses through it";
			continue;
		}
		x->level = FINDING_NOTICE;
		x->notice_why = "its responses start on time and last longer: a responder's link shared by many reads";
	}
}

/*
 * A slow pick on a host's link (or a host pair holding it) whose hurt connections all
 * answer at that host: each-host captures stamp a packet at the host's own port, so the
 * responder's copy of a connection times request in to ACK out with no wire in it. A slow
 * link into the host delays the data before that stamp and the responder ACKs at once; a
 * slow responder holds the ACK after it. RC ACKs are cumulative: a responder that waits
 * coalesces the PSNs that arrive meanwhile, and the ACK names the last, which arrived just
 * before it left: the wait shows in its copy's p99 (the message ends), not its p50.
 * Tuning seeds 1341-1360: the slow responders of slowresp-each-mixed that serve only
 * WRITEs, own-copy ACK p99 45.6-50.1 us against peers' 0.0-0.3 us, for round trips
 * 40-50 us over their peers' p99; slow10us-host-each (a slow host link), own-copy p99
 * 0.32-0.65 us. When the responder's own p99 excess is at least half the round trips',
 * the wait is the responder's: the finding names the host.
 */
#define OWN_WAIT_MIN_SHARE 0.5

/* Does cand name host h (its subject or a member of its set)? */
static bool names_host(const struct ctx *c, const struct candidate *cand, const uint8_t *h)
{
	const uint8_t *x = loc_subject_host(c, cand->var);

	if (x && !memcmp(x, h, 16))
		return true;
	for (size_t i = 0; i < cand->n_set; i++) {
		x = loc_subject_host(c, cand->set[i]);
		if (x && !memcmp(x, h, 16))
			return true;
	}
	return false;
}

/* The median own-copy p99 of the connections whose hurt flag is want (-1: none). */
static double own_p99(const struct ctx *c, const bool *hurt, bool want)
{
	size_t m = 0;

	for (size_t k = 0; k < c->n_conns; k++)
		if (hurt[k] == want && c->conns[k].turnaround_p99_us >= 0 &&
		    c->conns[k].turnaround_kind == LAT_ACK)
			c->scratch[m++] = c->conns[k].turnaround_p99_us;
	return m ? rs_median(c->scratch, m) : -1;
}

/* The responder every hurt connection of x answers at, when each times its own copy. */
static const uint8_t *hurt_responder(const struct ctx *c, const struct candidate *x)
{
	const uint8_t *h = NULL;

	for (size_t k = 0; k < x->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[x->hurt_idx[k]];

		if (cn->turnaround_p99_us < 0 || cn->turnaround_kind != LAT_ACK ||
		    (h && memcmp(h, cn->dst, 16)))
			return NULL;
		h = cn->dst;
	}
	return h;
}

void loc_responder_waits(const struct ctx *c, struct candidate *best, size_t n, bool *mark)
{
	for (size_t i = 0; i < n; i++) {
		struct candidate *x = &best[i];
		const uint8_t *h;
		double own, peer, rt;
		long hv;
		bool taken = false, host_alert = false;

		if (x->kind != FINDING_SLOW || !x->n_hurt_idx || !(x->hurt_p99_us > x->peer_p99_us))
			continue;
		h = hurt_responder(c, x);
		if (!h || !names_host(c, x, h))
			continue;
		hv = host_var(c, VAR_HOST, h);
		for (size_t j = 0; j < n && hv >= 0; j++)
			if (j != i && best[j].var == (uint32_t)hv) {
				taken = true;
				host_alert |= best[j].level == FINDING_ALERT;
			}
		if (hv < 0 || (taken && !host_alert))
			continue;
		loc_mark_hurt(x, mark, true);
		own = own_p99(c, mark, true);
		peer = own_p99(c, mark, false);
		loc_mark_hurt(x, mark, false);
		rt = x->hurt_p99_us - x->peer_p99_us;
		pr_debug("localize: responder wait: own p99 %.3g us, peers' %.3g, round trips +%.3g: share %.3g\n",
			 own, peer, rt, (own - peer) / rt);
		if (own < 0 || peer < 0 || own - peer < OWN_WAIT_MIN_SHARE * rt)
			continue;
		/* The host is an alert already (its turnaround): this is its wait again, seen
		 * on other connections (slowresp-each-mixed 2946: the host on 1 connection, its
		 * link on 4). */
		if (host_alert) {
			if (x->level == FINDING_ALERT) {
				x->level = FINDING_NOTICE;
				x->notice_why = "its responder's own capture times the wait: the host's alert, seen again";
			}
			continue;
		}
		x->var = (uint32_t)hv;
		/* A set shared its confidence among members: the wait is at one of them. */
		if (x->n_set && x->set_confidence > x->confidence)
			x->confidence = x->set_confidence;
		x->n_set = 0;
		x->variant = 0;
		x->kind = FINDING_HOST;
		x->direction[0] = 0;
		x->kind_why = "its responder's own capture times the wait: ACKs held after the data arrived";
	}
}

/* Of a turnaround candidate's hurt READ connections, the idle time per READ (the wait
 * less the time its link sent other responses), and the peers' median; -1: none. */
static double idle_per_read(const struct ctx *c, const struct candidate *x, double *peer)
{
	double idle = 0, waits = 0;
	size_t m = 0;

	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		bool hurt = false;

		if (cn->turnaround_kind != LAT_READ || cn->turnaround_waits <= 0)
			continue;
		for (size_t h = 0; h < x->n_hurt_idx; h++)
			hurt |= x->hurt_idx[h] == k;
		if (hurt && cn->valid[SIG_TURNAROUND]) {
			idle += cn->turnaround_wait_us - cn->turnaround_busy_us;
			waits += cn->turnaround_waits;
		} else if (!hurt) {
			c->scratch[m++] = (cn->turnaround_wait_us - cn->turnaround_busy_us) / cn->turnaround_waits;
		}
	}
	*peer = m ? rs_median(c->scratch, m) : -1;
	return waits > 0 ? idle / waits : -1;
}

/*
 * A responder turnaround left a notice by loc_classify_level() (under host_alert_min_ratio,
 * or on one or two connections under host_few_min_ratio, where a slow link may explain
 * it) whose READs idle far longer than its peers': a READ's request is one packet stamped
 * as it arrives at the responder's port, so no link spreads it out, and the wait less the
 * time its link sent other READs' responses is the responder's own. Tuning seeds
 * 2246-2345 (docs/evaluation.md, thirteenth round): 50 us slow responders 28.8-50.0 us per
 * READ (slowresp-each-mixed) and 24.7 us and up (slowresp-each-read), their peers' medians
 * 0.00-0.01 us; healthy-incast-each's busy responders, the incast target among them, 0.00.
 * The bar, 10 us, is 2.5x under the slow responders and ten NICs' 1 us over the busy ones.
 */
#define TURN_IDLE_MIN_US 10.0

void loc_turnaround_idle(const struct ctx *c, struct candidate *x)
{
	double own, peer;

	if (x->kind != FINDING_HOST || x->signal != SIG_TURNAROUND || !x->n_hurt_idx)
		return;
	own = idle_per_read(c, x, &peer);
	pr_debug("localize: turnaround idle per read %.3g us, peers %.3g us\n", own, peer);
	/* Only the two turnaround notices above reach here with a reason set. */
	if (x->notice_why && own >= 0 && peer >= 0 && own - peer >= TURN_IDLE_MIN_US)
		x->notice_why = NULL;
}
