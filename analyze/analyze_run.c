/* analyze_run.c: agentxdp-analyze's main mode: traces -> decoder -> qp_track -> localize -> SQLite/JSON/CSV/text. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/export/agent_metrics.h"
#include "analyze/analyze_opts.h"
#include "lib/export/export_file.h"
#include "lib/export/export.h"
#include "lib/localize/localize.h"
#include "lib/util/log.h"
#include "lib/export/prom_text.h"
#include "lib/track/qp_track.h"
#include "lib/report/report_write.h"
#include "lib/decode/roce_decode.h"
#include "lib/store/store_sqlite.h"
#include "lib/localize/topology.h"
#include "lib/trace/trace_reader.h"


#define N_MALFORMED (1 - ROCE_DECODE_STATUS_MIN)

struct trace_counts {
	uint64_t roce, other;
	uint64_t malformed[N_MALFORMED]; /* by -status */
};

/* Per capture: flows, unpaired RC flows, and whether only one direction of RC traffic is there. */
static void capture_flow_counts(struct qp_tracker *t, const struct flow_stats *flows, size_t n,
				struct store_capture *caps, int n_caps)
{
	uint64_t *req = calloc((size_t)n_caps, sizeof(*req)), *resp = calloc((size_t)n_caps, sizeof(*resp));

	for (size_t i = 0; i < n; i++) {
		const struct flow_stats *f = &flows[i];

		if ((int)f->vantage >= n_caps)
			continue;
		caps[f->vantage].flows++;
		if ((f->transport == ROCE_TR_RC || f->transport == ROCE_TR_XRC) && !f->peer_id)
			caps[f->vantage].unpaired_flows++;
		if (req && f->carries_requests)
			req[f->vantage]++;
		if (resp && f->carries_responses)
			resp[f->vantage]++;
	}
	for (int v = 0; req && resp && v < n_caps; v++)
		caps[v].one_direction = (req[v] > 0) != (resp[v] > 0);
	free(req);
	free(resp);
}

static int run_localize(const struct analyze_opts *opts, const struct flow_stats *flows, size_t n,
			struct finding **findings, size_t *n_findings)
{
	struct localize_config cfg;
	struct topology topo;
	char err[512];
	int rc;

