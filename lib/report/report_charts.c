/* report_charts.c: query the database, write gnuplot data and scripts, render SVG (or PNG). */
#include "lib/report/report_charts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/export/export_file.h"
#include "lib/report/gnuplot_run.h"
#include "lib/decode/psn.h"
#include "lib/util/util.h"

static int double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define CDF_MAX_POINTS 2000	/* per series: enough for a smooth curve, small files */
#define CDF_MAX_PAIRS 5
#define TIME_MAX_FLOWS 4
#define HEAT_MAX_HOSTS 64

struct chart_ctx {
	const struct report_data *d;
	sqlite3 *db;
	const char *chart_dir;	/* DIR/charts, for messages */
	int work_fd;		/* DIR/charts/.render-XXXXXX: ours alone, where gnuplot runs */
	char work_name[64];
	bool png;
	struct report_chart *charts;
	int n;
	char err[4400];
};

static FILE *open_in(struct chart_ctx *c, const char *name)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", c->chart_dir, name);
	f = fopen_output_new_at(c->work_fd, name);
	if (!f)
		snprintf(c->err, sizeof(c->err), "%s: %s", path, output_strerror(errno));
	return f;
}

/*
 * Time since the chart origin (the earliest window start or packet) in a unit fit for the
 * trace's span: a 20 ms capture reads in ms, not as 0.000 to 0.020 s.
 */
static int64_t chart_origin_ns;
static double chart_unit_ns = 1e9;
static const char *chart_unit = "s";
static char time_label[64] = "time since start of trace (s)";
static double rel_s(const struct report_data *d, int64_t ns)
{
	(void)d;
	return (double)(ns - chart_origin_ns) / chart_unit_ns;
}

static void choose_time_unit(const struct report_data *d)
{
	uint64_t span = d->last_ns > d->first_ns ? d->last_ns - d->first_ns : 0;

	chart_unit_ns = span >= 10000000000ull ? 1e9 : span >= 10000000ull ? 1e6 : 1e3;
	chart_unit = span >= 10000000000ull ? "s" : span >= 10000000ull ? "ms" : "us";
	snprintf(time_label, sizeof(time_label), "time since start of trace (%s)", chart_unit);
}

/* Script preamble: terminal and output file. */
static void script_head(struct chart_ctx *c, FILE *gp, const char *base, int w, int h)
{
	if (c->png)
		fprintf(gp, "set terminal pngcairo size %d,%d noenhanced font 'sans,9'\nset output '%s.png'\n",
			w, h, base);
	else
		fprintf(gp, "set terminal svg size %d,%d noenhanced font 'sans,10' background '#ffffff'\nset output '%s.svg'\n",
			w, h, base);
	fputs("set grid\nset key below\nset datafile missing 'NaN'\n", gp);
}

/* Close the script, run gnuplot, record the chart when it rendered. */
static void finish_chart(struct chart_ctx *c, FILE *gp, const char *base, const char *title,
			 const char *caption, int w, int h)
{
	char script[96], err[512];
	struct report_chart *ch;

	fclose(gp);
	snprintf(script, sizeof(script), "%s.gp", base);
	if (gnuplot_run(c->work_fd, c->chart_dir, script, err, sizeof(err))) {
		fprintf(stderr, "agentxdp-report: warning: chart %s not drawn: %s\n", base, err);
		return;
	}
	if (c->n >= REPORT_MAX_CHARTS)
		return;
	ch = &c->charts[c->n++];
	snprintf(ch->file, sizeof(ch->file), "charts/%s.%s", base, c->png ? "png" : "svg");
	snprintf(ch->title, sizeof(ch->title), "%s", title);
	snprintf(ch->caption, sizeof(ch->caption), "%s", caption);
	ch->width = w;
	ch->height = h;
}

/* Every series name goes through gnuplot_quote(): trace text never breaks the script. */
static const char *q(const char *s, char *buf, size_t len)
{
	return gnuplot_quote(s, buf, len);
}

/*
 * Write one CDF series from ST (latency_ns ascending) into NAME: every k-th sample so the
 * file stays small and the curve exact in shape. Returns the samples read, -1 on error.
 */
static int64_t write_cdf(struct chart_ctx *c, sqlite3_stmt *st, const char *name)
{
	int64_t total = 0, step, i = 0;
	FILE *dat = open_in(c, name);

	if (!dat)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW)
		total++;
	sqlite3_reset(st);
	step = total > CDF_MAX_POINTS ? total / CDF_MAX_POINTS : 1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		i++;
		if (i % step == 0 || i == total)
			fprintf(dat, "%.3f %.6f\n", sqlite3_column_int64(st, 0) / 1000.0, (double)i / (double)total);
	}
	sqlite3_reset(st);
	fclose(dat);
	return total;
}

/*
 * The healthy comparison: the samples of the CDF_HEALTHY_FLOWS flows nearest the median
 * flow p50 among those no finding's evidence lists. Not "the least bad of the worst".
 */
