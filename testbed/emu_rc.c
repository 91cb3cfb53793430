/* emu_rc.c: RC requester/responder for agentxdp-roce-emu: PSNs, coalesced ACKs, NAK go-back-N, timeouts, CNPs. */
#include "emu_rc.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <zlib.h>

#include "byte_reader.h"
#include "psn.h"
#include "roce_pkt.h"

#define EMU_PKEY_DEFAULT 0xffff
#define EMU_RKEY 0x00a0c0de
#define EMU_VA_BASE 0x7f0000000000ull
/* DCQCN constants (Zhu et al., SIGCOMM 2015): g = 1/16, rate increase period 55 us. */
#define DCQCN_G (1.0 / 16)
#define DCQCN_PERIOD_NS 55000ull

const char *emu_op_name(enum emu_op op)
{
	static const char *const names[] = { "RDMA_Write", "RDMA_Read", "Send" };
	return (unsigned)op < 3 ? names[op] : "?";
}

static const char *const rc_opcode_names[] = {
	[ROCE_OP_SEND_FIRST] = "SEND_FIRST",
	[ROCE_OP_SEND_MIDDLE] = "SEND_MIDDLE",
	[ROCE_OP_SEND_LAST] = "SEND_LAST",
	[ROCE_OP_SEND_LAST_IMM] = "SEND_LAST_IMM",
	[ROCE_OP_SEND_ONLY] = "SEND_ONLY",
	[ROCE_OP_SEND_ONLY_IMM] = "SEND_ONLY_IMM",
	[ROCE_OP_WRITE_FIRST] = "RDMA_WRITE_FIRST",
	[ROCE_OP_WRITE_MIDDLE] = "RDMA_WRITE_MIDDLE",
	[ROCE_OP_WRITE_LAST] = "RDMA_WRITE_LAST",
	[ROCE_OP_WRITE_LAST_IMM] = "RDMA_WRITE_LAST_IMM",
	[ROCE_OP_WRITE_ONLY] = "RDMA_WRITE_ONLY",
	[ROCE_OP_WRITE_ONLY_IMM] = "RDMA_WRITE_ONLY_IMM",
	[ROCE_OP_READ_REQUEST] = "RDMA_READ_REQUEST",
	[ROCE_OP_READ_RESP_FIRST] = "RDMA_READ_RESPONSE_FIRST",
	[ROCE_OP_READ_RESP_MIDDLE] = "RDMA_READ_RESPONSE_MIDDLE",
	[ROCE_OP_READ_RESP_LAST] = "RDMA_READ_RESPONSE_LAST",
	[ROCE_OP_READ_RESP_ONLY] = "RDMA_READ_RESPONSE_ONLY",
	[ROCE_OP_ACK] = "ACKNOWLEDGE",
};

const char *emu_opcode_name(uint8_t opcode)
{
	if (opcode == ROCE_OPCODE_CNP)
		return "CNP";
	if (opcode < sizeof(rc_opcode_names) / sizeof(rc_opcode_names[0]) && rc_opcode_names[opcode])
		return rc_opcode_names[opcode];
	return "UNKNOWN";
}

static bool opcode_has_reth(uint8_t op)
{
	return op == ROCE_OP_WRITE_FIRST || op == ROCE_OP_WRITE_ONLY || op == ROCE_OP_WRITE_ONLY_IMM ||
	       op == ROCE_OP_READ_REQUEST;
}

static bool opcode_has_aeth(uint8_t op)
{
	return op == ROCE_OP_ACK || op == ROCE_OP_READ_RESP_FIRST || op == ROCE_OP_READ_RESP_LAST ||
	       op == ROCE_OP_READ_RESP_ONLY;
}

static bool opcode_is_request(uint8_t op)
{
	return op <= ROCE_OP_READ_REQUEST && rc_opcode_names[op];
}

