/*
 * rc_model.h: one queue pair end (requester + responder) as InfiniBand describes it, no I/O.
 *
 * The caller owns time and the wire: it hands the model received packets and the current time,
 * and asks it for the next packet to send and for the next time it must be woken up. The
 * synthesizer drives it from a discrete-event loop; agentxdp-roce-emu drives it over real UDP
 * sockets. docs/rc-model.md shows both loops.
 *
 * Modelled (IBA 1.4 vol 1, chapter 9): PSN and MSN, requester window, AckReq bit and ACK
 * coalescing, NAK PSN sequence error with go-back-N (one NAK per sequence error), local ACK
 * timeout with retry count, RNR NAK with its timer code and rnr_retry (7 = infinite), RDMA
 * WRITE / SEND with and without immediate, RDMA READ request and responses (a gap in the
 * responses re-issues the READ for the missing part), atomics (CMP&SWAP, FETCH&ADD) with the
 * responder replaying the saved result for a duplicate, UC (no ACKs, a gap drops the message)
 * and UD (single-packet SENDs with DETH). RoCE congestion control: the responder side sends a
 * CNP (at most one per cnp_interval_ns) for CE-marked packets; the requester side reacts to
 * CNPs with DCQCN rate reduction and recovery and paces its packets to that rate.
 *
 * Packets in and out are struct roce_pkt (lib/decode/roce_pkt.h), so frames decoded by
 * roce_decode_frame() or roce_frame_parse_transport() can be fed back in; roce_frame_build()
 * turns an outgoing one into bytes. The model fills the BTH and extended-header fields of the
 * packets it emits; addresses, UDP port and ECN are the caller's.
 */
#ifndef AGENTXDP_RC_MODEL_H
#define AGENTXDP_RC_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/decode/roce_pkt.h"

#define RC_SQ_DEPTH 64		/* work requests queued per QP (rc_post_send -> -ENOSPC) */
#define RC_RESP_DEPTH 64	/* responses (ACK/NAK/READ response runs/atomic ACKs) pending */
#define RC_CQ_DEPTH 128		/* completions not yet polled; older ones are overwritten */
#define RC_MAX_READ_BYTES (1u << 20)
#define RC_ATOMIC_HISTORY 32	/* atomic results a responder keeps to answer duplicates */

enum rc_service {
	RC_SVC_RC = 0,		/* reliable connected */
	RC_SVC_UC = 1,		/* unreliable connected */
	RC_SVC_UD = 2,		/* unreliable datagram */
};

enum rc_wr_opcode {
	RC_WR_SEND = 0,
	RC_WR_SEND_IMM,
	RC_WR_WRITE,
	RC_WR_WRITE_IMM,
	RC_WR_READ,		/* RC only */
	RC_WR_CMP_SWAP,		/* RC only, 8 bytes */
	RC_WR_FETCH_ADD,	/* RC only, 8 bytes */
};

struct rc_wr {
	uint64_t wr_id;
	enum rc_wr_opcode opcode;
	uint32_t length_bytes;	/* message length; UD: at most the MTU; READ: <= RC_MAX_READ_BYTES */
	uint64_t remote_va;
	uint32_t rkey;
	uint32_t imm_data;	/* SEND_IMM / WRITE_IMM */
	uint64_t compare_add;	/* CMP_SWAP: compare; FETCH_ADD: add */
	uint64_t swap;		/* CMP_SWAP: swap */
	uint32_t ud_dest_qpn;	/* UD: destination QP (0 = cfg.remote_qpn) */
};

enum rc_wc_status {
	RC_WC_SUCCESS = 0,
	RC_WC_RETRY_EXCEEDED,	/* retry_cnt exhausted (timeouts / NAK sequence errors) */
	RC_WC_RNR_RETRY_EXCEEDED,
	RC_WC_REMOTE_ERROR,	/* a NAK other than sequence error / RNR */
	RC_WC_FLUSHED,		/* QP went to the error state before this request finished */
};

struct rc_completion {
	uint64_t wr_id;		/* requester completions; 0 for receive completions */
	bool is_recv;		/* responder side: a SEND or WRITE_IMM arrived */
	enum rc_wc_status status;
	enum rc_wr_opcode opcode;
	uint32_t length_bytes;
	uint64_t posted_ns, completed_ns;	/* requester: rc_post_send time and completion time */
};

