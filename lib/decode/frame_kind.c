/* frame_kind.c: what a frame the decoder did not take as RoCE carries, to say what a trace held instead. */
#include <pcap/dlt.h>
#include <stdio.h>

#include "lib/decode/roce_decode.h"
#include "lib/decode/roce_decode_int.h"

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define IPPROTO_UDP_NUMBER 17
#define IPPROTO_GRE_NUMBER 47
#define VXLAN_UDP_PORT 4789

static uint32_t kind(uint32_t type, uint32_t value, uint8_t tunnel)
{
	return type << 24 | (uint32_t)tunnel << 16 | (value & 0xffff);
}

/* Ethernet with up to four VLAN tags: the EtherType after them. */
static uint16_t ether_type(struct byte_reader *br)
{
	uint16_t et;

	br_skip(br, 12);
	et = br_be16(br);
	for (int i = 0; i < 4 && (et == 0x8100 || et == 0x88a8 || et == 0x9100); i++) {
		br_skip(br, 2);
		et = br_be16(br);
	}
	return et;
}

/* The link header: the network protocol after it (an EtherType), or 0 for a link type not ours. */
static uint16_t link_proto(int linktype, struct byte_reader *br)
{
	const uint8_t *p;

	switch (linktype) {
	case DLT_EN10MB:
		return ether_type(br);
	case DLT_LINUX_SLL:
		br_skip(br, 14);
		return br_be16(br);
	case DLT_LINUX_SLL2: {
		uint16_t proto = br_be16(br);

		br_skip(br, 18);
		return proto;
	}
	case DLT_RAW:
	case 101: /* LINKTYPE_RAW */
	case DLT_IPV4:
	case DLT_IPV6:
		p = br_ptr(br);
		if (br_remaining(br) < 1)
			return 0;
		return p[0] >> 4 == 6 ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4;
	default:
		return 0;
	}
}

uint32_t roce_frame_kind(int linktype, const uint8_t *frame, size_t caplen)
{
	struct byte_reader br;
	uint8_t in_tunnel = ROCE_ENCAP_NONE;
	uint16_t et;

	br_init(&br, frame, frame ? caplen : 0);
	et = link_proto(linktype, &br);
	if (!et && linktype != DLT_EN10MB)
		return kind(FRAME_KIND_LINKTYPE, (uint32_t)linktype, false);
	/* Once, and once more inside a mirror tunnel we know. */
	for (int depth = 0; depth < 2; depth++) {
		struct roce_tunnel t = { 0 };
		uint8_t proto;
		int rc;

		if (br.short_read)
			return kind(FRAME_KIND_SHORT, 0, in_tunnel);
		if (et == ETHERTYPE_IPV4) {
			uint8_t vihl = br_u8(&br);

			br_skip(&br, 8);
			proto = br_u8(&br);
			br_skip(&br, (size_t)(vihl & 0xf) * 4 - 10);
		} else if (et == ETHERTYPE_IPV6) {
			br_skip(&br, 6);
			proto = br_u8(&br);
			br_skip(&br, 33);
		} else {
			return kind(FRAME_KIND_ETHERTYPE, et, in_tunnel);
		}
		if (br.short_read)
			return kind(FRAME_KIND_SHORT, 0, in_tunnel);
		if (proto == IPPROTO_UDP_NUMBER) {
			uint16_t dport;

			br_skip(&br, 2);
			dport = br_be16(&br);
			br_skip(&br, 4);
			if (dport != VXLAN_UDP_PORT || roce_dissect_vxlan(&br, &t))
				return kind(FRAME_KIND_UDP_PORT, dport, in_tunnel);
		} else if (proto == IPPROTO_GRE_NUMBER) {
			struct byte_reader gre = br;

			br_skip(&gre, 2);
			rc = roce_dissect_gre_tunnel(&br, &t);
			if (rc)
				return kind(FRAME_KIND_GRE_PROTO, br_be16(&gre), in_tunnel);
		} else {
			return kind(FRAME_KIND_IP_PROTO, proto, in_tunnel);
		}
		in_tunnel = t.kind;
		et = ether_type(&br);
	}
	return kind(FRAME_KIND_SHORT, 0, in_tunnel); /* tunnels nested deeper than we open */
}

void roce_frame_kind_str(uint32_t k, char *buf, size_t len)
{
	uint32_t v = k & 0xffff;
	char in[32] = "";

	if (FRAME_KIND_TUNNEL(k))
		snprintf(in, sizeof(in), " in %s", roce_encap_name((uint8_t)FRAME_KIND_TUNNEL(k)));
	switch (k >> 24) {
	case FRAME_KIND_LINKTYPE:
		snprintf(buf, len, "link type %u", v);
		break;
	case FRAME_KIND_ETHERTYPE:
		snprintf(buf, len, "EtherType 0x%04x%s", v, in);
		break;
	case FRAME_KIND_IP_PROTO: {
		const char *name = v == 6 ? "TCP" : v == 1 ? "ICMP" : v == 58 ? "ICMPv6" : NULL;

		if (name)
			snprintf(buf, len, "%s%s", name, in);
		else
			snprintf(buf, len, "IP protocol %u%s", v, in);
		break;
	}
	case FRAME_KIND_UDP_PORT:
		snprintf(buf, len, "UDP port %u%s", v, in);
		break;
	case FRAME_KIND_GRE_PROTO:
		snprintf(buf, len, "GRE protocol 0x%04x%s", v, in);
		break;
	default:
		snprintf(buf, len, "short frames%s", in);
		break;
	}
}
