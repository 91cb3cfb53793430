/* agent_metrics.c: flows, findings and latency histograms -> metric families. */
#include "lib/export/agent_metrics.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "lib/decode/roce_decode.h"
#include "lib/util/util.h"

const double agent_latency_bounds_s[AGENT_LATENCY_BUCKETS] = {
	1e-6, 2e-6, 5e-6, 10e-6, 20e-6, 50e-6, 100e-6, 200e-6, 500e-6,
	1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3, 100e-3, 1.0,
};

void agent_latency_init(struct agent_latency *al)
{
	memset(al, 0, sizeof(*al));
}

void agent_latency_free(struct agent_latency *al)
{
	free(al->counts);
	free(al->sum_s);
	memset(al, 0, sizeof(*al));
}

int agent_latency_observe(struct agent_latency *al, uint64_t flow_id, uint64_t latency_ns)
{
	double s = (double)latency_ns / 1e9;
	size_t b = 0;

	if (flow_id >= al->cap) {
		/* Both arrays by flow id: grown to the same capacity, the new part zeroed. */
		size_t cap_counts = al->cap, cap_sums = al->cap;

		if (util_ensure_mem((void **)&al->counts, &cap_counts, sizeof(*al->counts), flow_id + 1) ||
		    util_ensure_mem((void **)&al->sum_s, &cap_sums, sizeof(*al->sum_s), cap_counts))
			return -ENOMEM;
		assert(cap_sums == cap_counts);
		memset(al->counts + al->cap, 0, (cap_counts - al->cap) * sizeof(*al->counts));
		memset(al->sum_s + al->cap, 0, (cap_counts - al->cap) * sizeof(*al->sum_s));
		al->cap = cap_counts;
	}
	while (b < AGENT_LATENCY_BUCKETS && s > agent_latency_bounds_s[b])
		b++;
	al->counts[flow_id][b]++;
	al->sum_s[flow_id] += s;
	return 0;
}

/* Per host pair aggregate. */
struct pair_agg {
	char src[64], dst[64];
	uint64_t packets, bytes, retx, naks_psn, naks_rnr, naks_other, timeouts, rereads, cnps, ecn_ce;
	uint64_t samples;
	uint64_t buckets[AGENT_LATENCY_BUCKETS + 1];
	double sum_s;
};

static int cmp_pair_key(const void *a, const void *b)
{
	const struct pair_agg *x = a, *y = b;
	int c = strcmp(x->src, y->src);
	return c ? c : strcmp(x->dst, y->dst);
}

/* Busiest first (by ACK samples, then packets), so the labelled pairs are the ones that matter. */
static int cmp_pair_weight(const void *a, const void *b)
{
	const struct pair_agg *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	if (x->packets != y->packets)
		return x->packets < y->packets ? 1 : -1;
	return cmp_pair_key(a, b);
}

static void pair_add(struct pair_agg *to, const struct pair_agg *from)
{
	to->packets += from->packets;
	to->bytes += from->bytes;
	to->retx += from->retx;
	to->naks_psn += from->naks_psn;
	to->naks_rnr += from->naks_rnr;
	to->naks_other += from->naks_other;
	to->timeouts += from->timeouts;
	to->rereads += from->rereads;
	to->cnps += from->cnps;
	to->ecn_ce += from->ecn_ce;
	to->samples += from->samples;
	to->sum_s += from->sum_s;
	for (int b = 0; b <= AGENT_LATENCY_BUCKETS; b++)
		to->buckets[b] += from->buckets[b];
}

/* Flows -> one aggregate per (src, dst), the tail beyond max_pairs folded into "other". */
static struct pair_agg *aggregate_pairs(const struct agent_metrics_input *in, size_t *n_out)
{
	struct pair_agg *rows = calloc(in->n_flows + 1, sizeof(*rows));
	size_t n = 0, max_pairs = in->max_pairs ? in->max_pairs : 200;

