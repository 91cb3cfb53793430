/*
 * qp_track.h: per-queue-pair reconstruction (request/ACK timelines, latency, retransmissions,
 * NAKs, RNR, CNPs, ECN) from decoded RoCE packets. Pure computation, no I/O: the offline
 * analyzer and the live agent drive the same code, packet by packet.
 *
 * Use:
 *	struct qp_tracker_cfg cfg;
 *	qp_tracker_cfg_default(&cfg);
 *	cfg.sink = &my_sink;			// optional: rows as they happen
 *	struct qp_tracker *t = qp_tracker_new(&cfg);
 *	for each decoded packet:  qp_tracker_add(t, &pkt, vantage);
 *	qp_tracker_finish(t);			// flushes windows; stats become final
 *	n = qp_tracker_snapshot(t, &stats);	// any time, also before finish (live agent)
 *	...
 *	qp_tracker_free(t);
 *
 * Definitions (shared with agentxdp-synth's ground truth, docs/schema.md has the long form):
 *  - A flow is one direction of a QP as seen at one vantage point (input trace):
 *    (vantage, source IP, destination IP, destination QPN).
 *  - Requester flow R (carries requests) pairs with responder flow B in the other direction
 *    (its ACKs, NAKs, READ responses are addressed to R's QPN). Pairing: the CM REQ/REP
 *    exchange when present (exact), the UD DETH source QPN (exact), otherwise PSN spaces
 *    (the response PSN falls in exactly one candidate's outstanding window).
 *  - ACK latency: ACK time minus the first transmission of the PSN the ACK (ACKNOWLEDGE or
 *    ATOMIC ACKNOWLEDGE with AETH type ACK) names, taken only for the first ACK packet naming
 *    that PSN and only when the PSN was sent exactly once before it (Karn's rule).
 *  - Percentiles are nearest-rank: the sample at rank ceil(q*n) of the sorted samples.
 *  - Counters attributed to the requester flow they slow down: retransmitted_packets,
 *    naks_psn_seq, naks_other, rnr_naks, timeouts, cnps. ecn_ce counts the flow's own
 *    CE-marked packets. packets/bytes count a flow's own packets.
 *  - A retransmission is a request whose PSN was already sent on the flow. Its cause: "nak"
 *    (a NAK PSN sequence error named a PSN at or before it), "rnr" (an RNR NAK did),
 *    "timeout" (no NAK; the episode restarts at the oldest unacknowledged PSN), "response_gap"
 *    (a READ or atomic sent again after a later response showed its response missing), "unknown".
 *    A go-back-N episode (consecutive PSNs) has one cause; `timeouts` counts episodes.
 *    Seen nearer the responder (requests arrive with a lower IP TTL than the other direction
 *    leaves with), a restart with no NAK is "unknown": its trigger may be lost after the capture.
 *  - A copy of a request seen again within cfg.dup_window_ns with nothing in between that
 *    asked for it (a mirror that duplicates) is a duplicate, not a retransmission.
 *
 * Memory (per flow): struct qp_flow (840 bytes) + its snapshot (struct flow_stats, 440) +
 * in-memory windows up to cfg.max_windows (80 bytes each, array doubling from 1); for flows
 * with latency samples, 7 sample sets (392 bytes, allocated at the first sample) holding
 * exact samples (4 bytes each) up to cfg.exact_samples per kind, then a log-linear histogram
 * (6.6 KB, <1% relative error), and the current window's samples (array growing 16 -> 1024);
 * for flows that send requests an outstanding-PSN ring (32 bytes per slot plus 2 bits beside
 * it, 16 slots growing to cfg.max_outstanding). Per tracker, 32 bytes per READ timed to its
 * first and last response, up to READ_MSGS_MAX (read_queue.h; beyond it, with -j N, which
 * READs are kept depends on the shards). Nothing grows with trace length beyond those caps.
 *
 * Work per packet does not depend on PSN distances (issue #22: crafted ACKs 65536 PSNs apart
 * cost 65536 steps each before). An ACK or READ lookup visits only the outstanding slots in
 * its range (two bitmaps beside the ring, plus max_outstanding / 4096 summary words per
 * lookup, 16 by default); each visit acknowledges a slot or drops it from the outstanding set
 * (it held a PSN a ring's length or more away), or ends the lookup, and a packet makes at
 * most 3 lookups. So the slots visited stay under 3 * packets + slots created, and a slot is
 * created per request packet, plus one per PSN a READ consumes (up to max_outstanding per
 * READ request: the one cost still set by the request, see read_span_set()).
 * qp_tracker_totals.psn_slots_visited counts them.
 */
