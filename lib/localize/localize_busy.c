/*
 * localize_busy.c: faults on a switch link of a busy fabric, told apart from its ordinary
 * queueing by the link's place among its peers (docs/localization.md, "Unless it stands
 * out of the queueing").
 */
#include "lib/localize/localize_internal.h"
#include "lib/util/robust_stats.h"

#include <math.h>
#include <stdlib.h>

/*
 * Marks that lead every peer link: a link whose marks per packet stand at least
 * BUSY_LEAD_MIN_Z robust sigmas above its peers' median and LEAD_MIN_RATIO times the
 * highest peer's. One faulty link marks alone; the queueing of a busy fabric builds on
 * several links at once, so its hottest link has peers close behind. Tuning seeds
 * 1081-1100, switch link findings at 4-5 sigmas and 2x: the injected ECN links led the
 * next link by 1.33-2.27x, the hottest links of healthy busy fabrics at 4 sigmas or more
 * by at most 1.13x (healthy-over-mixed 1097).
 */
#define BUSY_LEAD_MIN_Z 4.0
#define LEAD_MIN_RATIO 1.25

bool loc_marks_lead(double z, double lead)
{
	return z >= BUSY_LEAD_MIN_Z && lead >= LEAD_MIN_RATIO;
}

/*
 * Marks that hold in every window: an ECN-marking fault marks a fixed share of the
 * packets it carries whatever its queue, so the link's marks per packet stay up in the
 * quiet windows too; a queue marks while it stands and drains between bursts, so even the
 * hottest link of a busy fabric has windows without a mark, and the marks move from link
 * to link window by window. The figure: each direction's marks per packet in every window
 * of the later half of the trace (after a fault's onset: 0-40% into the run) carrying at
 * least MF_MIN_PACKETS packets, at its MF_QUANTILE-th quantile (the marks floor), the
 * link's worse direction, against the highest floor of every other switch link (the lead).
 * Every packet on its own way: the data on the data's way, the ACKs (a mirror sees them
 * after their way back, with their marks) on theirs.
 *
 * Tuning seeds 1121-1160: docs/evaluation.md, "Seventh round: busy fabrics".
 */
#define MF_MIN_PACKETS 20
#define MF_MIN_WINDOWS 8
#define MF_QUANTILE 0.25
#define MF_MAX_CELLS (1u << 24)

/* Switch links (neither end a host) of the topology: slot[var] their index, or -1. */
static size_t switch_slots(const struct ctx *c, int32_t *slot)
{
	size_t n = 0;

	for (size_t v = 0; v < c->n_vars; v++)
		slot[v] = loc_switch_link(c, v) ? (int32_t)n++ : -1;
	return n;
}

/* The window grid of the connections' flows: first start, width, count. */
static size_t window_grid(const struct ctx *c, uint64_t *t0, uint64_t *width)
{
	uint64_t lo = UINT64_MAX, hi = 0, w = UINT64_MAX;

	for (size_t k = 0; k < c->n_conns; k++) {
		const struct flow_stats *fl[2] = { c->conns[k].req, c->conns[k].resp };

		for (int j = 0; j < 2; j++) {
			const struct flow_stats *f = fl[j];

			if (!f || !f->n_windows)
				continue;
			lo = f->windows[0].start_ns < lo ? f->windows[0].start_ns : lo;
			hi = f->windows[f->n_windows - 1].start_ns > hi ?
				     f->windows[f->n_windows - 1].start_ns :
				     hi;
			for (size_t i = 1; i < f->n_windows; i++) {
				uint64_t gap = f->windows[i].start_ns - f->windows[i - 1].start_ns;

				if (gap > 0 && gap < w)
					w = gap;
			}
		}
	}
	if (lo >= hi || w == UINT64_MAX)
		return 0;
	*t0 = lo;
	*width = w;
	return (size_t)((hi - lo) / w) + 1;
}

/* Add flow f's later-half windows to the switch links it crosses, its way given by the
 * incidence's share each way (fwd: the data's, rev: the ACKs'). */
