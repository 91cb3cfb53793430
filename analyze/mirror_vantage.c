/* mirror_vantage.c: every mirror session in a trace is a vantage point, and its clock. */
#include <pcap/dlt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/mirror_vantage.h"
#include "lib/decode/roce_decode.h"
#include "lib/util/robust_stats.h"
#include "lib/util/util.h"

/* Clock samples kept per session: past this, every other one goes and the stride doubles. */
#define CLOCK_MAX_SAMPLES (1u << 17)
/* Chunks the drift is fitted over (Theil-Sen over their medians). */
#define CLOCK_CHUNKS 32

int mirror_vantages_init(struct mirror_vantages *m, int n_traces)
{
	memset(m, 0, sizeof(*m));
	m->n_traces = n_traces;
	m->n = m->cap = (uint32_t)n_traces;
	m->v = calloc((size_t)n_traces, sizeof(*m->v));
	if (!m->v)
		return -1;
	for (int i = 0; i < n_traces; i++)
		m->v[i].trace = i;
	return 0;
}

void mirror_vantages_free(struct mirror_vantages *m)
{
	for (uint32_t i = 0; i < m->n; i++) {
		free(m->v[i].sw);
		free(m->v[i].delta);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static bool same_source(const struct mirror_vantage *v, int trace, const struct roce_pkt *p)
{
	return v->trace == trace && roce_source_same(&v->src, p);
}

/* A new source of trace `trace`: the trace's own slot when still free, else a new vantage. */
static int64_t add_source(struct mirror_vantages *m, int trace, const struct roce_pkt *p)
{
	struct mirror_vantage *v;
	size_t cap = m->cap;

	if (m->v[trace].used) {
		if (util_ensure_mem((void **)&m->v, &cap, sizeof(*m->v), (size_t)m->n + 1))
			return -1;
		m->cap = (uint32_t)cap;
		v = &m->v[m->n];
		memset(v, 0, sizeof(*v));
		v->trace = trace;
		m->n++;
	} else {
		v = &m->v[trace];
	}
	v->used = true;
	roce_source_of(p, &v->src);
	v->erf = p->linktype == DLT_ERF;
	return v - m->v;
}

/* One tick of an ERSPAN III timestamp, ns (IEEE 1588: ns already). */
static uint64_t tick_ns(uint8_t gra)
{
	return gra == ERSPAN_GRA_100US ? 100000 : gra == ERSPAN_GRA_100NS ? 100 : 1;
}

/* ERSPAN III: the switch's time of the packet in ns, from its granularity; -1 when unusable. */
static int switch_time(struct mirror_vantage *v, const struct roce_pkt *p, uint64_t *ns)
{
	uint64_t unit, raw = p->erspan_ts;

	if (p->erspan_gra == ERSPAN_GRA_IEEE1588)
		return roce_erspan3_ns(p, p->arrival_ns, ns);
	if (p->erspan_gra != ERSPAN_GRA_100US && p->erspan_gra != ERSPAN_GRA_100NS)
		return -1; /* user-defined: we cannot know its unit */
	unit = tick_ns(p->erspan_gra);
	/* A free-running 32-bit counter with no epoch: unwrapped, anchored at the first arrival. */
	if (!v->have_raw) {
		v->have_raw = true;
		v->raw_first = v->raw_last = raw;
		v->anchor_ns = p->arrival_ns;
	}
	if (raw < v->raw_last && v->raw_last - raw > 0x80000000u)
		v->raw_wraps++;
	v->raw_last = raw;
	*ns = v->anchor_ns + (raw + (v->raw_wraps << 32) - v->raw_first) * unit;
	return 0;
}

static void keep_clock_sample(struct mirror_vantages *m, struct mirror_vantage *v, uint64_t sw,
			      uint64_t arrival)
{
	if (v->skip || v->no_samples) {
		v->skip -= v->skip > 0;
		return;
	}
	if (!v->sw) {
		v->sw = malloc(CLOCK_MAX_SAMPLES * sizeof(*v->sw));
		v->delta = malloc(CLOCK_MAX_SAMPLES * sizeof(*v->delta));
		v->stride = 1;
		if (!v->sw || !v->delta) {
			free(v->sw);
			free(v->delta);
			v->sw = NULL;
			v->delta = NULL;
			v->no_samples = true; /* the session's clock goes unmeasured */
			m->oom = true;
			return;
		}
	}
	if (v->n_samples == CLOCK_MAX_SAMPLES) {
		/* Full: keep every other sample, take every other packet from now on. */
		for (uint32_t i = 0; i < CLOCK_MAX_SAMPLES / 2; i++) {
			v->sw[i] = v->sw[2 * i];
			v->delta[i] = v->delta[2 * i];
		}
		v->n_samples = CLOCK_MAX_SAMPLES / 2;
		v->stride *= 2;
	}
	v->sw[v->n_samples] = (int64_t)sw;
	v->delta[v->n_samples] = (int64_t)(arrival - sw);
	v->n_samples++;
	v->skip = v->stride - 1;
}

uint32_t mirror_vantage_of(struct mirror_vantages *m, int trace, struct roce_pkt *pkt)
{
	struct mirror_vantage *v = &m->v[m->last];
	uint64_t sw;

	if (!same_source(v, trace, pkt) || !v->used) {
		int64_t found = -1;

		/* Traces read side by side alternate: the trace's own first source before the
		 * scan (sources are unique, so the scan would find the same one). */
		if (trace >= 0 && trace < m->n_traces && m->v[trace].used &&
		    same_source(&m->v[trace], trace, pkt))
			found = trace;
		for (uint32_t i = 0; i < m->n && found < 0; i++)
			if (m->v[i].used && same_source(&m->v[i], trace, pkt))
				found = i;
		if (found < 0)
			found = add_source(m, trace, pkt);
		if (found < 0) {
			m->oom = true;
			return (uint32_t)trace; /* merged with the trace: still analyzed */
		}
		m->last = (uint32_t)found;
		v = &m->v[found];
	}
	v->packets++;
	if (pkt->encap == ROCE_ENCAP_ERSPAN3 && !switch_time(v, pkt, &sw)) {
		v->clock.samples++;
		v->clock.gra = pkt->erspan_gra;
		keep_clock_sample(m, v, sw, pkt->arrival_ns);
		/* 100 us ticks are coarser than any RoCE latency: the arrival time stays then. */
		if (pkt->erspan_gra != ERSPAN_GRA_100US)
			pkt->ts_ns = sw;
	}
	if (m->last >= (uint32_t)m->n_traces) {
		/* A further session's own span (the trace's counts stay with the trace's row). */
		if (!v->health.frames || pkt->ts_ns < v->health.first_ns)
			v->health.first_ns = pkt->ts_ns;
		if (pkt->ts_ns > v->health.last_ns)
			v->health.last_ns = pkt->ts_ns;
		v->health.frames++;
		v->health.bytes += pkt->cap_len + pkt->encap_hdr_len;
	}
	return m->last;
}

/* Theil-Sen over the chunks' medians, then the spread of what the line does not explain. */
static void fit_clock(struct mirror_vantage *v)
{
	struct capture_clock *c = &v->clock;
	uint32_t n = v->n_samples, k = n < CLOCK_CHUNKS ? n : CLOCK_CHUNKS;
	double ct[CLOCK_CHUNKS], cd[CLOCK_CHUNKS], slopes[CLOCK_CHUNKS * (CLOCK_CHUNKS - 1) / 2];
	double *a = malloc((size_t)n * sizeof(*a)), *b = malloc((size_t)n * sizeof(*b));
	double t0;
	size_t ns = 0;

	if (!n || !a || !b)
		goto cleanup;
	/* Fewer than 1000 ticks (100 us ticks over 0.1 s): the rounding is all a fit would see. */
	if ((uint64_t)(v->sw[n - 1] - v->sw[0]) < 1000 * tick_ns(c->gra)) {
		c->samples = 0;
		goto cleanup;
	}
	t0 = (double)v->sw[0];
	for (uint32_t j = 0; j < k; j++) {
		uint32_t lo = (uint32_t)((uint64_t)n * j / k), hi = (uint32_t)((uint64_t)n * (j + 1) / k);

		for (uint32_t i = lo; i < hi; i++) {
			a[i - lo] = (double)v->sw[i] - t0;
			b[i - lo] = (double)v->delta[i];
		}
		ct[j] = rs_median(a, hi - lo);
		cd[j] = rs_median(b, hi - lo);
	}
	for (uint32_t i = 0; i < k; i++)
		for (uint32_t j = i + 1; j < k; j++)
			if (ct[j] != ct[i])
				slopes[ns++] = (cd[j] - cd[i]) / (ct[j] - ct[i]);
	c->slope_ppm = ns ? rs_median(slopes, ns) * 1e6 : 0;
	for (uint32_t j = 0; j < k; j++)
		cd[j] -= c->slope_ppm / 1e6 * ct[j];
	c->offset_us = rs_median(cd, k) / 1e3;
	for (uint32_t i = 0; i < n; i++) {
		a[i] = (double)v->delta[i] - c->offset_us * 1e3 - c->slope_ppm / 1e6 * ((double)v->sw[i] - t0);
		b[i] = (double)v->delta[i];
	}
	c->delay_median_us = rs_median(b, n) / 1e3;
	c->jitter_us = rs_sigma(a, n, b) / 1e3;
	c->absolute = c->gra == ERSPAN_GRA_IEEE1588;
cleanup:
	free(a);
	free(b);
}

/*
 * A trace of one source keeps its name; a source among several says which it is: "t.pcap:
 * erspan2 session 3 from 10.0.0.1", "t.erf: ERF port B" (Endace letters, as ibdump's ports).
 */
static void name_vantage(struct mirror_vantage *v, const char *path, bool one_of_several)
{
	char ip[64], port[16] = "";

	if (!v->used || !one_of_several) {
		snprintf(v->name, sizeof(v->name), "%s", path);
		return;
	}
	if (v->erf)
		snprintf(port, sizeof(port), "ERF port %c", 'A' + (v->src.erf_port & 3));
	if (v->src.kind == ROCE_ENCAP_NONE)
		snprintf(v->name, sizeof(v->name), "%s%s%s", path, port[0] ? ": " : "", port);
	else
		snprintf(v->name, sizeof(v->name), "%s: %s%s%s session %u from %s", path, port,
			 port[0] ? " " : "", roce_encap_name(v->src.kind), v->src.id,
			 addr_str(v->src.src_ip, ip, sizeof(ip)));
}

void mirror_vantages_finish(struct mirror_vantages *m, const char *const *paths)
{
	uint32_t *per_trace = calloc((size_t)m->n_traces, sizeof(*per_trace));

	for (uint32_t i = 0; per_trace && i < m->n; i++)
		per_trace[m->v[i].trace]++;
	for (uint32_t i = 0; i < m->n; i++) {
		struct mirror_vantage *v = &m->v[i];

		if (v->n_samples)
			fit_clock(v);
		else
			v->clock.samples = 0; /* none kept: nothing to say about its clock */
		name_vantage(v, paths[v->trace], per_trace && per_trace[v->trace] >= 2);
	}
	free(per_trace);
}
