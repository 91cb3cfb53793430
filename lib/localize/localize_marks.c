/*
 * localize_marks.c: marks a link sets at random, not by its queue. A queue marks the packets
 * it delays (RED above Kmin), so a queue's marked ACK is slower than its unmarked
 * neighbours; an ECN-marking fault marks whatever the queue, and its marked ACKs are the
 * quickest of three a third of the time (flow_stats ce_acks_fast / ce_acks_timed,
 * docs/evaluation.md "Eleventh round: marks the queue does not explain"). Each responder
 * flow's marks times that share, solved over the link directions its ACKs cross, tells how
 * much each switch link direction marks at random; one standing well above every other
 * switch link is an ECN fault, whatever the busy fabric's queues make of the search's picks.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "lib/localize/localize_internal.h"
#include "lib/util/log.h"

/* The ACK way's share of one direction of an incidence: dir 0 from the link's a to b. */
static double rev_share(const struct incidence *e, int dir)
{
	return dir ? e->rev - e->rev_ab : e->rev_ab;
}

/* A connection's marks set at random, as -log(1 - share of packets); false when it has none
 * to read (no responder flow, or marked ACKs none of which timed a round trip). */
static bool conn_random_marks(const struct conn *cn, double *y)
{
	const struct flow_stats *r = cn->resp;
	double u;

	if (!r || !r->packets)
		return false;
	if (!r->ecn_ce) {
		*y = 0;
		return true;
	}
	if (!r->ce_acks_timed)
		return false;
	u = (double)r->ecn_ce / (double)r->packets *
	    fmin(1, 3.0 * (double)r->ce_acks_fast / (double)r->ce_acks_timed);
	*y = -log(1 - fmin(u, 0.999));
	return true;
}

/* One coefficient of the design: a connection's row, a link direction's column. */
struct cell {
	uint32_t row;
	float a;
};

#define MARKS_SWEEPS 3000
#define MARKS_TOL 1e-9

/*
 * Non-negative least squares of the rows' y over the link directions (column 2 var + dir),
 * by cyclic coordinate descent (exact per coordinate). x: 2 n_vars, out. Returns -1 when out
 * of memory.
 */
static int solve_directions(const struct ctx *c, const double *y, const bool *use, double *x)
{
	size_t n_col = 2 * c->n_vars, nnz = 0;
	size_t *start = calloc(n_col + 1, sizeof(*start)), *fill = NULL;
	double *resid = malloc((c->n_conns ? c->n_conns : 1) * sizeof(*resid));
	double *norm = calloc(n_col ? n_col : 1, sizeof(*norm));
	struct cell *cells = NULL;
	int err = -1;

	if (!start || !resid || !norm)
		goto cleanup;
	for (size_t k = 0; k < c->n_conns; k++)
		for (size_t i = 0; use[k] && i < c->conns[k].inc_len; i++)
			for (int d = 0; d < 2; d++)
				if (rev_share(&c->inc[c->conns[k].inc_start + i], d) > 0) {
					start[2 * c->inc[c->conns[k].inc_start + i].var + d + 1]++;
					nnz++;
				}
	for (size_t j = 0; j < n_col; j++)
		start[j + 1] += start[j];
	cells = malloc((nnz ? nnz : 1) * sizeof(*cells));
	fill = malloc((n_col ? n_col : 1) * sizeof(*fill));
	if (!cells || !fill)
		goto cleanup;
	for (size_t j = 0; j < n_col; j++)
		fill[j] = start[j];
	for (size_t k = 0; k < c->n_conns; k++) {
		resid[k] = use[k] ? y[k] : 0;
		for (size_t i = 0; use[k] && i < c->conns[k].inc_len; i++) {
			const struct incidence *e = &c->inc[c->conns[k].inc_start + i];

			for (int d = 0; d < 2; d++) {
				double a = rev_share(e, d);

				if (a <= 0)
					continue;
				cells[fill[2 * e->var + d]++] =
					(struct cell){(uint32_t)k, (float)a};
				norm[2 * e->var + d] += a * a;
			}
		}
	}
	for (size_t j = 0; j < n_col; j++)
		x[j] = 0;
	for (int sweep = 0; sweep < MARKS_SWEEPS; sweep++) {
		double moved = 0;

		for (size_t j = 0; j < n_col; j++) {
			double g = 0, nx;

			if (norm[j] <= 0)
				continue;
			for (size_t p = start[j]; p < start[j + 1]; p++)
				g += cells[p].a * resid[cells[p].row];
			nx = fmax(0, x[j] + g / norm[j]);
			if (nx == x[j])
				continue;
			for (size_t p = start[j]; p < start[j + 1]; p++)
				resid[cells[p].row] -= cells[p].a * (nx - x[j]);
			moved = fmax(moved, fabs(nx - x[j]));
			x[j] = nx;
		}
		if (moved < MARKS_TOL)
			break;
	}
	err = 0;
cleanup:
	free(start);
	free(fill);
	free(resid);
	free(norm);
	free(cells);
	return err;
}

