/* export_json.c: the --json summary and the terminal summary of one analysis. */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/export/export.h"
#include "lib/util/sanitize.h"
#include "lib/util/util.h"

static void json_num_or_null(FILE *out, const char *key, uint64_t samples, double v)
{
	fprintf(out, ",\"%s\":", key);
	if (samples && isfinite(v))
		fprintf(out, "%.3f", v);
	else
		fputs("null", out);
}

static void json_flow(FILE *out, const struct flow_stats *f)
{
	char src[64], dst[64];

	fprintf(out, "{\"id\":%" PRIu64 ",\"capture\":%u,\"src\":", f->id, f->vantage + 1);
	json_fput_string(out, addr_str(f->key.src_ip, src, sizeof(src)));
	fputs(",\"dst\":", out);
	json_fput_string(out, addr_str(f->key.dst_ip, dst, sizeof(dst)));
	fprintf(out, ",\"dst_qpn\":%" PRIu32 ",\"udp_sport\":%u,\"transport\":\"%s\",\"role\":\"%s\"",
		f->key.dst_qpn, f->udp_sport, store_transport_name(f->transport), flow_role_name(f->role));
	if (f->peer_id)
		fprintf(out, ",\"peer_qp_id\":%" PRIu64, f->peer_id);
	else
		fputs(",\"peer_qp_id\":null", out);
	fprintf(out,
		",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64
		",\"first_transmissions\":%" PRIu64 ",\"retransmitted_packets\":%" PRIu64
		",\"naks_psn_seq\":%" PRIu64 ",\"naks_other\":%" PRIu64 ",\"rnr_naks\":%" PRIu64
		",\"timeouts\":%" PRIu64 ",\"read_rereads\":%" PRIu64 ",\"cnps\":%" PRIu64 ",\"ecn_ce\":%" PRIu64
		",\"ack_samples\":%" PRIu64,
		f->packets, f->bytes, f->first_ns, f->last_ns, f->first_transmissions,
		f->retransmitted_packets, f->naks_psn_seq, f->naks_other, f->rnr_naks, f->timeouts, f->read_gaps,
		f->cnps, f->ecn_ce, f->ack_samples);
	if (f->ce_acks_timed)
		fprintf(out, ",\"ce_acks_timed\":%" PRIu64 ",\"ce_acks_fast\":%" PRIu64, f->ce_acks_timed,
			f->ce_acks_fast);
	json_num_or_null(out, "ack_latency_p50_us", f->ack_samples, f->ack_latency_p50_us);
	json_num_or_null(out, "ack_latency_p99_us", f->ack_samples, f->ack_latency_p99_us);
	json_num_or_null(out, "ack_latency_max_us", f->ack_samples, f->ack_latency_max_us);
	fprintf(out, ",\"read_samples\":%" PRIu64, f->read_samples);
	json_num_or_null(out, "read_latency_p50_us", f->read_samples, f->read_latency_p50_us);
	json_num_or_null(out, "read_latency_p99_us", f->read_samples, f->read_latency_p99_us);
	fprintf(out, ",\"completion_samples\":%" PRIu64, f->completion_samples);
	json_num_or_null(out, "completion_p50_us", f->completion_samples, f->completion_p50_us);
	json_num_or_null(out, "completion_p99_us", f->completion_samples, f->completion_p99_us);
	fputc('}', out);
}

