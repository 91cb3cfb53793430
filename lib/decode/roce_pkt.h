/* roce_pkt.h: the decoder's output, one fixed record per RoCE packet, and IBA opcode numbers. */
#ifndef AGENTXDP_ROCE_PKT_H
#define AGENTXDP_ROCE_PKT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/decode/bth_opcodes.h"

#define ROCE_V2_UDP_PORT 4791
#define ROCE_V1_ETHERTYPE 0x8915

/* Transport, the top three bits of the BTH opcode (IBA 9.2, table 38). */
enum roce_transport {
	ROCE_TR_RC = 0,
	ROCE_TR_UC = 1,
	ROCE_TR_RD = 2,
	ROCE_TR_UD = 3,
	ROCE_TR_CNP = 4, /* 0x80..0x9f: CNP lives at 0x81 */
	ROCE_TR_XRC = 5,
	ROCE_TR_MLX_DC = 6, /* 0xc0..0xdf: Mellanox DC, vendor opcodes */
	ROCE_TR_VENDOR = 7,
};

/* Operation codes, low five bits (IBA table 38). Full opcode = transport << 5 | op. */
enum roce_op {
	ROCE_OP_SEND_FIRST = 0x00,
	ROCE_OP_SEND_MIDDLE = 0x01,
	ROCE_OP_SEND_LAST = 0x02,
	ROCE_OP_SEND_LAST_IMM = 0x03,
	ROCE_OP_SEND_ONLY = 0x04,
	ROCE_OP_SEND_ONLY_IMM = 0x05,
	ROCE_OP_WRITE_FIRST = 0x06,
	ROCE_OP_WRITE_MIDDLE = 0x07,
	ROCE_OP_WRITE_LAST = 0x08,
	ROCE_OP_WRITE_LAST_IMM = 0x09,
	ROCE_OP_WRITE_ONLY = 0x0a,
	ROCE_OP_WRITE_ONLY_IMM = 0x0b,
	ROCE_OP_READ_REQUEST = 0x0c,
	ROCE_OP_READ_RESP_FIRST = 0x0d,
	ROCE_OP_READ_RESP_MIDDLE = 0x0e,
	ROCE_OP_READ_RESP_LAST = 0x0f,
	ROCE_OP_READ_RESP_ONLY = 0x10,
	ROCE_OP_ACK = 0x11,
	ROCE_OP_ATOMIC_ACK = 0x12,
	ROCE_OP_CMP_SWAP = 0x13,
	ROCE_OP_FETCH_ADD = 0x14,
	ROCE_OP_SEND_LAST_INV = 0x16,
	ROCE_OP_SEND_ONLY_INV = 0x17,
};

#define ROCE_OPCODE(tr, op) ((uint8_t)((tr) << 5 | (op)))
#define ROCE_OPCODE_CNP 0x81

/* AETH syndrome (IBA 9.3.5, table 42): top 3 bits say ACK / RNR NAK / NAK. */
#define AETH_TYPE(s) (((s) >> 5) & 0x3)
enum aeth_type { AETH_ACK = 0, AETH_RNR_NAK = 1, AETH_RESERVED = 2, AETH_NAK = 3 };
/* NAK codes, the low five bits when AETH_TYPE is AETH_NAK. */
enum aeth_nak_code {
	NAK_PSN_SEQ_ERROR = 0,
	NAK_INVALID_REQUEST = 1,
	NAK_REMOTE_ACCESS_ERROR = 2,
	NAK_REMOTE_OP_ERROR = 3,
	NAK_INVALID_RD_REQUEST = 4,
};

/* Which headers a packet carried (roce_pkt.headers); the extended ones as bth_opcodes.h. */
enum roce_hdr_bits {
	ROCE_H_GRH = 1u << 0,
	ROCE_H_BTH = 1u << 1,
	ROCE_H_RETH = BTH_H_RETH,
	ROCE_H_AETH = BTH_H_AETH,
	ROCE_H_ATOMICETH = BTH_H_ATOMICETH,
	ROCE_H_ATOMICACKETH = BTH_H_ATOMICACKETH,
	ROCE_H_IMMDT = BTH_H_IMMDT,
	ROCE_H_IETH = BTH_H_IETH,
	ROCE_H_DETH = BTH_H_DETH,
	ROCE_H_XRCETH = BTH_H_XRCETH,
	ROCE_H_RDETH = BTH_H_RDETH,
	ROCE_H_MAD = 1u << 11, /* a MAD on QP1 (CM) */
};

/* roce_pkt.flags */
enum roce_pkt_flags {
	ROCE_F_TRUNCATED = 1u << 0,	/* captured bytes end before the headers its opcode implies */
	ROCE_F_ORIGLEN_FROM_IP = 1u << 1, /* capture said orig == cap, the IP header says more */
	ROCE_F_VLAN = 1u << 2,
	ROCE_F_QINQ = 1u << 3,
	ROCE_F_IPV4_OPTIONS = 1u << 4,
	ROCE_F_CM = 1u << 5,		/* a CM MAD decoded into cm_* fields */
	ROCE_F_SOLICITED = 1u << 6,
	ROCE_F_ACK_REQ = 1u << 7,
	ROCE_F_MIGREQ = 1u << 8,
	ROCE_F_VENDOR_OPCODE = 1u << 9, /* Mellanox DC or other vendor opcode: recognised, not decoded */
	ROCE_F_RESERVED_OPCODE = 1u << 10, /* opcode reserved by the IBA: BTH decoded, nothing after it */
};

