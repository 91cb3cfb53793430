/* store_links.c: the links each flow crosses (recorded path, else ECMP shares). */
#include "lib/store/store_links.h"

#include <errno.h>
#include <stdlib.h>

/* Hops from each node to the nearest host (0 host, 1 leaf, 2 spine, ...), -1 unreachable. */
static int *node_tiers(const struct topology *t)
{
	int *tier = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof(*tier));
	bool changed = true;

	if (!tier)
		return NULL;
	for (size_t i = 0; i < t->n_nodes; i++)
		tier[i] = t->nodes[i].is_host ? 0 : -1;
	/* Relax over the links until stable: a fabric is a few tiers deep. */
	for (int round = 0; changed && round < 64; round++) {
		changed = false;
		for (size_t i = 0; i < t->n_links; i++) {
			uint32_t a = t->links[i].a, b = t->links[i].b;

			if (tier[a] >= 0 && !t->nodes[b].is_host && (tier[b] < 0 || tier[b] > tier[a] + 1)) {
				tier[b] = tier[a] + 1;
				changed = true;
			}
			if (tier[b] >= 0 && !t->nodes[a].is_host && (tier[a] < 0 || tier[a] > tier[b] + 1)) {
				tier[a] = tier[b] + 1;
				changed = true;
			}
		}
	}
	return tier;
}

static const char *link_kind(int ta, int tb)
{
	int lo = ta < tb ? ta : tb, hi = ta < tb ? tb : ta;

	if (lo == 0)
		return "host";
	if (lo == 1 && hi == 2)
		return "leaf-spine";
	return lo == hi ? "switch-peer" : "switch";
}

/* ECMP paths of one host pair, computed once: the flows of a pair share them. */
struct ecmp_cache {
	uint64_t key;		/* (src node + 1) << 32 | dst node + 1; 0: empty slot */
	struct topo_hop *hops;
	size_t n_paths, len;
	int err;
};

static struct ecmp_cache *ecmp_lookup(const struct topology *t, struct ecmp_cache *tab, size_t cap,
				      uint32_t s, uint32_t d)
{
	uint64_t key = ((uint64_t)s + 1) << 32 | ((uint64_t)d + 1);
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);

	while (tab[i].key && tab[i].key != key)
		i = (i + 1) & (cap - 1);
	if (!tab[i].key) {
		tab[i].key = key;
		tab[i].err = topology_shortest_paths(t, s, d, 64, &tab[i].hops, &tab[i].n_paths, &tab[i].len);
	}
	return &tab[i];
}

/* One flow's links: its recorded path (share 1), else spread over the ECMP shortest paths. */
static int flow_links(const struct topology *t, const struct flow_stats *f, struct ecmp_cache *tab, size_t cap,
		      const struct store_links_cb *cb)
{
	const struct topo_path *p = topology_find_path(t, f->key.src_ip, f->key.dst_ip, f->udp_sport);
	long src = topology_host(t, f->key.src_ip), dst = topology_host(t, f->key.dst_ip);
	struct ecmp_cache *e;

	if (p) {
		for (size_t i = 0; i < p->n_hops; i++)
			cb->flow_link(cb->ctx, f->id, t->links[p->hops[i].link].name, 1.0, p->hops[i].a_to_b);
		return 0;
	}
	if (src < 0 || dst < 0)
		return 0;
	e = ecmp_lookup(t, tab, cap, (uint32_t)src, (uint32_t)dst);
	if (e->err == -ENOMEM)
		return -ENOMEM;
	if (e->err || !e->n_paths)
		return 0;
	/* Hop i of every path is i links from the source: a link shared by several paths sits at
	 * the same hop in each, and carries the sum of their shares (one row, at its first path). */
	for (size_t k = 0; k < e->n_paths; k++)
		for (size_t i = 0; i < e->len; i++) {
			const struct topo_hop *h = &e->hops[k * e->len + i];
			size_t j = 0, n_on = 0;

			while (j < k && e->hops[j * e->len + i].link != h->link)
				j++;
			if (j < k)
				continue;
			for (size_t m = k; m < e->n_paths; m++)
				n_on += e->hops[m * e->len + i].link == h->link;
			cb->flow_link(cb->ctx, f->id, t->links[h->link].name, (double)n_on / (double)e->n_paths,
				      h->a_to_b);
		}
	return 0;
}

int store_links_walk(const struct topology *t, const struct flow_stats *flows, size_t n,
		     const struct store_links_cb *cb)
{
	int *tier = node_tiers(t);
	size_t cap = 16;
	struct ecmp_cache *tab;
	int err = -ENOMEM;

	while (cap < 2 * n)
		cap *= 2;
	tab = calloc(cap, sizeof(*tab));
	if (!tier || !tab)
		goto cleanup;
	for (size_t i = 0; i < t->n_links; i++) {
		const struct topo_link *l = &t->links[i];

		cb->link(cb->ctx, l->name, t->nodes[l->a].name, t->nodes[l->b].name, link_kind(tier[l->a], tier[l->b]),
			 tier[l->a], tier[l->b]);
	}
	err = 0;
	for (size_t i = 0; i < n && !err; i++)
		err = flow_links(t, &flows[i], tab, cap, cb);
cleanup:
	for (size_t i = 0; tab && i < cap; i++)
		free(tab[i].hops);
	free(tab);
	free(tier);
	return err;
}
