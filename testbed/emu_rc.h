/* emu_rc.h: the emulator's RoCE v2 RC requester/responder state machines and framing, no I/O. */
#ifndef AGENTXDP_EMU_RC_H
#define AGENTXDP_EMU_RC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EMU_BTH_BYTES 12
#define EMU_RETH_BYTES 16
#define EMU_AETH_BYTES 4
#define EMU_ICRC_BYTES 4
#define EMU_CNP_RSVD_BYTES 16
#define EMU_MAX_MTU 4096
/* Largest RoCE payload we build: BTH + RETH + MTU + pad + ICRC. */
#define EMU_MAX_PKT (EMU_BTH_BYTES + EMU_RETH_BYTES + EMU_AETH_BYTES + EMU_MAX_MTU + 4 + EMU_ICRC_BYTES)
#define EMU_MAX_DEPTH 1024
/* RC AETH syndrome for a positive ACK with "invalid credit count" (no end-to-end credits). */
#define EMU_AETH_ACK_NO_CREDIT 0x1f
#define EMU_AETH_NAK_PSN_SEQ 0x60

enum emu_op { EMU_OP_WRITE = 0, EMU_OP_READ = 1, EMU_OP_SEND = 2 };

/* The IP/UDP 5-tuple a QP's packets travel with: the ICRC covers a masked copy of it. */
struct emu_path {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t src[16];	/* IPv4 in the first 4 bytes */
	uint8_t dst[16];
	uint16_t sport;		/* this QP's own UDP source port (ECMP entropy) */
	uint16_t dport;		/* 4791 */
};

/* The headers of one received packet, as emu_parse() read them. */
struct emu_hdr {
	uint8_t opcode;
	bool ack_req;
	bool becn;
	uint8_t pad;
	uint32_t dest_qpn;
	uint32_t psn;
	bool has_reth;
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;	/* bytes */
	bool has_aeth;
	uint8_t syndrome;
	uint32_t msn;
	uint32_t payload_bytes;
	uint8_t ecn;		/* IP ECN bits of the packet (0..3), filled by the receiver */
};

/* Parse BTH + extension headers + payload + ICRC. Returns 0, or -EINVAL / -EMSGSIZE. */
int emu_parse(const uint8_t *p, size_t len, struct emu_hdr *h);
/* RoCE v2 ICRC (IBA A17.8) over the masked IP/UDP headers and the packet, as rdma_rxe computes it. */
uint32_t emu_icrc(const struct emu_path *path, const uint8_t *pkt, size_t len_without_icrc);
/* Number of MTU-sized packets a message of `bytes` takes (at least 1). */
uint32_t emu_pkts_for(uint64_t bytes, uint32_t mtu);

/* Requester counters; a requester only counts what it did or saw. */
struct emu_req_stats {
	uint64_t ops_posted;
	uint64_t ops_completed;
	uint64_t bytes_completed;
	uint64_t pkts_sent;
	uint64_t pkts_retransmitted;	/* packets sent again after a NAK or timeout */
	uint64_t acks_received;
	uint64_t naks_received;
	uint64_t timeouts;
	uint64_t read_resp_received;
	uint64_t read_gaps;		/* READ responses that arrived after a missing one */
	uint64_t cnps_received;
};

struct emu_op_slot {
	uint32_t first_psn;
	uint32_t npkts;		/* PSNs the operation consumes */
	uint32_t bytes;
	uint64_t post_ns;
	uint32_t rd_received;	/* READ: response packets received in order */
};

struct emu_requester {
	/* configuration */
	enum emu_op op;
	uint32_t size_bytes;
	uint32_t mtu;
	uint32_t depth;		/* outstanding operations */
	uint64_t timeout_ns;	/* local ACK timeout */
	uint32_t retry_cnt;	/* retries before the QP goes to the error state */
	uint32_t qpn, dest_qpn;
	uint64_t line_rate_bps;	/* DCQCN reaction point's maximum rate */
	struct emu_path path;

