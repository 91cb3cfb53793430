/*
 * hop_groups.h: hosts grouped by leaf from the hop counts their packets show (IPv4 TTL /
 * IPv6 or GRH hop limit), with no topology given. Pure: no I/O.
 *
 * Every router on the way takes one off the TTL, so a packet seen at (or near) its
 * receiver carries its sender's initial TTL (64, 128 or 255 by OS) less the hops it made.
 * Hosts on one leaf reach each other in the fewest hops; hosts on different leaves go
 * over the spines. Joining the host pairs at the fewest hops (union-find) gives the
 * leaves; a longer pair inside one group means the hop counts cannot be read that way.
 */
#ifndef AGENTXDP_HOP_GROUPS_H
#define AGENTXDP_HOP_GROUPS_H

#include <stddef.h>
#include <stdint.h>

/* One observation: a packet (or the lowest TTL of a flow) between two hosts, either order. */
struct hop_pair {
	uint8_t a[16], b[16];		/* addresses (IPv4 v4-mapped, as in struct roce_pkt) */
	uint8_t ttl;			/* TTL / hop limit seen, 0 none */
};

enum hop_groups_status {
	HOP_GROUPS_OK = 0,
	HOP_GROUPS_NO_TTL,		/* no observation shows a hop (no TTL, or only as sent) */
	HOP_GROUPS_TOO_FEW,		/* fewer than HOP_GROUPS_MIN_PAIRS host pairs with hops */
	HOP_GROUPS_ALL_EQUAL,		/* every pair equally far apart: nothing to group by */
	HOP_GROUPS_INCONSISTENT,	/* a pair of one group is farther apart than the fewest */
};

#define HOP_GROUPS_MIN_PAIRS 3

struct hop_groups {
	enum hop_groups_status status;
	size_t n_hosts;			/* distinct hosts of the pairs with hops */
	uint8_t (*hosts)[16];		/* sorted by address */
	uint32_t *group;		/* per host: 0 .. n_groups-1, numbered by first host */
	uint32_t n_groups;		/* 0 unless HOP_GROUPS_OK */
	size_t n_pairs;			/* distinct host pairs with hops */
	uint32_t min_hops, max_hops;	/* over those pairs (the most each pair showed) */
	uint32_t (*far)[2];		/* groups a host pair shows farther apart than the
					   fewest hops (on two leaves): sorted, distinct */
	size_t n_far;
};

/* Hops a packet made from a TTL seen: the next initial value (64, 128, 255) less it. */
uint32_t hop_count(uint8_t ttl);

/*
 * Groups the hosts of pairs[0..n) (g->status says whether it could; then n_groups is 0).
 * Returns 0, or -ENOMEM (g is then empty). Free with hop_groups_free().
 */
int hop_groups_build(const struct hop_pair *pairs, size_t n, struct hop_groups *g);
void hop_groups_free(struct hop_groups *g);

/* The group of addr, or -1 when addr is in no pair with hops or grouping was refused. */
long hop_groups_find(const struct hop_groups *g, const uint8_t *addr);
uint32_t hop_groups_size(const struct hop_groups *g, uint32_t group);

/*
 * Which side of the host pairs pairs[0..n) (the flows a fabric fault hurt; ttl unused) one
 * leaf can hold. Their groups are split in two so that every pair runs from side 1 to
 * side 2: a cable between a leaf and a spine carries only flows that leave or enter that
 * leaf. side[group] (n_groups of them) gets 0 (in no pair, or a lone host on one pair
 * only: too little to place), 1 or 2. Returns which sides can be one leaf as far as hop
 * counts tell (no two of their groups known to be farther apart): 1, 2 or 3 for both; 0
 * when neither can, or the pairs do not split that way (a host not grouped, a pair inside
 * one group, an odd cycle, pairs in two unlinked sets); -ENOMEM.
 */
int hop_groups_sides(const struct hop_groups *g, const struct hop_pair *pairs, size_t n,
		     uint8_t *side);

/*
 * The members of a group as text, runs of consecutive IPv4 addresses shortened
 * ("10.0.0.1..4, 10.0.0.9"); ", ..." ends it when len is too short for all of them.
 */
void hop_groups_members(const struct hop_groups *g, uint32_t group, char *buf, size_t len);
/* The same for the groups with side[group] == value (hop_groups_sides()). */
void hop_groups_side_members(const struct hop_groups *g, const uint8_t *side, uint8_t value,
			     char *buf, size_t len);

/* Why grouping was refused (or "grouped by hop count"), for the evidence. */
const char *hop_groups_status_text(enum hop_groups_status status);

#endif
