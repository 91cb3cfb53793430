/*
 * localize_pooled.c: a host's round trips pooled over its connections when each is too
 * short to judge alone. A collective of many queue pairs over a few milliseconds gives
 * every flow 8-14 ACK samples, under min_latency_samples: no connection has latency
 * evidence, and a slow host link is read by what is left of it, its queue's marks
 * (`congested`) or the timeouts its own queue brings (`host`: the sender's timer). Pooled,
 * the flows a host answers (their ACKs leave through its uplink) or starts (their ACKs
 * come down its downlink) hold hundreds of samples between them, and the median of their
 * medians against other hosts' tells a link that holds its traffic back from one that
 * merely carries it.
 */
#include "lib/localize/localize_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/robust_stats.h"

/*
 * Tuning seeds 4179-4182, the collectives' one-way host serializers (4-5x, 4x + 3 us):
 * the slowed host's pooled round trips ran 1.14-4.89x other hosts' on the side its link
 * holds back (its answers for an uplink, its own requests for a downlink), at 10-169
 * robust sigmas; no host of the healthy each-host collectives, the NIC retransmit or the
 * lossy host cells stood over 1.10x, and a 38 us slow responder's 1.20x.
 */
#define POOLED_MIN_RATIO 1.3
#define POOLED_MIN_Z 5
#define POOLED_MIN_SAMPLES 4	/* a flow's ACK samples to give its median */
#define POOLED_MIN_FLOWS 8	/* a host's flows on one side to pool */

/* Every host's pooled round trips, per side (0: the flows it starts, 1: those it answers). */
struct pooled_hosts {
	uint8_t (*addr)[16];		/* sorted, distinct */
	size_t n_hosts;
	double *p50_us[2];		/* per host, 0 when under POOLED_MIN_FLOWS flows */
	uint32_t *flows[2];
	double base_us[2], sigma_us[2];	/* over the hosts that have one (base 0: too few) */
};

