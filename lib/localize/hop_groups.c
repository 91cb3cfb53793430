/* hop_groups.c: hosts grouped by leaf from the TTL / hop limit their packets arrive with. */
#include "lib/localize/hop_groups.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/util.h"

uint32_t hop_count(uint8_t ttl)
{
	/* The initial TTLs systems use (Linux 64, Windows 128, network gear 255): a packet
	 * with 61 left most likely started at 64. 0 is "none", not a packet at its end. */
	if (!ttl)
		return 0;
	return (ttl <= 64 ? 64u : ttl <= 128 ? 128u : 255u) - ttl;
}

static int addr_cmp(const void *x, const void *y)
{
	return memcmp(x, y, 16);
}

/* A host pair with its hop count, hosts by index (a < b). */
struct pair_hops {
	uint32_t a, b, hops;
};

static int pair_cmp(const void *x, const void *y)
{
	const struct pair_hops *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return 0;
}

static long host_index(const struct hop_groups *g, const uint8_t *addr)
{
	const uint8_t(*h)[16] = bsearch(addr, g->hosts, g->n_hosts, 16, addr_cmp);

	return h ? (long)(h - (const uint8_t(*)[16])g->hosts) : -1;
}

static uint32_t uf_root(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]]; /* path halving */
		x = parent[x];
	}
	return x;
}

/* The distinct hosts of the pairs that show hops, sorted; g->n_hosts of them. */
static int collect_hosts(const struct hop_pair *pairs, size_t n, struct hop_groups *g)
{
	size_t k = 0;

	g->hosts = malloc((n ? 2 * n : 1) * sizeof(*g->hosts));
	if (!g->hosts)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!hop_count(pairs[i].ttl) || !memcmp(pairs[i].a, pairs[i].b, 16))
			continue;
		memcpy(g->hosts[k++], pairs[i].a, 16);
		memcpy(g->hosts[k++], pairs[i].b, 16);
	}
	qsort(g->hosts, k, 16, addr_cmp);
	for (size_t i = 0; i < k; i++)
		if (!g->n_hosts || memcmp(g->hosts[g->n_hosts - 1], g->hosts[i], 16))
			memcpy(g->hosts[g->n_hosts++], g->hosts[i], 16);
	return 0;
}

/*
 * The distinct host pairs with the most hops each showed: a capture nearer the sender
 * (a mirror on its leaf, the sender's own host) sees fewer hops than one at the receiver.
 * Returns how many, in *out (malloc'ed), or -ENOMEM.
 */
static long collect_pairs(const struct hop_pair *pairs, size_t n, const struct hop_groups *g,
			  struct pair_hops **out)
{
	struct pair_hops *p = malloc((n ? n : 1) * sizeof(*p));
	size_t k = 0, m = 0;

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t hops = hop_count(pairs[i].ttl);
		long a, b;

		if (!hops || !memcmp(pairs[i].a, pairs[i].b, 16))
			continue;
		a = host_index(g, pairs[i].a);
		b = host_index(g, pairs[i].b);
		p[k++] = (struct pair_hops){ .a = (uint32_t)(a < b ? a : b),
					     .b = (uint32_t)(a < b ? b : a), .hops = hops };
	}
	qsort(p, k, sizeof(*p), pair_cmp);
	for (size_t i = 0; i < k; i++) {
		if (m && !pair_cmp(&p[m - 1], &p[i])) {
			if (p[i].hops > p[m - 1].hops)
				p[m - 1].hops = p[i].hops;
			continue;
		}
		p[m++] = p[i];
	}
	*out = p;
	return (long)m;
}

static int far_cmp(const void *x, const void *y)
{
	const uint32_t *p = x, *q = y;

	return p[0] != q[0] ? (p[0] < q[0] ? -1 : 1) : p[1] != q[1] ? (p[1] < q[1] ? -1 : 1) : 0;
}

/* The group pairs of the pairs farther apart than the fewest hops, sorted and distinct. */
static int collect_far(const struct pair_hops *p, size_t m, struct hop_groups *g)
{
	size_t k = 0;

	g->far = malloc((m ? m : 1) * sizeof(*g->far));
	if (!g->far)
		return -ENOMEM;
	for (size_t i = 0; i < m; i++) {
		uint32_t a = g->group[p[i].a], b = g->group[p[i].b];

		if (p[i].hops == g->min_hops)
			continue;
		g->far[k][0] = a < b ? a : b;
		g->far[k++][1] = a < b ? b : a;
	}
	qsort(g->far, k, sizeof(*g->far), far_cmp);
	for (size_t i = 0; i < k; i++)
		if (!g->n_far || far_cmp(g->far[g->n_far - 1], g->far[i]))
			memcpy(g->far[g->n_far++], g->far[i], sizeof(*g->far));
	return 0;
}

