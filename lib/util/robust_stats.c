/* robust_stats.c: median, MAD and a two-segment change point (pure). */
#include "lib/util/robust_stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * Moves the k-th smallest of v[0..n) to v[k], the smaller ones before it, the larger after
 * (Hoare's selection, median-of-three pivots): O(n) on average where sorting is O(n log n).
 * The localization takes thousands of medians per trace (each candidate's peers); sorting
 * them was 40% of a whole collective trace's CPU.
 */
static void select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		double a = v[lo], b = v[mid], c = v[hi], pivot, t;

		pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j-- == 0)
					break;
			}
		}
		/* Now v[lo..j] <= pivot <= v[i..hi], and everything between equals the pivot. */
		if (k <= j && j != (size_t)-1)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

double rs_median(double *v, size_t n)
{
	double below;

	if (n == 0)
		return 0;
	select_kth(v, n, n / 2);
	if (n % 2)
		return v[n / 2];
	/* Even n: the other middle value is the largest of those selected below v[n / 2]. */
	below = v[0];
	for (size_t i = 1; i < n / 2; i++)
		below = v[i] > below ? v[i] : below;
	return (below + v[n / 2]) / 2;
}

void rs_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

double rs_quantile(double *v, size_t n, double q)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(q * (double)n);
	i = i < n ? i : n - 1;
	select_kth(v, n, i);
	return v[i];
}

double rs_mad(const double *v, size_t n, double med, double *scratch)
{
	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs(v[i] - med);
	return rs_median(scratch, n);
}

double rs_sigma(const double *v, size_t n, double *scratch)
{
	double med;

	for (size_t i = 0; i < n; i++)
		scratch[i] = v[i];
	med = rs_median(scratch, n);
	return 1.4826 * rs_mad(v, n, med, scratch);
}

int rs_change_point(const double *series, size_t n, size_t min_segment, struct change_point *cp)
{
	double total = 0, total_sq = 0, left = 0, left_sq = 0, best_sse = INFINITY;

	if (min_segment < 1)
		min_segment = 1;
	if (n < 2 * min_segment)
		return -1;
	for (size_t i = 0; i < n; i++) {
		total += series[i];
		total_sq += series[i] * series[i];
	}
	/* Prefix sums give each split's SSE in O(1): sum(x^2) - (sum x)^2 / k per segment. */
	for (size_t k = 1; k < n; k++) {
		left += series[k - 1];
		left_sq += series[k - 1] * series[k - 1];
		if (k < min_segment || n - k < min_segment)
			continue;
		double right = total - left, right_sq = total_sq - left_sq;
		double sse = (left_sq - left * left / k) + (right_sq - right * right / (n - k));
		if (sse < best_sse) {
			best_sse = sse;
			cp->split = k;
			cp->mean_before = left / k;
			cp->mean_after = right / (n - k);
		}
	}
	cp->sigma = n > 2 ? sqrt(fmax(best_sse, 0) / (double)(n - 2)) : 0;
	return 0;
}
