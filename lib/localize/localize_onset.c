/*
 * localize_onset.c: a set of connections' per-window series, summed on the tracker's window
 * grid, and when it changed: the onset of a pick.
 */
#include "lib/localize/localize_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lib/util/robust_stats.h"
#include "lib/util/util.h"

static int cmp_win(const void *a, const void *b)
{
	const struct win_point *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/*
 * The tracker starts every window on a multiple of the window's length, so the points'
 * starts lie on a grid: each point adds into its grid slot, in input order, which is
 * what a stable sort followed by the sums gives, bit for bit (glibc's qsort merges).
 * Returns false when the grid is too sparse for the slots (or memory short): sort then.
 */
static bool sum_windows_on_grid(struct win_point *pts, size_t n, size_t *out)
{
	uint64_t lo = UINT64_MAX, hi = 0, step = 0;
	struct win_point *slot;
	bool *used;
	size_t n_slots, m = 0;

	for (size_t i = 0; i < n; i++) {
		lo = pts[i].start_ns < lo ? pts[i].start_ns : lo;
		hi = pts[i].start_ns > hi ? pts[i].start_ns : hi;
	}
	for (size_t i = 0; i < n && step != 1; i++)
		step = gcd_u64(pts[i].start_ns - lo, step);
	if (!step)
		step = 1; /* one start for every point */
	if ((hi - lo) / step >= 4 * (uint64_t)n + 64)
		return false;
	n_slots = (size_t)((hi - lo) / step) + 1;
	slot = malloc(n_slots * sizeof(*slot));
	used = calloc(n_slots, sizeof(*used));
	if (!slot || !used) {
		free(slot);
		free(used);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = (size_t)((pts[i].start_ns - lo) / step);

		if (used[k]) {
			slot[k].num += pts[i].num;
			slot[k].den += pts[i].den;
		} else {
			slot[k] = pts[i];
			used[k] = true;
		}
	}
	for (size_t k = 0; k < n_slots; k++)
		if (used[k])
			pts[m++] = slot[k];
	free(slot);
	free(used);
	*out = m;
	return true;
}

size_t loc_sum_windows(struct win_point *pts, size_t n)
{
	size_t m = 0;

	if (n > 1 && sum_windows_on_grid(pts, n, &m))
		return m;
	qsort(pts, n, sizeof(*pts), cmp_win);
	for (size_t i = 0; i < n; i++) {
		if (m && pts[m - 1].start_ns == pts[i].start_ns) {
			pts[m - 1].num += pts[i].num;
			pts[m - 1].den += pts[i].den;
		} else {
			pts[m++] = pts[i];
		}
	}
	return m;
}

static void add_windows(struct win_point **pts, size_t *n, size_t *cap,
			const struct flow_stats *f, enum signal s)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_windows; i++) {
		const struct flow_window *w = &f->windows[i];
		struct win_point p = { .start_ns = w->start_ns };
		switch (s) {
		case SIG_LATENCY:
		case SIG_SHIFT:
		case SIG_COMPLETION:
		case SIG_TURNAROUND:
			if (!w->ack_samples)
				continue;
			p.num = w->ack_latency_p50_ns / 1000.0;
			p.den = 1;
			break;
		case SIG_ECN:
			p.num = max2((double)w->ecn_ce, (double)w->cnps);
			p.den = (double)w->packets;
			break;
		default:
			continue;
		}
		if (util_ensure_mem((void **)pts, cap, sizeof(**pts), *n + 1))
			return;
		(*pts)[(*n)++] = p;
	}
}

bool loc_conn_windows_next(struct conn_windows *it, uint64_t *start,
			   const struct flow_window **a, const struct flow_window **b)
{
	static const struct flow_window none;
	size_t nq = it->q ? it->q->n_windows : 0, nr = it->r ? it->r->n_windows : 0;
	size_t i = it->i, j = it->j;

	if (i >= nq && j >= nr)
		return false;
	*a = *b = &none;
	if (j >= nr || (i < nq && it->q->windows[i].start_ns <= it->r->windows[j].start_ns))
		*a = &it->q->windows[i];
	if (i >= nq || (j < nr && it->r->windows[j].start_ns <= it->q->windows[i].start_ns))
		*b = &it->r->windows[j];
	*start = *a != &none ? (*a)->start_ns : (*b)->start_ns;
	it->i += *a != &none;
	it->j += *b != &none;
	return true;
}

