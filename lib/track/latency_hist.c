/* latency_hist.c: log-bucket latency histograms per flow, window and kind (no I/O). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/track/latency_hist.h"

/* key = kind << KEY_KIND_SHIFT | bucket, stored + 1 so that 0 is an empty slot. */
#define KEY_KIND_SHIFT 12
#define MIN_CAP 4

struct lat_hist_entry {
	uint16_t key1;
	uint16_t pad;
	uint32_t win;		/* this window */
	uint64_t total;		/* the whole trace */
};

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

static struct lat_hist_entry *find(struct lat_hist_entry *e, uint32_t cap, uint32_t key1)
{
	for (uint32_t i = slot_of(key1, cap);; i = (i + 1) & (cap - 1))
		if (e[i].key1 == key1 || !e[i].key1)
			return &e[i];
}

/* The table doubled (its touched-slot list with it, in one allocation), entries rehashed. */
static int grow(struct lat_flow_hist *h)
{
	uint32_t cap = h->cap ? h->cap * 2 : MIN_CAP;
	struct lat_hist_entry *e = calloc(cap, sizeof(*e) + sizeof(*h->touched));
	uint32_t *touched;

	if (!e)
		return -ENOMEM;
	touched = (uint32_t *)(e + cap);
	h->n_touched = 0;
	for (uint32_t i = 0; i < h->cap; i++) {
		struct lat_hist_entry *x;

		if (!h->e[i].key1)
			continue;
		x = find(e, cap, h->e[i].key1);
		*x = h->e[i];
		if (x->win)
			touched[h->n_touched++] = (uint32_t)(x - e);
	}
	free(h->e);
	h->e = e;
	h->touched = touched;
	h->cap = cap;
	return 0;
}

/* The window's stats of KIND, added (zero) when new; most flows have one or two kinds. */
static struct lat_kind_window *kind_window(struct lat_flow_hist *h, uint32_t kind)
{
	struct lat_kind_window *w;