static bool opcode_ends_message(uint8_t op)
{
	switch (op) {
	case ROCE_OP_SEND_LAST:
	case ROCE_OP_SEND_LAST_IMM:
	case ROCE_OP_SEND_ONLY:
	case ROCE_OP_SEND_ONLY_IMM:
	case ROCE_OP_WRITE_LAST:
	case ROCE_OP_WRITE_LAST_IMM:
	case ROCE_OP_WRITE_ONLY:
	case ROCE_OP_WRITE_ONLY_IMM:
		return true;
	}
	return false;
}

uint32_t emu_pkts_for(uint64_t bytes, uint32_t mtu)
{
	if (bytes == 0)
		return 1;
	return (uint32_t)((bytes + mtu - 1) / mtu);
}

/*
 * Base Transport Header (IBA 9.2), 12 bytes:
 *   0        1          2          4         5           8         9
 *  +--------+-+-+--+----+----------+---------+-----------+-+-------+----------+
 *  | OpCode |S|M|Pd|TVer|  P_Key   |F|B|rsvd | DestQP    |A| rsvd  |   PSN    |
 *  +--------+-+-+--+----+----------+---------+-----------+-+-------+----------+
 */
int emu_parse(const uint8_t *p, size_t len, struct emu_hdr *h)
{
	struct byte_reader br;
	uint8_t b;

	memset(h, 0, sizeof(*h));
	br_init(&br, p, len);
	h->opcode = br_u8(&br);
	b = br_u8(&br);
	h->pad = (b >> 4) & 0x3;
	(void)br_be16(&br); /* P_Key */
	b = br_u8(&br);
	h->becn = b & 0x40;
	h->dest_qpn = br_be24(&br);
	b = br_u8(&br);
	h->ack_req = b & 0x80;
	h->psn = br_be24(&br);
	if (br.short_read)
		return -EMSGSIZE;
	if (h->opcode != ROCE_OPCODE_CNP && !(h->opcode <= ROCE_OP_ACK && rc_opcode_names[h->opcode]))
		return -EINVAL;
	if (opcode_has_reth(h->opcode)) {
		/* RETH (IBA 9.3.3): VA(8) R_Key(4) DMA length(4) */
		h->has_reth = true;
		h->va = br_be64(&br);
		h->rkey = br_be32(&br);
		h->dma_len = br_be32(&br);
	}
	if (opcode_has_aeth(h->opcode)) {
		/* AETH (IBA 9.3.5): Syndrome(1) MSN(3) */
		h->has_aeth = true;
		h->syndrome = br_u8(&br);
		h->msn = br_be24(&br);
	}
	if (h->opcode == ROCE_OPCODE_CNP)
		br_skip(&br, EMU_CNP_RSVD_BYTES);
	if (br.short_read || br_remaining(&br) < (size_t)EMU_ICRC_BYTES + h->pad)
		return -EMSGSIZE;
	h->payload_bytes = (uint32_t)(br_remaining(&br) - EMU_ICRC_BYTES - h->pad);
	return 0;
}

