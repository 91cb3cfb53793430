// SPDX-License-Identifier: GPL-2.0
/* drops.bpf.c: count packet drops on skb:kfree_skb by (freeing function, reason, flow kind). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "drops.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPPROTO_HOPOPTS_ 0
#define IPPROTO_ICMP_ 1
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
#define IPPROTO_ROUTING_ 43
#define IPPROTO_FRAGMENT_ 44
#define IPPROTO_AH_ 51
#define IPPROTO_DSTOPTS_ 60
#define IPV6_MAX_EXT_HDRS 4

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load (the skeleton's .rodata); the verifier prunes what is off. */
const volatile __u32 drops_abi_version = DROPS_ABI_VERSION;
const volatile bool filter_ip_only = true;   /* skip drops without a readable IP header */
const volatile __u8 filter_l4_proto = IPPROTO_UDP_; /* IPPROTO_*, DROPS_PROTO_ANY/_WITH_PORTS */
const volatile __u16 filter_dport = DROPS_ROCE_V2_PORT; /* 0: any port */
const volatile bool filter_addr_set = false;
const volatile __u8 filter_addr[16] = {}; /* source or destination; IPv4 as ::ffff:a.b.c.d */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DROPS_MAX_KEYS);
	__type(key, struct drop_key);
	__type(value, struct drop_value);
} drop_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DROPS_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} drop_stats SEC(".maps");

/* What the headers of a dropped packet say. Addresses are IPv6 or v4-mapped. */
struct flow {
	__u8 saddr[16];
	__u8 daddr[16];
	__u16 l3_proto;
	__u16 dport;
	__u8 l4_proto;
};

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&drop_stats, &idx);

	if (v)
		*v += 1;
}

static __always_inline void map_v4(__u8 out[16], const __u8 *v4)
{
	__builtin_memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	__builtin_memcpy(out + 12, v4, 4);
}

/*
 * Read the network and transport headers from the skb's linear data. Headers are wire
 * format, so they are read as bytes (no kernel struct, no CO-RE needed); only the skb
 * fields that locate them go through CO-RE. Returns 0, or -1 when there is no IP header.
 */
static __always_inline int read_flow(struct sk_buff *skb, struct flow *f)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	__u16 nh = BPF_CORE_READ(skb, network_header);
	__u16 eth_proto = bpf_ntohs(BPF_CORE_READ(skb, protocol));
	unsigned char *l4;
	__u8 ports[4];

	if (!head || nh == (__u16)~0U)
		return -1;
	if (eth_proto == ETH_P_IP) {
		/*  0      4      8              16              24             32
		 *  | ver  | ihl  |   tos         |        total length           |
		 *  |        identification       |flags|    fragment offset      |
		 *  |    ttl      |   protocol    |       header checksum         |
		 *  |                    source address (12)                      |
		 *  |                  destination address (16)                   |
		 */
		__u8 iph[20];

		if (bpf_probe_read_kernel(iph, sizeof(iph), head + nh))
			return -1;
		if ((iph[0] >> 4) != 4 || (iph[0] & 0xf) < 5)
			return -1;
		f->l3_proto = ETH_P_IP;
		f->l4_proto = iph[9];
		map_v4(f->saddr, iph + 12);
		map_v4(f->daddr, iph + 16);
		/* Only the first fragment carries the ports. */
		if (((iph[6] & 0x1f) << 8 | iph[7]) != 0)
			return 0;
		l4 = head + nh + (iph[0] & 0xf) * 4;
	} else if (eth_proto == ETH_P_IPV6) {
		/* RFC 8200 §3: ver/class/label (4), payload length (2), next header (1),
		 * hop limit (1), source (16, at 8), destination (16, at 24). */
		__u8 ip6h[40];
		__u8 ext[4];
		__u8 next;
		__u32 off;

		if (bpf_probe_read_kernel(ip6h, sizeof(ip6h), head + nh))
			return -1;
		if ((ip6h[0] >> 4) != 6)
			return -1;
		f->l3_proto = ETH_P_IPV6;
		__builtin_memcpy(f->saddr, ip6h + 8, 16);
		__builtin_memcpy(f->daddr, ip6h + 24, 16);
		next = ip6h[6];
		off = nh + 40;
		/* RFC 8200 §4: skip the extension headers that can precede UDP/TCP. */
		for (int i = 0; i < IPV6_MAX_EXT_HDRS; i++) {
			if (next != IPPROTO_HOPOPTS_ && next != IPPROTO_ROUTING_ &&
			    next != IPPROTO_DSTOPTS_ && next != IPPROTO_FRAGMENT_ && next != IPPROTO_AH_)
				break;
			if (bpf_probe_read_kernel(ext, sizeof(ext), head + off))
				return -1;
			if (next == IPPROTO_FRAGMENT_) {
				if (((ext[2] << 8 | ext[3]) & 0xfff8) != 0) {
					f->l4_proto = ext[0];
					return 0; /* not the first fragment: no ports */
				}
				off += 8;
			} else if (next == IPPROTO_AH_) {
				off += (ext[1] + 2) * 4;
			} else {
				off += (ext[1] + 1) * 8;
			}
			next = ext[0];
		}
		f->l4_proto = next;
		l4 = head + off;
	} else {
		return -1;
	}
	if (f->l4_proto == IPPROTO_UDP_ || f->l4_proto == IPPROTO_TCP_) {
		/* UDP and TCP both start with source port (2) and destination port (2). */
		if (bpf_probe_read_kernel(ports, sizeof(ports), l4) == 0)
			f->dport = ports[2] << 8 | ports[3];
	}
	return 0;
}

