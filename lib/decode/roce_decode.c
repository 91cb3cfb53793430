/* roce_decode.c: one captured frame -> struct roce_pkt (link, IP, UDP/GRH, BTH, extended headers, CM). */
#include <arpa/inet.h>
#include <pcap/dlt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/util/byte_reader.h"
#include "lib/decode/roce_decode.h"
#include "lib/decode/roce_decode_int.h"
#include "lib/decode/ib_decode.h"

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_VLAN 0x8100	/* 802.1Q C-tag */
#define ETHERTYPE_QINQ 0x88a8	/* 802.1ad S-tag */
#define ETHERTYPE_QINQ_OLD 0x9100 /* pre-standard S-tag, still seen on switches */
#define LINKTYPE_RAW_NUMBER 101 /* LINKTYPE_RAW as written in files, if a caller passes it unmapped */

#define IPPROTO_UDP_NUMBER 17
#define IPPROTO_GRE_NUMBER 47
#define VXLAN_UDP_PORT 4789
#define IB_NEXT_HEADER_BTH 0x1b	/* GRH NxtHdr: IBA transport (IBA 8.3.1) */
#define BTH_LEN 12
#define ICRC_LEN 4
#define GRH_LEN 40
#define MAD_HDR_LEN 24
#define MAD_CLASS_CM 0x07
#define MAX_VLAN_TAGS 4
#define MAX_IPV6_EXT_HDRS 8

/* ---------------------------------------------------------------------------------------- */
/* Value-to-name tables (data, not switch ladders).                                          */

/* What one opcode is called and which extended headers follow its BTH (IBA 9.2, table 38). */
struct opcode_info {
	const char *name;
	uint16_t headers; /* ROCE_H_* after the BTH (and BTH_H_CNP_RESERVED) */
	uint8_t ext_len;  /* bytes of the extended headers among them (not the CNP's reserved 16) */
};

/* The table is bth_opcodes.h's, shared with the XDP program; its headers are ROCE_H_* bits. */
#define OPCODE_INFO(op, name, hdrs) \
	[op] = { name, hdrs, BTH_HEADERS_LEN((hdrs) & ~BTH_H_CNP_RESERVED) },
static const struct opcode_info opcode_table[256] = { BTH_OPCODES(OPCODE_INFO) };

static const char *const transport_names[8] = {
	[ROCE_TR_RC] = "RC",   [ROCE_TR_UC] = "UC",	  [ROCE_TR_RD] = "RD",
	[ROCE_TR_UD] = "UD",   [ROCE_TR_CNP] = "CNP",	  [ROCE_TR_XRC] = "XRC",
	[ROCE_TR_MLX_DC] = "Mellanox DC", [ROCE_TR_VENDOR] = "vendor",
};

static const char *const status_names[] = {
	[0] = "ok",	      [1] = "not-roce",	     [2] = "bad-link", [3] = "bad-ip",
	[4] = "bad-udp",      [5] = "bad-bth",	     [6] = "bad-ext",  [7] = "bad-grh",
	[8] = "bad-encap",
};

static const char *const encap_names[ROCE_ENCAP_MAX + 1] = {
	[ROCE_ENCAP_NONE] = "none",	    [ROCE_ENCAP_ERSPAN1] = "erspan1",
	[ROCE_ENCAP_ERSPAN2] = "erspan2",   [ROCE_ENCAP_ERSPAN3] = "erspan3",
	[ROCE_ENCAP_GRE_TEB] = "gre",	    [ROCE_ENCAP_VXLAN] = "vxlan",
};

/* NAK codes (IBA 9.3.5, table 43). */
static const char *const nak_names[] = {
	[NAK_PSN_SEQ_ERROR] = "NAK PSN sequence error",
	[NAK_INVALID_REQUEST] = "NAK invalid request",
	[NAK_REMOTE_ACCESS_ERROR] = "NAK remote access error",
	[NAK_REMOTE_OP_ERROR] = "NAK remote operational error",
	[NAK_INVALID_RD_REQUEST] = "NAK invalid RD request",
};

/*
 * CM messages on QP1 (IBA 12.6): where each keeps the fields we lift, as byte offsets after
 * the 24-byte MAD header; -1 = absent. REQ is table 106 (12.6.5), MRA 107, REJ 108, REP 110
 * (12.6.8), RTU 111, DREQ 112, DREP 113.
 */
struct cm_layout {
	uint16_t attr_id;
	const char *name;
	int16_t remote_comm_id_off;
	int16_t local_qpn_off;	/* 24 bits in the top of a 32-bit word */
	int16_t start_psn_off;	/* 24 bits in the top of a 32-bit word */
	int16_t remote_qpn_off;	/* DREQ: remote QPN/EECN */
	int16_t rej_reason_off;
};

static const struct cm_layout cm_layouts[] = {
	{ CM_ATTR_REQ, "REQ", -1, 32, 44, -1, -1 },
	{ CM_ATTR_MRA, "MRA", 4, -1, -1, -1, -1 },
	{ CM_ATTR_REJ, "REJ", 4, -1, -1, -1, 10 },
	{ CM_ATTR_REP, "REP", 4, 12, 20, -1, -1 },
	{ CM_ATTR_RTU, "RTU", 4, -1, -1, -1, -1 },
	{ CM_ATTR_DREQ, "DREQ", 4, -1, -1, 8, -1 },
	{ CM_ATTR_DREP, "DREP", 4, -1, -1, -1, -1 },
};

/* ---------------------------------------------------------------------------------------- */
/* Names.                                                                                    */

int roce_opcode_known(uint8_t opcode)
{
	return opcode_table[opcode].name != NULL;
}

