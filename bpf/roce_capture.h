/* roce_capture.h: the record and counters shared by roce_capture.bpf.c and agentxdp-capture. */
#ifndef AGENTXDP_ROCE_CAPTURE_H
#define AGENTXDP_ROCE_CAPTURE_H

/*
 * Kernel and user space both include this file, so it uses only fixed-width __u* types
 * (xdp-tools xdp-dump/xdpdump.h style); the one helper, roce_cap_rec_size(), serves both.
 */
#ifndef __bpf__
#include <linux/types.h>
#include <stddef.h>
#endif

/* Bump when struct roce_cap_rec, roce_cap_counters or the ring layout change shape. */
#define ROCE_CAP_REC_VERSION 5

/* Interfaces one capture can watch (-i repeated); counters keep one slot more for "other". */
#define ROCE_CAP_MAX_IFACES 8

/*
 * Default capture length: through the extended headers the opcode implies, and on QP1 (CM)
 * also the first ROCE_CAP_MAD_BYTES of the MAD so connection setup (local QPN, starting PSN)
 * stays decodable; for RoCE inside a mirror session's tunnel, the outer headers too.
 * Records then carry at most this many bytes. The largest case the program accepts:
 *   outer: 14 Ethernet + 8 QinQ + 60 IPv4 with options (IPv6: 40) + 16 GRE with checksum,
 *          key and sequence + 20 ERSPAN III with platform sub-header = 118
 *          (VXLAN: 14 + 8 + 60 + 8 UDP + 8 = 98)
 *   inner: 14 + 8 + 60 + 8 UDP + 12 BTH + 12 DETH+ImmDt + 96 MAD = 210 (UD SEND to QP1);
 *          any other opcode: at most 40 extended bytes (RDETH+DETH+AtomicETH) = 142
 * 118 + 210 = 328, a multiple of 8. Only records longer than ROCE_CAP_CLASS_XL_BYTES (a CM MAD
 * inside a tunnel, a 60-byte IPv4 header) take more than that class, their own length.
 */
#define ROCE_CAP_HDR_SNAPLEN 328
#define ROCE_CAP_MAD_BYTES 96
/* Largest -s: a jumbo frame. The largest record's data size is fixed at load time (-s rounded
 * up to 8); a record takes what its cap_len needs (roce_cap_rec_size()). */
#define ROCE_CAP_MAX_SNAPLEN 9216

/* roce_cap_rec.flags */
#define ROCE_CAP_F_V1 (1u << 0)		/* RoCE v1: EtherType 0x8915 + GRH */
#define ROCE_CAP_F_IPV6 (1u << 1)	/* RoCE v2 over IPv6 */
#define ROCE_CAP_F_VLAN (1u << 2)	/* one or two 802.1Q / 802.1ad tags */
#define ROCE_CAP_F_TRUNCATED (1u << 3)	/* frame ends before the headers its opcode implies */
/* RoCE inside a mirror session's tunnel (ERSPAN I/II/III, GRE-TEB, VXLAN; one level): the
 * other flags then describe the inner frame, and data[] starts with the outer headers. */
#define ROCE_CAP_F_ENCAP (1u << 4)

/*
 * The records travel through one ring per CPU, not a BPF ring buffer: the ring buffer's
 * spin lock and commit cost 18 ns of a 60 ns packet in a VM, a ring only its CPU writes costs
 * two plain stores. Each CPU owns one element of an mmapable BPF array:
 *
 *   [struct roce_cap_ring_head: 128 bytes][region: ring_region bytes][slack: one record]
 *
 * prod and cons count bytes since load. The program writes a record at offset
 * prod % ring_region of the region (one that starts near the end runs on into the slack, so
 * a record is always contiguous), then publishes it by storing the new prod; the reader
 * consumes records from cons to prod and then stores cons. Only the CPU's own program ever
 * writes prod: XDP does not nest on a CPU. Records are 8-byte aligned and their size follows
 * from cap_len (roce_cap_rec_size()), so they carry no length header of their own.
 */
#define ROCE_CAP_RING_HEAD_BYTES 128
struct roce_cap_ring_head {
	__u64 prod;		/* bytes published by the program (the program's cache line) */
	__u64 wakeup_prod;	/* prod at this CPU's last wake-up of the reader */
	__u64 pad0[6];
	__u64 cons;		/* bytes the reader has consumed (the reader's cache line) */
	__u64 pad1[7];
};

