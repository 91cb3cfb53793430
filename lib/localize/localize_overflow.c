/*
 * localize_overflow.c: are a lossy subject's drops a queue's overflow? A queue drops while it
 * is full, in bursts, so an overflow's loss events cluster in the windows when it was; a
 * lossy cable or an injected loss drops each packet with the same chance, whatever the
 * queues do, so its events spread over the windows as its packets do. The dispersion of
 * the per-window counts tells the two apart. (Marks in the loss windows against the other
 * windows' did not: docs/evaluation.md, "Eleventh round: loss at random in a busy fabric".)
 */
#include <math.h>
#include <stdlib.h>

#include "lib/localize/localize_internal.h"
#include "lib/util/log.h"
#include "lib/util/util.h"

#define FABRIC_MARKS_MAX_DISPERSION 3

/*
 * Loss that tracks marks: the hurt connections CE-marked at least loss_marks_ratio times
 * as often as they lose packets. A queue that overflows marks first; a lossy cable or a
 * flapping link drops without marking (on the tuning seeds 1011-1020: injected loss and
 * flaps at most 1.1 marks per loss event, overflow drops of busy fabrics 5.5-110).
 */
bool loc_loss_tracks_marks(const struct ctx *c, const struct candidate *cand)
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

/* The loss events (marks, for SIG_ECN) as num and the packets as den of a connection's
 * windows from from_ns on, both directions merged, appended to *pts. */
static void add_conn(struct win_point **pts, size_t *n, size_t *cap, uint64_t from_ns,
		     const struct flow_stats *q, const struct flow_stats *r, enum signal s)
{
	struct conn_windows it = { .q = q, .r = r };
	const struct flow_window *a, *b;
	uint64_t start;

	while (loc_conn_windows_next(&it, &start, &a, &b)) {
		if (start < from_ns || util_ensure_mem((void **)pts, cap, sizeof(**pts), *n + 1))
			continue;
		double num = s == SIG_ECN ? max2((double)a->ecn_ce + b->ecn_ce, (double)a->cnps + b->cnps) :
					    loc_window_loss_events(a, b);

		(*pts)[(*n)++] = (struct win_point){ start, num, (double)(a->packets + b->packets) };
	}
}

/*
 * How clustered in time the hurt connections' loss events (or marks) are, from the onset
 * on: the Pearson chi-square per window of their summed per-window counts against the
 * counts their packets would draw at the mean rate (1: drops at random, as a lossy
 * cable's; far above: bursts, as a queue's overflow). -1 when too few events to tell.
 */
double loc_loss_dispersion(const struct ctx *c, const struct candidate *cand)
{
	struct win_point *pts = NULL;
	size_t n = 0, cap = 0, m = 0;
	double ev = 0, pk = 0, chi = 0, rate;

	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];

		add_conn(&pts, &n, &cap, cand->onset_ns, cn->req, cn->resp, cand->signal);
	}
	for (size_t i = 0; i < n; i++) {
		ev += pts[i].num;
		pk += pts[i].den;
	}
	if (ev < 10 || pk <= 0) {
		free(pts);
		return -1;
	}
	rate = ev / pk;
	n = loc_sum_windows(pts, n);
	for (size_t i = 0; i < n; i++) {
		double expected = rate * pts[i].den;

		if (expected <= 0)
			continue;
		chi += (pts[i].num - expected) * (pts[i].num - expected) / expected;
		m++;
	}
	free(pts);
	return m ? chi / m : -1;
}

/*
 * A switch link's drops short of loss_min_ratio against the connections that do not cross
 * it: in a busy fabric those drop too, at the hot links' overflowing queues, and raise the
 * rate elsewhere (tuning seeds 3506-3545, loss1-fab-read-over: six 1% cables at 3.5-4.9x
 * the rate elsewhere, z 22-31, rejected; the overflowing links picked after them passed at
 * 5-8x). Drops at random in time (loc_loss_dispersion()) are no queue's overflow: they pass
 * at loss_random_min_ratio. Counted on loss_random_short_events or more: on fewer, overflow
 * drops looked random too (ecn20-fab-over: 54-111 events at 2.0-2.9). False on ENOMEM
 * (or with nothing hurt).
 */