struct rc_qp_config {
	enum rc_service service;
	uint32_t local_qpn;		/* 24 bits */
	uint32_t remote_qpn;		/* the peer QP (RC/UC); UD default destination */
	uint32_t sq_psn;		/* first PSN this side's requester sends */
	uint32_t rq_psn;		/* first PSN expected from the peer's requester */
	uint32_t mtu_bytes;		/* 256, 512, 1024, 2048 or 4096 */
	uint16_t pkey;
	uint32_t qkey;			/* UD */
	uint64_t line_rate_bps;		/* NIC rate: the pacing ceiling and DCQCN's full rate */
	uint64_t ack_timeout_ns;	/* local ACK timeout (IBA: 4.096 us * 2^timeout) */
	uint8_t retry_cnt;		/* 0..7 */
	uint8_t rnr_retry;		/* 0..7, 7 = retry forever */
	uint8_t min_rnr_timer;		/* 5-bit code this responder puts in RNR NAKs (IBA table 45) */
	uint32_t max_inflight_pkts;	/* requester window: PSNs sent and not yet acknowledged (<= 512) */
	uint32_t max_rd_atomic;		/* READ/atomic requests outstanding at once */
	uint32_t ackreq_every_pkts;	/* requester sets AckReq every N packets and on each message's last */
	uint32_t ack_every_pkts;	/* responder ACKs at least every N request packets (coalescing) */
	uint64_t responder_delay_ns;	/* time before a response may leave (slow responder) */
	bool unlimited_recvs;		/* responder: receive queue never empty (no RNR) */
	bool send_cnps;			/* notification point: CNP for CE-marked packets */
	uint64_t cnp_interval_ns;	/* at most one CNP per interval per QP */
	bool dcqcn;			/* reaction point: slow down on CNPs */
	uint64_t min_rate_bps;		/* DCQCN floor */
};

/* Defaults: RC, MTU 1024, 100 Gb/s, timeout 4.096us*2^14 (~67 ms), retry 7, rnr_retry 7,
 * min_rnr_timer 0x0e (1.28 ms)... see rc_model.c; QPNs and PSNs are 0 and must be set. */
void rc_qp_config_default(struct rc_qp_config *cfg);

struct rc_qp_stats {
	uint64_t req_packets;		/* request packets sent, retransmissions included */
	uint64_t req_bytes;		/* payload bytes of those */
	uint64_t retransmitted_packets;	/* request packets with an already-sent PSN */
	uint64_t timeouts;		/* local ACK timer expiries that restarted transmission */
	uint64_t naks_seq_received, naks_other_received, rnr_naks_received;
	uint64_t naks_seq_sent, naks_other_sent, rnr_naks_sent;
	uint64_t acks_sent, acks_received;
	uint64_t resp_packets;		/* responder packets sent: ACK/NAK/READ resp/atomic ACK */
	uint64_t duplicates_received;	/* requests with a PSN before the expected one */
	uint64_t out_of_sequence_received;
	uint64_t cnps_sent, cnps_received;
	uint64_t completions, recv_completions;
	uint64_t dropped_uc_messages;	/* UC messages lost to a PSN gap */
	bool retry_exceeded;		/* the QP went to the error state */
};

/* Why a packet was emitted (for ground truth and tracing). */
enum rc_tx_kind {
	RC_TX_REQUEST = 0,		/* first transmission of a request packet (or UC/UD datagram) */
	RC_TX_RETRANSMISSION,		/* request packet whose PSN was sent before */
	RC_TX_RESPONSE,			/* ACK, NAK, RNR NAK, READ response, atomic ACK */
	RC_TX_CNP,
};

struct rc_tx_info {
	enum rc_tx_kind kind;
	uint32_t wire_payload_bytes;	/* payload bytes (no headers, pad or ICRC) */
	/* RC_TX_RETRANSMISSION that a local ACK timeout caused: the first request packet sent
	 * after the timer expired, when it resends a PSN (the visible trace of a timeout) and no
	 * NAK or RNR NAK came in between. */
	bool after_timeout;
};

/*
 * The state, caller-allocated (no malloc inside; ~30 KB). Treat every field as private:
 * they are here only so a caller can embed the struct and use sizeof.
 */
struct rc_wqe {
	struct rc_wr wr;
	uint32_t first_psn;	/* PSN of its first packet */
	uint32_t n_psns;	/* PSNs it uses (READ: one per response packet) */
	uint32_t acked_psns;	/* how many are acknowledged / responded to */
	uint64_t posted_ns;
};

struct rc_resp {
	uint8_t kind;		/* ACK, NAK, READ run, atomic ACK */
	uint8_t syndrome;
	uint32_t psn;		/* first PSN of this response (READ run: next one to send) */
	uint32_t msn;
	uint32_t remaining;	/* READ: packets left to send */
	uint32_t total;		/* READ: packets in the run */
	uint32_t last_len;	/* READ: bytes in the last packet */
	uint64_t atomic_orig;
	uint64_t not_before_ns;
};

