/* capture_filter.h: agentxdp-capture's --filter grammar, parsed into the XDP program's config. */
#ifndef AGENTXDP_CAPTURE_FILTER_H
#define AGENTXDP_CAPTURE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/roce_capture.h"

/*
 * Grammar (whitespace-separated words; every primitive must match):
 *   filter := primitive { "and" primitive }
 *   primitive := [ "src" | "dst" ] "host" ADDRESS     (IPv4 or IPv6; at most 2)
 *              | "qpn" NUMBER                         (BTH destination QP, 0..0xffffff; at most 1)
 * RoCE v1 frames match "host" against their GRH GIDs (IPv4 as ::ffff:a.b.c.d).
 */
struct capture_filter {
	unsigned n_hosts;
	struct roce_cap_host_filter hosts[ROCE_CAP_MAX_HOSTS];
	bool has_qpn;
	uint32_t qpn;	/* 24 bits */
};

/*
 * Add the primitives in `text` to *f (call with a zeroed *f, then once per --filter).
 * Returns 0, or -EINVAL with a one-line reason in err.
 */
int capture_filter_parse(const char *text, struct capture_filter *f, char *err, size_t err_len);
/* Print *f back in the grammar above ("" when empty). */
void capture_filter_format(const struct capture_filter *f, char *buf, size_t len);

#endif