bool loc_loss_random_short_ratio(struct ctx *c, const struct candidate *cand, const bool *hurt)
{
	const struct localize_config *cfg = c->cfg;
	struct candidate probe = *cand;
	double dispersion;

	if (cand->signal != SIG_LOSS || cfg->loss_random_min_ratio <= 0 ||
	    cfg->loss_random_max <= 0 || !c->topo || cand->n_set ||
	    !loc_switch_link(c, cand->var) || cand->in_events < cfg->loss_random_short_events ||
	    cand->in_rate < cfg->loss_min_rate || cand->z < cfg->loss_min_z ||
	    cand->in_rate < cfg->loss_random_min_ratio * cand->out_rate)
		return false;
	probe.hurt_idx = loc_hurt_list(c, hurt, &probe.n_hurt_idx);
	if (!probe.hurt_idx)
		return false;
	loc_find_onset(c, &probe, hurt);
	dispersion = loc_loss_dispersion(c, &probe);
	free(probe.hurt_idx);
	pr_debug("localize: loss pick short of loss_min_ratio (%.2fx elsewhere): dispersion %.3g\n",
		 cand->out_rate > 0 ? cand->in_rate / cand->out_rate : 0, dispersion);
	return dispersion >= 0 && dispersion < cfg->loss_random_max;
}

/*
 * A link picked by its marks and by its drops gives one finding, the marks' kind first
 * (kind_priority()); when the marks are what ordinary traffic explains (a notice: the
 * whole fabric is queueing, or its load) the drops may not be: the loss pick judged alone
 * by loc_classify_level() (loss at random on a switch link, or drops that do not track
 * marks) is a `lossy` alert, and takes the headline. A lossy cable in a busy fabric is
 * marked by the other queues its flows cross, as much as its peers. Tuning seeds 1846-1905
 * (docs/evaluation.md, "Twelfth round: drops under a marks notice"): the 1% cables so
 * hidden stood at loss_dispersion 0.58-2.93 on 265-434 events; the 88 other hidden loss
 * picks (overflow drops of busy fabrics) stayed notices, the switch links' lowest on 50
 * events or more at 4.32. An alert of another kind is not taken: on seed 1868 a healthy
 * link's overflow (dispersion 7.4) was read `slow` by its marks and came first, wrong.
 * No bar of its own: loss_random_max (3) decides.
 */
int loc_random_loss_under_marks(struct ctx *c, struct candidate *best, size_t n_best,
				const struct candidate *cands, size_t n_cands)
{
	for (size_t i = 0; i < n_best; i++) {
		struct candidate *b = &best[i], loss;
		const struct candidate *pick = NULL;
		int err;

		if (b->signal != SIG_ECN || b->kind != FINDING_CONGESTED || b->level != FINDING_NOTICE)
			continue;
		for (size_t j = 0; j < n_cands; j++)
			if (cands[j].signal == SIG_LOSS && cands[j].kind == FINDING_LOSSY &&
			    loc_names_within(&cands[j], b) &&
			    (!pick || cands[j].confidence > pick->confidence))
				pick = &cands[j];
		/* Where the whole fabric queues, the cable's flows are marked by the queues
		 * they cross. A quiet fabric's marks notice (loc_quiet_queue_drains()) is a
		 * queue draining between bursts, and so are its drops (healthy-over-mixed 1479
		 * made a wrong lossy alert here), unless the drops outrun the marks: a queue
		 * marks loss_marks_ratio times before it overflows, a lossy wire does not. */
		if (!pick || c->cfg->busy_ce_rate <= 0 ||
		    (b->peer_ce_rate < c->cfg->busy_ce_rate && loc_loss_tracks_marks(c, pick)))
			continue;
		loss = *pick;
		err = loc_classify_levels(c, &loss, 1);
		if (err)
			return err;
		/* Drops read as a queue's by their link (another kind, link_kind()'s
		 * reasons) are the queue the marks notice already told. */
		if (loss.level != FINDING_ALERT || loss.kind != FINDING_LOSSY)
			continue;
		loss.confidence = fmax(loss.confidence, b->confidence);
		*b = loss;
	}
	/* Then marks a link sets at random (localize_marks.c): also what a busy fabric's marks
	 * findings say, called from here as localize() is at its length limit. */
	return loc_marks_first(c, best, n_best);
}

