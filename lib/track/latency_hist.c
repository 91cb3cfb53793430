/* latency_hist.c: log-bucket latency histograms per flow, window and kind (no I/O). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/track/latency_hist.h"
#include "lib/track/track_mem.h"

/* key = kind << KEY_KIND_SHIFT | bucket, stored + 1 so that 0 is an empty slot. */
#define KEY_KIND_SHIFT 12
#define MIN_CAP 4
#define SLOT_KEY1(s) ((uint32_t)((s) & 0xffff))
#define SLOT_COUNT(s) ((s) >> 16)
#define COUNT_ONE (1ull << 16)
#define COUNT_MAX (UINT64_MAX >> 16)

_Static_assert(LAT_HIST_MAX_BUCKETS <= (1u << KEY_KIND_SHIFT), "bucket fits below the kind");
_Static_assert(LAT_HIST_KINDS << KEY_KIND_SHIFT < UINT16_MAX, "key + 1 fits 16 bits");

uint64_t latency_hist_lo(uint32_t b)
{
	uint32_t e, sub;

	if (b < LAT_HIST_SUB)
		return b;
	e = (b - LAT_HIST_SUB) / LAT_HIST_SUB + LAT_HIST_SUB_BITS;
	sub = (b - LAT_HIST_SUB) % LAT_HIST_SUB;
	return (1ull << e) + (uint64_t)sub * (1ull << (e - LAT_HIST_SUB_BITS));
}

uint64_t latency_hist_hi(uint32_t b)
{
	uint32_t e;

	if (b < LAT_HIST_SUB)
		return (uint64_t)b + 1;
	if (b + 1 >= LAT_HIST_MAX_BUCKETS)
		return UINT64_MAX;
	e = (b - LAT_HIST_SUB) / LAT_HIST_SUB + LAT_HIST_SUB_BITS;
	return latency_hist_lo(b) + (1ull << (e - LAT_HIST_SUB_BITS));
}

uint64_t latency_hist_mid(uint32_t b)
{
	uint64_t lo = latency_hist_lo(b), hi = latency_hist_hi(b);

	return lo + (hi - lo) / 2;
}

static uint32_t slot_of(uint32_t key1, uint32_t cap)
{
	return (key1 * 2654435761u) >> 7 & (cap - 1);
}

static uint64_t *find(uint64_t *slot, uint32_t cap, uint32_t key1)
{
	for (uint32_t i = slot_of(key1, cap);; i = (i + 1) & (cap - 1))
		if (SLOT_KEY1(slot[i]) == key1 || !slot[i])
			return &slot[i];
}

/* A table's bytes: the window's used list after its slots (12 bytes a slot, rounded up by
 * track_mem to 16). */
static size_t table_bytes(uint32_t cap, int listed)
{
	return cap * (sizeof(uint64_t) + (listed ? sizeof(uint32_t) : 0));
}

/* The table doubled (the window's used list with it, in one piece), entries rehashed. */
static int grow(struct lat_hist_table *t, struct track_mem *m, int listed)
{
	uint32_t cap = t->cap ? t->cap * 2 : MIN_CAP;
	uint64_t *slot = track_mem_alloc(m, table_bytes(cap, listed));

	if (!slot)
		return -ENOMEM;
	memset(slot, 0, table_bytes(cap, listed));
	for (uint32_t i = 0, k = 0; i < t->cap; i++) {
		uint64_t *x;

		if (!t->slot[i])
			continue;
		x = find(slot, cap, SLOT_KEY1(t->slot[i]));
		*x = t->slot[i];
		if (listed)
			((uint32_t *)(slot + cap))[k++] = (uint32_t)(x - slot);
	}
	track_mem_free(m, t->slot, table_bytes(t->cap, listed));
	t->slot = slot;
	t->used = listed ? (uint32_t *)(slot + cap) : NULL;
	t->cap = cap;
	return 0;
}

