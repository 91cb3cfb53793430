/* fabric_sim.c: packet-sampled leaf-spine model behind the localization evaluation. */
#include "eval/fabric_sim.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0_NS 1767225600000000000ull
#define MAX_HOPS 4
#define CNP_INTERVAL_NS 50000

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	/* splitmix64 */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uni(struct rng *r)
{
	return (double)(rng_next(r) >> 11) / 9007199254740992.0;
}

static double expo(struct rng *r, double mean)
{
	return mean > 0 ? -mean * log(1 - uni(r)) : 0;
}

struct link_dir {
	double latency_us, queue_us, mark_rate;
};

struct sim {
	const struct sim_config *cfg;
	struct rng rng;
	struct topology *topo;
	struct link_dir *dirs;		/* 2 per link: [2l] a->b, [2l+1] b->a */
	long fault_link;
	int fault_dir;			/* 0: a->b, 1: b->a */
	uint64_t onset_ns;
	double *turnaround_us;		/* per host */
};

static void host_ip(int i, char *buf, size_t len)
{
	snprintf(buf, len, "198.18.%d.%d", i / 240, 10 + i % 240);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted samples. */
static double pct(const double *v, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n);
	if (!n)
		return 0;
	return v[(rank ? rank : 1) - 1];
}

/* Path from host s to host d for this port: link indices and directions. */
static int path_of(struct sim *sm, int s, int d, uint16_t sport, uint32_t *links, int *dirs)
{
	const struct sim_config *cfg = sm->cfg;
	int per_leaf = cfg->hosts / cfg->leaves, ls = s / per_leaf, ld = d / per_leaf;
	int spine_links = cfg->hosts; /* fabric links start after the host links */
	uint64_t h = ((uint64_t)s * 0x9e3779b1u) ^ ((uint64_t)d * 0x85ebca77u) ^
		     ((uint64_t)sport * 0xc2b2ae3du);

	h ^= h >> 15;
	h *= 0x2c1b3c6dull;
	h ^= h >> 12;
	links[0] = (uint32_t)s;
	dirs[0] = 0; /* host -> leaf is a -> b */
	if (ls == ld) {
		links[1] = (uint32_t)d;
		dirs[1] = 1;
		return 2;
	}
	int spine = (int)(h % (uint64_t)cfg->spines);
	links[1] = (uint32_t)(spine_links + ls * cfg->spines + spine);
	dirs[1] = 0; /* leaf -> spine */
	links[2] = (uint32_t)(spine_links + ld * cfg->spines + spine);
	dirs[2] = 1;
	links[3] = (uint32_t)d;
	dirs[3] = 1;
	return 4;
}

static const struct link_dir *hop(struct sim *sm, uint32_t link, int dir, uint64_t t_ns,
				  struct link_dir *tmp)
{
	*tmp = sm->dirs[2 * link + (uint32_t)dir];
	if (sm->fault_link == (long)link && sm->fault_dir == dir && t_ns >= sm->onset_ns) {
		switch (sm->cfg->fault) {
		case SIM_SLOW:
			tmp->latency_us *= sm->cfg->slow_factor;
			break;
		case SIM_CONGESTED:
			tmp->mark_rate += sm->cfg->mark_rate;
			tmp->queue_us += 3.0;
			break;
		default:
			break;
		}
	}
	return tmp;
}

static bool hop_drops(struct sim *sm, uint32_t link, int dir, uint64_t t_ns)
{
	return sm->cfg->fault == SIM_LOSSY && sm->fault_link == (long)link &&
	       sm->fault_dir == dir && t_ns >= sm->onset_ns && uni(&sm->rng) < sm->cfg->loss_rate;
}

/* Links: host links in host order, then leaf-spine links, leaf-major. */
static int build_links(struct sim *sm)
{
	const struct sim_config *cfg = sm->cfg;
	char a[64], b[64];

	for (int i = 0; i < cfg->hosts; i++) {
		host_ip(i, a, sizeof(a));
		snprintf(b, sizeof(b), "leaf%d", i / (cfg->hosts / cfg->leaves));
		char name[128];
		snprintf(name, sizeof(name), "%s-%s", a, b);
		if (topology_add_link(sm->topo, name, a, b))
			return -ENOMEM;
	}
	for (int l = 0; l < cfg->leaves; l++)
		for (int s = 0; s < cfg->spines; s++) {
			char name[64];
			snprintf(a, sizeof(a), "leaf%d", l);
			snprintf(b, sizeof(b), "spine%d", s);
			snprintf(name, sizeof(name), "leaf%d-spine%d", l, s);
			if (topology_add_link(sm->topo, name, a, b))
				return -ENOMEM;
		}
	return 0;
}