/*
 * The tunnel a mirror session delivered the frame in (roce_pkt.encap). The frame inside is
 * what is decoded; the session's identity is kept beside it. RSPAN needs no entry: it is a
 * VLAN (vlan_id).
 */
enum roce_encap {
	ROCE_ENCAP_NONE = 0,
	ROCE_ENCAP_ERSPAN1 = 1,	/* GRE 0x88be without a sequence number: no ERSPAN header */
	ROCE_ENCAP_ERSPAN2 = 2,	/* GRE 0x88be + 8-byte ERSPAN type II header */
	ROCE_ENCAP_ERSPAN3 = 3,	/* GRE 0x22eb + 12-byte type III header [+ 8-byte platform part] */
	ROCE_ENCAP_GRE_TEB = 4,	/* GRE 0x6558, transparent Ethernet bridging */
	ROCE_ENCAP_VXLAN = 5,	/* UDP 4789 (RFC 7348) */
	ROCE_ENCAP_MAX = 5,
};

/* ERSPAN type III timestamp granularity (roce_pkt.erspan_gra, draft-foschiano-erspan 4.3). */
enum erspan_gra {
	ERSPAN_GRA_100US = 0,
	ERSPAN_GRA_100NS = 1,
	ERSPAN_GRA_IEEE1588 = 2, /* erspan_ts: ns in the second; platform ID 3: seconds */
	ERSPAN_GRA_USER = 3,
};

/* CM MAD attribute IDs (IBA 12.6). */
enum cm_attr {
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
};

/*
 * One decoded RoCE packet. Addresses are 16 bytes; IPv4 is stored v4-mapped
 * (::ffff:a.b.c.d) so every flow key has one shape. RoCE v1 takes its addresses from the GRH.
 */
struct roce_pkt {
	uint64_t ts_ns;		/* capture timestamp, ns since the epoch */
	uint32_t cap_len;	/* bytes captured */
	uint32_t orig_len;	/* bytes on the wire (from IP when the capture understated it) */
	uint32_t flags;		/* ROCE_F_* */
	uint32_t headers;	/* ROCE_H_* */
	uint32_t linktype;	/* DLT_* of the frame */
	uint32_t ifindex;	/* interface index in the capture file (pcapng IDB), 0 otherwise */
	uint8_t src_ip[16];
	uint8_t dst_ip[16];
	uint8_t ip_version;	/* 4 or 6 */
	uint8_t ecn;		/* IP ECN bits: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE; native IB: 3 = FECN */
	uint8_t dscp;
	uint8_t ttl;		/* IPv4 TTL / IPv6 (or GRH) hop limit as captured */
	uint8_t roce_version;	/* 1 (EtherType 0x8915 + GRH) or 2 (UDP); 0 native InfiniBand */
	uint16_t vlan_id;	/* outermost VLAN ID, when ROCE_F_VLAN */
	uint16_t udp_sport;	/* ECMP entropy on RoCE v2 */
	uint16_t udp_dport;

	/* BTH (IBA 9.2) */
	uint8_t opcode;
	uint8_t transport;	/* enum roce_transport */
	uint8_t pad_count;
	uint8_t tver;
	uint16_t pkey;
	uint8_t fecn, becn;	/* BTH FECN/BECN bits (the second reserved byte in RoCE) */
	uint32_t dest_qp;	/* 24 bits */
	uint32_t psn;		/* 24 bits */

	/* AETH (IBA 9.3.5) */
	uint8_t aeth_syndrome;
	uint32_t aeth_msn;	/* 24 bits */

	/* RETH (IBA 9.3.3) */
	uint64_t reth_va;
	uint32_t reth_rkey;
	uint32_t reth_dma_len;	/* bytes */

	/* AtomicETH / AtomicAckETH (IBA 9.3.4, 9.3.6) */
	uint64_t atomic_va;
	uint32_t atomic_rkey;
	uint64_t atomic_swap_add;
	uint64_t atomic_compare;
	uint64_t atomic_orig;	/* AtomicAckETH original remote data */

	uint32_t imm_data;	/* ImmDt, host order */
	uint32_t ieth_rkey;	/* IETH: R_Key to invalidate */
	uint32_t deth_qkey;	/* DETH (UD) */
	uint32_t deth_src_qp;
	uint32_t xrc_srq;	/* XRCETH */

	uint32_t payload_len;	/* bytes of payload on the wire: UDP length minus headers, pad and ICRC */

	/* CM MAD on QP1 (IBA 12.6), when ROCE_F_CM */
	uint16_t cm_attr_id;	/* enum cm_attr */
	uint32_t cm_local_comm_id;
	uint32_t cm_remote_comm_id;
	uint32_t cm_local_qpn;	/* REQ: local QPN, REP: local QPN */
	uint32_t cm_start_psn;	/* REQ: starting PSN, REP: starting PSN */

