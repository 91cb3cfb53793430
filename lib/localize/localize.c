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
#include "lib/util/log.h"
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
	cfg->fabric_step_min_ratio = 3;
	cfg->fabric_step_max_marks = 2.5;
	cfg->fabric_weak_max_ratio = 2;
	cfg->fabric_weak_max_z = 11.5;
	cfg->loss_part_min_events = 10;
	cfg->outlier_min_ratio = 2;
	cfg->outlier_min_z = 5;
	cfg->outlier_max_load = 0.9;
	cfg->floor_min_z = 4;
	cfg->step_floor_share = 0.75;
	cfg->loss_marks_ratio = 3;
	cfg->loss_random_max = 3;
	cfg->loss_random_min_events = 50;
	cfg->loss_random_min_ratio = 2;
	cfg->loss_random_short_events = 150;
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

/*
 * Which of two kinds of evidence on one subject names it. Marks outrank loss, except where
 * the subject lost at least as many packets as it marked: a queue marks long before it
 * overflows, so drops beyond the marks are the wire's, and the marks the queue of their
 * resends (loss5-fab-coll, tuning seeds 2946-3085: 0.6-1.4% marked beside 2.8-4.9% lost in
 * 8 of 140 runs, read `congested`; every other subject with both, all cells on 2946-2965,
 * lost at most 0.2x what it marked).
 */
