/* localize_signals.c: per connection and signal, the excess over a robust baseline. */
#include "lib/localize/localize_internal.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/robust_stats.h"

/* ------------------------------------------------------------------ signals */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Median p50 of the flow's first windows with ACK samples, in us; -1 if too few. */
static double early_baseline_us(const struct ctx *c, const struct flow_stats *f)
{
	double v[64];
	size_t n = 0, with = 0;

	for (size_t i = 0; i < f->n_windows; i++)
		with += f->windows[i].ack_samples > 0;
	if (with < 2 * (size_t)c->cfg->baseline_windows)
		return -1;
	for (size_t i = 0; i < f->n_windows && n < c->cfg->baseline_windows && n < 64; i++)
		if (f->windows[i].ack_samples > 0)
			v[n++] = f->windows[i].ack_latency_p50_ns / 1000.0;
	return n ? rs_median(v, n) : -1;
}

static void signal_latency(struct ctx *c)
{
	size_t n = c->n_conns;
	int *classes = malloc((n ? n : 1) * sizeof(*classes));
	size_t n_classes = 0;
	double *v = c->scratch;

	/* Latency: excess over the median of the connection's class. */
	for (size_t i = 0; i < n; i++)
		if (c->conns[i].has_lat && c->conns[i].inc_len)
			classes[n_classes++] = c->conns[i].klass;
	if (n_classes)
		qsort(classes, n_classes, sizeof(*classes), cmp_int);
	for (size_t i = 0; i < n_classes;) {
		size_t j = i, m = 0;
		double med;
		while (j < n_classes && classes[j] == classes[i])
			j++;
		for (size_t k = 0; k < n; k++)
			if (c->conns[k].has_lat && c->conns[k].inc_len &&
			    c->conns[k].klass == classes[i])
				v[m++] = c->conns[k].lat_p50_us;
		med = rs_median(v, m);
		for (size_t k = 0; k < n; k++) {
			struct conn *cn = &c->conns[k];
			if (!cn->has_lat || !cn->inc_len || cn->klass != classes[i])
				continue;
			cn->baseline_us = med;
			if (m < c->cfg->min_class_flows) {
				/* Too few peers to compare with: compare with its own past. */
				cn->baseline_us = cn->lat_kind == LAT_ACK && cn->turnaround_us < 0 ?
							  early_baseline_us(c, cn->req) :
							  -1;
				if (cn->baseline_us <= 0)
					continue;
				cn->lat_own_past = true;
			}
			cn->y[SIG_LATENCY] = cn->lat_p50_us - cn->baseline_us;
			cn->w[SIG_LATENCY] = 1;
			cn->valid[SIG_LATENCY] = true;
		}
		i = j;
	}
	free(classes);
}

static void signal_completion(struct ctx *c)
{
	size_t n = c->n_conns;
	double *v = c->scratch;

	/* Completion: a slow serializer stretches whole messages more than single ACKs (a
	 * mirror at the sender stamps packets as they leave, after any queue in the host). */
	for (size_t k = 0; k < n; k++) {
		struct conn *cn = &c->conns[k];
		size_t m = 0;
		if (!cn->has_comp || !cn->inc_len || cn->valid[SIG_COMPLETION])
			continue;
		for (size_t j = 0; j < n; j++)
			if (c->conns[j].has_comp && c->conns[j].inc_len &&
			    loc_same_comp_class(&c->conns[j], cn))
				v[m++] = c->conns[j].comp_p50_us;
		if (m < c->cfg->min_class_flows)
			continue;
		double med = rs_median(v, m);
		for (size_t j = 0; j < n; j++) {
			struct conn *o = &c->conns[j];
			if (!o->has_comp || !o->inc_len || !loc_same_comp_class(o, cn))
				continue;
			o->comp_baseline_us = med;
			o->y[SIG_COMPLETION] = o->comp_p50_us - med;
			o->w[SIG_COMPLETION] = 1;
			o->valid[SIG_COMPLETION] = true;
		}
	}
}

/* Loss and marks: events per data packet. */
static void signal_counts(struct ctx *c)
{
	size_t n = c->n_conns;

	for (size_t k = 0; k < n; k++) {
		struct conn *cn = &c->conns[k];
		if (!cn->inc_len || cn->packets < (double)c->cfg->min_packets)
			continue;
		cn->y[SIG_LOSS] = cn->loss_events / cn->packets;
		cn->w[SIG_LOSS] = cn->packets;
		cn->valid[SIG_LOSS] = true;
		cn->y[SIG_ECN] = cn->ce_events / cn->packets;
		cn->w[SIG_ECN] = cn->packets;
		cn->valid[SIG_ECN] = true;
	}
}

static void signal_shift(struct ctx *c)
{
	size_t n = c->n_conns;
	double *v = c->scratch;

	/* Shift: each flow against its own past (its window p50 series split in two where the
	 * squared error is least). Static differences between paths cancel out. */
	for (size_t k = 0; k < n; k++) {
		struct conn *cn = &c->conns[k];
		const struct flow_stats *f = cn->req;
		struct change_point cp;
		size_t m = 0;
		if (!cn->has_lat || !cn->inc_len || cn->lat_kind != LAT_ACK ||
		    cn->turnaround_us >= 0 || !f)
			continue;
		/* Bounded by the scratch size: a flow can have more windows than there are flows. */
		for (size_t i = 0; i < f->n_windows && m < c->scratch_len; i++)
			if (f->windows[i].ack_samples > 0)
				v[m++] = f->windows[i].ack_latency_p50_ns / 1000.0;
		if (rs_change_point(v, m, 2, &cp))
			continue;
		if (cp.mean_before <= 0)
			continue;
		/* Relative: a flow's noise grows with its latency (queues on longer paths),
		 * so +2 us on a 4 us one-leaf path is as telling as +4 us on an 8 us one. */
		cn->y[SIG_SHIFT] = (cp.mean_after - cp.mean_before) / cp.mean_before;
		cn->shift_before_us = cp.mean_before;
		cn->w[SIG_SHIFT] = 1;
		cn->valid[SIG_SHIFT] = true;
	}
}

