/* roce_tunnel.c: the tunnels of mirror sessions (GRE, ERSPAN I/II/III, VXLAN) around a frame. */
#include <stdbool.h>
#include <string.h>

#include "lib/decode/roce_decode.h"
#include "lib/decode/roce_decode_int.h"

#define GRE_PROTO_ERSPAN_1_2 0x88be	/* ERSPAN type I and II */
#define GRE_PROTO_ERSPAN_3 0x22eb
#define GRE_PROTO_TEB 0x6558		/* transparent Ethernet bridging */

/*
 * GRE (RFC 2784 section 2, key and sequence number RFC 2890 section 2):
 *    0                   1                   2                   3
 *   +-+-+-+-+-+-----+---------+-----+-------------------------------+
 *   |C|R|K|S|s|Recur|  Flags  | Ver |         Protocol Type         |
 *   +-+-+-+-+-+-----+---------+-----+-------------------------------+
 *   |      Checksum (if C)          |       Reserved1 (if C)        |
 *   +-------------------------------+-------------------------------+
 *   |                         Key (if K)                            |
 *   +---------------------------------------------------------------+
 *   |                   Sequence Number (if S)                      |
 *   +---------------------------------------------------------------+
 * Each optional word moves what follows. Version 1 (PPTP) and source routing (R, RFC 1701)
 * never carry a mirror session: not RoCE.
 */
static int dissect_gre(struct byte_reader *br, struct roce_tunnel *t, uint16_t *proto, bool *has_seq)
{
	uint16_t flags = br_be16(br);

	*proto = br_be16(br);
	if (br->short_read)
		return ROCE_DECODE_BAD_ENCAP;
	if ((flags & 0x0007) != 0 || (flags & 0x4000))
		return ROCE_DECODE_NOT_ROCE;
	if (flags & 0x8000)
		br_skip(br, 4);
	if (flags & 0x2000)
		t->id = br_be32(br);
	*has_seq = flags & 0x1000;
	if (*has_seq)
		br_skip(br, 4);
	return br->short_read ? ROCE_DECODE_BAD_ENCAP : 0;
}

/*
 * ERSPAN type II header (draft-foschiano-erspan-03 section 4.2), after GRE with S set:
 *    0                   1                   2                   3
 *   +-------+-----------------------+-----+---+-+-------------------+
 *   |  Ver  |          VLAN         | COS | En|T|    Session ID     |
 *   +-------+---------------+-------+-----+---+-+-------------------+
 *   |      Reserved         |                  Index                |
 *   +-----------------------+---------------------------------------+
 * Ver = 1. The mirrored Ethernet frame follows.
 */
static int dissect_erspan2(struct byte_reader *br, struct roce_tunnel *t)
{
	uint16_t ver_vlan = br_be16(br);
	uint16_t cos_id = br_be16(br);

	br_skip(br, 4);
	if (br->short_read)
		return ROCE_DECODE_BAD_ENCAP;
	if (ver_vlan >> 12 != 1)
		return ROCE_DECODE_BAD_ENCAP;
	t->kind = ROCE_ENCAP_ERSPAN2;
	t->id = cos_id & 0x03ff;
	return 0;
}

/*
 * ERSPAN type III header (draft-foschiano-erspan-03 section 4.3), GRE protocol 0x22eb:
 *    0                   1                   2                   3
 *   +-------+-----------------------+-----+---+-+-------------------+
 *   |  Ver  |          VLAN         | COS |BSO|T|     Session ID    |
 *   +-------+-----------------------+-----+---+-+-------------------+
 *   |                          Timestamp                            |
 *   +-------------------------------+-+---------+-----------+-+---+-+
 *   |             SGT               |P|    FT   |   Hw ID   |D|Gra|O|
 *   +-------------------------------+-+---------+-----------+-+---+-+
 *   | Platf ID  |            Platform Specific Info (if O)          |
 *   +-----------+---------------------------------------------------+
 *   |                  Platform Specific Info (if O)                |
 *   +---------------------------------------------------------------+
 * Ver = 2. Gra: 0 100 us, 1 100 ns, 2 IEEE 1588, 3 user. Platform ID 3 carries the upper 32
 * bits of the timestamp (IEEE 1588: seconds) in its second word.
 */
