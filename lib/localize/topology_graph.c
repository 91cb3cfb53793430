/* topology_graph.c: building a topology and looking paths up in it (pure, no I/O). */
#include "lib/localize/topology.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/util.h"

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
	return addr_parse_lid(text, addr); /* native InfiniBand without GRH: "LID 18" */
}

static void *grow(void *arr, size_t n, size_t elem)
{
	size_t cap = n ? n * 2 : 8;

	/* Doubling growth: reallocate when n reaches a power of two (or is 0). The arrays
	 * have no capacity field, so util_ensure_mem() does not fit; the size is checked. */
	if (n && (n & (n - 1)))
		return arr;
	if (n > SIZE_MAX / 2 || cap > SIZE_MAX / elem)
		return NULL;
	return realloc(arr, cap * elem);
}

/* --- hash indexes: each look-up by name, address or path key in O(1) --- */

enum topo_key_kind { KEY_NODE_NAME, KEY_HOST_ADDR, KEY_LINK_NAME, KEY_PATH };

struct topo_key {
	const char *name;
	const uint8_t *addr, *src, *dst;
	uint16_t udp_sport;
};

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

#define FNV_OFFSET 0xcbf29ce484222325ull

static uint64_t key_hash(enum topo_key_kind kind, const struct topo_key *k)
{
	uint64_t h;

	switch (kind) {
	case KEY_NODE_NAME:
	case KEY_LINK_NAME:
		return fnv1a(k->name, strlen(k->name), FNV_OFFSET);
	case KEY_HOST_ADDR:
		return fnv1a(k->addr, 16, FNV_OFFSET);
	case KEY_PATH:
	default:
		h = fnv1a(k->src, 16, FNV_OFFSET);
		h = fnv1a(k->dst, 16, h);
		return fnv1a(&k->udp_sport, sizeof(k->udp_sport), h);
	}
}

/* The key of array entry i; false when the entry is not indexed (a switch, for hosts). */
static bool entry_key(const struct topology *t, enum topo_key_kind kind, size_t i,
		      struct topo_key *k)
{
	memset(k, 0, sizeof(*k));
	switch (kind) {
	case KEY_NODE_NAME:
		k->name = t->nodes[i].name;
		return true;
	case KEY_HOST_ADDR:
		k->addr = t->nodes[i].addr;
		return t->nodes[i].is_host;
	case KEY_LINK_NAME:
		k->name = t->links[i].name;
		return true;
	case KEY_PATH:
	default:
		k->src = t->paths[i].src;
		k->dst = t->paths[i].dst;
		k->udp_sport = t->paths[i].udp_sport;
		return true;
	}
}

static bool key_equal(enum topo_key_kind kind, const struct topo_key *a, const struct topo_key *b)
{
	switch (kind) {
	case KEY_NODE_NAME:
	case KEY_LINK_NAME:
		return !strcmp(a->name, b->name);
	case KEY_HOST_ADDR:
		return !memcmp(a->addr, b->addr, 16);
	case KEY_PATH:
	default:
		return a->udp_sport == b->udp_sport && !memcmp(a->src, b->src, 16) &&
		       !memcmp(a->dst, b->dst, 16);
	}
}

static void index_insert(struct topo_index *x, uint64_t h, size_t i)
{
	size_t pos = (size_t)h & (x->cap - 1);

	while (x->slots[pos])
		pos = (pos + 1) & (x->cap - 1);
	x->slots[pos] = (uint32_t)(i + 1);
	x->used++;
}

/* Index entry i, just appended to an array of i + 1 entries. Without memory, the index is
 * dropped for good and look-ups search linearly: slower, never wrong. */
static void index_add(const struct topology *t, struct topo_index *x, enum topo_key_kind kind,
		      size_t i)
{
	struct topo_key k;

	if (x->upto != i || i >= UINT32_MAX - 1)
		goto drop;
	x->upto = i + 1;
	if (!entry_key(t, kind, i, &k))
		return;
	if ((x->used + 1) * 2 > x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		uint32_t *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			goto drop;
		free(x->slots);
		x->slots = slots;
		x->cap = cap;
		x->used = 0;
		for (size_t j = 0; j < i; j++) {
			struct topo_key kj;
			if (entry_key(t, kind, j, &kj))
				index_insert(x, key_hash(kind, &kj), j);
		}
	}
	index_insert(x, key_hash(kind, &k), i);
	return;
drop:
	free(x->slots);
	memset(x, 0, sizeof(*x));
	x->upto = SIZE_MAX;
}

/* The entry with this key: its index, -1 when absent, -2 when the index does not cover the
 * array's n entries (the caller searches linearly). */
static long index_find(const struct topology *t, const struct topo_index *x,
		       enum topo_key_kind kind, const struct topo_key *key, size_t n)
{
	struct topo_key k;
	size_t pos;

	if (x->upto != n)
		return -2;
	if (!x->cap)
		return -1;
	for (pos = (size_t)key_hash(kind, key) & (x->cap - 1); x->slots[pos];
	     pos = (pos + 1) & (x->cap - 1)) {
		size_t i = x->slots[pos] - 1;
		if (entry_key(t, kind, i, &k) && key_equal(kind, &k, key))
			return (long)i;
	}
	return -1;
}

static long find_node(const struct topology *t, const char *name)
{
	struct topo_key key = { .name = name };
	long idx = index_find(t, &t->node_names, KEY_NODE_NAME, &key, t->n_nodes);

	if (idx != -2)
		return idx;
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
	t->n_nodes++;
	index_add(t, &t->node_names, KEY_NODE_NAME, t->n_nodes - 1);
	index_add(t, &t->host_addrs, KEY_HOST_ADDR, t->n_nodes - 1);
	return (long)t->n_nodes - 1;
}

long topology_link_by_name(const struct topology *t, const char *name)
{
	struct topo_key key = { .name = name };
	long idx = index_find(t, &t->link_names, KEY_LINK_NAME, &key, t->n_links);

	if (idx != -2)
		return idx;
	for (size_t i = 0; i < t->n_links; i++)
		if (!strcmp(t->links[i].name, name))
			return (long)i;
	return -1;
}

long topology_host(const struct topology *t, const uint8_t addr[16])
{
	struct topo_key key = { .addr = addr };
	long idx = index_find(t, &t->host_addrs, KEY_HOST_ADDR, &key, t->n_nodes);

	if (idx != -2)
		return idx;
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
	index_add(t, &t->link_names, KEY_LINK_NAME, t->n_links - 1);
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
	index_add(t, &t->path_keys, KEY_PATH, t->n_paths - 1);
	return 0;
}

const struct topo_path *topology_find_path(const struct topology *t, const uint8_t src[16],
					   const uint8_t dst[16], uint16_t udp_sport)
{
	struct topo_key key = { .src = src, .dst = dst, .udp_sport = udp_sport };
	long idx = index_find(t, &t->path_keys, KEY_PATH, &key, t->n_paths);

	if (idx != -2)
		return idx < 0 ? NULL : &t->paths[idx];
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
	free(t->node_names.slots);
	free(t->host_addrs.slots);
	free(t->link_names.slots);
	free(t->path_keys.slots);
	memset(t, 0, sizeof(*t));
}