/*
 * The switch link direction marking most at random (its column, 2 var + dir) with its
 * figure and its lead over every other switch link's directions, and the column of the
 * highest of those (*next_col, n_vars * 2 when none marks); false without a topology or
 * with nothing to read.
 */
static bool random_marks_top(const struct ctx *c, size_t *col, double *level, double *lead,
			     size_t *next_col)
{
	double *y = NULL, *x = NULL, next = 0;
	bool *use = NULL, found = false;
	size_t n_use = 0;

	if (!c->topo || !c->n_vars || !c->n_conns)
		return false;
	y = malloc(c->n_conns * sizeof(*y));
	use = calloc(c->n_conns, sizeof(*use));
	x = malloc(2 * c->n_vars * sizeof(*x));
	if (!y || !use || !x)
		goto cleanup;
	for (size_t k = 0; k < c->n_conns; k++) {
		use[k] = conn_random_marks(&c->conns[k], &y[k]);
		n_use += use[k];
	}
	if (!n_use || solve_directions(c, y, use, x))
		goto cleanup;
	*level = -1;
	for (size_t j = 0; j < 2 * c->n_vars; j++)
		if (loc_switch_link(c, j / 2) && x[j] > *level) {
			*level = x[j];
			*col = j;
		}
	if (*level <= 0)
		goto cleanup;
	*next_col = 2 * c->n_vars;
	for (size_t j = 0; j < 2 * c->n_vars; j++)
		if (j / 2 != *col / 2 && loc_switch_link(c, j / 2) && x[j] > next) {
			next = x[j];
			*next_col = j;
		}
	*lead = next > 1e-9 ? *level / next : 1e9; /* 1e-9: the solver's rounding */
	found = true;
cleanup:
	free(y);
	free(use);
	free(x);
	return found;
}

bool loc_random_marks_top(const struct ctx *c, size_t *col, double *level, double *lead)
{
	size_t next_col;

	return random_marks_top(c, col, level, lead, &next_col);
}

/*
 * The bars, tuning seeds 2046-2055 (docs/evaluation.md, "Thirteenth round: random ECN marking
 * on a busy fabric's switch link"). What separates is the marks floor (localize_busy.c): a
 * marking fault marks in every window, a queue drains between bursts; a collective's hot
 * spot, whose step-synchronized queue marks ACKs no slower than their neighbours (0.108 of
 * random marks at 5.1x the next link on slow20us-fab-coll's seed 1041), has a floor of 0,
 * as has every top direction outside the ECN cells (the highest 0.0016). The injected ECN
 * links that fired: floors 0.0073-0.19 (ecn20-fab-over 0.0172 and up), floor leads 2.59 and
 * up. The level and the lead only ask that one direction stands out: ECN faults 0.025 and
 * up at 1.81x and up where the rule fired.
 */
