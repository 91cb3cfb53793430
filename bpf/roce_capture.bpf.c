/* roce_capture.bpf.c: XDP program copying RoCE v1/v2 headers into per-CPU rings; always XDP_PASS. */
/* Wire formats and the UAPI xdp_md need no CO-RE: without relocations libbpf never
 * reads the kernel BTF (/sys/kernel/btf/vmlinux), half of the start-up CPU. */
#define BPF_NO_PRESERVE_ACCESS_INDEX
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "roce_capture.h"
#include "lib/decode/bth_opcodes.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define ETH_P_ROCE_V1 0x8915
#define ROCE_V2_UDP_PORT 4791
#define GRH_NEXT_HDR_BTH 0x1b
#define IPV4_FRAG_OFFSET_MASK 0x1fff
#define ROCE_QP1 1
#define ROCE_UD_SEND_ONLY 0x64
#define ROCE_UD_SEND_ONLY_IMM 0x65
#define VXLAN_UDP_PORT 4789
#define VXLAN_FLAG_I 0x08
#define GRE_FLAG_CSUM 0x8000
#define GRE_FLAG_ROUTING 0x4000
#define GRE_FLAG_KEY 0x2000
#define GRE_FLAG_SEQ 0x1000
#define GRE_VERSION_MASK 0x0007
#define GRE_PROTO_ERSPAN_1_2 0x88be	/* ERSPAN type I and II */
#define GRE_PROTO_ERSPAN_3 0x22eb
#define GRE_PROTO_TEB 0x6558		/* transparent Ethernet bridging */
#define ERSPAN2_HDR_BYTES 8
#define ERSPAN3_HDR_BYTES 12
#define ERSPAN3_PLATFORM_BYTES 8

/* Set by agentxdp-capture between open and load; the verifier sees them as constants. */
const volatile __u32 cfg_data_cap = ROCE_CAP_HDR_SNAPLEN;	/* largest record data bytes, multiple of 8 */
const volatile __u32 cfg_snaplen = 0;		/* 0: through the opcode's headers; else bytes */
const volatile __u32 cfg_n_ifaces = 0;
const volatile __u32 cfg_ifindex[ROCE_CAP_MAX_IFACES] = {};
const volatile __u32 cfg_n_hosts = 0;
const volatile struct roce_cap_host_filter cfg_hosts[ROCE_CAP_MAX_HOSTS] = {};
const volatile __u32 cfg_has_qpn = 0;
const volatile __u32 cfg_qpn = 0;
/* Bytes of each CPU's ring region: a power of two (set from -B and the CPU count). */
const volatile __u64 cfg_ring_region = 1 << 20;
/* Wake the reader only when this much is waiting; it also drains on its own timer. */
const volatile __u64 cfg_wakeup_bytes = 1 << 18;

/*
 * The per-CPU rings (layout in roce_capture.h): element i is CPU i's head, region and
 * slack. agentxdp-capture sets max_entries to the number of possible CPUs and value_size
 * to ROCE_CAP_RING_HEAD_BYTES + cfg_ring_region + the largest record before load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, ROCE_CAP_RING_HEAD_BYTES + (1 << 20) + sizeof(struct roce_cap_rec) +
				   ROCE_CAP_HDR_SNAPLEN);
	__uint(max_entries, 1);
} rings SEC(".maps");

/* Wake-ups only: an 8-byte note when a CPU's ring fills past cfg_wakeup_bytes (epoll). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} wakeups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ROCE_CAP_MAX_IFACES + 1);
	__type(key, __u32);
	__type(value, struct roce_cap_counters);
} counters SEC(".maps");

/* 802.1Q / 802.1ad tag after the Ethernet addresses: TCI, then the inner EtherType. */
struct vlan_tag {
	__be16 tci;
	__be16 inner_proto;
};

/*
 * Base Transport Header, IBA 9.2 (12 bytes):
 *   0               1               2               3
 *  +---------------+-+-+---+-------+-------------------------------+
 *  |    OpCode     |S|M|Pad| TVer  |        Partition Key          |
 *  +---------------+-+-+---+-------+-------------------------------+
 *  |F|B| Reserved  |          Destination QP                       |
 *  +-+-+-----------+-----------------------------------------------+
 *  |A|  Reserved   |          Packet Sequence Number               |
 *  +-+-------------+-----------------------------------------------+
 */