/* Healthy variety: cable lengths, load-dependent queueing, light background marking. */
static void draw_link_dirs(struct sim *sm)
{
	for (size_t i = 0; i < 2 * sm->topo->n_links; i++) {
		double u = uni(&sm->rng);
		sm->dirs[i].latency_us = sm->cfg->link_latency_us * (0.95 + 0.1 * uni(&sm->rng));
		sm->dirs[i].queue_us = 0.3 * u * u;
		sm->dirs[i].mark_rate = uni(&sm->rng) < 0.2 ? 0.0005 * uni(&sm->rng) : 0;
	}
	for (int i = 0; i < sm->cfg->hosts; i++)
		sm->turnaround_us[i] = 1.5 * (0.9 + 0.2 * uni(&sm->rng));
}

/* The faulty link direction and onset, when asked for one; recorded as ground truth. */
static void draw_fault(struct sim *sm, struct sim_result *out)
{
	const struct sim_config *cfg = sm->cfg;
	size_t pool = cfg->host_links_only ? (size_t)cfg->hosts : sm->topo->n_links;
	const struct topo_link *l;

	sm->fault_link = -1;
	if (cfg->fault == SIM_HEALTHY)
		return;
	sm->fault_link = (long)(rng_next(&sm->rng) % pool);
	sm->fault_dir = (int)(rng_next(&sm->rng) & 1);
	sm->onset_ns = T0_NS + (uint64_t)(uni(&sm->rng) * 0.5 * cfg->duration_s * 1e9);
	l = &sm->topo->links[sm->fault_link];
	snprintf(out->fault_link, sizeof(out->fault_link), "%s", l->name);
	if (sm->fault_link < cfg->hosts)
		snprintf(out->fault_host, sizeof(out->fault_host), "%s", sm->topo->nodes[l->a].name);
	snprintf(out->fault_dir, sizeof(out->fault_dir), "%s -> %s",
		 sm->topo->nodes[sm->fault_dir ? l->b : l->a].name,
		 sm->topo->nodes[sm->fault_dir ? l->a : l->b].name);
	out->onset_ns = sm->onset_ns;
}

/* Scratch space for one QP's ACK latency samples, reused for every QP. */
struct sample_bufs {
	double *samples, *win_samples;
	uint64_t *sample_ts;
	size_t max_pkts;
};

/* One QP: its hosts, its port and the links each way. */
struct qp_route {
	int s, d;
	uint16_t sport;
	uint32_t fl[MAX_HOPS], rl[MAX_HOPS];
	int fd[MAX_HOPS], rd[MAX_HOPS], nf, nr;
};

/* Both directions of the QP into the topology's paths (the paths.csv equivalent). */
static int add_qp_paths(struct sim *sm, const struct qp_route *r)
{
	char a[64], b[64];

	for (int dir = 0; dir < 2; dir++) {
		uint8_t sa[16], da[16];
		char err_text[160];
		int err;

		host_ip(dir ? r->d : r->s, a, sizeof(a));
		host_ip(dir ? r->s : r->d, b, sizeof(b));
		topo_parse_addr(a, sa);
		topo_parse_addr(b, da);
		if (topology_find_path(sm->topo, sa, da, r->sport))
			continue;
		err = topology_add_path(sm->topo, sa, da, r->sport, dir ? r->rl : r->fl,
					(size_t)(dir ? r->nr : r->nf), err_text, sizeof(err_text));
		/* path_of() chains links by construction: only allocation can fail. */
		assert(err != -EINVAL);
		if (err)
			return err;
	}
	return 0;
}

/* The requester and responder flow of QP q, as the analyzer would key them. */
static void init_qp_flows(struct sim_result *out, int q, const struct qp_route *r,
			  struct flow_window *rw, struct flow_window *aw, size_t n_windows,
			  uint64_t window_ns)
{
	struct flow_stats *req = &out->flows[2 * q];
	char a[64], b[64];

	for (int k = 0; k < 2; k++) {
		struct flow_stats *f = req + k;
		host_ip(k ? r->d : r->s, a, sizeof(a));
		host_ip(k ? r->s : r->d, b, sizeof(b));
		topo_parse_addr(a, f->key.src_ip);
		topo_parse_addr(b, f->key.dst_ip);
		f->key.dst_qpn = 0x1000 + (uint32_t)q * 2 + (uint32_t)(1 - k);
		f->id = (uint64_t)(2 * q + k + 1);
		f->peer_id = (uint64_t)(2 * q + (1 - k) + 1);
		f->ip_version = 4;
		f->role = k ? FLOW_ROLE_RESPONDER : FLOW_ROLE_REQUESTER;
		f->udp_sport = r->sport;
		f->windows = k ? aw : rw;
		f->n_windows = n_windows;
	}
	for (size_t w = 0; w < n_windows; w++)
		rw[w].start_ns = aw[w].start_ns = T0_NS + w * window_ns;
}

