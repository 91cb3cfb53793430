/* synth_sim.c: agentxdp-synth's discrete-event fabric: hosts, Clos links with queues and faults, QPs, workloads. */
#include "samples/synth_sim.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/log.h"
#include "lib/decode/psn.h"
#include "lib/util/util.h"

/* ---- random numbers: xoshiro256** seeded through splitmix64 (deterministic per --seed) ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double rng_double(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

uint32_t rng_below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rng_next(r) % n) : 0;
}

static double rng_exp(struct rng *r, double mean)
{
	return -log(1.0 - rng_double(r)) * mean;
}

/*
 * ---- event queue: a radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990). Simulation time never
 * goes back, so events are filed by the highest bit in which their time differs from the last
 * time popped: push is O(1), pop amortized O(1) here. Equal times pop first in, first out. Bucket arrays grow and are reused, never freed
 * per event. ----
 */

static int bucket_append(struct ev_bucket *b, const struct event *e)
{
	int err = util_ensure_mem_max((void **)&b->v, &b->cap, sizeof(*b->v), (size_t)b->n + 1,
				      UINT32_MAX);

	if (err)
		return err;
	b->v[b->n++] = *e;
	return 0;
}

static unsigned bucket_of(uint64_t t, uint64_t last)
{
	return t == last ? 0 : 64 - (unsigned)__builtin_clzll(t ^ last);
}

int ev_push(struct sim *s, uint64_t t, uint32_t type, uint32_t arg)
{
	struct event e = {.t = t < s->ev_last ? s->ev_last : t, .type = type, .arg = arg};
	if (bucket_append(&s->ev_buckets[bucket_of(e.t, s->ev_last)], &e) < 0) {
		s->oom = true;
		return -ENOMEM;
	}
	s->n_events++;
	return 0;
}

static bool ev_pop(struct sim *s, struct event *out)
{
	struct ev_bucket *b0 = &s->ev_buckets[0];
	if (!s->n_events)
		return false;
	if (s->ev_b0_head == b0->n) {
		b0->n = 0;
		s->ev_b0_head = 0;
		unsigned i = 1;
		while (!s->ev_buckets[i].n)
			i++;
		struct ev_bucket *b = &s->ev_buckets[i];
		uint64_t min = b->v[0].t;
		for (uint32_t k = 1; k < b->n; k++)
			if (b->v[k].t < min)
				min = b->v[k].t;
		s->ev_last = min;
		/* Every event of bucket i lands in a lower bucket: no reallocation of b itself. */
		for (uint32_t k = 0; k < b->n; k++)
			if (bucket_append(&s->ev_buckets[bucket_of(b->v[k].t, min)], &b->v[k]) < 0) {
				s->oom = true;
				return false;
			}
		b->n = 0;
	}
	*out = b0->v[s->ev_b0_head++];	/* FIFO among equal times: packets keep their order */
	s->n_events--;
	return true;
}

/* ---- packets in flight: a pool with a free list, so nothing is allocated per packet ---- */

static uint32_t flight_alloc(struct sim *s)
{
	if (s->flight_free == UINT32_MAX) {
		/* Indices are uint32_t with UINT32_MAX for "none"; flight_pkts grows to match. */
		size_t old = s->cap_flights, cap = old;
		if (util_ensure_mem_max((void **)&s->flights, &cap, sizeof(*s->flights), old + 1,
					UINT32_MAX - 1) ||
		    util_ensure_mem_max((void **)&s->flight_pkts, &s->cap_flight_pkts,
					sizeof(*s->flight_pkts), cap, UINT32_MAX - 1))
			return UINT32_MAX;
		for (size_t i = old; i < cap; i++)
			s->flights[i].next_free = i + 1 < cap ? (uint32_t)i + 1 : UINT32_MAX;
		s->flight_free = (uint32_t)old;
		s->cap_flights = cap;
	}
	uint32_t i = s->flight_free;
	s->flight_free = s->flights[i].next_free;
	return i;
}

static void flight_free(struct sim *s, uint32_t i)
{
	s->flights[i].next_free = s->flight_free;
	s->flight_free = i;
}

/* ---- fabric ---- */

/* Linux/mlx5 derive the RoCE v2 UDP source port from the QPN pair (rdma_calc_flow_label +
 * rdma_flow_label_to_udp_sport): symmetric, so both directions of a QP use the same port. */
uint32_t qp_flow_label(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;
	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xfffff);
}

uint16_t qp_udp_sport(uint32_t lqpn, uint32_t rqpn)
{
	uint32_t fl = qp_flow_label(lqpn, rqpn);
	uint32_t lo = fl & 0x03fff, hi = fl & 0xfc000;
	lo ^= hi >> 14;
	return (uint16_t)(lo | 0xc000);
}

