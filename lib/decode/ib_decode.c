/* ib_decode.c: native InfiniBand frames (LRH, GRH, then roce_decode.c's BTH) and ERF records. */
#include <pcap/dlt.h>
#include <stdbool.h>
#include <string.h>

#include "lib/decode/ib_decode.h"
#include "lib/decode/roce_decode_int.h"
#include "lib/util/util.h"

#define LRH_LEN 8
#define GRH_LEN 40
#define VCRC_LEN 2
#define LNH_IBA_LOCAL 2		/* BTH follows the LRH */
#define LNH_IBA_GLOBAL 3	/* GRH, then BTH */

/*
 * Local Route Header (IBA 7.7, figure 28), 8 bytes:
 *   +-------+-------+-------+---+---+-------------------------------+
 *   |  VL   | LVer  |  SL   |Rsv|LNH|          DLID                 |
 *   +-------+-------+-------+---+---+-------------------------------+
 *   | Rsv5    | PktLen (11 bits, 4-byte words) |       SLID         |
 *   +---------+--------------------------------+--------------------+
 * LNH: 0 raw, 1 IPv6 (non-IBA transports), 2 BTH follows, 3 GRH follows. PktLen counts
 * the LRH up to and including the ICRC; the 2-byte VCRC follows it.
 */
static int dissect_lrh(struct byte_reader *br, struct roce_pkt *pkt)
{
	uint8_t vl_lver = br_u8(br);
	uint8_t sl_lnh = br_u8(br);

	pkt->ib_dlid = br_be16(br);
	pkt->ib_pkt_len = (uint16_t)((br_be16(br) & 0x07ffu) * 4u);
	pkt->ib_slid = br_be16(br);
	if (br->short_read || (vl_lver & 0x0f) != 0)
		return ROCE_DECODE_BAD_LINK;
	pkt->ib_vl = vl_lver >> 4;
	pkt->ib_sl = sl_lnh >> 4;
	pkt->ib_lnh = sl_lnh & 0x3;
	if (pkt->ib_lnh != LNH_IBA_LOCAL && pkt->ib_lnh != LNH_IBA_GLOBAL)
		return ROCE_DECODE_NOT_ROCE; /* raw or non-IBA transport */
	if (pkt->ib_pkt_len < LRH_LEN)
		return ROCE_DECODE_BAD_LINK;
	return 0;
}

/* An InfiniBand packet from its LRH: the link header, an optional GRH, the transport. */
static int decode_lrh_frame(struct byte_reader *br, struct roce_pkt *pkt)
{
	uint32_t ib_wire_len, grh_paylen, grh_end;
	int rc = dissect_lrh(br, pkt);

	if (rc)
		return rc;
	pkt->roce_version = 0;
	pkt->ip_hdr_off = LRH_LEN;
	ib_wire_len = pkt->ib_pkt_len - LRH_LEN;
	if (pkt->ib_lnh == LNH_IBA_GLOBAL) {
		rc = roce_dissect_grh(br, pkt, &grh_paylen, &grh_end);
		if (rc)
			return rc;
		if (ib_wire_len < GRH_LEN)
			return ROCE_DECODE_BAD_GRH;
		ib_wire_len -= GRH_LEN;
	} else {
		/* No GRH: the LIDs are the addresses the flows are keyed by. */
		addr_from_lid(pkt->src_ip, pkt->ib_slid);
		addr_from_lid(pkt->dst_ip, pkt->ib_dlid);
	}
	roce_set_wire_len(pkt, pkt->ib_pkt_len + VCRC_LEN);
	/* Captured bytes past the ICRC (the VCRC) are not transport bytes. */
	if (br->len - br->off > ib_wire_len)
		br->len = br->off + ib_wire_len;
	rc = roce_dissect_ib_transport(br, ib_wire_len, pkt);
	/* IB congestion control (IBA annex A10) marks the BTH FECN bit where RoCE marks IP
	 * ECN-CE; the GRH traffic class carries no ECN. One meaning for the tracker: CE. */
	pkt->ecn = pkt->fecn ? 3 : 0;
	return rc;
}

/* ERF fixed-point time (seconds in the high 32 bits) to ns, rounded as Wireshark does. */
static uint64_t erf_time_ns(uint64_t ts)
{
	uint64_t frac_ns = ((ts & 0xffffffffu) * 1000000000u + 0x80000000u) >> 32;

	return (ts >> 32) * 1000000000u + frac_ns;
}

