/*
 * localize.c: slow-link localization by greedy sparse tomography over connections.
 *
 * Each connection (a requester flow and its responder peer) is a row; each candidate
 * subject (a link, a host's access link, a host pair, a responder host) is a column whose
 * coefficient is the probability that the connection's packets cross it (1 with a known
 * path, a fraction when spread over ECMP alternatives). Per signal (latency excess over a
 * robust baseline, loss events per packet, CE marks per packet) a non-negative matching
 * pursuit picks the column that explains most of what remains (007's votes and
 * NetBouncer's path-product fit are the two ends of this), then thresholds decide whether
 * the pick is a real fault. docs/localization.md explains every number.
 */
#include "lib/localize/localize.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/log.h"
#include "lib/util/robust_stats.h"
#include "lib/util/util.h"

void localize_config_default(struct localize_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->min_latency_samples = 20;
	cfg->min_packets = 50;
	cfg->min_completion_samples = 10;
	cfg->min_class_flows = 4;
	cfg->baseline_windows = 3;
	cfg->slow_min_ratio = 1.20;
	cfg->shift_min_ratio = 1.05;
	cfg->slow_min_z = 5;
	cfg->shift_min_z = 4.5;
	cfg->noise_floor_frac = 0.01;
	cfg->loss_min_rate = 0.0002;
	cfg->loss_min_events = 3;
	cfg->loss_min_ratio = 5;
	cfg->loss_min_z = 3;
	cfg->ecn_min_rate = 0.005;
	cfg->ecn_min_events = 10;
	cfg->ecn_min_ratio = 4;
	cfg->ecn_min_z = 3;
	cfg->rnr_min_naks = 3;
	cfg->penalty_path = 1.5;
	cfg->penalty_host = 1.2;
	cfg->max_ecmp_paths = 64;
	cfg->max_findings = 5;
	cfg->min_confidence = 0.2;
	cfg->onset_min_shift = 3;
}

enum var_kind { VAR_LINK, VAR_HOST_LINK, VAR_PATH, VAR_HOST };
enum signal {
	SIG_LATENCY,
	SIG_SHIFT,
	SIG_COMPLETION,
	SIG_LOSS,
	SIG_ECN,
	SIG_TURNAROUND,
	N_SIGNALS
};
enum lat_kind { LAT_ACK, LAT_READ, LAT_COMPLETION };

struct var {
	enum var_kind kind;
	uint32_t link;			/* VAR_LINK */
	uint8_t a[16], b[16];		/* HOST_LINK/HOST: a; PATH: a < b */
	double penalty;
};

/* One (connection, subject) coefficient. */
struct incidence {
	uint32_t var;
	float rtt;			/* P(round trip crosses it): latency */
	float fwd;			/* P(data direction crosses it): loss, ECN */
	float fwd_ab;			/* P(data crosses it from a to b) */
	float rev;			/* P(ACK direction crosses it) */
	float rev_ab;			/* P(ACKs cross it from a to b) */
	bool ack_only;			/* the connection's latency covers only the ACKs' way */
};

struct conn {
	const struct flow_stats *req;	/* requester direction (data), may be NULL */
	const struct flow_stats *resp;	/* responder direction (ACKs), may be NULL */
	uint8_t src[16], dst[16];	/* requester -> responder */
	uint16_t sport_fwd, sport_rev;
	bool has_lat;
	enum lat_kind lat_kind;
	double lat_p50_us, lat_p99_us;
	double turnaround_us;		/* responder turnaround from a second vantage, or -1 */
	/* Data seen at one vantage and its ACKs at another (an ingress-only capture on each
	 * host): each packet is stamped where it arrives, so the ACK latency is the
	 * responder's turnaround plus the ACKs' way back, and the data's way is not in it. */
	bool ack_only;
	int klass;			/* baseline group: hop count * 4 + latency kind */
	double baseline_us, y[N_SIGNALS], w[N_SIGNALS];
	bool lat_own_past;		/* SIG_LATENCY: too few peers, baseline_us is its first windows */
	double shift_before_us;		/* SIG_SHIFT: window p50 before the flow's change point */
	bool has_comp;			/* message completion times (first packet -> last ACK) */
	double comp_p50_us, comp_p99_us, comp_baseline_us;
	int hops;			/* data path length; 0 without topology */
	bool valid[N_SIGNALS];
	double packets, loss_events, ce_events, rnr_naks;
	size_t inc_start, inc_len;
};

struct ctx {
	const struct localize_config *cfg;
	const struct topology *topo;
	const struct flow_stats *flows;
	size_t n_flows;
	struct conn *conns;
	size_t n_conns;
	struct var *vars;
	size_t n_vars, cap_vars;
	uint32_t *var_slots;		/* hash of vars: index + 1, 0 empty (a million QPs, many paths) */
	size_t var_slots_mask;
	struct incidence *inc;
	size_t n_inc, cap_inc;
	double *scratch, *scratch2;	/* scratch_len doubles each */
	size_t scratch_len;		/* max(n_flows, the most windows of a flow) */
	/* ECMP cache: per (src node, dst node) */
	struct ecmp_entry {
		uint32_t s, d;
		struct topo_hop *hops;
		size_t n_paths, len;
		int err;
	} *ecmp;
	size_t n_ecmp, cap_ecmp;
};

/* A pick of the matching pursuit and the verdict on it. */
struct candidate {
	uint32_t var;
	enum signal signal;
	enum finding_kind kind;
	double effect;			/* fitted excess in the signal's unit: us of RTT (shift:
					   a fraction of the flows' past), or events per packet */
	double effect_us;		/* latency signals: the effect in us */
	double z, strength, specificity, confidence, severity;
	double in_rate, out_rate, in_events, in_packets;
	double baseline_us, sigma_us, hurt_p99_us, peer_p99_us;
	double p99_ratio;		/* latency: hurt flows' p99 / their peers' (median) */
	char direction[128];
	uint32_t flows_hurt;
	uint64_t onset_ns;
	bool onset_change_point;
	bool own_past;			/* SIG_LATENCY judged against hurt flows' own first windows */
	char alt_subject[128];
	double alt_score_ratio;
	double *resid;			/* the pursuit's residuals when picked (evidence) */
	double share;			/* this pick's fit gain / the signal's first pick's */
	double n_eff;			/* sum of squared coefficients of the flows fitted */
	int variant;			/* loss/ECN: 0 both directions, 1 a -> b, 2 b -> a */
};

/* ------------------------------------------------------------------ helpers */

static void var_subject(const struct ctx *c, const struct var *v, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	switch (v->kind) {
	case VAR_LINK:
		snprintf(buf, len, "%s", c->topo->links[v->link].name);
		break;
	case VAR_HOST_LINK:
	case VAR_HOST:
		addr_str(v->a, buf, len);
		break;
	case VAR_PATH:
		addr_str(v->a, a, sizeof(a));
		addr_str(v->b, b, sizeof(b));
		snprintf(buf, len, "%.60s -> %.60s", a, b);
		break;
	}
}

static enum finding_subject_kind var_subject_kind(const struct var *v)
{
	switch (v->kind) {
	case VAR_LINK:
		return SUBJECT_LINK;
	case VAR_HOST_LINK:
		return SUBJECT_HOST_LINK;
	case VAR_PATH:
		return SUBJECT_PATH;
	default:
		return SUBJECT_HOST;
	}
}