/* A host or its link, without a topology, picked for signal s: the three tests below. */
static bool host_no_topo(const struct ctx *c, const struct candidate *cand, enum signal s)
{
	enum var_kind kind = c->vars[cand->var].kind;

	return !c->topo && cand->signal == s && (kind == VAR_HOST_LINK || kind == VAR_HOST);
}

/*
 * Without a topology: a lossy host link or host whose reliable connections that lost
 * nothing would have lost loss_part_min_events at its rate (clean_expected() in
 * localize_search.c). A lossy link drops on every connection it carries; these lose on
 * some only, those whose paths share a link further on, which no subject here can name.
 * Tuning seeds 4006-4015 (modes hosts and blind): right host losses 0, or up to 6.0
 * beside a slow cable; host links picked for a lossy or flapping cable 10 and up in 149
 * of 302 picks (median 22). The chance of no loss where 10 events were due is e^-10.
 */
const char loc_why_loss_on_part[] =
	"its connections that lost nothing would have lost many events at its rate: the loss lies "
	"on a link further on that only some of them cross (a topology would name it)";

bool loc_loss_on_part(const struct ctx *c, const struct candidate *cand)
{
	return host_no_topo(c, cand, SIG_LOSS) && c->cfg->loss_part_min_events > 0 &&
	       cand->loss_clean_expected >= c->cfg->loss_part_min_events;
}

/*
 * Without a topology: a lossy host link or host whose connections lost a few packets each
 * (LOSS_DOWN_MAX_PER_CONN events per connection that lost any, as a link that went down
 * costs each connection across it one go-back-N per outage), and some of its connections
 * none. An access link that goes down takes every connection across it down with it; these
 * lost where their paths share a cable further on. Tuning seeds 4056-4065 (again
 * 4046-4055), such partial lossy host-link alerts: 1.0-2.4 (1.0-2.7) events per losing
 * connection for 41 (33) picks of a flapping or lossy cable, 4.3 and up for the other 13
 * (3); right ones 5.3 and up (blind mode, beside a cable) and 6.6 and up (host faults).
 * Not when its floor moved (loc_floor_moved()): a host link that queues (a slowed
 * serializer) drops whatever waits in it, a packet or two on some connections
 * (test_host_link_queue.sh 3927-3928; the blind picks above stood 0.34 us up or less).
 */
#define LOSS_DOWN_MAX_PER_CONN 3
const char loc_why_loss_down_on_part[] =
	"a loss or two on each of some of its connections, none on the others: a link further "
	"on went down under those that cross it (an access link takes every connection with it)";

bool loc_loss_down_on_part(const struct ctx *c, const struct candidate *cand)
{
	return host_no_topo(c, cand, SIG_LOSS) && !loc_floor_moved(c, cand) && cand->flows_hurt > 0 &&
	       cand->flows_hurt < cand->flows_crossing &&
	       cand->in_events <= LOSS_DOWN_MAX_PER_CONN * (double)cand->flows_hurt;
}

/* Why a lossy host or host link's loss lies further on (the two tests above), or NULL. */
const char *loc_loss_part_why(const struct ctx *c, const struct candidate *cand)
{
	if (loc_loss_on_part(c, cand))
		return loc_why_loss_on_part;
	return loc_loss_down_on_part(c, cand) ? loc_why_loss_down_on_part : NULL;
}

/*
 * The same for marks: a marked host link or host (no topology) whose connections that were
 * marked none would have drawn MARKS_PART_MIN_EVENTS marks at its rate
 * (evidence.clean_expected_events). A marking link marks what it carries, every connection
 * at its rate. Tuning seeds 4056-4065 (modes hosts and blind), marked host-link alerts
 * that left connections unmarked: 27 wrong picks of a marking or slow cable at 7.8-122
 * (26 of them 17 and up); the two right ones (host faults) at 0. Not when its floor moved:
 * a host link that queues marks what waits in it (reporting seeds 731-740 lost two +30 us
 * host links so; 26 of the 30 blind picks stood 0.15 us up or less).
 */
#define MARKS_PART_MIN_EVENTS 10
const char loc_why_marks_on_part[] =
	"its connections that were marked none would have drawn many marks at its rate: the "
	"marking lies on a link further on that only some of them cross (a topology would name it)";