const char *roce_opcode_name(uint8_t opcode)
{
	if (opcode_table[opcode].name)
		return opcode_table[opcode].name;
	if (opcode >= 0xc0 && opcode <= 0xdf)
		return "Mellanox DC (vendor)";
	if (opcode >= 0xe0)
		return "vendor specific";
	return "reserved";
}

const char *roce_transport_name(uint8_t transport)
{
	return transport < 8 ? transport_names[transport] : "unknown";
}

const char *roce_decode_status_name(int status)
{
	int idx = status >= 0 ? status : 1 - status;

	if (status < ROCE_DECODE_STATUS_MIN || status > ROCE_DECODE_NOT_ROCE ||
	    idx >= (int)(sizeof(status_names) / sizeof(status_names[0])))
		return "unknown";
	return status_names[idx];
}

const char *roce_aeth_name(uint8_t syndrome)
{
	uint8_t code = syndrome & 0x1f;

	switch (AETH_TYPE(syndrome)) {
	case AETH_ACK:
		return "ACK";
	case AETH_RNR_NAK:
		return "RNR NAK";
	case AETH_NAK:
		if (code < sizeof(nak_names) / sizeof(nak_names[0]))
			return nak_names[code];
		return "NAK reserved code";
	default:
		return "reserved";
	}
}

const char *roce_cm_attr_name(uint16_t attr_id)
{
	for (size_t i = 0; i < sizeof(cm_layouts) / sizeof(cm_layouts[0]); i++)
		if (cm_layouts[i].attr_id == attr_id)
			return cm_layouts[i].name;
	return NULL;
}

const char *roce_encap_name(uint8_t encap)
{
	return encap <= ROCE_ENCAP_MAX ? encap_names[encap] : "unknown";
}

void roce_decode_opts_default(struct roce_decode_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->udp_ports[0] = ROCE_V2_UDP_PORT;
	opts->vxlan_port = VXLAN_UDP_PORT;
}

static bool is_roce_port(const struct roce_decode_opts *opts, uint16_t dport)
{
	if (!opts)
		return dport == ROCE_V2_UDP_PORT;
	for (size_t i = 0; i < sizeof(opts->udp_ports) / sizeof(opts->udp_ports[0]); i++) {
		if (opts->udp_ports[i] == 0)
			break;
		if (opts->udp_ports[i] == dport)
			return true;
	}
	return false;
}

static void v4_mapped(uint8_t dst[16], const uint8_t *v4)
{
	memset(dst, 0, 10);
	dst[10] = dst[11] = 0xff;
	memcpy(dst + 12, v4, 4);
}

/*
 * The record starts all zero. Not one memset: gcc makes it `rep stos`, whose start-up cost
 * was a third of the decoder's time (perf annotate); 16-byte stores instead.
 */
static void pkt_clear(struct roce_pkt *pkt)
{
	uint8_t *b = (uint8_t *)pkt;
	size_t i;

	for (i = 0; i + 16 <= sizeof(*pkt); i += 16)
		memset(b + i, 0, 16);
	memset(b + i, 0, sizeof(*pkt) - i);
}

static void br_copy(struct byte_reader *br, uint8_t *dst, size_t n)
{
	if (!br_has(br, n)) {
		br->short_read = true;
		br->off = br->len;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, br_ptr(br), n);
	br->off += n;
}

/* ---------------------------------------------------------------------------------------- */
/* Link layer. Each returns 0 with *ethertype set and the reader at the network header.      */

/*
 * 802.1Q / 802.1ad tags (IEEE 802.1Q-2018 9.6), any number up to MAX_VLAN_TAGS:
 *   +----------------+----------------+
 *   | PCP|DEI| VID   |  inner EtherType|
 *   +----------------+----------------+
 * The outermost VID is kept; two or more tags set ROCE_F_QINQ.
 */
static int dissect_vlan_tags(struct byte_reader *br, struct roce_pkt *pkt, uint16_t *ethertype)
{
	int tags = 0;

	while (*ethertype == ETHERTYPE_VLAN || *ethertype == ETHERTYPE_QINQ ||
	       *ethertype == ETHERTYPE_QINQ_OLD) {
		uint16_t tci = br_be16(br);
		*ethertype = br_be16(br);
		if (br->short_read || ++tags > MAX_VLAN_TAGS)
			return ROCE_DECODE_BAD_LINK;
		if (tags == 1) {
			pkt->vlan_id = tci & 0x0fff;
			pkt->flags |= ROCE_F_VLAN;
		} else {
			pkt->flags |= ROCE_F_QINQ;
		}
	}
	return 0;
}

/*
 * Ethernet II (IEEE 802.3 clause 3.2.6):
 *   +-------------------+-------------------+-----------+
 *   | destination MAC 6 | source MAC 6      | EtherType |  (then optional 802.1Q tags)
 *   +-------------------+-------------------+-----------+
 */
static int dissect_ethernet(struct byte_reader *br, struct roce_pkt *pkt, uint16_t *ethertype)
{
	if (!br_has(br, 14)) {
		*ethertype = 0;
		return ROCE_DECODE_BAD_LINK;
	}
	*ethertype = get_be16(br_ptr(br) + 12);
	br->off += 14;
	return dissect_vlan_tags(br, pkt, ethertype);
}

/*
 * Linux cooked capture v1 (DLT_LINUX_SLL, tcpdump.org/linktypes/LINKTYPE_LINUX_SLL.html):
 *   +----------+----------+----------+---------------------+----------+
 *   | pkttype 2| ARPHRD 2 | addrlen 2| link-layer address 8| protocol |
 *   +----------+----------+----------+---------------------+----------+
 */