#define CDF_HEALTHY_FLOWS 8
/*
 * ACK samples of the flows in CTE `sel`: their latency_sample rows, and for a flow without
 * rows (agentxdp-analyze --samples keeps them for some flows only) its latency_hist buckets,
 * each bucket's midpoint repeated count times. Databases without latency_hist: rows only.
 */
#define CDF_HIST_CTE                                                                                 \
	" hs(v, n) AS (SELECT (h.lo_ns + h.hi_ns) / 2, h.count FROM latency_hist h WHERE h.kind = 0"   \
	"  AND h.qp_id IN (SELECT id FROM sel) AND NOT EXISTS (SELECT 1 FROM latency_sample s"         \
	"  WHERE s.qp_id = h.qp_id AND s.kind = 0) UNION ALL SELECT v, n - 1 FROM hs WHERE n > 1)"
#define CDF_SAMPLES_ROWS " SELECT s.latency_ns FROM latency_sample s WHERE s.kind = 0 AND s.qp_id IN (SELECT id FROM sel)"
#define CDF_SAMPLES_HIST CDF_SAMPLES_ROWS " UNION ALL SELECT v FROM hs ORDER BY 1"
#define HEALTHY_CTE \
	"WITH RECURSIVE named AS (SELECT json_extract(e.value, '$.id') AS id FROM finding f," \
	"  json_each(f.evidence, '$.flows') e WHERE json_valid(f.evidence)" \
	"  AND json_type(f.evidence, '$.flows') = 'array' AND e.type = 'object')," \
	" med AS (SELECT ack_latency_p50_us AS m FROM qp WHERE ack_samples > 0 ORDER BY ack_latency_p50_us" \
	"  LIMIT 1 OFFSET (SELECT count(*) FROM qp WHERE ack_samples > 0) / 2)," \
	" healthy AS (SELECT qp.id FROM qp, med WHERE qp.ack_samples > 0" \
	"  AND qp.id NOT IN (SELECT id FROM named WHERE id IS NOT NULL)" \
	"  ORDER BY abs(qp.ack_latency_p50_us - med.m), qp.id LIMIT ?1), sel AS (SELECT id FROM healthy)"
static const char *const healthy_samples_sql[] = {
	HEALTHY_CTE "," CDF_HIST_CTE CDF_SAMPLES_HIST,
	HEALTHY_CTE CDF_SAMPLES_ROWS " ORDER BY 1",
};
#define PAIR_CTE "WITH RECURSIVE sel AS (SELECT id FROM qp WHERE src_ip = ?1 AND dst_ip = ?2)"
static const char *const pair_samples_sql[] = {
	PAIR_CTE "," CDF_HIST_CTE CDF_SAMPLES_HIST,
	PAIR_CTE CDF_SAMPLES_ROWS " ORDER BY 1",
};

/* The first of two statements (with the histogram fallback, without) that prepares. */
static int prepare_either(sqlite3 *db, const char *const sql[2], sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db, sql[0], -1, st, NULL) == SQLITE_OK)
		return SQLITE_OK;
	return sqlite3_prepare_v2(db, sql[1], -1, st, NULL);
}

/* ACK latency CDF for the worst host pairs and, for contrast, healthy flows. */
static void chart_latency_cdf(struct chart_ctx *c)
{
	const struct report_data *d = c->d;
	sqlite3_stmt *st = NULL, *healthy = NULL;
	FILE *gp = NULL;
	char label[160], ql[400];
	int drawn = 0;

	if (prepare_either(c->db, pair_samples_sql, &st) != SQLITE_OK)
		return;
	gp = open_in(c, "latency_cdf.gp");
	if (!gp)
		goto cleanup;
	script_head(c, gp, "latency_cdf", 900, 420);
	fputs("set title 'ACK latency CDF: worst host pairs and healthy flows'\nset xlabel 'ACK latency (us)'\n"
	      "set ylabel 'fraction of samples'\nset logscale x\nset yrange [0:1]\nplot ", gp);
	for (size_t i = 0, k = 0; i < d->n_pairs && k < CDF_MAX_PAIRS; i++) {
		const struct report_pair *p = &d->pairs[i];
		char name[32];

		if (!p->ack_samples)
			continue;
		snprintf(name, sizeof(name), "cdf_%zu.dat", k++);
		sqlite3_bind_text(st, 1, p->src, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, p->dst, -1, SQLITE_STATIC);
		if (write_cdf(c, st, name) <= 0)
			continue;
		snprintf(label, sizeof(label), "%s -> %s", p->src, p->dst);
		fprintf(gp, "%s'%s' using 1:2 with lines lw 2 title '%s'", drawn++ ? ", " : "", name,
			q(label, ql, sizeof(ql)));
	}
	if (prepare_either(c->db, healthy_samples_sql, &healthy) == SQLITE_OK) {
		sqlite3_bind_int(healthy, 1, CDF_HEALTHY_FLOWS);
		if (write_cdf(c, healthy, "cdf_healthy.dat") > 0)
			fprintf(gp, "%s'cdf_healthy.dat' using 1:2 with lines lw 3 dt 2 lc rgb '#2ca02c'"
				    " title 'healthy: flows nearest the median p50, in no finding'", drawn++ ? ", " : "");
	}
	fputs("\n", gp);
	if (!drawn) {
		fclose(gp);
		goto cleanup;
	}
	finish_chart(c, gp, "latency_cdf", "ACK latency CDF per host pair",
		     "Cumulative distribution of ACK latency (Karn's rule: no sample from a retransmitted PSN) for the host pairs with the worst p99; dashed green: healthy flows for contrast (nearest the median p50, listed by no finding).",
		     900, 420);
cleanup:
	sqlite3_finalize(healthy);
	sqlite3_finalize(st);
}

