/* roce_frames.h: craft RoCE v1/v2 test frames (IPv4/IPv6, VLAN, QinQ) for the capture tests. */
#ifndef AGENTXDP_TESTS_ROCE_FRAMES_H
#define AGENTXDP_TESTS_ROCE_FRAMES_H

#include <stddef.h>
#include <stdint.h>

struct roce_frame_spec {
	int roce_version;	/* 1: EtherType 0x8915 + GRH, 2: UDP 4791 */
	int ip_version;		/* RoCE v2: 4 or 6 */
	int n_vlan;		/* 0, 1 (802.1Q) or 2 (QinQ: 802.1ad outer + 802.1Q inner) */
	int ipv4_option_words;	/* 32-bit words of IPv4 options (0-10) */
	uint8_t opcode;
	uint32_t dest_qp;	/* 24 bits */
	uint32_t psn;		/* 24 bits */
	uint32_t payload_bytes;
	uint16_t udp_sport;
	uint16_t udp_dport;	/* 0 means 4791 */
	uint8_t src_ip[16];	/* IPv4 in the last 4 bytes (v4-mapped) */
	uint8_t dst_ip[16];
	uint8_t seed;		/* varies the extended header contents */
};

/*
 * Bytes of extended headers the opcode implies after the BTH, worked out from the IBA
 * header sequences (RDETH, DETH, XRCETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH).
 */
size_t roce_frame_ext_bytes(uint8_t opcode);
/* Offset of the first byte after the BTH for this spec. */
size_t roce_frame_bth_end(const struct roce_frame_spec *s);
/* Write the frame into buf (cap bytes); returns its length or 0 when it does not fit. */
size_t roce_frame_build(const struct roce_frame_spec *s, uint8_t *buf, size_t cap);
/* A spec with defaults: RoCE v2/IPv4 198.18.0.1 -> 198.18.0.2, RC SEND Only, QP 0x12. */
void roce_frame_default(struct roce_frame_spec *s);
void roce_frame_set_ipv4(uint8_t addr[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d);

/* A mirror session's tunnel around a frame (roce_frame_wrap()). */
enum roce_tunnel_kind {
	ROCE_TUNNEL_ERSPAN1,	/* GRE 0x88be without a sequence number, no ERSPAN header */
	ROCE_TUNNEL_ERSPAN2,	/* GRE 0x88be + S, 8-byte ERSPAN II header */
	ROCE_TUNNEL_ERSPAN3,	/* GRE 0x22eb + S, 12-byte ERSPAN III header (+ 8 with platform) */
	ROCE_TUNNEL_GRE_TEB,	/* GRE 0x6558 */
	ROCE_TUNNEL_VXLAN,	/* UDP 4789 + 8-byte VXLAN header, I flag set */
};

struct roce_tunnel_spec {
	enum roce_tunnel_kind kind;
	int ip_version;		/* outer 4 or 6 */
	int n_vlan;		/* outer tags: 0, 1 or 2 */
	int ipv4_option_words;	/* outer IPv4 options (0-10) */
	int gre_csum, gre_key;	/* GRE C and K words */
	int erspan3_platform;	/* ERSPAN III O bit: an 8-byte platform sub-header */
	uint16_t gre_proto;	/* nonzero: this GRE protocol type instead of the kind's */
	uint16_t udp_dport;	/* VXLAN: 0 means 4789 */
	uint8_t vxlan_flags;	/* VXLAN first byte: 0 means 0x08 (I) */
	uint8_t erspan_ver;	/* ERSPAN II/III version: 0 means the kind's (1, 2) */
};

/* Bytes of outer headers roce_frame_wrap() puts before the inner frame. */
size_t roce_tunnel_hdr_bytes(const struct roce_tunnel_spec *t);
/* Write the outer headers and then the inner frame into buf; returns the length or 0. */
size_t roce_frame_wrap(const struct roce_tunnel_spec *t, const uint8_t *inner, size_t inner_len,
		       uint8_t *buf, size_t cap);

#endif
