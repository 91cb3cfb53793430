/*
 * localize_overflow.c: are a lossy subject's drops a queue's overflow? A queue drops while it
 * is full, in bursts, so an overflow's loss events cluster in the windows when it was; a
 * lossy cable or an injected loss drops each packet with the same chance, whatever the
 * queues do, so its events spread over the windows as its packets do. The dispersion of
 * the per-window counts tells the two apart. (Marks in the loss windows against the other
 * windows' did not: docs/evaluation.md, "Eleventh round: loss at random in a busy fabric".)
 */
#include <stdlib.h>

#include "lib/localize/localize_internal.h"
#include "lib/util/util.h"

/* A connection's windows from from_ns on: loss events and packets, by start time. */
struct loss_points {
	uint64_t from_ns;
	struct lw { uint64_t start_ns; double ev, pk; } *pts;
	size_t n, cap;
};

/* One connection's windows from from_ns on, both directions merged. */
static void add_conn(struct loss_points *s, const struct flow_stats *q, const struct flow_stats *r)
{
	struct conn_windows it = { .q = q, .r = r };
	const struct flow_window *a, *b;
	uint64_t start;

	while (loc_conn_windows_next(&it, &start, &a, &b)) {
		if (start < s->from_ns ||
		    util_ensure_mem((void **)&s->pts, &s->cap, sizeof(*s->pts), s->n + 1))
			continue;
		s->pts[s->n++] = (struct lw){ start, loc_window_loss_events(a, b),
					      (double)(a->packets + b->packets) };
	}
}

static int cmp_lw(const void *x, const void *y)
{
	const struct lw *a = x, *b = y;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

/*
 * How clustered in time the hurt connections' loss events are, from the onset on: the
 * Pearson chi-square per window of their summed per-window counts against the counts
 * their packets would draw at the mean rate (1: drops at random, as a lossy cable's; far
 * above: bursts, as a queue's overflow). -1 when too few events to tell.
 */
double loc_loss_dispersion(const struct ctx *c, const struct candidate *cand)
{
	struct loss_points s = { .from_ns = cand->onset_ns };
	double ev = 0, pk = 0, chi = 0, rate;
	size_t m = 0;

	for (size_t k = 0; k < cand->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[cand->hurt_idx[k]];

		add_conn(&s, cn->req, cn->resp);
	}
	for (size_t i = 0; i < s.n; i++) {
		ev += s.pts[i].ev;
		pk += s.pts[i].pk;
	}
	if (ev < 10 || pk <= 0) {
		free(s.pts);
		return -1;
	}
	rate = ev / pk;
	qsort(s.pts, s.n, sizeof(*s.pts), cmp_lw);
	for (size_t i = 0; i < s.n;) {
		double e = 0, p = 0, expected;
		size_t j = i;

		while (j < s.n && s.pts[j].start_ns == s.pts[i].start_ns) {
			e += s.pts[j].ev;
			p += s.pts[j].pk;
			j++;
		}
		i = j;
		expected = rate * p;
		if (expected <= 0)
			continue;
		chi += (e - expected) * (e - expected) / expected;
		m++;
	}
	free(s.pts);
	return m ? chi / m : -1;
}
