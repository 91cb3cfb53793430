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

#endif