static uint64_t var_hash(enum var_kind kind, uint32_t link, const uint8_t *a, const uint8_t *b)
{
	static const uint8_t zero[16];
	uint64_t h = ((uint64_t)kind << 32 | link) * 0x9e3779b97f4a7c15ull, w;

	a = a ? a : zero;
	b = b ? b : zero;
	for (int i = 0; i < 16; i += 8) {
		memcpy(&w, a + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

/* Index vars[0..n_vars) in a table twice their number or more. */
static int var_slots_grow(struct ctx *c)
{
	size_t cap = c->var_slots ? (c->var_slots_mask + 1) * 2 : 256;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_vars; i++) {
		const struct var *v = &c->vars[i];
		size_t j = var_hash(v->kind, v->link, v->a, v->b) & (cap - 1);

		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(c->var_slots);
	c->var_slots = slots;
	c->var_slots_mask = cap - 1;
	return 0;
}

/*
 * The var for (kind, link, a, b), added when new. Each kind always names the same parts (LINK
 * neither, HOST and HOST_LINK a, PATH a and b) and absent parts stay zero, so the hash of the
 * parts finds the one var that matches.
 */
static long add_var(struct ctx *c, enum var_kind kind, uint32_t link, const uint8_t *a,
		    const uint8_t *b)
{
	struct var *v;
	size_t j;

	if ((c->n_vars + 1) * 2 > (c->var_slots ? c->var_slots_mask + 1 : 0) && var_slots_grow(c))
		return -ENOMEM;
	j = var_hash(kind, link, a, b) & c->var_slots_mask;
	for (; c->var_slots[j]; j = (j + 1) & c->var_slots_mask) {
		v = &c->vars[c->var_slots[j] - 1];
		if (v->kind == kind && v->link == link && (!a || !memcmp(v->a, a, 16)) &&
		    (!b || !memcmp(v->b, b, 16)))
			return (long)(c->var_slots[j] - 1);
	}
	if (c->n_vars == c->cap_vars) {
		size_t cap = c->cap_vars ? c->cap_vars * 2 : 64;
		struct var *bigger = realloc(c->vars, cap * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		c->vars = bigger;
		c->cap_vars = cap;
	}
	v = &c->vars[c->n_vars];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->link = link;
	if (a)
		memcpy(v->a, a, 16);
	if (b)
		memcpy(v->b, b, 16);
	v->penalty = kind == VAR_PATH ? c->cfg->penalty_path :
		     kind == VAR_HOST ? c->cfg->penalty_host : 1.0;
	c->var_slots[j] = (uint32_t)c->n_vars + 1;
	return (long)c->n_vars++;
}

static int add_inc(struct ctx *c, const struct conn *k, long var, double rtt, double fwd,
		   double fwd_ab, double rev, double rev_ab)
{
	if (var < 0)
		return (int)var;
	if (c->n_inc == c->cap_inc) {
		size_t cap = c->cap_inc ? c->cap_inc * 2 : 256;
		struct incidence *bigger = realloc(c->inc, cap * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		c->inc = bigger;
		c->cap_inc = cap;
	}
	c->inc[c->n_inc++] = (struct incidence){ .var = (uint32_t)var,
						 .rtt = (float)rtt,
						 .fwd = (float)fwd,
						 .fwd_ab = (float)fwd_ab,
						 .rev = (float)rev,
						 .rev_ab = (float)rev_ab,
						 .ack_only = k->ack_only };
	return 0;
}

/* Growable text for the evidence JSON. */
struct sbuf {
	char *buf;
	size_t len, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->oom)
		return;
	for (;;) {
		size_t room = sb->cap - sb->len;
		va_start(ap, fmt);
		n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->oom = true;
			return;
		}
		if ((size_t)n < room) {
			sb->len += (size_t)n;
			return;
		}
		size_t cap = (sb->cap ? sb->cap : 256) * 2 + (size_t)n;
		char *bigger = realloc(sb->buf, cap);
		if (!bigger) {
			sb->oom = true;
			return;
		}
		sb->buf = bigger;
		sb->cap = cap;
	}
}

/* JSON numbers: finite, compact. */
static double jnum(double x)
{
	return isfinite(x) ? x : 0;
}

/* ------------------------------------------------------------------ connections */

static int cmp_key(const struct flow_stats *x, const struct flow_stats *y)
{
	int r = memcmp(x->key.src_ip, y->key.src_ip, 16);
	if (r)
		return r;
	r = memcmp(x->key.dst_ip, y->key.dst_ip, 16);
	if (r)
		return r;
	return (x->key.dst_qpn > y->key.dst_qpn) - (x->key.dst_qpn < y->key.dst_qpn);
}

static int cmp_flow_idx(const void *a, const void *b, void *arg)
{
	const struct flow_stats *flows = arg;
	const struct flow_stats *x = &flows[*(const size_t *)a];
	const struct flow_stats *y = &flows[*(const size_t *)b];
	int r = cmp_key(x, y);
	if (r)
		return r;
	return (x->vantage > y->vantage) - (x->vantage < y->vantage);
}

static const struct flow_stats *flow_by_id(const struct ctx *c, uint64_t id)
{
	if (!id)
		return NULL;
	/* A tracker snapshot holds ids 1..n in order: O(1), not a scan per flow (1M flows). */
	if (id <= c->n_flows && c->flows[id - 1].id == id)
		return &c->flows[id - 1];
	for (size_t i = 0; i < c->n_flows; i++)
		if (c->flows[i].id == id)
			return &c->flows[i];
	return NULL;
}

/* The latency a flow offers: ACK, else READ, else completion; p50 and p99 in us. */
static bool flow_latency(const struct localize_config *cfg, const struct flow_stats *f,
			 enum lat_kind *kind, double *p50, double *p99)
{
	if (f->ack_samples >= cfg->min_latency_samples && f->ack_latency_p50_us > 0) {
		*kind = LAT_ACK;
		*p50 = f->ack_latency_p50_us;
		*p99 = f->ack_latency_p99_us;
		return true;
	}
	if (f->read_samples >= cfg->min_latency_samples && f->read_latency_p50_us > 0) {
		*kind = LAT_READ;
		*p50 = f->read_latency_p50_us;
		*p99 = f->read_latency_p99_us;
		return true;
	}
	if (f->completion_samples >= cfg->min_latency_samples && f->completion_p50_us > 0) {
		*kind = LAT_COMPLETION;
		*p50 = f->completion_p50_us;
		*p99 = f->completion_p99_us;
		return true;
	}
	return false;
}

static double max2(double a, double b)
{
	return a > b ? a : b;
}

static void fill_conn_counts(struct conn *k)
{
	const struct flow_stats *q = k->req, *r = k->resp;
	double naks = 0, timeouts = 0, retx = 0, ce = 0, cnps = 0, rnr = 0;

	/* The analyzer may count a NAK on the flow that carries it or on the one it answers:
	 * take the larger side rather than the sum so nothing is counted twice. */
	if (q) {
		naks = (double)q->naks_psn_seq;
		timeouts = (double)q->timeouts;
		retx = (double)q->retransmitted_packets;
		ce = (double)q->ecn_ce;
		cnps = (double)q->cnps;
		rnr = (double)q->rnr_naks;
	}
	if (r) {
		naks = max2(naks, (double)r->naks_psn_seq);
		timeouts = max2(timeouts, (double)r->timeouts);
		retx += (double)r->retransmitted_packets;
		ce += (double)r->ecn_ce;
		cnps = max2(cnps, (double)r->cnps);
		rnr = max2(rnr, (double)r->rnr_naks);
	}
	k->loss_events = naks + timeouts > 0 ? naks + timeouts : retx;
	/* A sender-side capture sees no CE marks, only the CNPs that answer them. */
	k->ce_events = max2(ce, cnps);
	k->rnr_naks = rnr;
	k->packets = (double)(q ? q->packets : r->packets);
}

static int build_conns(struct ctx *c)
{
	const struct flow_stats *flows = c->flows;
	size_t n = c->n_flows, *order = NULL, i = 0;
	bool *primary = NULL;
	double *turnaround = NULL;
	int err = -ENOMEM;

	order = malloc((n ? n : 1) * sizeof(*order));
	primary = calloc(n ? n : 1, sizeof(*primary));
	turnaround = malloc((n ? n : 1) * sizeof(*turnaround));
	c->conns = calloc(n ? n : 1, sizeof(*c->conns));
	if (!order || !primary || !turnaround || !c->conns)
		goto cleanup;
	for (i = 0; i < n; i++) {
		order[i] = i;
		turnaround[i] = -1;
	}
	qsort_r(order, n, sizeof(*order), cmp_flow_idx, (void *)flows);
	/*
	 * The same key seen from several vantages: the copy with the longest ACK latency saw
	 * the whole round trip (requester side); the shortest saw only the responder's
	 * turnaround (request in, ACK out). Their difference is the network's share.
	 */
	for (i = 0; i < n;) {
		size_t j = i, best = order[i];
		double lo = INFINITY, hi = -1;
		int with_lat = 0;
		enum lat_kind kind;
		double p50, p99;
		while (j < n && !cmp_key(&flows[order[i]], &flows[order[j]]))
			j++;
		for (size_t k = i; k < j; k++) {
			const struct flow_stats *f = &flows[order[k]];
			if (flow_latency(c->cfg, f, &kind, &p50, &p99)) {
				with_lat++;
				if (p50 > hi) {
					hi = p50;
					best = order[k];
				}
				if (p50 < lo)
					lo = p50;
			} else if (with_lat == 0 && f->packets > flows[best].packets) {
				best = order[k];
			}
		}
		primary[best] = true;
		if (with_lat >= 2 && lo < hi)
			turnaround[best] = lo;
		i = j;
	}
	for (i = 0; i < n; i++) {
		const struct flow_stats *f = &flows[i], *peer;
		struct conn *k;
		if (!primary[i])
			continue;
		peer = flow_by_id(c, f->peer_id);
		if (f->role == FLOW_ROLE_RESPONDER && peer)
			continue; /* joins its requester's connection */
		k = &c->conns[c->n_conns++];
		memset(k, 0, sizeof(*k));
		k->turnaround_us = turnaround[i];
		if (f->role == FLOW_ROLE_RESPONDER) {
			k->resp = f;
			memcpy(k->src, f->key.dst_ip, 16);
			memcpy(k->dst, f->key.src_ip, 16);
			k->sport_rev = f->udp_sport;
		} else {
			k->req = f;
			k->resp = peer;
			memcpy(k->src, f->key.src_ip, 16);
			memcpy(k->dst, f->key.dst_ip, 16);
			k->sport_fwd = f->udp_sport;
			k->sport_rev = peer ? peer->udp_sport : 0;
		}
		k->ack_only = k->req && k->resp && k->req->vantage != k->resp->vantage &&
			      k->turnaround_us < 0;
		if (k->req && flow_latency(c->cfg, k->req, &k->lat_kind, &k->lat_p50_us,
					   &k->lat_p99_us)) {
			k->has_lat = true;
			if (k->turnaround_us >= 0)
				k->lat_p50_us -= k->turnaround_us;
		}
		if (k->req && k->req->completion_samples >= c->cfg->min_completion_samples &&
		    k->req->completion_p50_us > 0 && k->turnaround_us < 0) {
			k->has_comp = true;
			k->comp_p50_us = k->req->completion_p50_us;
			k->comp_p99_us = k->req->completion_p99_us;
			/* Stamped at arrival, completion beyond the ACK latency is the spread of
			 * the data's arrival: keep only that, the latency signal has the rest. */
			if (k->ack_only && k->has_lat) {
				k->comp_p50_us = fmax(k->comp_p50_us - k->lat_p50_us, 0);
				k->comp_p99_us = fmax(k->comp_p99_us - k->lat_p50_us, 0);
			}
		}
		fill_conn_counts(k);
	}
	err = 0;
cleanup:
	free(order);
	free(primary);
	free(turnaround);
	return err;
}

/* ------------------------------------------------------------------ incidence */

static struct ecmp_entry *ecmp_paths(struct ctx *c, uint32_t s, uint32_t d)
{
	struct ecmp_entry *e;

	for (size_t i = 0; i < c->n_ecmp; i++)
		if (c->ecmp[i].s == s && c->ecmp[i].d == d)
			return &c->ecmp[i];
	if (c->n_ecmp == c->cap_ecmp) {
		size_t cap = c->cap_ecmp ? c->cap_ecmp * 2 : 32;
		struct ecmp_entry *bigger = realloc(c->ecmp, cap * sizeof(*bigger));
		if (!bigger)
			return NULL;
		c->ecmp = bigger;
		c->cap_ecmp = cap;
	}
	e = &c->ecmp[c->n_ecmp++];
	memset(e, 0, sizeof(*e));
	e->s = s;
	e->d = d;
	e->err = topology_shortest_paths(c->topo, s, d, c->cfg->max_ecmp_paths, &e->hops,
					 &e->n_paths, &e->len);
	return e;
}

/*
 * Accumulate into p[link] the probability that traffic from s to d with this UDP source
 * port crosses each link (and into ab[link] that it crosses from a to b). Returns 1 when
 * the path was recorded in paths.csv, 0 when spread over ECMP, -ENOENT when unknown.
 */
static int path_probs(struct ctx *c, const uint8_t s_addr[16], const uint8_t d_addr[16],
		      uint16_t sport, bool have_sport, double *p, double *ab, int *hops)
{
	const struct topo_path *path = NULL;
	long s = topology_host(c->topo, s_addr), d = topology_host(c->topo, d_addr);
	struct ecmp_entry *e;

	if (have_sport)
		path = topology_find_path(c->topo, s_addr, d_addr, sport);
	if (path) {
		for (size_t i = 0; i < path->n_hops; i++) {
			p[path->hops[i].link] += 1;
			if (path->hops[i].a_to_b)
				ab[path->hops[i].link] += 1;
		}
		*hops = (int)path->n_hops;
		return 1;
	}
	if (s < 0 || d < 0)
		return -ENOENT;
	e = ecmp_paths(c, (uint32_t)s, (uint32_t)d);
	if (!e)
		return -ENOMEM;
	if (e->err || !e->n_paths)
		return -ENOENT;
	for (size_t k = 0; k < e->n_paths; k++)
		for (size_t i = 0; i < e->len; i++) {
			const struct topo_hop *h = &e->hops[k * e->len + i];
			p[h->link] += 1.0 / (double)e->n_paths;
			if (h->a_to_b)
				ab[h->link] += 1.0 / (double)e->n_paths;
		}
	*hops = (int)e->len;
	return 0;
}

static int build_incidence_topology(struct ctx *c, struct conn *k, double *pf, double *pr,
				    double *ab, double *scratch_ab)
{
	size_t nl = c->topo->n_links;
	int hops = 0, rev_hops = 0, fwd_kind, rev_kind = -ENOENT, err;

	memset(pf, 0, nl * sizeof(*pf));
	memset(pr, 0, nl * sizeof(*pr));
	memset(ab, 0, nl * sizeof(*ab));
	fwd_kind = path_probs(c, k->src, k->dst, k->sport_fwd, k->req != NULL, pf, ab, &hops);
	if (fwd_kind == -ENOMEM)
		return -ENOMEM;
	if (fwd_kind < 0)
		return 0; /* hosts not in links.csv: this connection gives no evidence */
	if (k->resp) {
		memset(scratch_ab, 0, nl * sizeof(*scratch_ab));
		rev_kind = path_probs(c, k->dst, k->src, k->sport_rev, true, pr, scratch_ab,
				      &rev_hops);
		if (rev_kind == -ENOMEM)
			return -ENOMEM;
		/* ACKs of a pinned path whose reverse is not recorded: assume symmetry. */
		if (rev_kind == 0 && fwd_kind == 1) {
			memset(pr, 0, nl * sizeof(*pr));
			rev_kind = -ENOENT;
		}
	}
	for (size_t l = 0; rev_kind < 0 && l < nl; l++) {
		pr[l] = pf[l]; /* the ACKs take the data's path back */
		scratch_ab[l] = pf[l] - ab[l];
	}
	for (size_t l = 0; l < nl; l++) {
		double rtt = 1 - (1 - fmin(pf[l], 1)) * (1 - fmin(pr[l], 1));
		if (rtt <= 0)
			continue;
		err = add_inc(c, k, (long)l, rtt, pf[l], ab[l], pr[l], scratch_ab[l]);
		if (err)
			return err;
	}
	k->klass = hops * 4 + (int)k->lat_kind;
	k->hops = hops;
	/* The responder's turnaround is in the round trip unless a second vantage split it. */
	double t = k->turnaround_us < 0 ? 1 : 0;
	return add_inc(c, k, add_var(c, VAR_HOST, 0, k->dst, NULL), t, 0, 0, t, 0);
}

static int build_incidence_hosts(struct ctx *c, struct conn *k)
{
	const uint8_t *lo = memcmp(k->src, k->dst, 16) <= 0 ? k->src : k->dst;
	const uint8_t *hi = lo == k->src ? k->dst : k->src;
	int err;

	double t = k->turnaround_us < 0 ? 1 : 0;
	/* Host link vars: a = the host; "a -> b" means leaving the host. The data leaves the
	 * requester and enters the responder; the ACKs the other way round. */
	err = add_inc(c, k, add_var(c, VAR_HOST_LINK, 0, k->src, NULL), 1, 1, 1, 1, 0);
	if (!err)
		err = add_inc(c, k, add_var(c, VAR_HOST_LINK, 0, k->dst, NULL), 1, 1, 0, 1, 1);
	if (!err)
		err = add_inc(c, k, add_var(c, VAR_PATH, 0, lo, hi), 1, 1, lo == k->src ? 1 : 0,
			      1, lo == k->src ? 0 : 1);
	if (!err)
		err = add_inc(c, k, add_var(c, VAR_HOST, 0, k->dst, NULL), t, 0, 0, t, 0);
	k->klass = (int)k->lat_kind;
	return err;
}

static int build_incidence(struct ctx *c)
{
	size_t nl = c->topo ? c->topo->n_links : 0;
	double *buf = NULL;
	int err = 0;

	if (c->topo) {
		/* Links are the first variables, index == link index. */
		for (size_t l = 0; l < nl; l++)
			if (add_var(c, VAR_LINK, (uint32_t)l, NULL, NULL) < 0)
				return -ENOMEM;
		buf = calloc(4 * (nl ? nl : 1), sizeof(*buf));
		if (!buf)
			return -ENOMEM;
	}
	for (size_t i = 0; i < c->n_conns && !err; i++) {
		struct conn *k = &c->conns[i];
		k->inc_start = c->n_inc;
		if (c->topo)
			err = build_incidence_topology(c, k, buf, buf + nl, buf + 2 * nl,
						       buf + 3 * nl);
		else
			err = build_incidence_hosts(c, k);
		k->inc_len = c->n_inc - k->inc_start;
	}
	free(buf);
	return err;
}

/* ------------------------------------------------------------------ signals */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Median p50 of the flow's first windows with ACK samples, in us; -1 if too few. */
static double early_baseline_us(const struct ctx *c, const struct flow_stats *f)
{
	double v[64];
	size_t n = 0, with = 0;

	for (size_t i = 0; i < f->n_windows; i++)
		with += f->windows[i].ack_samples > 0;
	if (with < 2 * (size_t)c->cfg->baseline_windows)
		return -1;
	for (size_t i = 0; i < f->n_windows && n < c->cfg->baseline_windows && n < 64; i++)
		if (f->windows[i].ack_samples > 0)
			v[n++] = f->windows[i].ack_latency_p50_ns / 1000.0;
	return n ? rs_median(v, n) : -1;
}

static void build_signals(struct ctx *c)
{
	size_t n = c->n_conns;
	int *classes = malloc((n ? n : 1) * sizeof(*classes));
	size_t n_classes = 0;
	double *v = c->scratch;

	/* Latency: excess over the median of the connection's class. */
	for (size_t i = 0; i < n; i++)
		if (c->conns[i].has_lat && c->conns[i].inc_len)
			classes[n_classes++] = c->conns[i].klass;
	if (n_classes)
		qsort(classes, n_classes, sizeof(*classes), cmp_int);
	for (size_t i = 0; i < n_classes;) {
		size_t j = i, m = 0;
		double med;
		while (j < n_classes && classes[j] == classes[i])
			j++;
		for (size_t k = 0; k < n; k++)
			if (c->conns[k].has_lat && c->conns[k].inc_len &&
			    c->conns[k].klass == classes[i])
				v[m++] = c->conns[k].lat_p50_us;
		med = rs_median(v, m);
		for (size_t k = 0; k < n; k++) {
			struct conn *cn = &c->conns[k];
			if (!cn->has_lat || !cn->inc_len || cn->klass != classes[i])
				continue;
			cn->baseline_us = med;
			if (m < c->cfg->min_class_flows) {
				/* Too few peers to compare with: compare with its own past. */
				cn->baseline_us = cn->lat_kind == LAT_ACK && cn->turnaround_us < 0 ?
							  early_baseline_us(c, cn->req) :
							  -1;
				if (cn->baseline_us <= 0)
					continue;
				cn->lat_own_past = true;
			}
			cn->y[SIG_LATENCY] = cn->lat_p50_us - cn->baseline_us;
			cn->w[SIG_LATENCY] = 1;
			cn->valid[SIG_LATENCY] = true;
		}
		i = j;
	}
	free(classes);

	/* Completion: a slow serializer stretches whole messages more than single ACKs (a
	 * mirror at the sender stamps packets as they leave, after any queue in the host). */
	for (size_t k = 0; k < n; k++) {
		struct conn *cn = &c->conns[k];
		size_t m = 0;
		if (!cn->has_comp || !cn->inc_len || cn->valid[SIG_COMPLETION])
			continue;
		for (size_t j = 0; j < n; j++)
			if (c->conns[j].has_comp && c->conns[j].inc_len &&
			    c->conns[j].hops == cn->hops)
				v[m++] = c->conns[j].comp_p50_us;
		if (m < c->cfg->min_class_flows)
			continue;
		double med = rs_median(v, m);
		for (size_t j = 0; j < n; j++) {
			struct conn *o = &c->conns[j];
			if (!o->has_comp || !o->inc_len || o->hops != cn->hops)
				continue;
			o->comp_baseline_us = med;
			o->y[SIG_COMPLETION] = o->comp_p50_us - med;
			o->w[SIG_COMPLETION] = 1;
			o->valid[SIG_COMPLETION] = true;
		}
	}

	for (size_t k = 0; k < n; k++) {
		struct conn *cn = &c->conns[k];
		if (!cn->inc_len || cn->packets < (double)c->cfg->min_packets)
			continue;
		cn->y[SIG_LOSS] = cn->loss_events / cn->packets;
		cn->w[SIG_LOSS] = cn->packets;
		cn->valid[SIG_LOSS] = true;
		cn->y[SIG_ECN] = cn->ce_events / cn->packets;
		cn->w[SIG_ECN] = cn->packets;
		cn->valid[SIG_ECN] = true;
	}

	/* Shift: each flow against its own past (its window p50 series split in two where the
	 * squared error is least). Static differences between paths cancel out. */
	for (size_t k = 0; k < n; k++) {
		struct conn *cn = &c->conns[k];
		const struct flow_stats *f = cn->req;
		struct change_point cp;
		size_t m = 0;
		if (!cn->has_lat || !cn->inc_len || cn->lat_kind != LAT_ACK ||
		    cn->turnaround_us >= 0 || !f)
			continue;
		/* Bounded by the scratch size: a flow can have more windows than there are flows. */
		for (size_t i = 0; i < f->n_windows && m < c->scratch_len; i++)
			if (f->windows[i].ack_samples > 0)
				v[m++] = f->windows[i].ack_latency_p50_ns / 1000.0;
		if (rs_change_point(v, m, 2, &cp))
			continue;
		if (cp.mean_before <= 0)
			continue;
		/* Relative: a flow's noise grows with its latency (queues on longer paths),
		 * so +2 us on a 4 us one-leaf path is as telling as +4 us on an 8 us one. */
		cn->y[SIG_SHIFT] = (cp.mean_after - cp.mean_before) / cp.mean_before;
		cn->shift_before_us = cp.mean_before;
		cn->w[SIG_SHIFT] = 1;
		cn->valid[SIG_SHIFT] = true;
	}

	/* Turnaround seen from a second vantage: excess over all responders' median. */
	size_t m = 0;
	for (size_t k = 0; k < n; k++)
		if (c->conns[k].turnaround_us >= 0 && c->conns[k].inc_len)
			v[m++] = c->conns[k].turnaround_us;
	if (m >= c->cfg->min_class_flows) {
		double med = rs_median(v, m);
		for (size_t k = 0; k < n; k++) {
			struct conn *cn = &c->conns[k];
			if (cn->turnaround_us < 0 || !cn->inc_len)
				continue;
			cn->y[SIG_TURNAROUND] = cn->turnaround_us - med;
			cn->w[SIG_TURNAROUND] = 1;
			cn->valid[SIG_TURNAROUND] = true;
		}
	}
}

/*
 * Coefficient of one incidence for a signal. Loss and marks are one-way: variant 1 counts
 * only data crossing the subject from a to b, variant 2 only b to a, variant 0 either.
 */
static double coef(const struct ctx *c, const struct incidence *e, enum signal s, int variant)
{
	switch (s) {
	case SIG_LATENCY:
	case SIG_COMPLETION:
		/* Without a topology a host pair is expected to differ from the population
		 * (same leaf or not): only a change over time, loss or marks blame a pair. */
		if (c->vars[e->var].kind == VAR_PATH)
			return 0;
		/* fall through */
	case SIG_SHIFT:
		if (e->ack_only && s != SIG_COMPLETION) {
			/* Each packet stamped where it arrives: an ACK latency holds the
			 * responder's turnaround and the ACKs' way back, not the data's way. */
			return !variant ? e->rev : variant == 1 ? e->rev_ab : e->rev - e->rev_ab;
		}
		if (e->ack_only) {
			/* A message's completion (first data packet in at the responder, last
			 * ACK in at the requester) grows beyond its ACK latency only when its
			 * data arrive spread out: the data's way. */
			return !variant ? e->fwd : variant == 1 ? e->fwd_ab : e->fwd - e->fwd_ab;
		}
		/* A fixed delay slows every round trip that crosses the subject either way; a
		 * slow serializer mostly hurts the big data packets of one direction. */
		if (!variant)
			return e->rtt;
		return variant == 1 ? e->fwd_ab : e->fwd - e->fwd_ab;
	case SIG_LOSS:
	case SIG_ECN:
		return variant == 1 ? e->fwd_ab : variant == 2 ? e->fwd - e->fwd_ab : e->fwd;
	case SIG_TURNAROUND:
		return c->vars[e->var].kind == VAR_HOST ? 1 : 0;
	default:
		return 0;
	}
}

static double conn_coef(const struct ctx *c, const struct conn *k, uint32_t v, enum signal s,
			int variant)
{
	for (size_t i = 0; i < k->inc_len; i++) {
		const struct incidence *e = &c->inc[k->inc_start + i];
		if (e->var == v)
			return coef(c, e, s, variant);
	}
	return 0;
}

/* ------------------------------------------------------------------ decisions */

static double strength_of(double z, double z_min)
{
	double r = z / z_min;
	return r <= 0 ? 0 : 1 - exp(-r * r);
}

/* Poisson z of observing `events` where `expected` were due. */
static double poisson_z(double events, double expected)
{
	return (events - expected) / sqrt(expected + 1);
}

/* Per-window value of one signal over a set of connections, for the change point. */
struct win_point {
	uint64_t start_ns;
	double num, den;
};

static int cmp_win(const void *a, const void *b)
{
	const struct win_point *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static void add_windows(struct win_point **pts, size_t *n, size_t *cap,
			const struct flow_stats *f, enum signal s)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_windows; i++) {
		const struct flow_window *w = &f->windows[i];
		struct win_point p = { .start_ns = w->start_ns };
		switch (s) {
		case SIG_LATENCY:
		case SIG_SHIFT:
		case SIG_COMPLETION:
		case SIG_TURNAROUND:
			if (!w->ack_samples)
				continue;
			p.num = w->ack_latency_p50_ns / 1000.0;
			p.den = 1;
			break;
		case SIG_LOSS:
			p.num = w->naks + w->timeouts ? (double)(w->naks + w->timeouts) :
							(double)w->retransmitted_packets;
			p.den = (double)w->packets;
			break;
		case SIG_ECN:
			p.num = max2((double)w->ecn_ce, (double)w->cnps);
			p.den = (double)w->packets;
			break;
		default:
			continue;
		}
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			struct win_point *bigger = realloc(*pts, ncap * sizeof(*bigger));
			if (!bigger)
				return;
			*pts = bigger;
			*cap = ncap;
		}
		(*pts)[(*n)++] = p;
	}
}

/* Onset: change point of the hurt connections' summed per-window series. */
static void find_onset(struct ctx *c, struct candidate *cand, const bool *hurt)
{
	struct win_point *pts = NULL;
	size_t n = 0, cap = 0, m = 0;
	double *series = NULL;
	uint64_t *starts = NULL;
	struct change_point cp;

	for (size_t k = 0; k < c->n_conns; k++) {
		if (!hurt[k])
			continue;
		add_windows(&pts, &n, &cap, c->conns[k].req, cand->signal);
		if (cand->signal == SIG_LOSS || cand->signal == SIG_ECN)
			add_windows(&pts, &n, &cap, c->conns[k].resp, cand->signal);
	}
	if (!n)
		goto cleanup;
	qsort(pts, n, sizeof(*pts), cmp_win);
	series = malloc(n * sizeof(*series));
	starts = malloc(n * sizeof(*starts));
	if (!series || !starts)
		goto cleanup;
	for (size_t i = 0; i < n;) {
		double num = 0, den = 0;
		size_t j = i;
		while (j < n && pts[j].start_ns == pts[i].start_ns) {
			num += pts[j].num;
			den += pts[j].den;
			j++;
		}
		if (den > 0) {
			series[m] = num / den;
			starts[m++] = pts[i].start_ns;
		}
		i = j;
	}
	if (!m)
		goto cleanup;
	cand->onset_ns = starts[0]; /* present from the first window, unless a change shows */
	for (size_t i = 0; i < m; i++)
		if (series[i] > 0) {
			cand->onset_ns = starts[i];
			break;
		}
	if (!rs_change_point(series, m, 1, &cp) && cp.mean_after > cp.mean_before) {
		double shift = cp.mean_after - cp.mean_before;
		/* Loss and marks are counts: let a quiet first segment still show a change. */
		bool counts = cand->signal == SIG_LOSS || cand->signal == SIG_ECN;
		double floor = counts ? cp.mean_after * 0.1 : cand->sigma_us;
		if (shift >= c->cfg->onset_min_shift * fmax(cp.sigma, floor) &&
		    (!counts || cp.mean_before <= cp.mean_after * 0.5)) {
			cand->onset_ns = starts[cp.split];
			cand->onset_change_point = true;
		}
	}
cleanup:
	free(pts);
	free(series);
	free(starts);
}

/* "a -> b" when the pursuit preferred one direction of a link (variants 1 and 2). */
static void direction_text(const struct ctx *c, struct candidate *cand)
{
	const struct var *v = &c->vars[cand->var];
	char a[TOPO_NAME_MAX], b[TOPO_NAME_MAX];

	if (!cand->variant || (v->kind != VAR_LINK && v->kind != VAR_HOST_LINK))
		return;
	if (v->kind == VAR_LINK) {
		const struct topo_link *l = &c->topo->links[v->link];
		snprintf(a, sizeof(a), "%s", c->topo->nodes[l->a].name);
		snprintf(b, sizeof(b), "%s", c->topo->nodes[l->b].name);
	} else {
		addr_str(v->a, a, sizeof(a));
		snprintf(b, sizeof(b), "fabric");
	}
	snprintf(cand->direction, sizeof(cand->direction), "%.60s -> %.60s",
		 cand->variant == 1 ? a : b, cand->variant == 1 ? b : a);
}

/*
 * Judge a pick against the raw data: is the subject's excess large and significant next
 * to connections that do not cross it? Fills the candidate; returns true to report it.
 */
static bool judge(struct ctx *c, struct candidate *cand, const double *resid, bool *hurt)
{
	const struct localize_config *cfg = c->cfg;
	const struct var *v = &c->vars[cand->var];
	size_t n_out = 0, n_hurt = 0;
	double *out = c->scratch, *tmp = c->scratch2;
	double ab_events = 0, ab_pk = 0, ba_events = 0, ba_pk = 0;
	enum signal s = cand->signal;

	memset(hurt, 0, c->n_conns * sizeof(*hurt));
	cand->in_events = cand->in_packets = 0;
	double out_events = 0, out_pk = 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		double a;
		if (!cn->valid[s])
			continue;
		a = conn_coef(c, cn, cand->var, s, cand->variant);
		if (s == SIG_LOSS || s == SIG_ECN) {
			/* Only what earlier picks left unexplained counts as evidence. */
			double ev = fmax(resid[k], 0) * cn->packets;
			if (a > 0) {
				cand->in_events += a * ev;
				cand->in_packets += a * cn->packets;
				hurt[k] = ev > 0;
				/* Direction: where the data crossed the subject. */
				for (size_t i = 0; i < cn->inc_len; i++) {
					const struct incidence *e = &c->inc[cn->inc_start + i];
					if (e->var != cand->var)
						continue;
					ab_events += e->fwd_ab * ev;
					ab_pk += e->fwd_ab * cn->packets;
					ba_events += (e->fwd - e->fwd_ab) * ev;
					ba_pk += (e->fwd - e->fwd_ab) * cn->packets;
				}
			} else {
				out_events += ev;
				out_pk += cn->packets;
			}
		} else {
			if (a > 0)
				hurt[k] = resid[k] > cand->effect / 2;
			else
				out[n_out++] = resid[k];
		}
	}
	size_t n_touch = 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		n_hurt += hurt[k];
		n_touch += c->conns[k].valid[s] && conn_coef(c, &c->conns[k], cand->var, s,
							     cand->variant) >= 1;
	}
	cand->flows_hurt = (uint32_t)n_hurt;
	if (!n_hurt || cand->effect <= 0)
		return false;
	/* A slow host link or host slows most of what crosses it; one slow flow among many
	 * is that flow's own story (its peer, its path), not the host's. */
	if ((s == SIG_LATENCY || s == SIG_SHIFT || s == SIG_COMPLETION) &&
	    (v->kind == VAR_HOST_LINK || v->kind == VAR_HOST) && 2 * n_hurt < n_touch)
		return false;
	/* Likewise a host pair: a fault between two hosts slows most of their QPs. */
	if ((s == SIG_LATENCY || s == SIG_SHIFT || s == SIG_COMPLETION) && v->kind == VAR_PATH &&
	    n_touch > 1 && 2 * n_hurt <= n_touch)
		return false;

	if (s == SIG_LOSS || s == SIG_ECN) {
		double min_rate = s == SIG_LOSS ? cfg->loss_min_rate : cfg->ecn_min_rate;
		double min_events = s == SIG_LOSS ? cfg->loss_min_events : cfg->ecn_min_events;
		double min_ratio = s == SIG_LOSS ? cfg->loss_min_ratio : cfg->ecn_min_ratio;
		double min_z = s == SIG_LOSS ? cfg->loss_min_z : cfg->ecn_min_z;
		cand->in_rate = cand->in_packets > 0 ? cand->in_events / cand->in_packets : 0;
		cand->out_rate = out_pk > 0 ? out_events / out_pk : 0;
		cand->z = poisson_z(cand->in_events, cand->out_rate * cand->in_packets);
		cand->severity = fmin(cand->effect, 1);
		cand->kind = s == SIG_LOSS ? FINDING_LOSSY : FINDING_CONGESTED;
		cand->strength = strength_of(cand->z, min_z);
		direction_text(c, cand);
		return cand->in_events >= min_events && cand->in_rate >= min_rate &&
		       cand->in_rate >= min_ratio * cand->out_rate && cand->z >= min_z;
	}

	/* Latency (or turnaround). */
	double base_sum = 0, p99_ratio[256];
	size_t n_base = 0, n_ratio = 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		if (!hurt[k])
			continue;
		cand->own_past |= s == SIG_LATENCY && cn->lat_own_past;
		base_sum += s == SIG_TURNAROUND ? cn->turnaround_us - cn->y[s] :
			    s == SIG_SHIFT	 ? cn->shift_before_us :
			    s == SIG_COMPLETION ? cn->comp_baseline_us :
						   cn->baseline_us;
		n_base++;
	}
	cand->baseline_us = n_base ? base_sum / (double)n_base : 0;
	/* us per unit of the signal: the shift is relative to the flows' own past. */
	double unit = s != SIG_SHIFT ? 1 : cand->baseline_us > 0 ? cand->baseline_us : 1;
	cand->sigma_us = n_out >= 3 ? rs_sigma(out, n_out, tmp) : 0;
	if (n_out >= 10) {
		/* Latencies have a peaked core and a long right tail (incast, bursts): the MAD
		 * sees only the core. The 90th percentile's distance from the median is the
		 * spread of a normal one would need to produce that tail; take the larger. */
		memcpy(tmp, out, n_out * sizeof(*tmp));
		double q50 = rs_median(tmp, n_out); /* sorts tmp */
		double q90 = tmp[(size_t)(0.9 * (double)(n_out - 1))];
		cand->sigma_us = fmax(cand->sigma_us, (q90 - q50) / 1.2816);
	}
	cand->sigma_us = fmax(cand->sigma_us, cfg->noise_floor_frac * cand->baseline_us / unit);
	cand->sigma_us = fmax(cand->sigma_us, 0.01 / unit);
	/* The effect is a least-squares mean over the subject's flows: its standard error
	 * shrinks with the square root of their (coefficient-weighted) number. */
	cand->z = cand->effect / cand->sigma_us * sqrt(fmax(cand->n_eff, 1));
	cand->sigma_us *= unit;
	cand->effect_us = cand->effect * unit;
	cand->kind = s == SIG_TURNAROUND || v->kind == VAR_HOST ? FINDING_HOST : FINDING_SLOW;
	direction_text(c, cand);
	double min_z = s == SIG_SHIFT ? cfg->shift_min_z : cfg->slow_min_z;
	cand->strength = strength_of(cand->z, min_z);
	/* Severity: each hurt connection's p99 against the median p99 of its class. */
	bool comp = s == SIG_COMPLETION;
	for (size_t k = 0; k < c->n_conns && n_ratio < 256; k++) {
		const struct conn *cn = &c->conns[k];
		double p99 = comp ? cn->comp_p99_us : cn->lat_p99_us;
		size_t m = 0;
		if (!hurt[k] || !(comp ? cn->has_comp : cn->has_lat))
			continue;
		for (size_t j = 0; j < c->n_conns; j++) {
			const struct conn *o = &c->conns[j];
			if (hurt[j])
				continue;
			if (comp && o->has_comp && o->hops == cn->hops && o->comp_p99_us > 0)
				tmp[m++] = o->comp_p99_us;
			else if (!comp && o->has_lat && o->klass == cn->klass && o->lat_p99_us > 0)
				tmp[m++] = o->lat_p99_us;
		}
		if (!m || p99 <= 0)
			continue;
		double peer = rs_median(tmp, m);
		p99_ratio[n_ratio++] = p99 / peer;
		cand->hurt_p99_us += p99;
		cand->peer_p99_us += peer;
	}
	if (n_ratio) {
		cand->hurt_p99_us /= (double)n_ratio;
		cand->peer_p99_us /= (double)n_ratio;
		cand->p99_ratio = rs_median(p99_ratio, n_ratio);
	}
	/* Severity: the typical latency of the hurt flows against their baseline ("slow by
	 * 2x"). Their p99 against their peers' goes into the text and the evidence: a p99 of
	 * ~100 samples in a loaded fabric is too noisy to decide on. */
	cand->severity = cand->baseline_us > 0 ?
				 (cand->baseline_us + cand->effect_us) / cand->baseline_us :
				 0;
	double min_ratio = s == SIG_SHIFT ? cfg->shift_min_ratio : cfg->slow_min_ratio;
	/* Without peers the latency signal too is a flow against its own past: both bars. */
	if (cand->own_past)
		min_ratio = fmax(min_ratio, cfg->shift_min_ratio);
	return cand->baseline_us > 0 && cand->severity >= min_ratio && cand->z >= min_z;
}