struct roce_bth {
	__u8 opcode;
	__u8 se_m_pad_tver;
	__be16 pkey;
	__be32 fecn_becn_dest_qp;
	__be32 ackreq_psn;
};

/*
 * Bytes of extended headers after the BTH, by opcode (IBA 9.2-9.3, table 38 "header
 * sequences"); a CNP's 16 reserved bytes count as headers. Unknown opcodes: BTH only.
 * The decoder reads the same table (lib/decode/bth_opcodes.h).
 */
static const __u8 roce_ext_len[256] = BTH_HEADER_BYTES_INIT;

/* Counter slot of the receiving interface: its position in -i, or the spare last slot. */
static __always_inline __u32 iface_slot(__u32 ifindex)
{
#pragma unroll
	for (__u32 i = 0; i < ROCE_CAP_MAX_IFACES; i++)
		if (i < cfg_n_ifaces && cfg_ifindex[i] == ifindex)
			return i;
	return ROCE_CAP_MAX_IFACES;
}

/* Copy n_words 8-byte words; the caller checked that the source and destination hold them. */
static __always_inline void copy_words(void *dst, const void *src, const int n_words)
{
	__u64 *d = dst;
	const __u64 *s = src;

#pragma clang loop unroll(full)
	for (int i = 0; i < n_words; i++)
		d[i] = s[i];
}

static __always_inline bool addr16_eq(const volatile __u8 *want, const struct in6_addr *a)
{
	const volatile __u32 *w = (const volatile __u32 *)want;

	return w[0] == a->in6_u.u6_addr32[0] && w[1] == a->in6_u.u6_addr32[1] &&
	       w[2] == a->in6_u.u6_addr32[2] && w[3] == a->in6_u.u6_addr32[3];
}

/*
 * Every "host" primitive of --filter must match (they are joined by "and").
 * IPv4 packets pass saddr4/daddr4; IPv6 and RoCE v1 (GRH GIDs) pass saddr6/daddr6.
 */
static __always_inline bool hosts_match(__be32 saddr4, __be32 daddr4, const struct in6_addr *saddr6,
					const struct in6_addr *daddr6)
{
#pragma unroll
	for (__u32 i = 0; i < ROCE_CAP_MAX_HOSTS; i++) {
		bool src, dst;

		if (i >= cfg_n_hosts)
			break;
		if (saddr6) {
			src = addr16_eq(cfg_hosts[i].addr, saddr6);
			dst = addr16_eq(cfg_hosts[i].addr, daddr6);
		} else {
			__u32 want = *(const volatile __u32 *)&cfg_hosts[i].addr[12];

			if (!cfg_hosts[i].ipv4)
				return false;
			src = want == saddr4;
			dst = want == daddr4;
		}
		if (cfg_hosts[i].dir == ROCE_CAP_DIR_SRC && !src)
			return false;
		if (cfg_hosts[i].dir == ROCE_CAP_DIR_DST && !dst)
			return false;
		if (cfg_hosts[i].dir == ROCE_CAP_DIR_ANY && !src && !dst)
			return false;
	}
	return true;
}

/* Where a packet came from: IPv4 addresses, or IPv6 / RoCE v1 GRH GIDs (then saddr6 set). */
struct roce_addrs {
	__be32 saddr4, daddr4;
	const struct in6_addr *saddr6, *daddr6;
};

/*
 * Ethernet and up to two tags: 802.1Q, or QinQ (802.1ad outer, 802.1Q inner). Returns the
 * first byte after them and sets *proto, or NULL when the frame ends first.
 */