static bool outranks(const struct candidate *x, const struct candidate *y)
{
	bool rates = (x->signal == SIG_LOSS && y->signal == SIG_ECN) ||
		     (x->signal == SIG_ECN && y->signal == SIG_LOSS);

	if (rates && x->kind == FINDING_LOSSY && y->kind == FINDING_CONGESTED)
		return x->severity >= y->severity;
	if (rates && x->kind == FINDING_CONGESTED && y->kind == FINDING_LOSSY)
		return x->severity > y->severity;
	return kind_priority(x->kind) > kind_priority(y->kind);
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

/* Network subjects explain a responder's turnaround: data spread out by a slow link make
 * the responder wait for a message's last packet. */
static bool explains_kind(const struct ctx *c, const struct candidate *by, const struct candidate *x)
{
	return x->signal == SIG_TURNAROUND && by->kind != FINDING_HOST &&
	       (c->vars[by->var].kind == VAR_LINK || c->vars[by->var].kind == VAR_HOST_LINK);
}

/*
 * A lossy (or marked) fabric set (no topology) explains a host's, its link's or a host
 * pair's loss (or marks) when most of that pick's connections are the set's, whichever
 * ranks first: the cable's drops seen through the host that sent most across it. Without
 * a topology a lossy spine cable was laid on a host link or host pair first in most runs
 * (tuning seeds 4016-4025: 63 of the 130 loss-cell runs, the right set ranked below it).
 * A host whose own link drops keeps its connections out of the set (whole_host() in
 * localize_fabric.c).
 */
static bool fabric_rate_explains(const struct ctx *c, const struct candidate *by,
				 const struct candidate *x)
{
	enum var_kind k = c->vars[x->var].kind;

	return c->vars[by->var].kind == VAR_FABRIC && (by->signal == SIG_LOSS || by->signal == SIG_ECN) &&
	       x->signal == by->signal &&
	       (x->pooled_ratio > 0 ? x->pooled_from : x->kind) == by->kind &&
	       (k == VAR_HOST_LINK || k == VAR_HOST || k == VAR_PATH);
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

static bool latency_signal(enum signal s)
{
	return s == SIG_LATENCY || s == SIG_SHIFT || s == SIG_COMPLETION || s == SIG_TURNAROUND;
}

/*
 * A host's latency alert (its answers wait) beside an alert on the host's own link that
 * slows connections the host starts: a host's turnaround delays only what it answers, a
 * slow access link both what it answers and what it asks. When every connection of the
 * host alert crosses that link, the link is the one fault (slow20us-host-light, tuning
 * seeds 3433 and 3446: a +20 us host link named first, the host itself second, both alerts).
 */
static bool host_behind_own_link(const struct ctx *c, const struct candidate *by,
				 const struct candidate *x, size_t crossing)
{
	const uint8_t *host = loc_subject_host(c, x->var);
	enum var_kind k = c->vars[by->var].kind;

	if (x->kind != FINDING_HOST || c->vars[x->var].kind != VAR_HOST || by->kind == FINDING_HOST ||
	    !latency_signal(x->signal) || !latency_signal(by->signal) ||
	    (k != VAR_LINK && k != VAR_HOST_LINK) || !same_host(c, by->var, x->var) ||
	    crossing < x->n_hurt_idx)
		return false;
	for (size_t i = 0; i < by->n_hurt_idx; i++)
		if (!memcmp(c->conns[by->hurt_idx[i]].src, host, 16))
			return true;
	return false;
}

/* How many of x's hurt connections are marked, and how many cross by's subject. */
static void hurt_overlap(const struct ctx *c, const struct candidate *by, const struct candidate *x,
			 const bool *mark, size_t *shared, size_t *crossing)
{
	*shared = *crossing = 0;
	for (size_t k = 0; k < x->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[x->hurt_idx[k]];

		*shared += mark[x->hurt_idx[k]];
		*crossing += mark[x->hurt_idx[k]] || loc_conn_crosses(c, cn, by);
	}
}

/* What the levels change: a floor read over load, host pairs' sets, hosts' loss further on. */
static void after_levels(struct ctx *c, struct candidate *best, size_t n)
{
	loc_floor_over_load(c, best, n);
	loc_pair_sets(c, best, n);
	loc_fabric_from_hosts(c, best, n);
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
			bool behind = explains_kind(c, by, x) || fabric_rate_explains(c, by, x);
			size_t shared, crossing;

			/* ... and the set is not the host's loss seen again. */
			if (i == j || x->level != FINDING_ALERT || !x->n_hurt_idx || (i < j && !behind) ||
			    fabric_rate_explains(c, x, by))
				continue;
			/* A host's own link explains nothing about the host's own wait, unless
			 * it slows what the host asks as well (host_behind_own_link()). */
			behind &= !same_host(c, by->var, x->var);
			hurt_overlap(c, by, x, mark, &shared, &crossing);
			if (host_behind_own_link(c, by, x, crossing)) {
				x->level = FINDING_NOTICE;
				x->notice_why = "its own link slows the connections it starts as well: the link, "
						"not the host's answers";
			} else if (2 * shared >= x->n_hurt_idx) {
				x->level = FINDING_NOTICE;
				x->notice_why = i < j ? "its connections are mostly a fabric set's: a cable further on, "
							"seen through one host" :
					"its hurt flows are mostly those of a stronger alert: the same fault seen again";
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

/*
 * Without a topology, a slow host link (kind slow, or its host answering late) ranked above
 * a slow fabric set that holds most of the connections it slows is a cable further on,
 * seen through one host, in two shapes:
 * - partial (kind slow): it slows under HOST_PART_SHARE of the connections crossing it
 *   (alert or notice set): a slow access link delays every connection across it, a slow cable
 *   further on only those ECMP gave it, and the host that sent most across it looks slow.
 *   Tuning seeds 4046-4055: the host-link alerts ranked first in cable-fault runs without a
 *   topology slowed a median 0.67 of their connections, 54 of them under 0.6 (34 beside a
 *   fabric set holding their connections); right host-link alerts of host faults a median
 *   1.0, 3 under 0.6 (none beside such a set).
 * - outnumbered: the set is an alert and holds more connections of other hosts than the
 *   link slows: the host is one of the set's, not its cause. Tuning seeds 4130-4132
 *   (slow, rate and two-fault cells, no topology): of 11 wrong host-link alerts ranked
 *   above a slow fabric alert, not partial, 8 met it (1-8 connections slow, 2-10 other
 *   hosts' in the set); the 2 right ones, host faults, did not (a 3x host link: 4 slow,
 *   2 others; a 45 us slow responder: 6 slow, 6 others).
 * A responder that waits adds its wait to the connections it answers only; a slow cable's
 * own set would hold more than one host's. mark has room for n_conns flags and is left
 * cleared.
 */
#define HOST_PART_SHARE 0.6

/* Of by's hurt connections, those that do not touch host. */
static size_t hurt_of_others(const struct ctx *c, const struct candidate *by, const uint8_t *host)
{
	size_t n = 0;

	for (size_t k = 0; k < by->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[by->hurt_idx[k]];

		n += memcmp(cn->src, host, 16) && memcmp(cn->dst, host, 16);
	}
	return n;
}

static void demote_partial_host_links(struct ctx *c, struct candidate *best, size_t n, bool *mark)
{
	if (c->topo)
		return;
	for (size_t i = 0; i < n; i++) {
		struct candidate *x = &best[i];
		bool partial;

		if (x->level != FINDING_ALERT || c->vars[x->var].kind != VAR_HOST_LINK ||
		    (x->kind != FINDING_SLOW && x->kind != FINDING_HOST) || !latency_signal(x->signal) ||
		    !x->n_hurt_idx || !x->flows_crossing)
			continue;
		partial = x->kind == FINDING_SLOW &&
			  (double)x->flows_hurt < HOST_PART_SHARE * (double)x->flows_crossing;
		for (size_t j = 0; j < n && x->level == FINDING_ALERT; j++) {
			const struct candidate *by = &best[j];
			size_t shared, crossing;

			if (c->vars[by->var].kind != VAR_FABRIC || by->kind != FINDING_SLOW ||
			    !latency_signal(by->signal))
				continue;
			if (!partial && (j < i || by->level != FINDING_ALERT ||
					 hurt_of_others(c, by, c->vars[x->var].a) <= x->n_hurt_idx))
				continue;
			loc_mark_hurt(by, mark, true);
			hurt_overlap(c, by, x, mark, &shared, &crossing);
			loc_mark_hurt(by, mark, false);
			if (2 * shared >= x->n_hurt_idx) {
				x->level = FINDING_NOTICE;
				x->notice_why = partial ?
					"it slows only some of its connections, those of a slow fabric set: a "
					"cable further on, seen through one host" :
					"its connections are mostly a slow fabric set's, which holds more of "
					"other hosts': a cable further on, seen through one host";
			}
		}
	}
}

/*
 * A `slow` alert picked from round trips (latency or its shift) resting on one connection
 * that stands under ONE_CONN_MIN_EXCESS_US per round trip above its class's median
 * (latency_excess_us): what a queue on its path gives some connection, in a fabric busy or
 * not; a slow link adds a microsecond or more to every round trip across it. Tuning seeds
 * 4136-4138 and 4146-4147, every mode: 5 such alerts were wrong, 3 on healthy fabrics
 * (ho18-healthy-36-each, ho22-healthy-50-each: 0.57 and 0.79 us), 2 beside an ECN cable
 * (0.48 us); the right ones stood 1.45 us (a 3x cable) to 13 us above. Left alone:
 * - a completion pick: a message waits for every packet, and a 5x cable on one connection
 *   delayed its messages 22 us with its round trips 0.98 us above (test_one_conn_busy.sh);
 * - a host's wait (kind host by now, loc_responder_waits(), host_link_kind()): it shows in
 *   its answers, not in round trips (a 50 us slow responder, ho-slowresp-each 4147: 0 us).
 */
#define ONE_CONN_MIN_EXCESS_US 1.0

static void demote_one_connection_queue(const struct ctx *c, struct candidate *best, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct candidate *x = &best[i];

		if (x->level != FINDING_ALERT || x->kind != FINDING_SLOW ||
		    (x->signal != SIG_LATENCY && x->signal != SIG_SHIFT) || x->flows_hurt != 1 ||
		    !(x->lat_ratio > 0) || x->lat_excess_us >= ONE_CONN_MIN_EXCESS_US ||
		    c->vars[x->var].kind == VAR_HOST)
			continue;
		x->level = FINDING_NOTICE;
		x->notice_why = "one connection, under 1 us per round trip slower than its peers: what "
				"a queue on its path gives some connection";
	}
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

		if (outranks(&cands[i], &best[j])) {
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
 * Not when every connection it slows is timed by READs only: a READ's round trip holds the
 * response's transfer, which the marked responder's backoff stretches as a slow link would
 * (tuning seeds 4130-4133, every ECN cell and the READ slow cells, with and without a
 * topology: 12 times, counted per run and mode, a marked subject took a READ-only
 * latency pick, 11 of them ECN faults at 1.3-50x, one a 4x cable marking 51%, now
 * `congested`).
 */
#define SLOW_QUEUE_MIN_SHARE 0.5

/* Is any of x's hurt connections an ACK round trip (WRITE, SEND)? */
static bool hurt_acks_timed(const struct ctx *c, const struct candidate *x)
{
	for (size_t k = 0; k < x->n_hurt_idx; k++)
		if (loc_conn_ack_timed(&c->conns[x->hurt_idx[k]]))
			return true;
	return false;
}

/* Does x (or its set) name var? */
bool loc_cand_names(const struct candidate *x, uint32_t var)
{
	if (x->var == var)
		return true;
	for (size_t i = 0; i < x->n_set; i++)
		if (x->set[i] == var)
			return true;
	return false;
}

/* Does y name x's subject and every member of x's set (x names nothing y does not)? */
bool loc_names_within(const struct candidate *x, const struct candidate *y)
{
	if (!loc_cand_names(y, x->var))
		return false;
	for (size_t i = 0; i < x->n_set; i++)
		if (!loc_cand_names(y, x->set[i]))
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

		/* A loaded cable's marks are a notice, yet its latency may be a fault's. */
		if (b->kind != FINDING_CONGESTED ||
		    (b->level != FINDING_ALERT && b->notice_why != loc_why_loaded_queue))
			continue;
		for (size_t j = 0; j < n_cands; j++)
			if (cands[j].signal == SIG_LATENCY && cands[j].kind == FINDING_SLOW &&
			    loc_names_within(&cands[j], b) &&
			    cands[j].confidence >= SLOW_QUEUE_MIN_SHARE * b->confidence &&
			    (!pick || cands[j].confidence > pick->confidence))
				pick = &cands[j];
		/* A queue delays the flows it marks: most of them, not one or two. */
		if (!pick || 2 * pick->n_hurt_idx < b->n_hurt_idx || !hurt_acks_timed(c, pick))
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

/* What the ranked picks tell of each other, in order; then ranked again. mark has room for
 * n_conns flags and is left cleared. */
static void after_ranking(struct ctx *c, struct candidate *best, size_t n, bool *mark)
{
	loc_turnaround_start(c, best, n, mark);
	loc_responder_waits(c, best, n, mark);
	demote_one_connection_queue(c, best, n);
	loc_timer_explains(c, best, n, mark);
	demote_partial_host_links(c, best, n, mark);
	demote_explained(c, best, n, mark);
	demote_small_followers(best, n);
	if (n)
		qsort(best, n, sizeof(*best), cmp_candidate);
}

/* -vv: every subject's final rank, those beyond the cap too. */
static void log_ranked(const struct ctx *c, const struct candidate *best, size_t n_best)
{
	for (size_t i = 0; i < n_best && agentxdp_log_level >= LOG_DEBUG; i++) {
		char subj[128];

		loc_var_subject(c, &c->vars[best[i].var], subj, sizeof(subj));
		pr_debug("localize: ranked %zu: %s %s %s (%s) confidence %.3f%s\n", i,
			 best[i].level == FINDING_ALERT ? "alert" : "notice",
			 finding_kind_name(best[i].kind), subj, loc_signal_name(best[i].signal),
			 best[i].confidence, i >= c->cfg->max_findings ? ", beyond the cap" : "");
	}
}

int localize(const struct flow_stats *flows, size_t n_flows, const struct topology *topo,
	     const struct localize_config *cfg, struct finding **out, size_t *n_out)
{
	struct localize_config defaults;
	struct ctx c = { 0 };
	struct candidate *cands = NULL, *best = NULL;
	size_t n_cands = 0, cap_cands = 0, n_best = 0, n_findings = 0;
	struct finding *findings = NULL;
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
		err = loc_fabric_candidates(&c, &cands, &n_cands, &cap_cands);
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
		loc_floor_far_slow(&c, best, n_best);
	if (!err) {
		loc_busy_floor_step(&c, best, n_best, cands, n_cands);
		err = loc_busy_marks(&c, &best, &n_best, cands, n_cands);
	}
	if (!err)
		err = loc_pooled_host_slow(&c, best, n_best);
	if (err)
		goto cleanup;
	after_levels(&c, best, n_best);
	if (n_best)
		qsort(best, n_best, sizeof(*best), cmp_candidate);
	mark = calloc(c.n_conns ? c.n_conns : 1, sizeof(*mark));
	if (!mark) {
		err = -ENOMEM;
		goto cleanup;
	}
	after_ranking(&c, best, n_best, mark);
	loc_link_pair_sets(&c, best, n_best);
	log_ranked(&c, best, n_best);
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