/* Pick up to TIME_MAX_FLOWS worst flows with latency samples and the healthiest one. */
static size_t pick_latency_flows(const struct report_data *d, const struct report_flow **out)
{
	size_t n = 0;
	const struct report_flow *best = NULL;

	for (size_t i = 0; i < d->n_flows; i++) {
		const struct report_flow *f = &d->flows[i];
		if (!f->ack_samples)
			continue;
		if (n < TIME_MAX_FLOWS)
			out[n++] = f;
		else if (!best || f->p99_us < best->p99_us)
			best = f;
	}
	if (best)
		out[n++] = best;
	return n;
}

static void flow_label(const struct report_flow *f, char *buf, size_t len)
{
	snprintf(buf, len, "qp %" PRId64 ": %s -> %s QPN 0x%06x", f->id, f->src, f->dst, f->dst_qpn);
}

static void onset_marks(struct chart_ctx *c, FILE *gp)
{
	for (size_t i = 0; i < c->d->n_findings && i < 3; i++) {
		const struct report_finding *f = &c->d->findings[i];
		if (!f->onset_ns)
			continue;
		fprintf(gp, "set arrow from %.6f, graph 0 to %.6f, graph 1 nohead lw 2 dt 2 lc rgb '#c00000'\n",
			rel_s(c->d, (int64_t)f->onset_ns), rel_s(c->d, (int64_t)f->onset_ns));
		fprintf(gp, "set label 'onset #%d' at %.6f, graph 0.95 tc rgb '#c00000' offset 0.5,0\n", f->rank,
			rel_s(c->d, (int64_t)f->onset_ns));
	}
}

/* p99 ACK latency per window over time: the worst flows and a healthy one, onset marked. */
static void chart_latency_time(struct chart_ctx *c)
{
	const struct report_flow *flows[TIME_MAX_FLOWS + 1];
	size_t n = pick_latency_flows(c->d, flows);
	sqlite3_stmt *st = NULL;
	FILE *gp;
	char label[200], ql[420];

	if (!n || sqlite3_prepare_v2(c->db,
				     "SELECT start_ns, ack_latency_p99_us FROM qp_window WHERE qp_id = ?"
				     " AND ack_samples > 0 ORDER BY start_ns",
				     -1, &st, NULL) != SQLITE_OK)
		return;
	gp = open_in(c, "latency_time.gp");
	if (!gp)
		goto cleanup;
	script_head(c, gp, "latency_time", 900, 420);
	fprintf(gp, "set title 'p99 ACK latency per window'\nset xlabel '%s'\n"
		    "set ylabel 'p99 ACK latency (us)'\nset logscale y\n", time_label);
	onset_marks(c, gp);
	fputs("plot ", gp);
	for (size_t k = 0; k < n; k++) {
		char name[48];
		FILE *dat;
		snprintf(name, sizeof(name), "lat_time_%zu.dat", k);
		dat = open_in(c, name);
		if (!dat)
			break;
		sqlite3_bind_int64(st, 1, flows[k]->id);
		while (sqlite3_step(st) == SQLITE_ROW)
			fprintf(dat, "%.6f %.3f\n", rel_s(c->d, sqlite3_column_int64(st, 0)),
				sqlite3_column_double(st, 1));
		sqlite3_reset(st);
		fclose(dat);
		flow_label(flows[k], label, sizeof(label));
		fprintf(gp, "%s'%s' using 1:2 with linespoints pt 7 ps 0.4 title '%s%s'", k ? ", " : "", name,
			q(label, ql, sizeof(ql)), k == n - 1 && n > TIME_MAX_FLOWS ? " (healthy)" : "");
	}
	fputs("\n", gp);
	finish_chart(c, gp, "latency_time", "p99 ACK latency over time",
		     "p99 ACK latency per time window for the worst flows and a healthy one for contrast; dashed red lines mark the onset of each finding.",
		     900, 420);
cleanup:
	sqlite3_finalize(st);
}

