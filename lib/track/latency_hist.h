/*
 * latency_hist.h: log-bucket latency histograms (no I/O).
 *
 * Buckets: a value below 64 ns is its own bucket; above, every power of two is cut into 64
 * equal sub-buckets, so a bucket is at most 1/64 of its lower bound wide and its midpoint is
 * within 0.8% of any value in it. Bucket b covers [latency_hist_lo(b), latency_hist_hi(b)).
 * latency_set uses the same buckets past its exact cap.
 *
 * struct lat_flow_hist counts one flow's samples of every kind: per (kind, bucket) a count
 * for the current time window and, once windows close, one for the whole trace (sparse: 8
 * bytes a bucket in use in each, counts up to 2^48 - 1), and per kind seen in the window its
 * exact count, sum, min and max (40 bytes a kind). Closing the window reports each kind's
 * summary (p50/p99 from the buckets, clamped to the exact min and max) and adds its counts to
 * the whole trace's: a sample touches the window's small table only, not the large one.
 */
#ifndef AGENTXDP_LATENCY_HIST_H
#define AGENTXDP_LATENCY_HIST_H

#include <stdint.h>

struct track_mem;

#define LAT_HIST_SUB_BITS 6
#define LAT_HIST_SUB (1u << LAT_HIST_SUB_BITS)
/* Buckets for values below 2^bits. */
#define LAT_HIST_BUCKETS(bits) (LAT_HIST_SUB + ((bits) - LAT_HIST_SUB_BITS) * LAT_HIST_SUB)
#define LAT_HIST_MAX_BUCKETS LAT_HIST_BUCKETS(64)
#define LAT_HIST_KINDS 8	/* kinds a lat_flow_hist tells apart (0..7) */

static inline uint32_t latency_hist_bucket(uint64_t v)
{
	uint32_t e;

	if (v < LAT_HIST_SUB)
		return (uint32_t)v;
	e = 63 - (uint32_t)__builtin_clzll(v); /* >= LAT_HIST_SUB_BITS */
	return LAT_HIST_SUB + (e - LAT_HIST_SUB_BITS) * LAT_HIST_SUB +
	       (uint32_t)((v >> (e - LAT_HIST_SUB_BITS)) & (LAT_HIST_SUB - 1));
}

uint64_t latency_hist_lo(uint32_t b);
/* Exclusive upper bound; UINT64_MAX for the last bucket. */
uint64_t latency_hist_hi(uint32_t b);
/* The value a bucket stands for: its midpoint. */
uint64_t latency_hist_mid(uint32_t b);

struct lat_kind_window {
	uint64_t samples, sum_ns, min_ns, max_ns;
	uint32_t kind;
};

/* Open addressing by (kind, bucket): a slot holds key + 1 in its low 16 bits (0: empty) and
 * the count above. The window's table lists its used slots, for the close. */
struct lat_hist_table {
	uint64_t *slot;
	uint32_t *used;		/* window table only: slots in use, in the order they were used */
	uint32_t n, cap;
};

/* All zero is empty. */
struct lat_flow_hist {
	struct lat_hist_table win;	/* the current window */
	struct lat_kind_window *kw;	/* the current window's kinds, in first-seen order */
	uint8_t n_kw, cap_kw;
	uint8_t in_window;		/* kinds with samples in the current window (bits) */
	struct lat_hist_table total;	/* the closed windows' counts (no used list) */
};

/* One kind's samples in a closed window. */
struct lat_window_summary {
	uint32_t kind;
	uint64_t samples, sum_ns, min_ns, p50_ns, p99_ns, max_ns;
};

/*
 * Every call on one histogram takes the same allocator m, whose 64-byte aligned pieces on
 * huge pages hold its tables (a 4 KB page fault took ~20 us on the guest we measured on).
 * Count one sample (kind < LAT_HIST_KINDS). 0, or -ENOMEM (not counted).
 */
int lat_flow_hist_add(struct lat_flow_hist *h, struct track_mem *m, uint32_t kind, uint64_t ns);
/* Bring the memory lat_flow_hist_add(h, kind, ns) will touch into the cache (a hint only). */
void lat_flow_hist_prefetch(const struct lat_flow_hist *h, uint32_t kind, uint64_t ns);
/* Bring the window lat_flow_hist_close_window(h) reads into the cache (a hint only). */
void lat_flow_hist_prefetch_close(const struct lat_flow_hist *h);
/*
 * Close the current window: fn once per kind with samples in it, in kind order; its counts
 * go to the whole trace's. 0, or -ENOMEM (fn was called; the counts could not be kept).
 */
int lat_flow_hist_close_window(struct lat_flow_hist *h, struct track_mem *m,
			       void (*fn)(void *ctx, const struct lat_window_summary *w), void *ctx);
/* fn for every bucket in use over the whole trace (the open window's counts too), by kind
 * then bucket. 0 (it allocates nothing). */
int lat_flow_hist_buckets(const struct lat_flow_hist *h,
			  void (*fn)(void *ctx, uint32_t kind, uint32_t bucket, uint64_t count), void *ctx);
void lat_flow_hist_free(struct lat_flow_hist *h, struct track_mem *m);

#endif
