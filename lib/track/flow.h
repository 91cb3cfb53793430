/*
 * flow.h: what per-QP reconstruction hands to localization, storage and exporters.
 *
 * The contract between lib/track/qp_track.c (producer) and lib/localize/localize.c, the SQLite
 * store and the metrics exporters (consumers). Add fields freely; do not change the
 * meaning of existing ones without updating every consumer.
 */
#ifndef AGENTXDP_FLOW_H
#define AGENTXDP_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One direction of a queue pair: packets from src to dst addressed to dst_qpn. */
struct flow_key {
	uint8_t src_ip[16];	/* IPv4 v4-mapped, as in struct roce_pkt */
	uint8_t dst_ip[16];
	uint32_t dst_qpn;
};

enum flow_role {
	FLOW_ROLE_UNKNOWN = 0,
	FLOW_ROLE_REQUESTER = 1, /* carries requests (SEND/WRITE/READ req/atomics) */
	FLOW_ROLE_RESPONDER = 2, /* carries ACKs, NAKs, READ responses, atomic ACKs */
	FLOW_ROLE_DATAGRAM = 3,	 /* UD / UC / CNP-only: nothing to acknowledge */
};

/* Per-flow counts in one time window (default 1 s, --window). */
struct flow_window {
	uint64_t start_ns;		/* window start, ns since the epoch */
	uint64_t packets;
	uint64_t bytes;			/* wire bytes (orig_len) */
	uint64_t goodput_bytes;		/* payload bytes of first transmissions */
	uint32_t retransmitted_packets;
	uint32_t naks;			/* all NAK kinds, RNR included */
	uint32_t timeouts;
	uint32_t cnps;			/* CNPs that slow this flow down */
	uint32_t ecn_ce;
	uint32_t ack_samples;
	uint64_t ack_latency_sum_ns;
	uint32_t ack_latency_p50_ns;
	uint32_t ack_latency_p99_ns;
	uint32_t ack_latency_max_ns;
	uint32_t read_gaps;		/* READ responses re-read after a later one showed a gap */
};

struct flow_stats {
	uint64_t id;			/* stable id within one analysis (the qp table's row id) */
	struct flow_key key;
	uint8_t ip_version;
	uint8_t transport;		/* enum roce_transport */
	uint8_t role;			/* enum flow_role */
	uint16_t udp_sport;		/* first seen; ECMP entropy */
	uint64_t peer_id;		/* id of the paired flow in the other direction, 0 if unpaired */
	uint32_t vantage;		/* which input trace saw it (0-based), for multi-vantage splits */
	uint32_t src_qpn;		/* from CM or DETH, 0 if not known */
	bool cm_confirmed;		/* pairing confirmed by the CM exchange */
	bool carries_requests;		/* RC/XRC requests seen on this flow */
	bool carries_responses;		/* RC/XRC ACKs, NAKs, READ responses, atomic ACKs seen */
	uint8_t opcode_first;
	/* IPv4 TTL / IPv6 (GRH) hop limit, lowest and highest seen, mirror copies included;
	 * 0 none (InfiniBand without a GRH). A capture nearer the receiver sees a lower one. */
	uint8_t ttl_min, ttl_max;

	uint64_t packets;
	uint64_t bytes;
	uint64_t first_ns, last_ns;
	uint64_t goodput_bytes;		/* payload bytes of first transmissions */
	uint64_t first_transmissions;	/* requests whose PSN was not sent before, and datagrams */
	uint64_t retransmitted_packets;
	uint64_t naks_psn_seq;
	uint64_t naks_other;
	uint64_t rnr_naks;
	uint64_t timeouts;
	uint64_t cnps;			/* CNPs received for this flow (it is the one being slowed) */
	uint64_t ecn_ce;		/* packets of this flow that arrived CE-marked */
	uint64_t dup_acks;
	uint64_t out_of_order;
	uint64_t duplicates;		/* mirror copies, not counted as retransmissions */
	uint64_t ts_backwards;		/* packets (or samples) earlier than the one before them */
	uint64_t naks_total;		/* NAKs this flow carried (as responder) */
	uint64_t psn_gaps;		/* request PSNs skipped (capture loss or reordering) */
	uint64_t first_ce_ns, last_ce_ns;
	/* CE-marked ACKs this (responder) flow carried that timed a round trip between two
	 * unmarked ones, and those of them no slower than either: a queue marks the packets it
	 * delays, a mark set at random (a faulty ECN marker) is the quickest a third of the time. */
	uint64_t ce_acks_timed, ce_acks_fast;
	uint64_t first_cnp_ns, last_cnp_ns;

	/* ACK latency (Karn's rule: no sample from a retransmitted PSN), requester flows. */
	uint64_t ack_samples;
	double ack_latency_p50_us, ack_latency_p99_us, ack_latency_max_us;
	double ack_latency_mad_us;	/* median absolute deviation, for robust comparison */
	uint64_t read_samples;
	double read_latency_p50_us, read_latency_p99_us, read_latency_max_us;
	uint64_t read_first_samples;	/* READ request -> first response */
	double read_first_p50_us, read_first_p99_us;
	uint64_t atomic_samples;
	double atomic_latency_p50_us, atomic_latency_p99_us;
	uint64_t completion_samples;
	double completion_p50_us, completion_p99_us, completion_max_us;
	uint64_t rnr_wait_ns;		/* RNR timer time the responder asked for, summed */

	/* Time windows, ordered by start_ns; owned by the producer. */
	const struct flow_window *windows;
	size_t n_windows;

	/* READ/atomic re-issues after a later response showed one missing: one per gap the
	 * requester saw, i.e. responses lost on their way (a lost request is NAKed instead). */
	uint64_t read_gaps;

	/* READs timed to their first and last response (Karn), their waits for the first
	 * response summed, and the part of those waits the responder's link (at this vantage,
	 * over all its connections) spent sending other READs' responses: an incast target's
	 * wait is its queue, a slow responder's link idles (lib/track/read_queue.h). */
	uint64_t read_waits;
	double read_wait_us, read_wait_busy_us;
};

#endif