/* Room for one more key at most 3/4 full: probes stay short. 0, or -ENOMEM. */
static inline int reserve(struct lat_hist_table *t, struct track_mem *m, int listed)
{
	return (t->n + 1) * 4 > t->cap * 3 ? grow(t, m, listed) : 0;
}

/* The window's stats of KIND, added (zero) when new; most flows have one or two kinds. */
static struct lat_kind_window *kind_window(struct lat_flow_hist *h, struct track_mem *m,
					   uint32_t kind)
{
	struct lat_kind_window *w;

	for (uint32_t i = 0; i < h->n_kw; i++)
		if (h->kw[i].kind == kind)
			return &h->kw[i];
	if (h->n_kw == h->cap_kw) {
		uint32_t cap = h->cap_kw ? h->cap_kw * 2u : 1u;

		if (cap > LAT_HIST_KINDS)
			cap = LAT_HIST_KINDS;
		w = track_mem_realloc(m, h->kw, h->cap_kw * sizeof(*w), cap * sizeof(*w));
		if (!w)
			return NULL;
		h->kw = w;
		h->cap_kw = (uint8_t)cap;
	}
	w = &h->kw[h->n_kw++];
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	return w;
}

int lat_flow_hist_add(struct lat_flow_hist *h, struct track_mem *m, uint32_t kind, uint64_t ns)
{
	uint32_t key1 = (kind << KEY_KIND_SHIFT | latency_hist_bucket(ns)) + 1;
	struct lat_kind_window *w;
	uint64_t *x;

	if (kind >= LAT_HIST_KINDS)
		return -EINVAL;
	w = kind_window(h, m, kind);
	if (!w)
		return -ENOMEM;
	if (reserve(&h->win, m, 1))
		return -ENOMEM;
	x = find(h->win.slot, h->win.cap, key1);
	if (!*x) {
		*x = key1;
		/* Closing the window then visits these slots only. */
		h->win.used[h->win.n++] = (uint32_t)(x - h->win.slot);
	}
	*x += COUNT_ONE;
	if (!w->samples || ns < w->min_ns)
		w->min_ns = ns;
	if (ns > w->max_ns)
		w->max_ns = ns;
	w->samples++;
	w->sum_ns += ns;
	h->in_window |= (uint8_t)(1u << kind);
	return 0;
}

void lat_flow_hist_prefetch(const struct lat_flow_hist *h, uint32_t kind, uint64_t ns)
{
	uint32_t key1 = (kind << KEY_KIND_SHIFT | latency_hist_bucket(ns)) + 1;

	if (h->win.cap) {
		__builtin_prefetch(&h->win.slot[slot_of(key1, h->win.cap)], 1);
		__builtin_prefetch(&h->win.used[h->win.n], 1);
	}
	/* Every kind's stats in the window (the first at least): kind_window() reads each
	 * one's kind until it finds its own, and 40-byte entries cross lines. */
	if (h->kw) {
		const char *p = (const char *)h->kw, *end = p + (h->n_kw ? h->n_kw : 1) * sizeof(*h->kw);

		for (; p < end; p += 64)
			__builtin_prefetch(p, 1);
		__builtin_prefetch(end - 1, 1);
	}
}

/* Window tables up to this size are fetched whole before a close; larger ones only their list. */
#define CLOSE_PREFETCH_BYTES 1024

void lat_flow_hist_prefetch_close(const struct lat_flow_hist *h)
{
	const char *p = (const char *)h->win.used, *end = p + h->win.n * sizeof(*h->win.used);

	if (!h->win.n)
		return;
	/* The closing window's slots are scattered over its table: cheaper to fetch a small
	 * table's every line than to wait for the list and then for each slot. */
	for (; p < end; p += 64)
		__builtin_prefetch(p);
	__builtin_prefetch(end - 1);
	if (h->win.cap * sizeof(*h->win.slot) <= CLOSE_PREFETCH_BYTES)
		for (p = (const char *)h->win.slot, end = p + h->win.cap * sizeof(*h->win.slot); p < end;
		     p += 64)
			__builtin_prefetch(p, 1);
}

