/* live_agent.c: decode -> track -> localize -> metrics, driven by live records and a timer. */
#include "lib/agent/live_agent.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pcap/dlt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/export/export_file.h"
#include "lib/localize/finding.h"
#include "lib/localize/localize.h"
#include "lib/util/log.h"
#include "lib/agent/metrics_http.h"
#include "lib/export/otlp_json.h"
#include "lib/export/otlp_push.h"
#include "lib/export/prom_text.h"
#include "lib/track/qp_track.h"
#include "lib/decode/roce_decode.h"
#include "lib/util/text_buf.h"
#include "lib/util/util.h"
#include "lib/localize/topology.h"


/*
 * The last windows of one flow (a ring), for localization. The tracker itself keeps none:
 * a live agent runs for months, and a shift must be judged against the recent past.
 */
struct window_ring {
	struct flow_window *w;		/* cap entries, allocated on first use */
	size_t head, n;			/* oldest at head */
	uint64_t closed;		/* windows this flow closed so far */
};

/*
 * A flow's first windows are skipped: the first starts mid-window, and while a bulk flow's
 * queues fill its latency climbs from the idle RTT; a shift judged against those windows
 * was most of the agent's false alarms on the testbed (bench_detection.sh: 2 of 60 healthy
 * polls with one window skipped, 0 of 60 with three).
 */
#define AGENT_WARMUP_WINDOWS 3
#define AGENT_MIN_HISTORY_WINDOWS 8

/* Sources kept apart; further ones share vantage 0 (a warning says so, once). */
#define AGENT_MAX_SOURCES 64

struct live_agent {
	struct live_agent_opts o;
	struct roce_decode_opts dopts;
	struct qp_tracker *tracker;
	struct qp_tracker_cfg tracker_cfg;
	size_t n_flows;			/* at the last tick */
	uint64_t flow_resets;		/* the flow table started afresh (forget_ns, max_flows) */
	struct qp_event_sink sink;
	struct agent_latency latency;
	struct topology topo;
	bool have_topo;
	struct localize_config lcfg;
	struct metrics_http *http;
	struct otlp_pusher *otlp;
	uint64_t start_ns;
	uint64_t roce, other, malformed;
	struct roce_source sources[AGENT_MAX_SOURCES];	/* each a vantage, as in agentxdp-analyze */
	uint32_t n_sources, last_source;	/* last_source: the previous packet's */
	uint64_t sources_merged;	/* packets of sources past AGENT_MAX_SOURCES */
	uint64_t oom;			/* samples or windows not kept (no memory) */
	bool oom_warned;
	struct window_ring *rings;	/* indexed by flow id */
	size_t n_rings, history_windows;
	struct flow_stats *view;	/* the snapshot with each flow's recent windows */
	size_t cap_view;
	struct flow_window *view_windows;
	size_t cap_view_windows;
	/* Findings of the previous tick, to print only what changed. */
	char last_findings[4096];
	char hostname[HOST_NAME_MAX + 1];
};

static void on_latency(void *ctx, const struct qp_latency_sample *s)
{
	struct live_agent *a = ctx;

	if (s->kind == QP_SAMPLE_ACK && agent_latency_observe(&a->latency, s->flow_id, s->latency_ns))
		a->oom++;
}

static void on_window(void *ctx, uint64_t flow_id, const struct flow_window *w)
{
	struct live_agent *a = ctx;
	struct window_ring *r;

	if (flow_id >= a->n_rings) {
		size_t n = a->n_rings;

		if (util_ensure_mem((void **)&a->rings, &n, sizeof(*a->rings), flow_id + 1)) {
			a->oom++;
			return;
		}
		memset(a->rings + a->n_rings, 0, (n - a->n_rings) * sizeof(*a->rings));
		a->n_rings = n;
	}
	r = &a->rings[flow_id];
	if (++r->closed <= AGENT_WARMUP_WINDOWS)
		return;
	if (!r->w) {
		r->w = malloc(a->history_windows * sizeof(*r->w));
		if (!r->w) {
			a->oom++;
			return;
		}
	}
	if (r->n < a->history_windows) {
		r->w[(r->head + r->n) % a->history_windows] = *w;
		r->n++;
	} else {
		r->w[r->head] = *w;
		r->head = (r->head + 1) % a->history_windows;
	}
}

/*
 * The snapshot as localization sees it: each flow with its recent windows, oldest first.
 * Points into agent memory valid until the next call. NULL on allocation failure.
 */
