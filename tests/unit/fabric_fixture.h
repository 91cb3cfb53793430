/*
 * fabric_fixture.h: a flow-level leaf-spine model that yields struct flow_stats arrays for
 * the localization tests: each QP's round trip is the sum of its links' latencies (paths
 * chosen by an ECMP hash of the UDP source port, as agentxdp-synth lays them out), plus the
 * responder's turnaround, plus whatever fault the test configures.
 */
#ifndef AGENTXDP_FABRIC_FIXTURE_H
#define AGENTXDP_FABRIC_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/track/flow.h"
#include "lib/localize/topology.h"

#define FX_MAX_HOSTS 64
#define FX_MAX_QPS 512
#define FX_WINDOWS 10
#define FX_WINDOW_NS 1000000ull
#define FX_T0_NS 1767225600000000000ull

enum fx_fault_kind { FX_NONE, FX_SLOW, FX_LOSSY, FX_CONGESTED, FX_RNR, FX_TURNAROUND, FX_PAIR };

struct fx_fault {
	enum fx_fault_kind kind;
	char link[64];		/* faulty link name (FX_SLOW/LOSSY/CONGESTED) */
	bool both_dirs;		/* else only a -> b as listed in links.csv */
	double extra_us;	/* FX_SLOW / FX_TURNAROUND / FX_PAIR: one-way extra latency */
	double rate;		/* FX_LOSSY / FX_CONGESTED: per packet */
	int host, peer;		/* FX_RNR / FX_TURNAROUND host; FX_PAIR hosts */
	int onset_window;	/* fault starts at this window (0 = from the start) */
};

struct fx_fabric {
	int n_hosts, n_leaves, n_spines;
	uint32_t seed;
	char links_csv[16384], paths_csv[65536];
	struct flow_stats flows[2 * FX_MAX_QPS];
	struct flow_window windows[2 * FX_MAX_QPS][FX_WINDOWS];
	size_t n_flows;
};

static uint32_t fx_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static double fx_uniform(uint32_t *s)
{
	return (fx_rand(s) & 0xffffff) / (double)0x1000000;
}

static void fx_host_ip(int i, char *buf, size_t len)
{
	snprintf(buf, len, "198.18.0.%d", 10 + i);
}

static int fx_leaf(const struct fx_fabric *fx, int host)
{
	int per_leaf = (fx->n_hosts + fx->n_leaves - 1) / fx->n_leaves;
	return host / per_leaf;
}

/* Link names along src -> dst with the spine ECMP picks for this port. */
static int fx_path(const struct fx_fabric *fx, int src, int dst, uint16_t sport, char names[4][64])
{
	char s[32], d[32];
	int ls = fx_leaf(fx, src), ld = fx_leaf(fx, dst);
	uint32_t h = (uint32_t)src * 2654435761u ^ (uint32_t)dst * 40503u ^ sport * 2246822519u;

	fx_host_ip(src, s, sizeof(s));
	fx_host_ip(dst, d, sizeof(d));
	snprintf(names[0], 64, "%s-leaf%d", s, ls);
	if (ls == ld) {
		snprintf(names[1], 64, "%s-leaf%d", d, ld);
		return 2;
	}
	int spine = (int)((h >> 7) % (uint32_t)fx->n_spines);
	snprintf(names[1], 64, "leaf%d-spine%d", ls, spine);
	snprintf(names[2], 64, "leaf%d-spine%d", ld, spine);
	snprintf(names[3], 64, "%s-leaf%d", d, ld);
	return 4;
}

/* Does the path cross the faulty link in its faulty direction? */
static bool fx_hits(const struct fx_fabric *fx, const struct fx_fault *f, int src, int dst,
		    uint16_t sport)
{
	char names[4][64];
	int n = fx_path(fx, src, dst, sport, names);

	if (f->kind != FX_SLOW && f->kind != FX_LOSSY && f->kind != FX_CONGESTED)
		return false;
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i], f->link))
			continue;
		/* links.csv lists host links host->leaf and fabric links leaf->spine: the
		 * first half of a path crosses them a -> b, the second half b -> a. */
		bool a_to_b = i < n / 2;
		return f->both_dirs || a_to_b;
	}
	return false;
}