/* ECMP: the leaf hashes the ordered 5-tuple with its own seed to pick a spine. */
static uint32_t ecmp_spine(const struct sim *s, uint32_t src_host, uint32_t dst_host,
			   uint16_t sport)
{
	uint64_t x = s->ecmp_seed ^ ((uint64_t)s->hosts[src_host].leaf << 48);
	for (int i = 0; i < 16; i++)
		x = (x ^ s->hosts[src_host].ip[i]) * 0x100000001b3ull;
	for (int i = 0; i < 16; i++)
		x = (x ^ s->hosts[dst_host].ip[i]) * 0x100000001b3ull;
	x = (x ^ sport) * 0x100000001b3ull;
	x = (x ^ ROCE_V2_UDP_PORT) * 0x100000001b3ull;
	x = (x ^ 17) * 0x100000001b3ull;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	/* --ecmp-skew: a badly seeded hash sends this share of the flows to spine 0. */
	if (s->o->ecmp_skew > 0 && (double)(x >> 40) / (double)(1ull << 24) < s->o->ecmp_skew)
		return 0;
	return (uint32_t)(x % s->o->spines);
}

uint32_t host_link(uint32_t host)
{
	return host;
}

uint32_t fabric_link(const struct sim *s, uint32_t leaf, uint32_t spine)
{
	return s->n_hosts + leaf * s->o->spines + spine;
}

/* Link direction index: 2*link for a>b, 2*link+1 for b>a. */
static uint32_t ldir(uint32_t link, int b_to_a)
{
	return link * 2 + (b_to_a ? 1 : 0);
}

static uint8_t compute_path(const struct sim *s, uint32_t src, uint32_t dst, uint16_t sport,
			    uint32_t *path)
{
	uint32_t ls = s->hosts[src].leaf, ld = s->hosts[dst].leaf;
	uint8_t n = 0;
	path[n++] = ldir(host_link(src), 0);
	if (ls != ld) {
		uint32_t sp = ecmp_spine(s, src, dst, sport);
		path[n++] = ldir(fabric_link(s, ls, sp), 0);
		path[n++] = ldir(fabric_link(s, ld, sp), 1);
	}
	path[n++] = ldir(host_link(dst), 1);
	return n;
}

static void host_addr(const struct synth_opts *o, uint32_t i, uint8_t ip[16])
{
	memset(ip, 0, 16);
	if (o->link_ib) {
		addr_from_lid(ip, (uint16_t)(i + 1)); /* LID 1, 2, ...: the subnet manager's order */
	} else if (o->ipv6) {
		ip[0] = 0xfd;
		ip[1] = 0x99;
		uint32_t v = 0x10 + i;
		ip[14] = (uint8_t)(v >> 8);
		ip[15] = (uint8_t)v;
	} else {
		ip[10] = ip[11] = 0xff;
		ip[12] = 198;
		ip[13] = (uint8_t)(18 + i / (240 * 256));
		ip[14] = (uint8_t)((i / 240) % 256);
		ip[15] = (uint8_t)(10 + i % 240);
	}
}