uint32_t emu_icrc(const struct emu_path *path, const uint8_t *pkt, size_t len)
{
	uint8_t ph[8 + 40 + 8 + EMU_BTH_BYTES];
	size_t n = 0;
	uint16_t udp_len = (uint16_t)(8 + len + EMU_ICRC_BYTES);
	uLong crc;

	/* The masked LRH: 8 bytes of ones (IBA A17.8.2). */
	memset(ph, 0xff, 8);
	n = 8;
	if (path->family == AF_INET6) {
		ph[n++] = 0x6f; /* version 6, traffic class and flow label masked */
		ph[n++] = 0xff;
		ph[n++] = 0xff;
		ph[n++] = 0xff;
		put_be16(ph + n, udp_len);
		n += 2;
		ph[n++] = 17;
		ph[n++] = 0xff; /* hop limit masked */
		memcpy(ph + n, path->src, 16);
		memcpy(ph + n + 16, path->dst, 16);
		n += 32;
	} else {
		ph[n++] = 0x45;
		ph[n++] = 0xff; /* TOS masked */
		put_be16(ph + n, (uint16_t)(20 + udp_len));
		n += 2;
		/* Unconnected sockets with DF set send IP ID 0 (ip_select_ident_segs()). */
		ph[n++] = 0;
		ph[n++] = 0;
		ph[n++] = 0x40;
		ph[n++] = 0;
		ph[n++] = 0xff; /* TTL masked */
		ph[n++] = 17;
		ph[n++] = 0xff; /* header checksum masked */
		ph[n++] = 0xff;
		memcpy(ph + n, path->src, 4);
		memcpy(ph + n + 4, path->dst, 4);
		n += 8;
	}
	put_be16(ph + n, path->sport);
	put_be16(ph + n + 2, path->dport);
	put_be16(ph + n + 4, udp_len);
	ph[n + 6] = 0xff; /* UDP checksum masked */
	ph[n + 7] = 0xff;
	n += 8;
	memcpy(ph + n, pkt, EMU_BTH_BYTES);
	ph[n + 4] = 0xff; /* BTH resv8a (FECN/BECN) masked */
	n += EMU_BTH_BYTES;
	crc = crc32(0L, ph, (uInt)n);
	crc = crc32(crc, pkt + EMU_BTH_BYTES, (uInt)(len - EMU_BTH_BYTES));
	return (uint32_t)crc;
}

/* Write BTH (+RETH/AETH), payload and ICRC; returns the packet length. */
static size_t build_pkt(uint8_t *buf, const struct emu_path *path, uint8_t opcode, uint32_t dest_qpn,
			uint32_t psn, bool ack_req, uint8_t fecn_becn, const struct emu_hdr *ext,
			uint32_t payload_bytes)
{
	uint8_t pad = (uint8_t)((4 - (payload_bytes & 3)) & 3);
	size_t off = 0;
	uint32_t icrc;

	buf[0] = opcode;
	buf[1] = (uint8_t)(pad << 4); /* SE=0 M=0 TVer=0 */
	put_be16(buf + 2, EMU_PKEY_DEFAULT);
	buf[4] = fecn_becn;
	put_be24(buf + 5, dest_qpn & PSN_MASK);
	buf[8] = ack_req ? 0x80 : 0;
	put_be24(buf + 9, psn & PSN_MASK);
	off = EMU_BTH_BYTES;
	if (opcode_has_reth(opcode)) {
		put_be64(buf + off, ext->va);
		put_be32(buf + off + 8, ext->rkey);
		put_be32(buf + off + 12, ext->dma_len);
		off += EMU_RETH_BYTES;
	}
	if (opcode_has_aeth(opcode)) {
		buf[off] = ext->syndrome;
		put_be24(buf + off + 1, ext->msn & PSN_MASK);
		off += EMU_AETH_BYTES;
	}
	if (opcode == ROCE_OPCODE_CNP) {
		memset(buf + off, 0, EMU_CNP_RSVD_BYTES);
		off += EMU_CNP_RSVD_BYTES;
	}
	memset(buf + off, 0xa5, payload_bytes);
	off += payload_bytes;
	memset(buf + off, 0, pad);
	off += pad;
	icrc = emu_icrc(path, buf, off);
	/* Stored as rdma_rxe stores it: the CRC word in little-endian byte order. */
	buf[off] = icrc & 0xff;
	buf[off + 1] = (icrc >> 8) & 0xff;
	buf[off + 2] = (icrc >> 16) & 0xff;
	buf[off + 3] = (icrc >> 24) & 0xff;
	return off + EMU_ICRC_BYTES;
}

/* ---- requester ---- */

static struct emu_op_slot *op_at(struct emu_requester *rq, uint32_t rel)
{
	return &rq->ops[(rq->head + rel) % rq->depth];
}

static uint32_t op_last_psn(const struct emu_op_slot *op)
{
	return psn_add(op->first_psn, op->npkts - 1);
}

