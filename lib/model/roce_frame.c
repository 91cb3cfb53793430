/* roce_frame.c: build RoCE v2 frames (Ethernet/VLAN/IP/UDP/BTH/ext headers/ICRC) and parse BTH onwards. */
#include "lib/model/roce_frame.h"

#include <string.h>

#include "lib/util/byte_reader.h"

/*
 * Base Transport Header (IBA 9.2), 12 bytes:
 *
 *   0               1               2               3
 *  +---------------+-+-+---+-------+-------------------------------+
 *  |    OpCode     |S|M|Pad| TVer  |         Partition Key         |
 *  +-+-+-----------+-+-+---+-------+-------------------------------+
 *  |F|B|  Resv6    |          Destination QP                       |
 *  +-+-------------+-----------------------------------------------+
 *  |A|  Resv7      |          Packet Sequence Number               |
 *  +-+-------------+-----------------------------------------------+
 *
 * Extended headers follow in this order when the opcode has them (IBA table 38):
 * DETH (8: Q_Key, resv, source QP), RETH (16: VA, R_Key, DMA length), AtomicETH (28: VA,
 * R_Key, swap/add, compare), AETH (4: syndrome, MSN), AtomicAckETH (8: original data),
 * ImmDt (4) or IETH (4). A CNP (opcode 0x81) carries 16 reserved bytes.
 */

#define BTH_BYTES 12
#define DETH_BYTES 8
#define RETH_BYTES 16
#define ATOMICETH_BYTES 28
#define AETH_BYTES 4
#define ATOMICACKETH_BYTES 8
#define IMMDT_BYTES 4
#define CNP_RESERVED_BYTES 16
#define ICRC_BYTES 4

/* Which extended headers an opcode carries. */
struct ext_layout {
	bool deth, reth, atomiceth, aeth, atomicacketh, immdt, ieth, cnp;
};

static struct ext_layout ext_layout_of(uint8_t opcode)
{
	struct ext_layout l = {0};
	uint8_t tr = opcode >> 5, op = opcode & 0x1f;

	if (opcode == ROCE_OPCODE_CNP) {
		l.cnp = true;
		return l;
	}
	if (tr == ROCE_TR_UD)
		l.deth = true;
	switch (op) {
	case ROCE_OP_SEND_LAST_IMM:
	case ROCE_OP_SEND_ONLY_IMM:
		l.immdt = true;
		break;
	case ROCE_OP_WRITE_FIRST:
	case ROCE_OP_WRITE_ONLY:
	case ROCE_OP_READ_REQUEST:
		l.reth = true;
		break;
	case ROCE_OP_WRITE_LAST_IMM:
		l.immdt = true;
		break;
	case ROCE_OP_WRITE_ONLY_IMM:
		l.reth = true;
		l.immdt = true;
		break;
	case ROCE_OP_READ_RESP_FIRST:
	case ROCE_OP_READ_RESP_LAST:
	case ROCE_OP_READ_RESP_ONLY:
	case ROCE_OP_ACK:
		l.aeth = true;
		break;
	case ROCE_OP_ATOMIC_ACK:
		l.aeth = true;
		l.atomicacketh = true;
		break;
	case ROCE_OP_CMP_SWAP:
	case ROCE_OP_FETCH_ADD:
		l.atomiceth = true;
		break;
	case ROCE_OP_SEND_LAST_INV:
	case ROCE_OP_SEND_ONLY_INV:
		l.ieth = true;
		break;
	default:
		break;
	}
	return l;
}

size_t roce_ext_header_bytes(uint8_t opcode)
{
	struct ext_layout l = ext_layout_of(opcode);

	return (l.deth ? DETH_BYTES : 0) + (l.reth ? RETH_BYTES : 0) +
	       (l.atomiceth ? ATOMICETH_BYTES : 0) + (l.aeth ? AETH_BYTES : 0) +
	       (l.atomicacketh ? ATOMICACKETH_BYTES : 0) + (l.immdt ? IMMDT_BYTES : 0) +
	       (l.ieth ? IMMDT_BYTES : 0) + (l.cnp ? CNP_RESERVED_BYTES : 0);
}

/* CRC-32 (reflected 0xEDB88320), slice-by-8: the ICRC is computed for every untrimmed frame. */
static uint32_t crc_table[8][256];

__attribute__((constructor)) static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
}

/* Raw register update, no pre/post inversion. */
static uint32_t crc32_update(uint32_t c, const uint8_t *p, size_t n)
{
	while (n >= 8) {
		uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				   (uint32_t)p[3] << 24);
		uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			      (uint32_t)p[7] << 24;
		c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		    crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		    crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		    crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

uint32_t roce_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	return ~crc32_update(~crc, p, n);
}

