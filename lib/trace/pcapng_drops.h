/* pcapng_drops.h: sum the drop counters of a pcapng file (libpcap does not expose them). Pure. */
#ifndef AGENTXDP_PCAPNG_DROPS_H
#define AGENTXDP_PCAPNG_DROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCAPNG_SHB_TYPE 0x0a0d0d0au

/* A value in the section's byte order (swapped: the section was written big-endian). */
uint16_t pcapng_get16(const uint8_t *q, bool swapped);
uint32_t pcapng_get32(const uint8_t *q, bool swapped);
uint64_t pcapng_get64(const uint8_t *q, bool swapped);
/*
 * The option at *off in a block's options (p, len), *off moved past it: 1 with its code and
 * value (*val, *vlen bytes, inside p), 0 at opt_endofopt or the end, -1 when it overruns.
 */
int pcapng_option_next(const uint8_t *p, size_t len, size_t *off, bool swapped, uint16_t *code,
		       const uint8_t **val, uint16_t *vlen);

struct pcapng_drops {
	uint64_t blocks;		/* blocks walked */
	uint64_t epb_dropcount_sum;	/* EPB epb_dropcount (drops since the previous packet): summed */
	uint64_t pb_drops_sum;		/* obsolete Packet Block drops_count: summed */
	uint64_t isb_ifdrop_sum;	/* ISB isb_ifdrop is cumulative: last value per interface, summed */
	uint64_t isb_osdrop_sum;	/* ISB isb_osdrop, likewise */
	bool has_epb_dropcount, has_pb_drops, has_isb_ifdrop, has_isb_osdrop;
	size_t stop_offset;		/* where a malformed walk stopped */
	const char *stop_reason;	/* NULL when the walk reached the end cleanly */
};

/*
 * Walk the pcapng blocks in (p, len) and fill *out. Returns 0 when every block was well
 * formed, -1 when the walk stopped early (out->stop_reason says why; counts so far are kept).
 */
int pcapng_walk_drops(const uint8_t *p, size_t len, struct pcapng_drops *out);

/*
 * The same walk over a byte stream that arrives in pieces of any size (the trace reader feeds
 * it what libpcap reads, so a file is read once and memory does not grow with its size).
 * Only the bytes a counter needs are kept: a block's first 28 bytes and its options, up to
 * PCAPNG_DROPS_OPTIONS_MAX bytes of options (a block with more has its options ignored).
 *	struct pcapng_drops_walker *w = malloc(sizeof(*w));
 *	pcapng_drops_walker_init(w);
 *	for each piece: pcapng_drops_feed(w, piece, n);
 *	rc = pcapng_drops_finish(w, &drops);	// as pcapng_walk_drops() over the concatenation
 */
#define PCAPNG_DROPS_OPTIONS_MAX 65536
#define PCAPNG_DROPS_MAX_IFACES 256	/* per section; statistics of higher interface ids are ignored */

struct pcapng_drops_walker {
	struct pcapng_drops d;
	bool swapped, in_section, stopped;
	size_t block_off;		/* stream offset of the block being walked */
	/* a block that arrived in pieces */
	size_t block_pos;		/* its bytes seen so far */
	uint32_t block_total;		/* its length, 0 until its header was seen */
	uint32_t head_len;		/* bytes kept from its start (<= 28) */
	uint32_t opts_start;		/* where its options start (or total - 4: none) */
	bool opts_known;		/* head whole, opts_start set */
	uint8_t head[28];
	uint8_t trailer[4];		/* its trailing block length */
	uint8_t opts[PCAPNG_DROPS_OPTIONS_MAX];
	/* the latest cumulative ISB counters of each interface in the current section */
	uint64_t ifdrop[PCAPNG_DROPS_MAX_IFACES];
	uint64_t osdrop[PCAPNG_DROPS_MAX_IFACES];
};

void pcapng_drops_walker_init(struct pcapng_drops_walker *w);
/* Walk the next n bytes of the stream. Once the walk stopped, more bytes are ignored. */
void pcapng_drops_feed(struct pcapng_drops_walker *w, const uint8_t *p, size_t n);
/* End of the stream: fill *out; 0 when it ended cleanly on a block boundary, -1 otherwise. */
int pcapng_drops_finish(struct pcapng_drops_walker *w, struct pcapng_drops *out);

/* One number for "the capture lost this many packets": the larger of the per-packet sum and
 * the interface statistics (they usually count the same drops twice). */
uint64_t pcapng_drops_total(const struct pcapng_drops *d);
bool pcapng_drops_present(const struct pcapng_drops *d);

#endif