/*
 * The QP's packets: one every ~100 us, AckReq every 4th. Counts land in req/resp and their
 * windows; ACK round trips in b. Returns the number of samples kept.
 */
static size_t send_qp_packets(struct sim *sm, const struct qp_route *r, struct flow_stats *req,
			      struct flow_window *rw, struct flow_window *aw, size_t n_windows,
			      struct sample_bufs *b)
{
	const struct sim_config *cfg = sm->cfg;
	struct flow_stats *resp = req + 1;
	uint64_t t = T0_NS + (uint64_t)(uni(&sm->rng) * 100000);
	uint64_t end = T0_NS + (uint64_t)(cfg->duration_s * 1e9);
	uint64_t last_cnp = 0;
	size_t n_samples = 0;
	uint32_t seq = 0;

	req->first_ns = t;
	for (; t < end; t += 80000 + (uint64_t)(uni(&sm->rng) * 40000), seq++) {
		size_t w = (size_t)((t - T0_NS) / cfg->window_ns);
		struct link_dir tmp;
		double rtt = 0;
		bool lost = false, marked = false;
		if (w >= n_windows)
			w = n_windows - 1;
		rw[w].packets++;
		rw[w].bytes += 1100;
		req->packets++;
		req->bytes += 1100;
		req->last_ns = t;
		for (int h = 0; h < r->nf && !lost; h++) {
			const struct link_dir *ld = hop(sm, r->fl[h], r->fd[h], t, &tmp);
			lost = hop_drops(sm, r->fl[h], r->fd[h], t);
			marked |= uni(&sm->rng) < ld->mark_rate;
			rtt += ld->latency_us + expo(&sm->rng, ld->queue_us);
		}
		if (lost) {
			/* The responder NAKs the next packet; go-back-N resends the rest. */
			uint32_t resent = 1 + (uint32_t)(rng_next(&sm->rng) % 8);
			req->naks_psn_seq++;
			req->retransmitted_packets += resent;
			req->packets += resent;
			rw[w].naks++;
			rw[w].retransmitted_packets += resent;
			rw[w].packets += resent;
			resp->packets++;
			aw[w].packets++;
			continue;
		}
		if (marked && t - last_cnp >= CNP_INTERVAL_NS) {
			/* Mirror vantage: the CE mark is not visible, the CNP coming back is. */
			last_cnp = t;
			req->cnps++;
			rw[w].cnps++;
			resp->packets++;
			aw[w].packets++;
		}
		if (seq % 4 != 3)
			continue;
		rtt += sm->turnaround_us[r->d] + expo(&sm->rng, 0.2);
		bool ack_lost = false;
		for (int h = 0; h < r->nr; h++) {
			const struct link_dir *ld = hop(sm, r->rl[h], r->rd[h], t, &tmp);
			ack_lost |= hop_drops(sm, r->rl[h], r->rd[h], t);
			rtt += ld->latency_us + expo(&sm->rng, ld->queue_us);
		}
		resp->packets += !ack_lost;
		aw[w].packets += !ack_lost;
		if (ack_lost || n_samples >= b->max_pkts)
			continue;
		b->samples[n_samples] = rtt;
		b->sample_ts[n_samples++] = t;
	}
	return n_samples;
}

/* Percentiles per window and over the whole flow (nearest rank). */
static void qp_percentiles(const struct sim_config *cfg, struct flow_stats *req,
			   struct flow_window *rw, size_t n_windows, struct sample_bufs *b,
			   size_t n_samples)
{
	double *samples = b->samples, *win_samples = b->win_samples;

	for (size_t w = 0; w < n_windows; w++) {
		size_t m = 0;
		double sum = 0;
		for (size_t i = 0; i < n_samples; i++)
			if ((size_t)((b->sample_ts[i] - T0_NS) / cfg->window_ns) == w ||
			    (w == n_windows - 1 &&
			     (b->sample_ts[i] - T0_NS) / cfg->window_ns >= n_windows)) {
				win_samples[m++] = samples[i];
				sum += samples[i];
			}
		if (!m)
			continue;
		qsort(win_samples, m, sizeof(*win_samples), cmp_double);
		rw[w].ack_samples = (uint32_t)m;
		rw[w].ack_latency_sum_ns = (uint64_t)(sum * 1000);
		rw[w].ack_latency_p50_ns = (uint32_t)(pct(win_samples, m, 0.5) * 1000);
		rw[w].ack_latency_p99_ns = (uint32_t)(pct(win_samples, m, 0.99) * 1000);
		rw[w].ack_latency_max_ns = (uint32_t)(win_samples[m - 1] * 1000);
	}
	qsort(samples, n_samples, sizeof(*samples), cmp_double);
	req->ack_samples = n_samples;
	req->ack_latency_p50_us = pct(samples, n_samples, 0.5);
	req->ack_latency_p99_us = pct(samples, n_samples, 0.99);
	req->ack_latency_max_us = n_samples ? samples[n_samples - 1] : 0;
}