void emu_requester_init(struct emu_requester *rq, uint32_t start_psn, uint64_t now_ns)
{
	if (rq->depth == 0 || rq->depth > EMU_MAX_DEPTH)
		rq->depth = rq->depth ? EMU_MAX_DEPTH : 1;
	if (rq->mtu == 0 || rq->mtu > EMU_MAX_MTU)
		rq->mtu = 1024;
	rq->posting = true;
	rq->head = rq->count = rq->tx_idx = rq->tx_pkt = 0;
	rq->next_psn = rq->tx_high_psn = start_psn & PSN_MASK;
	rq->acked_psn = psn_add(start_psn, PSN_MASK); /* start_psn - 1 */
	rq->retries = 0;
	rq->last_progress_ns = now_ns;
	rq->read_gap_pending = false;
	rq->failed = false;
	rq->rate_bps = 0;
	rq->target_bps = rq->line_rate_bps;
	rq->alpha = 1.0;
	rq->next_tx_ns = 0;
	rq->last_cnp_ns = rq->last_rate_update_ns = 0;
	memset(&rq->st, 0, sizeof(rq->st));
}

static void complete_head(struct emu_requester *rq, uint64_t now_ns)
{
	struct emu_op_slot *op = op_at(rq, 0);

	rq->st.ops_completed++;
	rq->st.bytes_completed += op->bytes;
	if (rq->on_complete)
		rq->on_complete(rq->cb_arg, now_ns - op->post_ns, op->bytes, now_ns);
	rq->head = (rq->head + 1) % rq->depth;
	rq->count--;
	if (rq->tx_idx > 0)
		rq->tx_idx--;
	else
		rq->tx_pkt = 0;
}

static void progress(struct emu_requester *rq, uint64_t now_ns)
{
	rq->retries = 0;
	rq->last_progress_ns = now_ns;
}

/* Go-back-N: the next packet sent is the one carrying `psn`. */
static void go_back(struct emu_requester *rq, uint32_t psn)
{
	for (uint32_t i = 0; i < rq->count; i++) {
		struct emu_op_slot *op = op_at(rq, i);
		if (psn_in_range(psn, op->first_psn, op_last_psn(op))) {
			rq->tx_idx = i;
			rq->tx_pkt = (uint32_t)psn_diff(psn, op->first_psn);
			return;
		}
	}
	rq->tx_idx = rq->count;
	rq->tx_pkt = 0;
}

/* Positive acknowledgement of every PSN up to and including `psn`. */
static void ack_upto(struct emu_requester *rq, uint32_t psn, uint64_t now_ns)
{
	/* Ignore ACKs for PSNs never sent, and stale ones. */
	if (psn_diff(psn, rq->tx_high_psn) >= 0)
		return;
	if (psn_diff(psn, rq->acked_psn) > 0) {
		rq->acked_psn = psn;
		progress(rq, now_ns);
	}
	while (rq->count > 0) {
		struct emu_op_slot *op = op_at(rq, 0);
		if (rq->op == EMU_OP_READ || psn_diff(op_last_psn(op), rq->acked_psn) > 0)
			break;
		complete_head(rq, now_ns);
	}
}

static void cnp_received(struct emu_requester *rq, uint64_t now_ns)
{
	uint64_t floor_bps = rq->line_rate_bps / 1000 ? rq->line_rate_bps / 1000 : 1000000;

	rq->st.cnps_received++;
	if (rq->rate_bps == 0)
		rq->rate_bps = rq->line_rate_bps;
	rq->target_bps = rq->rate_bps;
	rq->rate_bps = (uint64_t)((double)rq->rate_bps * (1.0 - rq->alpha / 2));
	if (rq->rate_bps < floor_bps)
		rq->rate_bps = floor_bps;
	rq->alpha = (1 - DCQCN_G) * rq->alpha + DCQCN_G;
	rq->last_cnp_ns = rq->last_rate_update_ns = now_ns;
}