struct rc_qp {
	struct rc_qp_config cfg;
	struct rc_qp_stats stats;
	/* requester */
	struct rc_wqe sq[RC_SQ_DEPTH];
	uint32_t sq_head, sq_tail;	/* head: oldest unfinished, tail: next free (mod depth) */
	uint32_t tx_wqe;		/* index (absolute count) of the WQE being sent */
	uint32_t tx_off;		/* next PSN offset within it */
	uint32_t next_psn;		/* PSN of the next packet to send (may go back on retransmit) */
	uint32_t max_psn_sent;		/* one past the highest PSN ever sent */
	uint32_t post_psn;		/* first PSN of the next posted work request */
	uint32_t read_reissue_psn;	/* una when a READ was last re-issued for a response gap */
	bool read_reissued;
	bool timeout_retx_pending;	/* the timer expired; its retransmission is not sent yet */
	bool error;			/* QP in the error state: nothing more is sent */
	uint32_t una_psn;		/* oldest unacknowledged PSN */
	uint32_t pkts_since_ackreq;
	uint8_t retry_left, rnr_retry_left;
	uint64_t timer_deadline_ns;	/* local ACK timer, 0 = stopped */
	uint64_t rnr_wait_until_ns;
	uint64_t next_tx_ns;		/* pacing: earliest time of the next request packet */
	uint32_t rd_atomic_outstanding;
	uint64_t current_time_ns;
	/* DCQCN reaction point */
	double rate_bps, target_rate_bps, alpha;
	uint64_t last_cnp_rx_ns, last_rate_update_ns, last_alpha_update_ns;
	uint32_t rate_increase_stage;
	/* responder */
	uint32_t epsn;			/* expected PSN */
	uint32_t msn;			/* completed messages, 24 bits */
	uint32_t recv_credits;
	uint32_t unacked_pkts;		/* request packets received since the last ACK */
	bool nak_outstanding;		/* a sequence-error NAK was sent, not yet resolved */
	bool in_message;		/* a multi-packet SEND/WRITE is half received */
	bool uc_dropping;		/* UC: discarding the rest of a broken message */
	uint8_t in_message_op;
	uint64_t atomic_value;		/* the one remote 64-bit word atomics operate on */
	uint64_t last_atomic_orig;
	uint32_t last_atomic_psn;
	struct rc_atomic_saved {
		uint32_t psn;
		bool valid;
		uint64_t orig;	/* the value the atomic returned */
	} atomic_saved[RC_ATOMIC_HISTORY];	/* ring, newest at atomic_saved_next - 1 */
	uint32_t atomic_saved_next;
	struct rc_resp resp[RC_RESP_DEPTH];
	uint32_t resp_head, resp_tail;
	uint64_t cnp_next_allowed_ns;
	bool cnp_pending;
	uint32_t cnp_dest_qpn;
	/* completions */
	struct rc_completion cq[RC_CQ_DEPTH];
	uint32_t cq_head, cq_tail;
};

/* Start a QP in RTS with cfg (copied). Returns 0 or -EINVAL for a bad config. */
int rc_qp_init(struct rc_qp *qp, const struct rc_qp_config *cfg);

/* Queue a work request. 0, -ENOSPC when RC_SQ_DEPTH are pending, -EINVAL for a bad request,
 * -EIO when the QP is in the error state. */
int rc_post_send(struct rc_qp *qp, uint64_t now_ns, const struct rc_wr *wr);
/* Post n receive buffers (ignored when cfg.unlimited_recvs). */
void rc_post_recv(struct rc_qp *qp, uint32_t n);
/* Change behaviour while running (fault injection): see docs/rc-model.md. */
void rc_set_unlimited_recvs(struct rc_qp *qp, bool unlimited);
void rc_set_responder_delay(struct rc_qp *qp, uint64_t delay_ns);
void rc_set_ack_timeout(struct rc_qp *qp, uint64_t timeout_ns);

/*
 * A packet arrived for this QP (its BTH dest QP is cfg.local_qpn). `pkt->ecn` (IP ECN bits)
 * and the BTH fields are used. Returns 0, or -EINVAL when the packet is not for this QP.
 */
int rc_receive(struct rc_qp *qp, uint64_t now_ns, const struct roce_pkt *pkt);

/*
 * The next packet to put on the wire at now_ns: 1 and *out filled (info optional), or 0 when
 * nothing may be sent now. Responses and CNPs go first, then requests (paced by DCQCN).
 * Also fires due timers. Call it until it returns 0, then sleep until rc_next_event_ns().
 */
int rc_next_packet(struct rc_qp *qp, uint64_t now_ns, struct roce_pkt *out,
		   struct rc_tx_info *info);

/* When the QP next needs rc_next_packet() called (timer, pacing, delayed response), or
 * UINT64_MAX when it waits only for packets or work requests. */
uint64_t rc_next_event_ns(const struct rc_qp *qp);

/* Take one completion: 1 and *out filled, or 0. */
int rc_poll_completion(struct rc_qp *qp, struct rc_completion *out);

/* Work requests posted and not completed. */
uint32_t rc_sq_pending(const struct rc_qp *qp);
const struct rc_qp_stats *rc_qp_get_stats(const struct rc_qp *qp);
/* Current DCQCN rate (line rate when DCQCN is off or has recovered). */
double rc_qp_rate_bps(const struct rc_qp *qp);

/* IBA table 45: RNR NAK timer code (0..31) -> nanoseconds. */
uint64_t rc_rnr_timer_ns(uint8_t code);

#endif
