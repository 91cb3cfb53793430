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
#include <math.h>
#include <stdlib.h>

#include "lib/localize/localize_internal.h"

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
				cells[fill[2 * e->var + d]++] = (struct cell){ (uint32_t)k, (float)a };
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

/* Is var a link between two switches? */
static bool switch_link(const struct ctx *c, size_t var)
{
	const struct var *v = &c->vars[var];
	const struct topo_link *l;

	if (v->kind != VAR_LINK)
		return false;
	l = &c->topo->links[v->link];
	return !c->topo->nodes[l->a].is_host && !c->topo->nodes[l->b].is_host;
}

/*
 * The switch link direction marking most at random (its column, 2 var + dir) with its
 * figure and its lead over every other switch link's directions; false without a topology
 * or with nothing to read.
 */
bool loc_random_marks_top(const struct ctx *c, size_t *col, double *level, double *lead)
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
		if (switch_link(c, j / 2) && x[j] > *level) {
			*level = x[j];
			*col = j;
		}
	if (*level <= 0)
		goto cleanup;
	for (size_t j = 0; j < 2 * c->n_vars; j++)
		if (j / 2 != *col / 2 && switch_link(c, j / 2))
			next = fmax(next, x[j]);
	*lead = next > 1e-9 ? *level / next : 1e9; /* 1e-9: the solver's rounding */
	found = true;
cleanup:
	free(y);
	free(use);
	free(x);
	return found;
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
#define MARKS_MIN_FLOOR 0.007		/* MF_MIN_FLOOR of localize_busy.c */
#define MARKS_MIN_FLOOR_LEAD 2

#define WHY_RANDOM_MARKS "its marks are set at random, not by its queue"

/*
 * A switch link direction that marks at random, standing out of every other switch link,
 * with marks that hold in every window: its finding (the search's pick on that link alone)
 * becomes a congested alert, ranked first: in a busy oversubscribed fabric the search reads
 * the fault's marked flows as one more queue (a slow or congested notice), and other
 * links' queues as alerts. Where the search did not pick the link, nothing changes.
 */
int loc_marks_first(struct ctx *c, struct candidate *best, size_t n_best)
{
	struct candidate probe = { 0 };
	size_t col = 0, at = n_best;
	double level = 0, lead = 0, top = 0;

	if (!loc_random_marks_top(c, &col, &level, &lead) || level < MARKS_MIN_LEVEL ||
	    lead < MARKS_MIN_LEAD)
		return 0;
	probe.var = (uint32_t)(col / 2);
	loc_marks_floor(c, &probe);
	if (!probe.marks_floor_known || probe.marks_floor < MARKS_MIN_FLOOR ||
	    probe.marks_floor_lead < MARKS_MIN_FLOOR_LEAD)
		return 0;
	for (size_t i = 0; i < n_best; i++) {
		if (best[i].var == probe.var && !best[i].n_set && at == n_best)
			at = i;
		top = fmax(top, best[i].confidence);
	}
	if (at == n_best)
		return 0;
	best[at].level = FINDING_ALERT;
	best[at].kind = FINDING_CONGESTED;
	best[at].kind_why = WHY_RANDOM_MARKS;
	best[at].notice_why = NULL;
	/* First among the alerts: its confidence raised to the highest's, by the least step. */
	best[at].confidence = nextafter(top, 2);
	return 0;
}
