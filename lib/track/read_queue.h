/*
 * read_queue.h: how much of a READ's wait for its first response the responder's link spent
 * sending other READs' responses (issue #17, a READ incast seen from each host).
 *
 * RC answers a READ with its own responses, and a responder sends them on one link: a
 * request that arrives behind others waits while their responses go out (an incast
 * target's wait is its queue), where a slow responder waits with its link idle. The
 * tracker keeps one record per READ timed to its first and last response (Karn); at the
 * snapshot the records of one responder at one vantage (its address and the trace), across
 * every connection, give for each READ the time within its wait that another READ's
 * response message (first to last response packet) was on the link. Connections of one
 * responder go to different shards (qp_shards keys by host pair), so the records are
 * joined after the shards end: the figures do not depend on -j.
 */
#ifndef AGENTXDP_READ_QUEUE_H
#define AGENTXDP_READ_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/track/flow.h"

/* One READ, as its requester flow saw it at one vantage. */
struct read_msg {
	uint64_t arr_ns;	/* the request (its first transmission at this vantage) */
	uint64_t first_ns;	/* its first response */
	uint64_t last_ns;	/* its last response */
	uint64_t flow_id;	/* the requester flow (the tracker's id until joined) */
};

/* A READ record with where it adds up: the responder, the vantage, its flow's statistics. */
struct read_item {
	struct read_msg m;
	const uint8_t *responder;	/* 16 bytes */
	uint32_t vantage;
	struct flow_stats *st;
};

/* Records kept per tracker: 32 bytes each, the rest of a run's READs are not joined. */
#define READ_MSGS_MAX (1u << 20)

/*
 * Fill read_waits, read_wait_us and read_wait_busy_us of every items[i].st from the items
 * (the fields zeroed first). Sorts items. 0, or -ENOMEM.
 */
int read_queue_fill(struct read_item *items, size_t n);

#endif
