/*
 * trace_filter.h: a pcap-filter(7) expression applied to frames read from traces, compiled by
 * libpcap itself (pcap_compile over pcap_open_dead), once per link type; the same selection
 * tcpdump makes when it reads the file with that expression.
 */
#ifndef AGENTXDP_TRACE_FILTER_H
#define AGENTXDP_TRACE_FILTER_H

#include <stddef.h>
#include <stdint.h>

struct trace_filter;

/*
 * Check EXPR (compiled for Ethernet, the common case, so that a typo is a usage error before
 * any trace is read) and keep it. 0, or -1 with a one-line message in err
 * ("filter 'hots 1.2.3.4': syntax error"); -ENOMEM as -1 with "out of memory".
 */
int trace_filter_new(struct trace_filter **out, const char *expr, char *err, size_t err_len);

/*
 * 1 when the frame (of LINKTYPE, a DLT_* value) matches, 0 when not, -1 when the expression
 * cannot apply to that link type (e.g. "ether host" over raw IP): the message is in
 * trace_filter_error(), once per link type; later frames of that type return 0 silently.
 */
int trace_filter_match(struct trace_filter *f, int linktype, const uint8_t *data, uint32_t caplen,
		       uint32_t origlen);
const char *trace_filter_error(const struct trace_filter *f);
const char *trace_filter_expr(const struct trace_filter *f);
void trace_filter_free(struct trace_filter *f);

#endif