/* ------------------------------------------------------------------ pursuit */

static const char *signal_name(enum signal s);

/* Tie-break order of a (variable, variant) slot: a host link's "H -> fabric" first. */
static int egress_rank(const struct ctx *c, size_t slot)
{
	return c->vars[slot / 3].kind == VAR_HOST_LINK && slot % 3 == 1;
}

static int pursue(struct ctx *c, enum signal s, struct candidate **cands, size_t *n_cands,
		  size_t *cap_cands)
{
	size_t nv = c->n_vars;
	double *resid = malloc((c->n_conns ? c->n_conns : 1) * sizeof(*resid));
	double *num = calloc(3 * (nv ? nv : 1), sizeof(*num));
	double *den = calloc(3 * (nv ? nv : 1), sizeof(*den));
	int n_variants = s == SIG_TURNAROUND ? 1 : 3;
	double first_score = 0;
	bool *hurt = calloc(c->n_conns ? c->n_conns : 1, sizeof(*hurt));
	bool *picked = calloc(nv ? nv : 1, sizeof(*picked));
	int err = -ENOMEM;

	if (!resid || !num || !den || !hurt || !picked)
		goto cleanup;
	for (size_t k = 0; k < c->n_conns; k++)
		resid[k] = c->conns[k].valid[s] ? c->conns[k].y[s] : 0;
	for (uint32_t iter = 0; iter < c->cfg->max_findings + 2; iter++) {
		long best = -1, second = -1;
		double best_score = 0, second_score = 0;
		memset(num, 0, 3 * nv * sizeof(*num));
		memset(den, 0, 3 * nv * sizeof(*den));
		for (size_t k = 0; k < c->n_conns; k++) {
			const struct conn *cn = &c->conns[k];
			if (!cn->valid[s])
				continue;
			for (size_t i = 0; i < cn->inc_len; i++) {
				const struct incidence *e = &c->inc[cn->inc_start + i];
				for (int var = 0; var < n_variants; var++) {
					double a = coef(c, e, s, var);
					if (a <= 0)
						continue;
					num[e->var * 3 + var] += cn->w[s] * a * resid[k];
					den[e->var * 3 + var] += cn->w[s] * a * a;
				}
			}
		}
		for (size_t v = 0; v < 3 * nv; v++) {
			double score;
			if (den[v] <= 0 || num[v] <= 0 || picked[v / 3])
				continue;
			score = num[v] * num[v] / den[v] / c->vars[v / 3].penalty;
			/* An exact tie (the same connections, e.g. the egress of one host and
			 * the ingress of its only peer) goes to a host's egress: where its own
			 * traffic queues (NIC, shaper, pause frames). */
			if (score > best_score * (1 + 1e-9) ||
			    (score >= best_score * (1 - 1e-9) && best >= 0 &&
			     egress_rank(c, v) > egress_rank(c, (size_t)best))) {
				best = (long)v;
				best_score = score;
			}
		}
		if (best < 0 || best_score <= 0)
			break;
		/* The runner-up is the best other subject, for the specificity. */
		for (size_t v = 0; v < 3 * nv; v++) {
			double score;
			if (den[v] <= 0 || num[v] <= 0 || picked[v / 3] || v / 3 == (size_t)best / 3)
				continue;
			score = num[v] * num[v] / den[v] / c->vars[v / 3].penalty;
			if (score > second_score) {
				second = (long)(v / 3);
				second_score = score;
			}
		}
		picked[best / 3] = true;
		if (first_score <= 0)
			first_score = best_score;
		struct candidate cand = { .var = (uint32_t)(best / 3), .signal = s,
					  .variant = (int)(best % 3) };
		cand.effect = num[best] / den[best];
		cand.n_eff = den[best];
		cand.specificity = best_score / (best_score + second_score);
		if (second >= 0) {
			var_subject(c, &c->vars[second], cand.alt_subject,
				    sizeof(cand.alt_subject));
			cand.alt_score_ratio = second_score / best_score;
		}
		bool report = judge(c, &cand, resid, hurt);
		if (agentxdp_log_level >= LOG_DEBUG) {
			char subj[128];
			var_subject(c, &c->vars[cand.var], subj, sizeof(subj));
			pr_debug("localize: %s pick %u: %s variant %d effect %.4g z %.3g baseline %.4g "
				 "sigma %.3g n_eff %.3g hurt %u spec %.2f rate %.3g/%.3g -> %s\n",
				 signal_name(s), iter, subj, cand.variant, cand.effect, cand.z,
				 cand.baseline_us, cand.sigma_us, cand.n_eff, cand.flows_hurt,
				 cand.specificity, cand.in_rate, cand.out_rate,
				 report ? "reported" : "rejected");
		}
		if (report) {
			cand.resid = malloc(c->n_conns * sizeof(*cand.resid));
			if (!cand.resid)
				goto cleanup;
			memcpy(cand.resid, resid, c->n_conns * sizeof(*cand.resid));
		}
		/* Remove what this subject explains before looking for the next one. */
		for (size_t k = 0; k < c->n_conns; k++)
			if (c->conns[k].valid[s])
				resid[k] -= cand.effect * conn_coef(c, &c->conns[k], cand.var, s,
								    cand.variant);
		if (!report)
			continue;
		/* What a later pick explains is a remainder: weigh it by its share. */
		cand.share = best_score / first_score;
		cand.confidence = cand.strength * cand.specificity * sqrt(cand.share);
		if (cand.confidence < c->cfg->min_confidence) {
			free(cand.resid);
			continue;
		}
		find_onset(c, &cand, hurt);
		/* A shift whose flows show no change point together is a transient, not a fault. */
		if (s == SIG_SHIFT && !cand.onset_change_point) {
			free(cand.resid);
			continue;
		}
		if (*n_cands == *cap_cands) {
			size_t cap = *cap_cands ? *cap_cands * 2 : 16;
			struct candidate *bigger = realloc(*cands, cap * sizeof(*bigger));
			if (!bigger) {
				free(cand.resid);
				goto cleanup;
			}
			*cands = bigger;
			*cap_cands = cap;
		}
		(*cands)[(*n_cands)++] = cand;
	}
	err = 0;
cleanup:
	free(resid);
	free(num);
	free(den);
	free(hurt);
	free(picked);
	return err;
}

