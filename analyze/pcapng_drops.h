/* pcapng_drops.h: sum the drop counters of a pcapng file (libpcap does not expose them). Pure. */
#ifndef AGENTXDP_PCAPNG_DROPS_H
#define AGENTXDP_PCAPNG_DROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCAPNG_SHB_TYPE 0x0a0d0d0au

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

/* One number for "the capture lost this many packets": the larger of the per-packet sum and
 * the interface statistics (they usually count the same drops twice). */
uint64_t pcapng_drops_total(const struct pcapng_drops *d);
bool pcapng_drops_present(const struct pcapng_drops *d);

#endif