/*
 * One captured RoCE packet in its CPU's ring. data[] holds cap_len bytes of the frame
 * from its first byte (Ethernet header). A record's data capacity is the smallest size
 * class (ROCE_CAP_CLASS_*_BYTES; past the largest, cap_len rounded up to 8): the program's
 * cost is mostly the ring memory it writes, so records stay small (24-byte header:
 * 88 bytes for a RoCE v2 ACK). Bytes of data[] past cap_len are not part of the capture.
 */
struct roce_cap_rec {
	__u8 version;		/* ROCE_CAP_REC_VERSION */
	__u8 flags;		/* ROCE_CAP_F_* */
	__u8 opcode;		/* BTH opcode, for quick per-record checks */
	__u8 if_slot;		/* receiving interface: its position in -i (cfg_ifindex[]) */
	__u16 cap_len;		/* bytes in data[] */
	__u16 rx_queue;		/* receive queue index */
	__u32 orig_len;		/* bytes of the frame on the wire (all XDP fragments) */
	__u32 lost_before;	/* records this CPU failed to reserve since its previous record
				 * (saturates at 2^32 - 1; the counters keep the exact total) */
	__u64 ts_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
	__u8 data[];
};

/*
 * Data size classes of a record, for the usual header lengths (IPv4 ACK 58, IPv6 WRITE 94,
 * ERSPAN II + IPv4 WRITE 120, a plain CM MAD 158, ERSPAN III + IPv6 WRITE 164).
 */
#define ROCE_CAP_CLASS_S_BYTES 64
#define ROCE_CAP_CLASS_M_BYTES 96
#define ROCE_CAP_CLASS_L_BYTES 128
#define ROCE_CAP_CLASS_XL_BYTES 192

/* Per-CPU, per-interface counters (PERCPU_ARRAY, slot = position of the interface in -i). */
struct roce_cap_counters {
	__u64 seen_pkts;	/* every frame the program ran on */
	__u64 roce_pkts;	/* frames with a complete BTH (RoCE v1 or v2) */
	__u64 filtered_pkts;	/* RoCE frames the --filter rejected */
	__u64 captured_pkts;	/* records committed to the ring buffer */
	__u64 captured_bytes;	/* original bytes of those records */
	__u64 lost_pkts;	/* RoCE frames lost: this CPU's ring full */
	__u64 malformed_pkts;	/* UDP 4791 / EtherType 0x8915 frames too short or bad for a BTH */
	__u64 lost_reported;	/* lost_pkts already reported in a record's lost_before */
	__u64 wakeups;		/* reader wake-ups this CPU forced (ring filled past the threshold) */
};

/* Filter kept in the program's read-only config (see --filter in agentxdp-capture.8). */
#define ROCE_CAP_MAX_HOSTS 2
enum roce_cap_host_dir {
	ROCE_CAP_DIR_ANY = 0,	/* "host A": source or destination */
	ROCE_CAP_DIR_SRC = 1,	/* "src host A" */
	ROCE_CAP_DIR_DST = 2,	/* "dst host A" */
};

struct roce_cap_host_filter {
	__u8 addr[16];		/* IPv6, or IPv4 v4-mapped (::ffff:a.b.c.d); RoCE v1 uses GIDs */
	__u16 dir;		/* enum roce_cap_host_dir */
	__u16 ipv4;		/* 1: addr is v4-mapped; matches IPv4 and v4-mapped GIDs */
};

/*
 * Bytes of the ring a record with cap_len bytes of data takes (a multiple of 8): what the
 * program advances prod by and the reader steps over, one rule for both.
 */
static inline size_t roce_cap_rec_size(__u32 cap_len, __u32 data_cap)
{
	if (cap_len <= ROCE_CAP_CLASS_S_BYTES)
		return sizeof(struct roce_cap_rec) + ROCE_CAP_CLASS_S_BYTES;
	if (cap_len <= ROCE_CAP_CLASS_M_BYTES)
		return sizeof(struct roce_cap_rec) + ROCE_CAP_CLASS_M_BYTES;
	if (cap_len <= ROCE_CAP_CLASS_L_BYTES)
		return sizeof(struct roce_cap_rec) + ROCE_CAP_CLASS_L_BYTES;
	if (cap_len <= ROCE_CAP_CLASS_XL_BYTES)
		return sizeof(struct roce_cap_rec) + ROCE_CAP_CLASS_XL_BYTES;
	/*
	 * Longer records (-s over 192, a CM MAD in a tunnel) take their own length: a 1.1 kB
	 * frame under -s 0 held a 9.2 kB record, so the rings kept 8x fewer whole frames than
	 * their bytes would.
	 */
	if (cap_len > data_cap)
		cap_len = data_cap;
	return sizeof(struct roce_cap_rec) + ((cap_len + 7) & ~(__u32)7);
}

#endif
