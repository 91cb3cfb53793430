/*
 * metrics.h: the in-memory metric model the exporters consume (Prometheus text in
 * prom_text.h, OTLP/HTTP JSON in otlp_json.h), so agentxdp-nicstat and the agent publish
 * the same names and labels over both. Pure data, no I/O.
 *
 * A metric_set holds families; a family has one kind, a name, help, unit, and samples;
 * a sample is one label set and its value. Names and labels are checked when added, so
 * a writer never emits text Prometheus or a collector would reject.
 */
#ifndef AGENTXDP_METRICS_H
#define AGENTXDP_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum metric_kind {
	METRIC_COUNTER = 0,	/* monotonic cumulative: Prometheus counter, OTLP sum */
	METRIC_GAUGE = 1,	/* Prometheus gauge, OTLP gauge */
	METRIC_HISTOGRAM = 2,	/* explicit buckets: Prometheus histogram, OTLP histogram */
};

#define METRIC_MAX_LABELS 12

struct metric_label {
	const char *name;	/* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" */
	const char *value;	/* any UTF-8 text; escaped by each writer */
};

struct metric_sample {
	struct metric_label labels[METRIC_MAX_LABELS];	/* point into label_text */
	size_t n_labels;
	char *label_text;	/* owns the label strings */
	bool is_int;		/* counter/gauge: the value is int_value, else value */
	uint64_t int_value;
	double value;
	uint64_t start_ns;	/* cumulative series start (OTLP startTimeUnixNano); 0 = set's */
	uint64_t *bucket_counts;	/* histogram: n_bounds + 1 per-bucket counts (not cumulative) */
	uint64_t count;		/* histogram: observations */
	double sum;		/* histogram: sum of observations */
};

struct metric_family {
	char *name;		/* Prometheus name; a counter's ends in "_total" */
	char *help;
	char *unit;		/* UCUM unit for OTLP: "s", "By", "{packet}", "1"; "" if none */
	enum metric_kind kind;
	double *bounds;		/* histogram upper bounds, strictly ascending, +Inf implied */
	size_t n_bounds;
	struct metric_sample *samples;
	size_t n_samples;
	size_t cap_samples;
};

struct metric_set {
	struct metric_family **families;
	size_t n_families;
	size_t cap_families;
	uint64_t time_ns;	/* when the values were read, ns since the epoch */
	uint64_t start_ns;	/* default start of cumulative series, ns since the epoch */
};

void metric_set_init(struct metric_set *set, uint64_t start_ns, uint64_t time_ns);
/* Drop every family and sample (ready for the next interval); keeps start/time. */
void metric_set_clear(struct metric_set *set);
void metric_set_free(struct metric_set *set);

bool metric_name_valid(const char *name);
bool metric_label_name_valid(const char *name);

/*
 * The family NAME, created on first use. NULL with errno EINVAL when the name is invalid,
 * a counter's name lacks "_total", or NAME exists with another kind; ENOMEM on allocation
 * failure. help and unit may be NULL. The pointer stays valid until clear/free.
 */
struct metric_family *metric_family_get(struct metric_set *set, const char *name,
					enum metric_kind kind, const char *help, const char *unit);
/* Histogram bucket upper bounds (finite, strictly ascending); set once before samples. */
int metric_family_set_bounds(struct metric_family *fam, const double *bounds, size_t n);

/*
 * Add one sample. Return 0, -EINVAL (wrong kind, bad or duplicate label name, "le" on a
 * histogram, too many labels, negative or NaN counter) or -ENOMEM.
 */
int metric_add_int(struct metric_family *fam, const struct metric_label *labels, size_t n_labels,
		   uint64_t value, uint64_t start_ns);
int metric_add_double(struct metric_family *fam, const struct metric_label *labels,
		      size_t n_labels, double value, uint64_t start_ns);
/* bucket_counts: n_bounds + 1 per-bucket counts, the last one above the highest bound. */
int metric_add_histogram(struct metric_family *fam, const struct metric_label *labels,
			 size_t n_labels, const uint64_t *bucket_counts, double sum,
			 uint64_t start_ns);

/* The name OTLP uses: the Prometheus name without a counter's "_total" suffix. */
size_t metric_otlp_name(const struct metric_family *fam, char *out, size_t out_len);

#endif