void emu_requester_rx(struct emu_requester *rq, const struct emu_hdr *h, uint64_t now_ns)
{
	if (rq->failed)
		return;
	if (h->opcode == ROCE_OPCODE_CNP) {
		cnp_received(rq, now_ns);
		return;
	}
	if (h->opcode == ROCE_OP_ACK) {
		uint8_t type = AETH_TYPE(h->syndrome);
		if (type == AETH_ACK) {
			rq->st.acks_received++;
			ack_upto(rq, h->psn, now_ns);
		} else if (type == AETH_NAK) {
			/* The NAK's PSN is the one the responder expects: everything before it arrived. */
			rq->st.naks_received++;
			if (psn_diff(h->psn, rq->tx_high_psn) >= 0)
				return;
			ack_upto(rq, psn_add(h->psn, PSN_MASK), now_ns);
			go_back(rq, h->psn);
		}
		return;
	}
	if (h->opcode >= ROCE_OP_READ_RESP_FIRST && h->opcode <= ROCE_OP_READ_RESP_ONLY) {
		struct emu_op_slot *op;
		uint32_t expect;

		if (rq->count == 0 || rq->op != EMU_OP_READ)
			return;
		op = op_at(rq, 0);
		expect = psn_add(op->first_psn, op->rd_received);
		if (h->psn == expect) {
			rq->st.read_resp_received++;
			op->rd_received++;
			rq->acked_psn = expect;
			rq->read_gap_pending = false;
			progress(rq, now_ns);
			if (op->rd_received == op->npkts)
				complete_head(rq, now_ns);
			else if (rq->tx_idx == 0 && rq->tx_pkt < op->rd_received)
				rq->tx_pkt = op->rd_received;
		} else if (psn_after(h->psn, expect) && psn_before(h->psn, rq->tx_high_psn)) {
			/* A response is missing: ask again from the first one we lack (IBA 9.7.5.1.3). */
			rq->st.read_gaps++;
			if (!rq->read_gap_pending) {
				rq->read_gap_pending = true;
				go_back(rq, expect);
			}
		}
	}
}

/* Post new operations while the window has room. */
static void post_ops(struct emu_requester *rq, uint64_t now_ns)
{
	while (rq->posting && rq->ops_left > 0 && rq->count < rq->depth) {
		struct emu_op_slot *op = op_at(rq, rq->count);
		op->first_psn = rq->next_psn;
		op->npkts = emu_pkts_for(rq->size_bytes, rq->mtu);
		op->bytes = rq->size_bytes;
		op->post_ns = now_ns;
		op->rd_received = 0;
		if (rq->count == 0 && rq->tx_idx == 0 && rq->tx_pkt == 0)
			rq->last_progress_ns = now_ns; /* the timer starts with the first packet out */
		rq->next_psn = psn_add(rq->next_psn, op->npkts);
		rq->count++;
		rq->st.ops_posted++;
		if (rq->ops_left != UINT64_MAX)
			rq->ops_left--;
	}
}

static uint8_t write_send_opcode(enum emu_op op, uint32_t idx, uint32_t npkts)
{
	bool write = op == EMU_OP_WRITE;

	if (npkts == 1)
		return write ? ROCE_OP_WRITE_ONLY : ROCE_OP_SEND_ONLY;
	if (idx == 0)
		return write ? ROCE_OP_WRITE_FIRST : ROCE_OP_SEND_FIRST;
	if (idx == npkts - 1)
		return write ? ROCE_OP_WRITE_LAST : ROCE_OP_SEND_LAST;
	return write ? ROCE_OP_WRITE_MIDDLE : ROCE_OP_SEND_MIDDLE;
}