/* RNR NAKs: the responder could not take the message. Always the host's doing. */
static int rnr_candidates(struct ctx *c, struct candidate **cands, size_t *n_cands,
			  size_t *cap_cands)
{
	double total = 0;

	for (size_t k = 0; k < c->n_conns; k++)
		total += c->conns[k].rnr_naks;
	if (total < c->cfg->rnr_min_naks)
		return 0;
	for (size_t k = 0; k < c->n_conns; k++) {
		const struct conn *cn = &c->conns[k];
		double naks = 0, packets = 0;
		uint32_t flows = 0;
		bool seen = false;
		if (cn->rnr_naks <= 0)
			continue;
		for (size_t j = 0; j < k; j++)
			seen |= c->conns[j].rnr_naks > 0 && !memcmp(c->conns[j].dst, cn->dst, 16);
		if (seen)
			continue;
		for (size_t j = k; j < c->n_conns; j++)
			if (!memcmp(c->conns[j].dst, cn->dst, 16)) {
				naks += c->conns[j].rnr_naks;
				packets += c->conns[j].packets;
				flows += c->conns[j].rnr_naks > 0;
			}
		if (naks < c->cfg->rnr_min_naks)
			continue;
		long v = add_var(c, VAR_HOST, 0, cn->dst, NULL);
		if (v < 0)
			return (int)v;
		struct candidate cand = { .var = (uint32_t)v, .signal = N_SIGNALS };
		cand.kind = FINDING_HOST;
		cand.in_events = naks;
		cand.in_packets = packets;
		cand.in_rate = packets > 0 ? naks / packets : 0;
		cand.severity = cand.in_rate;
		cand.flows_hurt = flows;
		cand.z = naks;
		cand.strength = 1 - exp(-naks / c->cfg->rnr_min_naks);
		cand.specificity = naks / total;
		cand.confidence = cand.strength * cand.specificity;
		if (cand.confidence < c->cfg->min_confidence)
			continue;
		/* Onset: the first window that carried a NAK to this responder. */
		for (size_t j = 0; j < c->n_conns; j++) {
			const struct conn *o = &c->conns[j];
			const struct flow_stats *fs[2] = { o->req, o->resp };
			if (memcmp(o->dst, cn->dst, 16))
				continue;
			for (int f = 0; f < 2; f++)
				for (size_t w = 0; fs[f] && w < fs[f]->n_windows; w++)
					if (fs[f]->windows[w].naks &&
					    (!cand.onset_ns ||
					     fs[f]->windows[w].start_ns < cand.onset_ns)) {
						cand.onset_ns = fs[f]->windows[w].start_ns;
						break;
					}
		}
		if (*n_cands == *cap_cands) {
			size_t cap = *cap_cands ? *cap_cands * 2 : 16;
			struct candidate *bigger = realloc(*cands, cap * sizeof(*bigger));
			if (!bigger)
				return -ENOMEM;
			*cands = bigger;
			*cap_cands = cap;
		}
		(*cands)[(*n_cands)++] = cand;
	}
	return 0;
}

