/* analyze_run.c: agentxdp-analyze's main mode: traces -> decoder -> qp_track -> localize -> SQLite/JSON/CSV/text. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/export/agent_metrics.h"
#include "analyze/analyze_opts.h"
#include "analyze/analyze_read.h"
#include "analyze/frame_census.h"
#include "analyze/mirror_vantage.h"
#include "lib/export/export_file.h"
#include "lib/export/export.h"
#include "lib/localize/localize.h"
#include "lib/util/log.h"
#include "lib/export/prom_text.h"
#include "lib/track/qp_shards.h"
#include "lib/track/qp_track.h"
#include "lib/report/report_write.h"
#include "lib/util/text_buf.h"
#include "lib/report/report_render.h"
#include "lib/report/report_data.h"
#include "lib/decode/roce_decode.h"
#include "lib/store/store_sqlite.h"
#include "lib/localize/topology.h"
#include "lib/trace/trace_filter.h"
#include "lib/trace/trace_reader.h"
#include "lib/trace/trace_span.h"
#include "lib/util/sanitize.h"
#include "lib/util/util.h"


/*
 * SIGINT, SIGTERM, SIGHUP: the first stops reading (a read blocked on a pipe returns) and the
 * analysis of what was read is finished, written and marked interrupted; a second one removes
 * the database still being built and ends the process by that signal.
 */
static volatile sig_atomic_t stop_signal;	/* the first signal, 0 none */
static char abort_paths[2][4200];		/* unfinished files a second signal removes */
static volatile sig_atomic_t n_abort_paths;

static void on_stop_signal(int sig)
{
	if (!stop_signal) {
		stop_signal = sig;
		trace_reader_interrupt();
		return;
	}
	for (int i = 0; i < n_abort_paths; i++)
		unlink(abort_paths[i]);
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when this handler returns: the shell sees the signal */
}

void analyze_catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_stop_signal };

	/* No SA_RESTART: a read blocked on a pipe (tcpdump -w - | ...) must return. */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}

static const char *stop_signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* The files a second signal removes: up to two, NULL for none. */
static void set_abort_paths(const char *a, const char *b)
{
	const char *paths[2] = { a, b };
	int n = 0;

	n_abort_paths = 0; /* the handler never sees a half-copied name */
	for (int i = 0; i < 2; i++)
		if (paths[i] && strlen(paths[i]) < sizeof(abort_paths[n]))
			strcpy(abort_paths[n++], paths[i]);
	n_abort_paths = n;
}