static const struct flow_stats *recent_view(struct live_agent *a, const struct flow_stats *flows, size_t n)
{
	size_t total = 0, off = 0;

	for (size_t i = 0; i < n; i++)
		if (flows[i].id < a->n_rings)
			total += a->rings[flows[i].id].n;
	if (util_ensure_mem((void **)&a->view, &a->cap_view, sizeof(*a->view), n) ||
	    util_ensure_mem((void **)&a->view_windows, &a->cap_view_windows, sizeof(*a->view_windows), total))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct window_ring *r = flows[i].id < a->n_rings ? &a->rings[flows[i].id] : NULL;
		a->view[i] = flows[i];
		a->view[i].windows = a->view_windows ? a->view_windows + off : NULL;
		a->view[i].n_windows = r ? r->n : 0;
		for (size_t k = 0; r && k < r->n; k++)
			a->view_windows[off++] = r->w[(r->head + k) % a->history_windows];
	}
	return a->view;
}

struct live_agent *live_agent_new(const struct live_agent_opts *o, char *err, size_t errlen)
{
	struct live_agent *a = calloc(1, sizeof(*a));
	struct qp_tracker_cfg cfg;

	if (!a) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return NULL;
	}
	a->o = *o;
	if (!a->o.window_ns)
		a->o.window_ns = 1000000000ull;
	if (!a->o.history_ns)
		a->o.history_ns = 300000000000ull;
	a->history_windows = a->o.history_ns / a->o.window_ns;
	if (a->history_windows < AGENT_MIN_HISTORY_WINDOWS)
		a->history_windows = AGENT_MIN_HISTORY_WINDOWS;
	if (!a->o.service_name)
		a->o.service_name = "agentxdp-agent";
	if (!a->o.forget_ns)
		a->o.forget_ns = 600000000000ull;
	if (!a->o.max_flows)
		a->o.max_flows = 50000;
	if (gethostname(a->hostname, sizeof(a->hostname)))
		snprintf(a->hostname, sizeof(a->hostname), "unknown");
	roce_decode_opts_default(&a->dopts);
	agent_latency_init(&a->latency);
	localize_config_default(&a->lcfg);
	/*
	 * A finding here pages someone, so a latency that rose against its own past must have
	 * doubled (offline the analyzer reports from 1.05x, ranked by its evidence). A host's
	 * RTT drifts by 10-30% over minutes when its CPUs get busier (bench_detection.sh with a
	 * 30 s baseline: 14 of 180 healthy polls at 1.05x); the testbed's 20 Mbit/s bucket, or
	 * any link that really degrades, moves it by far more. Slow against peers stays 1.2x.
	 */
	a->lcfg.shift_min_ratio = LIVE_AGENT_SHIFT_MIN_RATIO;
	if (o->topology_csv) {
		if (topology_load(&a->topo, o->topology_csv, o->paths_csv, err, errlen))
			goto fail;
		a->have_topo = true;
	} else if (o->paths_csv) {
		snprintf(err, errlen, "--paths needs --topology (the links its paths name)");
		goto fail;
	}
	a->sink = (struct qp_event_sink){ .ctx = a, .latency = on_latency, .window = on_window };
	qp_tracker_cfg_default(&cfg);
	cfg.window_ns = a->o.window_ns;
	cfg.max_windows = 0; /* the agent keeps its own recent windows (on_window) */
	cfg.sink = &a->sink;
	a->tracker_cfg = cfg;
	a->tracker = qp_tracker_new(&cfg);
	if (!a->tracker) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto fail;
	}
	if (o->metrics_listen) {
		a->http = metrics_http_start(o->metrics_listen, err, errlen);
		if (!a->http)
			goto fail;
	}
	if (o->otlp_url) {
		struct otlp_push_opts po = { .url = o->otlp_url };
		a->otlp = otlp_push_start(&po);
		if (!a->otlp) {
			snprintf(err, errlen, "--otlp %s: cannot start the sender: %s", o->otlp_url, strerror(errno));
			goto fail;
		}
	}
	return a;
fail:
	live_agent_free(a);
	return NULL;
}

/* The vantage of a decoded packet: its source's index, in the order sources were met. */
static uint32_t source_vantage(struct live_agent *a, const struct roce_pkt *p)
{
	char ip[64];

	/* Untunnelled traffic, or a run of one session's copies: one compare. */
	if (a->n_sources && roce_source_same(&a->sources[a->last_source], p))
		return a->last_source;
	for (uint32_t i = 0; i < a->n_sources; i++)
		if (roce_source_same(&a->sources[i], p))
			return a->last_source = i;
	if (a->n_sources == AGENT_MAX_SOURCES) {
		if (!a->sources_merged++)
			pr_warn("more than %d mirror sessions: the further ones share the first one's vantage\n",
				AGENT_MAX_SOURCES);
		return 0;
	}
	roce_source_of(p, &a->sources[a->n_sources]);
	if (p->encap != ROCE_ENCAP_NONE)
		pr_info("vantage %u: %s session %u from %s\n", a->n_sources, roce_encap_name(p->encap),
			p->encap_id, addr_str(p->encap_src_ip, ip, sizeof(ip)));
	return a->last_source = a->n_sources++;
}

