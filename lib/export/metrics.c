/* metrics.c: the in-memory metric model the Prometheus and OTLP writers consume. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/export/metrics.h"
#include "lib/util/util.h"

void metric_set_init(struct metric_set *set, uint64_t start_ns, uint64_t time_ns)
{
	memset(set, 0, sizeof(*set));
	set->start_ns = start_ns;
	set->time_ns = time_ns;
}

static void family_free(struct metric_family *fam)
{
	size_t i;

	for (i = 0; i < fam->n_samples; i++) {
		free(fam->samples[i].label_text);
		free(fam->samples[i].bucket_counts);
	}
	free(fam->samples);
	free(fam->bounds);
	free(fam->name);
	free(fam->help);
	free(fam->unit);
	free(fam);
}

void metric_set_clear(struct metric_set *set)
{
	size_t i;

	for (i = 0; i < set->n_families; i++)
		family_free(set->families[i]);
	set->n_families = 0;
}

void metric_set_free(struct metric_set *set)
{
	metric_set_clear(set);
	free(set->families);
	set->families = NULL;
	set->cap_families = 0;
}

static bool name_char_ok(char c, bool first, bool colon_ok)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	if (colon_ok && c == ':')
		return true;
	return !first && c >= '0' && c <= '9';
}

/* Prometheus data model: [a-zA-Z_:][a-zA-Z0-9_:]* */
bool metric_name_valid(const char *name)
{
	size_t i;

	if (!name || !name[0])
		return false;
	for (i = 0; name[i]; i++)
		if (!name_char_ok(name[i], i == 0, true))
			return false;
	return true;
}

/* [a-zA-Z_][a-zA-Z0-9_]*; names starting with "__" are reserved for Prometheus itself. */
bool metric_label_name_valid(const char *name)
{
	size_t i;

	if (!name || !name[0] || strncmp(name, "__", 2) == 0)
		return false;
	for (i = 0; name[i]; i++)
		if (!name_char_ok(name[i], i == 0, false))
			return false;
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

struct metric_family *metric_family_get(struct metric_set *set, const char *name,
					enum metric_kind kind, const char *help, const char *unit)
{
	struct metric_family *fam;
	size_t i;
	int err;

	if (!metric_name_valid(name) || (kind == METRIC_COUNTER && !ends_with(name, "_total")) ||
	    kind > METRIC_HISTOGRAM) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < set->n_families; i++) {
		fam = set->families[i];
		if (strcmp(fam->name, name) == 0) {
			if (fam->kind != kind) {
				errno = EINVAL;
				return NULL;
			}
			return fam;
		}
	}
	err = util_ensure_mem((void **)&set->families, &set->cap_families, sizeof(*set->families),
			      set->n_families + 1);
	if (err) {
		errno = -err;
		return NULL;
	}
	fam = calloc(1, sizeof(*fam));
	if (!fam)
		goto nomem;
	fam->kind = kind;
	fam->name = strdup(name);
	fam->help = strdup(help ? help : "");
	fam->unit = strdup(unit ? unit : "");
	if (!fam->name || !fam->help || !fam->unit) {
		family_free(fam);
		goto nomem;
	}
	set->families[set->n_families++] = fam;
	return fam;
nomem:
	errno = ENOMEM;
	return NULL;
}

int metric_family_set_bounds(struct metric_family *fam, const double *bounds, size_t n)
{
	double *copy;
	size_t i;

	if (fam->kind != METRIC_HISTOGRAM || fam->n_samples || n == 0)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!isfinite(bounds[i]) || (i && bounds[i] <= bounds[i - 1]))
			return -EINVAL;
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, bounds, n * sizeof(*copy));
	free(fam->bounds);
	fam->bounds = copy;
	fam->n_bounds = n;
	return 0;
}