#define BUCKET_MASK ((1u << KEY_KIND_SHIFT) - 1)
#define BUCKET_WORDS ((LAT_HIST_MAX_BUCKETS + 63) / 64)

/* Nearest rank: ceil(q10k * samples / 10000), at least 1. */
static uint64_t nearest_rank(uint64_t samples, uint32_t q10k)
{
	uint64_t rank = ((__uint128_t)q10k * samples + 9999) / 10000;

	return rank < 1 ? 1 : rank;
}

/*
 * p50 and p99 of KIND's window counts: the buckets with a count are marked in a bitmap and
 * walked in bucket order, so no sort (sorting the window's entries was 1.5% of a run). A
 * rank past the counts' sum takes the highest bucket; no bucket gives 0.
 */
static void window_percentiles(const struct lat_flow_hist *h, uint32_t kind, uint64_t samples,
			       uint64_t *p50, uint64_t *p99)
{
	uint64_t bits[BUCKET_WORDS] = { 0 };
	uint64_t count[LAT_HIST_MAX_BUCKETS]; /* read only where bits has a 1 */
	uint64_t rank50 = nearest_rank(samples, 5000), rank99 = nearest_rank(samples, 9900), cum = 0;
	uint32_t lo = BUCKET_WORDS, hi = 0, last = 0;
	int found50 = 0;

	*p50 = *p99 = 0;
	for (uint32_t i = 0; i < h->win.n; i++) {
		uint64_t x = h->win.slot[h->win.used[i]];
		uint32_t key = SLOT_KEY1(x) - 1, b = key & BUCKET_MASK;

		if (key >> KEY_KIND_SHIFT != kind)
			continue;
		bits[b / 64] |= 1ull << (b % 64);
		count[b] = SLOT_COUNT(x);
		if (b / 64 < lo)
			lo = b / 64;
		if (b / 64 > hi)
			hi = b / 64;
	}
	for (uint32_t wi = lo; wi <= hi && wi < BUCKET_WORDS; wi++)
		for (uint64_t m = bits[wi]; m; m &= m - 1) {
			uint32_t b = wi * 64 + (uint32_t)__builtin_ctzll(m);

			last = b;
			cum += count[b];
			if (!found50 && cum >= rank50) {
				*p50 = latency_hist_mid(b);
				found50 = 1;
			}
			if (cum >= rank99) {
				*p99 = latency_hist_mid(b);
				return;
			}
		}
	if (lo == BUCKET_WORDS)
		return;
	if (!found50)
		*p50 = latency_hist_mid(last);
	*p99 = latency_hist_mid(last);
}

static uint64_t clamp(uint64_t v, const struct lat_kind_window *w)
{
	return v < w->min_ns ? w->min_ns : v > w->max_ns ? w->max_ns : v;
}

/*
 * The whole trace's slots fold_window() adds the window's counts to, scattered over the large
 * table: fetched before the window's percentiles are found, so that they arrive meanwhile
 * (fetched just before the fold, the fold still waited on them: 12% of the histograms' time).
 */
static void prefetch_fold(const struct lat_flow_hist *h)
{
	const struct lat_hist_table *w = &h->win, *t = &h->total;

	for (uint32_t i = 0; i < w->n && t->cap; i++)
		__builtin_prefetch(&t->slot[slot_of(SLOT_KEY1(w->slot[w->used[i]]), t->cap)], 1);
}

