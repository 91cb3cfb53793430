/* report_data.h: what the report reads from an analysis database, in memory. */
#ifndef AGENTXDP_REPORT_DATA_H
#define AGENTXDP_REPORT_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <sqlite3.h>
#include <stdint.h>

struct report_capture {
	char path[512];
	uint64_t frames, bytes, first_ns, last_ns;
	uint64_t roce_packets, other_packets, malformed, capture_dropped;
	int has_drop_counters, truncated;
	char stop_reason[256];
	char mirror_clock[256];		/* meta mirror_clock.capture<id> as stored ("" when none) */
	struct report_mirror_clock {	/* its figures, parsed; samples 0: none */
		uint64_t samples;	/* ERSPAN III timestamps fitted */
		int absolute;		/* 1: IEEE 1588 time; 0: a counter anchored on the first */
		double offset_us, drift_ppm, jitter_us;	/* collector - switch, slope, residual */
	} clock;
};

struct report_finding {
	int rank;
	char level[16];			/* "alert" or "notice" ("alert" in databases before levels) */
	char kind[32];
	char subject[128];
	char direction[128];
	double severity;
	char severity_text[200];
	double confidence;
	uint64_t onset_ns;
	uint32_t flows_hurt;
	char *evidence;			/* JSON text as stored */
};

struct report_flow {
	int64_t id;
	char src[64], dst[64];
	uint32_t dst_qpn;
	uint16_t udp_sport;
	char transport[8];
	int64_t peer_id;
	uint64_t packets, bytes, first_ns, last_ns;
	uint64_t retransmitted, naks_psn_seq, naks_other, rnr_naks, timeouts, cnps, ecn_ce;
	uint64_t ack_samples;
	double p50_us, p99_us, max_us;
	double badness;			/* ranking score: how bad this flow looks */
};

/* Per host pair (src -> dst), aggregated over its flows. */
struct report_pair {
	char src[64], dst[64];
	uint32_t flows;
	uint64_t packets, retransmitted, naks, cnps, ecn_ce, ack_samples;
	double p50_us, p99_us;		/* of the pair's flow p50/p99 (sample-weighted median of p99s) */
};

/* Per host (an address at either end of a flow), over the flows it sends or receives. */
struct report_host {
	char host[64];
	uint32_t flows;
	uint64_t sent_packets, received_packets;
	uint64_t retransmitted, naks, cnps, ecn_ce;	/* over its flows, either direction */
	uint64_t ack_samples;
	double p50_us;			/* sample-weighted mean of its flows' p50 */
	double p99_us;			/* worst p99 of its flows */
	double p50_vs_others;		/* p50_us / the median of the other hosts' p50 (0: no samples) */
	uint32_t findings;		/* findings whose subject or direction names it */
};

/* Per link of the topology (tables link and flow_link), its flows weighted by their share. */
struct report_link {
	char name[64], a[64], b[64];
	char kind[16];			/* "host", "leaf-spine", ... */
	int a_tier, b_tier;		/* 0 host, 1 leaf, 2 spine, ... (-1 unknown) */
	uint32_t flows;			/* flows that may cross it */
	double packets;			/* sum of share x packets */
	double loss;			/* share x (retransmissions + NAKs + timeouts) */
	double marks;			/* share x (ECN CE + CNPs) */
	double p50_us, p99_us;		/* share- and sample-weighted mean p50; worst p99 of flows with share 1 */
	double p50_vs_peers;		/* p50_us / the median p50 of the other links of its kind (0: none) */
	uint32_t alerts, notices;	/* findings naming it */
};

/*
 * One number of a finding's evidence, read out of its JSON by SQLite: a scalar (flow -1,
 * key like "rate" or "runner_up.subject") or a field of the FLOW-th entry of its "flows".
 */
struct report_evidence_item {
	int rank;			/* the finding's */
	int flow;			/* index in "flows", or -1 */
	char key[64];
	char value[160];
};

struct report_data {
	char db_path[512];
	int schema_version;
	char analyzer_version[64];
	struct report_capture *captures;
	size_t n_captures, cap_captures;
	struct report_finding *findings;
	size_t n_findings, cap_findings;
	size_t n_alerts;		/* findings of level "alert": the verdict */
	struct report_flow *flows;	/* sorted by badness, worst first */
	size_t n_flows, cap_flows;	/* how many are loaded (top-N) */
	uint64_t total_flows;		/* how many the database holds */
	struct report_pair *pairs;	/* sorted by p99, worst first */
	size_t n_pairs, cap_pairs;
	struct report_evidence_item *evidence;	/* by rank, then scalars, then flows in order */
	size_t n_evidence, cap_evidence;
	struct report_host *hosts;	/* findings naming it first, then worst p99 */
	size_t n_hosts, cap_hosts;
	struct report_link *links;	/* topology order (empty without --topology) */
	size_t n_links, cap_links;
	uint64_t window_ns;		/* meta window_ns: the analysis' time window (0: not stored) */
	/* meta latency_flows, latency_flows_judged, latency_min_samples: how many flows the
	 * latency verdict covers (0 flows: not stored, an older database) */
	uint64_t latency_flows, latency_judged, latency_min_samples;
	uint64_t total_packets, total_bytes, total_retransmitted, total_naks, total_rnr,
		total_timeouts, total_cnps, total_ecn_ce, total_malformed;
	uint64_t first_ns, last_ns;
	uint64_t healthy_median_p99_us_x1000; /* population median of flow p99 (for contrast) */
	unsigned int query_timeout_s;	/* what the load was given; the charts use it too */
};

/* Every query of a report stops after this long (seconds) unless told otherwise. */
#define REPORT_QUERY_TIMEOUT_S 120

/*
 * Open the database read-only and load the summary; its statements are interrupted after
 * TIMEOUT_S seconds (0: REPORT_QUERY_TIMEOUT_S). 0, or -1 with a one-line message in err.
 */
int report_data_load(const char *db_path, size_t top_n, unsigned int timeout_s, struct report_data *out,
		     char *err, size_t errlen);

/*
 * Open DB_PATH read-only with a deadline TIMEOUT_S seconds from now (0: the default) after
 * which any statement fails with SQLITE_INTERRUPT (sqlite3_progress_handler): a hostile
 * database (a recursive view) cannot hang the report. 0, or -1 with one line in err.
 */
int report_db_open(const char *db_path, unsigned int timeout_s, sqlite3 **db, char *err, size_t errlen);
void report_data_free(struct report_data *d);

/* Whether a finding's SUBJECT names LINK: the subject itself or a member of a set "a | b". */
bool report_names_link(const char *subject, const char *link);
/* How the analysis read its traces: 0 fine, else a sentence of what was found instead. */
const char *report_decode_problem(const struct report_data *d, char *buf, size_t len);

/* Whether TEXT names HOST as a whole address ("10.0.0.1" is not in "10.0.0.12-leaf0"). */
bool report_names_host(const char *text, const char *host);

#endif