static void add_flow(const struct ctx *c, const struct conn *cn, const struct flow_stats *f,
		     bool data, const int32_t *slot, uint64_t t0, uint64_t width, size_t n_win,
		     double *pk, double *ce)
{
	uint64_t mid = t0 + (n_win - 1) * width / 2;

	for (size_t i = 0; i < cn->inc_len; i++) {
		const struct incidence *e = &c->inc[cn->inc_start + i];
		double ab = data ? e->fwd_ab : e->rev_ab;
		double ba = (data ? e->fwd : e->rev) - ab;
		int32_t s = slot[e->var];

		if (s < 0 || (ab <= 0 && ba <= 0))
			continue;
		for (size_t w = 0; w < f->n_windows; w++) {
			const struct flow_window *fw = &f->windows[w];
			size_t idx;

			if (fw->start_ns <= mid || !fw->packets)
				continue;
			idx = (size_t)((fw->start_ns - t0) / width);
			if (idx >= n_win)
				continue;
			pk[(2 * (size_t)s) * n_win + idx] += ab * (double)fw->packets;
			ce[(2 * (size_t)s) * n_win + idx] += ab * (double)fw->ecn_ce;
			pk[(2 * (size_t)s + 1) * n_win + idx] += ba * (double)fw->packets;
			ce[(2 * (size_t)s + 1) * n_win + idx] += ba * (double)fw->ecn_ce;
		}
	}
}

/* One direction's marks floor, or -1 with too few windows to tell. */
static double dir_floor(const double *pk, const double *ce, size_t n_win, double *v)
{
	size_t n = 0;

	for (size_t i = 0; i < n_win; i++)
		if (pk[i] >= MF_MIN_PACKETS)
			v[n++] = ce[i] / pk[i];
	if (n < MF_MIN_WINDOWS)
		return -1;
	return rs_quantile(v, n, MF_QUANTILE);
}

/*
 * Each switch link's figures (the marks floor, the stall) read a per-link-direction,
 * per-window table of the whole fabric, the same for every candidate: they are computed
 * once per trace, on the first candidate that asks (busy_figures()), and kept in the ctx.
 */
struct busy_figures {
	int32_t *slot;			/* switch_slots(); NULL: no table (too small or too large) */
	double *floor;			/* per var: its worse direction's marks floor (-1: unknown) */
	double *stall;			/* per var: its lesser direction's stall (-1: unknown) */
	bool stall_known;		/* the medians the stall is measured against exist */
};

/* Every switch link's marks floor, its worse direction's, into f->floor. */
static int floor_figures(const struct ctx *c, struct busy_figures *f, size_t n_sw, size_t n_win,
			 uint64_t t0, uint64_t width)
{
	size_t cells = 2 * n_sw * n_win;
	double *pk = calloc(cells, sizeof(*pk)), *ce = calloc(cells, sizeof(*ce));
	double *v = malloc(n_win * sizeof(*v));
	int err = pk && ce && v ? 0 : -1;

	for (size_t k = 0; !err && k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		const struct flow_stats *data = cn->data_rev && cn->resp ? cn->resp : cn->req;
		const struct flow_stats *acks = data == cn->req ? cn->resp : cn->req;

		if (data)
			add_flow(c, cn, data, true, f->slot, t0, width, n_win, pk, ce);
		if (acks)
			add_flow(c, cn, acks, false, f->slot, t0, width, n_win, pk, ce);
	}
	for (size_t var = 0; !err && var < c->n_vars; var++) {
		double best = -1;
		int32_t s = f->slot[var];

		if (s < 0)
			continue;
		for (size_t d = 0; d < 2; d++)
			best = fmax(best, dir_floor(&pk[(2 * (size_t)s + d) * n_win],
						    &ce[(2 * (size_t)s + d) * n_win], n_win, v));
		f->floor[var] = best;
	}
	free(pk);
	free(ce);
	free(v);
	return err;
}

static int stall_figures(const struct ctx *c, struct busy_figures *f, size_t n_sw, size_t n_win,
			 uint64_t t0, uint64_t width);

/* The figures of c's switch links, computed on the first call; NULL when out of memory.
 * f->slot stays NULL when the fabric has no table to read. */