double loc_window_loss_events(const struct flow_window *a, const struct flow_window *b)
{
	return max2(a->naks, b->naks) + max2(a->timeouts, b->timeouts) +
	       max2(a->read_gaps, b->read_gaps);
}

/*
 * One connection's loss per window, counted as fill_conn_counts() counts the connection:
 * NAKs, timeouts and a READ's re-reads, each the larger of the two directions' counts
 * (both may count one event), else the resends. A READ's re-read is one loss; its resent
 * responses (the READ and the READs after it) are not, or the windows of READs would
 * weigh each loss 2-19 times while a WRITE's weigh it once.
 */
static void add_loss_windows(struct win_point **pts, size_t *n, size_t *cap,
			     const struct flow_stats *q, const struct flow_stats *r)
{
	struct conn_windows it = { .q = q, .r = r };
	const struct flow_window *a, *b;
	uint64_t start;

	while (loc_conn_windows_next(&it, &start, &a, &b)) {
		double ev = loc_window_loss_events(a, b);

		if (util_ensure_mem((void **)pts, cap, sizeof(**pts), *n + 1))
			return;
		(*pts)[(*n)++] = (struct win_point){
			.start_ns = start,
			.num = ev > 0 ? ev : (double)(a->retransmitted_packets + b->retransmitted_packets),
			.den = (double)(a->packets + b->packets) };
	}
}

/* Onset: change point of the hurt connections' summed per-window series. */
void loc_find_onset(struct ctx *c, struct candidate *cand, const bool *hurt)
{
	struct win_point *pts = NULL;
	size_t n = 0, cap = 0, m = 0;
	double *series = NULL;
	uint64_t *starts = NULL;
	struct change_point cp;

	for (size_t k = 0; k < c->n_conns; k++) {
		if (!hurt[k])
			continue;
		if (cand->signal == SIG_LOSS) {
			add_loss_windows(&pts, &n, &cap, c->conns[k].req, c->conns[k].resp);
			continue;
		}
		add_windows(&pts, &n, &cap, c->conns[k].req, cand->signal);
		if (cand->signal == SIG_ECN)
			add_windows(&pts, &n, &cap, c->conns[k].resp, cand->signal);
	}
	if (!n)
		goto cleanup;
	n = loc_sum_windows(pts, n);
	series = malloc(n * sizeof(*series));
	starts = malloc(n * sizeof(*starts));
	if (!series || !starts)
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		if (pts[i].den > 0) {
			series[m] = pts[i].num / pts[i].den;
			starts[m++] = pts[i].start_ns;
		}
	}
	if (!m)
		goto cleanup;
	cand->onset_ns = starts[0]; /* present from the first window, unless a change shows */
	for (size_t i = 0; i < m; i++)
		if (series[i] > 0) {
			cand->onset_ns = starts[i];
			break;
		}
	if (!rs_change_point(series, m, 1, &cp) && cp.mean_after > cp.mean_before) {
		double shift = cp.mean_after - cp.mean_before;
		/* Loss and marks are counts: let a quiet first segment still show a change. */
		bool counts = cand->signal == SIG_LOSS || cand->signal == SIG_ECN;
		double floor = counts ? cp.mean_after * 0.1 : cand->sigma_us;
		if (shift >= c->cfg->onset_min_shift * fmax(cp.sigma, floor) &&
		    (!counts || cp.mean_before <= cp.mean_after * 0.5)) {
			cand->onset_ns = starts[cp.split];
			cand->onset_change_point = true;
			cand->onset_after = m - cp.split;
			cand->onset_windows = m;
			cand->onset_ratio = cp.mean_before > 0 ? cp.mean_after / cp.mean_before : INFINITY;
		}
	}
cleanup:
	free(pts);
	free(series);
	free(starts);
}