static __always_inline void *parse_eth(void *pos, void *data_end, __be16 *proto, __u8 *flags)
{
	struct ethhdr *eth = pos;

	if ((void *)(eth + 1) > data_end)
		return NULL;
	pos = eth + 1;
	*proto = eth->h_proto;
#pragma unroll
	for (int i = 0; i < 2; i++) {
		struct vlan_tag *tag = pos;

		if (*proto != bpf_htons(ETH_P_8021Q) && *proto != bpf_htons(ETH_P_8021AD))
			break;
		if ((void *)(tag + 1) > data_end)
			return NULL;
		pos = tag + 1;
		*proto = tag->inner_proto;
		*flags |= ROCE_CAP_F_VLAN;
	}
	return pos;
}

/*
 * IPv4 or IPv6 and UDP to port 4791 (RoCE v2), or a RoCE v1 GRH: returns where the BTH
 * starts, or NULL when the frame is not RoCE (a RoCE v1 GRH that is cut or not followed by
 * a BTH counts as malformed).
 */
static __always_inline void *parse_roce_l3(void *pos, void *data_end, __be16 proto,
					   struct roce_addrs *a, __u8 *flags,
					   struct roce_cap_counters *cnt)
{
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = pos;
		struct udphdr *udp;

		if ((void *)(iph + 1) > data_end)
			return NULL;
		if (iph->protocol != IPPROTO_UDP || iph->version != 4 || iph->ihl < 5 ||
		    (iph->frag_off & bpf_htons(IPV4_FRAG_OFFSET_MASK)))
			return NULL;
		pos = (void *)iph + iph->ihl * 4;
		udp = pos;
		if ((void *)(udp + 1) > data_end || udp->dest != bpf_htons(ROCE_V2_UDP_PORT))
			return NULL;
		a->saddr4 = iph->saddr;
		a->daddr4 = iph->daddr;
		return udp + 1;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = pos;
		struct udphdr *udp;

		if ((void *)(ip6 + 1) > data_end)
			return NULL;
		if (ip6->nexthdr != IPPROTO_UDP || ip6->version != 6)
			return NULL;
		udp = (void *)(ip6 + 1);
		if ((void *)(udp + 1) > data_end || udp->dest != bpf_htons(ROCE_V2_UDP_PORT))
			return NULL;
		a->saddr6 = &ip6->saddr;
		a->daddr6 = &ip6->daddr;
		*flags |= ROCE_CAP_F_IPV6;
		return udp + 1;
	} else if (proto == bpf_htons(ETH_P_ROCE_V1)) {
		/* The GRH (IBA 8.3) has the IPv6 header's layout; next header 0x1B = BTH. */
		struct ipv6hdr *grh = pos;

		if ((void *)(grh + 1) > data_end || grh->nexthdr != GRH_NEXT_HDR_BTH) {
			cnt->malformed_pkts++;
			return NULL;
		}
		a->saddr6 = &grh->saddr;
		a->daddr6 = &grh->daddr;
		*flags |= ROCE_CAP_F_V1;
		return grh + 1;
	}
	return NULL;
}

/*
 * GRE (RFC 2784 section 2, key and sequence number RFC 2890 section 2):
 *    0                   1                   2                   3
 *   +-+-+-+-+-+-----+---------+-----+-------------------------------+
 *   |C|R|K|S|s|Recur|  Flags  | Ver |         Protocol Type         |
 *   +-+-+-+-+-+-----+---------+-----+-------------------------------+
 *   |   Checksum (if C), Key (if K), Sequence Number (if S): a word each |
 *   +---------------------------------------------------------------+
 * then, by protocol type, the ERSPAN header (draft-foschiano-erspan-03 section 4):
 *   type I   0x88be without S: nothing, the mirrored frame follows
 *   type II  0x88be with S: 8 bytes, Ver (top 4 bits) = 1
 *   type III 0x22eb: 12 bytes, Ver = 2; O (last bit of the third word) adds an 8-byte
 *            platform sub-header
 * or 0x6558 (bridged Ethernet). Returns the mirrored Ethernet frame, or NULL: version 1
 * (PPTP), source routing and other protocol types carry no mirrored frame. The same reading
 * as lib/decode/roce_tunnel.c.
 */