static int dissect_sll(struct byte_reader *br, struct roce_pkt *pkt, uint16_t *ethertype)
{
	br_skip(br, 14);
	*ethertype = br_be16(br);
	if (br->short_read)
		return ROCE_DECODE_BAD_LINK;
	return dissect_vlan_tags(br, pkt, ethertype);
}

/*
 * Linux cooked capture v2 (DLT_LINUX_SLL2, tcpdump.org/linktypes/LINKTYPE_LINUX_SLL2.html):
 *   +----------+----------+-----------+----------+---------+---------+-------------+
 *   | protocol | reserved | ifindex 4 | ARPHRD 2 | pkttype | addrlen | address 8   |
 *   +----------+----------+-----------+----------+---------+---------+-------------+
 */
static int dissect_sll2(struct byte_reader *br, struct roce_pkt *pkt, uint16_t *ethertype)
{
	*ethertype = br_be16(br);
	br_skip(br, 18);
	if (br->short_read)
		return ROCE_DECODE_BAD_LINK;
	return dissect_vlan_tags(br, pkt, ethertype);
}

/* Raw IP (DLT_RAW): the version nibble says IPv4 or IPv6. */
static int dissect_raw_ip(struct byte_reader *br, struct roce_pkt *pkt, uint16_t *ethertype)
{
	if (!br_has(br, 1))
		return ROCE_DECODE_BAD_LINK;
	switch (br_ptr(br)[0] >> 4) {
	case 4:
		*ethertype = ETHERTYPE_IPV4;
		return 0;
	case 6:
		*ethertype = ETHERTYPE_IPV6;
		return 0;
	default:
		return ROCE_DECODE_BAD_IP;
	}
}

static int dissect_raw_ipv4(struct byte_reader *br, struct roce_pkt *pkt, uint16_t *ethertype)
{
	*ethertype = ETHERTYPE_IPV4;
	return 0;
}

