/* read_queue.c: a READ's wait against its responder's link sending other READs' responses. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/track/read_queue.h"

static int cmp_item(const void *pa, const void *pb)
{
	const struct read_item *a = pa, *b = pb;
	int c;

	if (a->vantage != b->vantage)
		return a->vantage < b->vantage ? -1 : 1;
	c = memcmp(a->responder, b->responder, 16);
	if (c)
		return c;
	if (a->m.first_ns != b->m.first_ns)
		return a->m.first_ns < b->m.first_ns ? -1 : 1;
	if (a->m.arr_ns != b->m.arr_ns)
		return a->m.arr_ns < b->m.arr_ns ? -1 : 1;
	return a->st->id < b->st->id ? -1 : a->st->id > b->st->id;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/*
 * One responder at one vantage, items sorted by first response. A READ i's wait is
 * [arr_i, first_i); the messages that overlap it started before first_i, so they sit before
 * i in the order, and (their ends, running maximum in maxlast) after arr_i. A binary search on
 * the running maximum finds the earliest one; the overlaps are summed from there.
 */
static void fill_group(struct read_item *it, size_t n, uint64_t *maxlast)
{
	for (size_t i = 0; i < n; i++)
		maxlast[i] = i && maxlast[i - 1] > it[i].m.last_ns ? maxlast[i - 1] : it[i].m.last_ns;
	for (size_t i = 0; i < n; i++) {
		const struct read_msg *m = &it[i].m;
		size_t lo = 0, hi = i;
		uint64_t busy = 0;

		if (m->first_ns < m->arr_ns)
			continue; /* timestamps going back */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (maxlast[mid] > m->arr_ns)
				hi = mid;
			else
				lo = mid + 1;
		}
		for (size_t j = lo; j < i; j++)
			busy += overlap(m->arr_ns, m->first_ns, it[j].m.first_ns, it[j].m.last_ns);
		/* Messages that overlap on the link (interleaved) count once at most. */
		if (busy > m->first_ns - m->arr_ns)
			busy = m->first_ns - m->arr_ns;
		it[i].st->read_waits++;
		it[i].st->read_wait_us += (double)(m->first_ns - m->arr_ns) / 1e3;
		it[i].st->read_wait_busy_us += (double)busy / 1e3;
	}
}

int read_queue_fill(struct read_item *items, size_t n)
{
	uint64_t *maxlast;

	for (size_t i = 0; i < n; i++) {
		items[i].st->read_waits = 0;
		items[i].st->read_wait_us = items[i].st->read_wait_busy_us = 0;
	}
	if (!n)
		return 0;
	maxlast = malloc(n * sizeof(*maxlast));
	if (!maxlast)
		return -ENOMEM;
	qsort(items, n, sizeof(*items), cmp_item);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && items[j].vantage == items[i].vantage &&
		       !memcmp(items[j].responder, items[i].responder, 16))
			j++;
		fill_group(&items[i], j - i, maxlast);
		i = j;
	}
	free(maxlast);
	return 0;
}
