/*
 * localize_timer.c: a slow pick whose flows restart on their sender's timer. RC completes a
 * message when its last packet is acknowledged; a requester whose timer fires resends from
 * the oldest unacknowledged PSN (go-back-N), and its completions and round trips wait for
 * those resends. When sender_timer() made a loss pick a `host` finding (its connections
 * leave one host, restart after silence, and the responder never reported a missing
 * packet), a slow pick whose every hurt connection is one of that host's and restarted on
 * its timer is the same fault seen as time: it becomes a notice. No threshold: protocol.
 */
#include <string.h>

#include "lib/localize/localize_internal.h"

/* Every hurt connection of x is one of by's (marked) and restarted on its timer. */
static bool timer_flows(const struct ctx *c, const struct candidate *x, const bool *mark)
{
	for (size_t k = 0; k < x->n_hurt_idx; k++) {
		const struct conn *cn = &c->conns[x->hurt_idx[k]];

		if (!mark[x->hurt_idx[k]] || cn->timeouts <= 0 || cn->naks > 0)
			return false;
	}
	return x->n_hurt_idx > 0;
}

/* mark has room for n_conns flags and is left cleared. */
void loc_timer_explains(const struct ctx *c, struct candidate *best, size_t n, bool *mark)
{
	for (size_t j = 0; j < n; j++) {
		const struct candidate *by = &best[j];

		/* sender_timer()'s finding: a loss pick turned `host` */
		if (by->level != FINDING_ALERT || by->kind != FINDING_HOST || by->signal != SIG_LOSS ||
		    !by->n_hurt_idx)
			continue;
		loc_mark_hurt(by, mark, true);
		for (size_t i = 0; i < n; i++) {
			struct candidate *x = &best[i];

			if (i == j || x->level != FINDING_ALERT || x->kind != FINDING_SLOW ||
			    !loc_latency_pick(x->signal) || !timer_flows(c, x, mark))
				continue;
			x->level = FINDING_NOTICE;
			x->notice_why = "its flows restart on their sender's timer: the host's resends, not the network";
		}
		loc_mark_hurt(by, mark, false);
	}
}
