/* report_render.c: the report's words and tables, as text, markdown and HTML. */
#include "lib/report/report_render.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/report/report_fabric.h"
#include "lib/util/sanitize.h"

const char *format_time_ns(uint64_t ns, char *buf, size_t len)
{
	time_t secs = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char day[32];

	if (!ns) {
		snprintf(buf, len, "-");
		return buf;
	}
	gmtime_r(&secs, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06" PRIu64 " UTC", day, (uint64_t)((ns % 1000000000ull) / 1000));
	return buf;
}

int html_escape(struct text_buf *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			text_buf_puts(out, "&amp;");
			break;
		case '<':
			text_buf_puts(out, "&lt;");
			break;
		case '>':
			text_buf_puts(out, "&gt;");
			break;
		case '"':
			text_buf_puts(out, "&quot;");
			break;
		case '\'':
			text_buf_puts(out, "&#39;");
			break;
		default:
			text_buf_putc(out, *s);
		}
	}
	return out->failed ? -1 : 0;
}

/*
 * Markdown: a backslash before each character CommonMark could read as markup, or as the end
 * of a table cell ('|').
 */
static const char *md_escape(char *buf, size_t len, const char *s)
{
	size_t o = 0;

	for (; s && *s && o + 2 < len; s++) {
		if (strchr("\\`*_[]<>|#!&~", *s))
			buf[o++] = '\\';
		buf[o++] = *s;
	}
	buf[o] = '\0';
	return buf;
}

/*
 * Text from the database or the command line (paths, names, findings) for the summary: made
 * safe for a terminal by the one sanitizer (controls, C1, bidi overrides and bad UTF-8 become
 * visible escapes), then escaped for markdown.
 */
#define CELL_LEN (2 * SANITIZE_BUF_LEN(512))
static const char *cell_text(char *buf, size_t len, const char *s, bool md)
{
	char safe[SANITIZE_BUF_LEN(512)];

	if (!md)
		return sanitize_text(s, buf, len);
	return md_escape(buf, len, sanitize_text(s, safe, sizeof(safe)));
}
#define CELL(i, text) cell_text(cell[i], CELL_LEN, (text), md)

static double rate_per_1000(uint64_t events, uint64_t packets)
{
	return packets ? 1000.0 * (double)events / (double)packets : 0;
}

static double duration_s(const struct report_data *d)
{
	return d->last_ns > d->first_ns ? (double)(d->last_ns - d->first_ns) / 1e9 : 0;
}

/* The one-paragraph verdict, the same words in every format. */
static void verdict_text(struct text_buf *out, const struct report_data *d, bool md)
{
	char when[64], cell[3][CELL_LEN], problem[512];

	if (!d->n_alerts && report_decode_problem(d, problem, sizeof(problem))) {
		text_buf_puts(out, problem);
		return;
	}
	if (!d->n_alerts) {
		/* An all-clear says what it could not judge: latency on under half the flows,
		 * localize_coverage_partial()'s rule, read here from the database's meta (the
		 * report does not link the analysis). */
		if (d->latency_flows && 2 * d->latency_judged < d->latency_flows)
			text_buf_printf(out,
					"No slow or lossy link found in what could be judged. Checked %" PRIu64
					" flows, %" PRIu64 " packets over %.3f s: retransmissions, NAKs, timeouts,"
					" RNR NAKs, CNPs and ECN marks; ACK latency on only %" PRIu64 " of %" PRIu64
					" requester flows, the others carrying fewer than %" PRIu64 " ACK, READ or completion"
					" samples (a longer trace gives each flow more).",
					d->total_flows, d->total_packets, duration_s(d), d->latency_judged,
					d->latency_flows, d->latency_min_samples);
		else
			text_buf_printf(out,
					"No slow or lossy link found. Checked %" PRIu64 " flows, %" PRIu64
					" packets over %.3f s: ACK latency against the population (median/MAD),"
					" retransmissions, NAKs, timeouts, RNR NAKs, CNPs and ECN marks.",
					d->total_flows, d->total_packets, duration_s(d));
		if (d->n_findings)
			text_buf_printf(out, " %zu notice%s: what ordinary traffic explains (listed below).",
					d->n_findings, d->n_findings == 1 ? "" : "s");
		return;
	}
	const struct report_finding *f = &d->findings[0];
	text_buf_printf(out, "%s %s: %s", CELL(0, f->kind), CELL(1, f->subject), CELL(2, f->severity_text));
	if (f->direction[0])
		text_buf_printf(out, " (direction %s)", CELL(0, f->direction));
	text_buf_printf(out, "; confidence %.0f%%; %u flows hurt", f->confidence * 100, f->flows_hurt);
	if (f->onset_ns)
		text_buf_printf(out, "; since %s", format_time_ns(f->onset_ns, when, sizeof(when)));
	text_buf_puts(out, ".");
}

