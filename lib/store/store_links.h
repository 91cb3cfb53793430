/*
 * store_links.h: which links of the topology each flow crosses, for the database's link and
 * flow_link tables (docs/schema.md). Pure: walks the topology, calls back per row.
 */
#ifndef AGENTXDP_STORE_LINKS_H
#define AGENTXDP_STORE_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/localize/topology.h"
#include "lib/track/flow.h"

struct store_links_cb {
	/* One per link: its ends, kind ("host", "leaf-spine", ...), tiers (0 host, 1 leaf, 2 spine). */
	void (*link)(void *ctx, const char *name, const char *a, const char *b, const char *kind, int a_tier,
		     int b_tier);
	/* One per (flow, link): SHARE 1 on a recorded path, the fraction of ECMP paths otherwise. */
	void (*flow_link)(void *ctx, uint64_t qp_id, const char *link, double share, bool a_to_b);
	void *ctx;
};

/* 0, or -ENOMEM. Flows between hosts the topology does not know get no rows. */
int store_links_walk(const struct topology *t, const struct flow_stats *flows, size_t n,
		     const struct store_links_cb *cb);

#endif