/* Check and copy the labels into one allocation owned by the sample. */
static int sample_set_labels(struct metric_sample *s, const struct metric_family *fam,
			     const struct metric_label *labels, size_t n_labels)
{
	size_t i, j, total = 0;
	char *p;

	if (n_labels > METRIC_MAX_LABELS || (n_labels && !labels))
		return -EINVAL;
	for (i = 0; i < n_labels; i++) {
		if (!metric_label_name_valid(labels[i].name) || !labels[i].value)
			return -EINVAL;
		if (fam->kind == METRIC_HISTOGRAM && strcmp(labels[i].name, "le") == 0)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (strcmp(labels[i].name, labels[j].name) == 0)
				return -EINVAL;
		total += strlen(labels[i].name) + strlen(labels[i].value) + 2;
	}
	s->n_labels = n_labels;
	if (!n_labels)
		return 0;
	s->label_text = malloc(total);
	if (!s->label_text)
		return -ENOMEM;
	p = s->label_text;
	for (i = 0; i < n_labels; i++) {
		size_t ln = strlen(labels[i].name) + 1, lv = strlen(labels[i].value) + 1;

		memcpy(p, labels[i].name, ln);
		s->labels[i].name = p;
		p += ln;
		memcpy(p, labels[i].value, lv);
		s->labels[i].value = p;
		p += lv;
	}
	return 0;
}

static struct metric_sample *sample_new(struct metric_family *fam, const struct metric_label *labels,
					size_t n_labels, int *err)
{
	struct metric_sample *s;

	*err = util_ensure_mem((void **)&fam->samples, &fam->cap_samples, sizeof(*fam->samples),
			       fam->n_samples + 1);
	if (*err)
		return NULL;
	s = &fam->samples[fam->n_samples];
	memset(s, 0, sizeof(*s));
	*err = sample_set_labels(s, fam, labels, n_labels);
	if (*err)
		return NULL;
	fam->n_samples++;
	return s;
}

int metric_add_int(struct metric_family *fam, const struct metric_label *labels, size_t n_labels,
		   uint64_t value, uint64_t start_ns)
{
	struct metric_sample *s;
	int err;

	if (fam->kind == METRIC_HISTOGRAM)
		return -EINVAL;
	s = sample_new(fam, labels, n_labels, &err);
	if (!s)
		return err;
	s->is_int = true;
	s->int_value = value;
	s->value = (double)value;
	s->start_ns = start_ns;
	return 0;
}

int metric_add_double(struct metric_family *fam, const struct metric_label *labels,
		      size_t n_labels, double value, uint64_t start_ns)
{
	struct metric_sample *s;
	int err;

	if (fam->kind == METRIC_HISTOGRAM)
		return -EINVAL;
	if (fam->kind == METRIC_COUNTER && (isnan(value) || value < 0))
		return -EINVAL;
	s = sample_new(fam, labels, n_labels, &err);
	if (!s)
		return err;
	s->value = value;
	s->start_ns = start_ns;
	return 0;
}

int metric_add_histogram(struct metric_family *fam, const struct metric_label *labels,
			 size_t n_labels, const uint64_t *bucket_counts, double sum,
			 uint64_t start_ns)
{
	struct metric_sample *s;
	uint64_t *counts, total = 0;
	size_t i, n;
	int err;

	if (fam->kind != METRIC_HISTOGRAM || !fam->n_bounds || !bucket_counts || isnan(sum))
		return -EINVAL;
	n = fam->n_bounds + 1;
	counts = malloc(n * sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		counts[i] = bucket_counts[i];
		total += bucket_counts[i];
	}
	s = sample_new(fam, labels, n_labels, &err);
	if (!s) {
		free(counts);
		return err;
	}
	s->bucket_counts = counts;
	s->count = total;
	s->sum = sum;
	s->start_ns = start_ns;
	return 0;
}

size_t metric_otlp_name(const struct metric_family *fam, char *out, size_t out_len)
{
	size_t n = strlen(fam->name);

	if (fam->kind == METRIC_COUNTER && ends_with(fam->name, "_total"))
		n -= strlen("_total");
	if (out_len == 0)
		return n;
	if (n >= out_len)
		n = out_len - 1;
	memcpy(out, fam->name, n);
	out[n] = '\0';
	return n;
}