static __always_inline void *parse_gre(void *pos, void *data_end)
{
	struct gre_base_hdr *gre = pos;
	__u16 gre_flags;
	__u8 *erspan;

	if ((void *)(gre + 1) > data_end)
		return NULL;
	gre_flags = bpf_ntohs(gre->flags);
	if (gre_flags & (GRE_FLAG_ROUTING | GRE_VERSION_MASK))
		return NULL;
	erspan = (void *)(gre + 1);
	erspan += gre_flags & GRE_FLAG_CSUM ? 4 : 0;
	erspan += gre_flags & GRE_FLAG_KEY ? 4 : 0;
	erspan += gre_flags & GRE_FLAG_SEQ ? 4 : 0;

	if (gre->protocol == bpf_htons(GRE_PROTO_TEB))
		return erspan;
	if (gre->protocol == bpf_htons(GRE_PROTO_ERSPAN_1_2)) {
		if (!(gre_flags & GRE_FLAG_SEQ))
			return erspan;
		if ((void *)(erspan + ERSPAN2_HDR_BYTES) > data_end || erspan[0] >> 4 != 1)
			return NULL;
		return erspan + ERSPAN2_HDR_BYTES;
	}
	if (gre->protocol == bpf_htons(GRE_PROTO_ERSPAN_3)) {
		if ((void *)(erspan + ERSPAN3_HDR_BYTES) > data_end || erspan[0] >> 4 != 2)
			return NULL;
		if (erspan[ERSPAN3_HDR_BYTES - 1] & 1)
			return erspan + ERSPAN3_HDR_BYTES + ERSPAN3_PLATFORM_BYTES;
		return erspan + ERSPAN3_HDR_BYTES;
	}
	return NULL;
}

/*
 * The tunnel of a mirror session after an outer IPv4 or IPv6 header at pos: GRE (protocol 47,
 * parse_gre()) or VXLAN (RFC 7348 section 5: UDP to port 4789, 8 bytes, the I flag set).
 * Returns the mirrored Ethernet frame, or NULL. One level only, and no IPv6 extension
 * headers before the tunnel: the verifier then sees one bounded path.
 */
static __always_inline void *parse_tunnel(void *pos, void *data_end, __be16 proto)
{
	__u8 l4_proto;

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = pos;

		if ((void *)(iph + 1) > data_end)
			return NULL;
		if (iph->version != 4 || iph->ihl < 5 ||
		    (iph->frag_off & bpf_htons(IPV4_FRAG_OFFSET_MASK)))
			return NULL;
		l4_proto = iph->protocol;
		pos = (void *)iph + iph->ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = pos;

		if ((void *)(ip6 + 1) > data_end || ip6->version != 6)
			return NULL;
		l4_proto = ip6->nexthdr;
		pos = ip6 + 1;
	} else {
		return NULL;
	}
	if (l4_proto == IPPROTO_GRE)
		return parse_gre(pos, data_end);
	if (l4_proto == IPPROTO_UDP) {
		struct udphdr *udp = pos;
		__u8 *vxlan = (void *)(udp + 1);

		if ((void *)(vxlan + 8) > data_end || udp->dest != bpf_htons(VXLAN_UDP_PORT) ||
		    !(vxlan[0] & VXLAN_FLAG_I))
			return NULL;
		return vxlan + 8;
	}
	return NULL;
}

/*
 * RoCE inside a mirror session's tunnel (ERSPAN I/II/III, GRE-TEB, VXLAN) whose outer
 * network header starts at l3: returns where the inner BTH starts, or NULL. The flags then
 * describe the inner frame, with ROCE_CAP_F_ENCAP; the addresses are the inner ones.
 */
static __always_inline void *parse_encap_roce(void *l3, void *data_end, __be16 proto,
					      struct roce_addrs *a, __u8 *flags,
					      struct roce_cap_counters *cnt)
{
	void *pos = parse_tunnel(l3, data_end, proto);

	if (!pos)
		return NULL;
	*flags = ROCE_CAP_F_ENCAP;
	pos = parse_eth(pos, data_end, &proto, flags);
	if (!pos)
		return NULL;
	return parse_roce_l3(pos, data_end, proto, a, flags, cnt);
}