static const struct busy_figures *busy_figures(struct ctx *c)
{
	struct busy_figures *f = c->busy;
	uint64_t t0 = 0, width = 0;
	size_t n_sw, n_win;

	if (f)
		return f;
	f = c->busy = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (!c->topo || !c->n_vars)
		return f;
	f->slot = malloc(c->n_vars * sizeof(*f->slot));
	f->floor = malloc(c->n_vars * sizeof(*f->floor));
	f->stall = malloc(c->n_vars * sizeof(*f->stall));
	if (!f->slot || !f->floor || !f->stall)
		goto none;
	for (size_t v = 0; v < c->n_vars; v++)
		f->floor[v] = f->stall[v] = -1;
	n_sw = switch_slots(c, f->slot);
	n_win = window_grid(c, &t0, &width);
	if (n_sw < 2 || n_win < 2 * MF_MIN_WINDOWS || 2 * n_sw * n_win > MF_MAX_CELLS ||
	    floor_figures(c, f, n_sw, n_win, t0, width) ||
	    stall_figures(c, f, n_sw, n_win, t0, width))
		goto none;
	return f;
none:
	free(f->slot);
	f->slot = NULL;
	return f;
}

void loc_busy_free(struct ctx *c)
{
	if (!c->busy)
		return;
	free(c->busy->slot);
	free(c->busy->floor);
	free(c->busy->stall);
	free(c->busy);
	c->busy = NULL;
}

/* The figure of cand's link (fig[cand->var]) and the highest of every other switch link's
 * (0 when none is known); false when cand is not one switch link or its figure is unknown. */
static bool link_and_top(const struct busy_figures *f, const double *fig, size_t n_vars,
			 const struct candidate *cand, double *x, double *top)
{
	if (!f || !f->slot || cand->n_set || f->slot[cand->var] < 0 || fig[cand->var] < 0)
		return false;
	*x = fig[cand->var];
	*top = 0;
	for (size_t var = 0; var < n_vars; var++)
		if (var != cand->var && f->slot[var] >= 0)
			*top = fmax(*top, fig[var]);
	return true;
}

void loc_marks_floor(struct ctx *c, struct candidate *cand)
{
	const struct busy_figures *f = busy_figures(c);
	double x, top;

	cand->marks_floor = cand->marks_floor_lead = 0;
	cand->marks_floor_known = false;
	if (!f || !link_and_top(f, f->floor, c->n_vars, cand, &x, &top))
		return;
	cand->marks_floor = x;
	cand->marks_floor_lead = top > 0 ? x / top : x > 0 ? 1e9 : 0;
	cand->marks_floor_known = true;
}

/*
 * Marks that a marking fault lays, not a queue: a marks floor of at least MF_MIN_FLOOR of
 * the link's packets, the highest of every switch link. It decides the kind of an alert
 * (congested, over the floor rule), never its level: tuning seeds 1121-1160, injected ECN
 * links 0.0137 and up with a lead of 2.02 and up, rate-halved links 0 (40 of 40), so the
 * bar sits 2x from both; but a healthy busy link reached 0.0093 with a lead of 1.48
 * (healthy-over60 1157), 1.47x and 1.36x from the ECN links: too close to make a notice
 * an alert (docs/evaluation.md, "Seventh round: busy fabrics").
 */
#define MF_MIN_FLOOR 0.007

bool loc_marks_steady(const struct candidate *cand)
{
	return cand->marks_floor_known && cand->marks_floor >= MF_MIN_FLOOR &&
	       cand->marks_floor_lead >= 1;
}

/*
 * Marks that come and go: a switch link's marks floor measured and under MF_MIN_FLOOR,
 * so a quarter of its windows or more carry (almost) no mark. Its marks are a queue's; a
 * queue that stands out of its peers' on a link carrying less than they do (what made it
 * an alert) drains slowly: a slow link (rate-halved links of rate2x-fab-over60, floors 0
 * on tuning seeds 1121-1160), not a marking fault (0.0137 and up).
 */
bool loc_marks_drain(const struct candidate *cand)
{
	return cand->marks_floor_known && cand->marks_floor < MF_MIN_FLOOR;
}

