/* otlp_json.c: OTLP/HTTP JSON encoding (ExportMetricsServiceRequest) of the metric model. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/export/otlp_json.h"

static void write_attributes(struct text_buf *out, const struct metric_label *attrs, size_t n)
{
	size_t i;

	text_buf_puts(out, "\"attributes\":[");
	for (i = 0; i < n; i++) {
		if (i)
			text_buf_putc(out, ',');
		text_buf_puts(out, "{\"key\":");
		text_buf_json_string(out, attrs[i].name);
		text_buf_puts(out, ",\"value\":{\"stringValue\":");
		text_buf_json_string(out, attrs[i].value);
		text_buf_puts(out, "}}");
	}
	text_buf_putc(out, ']');
}

/* uint64 as the proto3 JSON string form. */
static void write_u64(struct text_buf *out, const char *key, uint64_t v)
{
	text_buf_printf(out, "\"%s\":\"%" PRIu64 "\"", key, v);
}

static void write_point_head(struct text_buf *out, const struct metric_set *set,
			     const struct metric_family *fam, const struct metric_sample *s)
{
	text_buf_putc(out, '{');
	write_attributes(out, s->labels, s->n_labels);
	if (fam->kind != METRIC_GAUGE) {
		text_buf_putc(out, ',');
		write_u64(out, "startTimeUnixNano", s->start_ns ? s->start_ns : set->start_ns);
	}
	text_buf_putc(out, ',');
	write_u64(out, "timeUnixNano", set->time_ns);
}

static void write_number_point(struct text_buf *out, const struct metric_set *set,
			       const struct metric_family *fam, const struct metric_sample *s)
{
	write_point_head(out, set, fam, s);
	/* asInt is an int64: values past INT64_MAX go out as asDouble. */
	if (s->is_int && s->int_value <= INT64_MAX) {
		text_buf_putc(out, ',');
		write_u64(out, "asInt", s->int_value);
	} else {
		text_buf_puts(out, ",\"asDouble\":");
		text_buf_json_double(out, s->is_int ? (double)s->int_value : s->value);
	}
	text_buf_putc(out, '}');
}

static void write_histogram_point(struct text_buf *out, const struct metric_set *set,
				  const struct metric_family *fam, const struct metric_sample *s)
{
	size_t i;

	write_point_head(out, set, fam, s);
	text_buf_putc(out, ',');
	write_u64(out, "count", s->count);
	text_buf_puts(out, ",\"sum\":");
	text_buf_json_double(out, s->sum);
	text_buf_puts(out, ",\"bucketCounts\":[");
	for (i = 0; i <= fam->n_bounds; i++)
		text_buf_printf(out, "%s\"%" PRIu64 "\"", i ? "," : "", s->bucket_counts[i]);
	text_buf_puts(out, "],\"explicitBounds\":[");
	for (i = 0; i < fam->n_bounds; i++) {
		if (i)
			text_buf_putc(out, ',');
		text_buf_json_double(out, fam->bounds[i]);
	}
	text_buf_puts(out, "]}");
}

static void write_metric(struct text_buf *out, const struct metric_set *set,
			 const struct metric_family *fam)
{
	char name[256];
	size_t i;

	metric_otlp_name(fam, name, sizeof(name));
	text_buf_puts(out, "{\"name\":");
	text_buf_json_string(out, name);
	text_buf_puts(out, ",\"description\":");
	text_buf_json_string(out, fam->help);
	text_buf_puts(out, ",\"unit\":");
	text_buf_json_string(out, fam->unit);
	switch (fam->kind) {
	case METRIC_COUNTER:
		text_buf_printf(out, ",\"sum\":{\"aggregationTemporality\":%d,\"isMonotonic\":true,",
				OTLP_AGGREGATION_TEMPORALITY_CUMULATIVE);
		break;
	case METRIC_GAUGE:
		text_buf_puts(out, ",\"gauge\":{");
		break;
	case METRIC_HISTOGRAM:
		text_buf_printf(out, ",\"histogram\":{\"aggregationTemporality\":%d,",
				OTLP_AGGREGATION_TEMPORALITY_CUMULATIVE);
		break;
	}
	text_buf_puts(out, "\"dataPoints\":[");
	for (i = 0; i < fam->n_samples; i++) {
		if (i)
			text_buf_putc(out, ',');
		if (fam->kind == METRIC_HISTOGRAM)
			write_histogram_point(out, set, fam, &fam->samples[i]);
		else
			write_number_point(out, set, fam, &fam->samples[i]);
	}
	text_buf_puts(out, "]}}");
}

int otlp_json_write(const struct metric_set *set, const struct otlp_resource *res,
		    struct text_buf *out)
{
	bool first = true;
	size_t f;

	text_buf_puts(out, "{\"resourceMetrics\":[{\"resource\":{");
	write_attributes(out, res ? res->attrs : NULL, res ? res->n_attrs : 0);
	text_buf_puts(out, "},\"scopeMetrics\":[{\"scope\":{\"name\":");
	text_buf_json_string(out, res && res->scope_name ? res->scope_name : "agentxdp");
	if (res && res->scope_version) {
		text_buf_puts(out, ",\"version\":");
		text_buf_json_string(out, res->scope_version);
	}
	text_buf_puts(out, "},\"metrics\":[");
	for (f = 0; f < set->n_families; f++) {
		if (!set->families[f]->n_samples)
			continue;
		if (!first)
			text_buf_putc(out, ',');
		first = false;
		write_metric(out, set, set->families[f]);
	}
	text_buf_puts(out, "]}]}]}");
	return out->failed ? -ENOMEM : 0;
}
