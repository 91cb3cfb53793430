/* nic_rates.c: counter deltas, signal rates, the standing-out detector and NIC metrics (pure). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/nic/nic_rates.h"
#include "lib/util/robust_stats.h"
#include "lib/util/text_buf.h"
#include "lib/util/util.h"

/*
 * Counter names (as mlx5, bnxt_re, hns, rxe and the IB PMA / netdev statistics name them)
 * and the signal each one feeds. Counters not listed are still read and exported.
 */
static const struct {
	const char *name;
	enum nic_signal signal;
} counter_signals[] = {
	/* the requester retransmitted, or the responder saw a request again */
	{ "roce_adp_retrans", NIC_SIG_RETRANSMISSION },		/* mlx5, bnxt_re */
	{ "roce_slow_restart_trans", NIC_SIG_RETRANSMISSION },	/* mlx5, bnxt_re */
	{ "duplicate_request", NIC_SIG_RETRANSMISSION },	/* mlx5, bnxt_re, rxe */
	{ "completer_retry_err", NIC_SIG_RETRANSMISSION },	/* rxe */
	/* no ACK in time */
	{ "local_ack_timeout_err", NIC_SIG_TIMEOUT },		/* mlx5, bnxt_re */
	{ "roce_adp_retrans_to", NIC_SIG_TIMEOUT },		/* mlx5, bnxt_re */
	{ "retry_exceeded_err", NIC_SIG_TIMEOUT },		/* rxe */
	{ "max_retry_exceeded", NIC_SIG_TIMEOUT },		/* bnxt_re */
	/* PSN sequence errors: a packet was lost on the way */
	{ "out_of_sequence", NIC_SIG_SEQUENCE_ERROR },		/* mlx5, bnxt_re */
	{ "packet_seq_err", NIC_SIG_SEQUENCE_ERROR },		/* mlx5, bnxt_re */
	{ "implied_nak_seq_err", NIC_SIG_SEQUENCE_ERROR },	/* mlx5, bnxt_re */
	{ "out_of_seq_request", NIC_SIG_SEQUENCE_ERROR },	/* rxe */
	{ "rcvd_seq_err", NIC_SIG_SEQUENCE_ERROR },		/* rxe */
	/* DCQCN: ECN marks seen, CNPs sent and handled */
	{ "np_cnp_sent", NIC_SIG_CONGESTION },			/* mlx5, bnxt_re */
	{ "rp_cnp_handled", NIC_SIG_CONGESTION },		/* mlx5, bnxt_re */
	{ "np_ecn_marked_roce_packets", NIC_SIG_CONGESTION },	/* mlx5, bnxt_re */
	{ "rx_cnp_pkt", NIC_SIG_CONGESTION },			/* hns */
	{ "tx_cnp_pkt", NIC_SIG_CONGESTION },			/* hns */
	/* receiver not ready: an end-host problem */
	{ "rnr_nak_retry_err", NIC_SIG_RNR },			/* mlx5, bnxt_re */
	{ "rcvd_rnr_err", NIC_SIG_RNR },			/* rxe */
	{ "send_rnr_err", NIC_SIG_RNR },			/* rxe */
	/* the physical link */
	{ "symbol_error", NIC_SIG_LINK_ERROR },			/* IB PMA */
	{ "link_error_recovery", NIC_SIG_LINK_ERROR },		/* IB PMA */
	{ "link_downed", NIC_SIG_LINK_ERROR },			/* IB PMA, rxe */
	{ "port_rcv_errors", NIC_SIG_LINK_ERROR },		/* IB PMA */
	{ "local_link_integrity_errors", NIC_SIG_LINK_ERROR },	/* IB PMA */
	{ "rx_crc_errors", NIC_SIG_LINK_ERROR },		/* netdev statistics */
};

static const char *const signal_names[NIC_SIG_COUNT] = {
	[NIC_SIG_RETRANSMISSION] = "retransmission",
	[NIC_SIG_TIMEOUT] = "timeout",
	[NIC_SIG_SEQUENCE_ERROR] = "sequence_error",
	[NIC_SIG_CONGESTION] = "congestion",
	[NIC_SIG_RNR] = "rnr",
	[NIC_SIG_LINK_ERROR] = "link_error",
};