/* QP q of host q / qps_per_host to a random other host: paths, flows, packets. */
static int sim_qp(struct sim *sm, struct sim_result *out, int q, size_t n_windows,
		  struct sample_bufs *b)
{
	const struct sim_config *cfg = sm->cfg;
	struct qp_route r = { .s = q / cfg->qps_per_host };
	struct flow_stats *req = &out->flows[2 * q], *resp = req + 1;
	struct flow_window *rw = &out->windows[(size_t)(2 * q) * n_windows];
	struct flow_window *aw = rw + n_windows;
	size_t n_samples;
	int err;

	r.d = (int)(rng_next(&sm->rng) % (uint64_t)(cfg->hosts - 1));
	r.sport = (uint16_t)(49152 + rng_next(&sm->rng) % 16384);
	if (r.d >= r.s)
		r.d++;
	r.nf = path_of(sm, r.s, r.d, r.sport, r.fl, r.fd);
	r.nr = path_of(sm, r.d, r.s, r.sport, r.rl, r.rd);
	err = add_qp_paths(sm, &r);
	if (err)
		return err;
	init_qp_flows(out, q, &r, rw, aw, n_windows, cfg->window_ns);
	n_samples = send_qp_packets(sm, &r, req, rw, aw, n_windows, b);
	qp_percentiles(cfg, req, rw, n_windows, b, n_samples);
	resp->first_ns = req->first_ns;
	resp->last_ns = req->last_ns;
	out->n_flows += 2;
	return 0;
}

int sim_run(const struct sim_config *cfg, struct sim_result *out)
{
	struct sim sm = { .cfg = cfg, .rng = { cfg->seed * 0x100000001b3ull + 7 } };
	int n_qps = cfg->hosts * cfg->qps_per_host;
	size_t n_windows = (size_t)ceil(cfg->duration_s * 1e9 / (double)cfg->window_ns);
	struct sample_bufs b = { .max_pkts = (size_t)(cfg->duration_s * 1e6 / 80.0) + 16 };
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	sm.topo = &out->topo;
	if (cfg->hosts % cfg->leaves) {
		fprintf(stderr, "sim: hosts must be a multiple of leaves\n");
		return -EINVAL;
	}
	if (build_links(&sm))
		goto cleanup;
	sm.dirs = calloc(2 * sm.topo->n_links, sizeof(*sm.dirs));
	sm.turnaround_us = calloc((size_t)cfg->hosts, sizeof(*sm.turnaround_us));
	out->flows = calloc(2 * (size_t)n_qps, sizeof(*out->flows));
	out->windows = calloc(2 * (size_t)n_qps * n_windows, sizeof(*out->windows));
	if (!sm.dirs || !sm.turnaround_us || !out->flows || !out->windows)
		goto cleanup;
	draw_link_dirs(&sm);
	draw_fault(&sm, out);
	b.samples = malloc(b.max_pkts * sizeof(*b.samples));
	b.win_samples = malloc(b.max_pkts * sizeof(*b.win_samples));
	b.sample_ts = malloc(b.max_pkts * sizeof(*b.sample_ts));
	if (!b.samples || !b.win_samples || !b.sample_ts)
		goto cleanup;
	for (int q = 0; q < n_qps; q++) {
		err = sim_qp(&sm, out, q, n_windows, &b);
		if (err)
			goto cleanup;
	}
	err = 0;
cleanup:
	free(b.samples);
	free(b.win_samples);
	free(b.sample_ts);
	free(sm.dirs);
	free(sm.turnaround_us);
	if (err)
		sim_free(out);
	return err;
}

void sim_free(struct sim_result *r)
{
	topology_free(&r->topo);
	free(r->flows);
	free(r->windows);
	memset(r, 0, sizeof(*r));
}
