/* prom_text.c: Prometheus text exposition format 0.0.4 writer over the metric model. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/export/prom_text.h"

int prom_escape_label_value(struct text_buf *out, const char *value)
{
	const char *p;

	for (p = value; *p; p++) {
		if (*p == '\\')
			text_buf_append(out, "\\\\", 2);
		else if (*p == '"')
			text_buf_append(out, "\\\"", 2);
		else if (*p == '\n')
			text_buf_append(out, "\\n", 2);
		else
			text_buf_putc(out, *p);
	}
	return out->failed ? -ENOMEM : 0;
}

int prom_escape_help(struct text_buf *out, const char *help)
{
	const char *p;

	for (p = help; *p; p++) {
		if (*p == '\\')
			text_buf_append(out, "\\\\", 2);
		else if (*p == '\n')
			text_buf_append(out, "\\n", 2);
		else
			text_buf_putc(out, *p);
	}
	return out->failed ? -ENOMEM : 0;
}

int prom_format_double(struct text_buf *out, double v)
{
	char tmp[40];

	if (isnan(v))
		return text_buf_puts(out, "NaN");
	if (isinf(v))
		return text_buf_puts(out, v > 0 ? "+Inf" : "-Inf");
	/* %.15g reads nicely; fall back to %.17g when it would not read back exactly. */
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	return text_buf_puts(out, tmp);
}

/* name{l1="v1",...[,le="x"]} */
static void write_series(struct text_buf *out, const char *name, const char *suffix,
			 const struct metric_sample *s, const char *le)
{
	size_t i;

	text_buf_puts(out, name);
	text_buf_puts(out, suffix);
	if (!s->n_labels && !le)
		return;
	text_buf_putc(out, '{');
	for (i = 0; i < s->n_labels; i++) {
		if (i)
			text_buf_putc(out, ',');
		text_buf_puts(out, s->labels[i].name);
		text_buf_puts(out, "=\"");
		prom_escape_label_value(out, s->labels[i].value);
		text_buf_putc(out, '"');
	}
	if (le) {
		if (s->n_labels)
			text_buf_putc(out, ',');
		text_buf_puts(out, "le=\"");
		text_buf_puts(out, le);
		text_buf_putc(out, '"');
	}
	text_buf_putc(out, '}');
}

static void write_histogram(struct text_buf *out, const struct metric_family *fam,
			    const struct metric_sample *s)
{
	struct text_buf le = { 0 };
	uint64_t cumulative = 0;
	size_t i;

	for (i = 0; i <= fam->n_bounds; i++) {
		cumulative += s->bucket_counts[i];
		text_buf_reset(&le);
		if (i < fam->n_bounds)
			prom_format_double(&le, fam->bounds[i]);
		else
			text_buf_puts(&le, "+Inf");
		if (le.failed) {
			out->failed = true;
			break;
		}
		write_series(out, fam->name, "_bucket", s, le.data);
		text_buf_printf(out, " %" PRIu64 "\n", cumulative);
	}
	text_buf_free(&le);
	write_series(out, fam->name, "_sum", s, NULL);
	text_buf_putc(out, ' ');
	prom_format_double(out, s->sum);
	text_buf_putc(out, '\n');
	write_series(out, fam->name, "_count", s, NULL);
	text_buf_printf(out, " %" PRIu64 "\n", s->count);
}

static const char *const prom_type_names[] = {
	[METRIC_COUNTER] = "counter",
	[METRIC_GAUGE] = "gauge",
	[METRIC_HISTOGRAM] = "histogram",
};

int prom_text_write(const struct metric_set *set, struct text_buf *out)
{
	size_t f, i;

	for (f = 0; f < set->n_families; f++) {
		const struct metric_family *fam = set->families[f];

		if (!fam->n_samples)
			continue;
		if (fam->help[0]) {
			text_buf_printf(out, "# HELP %s ", fam->name);
			prom_escape_help(out, fam->help);
			text_buf_putc(out, '\n');
		}
		text_buf_printf(out, "# TYPE %s %s\n", fam->name, prom_type_names[fam->kind]);
		for (i = 0; i < fam->n_samples; i++) {
			const struct metric_sample *s = &fam->samples[i];

			if (fam->kind == METRIC_HISTOGRAM) {
				write_histogram(out, fam, s);
				continue;
			}
			write_series(out, fam->name, "", s, NULL);
			text_buf_putc(out, ' ');
			if (s->is_int)
				text_buf_printf(out, "%" PRIu64, s->int_value);
			else
				prom_format_double(out, s->value);
			text_buf_putc(out, '\n');
		}
	}
	return out->failed ? -ENOMEM : 0;
}
