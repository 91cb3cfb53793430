/* roce_decode.h: frame bytes -> struct roce_pkt. Pure functions, no I/O. */
#ifndef AGENTXDP_ROCE_DECODE_H
#define AGENTXDP_ROCE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/decode/roce_pkt.h"

/* Results of roce_decode_frame(): >= 0 decoded or not RoCE, < 0 malformed (by reason). */
enum roce_decode_status {
	ROCE_DECODE_OK = 0,
	ROCE_DECODE_NOT_ROCE = 1,	/* some other traffic: skipped, not an error */
	ROCE_DECODE_BAD_LINK = -1,	/* link-layer header short or unknown link type */
	ROCE_DECODE_BAD_IP = -2,	/* IPv4/IPv6 header short or inconsistent */
	ROCE_DECODE_BAD_UDP = -3,	/* UDP header short or length inconsistent */
	ROCE_DECODE_BAD_BTH = -4,	/* BTH shorter than 12 bytes or reserved version */
	ROCE_DECODE_BAD_EXT = -5,	/* lengths say the packet cannot hold its extended headers */
	ROCE_DECODE_BAD_GRH = -6,	/* RoCE v1 GRH short or next header not BTH */
	ROCE_DECODE_BAD_ENCAP = -7,	/* GRE/ERSPAN/VXLAN header short or unsupported version */
	ROCE_DECODE_STATUS_MIN = -7,
};

struct roce_decode_opts {
	uint16_t udp_ports[9];		/* destination ports decoded as RoCE v2; 0 ends the list */
	uint16_t vxlan_port;		/* VXLAN destination port (4789); 0 turns VXLAN off */
};

/* RoCE v2 on 4791, VXLAN on 4789. */
void roce_decode_opts_default(struct roce_decode_opts *opts);

/*
 * Decode one captured frame of link type `linktype` (DLT_EN10MB, DLT_LINUX_SLL,
 * DLT_LINUX_SLL2, DLT_RAW, DLT_IPV4, DLT_IPV6, DLT_INFINIBAND). Fills *out on ROCE_DECODE_OK; on a
 * truncated (trimmed) packet decodes as far as the bytes go and sets ROCE_F_TRUNCATED.
 */
int roce_decode_frame(const struct roce_decode_opts *opts, int linktype, const uint8_t *frame,
		      size_t caplen, uint32_t origlen, uint64_t ts_ns, struct roce_pkt *out);

/* Names for printing: "RC RDMA WRITE First", "CNP", "UD SEND Only", ... */
const char *roce_opcode_name(uint8_t opcode);
const char *roce_transport_name(uint8_t transport);
const char *roce_decode_status_name(int status);	/* "bad-ip", ... for malformed counters */
/* "ACK", "RNR NAK", "NAK PSN sequence error", ... */
const char *roce_aeth_name(uint8_t syndrome);
/* "REQ", "REP", "RTU", ... for a CM MAD attribute ID; NULL when not a CM attribute. */
const char *roce_cm_attr_name(uint16_t attr_id);
/* "erspan2", "vxlan", ... for roce_pkt.encap; "none" for ROCE_ENCAP_NONE. */
const char *roce_encap_name(uint8_t encap);
/*
 * ERSPAN III with IEEE 1588 granularity: the switch's time in ns since the epoch. The header
 * holds the nanoseconds, platform sub-header 3 the seconds; without it the second is the one
 * that puts the time nearest `near_ns` (the arrival). 0, or -1 for another granularity.
 */
int roce_erspan3_ns(const struct roce_pkt *p, uint64_t near_ns, uint64_t *ns);
/*
 * What a frame the decoder did not take as RoCE carries (agentxdp-analyze says what a trace
 * held instead of RoCE): FRAME_KIND_* << 24 | the mirror tunnel it was found in (enum
 * roce_encap, FRAME_KIND_TUNNEL()) << 16 | the value (link type, EtherType, IP protocol, UDP
 * port, GRE protocol).
 */
enum frame_kind_type {
	FRAME_KIND_SHORT = 0,		/* ended before anything could be named */
	FRAME_KIND_LINKTYPE = 1,	/* a link type the decoder does not read */
	FRAME_KIND_ETHERTYPE = 2,	/* neither IPv4 nor IPv6 (nor RoCE v1) */
	FRAME_KIND_IP_PROTO = 3,	/* neither UDP nor GRE */
	FRAME_KIND_UDP_PORT = 4,	/* UDP to a port that is not RoCE v2 (nor VXLAN) */
	FRAME_KIND_GRE_PROTO = 5,	/* GRE carrying what no mirror session sends */
};
#define FRAME_KIND_TUNNEL(kind) (((kind) >> 16) & 0xff)
uint32_t roce_frame_kind(int linktype, const uint8_t *frame, size_t caplen);
/* "UDP port 8472", "link type 197", "TCP in erspan2", ... */
void roce_frame_kind_str(uint32_t kind, char *buf, size_t len);
/* True when the opcode is defined by the IBA (or is CNP). */
int roce_opcode_known(uint8_t opcode);

#endif
