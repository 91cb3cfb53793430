/* roce_frames.c: craft RoCE v1/v2 test frames with every extended header the opcode implies. */
#include "tests/bpf/roce_frames.h"

#include <string.h>

#include "lib/util/byte_reader.h"

enum ext_hdr {
	EXT_RDETH = 1u << 0,	/* 4 bytes */
	EXT_DETH = 1u << 1,	/* 8 */
	EXT_XRCETH = 1u << 2,	/* 4 */
	EXT_RETH = 1u << 3,	/* 16 */
	EXT_ATOMIC = 1u << 4,	/* 28 */
	EXT_AETH = 1u << 5,	/* 4 */
	EXT_ATOMICACK = 1u << 6, /* 8 */
	EXT_IMM = 1u << 7,	/* 4 */
	EXT_IETH = 1u << 8,	/* 4 */
	EXT_CNP = 1u << 9,	/* 16 reserved bytes */
};

/* The header sequence of an RC-style operation code (IBA 9.2, table 38). */
static unsigned rc_op_headers(unsigned op)
{
	switch (op) {
	case 0x03: case 0x05: case 0x09:
		return EXT_IMM;
	case 0x06: case 0x0a: case 0x0c:
		return EXT_RETH;
	case 0x0b:
		return EXT_RETH | EXT_IMM;
	case 0x0d: case 0x0f: case 0x10: case 0x11:
		return EXT_AETH;
	case 0x12:
		return EXT_AETH | EXT_ATOMICACK;
	case 0x13: case 0x14:
		return EXT_ATOMIC;
	case 0x16: case 0x17:
		return EXT_IETH;
	default:
		return 0;
	}
}

static int is_request(unsigned op)
{
	return op <= 0x0c || op == 0x13 || op == 0x14 || op == 0x15 || op == 0x16 || op == 0x17;
}

static unsigned opcode_headers(uint8_t opcode)
{
	unsigned tr = opcode >> 5, op = opcode & 0x1f;

	switch (tr) {
	case 0: /* RC */
		return rc_op_headers(op);
	case 1: /* UC: SEND and WRITE only */
		return op <= 0x0b ? rc_op_headers(op) : 0;
	case 2: /* RD */
		return EXT_RDETH | (is_request(op) ? EXT_DETH : 0) | rc_op_headers(op);
	case 3: /* UD */
		return op == 0x04 ? EXT_DETH : op == 0x05 ? EXT_DETH | EXT_IMM : 0;
	case 4:
		return opcode == 0x81 ? EXT_CNP : 0;
	case 5: /* XRC */
		return (is_request(op) ? EXT_XRCETH : 0) | rc_op_headers(op);
	default:
		return 0;
	}
}

static const struct {
	unsigned bit;
	size_t bytes;
} ext_sizes[] = {
	{ EXT_RDETH, 4 }, { EXT_DETH, 8 }, { EXT_XRCETH, 4 }, { EXT_RETH, 16 },
	{ EXT_ATOMIC, 28 }, { EXT_AETH, 4 }, { EXT_ATOMICACK, 8 }, { EXT_IMM, 4 },
	{ EXT_IETH, 4 }, { EXT_CNP, 16 },
};

size_t roce_frame_ext_bytes(uint8_t opcode)
{
	unsigned h = opcode_headers(opcode);
	size_t n = 0;

	for (size_t i = 0; i < sizeof(ext_sizes) / sizeof(ext_sizes[0]); i++)
		if (h & ext_sizes[i].bit)
			n += ext_sizes[i].bytes;
	return n;
}

size_t roce_frame_bth_end(const struct roce_frame_spec *s)
{
	size_t n = 14 + 4 * (size_t)s->n_vlan;

	if (s->roce_version == 1)
		return n + 40 + 12;
	n += s->ip_version == 6 ? 40 : 20 + 4 * (size_t)s->ipv4_option_words;
	return n + 8 + 12;
}