	/* state */
	bool posting;		/* new operations may be posted */
	uint64_t ops_left;	/* operations still to post; UINT64_MAX: until posting stops */
	struct emu_op_slot ops[EMU_MAX_DEPTH];
	uint32_t head, count;	/* ring of outstanding operations */
	uint32_t tx_idx;	/* next operation to (re)transmit, relative to head */
	uint32_t tx_pkt;	/* packet offset within it */
	uint32_t next_psn;	/* PSN the next new operation starts at */
	uint32_t tx_high_psn;	/* one past the highest PSN ever sent */
	uint32_t acked_psn;	/* last PSN the responder acknowledged */
	uint32_t retries;
	uint64_t last_progress_ns;
	bool read_gap_pending;	/* a READ re-request is in flight for the current gap */
	bool failed;		/* transport retry counter exceeded */
	/* DCQCN-lite reaction point */
	uint64_t rate_bps;	/* 0 = unpaced */
	uint64_t target_bps;
	double alpha;
	uint64_t next_tx_ns;
	uint64_t last_cnp_ns, last_rate_update_ns;

	struct emu_req_stats st;
	void (*on_complete)(void *arg, uint64_t latency_ns, uint32_t bytes, uint64_t now_ns);
	void *cb_arg;
};

struct emu_rsp_stats {
	uint64_t pkts_received;
	uint64_t ops_received;
	uint64_t bytes_received;
	uint64_t dup_pkts;
	uint64_t out_of_seq;		/* packets after a gap (dropped, NAK'd once per gap) */
	uint64_t acks_sent;
	uint64_t naks_sent;
	uint64_t read_resp_sent;
	uint64_t ce_received;
	uint64_t cnps_sent;
};

struct emu_read_job {
	uint32_t psn;		/* PSN of the next response packet */
	uint32_t npkts_left;
	uint32_t bytes_left;
	uint32_t total_pkts;
	uint32_t index;		/* packet index within the whole response */
};

struct emu_responder {
	uint32_t mtu;
	uint32_t qpn, dest_qpn;
	uint64_t cnp_interval_ns;	/* at most one CNP per interval (DCQCN notification point) */
	struct emu_path path;

	uint32_t epsn;		/* expected PSN */
	uint32_t msn;		/* messages completed, 24 bits */
	bool nak_sent_for_gap;
	bool ack_pending, nak_pending, cnp_pending;
	uint64_t last_cnp_ns;
	struct emu_read_job reads[EMU_MAX_DEPTH];
	uint32_t rd_head, rd_count;

	struct emu_rsp_stats st;
};

void emu_requester_init(struct emu_requester *rq, uint32_t start_psn, uint64_t now_ns);
/* Process one packet addressed to this requester QP. */
void emu_requester_rx(struct emu_requester *rq, const struct emu_hdr *h, uint64_t now_ns);
/*
 * Build the next packet to send into buf (cap >= EMU_MAX_PKT). Returns its length, or 0
 * when nothing may be sent now (window full, paced, done); *wake_ns then says when to ask again
 * (UINT64_MAX: only after a received packet).
 */
size_t emu_requester_tx(struct emu_requester *rq, uint64_t now_ns, uint8_t *buf, size_t cap,
			uint64_t *wake_ns);
/* Local ACK timeout and DCQCN rate recovery. Returns the next deadline (UINT64_MAX: none). */
uint64_t emu_requester_timer(struct emu_requester *rq, uint64_t now_ns);
static inline bool emu_requester_idle(const struct emu_requester *rq)
{
	return rq->failed || (rq->count == 0 && (!rq->posting || rq->ops_left == 0));
}

void emu_responder_init(struct emu_responder *rs, uint32_t expected_psn);
void emu_responder_rx(struct emu_responder *rs, const struct emu_hdr *h, uint64_t now_ns);
/* Next packet to send (NAK, READ response, coalesced ACK, CNP), 0 when none. */
size_t emu_responder_tx(struct emu_responder *rs, uint64_t now_ns, uint8_t *buf, size_t cap);

const char *emu_op_name(enum emu_op op);
/* opcode -> "RDMA_WRITE_FIRST" etc., for debug output. */
const char *emu_opcode_name(uint8_t opcode);

#endif
