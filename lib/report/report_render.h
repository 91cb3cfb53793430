/* report_render.h: turn loaded report data into text, markdown or HTML. */
#ifndef AGENTXDP_REPORT_RENDER_H
#define AGENTXDP_REPORT_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "lib/report/report_data.h"
#include "lib/util/text_buf.h"

enum report_format { REPORT_TEXT = 0, REPORT_MARKDOWN = 1, REPORT_HTML = 2 };

/* A chart written beside the page. */
struct report_chart {
	char file[64];		/* e.g. "charts/latency_cdf.svg" (relative to the report dir) */
	char title[128];
	char caption[256];
	int width, height;	/* pixels */
};

/* Plain text (terminal) or markdown summary. */
int report_render_summary(struct text_buf *out, const struct report_data *d, enum report_format fmt,
			  size_t top_n);
/* A complete, self-contained HTML page; charts are <img> beside it. */
int report_render_html(struct text_buf *out, const struct report_data *d,
		       const struct report_chart *charts, size_t n_charts, size_t top_n);
/* HTML-escape s (& < > " ') into out. */
int html_escape(struct text_buf *out, const char *s);
/* "2026-11-30 03:14:08.123456789 UTC" */
const char *format_time_ns(uint64_t ns, char *buf, size_t len);

#endif