#ifndef AGENTXDP_QP_TRACK_H
#define AGENTXDP_QP_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/track/flow.h"
#include "lib/decode/roce_pkt.h"
#include "lib/track/latency_set.h"	/* percentile_nearest_rank_u32() */

enum qp_sample_kind {
	QP_SAMPLE_ACK = 0,		/* ACK time - first transmission of the PSN it names */
	QP_SAMPLE_READ_FIRST = 1,	/* READ request -> first response */
	QP_SAMPLE_READ_LAST = 2,	/* READ request -> last response */
	QP_SAMPLE_ATOMIC = 3,		/* atomic request -> atomic ACK */
	QP_SAMPLE_COMPLETION = 4,	/* first packet of a message -> ACK covering its last */
	QP_SAMPLE_NAK_TO_RETX = 5,	/* NAK (or RNR NAK) -> the retransmission it asked for */
	QP_SAMPLE_TIMEOUT_GAP = 6,	/* silence before a timeout retransmission */
	QP_SAMPLE_KINDS = 7,
};

enum qp_retx_cause {
	QP_RETX_NAK = 0,
	QP_RETX_RNR = 1,
	QP_RETX_TIMEOUT = 2,
	QP_RETX_UNKNOWN = 3,
	QP_RETX_READ_GAP = 4,	/* READ/atomic sent again: a later response showed its response lost */
};

enum qp_nak_kind {
	QP_NAK_PSN_SEQ = 0,
	QP_NAK_RNR = 1,
	QP_NAK_OTHER = 2,
};

struct qp_latency_sample {
	uint64_t flow_id;	/* the requester flow */
	uint64_t ts_ns;		/* when the sample completed (ACK/response time) */
	uint64_t latency_ns;
	uint32_t psn;
	uint8_t kind;		/* enum qp_sample_kind */
};

struct qp_retx_event {
	uint64_t flow_id;	/* the requester flow that retransmitted */
	uint64_t ts_ns;
	uint64_t first_tx_ns;	/* first transmission of this PSN, 0 if not seen */
	uint64_t prev_tx_ns;	/* previous transmission, 0 if not seen */
	uint64_t trigger_ns;	/* NAK time (nak/rnr) or start of the silence (timeout), 0 */
	uint32_t psn;
	uint32_t tx_count;	/* transmissions so far including this one */
	uint8_t cause;		/* enum qp_retx_cause */
	uint8_t opcode;
	uint8_t run_start;	/* the first resend of its go-back-N run (one cause, PSNs onward) */
};

struct qp_nak_event {
	uint64_t flow_id;	/* requester flow it concerns, 0 if not paired */
	uint64_t responder_flow_id; /* the flow that carried the NAK */
	uint64_t ts_ns;
	uint64_t rnr_timer_ns;	/* RNR NAK: the wait the responder asked for */
	uint32_t psn;
	uint32_t msn;
	uint8_t syndrome;
	uint8_t kind;		/* enum qp_nak_kind */
};

struct qp_cnp_event {
	uint64_t flow_id;	/* requester flow it slows down, 0 if not known (yet) */
	uint64_t cnp_flow_id;	/* the flow that carried the CNP */
	uint64_t ts_ns;
};

/*
 * Rows as they happen. Every callback is optional. Pointers are valid during the call only.
 * Called from inside qp_tracker_add()/qp_tracker_finish(); must not call back into the tracker.
 */
struct qp_event_sink {
	void *ctx;
	void (*latency)(void *ctx, const struct qp_latency_sample *s);
	void (*retransmission)(void *ctx, const struct qp_retx_event *e);
	void (*nak)(void *ctx, const struct qp_nak_event *e);
	void (*cnp)(void *ctx, const struct qp_cnp_event *e);
	/* A time window closed (emitted in order per flow; flows interleave). */
	void (*window)(void *ctx, uint64_t flow_id, const struct flow_window *w);
	/* A flow got its id: its first packet, before that packet's other events (qp_shards). */
	void (*flow)(void *ctx, uint64_t flow_id);
};