uint32_t roce_icrc(const uint8_t *ip, size_t len, int ip_version)
{
	static const uint8_t masked_lrh[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t hdr[40 + 8 + BTH_BYTES];
	size_t ip_len = ip_version == 6 ? 40 : (size_t)(ip[0] & 0x0f) * 4;
	size_t hlen = ip_len + 8 + BTH_BYTES;

	if (len < hlen || hlen > sizeof(hdr))
		return 0;
	memcpy(hdr, ip, hlen);
	if (ip_version == 6) {
		hdr[0] |= 0x0f;		/* traffic class and flow label */
		hdr[1] = hdr[2] = hdr[3] = 0xff;
		hdr[7] = 0xff;		/* hop limit */
	} else {
		hdr[1] = 0xff;		/* TOS */
		hdr[8] = 0xff;		/* TTL */
		hdr[10] = hdr[11] = 0xff;	/* header checksum */
	}
	hdr[ip_len + 6] = hdr[ip_len + 7] = 0xff;	/* UDP checksum */
	hdr[ip_len + 8 + 4] = 0xff;	/* BTH FECN/BECN/reserved */
	uint32_t c = crc32_update(0xffffffffu, masked_lrh, sizeof(masked_lrh));
	c = crc32_update(c, hdr, hlen);
	c = crc32_update(c, ip + hlen, len - hlen);
	return ~c;
}

/* Ones'-complement sum for the UDP checksum. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	while (n >= 2) {
		sum += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		n -= 2;
	}
	if (n)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void fill_payload(uint8_t *p, uint32_t len, uint32_t psn)
{
	memset(p, (int)(0xa0 | (psn & 0x0f)), len);
}

/* BTH + extended headers + payload + pad + ICRC space; returns bytes or 0 if cap is short.
 * Only the first fill_len payload bytes are written (the rest is trimmed away anyway). */
static size_t put_transport(uint8_t *buf, size_t cap, const struct roce_pkt *pkt,
			    const uint8_t *payload, size_t fill_len)
{
	struct ext_layout l = ext_layout_of(pkt->opcode);
	uint32_t pay = l.cnp ? 0 : pkt->payload_len;
	uint8_t pad = (uint8_t)((4 - (pay & 3)) & 3);
	size_t n = BTH_BYTES + roce_ext_header_bytes(pkt->opcode) + pay + pad + ICRC_BYTES;
	uint8_t *p = buf;

	if (n > cap)
		return 0;
	p[0] = pkt->opcode;
	p[1] = (uint8_t)((pkt->flags & ROCE_F_SOLICITED ? 0x80 : 0) |
			 (pkt->flags & ROCE_F_MIGREQ ? 0x40 : 0) | pad << 4 | (pkt->tver & 0x0f));
	put_be16(p + 2, pkt->pkey ? pkt->pkey : 0xffff);
	p[4] = (uint8_t)((pkt->fecn ? 0x80 : 0) | (pkt->becn ? 0x40 : 0));
	put_be24(p + 5, pkt->dest_qp & 0xffffff);
	p[8] = pkt->flags & ROCE_F_ACK_REQ ? 0x80 : 0;
	put_be24(p + 9, pkt->psn & 0xffffff);
	p += BTH_BYTES;
	if (l.deth) {
		put_be32(p, pkt->deth_qkey);
		p[4] = 0;
		put_be24(p + 5, pkt->deth_src_qp & 0xffffff);
		p += DETH_BYTES;
	}
	if (l.reth) {
		put_be64(p, pkt->reth_va);
		put_be32(p + 8, pkt->reth_rkey);
		put_be32(p + 12, pkt->reth_dma_len);
		p += RETH_BYTES;
	}
	if (l.atomiceth) {
		put_be64(p, pkt->atomic_va);
		put_be32(p + 8, pkt->atomic_rkey);
		put_be64(p + 12, pkt->atomic_swap_add);
		put_be64(p + 20, pkt->atomic_compare);
		p += ATOMICETH_BYTES;
	}
	if (l.aeth) {
		p[0] = pkt->aeth_syndrome;
		put_be24(p + 1, pkt->aeth_msn & 0xffffff);
		p += AETH_BYTES;
	}
	if (l.atomicacketh) {
		put_be64(p, pkt->atomic_orig);
		p += ATOMICACKETH_BYTES;
	}
	if (l.immdt) {
		put_be32(p, pkt->imm_data);
		p += IMMDT_BYTES;
	}
	if (l.ieth) {
		put_be32(p, pkt->ieth_rkey);
		p += IMMDT_BYTES;
	}
	if (l.cnp) {
		memset(p, 0, CNP_RESERVED_BYTES);
		p += CNP_RESERVED_BYTES;
	}
	if (pay) {
		uint32_t fill = fill_len < pay ? (uint32_t)fill_len : pay;
		if (payload)
			memcpy(p, payload, fill);
		else
			fill_payload(p, fill, pkt->psn);
		p += pay;
		if (fill < pay)
			return n;
	}
	memset(p, 0, pad + ICRC_BYTES);
	return n;
}

size_t roce_frame_build_transport(uint8_t *buf, size_t cap, const struct roce_pkt *pkt,
				  const uint8_t *payload)
{
	return put_transport(buf, cap, pkt, payload, SIZE_MAX);
}

static size_t frame_build(uint8_t *buf, size_t cap, const struct roce_frame_addr *addr,
			  const struct roce_pkt *pkt, const uint8_t *payload, bool icrc,
			  size_t snaplen)
{
	size_t eth_len = addr->vlan_id ? 18 : 14;
	size_t ip_len = addr->ip_version == 6 ? 40 : 20;
	size_t hdr = eth_len + ip_len + 8;
	uint8_t *p = buf;

	if (cap < hdr)
		return 0;
	/* With a snap length, IPv4 frames need their payload only up to it: the UDP checksum
	 * is zero and the ICRC is not computed. IPv6's UDP checksum covers every byte. */
	size_t fill = SIZE_MAX;
	if (snaplen && addr->ip_version != 6 && !addr->udp_checksum)
		fill = snaplen > hdr + BTH_BYTES ? snaplen - hdr : 0;
	size_t tlen = put_transport(buf + hdr, cap - hdr, pkt, payload, fill);
	if (!tlen)
		return 0;
	size_t udp_len = 8 + tlen;

	memcpy(p, addr->dst_mac, 6);
	memcpy(p + 6, addr->src_mac, 6);
	p += 12;
	if (addr->vlan_id) {
		put_be16(p, 0x8100);
		put_be16(p + 2, (uint16_t)((addr->vlan_pcp & 7) << 13 | (addr->vlan_id & 0x0fff)));
		p += 4;
	}
	put_be16(p, addr->ip_version == 6 ? 0x86dd : 0x0800);
	p += 2;
	uint8_t *ip = p;
	uint8_t tos = (uint8_t)(addr->dscp << 2 | (addr->ecn & 3));
	if (addr->ip_version == 6) {
		put_be32(p, 6u << 28 | (uint32_t)tos << 20 | (addr->flow_label & 0xfffff));
		put_be16(p + 4, (uint16_t)udp_len);
		p[6] = 17;
		p[7] = addr->ttl;
		memcpy(p + 8, addr->src_ip, 16);
		memcpy(p + 24, addr->dst_ip, 16);
	} else {
		p[0] = 0x45;
		p[1] = tos;
		put_be16(p + 2, (uint16_t)(20 + udp_len));
		put_be16(p + 4, addr->ip_id);
		put_be16(p + 6, 0x4000);	/* DF */
		p[8] = addr->ttl;
		p[9] = 17;
		put_be16(p + 10, 0);
		memcpy(p + 12, addr->src_ip + 12, 4);
		memcpy(p + 16, addr->dst_ip + 12, 4);
		put_be16(p + 10, csum_fold(csum_add(0, p, 20)));
	}
	p += ip_len;
	put_be16(p, addr->udp_sport);
	put_be16(p + 2, addr->udp_dport ? addr->udp_dport : ROCE_V2_UDP_PORT);
	put_be16(p + 4, (uint16_t)udp_len);
	put_be16(p + 6, 0);
	size_t frame_len = hdr + tlen;
	if (icrc) {
		uint32_t c = roce_icrc(ip, ip_len + udp_len - ICRC_BYTES, addr->ip_version);
		uint8_t *q = buf + frame_len - ICRC_BYTES;
		q[0] = (uint8_t)c;
		q[1] = (uint8_t)(c >> 8);
		q[2] = (uint8_t)(c >> 16);
		q[3] = (uint8_t)(c >> 24);
	}
	if (addr->ip_version == 6 || addr->udp_checksum) {
		uint32_t sum = 0;
		uint8_t pseudo[4];
		if (addr->ip_version == 6) {
			sum = csum_add(sum, ip + 8, 32);
			put_be32(pseudo, (uint32_t)udp_len);
			sum = csum_add(sum, pseudo, 4);
		} else {
			sum = csum_add(sum, ip + 12, 8);
			put_be16(pseudo, (uint16_t)udp_len);
			sum = csum_add(sum, pseudo, 2);
		}
		sum += 17;
		sum = csum_add(sum, p, udp_len);
		uint16_t c = csum_fold(sum);
		put_be16(p + 6, c ? c : 0xffff);
	}
	return frame_len;
}

size_t roce_frame_build(uint8_t *buf, size_t cap, const struct roce_frame_addr *addr,
			const struct roce_pkt *pkt, const uint8_t *payload, bool icrc)
{
	return frame_build(buf, cap, addr, pkt, payload, icrc, 0);
}

size_t roce_frame_build_snap(uint8_t *buf, size_t cap, const struct roce_frame_addr *addr,
			     const struct roce_pkt *pkt, const uint8_t *payload, size_t snaplen)
{
	size_t hdr = (addr->vlan_id ? 18 : 14) + (addr->ip_version == 6 ? 40 : 20) + 8;
	size_t len = hdr + BTH_BYTES + roce_ext_header_bytes(pkt->opcode) +
		     (pkt->opcode == ROCE_OPCODE_CNP ? 0 : pkt->payload_len);
	len += ((4 - (len & 3)) & 3) + ICRC_BYTES;	/* hdr is 4-byte aligned: pad follows payload */
	if (!snaplen || len <= snaplen)
		return frame_build(buf, cap, addr, pkt, payload, true, 0);
	return frame_build(buf, cap, addr, pkt, payload, false, snaplen);
}

int roce_frame_parse_transport(const uint8_t *data, size_t len, struct roce_pkt *out)
{
	struct byte_reader br;

	memset(out, 0, sizeof(*out));
	br_init(&br, data, len);
	out->opcode = br_u8(&br);
	uint8_t b1 = br_u8(&br);
	out->pkey = br_be16(&br);
	uint8_t b4 = br_u8(&br);
	out->dest_qp = br_be24(&br);
	uint8_t b8 = br_u8(&br);
	out->psn = br_be24(&br);
	if (br.short_read)
		return -4;
	out->headers = ROCE_H_BTH;
	out->roce_version = 2;
	out->udp_dport = ROCE_V2_UDP_PORT;
	out->pad_count = (b1 >> 4) & 3;
	out->tver = b1 & 0x0f;
	out->fecn = b4 >> 7;
	out->becn = (b4 >> 6) & 1;
	out->transport = out->opcode == ROCE_OPCODE_CNP ? ROCE_TR_CNP : out->opcode >> 5;
	if (b1 & 0x80)
		out->flags |= ROCE_F_SOLICITED;
	if (b1 & 0x40)
		out->flags |= ROCE_F_MIGREQ;
	if (b8 & 0x80)
		out->flags |= ROCE_F_ACK_REQ;

	struct ext_layout l = ext_layout_of(out->opcode);
	if (l.deth) {
		out->deth_qkey = br_be32(&br);
		br_u8(&br);
		out->deth_src_qp = br_be24(&br);
		out->headers |= ROCE_H_DETH;
	}
	if (l.reth) {
		out->reth_va = br_be64(&br);
		out->reth_rkey = br_be32(&br);
		out->reth_dma_len = br_be32(&br);
		out->headers |= ROCE_H_RETH;
	}
	if (l.atomiceth) {
		out->atomic_va = br_be64(&br);
		out->atomic_rkey = br_be32(&br);
		out->atomic_swap_add = br_be64(&br);
		out->atomic_compare = br_be64(&br);
		out->headers |= ROCE_H_ATOMICETH;
	}
	if (l.aeth) {
		out->aeth_syndrome = br_u8(&br);
		out->aeth_msn = br_be24(&br);
		out->headers |= ROCE_H_AETH;
	}
	if (l.atomicacketh) {
		out->atomic_orig = br_be64(&br);
		out->headers |= ROCE_H_ATOMICACKETH;
	}
	if (l.immdt) {
		out->imm_data = br_be32(&br);
		out->headers |= ROCE_H_IMMDT;
	}
	if (l.ieth) {
		out->ieth_rkey = br_be32(&br);
		out->headers |= ROCE_H_IETH;
	}
	if (l.cnp)
		br_skip(&br, CNP_RESERVED_BYTES);
	if (br.short_read)
		return -5;
	size_t rest = br_remaining(&br);
	if (rest < (size_t)out->pad_count + ICRC_BYTES)
		return -5;
	out->payload_len = (uint32_t)(rest - out->pad_count - ICRC_BYTES);
	out->cap_len = out->orig_len = (uint32_t)len;
	return 0;
}

/* ---- Mirror-session tunnels ---- */

#define GRE_PROTO_ERSPAN_2 0x88be
#define GRE_PROTO_ERSPAN_3 0x22eb
#define GRE_PROTO_TEB 0x6558
#define GRE_FLAG_SEQ 0x1000
#define VXLAN_PORT 4789

size_t roce_frame_tunnel_hdr_len(uint8_t kind)
{
	switch (kind) {
	case ROCE_ENCAP_ERSPAN2:
		return 14 + 20 + 8 + 8;
	case ROCE_ENCAP_ERSPAN3:
		return 14 + 20 + 8 + 12 + 8;
	case ROCE_ENCAP_GRE_TEB:
		return 14 + 20 + 8;
	case ROCE_ENCAP_VXLAN:
		return 14 + 20 + 8 + 8;
	default:
		return 0;
	}
}

/* ERSPAN II (draft-foschiano-erspan-03 4.2): Ver 1, VLAN 0, COS 0, En 0, T 0, session; index 0. */
static void put_erspan2(uint8_t *p, const struct roce_frame_tunnel *t)
{
	put_be16(p, 1u << 12);
	put_be16(p + 2, t->session_id & 0x3ff);
	put_be32(p + 4, 0);
}

/*
 * ERSPAN III (draft 4.3): Ver 2, session; timestamp = ns within the second; SGT 0, P 1, FT 0
 * (Ethernet), Hw ID 0, D 0, Gra 2 (IEEE 1588), O 1; platform sub-header ID 3: the seconds.
 */
static void put_erspan3(uint8_t *p, const struct roce_frame_tunnel *t)
{
	put_be16(p, 2u << 12);
	put_be16(p + 2, t->session_id & 0x3ff);
	put_be32(p + 4, (uint32_t)(t->ts_ns % 1000000000u));
	put_be32(p + 8, 1u << 15 | (uint32_t)ERSPAN_GRA_IEEE1588 << 1 | 1u);
	put_be32(p + 12, 3u << 26);
	put_be32(p + 16, (uint32_t)(t->ts_ns / 1000000000u));
}

size_t roce_frame_tunnel_hdr(uint8_t *buf, size_t cap, const struct roce_frame_tunnel *t,
			     size_t inner_len)
{
	size_t hdr_len = roce_frame_tunnel_hdr_len(t->kind);
	uint8_t *ip = buf + 14, *l4 = buf + 34;
	size_t ip_len = hdr_len - 14 + inner_len;

	if (!hdr_len || cap < hdr_len || ip_len > 0xffff)
		return 0;
	memcpy(buf, t->dst_mac, 6);
	memcpy(buf + 6, t->src_mac, 6);
	put_be16(buf + 12, 0x0800);

	memset(ip, 0, 20);
	ip[0] = 0x45;
	put_be16(ip + 2, (uint16_t)ip_len);
	put_be16(ip + 4, (uint16_t)t->seq);
	put_be16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = t->kind == ROCE_ENCAP_VXLAN ? 17 : 47;
	memcpy(ip + 12, t->src_ip, 4);
	memcpy(ip + 16, t->dst_ip, 4);
	put_be16(ip + 10, csum_fold(csum_add(0, ip, 20)));

	if (t->kind == ROCE_ENCAP_VXLAN) {
		/* UDP (checksum 0, RFC 7348 5), then I flag and the VNI. */
		put_be16(l4, t->udp_sport);
		put_be16(l4 + 2, VXLAN_PORT);
		put_be16(l4 + 4, (uint16_t)(ip_len - 20));
		put_be16(l4 + 6, 0);
		put_be32(l4 + 8, 0x08000000);
		put_be32(l4 + 12, (t->session_id & 0xffffff) << 8);
		return hdr_len;
	}
	/* GRE with the sequence bit (RFC 2890), then the ERSPAN header if any. */
	put_be16(l4, GRE_FLAG_SEQ);
	put_be16(l4 + 2, t->kind == ROCE_ENCAP_ERSPAN3 ? GRE_PROTO_ERSPAN_3 :
			 t->kind == ROCE_ENCAP_ERSPAN2 ? GRE_PROTO_ERSPAN_2 : GRE_PROTO_TEB);
	put_be32(l4 + 4, t->seq);
	if (t->kind == ROCE_ENCAP_ERSPAN2)
		put_erspan2(l4 + 8, t);
	else if (t->kind == ROCE_ENCAP_ERSPAN3)
		put_erspan3(l4 + 8, t);
	return hdr_len;
}
