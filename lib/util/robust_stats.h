/* robust_stats.h: median, MAD and a two-segment change point, for localization. */
#ifndef AGENTXDP_ROBUST_STATS_H
#define AGENTXDP_ROBUST_STATS_H

#include <stddef.h>

/* Median of v[0..n) (v is reordered, not sorted). 0 when n == 0. NaN-free input. */
double rs_median(double *v, size_t n);
/* The q-quantile of v[0..n) as the sorted v[floor(q * n)] (v is reordered, not sorted; q in
 * [0, 1)). 0 when n == 0. */
double rs_quantile(double *v, size_t n, double q);
/* Sorts v[0..n) ascending. */
void rs_sort(double *v, size_t n);
/* Median absolute deviation around med; scratch holds n doubles. 0 when n == 0. */
double rs_mad(const double *v, size_t n, double med, double *scratch);
/* 1.4826 * MAD: estimates the standard deviation of normal data, ignores outliers. */
double rs_sigma(const double *v, size_t n, double *scratch);

struct change_point {
	size_t split;		/* first index of the second segment */
	double mean_before, mean_after;
	double sigma;		/* pooled within-segment standard deviation */
};

/*
 * Best split of series[0..n) into two segments of at least min_segment points each,
 * minimizing the summed squared error around each segment's mean. Returns 0, or -1 when
 * the series is too short.
 */
int rs_change_point(const double *series, size_t n, size_t min_segment, struct change_point *cp);

#endif