static const char *const source_names[NIC_SRC_COUNT] = {
	[NIC_SRC_COUNTERS] = "counters",
	[NIC_SRC_HW_COUNTERS] = "hw_counters",
	[NIC_SRC_NETDEV] = "netdev",
};

static const char *const delta_kind_names[] = {
	[NIC_DELTA_FIRST] = "first", [NIC_DELTA_NORMAL] = "normal", [NIC_DELTA_WRAP32] = "wrap32",
	[NIC_DELTA_WRAP64] = "wrap64", [NIC_DELTA_RESET] = "reset",
	[NIC_DELTA_BACKWARDS] = "backwards",
};

enum nic_signal nic_counter_signal(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(counter_signals) / sizeof(counter_signals[0]); i++)
		if (strcmp(counter_signals[i].name, name) == 0)
			return counter_signals[i].signal;
	return NIC_SIG_NONE;
}

enum finding_kind nic_signal_finding_kind(enum nic_signal signal)
{
	if (signal == NIC_SIG_CONGESTION)
		return FINDING_CONGESTED;
	if (signal == NIC_SIG_RNR)
		return FINDING_HOST;
	return FINDING_LOSSY;
}

const char *nic_signal_name(enum nic_signal signal)
{
	return signal >= 0 && signal < NIC_SIG_COUNT ? signal_names[signal] : "none";
}

const char *nic_source_name(enum nic_counter_source source)
{
	return source < NIC_SRC_COUNT ? source_names[source] : "unknown";
}

const char *nic_delta_kind_name(enum nic_delta_kind kind)
{
	return kind <= NIC_DELTA_BACKWARDS ? delta_kind_names[kind] : "unknown";
}

enum nic_delta_kind nic_counter_delta(uint64_t prev, uint64_t cur, uint64_t *delta)
{
	const uint64_t half32 = 1ull << 31, span32 = 1ull << 32, half64 = 1ull << 63;

	if (cur >= prev) {
		*delta = cur - prev;
		return NIC_DELTA_NORMAL;
	}
	if (prev < span32 && prev >= half32 && cur < half32) {
		*delta = span32 - prev + cur;
		return NIC_DELTA_WRAP32;
	}
	if (prev >= half64 && cur < half64) {
		*delta = cur - prev;	/* modulo 2^64 */
		return NIC_DELTA_WRAP64;
	}
	if (cur < prev / 2) {
		*delta = cur;
		return NIC_DELTA_RESET;
	}
	*delta = 0;
	return NIC_DELTA_BACKWARDS;
}

static int cmp_port_key(const struct nic_port *p, const char *device, uint32_t port)
{
	int c = strcmp(device, p->device);

	if (c)
		return c;
	return port < p->port ? -1 : port > p->port;
}