static void fx_build(struct fx_fabric *fx, int n_hosts, int n_leaves, int n_spines, int n_qps,
		     uint32_t seed, const struct fx_fault *fault)
{
	char ip[32], names[4][64];
	size_t off = 0, poff = 0;

	memset(fx, 0, sizeof(*fx));
	fx->n_hosts = n_hosts;
	fx->n_leaves = n_leaves;
	fx->n_spines = n_spines;
	fx->seed = seed ? seed : 1;
	off += (size_t)snprintf(fx->links_csv + off, sizeof(fx->links_csv) - off, "link,a,b\n");
	for (int i = 0; i < n_hosts; i++) {
		fx_host_ip(i, ip, sizeof(ip));
		off += (size_t)snprintf(fx->links_csv + off, sizeof(fx->links_csv) - off,
					"%s-leaf%d,%s,leaf%d\n", ip, fx_leaf(fx, i), ip,
					fx_leaf(fx, i));
	}
	for (int l = 0; l < n_leaves; l++)
		for (int s = 0; s < n_spines; s++)
			off += (size_t)snprintf(fx->links_csv + off, sizeof(fx->links_csv) - off,
						"leaf%d-spine%d,leaf%d,spine%d\n", l, s, l, s);
	poff += (size_t)snprintf(fx->paths_csv, sizeof(fx->paths_csv), "src,dst,udp_sport,links...\n");

	uint32_t rs = fx->seed;
	for (int q = 0; q < n_qps && q < FX_MAX_QPS; q++) {
		int src = q % n_hosts, dst = (int)(fx_rand(&rs) % (uint32_t)(n_hosts - 1));
		uint16_t sport = (uint16_t)(49152 + fx_rand(&rs) % 16384);
		struct flow_stats *req = &fx->flows[fx->n_flows], *resp = req + 1;
		int hops_f, hops_r;

		if (dst >= src)
			dst++;
		for (int dir = 0; dir < 2; dir++) {
			int a = dir ? dst : src, b = dir ? src : dst;
			char sa[32], sb[32];
			int n = fx_path(fx, a, b, sport, names);
			fx_host_ip(a, sa, sizeof(sa));
			fx_host_ip(b, sb, sizeof(sb));
			poff += (size_t)snprintf(fx->paths_csv + poff, sizeof(fx->paths_csv) - poff,
						 "%s,%s,%u", sa, sb, sport);
			for (int i = 0; i < n; i++)
				poff += (size_t)snprintf(fx->paths_csv + poff,
							 sizeof(fx->paths_csv) - poff, ",%s",
							 names[i]);
			poff += (size_t)snprintf(fx->paths_csv + poff, sizeof(fx->paths_csv) - poff,
						 "\n");
		}
		hops_f = fx_path(fx, src, dst, sport, names);
		hops_r = fx_path(fx, dst, src, sport, names);
		bool hit_f = fault && fx_hits(fx, fault, src, dst, sport);
		bool hit_r = fault && fx_hits(fx, fault, dst, src, sport);
		double base_us = 2.0 + 1.0 * (hops_f + hops_r) + 0.05 * fx_uniform(&rs);
		double extra_us = 0;
		if (fault && fault->kind == FX_SLOW)
			extra_us = fault->extra_us * (hit_f + hit_r);
		if (fault && fault->kind == FX_TURNAROUND && dst == fault->host)
			extra_us = fault->extra_us;
		if (fault && fault->kind == FX_PAIR &&
		    ((src == fault->host && dst == fault->peer) ||
		     (src == fault->peer && dst == fault->host)))
			extra_us = 2 * fault->extra_us;
		int onset = fault ? fault->onset_window : 0;

		for (int k = 0; k < 2; k++) {
			struct flow_stats *f = req + k;
			f->id = fx->n_flows + (size_t)k + 1;
			topo_parse_addr((fx_host_ip(k ? dst : src, ip, sizeof(ip)), ip),
					f->key.src_ip);
			topo_parse_addr((fx_host_ip(k ? src : dst, ip, sizeof(ip)), ip),
					f->key.dst_ip);
			f->key.dst_qpn = 0x100 + (uint32_t)q * 2 + (uint32_t)(1 - k);
			f->ip_version = 4;
			f->role = k ? FLOW_ROLE_RESPONDER : FLOW_ROLE_REQUESTER;
			f->udp_sport = sport;
			f->peer_id = fx->n_flows + (size_t)(1 - k) + 1;
			f->windows = fx->windows[fx->n_flows + (size_t)k];
			f->n_windows = FX_WINDOWS;
			f->first_ns = FX_T0_NS;
			f->last_ns = FX_T0_NS + FX_WINDOWS * FX_WINDOW_NS - 1;
		}
		/* Per window: 100 request packets, 50 ACKs. */
		double lat[FX_WINDOWS];
		for (int w = 0; w < FX_WINDOWS; w++) {
			struct flow_window *rw = &fx->windows[fx->n_flows][w];
			struct flow_window *aw = &fx->windows[fx->n_flows + 1][w];
			bool on = fault && fault->kind != FX_NONE && w >= onset;
			lat[w] = base_us + (on ? extra_us : 0) + 0.02 * fx_uniform(&rs);
			rw->start_ns = aw->start_ns = FX_T0_NS + (uint64_t)w * FX_WINDOW_NS;
			rw->packets = 100;
			rw->bytes = 100 * 1100;
			rw->ack_samples = 50;
			rw->ack_latency_p50_ns = (uint32_t)(lat[w] * 1000);
			rw->ack_latency_p99_ns = (uint32_t)(lat[w] * 1300);
			rw->ack_latency_sum_ns = (uint64_t)(lat[w] * 1000) * 50;
			aw->packets = 50;
			aw->bytes = 50 * 60;
			if (on && fault->kind == FX_LOSSY && hit_f) {
				/* Expected losses, with the fraction carried between windows. */
				double expect = fault->rate * 100 * (w - onset + 1);
				uint32_t so_far = (uint32_t)(fault->rate * 100 * (w - onset));
				rw->naks = (uint32_t)expect - so_far;
				rw->retransmitted_packets = rw->naks * 8;
			}
			if (on && fault->kind == FX_CONGESTED && hit_f) {
				double expect = fault->rate * 100 * (w - onset + 1);
				uint32_t so_far = (uint32_t)(fault->rate * 100 * (w - onset));
				rw->cnps = (uint32_t)expect - so_far;
			}
			if (on && fault->kind == FX_RNR && dst == fault->host)
				rw->naks = 2;
			req->packets += rw->packets;
			req->bytes += rw->bytes;
			req->retransmitted_packets += rw->retransmitted_packets;
			req->naks_psn_seq += fault && fault->kind == FX_LOSSY ? rw->naks : 0;
			req->rnr_naks += fault && fault->kind == FX_RNR ? rw->naks : 0;
			req->cnps += rw->cnps;
			req->ack_samples += rw->ack_samples;
			resp->packets += aw->packets;
			resp->bytes += aw->bytes;
		}
		/* Flow-level percentiles over all windows' samples (equal counts per window). */
		double sorted[FX_WINDOWS];
		memcpy(sorted, lat, sizeof(sorted));
		for (int i = 0; i < FX_WINDOWS; i++)
			for (int j = i + 1; j < FX_WINDOWS; j++)
				if (sorted[j] < sorted[i]) {
					double t = sorted[i];
					sorted[i] = sorted[j];
					sorted[j] = t;
				}
		req->ack_latency_p50_us = sorted[FX_WINDOWS / 2];
		req->ack_latency_p99_us = sorted[FX_WINDOWS - 1] * 1.3;
		req->ack_latency_max_us = sorted[FX_WINDOWS - 1] * 1.5;
		fx->n_flows += 2;
	}
}

static int fx_topology(const struct fx_fabric *fx, struct topology *t, bool with_paths)
{
	char err[256];
	int ret;

	memset(t, 0, sizeof(*t));
	ret = topology_parse_links(t, fx->links_csv, strlen(fx->links_csv), "links.csv", err,
				   sizeof(err));
	if (!ret && with_paths)
		ret = topology_parse_paths(t, fx->paths_csv, strlen(fx->paths_csv), "paths.csv",
					   err, sizeof(err));
	if (ret)
		fprintf(stderr, "fixture topology: %s\n", err);
	return ret;
}

#endif