	/* Added by the decoder (after the first contract): */
	uint32_t rdeth_ee_context;	/* RDETH (IBA 9.3.1): EE context, RD only */
	uint8_t mad_mgmt_class;		/* MAD header (IBA 13.4.3), when ROCE_H_MAD */
	uint8_t mad_method;
	uint16_t mad_attr_id;		/* any class; equals cm_attr_id for CM */
	uint32_t cm_remote_qpn;		/* DREQ: remote QPN/EECN */
	uint16_t cm_rej_reason;		/* REJ: reason code (IBA table 109) */
	uint16_t ib_slid, ib_dlid;	/* native InfiniBand (DLT_INFINIBAND) LRH LIDs */
	uint32_t ip_hdr_off;		/* bytes of link-layer header before IP (or GRH) */

	/*
	 * The mirror session's tunnel, when encap != ROCE_ENCAP_NONE (an ERSPAN one wins over
	 * another tunnel, else the outermost). Then cap_len, orig_len and ip_hdr_off describe the
	 * inner frame, and vlan_id is the inner frame's; encap_hdr_len bytes came before it.
	 */
	uint8_t encap;			/* enum roce_encap */
	uint8_t encap_ip_version;	/* 4 or 6: the outer IP header */
	uint8_t encap_depth;		/* tunnels unwrapped (at most ROCE_MAX_TUNNELS) */
	uint8_t erspan_gra;		/* ERSPAN III: enum erspan_gra */
	uint8_t erspan_platform_id;	/* ERSPAN III platform sub-header ID (0: none) */
	uint8_t erspan_dir;		/* ERSPAN III D bit: 0 ingress, 1 egress */
	uint16_t encap_vlan_id;		/* outer 802.1Q VLAN ID (0: untagged) */
	uint32_t encap_id;		/* ERSPAN session ID (10 bits), VXLAN VNI (24), GRE key */
	uint32_t encap_hdr_len;		/* bytes before the inner frame, bytes */
	uint8_t encap_src_ip[16];	/* outer addresses (the switch, the collector), v4-mapped */
	uint8_t encap_dst_ip[16];
	uint32_t erspan_ts;		/* ERSPAN III timestamp, in erspan_gra units */
	uint32_t erspan_ts_hi;		/* platform ID 3: upper 32 bits (1588: seconds) */

	/*
	 * Native InfiniBand (linktype DLT_INFINIBAND, or DLT_ERF with an InfiniBand record): the
	 * LRH (IBA 7.7) beside ib_slid/ib_dlid. Without a GRH, src_ip/dst_ip hold the LIDs
	 * (addr_from_lid()); with one, the GIDs. The GRH fields serve RoCE v1 too.
	 */
	uint8_t ib_vl;			/* virtual lane (15: subnet management) */
	uint8_t ib_sl;			/* service level */
	uint8_t ib_lnh;			/* link next header: 2 BTH, 3 GRH */
	uint8_t grh_tclass;		/* GRH traffic class (dscp/ecn split it too) */
	uint32_t grh_flow_label;	/* 20 bits */
	uint16_t ib_pkt_len;		/* LRH PktLen, bytes from the LRH to the ICRC */
	uint8_t erf_type;		/* DLT_ERF: the record's type (enum erf_type), else 0 */
	uint8_t erf_port;		/* DLT_ERF: capture interface (0-3) */
	uint64_t arrival_ns;		/* the capture's own timestamp: ts_ns as decoded; a caller
					 * that takes the switch's time (ERSPAN III) into ts_ns keeps
					 * the collector's arrival here */
};

#define ROCE_MAX_TUNNELS 2

/*
 * Where a packet came from, as a vantage: the capture itself (no tunnel), one mirror session
 * inside it (tunnel kind, ERSPAN session ID / VNI / GRE key, the switch's outer source), or
 * one ERF capture port. agentxdp-analyze and the live agent key their vantages by it.
 */
struct roce_source {
	uint8_t kind;			/* enum roce_encap; ROCE_ENCAP_NONE: not tunnelled */
	uint8_t erf_port;		/* ERF capture port (0-3: A-D); 0 outside ERF */
	uint32_t id;			/* ERSPAN session ID, VXLAN VNI, GRE key */
	uint8_t src_ip[16];		/* the tunnel's outer source (the switch) */
};

static inline void roce_source_of(const struct roce_pkt *p, struct roce_source *s)
{
	memset(s, 0, sizeof(*s));
	s->kind = p->encap;
	s->erf_port = p->erf_port;
	if (p->encap != ROCE_ENCAP_NONE) {
		s->id = p->encap_id;
		memcpy(s->src_ip, p->encap_src_ip, 16);
	}
}

/* One compare for untunnelled packets outside ERF. */
static inline bool roce_source_same(const struct roce_source *s, const struct roce_pkt *p)
{
	if (s->kind != p->encap || s->erf_port != p->erf_port)
		return false;
	return p->encap == ROCE_ENCAP_NONE ||
	       (s->id == p->encap_id && !memcmp(s->src_ip, p->encap_src_ip, 16));
}

#endif