bool loc_marks_on_part(const struct ctx *c, const struct candidate *cand)
{
	return host_no_topo(c, cand, SIG_ECN) && !loc_floor_moved(c, cand) &&
	       cand->loss_clean_expected >= MARKS_PART_MIN_EVENTS;
}

/*
 * A marked fabric set (no topology) that a queue explains: its marks come in bursts, as a
 * queue marks while it is full (a cable that marks does so to each packet with the same
 * chance, whatever the queues do), or its connections are marked under
 * FABRIC_MARKS_MIN_RATIO times the others' rate. Healthy fabrics' ECMP collisions and
 * incast build such sets: tuning seeds 4016-4025 held 40 healthy alerts before the burst
 * test, 2 after it (5.8x and 12.1x the others' rate); right sets stood 10.1x, then 18.4x
 * and up.
 */
#define FABRIC_MARKS_MIN_RATIO 15
const char loc_why_fabric_marks_queue[] =
	"its marks come in bursts or stand a few times the other connections' rate, as a queue "
	"marks (ECMP collisions, incast), not a link that marks what crosses it";
bool loc_fabric_marks_queue(const struct ctx *c, const struct candidate *cand)
{
	return c->vars[cand->var].kind == VAR_FABRIC && cand->signal == SIG_ECN &&
	       (cand->loss_dispersion < 0 || cand->loss_dispersion >= FABRIC_MARKS_MAX_DISPERSION ||
		(cand->in_rate < FABRIC_MARKS_MIN_RATIO * cand->out_rate &&
		 !(loc_fabric_busy(cand, c->cfg) && loc_fabric_marks_stand(c, cand))));
}

/*
 * A host's link (or a host, or a host pair) whose marks, on one or two connections, come in
 * bursts: the queue of a path those connections cross, not the link (which marks each
 * packet with the same chance, whatever the queues do). With one or two connections the
 * link and their path cannot be told apart by who is hurt; with more, a link that marks
 * them all is the link, whatever its marks' rhythm. Tuning seeds 4036-4045, healthy
 * ECMP-imbalanced fabrics: six alerts on hosts that received one or two connections, 11-24
 * marks at dispersion 9.1-11.9; the right ECN host alerts on one or two connections
 * 0.39-0.84, on three or more 0.04-116 (21 of 136 at 3 or more: why more than two keep it).
 * Unless its floor moved: a slow link's queue marks in bursts too (+35 us: 15.2).
 */
#define HOST_MARKS_BURST_MAX_FLOWS 2
const char loc_why_host_marks_burst[] =
	"its marks come in bursts, as the queue of a path its connections cross marks (ECMP "
	"collisions), not a link that marks what crosses it";
bool loc_host_marks_burst(const struct ctx *c, const struct candidate *cand)
{
	enum var_kind kind = c->vars[cand->var].kind;

	return cand->signal == SIG_ECN && !loc_switch_link(c, cand->var) && kind != VAR_FABRIC &&
	       cand->flows_hurt <= HOST_MARKS_BURST_MAX_FLOWS &&
	       cand->loss_dispersion >= FABRIC_MARKS_MAX_DISPERSION && !loc_floor_moved(c, cand);
}

/*
 * A marked fabric set that stands out of a fabric queueing everywhere: its marks come as a
 * constant chance gives them (marks_dispersion under FABRIC_MARKS_EVEN_DISPERSION, where
 * queues' bursts stand at 1.3 and up) at FABRIC_MARKS_STAND_RATIO times the other
 * connections' rate or more. Tuning seeds 4016-4035, marked sets of busy fabrics (a notice
 * each): 9 right ones so, 0-0.96 at 9.9-36x; healthy and wrong ones 1.16 and up, or
 * under 5.1x. In a busy fabric it also lifts the 15x rule of loc_fabric_marks_queue():
 * the others' rate there is the fabric's queues, not a quiet floor.
 */
#define FABRIC_MARKS_EVEN_DISPERSION 1
#define FABRIC_MARKS_STAND_RATIO 8
bool loc_fabric_marks_stand(const struct ctx *c, const struct candidate *cand)
{
	return c->vars[cand->var].kind == VAR_FABRIC && cand->signal == SIG_ECN &&
	       cand->loss_dispersion >= 0 && cand->loss_dispersion < FABRIC_MARKS_EVEN_DISPERSION &&
	       cand->in_rate >= FABRIC_MARKS_STAND_RATIO * cand->out_rate;
}
