/*
 * pcapng_writer.h: the one pcapng writer (agentxdp-capture and agentxdp-synth share it).
 * Blocks per draft-ietf-opsawg-pcapng: SHB, IDB, EPB, ISB, little-endian host order.
 */
#ifndef AGENTXDP_PCAPNG_WRITER_H
#define AGENTXDP_PCAPNG_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct pcapng_writer;

struct pcapng_shb_info {
	const char *hardware;		/* shb_hardware, may be NULL */
	const char *os;			/* shb_os, may be NULL (then uname) */
	const char *application;	/* shb_userappl, e.g. "agentxdp-capture 0.1.0" */
};

struct pcapng_if_info {
	const char *name;		/* if_name */
	const char *description;	/* if_description, may be NULL */
	uint16_t linktype;		/* LINKTYPE_ETHERNET = 1 */
	uint32_t snaplen;
	/* Timestamps are always written with if_tsresol = 9 (nanoseconds). */
};

/* EPB flags word (pcapng epb_flags): inbound / outbound direction in bits 0-1. */
#define PCAPNG_EPB_FLAG_INBOUND 0x1u
#define PCAPNG_EPB_FLAG_OUTBOUND 0x2u

struct pcapng_packet {
	uint32_t if_id;			/* index returned by pcapng_writer_add_interface() */
	uint64_t ts_ns;			/* nanoseconds since the epoch */
	const uint8_t *data;
	uint32_t caplen;
	uint32_t origlen;
	/* Options, written only when set: */
	bool has_flags;
	uint32_t flags;			/* epb_flags */
	bool has_queue;
	uint32_t queue;			/* epb_queue: RX queue */
	bool has_dropcount;
	uint64_t dropcount;		/* epb_dropcount: lost since the previous packet */
};

struct pcapng_if_stats {
	uint32_t if_id;
	uint64_t ts_ns;
	uint64_t received;		/* isb_ifrecv */
	uint64_t dropped;		/* isb_ifdrop */
	uint64_t os_dropped;		/* isb_osdrop, written when non-zero: captured, not in the file */
	uint64_t start_ns, end_ns;	/* isb_starttime / isb_endtime, 0 = omit */
};

/*
 * Open `path` ("-" = stdout) and write the SHB. Files are created 0640 and written to
 * `path` directly (capture must keep what it wrote if it dies). Returns NULL with errno set.
 */
struct pcapng_writer *pcapng_writer_open(const char *path, const struct pcapng_shb_info *shb);
/* Same over an already open stream (not closed by pcapng_writer_close()). */
struct pcapng_writer *pcapng_writer_open_stream(FILE *f, const struct pcapng_shb_info *shb);
/*
 * Returns the interface id (0, 1, ...) or -1 with errno set. Add interfaces before packets.
 * Packets longer than the interface's snaplen are trimmed to it. Note: libpcap reads a pcapng
 * section only when all its interfaces share one linktype and snaplen (Wireshark reads any).
 */
int pcapng_writer_add_interface(struct pcapng_writer *w, const struct pcapng_if_info *ifi);
/* 0 or -1 with errno set (ENOSPC on a full disk: what was written before stays valid). */
int pcapng_writer_write_packet(struct pcapng_writer *w, const struct pcapng_packet *pkt);
int pcapng_writer_write_stats(struct pcapng_writer *w, const struct pcapng_if_stats *st);
/*
 * The last blocks of the file: n statistics blocks, written out now. After a write failed for
 * lack of room (ENOSPC, EDQUOT, EFBIG) on a regular file, the file's last packets give up
 * their bytes until the statistics fit; each one removed is added to its interface's
 * os_dropped (and leaves pcapng_writer_packets()). The file stays whole pcapng and says what
 * it lost. 0, or -1 with errno; no block can follow.
 */
int pcapng_writer_write_final_stats(struct pcapng_writer *w, const struct pcapng_if_stats *st, size_t n);
/* Packets of interface if_id the file holds whole (not those still in the buffer). */
uint64_t pcapng_writer_packets(const struct pcapng_writer *w, uint32_t if_id);
int pcapng_writer_flush(struct pcapng_writer *w);
uint64_t pcapng_writer_bytes(const struct pcapng_writer *w);	/* bytes written so far */
/* Flush and close; 0 or -1 with errno set. Always frees w. */
int pcapng_writer_close(struct pcapng_writer *w);

/* Classic pcap (for `agentxdp-synth --format pcap`): ns-resolution magic 0xa1b23c4d. */
struct pcap_writer;
struct pcap_writer *pcap_writer_open(const char *path, uint16_t linktype, uint32_t snaplen);
int pcap_writer_write_packet(struct pcap_writer *w, uint64_t ts_ns, const uint8_t *data,
			     uint32_t caplen, uint32_t origlen);
int pcap_writer_close(struct pcap_writer *w);

#endif