/*
 * A queue that drains: marks that come and go (loc_marks_drain()) on a link whose round
 * trips' floor did not rise over its peer links' by DRAIN_FLOOR_US and DRAIN_FLOOR_Z robust
 * sigmas. A hot healthy link marks while its queue stands and empties between bursts, so
 * its quickest round trips stay where its peers' are; a slowed serializer cannot carry
 * its share and keeps a standing queue, so its floor rises with its marks; an ECN fault
 * marks a steady share (its marks floor is not under MF_MIN_FLOOR). Marks standing out of
 * the peers' (busy_outlier()) on such a link are the hottest queue of a busy fabric, not
 * a fault. Tuning seeds 1221-1260: the healthy alerts of this shape stood at most 0.49 us
 * and 0.65 sigmas above their peers, the rate-halved links alerting by their marks 1.83
 * us and 1.85 sigmas and up (docs/evaluation.md, "Eighth round: busy fabrics"). Tuning
 * seeds 3126-3185: two more healthy alerts stood higher on few quick samples (+20.2 us at
 * 1.52 sigmas, +1.95 us at 1.56), so the sigmas' bar sits between them and 1.85
 * ("Eighteenth round").
 */
#define DRAIN_FLOOR_US 1.0
#define DRAIN_FLOOR_Z 1.7

bool loc_queue_drains(const struct candidate *cand)
{
	return loc_marks_drain(cand) && cand->floor_known &&
	       (cand->floor_excess_us < DRAIN_FLOOR_US || cand->floor_z < DRAIN_FLOOR_Z);
}


/*
 * A link that queues and does not carry: each switch link direction's round trips in the
 * later half of the trace (the median over windows of each window's median ACK latency of
 * the connections whose data cross it, against the median direction's) over the payload
 * it carried (against the median direction's), the link's lesser direction. A queue's
 * delay is its backlog over the rate that serves it (Little): a hot healthy link queues
 * because it carries more, an idle one carries little and does not queue; a serializer
 * at half rate carries half its share and holds the same backlog twice as long, so its
 * figure grows as the square of the slowdown. Both directions: a link trained at a lower
 * speed is slow both ways; a direction that carries little because few flows hash there
 * has its other direction to show it.
 *
 * Tuning seeds 1501-1540 (docs/evaluation.md, "Eleventh round: busy fabrics, a link that
 * queues and does not carry"): rate-halved links 2.13 and up with a lead of 2.0 and up
 * over the next link; the top link of healthy-over60 and healthy-over-mixed at most 1.67,
 * leading the next at most 1.42.
 */
#define STALL_MIN_SAMPLES 5
#define STALL_MIN 1.85
#define STALL_MIN_LEAD 1.7


/* Flow f's later-half windows into each switch link direction its data cross (share
 * fwd_ab one way, the rest the other): payload from the data flow, ACK latency from the
 * requester's (the flow whose PSNs the ACKs time). */
static void add_stall_flow(const struct ctx *c, const struct conn *cn, const int32_t *slot,
			   uint64_t t0, uint64_t width, size_t n_win, double *gp, double *ls,
			   double *lw)
{
	const struct flow_stats *data = cn->data_rev && cn->resp ? cn->resp : cn->req;
	const struct flow_stats *lat = cn->req;
	uint64_t mid = t0 + (n_win - 1) * width / 2;

	for (size_t i = 0; i < cn->inc_len; i++) {
		const struct incidence *e = &c->inc[cn->inc_start + i];
		double share[2] = { e->fwd_ab, e->fwd - e->fwd_ab };
		int32_t s = slot[e->var];

		if (s < 0)
			continue;
		for (size_t d = 0; d < 2; d++) {
			size_t row = (2 * (size_t)s + d) * n_win;

			if (share[d] <= 0)
				continue;
			for (size_t w = 0; data && w < data->n_windows; w++) {
				const struct flow_window *fw = &data->windows[w];

				if (fw->start_ns > mid)
					gp[2 * (size_t)s + d] += share[d] * (double)fw->goodput_bytes;
			}
			for (size_t w = 0; lat && w < lat->n_windows; w++) {
				const struct flow_window *fw = &lat->windows[w];
				size_t idx = (size_t)((fw->start_ns - t0) / width);

				if (fw->start_ns <= mid || idx >= n_win || !fw->ack_samples)
					continue;
				ls[row + idx] += share[d] * fw->ack_samples * (double)fw->ack_latency_p50_ns;
				lw[row + idx] += share[d] * fw->ack_samples;
			}
		}
	}
}