int export_json(FILE *out, const struct analysis_summary *sum)
{
	const struct qp_tracker_totals *tot = sum->totals;
	uint64_t naks_seq = 0, naks_other = 0, rnr = 0, retx = 0, timeouts = 0, rereads = 0, cnps = 0, ce = 0;

	for (size_t i = 0; i < sum->n_flows; i++) {
		naks_seq += sum->flows[i].naks_psn_seq;
		rereads += sum->flows[i].read_gaps;
		naks_other += sum->flows[i].naks_other;
		rnr += sum->flows[i].rnr_naks;
		retx += sum->flows[i].retransmitted_packets;
		timeouts += sum->flows[i].timeouts;
		cnps += sum->flows[i].cnps;
		ce += sum->flows[i].ecn_ce;
	}
	fprintf(out, "{\"tool\":\"agentxdp-analyze\",\"schema_version\":%d,\"database\":", STORE_SCHEMA_VERSION);
	if (sum->db_path)
		json_fput_string(out, sum->db_path);
	else
		fputs("null", out);
	fputs(",\"captures\":[", out);
	for (size_t i = 0; i < sum->n_captures; i++) {
		const struct store_capture *c = &sum->captures[i];
		const struct trace_health *h = c->health;

		fprintf(out, "%s{\"id\":%zu,\"path\":", i ? "," : "", i + 1);
		json_fput_string(out, c->path);
		fprintf(out,
			",\"frames\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"roce_packets\":%" PRIu64
			",\"malformed_packets\":%" PRIu64 ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64
			",\"capture_dropped\":",
			h->frames, h->bytes, c->roce_packets, c->malformed_packets, h->first_ns, h->last_ns);
		if (h->has_drop_counters)
			fprintf(out, "%" PRIu64, h->capture_dropped);
		else
			fputs("null", out);
		fprintf(out, ",\"truncated\":%s,\"stop_reason\":", h->truncated ? "true" : "false");
		if (h->stop_reason[0])
			json_fput_string(out, h->stop_reason);
		else
			fputs("null", out);
		fprintf(out, ",\"flows\":%" PRIu64 ",\"unpaired_flows\":%" PRIu64 ",\"one_direction\":%s",
			c->flows, c->unpaired_flows, c->one_direction ? "true" : "false");
		/* An ERSPAN III session: its switch clock against the collector's (issue #18). */
		if (c->clock.samples)
			fprintf(out, ",\"mirror_clock\":{\"samples\":%" PRIu64 ",\"absolute\":%s,\"offset_us\":%.3f"
				",\"slope_ppm\":%.3f,\"jitter_us\":%.3f,\"delay_median_us\":%.3f}",
				c->clock.samples, c->clock.absolute ? "true" : "false", c->clock.offset_us,
				c->clock.slope_ppm, c->clock.jitter_us, c->clock.delay_median_us);
		fputc('}', out);
	}
	fprintf(out,
		"],\"totals\":{\"flows\":%zu,\"paired_flows\":%" PRIu64 ",\"packets\":%" PRIu64
		",\"bytes\":%" PRIu64 ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64
		",\"retransmitted_packets\":%" PRIu64 ",\"naks_psn_seq\":%" PRIu64 ",\"naks_other\":%" PRIu64
		",\"rnr_naks\":%" PRIu64 ",\"timeouts\":%" PRIu64 ",\"read_rereads\":%" PRIu64 ",\"cnps\":%" PRIu64
		",\"cnps_unattributed\":%" PRIu64 ",\"ecn_ce\":%" PRIu64 ",\"duplicates\":%" PRIu64
		",\"ts_backwards\":%" PRIu64,
		sum->n_flows, tot->paired_flows, tot->packets, tot->bytes, tot->first_ns, tot->last_ns, retx,
		naks_seq, naks_other, rnr, timeouts, rereads, cnps, tot->cnps_unattributed, ce, tot->duplicates,
		tot->ts_backwards);
	/* Only when it happened: some statistics are incomplete. */
	if (tot->alloc_failures)
		fprintf(out, ",\"alloc_failures\":%" PRIu64, tot->alloc_failures);
	fputs("},\"flows\":[", out);
	for (size_t i = 0; i < sum->n_flows; i++) {
		if (i)
			fputc(',', out);
		fputc('\n', out);
		json_flow(out, &sum->flows[i]);
	}
	fputs("]", out);
	if (sum->coverage)
		fprintf(out, ",\"latency_coverage\":{\"flows\":%zu,\"judged\":%zu,\"min_samples\":%u}",
			sum->coverage->flows, sum->coverage->judged, sum->coverage->min_samples);
	fputs(",\"findings\":[", out);
	for (size_t i = 0; i < sum->n_findings; i++) {
		const struct finding *f = &sum->findings[i];

		fprintf(out, "%s\n{\"rank\":%d,\"level\":\"%s\",\"kind\":\"%s\",\"subject_kind\":\"%s\",\"subject\":",
			i ? "," : "", f->rank, finding_level_name(f->level), finding_kind_name(f->kind),
			finding_subject_kind_name(f->subject_kind));
		json_fput_string(out, f->subject);
		fputs(",\"direction\":", out);
		json_fput_string(out, f->direction);
		fprintf(out, ",\"severity\":%.6g,\"severity_text\":", isfinite(f->severity) ? f->severity : 0.0);
		json_fput_string(out, f->severity_text);
		fprintf(out, ",\"confidence\":%.3f,\"onset_ns\":", f->confidence);
		if (f->onset_ns)
			fprintf(out, "%" PRIu64, f->onset_ns);
		else
			fputs("null", out);
		fprintf(out, ",\"flows_hurt\":%u,\"evidence\":%s}", f->flows_hurt,
			f->evidence && f->evidence[0] ? f->evidence : "null");
	}
	fputs("]}\n", out);
	return ferror(out) ? -1 : 0;
}