static int dissect_erspan3(struct byte_reader *br, struct roce_tunnel *t)
{
	uint16_t ver_vlan = br_be16(br);
	uint16_t cos_id = br_be16(br);
	uint32_t ts = br_be32(br);
	uint32_t sgt_flags = br_be32(br);

	if (br->short_read || ver_vlan >> 12 != 2)
		return ROCE_DECODE_BAD_ENCAP;
	t->kind = ROCE_ENCAP_ERSPAN3;
	t->id = cos_id & 0x03ff;
	t->ts = ts;
	t->gra = (sgt_flags >> 1) & 0x3;
	t->dir = (sgt_flags >> 3) & 0x1;
	if (sgt_flags & 0x1) {
		uint32_t word = br_be32(br);
		uint32_t info = br_be32(br);

		if (br->short_read)
			return ROCE_DECODE_BAD_ENCAP;
		t->platform_id = word >> 26;
		if (t->platform_id == 3)
			t->ts_hi = info;
	}
	return 0;
}

/*
 * VXLAN header (RFC 7348 section 5), after UDP to port 4789:
 *    0                   1                   2                   3
 *   +-+-+-+-+-+-+-+-+-----------------------------------------------+
 *   |R|R|R|R|I|R|R|R|                 Reserved                      |
 *   +-+-+-+-+-+-+-+-+-------------------------------+---------------+
 *   |          VXLAN Network Identifier (VNI)       |   Reserved    |
 *   +-----------------------------------------------+---------------+
 * The I flag must be set (a valid VNI). The Ethernet frame follows.
 */
int roce_dissect_vxlan(struct byte_reader *br, struct roce_tunnel *t)
{
	uint32_t flags = br_be32(br);
	uint32_t vni = br_be32(br);

	if (br->short_read || !(flags & 0x08000000))
		return ROCE_DECODE_BAD_ENCAP;
	t->kind = ROCE_ENCAP_VXLAN;
	t->id = vni >> 8;
	return 0;
}

/* GRE and what its protocol type says follows: ERSPAN I/II/III or a bridged Ethernet frame. */
int roce_dissect_gre_tunnel(struct byte_reader *br, struct roce_tunnel *t)
{
	uint16_t proto;
	bool has_seq;
	int rc = dissect_gre(br, t, &proto, &has_seq);

	if (rc)
		return rc;
	switch (proto) {
	case GRE_PROTO_ERSPAN_1_2:
		/* Type I is bare GRE (no sequence number, no ERSPAN header); type II sets S. */
		if (!has_seq) {
			t->kind = ROCE_ENCAP_ERSPAN1;
			t->id = 0;
			return 0;
		}
		return dissect_erspan2(br, t);
	case GRE_PROTO_ERSPAN_3:
		return dissect_erspan3(br, t);
	case GRE_PROTO_TEB:
		t->kind = ROCE_ENCAP_GRE_TEB;
		return 0;
	default:
		return ROCE_DECODE_NOT_ROCE;
	}
}


int roce_erspan3_ns(const struct roce_pkt *p, uint64_t near_ns, uint64_t *ns)
{
	uint64_t sec;

	if (p->encap != ROCE_ENCAP_ERSPAN3 || p->erspan_gra != ERSPAN_GRA_IEEE1588 ||
	    p->erspan_ts >= 1000000000u)
		return -1;
	if (p->erspan_platform_id == 3) {
		*ns = (uint64_t)p->erspan_ts_hi * 1000000000u + p->erspan_ts;
		return 0;
	}
	/* Nanoseconds alone: the second nearest the arrival (the mirror path is far shorter). */
	if (near_ns + 500000000u < p->erspan_ts)
		return -1;
	sec = (near_ns + 500000000u - p->erspan_ts) / 1000000000u;
	*ns = sec * 1000000000u + p->erspan_ts;
	return 0;
}
