/* topology_graph.c: building a topology and looking paths up in it (pure, no I/O). */
#include "lib/localize/topology.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int topo_parse_addr(const char *text, uint8_t addr[16])
{
	struct in_addr v4;

	memset(addr, 0, 16);
	if (inet_pton(AF_INET, text, &v4) == 1) {
		addr[10] = 0xff;
		addr[11] = 0xff;
		memcpy(addr + 12, &v4, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, text, addr) == 1)
		return 0;
	return -EINVAL;
}

static void *grow(void *arr, size_t n, size_t elem)
{
	/* Doubling growth: reallocate when n reaches a power of two (or is 0). */
	if (n && (n & (n - 1)))
		return arr;
	return realloc(arr, (n ? n * 2 : 8) * elem);
}

static long find_node(const struct topology *t, const char *name)
{
	for (size_t i = 0; i < t->n_nodes; i++)
		if (!strcmp(t->nodes[i].name, name))
			return (long)i;
	return -1;
}

long topology_node(struct topology *t, const char *name)
{
	long idx = find_node(t, name);
	struct topo_node *nodes, *node;

	if (idx >= 0)
		return idx;
	nodes = grow(t->nodes, t->n_nodes, sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	t->nodes = nodes;
	node = &nodes[t->n_nodes];
	memset(node, 0, sizeof(*node));
	snprintf(node->name, sizeof(node->name), "%s", name);
	node->is_host = topo_parse_addr(name, node->addr) == 0;
	return (long)t->n_nodes++;
}

long topology_link_by_name(const struct topology *t, const char *name)
{
	for (size_t i = 0; i < t->n_links; i++)
		if (!strcmp(t->links[i].name, name))
			return (long)i;
	return -1;
}

long topology_host(const struct topology *t, const uint8_t addr[16])
{
	for (size_t i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].is_host && !memcmp(t->nodes[i].addr, addr, 16))
			return (long)i;
	return -1;
}

static bool name_ok(const char *name)
{
	size_t len = strlen(name);
	return len > 0 && len < TOPO_NAME_MAX;
}

int topology_add_link(struct topology *t, const char *name, const char *a, const char *b)
{
	struct topo_link *links;
	long ia, ib;

	if (!name_ok(name) || !name_ok(a) || !name_ok(b) || !strcmp(a, b))
		return -EINVAL;
	if (topology_link_by_name(t, name) >= 0)
		return -EEXIST;
	ia = topology_node(t, a);
	ib = topology_node(t, b);
	if (ia < 0 || ib < 0)
		return -ENOMEM;
	links = grow(t->links, t->n_links, sizeof(*links));
	if (!links)
		return -ENOMEM;
	t->links = links;
	memset(&links[t->n_links], 0, sizeof(*links));
	snprintf(links[t->n_links].name, TOPO_NAME_MAX, "%s", name);
	links[t->n_links].a = (uint32_t)ia;
	links[t->n_links].b = (uint32_t)ib;
	t->n_links++;
	return 0;
}

int topology_add_path(struct topology *t, const uint8_t src[16], const uint8_t dst[16],
		      uint16_t udp_sport, const uint32_t *links, size_t n_links, char *err,
		      size_t err_len)
{
	long at = topology_host(t, src), end = topology_host(t, dst);
	struct topo_path *paths, *path;
	struct topo_hop *hops;

	if (at < 0 || end < 0) {
		snprintf(err, err_len, "%s host is not an endpoint of any link in links.csv",
			 at < 0 ? "src" : "dst");
		return -EINVAL;
	}
	if (n_links == 0) {
		snprintf(err, err_len, "path has no links");
		return -EINVAL;
	}
	hops = calloc(n_links, sizeof(*hops));
	if (!hops)
		return -ENOMEM;
	for (size_t i = 0; i < n_links; i++) {
		const struct topo_link *l = &t->links[links[i]];
		if (l->a == (uint32_t)at) {
			hops[i].a_to_b = true;
			at = l->b;
		} else if (l->b == (uint32_t)at) {
			hops[i].a_to_b = false;
			at = l->a;
		} else {
			snprintf(err, err_len, "link '%s' does not touch '%s', where the path is",
				 l->name, t->nodes[at].name);
			free(hops);
			return -EINVAL;
		}
		hops[i].link = links[i];
	}
	if (at != end) {
		snprintf(err, err_len, "path ends at '%s', not at dst", t->nodes[at].name);
		free(hops);
		return -EINVAL;
	}
	paths = grow(t->paths, t->n_paths, sizeof(*paths));
	if (!paths) {
		free(hops);
		return -ENOMEM;
	}
	t->paths = paths;
	path = &paths[t->n_paths++];
	memcpy(path->src, src, 16);
	memcpy(path->dst, dst, 16);
	path->udp_sport = udp_sport;
	path->hops = hops;
	path->n_hops = n_links;
	return 0;
}