static int cmp_p99_desc(const void *a, const void *b)
{
	const struct flow_stats *x = *(const struct flow_stats *const *)a, *y = *(const struct flow_stats *const *)b;

	if (x->ack_latency_p99_us != y->ack_latency_p99_us)
		return x->ack_latency_p99_us < y->ack_latency_p99_us ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void fmt_time(char *buf, size_t len, uint64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000u);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%06" PRIu64 " UTC", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (ns % 1000000000u) / 1000);
}

/* The findings of one level: alerts ("Findings"), then notices, each with its numbers. */
static void print_findings(FILE *out, const struct analysis_summary *sum, enum finding_level level)
{
	char t0[64], subject[SANITIZE_BUF_LEN(sizeof(((struct finding *)0)->subject))];
	char direction[SANITIZE_BUF_LEN(sizeof(((struct finding *)0)->direction))];
	char severity[SANITIZE_BUF_LEN(sizeof(((struct finding *)0)->severity_text))];
	size_t shown = 0;

	for (size_t i = 0; i < sum->n_findings; i++) {
		const struct finding *f = &sum->findings[i];

		if (f->level != level)
			continue;
		if (!shown++)
			fputs(level == FINDING_ALERT ? "\nFindings:\n" :
						       "\nNotices (ordinary traffic explains them; not a fault):\n",
			      out);
		fprintf(out, "  %d. %s %s %s", f->rank, finding_kind_name(f->kind),
			finding_subject_kind_name(f->subject_kind),
			sanitize_text(f->subject, subject, sizeof(subject)));
		if (f->direction[0])
			fprintf(out, " (%s)", sanitize_text(f->direction, direction, sizeof(direction)));
		fprintf(out, ": %s, confidence %.2f, %u flows",
			sanitize_text(f->severity_text, severity, sizeof(severity)), f->confidence, f->flows_hurt);
		if (f->onset_ns) {
			fmt_time(t0, sizeof(t0), f->onset_ns);
			fprintf(out, ", since %s", t0);
		}
		fputc('\n', out);
	}
	if (shown || level != FINDING_ALERT)
		return;
	if (!sum->totals->packets) {
		fputs("\nFindings:\n  no verdict: no RoCE packet to judge\n", out);
	} else if (localize_coverage_partial(sum->coverage)) {
		fprintf(out, "\nFindings:\n  none: no link, path or host stands out in what could be judged\n"
			"  latency judged on %zu of %zu requester flows only: the others carry fewer than %u ACK, READ "
			"or completion samples (a longer trace gives each flow more)\n",
			sum->coverage->judged, sum->coverage->flows, sum->coverage->min_samples);
	} else {
		fputs("\nFindings:\n  none: no link, path or host stands out\n", out);
	}
}