/* Every switch link's stall, its lesser direction's, into f->stall (none known when the
 * fabric has no median latency or payload to weigh them against). */
static int stall_figures(const struct ctx *c, struct busy_figures *f, size_t n_sw, size_t n_win,
			 uint64_t t0, uint64_t width)
{
	size_t n_dir = 2 * n_sw, cells = n_dir * n_win;
	double *gp = calloc(n_dir, sizeof(*gp)), *lat = calloc(n_dir, sizeof(*lat));
	double *ls = calloc(cells, sizeof(*ls)), *lw = calloc(cells, sizeof(*lw));
	double *v = malloc((n_win > n_dir ? n_win : n_dir) * sizeof(*v));
	double med_lat, med_gp;
	int err = -1;

	if (!gp || !lat || !ls || !lw || !v)
		goto cleanup;
	err = 0;
	for (size_t k = 0; k < c->n_conns; k++)
		add_stall_flow(c, &c->conns[k], f->slot, t0, width, n_win, gp, ls, lw);
	/* Each direction's latency: the median of its windows' (-1 with too few). */
	for (size_t d = 0; d < n_dir; d++) {
		size_t n = 0;

		for (size_t w = 0; w < n_win; w++)
			if (lw[d * n_win + w] >= STALL_MIN_SAMPLES)
				v[n++] = ls[d * n_win + w] / lw[d * n_win + w];
		lat[d] = n >= MF_MIN_WINDOWS ? rs_median(v, n) : -1;
	}
	{
		size_t n = 0;

		for (size_t d = 0; d < n_dir; d++)
			if (lat[d] > 0)
				v[n++] = lat[d];
		med_lat = rs_median(v, n); /* 0 with none: no stall measured */
		for (size_t d = 0; d < n_dir; d++)
			v[d] = gp[d];
		med_gp = rs_median(v, n_dir);
	}
	if (med_lat <= 0 || med_gp <= 0)
		goto cleanup;
	for (size_t var = 0; var < c->n_vars; var++) {
		int32_t s = f->slot[var];
		double link = INFINITY;

		if (s < 0)
			continue;
		for (size_t d = 2 * (size_t)s; d < 2 * (size_t)s + 2; d++) {
			double fig = lat[d] > 0 && gp[d] > 0 ? (lat[d] / med_lat) / (gp[d] / med_gp) : -1;

			link = fig < 0 ? -1 : fmin(link, fig);
			if (fig < 0)
				break;
		}
		f->stall[var] = link;
	}
	f->stall_known = true;
cleanup:
	free(gp);
	free(lat);
	free(ls);
	free(lw);
	free(v);
	return err;
}

void loc_link_stall(struct ctx *c, struct candidate *cand)
{
	const struct busy_figures *f = busy_figures(c);
	double x, top;

	cand->stall = cand->stall_lead = 0;
	cand->stall_known = false;
	if (!f || !f->stall_known || !link_and_top(f, f->stall, c->n_vars, cand, &x, &top))
		return;
	cand->stall = x;
	cand->stall_lead = top > 0 ? x / top : 1e9;
	cand->stall_known = true;
}

bool loc_link_stalls(const struct candidate *cand)
{
	return cand->stall_known && cand->stall >= STALL_MIN && cand->stall_lead >= STALL_MIN_LEAD;
}

/* Node n's links to switches; 0 unless n is a leaf (a switch with a host on one of its
 * links). */
static size_t leaf_uplinks(const struct topology *t, uint32_t n)
{
	size_t hosts = 0, switches = 0;

	for (size_t l = 0; l < t->n_links; l++) {
		uint32_t a = t->links[l].a, b = t->links[l].b;

		if (a != n && b != n)
			continue;
		if (t->nodes[a == n ? b : a].is_host)
			hosts++;
		else
			switches++;
	}
	return hosts && !t->nodes[n].is_host ? switches : 0;
}

