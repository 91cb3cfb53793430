/* latency_set.c: latency samples, exact up to a cap, then a log-linear histogram (no I/O). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/track/latency_hist.h"
#include "lib/track/latency_set.h"
#include "lib/util/sort_u32.h"
#include "lib/util/util.h"

/* Past the exact cap: latency_hist's buckets for 32-bit values (6.8 KB, under 0.8% error). */
#define HIST_BUCKETS LAT_HIST_BUCKETS(32)

static uint32_t hist_bucket(uint32_t v)
{
	return latency_hist_bucket(v);
}

/* Representative value of a bucket: its midpoint. */
static uint32_t hist_value(uint32_t b)
{
	uint64_t mid = latency_hist_mid(b);

	return mid > UINT32_MAX ? UINT32_MAX : (uint32_t)mid;
}

static void exact_free(struct latency_set *s)
{
	if (s->mem)
		track_mem_free(s->mem, s->v, s->cap * sizeof(*s->v));
	else
		free(s->v);
}

/* Past the exact cap (or out of memory for more exact samples): move to the histogram. */
static int latency_set_to_hist(struct latency_set *s, uint32_t v)
{
	s->hist = calloc(HIST_BUCKETS, sizeof(*s->hist));
	if (!s->hist) {
		s->count--;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->n; i++)
		s->hist[hist_bucket(s->v[i])]++;
	s->hist[hist_bucket(v)]++;
	exact_free(s);
	s->v = NULL;
	s->n = 0;
	s->cap = 0;
	return 0;
}

/*
 * Room for one more exact sample, doubling (util_ensure_mem grows by half): realloc copies
 * and first touches of new pages were a tenth of the tracker's time on a 10M-packet trace.
 */
static int exact_grow(struct latency_set *s, uint32_t exact_cap)
{
	size_t ncap = s->cap ? s->cap * 2 : 16;
	uint32_t *nv;

	if (s->n >= exact_cap)
		return -E2BIG;
	if (ncap > exact_cap)
		ncap = exact_cap;
	nv = s->mem ? track_mem_realloc(s->mem, s->v, s->cap * sizeof(*nv), ncap * sizeof(*nv))
		    : realloc(s->v, ncap * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	s->v = nv;
	s->cap = ncap;
	return 0;
}

int latency_set_add(struct latency_set *s, uint64_t ns, uint32_t exact_cap)
{
	uint32_t v = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;

	if (s->count == 0 || ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	s->count++;
	if (s->hist) {
		s->hist[hist_bucket(v)]++;
		return 0;
	}
	if (s->n == s->cap && exact_grow(s, exact_cap))
		return latency_set_to_hist(s, v);
	s->v[s->n++] = v;
	s->sorted = 0;
	return 0;
}

static size_t nearest_rank(size_t n, uint32_t q10k)
{
	size_t rank = ((uint64_t)q10k * n + 9999) / 10000;
	return rank < 1 ? 1 : rank > n ? n : rank;
}

uint32_t percentile_nearest_rank_u32(const uint32_t *sorted, size_t n, uint32_t q10k)
{
	if (n == 0)
		return 0;
	return sorted[nearest_rank(n, q10k) - 1];
}

static uint64_t hist_percentile(const uint32_t *hist, uint64_t count, uint32_t q10k)
{
	uint64_t rank = ((__uint128_t)q10k * count + 9999) / 10000, cum = 0;

	if (rank < 1)
		rank = 1;
	for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
		cum += hist[b];
		if (cum >= rank)
			return hist_value(b);
	}
	return 0;
}

/* Percentile in ns, clamped to the exact min/max (histogram midpoints may overshoot). */
uint64_t latency_set_percentile(struct latency_set *s, uint32_t q10k)
{
	uint64_t v;

	if (s->count == 0)
		return 0;
	if (!s->hist) {
		if (!s->sorted) {
			sort_u32(s->v, s->n);
			s->sorted = 1;
		}
		v = percentile_nearest_rank_u32(s->v, s->n, q10k);
	} else {
		v = hist_percentile(s->hist, s->count, q10k);
	}
	if (v > s->max_ns)
		v = s->max_ns;
	if (v < s->min_ns)
		v = s->min_ns;
	return v;
}

/* Median absolute deviation (ns), nearest-rank median of |x - median|. */
int latency_set_mad(struct latency_set *s, uint64_t *mad_ns)
{
	uint64_t med = latency_set_percentile(s, 5000), rank, cum = 0, result = 0;

	*mad_ns = 0;
	if (s->count == 0)
		return 0;
	if (!s->hist) {
		uint32_t *dev = malloc((size_t)s->n * sizeof(*dev));

		if (!dev)
			return -ENOMEM;
		for (uint32_t i = 0; i < s->n; i++)
			dev[i] = s->v[i] > med ? (uint32_t)(s->v[i] - med) : (uint32_t)(med - s->v[i]);
		sort_u32(dev, s->n);
		*mad_ns = percentile_nearest_rank_u32(dev, s->n, 5000);
		free(dev);
		return 0;
	}
	/* Histogram: walk buckets outward from the median by distance. */
	{
		uint32_t mb = hist_bucket(med > UINT32_MAX ? UINT32_MAX : (uint32_t)med);
		int lo = (int)mb, hi = (int)mb + 1;

		rank = (s->count * 5000 + 9999) / 10000;
		while (lo >= 0 || hi < (int)HIST_BUCKETS) {
			uint64_t dlo = lo >= 0 ? med - (hist_value((uint32_t)lo) < med ? hist_value((uint32_t)lo) : med) : UINT64_MAX;
			uint64_t dhi = hi < (int)HIST_BUCKETS ? (hist_value((uint32_t)hi) > med ? hist_value((uint32_t)hi) - med : 0) : UINT64_MAX;

			if (dlo <= dhi) {
				cum += s->hist[lo--];
				result = dlo;
			} else {
				cum += s->hist[hi++];
				result = dhi;
			}
			if (cum >= rank)
				break;
		}
	}
	*mad_ns = result;
	return 0;
}

void latency_set_free(struct latency_set *s)
{
	exact_free(s);
	free(s->hist);
	memset(s, 0, sizeof(*s));
}
