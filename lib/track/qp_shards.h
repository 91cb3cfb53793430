/*
 * qp_shards.h: the per-QP tracker on N threads (agentxdp-analyze -j N), with the results of
 * one tracker: the same events in the same order, the same flow ids, the same statistics.
 *
 * The caller's thread decodes and hands packets to qp_shards_push(). A packet goes to the
 * shard of its unordered address pair (IPs, or LIDs/GIDs for InfiniBand), so both directions
 * of a QP, every vantage of it and everything the tracker relates across flows (pairing by
 * PSN, CM, DETH, CNPs, the TTL comparison) live in one shard's own qp_tracker. Packets go
 * through single-producer single-consumer rings (C11 atomics; a thread that finds its ring
 * empty or full sleeps on a futex after a short spin).
 *
 * Each shard records its tracker's events tagged with the global number of the packet that
 * caused them; a merge thread replays them into cfg->sink in packet order (events of one
 * packet keep their order), holding an event until every shard has passed its packet, and
 * numbers flows in the order of their first packet, as one tracker does. The events
 * qp_tracker_finish() emits come after, in flow id order. So the sink sees exactly the
 * calls one tracker would make, from the merge thread. Without a sink there is no merge
 * thread: each shard records its new flows' first packet numbers and the flows are numbered
 * at finish.
 *
 * One known limit: the tracker remembers the last 256 CM REQs awaiting their REP per tracker;
 * with more than 256 CM REQs in a run a REP could find, per shard, a REQ that one tracker had
 * already forgotten. qp_shards_cm_reqs() says how many the run held.
 *
 * n == 1 runs one tracker on the caller's thread (in batches, no thread, no copy): today's path.
 *
 * Lanes (qp_shards_new_lanes()): no reader thread and no copy. The caller runs one thread per
 * shard ("lane"), each reading every frame of the run itself, in the same order, and numbering
 * them alike (seq, from 1, increasing). A decoded RoCE packet goes to qp_lane_push(), which
 * keeps it when it is its shard's and tracks its own in batches; a frame the lane knows to be
 * another shard's without decoding it (qp_shard_of_addrs() on its addresses), or no RoCE
 * packet, goes to qp_lane_pass(). The events are merged as above, by seq. Timestamps going
 * back are counted by every lane over every packet it was told the time of; lane 0's count
 * is the run's unless the caller sets it; packets and CM REQs are each lane's own, summed.
 */
#ifndef AGENTXDP_QP_SHARDS_H
#define AGENTXDP_QP_SHARDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/track/qp_track.h"

#define QP_SHARDS_MAX 256

struct qp_shards;

/* n trackers (1 to QP_SHARDS_MAX) with cfg (copied); NULL with errno set. */
struct qp_shards *qp_shards_new(const struct qp_tracker_cfg *cfg, unsigned n);
/*
 * Packets in trace order: decode into qp_shards_slot() (n == 1: the tracker's own batch,
 * no copy), then qp_shards_push() it. 0, or -ENOMEM (a tracker ran out: stop pushing; what
 * was tracked is still finished).
 */
struct roce_pkt *qp_shards_slot(struct qp_shards *s);
int qp_shards_push(struct qp_shards *s, uint32_t vantage);
/*
 * n lanes (1 to QP_SHARDS_MAX), and the merge thread when cfg has a sink; NULL with errno set.
 * Lane j is fed by one thread only: qp_lane_slot(), then qp_lane_push() for every packet
 * (0, or -ENOMEM: stop), then qp_lane_end() from the same thread. Every lane must be given
 * the same packets in the same order. qp_shards_finish() after every lane's thread ended it.
 */
