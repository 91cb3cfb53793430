/* capture.h: an XDP RoCE capture session (load, attach, drain) that hands each record to a callback. */
#ifndef AGENTXDP_CAPTURE_H
#define AGENTXDP_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/roce_capture.h"
#include "lib/capture/capture_filter.h"

enum capture_xdp_mode {
	CAPTURE_MODE_AUTO = 0,	/* native where the driver supports it, generic otherwise */
	CAPTURE_MODE_NATIVE,	/* driver (XDP_FLAGS_DRV_MODE); fails when unsupported */
	CAPTURE_MODE_GENERIC,	/* skb (XDP_FLAGS_SKB_MODE) */
};

/*
 * One captured packet as handed to the record callback. The frame is Ethernet
 * (DLT_EN10MB), so a consumer can call roce_decode_frame(opts, DLT_EN10MB, frame, cap_len,
 * orig_len, ts_ns, &pkt) (lib/decode/roce_decode.h) to get a struct roce_pkt.
 */
struct capture_record {
	const uint8_t *frame;	/* cap_len bytes from the Ethernet header on */
	uint32_t cap_len;
	uint32_t orig_len;	/* bytes on the wire */
	uint64_t ts_ns;		/* wall clock, ns since the epoch */
	uint32_t if_id;		/* position of the interface in capture_config.ifnames */
	uint32_t rx_queue;
	uint64_t lost_before;	/* ring-buffer losses on this CPU since its previous record */
	uint8_t flags;		/* ROCE_CAP_F_* */
};

/* Return 0 to go on, a negative value to stop draining (capture_session_poll returns it). */
typedef int (*capture_record_fn)(void *ctx, const struct capture_record *rec);

struct capture_config {
	const char *ifnames[ROCE_CAP_MAX_IFACES];
	unsigned n_ifaces;
	enum capture_xdp_mode mode;
	uint32_t snaplen;		/* 0: through the headers the opcode implies */
	uint64_t ring_bytes;		/* memory for the per-CPU rings, split evenly over the CPUs */
	struct capture_filter filter;
	capture_record_fn on_record;
	void *ctx;
};

/* Per-interface totals read from the program's per-CPU counters. */
struct capture_if_counters {
	uint64_t seen_pkts, roce_pkts, filtered_pkts, captured_pkts, captured_bytes, lost_pkts,
		malformed_pkts;
};

struct capture_session;

/*
 * Check privileges and interfaces, then open -> configure -> load -> attach.
 * Returns 0, or -1 after printing one clear error line (pr_err).
 */
int capture_session_open(const struct capture_config *cfg, struct capture_session **out);
/* Wait up to timeout_ms for records and hand all available ones to the callback.
 * Returns the number handled, a negative callback value, or -errno (EINTR is 0). */
int capture_session_poll(struct capture_session *s, int timeout_ms);
/* Hand over what is in the ring now, without waiting. */
int capture_session_drain(struct capture_session *s);
int capture_session_counters(struct capture_session *s, unsigned if_id, struct capture_if_counters *out);
const char *capture_session_mode_name(const struct capture_session *s, unsigned if_id);
uint32_t capture_session_ifindex(const struct capture_session *s, unsigned if_id);
/* Wall-clock now in ns (the session's monotonic-to-realtime mapping). */
uint64_t capture_session_now_ns(struct capture_session *s);
/* Detach (destroying the links) and free. */
void capture_session_close(struct capture_session *s);

#endif
