/*
 * roce_frame.h: RoCE v2 frames from struct roce_pkt, and back. Pure functions, no I/O.
 *
 * roce_frame_build() writes Ethernet [+ 802.1Q] + IPv4/IPv6 + UDP + BTH + extended headers
 * + payload + ICRC into a caller buffer. roce_frame_build_transport() writes only what a UDP
 * socket carries (BTH .. ICRC). roce_frame_parse_transport() reads a UDP payload back into a
 * struct roce_pkt for rc_model. The ICRC follows IBA annex A17 (RoCE v2): CRC-32 over 8 bytes
 * of 0xff (the masked LRH), the IP header with TOS/traffic class, TTL/hop limit, checksum and
 * flow label set to ones, the UDP header with its checksum set to ones, the BTH with its
 * reserved byte (FECN/BECN) set to ones, then the rest; stored little-endian like an FCS.
 */
#ifndef AGENTXDP_ROCE_FRAME_H
#define AGENTXDP_ROCE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/decode/roce_pkt.h"

#define ROCE_FRAME_MAX 9216

/* Link and network layer of one frame; BTH and up come from the struct roce_pkt. */
struct roce_frame_addr {
	uint8_t src_mac[6], dst_mac[6];
	uint16_t vlan_id;	/* 0 = untagged */
	uint8_t vlan_pcp;
	uint8_t ip_version;	/* 4 or 6 */
	uint8_t src_ip[16];	/* IPv4 v4-mapped (::ffff:a.b.c.d), as struct roce_pkt */
	uint8_t dst_ip[16];
	uint8_t dscp;
	uint8_t ecn;		/* 0 not-ECT, 2 ECT(0), 3 CE */
	uint8_t ttl;		/* TTL / hop limit */
	uint16_t ip_id;		/* IPv4 identification */
	uint32_t flow_label;	/* IPv6 */
	uint16_t udp_sport;
	uint16_t udp_dport;	/* 4791 when 0 */
	bool udp_checksum;	/* compute the UDP checksum (always for IPv6) */
};

/*
 * A mirror session's tunnel around a whole frame (roce_frame_tunnel_hdr()): outer Ethernet +
 * IPv4 + GRE [+ ERSPAN II/III] or UDP + VXLAN, as a switch's remote mirror session sends it.
 */
struct roce_frame_tunnel {
	uint8_t kind;		/* enum roce_encap: ERSPAN2, ERSPAN3, GRE_TEB or VXLAN */
	uint8_t src_mac[6], dst_mac[6];
	uint8_t src_ip[4], dst_ip[4];	/* the switch, the collector */
	uint32_t session_id;	/* ERSPAN session ID (10 bits) or VXLAN VNI (24 bits) */
	uint32_t seq;		/* GRE sequence number (ERSPAN II/III, GRE) */
	uint64_t ts_ns;		/* ERSPAN III: IEEE 1588 time, ns since the epoch */
	uint16_t udp_sport;	/* VXLAN: entropy from the inner flow */
};

/* Largest roce_frame_tunnel_hdr_len(): Ethernet 14 + IPv4 20 + GRE 8 + ERSPAN III 12 + 8. */
#define ROCE_FRAME_TUNNEL_MAX 62

/* Bytes of outer headers for this kind (enum roce_encap), 0 for one it cannot build. */
size_t roce_frame_tunnel_hdr_len(uint8_t kind);

/*
 * Write the outer headers for an inner frame of inner_len bytes on the wire into buf, which
 * must hold roce_frame_tunnel_hdr_len(t->kind) bytes; the inner frame follows them. ERSPAN III
 * carries ts_ns with IEEE 1588 granularity: ns within the second in the header, the seconds
 * in platform sub-header 3. Returns the header length, or 0 (unknown kind, cap short).
 */
size_t roce_frame_tunnel_hdr(uint8_t *buf, size_t cap, const struct roce_frame_tunnel *t,
			     size_t inner_len);

/* Header bytes the BTH extended headers of this opcode take after the BTH (no payload). */
size_t roce_ext_header_bytes(uint8_t opcode);

/*
 * Build the whole frame. Uses from pkt: opcode, flags (SOLICITED, ACK_REQ, MIGREQ), pad_count
 * is computed, pkey, fecn/becn, dest_qp, psn, and the extended-header fields its opcode needs;
 * payload_len bytes of payload come from `payload` (NULL: a pattern derived from the PSN).
 * `icrc`: compute the ICRC (false writes zeros there: for packets trimmed before it anyway).
 * Returns the frame length, or 0 when it does not fit in `cap`.
 */
size_t roce_frame_build(uint8_t *buf, size_t cap, const struct roce_frame_addr *addr,
			const struct roce_pkt *pkt, const uint8_t *payload, bool icrc);

/*
 * The same, for a capture trimmed to `snaplen` (0 = whole): frames that fit get their ICRC;
 * longer ones are correct up to snaplen (IPv4: payload past it is not even written, which is
 * what makes --snaplen fast), their ICRC is not computed. Returns the whole frame length.
 */
size_t roce_frame_build_snap(uint8_t *buf, size_t cap, const struct roce_frame_addr *addr,
			     const struct roce_pkt *pkt, const uint8_t *payload, size_t snaplen);

/* Only BTH .. ICRC (what a UDP socket sends). The ICRC there is left zero. */
size_t roce_frame_build_transport(uint8_t *buf, size_t cap, const struct roce_pkt *pkt,
				  const uint8_t *payload);

/*
 * Parse a UDP payload (BTH onwards, ICRC included) into *out (BTH/extended fields,
 * payload_len, transport). 0, or a negative ROCE_DECODE_BAD_* style code (-4 short BTH,
 * -5 headers do not fit).
 */
int roce_frame_parse_transport(const uint8_t *p, size_t len, struct roce_pkt *out);

/* ICRC of a complete frame starting at its IP header (ip_version 4/6), over len bytes up to
 * and excluding the 4 ICRC bytes. Exposed for tests. */
uint32_t roce_icrc(const uint8_t *ip_hdr, size_t len_without_icrc, int ip_version);
/* Standard CRC-32 (IEEE 802.3, as zlib crc32()): crc = roce_crc32(crc, p, n), start with 0. */
uint32_t roce_crc32(uint32_t crc, const uint8_t *p, size_t n);

#endif