/*
 * Union-find over the pairs at the fewest hops, into g->group (n_hosts of them); groups
 * numbered in the order of their first host. Sets g->status; returns 0 or -ENOMEM.
 */
static int join_nearest(const struct pair_hops *p, size_t m, struct hop_groups *g)
{
	uint32_t *parent = malloc(g->n_hosts * sizeof(*parent));

	g->group = malloc(g->n_hosts * sizeof(*g->group));
	if (!parent || !g->group) {
		free(parent);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->n_hosts; i++) {
		parent[i] = (uint32_t)i;
		g->group[i] = UINT32_MAX;
	}
	for (size_t i = 0; i < m; i++)
		if (p[i].hops == g->min_hops)
			parent[uf_root(parent, p[i].a)] = uf_root(parent, p[i].b);
	g->status = HOP_GROUPS_OK;
	for (size_t i = 0; i < m; i++)
		if (p[i].hops > g->min_hops && uf_root(parent, p[i].a) == uf_root(parent, p[i].b))
			g->status = HOP_GROUPS_INCONSISTENT;
	for (size_t i = 0; i < g->n_hosts; i++)
		parent[i] = uf_root(parent, (uint32_t)i);
	/* A root's entry holds its group's number, given when its first host is met; only
	 * roots' entries are read, so a host's own can be written as it goes. */
	for (size_t i = 0; i < g->n_hosts && g->status == HOP_GROUPS_OK; i++) {
		uint32_t r = parent[i];

		if (g->group[r] == UINT32_MAX)
			g->group[r] = g->n_groups++;
		g->group[i] = g->group[r];
	}
	free(parent);
	return g->status == HOP_GROUPS_OK ? collect_far(p, m, g) : 0;
}

int hop_groups_build(const struct hop_pair *pairs, size_t n, struct hop_groups *g)
{
	struct pair_hops *p = NULL;
	long m;
	int err = -ENOMEM;

	memset(g, 0, sizeof(*g));
	if (collect_hosts(pairs, n, g))
		goto fail;
	m = collect_pairs(pairs, n, g, &p);
	if (m < 0)
		goto fail;
	g->n_pairs = (size_t)m;
	g->min_hops = UINT32_MAX;
	for (long i = 0; i < m; i++) {
		if (p[i].hops < g->min_hops)
			g->min_hops = p[i].hops;
		if (p[i].hops > g->max_hops)
			g->max_hops = p[i].hops;
	}
	if (!m) {
		g->min_hops = 0;
		g->status = HOP_GROUPS_NO_TTL;
	} else if (m < HOP_GROUPS_MIN_PAIRS) {
		g->status = HOP_GROUPS_TOO_FEW;
	} else if (g->min_hops == g->max_hops) {
		g->status = HOP_GROUPS_ALL_EQUAL;
	} else {
		if (join_nearest(p, (size_t)m, g))
			goto fail;
	}
	if (g->status != HOP_GROUPS_OK)
		g->n_groups = 0;
	free(p);
	return 0;
fail:
	free(p);
	hop_groups_free(g);
	return err;
}

void hop_groups_free(struct hop_groups *g)
{
	free(g->hosts);
	free(g->group);
	free(g->far);
	memset(g, 0, sizeof(*g));
}

long hop_groups_find(const struct hop_groups *g, const uint8_t *addr)
{
	long i;

	if (g->status != HOP_GROUPS_OK)
		return -1;
	i = host_index(g, addr);
	return i < 0 ? -1 : (long)g->group[i];
}

uint32_t hop_groups_size(const struct hop_groups *g, uint32_t group)
{
	uint32_t n = 0;

	for (size_t i = 0; g->status == HOP_GROUPS_OK && i < g->n_hosts; i++)
		n += g->group[i] == group;
	return n;
}