size_t emu_requester_tx(struct emu_requester *rq, uint64_t now_ns, uint8_t *buf, size_t cap,
			uint64_t *wake_ns)
{
	struct emu_op_slot *op;
	struct emu_hdr ext = { 0 };
	uint32_t psn, payload;
	uint8_t opcode;
	bool ack_req;
	size_t len;

	*wake_ns = UINT64_MAX;
	if (rq->failed || cap < EMU_MAX_PKT)
		return 0;
	post_ops(rq, now_ns);
	for (;;) {
		if (rq->tx_idx >= rq->count)
			return 0;
		op = op_at(rq, rq->tx_idx);
		if (rq->op == EMU_OP_READ && rq->tx_pkt < op->rd_received)
			rq->tx_pkt = op->rd_received;
		psn = psn_add(op->first_psn, rq->tx_pkt);
		/* Skip what the responder already acknowledged (a late ACK after go-back-N). */
		if (rq->op != EMU_OP_READ && psn_diff(psn, rq->acked_psn) <= 0) {
			if (++rq->tx_pkt >= op->npkts) {
				rq->tx_idx++;
				rq->tx_pkt = 0;
			}
			continue;
		}
		break;
	}
	if (rq->rate_bps && now_ns < rq->next_tx_ns) {
		*wake_ns = rq->next_tx_ns;
		return 0;
	}
	if (rq->tx_idx == 0 && psn_diff(psn, rq->acked_psn) == 1)
		rq->last_progress_ns = now_ns > rq->last_progress_ns ? now_ns : rq->last_progress_ns;

	if (rq->op == EMU_OP_READ) {
		uint64_t off = (uint64_t)rq->tx_pkt * rq->mtu;
		opcode = ROCE_OP_READ_REQUEST;
		ext.va = EMU_VA_BASE + off;
		ext.rkey = EMU_RKEY;
		ext.dma_len = (uint32_t)(op->bytes > off ? op->bytes - off : 0);
		len = build_pkt(buf, &rq->path, opcode, rq->dest_qpn, psn, true, 0, &ext, 0);
		if (psn_before(psn, rq->tx_high_psn))
			rq->st.pkts_retransmitted++;
		if (psn_diff(psn_add(op->first_psn, op->npkts), rq->tx_high_psn) > 0)
			rq->tx_high_psn = psn_add(op->first_psn, op->npkts);
		rq->tx_idx++;
		rq->tx_pkt = 0;
	} else {
		uint64_t off = (uint64_t)rq->tx_pkt * rq->mtu;
		opcode = write_send_opcode(rq->op, rq->tx_pkt, op->npkts);
		payload = (uint32_t)(op->bytes - off < rq->mtu ? op->bytes - off : rq->mtu);
		ack_req = rq->tx_pkt == op->npkts - 1;
		ext.va = EMU_VA_BASE;
		ext.rkey = EMU_RKEY;
		ext.dma_len = op->bytes;
		len = build_pkt(buf, &rq->path, opcode, rq->dest_qpn, psn, ack_req, 0, &ext, payload);
		if (psn_before(psn, rq->tx_high_psn))
			rq->st.pkts_retransmitted++;
		else
			rq->tx_high_psn = psn_add(psn, 1);
		if (++rq->tx_pkt >= op->npkts) {
			rq->tx_idx++;
			rq->tx_pkt = 0;
		}
	}
	rq->st.pkts_sent++;
	if (rq->rate_bps) {
		uint64_t gap_ns = (uint64_t)((double)(len + 66) * 8e9 / (double)rq->rate_bps);
		rq->next_tx_ns = (rq->next_tx_ns > now_ns ? rq->next_tx_ns : now_ns) + gap_ns;
	}
	return len;
}