static void signal_turnaround(struct ctx *c)
{
	double med[LAT_COMPLETION + 1];

	/* Turnaround seen from a second vantage: excess over its kind's median. */
	loc_turnaround_medians(c, med);
	for (size_t k = 0; k < c->n_conns; k++) {
		struct conn *cn = &c->conns[k];
		if (cn->turnaround_us < 0 || !cn->inc_len || med[cn->turnaround_kind] < 0)
			continue;
		cn->y[SIG_TURNAROUND] = cn->turnaround_us - med[cn->turnaround_kind];
		cn->w[SIG_TURNAROUND] = 1;
		cn->valid[SIG_TURNAROUND] = true;
	}
}

/*
 * Lowest window median of a flow's ACK latency in each half of its windows (by time), in
 * us; -1 for a half without samples. A fault may start inside the trace: the half after
 * its onset shows it.
 */
static void latency_floor_us(const struct flow_stats *f, double lo[2])
{
	uint64_t mid;

	lo[0] = lo[1] = -1;
	if (!f || !f->n_windows)
		return;
	mid = f->windows[0].start_ns / 2 + f->windows[f->n_windows - 1].start_ns / 2;
	for (size_t i = 0; i < f->n_windows; i++) {
		double p50 = f->windows[i].ack_latency_p50_ns / 1000.0;
		int h = f->windows[i].start_ns > mid;

		if (f->windows[i].ack_samples > 0 && (lo[h] < 0 || p50 < lo[h]))
			lo[h] = p50;
	}
}

/*
 * Floor: each connection's lowest window median against its class's median floor, in
 * the half of the trace where it stands out more. A step of added latency (a slow cable,
 * a +us device) moves every packet, the quickest too; queueing raises the median and the
 * tail but leaves quiet moments near the floor.
 */
static void signal_floor(struct ctx *c)
{
	size_t n = c->n_conns;
	double *v = c->scratch;

	for (size_t k = 0; k < n; k++) {
		struct conn *cn = &c->conns[k];

		cn->has_floor = false;
		cn->floor_excess_us = -1e9;
		cn->floor_us[0] = cn->floor_us[1] = -1;
		if (cn->has_lat && cn->inc_len && cn->lat_kind == LAT_ACK && cn->turnaround_us < 0)
			latency_floor_us(cn->req, cn->floor_us);
	}
	for (int h = 0; h < 2; h++) {
		for (size_t k = 0; k < n; k++) {
			struct conn *cn = &c->conns[k];
			size_t m = 0;
			double med;

			if (cn->floor_us[h] <= 0 || cn->floor_done[h])
				continue;
			for (size_t j = 0; j < n; j++)
				if (c->conns[j].floor_us[h] > 0 && c->conns[j].klass == cn->klass)
					v[m++] = c->conns[j].floor_us[h];
			med = m >= c->cfg->min_class_flows ? rs_median(v, m) : -1;
			for (size_t j = 0; j < n; j++) {
				struct conn *o = &c->conns[j];

				if (o->floor_us[h] <= 0 || o->klass != cn->klass)
					continue;
				o->floor_done[h] = true;
				if (med <= 0)
					continue;
				o->floor_excess_us = fmax(o->floor_excess_us, o->floor_us[h] - med);
				o->has_floor = true;
			}
		}
	}
}

/* The flow carrying a connection's data (READ: the responses). */
static const struct flow_stats *data_flow(const struct conn *cn)
{
	if (cn->data_rev && cn->resp)
		return cn->resp;
	return cn->req ? cn->req : cn->resp;
}

/*
 * Each connection's share of its data packets in the later half of the trace (by its
 * windows' start times): a fault that starts inside the trace sheds its link's load only
 * after its onset, and the later half is after it (the whole trace's load mixes in the
 * time before). A connection without windows counts as evenly spread.
 */
static void signal_late_share(struct ctx *c)
{
	uint64_t t0 = UINT64_MAX, t1 = 0, mid;

	for (size_t k = 0; k < c->n_conns; k++) {
		const struct flow_stats *f = data_flow(&c->conns[k]);

		if (!f || !f->n_windows)
			continue;
		if (f->windows[0].start_ns < t0)
			t0 = f->windows[0].start_ns;
		if (f->windows[f->n_windows - 1].start_ns > t1)
			t1 = f->windows[f->n_windows - 1].start_ns;
	}
	mid = t0 / 2 + t1 / 2;
	for (size_t k = 0; k < c->n_conns; k++) {
		struct conn *cn = &c->conns[k];
		const struct flow_stats *f = data_flow(cn);
		double late = 0, all = 0;

		cn->late_share = 0.5;
		if (!f || t1 <= t0)
			continue;
		for (size_t i = 0; i < f->n_windows; i++) {
			all += (double)f->windows[i].packets;
			if (f->windows[i].start_ns > mid)
				late += (double)f->windows[i].packets;
		}
		if (all > 0)
			cn->late_share = late / all;
	}
}

void loc_build_signals(struct ctx *c)
{
	signal_late_share(c);
	signal_latency(c);
	signal_completion(c);
	signal_counts(c);
	signal_shift(c);
	signal_turnaround(c);
	signal_floor(c);
}
