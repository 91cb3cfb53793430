/*
 * agent_metrics.h: the analysis results as metrics (Prometheus and OTLP share the model in
 * metrics.h). Pure: the live agent (agentxdp-capture --analyze) and agentxdp-analyze --prom
 * both call it, so a live scrape and a trace's file carry the same names and labels.
 */
#ifndef AGENTXDP_AGENT_METRICS_H
#define AGENTXDP_AGENT_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/localize/finding.h"
#include "lib/localize/localize.h"
#include "lib/track/flow.h"
#include "lib/export/metrics.h"
#include "lib/track/qp_track.h"

/* ACK latency bucket bounds in seconds: 1 us to 1 s, microsecond-scale at the low end. */
#define AGENT_LATENCY_BUCKETS 17

/* Per-flow ACK latency histograms, fed sample by sample from the tracker's sink. */
struct agent_latency {
	uint64_t (*counts)[AGENT_LATENCY_BUCKETS + 1]; /* indexed by flow id */
	double *sum_s;
	size_t cap;
};

void agent_latency_init(struct agent_latency *al);
/* One ACK latency sample of flow `flow_id`. 0 or -ENOMEM. */
int agent_latency_observe(struct agent_latency *al, uint64_t flow_id, uint64_t latency_ns);
void agent_latency_free(struct agent_latency *al);
extern const double agent_latency_bounds_s[AGENT_LATENCY_BUCKETS];

/* One capture interface's health, for the capture_* families (optional). */
struct agent_capture_stats {
	const char *interface;
	uint64_t packets;		/* RoCE records delivered */
	uint64_t lost;			/* records lost (ring buffer full) */
};

struct agent_metrics_input {
	const struct flow_stats *flows;
	size_t n_flows;
	const struct finding *findings;
	size_t n_findings;
	const struct qp_tracker_totals *totals;	/* may be NULL */
	const struct agent_latency *latency;	/* may be NULL: no histograms */
	const struct agent_capture_stats *captures;
	size_t n_captures;
	uint64_t malformed_packets;
	size_t max_pairs;	/* host pairs with their own labels; the rest src="other" (default 200) */
	size_t top_qps;		/* QPs with their own p99 gauge (default 20) */
	const struct localize_coverage *coverage; /* may be NULL: no agentxdp_latency_flows* */
};

/*
 * Add every agentxdp_* analysis family to `set` (see docs/metrics.md, "agent").
 * Label cardinality is bounded by max_pairs and top_qps. 0, -EINVAL or -ENOMEM.
 */
int agent_metrics_build(struct metric_set *set, const struct agent_metrics_input *in);

#endif