/* The flows a finding's evidence lists (qp ids), sorted; -1 on error. */
static int finding_flow_ids(struct chart_ctx *c, int rank, int64_t **ids, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;

	*ids = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(c->db,
			       "SELECT DISTINCT CAST(json_extract(e.value, '$.id') AS INTEGER) AS id FROM finding f,"
			       " json_each(f.evidence, '$.flows') e WHERE f.rank = ?1 AND json_valid(f.evidence)"
			       " AND json_type(f.evidence, '$.flows') = 'array' AND e.type = 'object' ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int(st, 1, rank);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (util_ensure_mem((void **)ids, &cap, sizeof(**ids), *n + 1)) {
			sqlite3_finalize(st);
			return -1;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return 0;
}

static bool id_listed(const int64_t *ids, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ids[mid] == id)
			return true;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Nearest-rank percentile of sorted v[0..n). */
static double pctl(const double *v, size_t n, double q)
{
	size_t r = (size_t)ceil(q * (double)n);

	return v[r ? r - 1 : 0];
}

/*
 * One line per window: time, the healthy peers' p10, p50, p90 of their flows' window p50,
 * the suspected flows' sample-weighted window p50 (NaN when none). Returns windows written.
 */
static int write_suspect_windows(struct chart_ctx *c, FILE *dat, const int64_t *ids, size_t n_ids)
{
	sqlite3_stmt *st = NULL;
	double *peers = NULL, sus_sum = 0, sus_w = 0;
	size_t n_peers = 0, cap = 0;
	int64_t cur = INT64_MIN;
	int rows = 0, step;

	if (sqlite3_prepare_v2(c->db,
			       "SELECT start_ns, qp_id, ack_samples, ack_latency_p50_us FROM qp_window"
			       " WHERE ack_samples > 0 ORDER BY start_ns",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	do {
		step = sqlite3_step(st);
		int64_t start = step == SQLITE_ROW ? sqlite3_column_int64(st, 0) : INT64_MAX;

		if (start != cur && cur != INT64_MIN && n_peers) {
			qsort(peers, n_peers, sizeof(*peers), double_cmp);
			fprintf(dat, "%.6f %.3f %.3f %.3f ", rel_s(c->d, cur), pctl(peers, n_peers, 0.1),
				pctl(peers, n_peers, 0.5), pctl(peers, n_peers, 0.9));
			fprintf(dat, sus_w > 0 ? "%.3f\n" : "NaN\n", sus_w > 0 ? sus_sum / sus_w : 0);
			rows++;
		}
		if (start != cur) {
			cur = start;
			n_peers = 0;
			sus_sum = sus_w = 0;
		}
		if (step != SQLITE_ROW)
			break;
		double w = (double)sqlite3_column_int64(st, 2), v = sqlite3_column_double(st, 3);

		if (id_listed(ids, n_ids, sqlite3_column_int64(st, 1))) {
			sus_sum += w * v;
			sus_w += w;
		} else if (!util_ensure_mem((void **)&peers, &cap, sizeof(*peers), n_peers + 1)) {
			peers[n_peers++] = v;
		}
	} while (1);
	free(peers);
	sqlite3_finalize(st);
	return rows;
}

/*
 * For a finding: its flows' p50 ACK latency per window against the band of every other
 * flow's (p10 to p90, median dashed), the finding's onset marked.
 */
static void chart_suspect_time(struct chart_ctx *c, const struct report_finding *f, int index)
{
	char base[32], name[48], gpname[48], title[300], qt[700];
	int64_t *ids = NULL;
	size_t n_ids = 0;
	FILE *dat, *gp;
	int rows;

	if (finding_flow_ids(c, f->rank, &ids, &n_ids) || !n_ids)
		goto cleanup;
	snprintf(base, sizeof(base), "suspect_time_%d", index);
	snprintf(name, sizeof(name), "%s.dat", base);
	snprintf(gpname, sizeof(gpname), "%s.gp", base);
	dat = open_in(c, name);
	if (!dat)
		goto cleanup;
	rows = write_suspect_windows(c, dat, ids, n_ids);
	fclose(dat);
	if (!rows)
		goto cleanup;
	gp = open_in(c, gpname);
	if (!gp)
		goto cleanup;
	script_head(c, gp, base, 900, 400);
	snprintf(title, sizeof(title), "p50 ACK latency per window: %s %s against its peers", f->kind, f->subject);
	fprintf(gp, "set title '%s'\nset xlabel '%s'\nset ylabel 'p50 ACK latency (us)'\n",
		q(title, qt, sizeof(qt)), time_label);
	if (f->onset_ns)
		fprintf(gp, "set arrow from %.6f, graph 0 to %.6f, graph 1 nohead lw 2 dt 2 lc rgb '#c00000'\n"
			    "set label 'onset' at %.6f, graph 0.95 tc rgb '#c00000' offset 0.5,0\n",
			rel_s(c->d, (int64_t)f->onset_ns), rel_s(c->d, (int64_t)f->onset_ns),
			rel_s(c->d, (int64_t)f->onset_ns));
	fprintf(gp, "plot '%s' using 1:2:4 with filledcurves fc rgb '#a6d96a' fs transparent solid 0.5"
		    " title 'other flows, p10 to p90', '' using 1:3 with lines dt 2 lw 2 lc rgb '#1a9641'"
		    " title 'other flows, median', '' using 1:5 with linespoints pt 7 ps 0.5 lw 2 lc rgb '#7b3294'"
		    " title 'flows the finding lists (%zu)'\n", name, n_ids);
	finish_chart(c, gp, base, "Suspected flows against their peers over time",
		     "p50 ACK latency per window of the flows a finding lists (purple) against every other flow: the green band spans their p10 to p90, the dashed line their median; the dashed red line marks the finding's onset.",
		     900, 400);
cleanup:
	free(ids);
}

/*
 * One series' rows of the flow (time, PSN or NULL) into dat as seconds and PSNs unwrapped
 * modulo 2^24 relative to the flow's first PSN (*first_psn, set by the first series that
 * has one). Returns the rows written.
 */
static int psn_series(struct chart_ctx *c, sqlite3_stmt *st, int64_t flow_id, FILE *dat, uint32_t *first_psn,
		      bool *have_first)
{
	int64_t last_unwrapped = 0;
	uint32_t last_psn = 0;
	int rows = 0;

	sqlite3_bind_int64(st, 1, flow_id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		double t = rel_s(c->d, sqlite3_column_int64(st, 0));
		if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
			fprintf(dat, "%.6f 0\n", t);
		} else {
			uint32_t psn = (uint32_t)sqlite3_column_int64(st, 1) & PSN_MASK;
			if (!*have_first) {
				*first_psn = psn;
				*have_first = true;
			}
			if (!rows)
				last_unwrapped = psn_diff(psn, *first_psn);
			else
				last_unwrapped += psn_diff(psn, last_psn);
			last_psn = psn;
			fprintf(dat, "%.6f %" PRId64 "\n", t, last_unwrapped);
		}
		rows++;
	}
	return rows;
}

/*
 * A flow without per-packet retransmission rows (--samples did not keep them): the first and
 * last resend of each go-back-N run. A version-1 database has no such table: no rows.
 */
static const char psn_bursts_sql[] =
	"SELECT ts, psn FROM (SELECT ts_first_ns AS ts, psn_first AS psn FROM retransmission_burst"
	" WHERE qp_id = ?1 UNION ALL SELECT ts_last_ns, psn_last FROM retransmission_burst"
	" WHERE qp_id = ?1 AND packets > 1) ORDER BY ts";

/* PSN against time, tcptrace-style, for one flow: sends, retransmissions, NAKs, CNPs. */
static void chart_psn_time(struct chart_ctx *c, const struct report_flow *f, int index)
{
	static const char *const queries[] = {
		/* first transmissions: ACK time minus latency is when the PSN left */
		"SELECT ts_ns - latency_ns, psn FROM latency_sample WHERE qp_id = ?1 AND kind = 0 ORDER BY 1",
		"SELECT ts_ns, psn FROM retransmission WHERE qp_id = ?1 ORDER BY ts_ns",
		"SELECT ts_ns, psn FROM nak WHERE qp_id = ?1 AND kind <> 'rnr' ORDER BY ts_ns",
		"SELECT ts_ns, psn FROM nak WHERE qp_id = ?1 AND kind = 'rnr' ORDER BY ts_ns",
		"SELECT ts_ns, NULL FROM cnp WHERE qp_id = ?1 ORDER BY ts_ns",
	};
	static const char *const titles[] = { "sent (ACKed once)", "retransmission", "NAK", "RNR NAK", "CNP" };
	static const char *const styles[] = {
		"points pt 7 ps 0.3 lc rgb '#1f77b4'", "points pt 2 ps 0.8 lc rgb '#d62728'",
		"points pt 6 ps 1.0 lc rgb '#ff7f0e'", "points pt 4 ps 1.0 lc rgb '#9467bd'",
		"impulses lc rgb '#2ca02c'",
	};
	char base[32], label[200], ql[420];
	uint32_t first_psn = 0;
	bool have_first = false;
	int drawn = 0;
	FILE *gp;

	snprintf(base, sizeof(base), "psn_time_%d", index);
	char gpname[48];
	snprintf(gpname, sizeof(gpname), "%s.gp", base);
	gp = open_in(c, gpname);
	if (!gp)
		return;
	script_head(c, gp, base, 900, 400);
	flow_label(f, label, sizeof(label));
	fprintf(gp, "set title 'PSN over time, %s'\nset xlabel '%s'\n"
		    "set ylabel 'PSN (relative, unwrapped)'\n", q(label, ql, sizeof(ql)), time_label);
	fputs("plot ", gp);
	for (size_t k = 0; k < sizeof(queries) / sizeof(queries[0]); k++) {
		sqlite3_stmt *st;
		char name[48];
		FILE *dat;
		int rows;

		if (sqlite3_prepare_v2(c->db, queries[k], -1, &st, NULL) != SQLITE_OK)
			continue;
		snprintf(name, sizeof(name), "%s_%zu.dat", base, k);
		dat = open_in(c, name);
		if (!dat) {
			sqlite3_finalize(st);
			break;
		}
		rows = psn_series(c, st, f->id, dat, &first_psn, &have_first);
		sqlite3_finalize(st);
		if (!rows && k == 1 && sqlite3_prepare_v2(c->db, psn_bursts_sql, -1, &st, NULL) == SQLITE_OK) {
			rows = psn_series(c, st, f->id, dat, &first_psn, &have_first);
			sqlite3_finalize(st);
		}
		fclose(dat);
		if (!rows)
			continue;
		fprintf(gp, "%s'%s' using 1:2 with %s title '%s'", drawn ? ", " : "", name, styles[k], titles[k]);
		drawn++;
	}
	fputs("\n", gp);
	if (!drawn) {
		fclose(gp);
		return;
	}
	finish_chart(c, gp, base, "PSN over time",
		     "tcptrace-style PSN over time for one of the worst queue pairs: each dot a first transmission (its ACK arrived), crosses retransmissions, circles NAKs, squares RNR NAKs, green impulses CNPs.",
		     900, 400);
}

static int64_t d_window_ns(const struct chart_ctx *c)
{
	return c->d->window_ns > 0 && c->d->window_ns < INT64_MAX ? (int64_t)c->d->window_ns : 0;
}

/* Fabric-wide counts per window: retransmissions, NAKs, CNPs, ECN marks; and throughput. */
static void chart_window_totals(struct chart_ctx *c)
{
	sqlite3_stmt *st = NULL;
	FILE *dat = NULL, *gp = NULL;
	int64_t prev = -1, window_ns = 0;
	int rows = 0;

	if (sqlite3_prepare_v2(c->db,
			       "SELECT start_ns, total(retransmitted_packets), total(naks), total(cnps),"
			       " total(ecn_ce), total(bytes), total(goodput_bytes), total(timeouts)"
			       " FROM qp_window GROUP BY start_ns ORDER BY start_ns",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	dat = open_in(c, "windows.dat");
	if (!dat)
		goto cleanup;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 0);
		if (prev >= 0 && start > prev && (!window_ns || start - prev < window_ns))
			window_ns = start - prev;
		prev = start;
		fprintf(dat, "%.6f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\n", rel_s(c->d, start),
			sqlite3_column_double(st, 1), sqlite3_column_double(st, 2),
			sqlite3_column_double(st, 3), sqlite3_column_double(st, 4),
			sqlite3_column_double(st, 5), sqlite3_column_double(st, 6),
			sqlite3_column_double(st, 7));
		rows++;
	}
	fclose(dat);
	dat = NULL;
	if (!rows)
		goto cleanup;
	/* The analysis' own window (meta window_ns), else the closest two window starts. */
	if (d_window_ns(c))
		window_ns = d_window_ns(c);
	if (!window_ns)
		window_ns = 1000000000;

	gp = open_in(c, "events_time.gp");
	if (!gp)
		goto cleanup;
	script_head(c, gp, "events_time", 900, 380);
	fprintf(gp, "set title 'Retransmissions, NAKs, timeouts, CNPs and ECN marks per window'\n"
	      "set xlabel '%s'\nset ylabel 'events per window'\n", time_label);
	onset_marks(c, gp);
	fputs("plot 'windows.dat' using 1:2 with steps lw 2 title 'retransmitted',"
	      " '' using 1:3 with steps title 'NAKs', '' using 1:8 with steps title 'timeouts',"
	      " '' using 1:4 with steps title 'CNPs', '' using 1:5 with steps title 'ECN CE'\n", gp);
	finish_chart(c, gp, "events_time", "Loss and congestion events over time",
		     "Retransmitted packets, NAKs, timeouts, CNPs and ECN CE marks per window over all flows.",
		     900, 380);

	gp = open_in(c, "throughput.gp");
	if (!gp)
		goto cleanup;
	script_head(c, gp, "throughput", 900, 380);
	fprintf(gp, "set title 'Throughput and goodput (all flows)'\nset xlabel '%s'\n"
		    "set ylabel 'Gbit/s'\nw = %.9f\n", time_label, (double)window_ns / 1e9);
	onset_marks(c, gp);
	fputs("plot 'windows.dat' using 1:($6*8/w/1e9) with steps lw 2 title 'throughput (wire bytes)',"
	      " '' using 1:($7*8/w/1e9) with steps lw 2 title 'goodput (first transmissions)'\n", gp);
	finish_chart(c, gp, "throughput", "Throughput over time",
		     "Wire throughput and goodput (payload of first transmissions) per window, all flows together.",
		     900, 380);
cleanup:
	if (dat)
		fclose(dat);
	sqlite3_finalize(st);
}

/* A host's leaf from the link table ("" when not known): the heat map groups by it. */
static const char *host_leaf(const struct report_data *d, const char *host)
{
	for (size_t i = 0; i < d->n_links; i++) {
		const struct report_link *l = &d->links[i];

		if (l->a_tier == 0 && l->b_tier == 1 && !strcmp(l->a, host))
			return l->b;
		if (l->b_tier == 0 && l->a_tier == 1 && !strcmp(l->b, host))
			return l->a;
	}
	return "";
}

struct heat_host {
	char name[64];
	const char *leaf;
};

/* A row or column header of heatmap.dat: one whitespace-free token whatever the names hold. */
static void heat_label(FILE *dat, const struct heat_host *h)
{
	char buf[160];

	snprintf(buf, sizeof(buf), "%s%s%s", h->leaf, h->leaf[0] ? "/" : "", h->name);
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == '"' || *p == '\'' || *p == '#' || *p == 0x7f)
			*p = '_';
	fputs(buf, dat);
}

static int heat_host_order(const void *a, const void *b)
{
	const struct heat_host *x = a, *y = b;
	int c = strcmp(x->leaf, y->leaf);

	return c ? c : strcmp(x->name, y->name);
}

static int heat_index(const struct heat_host *h, size_t n, const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (!strcmp(h[i].name, name))
			return (int)i;
	return -1;
}

/* Ticks of the colour scale: 1-2-5 steps inside [lo, hi], the ends always labelled. */
static void heat_cbtics(FILE *gp, double lo, double hi)
{
	fprintf(gp, "set cbrange [%g:%g]\nset cbtics ('%.3g' %g, '%.3g' %g", lo, hi, lo, lo, hi, hi);
	for (double dec = pow(10, floor(log10(lo))); dec <= hi; dec *= 10)
		for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
			double v = dec * m;

			if (v > lo * 1.15 && v < hi / 1.15)
				fprintf(gp, ", '%g' %g", v, v);
		}
	fputs(")\nset format cb '%g'\n", gp);
}