/* The window's counts into the whole trace's, the window emptied (prefetch_fold() first). */
static int fold_window(struct lat_flow_hist *h, struct track_mem *m)
{
	struct lat_hist_table *w = &h->win, *t = &h->total;
	int rc = 0;

	for (uint32_t i = 0; i < w->n; i++) {
		uint64_t s = w->slot[w->used[i]], *x, c;

		w->slot[w->used[i]] = 0;
		if (rc || reserve(t, m, 0)) {
			rc = -ENOMEM;
			continue;
		}
		x = find(t->slot, t->cap, SLOT_KEY1(s));
		if (!*x)
			t->n++;
		c = SLOT_COUNT(*x) + SLOT_COUNT(s);
		*x = SLOT_KEY1(s) | (c < COUNT_MAX ? c : COUNT_MAX) << 16;
	}
	w->n = 0;
	return rc;
}

int lat_flow_hist_close_window(struct lat_flow_hist *h, struct track_mem *m,
			       void (*fn)(void *ctx, const struct lat_window_summary *w), void *ctx)
{
	if (!h->in_window)
		return 0;
	prefetch_fold(h);
	for (uint32_t kind = 0; kind < LAT_HIST_KINDS; kind++) {
		const struct lat_kind_window *w = NULL;
		uint64_t p50, p99;

		if (!(h->in_window & 1u << kind))
			continue;
		for (uint32_t k = 0; k < h->n_kw; k++)
			if (h->kw[k].kind == kind)
				w = &h->kw[k];
		if (!w)
			continue;
		window_percentiles(h, kind, w->samples, &p50, &p99);
		fn(ctx, &(struct lat_window_summary){
				.kind = kind,
				.samples = w->samples,
				.sum_ns = w->sum_ns,
				.min_ns = w->min_ns,
				.p50_ns = clamp(p50, w),
				.p99_ns = clamp(p99, w),
				.max_ns = w->max_ns,
			});
	}
	h->n_kw = 0;
	h->in_window = 0;
	return fold_window(h, m);
}

/* KEY1's count in table t (0: none). */
static uint64_t count_of(const struct lat_hist_table *t, uint32_t key1)
{
	return t->cap ? SLOT_COUNT(*find(t->slot, t->cap, key1)) : 0;
}

/* Keys as bits: LAT_HIST_KINDS kinds of 1 << KEY_KIND_SHIFT buckets. */
#define KEY_WORDS ((LAT_HIST_KINDS << KEY_KIND_SHIFT) / 64)

int lat_flow_hist_buckets(const struct lat_flow_hist *h,
			  void (*fn)(void *ctx, uint32_t kind, uint32_t bucket, uint64_t count), void *ctx)
{
	const struct lat_hist_table *t[2] = { &h->total, &h->win };
	uint64_t bits[KEY_WORDS];

	if (!h->total.n && !h->win.n)
		return 0;
	memset(bits, 0, sizeof(bits));
	/* Both tables' keys marked, then walked in order (no sort) and looked up for the counts. */
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < t[k]->cap; i++)
			if (t[k]->slot[i]) {
				uint32_t key = SLOT_KEY1(t[k]->slot[i]) - 1;

				bits[key / 64] |= 1ull << (key % 64);
			}
	for (uint32_t wi = 0; wi < KEY_WORDS; wi++)
		for (uint64_t m = bits[wi]; m; m &= m - 1) {
			uint32_t key = wi * 64 + (uint32_t)__builtin_ctzll(m);
			uint64_t c = count_of(&h->total, key + 1) + count_of(&h->win, key + 1);

			fn(ctx, key >> KEY_KIND_SHIFT, key & BUCKET_MASK, c < COUNT_MAX ? c : COUNT_MAX);
		}
	return 0;
}

void lat_flow_hist_free(struct lat_flow_hist *h, struct track_mem *m)
{
	track_mem_free(m, h->win.slot, table_bytes(h->win.cap, 1));
	track_mem_free(m, h->total.slot, table_bytes(h->total.cap, 0));
	track_mem_free(m, h->kw, h->cap_kw * sizeof(*h->kw));
	memset(h, 0, sizeof(*h));
}
