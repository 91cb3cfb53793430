/* sample_defer.c: the latency and window samples a batch keeps for its end (no I/O). */
#include "lib/track/qp_track_int.h"

/*
 * Appending a sample writes the end of its set's array (and, for an ACK, of its window's), a
 * line last written thousands of packets before and long evicted: one at a time, those
 * stores held up the packets behind them (the appends were a sixth of the core's time on a
 * trace with 0.6 samples a packet). Inside qp_tracker_add_batch they are kept here and done
 * in order at its end, every set and then every array's end fetched first, so the misses
 * overlap. Window stores are kept by index, so the array may grow meanwhile.
 */
static void win_flush(struct qp_tracker *t)
{
	uint32_t n = t->n_pending_win;

	for (uint32_t i = 0; i < n; i++)
		__builtin_prefetch(&t->pending_win[i].f->win_samples[t->pending_win[i].idx], 1);
	for (uint32_t i = 0; i < n; i++)
		t->pending_win[i].f->win_samples[t->pending_win[i].idx] = t->pending_win[i].ns;
	t->n_pending_win = 0;
}

void qp_pending_flush(struct qp_tracker *t)
{
	uint32_t n = t->n_pending;

	win_flush(t);
	for (uint32_t i = 0; i < n; i++)
		__builtin_prefetch(t->pending[i].set, 1);
	for (uint32_t i = 0; i < n; i++) {
		const struct latency_set *s = t->pending[i].set;

		if (s->v && s->n < s->cap)
			__builtin_prefetch(&s->v[s->n], 1);
	}
	for (uint32_t i = 0; i < n; i++)
		if (latency_set_add(t->pending[i].set, t->pending[i].ns, t->cfg.exact_samples))
			t->tot.alloc_failures++;
	t->n_pending = 0;
}

void qp_sample_add(struct qp_tracker *t, struct latency_set *s, uint64_t ns)
{
	if (!t->defer_samples) {
		if (latency_set_add(s, ns, t->cfg.exact_samples))
			t->tot.alloc_failures++;
		return;
	}
	if (t->n_pending == PENDING_SAMPLES)
		qp_pending_flush(t);
	t->pending[t->n_pending++] = (struct pending_sample){ s, ns };
}

void qp_win_sample_put(struct qp_tracker *t, struct qp_flow *f, uint32_t idx, uint32_t v)
{
	if (!t->defer_samples) {
		f->win_samples[idx] = v;
		return;
	}
	if (t->n_pending_win == PENDING_SAMPLES)
		win_flush(t);
	t->pending_win[t->n_pending_win++] = (struct pending_win_sample){ f, idx, v };
}