#define MARKS_MIN_LEVEL 0.02
#define MARKS_MIN_LEAD 1.5
#define MARKS_MIN_FLOOR 0.007 /* MF_MIN_FLOOR of localize_busy.c */
#define MARKS_MIN_FLOOR_LEAD 2

/* One string, so that a finding the rule made is told by its pointer. */
static const char WHY_RANDOM_MARKS[] = "its marks are set at random, not by its queue";

/*
 * Does the rule fire? A switch link direction marking at random at MARKS_MIN_LEVEL and
 * MARKS_MIN_LEAD over every other switch link, whose link's marks floor holds at
 * MARKS_MIN_FLOOR and MARKS_MIN_FLOOR_LEAD: probe then names the link (var) with its
 * floor, and level, lead and the runner-up's column are the rule's figures.
 */
static bool marks_rule_fires(struct ctx *c, struct candidate *probe, double *level, double *lead,
			     size_t *next_col)
{
	size_t col = 0;

	if (!random_marks_top(c, &col, level, lead, next_col) || *level < MARKS_MIN_LEVEL ||
	    *lead < MARKS_MIN_LEAD)
		return false;
	probe->var = (uint32_t)(col / 2);
	loc_marks_floor(c, probe);
	return probe->marks_floor_known && probe->marks_floor >= MARKS_MIN_FLOOR &&
	       probe->marks_floor_lead >= MARKS_MIN_FLOOR_LEAD;
}

/* The highest confidence of the findings: a random-marks alert is raised just above it. */
static double top_confidence(const struct candidate *best, size_t n_best)
{
	double top = 0;

	for (size_t i = 0; i < n_best; i++)
		top = fmax(top, best[i].confidence);
	return top;
}

/*
 * A switch link direction that marks at random, standing out of every other switch link,
 * with marks that hold in every window: its finding (the search's pick on that link alone)
 * becomes a congested alert, ranked first: in a busy oversubscribed fabric the search reads
 * the fault's marked flows as one more queue (a slow or congested notice), and other
 * links' queues as alerts. Where the search did not pick the link, loc_marks_added() adds
 * the finding.
 */
int loc_marks_first(struct ctx *c, struct candidate *best, size_t n_best)
{
	struct candidate probe = {0};
	size_t at = n_best, next_col;
	double level = 0, lead = 0;

	if (!marks_rule_fires(c, &probe, &level, &lead, &next_col))
		return 0;
	for (size_t i = 0; i < n_best && at == n_best; i++)
		if (best[i].var == probe.var && !best[i].n_set)
			at = i;
	if (at == n_best)
		return 0;
	best[at].level = FINDING_ALERT;
	best[at].kind = FINDING_CONGESTED;
	best[at].kind_why = WHY_RANDOM_MARKS;
	best[at].notice_why = NULL;
	/* First among the alerts: its confidence raised to the highest's, by the least step. */
	best[at].confidence = nextafter(top_confidence(best, n_best), 2);
	return 0;
}

/*
 * The rule fired on a link the search never picked alone (a busy fabric's queues took its
 * marked flows: two-ecn-slow-over 2054, ecn20-fab-over 2059 2062 2064): a congested
 * alert on it, judged by loc_judge() on the raw marks (both directions), its effect the
 * random-marks level, the runner-up the next switch link (score_ratio: 1 / lead), ranked
 * first. best grows by one; the new finding's residuals (the raw marks, which the evidence
 * reads again) live in the same block after the findings, so free(best) frees them.
 * Returns -ENOMEM.
 */