/*
 * Every host pair's p99 ACK latency (source rows, destination columns), hosts sorted by
 * their leaf then address; sharp cells; pairs without samples hatched grey, not coloured.
 */
static void chart_heatmap(struct chart_ctx *c)
{
	const struct report_data *d = c->d;
	size_t n = d->n_hosts < HEAT_MAX_HOSTS ? d->n_hosts : HEAT_MAX_HOSTS;
	struct heat_host *hosts = calloc(n ? n : 1, sizeof(*hosts));
	double *cell = calloc(n > 0 ? n * n : 1, sizeof(*cell)), lo = INFINITY, hi = 0;
	sqlite3_stmt *st = NULL;
	FILE *dat = NULL, *gp;
	char caption[256];
	size_t n_none = 0;

	if (!hosts || !cell || n < 2 ||
	    sqlite3_prepare_v2(c->db, "SELECT src_ip, dst_ip, max(ack_latency_p99_us) FROM qp WHERE ack_samples > 0"
				      " GROUP BY src_ip, dst_ip", -1, &st, NULL) != SQLITE_OK)
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		snprintf(hosts[i].name, sizeof(hosts[i].name), "%s", d->hosts[i].host);
		hosts[i].leaf = host_leaf(d, hosts[i].name);
	}
	qsort(hosts, n, sizeof(*hosts), heat_host_order);
	for (size_t i = 0; i < n * n; i++)
		cell[i] = NAN;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int r = heat_index(hosts, n, (const char *)sqlite3_column_text(st, 0));
		int k = heat_index(hosts, n, (const char *)sqlite3_column_text(st, 1));
		double v = sqlite3_column_double(st, 2);

		if (r < 0 || k < 0 || !(v > 0 && v < 1e12))
			continue;
		cell[(size_t)r * n + (size_t)k] = v;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	if (!(hi > 0))
		goto cleanup;
	dat = open_in(c, "heatmap.dat");
	if (!dat)
		goto cleanup;
	/* matrix with row and column headers: labels travel as data, not as script text */
	fputs("src\\dst", dat);
	for (size_t h = 0; h < n; h++) {
		fputc(' ', dat);
		heat_label(dat, &hosts[h]);
	}
	fputs("\n", dat);
	for (size_t r = 0; r < n; r++) {
		heat_label(dat, &hosts[r]);
		for (size_t k = 0; k < n; k++)
			fprintf(dat, isnan(cell[r * n + k]) ? " NaN" : " %.3f", cell[r * n + k]);
		fputs("\n", dat);
	}
	fclose(dat);
	dat = open_in(c, "heatmap_none.dat");
	if (!dat)
		goto cleanup;
	for (size_t r = 0; r < n; r++)
		for (size_t k = 0; k < n; k++)
			if (isnan(cell[r * n + k]))
				fprintf(dat, "%zu %zu\n", k, r), n_none++;
	fclose(dat);
	dat = NULL;
	gp = open_in(c, "heatmap.gp");
	if (!gp)
		goto cleanup;
	int size = 300 + 24 * (int)n;
	script_head(c, gp, "heatmap", size + 220, size);
	fputs("set title 'p99 ACK latency (us), source (rows) x destination (columns), hosts by leaf'\n"
	      "unset grid\nset xtics rotate by 90 right font ',8'\nset ytics font ',8'\nset yrange [] reverse\n"
	      "set palette defined (0 '#1a9850', 0.5 '#fee08b', 1 '#d73027')\nset size ratio -1\n"
	      "set cblabel 'p99 ACK latency (us)'\nset logscale cb\nset key below\n", gp);
	heat_cbtics(gp, lo < hi ? lo : hi / 2, hi);
	fputs("plot 'heatmap.dat' matrix rowheaders columnheaders using 1:2:3 with image pixels notitle", gp);
	if (n_none)
		fputs(", 'heatmap_none.dat' using 1:2:(0.5):(0.5) with boxxy fs pattern 4 lc rgb '#777777'"
		      " title 'no ACK samples (no traffic, or none acknowledged)'", gp);
	fputs("\n", gp);
	snprintf(caption, sizeof(caption),
		 "p99 ACK latency of every source (row) to destination (column) host pair%s, hosts sorted by leaf; hatched grey: no ACK samples for that pair, which is not the same as healthy (green).",
		 d->n_hosts > n ? " (the first hosts only)" : "");
	finish_chart(c, gp, "heatmap", "p99 ACK latency heat map", caption, size + 220, size);