static int dissect_raw_ipv6(struct byte_reader *br, struct roce_pkt *pkt, uint16_t *ethertype)
{
	*ethertype = ETHERTYPE_IPV6;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Network layer. Each fills the addresses and returns the wire length of what follows.     */

struct l3_result {
	uint32_t l4_wire_len;	/* bytes after the IP header and its extensions, on the wire */
	uint32_t l3_wire_end;	/* offset in the frame where the IP datagram ends, on the wire */
	uint8_t l4_proto;
};

/*
 * IPv4 header (RFC 791 section 3.1):
 *    0                   1                   2                   3
 *   +-------+-------+---------------+-------------------------------+
 *   |Version|  IHL  |DSCP       |ECN|          Total Length         |
 *   +-------+-------+---------------+-----+-------------------------+
 *   |         Identification        |Flags|      Fragment Offset    |
 *   +---------------+---------------+-----+-------------------------+
 *   |  Time to Live |    Protocol   |         Header Checksum       |
 *   +---------------+---------------+-------------------------------+
 *   |                  Source and Destination Address               |
 *   +---------------------------------------------------------------+
 *   |                    Options (IHL > 5)                          |
 */
static int dissect_ipv4(struct byte_reader *br, struct roce_pkt *pkt, struct l3_result *l3)
{
	size_t start = br->off;
	const uint8_t *q = br_ptr(br);
	uint8_t ver_ihl, tos;
	uint16_t total_len, frag, hdr_len;

	if (!br_has(br, 20)) {
		/* Short: the bytes that are there are read as they always were, then the error. */
		br_skip(br, 8);
		pkt->ttl = br_u8(br);
		return ROCE_DECODE_BAD_IP;
	}
	/* The fixed header at once: one bounds check and one move of the reader, not eleven. */
	ver_ihl = q[0];
	tos = q[1];
	total_len = get_be16(q + 2);
	frag = get_be16(q + 6);
	pkt->ttl = q[8];
	l3->l4_proto = q[9];
	v4_mapped(pkt->src_ip, q + 12);
	v4_mapped(pkt->dst_ip, q + 16);
	br->off += 20;

	hdr_len = (ver_ihl & 0x0f) * 4;
	if (ver_ihl >> 4 != 4 || hdr_len < 20 || total_len < hdr_len)
		return ROCE_DECODE_BAD_IP;
	if (hdr_len > 20) {
		pkt->flags |= ROCE_F_IPV4_OPTIONS;
		if (!br_skip(br, hdr_len - 20u))
			return ROCE_DECODE_BAD_IP;
	}
	pkt->ip_version = 4;
	pkt->dscp = tos >> 2;
	pkt->ecn = tos & 0x3;
	/* A fragment (MF set or an offset) is not a whole RoCE packet: RoCE v2 sets DF. */
	if (frag & 0x3fff)
		return ROCE_DECODE_NOT_ROCE;
	l3->l4_wire_len = total_len - hdr_len;
	l3->l3_wire_end = (uint32_t)start + total_len;
	return 0;
}

/*
 * IPv6 header (RFC 8200 section 3) and the extension headers that may sit before UDP
 * (section 4: hop-by-hop 0, routing 43, fragment 44, destination options 60, AH 51 per
 * RFC 4302, mobility 135, HIP 139, shim6 140):
 *   +-------+---------------+---------------------------------------+
 *   |Version| Traffic Class |               Flow Label              |
 *   +-------+---------------+-------+---------------+---------------+
 *   |         Payload Length        |  Next Header  |   Hop Limit   |
 *   +-------------------------------+---------------+---------------+
 *   |              Source Address (16), Destination Address (16)   |
 */
static int dissect_ipv6(struct byte_reader *br, struct roce_pkt *pkt, struct l3_result *l3)
{
	size_t start = br->off;
	uint32_t word = br_be32(br);
	uint16_t payload_len = br_be16(br);
	uint8_t next = br_u8(br);
	uint32_t ext_len = 0;

	pkt->ttl = br_u8(br); /* hop limit */
	br_copy(br, pkt->src_ip, 16);
	br_copy(br, pkt->dst_ip, 16);
	if (br->short_read || word >> 28 != 6)
		return ROCE_DECODE_BAD_IP;
	pkt->ip_version = 6;
	pkt->grh_tclass = (word >> 20) & 0xff;
	pkt->grh_flow_label = word & 0xfffff;
	pkt->dscp = (word >> 22) & 0x3f;
	pkt->ecn = (word >> 20) & 0x3;
	/* Payload length 0 means a jumbogram (RFC 2675): not something RoCE sends. */
	if (payload_len == 0)
		return ROCE_DECODE_BAD_IP;

	for (int i = 0; next != IPPROTO_UDP_NUMBER && next != IPPROTO_GRE_NUMBER; i++) {
		uint8_t hdr_next, hdr_units;
		uint32_t len;

		if (i == MAX_IPV6_EXT_HDRS)
			return ROCE_DECODE_NOT_ROCE;
		if (next != 0 && next != 43 && next != 44 && next != 60 && next != 51 &&
		    next != 135 && next != 139 && next != 140)
			return ROCE_DECODE_NOT_ROCE;
		if (!br_has(br, 8))
			return ROCE_DECODE_BAD_IP;
		hdr_next = br_ptr(br)[0];
		hdr_units = br_ptr(br)[1];
		if (next == 44) {
			/* Fragment header: only an unfragmented "atomic fragment" holds a whole packet. */
			uint16_t off_m = (uint16_t)(br_ptr(br)[2] << 8 | br_ptr(br)[3]);
			if (off_m & 0xfff9)
				return ROCE_DECODE_NOT_ROCE;
			len = 8;
		} else if (next == 51) {
			len = (hdr_units + 2u) * 4;
		} else {
			len = (hdr_units + 1u) * 8;
		}
		ext_len += len;
		if (ext_len > payload_len || !br_skip(br, len))
			return ROCE_DECODE_BAD_IP;
		next = hdr_next;
	}
	l3->l4_proto = next;
	l3->l4_wire_len = payload_len - ext_len;
	l3->l3_wire_end = (uint32_t)start + 40 + payload_len;
	return 0;
}

/*
 * UDP header (RFC 768):
 *   +----------------+----------------+----------------+----------------+
 *   |  Source Port   |  Dest. Port    |     Length     |    Checksum    |
 *   +----------------+----------------+----------------+----------------+
 * RoCE v2 is decided by the destination port alone (the source port is ECMP entropy).
 */
static int dissect_udp(struct byte_reader *br, const struct roce_decode_opts *opts,
		       struct roce_pkt *pkt, uint32_t l4_wire_len, uint32_t *roce_wire_len)
{
	uint16_t udp_len;

	if (br_has(br, 8)) {
		/* The whole header: one bounds check, not four. */
		const uint8_t *q = br_ptr(br);

		pkt->udp_sport = get_be16(q);
		pkt->udp_dport = get_be16(q + 2);
		udp_len = get_be16(q + 4);
		br->off += 8;
	} else {
		pkt->udp_sport = br_be16(br);
		pkt->udp_dport = br_be16(br);
		udp_len = br_be16(br);
		br_skip(br, 2);
		return ROCE_DECODE_BAD_UDP; /* short: what was there is kept, as always */
	}
	if (!is_roce_port(opts, pkt->udp_dport))
		return ROCE_DECODE_NOT_ROCE;
	if (udp_len < 8 || udp_len > l4_wire_len)
		return ROCE_DECODE_BAD_UDP;
	*roce_wire_len = udp_len - 8u;
	return 0;
}

/*
 * Global Route Header (IBA 8.3.1, figure 30); RoCE v1 puts it right after the Ethernet header:
 *   +-------+---------------+---------------------------------------+
 *   |IPVer=6| Traffic Class |               Flow Label              |
 *   +-------+---------------+-------+---------------+---------------+
 *   |         PayLen                |  NxtHdr=0x1b  |   HopLmt      |
 *   +-------------------------------+---------------+---------------+
 *   |                   SGID (16), DGID (16)                        |
 * PayLen counts from the BTH up to and including the ICRC.
 */
int roce_dissect_grh(struct byte_reader *br, struct roce_pkt *pkt, uint32_t *ib_wire_len,
		       uint32_t *l3_wire_end)
{
	size_t start = br->off;
	uint32_t word = br_be32(br);
	uint16_t paylen = br_be16(br);
	uint8_t next = br_u8(br);

	pkt->ttl = br_u8(br); /* hop limit */
	br_copy(br, pkt->src_ip, 16);
	br_copy(br, pkt->dst_ip, 16);
	if (br->short_read || word >> 28 != 6 || next != IB_NEXT_HEADER_BTH)
		return ROCE_DECODE_BAD_GRH;
	pkt->headers |= ROCE_H_GRH;
	pkt->ip_version = 6;
	pkt->grh_tclass = (word >> 20) & 0xff;
	pkt->grh_flow_label = word & 0xfffff;
	pkt->dscp = (word >> 22) & 0x3f;
	pkt->ecn = (word >> 20) & 0x3;
	*ib_wire_len = paylen;
	*l3_wire_end = (uint32_t)start + GRH_LEN + paylen;
	return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* InfiniBand transport headers (IBA volume 1, chapter 9).                                   */

/*
 * Base Transport Header (IBA 9.2, figure 59), 12 bytes:
 *   +---------------+-+-+---+-------+-------------------------------+
 *   |    OpCode     |S|M|Pad| TVer  |            P_Key              |
 *   +-+-+-----------+-+-+---+-------+-------------------------------+
 *   |F|B|  Resv6    |              Destination QP                   |
 *   +-+-------------+-----------------------------------------------+
 *   |A|  Resv7      |              PSN                              |
 *   +-+-------------+-----------------------------------------------+
 * (RoCE keeps the F/B bits as the second byte's top bits; most NICs leave them 0.)
 */
static void dissect_bth(struct byte_reader *br, struct roce_pkt *pkt)
{
	/* The caller checked its 12 bytes: read them at once, the reader moved once. */
	const uint8_t *q = br_ptr(br);
	uint8_t flags = q[1], fb = q[4], ack = q[8];

	br->off += BTH_LEN;
	pkt->opcode = q[0];
	pkt->pkey = get_be16(q + 2);
	pkt->dest_qp = get_be24(q + 5);
	pkt->psn = get_be24(q + 9);

	pkt->transport = pkt->opcode >> 5;
	pkt->pad_count = (flags >> 4) & 0x3;
	pkt->tver = flags & 0x0f;
	pkt->flags |= (flags & 0x80 ? ROCE_F_SOLICITED : 0) | (flags & 0x40 ? ROCE_F_MIGREQ : 0) |
		      (ack & 0x80 ? ROCE_F_ACK_REQ : 0);
	pkt->fecn = (fb >> 7) & 1;
	pkt->becn = (fb >> 6) & 1;
	pkt->headers |= ROCE_H_BTH;
}

/*
 * Reliable Datagram Extended Transport Header (IBA 9.3.1), 4 bytes:
 *   +---------------+-----------------------------------------------+
 *   |   Reserved    |                 EE-Context                    |
 *   +---------------+-----------------------------------------------+
 */
static void dissect_rdeth(const uint8_t *q, struct roce_pkt *pkt)
{
	pkt->rdeth_ee_context = get_be32(q) & 0xffffff;
}

/*
 * Datagram Extended Transport Header (IBA 9.3.2), 8 bytes:
 *   +---------------------------------------------------------------+
 *   |                          Q_Key                                |
 *   +---------------+-----------------------------------------------+
 *   |   Reserved    |                 Source QP                     |
 *   +---------------+-----------------------------------------------+
 */
static void dissect_deth(const uint8_t *q, struct roce_pkt *pkt)
{
	pkt->deth_qkey = get_be32(q);
	pkt->deth_src_qp = get_be32(q + 4) & 0xffffff;
}

/*
 * XRC Extended Transport Header (IBA annex A14.3, XRC transport), 4 bytes:
 *   +---------------+-----------------------------------------------+
 *   |   Reserved    |                 XRC SRQ                       |
 *   +---------------+-----------------------------------------------+
 */
static void dissect_xrceth(const uint8_t *q, struct roce_pkt *pkt)
{
	pkt->xrc_srq = get_be32(q) & 0xffffff;
}

/*
 * RDMA Extended Transport Header (IBA 9.3.3), 16 bytes:
 *   +---------------------------------------------------------------+
 *   |                 Virtual Address (64 bits)                     |
 *   +---------------------------------------------------------------+
 *   |                 R_Key                                         |
 *   +---------------------------------------------------------------+
 *   |                 DMA Length (bytes)                            |
 *   +---------------------------------------------------------------+
 */
static void dissect_reth(const uint8_t *q, struct roce_pkt *pkt)
{
	pkt->reth_va = get_be64(q);
	pkt->reth_rkey = get_be32(q + 8);
	pkt->reth_dma_len = get_be32(q + 12);
}

/*
 * Atomic Extended Transport Header (IBA 9.3.4), 28 bytes:
 *   +---------------------------------------------------------------+
 *   | Virtual Address (64) | R_Key (32) | Swap/Add Data (64) | Compare Data (64) |
 *   +---------------------------------------------------------------+
 */
static void dissect_atomiceth(const uint8_t *q, struct roce_pkt *pkt)
{
	pkt->atomic_va = get_be64(q);
	pkt->atomic_rkey = get_be32(q + 8);
	pkt->atomic_swap_add = get_be64(q + 12);
	pkt->atomic_compare = get_be64(q + 20);
}

/*
 * ACK Extended Transport Header (IBA 9.3.5), 4 bytes:
 *   +---------------+-----------------------------------------------+
 *   |   Syndrome    |          Message Sequence Number              |
 *   +---------------+-----------------------------------------------+
 * Syndrome bits 6-5: 0 ACK, 1 RNR NAK, 3 NAK (table 42).
 */
static void dissect_aeth(const uint8_t *q, struct roce_pkt *pkt)
{
	pkt->aeth_syndrome = q[0];
	pkt->aeth_msn = get_be24(q + 1);
}

/*
 * Atomic ACK Extended Transport Header (IBA 9.3.6), 8 bytes:
 *   +---------------------------------------------------------------+
 *   |                 Original Remote Data (64 bits)                |
 *   +---------------------------------------------------------------+
 */
static void dissect_atomicacketh(const uint8_t *q, struct roce_pkt *pkt)
{
	pkt->atomic_orig = get_be64(q);
}

/*
 * Immediate Data Extended Transport Header (IBA 9.3.7), 4 bytes:
 *   +---------------------------------------------------------------+
 *   |                 Immediate Data                                |
 *   +---------------------------------------------------------------+
 */
static void dissect_immdt(const uint8_t *q, struct roce_pkt *pkt)
{
	pkt->imm_data = get_be32(q);
}

/*
 * Invalidate Extended Transport Header (IBA 9.3, IETH of SEND with Invalidate), 4 bytes:
 *   +---------------------------------------------------------------+
 *   |                 R_Key to invalidate                           |
 *   +---------------------------------------------------------------+
 */
static void dissect_ieth(const uint8_t *q, struct roce_pkt *pkt)
{
	pkt->ieth_rkey = get_be32(q);
}

/* Extended headers in the order they follow the BTH (IBA 9.2, figure 57); each dissector
 * reads its len bytes at q, which the caller has checked. */
static const struct ext_header {
	uint32_t bit;
	uint8_t len;
	void (*dissect)(const uint8_t *q, struct roce_pkt *pkt);
} ext_headers[] = {
	{ ROCE_H_RDETH, BTH_RDETH_LEN, dissect_rdeth },
	{ ROCE_H_DETH, BTH_DETH_LEN, dissect_deth },
	{ ROCE_H_XRCETH, BTH_XRCETH_LEN, dissect_xrceth },
	{ ROCE_H_RETH, BTH_RETH_LEN, dissect_reth },
	{ ROCE_H_ATOMICETH, BTH_ATOMICETH_LEN, dissect_atomiceth },
	{ ROCE_H_AETH, BTH_AETH_LEN, dissect_aeth },
	{ ROCE_H_ATOMICACKETH, BTH_ATOMICACKETH_LEN, dissect_atomicacketh },
	{ ROCE_H_IMMDT, BTH_IMMDT_LEN, dissect_immdt },
	{ ROCE_H_IETH, BTH_IETH_LEN, dissect_ieth },
};
#define EXT_HEADER_BITS                                                                        \
	(ROCE_H_RDETH | ROCE_H_DETH | ROCE_H_XRCETH | ROCE_H_RETH | ROCE_H_ATOMICETH | ROCE_H_AETH | \
	 ROCE_H_ATOMICACKETH | ROCE_H_IMMDT | ROCE_H_IETH)

/*
 * Management Datagram header (IBA 13.4.3, figure 144), 24 bytes, then a CM message
 * (IBA 12.6) when MgmtClass is 0x07:
 *   +-------------+-------------+--------------+-+-----------+
 *   | BaseVersion | MgmtClass   | ClassVersion |R|  Method   |
 *   +-------------+-------------+--------------+-+-----------+
 *   |          Status           |       ClassSpecific        |
 *   +---------------------------+----------------------------+
 *   |                 TransactionID (64 bits)                |
 *   +---------------------------+----------------------------+
 *   |        AttributeID        |         Reserved           |
 *   +---------------------------+----------------------------+
 *   |                 AttributeModifier                      |
 *   +--------------------------------------------------------+
 *   | CM message: LocalCommID(0) RemoteCommID(4) ... per cm_layouts[] (tables 106-113)
 */
/* One CM field at byte `off` of the message (absent when off < 0): false when not captured. */
static bool cm_field(struct byte_reader *msg, int off, int bits, uint32_t *dst)
{
	uint32_t v;

	if (off < 0)
		return true;
	msg->off = (size_t)off;
	msg->short_read = false;
	v = bits == 32 ? br_be32(msg) : bits == 24 ? br_be24(msg) : br_be16(msg);
	if (msg->short_read)
		return false;
	*dst = v;
	return true;
}

static void dissect_mad(struct byte_reader *br, struct roce_pkt *pkt)
{
	const uint8_t *mad = br_ptr(br);
	size_t avail = br_remaining(br);
	const struct cm_layout *cm = NULL;
	struct byte_reader msg;
	uint32_t v16 = 0;

	if (avail < MAD_HDR_LEN) {
		pkt->flags |= ROCE_F_TRUNCATED;
		return;
	}
	pkt->headers |= ROCE_H_MAD;
	pkt->mad_mgmt_class = mad[1];
	pkt->mad_method = mad[3] & 0x7f;
	pkt->mad_attr_id = (uint16_t)(mad[16] << 8 | mad[17]);
	if (pkt->mad_mgmt_class != MAD_CLASS_CM)
		return;
	for (size_t i = 0; i < sizeof(cm_layouts) / sizeof(cm_layouts[0]); i++)
		if (cm_layouts[i].attr_id == pkt->mad_attr_id)
			cm = &cm_layouts[i];
	if (!cm)
		return;

	/* The CM message: read each field only when the captured bytes hold it. */
	br_init(&msg, mad + MAD_HDR_LEN, avail - MAD_HDR_LEN);
	if (!cm_field(&msg, 0, 32, &pkt->cm_local_comm_id)) {
		pkt->flags |= ROCE_F_TRUNCATED;
		return;
	}
	pkt->cm_attr_id = pkt->mad_attr_id;
	pkt->flags |= ROCE_F_CM;
	if (!cm_field(&msg, cm->remote_comm_id_off, 32, &pkt->cm_remote_comm_id) ||
	    !cm_field(&msg, cm->local_qpn_off, 24, &pkt->cm_local_qpn) ||
	    !cm_field(&msg, cm->start_psn_off, 24, &pkt->cm_start_psn) ||
	    !cm_field(&msg, cm->remote_qpn_off, 24, &pkt->cm_remote_qpn) ||
	    !cm_field(&msg, cm->rej_reason_off, 16, &v16))
		pkt->flags |= ROCE_F_TRUNCATED;
	pkt->cm_rej_reason = (uint16_t)v16;
}

/*
 * The InfiniBand transport part of a RoCE packet: BTH, the extended headers its opcode implies,
 * payload, ICRC. `ib_wire_len` is its length on the wire (from UDP or GRH), the reader holds
 * the captured part.
 */
int roce_dissect_ib_transport(struct byte_reader *br, uint32_t ib_wire_len, struct roce_pkt *pkt)
{
	const struct opcode_info *info;
	uint32_t ext_len, todo;

	if (ib_wire_len < BTH_LEN + ICRC_LEN || !br_has(br, BTH_LEN))
		return ROCE_DECODE_BAD_BTH;
	dissect_bth(br, pkt);
	if (pkt->tver != 0)
		return ROCE_DECODE_BAD_BTH;

	info = &opcode_table[pkt->opcode];
	if (!info->name) {
		/* Vendor opcodes (Mellanox DC 0xc0-0xdf, 0xe0-0xff) and reserved ones: BTH only. */
		pkt->flags |= pkt->opcode >= 0xc0 ? ROCE_F_VENDOR_OPCODE : ROCE_F_RESERVED_OPCODE;
	}
	ext_len = info->ext_len;
	if (ib_wire_len < BTH_LEN + ext_len + pkt->pad_count + ICRC_LEN)
		return ROCE_DECODE_BAD_EXT;
	pkt->payload_len = ib_wire_len - BTH_LEN - ext_len - pkt->pad_count - ICRC_LEN;

	/* Unrolled, so each dissector is a direct call: the loop's branches on a trace's mix
	 * of opcodes and its indirect calls were a third of this function's time (perf). */
	todo = info->headers & EXT_HEADER_BITS;
#pragma GCC unroll 16
	for (size_t i = 0; i < sizeof(ext_headers) / sizeof(ext_headers[0]) && todo; i++) {
		const struct ext_header *h = &ext_headers[i];
		if (!(todo & h->bit))
			continue;
		todo &= ~h->bit;
		if (!br_has(br, h->len)) {
			pkt->flags |= ROCE_F_TRUNCATED;
			return ROCE_DECODE_OK;
		}
		h->dissect(br_ptr(br), pkt);
		br->off += h->len;
		pkt->headers |= h->bit;
	}

	/* Connection management: a MAD in a UD SEND to QP1 (IBA 12.11, 13.5.1). */
	if (pkt->opcode == ROCE_OPCODE(ROCE_TR_UD, ROCE_OP_SEND_ONLY) && pkt->dest_qp == 1 &&
	    pkt->payload_len >= MAD_HDR_LEN) {
		struct byte_reader payload;
		size_t captured = br_remaining(br);
		br_init(&payload, br_ptr(br), captured < pkt->payload_len ? captured : pkt->payload_len);
		dissect_mad(&payload, pkt);
	}
	return ROCE_DECODE_OK;
}

void roce_set_wire_len(struct roce_pkt *pkt, uint32_t wire_end)
{
	if (wire_end > pkt->orig_len) {
		pkt->orig_len = wire_end;
		pkt->flags |= ROCE_F_ORIGLEN_FROM_IP;
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Tunnels of mirror sessions (roce_tunnel.c): the frame inside is decoded, the session is  */
/* kept beside it.                                                                           */

static bool is_erspan(uint8_t kind)
{
	return kind >= ROCE_ENCAP_ERSPAN1 && kind <= ROCE_ENCAP_ERSPAN3;
}

/*
 * Step into the Ethernet frame a tunnel carries. `br` is at the tunnel header and ends with
 * the outer IP datagram; `frame` is where the current (outer) frame starts. Keeps the session
 * (an ERSPAN one wins over any other tunnel, else the outermost), makes the lengths the inner
 * frame's, and leaves `br` at the inner network header with *ethertype set.
 */
static int enter_tunnel(struct byte_reader *br, uint8_t l4_proto, const uint8_t **frame,
			uint32_t outer_wire_end, struct roce_pkt *pkt, uint16_t *ethertype)
{
	struct roce_tunnel t = { 0 };
	const uint8_t *inner;
	uint32_t inner_off;
	int rc;

	if (pkt->encap_depth == ROCE_MAX_TUNNELS)
		return ROCE_DECODE_NOT_ROCE;
	rc = l4_proto == IPPROTO_GRE_NUMBER ? roce_dissect_gre_tunnel(br, &t) : roce_dissect_vxlan(br, &t);
	if (rc)
		return rc;
	inner = br_ptr(br);
	inner_off = (uint32_t)(inner - *frame);
	if (inner_off > outer_wire_end)
		return ROCE_DECODE_BAD_ENCAP;

	if (pkt->encap_depth == 0) {
		pkt->encap_vlan_id = pkt->flags & ROCE_F_VLAN ? pkt->vlan_id : 0;
		pkt->encap_ip_version = pkt->ip_version;
		memcpy(pkt->encap_src_ip, pkt->src_ip, 16);
		memcpy(pkt->encap_dst_ip, pkt->dst_ip, 16);
	}
	if (!pkt->encap || (is_erspan(t.kind) && !is_erspan(pkt->encap))) {
		pkt->encap = t.kind;
		pkt->encap_id = t.id;
		pkt->erspan_ts = t.ts;
		pkt->erspan_ts_hi = t.ts_hi;
		pkt->erspan_gra = t.gra;
		pkt->erspan_platform_id = t.platform_id;
		pkt->erspan_dir = t.dir;
	}
	pkt->encap_depth++;
	pkt->encap_hdr_len += inner_off;

	/* From here on the inner frame is the packet: its lengths, its VLAN, its IP. */
	roce_set_wire_len(pkt, outer_wire_end);
	pkt->orig_len = outer_wire_end - inner_off;
	pkt->cap_len = (uint32_t)(br->off <= br->len ? br->len - br->off : 0);
	if (pkt->cap_len > pkt->orig_len)
		pkt->cap_len = pkt->orig_len;
	pkt->flags &= ~(ROCE_F_VLAN | ROCE_F_QINQ | ROCE_F_IPV4_OPTIONS);
	pkt->vlan_id = 0;
	pkt->ip_version = 0;
	*frame = inner;
	rc = dissect_ethernet(br, pkt, ethertype);
	return rc == ROCE_DECODE_BAD_LINK ? ROCE_DECODE_BAD_ENCAP : rc;
}

/* Link types and their dissectors. */
static const struct link_dissector {
	int linktype;
	int (*dissect)(struct byte_reader *br, struct roce_pkt *pkt, uint16_t *ethertype);
} link_dissectors[] = {
	{ DLT_EN10MB, dissect_ethernet },
	{ DLT_LINUX_SLL, dissect_sll },
	{ DLT_LINUX_SLL2, dissect_sll2 },
	{ DLT_RAW, dissect_raw_ip },
	{ LINKTYPE_RAW_NUMBER, dissect_raw_ip },
	{ DLT_IPV4, dissect_raw_ipv4 },
	{ DLT_IPV6, dissect_raw_ipv6 },
};


static bool is_vxlan_port(const struct roce_decode_opts *opts, uint16_t dport)
{
	return dport == (opts ? opts->vxlan_port : VXLAN_UDP_PORT) && dport != 0;
}

/* RoCE v1: the GRH right after the link header, then the IB transport. */
static int decode_roce_v1(struct byte_reader *br, const uint8_t *frame, struct roce_pkt *out)
{
	struct byte_reader ib;
	uint32_t ib_wire_len, grh_end;
	int rc = roce_dissect_grh(br, out, &ib_wire_len, &grh_end);

	if (rc)
		return rc;
	out->roce_version = 1;
	roce_set_wire_len(out, (uint32_t)(br->p - frame) + grh_end);
	br_init(&ib, br_ptr(br), br_remaining(br) < ib_wire_len ? br_remaining(br) : ib_wire_len);
	return roce_dissect_ib_transport(&ib, ib_wire_len, out);
}

int roce_decode_frame(const struct roce_decode_opts *opts, int linktype, const uint8_t *frame,
		      size_t caplen, uint32_t origlen, uint64_t ts_ns, struct roce_pkt *out)
{
	const struct link_dissector *link = NULL;
	struct byte_reader br, l4, ib;
	struct l3_result l3 = { 0 };
	uint16_t ethertype = 0;
	uint32_t ib_wire_len, l3_end;
	int rc;

	pkt_clear(out);
	out->ts_ns = ts_ns;
	out->arrival_ns = ts_ns;
	out->cap_len = (uint32_t)caplen;
	out->orig_len = origlen < caplen ? (uint32_t)caplen : origlen;
	out->linktype = (uint32_t)linktype;
	if (!frame)
		caplen = 0;
	br_init(&br, frame, caplen);

	/* Native InfiniBand and ERF records: ib_decode.c, which comes back here for Ethernet. */
	if (linktype == DLT_INFINIBAND || linktype == DLT_ERF)
		return ib_decode_frame(opts, linktype, &br, out);
	for (size_t i = 0; i < sizeof(link_dissectors) / sizeof(link_dissectors[0]); i++)
		if (link_dissectors[i].linktype == linktype) {
			link = &link_dissectors[i];
			break;
		}
	if (!link)
		return ROCE_DECODE_BAD_LINK;
	rc = link->dissect(&br, out, &ethertype);
	if (rc)
		return rc;

	/* Once per frame, and again for the frame inside each tunnel. */
	for (;;) {
		out->ip_hdr_off = (uint32_t)(br_ptr(&br) - frame);
		switch (ethertype) {
		case ROCE_V1_ETHERTYPE:
			return decode_roce_v1(&br, frame, out);
		case ETHERTYPE_IPV4:
			rc = dissect_ipv4(&br, out, &l3);
			break;
		case ETHERTYPE_IPV6:
			rc = dissect_ipv6(&br, out, &l3);
			break;
		default:
			return ROCE_DECODE_NOT_ROCE;
		}
		if (rc)
			return rc;
		l3_end = (uint32_t)(br.p - frame) + l3.l3_wire_end;

		/* View only the IP payload: Ethernet padding after it is not UDP data. */
		br_init(&l4, br_ptr(&br),
			br_remaining(&br) < l3.l4_wire_len ? br_remaining(&br) : l3.l4_wire_len);
		if (l3.l4_proto == IPPROTO_UDP_NUMBER) {
			rc = dissect_udp(&l4, opts, out, l3.l4_wire_len, &ib_wire_len);
			if (rc != ROCE_DECODE_NOT_ROCE || !is_vxlan_port(opts, out->udp_dport))
				break;
		} else if (l3.l4_proto != IPPROTO_GRE_NUMBER) {
			return ROCE_DECODE_NOT_ROCE;
		}
		rc = enter_tunnel(&l4, l3.l4_proto, &frame, l3_end, out, &ethertype);
		if (rc)
			return rc;
		br = l4;
	}
	if (rc)
		return rc;
	out->roce_version = 2;
	roce_set_wire_len(out, l3_end);
	br_init(&ib, br_ptr(&l4), br_remaining(&l4) < ib_wire_len ? br_remaining(&l4) : ib_wire_len);
	return roce_dissect_ib_transport(&ib, ib_wire_len, out);
}