/* Side 1 to the first pair's first group, then the other side to each neighbour. */
static bool two_color(const long (*ends)[2], size_t n, uint8_t *side)
{
	bool changed = true;

	side[ends[0][0]] = 1;
	while (changed) {
		changed = false;
		for (size_t i = 0; i < n; i++) {
			uint8_t *s0 = &side[ends[i][0]], *s1 = &side[ends[i][1]];

			if (*s0 && *s0 == *s1)
				return false; /* an odd cycle */
			if (*s0 && !*s1)
				*s1 = (uint8_t)(3 - *s0), changed = true;
			else if (*s1 && !*s0)
				*s0 = (uint8_t)(3 - *s1), changed = true;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!side[ends[i][0]])
			return false; /* not linked to the first pair: the split is not one */
	return true;
}

/*
 * A host alone in its group and on one pair only is too little to place: one connection
 * slow for its own reasons would put another leaf's host beside the cable's (a 32-host
 * fabric named a fifth host so). Its side becomes 0. Returns the sides left with a group
 * (1 | 2), or -ENOMEM.
 */
static int place_weak(const struct hop_groups *g, const long (*ends)[2], size_t n, uint8_t *side)
{
	uint32_t *hosts = calloc(2 * (size_t)g->n_groups, sizeof(*hosts)), *pairs;
	int left = 0;

	if (!hosts)
		return -ENOMEM;
	pairs = hosts + g->n_groups;
	for (size_t i = 0; i < g->n_hosts; i++)
		hosts[g->group[i]]++;
	for (size_t i = 0; i < n; i++)
		pairs[ends[i][0]]++, pairs[ends[i][1]]++;
	for (uint32_t grp = 0; grp < g->n_groups; grp++) {
		if (hosts[grp] == 1 && pairs[grp] == 1)
			side[grp] = 0;
		left |= side[grp];
	}
	free(hosts);
	return left;
}

int hop_groups_sides(const struct hop_groups *g, const struct hop_pair *pairs, size_t n,
		     uint8_t *side)
{
	long(*ends)[2] = malloc((n ? n : 1) * sizeof(*ends));
	int mask = 0;

	if (!ends)
		return -ENOMEM;
	memset(side, 0, g->n_groups);
	for (size_t i = 0; i < n; i++) {
		ends[i][0] = hop_groups_find(g, pairs[i].a);
		ends[i][1] = hop_groups_find(g, pairs[i].b);
		if (ends[i][0] < 0 || ends[i][1] < 0 || ends[i][0] == ends[i][1])
			goto out; /* not grouped, or inside one leaf: no cable between leaves */
	}
	if (!n || !two_color(ends, n, side)) {
		memset(side, 0, g->n_groups);
		goto out;
	}
	mask = place_weak(g, ends, n, side);
	for (size_t i = 0; i < g->n_far && mask > 0; i++)
		if (side[g->far[i][0]] && side[g->far[i][0]] == side[g->far[i][1]])
			mask &= ~(int)side[g->far[i][0]]; /* two leaves on that side */
out:
	free(ends);
	return mask;
}

/* Does b follow a as the next IPv4 address of the same /24? */
static bool v4_next(const uint8_t *a, const uint8_t *b)
{
	return addr_is_v4mapped(a) && addr_is_v4mapped(b) && !memcmp(a, b, 15) && b[15] == a[15] + 1;
}

/* Host i's group, or its group's side when side is given. */
static uint32_t set_of(const struct hop_groups *g, const uint8_t *side, size_t i)
{
	return side ? side[g->group[i]] : g->group[i];
}

/* Members of the groups grp with (side ? side[grp] : grp) == value, as text. */
static void members_where(const struct hop_groups *g, const uint8_t *side, uint32_t value,
			  char *buf, size_t len)
{
	size_t used = 0, i = 0;

	if (!len)
		return;
	buf[0] = 0;
	while (g->status == HOP_GROUPS_OK && i < g->n_hosts) {
		char one[INET6_ADDRSTRLEN + 8];
		size_t j = i, next, need;

		if (set_of(g, side, i) != value) {
			i++;
			continue;
		}
		/* A run of consecutive IPv4 addresses, all of this group: "10.0.0.1..4". */
		while (j + 1 < g->n_hosts && set_of(g, side, j + 1) == value &&
		       v4_next(g->hosts[j], g->hosts[j + 1]))
			j++;
		addr_str(g->hosts[i], one, sizeof(one));
		if (j > i)
			snprintf(one + strlen(one), sizeof(one) - strlen(one), "..%u",
				 g->hosts[j][15]);
		next = j + 1;
		need = strlen(one) + (used ? 2 : 0);
		if (used + need + 5 >= len) {
			const char *cut = used + 5 < len ? ", ..." : used ? "" : "...";

			snprintf(buf + used, len - used, "%s", cut);
			return;
		}
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", one);
		i = next;
	}
}

void hop_groups_members(const struct hop_groups *g, uint32_t group, char *buf, size_t len)
{
	members_where(g, NULL, group, buf, len);
}

void hop_groups_side_members(const struct hop_groups *g, const uint8_t *side, uint8_t value,
			     char *buf, size_t len)
{
	members_where(g, side, value, buf, len);
}

const char *hop_groups_status_text(enum hop_groups_status status)
{
	static const char *const text[] = {
		[HOP_GROUPS_OK] = "grouped by hop count",
		[HOP_GROUPS_NO_TTL] = "no TTL or hop limit that fell on the way",
		[HOP_GROUPS_TOO_FEW] = "too few host pairs with a hop count",
		[HOP_GROUPS_ALL_EQUAL] = "every host pair is the same number of hops apart",
		[HOP_GROUPS_INCONSISTENT] =
			"hop counts disagree: hosts of one leaf farther apart elsewhere",
	};
	return (size_t)status < ARRAY_SIZE(text) ? text[status] : "?";
}