int export_text(FILE *out, const struct analysis_summary *sum, size_t top_n)
{
	const struct qp_tracker_totals *tot = sum->totals;
	uint64_t retx = 0, naks = 0, naks_other = 0, rnr = 0, timeouts = 0, rereads = 0, cnps = 0, ce = 0;
	uint64_t with_samples = 0;
	const struct flow_stats **by_p99;
	char t0[64], t1[64], src[64], dst[64], path[SANITIZE_BUF_LEN(PATH_MAX)];
	size_t n_top = 0;

	for (size_t i = 0; i < sum->n_flows; i++) {
		const struct flow_stats *f = &sum->flows[i];

		retx += f->retransmitted_packets;
		naks += f->naks_psn_seq;
		naks_other += f->naks_other;
		rnr += f->rnr_naks;
		timeouts += f->timeouts;
		rereads += f->read_gaps;
		cnps += f->cnps;
		ce += f->ecn_ce;
		with_samples += f->ack_samples > 0;
	}
	fmt_time(t0, sizeof(t0), tot->first_ns);
	fmt_time(t1, sizeof(t1), tot->last_ns);
	fprintf(out, "%zu capture%s, %" PRIu64 " RoCE packets, %" PRIu64 " bytes, %zu flows (%" PRIu64 " paired)\n",
		sum->n_captures, sum->n_captures == 1 ? "" : "s", tot->packets, tot->bytes, sum->n_flows,
		tot->paired_flows);
	if (tot->packets)
		fprintf(out, "from %s to %s (%.6f s)\n", t0, t1, (double)(tot->last_ns - tot->first_ns) / 1e9);
	fprintf(out,
		"retransmitted %" PRIu64 ", NAK seq %" PRIu64 ", NAK other %" PRIu64 ", RNR NAK %" PRIu64
		", timeouts %" PRIu64 ", CNPs %" PRIu64 ", ECN-CE %" PRIu64 "\n",
		retx, naks, naks_other, rnr, timeouts, cnps, ce);
	/* A lost READ response draws no NAK: the requester re-reads it (IBA 9.7.5.1). */
	if (rereads)
		fprintf(out, "READ responses re-read after a loss %" PRIu64 "\n", rereads);
	if (tot->alloc_failures)
		fprintf(out, "warning: out of memory %" PRIu64 " times: some latency samples, windows or PSNs"
			     " were not kept, statistics are incomplete\n",
			tot->alloc_failures);
	for (size_t i = 0; i < sum->n_captures; i++) {
		const struct store_capture *c = &sum->captures[i];

		sanitize_text(c->path, path, sizeof(path));
		if (c->health->has_drop_counters && c->health->capture_dropped)
			fprintf(out, "capture %s: the capture itself dropped %" PRIu64 " packets\n", path,
				c->health->capture_dropped);
		if (c->one_direction)
			fprintf(out, "capture %s: holds only one direction of its RC traffic\n", path);
		if (c->malformed_packets)
			fprintf(out, "capture %s: %" PRIu64 " malformed packets\n", path, c->malformed_packets);
		if (c->clock.samples)
			fprintf(out, "capture %s: mirror clock: collector - switch %s%.3f us, drift %.3f ppm,"
				" mirror path jitter %.3f us (%" PRIu64 " ERSPAN III timestamps)\n", path,
				c->clock.absolute ? "" : "(counter clock, no epoch) ", c->clock.offset_us,
				c->clock.slope_ppm, c->clock.jitter_us, c->clock.samples);
	}

	by_p99 = malloc((with_samples ? with_samples : 1) * sizeof(*by_p99));
	if (by_p99) {
		for (size_t i = 0; i < sum->n_flows; i++)
			if (sum->flows[i].ack_samples)
				by_p99[n_top++] = &sum->flows[i];
		qsort(by_p99, n_top, sizeof(*by_p99), cmp_p99_desc);
		if (n_top) {
			fprintf(out, "\nTop flows by p99 ACK latency:\n");
			fprintf(out, "%6s  %-40s %8s %10s %6s %6s %10s %10s %10s\n", "id", "flow", "qpn", "packets",
				"retx", "naks", "p50_us", "p99_us", "max_us");
		}
		for (size_t i = 0; i < n_top && i < top_n; i++) {
			const struct flow_stats *f = by_p99[i];
			char flow[160];

			snprintf(flow, sizeof(flow), "%s -> %s", addr_str(f->key.src_ip, src, sizeof(src)),
				 addr_str(f->key.dst_ip, dst, sizeof(dst)));
			fprintf(out, "%6" PRIu64 "  %-40s %#8" PRIx32 " %10" PRIu64 " %6" PRIu64 " %6" PRIu64
				     " %10.2f %10.2f %10.2f\n",
				f->id, flow, f->key.dst_qpn, f->packets, f->retransmitted_packets,
				f->naks_psn_seq + f->naks_other + f->rnr_naks, f->ack_latency_p50_us,
				f->ack_latency_p99_us, f->ack_latency_max_us);
		}
		free(by_p99);
	}
	print_findings(out, sum, FINDING_ALERT);
	print_findings(out, sum, FINDING_NOTICE);
	if (sum->db_path)
		fprintf(out, "\nDatabase: %s\n", sanitize_text(sum->db_path, path, sizeof(path)));
	return ferror(out) ? -1 : 0;
}