/* "8.4 (1.0x)": a p50 and its ratio to its peers'; "8.4" without a ratio, "-" without data. */
static const char *p50_vs(char *buf, size_t len, bool have, double p50_us, double ratio)
{
	if (!have)
		snprintf(buf, len, "-");
	else if (ratio > 0)
		snprintf(buf, len, "%.1f (%.1fx)", p50_us, ratio);
	else
		snprintf(buf, len, "%.1f", p50_us);
	return buf;
}

/* The per-host table of the text and markdown summary. */
static void summary_hosts(struct text_buf *out, const struct report_data *d, bool md, size_t top_n)
{
	char cell[1][CELL_LEN], p50[64];

	text_buf_puts(out, md ? "\n## Hosts, those named by findings first, then worst p99\n\n| host | flows | sent pkts | received pkts | p50 us (x others) | worst p99 us | retx | NAKs | CNPs | ECN CE | findings |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
			      : "\nHOSTS (named by findings first, then worst p99; p50 against the median of the other hosts)\n  host              flows      sent  received  p50_us (x others) p99_us   retx   naks   cnps    ecn findings\n");
	for (size_t i = 0; i < d->n_hosts && i < top_n; i++) {
		const struct report_host *h = &d->hosts[i];
		text_buf_printf(out,
				md ? "| %s | %u | %" PRIu64 " | %" PRIu64 " | %s | %.1f | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %u |\n"
				   : "  %-16s %6u %9" PRIu64 " %9" PRIu64 " %17s %7.1f %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %8u\n",
				CELL(0, h->host), h->flows, h->sent_packets, h->received_packets,
				p50_vs(p50, sizeof(p50), h->ack_samples, h->p50_us, h->p50_vs_others), h->p99_us, h->retransmitted, h->naks, h->cnps, h->ecn_ce,
				h->findings);
	}
}