uint64_t emu_requester_timer(struct emu_requester *rq, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;

	if (rq->failed)
		return UINT64_MAX;
	/* DCQCN rate recovery: halfway back to the target every period without a CNP. */
	if (rq->rate_bps) {
		if (now_ns - rq->last_rate_update_ns >= DCQCN_PERIOD_NS) {
			rq->alpha *= 1 - DCQCN_G;
			if (rq->target_bps < rq->line_rate_bps)
				rq->target_bps += rq->line_rate_bps / 64;
			if (rq->target_bps > rq->line_rate_bps)
				rq->target_bps = rq->line_rate_bps;
			rq->rate_bps = (rq->rate_bps + rq->target_bps) / 2;
			rq->last_rate_update_ns = now_ns;
			if (rq->rate_bps >= rq->line_rate_bps - rq->line_rate_bps / 100)
				rq->rate_bps = 0; /* back to line rate: stop pacing */
		}
		if (rq->rate_bps)
			next = rq->last_rate_update_ns + DCQCN_PERIOD_NS;
	}
	/* Local ACK timeout: only while something is in flight. */
	if (rq->count > 0 && (rq->tx_idx > 0 || rq->tx_pkt > 0)) {
		uint64_t deadline = rq->last_progress_ns + rq->timeout_ns;
		if (now_ns >= deadline) {
			struct emu_op_slot *op = op_at(rq, 0);
			uint32_t from;

			rq->st.timeouts++;
			if (++rq->retries > rq->retry_cnt) {
				rq->failed = true;
				return UINT64_MAX;
			}
			if (rq->op == EMU_OP_READ)
				from = psn_add(op->first_psn, op->rd_received);
			else
				from = psn_add(rq->acked_psn, 1);
			go_back(rq, from);
			rq->read_gap_pending = false;
			rq->last_progress_ns = now_ns;
			deadline = now_ns + rq->timeout_ns;
		}
		if (deadline < next)
			next = deadline;
	}
	return next;
}

/* ---- responder ---- */

void emu_responder_init(struct emu_responder *rs, uint32_t expected_psn)
{
	if (rs->mtu == 0 || rs->mtu > EMU_MAX_MTU)
		rs->mtu = 1024;
	rs->epsn = expected_psn & PSN_MASK;
	rs->msn = 0;
	rs->nak_sent_for_gap = false;
	rs->ack_pending = rs->nak_pending = rs->cnp_pending = false;
	rs->last_cnp_ns = 0;
	rs->rd_head = rs->rd_count = 0;
	memset(&rs->st, 0, sizeof(rs->st));
}

static void queue_read(struct emu_responder *rs, uint32_t psn, uint32_t dma_len)
{
	struct emu_read_job *job;

	if (rs->rd_count == EMU_MAX_DEPTH)
		return; /* the requester's window is smaller; a retry will come */
	job = &rs->reads[(rs->rd_head + rs->rd_count) % EMU_MAX_DEPTH];
	job->psn = psn;
	job->total_pkts = job->npkts_left = emu_pkts_for(dma_len, rs->mtu);
	job->bytes_left = dma_len;
	job->index = 0;
	rs->rd_count++;
}

void emu_responder_rx(struct emu_responder *rs, const struct emu_hdr *h, uint64_t now_ns)
{
	int32_t d;

	if (!opcode_is_request(h->opcode))
		return;
	rs->st.pkts_received++;
	if (h->ecn == 3) {
		rs->st.ce_received++;
		if (rs->last_cnp_ns == 0 || now_ns - rs->last_cnp_ns >= rs->cnp_interval_ns)
			rs->cnp_pending = true;
	}
	d = psn_diff(h->psn, rs->epsn);
	if (d == 0) {
		rs->nak_sent_for_gap = false;
		if (h->opcode == ROCE_OP_READ_REQUEST) {
			uint32_t n = emu_pkts_for(h->dma_len, rs->mtu);
			queue_read(rs, h->psn, h->dma_len);
			rs->epsn = psn_add(rs->epsn, n);
			rs->msn = psn_add(rs->msn, 1);
			rs->st.ops_received++;
			rs->st.bytes_received += h->dma_len;
			return;
		}
		rs->epsn = psn_add(rs->epsn, 1);
		rs->st.bytes_received += h->payload_bytes;
		if (opcode_ends_message(h->opcode)) {
			rs->msn = psn_add(rs->msn, 1);
			rs->st.ops_received++;
		}
		if (h->ack_req)
			rs->ack_pending = true;
	} else if (d > 0) {
		/* A gap: drop, and NAK once until the missing packet arrives (IBA 9.7.5.2.2). */
		rs->st.out_of_seq++;
		if (!rs->nak_sent_for_gap) {
			rs->nak_pending = true;
			rs->nak_sent_for_gap = true;
		}
	} else {
		rs->st.dup_pkts++;
		if (h->opcode == ROCE_OP_READ_REQUEST) {
			/*
			 * Duplicate READ: execute it again. Responses still queued at or after its PSN
			 * are superseded (the requester asks again for those too, in order).
			 */
			while (rs->rd_count > 0) {
				struct emu_read_job *tail =
					&rs->reads[(rs->rd_head + rs->rd_count - 1) % EMU_MAX_DEPTH];
				if (psn_diff(tail->psn, h->psn) < 0)
					break;
				rs->rd_count--;
			}
			queue_read(rs, h->psn, h->dma_len);
		} else {
			rs->ack_pending = true; /* re-acknowledge so the requester moves on */
		}
	}
}