int live_agent_frame(struct live_agent *a, const uint8_t *frame, uint32_t cap_len, uint32_t orig_len,
		     uint64_t ts_ns)
{
	struct roce_pkt pkt;
	int rc = roce_decode_frame(&a->dopts, DLT_EN10MB, frame, cap_len, orig_len, ts_ns, &pkt);

	if (!a->start_ns)
		a->start_ns = ts_ns;
	if (rc == ROCE_DECODE_OK) {
		a->roce++;
		return qp_tracker_add(a->tracker, &pkt, source_vantage(a, &pkt));
	}
	if (rc > 0)
		a->other++;
	else
		a->malformed++;
	return 0;
}

void live_agent_counts(const struct live_agent *a, uint64_t *roce, uint64_t *other, uint64_t *malformed)
{
	*roce = a->roce;
	*other = a->other;
	*malformed = a->malformed;
}

void live_agent_flow_table(const struct live_agent *a, size_t *flows, uint64_t *resets)
{
	*flows = a->n_flows;
	*resets = a->flow_resets;
}

/* Whether the flow table should start afresh: mostly idle flows, or too many of them. */
static bool flow_table_stale(const struct live_agent *a, const struct flow_stats *flows, size_t n,
			     uint64_t now_ns, size_t *idle)
{
	*idle = 0;
	for (size_t i = 0; i < n; i++)
		*idle += now_ns > flows[i].last_ns && now_ns - flows[i].last_ns >= a->o.forget_ns;
	return n >= a->o.max_flows || (*idle >= LIVE_AGENT_FORGET_MIN_IDLE && 2 * *idle >= n);
}

static void free_rings(struct live_agent *a)
{
	for (size_t i = 0; i < a->n_rings; i++)
		free(a->rings[i].w);
	free(a->rings);
	a->rings = NULL;
	a->n_rings = 0;
}

/*
 * Start the flow table afresh, as a restart would: flows, their windows and their latency
 * histograms go (their counters restart, which Prometheus' rate() reads as a reset); the
 * capture's and the decoder's counts stay. The active flows come back with their next
 * packets. A new tracker first, so that running out of memory keeps the old one.
 */
static int forget_flows(struct live_agent *a)
{
	struct qp_tracker *fresh = qp_tracker_new(&a->tracker_cfg);

	if (!fresh)
		return -ENOMEM;
	qp_tracker_free(a->tracker);
	a->tracker = fresh;
	agent_latency_free(&a->latency);
	agent_latency_init(&a->latency);
	free_rings(a);
	a->flow_resets++;
	return 0;
}

static int add_flow_table_health(struct metric_set *set, const struct live_agent *a)
{
	struct metric_family *f = metric_family_get(
		set, "agentxdp_flow_table_resets_total", METRIC_COUNTER,
		"Times the flow table started afresh (mostly idle flows, or --max-flows reached): "
		"per-pair counters and histograms restart then.",
		"{reset}");

	return f ? metric_add_int(f, NULL, 0, a->flow_resets, 0) : -errno;
}

/* Print findings when they change: a person watching the terminal sees them as they are made. */
static void print_findings(struct live_agent *a, const struct finding *f, size_t n)
{
	char now[4096] = "";
	size_t off = 0;

	for (size_t i = 0; i < n && off < sizeof(now); i++)
		off += (size_t)snprintf(now + off, sizeof(now) - off, "%s %s %s|", finding_kind_name(f[i].kind),
					f[i].subject, f[i].direction);
	if (!strcmp(now, a->last_findings))
		return;
	snprintf(a->last_findings, sizeof(a->last_findings), "%s", now);
	if (!n) {
		pr_info("findings: none (no slow or lossy link)\n");
		return;
	}
	for (size_t i = 0; i < n; i++)
		pr_info("finding %d: %s %s%s%s: %s, confidence %.2f\n", f[i].rank, finding_kind_name(f[i].kind),
			f[i].subject, f[i].direction[0] ? " " : "", f[i].direction, f[i].severity_text,
			f[i].confidence);
}

/* The OTLP sender's own health, in both exports (the name agentxdp-nicstat uses too). */
static int add_otlp_health(struct metric_set *set, struct otlp_pusher *otlp)
{
	static const char *const results[] = { "sent", "failed", "dropped" };
	struct metric_family *f;
	struct otlp_push_stats st;
	int err = 0;

	otlp_push_get_stats(otlp, &st);
	f = metric_family_get(set, "agentxdp_otlp_bodies_total", METRIC_COUNTER,
			      "OTLP export bodies by result (dropped: the queue was full, the collector too slow).",
			      "{body}");
	if (!f)
		return -errno;
	const uint64_t v[] = { st.sent, st.failed, st.dropped };
	for (int i = 0; i < 3 && !err; i++) {
		struct metric_label l = { "result", results[i] };
		err = metric_add_int(f, &l, 1, v[i], 0);
	}
	return err;
}