/* Links named by findings first, then the most retransmissions per packet; topology order last. */
static int link_rank_order(const void *a, const void *b)
{
	const struct report_link *x = *(const struct report_link *const *)a, *y = *(const struct report_link *const *)b;
	double rx = x->packets > 0 ? x->loss / x->packets : 0, ry = y->packets > 0 ? y->loss / y->packets : 0;

	if (x->alerts != y->alerts)
		return x->alerts > y->alerts ? -1 : 1;
	if (x->notices != y->notices)
		return x->notices > y->notices ? -1 : 1;
	if (rx != ry)
		return rx > ry ? -1 : 1;
	if (x->p50_vs_peers != y->p50_vs_peers)
		return x->p50_vs_peers > y->p50_vs_peers ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The links in report order (a malloc'ed array of pointers, NULL when none or out of memory). */
static const struct report_link **ranked_links(const struct report_data *d)
{
	const struct report_link **r = d->n_links ? calloc(d->n_links, sizeof(*r)) : NULL;

	for (size_t i = 0; r && i < d->n_links; i++)
		r[i] = &d->links[i];
	if (r)
		qsort(r, d->n_links, sizeof(*r), link_rank_order);
	return r;
}

static void summary_links(struct text_buf *out, const struct report_data *d, bool md, size_t top_n)
{
	const struct report_link **r = ranked_links(d);
	char cell[2][CELL_LEN], p50[64];

	if (!r) {
		out->failed |= d->n_links > 0;
		return;
	}
	text_buf_puts(out, md ? "\n## Links, those named by findings first\n\n| link | kind | flows | packets | p50 us (x peers) | p99 us | retx | marks | findings | state |\n|---|---|---|---|---|---|---|---|---|---|\n"
			      : "\nLINKS (named by findings first, then retransmissions per packet; flows weighted by their share of the link)\n  link                       kind        flows   packets  p50_us (x peers)  p99_us     retx    marks findings state\n");
	for (size_t i = 0; i < d->n_links && i < top_n; i++) {
		const struct report_link *l = r[i];

		text_buf_printf(out,
				md ? "| %s | %s | %u | %.0f | %s | %.1f | %.1f | %.1f | %u | %s |\n"
				   : "  %-26s %-10s %6u %9.0f %17s %7.1f %8.1f %8.1f %8u %s\n",
				CELL(0, l->name), CELL(1, l->kind), l->flows, l->packets, p50_vs(p50, sizeof(p50), l->p50_us > 0, l->p50_us, l->p50_vs_peers), l->p99_us,
				l->loss, l->marks, l->alerts + l->notices, report_link_state_name(report_link_state(l)));
	}
	free(r);
}

static void html_td(struct text_buf *out, const char *cls, const char *text);

/* An ERSPAN III session's clock against the collector's, as agentxdp-analyze words it. */
static const char *mirror_clock_text(const struct report_mirror_clock *c, char *buf, size_t len)
{
	snprintf(buf, len,
		 "mirror clock: collector - switch %s%.3f us, drift %.3f ppm, mirror path jitter %.3f us"
		 " (%" PRIu64 " ERSPAN III timestamps)",
		 c->absolute ? "" : "(counter clock, no epoch) ", c->offset_us, c->drift_ppm, c->jitter_us,
		 c->samples);
	return buf;
}

/* Per link: packets, flows, latency against its peers, loss, marks, findings. */
static void html_links(struct text_buf *out, const struct report_data *d, size_t top_n)
{
	const struct report_link **r = ranked_links(d);
	char p50[64];

	if (!r) {
		out->failed |= d->n_links > 0;
		return;
	}
	text_buf_puts(out, "<h2>Links, those named by findings first</h2>\n<p>Over the flows that cross each link, each "
			   "weighted by its share of it (1 on a paths.csv path, 1/N over N ECMP paths); p50 and p99 are the "
			   "weighted means of those flows' ACK latency, p50 against the median of the other links of its kind.</p>\n"
			   "<table id=\"links\"><tr><th class=\"l\">link</th><th class=\"l\">kind</th><th>flows</th>"
			   "<th>packets</th><th>p50 &micro;s (x peers)</th><th>p99 &micro;s</th><th>retransmitted</th>"
			   "<th>ECN CE + CNPs</th><th>findings naming it</th><th class=\"l\">state</th></tr>\n");
	for (size_t i = 0; i < d->n_links && i < top_n; i++) {
		const struct report_link *l = r[i];

		text_buf_printf(out, "<tr%s>", l->alerts + l->notices ? " class=\"named\"" : "");
		html_td(out, "l", l->name);
		html_td(out, "l", l->kind);
		text_buf_printf(out, "<td>%u</td><td>%.0f</td>", l->flows, l->packets);
		html_td(out, NULL, p50_vs(p50, sizeof(p50), l->p50_us > 0, l->p50_us, l->p50_vs_peers));
		text_buf_printf(out, "<td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%u</td>", l->p99_us, l->loss, l->marks,
				l->alerts + l->notices);
		html_td(out, "l", report_link_state_name(report_link_state(l)));
		text_buf_puts(out, "</tr>\n");
	}
	text_buf_puts(out, "</table>\n");
	free(r);
}

int report_render_summary(struct text_buf *out, const struct report_data *d, enum report_format fmt,
			  size_t top_n)
{
	bool md = fmt == REPORT_MARKDOWN;
	char t1[64], t2[64], cell[5][CELL_LEN];

	text_buf_puts(out, md ? "# AgentXDP incident report\n\n" : "AgentXDP incident report\n");
	text_buf_printf(out, md ? "Database: %s\n\n" : "database: %s\n", CELL(0, d->db_path));

	text_buf_puts(out, md ? "## Verdict\n\n" : "\nVERDICT\n  ");
	verdict_text(out, d, md);
	text_buf_puts(out, "\n");
	for (size_t i = 0; i < d->n_findings && i < top_n; i++) {
		const struct report_finding *f = &d->findings[i];
		if (i == 0)
			text_buf_puts(out, md ? "\n| rank | level | kind | subject | direction | severity | confidence | onset | flows |\n|---|---|---|---|---|---|---|---|---|\n"
					      : "\n  rank level  kind       subject                        severity                                  conf  flows\n");
		if (md)
			text_buf_printf(out, "| %d | %s | %s | %s | %s | %s | %.2f | %s | %u |\n", f->rank,
					CELL(4, f->level), CELL(0, f->kind), CELL(1, f->subject), CELL(2, f->direction),
					CELL(3, f->severity_text), f->confidence,
					format_time_ns(f->onset_ns, t1, sizeof(t1)), f->flows_hurt);
		else
			text_buf_printf(out, "  %4d %-6s %-10s %-30s %-41s %4.2f %6u\n", f->rank, CELL(4, f->level),
					CELL(0, f->kind), CELL(1, f->subject), CELL(3, f->severity_text), f->confidence,
					f->flows_hurt);
	}

	text_buf_puts(out, md ? "\n## Capture health\n\n" : "\nCAPTURE HEALTH\n");
	for (size_t i = 0; i < d->n_captures; i++) {
		const struct report_capture *c = &d->captures[i];
		text_buf_printf(out,
				"%s%s: %" PRIu64 " frames, %" PRIu64 " RoCE, %" PRIu64
				" malformed, %s to %s; capture lost %s%s%s\n",
				md ? "- " : "  ", CELL(0, c->path), c->frames, c->roce_packets, c->malformed,
				format_time_ns(c->first_ns, t1, sizeof(t1)),
				format_time_ns(c->last_ns, t2, sizeof(t2)),
				c->has_drop_counters ? "" : "unknown (no drop counters in the file)",
				c->has_drop_counters ? (c->capture_dropped ? "packets: " : "nothing") : "",
				c->truncated ? "; TRUNCATED" : "");
		if (c->has_drop_counters && c->capture_dropped)
			text_buf_printf(out, "%s  %" PRIu64 " packets dropped by the capture\n",
					md ? "" : "  ", c->capture_dropped);
		if (c->truncated && c->stop_reason[0])
			text_buf_printf(out, "%s  stopped: %s\n", md ? "" : "  ", CELL(0, c->stop_reason));
		if (c->clock.samples) {
			char clk[200];

			mirror_clock_text(&c->clock, clk, sizeof(clk));
			text_buf_printf(out, "%s  %s\n", md ? "" : "  ", clk);
		}
	}
	text_buf_printf(out,
			"%stotals: %" PRIu64 " flows, %" PRIu64 " packets, %" PRIu64
			" bytes; %" PRIu64 " retransmitted, %" PRIu64 " NAKs, %" PRIu64
			" RNR NAKs, %" PRIu64 " timeouts, %" PRIu64 " CNPs, %" PRIu64 " ECN CE\n",
			md ? "- " : "  ", d->total_flows, d->total_packets, d->total_bytes,
			d->total_retransmitted, d->total_naks, d->total_rnr, d->total_timeouts,
			d->total_cnps, d->total_ecn_ce);

	summary_links(out, d, md, top_n);
	summary_hosts(out, d, md, top_n);
	text_buf_puts(out, md ? "\n## Host pairs, worst flow p99 ACK latency first\n\n| src | dst | flows | packets | worst flow p50 us | worst flow p99 us | retx | NAKs | CNPs |\n|---|---|---|---|---|---|---|---|---|\n"
			      : "\nHOST PAIRS (worst flow p99 ACK latency first)\n  src              dst               flows   packets  max_p50_us max_p99_us   retx   naks   cnps\n");
	for (size_t i = 0; i < d->n_pairs && i < top_n; i++) {
		const struct report_pair *p = &d->pairs[i];
		text_buf_printf(out,
				md ? "| %s | %s | %u | %" PRIu64 " | %.1f | %.1f | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " |\n"
				   : "  %-16s %-16s %6u %9" PRIu64 " %11.1f %10.1f %6" PRIu64 " %6" PRIu64 " %6" PRIu64 "\n",
				CELL(0, p->src), CELL(1, p->dst), p->flows, p->packets, p->p50_us, p->p99_us, p->retransmitted,
				p->naks, p->cnps);
	}

	text_buf_printf(out, md ? "\n## Flows, worst first (top %zu of %" PRIu64 ")\n\n| qp id | src | dst | QPN | sport | packets | p50 us | p99 us | retx/1k | NAKs | timeouts | CNPs |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n"
				: "\nFLOWS (worst first, top %zu of %" PRIu64 ")\n     id src              dst              qpn      sport   packets    p50_us    p99_us retx/1k  naks  tmo  cnps\n",
			top_n < d->n_flows ? top_n : d->n_flows, d->total_flows);
	for (size_t i = 0; i < d->n_flows && i < top_n; i++) {
		const struct report_flow *f = &d->flows[i];
		text_buf_printf(out,
				md ? "| %" PRId64 " | %s | %s | 0x%06x | %u | %" PRIu64 " | %.1f | %.1f | %.2f | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " |\n"
				   : "  %5" PRId64 " %-16s %-16s 0x%06x %5u %9" PRIu64 " %9.1f %9.1f %7.2f %5" PRIu64 " %4" PRIu64 " %5" PRIu64 "\n",
				f->id, CELL(0, f->src), CELL(1, f->dst), f->dst_qpn, f->udp_sport, f->packets, f->p50_us,
				f->p99_us, rate_per_1000(f->retransmitted, f->packets),
				f->naks_psn_seq + f->naks_other + f->rnr_naks, f->timeouts, f->cnps);
	}
	return out->failed ? -1 : 0;
}

static const char html_style[] =
	"body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}"
	"h1{margin-bottom:0}.sub{color:#666}"
	".verdict{padding:1em;border-radius:6px;font-size:1.15em;margin:1em 0}"
	".bad{background:#fde8e8;border:1px solid #e0a0a0}.warn{background:#fff4d6;border:1px solid #e0c070}.ok{background:#e8f6e8;border:1px solid #a0d0a0}"
	"table{border-collapse:collapse;margin:0.5em 0 1.5em 0;font-size:0.9em}"
	"th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}"
	"th{background:#f0f0f0}td.l,th.l{text-align:left}tr.named td{background:#fde8e8}"
	"figure{margin:1em 0}figcaption{color:#555;font-size:0.9em}"
	"img{max-width:100%;border:1px solid #ddd}"
	"details pre{white-space:pre-wrap;font-size:0.8em;background:#f8f8f8;padding:0.5em}";

static void html_td(struct text_buf *out, const char *cls, const char *text)
{
	text_buf_printf(out, "<td%s>", cls ? " class=\"l\"" : "");
	html_escape(out, text);
	text_buf_puts(out, "</td>");
}

/* Title, time span and the verdict. */
static void html_head(struct text_buf *out, const struct report_data *d)
{
	char t1[64], t2[64];
	struct text_buf verdict = { 0 };

	text_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			   "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self'; style-src 'unsafe-inline'\">\n"
			   "<title>AgentXDP incident report</title><style>");
	text_buf_puts(out, html_style);
	text_buf_puts(out, "</style></head><body>\n<h1>AgentXDP incident report</h1>\n<p class=\"sub\">");
	html_escape(out, d->db_path);
	text_buf_printf(out, " &middot; %s to %s &middot; schema %d</p>\n",
			format_time_ns(d->first_ns, t1, sizeof(t1)), format_time_ns(d->last_ns, t2, sizeof(t2)),
			d->schema_version);

	verdict_text(&verdict, d, false);
	/* Green only when something was decoded and judged healthy. */
	text_buf_printf(out, "<h2>Verdict</h2>\n<div class=\"verdict %s\" id=\"verdict\">",
			d->n_alerts ? "bad" : report_decode_problem(d, t1, sizeof(t1)) ? "warn" : "ok");
	html_escape(out, verdict.data ? verdict.data : "");
	text_buf_puts(out, "</div>\n");
	if (verdict.failed)
		out->failed = true; /* an empty verdict would read as "no finding" */
	text_buf_free(&verdict);
}

static bool flow_is_listed(const struct report_data *d, const char *id_text)
{
	char *end;
	long long id = strtoll(id_text, &end, 10);

	if (end == id_text || *end)
		return false;
	for (size_t i = 0; i < d->n_flows; i++)
		if (d->flows[i].id == id)
			return true;
	return false;
}

#define EVIDENCE_MAX_COLUMNS 24

/* The flows a finding lists, one row each, the columns the first flow's keys. */
static void html_evidence_flows(struct text_buf *out, const struct report_data *d, int rank, size_t first,
				size_t end)
{
	const char *cols[EVIDENCE_MAX_COLUMNS];
	size_t n_cols = 0;
	int flow = -1;

	for (size_t i = first; i < end && d->evidence[i].flow == d->evidence[first].flow; i++)
		if (n_cols < EVIDENCE_MAX_COLUMNS)
			cols[n_cols++] = d->evidence[i].key;
	text_buf_printf(out, "<table class=\"evidence-flows\" id=\"evidence-%d-flows\"><tr>", rank);
	for (size_t c = 0; c < n_cols; c++) {
		text_buf_puts(out, "<th>");
		html_escape(out, cols[c]);
		text_buf_puts(out, "</th>");
	}
	text_buf_puts(out, "</tr>\n");
	for (size_t i = first; i < end; i++) {
		if (d->evidence[i].flow == flow)
			continue;
		flow = d->evidence[i].flow;
		text_buf_puts(out, "<tr>");
		for (size_t c = 0; c < n_cols; c++) {
			const char *v = "";
			for (size_t k = i; k < end && d->evidence[k].flow == flow; k++)
				if (!strcmp(d->evidence[k].key, cols[c]))
					v = d->evidence[k].value;
			text_buf_puts(out, "<td>");
			if (!strcmp(cols[c], "id") && flow_is_listed(d, v)) {
				text_buf_puts(out, "<a href=\"#qp-");
				html_escape(out, v);
				text_buf_puts(out, "\">");
				html_escape(out, v);
				text_buf_puts(out, "</a>");
			} else {
				html_escape(out, v);
			}
			text_buf_puts(out, "</td>");
		}
		text_buf_puts(out, "</tr>\n");
	}
	text_buf_puts(out, "</table>\n");
}

/* A finding's evidence as tables: its numbers, then the flows it lists (linked to the flow table). */
static void html_evidence(struct text_buf *out, const struct report_data *d, int rank)
{
	size_t first = 0, end, flows;

	while (first < d->n_evidence && d->evidence[first].rank != rank)
		first++;
	for (end = first; end < d->n_evidence && d->evidence[end].rank == rank;)
		end++;
	if (first == end)
		return;
	text_buf_printf(out, "<h3 id=\"evidence-%d\">Evidence for finding %d</h3>\n", rank, rank);
	text_buf_printf(out, "<table class=\"evidence\" id=\"evidence-%d-numbers\"><tr><th class=\"l\">what</th>"
			     "<th class=\"l\">value</th></tr>\n", rank);
	for (flows = first; flows < end && d->evidence[flows].flow < 0; flows++) {
		text_buf_puts(out, "<tr>");
		html_td(out, "l", d->evidence[flows].key);
		html_td(out, "l", d->evidence[flows].value);
		text_buf_puts(out, "</tr>\n");
	}
	text_buf_puts(out, "</table>\n");
	if (flows < end) {
		text_buf_puts(out, "<p>The flows it lists (<code>id</code> is the flow's qp id; linked when the flow "
				   "table below shows it):</p>\n");
		html_evidence_flows(out, d, rank, flows, end);
	}
}

/* The findings table and each finding's evidence. */
static void html_findings(struct text_buf *out, const struct report_data *d, size_t top_n)
{
	char t1[64];

	if (!d->n_findings)
		return;
	text_buf_puts(out, "<table id=\"findings\"><tr><th>rank</th><th class=\"l\">level</th><th class=\"l\">kind</th><th class=\"l\">subject</th>"
			   "<th class=\"l\">direction</th><th class=\"l\">severity</th><th>confidence</th>"
			   "<th class=\"l\">onset</th><th>flows hurt</th></tr>\n");
	for (size_t i = 0; i < d->n_findings && i < top_n; i++) {
		const struct report_finding *f = &d->findings[i];
		text_buf_printf(out, "<tr><td>%d</td>", f->rank);
		html_td(out, "l", f->level);
		html_td(out, "l", f->kind);
		html_td(out, "l", f->subject);
		html_td(out, "l", f->direction);
		html_td(out, "l", f->severity_text);
		text_buf_printf(out, "<td>%.2f</td>", f->confidence);
		html_td(out, "l", format_time_ns(f->onset_ns, t1, sizeof(t1)));
		text_buf_printf(out, "<td>%u</td></tr>\n", f->flows_hurt);
	}
	text_buf_puts(out, "</table>\n");
	for (size_t i = 0; i < d->n_findings && i < top_n; i++) {
		html_evidence(out, d, d->findings[i].rank);
		text_buf_printf(out, "<details><summary>Evidence for finding %d as stored (JSON)</summary><pre>",
				d->findings[i].rank);
		html_escape(out, d->findings[i].evidence);
		text_buf_puts(out, "</pre></details>\n");
	}
}

/* One row per trace read, then the totals. */
static void html_captures(struct text_buf *out, const struct report_data *d)
{
	char t1[64], t2[64], num[64];

	text_buf_puts(out, "<h2>Capture health</h2>\n<table id=\"captures\"><tr><th class=\"l\">trace</th><th>frames</th>"
			   "<th>RoCE</th><th>malformed</th><th>lost by capture</th><th class=\"l\">from</th>"
			   "<th class=\"l\">to</th><th class=\"l\">status</th></tr>\n");
	for (size_t i = 0; i < d->n_captures; i++) {
		const struct report_capture *c = &d->captures[i];
		text_buf_puts(out, "<tr>");
		html_td(out, "l", c->path);
		text_buf_printf(out, "<td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td>", c->frames,
				c->roce_packets, c->malformed);
		if (c->has_drop_counters)
			snprintf(num, sizeof(num), "%" PRIu64, c->capture_dropped);
		else
			snprintf(num, sizeof(num), "unknown");
		html_td(out, NULL, num);
		html_td(out, "l", format_time_ns(c->first_ns, t1, sizeof(t1)));
		html_td(out, "l", format_time_ns(c->last_ns, t2, sizeof(t2)));
		html_td(out, "l", c->truncated ? (c->stop_reason[0] ? c->stop_reason : "truncated") : "complete");
		text_buf_puts(out, "</tr>\n");
		if (c->clock.samples) {
			char clk[200];

			mirror_clock_text(&c->clock, clk, sizeof(clk));
			text_buf_puts(out, "<tr class=\"clock\"><td class=\"l\" colspan=\"8\">");
			html_escape(out, clk);
			text_buf_puts(out, "</td></tr>\n");
		}
	}
	text_buf_printf(out,
			"</table>\n<p>%" PRIu64 " flows, %" PRIu64 " packets, %" PRIu64 " bytes; %" PRIu64
			" retransmitted, %" PRIu64 " NAKs, %" PRIu64 " RNR NAKs, %" PRIu64 " timeouts, %" PRIu64
			" CNPs, %" PRIu64 " ECN CE marks, %" PRIu64 " malformed packets.</p>\n",
			d->total_flows, d->total_packets, d->total_bytes, d->total_retransmitted,
			d->total_naks, d->total_rnr, d->total_timeouts, d->total_cnps, d->total_ecn_ce,
			d->total_malformed);
}

static void html_charts(struct text_buf *out, const struct report_chart *charts, size_t n_charts)
{
	text_buf_puts(out, "<h2>Charts</h2>\n");
	if (!n_charts)
		text_buf_puts(out, "<p>No charts (gnuplot missing, or no latency samples).</p>\n");
	for (size_t i = 0; i < n_charts; i++) {
		text_buf_puts(out, "<figure><img src=\"");
		html_escape(out, charts[i].file);
		text_buf_printf(out, "\" width=\"%d\" height=\"%d\" alt=\"", charts[i].width, charts[i].height);
		html_escape(out, charts[i].title);
		text_buf_puts(out, "\"><figcaption>");
		html_escape(out, charts[i].caption);
		text_buf_puts(out, "</figcaption></figure>\n");
	}
}

/* Per host: packets, flows, latency against the other hosts, loss and marks, findings. */
static void html_hosts(struct text_buf *out, const struct report_data *d, size_t top_n)
{
	char p50[64];

	text_buf_puts(out, "<h2>Hosts, those named by findings first</h2>\n<p>Over the flows each host sends or receives; "
			   "p50 is the sample-weighted mean of its flows' p50 ACK latency, against the median of the other hosts'.</p>\n"
			   "<table id=\"hosts\"><tr><th class=\"l\">host</th><th>flows</th><th>packets sent</th><th>packets received</th>"
			   "<th>p50 &micro;s (x others)</th><th>worst p99 &micro;s</th><th>retransmitted</th><th>NAKs</th><th>CNPs</th>"
			   "<th>ECN CE</th><th>findings naming it</th></tr>\n");
	for (size_t i = 0; i < d->n_hosts && i < top_n; i++) {
		const struct report_host *h = &d->hosts[i];
		text_buf_printf(out, "<tr%s>", h->findings ? " class=\"named\"" : "");
		html_td(out, "l", h->host);
		text_buf_printf(out, "<td>%u</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td>", h->flows, h->sent_packets,
				h->received_packets);
		html_td(out, NULL, p50_vs(p50, sizeof(p50), h->ack_samples, h->p50_us, h->p50_vs_others));
		text_buf_printf(out,
				"<td>%.1f</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
				"</td><td>%u</td></tr>\n",
				h->p99_us, h->retransmitted, h->naks, h->cnps, h->ecn_ce, h->findings);
	}
	text_buf_puts(out, "</table>\n");
}

static void html_pairs(struct text_buf *out, const struct report_data *d, size_t top_n)
{
	text_buf_puts(out, "<h2>Host pairs, worst flow p99 ACK latency first</h2>\n<table id=\"pairs\"><tr><th class=\"l\">src</th>"
			   "<th class=\"l\">dst</th><th>flows</th><th>packets</th><th>worst flow p50 &micro;s</th><th>worst flow p99 &micro;s</th>"
			   "<th>retransmitted</th><th>NAKs</th><th>CNPs</th><th>ECN CE</th></tr>\n");
	for (size_t i = 0; i < d->n_pairs && i < top_n; i++) {
		const struct report_pair *p = &d->pairs[i];
		text_buf_puts(out, "<tr>");
		html_td(out, "l", p->src);
		html_td(out, "l", p->dst);
		text_buf_printf(out,
				"<td>%u</td><td>%" PRIu64 "</td><td>%.1f</td><td>%.1f</td><td>%" PRIu64
				"</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n",
				p->flows, p->packets, p->p50_us, p->p99_us, p->retransmitted, p->naks, p->cnps,
				p->ecn_ce);
	}
	text_buf_puts(out, "</table>\n");
}

/* The worst flows and the footer. */
static void html_flows(struct text_buf *out, const struct report_data *d, size_t top_n)
{
	text_buf_printf(out, "<h2>Flows, worst first (top %zu of %" PRIu64 ")</h2>\n",
			top_n < d->n_flows ? top_n : d->n_flows, d->total_flows);
	text_buf_puts(out, "<p>Each row is one direction of a queue pair; <code>qp id</code> is the row id in the "
			   "database's <code>qp</code> table.</p>\n<table id=\"flows\"><tr><th>qp id</th><th class=\"l\">src</th>"
			   "<th class=\"l\">dst</th><th>QPN</th><th>UDP sport</th><th class=\"l\">transport</th><th>packets</th>"
			   "<th>p50 &micro;s</th><th>p99 &micro;s</th><th>max &micro;s</th><th>retransmitted</th>"
			   "<th>NAK seq</th><th>RNR</th><th>timeouts</th><th>CNPs</th><th>ECN CE</th></tr>\n");
	for (size_t i = 0; i < d->n_flows && i < top_n; i++) {
		const struct report_flow *f = &d->flows[i];
		text_buf_printf(out, "<tr id=\"qp-%" PRId64 "\"><td>%" PRId64 "</td>", f->id, f->id);
		html_td(out, "l", f->src);
		html_td(out, "l", f->dst);
		text_buf_printf(out, "<td>0x%06x</td><td>%u</td>", f->dst_qpn, f->udp_sport);
		html_td(out, "l", f->transport);
		text_buf_printf(out,
				"<td>%" PRIu64 "</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%" PRIu64
				"</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
				"</td><td>%" PRIu64 "</td></tr>\n",
				f->packets, f->p50_us, f->p99_us, f->max_us, f->retransmitted, f->naks_psn_seq,
				f->rnr_naks, f->timeouts, f->cnps, f->ecn_ce);
	}
	text_buf_puts(out, "</table>\n<p class=\"sub\">Made by agentxdp-report from the database above; every number is a "
			   "column of its tables (docs/schema.md).</p>\n</body></html>\n");
}

int report_render_html(struct text_buf *out, const struct report_data *d,
		       const struct report_chart *charts, size_t n_charts, size_t top_n)
{
	html_head(out, d);
	report_fabric_html(out, d);
	html_findings(out, d, top_n);
	html_captures(out, d);
	html_charts(out, charts, n_charts);
	html_links(out, d, top_n);
	html_hosts(out, d, top_n);
	html_pairs(out, d, top_n);
	html_flows(out, d, top_n);
	return out->failed ? -1 : 0;
}