/* ------------------------------------------------------------------ findings */

static const char *signal_name(enum signal s)
{
	static const char *const names[] = { "latency",	     "latency_shift", "completion",
					      "loss",	     "ecn",	      "turnaround" };
	return s < N_SIGNALS ? names[s] : "rnr";
}

static void severity_text(const struct candidate *cand, char *buf, size_t len)
{
	switch (cand->signal) {
	case SIG_LATENCY:
		if (cand->own_past)
			snprintf(buf, len, "latency %.2fx its first windows (+%.1f us median RTT; too few peers)",
				 cand->severity, cand->effect_us);
		else
			snprintf(buf, len, "latency %.2fx healthy peers (+%.1f us median RTT; p99 %.1fx)",
				 cand->severity, cand->effect_us, cand->p99_ratio);
		break;
	case SIG_COMPLETION:
		snprintf(buf, len,
			 "message completion %.2fx healthy peers (+%.1f us median; p99 %.1fx)",
			 cand->severity, cand->effect_us, cand->p99_ratio);
		break;
	case SIG_SHIFT:
		snprintf(buf, len, "latency %.2fx its own past (+%.1f us RTT from onset)",
			 cand->severity, cand->effect_us);
		break;
	case SIG_TURNAROUND:
		snprintf(buf, len, "responder turnaround +%.1f us (%.2fx; p99 %.1fx healthy peers)",
			 cand->effect_us, cand->severity, cand->p99_ratio);
		break;
	case SIG_LOSS:
		snprintf(buf, len, "%.3g%% of packets lost (%.0f loss events)",
			 100 * cand->severity, cand->in_events);
		break;
	case SIG_ECN:
		snprintf(buf, len, "%.3g%% of packets ECN-marked or answered by CNP",
			 100 * cand->severity);
		break;
	default:
		snprintf(buf, len, "%.0f RNR NAKs (receiver not ready), %.3g per packet",
			 cand->in_events, cand->in_rate);
		break;
	}
}

