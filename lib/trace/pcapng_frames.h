/* pcapng_frames.h: the frames of pcapng blocks, each with its own interface's link type. Pure. */
#ifndef AGENTXDP_PCAPNG_FRAMES_H
#define AGENTXDP_PCAPNG_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * libpcap refuses a pcapng file whose interfaces have different link types (mergecap of an
 * Ethernet and a Linux cooked capture); the trace reader then reads it with this. The caller
 * reads whole blocks: the first 12 bytes, pcapng_frames_block_length(), the rest, then
 * pcapng_frames_block(). Blocks of every type are accepted; frames come from EPB, SPB and the
 * obsolete PB, interfaces from IDB (link type, snaplen, if_tsresol, if_tsoffset), the byte
 * order and a new interface list from each SHB.
 */
#define PCAPNG_FRAMES_MAX_IFACES 65536	/* per section */
#define PCAPNG_FRAMES_MAX_BLOCK (16u << 20) /* a longer block is refused as corrupt */

struct pcapng_iface {
	int linktype;			/* LINKTYPE_* (= DLT_* for the ones we decode) */
	uint32_t snaplen;		/* bytes; 0: no limit */
	uint64_t units_per_s;		/* if_tsresol: timestamp units per second */
	int64_t tsoffset_s;		/* if_tsoffset: seconds added to every timestamp */
};

struct pcapng_frames {
	bool swapped;			/* the current section is big-endian */
	bool in_section;
	struct pcapng_iface *ifaces;	/* the current section's interfaces */
	size_t n_ifaces, cap_ifaces;
};

struct pcapng_frame {
	uint64_t ts_ns;			/* ns since the epoch (0 for an SPB: it has no time) */
	uint32_t caplen, origlen;	/* bytes */
	int linktype;			/* its interface's */
	const uint8_t *data;		/* inside the block given */
};

void pcapng_frames_init(struct pcapng_frames *s);
void pcapng_frames_free(struct pcapng_frames *s);
/*
 * The first 12 bytes of a block: its total length in *total (an SHB sets the section's byte
 * order). Returns 0, or -1 with *reason ("bad block length", ...).
 */
int pcapng_frames_block_length(struct pcapng_frames *s, const uint8_t hdr[12], uint32_t *total,
			       const char **reason);
/*
 * One whole block (blk, len: its header to its trailing length). Returns 1 with a frame in
 * *f (valid while blk is), 0 for a block without one, -1 with *reason when it is malformed.
 */
int pcapng_frames_block(struct pcapng_frames *s, const uint8_t *blk, size_t len, struct pcapng_frame *f,
			const char **reason);

/* if_tsresol: 10^-v s, or 2^-(v & 0x7f) s when the high bit is set. 0: not representable. */
uint64_t pcapng_tsresol_units(uint8_t v);

#endif