	memset(&topo, 0, sizeof(topo));
	localize_config_default(&cfg);
	if (opts->topology_csv) {
		if (topology_load(&topo, opts->topology_csv, opts->paths_csv, err, sizeof(err))) {
			pr_err("%s\n", err);
			topology_free(&topo);
			return -1;
		}
	} else if (opts->paths_csv) {
		pr_err("--paths needs --topology (the links its paths name)\n");
		return -1;
	}
	rc = localize(flows, n, opts->topology_csv ? &topo : NULL, &cfg, findings, n_findings);
	if (opts->topology_csv)
		topology_free(&topo);
	if (rc) {
		pr_err("localization failed: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}

static void store_run_meta(struct store *st, const struct analyze_opts *opts, double seconds)
{
	char buf[64];

	store_meta(st, "schema", "agentxdp-analyze/1");
	snprintf(buf, sizeof(buf), "%d", STORE_SCHEMA_VERSION);
	store_meta(st, "schema_version", buf);
	store_meta(st, "tool", "agentxdp-analyze " AGENTXDP_VERSION);
	snprintf(buf, sizeof(buf), "%" PRIu64, opts->window_ns);
	store_meta(st, "window_ns", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, (uint64_t)time(NULL) * (uint64_t)1000000000u);
	store_meta(st, "created_ns", buf);
	snprintf(buf, sizeof(buf), "%.3f", seconds);
	store_meta(st, "analysis_seconds", buf);
	if (opts->topology_csv)
		store_meta(st, "topology", opts->topology_csv);
	if (opts->paths_csv)
		store_meta(st, "paths", opts->paths_csv);
}

static int mkdir_p_dir(const char *dir)
{
	return mkdir(dir, 0750) && errno != EEXIST ? -1 : 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --prom: the store's sink and the latency histograms both see every sample. */
struct tee_sink {
	const struct qp_event_sink *inner;	/* the store's, or NULL */
	struct agent_latency *latency;
	int failed;
};

static void tee_latency(void *ctx, const struct qp_latency_sample *s)
{
	struct tee_sink *tee = ctx;

	if (s->kind == QP_SAMPLE_ACK && agent_latency_observe(tee->latency, s->flow_id, s->latency_ns))
		tee->failed = 1;
	if (tee->inner && tee->inner->latency)
		tee->inner->latency(tee->inner->ctx, s);
}
#define TEE_FORWARD(name, type)                                                  \
	static void tee_##name(void *ctx, const type *e)                         \
	{                                                                        \
		struct tee_sink *tee = ctx;                                      \
		if (tee->inner && tee->inner->name)                              \
			tee->inner->name(tee->inner->ctx, e);                    \
	}
TEE_FORWARD(retransmission, struct qp_retx_event)
TEE_FORWARD(nak, struct qp_nak_event)
TEE_FORWARD(cnp, struct qp_cnp_event)
#undef TEE_FORWARD
static void tee_window(void *ctx, uint64_t flow_id, const struct flow_window *w)
{
	struct tee_sink *tee = ctx;

	if (tee->inner && tee->inner->window)
		tee->inner->window(tee->inner->ctx, flow_id, w);
}

/* Write the Prometheus text exposition of this analysis to PATH (atomically, 0640). */
static int write_prom_file(const char *path, const struct flow_stats *flows, size_t n_flows,
			   const struct finding *findings, size_t n_findings, struct qp_tracker *t,
			   const struct agent_latency *latency, uint64_t malformed)
{
	struct metric_set set;
	struct text_buf out = { 0 };
	struct agent_metrics_input in = {
		.flows = flows,
		.n_flows = n_flows,
		.findings = findings,
		.n_findings = n_findings,
		.totals = qp_tracker_totals(t),
		.latency = latency,
		.malformed_packets = malformed,
	};
	const struct qp_tracker_totals *tot = qp_tracker_totals(t);
	int err;

	/* A trace's metrics are stamped with the trace's own time, not the clock's. */
	metric_set_init(&set, tot->first_ns, tot->last_ns ? tot->last_ns : tot->first_ns);
	err = agent_metrics_build(&set, &in);
	if (!err)
		err = prom_text_write(&set, &out);
	if (!err) {
		mode_t old = umask(027);
		err = write_file_atomic(path, out.data ? out.data : "", out.len);
		umask(old);
	}
	if (err)
		pr_err("--prom %s: %s\n", path, strerror(-err));
	text_buf_free(&out);
	metric_set_free(&set);
	return err ? -1 : 0;
}

int analyze_traces(const struct analyze_opts *opts)
{
	struct roce_decode_opts dopts;
	struct trace_reader *tr = NULL;
	struct qp_tracker_cfg cfg;
	struct qp_tracker *t = NULL;
	struct store *st = NULL;
	struct trace_counts *counts = NULL;
	struct store_capture *caps = NULL;
	struct finding *findings = NULL;
	size_t n_findings = 0;
	const struct flow_stats *flows = NULL;
	struct trace_frame frame;
	struct roce_pkt pkt;
	char err[512], *tmp_db = NULL;
	const char *db_path = opts->db_path;
	int status = 0, rc, n_traces;
	long n_flows;
	double t_start = now_s();

	struct agent_latency latency;
	struct tee_sink tee = { 0 };
	struct qp_event_sink tee_sink_ops = {
		.ctx = &tee,
		.latency = tee_latency,
		.retransmission = tee_retransmission,
		.nak = tee_nak,
		.cnp = tee_cnp,
		.window = tee_window,
	};
	char *report_db = NULL;
	uint64_t malformed_total = 0;

	agent_latency_init(&latency);
	roce_decode_opts_default(&dopts);
	for (int i = 0; i < opts->n_extra_ports && i + 1 < (int)(sizeof(dopts.udp_ports) / sizeof(dopts.udp_ports[0])); i++)
		dopts.udp_ports[i + 1] = opts->extra_ports[i];

	if (trace_reader_open(&tr, opts->traces, opts->n_traces, err, sizeof(err))) {
		pr_err("%s\n", err);
		return 1;
	}
	n_traces = trace_reader_count(tr);
	counts = calloc((size_t)n_traces, sizeof(*counts));
	caps = calloc((size_t)n_traces, sizeof(*caps));
	if (!counts || !caps) {
		pr_err("%s\n", strerror(ENOMEM));
		status = 1;
		goto out;
	}

	/* --report without -o: the report's database lives in the report folder. */
	if (!db_path && opts->report_dir) {
		size_t n = strlen(opts->report_dir) + 32;

		if (mkdir_p_dir(opts->report_dir)) {
			pr_err("--report %s: %s\n", opts->report_dir, strerror(errno));
			status = 1;
			goto out;
		}
		report_db = malloc(n);
		if (!report_db) {
			status = 1;
			goto out;
		}
		snprintf(report_db, n, "%s/analysis.db", opts->report_dir);
		db_path = report_db;
	}
	/* --csv without -o: build the database beside the CSV files, then drop it. */
	if (!db_path && opts->csv_dir) {
		size_t n = strlen(opts->csv_dir) + 64;

		if (mkdir_p_dir(opts->csv_dir)) {
			pr_err("--csv %s: %s\n", opts->csv_dir, strerror(errno));
			status = 1;
			goto out;
		}
		tmp_db = malloc(n);
		if (!tmp_db) {
			status = 1;
			goto out;
		}
		snprintf(tmp_db, n, "%s/.agentxdp-analyze.%d.db", opts->csv_dir, (int)getpid());
		db_path = tmp_db;
	}

	qp_tracker_cfg_default(&cfg);
	cfg.window_ns = opts->window_ns;
	cfg.dup_window_ns = opts->dedup_ns;
	if (db_path) {
		struct store_opts sopts = { .max_samples_per_window = opts->max_samples_per_window };

		if (store_open(&st, db_path, &sopts, err, sizeof(err))) {
			pr_err("%s\n", err);
			status = 1;
			goto out;
		}
		store_set_window(st, opts->window_ns);
		cfg.sink = store_sink(st);
	}
	if (opts->prom_path) {
		tee.inner = cfg.sink;
		tee.latency = &latency;
		cfg.sink = &tee_sink_ops;
	}
	t = qp_tracker_new(&cfg);
	if (!t) {
		pr_err("%s\n", strerror(ENOMEM));
		status = 1;
		goto out;
	}

	while ((rc = trace_reader_next(tr, &frame)) != 0) {
		if (rc < 0) {
			/* Keep what was read: the other inputs still deliver their frames. */
			pr_err("%s\n", trace_reader_error(tr));
			status = 1;
			continue;
		}
		rc = roce_decode_frame(&dopts, frame.linktype, frame.data, frame.caplen, frame.origlen, frame.ts_ns,
				       &pkt);
		if (rc == ROCE_DECODE_OK) {
			counts[frame.trace_index].roce++;
			if (qp_tracker_add(t, &pkt, (uint32_t)frame.trace_index)) {
				pr_err("out of memory tracking %" PRIu64 " flows\n", qp_tracker_totals(t)->flows);
				status = 1;
				break;
			}
		} else if (rc > 0) {
			counts[frame.trace_index].other++;
		} else {
			counts[frame.trace_index].malformed[-rc]++;
			pr_debug("frame %" PRIu64 " of %s: malformed (%s)\n", frame.frame_number,
				 trace_reader_path(tr, frame.trace_index), roce_decode_status_name(rc));
		}
		if (st && store_failed(st))
			break;
	}
	qp_tracker_finish(t);
	n_flows = qp_tracker_snapshot(t, &flows);
	if (n_flows < 0) {
		pr_err("%s\n", strerror(ENOMEM));
		status = 1;
		goto out;
	}

	for (int i = 0; i < n_traces; i++) {
		const struct trace_health *h = trace_reader_health(tr, i);

		caps[i].path = trace_reader_path(tr, i);
		caps[i].health = h;
		caps[i].roce_packets = counts[i].roce;
		caps[i].other_packets = counts[i].other;
		for (int m = 1; m < N_MALFORMED; m++)
			caps[i].malformed_packets += counts[i].malformed[m];
		malformed_total += caps[i].malformed_packets;
		if (h->has_drop_counters && h->capture_dropped)
			pr_warn("%s: the capture itself dropped %" PRIu64 " packets\n", caps[i].path, h->capture_dropped);
		if (caps[i].malformed_packets)
			pr_warn("%s: %" PRIu64 " malformed packets (see the malformed table)\n", caps[i].path,
				caps[i].malformed_packets);
	}
	capture_flow_counts(t, flows, (size_t)n_flows, caps, n_traces);
	for (int i = 0; i < n_traces; i++)
		if (caps[i].one_direction)
			pr_warn("%s: holds only one direction of its RC traffic (requests or responses)\n",
				caps[i].path);

	if (run_localize(opts, flows, (size_t)n_flows, &findings, &n_findings)) {
		status = 1;
		n_findings = 0;
		findings = NULL;
	}

	if (st) {
		store_run_meta(st, opts, now_s() - t_start);
		store_captures(st, caps, (size_t)n_traces);
		for (int i = 0; i < n_traces; i++)
			for (int m = 1; m < N_MALFORMED; m++)
				if (counts[i].malformed[m])
					store_malformed(st, i, roce_decode_status_name(-m), counts[i].malformed[m]);
		store_flows(st, flows, (size_t)n_flows);
		store_findings(st, findings, n_findings);
		rc = store_commit(st, err, sizeof(err));
		st = NULL;
		if (rc) {
			pr_err("%s\n", err);
			status = 1;
			db_path = NULL;
		} else if (opts->db_path) {
			pr_info("%s: %ld flows, %" PRIu64 " packets, %zu findings\n", opts->db_path, n_flows,
				qp_tracker_totals(t)->packets, n_findings);
		}
	}
	if (opts->prom_path) {
		if (tee.failed) {
			pr_err("--prom: out of memory for the latency histograms\n");
			status = 1;
		} else if (write_prom_file(opts->prom_path, flows, (size_t)n_flows, findings, n_findings, t,
					   &latency, malformed_total)) {
			status = 1;
		}
	}
	if (opts->report_dir && db_path) {
		struct report_write_opts ro = { .top_n = 10 };

		if (report_write_from_db(db_path, opts->report_dir, &ro))
			status = 1;
		else
			pr_info("report: %s/index.html\n", opts->report_dir);
	}
	if (opts->csv_dir && db_path) {
		if (export_csv(db_path, opts->csv_dir, err, sizeof(err))) {
			pr_err("%s\n", err);
			status = 1;
		}
	}
	{
		struct analysis_summary sum = {
			.captures = caps,
			.n_captures = (size_t)n_traces,
			.flows = flows,
			.n_flows = (size_t)n_flows,
			.totals = qp_tracker_totals(t),
			.findings = findings,
			.n_findings = n_findings,
			.window_ns = opts->window_ns,
			.db_path = db_path && (opts->db_path || report_db) ? db_path : NULL,
		};

		if (opts->json) {
			if (export_json(stdout, &sum) || fflush(stdout)) {
				pr_err("writing the JSON summary: %s\n", strerror(errno));
				status = 1;
			}
		} else if (!opts->db_path && !opts->csv_dir && !opts->report_dir && !opts->prom_path) {
			if (export_text(stdout, &sum, 10) || fflush(stdout)) {
				pr_err("writing the summary: %s\n", strerror(errno));
				status = 1;
			}
		}
	}
out:
	if (st)
		store_abort(st);
	if (tmp_db) {
		unlink(tmp_db);
		free(tmp_db);
	}
	findings_free(findings, n_findings);
	agent_latency_free(&latency);
	free(report_db);
	qp_tracker_free(t);
	free(counts);
	free(caps);
	trace_reader_close(tr);
	return status;
}
