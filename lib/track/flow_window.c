/* flow_window.c: per-flow counts in fixed time windows, with the window's ACK latency percentiles. */
#include <stdlib.h>
#include <string.h>

#include "lib/track/qp_track_int.h"
#include "lib/util/sort_u32.h"
#include "lib/util/util.h"

void flow_window_close(struct qp_tracker *t, struct qp_flow *f)
{
	struct flow_window *w = &f->cur_win;

	qp_pending_flush(t); /* the window's samples, all of them */

	if (f->win_n) {
		uint32_t n = f->win_n;

		memcpy(t->tmp, f->win_samples, n * sizeof(*t->tmp));
		sort_u32(t->tmp, n);
		w->ack_latency_p50_ns = percentile_nearest_rank_u32(t->tmp, n, 5000);
		w->ack_latency_p99_ns = percentile_nearest_rank_u32(t->tmp, n, 9900);
	}
	if (f->n_wins < t->cfg.max_windows) {
		if (f->n_wins == f->cap_wins) {
			/*
			 * From the tracker's 2 MB pages, not malloc's 4 KB ones: every flow gets a
			 * window each window_ns, and on this guest a first touch of a 4 KB page
			 * costs ~20 us. Most flows live in one window, so it starts at one; each
			 * step doubles the bytes and fills the size class (1, 3, 6, 12, ... windows).
			 */
			size_t bytes = f->cap_wins ? 2 * flow_wins_bytes(f->cap_wins) : sizeof(*f->wins);
			size_t ncap = (size_t)1 << (64 - __builtin_clzll(bytes - 1)); /* its class */
			struct flow_window *nw;

			ncap /= sizeof(*nw);
			if (ncap > t->cfg.max_windows)
				ncap = t->cfg.max_windows;
			nw = track_mem_realloc(&t->mem, f->wins, flow_wins_bytes(f->cap_wins), flow_wins_bytes(ncap));
			if (nw) {
				f->wins = nw;
				f->cap_wins = ncap;
			} else {
				t->tot.alloc_failures++; /* the sink still gets it */
			}
		}
		if (f->n_wins < f->cap_wins)
			f->wins[f->n_wins++] = *w;
	}
	if (t->cfg.sink && t->cfg.sink->window && f->st.id)
		t->cfg.sink->window(t->cfg.sink->ctx, f->st.id, w);
	f->have_win = 0;
	f->win_n = 0;
	f->win_seen = 0;
}

/* The window that holds ts (late packets land in the current window). */
struct flow_window *flow_window_at(struct qp_tracker *t, struct qp_flow *f, uint64_t ts)
{
	uint64_t start;

	/* Nearly every packet falls in the current window: no 64-bit division for those. */
	if (f->have_win && (ts < f->cur_win.start_ns || ts - f->cur_win.start_ns < t->cfg.window_ns))
		return &f->cur_win;
	start = ts - ts % t->cfg.window_ns;
	if (f->have_win && start > f->cur_win.start_ns)
		flow_window_close(t, f);
	if (!f->have_win) {
		memset(&f->cur_win, 0, sizeof(f->cur_win));
		f->cur_win.start_ns = start;
		f->have_win = 1;
	}
	return &f->cur_win;
}

void flow_window_sample(struct qp_tracker *t, struct qp_flow *f, uint64_t ts, uint64_t ns)
{
	struct flow_window *w = flow_window_at(t, f, ts);
	uint32_t v = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;

	w->ack_samples++;
	w->ack_latency_sum_ns += ns;
	if (v > w->ack_latency_max_ns)
		w->ack_latency_max_ns = v;
	/* Most flows see a few samples a window: grow to the cap, not start there. */
	if (f->win_n == f->win_cap && f->win_cap < WIN_SAMPLES_CAP) {
		size_t ncap = f->win_cap ? f->win_cap * 2 : 16;
		uint32_t *nw;

		if (ncap > WIN_SAMPLES_CAP)
			ncap = WIN_SAMPLES_CAP;
		nw = track_mem_realloc(&t->mem, f->win_samples, f->win_cap * sizeof(*nw), ncap * sizeof(*nw));
		if (!nw) {
			t->tot.alloc_failures++; /* counted in the window, left out of its percentiles */
			return;
		}
		f->win_samples = nw;
		f->win_cap = ncap;
	}
	f->win_seen++;
	if (f->win_n < WIN_SAMPLES_CAP) {
		qp_win_sample_put(t, f, f->win_n++, v);
	} else {
		/* Reservoir sampling keeps the window's percentiles unbiased past the cap. */
		uint64_t r = mix64(f->win_seen ^ ts) % f->win_seen;

		if (r < WIN_SAMPLES_CAP)
			qp_win_sample_put(t, f, (uint32_t)r, v);
	}
}