cleanup:
	if (dat)
		fclose(dat);
	sqlite3_finalize(st);
	free(cell);
	free(hosts);
}

/*
 * Move every file of the private work folder into charts/ (renameat replaces an entry,
 * symbolic link or not, and never writes through it), then remove the work folder.
 */
static void publish_charts(struct chart_ctx *c, int charts_fd)
{
	int fd = dup(c->work_fd);
	DIR *w = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!w) {
		if (fd >= 0)
			close(fd);
		snprintf(c->err, sizeof(c->err), "%s/%s: %s", c->chart_dir, c->work_name, strerror(errno));
		return;
	}
	while ((e = readdir(w))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (renameat(c->work_fd, e->d_name, charts_fd, e->d_name)) {
			snprintf(c->err, sizeof(c->err), "%s/%s: %s", c->chart_dir, e->d_name, output_strerror(errno));
			unlinkat(c->work_fd, e->d_name, 0);
		}
	}
	closedir(w);
	if (unlinkat(charts_fd, c->work_name, AT_REMOVEDIR))
		snprintf(c->err, sizeof(c->err), "%s/%s: %s", c->chart_dir, c->work_name, strerror(errno));
}

int report_charts_render(const struct report_data *d, int dirfd, const char *dir, bool png,
			 struct report_chart *charts, char *err, size_t errlen)
{
	struct chart_ctx c = { .d = d, .png = png, .charts = charts, .work_fd = -1 };
	char chart_dir[4096];
	int psn_charts = 0, charts_fd;