void roce_frame_set_ipv4(uint8_t addr[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(addr, 0, 16);
	addr[10] = addr[11] = 0xff;
	addr[12] = a;
	addr[13] = b;
	addr[14] = c;
	addr[15] = d;
}

void roce_frame_default(struct roce_frame_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->roce_version = 2;
	s->ip_version = 4;
	s->opcode = 0x04;
	s->dest_qp = 0x12;
	s->psn = 100;
	s->payload_bytes = 64;
	s->udp_sport = 49152;
	roce_frame_set_ipv4(s->src_ip, 198, 18, 0, 1);
	roce_frame_set_ipv4(s->dst_ip, 198, 18, 0, 2);
}

static uint16_t ipv4_checksum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Extended headers in wire order, with contents derived from the seed so frames differ. */
static uint8_t *put_ext_headers(const struct roce_frame_spec *s, uint8_t *p)
{
	unsigned h = opcode_headers(s->opcode);
	uint32_t seed = s->seed;

	if (h & EXT_RDETH) {
		put_be32(p, 0x00000100 + seed); /* EE context */
		p += 4;
	}
	if (h & EXT_DETH) {
		put_be32(p, s->dest_qp == 1 ? 0x80010000 : 0x11110000 + seed); /* Q_Key */
		put_be32(p + 4, 0x000020 + seed);				 /* source QP */
		p += 8;
	}
	if (h & EXT_XRCETH) {
		put_be32(p, 0x000300 + seed); /* XRC SRQ */
		p += 4;
	}
	if (h & EXT_RETH) {
		put_be64(p, 0x00007f0000001000ull + ((uint64_t)seed << 12)); /* VA */
		put_be32(p + 8, 0x1234 + seed);					/* R_Key */
		put_be32(p + 12, s->payload_bytes * 4);				/* DMA length */
		p += 16;
	}
	if (h & EXT_ATOMIC) {
		put_be64(p, 0x00007f0000002000ull + seed * 8);
		put_be32(p + 8, 0x5678 + seed);
		put_be64(p + 12, 1 + seed);	/* swap / add */
		put_be64(p + 20, 0);		/* compare */
		p += 28;
	}
	if (h & EXT_AETH) {
		put_be32(p, (uint32_t)0x1f << 24 | (s->psn & 0xffffff)); /* ACK, credits 0x1f, MSN */
		p += 4;
	}
	if (h & EXT_ATOMICACK) {
		put_be64(p, 0x100 + seed);
		p += 8;
	}
	if (h & EXT_IMM) {
		put_be32(p, 0xdead0000 + seed);
		p += 4;
	}
	if (h & EXT_IETH) {
		put_be32(p, 0x4321 + seed);
		p += 4;
	}
	if (h & EXT_CNP) {
		memset(p, 0, 16);
		p += 16;
	}
	return p;
}

size_t roce_frame_build(const struct roce_frame_spec *s, uint8_t *buf, size_t cap)
{
	size_t pad = (4 - s->payload_bytes % 4) % 4;
	size_t ib_len = 12 + roce_frame_ext_bytes(s->opcode) + s->payload_bytes + pad + 4;
	size_t ip_hdr = s->roce_version == 1 ? 40
			: s->ip_version == 6	 ? 40
						 : 20 + 4 * (size_t)s->ipv4_option_words;
	size_t total = 14 + 4 * (size_t)s->n_vlan + ip_hdr + (s->roce_version == 2 ? 8 : 0) + ib_len;
	uint16_t ethertype;
	uint8_t *p = buf;

	if (total > cap || total > 65535)
		return 0;
	memset(buf, 0, total);
	/* Ethernet: locally administered MACs that name the direction. */
	memcpy(p, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(p + 6, "\x02\x00\x00\x00\x00\x01", 6);
	p += 12;
	if (s->n_vlan == 2) {
		put_be16(p, 0x88a8);
		put_be16(p + 2, 100);
		p += 4;
	}
	if (s->n_vlan >= 1) {
		put_be16(p, 0x8100);
		put_be16(p + 2, 3 << 13 | 42); /* PCP 3, VID 42 */
		p += 4;
	}
	ethertype = s->roce_version == 1 ? 0x8915 : s->ip_version == 6 ? 0x86dd : 0x0800;
	put_be16(p, ethertype);
	p += 2;

	if (s->roce_version == 1 || s->ip_version == 6) {
		size_t next_len = s->roce_version == 1 ? ib_len : 8 + ib_len;

		put_be32(p, 6u << 28 | 0x68u << 20 | 0x12345); /* version, traffic class, flow */
		put_be16(p + 4, (uint16_t)next_len);
		p[6] = s->roce_version == 1 ? 0x1b : 17; /* BTH, or UDP */
		p[7] = 64;
		if (s->roce_version == 1 || s->ip_version == 6) {
			memcpy(p + 8, s->src_ip, 16);
			memcpy(p + 24, s->dst_ip, 16);
		}
		p += 40;
	} else {
		size_t ihl = 5 + (size_t)s->ipv4_option_words;

		p[0] = (uint8_t)(0x40 | ihl);
		p[1] = 0x68 | 0x02; /* DSCP 26, ECT(0) */
		put_be16(p + 2, (uint16_t)(ihl * 4 + 8 + ib_len));
		put_be16(p + 4, (uint16_t)(0x100 + s->seed));
		put_be16(p + 6, 0x4000); /* DF */
		p[8] = 64;
		p[9] = 17;
		memcpy(p + 12, s->src_ip + 12, 4);
		memcpy(p + 16, s->dst_ip + 12, 4);
		for (size_t i = 20; i < ihl * 4; i++)
			p[i] = 1; /* NOP options */
		put_be16(p + 10, ipv4_checksum(p, ihl * 4));
		p += ihl * 4;
	}
	if (s->roce_version == 2) {
		put_be16(p, s->udp_sport);
		put_be16(p + 2, s->udp_dport ? s->udp_dport : 4791);
		put_be16(p + 4, (uint16_t)(8 + ib_len));
		put_be16(p + 6, 0); /* RoCE v2 sends a zero UDP checksum */
		p += 8;
	}
	/* BTH */
	p[0] = s->opcode;
	p[1] = (uint8_t)(pad << 4); /* SE 0, M 0, pad, TVer 0 */
	put_be16(p + 2, 0xffff);
	put_be32(p + 4, s->dest_qp & 0xffffff);
	put_be32(p + 8, (s->opcode == 0x04 || s->opcode == 0x0a ? 1u << 31 : 0) | (s->psn & 0xffffff));
	p += 12;
	p = put_ext_headers(s, p);
	for (size_t i = 0; i < s->payload_bytes; i++)
		*p++ = (uint8_t)(i + s->seed);
	p += pad;
	put_be32(p, 0xc0ffee00 + s->seed); /* ICRC: not computed, nothing checks it */
	p += 4;
	return (size_t)(p - buf);
}

/*
 * The tunnels here vary what roce_capture.bpf.c must step over (outer tags, IPv4 options or
 * IPv6, GRE optional words, the ERSPAN III platform sub-header), which the synthesizer's
 * fixed IPv4 tunnels (lib/model/roce_frame.c) do not.
 */
static size_t tunnel_l4_bytes(const struct roce_tunnel_spec *t)
{
	size_t gre = 4 + 4 * (size_t)(!!t->gre_csum + !!t->gre_key);

	switch (t->kind) {
	case ROCE_TUNNEL_ERSPAN1:
	case ROCE_TUNNEL_GRE_TEB:
		return gre;
	case ROCE_TUNNEL_ERSPAN2:
		return gre + 4 + 8;
	case ROCE_TUNNEL_ERSPAN3:
		return gre + 4 + 12 + (t->erspan3_platform ? 8 : 0);
	case ROCE_TUNNEL_VXLAN:
	default:
		return 8 + 8;
	}
}

size_t roce_tunnel_hdr_bytes(const struct roce_tunnel_spec *t)
{
	size_t ip = t->ip_version == 6 ? 40 : 20 + 4 * (size_t)t->ipv4_option_words;

	return 14 + 4 * (size_t)t->n_vlan + ip + tunnel_l4_bytes(t);
}

static uint8_t *put_gre(const struct roce_tunnel_spec *t, uint8_t *p)
{
	static const uint16_t proto[] = {
		[ROCE_TUNNEL_ERSPAN1] = 0x88be, [ROCE_TUNNEL_ERSPAN2] = 0x88be,
		[ROCE_TUNNEL_ERSPAN3] = 0x22eb, [ROCE_TUNNEL_GRE_TEB] = 0x6558,
	};
	int seq = t->kind == ROCE_TUNNEL_ERSPAN2 || t->kind == ROCE_TUNNEL_ERSPAN3;

	put_be16(p, (uint16_t)((t->gre_csum ? 0x8000 : 0) | (t->gre_key ? 0x2000 : 0) |
			       (seq ? 0x1000 : 0)));
	put_be16(p + 2, t->gre_proto ? t->gre_proto : proto[t->kind]);
	p += 4;
	if (t->gre_csum)
		p += 4; /* checksum 0: nothing checks it */
	if (t->gre_key) {
		put_be32(p, 0x00c0ffee);
		p += 4;
	}
	if (seq) {
		put_be32(p, 7);
		p += 4;
	}
	if (t->kind == ROCE_TUNNEL_ERSPAN2) {
		put_be16(p, (uint16_t)((t->erspan_ver ? t->erspan_ver : 1) << 12));
		put_be16(p + 2, 0x2a); /* session 42 */
		p += 8;
	} else if (t->kind == ROCE_TUNNEL_ERSPAN3) {
		put_be16(p, (uint16_t)((t->erspan_ver ? t->erspan_ver : 2) << 12));
		put_be16(p + 2, 0x2a);
		put_be32(p + 4, 123456789);
		put_be32(p + 8, 1u << 15 | 2u << 1 | (t->erspan3_platform ? 1u : 0u));
		p += 12;
		if (t->erspan3_platform) {
			put_be32(p, 3u << 26);
			put_be32(p + 4, 1700000000);
			p += 8;
		}
	}
	return p;
}

size_t roce_frame_wrap(const struct roce_tunnel_spec *t, const uint8_t *inner, size_t inner_len,
		       uint8_t *buf, size_t cap)
{
	size_t hdr = roce_tunnel_hdr_bytes(t);
	size_t l4_len = tunnel_l4_bytes(t) + inner_len;
	uint8_t l4_proto = t->kind == ROCE_TUNNEL_VXLAN ? 17 : 47;
	uint8_t *p = buf;

	if (hdr + inner_len > cap || l4_len + 60 > 65535)
		return 0;
	memset(buf, 0, hdr);
	memcpy(p, "\x02\x00\x00\x00\x00\xc0", 6); /* the collector */
	memcpy(p + 6, "\x02\x00\x00\x00\x00\x5e", 6); /* the switch */
	p += 12;
	if (t->n_vlan == 2) {
		put_be16(p, 0x88a8);
		put_be16(p + 2, 200);
		p += 4;
	}
	if (t->n_vlan >= 1) {
		put_be16(p, 0x8100);
		put_be16(p + 2, 7);
		p += 4;
	}
	put_be16(p, t->ip_version == 6 ? 0x86dd : 0x0800);
	p += 2;
	if (t->ip_version == 6) {
		put_be32(p, 6u << 28);
		put_be16(p + 4, (uint16_t)l4_len);
		p[6] = l4_proto;
		p[7] = 64;
		memcpy(p + 8, "\xfd\x5e\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
		memcpy(p + 24, "\xfd\x5e\0\0\0\0\0\0\0\0\0\0\0\0\0\x02", 16);
		p += 40;
	} else {
		size_t ihl = 5 + (size_t)t->ipv4_option_words;

		p[0] = (uint8_t)(0x40 | ihl);
		put_be16(p + 2, (uint16_t)(ihl * 4 + l4_len));
		put_be16(p + 6, 0x4000);
		p[8] = 64;
		p[9] = l4_proto;
		memcpy(p + 12, "\x0a\x00\x00\x01", 4);
		memcpy(p + 16, "\x0a\x00\x00\x02", 4);
		for (size_t i = 20; i < ihl * 4; i++)
			p[i] = 1;
		put_be16(p + 10, ipv4_checksum(p, ihl * 4));
		p += ihl * 4;
	}
	if (t->kind == ROCE_TUNNEL_VXLAN) {
		put_be16(p, 54321);
		put_be16(p + 2, t->udp_dport ? t->udp_dport : 4789);
		put_be16(p + 4, (uint16_t)l4_len);
		p[8] = t->vxlan_flags ? t->vxlan_flags : 0x08;
		put_be32(p + 12, 5000u << 8); /* VNI 5000 */
		p += 16;
	} else {
		p = put_gre(t, p);
	}
	memcpy(p, inner, inner_len);
	return (size_t)(p - buf) + inner_len;
}