static int build_fabric(struct sim *s)
{
	const struct synth_opts *o = s->o;
	uint32_t per_leaf = (o->hosts + o->leaves - 1) / o->leaves;

	s->n_hosts = o->hosts;
	s->hosts = calloc(s->n_hosts, sizeof(*s->hosts));
	s->n_links = s->n_hosts + o->leaves * o->spines;
	s->links = calloc(s->n_links, sizeof(*s->links));
	s->ldirs = calloc(s->n_links * 2, sizeof(*s->ldirs));
	if (!s->hosts || !s->links || !s->ldirs)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n_hosts; i++) {
		struct host *h = &s->hosts[i];
		host_addr(o, i, h->ip);
		addr_str(h->ip, h->name, sizeof(h->name));
		h->leaf = i / per_leaf;
		h->mac[0] = 0x02;
		h->mac[4] = (uint8_t)(i >> 8);
		h->mac[5] = (uint8_t)i;
		h->nic_wake_ns = UINT64_MAX;
		struct link *l = &s->links[host_link(i)];
		snprintf(l->a, sizeof(l->a), "%s", h->name);
		snprintf(l->b, sizeof(l->b), "leaf%u", h->leaf);
		snprintf(l->name, sizeof(l->name), "%s-%s", l->a, l->b);
		for (int d = 0; d < 2; d++) {
			s->ldirs[ldir(host_link(i), d)].rate_bps = o->host_gbps * 1e9;
			s->ldirs[ldir(host_link(i), d)].latency_ns = o->link_latency_ns;
		}
	}
	for (uint32_t lf = 0; lf < o->leaves; lf++) {
		for (uint32_t sp = 0; sp < o->spines; sp++) {
			struct link *l = &s->links[fabric_link(s, lf, sp)];
			snprintf(l->a, sizeof(l->a), "leaf%u", lf);
			snprintf(l->b, sizeof(l->b), "spine%u", sp);
			snprintf(l->name, sizeof(l->name), "%s-%s", l->a, l->b);
			for (int d = 0; d < 2; d++) {
				s->ldirs[ldir(fabric_link(s, lf, sp), d)].rate_bps = o->fabric_gbps * 1e9;
				s->ldirs[ldir(fabric_link(s, lf, sp), d)].latency_ns = o->link_latency_ns;
			}
		}
	}
	/* Faults: resolve names and directions. */
	for (int f = 0; f < o->n_faults; f++) {
		struct link_fault *lf = &s->faults[f];
		*lf = o->faults[f];
		lf->link_index = -1;
		for (uint32_t i = 0; i < s->n_links; i++)
			if (strcmp(s->links[i].name, lf->link) == 0)
				lf->link_index = (int)i;
		if (lf->link_index < 0) {
			pr_err("--fault: no link named '%s' in this fabric (see links.csv; e.g. '%s' or '%s')\n",
			       lf->link, s->links[0].name, s->links[s->n_links - 1].name);
			return -EINVAL;
		}
		struct link *l = &s->links[lf->link_index];
		if (!lf->from[0]) {
			lf->dir_mask = 3;
		} else if (strcmp(lf->from, l->a) == 0 && strcmp(lf->to, l->b) == 0) {
			lf->dir_mask = 1;
		} else if (strcmp(lf->from, l->b) == 0 && strcmp(lf->to, l->a) == 0) {
			lf->dir_mask = 2;
		} else {
			pr_err("--fault: direction '%s>%s' does not match link %s (use %s>%s or %s>%s)\n",
			       lf->from, lf->to, l->name, l->a, l->b, l->b, l->a);
			return -EINVAL;
		}
		for (int d = 0; d < 2; d++) {
			if (!(lf->dir_mask & (1 << d)))
				continue;
			struct linkdir *ld = &s->ldirs[ldir((uint32_t)lf->link_index, d)];
			ld->fault_idx[ld->n_faults++] = (uint8_t)f;
			ld->faulty = true;
		}
	}
	for (int f = 0; f < o->n_host_faults; f++) {
		struct host_fault *hf = &s->host_faults[f];
		*hf = o->host_faults[f];
		hf->host_index = -1;
		for (uint32_t i = 0; i < s->n_hosts; i++)
			if (memcmp(s->hosts[i].ip, hf->ip, 16) == 0)
				hf->host_index = (int)i;
		if (hf->host_index < 0) {
			pr_err("--host-fault: no host %s in this fabric (hosts are %s .. %s)\n",
			       hf->host_text, s->hosts[0].name, s->hosts[s->n_hosts - 1].name);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- queue pairs and workloads ---- */

static uint32_t new_qpn(struct sim *s, uint32_t host)
{
	for (;;) {
		uint32_t q = 0x100 + rng_below(&s->rng, 0xfff00);
		bool dup = false;
		for (uint32_t i = 0; i < s->n_qps && !dup; i++) {
			const struct qp *p = &s->qps[i];
			dup = (p->host[0] == host && p->qpn[0] == q) || (p->host[1] == host && p->qpn[1] == q);
		}
		if (!dup)
			return q;
	}
}

static uint32_t first_psn(struct sim *s)
{
	if (s->o->psn_wrap)	/* within 64 PSNs of 2^24: every QP that sends a little wraps */
		return PSN_MASK + 1 - 8 - rng_below(&s->rng, 56);
	return rng_below(&s->rng, PSN_MASK + 1);
}

static int add_qp_end(struct sim *s, uint32_t qp_id, int side)
{
	struct qp *q = &s->qps[qp_id];
	struct host *h = &s->hosts[q->host[side]];
	int err = util_ensure_mem((void **)&h->qpe, &h->cap_qpe, sizeof(*h->qpe), (size_t)h->n_qpe + 1);

	if (err)
		return err;
	h->qpe[h->n_qpe++] = qp_id * 2 + (uint32_t)side;

	struct rc_qp_config c;
	rc_qp_config_default(&c);
	c.service = q->svc;
	c.local_qpn = q->qpn[side];
	c.remote_qpn = q->qpn[1 - side];
	c.sq_psn = q->psn[side];
	c.rq_psn = q->psn[1 - side];
	c.mtu_bytes = s->o->mtu;
	c.line_rate_bps = (uint64_t)(s->o->host_gbps * 1e9);
	c.ack_timeout_ns = s->o->ack_timeout_ns;
	if (s->o->ack_every_pkts)
		c.ack_every_pkts = s->o->ack_every_pkts;
	c.min_rnr_timer = 0x0c;	/* 0.64 ms, rdma-core's default */
	c.max_inflight_pkts = 256;
	return rc_qp_init(&s->qpe[qp_id * 2 + (uint32_t)side].rc, &c);
}

static enum qp_op pick_mixed_op(struct sim *s, enum rc_service *svc)
{
	uint32_t r = rng_below(&s->rng, 100);
	*svc = RC_SVC_RC;
	if (r < 35)
		return OP_WRITE;
	if (r < 55)
		return OP_READ;
	if (r < 72)
		return OP_SEND;
	if (r < 80)
		return OP_ATOMIC;
	if (r < 90) {
		*svc = RC_SVC_UC;
		return OP_WRITE;
	}
	*svc = RC_SVC_UD;
	return OP_SEND;
}

static uint64_t default_msg_bytes(enum qp_op op, enum rc_service svc, uint32_t mtu)
{
	if (svc == RC_SVC_UD)
		return mtu < 512 ? mtu : 512;
	switch (op) {
	case OP_SEND:
		return 512;
	case OP_ATOMIC:
		return 8;
	default:
		return 64 * 1024;
	}
}

/* --incast: the host that receives more, or -1 (none, or an error already printed: -2). */
static int incast_victim(const struct sim *s)
{
	const struct synth_opts *o = s->o;

	if (!o->incast)
		return -1;
	for (uint32_t i = 0; i < s->n_hosts; i++)
		if (memcmp(s->hosts[i].ip, o->incast_ip, 16) == 0)
			return (int)i;
	pr_err("--incast: no host %s in this fabric (hosts are %s .. %s)\n", o->incast_text,
	       s->hosts[0].name, s->hosts[s->n_hosts - 1].name);
	return -2;
}

/*
 * A requester's first peer becomes the incast host with the probability that gives it
 * incast_factor times the QPs (and so the traffic) an average host receives: ordinary
 * many-to-one traffic, no fault.
 */
static uint32_t incast_peer(struct sim *s, int victim, uint32_t i, uint32_t p, uint32_t j)
{
	const struct synth_opts *o = s->o;
	uint32_t peers = o->peers < o->hosts - 1 ? o->peers : o->hosts - 1;
	uint32_t factor = o->incast_factor ? o->incast_factor : SYNTH_INCAST_FACTOR;
	double share = (double)(factor - 1) * peers / (double)(o->hosts - 1);

	if (victim < 0 || p != 0 || i == (uint32_t)victim || j == (uint32_t)victim)
		return j;
	return rng_below(&s->rng, 1000000) < share * 1e6 ? (uint32_t)victim : j;
}

static int build_qps(struct sim *s)
{
	const struct synth_opts *o = s->o;
	uint32_t peers = o->workload == WL_COLLECTIVE ? o->hosts - 1 : o->peers;
	if (peers > o->hosts - 1)
		peers = o->hosts - 1;
	uint32_t max_qps = o->hosts * peers * o->qps_per_pair;
	s->qps = calloc(max_qps, sizeof(*s->qps));
	s->qpe = calloc((size_t)max_qps * 2, sizeof(*s->qpe));
	uint32_t *peer_of = calloc(o->hosts, sizeof(*peer_of));
	int victim = incast_victim(s);
	if (!s->qps || !s->qpe || !peer_of || victim == -2) {
		free(peer_of);
		return victim == -2 ? -EINVAL : -ENOMEM;
	}
	for (uint32_t i = 0; i < o->hosts; i++) {
		/* Peers: the next hosts after a random offset, so pairs spread across leaves. */
		uint32_t off = o->workload == WL_COLLECTIVE ? 1 : 1 + rng_below(&s->rng, o->hosts - 1);
		for (uint32_t p = 0; p < peers; p++) {
			uint32_t j = (i + off + p) % o->hosts;
			if (j == i)
				j = (j + 1) % o->hosts;
			j = incast_peer(s, victim, i, p, j);
			for (uint32_t k = 0; k < o->qps_per_pair; k++) {
				uint32_t id = s->n_qps;
				struct qp *q = &s->qps[id];
				q->id = id;
				q->host[0] = i;
				q->host[1] = j;
				q->svc = RC_SVC_RC;
				switch (o->workload) {
				case WL_READ:
					q->op = OP_READ;
					break;
				case WL_RPC:
					q->op = OP_SEND;
					break;
				case WL_ATOMIC:
					q->op = OP_ATOMIC;
					break;
				case WL_MIXED:
					q->op = pick_mixed_op(s, &q->svc);
					break;
				default:
					q->op = OP_WRITE;
					break;
				}
				q->qpn[0] = new_qpn(s, i);
				s->n_qps++;	/* visible to new_qpn's duplicate check */
				q->qpn[1] = new_qpn(s, j);
				q->psn[0] = first_psn(s);
				q->psn[1] = first_psn(s);
				/* InfiniBand routes by DLID: no UDP entropy, one path per host pair. */
				q->sport = o->link_ib ? 0 : qp_udp_sport(q->qpn[0], q->qpn[1]);
				q->flow_label = qp_flow_label(q->qpn[0], q->qpn[1]);
				q->path_len[0] = compute_path(s, i, j, q->sport, q->path[0]);
				q->path_len[1] = compute_path(s, j, i, q->sport, q->path[1]);
				q->msg_bytes = o->msg_bytes ? o->msg_bytes
							    : default_msg_bytes(q->op, q->svc, o->mtu);
				if (q->svc == RC_SVC_UD && q->msg_bytes > o->mtu)
					q->msg_bytes = o->mtu;
				if (q->op == OP_ATOMIC)
					q->msg_bytes = 8;
				if (q->op == OP_READ && q->msg_bytes > 256 * 1024)
					q->msg_bytes = 256 * 1024;
				q->outstanding = o->outstanding;
				if (add_qp_end(s, id, 0) < 0 || add_qp_end(s, id, 1) < 0) {
					free(peer_of);
					return -EINVAL;
				}
				s->hosts[i].n_requester_qps++;
			}
		}
	}
	free(peer_of);
	for (uint32_t i = 0; i < s->n_qps; i++) {
		struct qp *q = &s->qps[i];
		double per_qp_bps = o->load * o->host_gbps * 1e9 / s->hosts[q->host[0]].n_requester_qps;
		double msg_bits = (double)(q->msg_bytes + 82) * 8.0;
		if (q->op == OP_READ)	/* READ load comes back as responses to this host */
			msg_bits = (double)(q->msg_bytes + 82) * 8.0;
		q->interval_ns = per_qp_bps > 0 ? msg_bits * 1e9 / per_qp_bps : 1e12;
		if (q->interval_ns < 1)
			q->interval_ns = 1;
	}
	return 0;
}

static void kick_host(struct sim *s, uint32_t host, uint64_t now);

static void post_message(struct sim *s, struct qp *q, uint64_t now)
{
	struct rc_qp *rc = &s->qpe[q->id * 2].rc;
	struct rc_wr wr = {.wr_id = ++q->n_posted, .rkey = 0x1000 + q->id,
			   .remote_va = 0x7f0000000000ull + ((q->n_posted * q->msg_bytes) & 0x3fffffff)};
	switch (q->op) {
	case OP_READ:
		wr.opcode = RC_WR_READ;
		wr.length_bytes = (uint32_t)q->msg_bytes;
		break;
	case OP_SEND:
		wr.opcode = q->svc == RC_SVC_UD ? RC_WR_SEND : RC_WR_SEND_IMM;
		wr.length_bytes = q->svc == RC_SVC_UD
					  ? (uint32_t)q->msg_bytes
					  : 64 + rng_below(&s->rng, (uint32_t)(q->msg_bytes > 64 ? q->msg_bytes - 63 : 1));
		wr.imm_data = (uint32_t)q->n_posted;
		break;
	case OP_ATOMIC:
		wr.opcode = (q->n_posted & 1) ? RC_WR_FETCH_ADD : RC_WR_CMP_SWAP;
		wr.compare_add = q->n_posted;
		wr.swap = q->n_posted + 1;
		wr.remote_va &= ~7ull;
		break;
	default:
		/* Every fourth WRITE carries an immediate (it consumes a receive, as NCCL's do). */
		wr.opcode = (q->n_posted % 4 == 0) ? RC_WR_WRITE_IMM : RC_WR_WRITE;
		wr.length_bytes = (uint32_t)q->msg_bytes;
		wr.imm_data = (uint32_t)q->n_posted;
		break;
	}
	if (q->svc == RC_SVC_UD && wr.opcode != RC_WR_SEND && wr.opcode != RC_WR_SEND_IMM) {
		wr.opcode = RC_WR_SEND;
		wr.length_bytes = (uint32_t)q->msg_bytes;
	}
	if (rc_post_send(rc, now, &wr) == 0)
		q->in_flight_msgs++;
	kick_host(s, q->host[0], now);
}

static void on_completions(struct sim *s, uint32_t qpe_index, uint64_t now)
{
	struct rc_qp *rc = &s->qpe[qpe_index].rc;
	struct qp *q = &s->qps[qpe_index / 2];
	struct rc_completion wc;

	while (rc_poll_completion(rc, &wc) == 1) {
		if (wc.is_recv)
			continue;
		if (q->in_flight_msgs)
			q->in_flight_msgs--;
		if (s->o->workload == WL_COLLECTIVE) {
			if (s->phase_remaining && --s->phase_remaining == 0 && now < s->end_ns)
				ev_push(s, now + s->o->pause_ns, EV_PHASE, 0);
			continue;
		}
		if (q->backlog && now < s->end_ns) {
			q->backlog = false;
			post_message(s, q, now);
		}
	}
}

static void workload_tick(struct sim *s, uint32_t qp_id, uint64_t now)
{
	struct qp *q = &s->qps[qp_id];
	if (s->qpe[qp_id * 2].rc.error)
		return;
	if (q->in_flight_msgs < q->outstanding && rc_sq_pending(&s->qpe[qp_id * 2].rc) < RC_SQ_DEPTH)
		post_message(s, q, now);
	else
		q->backlog = true;
	double gap = rng_exp(&s->rng, q->interval_ns);
	if (q->op == OP_WRITE || q->op == OP_READ)	/* bulk streams: steadier than Poisson */
		gap = q->interval_ns * (0.75 + 0.5 * rng_double(&s->rng));
	uint64_t next = now + (uint64_t)gap + 1;
	if (next < s->end_ns)
		ev_push(s, next, EV_POST, qp_id);
}

static void collective_phase(struct sim *s, uint64_t now)
{
	s->phase_remaining = 0;
	s->phases++;
	for (uint32_t i = 0; i < s->n_qps; i++) {
		struct qp *q = &s->qps[i];
		if (s->qpe[i * 2].rc.error)
			continue;
		post_message(s, q, now);
		s->phase_remaining++;
	}
}

/* ---- host faults ---- */

static bool host_fault_active(const struct host_fault *hf, uint64_t t)
{
	return t >= hf->onset_ns && (hf->end_ns == 0 || t < hf->end_ns);
}

static void host_fault_apply(struct sim *s, uint32_t f, bool on, uint64_t now)
{
	const struct host_fault *hf = &s->host_faults[f];
	struct host *h = &s->hosts[hf->host_index];
	for (uint32_t k = 0; k < h->n_qpe; k++) {
		uint32_t e = h->qpe[k];
		struct rc_qp *rc = &s->qpe[e].rc;
		int side = (int)(e & 1);
		switch (hf->kind) {
		case HF_RNR:
			if (side == 1)
				rc_set_unlimited_recvs(rc, !on);
			break;
		case HF_SLOW_RESPONDER:
			if (side == 1)
				rc_set_responder_delay(rc, on ? hf->size_ns : 0);
			break;
		case HF_NIC_RETRANSMIT:
			if (side == 0)
				rc_set_ack_timeout(rc, on ? hf->size_ns : s->o->ack_timeout_ns);
			break;
		}
	}
	if (on && hf->kind == HF_RNR)
		ev_push(s, now + hf->size_ns, EV_RNR_TICK, f);
	kick_host(s, (uint32_t)hf->host_index, now);
}

static void rnr_tick(struct sim *s, uint32_t f, uint64_t now)
{
	const struct host_fault *hf = &s->host_faults[f];
	if (!host_fault_active(hf, now))
		return;
	struct host *h = &s->hosts[hf->host_index];
	for (uint32_t k = 0; k < h->n_qpe; k++)
		if (h->qpe[k] & 1)
			rc_post_recv(&s->qpe[h->qpe[k]].rc, 1);
	ev_push(s, now + hf->size_ns, EV_RNR_TICK, f);
}

/* ---- links ---- */

static bool fault_active(const struct link_fault *lf, uint64_t t)
{
	return t >= lf->onset_ns && (lf->end_ns == 0 || t < lf->end_ns);
}

static uint32_t wire_bits(uint32_t frame_len)
{
	return (frame_len + 4 + 20) * 8;	/* FCS, preamble and inter-frame gap */
}

/* The packet enters link direction `d` at `now`; schedules its arrival or drops it. */
static void link_traverse(struct sim *s, uint32_t fi, uint32_t d, uint64_t now)
{
	struct flight *f = &s->flights[fi];
	struct linkdir *ld = &s->ldirs[d];
	struct qp *q = &s->qps[f->qp];
	double rate = ld->rate_bps;
	uint64_t extra_ns = 0;
	bool drop = false, mark = false;

	for (uint32_t k = 0; k < ld->n_faults; k++) {
		const struct link_fault *lf = &s->faults[ld->fault_idx[k]];
		if (!fault_active(lf, now))
			continue;
		switch (lf->kind) {
		case LF_SLOW:
			if (lf->rate_divisor > 1.0)
				rate /= lf->rate_divisor;
			if (lf->extra_latency_ns)
				extra_ns += lf->queue_like
						    ? (uint64_t)rng_exp(&s->rng, (double)lf->extra_latency_ns)
						    : lf->extra_latency_ns;
			break;
		case LF_LOSS:
			if (rng_double(&s->rng) < lf->rate)
				drop = true;
			break;
		case LF_ECN:
			if (rng_double(&s->rng) < lf->rate)
				mark = true;
			break;
		case LF_FLAP:
			if ((now - lf->onset_ns) % lf->period_ns < lf->down_ns)
				drop = true;
			break;
		}
	}
	uint64_t start = ld->busy_until > now ? ld->busy_until : now;
	uint64_t queue_ns = start - now;
	double queue_bytes = (double)queue_ns * rate / 8e9;
	if (queue_bytes > (double)s->o->buffer_bytes)
		drop = true;	/* tail drop: the port buffer is full */
	if (drop) {
		ld->dropped++;
		q->dropped++;
		flight_free(s, fi);
		return;
	}
	uint64_t ser_ns = (uint64_t)((double)wire_bits(f->frame_len) * 1e9 / rate);
	ld->busy_until = start + ser_ns;
	if (queue_ns > ld->max_queue_ns)
		ld->max_queue_ns = queue_ns;
	/* RED-style marking on the queue a packet finds (the switch's ECN thresholds). */
	if (s->o->ecn_kmax_bytes && queue_bytes > (double)s->o->ecn_kmin_bytes) {
		double p = queue_bytes >= (double)s->o->ecn_kmax_bytes
				   ? 1.0
				   : s->o->ecn_pmax * (queue_bytes - (double)s->o->ecn_kmin_bytes) /
					     (double)(s->o->ecn_kmax_bytes - s->o->ecn_kmin_bytes);
		if (rng_double(&s->rng) < p)
			mark = true;
	}
	if (mark && f->ecn == 2) {
		f->ecn = 3;
		ld->ce_marked++;
		q->ce_marked++;
	}
	ld->packets++;
	ld->bytes += f->frame_len;
	uint64_t arrive = ld->busy_until + ld->latency_ns + extra_ns;
	if (arrive <= ld->last_arrival_ns)	/* a link is FIFO, even when its latency varies */
		arrive = ld->last_arrival_ns + 1;
	ld->last_arrival_ns = arrive;
	ev_push(s, arrive, EV_HOP, fi);
}

/* ---- hosts ---- */

static void schedule_nic(struct sim *s, uint32_t host, uint64_t t)
{
	struct host *h = &s->hosts[host];
	if (t < h->nic_wake_ns) {
		h->nic_wake_ns = t;
		ev_push(s, t, EV_NIC, host);
	}
}

static void kick_host(struct sim *s, uint32_t host, uint64_t now)
{
	uint64_t busy = s->ldirs[ldir(host_link(host), 0)].busy_until;
	schedule_nic(s, host, busy > now ? busy : now);
}

static void nic_tx(struct sim *s, uint32_t hi, uint64_t now)
{
	struct host *h = &s->hosts[hi];
	struct linkdir *up = &s->ldirs[ldir(host_link(hi), 0)];
	uint64_t wake = UINT64_MAX;

	if (up->busy_until > now) {
		schedule_nic(s, hi, up->busy_until);
		return;
	}
	for (uint32_t k = 0; k < h->n_qpe; k++) {
		uint32_t e = h->qpe[(h->rr + k) % h->n_qpe];
		struct qp_end *qe = &s->qpe[e];
		struct roce_pkt pkt;
		struct rc_tx_info info;
		if (rc_next_packet(&qe->rc, now, &pkt, &info) != 1)
			continue;
		h->rr = (h->rr + k + 1) % h->n_qpe;
		uint32_t fi = flight_alloc(s);
		if (fi == UINT32_MAX) {
			s->oom = true;
			return;
		}
		struct flight *f = &s->flights[fi];
		struct flight_pkt *fp = &s->flight_pkts[fi];
		struct qp *q = &s->qps[e / 2];
		int side = (int)(e & 1);
		fp->pkt = pkt;
		f->qp = e / 2;
		f->side = (uint8_t)side;
		f->hop = 0;
		f->kind = (uint8_t)info.kind;
		f->ecn = pkt.opcode == ROCE_OPCODE_CNP ? 0 : 2;
		fp->dscp = pkt.opcode == ROCE_OPCODE_CNP ? 48 : 26;
		fp->ip_id = h->ip_id++;
		fp->depart_ns = now;
		fp->timeout_retx = info.after_timeout;
		if (info.after_timeout)
			pr_debug("t=%llu ns: QP %u (%s -> %s) timeout retransmission PSN %u\n",
				 (unsigned long long)now, q->id, s->hosts[q->host[0]].name,
				 s->hosts[q->host[1]].name, pkt.psn);
		f->frame_len = synth_frame_len(s, &pkt);
		q->used_dir[side] = true;
		synth_record(s, fi, hi, false, now);
		on_completions(s, e, now);
		link_traverse(s, fi, q->path[side][0], now);
		schedule_nic(s, hi, up->busy_until > now ? up->busy_until : now + 1);
		return;
	}
	/* Nothing to send now: sleep until the earliest QP timer, pacing slot or response. */
	for (uint32_t k = 0; k < h->n_qpe; k++) {
		uint64_t w = rc_next_event_ns(&s->qpe[h->qpe[k]].rc);
		if (w <= now)
			w = now + 1;
		if (w < wake)
			wake = w;
	}
	if (wake != UINT64_MAX)
		schedule_nic(s, hi, wake);
}

static void deliver(struct sim *s, uint32_t fi, uint64_t now)
{
	struct flight *f = &s->flights[fi];
	struct qp *q = &s->qps[f->qp];
	int to_side = 1 - f->side;
	uint32_t host = q->host[to_side];
	uint32_t e = f->qp * 2 + (uint32_t)to_side;

	synth_record(s, fi, host, true, now);
	struct flight_pkt *fp = &s->flight_pkts[fi];
	fp->pkt.ecn = f->ecn;
	rc_receive(&s->qpe[e].rc, now, &fp->pkt);
	flight_free(s, fi);
	on_completions(s, e, now);
	/* Wake the NIC only when this packet gave the QP something to send (an ACK, a NAK, a
	 * response, an open window): most data packets do not. */
	uint64_t w = rc_next_event_ns(&s->qpe[e].rc);
	if (w != UINT64_MAX) {
		uint64_t busy = s->ldirs[host_link(host) * 2].busy_until;
		if (w < busy)
			w = busy;
		schedule_nic(s, host, w > now ? w : now);
	}
}

static void hop_done(struct sim *s, uint32_t fi, uint64_t now)
{
	struct flight *f = &s->flights[fi];
	const struct qp *q = &s->qps[f->qp];
	f->hop++;
	if (f->hop >= q->path_len[f->side])
		deliver(s, fi, now);
	else
		link_traverse(s, fi, q->path[f->side][f->hop], now);
}

int synth_sim_init(struct sim *s, const struct synth_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->flight_free = UINT32_MAX;
	rng_seed(&s->rng, o->seed);
	s->ecmp_seed = rng_next(&s->rng);
	s->end_ns = o->duration_ns;
	if (build_fabric(s) < 0 || build_qps(s) < 0)
		return -1;
	return 0;
}

int synth_sim_run(struct sim *s)
{
	const struct synth_opts *o = s->o;
	struct event ev;

	/* Workloads start staggered over the first microseconds, as real jobs do. */
	if (o->workload == WL_COLLECTIVE) {
		ev_push(s, 1000, EV_PHASE, 0);
	} else {
		for (uint32_t i = 0; i < s->n_qps; i++)
			ev_push(s, 1 + rng_below(&s->rng, 20000), EV_POST, i);
	}
	for (int f = 0; f < o->n_host_faults; f++) {
		ev_push(s, s->host_faults[f].onset_ns, EV_HOST_FAULT_ON, (uint32_t)f);
		if (s->host_faults[f].end_ns)
			ev_push(s, s->host_faults[f].end_ns, EV_HOST_FAULT_OFF, (uint32_t)f);
	}
	while (ev_pop(s, &ev)) {
		if (ev.t >= s->end_ns || s->stop)
			break;
		s->now = ev.t;
		switch (ev.type) {
		case EV_NIC:
			if (s->hosts[ev.arg].nic_wake_ns != ev.t)
				break;	/* superseded by an earlier wake-up */
			s->hosts[ev.arg].nic_wake_ns = UINT64_MAX;
			nic_tx(s, ev.arg, ev.t);
			break;
		case EV_HOP:
			hop_done(s, ev.arg, ev.t);
			break;
		case EV_POST:
			workload_tick(s, ev.arg, ev.t);
			break;
		case EV_PHASE:
			collective_phase(s, ev.t);
			break;
		case EV_HOST_FAULT_ON:
			host_fault_apply(s, ev.arg, true, ev.t);
			break;
		case EV_HOST_FAULT_OFF:
			host_fault_apply(s, ev.arg, false, ev.t);
			break;
		case EV_RNR_TICK:
			rnr_tick(s, ev.arg, ev.t);
			break;
		}
		if (s->oom || s->write_failed)
			return -1;
	}
	return 0;
}

void synth_sim_free(struct sim *s)
{
	for (uint32_t i = 0; i < s->n_hosts; i++)
		free(s->hosts[i].qpe);
	free(s->hosts);
	free(s->links);
	free(s->ldirs);
	free(s->qps);
	free(s->qpe);
	for (int i = 0; i < 65; i++)
		free(s->ev_buckets[i].v);
	free(s->flights);
	free(s->flight_pkts);
}
