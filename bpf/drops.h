/* drops.h: what agentxdp-drops' kfree_skb program and its user space share (version 1). */
#ifndef AGENTXDP_DROPS_H
#define AGENTXDP_DROPS_H

/*
 * Bump DROPS_ABI_VERSION whenever a struct below changes shape; user space checks the
 * program's copy (drops_abi_version in .rodata) against its own before trusting a map.
 */
#define DROPS_ABI_VERSION 1

#define DROPS_ROCE_V2_PORT 4791 /* IANA UDP port of RoCE v2 */
#define DROPS_MAX_KEYS 10240	/* distinct (location, reason, protocol, port) tuples */

/* Protocol filter (filter_l4_proto): an IPPROTO_* value, or one of these. */
#define DROPS_PROTO_ANY 0	  /* every protocol */
#define DROPS_PROTO_WITH_PORTS 255 /* UDP or TCP (a --port without --proto) */

/* What the kernel counted, indexed in the drop_stats per-CPU array. */
enum drops_stat {
	DROPS_STAT_SEEN = 0,	/* kfree_skb events that were drops (SKB_CONSUMED excluded) */
	DROPS_STAT_MATCHED = 1, /* ... of which matched the filter and were counted */
	DROPS_STAT_NOT_IP = 2,	/* ... skipped because no IPv4/IPv6 header could be read */
	DROPS_STAT_LOST = 3,	/* ... matched but not counted: the drop_counts map was full */
	DROPS_STAT_NR = 4,
};

/* Key of the drop_counts hash map: one row per drop site, reason and flow kind. */
struct drop_key {
	__u64 location; /* kernel text address that freed the skb (return address) */
	__u32 reason;	/* enum skb_drop_reason, subsystem in the high 16 bits; 0 when the
			 * tracepoint has no reason argument (kernels before 5.17) */
	__u16 l3_proto; /* ETH_P_IP or ETH_P_IPV6 (host order); 0 when not IP */
	__u16 dport;	/* UDP/TCP destination port (host order); 0 for other protocols */
	__u8 l4_proto;	/* IPPROTO_*; 0 when not IP */
	__u8 pad[7];	/* zero: keys are compared as bytes */
};

struct drop_value {
	__u64 packets;	    /* packets dropped */
	__u64 bytes;	    /* their skb->len, in bytes */
	__u64 rx_sk_pkts;   /* ... of which the tracepoint named a receiving socket (rx_sk) */
};

#endif