	if (!gnuplot_available()) {
		snprintf(err, errlen, "gnuplot not found: charts skipped (install gnuplot-nox)");
		return -1;
	}
	snprintf(chart_dir, sizeof(chart_dir), "%s/charts", dir);
	c.chart_dir = chart_dir;
	charts_fd = output_subdir_open(dirfd, "charts", 0750);
	if (charts_fd < 0) {
		snprintf(err, errlen, "%s: %s", chart_dir, output_strerror(charts_fd));
		return -1;
	}
	/* gnuplot opens its output by name and follows links: it writes only in a new
	 * folder of ours, whose files are renamed into charts/ at the end. */
	c.work_fd = output_private_dir(charts_fd, ".render", c.work_name, sizeof(c.work_name));
	if (c.work_fd < 0) {
		snprintf(err, errlen, "%s: cannot create a work folder: %s", chart_dir, strerror(-c.work_fd));
		close(charts_fd);
		return -1;
	}
	/* The same query time limit as the load: a chart's query cannot hang the report. */
	if (report_db_open(d->db_path, d->query_timeout_s, &c.db, err, errlen)) {
		c.n = -1;
		goto cleanup;
	}
	/* Windows start on window boundaries, before the first packet: take the earlier. */
	chart_origin_ns = (int64_t)d->first_ns;
	{
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(c.db, "SELECT min(start_ns) FROM qp_window", -1, &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
			    sqlite3_column_int64(st, 0) < chart_origin_ns)
				chart_origin_ns = sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
	}
	choose_time_unit(d);
	chart_latency_cdf(&c);
	chart_latency_time(&c);
	/* Each suspected subject over time: the alerts, or the first notice when there is none. */
	for (size_t i = 0, k = 0; i < d->n_findings && k < 2; i++)
		if (d->findings[i].level[0] == 'a' || (!d->n_alerts && i == 0))
			chart_suspect_time(&c, &d->findings[i], (int)++k);
	for (size_t i = 0; i < d->n_flows && psn_charts < 2; i++) {
		const struct report_flow *f = &d->flows[i];
		if (f->retransmitted || f->naks_psn_seq || f->rnr_naks || f->cnps || (i == 0 && f->ack_samples))
			chart_psn_time(&c, f, ++psn_charts);
	}
	chart_window_totals(&c);
	chart_heatmap(&c);
cleanup:
	sqlite3_close(c.db);
	publish_charts(&c, charts_fd);
	close(c.work_fd);
	close(charts_fd);
	if (c.err[0])
		fprintf(stderr, "agentxdp-report: warning: %s\n", c.err);
	return c.n;
}