/* Per capture: flows, unpaired RC flows, and whether only one direction of RC traffic is there. */
static void capture_flow_counts(const struct flow_stats *flows, size_t n, struct store_capture *caps,
				int n_caps)
{
	uint64_t *req, *resp;

	if (n_caps <= 0)
		return;
	req = calloc((size_t)n_caps, sizeof(*req));
	resp = calloc((size_t)n_caps, sizeof(*resp));

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

/*
 * links.csv and paths.csv, read before any trace so that a bad one stops the run with a
 * usage error (exit 2) before the work, not after it. 0, or 2 when the files are refused.
 */
static int load_topology(const struct analyze_opts *opts, struct topology *topo, bool *have)
{
	char err[512];

	memset(topo, 0, sizeof(*topo));
	*have = false;
	if (!opts->topology_csv) {
		if (!opts->paths_csv)
			return 0;
		pr_err("--paths needs --topology (the links its paths name)\n");
		return 2;
	}
	if (topology_load(topo, opts->topology_csv, opts->paths_csv, err, sizeof(err))) {
		pr_err("%s\n", err);
		topology_free(topo);
		return 2;
	}
	*have = true;
	return 0;
}

static int run_localize(const struct flow_stats *flows, size_t n, const struct topology *topo,
			struct finding **findings, size_t *n_findings, struct localize_coverage *coverage)
{
	struct localize_config cfg;
	int rc;

	localize_config_default(&cfg);
	localize_coverage(flows, n, &cfg, coverage);
	rc = localize(flows, n, topo, &cfg, findings, n_findings);
	if (rc) {
		pr_err("localization failed: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}

static void store_run_meta(struct store *st, const struct analyze_opts *opts, uint64_t window_ns,
			   double seconds)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "agentxdp-analyze/%d", STORE_SCHEMA_VERSION);
	store_meta(st, "schema", buf);
	snprintf(buf, sizeof(buf), "%d", STORE_SCHEMA_VERSION);
	store_meta(st, "schema_version", buf);
	store_meta(st, "tool", "agentxdp-analyze " AGENTXDP_VERSION);
	snprintf(buf, sizeof(buf), "%" PRIu64, window_ns);
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
			   const struct finding *findings, size_t n_findings,
			   const struct qp_tracker_totals *tot, const struct agent_latency *latency,
			   uint64_t malformed, const struct localize_coverage *coverage)
{
	struct metric_set set;
	struct text_buf out = { 0 };
	struct agent_metrics_input in = {
		.flows = flows,
		.n_flows = n_flows,
		.findings = findings,
		.n_findings = n_findings,
		.totals = tot,
		.latency = latency,
		.malformed_packets = malformed,
		.coverage = coverage,
	};
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

/* Everything one analysis holds, from open to cleanup. */
struct analyze_run {
	const struct analyze_opts *opts;
	struct roce_decode_opts dopts;
	struct trace_reader *tr;
	int n_traces;
	struct trace_counts *counts;	/* per trace */
	struct mirror_vantages mv;	/* vantages: the traces, then further mirror sessions */
	struct store_capture *caps;	/* per vantage (n_caps): a trace, or a mirror session */
	int n_caps;
	uint64_t malformed_total;
	struct topology topo;		/* --topology and --paths, read first */
	bool have_topo;
	uint64_t window_ns;		/* --window, or chosen from the traces' span */
	char window_note[160];		/* how it was chosen, said once there are flows */
	const char *db_path;		/* -o, or the database --report/--csv keep */
	char *report_db;		/* --report without -o: DIR/analysis.db */
	char *tmp_db;			/* --csv without -o: dropped at the end */
	char *tmp_dir;			/* --summary alone: a private folder for its database */
	struct store *st;
	struct qp_shards *trk;		/* the tracker, on -j threads */
	bool lanes;			/* -j N on files: N readers, each tracking its shard */
	struct agent_latency latency;
	struct tee_sink tee;
	struct qp_event_sink tee_ops;
	const struct flow_stats *flows;
	long n_flows;
	struct finding *findings;
	size_t n_findings;
	struct localize_coverage coverage; /* what the latency verdict covers */
	double t_start;
	double t_phase;			/* when the last phase ended (-vv) */
	int interrupted;		/* the signal that stopped reading, 0 none */
	int status;			/* the exit status: 1 once anything failed */
};

/* -vv: the run's timeline, each phase's end since the start and its own length. */
static void run_phase(struct analyze_run *r, const char *name)
{
	double t = now_s();

	pr_debug("phase %s: ends at %.3f s (%.3f s)\n", name, t - r->t_start, t - r->t_phase);
	r->t_phase = t;
}

/* Open the traces and the per-trace counters. */
static int run_open(struct analyze_run *r)
{
	const struct analyze_opts *opts = r->opts;
	char err[512];

	agent_latency_init(&r->latency);
	roce_decode_opts_default(&r->dopts);
	for (int i = 0; i < opts->n_extra_ports && i + 1 < (int)ARRAY_SIZE(r->dopts.udp_ports); i++)
		r->dopts.udp_ports[i + 1] = opts->extra_ports[i];
	if (opts->vxlan_port)
		r->dopts.vxlan_port = opts->vxlan_port;
	if (trace_reader_open(&r->tr, opts->traces, opts->n_traces, err, sizeof(err))) {
		pr_err("%s\n", err);
		return -1;
	}
	r->n_traces = trace_reader_count(r->tr);
	r->counts = calloc((size_t)r->n_traces, sizeof(*r->counts));
	r->caps = calloc((size_t)r->n_traces, sizeof(*r->caps));
	r->n_caps = r->n_traces;
	if (!r->counts || !r->caps || mirror_vantages_init(&r->mv, r->n_traces)) {
		pr_err("%s\n", strerror(ENOMEM));
		return -1;
	}
	return 0;
}

/* DIR/NAME, created with DIR, for a database --report or --csv needs without -o. */
static char *db_in_dir(const char *opt, const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *path;

	if (mkdir_p_dir(dir)) {
		pr_err("%s %s: %s\n", opt, dir, strerror(errno));
		return NULL;
	}
	path = malloc(n);
	if (!path) {
		pr_err("%s\n", strerror(ENOMEM));
		return NULL;
	}
	snprintf(path, n, "%s/%s", dir, name);
	return path;
}

/*
 * The default window: about a hundredth of the traces' span, on a 1-2-5 scale between
 * 100 us and 1 s, so that a 20 ms capture gets 200 us windows (enough points for the
 * baselines and the charts) and a long one 1 s. Finding the span takes one pass over the
 * traces' record headers before the analysis; standard input cannot be read twice.
 */
#define WINDOW_MIN_NS 100000ull
#define WINDOW_MAX_NS 1000000000ull

static uint64_t window_for_span(uint64_t span_ns)
{
	static const uint64_t steps[] = { 1, 2, 5 };
	double want = (double)span_ns / 100, best_dist = INFINITY;
	uint64_t w = WINDOW_MIN_NS;

	/* The 1-2-5 value nearest span / 100 (by ratio), within the bounds. */
	for (uint64_t decade = WINDOW_MIN_NS; decade <= WINDOW_MAX_NS; decade *= 10)
		for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
			uint64_t v = decade * steps[i];
			double dist = want > 0 ? fabs(log((double)v / want)) : (double)v;

			if (v <= WINDOW_MAX_NS && dist < best_dist) {
				best_dist = dist;
				w = v;
			}
		}
	return w;
}

static int run_choose_window(struct analyze_run *r)
{
	const struct analyze_opts *opts = r->opts;
	struct trace_reader *scan = NULL;
	struct trace_frame frame;
	uint64_t first = UINT64_MAX, last = 0;
	char err[512], text[32];
	double span_s;
	int rc;

	r->window_ns = opts->window_ns;
	if (r->window_ns)
		return 0;
	for (int i = 0; i < opts->n_traces; i++)
		if (!strcmp(opts->traces[i], "-")) {
			r->window_ns = WINDOW_MAX_NS;
			snprintf(r->window_note, sizeof(r->window_note),
				 "window 1s (standard input cannot be read twice to find its span; --window sets it)");
			return 0;
		}
	for (int i = 0; i < opts->n_traces; i++) {
		uint64_t a, b;

		if (trace_span(opts->traces[i], &a, &b)) {
			first = UINT64_MAX, last = 0;
			break;
		}
		first = a < first ? a : first;
		last = b > last ? b : last;
	}
	/* A file the quick walk could not read: read every frame's timestamp. */
	if (first == UINT64_MAX) {
		if (trace_reader_open(&scan, opts->traces, opts->n_traces, err, sizeof(err))) {
			pr_err("%s\n", err);
			return -1;
		}
		while ((rc = trace_reader_next(scan, &frame)) != 0) {
			if (rc < 0)
				continue; /* the analysis itself reports it */
			first = frame.ts_ns < first ? frame.ts_ns : first;
			last = frame.ts_ns > last ? frame.ts_ns : last;
		}
		trace_reader_close(scan);
	}
	r->window_ns = window_for_span(last > first ? last - first : 0);
	if (r->window_ns >= 1000000000ull)
		snprintf(text, sizeof(text), "%llus", (unsigned long long)(r->window_ns / 1000000000ull));
	else if (r->window_ns >= 1000000ull)
		snprintf(text, sizeof(text), "%llums", (unsigned long long)(r->window_ns / 1000000ull));
	else
		snprintf(text, sizeof(text), "%lluus", (unsigned long long)(r->window_ns / 1000ull));
	span_s = last > first ? (double)(last - first) / 1e9 : 0;
	snprintf(r->window_note, sizeof(r->window_note),
		 "window %s (about a hundredth of the traces' %.3g %s; --window sets it)", text,
		 span_s >= 1 ? span_s : span_s * 1e3, span_s >= 1 ? "s" : "ms");
	return 0;
}

/* Where the database goes: -o, else inside --report DIR, else beside the --csv files. */
static int run_choose_db(struct analyze_run *r)
{
	const struct analyze_opts *opts = r->opts;
	char name[64];

	r->db_path = opts->db_path;
	if (!r->db_path && opts->report_dir) {
		r->report_db = db_in_dir("--report", opts->report_dir, "analysis.db");
		if (!r->report_db)
			return -1;
		r->db_path = r->report_db;
	}
	if (!r->db_path && opts->csv_dir) {
		snprintf(name, sizeof(name), ".agentxdp-analyze.%d.db", (int)getpid());
		r->tmp_db = db_in_dir("--csv", opts->csv_dir, name);
		if (!r->tmp_db)
			return -1;
		r->db_path = r->tmp_db;
	}
	if (!r->db_path && opts->summary) {
		/* A private 0700 folder: no name another user could plant a link at. */
		char tmpl[] = "/tmp/agentxdp-summary-XXXXXX";
		const char *dir = mkdtemp(tmpl);

		r->tmp_dir = dir ? strdup(dir) : NULL;
		r->tmp_db = r->tmp_dir ? db_in_dir("--summary", r->tmp_dir, "analysis.db") : NULL;
		if (!r->tmp_db) {
			if (!dir)
				pr_err("--summary: cannot create a temporary folder: %s\n", strerror(errno));
			return -1;
		}
		r->db_path = r->tmp_db;
	}
	return 0;
}

/*
 * Whether -j N can read the traces N times (lanes): regular files only (standard input and
 * pipes are read once, by the reader thread of qp_shards_push()), and no pcap filter (it
 * compiles on first use, on one thread).
 */
static bool lanes_fit(const struct analyze_opts *opts)
{
	struct stat st;

	if (opts->filter)
		return false;
	for (int i = 0; i < opts->n_traces; i++)
		if (!strcmp(opts->traces[i], "-") || stat(opts->traces[i], &st) || !S_ISREG(st.st_mode))
			return false;
	return true;
}

/* The tracker, with the store (and --prom's histograms) listening to its events. */
static int run_start_tracker(struct analyze_run *r)
{
	const struct analyze_opts *opts = r->opts;
	struct qp_tracker_cfg cfg;
	char err[512];
	unsigned jobs;
	bool fit;

	qp_tracker_cfg_default(&cfg);
	cfg.window_ns = r->window_ns;
	cfg.dup_window_ns = opts->dedup_ns;
	if (r->db_path) {
		struct store_opts sopts = { .max_samples_per_window = opts->max_samples_per_window,
					    .samples = opts->samples };
		int rc = store_open(&r->st, r->db_path, &sopts, err, sizeof(err));

		if (rc) {
			pr_err("%s\n", err);
			return rc; /* -2: the file is not ours to replace */
		}
		store_set_window(r->st, r->window_ns);
		cfg.sink = store_sink(r->st);
		set_abort_paths(store_temp_path(r->st), r->tmp_db);
	}
	if (opts->prom_path) {
		r->tee.inner = cfg.sink;
		r->tee.latency = &r->latency;
		r->tee_ops = (struct qp_event_sink){
			.ctx = &r->tee,
			.latency = tee_latency,
			.retransmission = tee_retransmission,
			.nak = tee_nak,
			.cnp = tee_cnp,
			.window = tee_window,
		};
		cfg.sink = &r->tee_ops;
	}
	fit = lanes_fit(opts);
	jobs = opts->jobs ? opts->jobs : fit ? analyze_default_jobs() : 1;
	r->lanes = jobs > 1 && fit;
	r->trk = r->lanes ? qp_shards_new_lanes(&cfg, jobs) : qp_shards_new(&cfg, jobs);
	if (!r->trk) {
		pr_err("starting %u trackers: %s\n", jobs, strerror(errno));
		return -1;
	}
	return 0;
}

int analyze_select_link(const struct analyze_opts *opts, const struct trace_frame *f)
{
	int m;

	if (!opts->filter)
		return 1;
	m = trace_filter_match(opts->filter, f->linktype, f->data, f->caplen, f->origlen);
	if (m < 0)
		pr_err("%s\n", trace_filter_error(opts->filter));
	return m;
}

int analyze_select_qp(const struct analyze_opts *opts, int decode_rc, const struct roce_pkt *p)
{
	if (!opts->n_qps)
		return 1;
	if (decode_rc != ROCE_DECODE_OK)
		return 0;
	for (int i = 0; i < opts->n_qps; i++)
		if (p->dest_qp == opts->qps[i])
			return 1;
	return 0;
}

/* The tracker's end of input; out of memory is said (what was tracked is still analyzed). */
static void run_track_finish(struct analyze_run *r, bool failed)
{
	if (qp_shards_finish(r->trk) || failed) {
		pr_err("out of memory tracking %" PRIu64 " flows\n", qp_shards_totals(r->trk)->flows);
		r->status = 1;
	}
	if (qp_shards_merge_cpu_s(r->trk) > 0)
		pr_debug("-j %u: merge: %.3f s CPU\n", qp_shards_count(r->trk), qp_shards_merge_cpu_s(r->trk));
	if (qp_shards_count(r->trk) > 1 && qp_shards_cm_reqs(r->trk) > 256)
		pr_warn("-j %u: %" PRIu64 " CM REQs: with more than 256 awaiting their REP at once, CM"
			" pairing may differ from -j 1's (each tracker remembers 256)\n",
			qp_shards_count(r->trk), qp_shards_cm_reqs(r->trk));
}

/* Every frame of every trace through the decoder into the tracker (analyze_read.c), then finish it. */
static int run_read_frames(struct analyze_run *r)
{
	const struct analyze_opts *opts = r->opts;
	struct analyze_read ar = {
		.opts = opts, .dopts = &r->dopts, .trk = r->trk, .st = r->st, .tr = r->tr,
		.n_traces = r->n_traces, .counts = r->counts, .mv = &r->mv, .lanes = r->lanes,
		.stop = &stop_signal,
	};

	run_phase(r, "start");
	if (analyze_read(&ar))
		return -1;
	run_phase(r, "read");
	if (ar.status)
		r->status = 1;
	if (opts->filter || opts->n_qps)
		pr_info("%" PRIu64 " of %" PRIu64 " frames selected by%s%s%s\n", ar.selected, ar.frames,
			opts->filter ? " the filter" : "", opts->filter && opts->n_qps ? " and" : "",
			opts->n_qps ? " --qp" : "");
	r->interrupted = stop_signal;
	if (r->interrupted)
		pr_err("interrupted by %s after %" PRIu64 " RoCE packets: finishing the analysis of what was read"
		       " (again to abort)\n", stop_signal_name(r->interrupted), qp_shards_packets(r->trk));
	run_track_finish(r, ar.failed);
	if (r->st)
		store_reading_done(r->st); /* its last rows and indexes, beside what follows */
	run_phase(r, "track finish");
	r->n_flows = qp_shards_snapshot(r->trk, &r->flows);
	run_phase(r, "snapshot");
	if (r->n_flows < 0) {
		pr_err("%s\n", strerror(ENOMEM));
		return -1;
	}
	return 0;
}

/*
 * Issue #22 / #18: a run where nothing was understood is not an all-clear. A capture whose
 * frames were mostly not understood (a link type we do not read, a tunnel header we cannot
 * read or do not know), or a run that decoded no RoCE or InfiniBand packet at all, exits 1
 * with one line saying what was found instead and what would help.
 */
static uint64_t not_understood(const struct trace_counts *c)
{
	return c->malformed[-ROCE_DECODE_BAD_LINK] + c->malformed[-ROCE_DECODE_BAD_ENCAP] +
	       c->census.unknown_tunnel;
}

static bool link_not_understood(const struct trace_counts *c, uint64_t frames)
{
	return not_understood(c) * 2 > frames;
}

static void run_nothing_understood(struct analyze_run *r)
{
	uint64_t frames = 0, roce = 0, other = 0;
	struct frame_census all = { 0 };
	char found[640], path[SANITIZE_BUF_LEN(256)];

	for (int i = 0; i < r->n_traces; i++) {
		const struct trace_counts *c = &r->counts[i];
		uint64_t bad_link = c->malformed[-ROCE_DECODE_BAD_LINK];
		uint64_t n = r->caps[i].health->frames;

		frames += n;
		roce += c->roce;
		other += c->other;
		frame_census_merge(&all, &c->census);
		if (!link_not_understood(c, n))
			continue;
		frame_census_str(&c->census, found, sizeof(found));
		sanitize_text(r->caps[i].path, path, sizeof(path));
		if (bad_link * 2 > n)
			pr_err("%s: %s%" PRIu64 " of %" PRIu64 " frames not understood at the link layer,"
			       " link type %d (%s); %s\n", path, c->roce ? "" : "no RoCE packet: ", bad_link,
			       n, c->bad_linktype, trace_linktype_name(c->bad_linktype), found);
		else
			pr_err("%s: %s%" PRIu64 " of %" PRIu64 " frames not understood (tunnels not read: %"
			       PRIu64 " malformed, %" PRIu64 " unknown GRE); %s\n", path,
			       c->roce ? "" : "no RoCE packet: ", not_understood(c), n,
			       c->malformed[-ROCE_DECODE_BAD_ENCAP], c->census.unknown_tunnel, found);
		r->status = 1;
	}
	if (frames && !roce && !r->status) {
		frame_census_str(&all, found, sizeof(found));
		pr_err("no RoCE or InfiniBand packet in %" PRIu64 " frames (%" PRIu64
		       " other traffic, %" PRIu64 " malformed); %s\n",
		       frames, other, r->malformed_total, found);
		r->status = 1;
	}
}

/*
 * Issue #18: each further mirror session in a trace is a vantage of its own, with a capture
 * row after the traces'; a trace keeps its row for its first source. An ERSPAN III session
 * says how its switch clock and the collector's compare.
 */
static void run_mirror_vantages(struct analyze_run *r)
{
	const char **paths = calloc((size_t)r->n_traces, sizeof(*paths));
	struct store_capture *caps = r->caps;

	if (!paths || (r->mv.n > (uint32_t)r->n_traces &&
		       !(caps = realloc(r->caps, r->mv.n * sizeof(*r->caps))))) {
		pr_err("%s: the mirror sessions are merged with their traces\n", strerror(ENOMEM));
		free(paths);
		r->status = 1;
		return;
	}
	if (r->mv.n > (uint32_t)r->n_traces) {
		r->caps = caps;
		memset(&caps[r->n_traces], 0, (r->mv.n - (uint32_t)r->n_traces) * sizeof(*caps));
	}
	for (int i = 0; i < r->n_traces; i++)
		paths[i] = trace_reader_path(r->tr, i);
	mirror_vantages_finish(&r->mv, paths);
	free(paths);
	if (r->mv.oom)
		pr_warn("out of memory: some mirror sessions merged with their trace or clock samples lost\n");
	for (uint32_t v = 0; v < r->mv.n; v++) {
		const struct mirror_vantage *mv = &r->mv.v[v];
		struct store_capture *cap = &r->caps[v];

		cap->path = mv->name;
		cap->clock = mv->clock;
		if (v < (uint32_t)r->n_traces)
			continue;
		cap->health = &mv->health;
		cap->roce_packets = mv->packets;
		r->caps[mv->trace].roce_packets -= mv->packets;
	}
	r->n_caps = (int)r->mv.n;
}

/* Each capture's health: what it held, what it lost, what was not understood. */
static void run_capture_health(struct analyze_run *r)
{
	for (int i = 0; i < r->n_traces; i++) {
		const struct trace_health *h = trace_reader_health(r->tr, i);
		struct store_capture *cap = &r->caps[i];
		char path[SANITIZE_BUF_LEN(256)];

		cap->path = trace_reader_path(r->tr, i);
		cap->health = h;
		cap->roce_packets = r->counts[i].roce;
		cap->other_packets = r->counts[i].other;
		for (int m = 1; m < N_MALFORMED; m++)
			cap->malformed_packets += r->counts[i].malformed[m];
		r->malformed_total += cap->malformed_packets;
		if (h->has_drop_counters && h->capture_dropped)
			pr_warn("%s: the capture itself dropped %" PRIu64 " packets\n",
				sanitize_text(cap->path, path, sizeof(path)), h->capture_dropped);
		if (cap->malformed_packets && !link_not_understood(&r->counts[i], h->frames))
			pr_warn("%s: %" PRIu64 " malformed packets (see the malformed table)\n",
				sanitize_text(cap->path, path, sizeof(path)), cap->malformed_packets);
	}
	run_nothing_understood(r);
	run_mirror_vantages(r);
	capture_flow_counts(r->flows, (size_t)r->n_flows, r->caps, r->n_caps);
	for (int i = 0; i < r->n_caps; i++) {
		char path[SANITIZE_BUF_LEN(256)];

		if (r->caps[i].one_direction)
			pr_warn("%s: holds only one direction of its RC traffic (requests or responses)\n",
				sanitize_text(r->caps[i].path, path, sizeof(path)));
	}
}

/* Each ERSPAN III session's clock in the meta table: mirror_clock.capture<id>. */
static void store_mirror_clocks(struct analyze_run *r)
{
	for (int i = 0; i < r->n_caps; i++) {
		const struct capture_clock *c = &r->caps[i].clock;
		char key[64], val[256];

		if (!c->samples)
			continue;
		snprintf(key, sizeof(key), "mirror_clock.capture%d", i + 1);
		snprintf(val, sizeof(val),
			 "samples=%" PRIu64 " gra=%u absolute=%d offset_us=%.3f slope_ppm=%.3f"
			 " jitter_us=%.3f delay_median_us=%.3f",
			 c->samples, c->gra, c->absolute, c->offset_us, c->slope_ppm, c->jitter_us,
			 c->delay_median_us);
		store_meta(r->st, key, val);
	}
}

/* What the latency verdict covers, for the report's all-clear (docs/schema.md, meta). */
static void store_coverage_meta(struct store *st, const struct localize_coverage *cov)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%zu", cov->flows);
	store_meta(st, "latency_flows", buf);
	snprintf(buf, sizeof(buf), "%zu", cov->judged);
	store_meta(st, "latency_flows_judged", buf);
	snprintf(buf, sizeof(buf), "%u", cov->min_samples);
	store_meta(st, "latency_min_samples", buf);
}

/* The database: run metadata, captures, malformed counts, flows, findings; one commit. */
static void run_store(struct analyze_run *r)
{
	char err[512];
	int rc;

	if (!r->st)
		return;
	store_run_meta(r->st, r->opts, r->window_ns, now_s() - r->t_start);
	store_coverage_meta(r->st, &r->coverage);
	if (r->interrupted)
		store_meta(r->st, "interrupted", stop_signal_name(r->interrupted));
	store_captures(r->st, r->caps, (size_t)r->n_caps);
	store_mirror_clocks(r);
	for (int i = 0; i < r->n_traces; i++)
		for (int m = 1; m < N_MALFORMED; m++)
			if (r->counts[i].malformed[m])
				store_malformed(r->st, i, roce_decode_status_name(-m), r->counts[i].malformed[m]);
	store_flows(r->st, r->flows, (size_t)r->n_flows);
	store_findings(r->st, r->findings, r->n_findings);
	if (r->have_topo)
		store_links(r->st, &r->topo, r->flows, (size_t)r->n_flows);
	run_phase(r, "store rows");
	rc = store_commit(r->st, err, sizeof(err));
	r->st = NULL;
	set_abort_paths(r->tmp_db, NULL); /* the database is in place: a signal keeps it */
	if (rc) {
		pr_err("%s\n", err);
		r->status = 1;
		r->db_path = NULL;
	} else if (r->opts->db_path) {
		/* Names from the input (links.csv, file names) may hold terminal escapes. */
		char db[SANITIZE_BUF_LEN(256)], subj[SANITIZE_BUF_LEN(128)], dir[SANITIZE_BUF_LEN(128)];
		char sev[SANITIZE_BUF_LEN(200)];
		size_t alerts = 0, notices = 0;

		sanitize_text(r->opts->db_path, db, sizeof(db));
		pr_info("%s: %ld flows, %" PRIu64 " packets, %zu findings\n", db, r->n_flows,
			qp_shards_totals(r->trk)->packets, r->n_findings);
		/* The verdict itself, not only its count: the alerts, then how many notices. */
		for (size_t i = 0; i < r->n_findings; i++) {
			const struct finding *f = &r->findings[i];

			if (f->level != FINDING_ALERT) {
				notices++;
			} else if (++alerts <= 5) {
				pr_info("  alert: %s %s: %s%s%s%s; confidence %.0f%%, %u flows hurt\n",
					finding_kind_name(f->kind), sanitize_text(f->subject, subj, sizeof(subj)),
					sanitize_text(f->severity_text, sev, sizeof(sev)),
					f->direction[0] ? " (direction " : "",
					sanitize_text(f->direction, dir, sizeof(dir)), f->direction[0] ? ")" : "",
					f->confidence * 100, f->flows_hurt);
			}
		}
		if (alerts > 5)
			pr_info("  ... and %zu more alerts\n", alerts - 5);
		if (!alerts)
			pr_info("  %s\n", qp_shards_totals(r->trk)->packets ? "no slow or lossy link found"
									 : "no verdict: no RoCE packet to judge");
		if (notices)
			pr_info("  %zu notice%s (what ordinary traffic explains)\n", notices, notices == 1 ? "" : "s");
		pr_info("  details: agentxdp-report %s\n", db);
	}
}

/* --prom, --report and --csv, each from what the analysis (or its database) holds. */
static void run_file_outputs(struct analyze_run *r)
{
	const struct analyze_opts *opts = r->opts;
	char err[512];

	if (opts->prom_path) {
		if (r->tee.failed) {
			pr_err("--prom: out of memory for the latency histograms\n");
			r->status = 1;
		} else if (write_prom_file(opts->prom_path, r->flows, (size_t)r->n_flows, r->findings,
					   r->n_findings, qp_shards_totals(r->trk), &r->latency,
					   r->malformed_total, &r->coverage)) {
			r->status = 1;
		}
	}
	if (opts->report_dir && r->db_path) {
		struct report_write_opts ro = { .top_n = 10 };

		if (report_write_from_db(r->db_path, opts->report_dir, &ro))
			r->status = 1;
		else
			pr_info("report: %s%sindex.html\n", opts->report_dir,
				dir_sep(opts->report_dir));
	}
	if (opts->csv_dir && r->db_path && export_csv(r->db_path, opts->csv_dir, err, sizeof(err))) {
		pr_err("%s\n", err);
		r->status = 1;
	}
}

/* --summary: what the report's text section says, from the database just written. */
static void print_report_summary(struct analyze_run *r)
{
	struct report_data d;
	struct text_buf out = { 0 };
	char err[512];

	if (!r->db_path) {
		r->status = 1; /* the database could not be written: already said why */
		return;
	}
	if (report_data_load(r->db_path, 10, 120, &d, err, sizeof(err))) {
		pr_err("--summary: %s\n", err);
		r->status = 1;
		return;
	}
	if (r->tmp_dir) /* the database goes with the run: say how to keep one */
		snprintf(d.db_path, sizeof(d.db_path), "none kept (-o FILE keeps it)");
	if (report_render_summary(&out, &d, REPORT_TEXT, 10) || out.failed ||
	    fwrite(out.data ? out.data : "", 1, out.len, stdout) != out.len || fflush(stdout)) {
		pr_err("--summary: writing the summary: %s\n", strerror(errno ? errno : ENOMEM));
		r->status = 1;
	}
	text_buf_free(&out);
	report_data_free(&d);
}

/* --json, or the terminal summary when nothing else was asked for. */
static void run_summary(struct analyze_run *r)
{
	const struct analyze_opts *opts = r->opts;
	struct analysis_summary sum = {
		.captures = r->caps,
		.n_captures = (size_t)r->n_caps,
		.flows = r->flows,
		.n_flows = (size_t)r->n_flows,
		.totals = qp_shards_totals(r->trk),
		.findings = r->findings,
		.n_findings = r->n_findings,
		.window_ns = r->window_ns,
		.coverage = &r->coverage,
		.db_path = r->db_path && (opts->db_path || r->report_db) ? r->db_path : NULL,
	};

	if (opts->json) {
		if (export_json(stdout, &sum) || fflush(stdout)) {
			pr_err("writing the JSON summary: %s\n", strerror(errno));
			r->status = 1;
		}
	} else if (opts->summary) {
		print_report_summary(r);
	} else if (!opts->db_path && !opts->csv_dir && !opts->report_dir && !opts->prom_path) {
		if (export_text(stdout, &sum, 10) || fflush(stdout)) {
			pr_err("writing the summary: %s\n", strerror(errno));
			r->status = 1;
		}
	}
}

static void run_cleanup(struct analyze_run *r)
{
	if (r->trk)
		qp_shards_finish(r->trk); /* the merge thread feeds the store: stopped first */
	if (r->have_topo)
		topology_free(&r->topo);
	if (r->st)
		store_abort(r->st);
	if (r->tmp_db) {
		unlink(r->tmp_db);
		free(r->tmp_db);
	}
	if (r->tmp_dir) {
		rmdir(r->tmp_dir);
		free(r->tmp_dir);
	}
	findings_free(r->findings, r->n_findings);
	agent_latency_free(&r->latency);
	free(r->report_db);
	qp_shards_free(r->trk);
	free(r->counts);
	free(r->caps);
	mirror_vantages_free(&r->mv);
	trace_reader_close(r->tr);
}

/*
 * The analysis as named steps: open the traces, choose the database, start the tracker,
 * read every frame, judge capture health, localize, store, write the other outputs, print.
 */
int analyze_traces(const struct analyze_opts *opts)
{
	double t0 = now_s();
	struct analyze_run r = { .opts = opts, .t_start = t0, .t_phase = t0 };
	int rc = 0;

	if ((rc = load_topology(opts, &r.topo, &r.have_topo))) {
		r.status = rc;
		goto cleanup;
	}
	if (run_open(&r)) {
		/* Nothing was read: a trace that cannot be opened is the whole answer. */
		r.status = 1;
		goto cleanup;
	}
	if (run_choose_window(&r) || run_choose_db(&r) || (rc = run_start_tracker(&r)) || run_read_frames(&r)) {
		r.status = rc == -2 ? 2 : 1; /* 2: -o names a file we may not replace */
		goto cleanup;
	}
	/* The window's choice matters only when there is something to cut into windows: a run
	 * that understood nothing keeps its one-line error. */
	if (r.window_note[0] && r.n_flows > 0)
		pr_info("%s\n", r.window_note);
	run_capture_health(&r);
	run_phase(&r, "capture health");
	if (run_localize(r.flows, (size_t)r.n_flows, r.have_topo ? &r.topo : NULL, &r.findings,
			 &r.n_findings, &r.coverage)) {
		r.status = 1;
		r.n_findings = 0;
		r.findings = NULL;
	}
	run_phase(&r, "localize");
	if (r.st)
		store_findings_known(r.st, r.flows, (size_t)r.n_flows, r.findings, r.n_findings);
	run_store(&r);
	run_phase(&r, "store");
	run_file_outputs(&r);
	run_summary(&r);
	run_phase(&r, "outputs");
cleanup:
	set_abort_paths(NULL, NULL);
	run_cleanup(&r);
	run_phase(&r, "cleanup");
	if (stop_signal && (r.interrupted || !r.tr))
		r.status = 128 + stop_signal; /* as a shell reports a process a signal ended */
	return r.status;
}
