/*
 * latency_set.h: a set of latency samples, exact up to a cap, then a log-linear histogram
 * (<1% relative error), with nearest-rank percentiles and the median absolute deviation.
 */
#ifndef AGENTXDP_LATENCY_SET_H
#define AGENTXDP_LATENCY_SET_H

#include <stddef.h>
#include <stdint.h>

#include "lib/track/track_mem.h"

/* All zero is an empty set. */
struct latency_set {
	uint32_t *v;		/* exact samples, ns (saturated at 2^32-1) */
	size_t cap;		/* room in v */
	uint32_t *hist;		/* HIST_BUCKETS counts once the exact cap was passed */
	uint64_t count;
	uint64_t max_ns;
	uint64_t min_ns;
	uint32_t n;		/* samples in v */
	int sorted;
	struct track_mem *mem;	/* where v lives; NULL: malloc */
};

/* Add one sample. 0, or -ENOMEM (the sample is not counted). */
int latency_set_add(struct latency_set *s, uint64_t ns, uint32_t exact_cap);
/* Nearest-rank percentile in ns (q10k = 9900 for p99), clamped to the exact min and max. */
uint64_t latency_set_percentile(struct latency_set *s, uint32_t q10k);
/* Median absolute deviation in ns (nearest-rank median of |x - median|). 0, or -ENOMEM (*mad_ns 0). */
int latency_set_mad(struct latency_set *s, uint64_t *mad_ns);
void latency_set_free(struct latency_set *s);
/* Nearest-rank percentile of sorted v[0..n): v[ceil(q10k*n/10000)-1]; q10k = 9900 for p99. */
uint32_t percentile_nearest_rank_u32(const uint32_t *sorted, size_t n, uint32_t q10k);

#endif