	if (!rows)
		return NULL;
	for (size_t i = 0; i < in->n_flows; i++) {
		const struct flow_stats *f = &in->flows[i];
		struct pair_agg *r = &rows[i];
		addr_str(f->key.src_ip, r->src, sizeof(r->src));
		addr_str(f->key.dst_ip, r->dst, sizeof(r->dst));
		r->packets = f->packets;
		r->bytes = f->bytes;
		r->retx = f->retransmitted_packets;
		r->naks_psn = f->naks_psn_seq;
		r->naks_rnr = f->rnr_naks;
		r->naks_other = f->naks_other;
		r->timeouts = f->timeouts;
		r->rereads = f->read_gaps;
		r->cnps = f->cnps;
		r->ecn_ce = f->ecn_ce;
		if (in->latency && f->id < in->latency->cap) {
			for (int b = 0; b <= AGENT_LATENCY_BUCKETS; b++) {
				r->buckets[b] = in->latency->counts[f->id][b];
				r->samples += r->buckets[b];
			}
			r->sum_s = in->latency->sum_s[f->id];
		}
	}
	qsort(rows, in->n_flows, sizeof(*rows), cmp_pair_key);
	for (size_t i = 0; i < in->n_flows; i++) {
		if (n && !cmp_pair_key(&rows[n - 1], &rows[i]))
			pair_add(&rows[n - 1], &rows[i]);
		else if (n++ != i)
			rows[n - 1] = rows[i];
	}
	qsort(rows, n, sizeof(*rows), cmp_pair_weight);
	if (n > max_pairs) {
		struct pair_agg other = { 0 };
		snprintf(other.src, sizeof(other.src), "other");
		snprintf(other.dst, sizeof(other.dst), "other");
		for (size_t i = max_pairs; i < n; i++)
			pair_add(&other, &rows[i]);
		rows[max_pairs] = other;
		n = max_pairs + 1;
	}
	*n_out = n;
	return rows;
}

