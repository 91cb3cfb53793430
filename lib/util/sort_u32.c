/* sort_u32.c: radix sort for uint32_t arrays (latency percentiles over every sample). */
#include <stdlib.h>
#include <string.h>

#include "lib/util/sort_u32.h"

#define SMALL_N 64
#define STACK_N 1024

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void insertion_sort(uint32_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint32_t x = v[i];
		size_t j = i;

		while (j > 0 && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

void sort_u32(uint32_t *v, size_t n)
{
	uint32_t stack_scratch[STACK_N], *scratch, *src, *dst;
	size_t count[4][256];

	if (n < SMALL_N) {
		insertion_sort(v, n);
		return;
	}
	scratch = n <= STACK_N ? stack_scratch : malloc(n * sizeof(*v));
	if (!scratch) {
		qsort(v, n, sizeof(*v), cmp_u32);
		return;
	}
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++) {
		uint32_t x = v[i];

		count[0][x & 0xff]++;
		count[1][(x >> 8) & 0xff]++;
		count[2][(x >> 16) & 0xff]++;
		count[3][x >> 24]++;
	}
	src = v;
	dst = scratch;
	for (int pass = 0; pass < 4; pass++) {
		unsigned shift = 8u * (unsigned)pass;
		size_t sum = 0;
		uint32_t *tmp;

		if (count[pass][(v[0] >> shift) & 0xff] == n)
			continue; /* every value has the same byte here: order unchanged */
		for (int b = 0; b < 256; b++) {
			size_t c = count[pass][b];

			count[pass][b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++) {
			uint32_t x = src[i];

			dst[count[pass][(x >> shift) & 0xff]++] = x;
		}
		tmp = src;
		src = dst;
		dst = tmp;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	if (scratch != stack_scratch)
		free(scratch);
}