/*
 * cap_len bytes of the frame into rec->data. The smallest size class that holds cap_len is
 * copied with 8-byte loads and stores when the frame's linear part covers the class (a
 * copy's size must be a constant); otherwise bpf_xdp_load_bytes() copies exactly cap_len
 * (short frames, multi-buffer frames, -s). Returns 0, or nonzero when that fails.
 */
static __always_inline int copy_frame(struct xdp_md *ctx, struct roce_cap_rec *rec, void *data,
				      void *data_end, __u64 cap_len)
{
	if (cap_len <= ROCE_CAP_CLASS_S_BYTES) {
		if (data + ROCE_CAP_CLASS_S_BYTES <= data_end) {
			copy_words(rec->data, data, ROCE_CAP_CLASS_S_BYTES / 8);
			return 0;
		}
		/*
		 * A frame shorter than the class, most often an ACK (58 bytes of headers in
		 * a 62-byte frame): seven whole words, then the 8 bytes that end at cap_len.
		 */
		if (cap_len > ROCE_CAP_CLASS_S_BYTES - 8 && data + ROCE_CAP_CLASS_S_BYTES - 8 <= data_end) {
			__u64 tail = cap_len - 8;
			const __u64 *src = data + tail;

			/* Keep src one register, so the verifier sees the bound on the load's pointer. */
			asm volatile("" : "+r"(src));
			if ((void *)(src + 1) <= data_end) {
				copy_words(rec->data, data, ROCE_CAP_CLASS_S_BYTES / 8 - 1);
				*(__u64 *)(rec->data + tail) = *src;
				return 0;
			}
		}
	} else if (cap_len <= ROCE_CAP_CLASS_M_BYTES) {
		if (data + ROCE_CAP_CLASS_M_BYTES <= data_end) {
			copy_words(rec->data, data, ROCE_CAP_CLASS_M_BYTES / 8);
			return 0;
		}
	} else if (cap_len <= ROCE_CAP_CLASS_L_BYTES) {
		if (data + ROCE_CAP_CLASS_L_BYTES <= data_end) {
			copy_words(rec->data, data, ROCE_CAP_CLASS_L_BYTES / 8);
			return 0;
		}
	}
	return bpf_xdp_load_bytes(ctx, 0, rec->data, cap_len);
}

/*
 * Publish a filled record of rec_size bytes at prod and wake the reader if it is due.
 * The record's stores must be visible before the new prod. x86 keeps stores in order, so
 * a compiler barrier and a plain store do. Elsewhere an atomic add whose result is used
 * (BPF_FETCH, -mcpu=v3 in bpf/build.mk) is a full barrier in every BPF JIT; one whose
 * result is unused is not (arm64 STADD).
 */
static __always_inline void publish(struct roce_cap_ring_head *head, __u64 prod, __u64 cons,
				    __u64 rec_size, __u32 cpu, struct roce_cap_counters *cnt)
{
#if defined(__TARGET_ARCH_x86)
	prod += rec_size;
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&head->prod = prod;
#else
	prod = __sync_fetch_and_add(&head->prod, rec_size) + rec_size;
#endif
	/*
	 * Wake the reader when the ring is filled past the threshold, but not again before it
	 * has consumed what was there at this CPU's previous wake-up: a woken reader drains
	 * every ring, so until then the wake-up is still pending. A wake-up costs this CPU an
	 * irq_work self-IPI (a VM exit in a guest: 40-50 ns per packet when every 64th record
	 * paid one) and the reader a system call. Below the threshold the reader's poll
	 * timeout drains the rings.
	 */
	if (prod - cons >= cfg_wakeup_bytes && cons >= head->wakeup_prod) {
		__u32 note = cpu;

		head->wakeup_prod = prod;
		cnt->wakeups++;
		bpf_ringbuf_output(&wakeups, &note, sizeof(note), BPF_RB_FORCE_WAKEUP);
	}
}