static void evidence_flow(struct sbuf *sb, const struct conn *cn, bool first)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	const struct flow_stats *f = cn->req ? cn->req : cn->resp;

	addr_str(cn->src, s, sizeof(s));
	addr_str(cn->dst, d, sizeof(d));
	sb_printf(sb,
		  "%s{\"id\":%llu,\"src\":\"%s\",\"dst\":\"%s\",\"dst_qpn\":%u,"
		  "\"udp_sport\":%u,\"p50_us\":%.2f,\"p99_us\":%.2f,\"baseline_us\":%.2f,"
		  "\"packets\":%.0f,\"loss_events\":%.0f,\"ecn_events\":%.0f,\"rnr_naks\":%.0f}",
		  first ? "" : ",", (unsigned long long)f->id, s, d, f->key.dst_qpn,
		  cn->sport_fwd, jnum(cn->lat_p50_us), jnum(cn->lat_p99_us),
		  jnum(cn->baseline_us), cn->packets, cn->loss_events, cn->ce_events,
		  cn->rnr_naks);
}

static int make_finding(struct ctx *c, const struct candidate *cand,
			const struct candidate *merged, size_t n_merged, struct finding *f)
{
	const struct var *v = &c->vars[cand->var];
	struct sbuf sb = { 0 };
	bool *hurt = calloc(c->n_conns ? c->n_conns : 1, sizeof(*hurt));
	struct candidate tmp = *cand;
	size_t shown = 0;

	if (!hurt)
		return -ENOMEM;
	memset(f, 0, sizeof(*f));
	f->kind = cand->kind;
	f->subject_kind = var_subject_kind(v);
	var_subject(c, v, f->subject, sizeof(f->subject));
	snprintf(f->direction, sizeof(f->direction), "%s", cand->direction);
	f->severity = cand->severity;
	severity_text(cand, f->severity_text, sizeof(f->severity_text));
	f->confidence = cand->confidence;
	f->onset_ns = cand->onset_ns;
	f->flows_hurt = cand->flows_hurt;

	sb_printf(&sb, "{\"signal\":\"%s\",\"model\":\"%s\",\"effect\":%.6g,\"z\":%.3g,"
		       "\"strength\":%.3f,\"specificity\":%.3f",
		  signal_name(cand->signal),
		  !c->topo ? "hosts" : c->topo->n_paths ? "paths+ecmp" : "ecmp",
		  jnum(cand->signal == SIG_LOSS || cand->signal == SIG_ECN || cand->signal >= N_SIGNALS ?
			       cand->effect :
			       cand->effect_us),
		  jnum(cand->z), cand->strength, cand->specificity);
	if (cand->signal == SIG_LATENCY || cand->signal == SIG_SHIFT ||
	    cand->signal == SIG_COMPLETION || cand->signal == SIG_TURNAROUND)
		sb_printf(&sb, ",\"baseline_us\":%.3f,\"noise_sigma_us\":%.3f,"
			       "\"hurt_p99_us\":%.3f,\"peer_p99_us\":%.3f",
			  jnum(cand->baseline_us), jnum(cand->sigma_us), jnum(cand->hurt_p99_us),
			  jnum(cand->peer_p99_us));
	else
		sb_printf(&sb, ",\"events\":%.0f,\"packets\":%.0f,\"rate\":%.6g,"
			       "\"rate_elsewhere\":%.6g",
			  cand->in_events, cand->in_packets, jnum(cand->in_rate),
			  jnum(cand->out_rate));
	sb_printf(&sb, ",\"onset\":\"%s\"",
		  cand->onset_change_point ? "change_point" : "first_evidence");
	if (cand->alt_subject[0])
		sb_printf(&sb, ",\"runner_up\":{\"subject\":\"%s\",\"score_ratio\":%.3f}",
			  cand->alt_subject, cand->alt_score_ratio);
	sb_printf(&sb, ",\"also\":[");
	for (size_t i = 0; i < n_merged; i++)
		sb_printf(&sb, "%s{\"signal\":\"%s\",\"kind\":\"%s\",\"confidence\":%.3f}",
			  i ? "," : "", signal_name(merged[i].signal),
			  finding_kind_name(merged[i].kind), merged[i].confidence);
	sb_printf(&sb, "],\"flows\":[");
	/* Recompute which connections this pick hurts, to list them. */
	if (cand->signal < N_SIGNALS) {
		judge(c, &tmp, cand->resid, hurt);
	} else {
		for (size_t k = 0; k < c->n_conns; k++)
			hurt[k] = c->conns[k].rnr_naks > 0 && !memcmp(c->conns[k].dst, v->a, 16);
	}
	for (size_t k = 0; k < c->n_conns && shown < 16; k++)
		if (hurt[k])
			evidence_flow(&sb, &c->conns[k], shown++ == 0);
	sb_printf(&sb, "]}");
	free(hurt);
	if (sb.oom) {
		free(sb.buf);
		return -ENOMEM;
	}
	f->evidence = sb.buf;
	return 0;
}