const struct topo_path *topology_find_path(const struct topology *t, const uint8_t src[16],
					   const uint8_t dst[16], uint16_t udp_sport)
{
	for (size_t i = 0; i < t->n_paths; i++) {
		const struct topo_path *p = &t->paths[i];
		if (p->udp_sport == udp_sport && !memcmp(p->src, src, 16) &&
		    !memcmp(p->dst, dst, 16))
			return p;
	}
	return NULL;
}

/* Depth-first walk down the BFS distance field, from src towards dst. */
struct ecmp_walk {
	const struct topology *t;
	const int *dist;
	uint32_t dst;
	size_t max_paths, n_paths, path_len;
	struct topo_hop *out, *cur;
};

static void ecmp_dfs(struct ecmp_walk *w, uint32_t node, size_t depth)
{
	if (w->n_paths >= w->max_paths)
		return;
	if (node == w->dst) {
		memcpy(w->out + w->n_paths * w->path_len, w->cur, w->path_len * sizeof(*w->cur));
		w->n_paths++;
		return;
	}
	for (size_t i = 0; i < w->t->n_links; i++) {
		const struct topo_link *l = &w->t->links[i];
		uint32_t next;
		if (l->a == node)
			next = l->b;
		else if (l->b == node)
			next = l->a;
		else
			continue;
		if (w->dist[next] != w->dist[node] - 1)
			continue;
		if (next != w->dst && w->t->nodes[next].is_host)
			continue;
		w->cur[depth].link = (uint32_t)i;
		w->cur[depth].a_to_b = l->a == node;
		ecmp_dfs(w, next, depth + 1);
	}
}

int topology_shortest_paths(const struct topology *t, uint32_t src_node, uint32_t dst_node,
			    size_t max_paths, struct topo_hop **hops, size_t *n_paths,
			    size_t *path_len)
{
	int *dist = NULL;
	uint32_t *queue = NULL;
	size_t head = 0, tail = 0;
	struct ecmp_walk w = { 0 };
	int err = -ENOMEM;

	*hops = NULL;
	*n_paths = *path_len = 0;
	if (src_node >= t->n_nodes || dst_node >= t->n_nodes || src_node == dst_node)
		return -ENOENT;
	dist = malloc(t->n_nodes * sizeof(*dist));
	queue = malloc(t->n_nodes * sizeof(*queue));
	if (!dist || !queue)
		goto cleanup;
	for (size_t i = 0; i < t->n_nodes; i++)
		dist[i] = -1;
	/* BFS from dst; other hosts are never transit nodes. */
	dist[dst_node] = 0;
	queue[tail++] = dst_node;
	while (head < tail) {
		uint32_t node = queue[head++];
		if (node != dst_node && t->nodes[node].is_host)
			continue;
		for (size_t i = 0; i < t->n_links; i++) {
			const struct topo_link *l = &t->links[i];
			uint32_t next;
			if (l->a == node)
				next = l->b;
			else if (l->b == node)
				next = l->a;
			else
				continue;
			if (dist[next] < 0) {
				dist[next] = dist[node] + 1;
				queue[tail++] = next;
			}
		}
	}
	err = -ENOENT;
	if (dist[src_node] <= 0)
		goto cleanup;
	err = -ENOMEM;
	w.t = t;
	w.dist = dist;
	w.dst = dst_node;
	w.max_paths = max_paths ? max_paths : 1;
	w.path_len = (size_t)dist[src_node];
	w.out = calloc(w.max_paths * w.path_len, sizeof(*w.out));
	w.cur = calloc(w.path_len, sizeof(*w.cur));
	if (!w.out || !w.cur)
		goto cleanup;
	ecmp_dfs(&w, src_node, 0);
	*hops = w.out;
	w.out = NULL;
	*n_paths = w.n_paths;
	*path_len = w.path_len;
	err = 0;
cleanup:
	free(w.out);
	free(w.cur);
	free(dist);
	free(queue);
	return err;
}

void topology_free(struct topology *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_paths; i++)
		free(t->paths[i].hops);
	free(t->paths);
	free(t->links);
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}
