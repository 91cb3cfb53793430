/* trace_span.h: a trace file's first and last packet timestamps, cheaply. */
#ifndef AGENTXDP_TRACE_SPAN_H
#define AGENTXDP_TRACE_SPAN_H

#include <stdint.h>

/*
 * First and last packet timestamps (ns since the epoch) of the pcap or pcapng file at
 * path, without reading the packets: pcap's record headers are walked (its format has no
 * way back), pcapng's first packet block is found going forward and its last going
 * backward through the blocks' trailing lengths. Returns 0, or -1 when the file is not a
 * regular pcap/pcapng file of one section and one time resolution, or is damaged: then
 * read it whole to know.
 */
int trace_span(const char *path, uint64_t *first_ns, uint64_t *last_ns);

#endif