static __always_inline bool addr_matches(const __u8 a[16])
{
	for (int i = 0; i < 16; i++)
		if (a[i] != filter_addr[i])
			return false;
	return true;
}

static __always_inline bool flow_matches(const struct flow *f)
{
	if (filter_l4_proto == DROPS_PROTO_WITH_PORTS) {
		if (f->l4_proto != IPPROTO_UDP_ && f->l4_proto != IPPROTO_TCP_)
			return false;
	} else if (filter_l4_proto == IPPROTO_ICMP_) {
		if (f->l4_proto != IPPROTO_ICMP_ && f->l4_proto != 58 /* ICMPv6 */)
			return false;
	} else if (filter_l4_proto != DROPS_PROTO_ANY && f->l4_proto != filter_l4_proto) {
		return false;
	}
	if (filter_dport && f->dport != filter_dport)
		return false;
	if (filter_addr_set && !addr_matches(f->saddr) && !addr_matches(f->daddr))
		return false;
	return true;
}

/*
 * TP_PROTO(skb, location[, reason (5.17+)][, rx_sk (6.12+)]): arguments are read from the
 * raw context only when this kernel's trace event has them (CO-RE field existence), so one
 * object loads on every 6.x kernel.
 */
SEC("tp_btf/kfree_skb")
int handle_kfree_skb(__u64 *ctx)
{
	struct sk_buff *skb = (struct sk_buff *)ctx[0];
	struct drop_key key = {};
	struct drop_value *value;
	struct flow f = {};
	bool has_rx_sk = false;
	__u32 reason = 0;

	if (bpf_core_field_exists(struct trace_event_raw_kfree_skb, reason))
		reason = (__u32)ctx[2];
	if (bpf_core_field_exists(struct trace_event_raw_kfree_skb, rx_sk))
		has_rx_sk = ctx[3] != 0;
	/* A consumed packet is not a drop (newer kernels send it to consume_skb instead). */
	if (bpf_core_enum_value_exists(enum skb_drop_reason, SKB_CONSUMED) &&
	    reason == bpf_core_enum_value(enum skb_drop_reason, SKB_CONSUMED))
		return 0;
	if (!skb)
		return 0;
	stat_inc(DROPS_STAT_SEEN);

	if (read_flow(skb, &f) < 0) {
		stat_inc(DROPS_STAT_NOT_IP);
		if (filter_ip_only)
			return 0;
	} else if (!flow_matches(&f)) {
		return 0;
	}

	key.location = ctx[1];
	key.reason = reason;
	key.l3_proto = f.l3_proto;
	key.l4_proto = f.l4_proto;
	key.dport = f.dport;
	value = bpf_map_lookup_elem(&drop_counts, &key);
	if (!value) {
		struct drop_value zero = {};

		/* -EEXIST: another CPU inserted it first, which is fine. */
		if (bpf_map_update_elem(&drop_counts, &key, &zero, BPF_NOEXIST) == -7 /* E2BIG */) {
			stat_inc(DROPS_STAT_LOST);
			return 0;
		}
		value = bpf_map_lookup_elem(&drop_counts, &key);
		if (!value) {
			stat_inc(DROPS_STAT_LOST);
			return 0;
		}
	}
	__sync_fetch_and_add(&value->packets, 1);
	__sync_fetch_and_add(&value->bytes, BPF_CORE_READ(skb, len));
	if (has_rx_sk)
		__sync_fetch_and_add(&value->rx_sk_pkts, 1);
	stat_inc(DROPS_STAT_MATCHED);
	return 0;
}