static int cmp_addr(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static long host_index(const struct pooled_hosts *t, const uint8_t *h)
{
	const uint8_t(*at)[16] = bsearch(h, t->addr, t->n_hosts, 16, cmp_addr);

	return at ? at - t->addr : -1;
}

static void pooled_free(struct pooled_hosts *t)
{
	free(t->addr);
	for (int s = 0; s < 2; s++) {
		free(t->p50_us[s]);
		free(t->flows[s]);
	}
	memset(t, 0, sizeof(*t));
}

/* A connection's ACK latency median, when enough samples give one (else 0). */
static double conn_ack_p50(const struct conn *cn)
{
	if (!cn->req || cn->ack_only || cn->req->ack_samples < POOLED_MIN_SAMPLES)
		return 0;
	return fmax(cn->req->ack_latency_p50_us, 0);
}

/* One side's medians: values[] holds each host's flows, grouped by host (off[]). */
static int side_medians(const struct ctx *c, struct pooled_hosts *t, int s, double *values,
			const size_t *off)
{
	size_t n = 0;
	double *meds = malloc(2 * (t->n_hosts + 1) * sizeof(*meds));

	if (!meds)
		return -ENOMEM;

	for (size_t i = 0; i < t->n_hosts; i++) {
		size_t m = off[i + 1] - off[i];

		t->flows[s][i] = (uint32_t)m;
		t->p50_us[s][i] = m >= POOLED_MIN_FLOWS ? rs_median(values + off[i], m) : 0;
		if (t->p50_us[s][i] > 0)
			meds[n++] = t->p50_us[s][i];
	}
	if (n >= c->cfg->min_class_flows) {
		t->base_us[s] = rs_median(meds, n);
		t->sigma_us[s] = rs_sigma(meds, n, meds + n);
	}
	free(meds);
	return 0;
}

static int pooled_build(const struct ctx *c, struct pooled_hosts *t)
{
	size_t n = c->n_conns, *off = NULL, *fill = NULL, *host_of = NULL;
	double *values = NULL, *p50 = NULL;
	int err = -ENOMEM;

	memset(t, 0, sizeof(*t));
	t->addr = malloc(2 * (n ? n : 1) * 16);
	if (!t->addr)
		goto cleanup;
	for (size_t k = 0; k < n; k++) {
		memcpy(t->addr[2 * k], c->conns[k].src, 16);
		memcpy(t->addr[2 * k + 1], c->conns[k].dst, 16);
	}
	qsort(t->addr, 2 * n, 16, cmp_addr);
	for (size_t k = 0; k < 2 * n; k++)
		if (!t->n_hosts || memcmp(t->addr[t->n_hosts - 1], t->addr[k], 16))
			memmove(t->addr[t->n_hosts++], t->addr[k], 16);
	off = calloc(t->n_hosts + 1, sizeof(*off));
	fill = calloc(t->n_hosts + 1, sizeof(*fill));
	values = malloc((n ? n : 1) * sizeof(*values));
	p50 = malloc((n ? n : 1) * sizeof(*p50));
	host_of = malloc(2 * (n ? n : 1) * sizeof(*host_of));
	if (!off || !fill || !values || !p50 || !host_of)
		goto cleanup;
	/* Each connection's median and its two hosts' places, once for both sides. */
	for (size_t k = 0; k < n; k++) {
		p50[k] = conn_ack_p50(&c->conns[k]);
		host_of[2 * k] = (size_t)host_index(t, c->conns[k].src);
		host_of[2 * k + 1] = (size_t)host_index(t, c->conns[k].dst);
	}
	for (int s = 0; s < 2; s++) {
		t->p50_us[s] = calloc(t->n_hosts + 1, sizeof(double));
		t->flows[s] = calloc(t->n_hosts + 1, sizeof(uint32_t));
		if (!t->p50_us[s] || !t->flows[s])
			goto cleanup;
		/* Group the flows by the host of this side: count, then place. */
		memset(off, 0, (t->n_hosts + 1) * sizeof(*off));
		for (size_t k = 0; k < n; k++)
			if (p50[k] > 0)
				off[host_of[2 * k + s] + 1]++;
		for (size_t i = 0; i < t->n_hosts; i++)
			off[i + 1] += off[i];
		memcpy(fill, off, (t->n_hosts + 1) * sizeof(*fill));
		for (size_t k = 0; k < n; k++)
			if (p50[k] > 0)
				values[fill[host_of[2 * k + s]]++] = p50[k];
		if (side_medians(c, t, s, values, off))
			goto cleanup;
	}
	err = 0;
cleanup:
	free(off);
	free(fill);
	free(values);
	free(p50);
	free(host_of);
	if (err)
		pooled_free(t);
	return err;
}

/* Under half of host h's connections have latency evidence of their own. */
static bool host_mostly_unjudged(const struct ctx *c, const uint8_t *h)
{
	size_t n = 0, judged = 0;

	for (size_t k = 0; k < c->n_conns; k++) {
		if (memcmp(c->conns[k].src, h, 16) && memcmp(c->conns[k].dst, h, 16))
			continue;
		n++;
		judged += c->conns[k].valid[SIG_LATENCY];
	}
	return n && 2 * judged < n;
}

/* The picks this reads again: a host link's marks (an alert, or a notice its loaded queue
 * or the fabric's queueing explained) and the sender's timer on the sender's own link. */
static bool pooled_reading(const struct ctx *c, const struct candidate *b)
{
	enum var_kind vk = c->vars[b->var].kind;

	if (b->n_set || (vk != VAR_HOST_LINK && vk != VAR_LINK) || !loc_subject_host(c, b->var))
		return false;
	/* sender_timer()'s: its subject the sender's own link */
	if (b->kind == FINDING_HOST)
		return b->signal == SIG_LOSS && b->n_hurt_idx &&
		       !memcmp(loc_subject_host(c, b->var), c->conns[b->hurt_idx[0]].src, 16);
	return b->kind == FINDING_CONGESTED && b->signal == SIG_ECN &&
	       (b->level == FINDING_ALERT || b->notice_why == loc_why_loaded_queue ||
		b->notice_why == loc_why_fabric_queueing) &&
	       b->load_ratio < c->cfg->load_notice_ratio;
}

int loc_pooled_host_slow(const struct ctx *c, struct candidate *best, size_t n)
{
	struct pooled_hosts t = { 0 };
	bool built = false;

	for (size_t i = 0; i < n; i++) {
		struct candidate *b = &best[i];
		const uint8_t *h;

		if (!pooled_reading(c, b))
			continue;
		h = loc_subject_host(c, b->var);
		if (!host_mostly_unjudged(c, h))
			continue;
		if (!built && pooled_build(c, &t))
			return -ENOMEM;
		built = true;
		long i_h = host_index(&t, h);

		for (int s = 1; s >= 0; s--) {
			double own, ratio, z;

			if (i_h < 0 || t.base_us[s] <= 0 || (own = t.p50_us[s][i_h]) <= 0)
				continue;
			ratio = own / t.base_us[s];
			z = (own - t.base_us[s]) /
			    fmax(t.sigma_us[s], c->cfg->noise_floor_frac * t.base_us[s]);
			if (ratio < POOLED_MIN_RATIO || z < POOLED_MIN_Z || ratio <= b->pooled_ratio)
				continue;
			b->pooled_ratio = ratio;
			b->pooled_excess_us = own - t.base_us[s];
			b->pooled_z = z;
			b->pooled_flows = t.flows[s][i_h];
			b->pooled_answers = s;
		}
		if (b->pooled_ratio <= 0)
			continue;
		b->pooled_from = b->kind;
		b->kind_why = b->pooled_from == FINDING_HOST ?
				      "its timeouts come with its round trips long: its own link's "
				      "queue holds its packets back, not an early timer" :
				      "its connections' round trips run long at the load its peers carry: "
				      "the link holds its traffic back, not the traffic's size";
		b->kind = FINDING_SLOW;
		b->level = FINDING_ALERT;
		b->notice_why = NULL;
	}
	pooled_free(&t);
	return 0;
}
