/*
 * otlp_json.h: OTLP/HTTP JSON encoding of the metric model (metrics.h): the body of a
 * POST to COLLECTOR/v1/metrics (an ExportMetricsServiceRequest). Pure: fills a text_buf.
 *
 * Per the OTLP specification's JSON Protobuf Encoding: lowerCamelCase field names, enums
 * as integers, and the proto3 JSON mapping (64-bit integers as decimal strings, NaN and
 * infinities as strings). Counters become "sum" with isMonotonic true and
 * aggregationTemporality 2 (cumulative); gauges "gauge"; histograms "histogram"
 * (cumulative, bucketCounts + explicitBounds). Labels become attributes
 * {"key":K,"value":{"stringValue":V}}. A counter's name loses its "_total" suffix
 * (metric_otlp_name()), as the OpenTelemetry-to-Prometheus translation adds it back.
 */
#ifndef AGENTXDP_OTLP_JSON_H
#define AGENTXDP_OTLP_JSON_H

#include "lib/export/metrics.h"
#include "lib/util/text_buf.h"

#define OTLP_AGGREGATION_TEMPORALITY_CUMULATIVE 2

struct otlp_resource {
	const struct metric_label *attrs;	/* resource attributes: service.name, host.name */
	size_t n_attrs;
	const char *scope_name;			/* instrumentation scope, e.g. "agentxdp" */
	const char *scope_version;		/* may be NULL */
};

/* Append one ExportMetricsServiceRequest JSON object. Returns 0 or -ENOMEM. */
int otlp_json_write(const struct metric_set *set, const struct otlp_resource *res,
		    struct text_buf *out);

#endif