static int kind_priority(enum finding_kind k)
{
	/* ECN marks say why a link is slow; loss outranks bare latency. */
	switch (k) {
	case FINDING_HOST:
		return 4;
	case FINDING_CONGESTED:
		return 3;
	case FINDING_LOSSY:
		return 2;
	default:
		return 1;
	}
}

static int cmp_candidate(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	if (x->confidence != y->confidence)
		return x->confidence < y->confidence ? 1 : -1;
	return (x->severity < y->severity) - (x->severity > y->severity);
}

int localize(const struct flow_stats *flows, size_t n_flows, const struct topology *topo,
	     const struct localize_config *cfg, struct finding **out, size_t *n_out)
{
	struct localize_config defaults;
	struct ctx c = { 0 };
	struct candidate *cands = NULL, *best = NULL;
	size_t n_cands = 0, cap_cands = 0, n_best = 0;
	struct finding *findings = NULL;
	size_t n_findings = 0;
	int err;

	if (!out || !n_out || (n_flows && !flows))
		return -EINVAL;
	*out = NULL;
	*n_out = 0;
	if (!cfg) {
		localize_config_default(&defaults);
		cfg = &defaults;
	}
	c.cfg = cfg;
	c.topo = topo && topo->n_links ? topo : NULL;
	c.flows = flows;
	c.n_flows = n_flows;
	err = -ENOMEM;
	c.scratch_len = n_flows ? n_flows : 1;
	for (size_t i = 0; i < n_flows; i++)
		if (flows[i].n_windows > c.scratch_len)
			c.scratch_len = flows[i].n_windows;
	c.scratch = malloc(c.scratch_len * sizeof(double));
	c.scratch2 = malloc(c.scratch_len * sizeof(double));
	if (!c.scratch || !c.scratch2)
		goto cleanup;
	err = build_conns(&c);
	if (!err)
		err = build_incidence(&c);
	if (err)
		goto cleanup;
	build_signals(&c);
	for (int s = 0; s < N_SIGNALS && !err; s++)
		err = pursue(&c, (enum signal)s, &cands, &n_cands, &cap_cands);
	if (!err)
		err = rnr_candidates(&c, &cands, &n_cands, &cap_cands);
	if (err)
		goto cleanup;

	/* One finding per subject: the most telling kind, with the others as evidence. */
	if (n_cands)
		qsort(cands, n_cands, sizeof(*cands), cmp_candidate);
	best = calloc(n_cands ? n_cands : 1, sizeof(*best));
	if (!best) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n_cands; i++) {
		size_t j;
		for (j = 0; j < n_best; j++)
			if (best[j].var == cands[i].var)
				break;
		if (j == n_best) {
			best[n_best++] = cands[i];
			continue;
		}
		if (kind_priority(cands[i].kind) > kind_priority(best[j].kind)) {
			double conf = fmax(best[j].confidence, cands[i].confidence);
			best[j] = cands[i];
			best[j].confidence = conf;
		}
	}
	if (n_best)
		qsort(best, n_best, sizeof(*best), cmp_candidate);
	if (n_best > cfg->max_findings)
		n_best = cfg->max_findings;
	findings = calloc(n_best ? n_best : 1, sizeof(*findings));
	if (!findings) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n_best; i++) {
		struct candidate merged[8];
		size_t n_merged = 0;
		for (size_t j = 0; j < n_cands && n_merged < 8; j++)
			if (cands[j].var == best[i].var)
				merged[n_merged++] = cands[j];
		err = make_finding(&c, &best[i], merged, n_merged, &findings[n_findings]);
		if (err)
			goto cleanup;
		findings[n_findings].rank = (int)n_findings + 1;
		n_findings++;
	}
	*out = findings;
	*n_out = n_findings;
	findings = NULL;
	err = 0;
cleanup:
	findings_free(findings, n_findings);
	for (size_t i = 0; i < n_cands; i++)
		free(cands[i].resid);
	free(cands);
	free(best);
	for (size_t i = 0; i < c.n_ecmp; i++)
		free(c.ecmp[i].hops);
	free(c.ecmp);
	free(c.conns);
	free(c.vars);
	free(c.var_slots);
	free(c.inc);
	free(c.scratch);
	free(c.scratch2);
	return err;
}