const struct nic_port *nic_snapshot_find_port(const struct nic_snapshot *snap, const char *device,
					      uint32_t port)
{
	size_t lo = 0, hi = snap ? snap->n_ports : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_port_key(&snap->ports[mid], device, port);

		if (!c)
			return &snap->ports[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static const struct nic_counter *find_counter(const struct nic_port *p, enum nic_counter_source src,
					      const char *name)
{
	size_t lo = 0, hi = p->n_counters;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct nic_counter *c = &p->counters[mid];
		int d = src != c->source ? (int)src - (int)c->source : strcmp(name, c->name);

		if (!d)
			return c;
		if (d < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

size_t nic_rates_compute(const struct nic_snapshot *prev, struct nic_snapshot *cur)
{
	double dt_s = 0;
	size_t i, j, appeared = 0;

	if (prev && cur->ts_ns > prev->ts_ns)
		dt_s = (double)(cur->ts_ns - prev->ts_ns) / 1e9;
	for (i = 0; i < cur->n_ports; i++) {
		struct nic_port *p = &cur->ports[i];
		const struct nic_port *pp = dt_s > 0 ? nic_snapshot_find_port(prev, p->device, p->port) : NULL;

		if (prev && !nic_snapshot_find_port(prev, p->device, p->port))
			appeared++;
		p->has_rates = pp != NULL;
		memset(p->signal_present, 0, sizeof(p->signal_present));
		memset(p->signal_rate, 0, sizeof(p->signal_rate));
		memset(p->anomaly, 0, sizeof(p->anomaly));
		for (j = 0; j < p->n_counters; j++) {
			struct nic_counter *c = &p->counters[j];
			const struct nic_counter *pc = NULL;

			/* A netdev counter continues only while the same netdev is bound. */
			if (pp && (c->source != NIC_SRC_NETDEV || strcmp(pp->netdev, p->netdev) == 0))
				pc = find_counter(pp, c->source, c->name);
			c->delta = 0;
			c->rate_per_s = 0;
			if (!pc) {
				c->delta_kind = NIC_DELTA_FIRST;
				c->series_start_ns = cur->ts_ns;
			} else {
				c->delta_kind = nic_counter_delta(pc->value, c->value, &c->delta);
				c->rate_per_s = (double)c->delta / dt_s;
				/* After any decrease the raw series restarts (OTLP start time). */
				c->series_start_ns = c->delta_kind == NIC_DELTA_NORMAL ? pc->series_start_ns
										     : cur->ts_ns;
			}
			if (c->signal == NIC_SIG_NONE)
				continue;
			p->signal_present[c->signal] = true;
			if (c->delta_kind != NIC_DELTA_FIRST)
				p->signal_rate[c->signal] += c->rate_per_s;
		}
	}
	return appeared;
}

void nic_detector_init(struct nic_detector *d, const struct nic_detector_opts *opts)
{
	memset(d, 0, sizeof(*d));
	if (opts)
		d->opts = *opts;
	if (d->opts.factor <= 1)
		d->opts.factor = 4;
	if (d->opts.min_rate_per_s <= 0)
		d->opts.min_rate_per_s = 1;
	if (!d->opts.warmup)
		d->opts.warmup = 3;
	if (d->opts.baseline_alpha <= 0 || d->opts.baseline_alpha > 1)
		d->opts.baseline_alpha = 0.2;
}

void nic_detector_free(struct nic_detector *d)
{
	free(d->baselines);
	memset(d, 0, sizeof(*d));
}

static struct nic_baseline *baseline_get(struct nic_detector *d, const struct nic_port *p)
{
	struct nic_baseline *b;
	size_t i;

	for (i = 0; i < d->n_baselines; i++)
		if (d->baselines[i].port == p->port && strcmp(d->baselines[i].device, p->device) == 0)
			return &d->baselines[i];
	if (util_ensure_mem((void **)&d->baselines, &d->cap_baselines, sizeof(*d->baselines),
			    d->n_baselines + 1))
		return NULL;
	b = &d->baselines[d->n_baselines++];
	memset(b, 0, sizeof(*b));
	snprintf(b->device, sizeof(b->device), "%s", p->device);
	b->port = p->port;
	return b;
}

/* Median of the signal rate over the judged ports other than SKIP; -1 when there are none. */
static double peer_median(const struct nic_snapshot *cur, size_t skip, enum nic_signal s,
			  double *scratch, size_t *n_peers)
{
	size_t i, n = 0;

	for (i = 0; i < cur->n_ports; i++) {
		const struct nic_port *p = &cur->ports[i];

		if (i == skip || !p->port || !p->has_rates || !p->signal_present[s])
			continue;
		scratch[n++] = p->signal_rate[s];
	}
	*n_peers = n;
	if (!n)
		return -1;
	return rs_median(scratch, n);
}

static char *finding_evidence(const struct nic_port *p, enum nic_signal s, uint64_t ts_ns,
			      double peer_ref, size_t n_peers, const struct nic_baseline *b,
			      const struct nic_detector_opts *o)
{
	struct text_buf t = { 0 };
	bool first = true;
	size_t j;

	text_buf_puts(&t, "{\"source\":\"nic_counters\",\"device\":");
	text_buf_json_string(&t, p->device);
	text_buf_printf(&t, ",\"port\":%u,\"netdev\":", p->port);
	text_buf_json_string(&t, p->netdev);
	text_buf_printf(&t, ",\"signal\":\"%s\",\"interval_end_ns\":%" PRIu64 ",\"rate_per_s\":",
			nic_signal_name(s), ts_ns);
	text_buf_json_double(&t, p->signal_rate[s]);
	text_buf_puts(&t, ",\"counters\":{");
	for (j = 0; j < p->n_counters; j++) {
		const struct nic_counter *c = &p->counters[j];

		if (c->signal != s || c->delta_kind == NIC_DELTA_FIRST)
			continue;
		if (!first)
			text_buf_putc(&t, ',');
		first = false;
		text_buf_json_string(&t, c->name);
		text_buf_printf(&t, ":{\"value\":%" PRIu64 ",\"delta\":%" PRIu64 ",\"rate_per_s\":",
				c->value, c->delta);
		text_buf_json_double(&t, c->rate_per_s);
		text_buf_printf(&t, ",\"delta_kind\":\"%s\"}", nic_delta_kind_name(c->delta_kind));
	}
	text_buf_printf(&t, "},\"peer_ports\":%zu", n_peers);
	if (n_peers) {
		text_buf_puts(&t, ",\"peer_median_rate_per_s\":");
		text_buf_json_double(&t, peer_ref);
	}
	if (b && b->n[s]) {
		text_buf_puts(&t, ",\"baseline_rate_per_s\":");
		text_buf_json_double(&t, b->ewma[s]);
		text_buf_printf(&t, ",\"baseline_intervals\":%u", b->n[s]);
	}
	text_buf_puts(&t, ",\"factor\":");
	text_buf_json_double(&t, o->factor);
	text_buf_puts(&t, ",\"min_rate_per_s\":");
	text_buf_json_double(&t, o->min_rate_per_s);
	text_buf_putc(&t, '}');
	if (t.failed) {
		text_buf_free(&t);
		return NULL;
	}
	return t.data;
}

static int cmp_finding_severity(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	return x->severity > y->severity ? -1 : x->severity < y->severity;
}

/* *cap: room in *findings, at least *n (the caller's array may be exactly *n long). */
static int add_finding(struct finding **findings, size_t *n, size_t *cap, const struct finding *f)
{
	int err = util_ensure_mem((void **)findings, cap, sizeof(**findings), *n + 1);

	if (err)
		return err;
	(*findings)[(*n)++] = *f;
	return 0;
}

int nic_detect(struct nic_detector *d, struct nic_snapshot *cur, struct finding **findings,
	       size_t *n_findings)
{
	const struct nic_detector_opts *o = &d->opts;
	size_t i, first_new = *n_findings, added, cap_findings = *n_findings;
	double *scratch;
	int s, err = 0;

	scratch = malloc((cur->n_ports + 1) * sizeof(*scratch));
	if (!scratch)
		return -ENOMEM;
	for (i = 0; i < cur->n_ports && !err; i++) {
		struct nic_port *p = &cur->ports[i];
		struct nic_baseline *b;

		if (!p->port || !p->has_rates)
			continue;
		b = baseline_get(d, p);
		if (!b) {
			err = -ENOMEM;
			break;
		}
		for (s = 0; s < NIC_SIG_COUNT; s++) {
			double rate = p->signal_rate[s], peer_ref, ref, severity;
			bool warm = b->n[s] >= o->warmup, vs_peers = false, vs_base = false;
			size_t n_peers;
			struct finding f = { 0 };

			if (!p->signal_present[s])
				continue;
			peer_ref = peer_median(cur, i, s, scratch, &n_peers);
			if (rate >= o->min_rate_per_s) {
				vs_peers = n_peers && rate >= o->factor * peer_ref;
				vs_base = warm && rate >= o->factor * b->ewma[s];
			}
			if (!vs_peers && !vs_base) {
				/* A normal interval teaches the baseline; an abnormal one does not. */
				b->ewma[s] = b->n[s] ? o->baseline_alpha * rate + (1 - o->baseline_alpha) * b->ewma[s]
						     : rate;
				b->n[s]++;
				continue;
			}
			ref = vs_peers ? peer_ref : b->ewma[s];
			severity = rate / (ref > o->min_rate_per_s ? ref : o->min_rate_per_s);
			p->anomaly[s] = severity;
			f.kind = nic_signal_finding_kind(s);
			f.subject_kind = SUBJECT_HOST_LINK;
			if (p->netdev[0])
				snprintf(f.subject, sizeof(f.subject), "%.60s port %u (%.40s)", p->device,
					 p->port, p->netdev);
			else
				snprintf(f.subject, sizeof(f.subject), "%.60s port %u", p->device, p->port);
			if (vs_peers)
				snprintf(f.severity_text, sizeof(f.severity_text),
					 "%s %.1f/s vs %.1f/s median of %zu other port%s", signal_names[s],
					 rate, peer_ref, n_peers, n_peers == 1 ? "" : "s");
			else
				snprintf(f.severity_text, sizeof(f.severity_text),
					 "%s %.1f/s vs its own baseline %.1f/s", signal_names[s], rate,
					 b->ewma[s]);
			f.severity = severity;
			f.confidence = vs_peers ? (n_peers >= 2 ? 0.8 : 0.6) : 0.5;
			if (vs_peers && vs_base)
				f.confidence += 0.15;
			f.onset_ns = cur->ts_ns;
			f.evidence = finding_evidence(p, s, cur->ts_ns, peer_ref, n_peers, b, o);
			if (!f.evidence || add_finding(findings, n_findings, &cap_findings, &f)) {
				free(f.evidence);
				err = -ENOMEM;
				break;
			}
		}
	}
	free(scratch);
	if (err)
		return err;
	added = *n_findings - first_new;
	if (added > 1)
		qsort(*findings + first_new, added, sizeof(**findings), cmp_finding_severity);
	for (i = 0; i < added; i++)
		(*findings)[first_new + i].rank = (int)i + 1;
	return (int)added;
}

void nic_findings_free(struct finding *findings, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(findings[i].evidence);
	free(findings);
}

int nic_metrics_add(struct metric_set *set, const struct nic_snapshot *snap,
		    uint64_t read_errors_total)
{
	struct metric_family *raw, *rate, *sig, *anom, *ports, *errs;
	struct metric_label l[5];
	char port_text[16];
	size_t i, j;
	int s, err = 0;

	raw = metric_family_get(set, "agentxdp_nic_stat_total", METRIC_COUNTER,
				"RDMA NIC counter as read from sysfs (driver's name in label counter).",
				"{event}");
	rate = metric_family_get(set, "agentxdp_nic_stat_rate_per_second", METRIC_GAUGE,
				 "Change per second of the NIC counter over the last interval (wrap- and reset-aware).",
				 "{event}/s");
	sig = metric_family_get(set, "agentxdp_nic_signal_rate_per_second", METRIC_GAUGE,
				"Sum of the rates of the NIC counters of one signal.", "{event}/s");
	anom = metric_family_get(set, "agentxdp_nic_anomaly", METRIC_GAUGE,
				 "Severity (rate / reference) when the port stands out for the signal, else 0.",
				 "1");
	ports = metric_family_get(set, "agentxdp_nic_ports", METRIC_GAUGE,
				  "RDMA ports read in the last interval.", "{port}");
	errs = metric_family_get(set, "agentxdp_nic_read_errors_total", METRIC_COUNTER,
				 "Counter files that could not be read or parsed.", "{error}");
	if (!raw || !rate || !sig || !anom || !ports || !errs)
		return -errno; /* metric_family_get() sets it: ENOMEM, EOVERFLOW or EINVAL */
	for (i = 0; i < snap->n_ports && !err; i++) {
		const struct nic_port *p = &snap->ports[i];

		snprintf(port_text, sizeof(port_text), "%u", p->port);
		l[0] = (struct metric_label){ "device", p->device };
		l[1] = (struct metric_label){ "port", port_text };
		l[2] = (struct metric_label){ "netdev", p->netdev };
		for (j = 0; j < p->n_counters && !err; j++) {
			const struct nic_counter *c = &p->counters[j];

			l[3] = (struct metric_label){ "source", nic_source_name(c->source) };
			l[4] = (struct metric_label){ "counter", c->name };
			err = metric_add_int(raw, l, 5, c->value, c->series_start_ns);
			if (!err && c->delta_kind != NIC_DELTA_FIRST)
				err = metric_add_double(rate, l, 5, c->rate_per_s, 0);
		}
		if (!p->has_rates || !p->port)
			continue;
		for (s = 0; s < NIC_SIG_COUNT && !err; s++) {
			if (!p->signal_present[s])
				continue;
			l[3] = (struct metric_label){ "signal", signal_names[s] };
			err = metric_add_double(sig, l, 4, p->signal_rate[s], 0);
			if (!err)
				err = metric_add_double(anom, l, 4, p->anomaly[s], 0);
		}
	}
	if (!err)
		err = metric_add_int(ports, NULL, 0, snap->n_ports, 0);
	if (!err)
		err = metric_add_int(errs, NULL, 0, read_errors_total, 0);
	return err;
}