	for (uint32_t i = 0; i < h->n_kw; i++)
		if (h->kw[i].kind == kind)
			return &h->kw[i];
	if (h->n_kw == h->cap_kw) {
		uint32_t cap = h->cap_kw ? h->cap_kw * 2u : 1u;

		if (cap > LAT_HIST_KINDS)
			cap = LAT_HIST_KINDS;
		w = realloc(h->kw, cap * sizeof(*w));
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

int lat_flow_hist_add(struct lat_flow_hist *h, uint32_t kind, uint64_t ns)
{
	uint32_t key1 = (kind << KEY_KIND_SHIFT | latency_hist_bucket(ns)) + 1;
	struct lat_kind_window *w;
	struct lat_hist_entry *x;

	if (kind >= LAT_HIST_KINDS)
		return -EINVAL;
	w = kind_window(h, kind);
	if (!w)
		return -ENOMEM;
	/* At most 3/4 full: probes stay short. */
	if ((h->n + 1) * 4 > h->cap * 3 && grow(h))
		return -ENOMEM;
	x = find(h->e, h->cap, key1);
	if (!x->key1) {
		x->key1 = (uint16_t)key1;
		h->n++;
	}
	/* Closing the window then visits these slots only, not the whole table. */
	if (!x->win)
		h->touched[h->n_touched++] = (uint32_t)(x - h->e);
	x->win++;
	x->total++;
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

	if (h->cap)
		__builtin_prefetch(&h->e[slot_of(key1, h->cap)], 1);
	/* Every kind's stats in the window (the first at least): kind_window() reads each
	 * one's kind until it finds its own, and 40-byte entries cross lines. */
	if (h->kw) {
		const char *p = (const char *)h->kw, *end = p + (h->n_kw ? h->n_kw : 1) * sizeof(*h->kw);

		for (; p < end; p += 64)
			__builtin_prefetch(p, 1);
		__builtin_prefetch(end - 1, 1);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Below this many, an insertion sort beats qsort's calls through a pointer. */
#define SMALL_SORT 48

/* The entries with window counts, as key1 << 32 | count, sorted into v (h->n_touched long). */
static void window_sorted(const struct lat_flow_hist *h, uint64_t *v)
{
	uint32_t n = h->n_touched;

	for (uint32_t i = 0; i < n; i++) {
		const struct lat_hist_entry *x = &h->e[h->touched[i]];

		v[i] = (uint64_t)x->key1 << 32 | x->win;
	}
	if (n > SMALL_SORT) {
		qsort(v, n, sizeof(*v), cmp_u64);
		return;
	}
	for (uint32_t i = 1; i < n; i++) {
		uint64_t x = v[i];
		uint32_t j = i;

		for (; j && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Nearest rank (ceil(q10k * n / 10000)) over one kind's sorted window counts v[0..n). */
static uint64_t window_percentile(const uint64_t *v, uint32_t n, uint64_t samples, uint32_t q10k)
{
	uint64_t rank = ((__uint128_t)q10k * samples + 9999) / 10000, cum = 0;

	if (rank < 1)
		rank = 1;
	for (uint32_t i = 0; i < n; i++) {
		cum += (uint32_t)v[i];
		if (cum >= rank)
			return latency_hist_mid((uint32_t)((v[i] >> 32) - 1) & ((1u << KEY_KIND_SHIFT) - 1));
	}
	return n ? latency_hist_mid((uint32_t)((v[n - 1] >> 32) - 1) & ((1u << KEY_KIND_SHIFT) - 1)) : 0;
}

static uint64_t clamp(uint64_t v, const struct lat_kind_window *w)
{
	return v < w->min_ns ? w->min_ns : v > w->max_ns ? w->max_ns : v;
}

/* Window entries sorted on the stack up to this many; more are rare (one flow, many kinds). */
#define STACK_SORT 256

int lat_flow_hist_close_window(struct lat_flow_hist *h,
			       void (*fn)(void *ctx, const struct lat_window_summary *w), void *ctx)
{
	uint64_t stack[STACK_SORT], *v = stack;
	uint32_t n = h->n_touched, i = 0;
	int rc = 0;

	if (!h->in_window)
		return 0;
	if (n > STACK_SORT)
		v = malloc(n * sizeof(*v));
	if (v)
		window_sorted(h, v);
	else
		rc = -ENOMEM;
	for (uint32_t kind = 0; v && kind < LAT_HIST_KINDS; kind++) {
		const struct lat_kind_window *w = NULL;
		uint32_t first = i;

		while (i < n && ((v[i] >> 32) - 1) >> KEY_KIND_SHIFT == kind)
			i++;
		if (!(h->in_window & 1u << kind))
			continue;
		for (uint32_t k = 0; k < h->n_kw; k++)
			if (h->kw[k].kind == kind)
				w = &h->kw[k];
		if (!w)
			continue;
		fn(ctx, &(struct lat_window_summary){
				.kind = kind,
				.samples = w->samples,
				.sum_ns = w->sum_ns,
				.min_ns = w->min_ns,
				.p50_ns = clamp(window_percentile(v + first, i - first, w->samples, 5000), w),
				.p99_ns = clamp(window_percentile(v + first, i - first, w->samples, 9900), w),
				.max_ns = w->max_ns,
			});
	}
	if (v != stack)
		free(v);
	for (i = 0; i < n; i++)
		h->e[h->touched[i]].win = 0;
	h->n_touched = 0;
	h->n_kw = 0;
	h->in_window = 0;
	return rc;
}

int lat_flow_hist_buckets(const struct lat_flow_hist *h,
			  void (*fn)(void *ctx, uint32_t kind, uint32_t bucket, uint64_t count), void *ctx)
{
	uint64_t *v;
	uint32_t n = 0;

	if (!h->n)
		return 0;
	/* Sorted by key, then looked up again for the whole-trace count. */
	v = malloc(h->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->cap; i++)
		if (h->e[i].key1)
			v[n++] = h->e[i].key1;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (uint32_t i = 0; i < n; i++) {
		const struct lat_hist_entry *x = find(h->e, h->cap, (uint32_t)v[i]);
		uint32_t key = (uint32_t)v[i] - 1;

		fn(ctx, key >> KEY_KIND_SHIFT, key & ((1u << KEY_KIND_SHIFT) - 1), x->total);
	}
	free(v);
	return 0;
}

void lat_flow_hist_free(struct lat_flow_hist *h)
{
	free(h->e);
	free(h->kw);
	memset(h, 0, sizeof(*h));
}