struct qp_tracker_cfg {
	uint64_t window_ns;		/* throughput window, default 1 s */
	uint64_t dup_window_ns;		/* a repeat within this is a mirror duplicate; default 0: off */
	uint32_t max_outstanding;	/* PSN ring slots per flow, power of 2, default 65536 */
	uint32_t exact_samples;		/* exact latency samples per flow and kind, default 65536 */
	uint32_t max_windows;		/* windows kept in memory per flow, default 86400 */
	bool split_vantage;		/* flows keyed by vantage too (default true) */
	const struct qp_event_sink *sink;
};

/* Per-tracker totals. */
struct qp_tracker_totals {
	uint64_t packets;
	uint64_t bytes;
	uint64_t flows;
	uint64_t paired_flows;
	uint64_t cm_pairings;		/* flows paired by the CM exchange */
	uint64_t retransmitted_packets;
	uint64_t naks;
	uint64_t rnr_naks;
	uint64_t timeouts;
	uint64_t cnps;
	uint64_t cnps_unattributed;	/* CNPs whose requester flow is not known */
	uint64_t ecn_ce;
	uint64_t duplicates;		/* mirror duplicates, not counted as retransmissions */
	uint64_t ts_backwards;		/* packets earlier than the one before them */
	uint64_t first_ns, last_ns;
	/*
	 * Allocations that failed: a latency sample, window or PSN slot not kept (or a MAD not
	 * computed), so some statistics are incomplete. 0 in any run with enough memory.
	 */
	uint64_t alloc_failures;
	/*
	 * Outstanding-PSN ring slots the tracker looked at (acknowledging, looking for an
	 * unanswered READ, filling a READ's span): its work, for tests and benchmarks.
	 */
	uint64_t psn_slots_visited;
};

struct qp_tracker;

void qp_tracker_cfg_default(struct qp_tracker_cfg *cfg);
/* NULL on allocation failure (errno set). The cfg is copied. */
struct qp_tracker *qp_tracker_new(const struct qp_tracker_cfg *cfg);
/* One decoded packet seen at `vantage` (the input trace index). 0, or -ENOMEM. */
int qp_tracker_add(struct qp_tracker *t, const struct roce_pkt *pkt, uint32_t vantage);
/*
 * n (<= QP_BATCH_MAX) packets in order, as n calls of qp_tracker_add() (same results), with
 * the memory they need fetched ahead: faster on traces of many flows. 0, -ENOMEM (packets
 * before the failing one are tracked) or -EINVAL (n too big).
 */
#define QP_BATCH_MAX 64
int qp_tracker_add_batch(struct qp_tracker *t, const struct roce_pkt *pkts, const uint32_t *vantages, size_t n);
/* End of input: close every flow's current window (emitted to the sink). */
void qp_tracker_finish(struct qp_tracker *t);
/*
 * Snapshot every flow's statistics (percentiles computed now), ordered by flow id.
 * *out is an array owned by the tracker, valid until the next snapshot or free; each
 * stats->windows points into tracker memory. Returns the number of flows, or -ENOMEM.
 */
long qp_tracker_snapshot(struct qp_tracker *t, const struct flow_stats **out);
const struct qp_tracker_totals *qp_tracker_totals(const struct qp_tracker *t);
/* Free the last snapshot's array (its copy was taken; a later snapshot makes a new one). */
void qp_tracker_snapshot_release(struct qp_tracker *t);

void qp_tracker_free(struct qp_tracker *t);

/*
 * The READs this tracker timed to their first and last response (read_queue.h), as items
 * whose flow_id is this tracker's and st NULL: out holds qp_tracker_n_read_msgs() of them.
 */
struct read_item;
size_t qp_tracker_n_read_msgs(const struct qp_tracker *t);
size_t qp_tracker_read_items(const struct qp_tracker *t, struct read_item *out);

/* Helpers, exposed for tests and other consumers. */
const char *qp_sample_kind_name(uint8_t kind);	/* "ack", "read_first", ... */
const char *qp_retx_cause_name(uint8_t cause);	/* "nak", "rnr", "timeout", "unknown", "response_gap" */
const char *qp_nak_kind_name(uint8_t kind);	/* "psn_seq", "rnr", "other" */
const char *flow_role_name(uint8_t role);	/* "requester", "responder", "datagram", "unknown" */
/* RNR NAK timer field (AETH low five bits, IBA table 45) in ns. */
uint64_t rnr_timer_ns(uint8_t syndrome);

#endif