static int marks_add(struct ctx *c, struct candidate **best, size_t *n_best)
{
	struct candidate cand = {0}, *grown;
	size_t next_col = 0, n = *n_best;
	double level = 0, lead = 0, *resid;
	bool *hurt;

	for (size_t i = 0; i < n; i++)
		if ((*best)[i].kind_why == WHY_RANDOM_MARKS)
			return 0;
	if (!marks_rule_fires(c, &cand, &level, &lead, &next_col))
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((*best)[i].var == cand.var && !(*best)[i].n_set)
			return 0;
	grown = realloc(*best, (n + 1) * sizeof(*grown) + c->n_conns * sizeof(*resid));
	if (!grown)
		return -ENOMEM;
	*best = grown;
	hurt = calloc(c->n_conns, sizeof(*hurt));
	if (!hurt)
		return -ENOMEM;
	resid = (double *)(grown + n + 1);
	for (size_t k = 0; k < c->n_conns; k++)
		resid[k] = c->conns[k].valid[SIG_ECN] ? c->conns[k].y[SIG_ECN] : 0;
	cand.signal = SIG_ECN;
	cand.effect = level;
	cand.hurt_ce_rate = -1;
	cand.loss_dispersion = -1;
	cand.loss_clean_expected = -1;
	bool judged = loc_judge(c, &cand, resid, hurt);
	free(hurt);
	pr_debug("localize: random marks on var %u: level %.4g lead %.3g floor %.4g (%.3g), "
		 "raw marks %.4g against %.4g (z %.3g, %u flows): judged %d\n",
		 cand.var, level, lead, cand.marks_floor, cand.marks_floor_lead, cand.in_rate,
		 cand.out_rate, cand.z, cand.flows_hurt, judged);
	/* The raw marks' bars (ecn_min_ratio, ecn_min_z) fail in a busy fabric, where every
	 * link's flows are marked by the queues they cross: the rule's figures are the
	 * evidence; loc_judge() fills the counts and the direction, and some marked flow must
	 * cross the link. */
	if (!cand.flows_hurt)
		return 0;
	cand.resid = resid;
	cand.specificity = lead / (1 + lead);
	if (next_col < 2 * c->n_vars) {
		loc_var_subject(c, &c->vars[next_col / 2], cand.alt_subject,
				sizeof(cand.alt_subject));
		cand.alt_score_ratio = 1 / lead;
	}
	cand.level = FINDING_ALERT;
	cand.kind = FINDING_CONGESTED;
	cand.kind_why = WHY_RANDOM_MARKS;
	cand.confidence = nextafter(top_confidence(grown, n), 2);
	cand.set_confidence = cand.confidence;
	grown[n] = cand;
	*n_best = n + 1;
	return 0;
}

int loc_busy_marks(struct ctx *c, struct candidate **best, size_t *n_best,
		   const struct candidate *cands, size_t n_cands)
{
	int err = loc_random_loss_under_marks(c, *best, *n_best, cands, n_cands);

	return err ? err : marks_add(c, best, n_best);
}

/*
 * The candidate's hurt connections' marks split by the way their data cross its subject
 * (hurt_ce_way_z[0]: from the link's a to b, for a host's own link out of the host), each
 * way's a Poisson z over the peers' rate as hurt_marks() counts them all.
 */
void loc_hurt_marks_by_way(const struct ctx *c, struct candidate *cand)
{
	double ce[2] = { 0, 0 }, packets[2] = { 0, 0 };

	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];

		for (size_t i = 0; i < cn->inc_len; i++) {
			const struct incidence *e = &c->inc[cn->inc_start + i];
			double share[2] = { e->fwd_ab, e->fwd - e->fwd_ab };

			if (e->var != cand->var)
				continue;
			for (int d = 0; d < 2; d++) {
				ce[d] += share[d] * cn->ce_events;
				packets[d] += share[d] * cn->packets;
			}
		}
	}
	for (int d = 0; d < 2; d++) {
		double expected = cand->peer_ce_rate * packets[d];

		cand->hurt_ce_way_packets[d] = packets[d];
		cand->hurt_ce_way_z[d] = packets[d] > 0 ? (ce[d] - expected) / sqrt(expected + 1) : 0;
	}
}
