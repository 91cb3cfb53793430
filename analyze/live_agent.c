/* live_agent.c: decode -> track -> localize -> metrics, driven by live records and a timer. */
#include "live_agent.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pcap/dlt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export_file.h"
#include "finding.h"
#include "localize.h"
#include "log.h"
#include "metrics_http.h"
#include "otlp_json.h"
#include "otlp_push.h"
#include "prom_text.h"
#include "qp_track.h"
#include "roce_decode.h"
#include "text_buf.h"
#include "topology.h"

#ifndef AGENTXDP_VERSION
#define AGENTXDP_VERSION "0.1.0"
#endif

struct live_agent {
	struct live_agent_opts o;
	struct roce_decode_opts dopts;
	struct qp_tracker *tracker;
	struct qp_event_sink sink;
	struct agent_latency latency;
	struct topology topo;
	bool have_topo;
	struct localize_config lcfg;
	struct metrics_http *http;
	struct otlp_pusher *otlp;
	uint64_t start_ns;
	uint64_t roce, other, malformed;
	int latency_failed;
	/* Findings of the previous tick, to print only what changed. */
	char last_findings[4096];
	char hostname[HOST_NAME_MAX + 1];
};

static void on_latency(void *ctx, const struct qp_latency_sample *s)
{
	struct live_agent *a = ctx;

	if (s->kind == QP_SAMPLE_ACK && agent_latency_observe(&a->latency, s->flow_id, s->latency_ns))
		a->latency_failed = 1;
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
	if (!a->o.service_name)
		a->o.service_name = "agentxdp-agent";
	if (gethostname(a->hostname, sizeof(a->hostname)))
		snprintf(a->hostname, sizeof(a->hostname), "unknown");
	roce_decode_opts_default(&a->dopts);
	agent_latency_init(&a->latency);
	localize_config_default(&a->lcfg);
	if (o->topology_csv) {
		if (topology_load(&a->topo, o->topology_csv, o->paths_csv, err, errlen))
			goto fail;
		a->have_topo = true;
	} else if (o->paths_csv) {
		snprintf(err, errlen, "--paths needs --topology (the links its paths name)");
		goto fail;
	}
	a->sink = (struct qp_event_sink){ .ctx = a, .latency = on_latency };
	qp_tracker_cfg_default(&cfg);
	cfg.window_ns = a->o.window_ns;
	cfg.sink = &a->sink;
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

int live_agent_frame(struct live_agent *a, const uint8_t *frame, uint32_t cap_len, uint32_t orig_len,
		     uint64_t ts_ns)
{
	struct roce_pkt pkt;
	int rc = roce_decode_frame(&a->dopts, DLT_EN10MB, frame, cap_len, orig_len, ts_ns, &pkt);

	if (!a->start_ns)
		a->start_ns = ts_ns;
	if (rc == ROCE_DECODE_OK) {
		a->roce++;
		return qp_tracker_add(a->tracker, &pkt, 0);
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

int live_agent_tick(struct live_agent *a, uint64_t now_ns, const struct agent_capture_stats *captures,
		    size_t n_captures)
{
	const struct flow_stats *flows = NULL;
	struct finding *findings = NULL;
	size_t n_findings = 0;
	struct metric_set set;
	struct text_buf out = { 0 };
	long n_flows;
	int err;

	n_flows = qp_tracker_snapshot(a->tracker, &flows);
	if (n_flows < 0)
		return (int)n_flows;
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
	};
	metric_set_init(&set, a->start_ns ? a->start_ns : now_ns, now_ns);
	err = agent_metrics_build(&set, &in);
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
	if (a->have_topo)
		topology_free(&a->topo);
	free(a);
}
