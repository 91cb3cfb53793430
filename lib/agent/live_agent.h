/*
 * live_agent.h: agent mode. The analysis core (decoder, per-QP tracker, localization) run on
 * live packets, exported every interval to Prometheus (/metrics, textfile) and OTLP.
 * The same code as agentxdp-analyze: only the packets' origin differs.
 */
#ifndef AGENTXDP_LIVE_AGENT_H
#define AGENTXDP_LIVE_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/export/agent_metrics.h"

struct live_agent_opts {
	const char *metrics_listen;	/* "127.0.0.1:9476"; NULL: no HTTP endpoint */
	const char *textfile_dir;	/* node_exporter textfile dir: DIR/agentxdp.prom; NULL: none */
	const char *otlp_url;		/* OTLP/HTTP collector base URL; NULL: none */
	const char *topology_csv;	/* links.csv, may be NULL */
	const char *paths_csv;		/* paths.csv, may be NULL */
	uint64_t window_ns;		/* per-flow time window of the series localization reads (default 1 s) */
	uint64_t history_ns;		/* windows localization looks back over (default 300 s): a
					   shift is judged against the recent past, and memory and
					   work per interval stay bounded however long the agent runs */
	size_t max_pairs, top_qps;	/* label cardinality bounds (defaults 200, 20) */
	/*
	 * The flow table is started afresh (as a restart would, counters included) when at
	 * least half of its flows, and LIVE_AGENT_FORGET_MIN_IDLE or more, have been idle for
	 * forget_ns (default 600 s), or when it holds max_flows (default 50000): queue pairs
	 * come and go with every job, and a months-long agent must not keep them all.
	 */
	uint64_t forget_ns;
	size_t max_flows;
	bool print_findings;		/* print findings on stderr as they appear and clear */
	const char *service_name;	/* OTLP service.name (default "agentxdp-agent") */
};

struct live_agent;

/* NULL with a one-line reason in err (port in use, bad topology file, no memory). */
struct live_agent *live_agent_new(const struct live_agent_opts *o, char *err, size_t errlen);
/*
 * One captured Ethernet frame; each mirror session that delivers frames (ERSPAN, GRE, VXLAN)
 * is a vantage of its own. 0, or -ENOMEM (the agent stops tracking new flows).
 */
int live_agent_frame(struct live_agent *a, const uint8_t *frame, uint32_t cap_len, uint32_t orig_len,
		     uint64_t ts_ns);
/*
 * Every interval: snapshot the flows, localize, rebuild the metrics and publish them
 * (HTTP, textfile, OTLP queue). `captures` may be NULL. Returns the number of findings.
 */
int live_agent_tick(struct live_agent *a, uint64_t now_ns, const struct agent_capture_stats *captures,
		    size_t n_captures);
/* Packets decoded as RoCE / not RoCE / malformed so far. */
void live_agent_counts(const struct live_agent *a, uint64_t *roce, uint64_t *other, uint64_t *malformed);
/* Flows in the table at the last tick, and how often the table was started afresh. */
void live_agent_flow_table(const struct live_agent *a, size_t *flows, uint64_t *resets);

#define LIVE_AGENT_FORGET_MIN_IDLE 256
/* Least severity of a finding that rests on latency against the flows' own past. */
#define LIVE_AGENT_SHIFT_MIN_RATIO 2.0
/* Stop the endpoint, drain the OTLP queue (up to 2 s), free. */
void live_agent_free(struct live_agent *a);

#endif