size_t emu_responder_tx(struct emu_responder *rs, uint64_t now_ns, uint8_t *buf, size_t cap)
{
	struct emu_hdr ext = { 0 };

	if (cap < EMU_MAX_PKT)
		return 0;
	if (rs->nak_pending) {
		rs->nak_pending = false;
		rs->st.naks_sent++;
		ext.syndrome = EMU_AETH_NAK_PSN_SEQ;
		ext.msn = rs->msn;
		return build_pkt(buf, &rs->path, ROCE_OP_ACK, rs->dest_qpn, rs->epsn, false, 0, &ext, 0);
	}
	if (rs->rd_count > 0) {
		struct emu_read_job *job = &rs->reads[rs->rd_head];
		uint32_t payload = job->bytes_left < rs->mtu ? job->bytes_left : rs->mtu;
		uint8_t opcode;
		uint32_t psn = job->psn;
		size_t len;

		if (job->total_pkts == 1)
			opcode = ROCE_OP_READ_RESP_ONLY;
		else if (job->index == 0)
			opcode = ROCE_OP_READ_RESP_FIRST;
		else if (job->index == job->total_pkts - 1)
			opcode = ROCE_OP_READ_RESP_LAST;
		else
			opcode = ROCE_OP_READ_RESP_MIDDLE;
		ext.syndrome = EMU_AETH_ACK_NO_CREDIT;
		ext.msn = rs->msn;
		len = build_pkt(buf, &rs->path, opcode, rs->dest_qpn, psn, false, 0, &ext, payload);
		job->psn = psn_add(job->psn, 1);
		job->bytes_left -= payload;
		job->index++;
		if (--job->npkts_left == 0) {
			rs->rd_head = (rs->rd_head + 1) % EMU_MAX_DEPTH;
			rs->rd_count--;
		}
		rs->st.read_resp_sent++;
		return len;
	}
	if (rs->ack_pending) {
		rs->ack_pending = false;
		rs->st.acks_sent++;
		ext.syndrome = EMU_AETH_ACK_NO_CREDIT;
		ext.msn = rs->msn;
		return build_pkt(buf, &rs->path, ROCE_OP_ACK, rs->dest_qpn, psn_add(rs->epsn, PSN_MASK),
				 false, 0, &ext, 0);
	}
	if (rs->cnp_pending) {
		rs->cnp_pending = false;
		rs->last_cnp_ns = now_ns;
		rs->st.cnps_sent++;
		/* CNP (RoCE v2 Annex A17.9.3): BECN set, PSN 0, 16 reserved bytes. */
		return build_pkt(buf, &rs->path, ROCE_OPCODE_CNP, rs->dest_qpn, 0, false, 0x40, &ext, 0);
	}
	return 0;
}