/*
 * ERF record header (Endace ERF types reference, "generic ERF header"), 16 bytes, then
 * 8-byte extension headers while the previous one's top bit says more follow:
 *   +---------------------------------------------------------------+
 *   |        timestamp (64-bit little-endian fixed point)           |
 *   +---------------+---------------+-------------------------------+
 *   |X|   type      |    flags      |      record length (rlen)     |
 *   +---------------+---------------+-------------------------------+
 *   |  loss counter / color         |      wire length (wlen)       |
 *   +-------------------------------+-------------------------------+
 * flags bits 1-0: capture interface. rlen counts the whole record, padding included.
 * Leaves br at the payload, cut to rlen and to the wire length.
 */
static int dissect_erf(struct byte_reader *br, struct roce_pkt *pkt, uint16_t *wlen,
		       size_t *hdr_len)
{
	size_t start = br->off;
	uint64_t ts;
	uint16_t rlen;
	uint8_t type, more;
	size_t end;

	if (!br_has(br, ERF_HDR_LEN))
		return ROCE_DECODE_BAD_LINK;
	ts = (uint64_t)get_le32(br_ptr(br) + 4) << 32 | get_le32(br_ptr(br));
	br_skip(br, 8);
	type = br_u8(br);
	pkt->erf_port = br_u8(br) & 0x3;
	rlen = br_be16(br);
	br_skip(br, 2);
	*wlen = br_be16(br);
	for (more = type & 0x80; more;) {
		more = br_has(br, 1) ? br_ptr(br)[0] & 0x80 : 0;
		if (!br_skip(br, ERF_EXT_HDR_LEN))
			return ROCE_DECODE_BAD_LINK;
	}
	pkt->erf_type = type & 0x7f;
	*hdr_len = br->off - start;
	if (rlen < *hdr_len)
		return ROCE_DECODE_BAD_LINK;
	if (ts)
		pkt->ts_ns = erf_time_ns(ts);
	/* What the record holds: no more than rlen, and no more than its capture. */
	end = start + rlen;
	if (end < br->len)
		br->len = end;
	return 0;
}

/*
 * An ERF record around Ethernet or IP: the frame inside through roce_decode_frame(). As for a
 * mirror tunnel, cap_len, orig_len and ip_hdr_off then describe the frame inside the record.
 */
static int decode_erf_inner(const struct roce_decode_opts *opts, int inner_linktype,
			    struct byte_reader *br, uint32_t wire_len, struct roce_pkt *out)
{
	struct roce_pkt erf = *out;
	size_t cap = br_remaining(br) < wire_len ? br_remaining(br) : wire_len;
	int rc;

	rc = roce_decode_frame(opts, inner_linktype, br_ptr(br), cap, wire_len, erf.ts_ns, out);
	out->linktype = DLT_ERF;
	out->erf_type = erf.erf_type;
	out->erf_port = erf.erf_port;
	return rc;
}

static int decode_erf_record(const struct roce_decode_opts *opts, struct byte_reader *br,
			     struct roce_pkt *pkt)
{
	uint16_t wlen;
	size_t hdr_len;
	int rc = dissect_erf(br, pkt, &wlen, &hdr_len);

	if (rc)
		return rc;
	switch (pkt->erf_type) {
	case ERF_TYPE_INFINIBAND:
		break;
	case ERF_TYPE_ETH:
	case ERF_TYPE_COLOR_ETH:
	case ERF_TYPE_DSM_COLOR_ETH:
	case ERF_TYPE_COLOR_HASH_ETH:
		if (!br_skip(br, ERF_ETH_PAD))
			return ROCE_DECODE_BAD_LINK;
		return decode_erf_inner(opts, DLT_EN10MB, br, wlen, pkt);
	case ERF_TYPE_IPV4:
		return decode_erf_inner(opts, DLT_IPV4, br, wlen, pkt);
	case ERF_TYPE_IPV6:
		return decode_erf_inner(opts, DLT_IPV6, br, wlen, pkt);
	default:
		return ROCE_DECODE_NOT_ROCE; /* link (flow control) packets, ATM, POS, ... */
	}

	/* The IB packet: its own captured and wire lengths, as Wireshark shows them. */
	if (br_remaining(br) > wlen)
		br->len = br->off + wlen;
	pkt->orig_len = wlen;
	pkt->cap_len = (uint32_t)br_remaining(br);
	return decode_lrh_frame(br, pkt);
}

int ib_decode_frame(const struct roce_decode_opts *opts, int linktype, struct byte_reader *br,
		    struct roce_pkt *out)
{
	if (linktype == DLT_ERF)
		return decode_erf_record(opts, br, out);
	return decode_lrh_frame(br, out);
}