/*
 * A set of links that explain the evidence alike (with paths known) holding every link
 * between one leaf and the spines: each connection of the leaf crosses one of them, so they
 * mark alike because the leaf's own traffic queues on all of them (an oversubscribed leaf);
 * one faulty cable marks its own connections and not its siblings'. Tuning seeds 3906-3945:
 * 3 `congested` alerts of this shape, all on healthy fabrics (ho-healthy-24, 8 hosts per
 * leaf on 2 spines at 30%); every right set alert named links of one spine (2-leaf fabrics,
 * whose two links of a spine every connection through it crosses) or of two leaves.
 */
bool loc_leaf_wide_set(const struct ctx *c, const struct candidate *cand)
{
	const struct topology *t = c->topo;
	uint32_t ends[2];

	if (!t || cand->n_set < 2 || c->vars[cand->set[0]].kind != VAR_LINK)
		return false;
	ends[0] = t->links[c->vars[cand->set[0]].link].a;
	ends[1] = t->links[c->vars[cand->set[0]].link].b;
	for (int e = 0; e < 2; e++) {
		bool all = leaf_uplinks(t, ends[e]) == cand->n_set;

		for (size_t i = 0; all && i < cand->n_set; i++) {
			const struct var *v = &c->vars[cand->set[i]];

			all = v->kind == VAR_LINK && loc_switch_link(c, cand->set[i]) &&
			      (t->links[v->link].a == ends[e] || t->links[v->link].b == ends[e]);
		}
		if (all)
			return true;
	}
	return false;
}

/*
 * A switch link read as the top of a fabric queueing everywhere whose floor stands
 * BUSY_STEP_FLOOR_US over its peers' while its round trips run BUSY_STEP_LAT_RATIO times
 * their healthy peers' (its own latency pick): added latency on the cable, which delays
 * every packet, the quickest too, not the fabric's queueing. In a busy fabric the peers'
 * floors spread wide, so the floor's sigmas (floor_min_z) miss it. Tuning seeds 4163-4166
 * with a topology: +40 to +50 us cables (ho8-slow45us-fab, ho6-slow50us-fab-1dir,
 * ho2-slow40us-fab-1dir, two-ecn-slow-over) were such notices 7 times, floors 13.6-38.8 us
 * up at 2.0-6.4 sigmas, latency 3.3-5.5x; the wrong and healthy ones 10 us up or more had
 * no latency pick that slow (a link under an incast host's queue, one beside a 5x cable),
 * and the one wrong link at 3.1x stood 7.7 us up. Seeds 4167-4170, looked at after: 2 more
 * right ones, no wrong one.
 */
#define BUSY_STEP_FLOOR_US 10.0
#define BUSY_STEP_LAT_RATIO 3.0

static bool slow_round_trips(const struct candidate *x, const struct candidate *cands, size_t n_cands)
{
	for (size_t j = 0; j < n_cands; j++)
		if (cands[j].signal == SIG_LATENCY && cands[j].kind == FINDING_SLOW && !cands[j].own_past &&
		    cands[j].severity >= BUSY_STEP_LAT_RATIO && loc_names_within(&cands[j], x))
			return true;
	return false;
}

void loc_busy_floor_step(const struct ctx *c, struct candidate *best, size_t n_best,
			 const struct candidate *cands, size_t n_cands)
{
	for (size_t i = 0; i < n_best; i++) {
		struct candidate *x = &best[i];

		if (x->notice_why != loc_why_fabric_queueing || !loc_switch_link(c, x->var) || x->n_set ||
		    !loc_floor_known(x) || x->floor_excess_us < BUSY_STEP_FLOOR_US ||
		    !slow_round_trips(x, cands, n_cands))
			continue;
		x->level = FINDING_ALERT;
		x->notice_why = NULL;
		if (x->kind != FINDING_SLOW) {
			x->kind = FINDING_SLOW;
			x->kind_why = "its floor stands far over its peers' and its round trips run several "
				      "times their healthy peers': added latency, not the fabric's queueing";
		}
	}
}