SEC("xdp.frags")
int roce_capture(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct roce_addrs addrs = {};
	struct roce_cap_counters *cnt;
	struct roce_cap_rec *rec;
	struct roce_bth *bth;
	void *pos;
	__u64 hdr_len, frame_len, want, cap_len; /* 64-bit so the verifier keeps the bounds */
	__u64 lost_before, prod, cons, rec_size, ts;
	struct roce_cap_ring_head *head;
	__u32 slot, dest_qp, cpu;
	__u8 flags = 0, opcode;
	__be16 proto;
	void *ring, *l3;

	slot = iface_slot(ctx->ingress_ifindex);
	cnt = bpf_map_lookup_elem(&counters, &slot);
	if (!cnt)
		return XDP_PASS;
	cnt->seen_pkts++;

	l3 = parse_eth(data, data_end, &proto, &flags);
	if (!l3)
		return XDP_PASS;
	pos = parse_roce_l3(l3, data_end, proto, &addrs, &flags, cnt);
	/* Plain RoCE first: tunnels cost only the frames that are not plain RoCE. */
	if (!pos) {
		pos = parse_encap_roce(l3, data_end, proto, &addrs, &flags, cnt);
		if (!pos)
			return XDP_PASS;
	}

	bth = pos;
	if ((void *)(bth + 1) > data_end) {
		cnt->malformed_pkts++;
		return XDP_PASS;
	}
	pos = bth + 1;
	cnt->roce_pkts++;
	opcode = bth->opcode;
	dest_qp = bpf_ntohl(bth->fecn_becn_dest_qp) & 0xffffff;

	if ((cfg_n_hosts && !hosts_match(addrs.saddr4, addrs.daddr4, addrs.saddr6, addrs.daddr6)) ||
	    (cfg_has_qpn && dest_qp != cfg_qpn)) {
		cnt->filtered_pkts++;
		return XDP_PASS;
	}

	/* The packet's time, as soon as it is known to be kept (the clock is half the cost). */
	ts = bpf_ktime_get_ns();
	hdr_len = (__u64)(pos - data) + roce_ext_len[opcode];
	frame_len = bpf_xdp_get_buff_len(ctx);
	if (hdr_len > frame_len)
		flags |= ROCE_CAP_F_TRUNCATED;
	/* A MAD on QP1 is payload, but CM setup (QPNs, start PSN) is in its first bytes. */
	if (dest_qp == ROCE_QP1 && (opcode == ROCE_UD_SEND_ONLY || opcode == ROCE_UD_SEND_ONLY_IMM))
		hdr_len += ROCE_CAP_MAD_BYTES;
	want = cfg_snaplen ? cfg_snaplen : hdr_len;
	cap_len = want < frame_len ? want : frame_len;
	if (cap_len > cfg_data_cap)
		cap_len = cfg_data_cap;
	if (cap_len < 1)
		return XDP_PASS;

	/*
	 * This CPU's ring: the record goes at prod within the region (it may run on into the
	 * slack).
	 */
	cpu = bpf_get_smp_processor_id();
	ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring)
		goto lost;
	head = ring;
	prod = head->prod;
	cons = *(volatile __u64 *)&head->cons;
	rec = (void *)(ring + ROCE_CAP_RING_HEAD_BYTES + (prod & (cfg_ring_region - 8)));
	rec_size = roce_cap_rec_size(cap_len, cfg_data_cap);
	if (prod + rec_size - cons > cfg_ring_region)
		goto lost;
	if (copy_frame(ctx, rec, data, data_end, cap_len)) {
		cnt->malformed_pkts++;
		return XDP_PASS;
	}
	rec->version = ROCE_CAP_REC_VERSION;
	rec->flags = flags;
	rec->opcode = opcode;
	rec->if_slot = slot;
	rec->cap_len = cap_len;
	rec->rx_queue = ctx->rx_queue_index;
	rec->orig_len = frame_len;
	lost_before = cnt->lost_pkts - cnt->lost_reported;
	rec->lost_before = 0;
	if (lost_before) {
		rec->lost_before = lost_before < 0xffffffffu ? lost_before : 0xffffffffu;
		cnt->lost_reported = cnt->lost_pkts;
	}
	rec->ts_ns = ts;
	publish(head, prod, cons, rec_size, cpu, cnt);
	cnt->captured_pkts++;
	cnt->captured_bytes += frame_len;
	return XDP_PASS;

lost:
	cnt->lost_pkts++;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
