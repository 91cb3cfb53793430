/*
 * prom_text.h: Prometheus text exposition format 0.0.4 writer over the metric model
 * (metrics.h). Pure: it fills a text_buf; the caller serves it over HTTP or writes it to a
 * file (export_file.h writes atomically, as node_exporter's textfile collector needs).
 */
#ifndef AGENTXDP_PROM_TEXT_H
#define AGENTXDP_PROM_TEXT_H

#include "lib/export/metrics.h"
#include "lib/util/text_buf.h"

/* Content-Type of the output, for an HTTP server. */
#define PROM_TEXT_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * Append every family of SET to OUT: "# HELP", "# TYPE", then its samples; histograms as
 * cumulative _bucket{le="..."} (ending with le="+Inf"), _sum and _count. No timestamps
 * (the textfile collector rejects them). Families without samples are skipped.
 * Returns 0 or -ENOMEM.
 */
int prom_text_write(const struct metric_set *set, struct text_buf *out);

/* Escaping per the format: label values escape \ " and newline; HELP escapes \ and newline. */
int prom_escape_label_value(struct text_buf *out, const char *value);
int prom_escape_help(struct text_buf *out, const char *help);
/* A sample value: shortest text that reads back exactly; NaN, +Inf, -Inf as Prometheus spells them. */
int prom_format_double(struct text_buf *out, double v);

#endif