static int add_pair_counter(struct metric_set *set, const char *name, const char *help,
			    const struct pair_agg *rows, size_t n, size_t field_offset)
{
	struct metric_family *fam = metric_family_get(set, name, METRIC_COUNTER, help, "{packet}");
	int err;

	if (!fam)
		return -errno;
	for (size_t i = 0; i < n; i++) {
		struct metric_label l[] = { { "src", rows[i].src }, { "dst", rows[i].dst } };
		uint64_t v;
		memcpy(&v, (const char *)&rows[i] + field_offset, sizeof(v));
		err = metric_add_int(fam, l, 2, v, 0);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_flow_p99(const void *a, const void *b)
{
	const struct flow_stats *x = *(const struct flow_stats *const *)a;
	const struct flow_stats *y = *(const struct flow_stats *const *)b;
	if (x->ack_latency_p99_us != y->ack_latency_p99_us)
		return x->ack_latency_p99_us < y->ack_latency_p99_us ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int add_top_qps(struct metric_set *set, const struct agent_metrics_input *in)
{
	size_t top = in->top_qps ? in->top_qps : 20, n = 0;
	const struct flow_stats **order;
	struct metric_family *fam;
	int err = 0;

	fam = metric_family_get(set, "agentxdp_qp_ack_latency_p99_seconds", METRIC_GAUGE,
				"p99 ACK latency of the queue pairs with the worst p99 (top N; the rest are in the host-pair histograms).",
				"s");
	if (!fam)
		return -errno;
	order = calloc(in->n_flows + 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_flows; i++)
		if (in->flows[i].ack_samples)
			order[n++] = &in->flows[i];
	qsort(order, n, sizeof(*order), cmp_flow_p99);
	for (size_t i = 0; i < n && i < top && !err; i++) {
		char src[64], dst[64], qpn[16], sport[8];
		addr_str(order[i]->key.src_ip, src, sizeof(src));
		addr_str(order[i]->key.dst_ip, dst, sizeof(dst));
		snprintf(qpn, sizeof(qpn), "0x%06x", order[i]->key.dst_qpn);
		snprintf(sport, sizeof(sport), "%u", order[i]->udp_sport);
		struct metric_label l[] = { { "src", src }, { "dst", dst }, { "qp", qpn }, { "udp_sport", sport } };
		err = metric_add_double(fam, l, 4, order[i]->ack_latency_p99_us / 1e6, 0);
	}
	free(order);
	return err;
}

/* What the latency verdict covers: "0 findings" over flows whose latency was not judged is
 * no all-clear (localize_coverage()). */
static int add_coverage(struct metric_set *set, const struct localize_coverage *cov)
{
	struct metric_family *flows, *judged;
	int err;

	if (!cov)
		return 0;
	flows = metric_family_get(set, "agentxdp_latency_flows", METRIC_GAUGE,
				  "Flows carrying requests (not responses, not datagrams) at the latest localization.", "1");
	judged = metric_family_get(set, "agentxdp_latency_flows_judged", METRIC_GAUGE,
				   "Of agentxdp_latency_flows, those with enough ACK, READ or completion samples for latency evidence; under half of them, 0 findings says nothing of latency.",
				   "1");
	if (!flows || !judged)
		return -errno;
	err = metric_add_int(flows, NULL, 0, cov->flows, 0);
	return err ? err : metric_add_int(judged, NULL, 0, cov->judged, 0);
}

static int add_findings(struct metric_set *set, const struct agent_metrics_input *in)
{
	struct metric_family *sev, *conf, *count;
	int err;

	sev = metric_family_get(set, "agentxdp_finding_severity", METRIC_GAUGE,
				"Current findings: severity (slow: latency as a multiple of the flows' baseline; lossy, congested: fraction of packets lost or marked); level alert (a fault) or notice (ordinary traffic explains it); absent when nothing is found.",
				"1");
	conf = metric_family_get(set, "agentxdp_finding_confidence", METRIC_GAUGE,
				 "Current findings: confidence 0..1.", "1");
	count = metric_family_get(set, "agentxdp_findings", METRIC_GAUGE,
				  "How many findings the last localization made (0 = no slow link found).", "1");
	if (!sev || !conf || !count)
		return -errno;
	for (size_t i = 0; i < in->n_findings; i++) {
		const struct finding *f = &in->findings[i];
		char rank[16];
		snprintf(rank, sizeof(rank), "%d", f->rank);
		struct metric_label l[] = {
			{ "rank", rank },
			{ "level", finding_level_name(f->level) },
			{ "kind", finding_kind_name(f->kind) },
			{ "subject_kind", finding_subject_kind_name(f->subject_kind) },
			{ "link", f->subject },
			{ "direction", f->direction },
		};
		err = metric_add_double(sev, l, ARRAY_SIZE(l), f->severity, 0);
		if (!err)
			err = metric_add_double(conf, l, ARRAY_SIZE(l), f->confidence, 0);
		if (err)
			return err;
	}
	err = metric_add_int(count, NULL, 0, in->n_findings, 0);
	return err ? err : add_coverage(set, in->coverage);
}

int agent_metrics_build(struct metric_set *set, const struct agent_metrics_input *in)
{
	struct pair_agg *rows;
	size_t n = 0;
	int err = 0;

	rows = aggregate_pairs(in, &n);
	if (!rows)
		return -ENOMEM;

	if (in->latency) {
		struct metric_family *h = metric_family_get(
			set, "agentxdp_ack_latency_seconds", METRIC_HISTOGRAM,
			"ACK latency per host pair: ACK time minus the first transmission of the PSN it names (Karn's rule).",
			"s");
		if (!h || metric_family_set_bounds(h, agent_latency_bounds_s, AGENT_LATENCY_BUCKETS)) {
			err = h ? -EINVAL : -errno;
			goto cleanup;
		}
		for (size_t i = 0; i < n && !err; i++) {
			struct metric_label l[] = { { "src", rows[i].src }, { "dst", rows[i].dst } };
			err = metric_add_histogram(h, l, 2, rows[i].buckets, rows[i].sum_s, 0);
		}
		if (err)
			goto cleanup;
	}
#define PAIR_COUNTER(name, help, field)                                                        \
	do {                                                                                   \
		err = add_pair_counter(set, name, help, rows, n, offsetof(struct pair_agg, field)); \
		if (err)                                                                       \
			goto cleanup;                                                          \
	} while (0)
	PAIR_COUNTER("agentxdp_packets_total", "RoCE packets per host pair (one direction).", packets);
	PAIR_COUNTER("agentxdp_retransmitted_packets_total",
		     "Retransmitted request packets, attributed to the requester's host pair.", retx);
	PAIR_COUNTER("agentxdp_timeouts_total", "Retransmission timeouts (go-back-N episodes without a NAK).",
		     timeouts);
	PAIR_COUNTER("agentxdp_read_rereads_total",
		     "READ responses re-read after a loss (a lost response draws no NAK).", rereads);
	PAIR_COUNTER("agentxdp_cnps_total", "CNPs received by the requester of this host pair (it is being slowed).",
		     cnps);
	PAIR_COUNTER("agentxdp_ecn_ce_packets_total", "Packets of this host pair that arrived ECN CE-marked.",
		     ecn_ce);
#undef PAIR_COUNTER
	{
		struct metric_family *bytes = metric_family_get(set, "agentxdp_bytes_total", METRIC_COUNTER,
								"Wire bytes per host pair.", "By");
		struct metric_family *naks = metric_family_get(set, "agentxdp_naks_total", METRIC_COUNTER,
							       "NAKs by type, attributed to the requester's host pair.",
							       "{packet}");
		if (!bytes || !naks) {
			err = -errno;
			goto cleanup;
		}
		for (size_t i = 0; i < n && !err; i++) {
			struct metric_label l[] = { { "src", rows[i].src }, { "dst", rows[i].dst } };
			err = metric_add_int(bytes, l, 2, rows[i].bytes, 0);
			static const char *const types[] = { "psn_seq", "rnr", "other" };
			const uint64_t v[] = { rows[i].naks_psn, rows[i].naks_rnr, rows[i].naks_other };
			for (int k = 0; k < 3 && !err; k++) {
				struct metric_label lt[] = { { "src", rows[i].src }, { "dst", rows[i].dst },
							     { "type", types[k] } };
				err = metric_add_int(naks, lt, 3, v[k], 0);
			}
		}
		if (err)
			goto cleanup;
	}
	{
		struct metric_family *flows = metric_family_get(set, "agentxdp_flows", METRIC_GAUGE,
								"Flows (one direction of a queue pair) tracked.", "1");
		struct metric_family *mal = metric_family_get(set, "agentxdp_malformed_packets_total",
							      METRIC_COUNTER, "Packets the decoder could not read.",
							      "{packet}");
		if (!flows || !mal) {
			err = -errno;
			goto cleanup;
		}
		err = metric_add_int(flows, NULL, 0, in->n_flows, 0);
		if (!err)
			err = metric_add_int(mal, NULL, 0, in->malformed_packets, 0);
		if (err)
			goto cleanup;
	}
	if (in->n_captures) {
		struct metric_family *pk = metric_family_get(set, "agentxdp_capture_packets_total", METRIC_COUNTER,
							     "RoCE records the capture delivered, per interface.", "{packet}");
		struct metric_family *lost = metric_family_get(set, "agentxdp_capture_lost_total", METRIC_COUNTER,
							       "Records the capture lost (a CPU's ring full), per interface.",
							       "{packet}");
		if (!pk || !lost) {
			err = -errno;
			goto cleanup;
		}
		for (size_t i = 0; i < in->n_captures && !err; i++) {
			struct metric_label l[] = { { "interface", in->captures[i].interface } };
			err = metric_add_int(pk, l, 1, in->captures[i].packets, 0);
			if (!err)
				err = metric_add_int(lost, l, 1, in->captures[i].lost, 0);
		}
		if (err)
			goto cleanup;
	}
	err = add_top_qps(set, in);
	if (!err)
		err = add_findings(set, in);
cleanup:
	free(rows);
	return err;
}