struct qp_shards *qp_shards_new_lanes(const struct qp_tracker_cfg *cfg, unsigned n);
struct roce_pkt *qp_lane_slot(struct qp_shards *s, unsigned lane);
int qp_lane_push(struct qp_shards *s, unsigned lane, uint32_t vantage, uint64_t seq);
/* Frame seq is not this lane's to track: a RoCE packet at *ts_ns, or (NULL) no RoCE packet. */
void qp_lane_pass(struct qp_shards *s, unsigned lane, uint64_t seq, const uint64_t *ts_ns);
void qp_lane_end(struct qp_shards *s, unsigned lane);
/* Lanes: the run's count of timestamps going back, when lane 0's could be wrong. */
void qp_shards_set_ts_backwards(struct qp_shards *s, uint64_t n);
/* End of input: every event delivered to the sink, windows closed. 0, or -ENOMEM. */
int qp_shards_finish(struct qp_shards *s);
/* After finish: every flow's statistics by flow id, as qp_tracker_snapshot(). */
long qp_shards_snapshot(struct qp_shards *s, const struct flow_stats **out);
/* After finish (n == 1: any time): the totals of one tracker over the same packets. */
const struct qp_tracker_totals *qp_shards_totals(struct qp_shards *s);
/* Packets given to qp_shards_push() so far (any time, from the caller's thread; lanes: their
 * own packets, once every lane ended). */
uint64_t qp_shards_packets(const struct qp_shards *s);
/* CM REQ packets seen (see the known limit above). */
uint64_t qp_shards_cm_reqs(const struct qp_shards *s);
unsigned qp_shards_count(const struct qp_shards *s);
/* After finish: the CPU time of the merge thread (0: none ran), for -vv. */
double qp_shards_merge_cpu_s(const struct qp_shards *s);
void qp_shards_free(struct qp_shards *s);

/*
 * The same for IPv4 addresses (4 bytes each; qp_shard_of_addrs() takes ::ffff:a.b.c.d here):
 * inline, since a lane keys every frame it skips. The unordered pair of the two addresses as
 * loaded (any byte order: both directions load alike), one multiply, its top 32 bits scaled
 * to n. The smaller of the two orders without a branch: the direction of consecutive frames
 * is a coin toss, and a mispredicted branch cost a lane more than the rest of the keying.
 */
static inline unsigned qp_shard_of_v4(const uint8_t src[4], const uint8_t dst[4], unsigned n)
{
	uint32_t a, b;
	uint64_t x, y;

	memcpy(&a, src, 4);
	memcpy(&b, dst, 4);
	x = (uint64_t)a << 32 | b; /* x < y exactly when a < b */
	y = (uint64_t)b << 32 | a;
	x = (x < y ? x : y) * 0x9e3779b97f4a7c15ull;
	return (unsigned)(((x >> 32) * n) >> 32);
}

/* Not IPv4: both addresses folded (out of line; the rare case). */
unsigned qp_shard_of_folded(const uint8_t src[16], const uint8_t dst[16], unsigned n);

/* Whether a 16-byte address is ::ffff:a.b.c.d, as the decoder gives IPv4 (two loads). */
static inline int qp_addr_v4mapped(const uint8_t a[16])
{
	static const uint8_t ffff[4] = { 0, 0, 0xff, 0xff };
	uint64_t hi;
	uint32_t mid, m;

	memcpy(&hi, a, 8);
	memcpy(&mid, a + 8, 4);
	memcpy(&m, ffff, 4);
	return !hi && mid == m;
}

/* The same from the addresses (IPv4 as ::ffff:a.b.c.d, as the decoder gives them). */
static inline unsigned qp_shard_of_addrs(const uint8_t src[16], const uint8_t dst[16], unsigned n)
{
	/* IPv4 as a lane keys it from the frame: qp_shard_of_v4() on the last 4 bytes. */
	if (qp_addr_v4mapped(src) && qp_addr_v4mapped(dst))
		return qp_shard_of_v4(src + 12, dst + 12, n);
	return qp_shard_of_folded(src, dst, n);
}

/* The shard (0..n-1) of a packet: the same for both directions and every vantage. Inline:
 * a lane keys each of its packets. */
static inline unsigned qp_shard_of(const struct roce_pkt *pkt, unsigned n)
{
	return qp_shard_of_addrs(pkt->src_ip, pkt->dst_ip, n);
}

#endif