int live_agent_tick(struct live_agent *a, uint64_t now_ns, const struct agent_capture_stats *captures,
		    size_t n_captures)
{
	const struct flow_stats *flows = NULL;
	struct finding *findings = NULL;
	size_t n_findings = 0;
	struct localize_coverage coverage;
	struct metric_set set;
	struct text_buf out = { 0 };
	long n_flows;
	int err;

	n_flows = qp_tracker_snapshot(a->tracker, &flows);
	if (n_flows < 0)
		return (int)n_flows;
	size_t idle;
	if (n_flows && flow_table_stale(a, flows, (size_t)n_flows, now_ns, &idle)) {
		if (forget_flows(a))
			pr_warn("cannot start the flow table afresh: %s\n", strerror(ENOMEM));
		else {
			pr_info("flow table started afresh: %ld flows, %zu idle for %" PRIu64 " s or more\n",
				n_flows, idle, (uint64_t)(a->o.forget_ns / 1000000000ull));
			n_flows = 0;
			flows = NULL;
		}
	}
	a->n_flows = (size_t)n_flows;
	if (n_flows) {
		flows = recent_view(a, flows, (size_t)n_flows);
		if (!flows)
			return -ENOMEM;
	}
	localize_coverage(flows, (size_t)n_flows, &a->lcfg, &coverage);
	err = localize(flows, (size_t)n_flows, a->have_topo ? &a->topo : NULL, &a->lcfg, &findings, &n_findings);
	if (err) {
		pr_warn("localization failed: %s\n", strerror(-err));
		findings = NULL;
		n_findings = 0;
	}
	if (a->o.print_findings)
		print_findings(a, findings, n_findings);

	struct agent_metrics_input in = {
		.flows = flows,
		.n_flows = (size_t)n_flows,
		.findings = findings,
		.n_findings = n_findings,
		.totals = qp_tracker_totals(a->tracker),
		.latency = &a->latency,
		.captures = captures,
		.n_captures = n_captures,
		.malformed_packets = a->malformed,
		.max_pairs = a->o.max_pairs,
		.top_qps = a->o.top_qps,
		.coverage = &coverage,
	};
	metric_set_init(&set, a->start_ns ? a->start_ns : now_ns, now_ns);
	err = agent_metrics_build(&set, &in);
	if (!err)
		err = add_flow_table_health(&set, a);
	if (!err && a->otlp)
		err = add_otlp_health(&set, a->otlp);
	if (!err && (a->http || a->o.textfile_dir))
		err = prom_text_write(&set, &out);
	if (!err && a->http)
		err = metrics_http_publish(a->http, out.data ? out.data : "", out.len);
	if (!err && a->o.textfile_dir) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/agentxdp.prom", a->o.textfile_dir);
		int werr = write_file_atomic(path, out.data ? out.data : "", out.len);
		if (werr)
			pr_warn("--textfile %s: %s\n", path, strerror(-werr));
	}
	if (!err && a->otlp) {
		struct metric_label attrs[] = { { "service.name", a->o.service_name }, { "host.name", a->hostname } };
		struct otlp_resource res = { attrs, 2, "agentxdp", AGENTXDP_VERSION };
		text_buf_reset(&out);
		err = otlp_json_write(&set, &res, &out);
		/* Never blocks: a slow collector fills the bounded queue, which drops and counts. */
		if (!err)
			err = otlp_push_enqueue(a->otlp, out.data ? out.data : "", out.len);
	}
	if (err)
		pr_warn("metrics: %s\n", strerror(-err));
	if (a->oom && !a->oom_warned) {
		pr_warn("analysis: out of memory: %" PRIu64 " latency samples or windows not kept\n", a->oom);
		a->oom_warned = true;
	}
	text_buf_free(&out);
	metric_set_free(&set);
	findings_free(findings, n_findings);
	return (int)n_findings;
}

void live_agent_free(struct live_agent *a)
{
	if (!a)
		return;
	if (a->otlp) {
		struct otlp_push_stats st;
		otlp_push_stop(a->otlp, 2000, &st);
		if (st.failed || st.dropped)
			pr_warn("OTLP: %" PRIu64 " bodies sent, %" PRIu64 " failed, %" PRIu64 " dropped (queue full)\n",
				st.sent, st.failed, st.dropped);
	}
	metrics_http_stop(a->http);
	qp_tracker_free(a->tracker);
	agent_latency_free(&a->latency);
	free_rings(a);
	free(a->view);
	free(a->view_windows);
	if (a->have_topo)
		topology_free(&a->topo);
	free(a);
}
